//! HTTP responses: JSON, SSE, refusals, and the status a JSON-RPC outcome travels with.

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::RequestId;

use super::body::McpBody;
use super::rejection::{Rejection, status_for_handler_error};
use crate::core::reply::{Finished, error_bytes, response_bytes};
use crate::core::server::Shared;

const APPLICATION_JSON: HeaderValue = HeaderValue::from_static("application/json");
const EVENT_STREAM: HeaderValue = HeaderValue::from_static("text/event-stream");

pub(crate) use super::framing::SSE;

pub(crate) fn json_response(status: StatusCode, body: Vec<u8>) -> Response<McpBody> {
    json_response_in(status, body, HeaderMap::new())
}

/// A JSON response whose headers go into `map` (emptied first): given the request's map,
/// the response needs no header map of its own (see `service::with_recycled_headers`).
pub(crate) fn json_response_in(
    status: StatusCode,
    body: Vec<u8>,
    mut map: HeaderMap,
) -> Response<McpBody> {
    map.clear();
    map.insert(CONTENT_TYPE, APPLICATION_JSON);
    let mut response = Response::new(McpBody::full(body));
    *response.status_mut() = status;
    *response.headers_mut() = map;
    response
}

pub(crate) fn sse_response(body: McpBody) -> Response<McpBody> {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, EVENT_STREAM);
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

pub(crate) fn reject(rejection: Rejection) -> Response<McpBody> {
    tracing::debug!(code = rejection.error.code, message = %rejection.error.message, "rejected");
    json_response(
        rejection.status,
        error_bytes(rejection.id, *rejection.error),
    )
}

/// An id-less refusal before any JSON-RPC processing.
pub(crate) fn refuse(status: StatusCode, code: i64, message: String) -> Response<McpBody> {
    reject(Rejection::new(
        status,
        None,
        ErrorObject::new(code, message),
    ))
}

/// The final JSON-RPC response of a request and the HTTP status a JSON response carries.
pub(crate) fn outcome_bytes(
    shared: &Shared,
    id: RequestId,
    outcome: Finished,
) -> (StatusCode, Vec<u8>) {
    if shared.metrics.is_on()
        && let Err(error) = &outcome
    {
        super::probe::note_code(error.code);
    }
    match outcome {
        Ok(reply) => (
            StatusCode::OK,
            response_bytes(&shared.server_meta, &id, reply),
        ),
        Err(error) => (
            status_for_handler_error(&error),
            error_bytes(Some(id), error),
        ),
    }
}

/// Sets `Retry-After` to `secs` seconds.
pub(crate) fn retry_after(response: &mut Response<McpBody>, secs: u64) {
    response
        .headers_mut()
        .insert(http::header::RETRY_AFTER, HeaderValue::from(secs));
}

/// One JSON-RPC message as an SSE event.
pub(crate) fn sse_frame(json: &[u8]) -> Bytes {
    SSE.frame(json)
}
