//! The validation pipeline for a JSON-RPC request, in the order of REQUIREMENTS A1 item 18,
//! so that the right error wins when several things are wrong:
//!
//! 1. `MCP-Protocol-Version` header present (−32020; a legacy `initialize` gets −32022),
//! 2. `params._meta.protocolVersion` present (−32602) and equal to the header (−32020),
//! 3. version supported (−32022, checked before other headers so a future revision with other
//!    header rules still gets a clean answer),
//! 4. `Mcp-Method` equal to the body's method, `Mcp-Name` equal to `params.name`/`params.uri`
//!    after Base64-sentinel decoding (−32020),
//! 5. `params._meta.clientCapabilities` present (−32602), `logLevel` valid (−32602).
//!
//! Host/Origin, HTTP method, media types and body parsing happen before this, in the service;
//! the method lookup (404) and per-tool checks happen after, in dispatch.

use std::borrow::Cow;

use http::{HeaderMap, HeaderName};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::RequestId;
use smcp_proto::jsonrpc_split::{MetaView, SplitRequest, raw_str};
use smcp_proto::{header, meta};

use crate::context::LogLevel;
use crate::error::Rejection;
use crate::server::SUPPORTED_VERSIONS;

/// The standard header names, pre-parsed (a `&str` key would be parsed on every lookup).
const PROTOCOL_VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
const METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
const NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");

/// A request that passed the pipeline.
#[derive(Debug)]
pub(crate) struct Checked<'a> {
    pub(crate) id: RequestId,
    pub(crate) method: Cow<'static, str>,
    /// `params` without `_meta`, `name` and `arguments`.
    pub(crate) params: Map<String, Value>,
    /// `params.name`, taken out of `params`.
    pub(crate) name: Option<Value>,
    /// `params.arguments`, taken out of `params`.
    pub(crate) arguments: Option<Value>,
    /// `params._meta`, unparsed (handlers that want it get it parsed on first use).
    pub(crate) meta: Cow<'a, RawValue>,
    pub(crate) log_level: Option<LogLevel>,
    pub(crate) progress_token: Option<Value>,
}

/// The single value of a header, trimmed of optional whitespace; `Err` when repeated or not
/// visible ASCII.
fn single_header<'h>(headers: &'h HeaderMap, name: &HeaderName) -> Result<Option<&'h str>, String> {
    let mut all = headers.get_all(name).iter();
    let Some(first) = all.next() else {
        return Ok(None);
    };
    if all.next().is_some() {
        return Err(format!("the {name} header appears more than once"));
    }
    let text = first
        .to_str()
        .map_err(|_| format!("the {name} header contains invalid characters"))?;
    Ok(Some(text.trim_matches([' ', '\t'])))
}

pub(crate) fn check<'a>(
    headers: &HeaderMap,
    request: SplitRequest<'a>,
) -> Result<Checked<'a>, Rejection> {
    let SplitRequest {
        id,
        method,
        params,
        name,
        arguments,
        meta,
    } = request;
    let mismatch = |msg: String| Rejection::header_mismatch(Some(id.clone()), msg);
    let invalid =
        |msg: String| Rejection::protocol(Some(id.clone()), ErrorObject::invalid_params(msg));

    let params = params.unwrap_or_default();

    // 1. MCP-Protocol-Version header.
    let header_version = single_header(headers, &PROTOCOL_VERSION_HEADER).map_err(mismatch)?;
    let Some(header_version) = header_version else {
        if method == "initialize" {
            // A client of an earlier revision: name the versions we speak (versioning.mdx).
            let requested = params
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or("");
            return Err(Rejection::protocol(
                Some(id.clone()),
                ErrorObject::unsupported_protocol_version(SUPPORTED_VERSIONS, requested),
            ));
        }
        return Err(mismatch(
            "Header mismatch: the MCP-Protocol-Version header is required".to_owned(),
        ));
    };

    // 2. _meta and its protocol version.
    let Some(meta_raw) = meta else {
        return Err(invalid(format!(
            "\"params._meta\" is required and must carry {:?} and {:?}",
            meta::PROTOCOL_VERSION,
            meta::CLIENT_CAPABILITIES
        )));
    };
    let view = MetaView::parse(&meta_raw)
        .map_err(|_| invalid("\"params._meta\" must be an object".to_owned()))?;
    let body_version = match view.protocol_version {
        Some(raw) => match raw_str(raw) {
            Some(v) => v,
            None => {
                return Err(invalid(format!(
                    "\"params._meta[{:?}]\" must be a string",
                    meta::PROTOCOL_VERSION
                )));
            }
        },
        None => {
            return Err(invalid(format!(
                "\"params._meta[{:?}]\" is required",
                meta::PROTOCOL_VERSION
            )));
        }
    };
    let body_version: &str = &body_version;
    if body_version != header_version {
        return Err(mismatch(format!(
            "Header mismatch: MCP-Protocol-Version header value {header_version:?} does not match body value {body_version:?}"
        )));
    }

    // 3. Supported version.
    if !SUPPORTED_VERSIONS.contains(&body_version) {
        return Err(Rejection::protocol(
            Some(id.clone()),
            ErrorObject::unsupported_protocol_version(SUPPORTED_VERSIONS, body_version),
        ));
    }

    // 4. Mcp-Method and Mcp-Name.
    match single_header(headers, &METHOD_HEADER).map_err(mismatch)? {
        None => {
            return Err(mismatch(
                "Header mismatch: the Mcp-Method header is required".to_owned(),
            ));
        }
        Some(h) if h != method => {
            return Err(mismatch(format!(
                "Header mismatch: Mcp-Method header value {h:?} does not match body value {method:?}"
            )));
        }
        Some(_) => {}
    }
    let name_key = match &*method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(key) = name_key {
        let raw = single_header(headers, &NAME_HEADER)
            .map_err(mismatch)?
            .ok_or_else(|| {
                mismatch("Header mismatch: the Mcp-Name header is required".to_owned())
            })?;
        let decoded = header::decode_header_value(raw)
            .map_err(|e| mismatch(format!("Header mismatch: Mcp-Name: {e}")))?;
        let body = if key == "name" {
            name.as_ref()
        } else {
            params.get(key)
        };
        match body {
            Some(Value::String(body)) if *body == *decoded => {}
            Some(Value::String(body)) => {
                return Err(mismatch(format!(
                    "Header mismatch: Mcp-Name header value {:?} does not match body value {body:?}",
                    &*decoded
                )));
            }
            _ => {
                return Err(invalid(format!(
                    "\"params.{key}\" is required and must be a string"
                )));
            }
        }
    }

    // 5. Client capabilities, log level, progress token.
    match view.client_capabilities {
        Some(raw) if raw.get().starts_with('{') => {}
        Some(_) => {
            return Err(invalid(format!(
                "\"params._meta[{:?}]\" must be an object",
                meta::CLIENT_CAPABILITIES
            )));
        }
        None => {
            return Err(invalid(format!(
                "\"params._meta[{:?}]\" is required",
                meta::CLIENT_CAPABILITIES
            )));
        }
    }
    let log_level = match view.log_level {
        None => None,
        Some(raw) => {
            let level = raw_str(raw).ok_or_else(|| {
                invalid(format!(
                    "\"params._meta[{:?}]\" must be a string",
                    meta::LOG_LEVEL
                ))
            })?;
            Some(LogLevel::parse(&level).ok_or_else(|| {
                invalid(format!(
                    "unknown log level {level:?} in \"params._meta[{:?}]\"",
                    meta::LOG_LEVEL
                ))
            })?)
        }
    };
    // A progress token is a string or an integer; anything else is ignored.
    let progress_token = view
        .progress_token
        .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64());
    Ok(Checked {
        id,
        method,
        params,
        name,
        arguments,
        meta: meta_raw,
        log_level,
        progress_token,
    })
}
