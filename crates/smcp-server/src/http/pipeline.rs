//! The validation pipeline for a JSON-RPC request over HTTP, in the order of REQUIREMENTS A1
//! item 18, so that the right error wins when several things are wrong:
//!
//! 1. `MCP-Protocol-Version` header present (−32020; a legacy `initialize` gets −32022),
//! 2. `params._meta.protocolVersion` present (−32602) and equal to the header (−32020),
//! 3. version supported (−32022, checked before other headers so a future revision with other
//!    header rules still gets a clean answer),
//! 4. `Mcp-Method` equal to the body's method, `Mcp-Name` equal to the member it mirrors
//!    (`params.name`, `params.uri`, or an extension method's) after Base64-sentinel decoding
//!    (−32020),
//! 5. `params._meta.clientCapabilities` present (−32602); `clientInfo`, `logLevel` and
//!    `progressToken` of the right type when present (−32602).
//!
//! Every refusal here is HTTP 400. The `_meta` members are read by the core
//! (`core/meta.rs`); this module adds the header checks around them. Host/Origin, HTTP
//! method, media types and body parsing happen before this (`head.rs`, `service.rs`); the
//! method lookup (404) and per-tool checks happen after, in dispatch.

use http::{HeaderMap, HeaderName};
use serde_json::Value;
use smcp_proto::error::ErrorObject;
use smcp_proto::header;
use smcp_proto::jsonrpc::{ClientRequest, IncomingRequest};

use super::rejection::Rejection;
use crate::core::era::{self, Declared};
use crate::core::meta::{self, Admitted};
use crate::core::server::{SUPPORTED_VERSIONS, Shared};

/// The standard header names, pre-parsed (a `&str` key would be parsed on every lookup).
const PROTOCOL_VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
const METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
const NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");

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

pub(crate) fn check(
    shared: &Shared,
    headers: &HeaderMap,
    request: &IncomingRequest<'_>,
) -> Result<Admitted, Rejection> {
    let id = &request.id;
    let mismatch = |msg: String| Rejection::header_mismatch(Some(id.clone()), msg);
    let invalid = |error: ErrorObject| Rejection::protocol(Some(id.clone()), error);

    // 1. MCP-Protocol-Version header.
    let Some(header_version) =
        single_header(headers, &PROTOCOL_VERSION_HEADER).map_err(mismatch)?
    else {
        if era::asks_for_session(Declared::Nothing, request) {
            // A client of an earlier revision: name the versions we speak (versioning.mdx).
            return Err(invalid(era::unsupported(request)));
        }
        return Err(mismatch(
            "Header mismatch: the MCP-Protocol-Version header is required".to_owned(),
        ));
    };

    // 2. _meta and its protocol version.
    let view = meta::require(request.meta.as_ref()).map_err(invalid)?;
    let body_version = meta::protocol_version(&view).map_err(invalid)?;
    if *body_version != *header_version {
        return Err(mismatch(format!(
            "Header mismatch: MCP-Protocol-Version header value {header_version:?} does not match body value {:?}",
            &*body_version
        )));
    }

    // 3. Supported version.
    if !SUPPORTED_VERSIONS.contains(&&*body_version) {
        return Err(invalid(ErrorObject::unsupported_protocol_version(
            SUPPORTED_VERSIONS,
            &body_version,
        )));
    }

    // 4. Mcp-Method and Mcp-Name.
    match single_header(headers, &METHOD_HEADER).map_err(mismatch)? {
        None => {
            return Err(mismatch(
                "Header mismatch: the Mcp-Method header is required".to_owned(),
            ));
        }
        Some(h) if h != request.method => {
            return Err(mismatch(format!(
                "Header mismatch: Mcp-Method header value {h:?} does not match body value {:?}",
                &*request.method
            )));
        }
        Some(_) => {}
    }
    if let Some((member, body)) = named_member(shared, request) {
        let raw = single_header(headers, &NAME_HEADER)
            .map_err(mismatch)?
            .ok_or_else(|| {
                mismatch("Header mismatch: the Mcp-Name header is required".to_owned())
            })?;
        let decoded = header::decode_header_value(raw)
            .map_err(|e| mismatch(format!("Header mismatch: Mcp-Name: {e}")))?;
        match body {
            Some(body) if body == &*decoded => {}
            Some(body) => {
                return Err(mismatch(format!(
                    "Header mismatch: Mcp-Name header value {:?} does not match body value {body:?}",
                    &*decoded
                )));
            }
            None => {
                return Err(invalid(ErrorObject::invalid_params(format!(
                    "\"params.{member}\" is required and must be a string"
                ))));
            }
        }
    }

    // 5. Client capabilities, then the optional members: client info, log level, progress
    // token.
    meta::client_capabilities(&view).map_err(invalid)?;
    meta::optional(&view, request.meta.as_deref()).map_err(invalid)
}

/// The member `Mcp-Name` mirrors for this request's method, and its value when it is a
/// string: the core's (`name`, `uri`) or the one an extension declared for its method.
fn named_member<'r>(
    shared: &Shared,
    request: &'r IncomingRequest<'_>,
) -> Option<(&'static str, Option<&'r str>)> {
    if let Some(member) = ClientRequest::name_member(&request.method) {
        return Some((member, request.name()));
    }
    let member = shared
        .extension_method(&request.method)
        .and_then(|(_, spec)| spec.name_member)?;
    let value = match &request.params {
        Ok(ClientRequest::Other(params)) => params.get(member).and_then(Value::as_str),
        _ => None,
    };
    Some((member, value))
}
