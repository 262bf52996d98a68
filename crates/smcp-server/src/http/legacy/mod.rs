//! The stateful revisions (2025-11-25, 2025-06-18, 2025-03-26) over Streamable HTTP, on the
//! same endpoint as 2026-07-28 (feature `legacy`). The protocol is in `core/legacy/`; this
//! module is its HTTP: the `Mcp-Session-Id` header, which era a request belongs to, POST
//! routing, the standalone GET stream, DELETE, SSE event ids and `Last-Event-ID`.
//!
//! Which era a request belongs to, decided on its headers (and for `initialize` its method):
//!
//! | request | era |
//! |---|---|
//! | `MCP-Protocol-Version: 2026-07-28` | 2026-07-28, exactly as without this module (an `Mcp-Session-Id` is ignored) |
//! | `initialize` without `MCP-Protocol-Version`, or with an earlier version | legacy: a new session |
//! | `Mcp-Session-Id`, no `MCP-Protocol-Version` or an earlier one | legacy: that session (404 when unknown or ended) |
//! | an earlier `MCP-Protocol-Version` without `Mcp-Session-Id` | legacy: 400, the session is required (with a 2026-07-28 `_meta`: a 2026-07-28 request, −32020) |
//! | GET or DELETE with `Mcp-Session-Id` | legacy: the standalone stream, the end of the session |
//! | GET or DELETE without it | 405, as before |
//!
//! Refusals: no session 400/−32600; unknown or ended session 404/−32600; `initialize` on a
//! session, a request other than `ping` before `notifications/initialized`, a header version
//! other than the session's, a JSON-RPC batch, a response for an id the server never sent:
//! 400/−32600; 2026-07-28 `_meta` on a session request 400/−32602; the session bound reached
//! 503/`SERVER_BUSY`; a second standalone stream 409/−32600.

mod post;
mod stream;

use bytes::Bytes;
use http::header::{ACCEPT, HeaderName};
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode};
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::RequestId;

use super::body::McpBody;
use super::response::json_response;
use crate::core::legacy::{Refusal, RefusalKind, is_legacy, refusal_bytes};

pub(crate) use post::post;
pub(crate) use stream::get_or_delete;

pub(crate) const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// The legacy-relevant headers of a request, owned.
#[derive(Debug)]
pub(crate) struct Head {
    pub(crate) session: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) principal: Option<crate::core::context::Principal>,
    pub(crate) access: Option<crate::core::access::Access>,
    pub(crate) last_event_id: Option<String>,
    pub(crate) accepts_sse: bool,
    pub(crate) accepts_json: bool,
}

fn header_str<'h>(headers: &'h HeaderMap, name: &HeaderName) -> Result<Option<&'h str>, Refusal> {
    let mut all = headers.get_all(name).iter();
    let Some(first) = all.next() else {
        return Ok(None);
    };
    if all.next().is_some() {
        return Err(Refusal::bad(ErrorObject::invalid_request(format!(
            "Bad Request: the {name} header appears more than once"
        ))));
    }
    first
        .to_str()
        .map(|s| Some(s.trim_matches([' ', '\t'])))
        .map_err(|_| {
            Refusal::bad(ErrorObject::invalid_request(format!(
                "Bad Request: the {name} header contains invalid characters"
            )))
        })
}

/// Whether a POST belongs to the earlier revisions by its headers alone: a session id with
/// an earlier `MCP-Protocol-Version` or none. (An earlier version without a session is
/// decided after parsing, see [`legacy_request`].)
pub(crate) fn claims(headers: &HeaderMap) -> bool {
    headers.contains_key(SESSION_HEADER)
        && match headers.get(VERSION_HEADER) {
            Some(v) => v
                .to_str()
                .is_ok_and(|v| is_legacy(v.trim_matches([' ', '\t']))),
            None => true,
        }
}

/// Whether a parsed request without a session belongs to the earlier revisions: an
/// `initialize` with an earlier `MCP-Protocol-Version` or none, or any request with an
/// earlier version and no 2026-07-28 `_meta` (which is then refused for its missing session).
/// A request with an earlier version and a 2026-07-28 `_meta` stays a 2026-07-28 request,
/// refused as a header mismatch (−32020).
pub(crate) fn legacy_request(
    headers: &HeaderMap,
    request: &smcp_proto::jsonrpc::IncomingRequest<'_>,
) -> bool {
    if request.method == "initialize" {
        return initialize_is_legacy(headers);
    }
    let legacy_version = headers.get(VERSION_HEADER).is_some_and(|v| {
        v.to_str()
            .is_ok_and(|v| is_legacy(v.trim_matches([' ', '\t'])))
    });
    legacy_version
        && !request.meta.as_deref().is_some_and(|m| {
            smcp_proto::meta::MetaView::parse(m).is_ok_and(|v| v.protocol_version.is_some())
        })
}

/// Whether an `initialize` with these headers starts a legacy session: no
/// `MCP-Protocol-Version`, or an earlier one.
pub(crate) fn initialize_is_legacy(headers: &HeaderMap) -> bool {
    match headers.get(VERSION_HEADER) {
        None => true,
        Some(v) => v
            .to_str()
            .is_ok_and(|v| is_legacy(v.trim_matches([' ', '\t']))),
    }
}

/// Reads the head; `Err` with the refusal response.
pub(crate) fn head(parts: &http::request::Parts) -> Result<Head, Box<Response<McpBody>>> {
    let headers = &parts.headers;
    let read = |name: HeaderName| header_str(headers, &name).map(|v| v.map(str::to_owned));
    let refused = |r: Refusal| Box::new(refusal(None, r));
    let session = read(SESSION_HEADER).map_err(refused)?;
    if let Some(s) = &session
        && (s.is_empty() || !s.bytes().all(|b| (0x21..=0x7e).contains(&b)))
    {
        return Err(refused(Refusal::bad(ErrorObject::invalid_request(
            "Bad Request: Mcp-Session-Id must be visible ASCII",
        ))));
    }
    let (json, sse) = accepts(headers);
    Ok(Head {
        session,
        version: read(VERSION_HEADER).map_err(refused)?,
        principal: parts
            .extensions
            .get::<crate::core::context::Principal>()
            .cloned(),
        access: parts
            .extensions
            .get::<crate::core::access::Access>()
            .cloned(),
        last_event_id: read(LAST_EVENT_ID).map_err(refused)?,
        accepts_sse: sse,
        accepts_json: json,
    })
}

fn accepts(headers: &HeaderMap) -> (bool, bool) {
    let mut seen = false;
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(ACCEPT) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            seen = true;
            let media = item.split(';').next().unwrap_or("").trim();
            let is = |m: &str| media.eq_ignore_ascii_case(m);
            if is("*/*") {
                json = true;
                sse = true;
            } else if is("application/json") || is("application/*") {
                json = true;
            } else if is("text/event-stream") || is("text/*") {
                sse = true;
            }
        }
    }
    if seen { (json, sse) } else { (true, true) }
}

/// The HTTP status of a session-layer refusal.
fn status(kind: RefusalKind) -> StatusCode {
    match kind {
        RefusalKind::BadRequest => StatusCode::BAD_REQUEST,
        RefusalKind::NotFound => StatusCode::NOT_FOUND,
        RefusalKind::Busy => StatusCode::SERVICE_UNAVAILABLE,
        RefusalKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// A refusal as a JSON response.
pub(crate) fn refusal(id: Option<RequestId>, refusal: Refusal) -> Response<McpBody> {
    tracing::debug!(code = refusal.error.code, message = %refusal.error.message, "legacy request refused");
    json_response(status(refusal.kind), refusal_bytes(id, refusal.error))
}

/// 202 Accepted, no body: a notification or a response taken.
fn accepted() -> Response<McpBody> {
    let mut response = Response::new(McpBody::empty());
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}

/// One event in SSE framing, with its id.
pub(crate) fn sse_event(id: &str, json: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(json.len() + id.len() + 16);
    out.extend_from_slice(b"id: ");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    out.extend_from_slice(json);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// How long a client should wait before reconnecting a closed stream (the `retry:` of the
/// priming event), in milliseconds.
const RETRY_MS: u32 = 1000;

/// The priming event a 2025-11-25 stream starts with (an id to resume from, no data, and
/// `retry:`); earlier revisions do not define it.
pub(crate) fn priming(version: &str, stream: u64) -> Option<Bytes> {
    (version == "2025-11-25").then(|| {
        Bytes::from(format!(
            "id: {}\nretry: {RETRY_MS}\ndata: \n\n",
            crate::core::legacy::event_id(stream, 0)
        ))
    })
}

/// Whether this non-POST request is for a legacy session (GET or DELETE with a session id).
pub(crate) fn claims_other(method: &Method, headers: &HeaderMap) -> bool {
    (*method == Method::GET || *method == Method::DELETE) && headers.contains_key(SESSION_HEADER)
}

fn session_value(id: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(id).ok()
}
