//! A request with its `params._meta` kept as raw JSON.
//!
//! Every MCP request carries `_meta` (protocol version, client capabilities, client info), and
//! it is often the largest part of a small request. A server needs only a few of its members
//! on the hot path, so parsing it into a `Value` tree is wasted work. [`SplitRequest::parse`]
//! reads the envelope and the other params normally and keeps `_meta` as [`RawValue`]; it
//! only accepts well-formed requests and returns `None` for anything else, so a caller falls
//! back to [`crate::jsonrpc::Message::from_slice`] for the exact error.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::jsonrpc::{Request, RequestId};

/// A JSON-RPC request whose `params` are split into `_meta` (raw) and the rest (parsed).
#[derive(Debug)]
pub struct SplitRequest {
    /// The request id.
    pub id: RequestId,
    /// The method.
    pub method: String,
    /// `params` without `_meta`; `None` when the request had no `params`.
    pub params: Option<Map<String, Value>>,
    /// `params._meta`, unparsed.
    pub meta: Option<Box<RawValue>>,
}

struct SplitParams {
    meta: Option<Box<RawValue>>,
    rest: Map<String, Value>,
}

impl<'de> Deserialize<'de> for SplitParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ParamsVisitor;
        impl<'de> Visitor<'de> for ParamsVisitor {
            type Value = SplitParams;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a params object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SplitParams, A::Error> {
                let mut meta = None;
                let mut rest = Map::new();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    if key == "_meta" {
                        meta = Some(map.next_value::<Box<RawValue>>()?);
                    } else {
                        rest.insert(key.into_owned(), map.next_value::<Value>()?);
                    }
                }
                Ok(SplitParams { meta, rest })
            }
        }
        deserializer.deserialize_map(ParamsVisitor)
    }
}

/// `params` must be an object when present (`null` is not accepted here, so it falls back).
fn params_object<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SplitParams>, D::Error> {
    SplitParams::deserialize(d).map(Some)
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: RequestId,
    method: String,
    #[serde(default, deserialize_with = "params_object")]
    params: Option<SplitParams>,
}

impl SplitRequest {
    /// Parses a well-formed request; `None` for anything else (notifications, responses,
    /// malformed bodies), which the caller hands to the precise parser.
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        let env: Envelope<'_> = serde_json::from_slice(bytes).ok()?;
        if env.jsonrpc != crate::JSONRPC_VERSION {
            return None;
        }
        let (params, meta) = match env.params {
            Some(p) => (Some(p.rest), p.meta),
            None => (None, None),
        };
        Some(Self {
            id: env.id,
            method: env.method,
            params,
            meta,
        })
    }

    /// Splits a request the precise parser produced.
    pub fn from_request(request: Request) -> Self {
        let (params, meta) = match request.params {
            Some(Value::Object(mut map)) => {
                let meta = map
                    .remove("_meta")
                    .and_then(|m| serde_json::value::to_raw_value(&m).ok());
                (Some(map), meta)
            }
            _ => (None, None),
        };
        Self {
            id: request.id,
            method: request.method,
            params,
            meta,
        }
    }
}

/// The members of a request's `_meta` a server reads on every request, borrowed from the raw
/// JSON. Each is itself raw so the caller can say precisely what is wrong with it.
#[derive(Debug, Default, Deserialize)]
pub struct MetaView<'a> {
    /// `io.modelcontextprotocol/protocolVersion`.
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    pub protocol_version: Option<&'a RawValue>,
    /// `io.modelcontextprotocol/clientCapabilities`.
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow, default)]
    pub client_capabilities: Option<&'a RawValue>,
    /// `io.modelcontextprotocol/logLevel`.
    #[serde(rename = "io.modelcontextprotocol/logLevel", borrow, default)]
    pub log_level: Option<&'a RawValue>,
    /// `progressToken`.
    #[serde(rename = "progressToken", borrow, default)]
    pub progress_token: Option<&'a RawValue>,
}

impl<'a> MetaView<'a> {
    /// Reads the view; `Err` when `_meta` is not a JSON object.
    pub fn parse(raw: &'a RawValue) -> Result<Self, serde_json::Error> {
        if !raw.get().starts_with('{') {
            return Err(de::Error::custom("_meta must be an object"));
        }
        serde_json::from_str(raw.get())
    }
}

/// The string in `raw`, if it is a JSON string.
pub fn raw_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    if !raw.get().starts_with('"') {
        return None;
    }
    serde_json::from_str::<Cow<'_, str>>(raw.get()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn splits_meta_and_keeps_the_rest() {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "x": [1, 2]},
            "name": "echo", "arguments": {"text": "hi"}}});
        let r = SplitRequest::parse(body.to_string().as_bytes()).unwrap();
        assert_eq!(r.id, RequestId::from(7));
        assert_eq!(r.method, "tools/call");
        let params = r.params.unwrap();
        assert_eq!(params["name"], "echo");
        assert!(!params.contains_key("_meta"));
        let meta = r.meta.unwrap();
        let view = MetaView::parse(&meta).unwrap();
        assert_eq!(
            raw_str(view.protocol_version.unwrap()).unwrap(),
            "2026-07-28"
        );
        assert!(view.client_capabilities.is_none());
    }

    #[test]
    fn anything_unusual_falls_back() {
        for body in [
            json!({"jsonrpc": "2.0", "method": "n"}),
            json!({"jsonrpc": "1.0", "id": 1, "method": "m"}),
            json!({"jsonrpc": "2.0", "id": null, "method": "m"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "m", "params": null}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "m", "params": [1]}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
            json!([1]),
        ] {
            assert!(
                SplitRequest::parse(body.to_string().as_bytes()).is_none(),
                "{body}"
            );
        }
        assert!(SplitRequest::parse(b"{").is_none());
    }

    #[test]
    fn meta_must_be_an_object() {
        let raw = serde_json::value::to_raw_value(&json!([1])).unwrap();
        assert!(MetaView::parse(&raw).is_err());
        let raw = serde_json::value::to_raw_value(&json!("x")).unwrap();
        assert!(MetaView::parse(&raw).is_err());
    }

    #[test]
    fn from_request_matches_parse() {
        let body = json!({"jsonrpc": "2.0", "id": "a", "method": "m", "params": {"_meta": {"k": 1}, "p": 2}});
        let fast = SplitRequest::parse(body.to_string().as_bytes()).unwrap();
        let slow = match crate::jsonrpc::Message::from_value(body).unwrap() {
            crate::jsonrpc::Message::Request(r) => SplitRequest::from_request(r),
            _ => unreachable!(),
        };
        assert_eq!(fast.params, slow.params);
        assert_eq!(fast.meta.unwrap().get(), slow.meta.unwrap().get());
    }
}
