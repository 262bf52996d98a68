//! A request with its `params._meta` kept as raw JSON.
//!
//! Every MCP request carries `_meta` (protocol version, client capabilities, client info), and
//! it is often the largest part of a small request. A server needs only a few of its members
//! on the hot path, so parsing it into a `Value` tree is wasted work. [`SplitRequest::parse`]
//! reads the envelope and the other params normally and keeps `_meta` as [`RawValue`],
//! borrowed from the body; it only accepts well-formed requests and returns `None` for
//! anything else, so a caller falls back to [`crate::jsonrpc::Message::from_slice`] for the
//! exact error. The method of a known client request is not copied either (see
//! [`crate::messages::method::client_request`]).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::jsonrpc::{Request, RequestId};

/// A JSON-RPC request whose `params` are split into `_meta` (raw) and the rest (parsed).
#[derive(Debug)]
pub struct SplitRequest<'a> {
    /// The request id.
    pub id: RequestId,
    /// The method: static for the requests a client sends a server.
    pub method: Cow<'static, str>,
    /// `params` without `_meta`, `name` and `arguments`; `None` when the request had no
    /// `params`.
    pub params: Option<Map<String, Value>>,
    /// `params.name` (a tool's or a prompt's), taken out of `params`: a `tools/call` needs no
    /// map for its params, nor copies of their keys.
    pub name: Option<Value>,
    /// `params.arguments`, taken out of `params` like `name`.
    pub arguments: Option<Value>,
    /// `params._meta`, unparsed: borrowed from the body by [`SplitRequest::parse`].
    pub meta: Option<Cow<'a, RawValue>>,
}

struct SplitParams<'a> {
    meta: Option<&'a RawValue>,
    name: Option<Value>,
    arguments: Option<Value>,
    rest: Map<String, Value>,
}

impl<'de> Deserialize<'de> for SplitParams<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ParamsVisitor;
        impl<'de> Visitor<'de> for ParamsVisitor {
            type Value = SplitParams<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a params object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<SplitParams<'de>, A::Error> {
                let mut params = SplitParams {
                    meta: None,
                    name: None,
                    arguments: None,
                    rest: Map::new(),
                };
                // A repeated key keeps its last value, as in a `Map`.
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    match &*key {
                        "_meta" => params.meta = Some(map.next_value::<&'de RawValue>()?),
                        "name" => params.name = Some(map.next_value::<Value>()?),
                        "arguments" => params.arguments = Some(map.next_value::<Value>()?),
                        _ => {
                            params
                                .rest
                                .insert(key.into_owned(), map.next_value::<Value>()?);
                        }
                    }
                }
                Ok(params)
            }
        }
        deserializer.deserialize_map(ParamsVisitor)
    }
}

/// A member name, borrowed from the input unless it has escapes (serde's `Cow<str>` is
/// always a copy).
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// `params` must be an object when present (`null` is not accepted here, so it falls back).
fn params_object<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SplitParams<'de>>, D::Error> {
    SplitParams::deserialize(d).map(Some)
}

/// A method name, static when it names a client request.
struct Method(Cow<'static, str>);

impl<'de> Deserialize<'de> for Method {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Key(name) = Key::deserialize(deserializer)?;
        Ok(Method(
            crate::messages::method::client_request(&name)
                .map_or_else(|| Cow::Owned(name.into_owned()), Cow::Borrowed),
        ))
    }
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: RequestId,
    method: Method,
    #[serde(default, borrow, deserialize_with = "params_object")]
    params: Option<SplitParams<'a>>,
}

impl<'a> SplitRequest<'a> {
    /// Parses a well-formed request; `None` for anything else (notifications, responses,
    /// malformed bodies), which the caller hands to the precise parser.
    pub fn parse(bytes: &'a [u8]) -> Option<Self> {
        let env: Envelope<'_> = serde_json::from_slice(bytes).ok()?;
        if env.jsonrpc != crate::JSONRPC_VERSION {
            return None;
        }
        let Some(p) = env.params else {
            return Some(Self {
                id: env.id,
                method: env.method.0,
                params: None,
                name: None,
                arguments: None,
                meta: None,
            });
        };
        Some(Self {
            id: env.id,
            method: env.method.0,
            params: Some(p.rest),
            name: p.name,
            arguments: p.arguments,
            meta: p.meta.map(Cow::Borrowed),
        })
    }

    /// Splits a request the precise parser produced.
    pub fn from_request(request: Request) -> Self {
        let method = crate::messages::method::client_request(&request.method)
            .map_or(Cow::Owned(request.method), Cow::Borrowed);
        let Some(Value::Object(mut map)) = request.params else {
            return Self {
                id: request.id,
                method,
                params: None,
                name: None,
                arguments: None,
                meta: None,
            };
        };
        let meta = map
            .remove("_meta")
            .and_then(|m| serde_json::value::to_raw_value(&m).ok())
            .map(Cow::Owned);
        Self {
            id: request.id,
            method,
            name: map.remove("name"),
            arguments: map.remove("arguments"),
            params: Some(map),
            meta,
        }
    }

    /// `params` whole again (without `_meta`): the rest with `name` and `arguments` put
    /// back; `None` when the request had no `params`.
    pub fn into_params(self) -> Option<Map<String, Value>> {
        let mut params = self.params?;
        if let Some(name) = self.name {
            params.insert("name".to_owned(), name);
        }
        if let Some(arguments) = self.arguments {
            params.insert("arguments".to_owned(), arguments);
        }
        Some(params)
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

/// The string in `raw`, if it is a JSON string; borrowed unless it has escapes.
pub fn raw_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let json = raw.get();
    if !json.starts_with('"') {
        return None;
    }
    // serde gives `Cow<str>` only owned; `&str` borrows when there is nothing to unescape.
    match serde_json::from_str::<&str>(json) {
        Ok(text) => Some(Cow::Borrowed(text)),
        Err(_) => serde_json::from_str::<String>(json).ok().map(Cow::Owned),
    }
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
        let text = body.to_string();
        let r = SplitRequest::parse(text.as_bytes()).unwrap();
        assert_eq!(r.id, RequestId::from(7));
        assert_eq!(r.method, "tools/call");
        assert_eq!(r.name, Some(json!("echo")));
        assert_eq!(r.arguments, Some(json!({"text": "hi"})));
        assert!(r.params.as_ref().unwrap().is_empty());
        let meta = r.meta.clone().unwrap();
        let params = r.into_params().unwrap();
        assert_eq!(params["name"], "echo");
        assert_eq!(params["arguments"], json!({"text": "hi"}));
        assert!(!params.contains_key("_meta"));
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
    fn raw_str_borrows_unless_escaped() {
        let plain = RawValue::from_string("\"2026-07-28\"".to_owned()).unwrap();
        assert!(matches!(raw_str(&plain), Some(Cow::Borrowed("2026-07-28"))));
        let escaped = RawValue::from_string(r#""a\"b\u00e9""#.to_owned()).unwrap();
        assert_eq!(raw_str(&escaped).as_deref(), Some("a\"bé"));
        assert!(matches!(raw_str(&escaped), Some(Cow::Owned(_))));
        assert!(raw_str(&RawValue::from_string("1".to_owned()).unwrap()).is_none());
    }

    #[test]
    fn client_requests_are_static_and_meta_is_borrowed() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"a":1},"name":"x"}}"#;
        let r = SplitRequest::parse(body).unwrap();
        assert!(matches!(r.method, Cow::Borrowed("tools/call")));
        assert!(matches!(&r.meta, Some(Cow::Borrowed(m)) if m.get() == r#"{"a":1}"#));
        let escaped =
            SplitRequest::parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools\/call"}"#).unwrap();
        assert!(matches!(escaped.method, Cow::Borrowed("tools/call")));
        let other = SplitRequest::parse(br#"{"jsonrpc":"2.0","id":1,"method":"x/y"}"#).unwrap();
        assert!(matches!(other.method, Cow::Owned(ref m) if m == "x/y"));
    }

    #[test]
    fn a_repeated_name_keeps_its_last_value_like_a_map() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{},"name":"b"}}"#;
        let fast = SplitRequest::parse(body).unwrap();
        assert_eq!(fast.name, Some(json!("b")));
        let slow = match crate::jsonrpc::Message::from_slice(body).unwrap() {
            crate::jsonrpc::Message::Request(r) => SplitRequest::from_request(r),
            _ => unreachable!(),
        };
        assert_eq!(slow.name, Some(json!("b")));
    }

    #[test]
    fn from_request_matches_parse() {
        let body = json!({"jsonrpc": "2.0", "id": "a", "method": "m",
            "params": {"_meta": {"k": 1}, "p": 2, "name": "n", "arguments": {"a": [1]}}});
        let text = body.to_string();
        let fast = SplitRequest::parse(text.as_bytes()).unwrap();
        let slow = match crate::jsonrpc::Message::from_value(body).unwrap() {
            crate::jsonrpc::Message::Request(r) => SplitRequest::from_request(r),
            _ => unreachable!(),
        };
        assert_eq!(fast.params, slow.params);
        assert_eq!(fast.name, slow.name);
        assert_eq!(fast.arguments, slow.arguments);
        assert_eq!(
            fast.meta.as_ref().unwrap().get(),
            slow.meta.as_ref().unwrap().get()
        );
        assert_eq!(fast.into_params(), slow.into_params());
    }
}
