//! The HTTP of the stateful revisions, below the POST and GET/DELETE handlers: the session and
//! version headers, which era a request claims, the request head, refusals and their statuses,
//! SSE events with their ids and the priming event.

use bytes::Bytes;
use http::header::HeaderName;
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode};
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::RequestId;

use crate::core::era::{self, Declared};
use crate::core::legacy::{Refusal, RefusalKind};
use crate::core::reply::error_bytes;
use crate::http::body::McpBody;
use crate::http::response::json_response;

pub(crate) const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
pub(super) const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub(super) const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

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
    /// The peer's address (for rate limits that key unauthenticated requests by it).
    pub(crate) peer: Option<std::net::IpAddr>,
}

pub(super) fn header_str<'h>(
    headers: &'h HeaderMap,
    name: &HeaderName,
) -> Result<Option<&'h str>, Refusal> {
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

/// The version a request's `MCP-Protocol-Version` declares (an unreadable one: another).
fn declared(headers: &HeaderMap) -> Declared {
    match headers.get(VERSION_HEADER) {
        None => Declared::Nothing,
        Some(v) => v.to_str().map_or(Declared::Other, Declared::version),
    }
}

/// Whether a POST belongs to a session by its headers alone (`core/era.rs`): a session id,
/// and an earlier `MCP-Protocol-Version` or none.
pub(crate) fn claims(headers: &HeaderMap) -> bool {
    era::in_session(declared(headers), headers.contains_key(SESSION_HEADER))
}

/// Whether a parsed request without a session belongs to the earlier revisions
/// (`core/era.rs`).
pub(crate) fn legacy_request(
    headers: &HeaderMap,
    request: &smcp_proto::jsonrpc::IncomingRequest<'_>,
) -> bool {
    era::is_earlier(declared(headers), request)
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
    let crate::http::request::Accepts { json, sse } = crate::http::request::accepts(headers);
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
        peer: crate::http::listen::peer_address(
            crate::http::serve::ConnectionInfo::current().as_ref(),
            &parts.extensions,
        ),
    })
}

/// The HTTP status of a session-layer refusal.
pub(super) fn status(kind: RefusalKind) -> StatusCode {
    match kind {
        RefusalKind::BadRequest => StatusCode::BAD_REQUEST,
        RefusalKind::NotFound => StatusCode::NOT_FOUND,
        RefusalKind::Busy => StatusCode::SERVICE_UNAVAILABLE,
        RefusalKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        RefusalKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    }
}

/// A refusal as a JSON response.
pub(crate) fn refusal(id: Option<RequestId>, refusal: Refusal) -> Response<McpBody> {
    tracing::debug!(code = refusal.error.code, message = %refusal.error.message, "legacy request refused");
    json_response(status(refusal.kind), error_bytes(id, refusal.error))
}

/// 202 Accepted, no body: a notification or a response taken.
pub(super) fn accepted() -> Response<McpBody> {
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
pub(super) const RETRY_MS: u32 = 1000;

/// The priming event a 2025-11-25 stream starts with (an id to resume from, no data, and
/// `retry:`); earlier revisions do not define it.
pub(crate) fn priming(version: &str, id: &str) -> Option<Bytes> {
    primes(version).then(|| priming_event(id))
}

/// Whether a stream of `version` starts with a priming event.
pub(super) fn primes(version: &str) -> bool {
    version == "2025-11-25"
}

/// The priming event of a stream, whose id is `id` (the stream's event 0).
pub(super) fn priming_event(id: &str) -> Bytes {
    Bytes::from(format!("id: {id}\nretry: {RETRY_MS}\ndata: \n\n"))
}

/// Whether this non-POST request is for a legacy session (GET or DELETE with a session id).
pub(crate) fn claims_other(method: &Method, headers: &HeaderMap) -> bool {
    (*method == Method::GET || *method == Method::DELETE) && headers.contains_key(SESSION_HEADER)
}

pub(super) fn session_value(id: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(id).ok()
}
