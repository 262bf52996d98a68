//! The MCP endpoint as a tower `Service`.
//!
//! Order of the checks before the JSON-RPC pipeline (REQUIREMENTS A1 items 8, 14, 17, 18):
//! Host / Origin allow-lists (403), HTTP method (405, `Allow: POST`), `Content-Type` (415),
//! `Accept` (406), body size (413), JSON (400 / −32700), JSON-RPC shape (400 / −32600),
//! notifications (202). Then [`super::pipeline::check`] and dispatch.
//!
//! `subscriptions/listen` leaves here for [`super::listen`] once the pipeline has passed.
//!
//! The response is JSON unless the handler emits a notification (progress or a log message)
//! before finishing: then it switches to SSE, the handler moves to its own task, and the body
//! streams its events followed by the final response. Closing that stream cancels the handler.

use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Buf as _;
use bytes::Bytes;
use futures_util::FutureExt;
use http::header::{ACCEPT, ALLOW, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Limited};
use serde_json::Value;
use serde_json::value::RawValue;
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::{ErrorResponse, Message, RequestId, ResultResponse};
use smcp_proto::jsonrpc_split::SplitRequest;
use smcp_proto::server::tools::CallToolResult;
use smcp_proto::sse;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};
use tracing::{Instrument, field};

use super::body::McpBody;
use super::pipeline;
use crate::context::{ContextParts, RequestContext};
use crate::dispatch::{self, Call, Dispatch, Finished, Success};
use crate::error::{Rejection, status_for_handler_error};
use crate::server::Inner;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The Streamable HTTP endpoint of a [`crate::Server`]. Cheap to clone.
#[derive(Clone, Debug)]
pub struct McpService {
    inner: Arc<Inner>,
}

impl McpService {
    pub(crate) fn new(inner: Arc<Inner>) -> Self {
        Self { inner }
    }

    /// Serves one HTTP request.
    pub fn handle<B>(
        &self,
        request: Request<B>,
    ) -> impl std::future::Future<Output = Response<McpBody>> + Send + use<B>
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        // DEBUG, like tower-http's TraceLayer: a production INFO filter pays nothing per
        // request, and `RUST_LOG=smcp_server=debug` shows every request with its fields.
        let span = tracing::debug_span!(
            "mcp.request",
            method = field::Empty,
            name = field::Empty,
            status = field::Empty,
            duration_us = field::Empty,
        );
        let fut = handle(self.inner.clone(), request);
        if span.is_disabled() {
            // Nothing records the span: no clock, no wrapper.
            return futures_util::future::Either::Left(fut);
        }
        // Boxed so that the untraced path above keeps a small future.
        futures_util::future::Either::Right(Box::pin(async move {
            let start = Instant::now();
            let response = fut.instrument(span.clone()).await;
            span.record("status", response.status().as_u16());
            span.record("duration_us", start.elapsed().as_micros() as u64);
            span.in_scope(|| tracing::debug!("served"));
            response
        }))
    }
}

impl<B> tower::Service<Request<B>> for McpService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, Infallible>> + Send>,
    >;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        Box::pin(self.handle(request).map(Ok))
    }
}

const APPLICATION_JSON: HeaderValue = HeaderValue::from_static("application/json");
const EVENT_STREAM: HeaderValue = HeaderValue::from_static("text/event-stream");

fn json_response(status: StatusCode, body: Vec<u8>) -> Response<McpBody> {
    json_response_in(status, body, http::HeaderMap::new())
}

/// A JSON response whose headers go into `map` (emptied first): given the request's map,
/// the response needs no header map of its own (see [`with_recycled_headers`]).
fn json_response_in(
    status: StatusCode,
    body: Vec<u8>,
    mut map: http::HeaderMap,
) -> Response<McpBody> {
    map.clear();
    map.insert(CONTENT_TYPE, APPLICATION_JSON);
    let mut response = Response::new(McpBody::full(body));
    *response.status_mut() = status;
    *response.headers_mut() = map;
    response
}

pub(super) fn sse_response(body: McpBody) -> Response<McpBody> {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, EVENT_STREAM);
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

fn error_bytes(id: Option<RequestId>, error: ErrorObject) -> Vec<u8> {
    Message::Error(ErrorResponse { id, error }).to_vec()
}

pub(super) fn reject(rejection: Rejection) -> Response<McpBody> {
    tracing::debug!(code = rejection.error.code, message = %rejection.error.message, "rejected");
    json_response(
        rejection.status,
        error_bytes(rejection.id, *rejection.error),
    )
}

/// An id-less refusal before any JSON-RPC processing.
fn refuse(status: StatusCode, code: i64, message: String) -> Response<McpBody> {
    reject(Rejection::new(
        status,
        None,
        ErrorObject::new(code, message),
    ))
}

/// Which response media types the client accepts.
#[derive(Debug, Clone, Copy)]
struct Accepts {
    json: bool,
    sse: bool,
}

fn accepts(headers: &http::HeaderMap) -> Accepts {
    let mut seen = false;
    let mut a = Accepts {
        json: false,
        sse: false,
    };
    for value in headers.get_all(ACCEPT) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            seen = true;
            let media = item.split(';').next().unwrap_or("").trim();
            let is = |m: &str| media.eq_ignore_ascii_case(m);
            if is("*/*") {
                a.json = true;
                a.sse = true;
            } else if is("application/json") || is("application/*") {
                a.json = true;
            } else if is("text/event-stream") || is("text/*") {
                a.sse = true;
            }
        }
    }
    if !seen {
        // No Accept header: anything is acceptable (RFC 9110 §12.5.1).
        a.json = true;
        a.sse = true;
    }
    a
}

fn is_json_content_type(headers: &http::HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// Serves one request. A plain function returning the future, so that the request itself is
/// not kept in the future's state next to its parts: the future is boxed on every request,
/// and staying small keeps that allocation on the allocator's fast path.
fn handle<B>(
    inner: Arc<Inner>,
    request: Request<B>,
) -> impl std::future::Future<Output = Response<McpBody>> + Send + use<B>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let (parts, body) = request.into_parts();
    async move {
        let accepts = match check_head(&inner, &parts) {
            Ok(accepts) => accepts,
            Err(refusal) => return *refusal,
        };
        let bytes = match read_body(&inner, &parts, body).await {
            Ok(bytes) => bytes,
            Err(refusal) => return *refusal,
        };
        match route(inner, &parts, accepts, &bytes) {
            Step::Done(response) => with_recycled_headers(response, parts.headers),
            Step::Json(status, body) => json_response_in(status, body, parts.headers),
            Step::Pending {
                inner,
                id,
                fut,
                guard,
            } => {
                let outcome = caught(fut).await;
                guard.disarm();
                let (status, body) = result_bytes(&inner, id, outcome);
                json_response_in(status, body, parts.headers)
            }
            Step::Stream(fut) => with_recycled_headers(fut.await, parts.headers),
        }
    }
}

/// Moves the response's headers into the request's header map, which hyper sized for a whole
/// request head. hyper keeps each response's (emptied) map to parse the next request of the
/// connection into; handed the bigger map, it need not grow one on every request.
fn with_recycled_headers(
    mut response: Response<McpBody>,
    mut map: http::HeaderMap,
) -> Response<McpBody> {
    if map.capacity() <= response.headers().capacity() {
        return response;
    }
    map.clear();
    map.extend(std::mem::take(response.headers_mut()));
    *response.headers_mut() = map;
    response
}

/// The checks on the request head (REQUIREMENTS A1 items 8, 14, 17): Host and Origin,
/// method, media types. `Err` is the refusal.
/// Refusals are boxed: they are rare, and the `Ok` side is two flags.
fn check_head(
    inner: &Inner,
    parts: &http::request::Parts,
) -> Result<Accepts, Box<Response<McpBody>>> {
    // Host and Origin allow-lists: the DNS-rebinding defence.
    let host = parts
        .headers
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| parts.uri.authority().map(http::uri::Authority::as_str));
    match host {
        Some(h) if inner.security.host_allowed(h) => {}
        Some(h) => {
            return Err(Box::new(refuse(
                StatusCode::FORBIDDEN,
                smcp_proto::error::INVALID_REQUEST,
                format!("Forbidden: Host {h:?} is not allowed"),
            )));
        }
        None => {
            return Err(Box::new(refuse(
                StatusCode::FORBIDDEN,
                smcp_proto::error::INVALID_REQUEST,
                "Forbidden: the Host header is required".to_owned(),
            )));
        }
    }
    if let Some(origin) = parts.headers.get(ORIGIN) {
        let allowed = origin
            .to_str()
            .is_ok_and(|o| inner.security.origin_allowed(o));
        if !allowed {
            return Err(Box::new(refuse(
                StatusCode::FORBIDDEN,
                smcp_proto::error::INVALID_REQUEST,
                format!(
                    "Forbidden: Origin {:?} is not allowed",
                    String::from_utf8_lossy(origin.as_bytes())
                ),
            )));
        }
    }

    if parts.method != Method::POST {
        let mut response = refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            smcp_proto::error::INVALID_REQUEST,
            format!(
                "Method Not Allowed: this MCP endpoint accepts only POST (got {})",
                parts.method
            ),
        );
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("POST"));
        return Err(Box::new(response));
    }

    if !is_json_content_type(&parts.headers) {
        return Err(Box::new(refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            smcp_proto::error::INVALID_REQUEST,
            "Unsupported Media Type: Content-Type must be application/json".to_owned(),
        )));
    }
    let accepts = accepts(&parts.headers);
    if !accepts.json && !accepts.sse {
        return Err(Box::new(refuse(
            StatusCode::NOT_ACCEPTABLE,
            smcp_proto::error::INVALID_REQUEST,
            "Not Acceptable: Accept must allow application/json or text/event-stream".to_owned(),
        )));
    }

    Ok(accepts)
}

/// The body, within the size limit (413 beyond it, also when `Content-Length` says so).
async fn read_body<B>(
    inner: &Inner,
    parts: &http::request::Parts,
    body: B,
) -> Result<Bytes, Box<Response<McpBody>>>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let limit = inner.limits.max_body_bytes;
    let too_large = || {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            smcp_proto::error::INVALID_REQUEST,
            format!("Payload Too Large: the body exceeds {limit} bytes"),
        )
    };
    if parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|len| len > limit as u64)
    {
        return Err(Box::new(too_large()));
    }
    // Frame by frame rather than `collect()`: a body that arrives in one frame (the usual
    // case) is kept as it is, with no list of chunks to build and flatten.
    let mut body = std::pin::pin!(Limited::new(body, limit));
    let mut first: Option<Bytes> = None;
    let mut joined: Option<Vec<u8>> = None;
    while let Some(frame) = body.frame().await {
        let frame = match frame {
            Ok(frame) => frame,
            Err(e)
                if e.downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some() =>
            {
                return Err(Box::new(too_large()));
            }
            Err(e) => {
                return Err(Box::new(refuse(
                    StatusCode::BAD_REQUEST,
                    smcp_proto::error::INVALID_REQUEST,
                    format!("Bad Request: could not read the body: {e}"),
                )));
            }
        };
        let Ok(mut data) = frame.into_data() else {
            continue; // trailers: nothing MCP reads
        };
        let chunk = data.copy_to_bytes(data.remaining());
        match (&mut joined, first.take()) {
            (Some(all), _) => all.extend_from_slice(&chunk),
            (None, None) => first = Some(chunk),
            (None, Some(head)) => {
                let mut all = Vec::with_capacity(head.len() + chunk.len());
                all.extend_from_slice(&head);
                all.extend_from_slice(&chunk);
                joined = Some(all);
            }
        }
    }
    Ok(joined.map_or_else(|| first.unwrap_or_default(), Bytes::from))
}

/// Parses the body as one JSON-RPC message and routes it: requests go through the pipeline
/// and dispatch, anything else is answered here.
fn route(inner: Arc<Inner>, parts: &http::request::Parts, accepts: Accepts, bytes: &Bytes) -> Step {
    // Fast path: a well-formed request, with `_meta` kept raw. Anything else goes through
    // the precise parser, which explains what is wrong.
    if let Some(request) = SplitRequest::parse(bytes) {
        return handle_request(inner, parts, accepts, request, bytes);
    }
    let message = match Message::from_slice(bytes) {
        Ok(m) => m,
        Err(e) => {
            let id = e.id().cloned();
            return Step::Done(reject(Rejection::new(
                StatusCode::BAD_REQUEST,
                id,
                e.to_error_object(),
            )));
        }
    };
    let request = match message {
        Message::Request(r) => r,
        Message::Notification(n) => {
            // 2026-07-28 defines no client-to-server notifications on HTTP; accept and ignore.
            tracing::Span::current().record("method", n.method.as_str());
            let mut response = Response::new(McpBody::empty());
            *response.status_mut() = StatusCode::ACCEPTED;
            return Step::Done(response);
        }
        Message::Result(ResultResponse { id, .. })
        | Message::Error(ErrorResponse { id: Some(id), .. }) => {
            return Step::Done(reject(Rejection::new(
                StatusCode::BAD_REQUEST,
                Some(id),
                ErrorObject::invalid_request(
                    "Invalid request: clients must not send JSON-RPC responses to this endpoint",
                ),
            )));
        }
        Message::Error(ErrorResponse { id: None, .. }) => {
            return Step::Done(refuse(
                StatusCode::BAD_REQUEST,
                smcp_proto::error::INVALID_REQUEST,
                "Invalid request: clients must not send JSON-RPC responses to this endpoint"
                    .to_owned(),
            ));
        }
    };

    handle_request(
        inner,
        parts,
        accepts,
        SplitRequest::from_request(request),
        bytes,
    )
}

/// What is left of a request once it has been validated and dispatched. Kept small on
/// purpose: it is all that stays alive while a handler runs.
enum Step {
    /// The response is ready.
    Done(Response<McpBody>),
    /// A JSON response is ready: its status and body.
    Json(StatusCode, Vec<u8>),
    /// A handler is running; its outcome becomes a JSON response. The guard cancels the
    /// handler's token if the connection drops this future first.
    Pending {
        inner: Arc<Inner>,
        id: RequestId,
        fut: std::pin::Pin<Box<dyn std::future::Future<Output = Finished> + Send>>,
        guard: DropGuard,
    },
    /// A handler that may stream (see [`run_streaming`]).
    Stream(std::pin::Pin<Box<dyn std::future::Future<Output = Response<McpBody>> + Send>>),
}

/// The handler's outcome, with a panic turned into an internal error.
fn caught(
    fut: std::pin::Pin<Box<dyn std::future::Future<Output = Finished> + Send>>,
) -> impl std::future::Future<Output = Finished> + Send {
    AssertUnwindSafe(fut)
        .catch_unwind()
        .map(|r| r.unwrap_or_else(|_| Err(ErrorObject::internal("the handler panicked"))))
}

/// `_meta` as a slice of the body it was parsed from (no copy), or a copy when it is not
/// from `body` (the precise parser's route re-serializes it).
fn meta_bytes(body: &Bytes, meta: &RawValue) -> Bytes {
    let json = meta.get().as_bytes();
    let start = (json.as_ptr() as usize).wrapping_sub(body.as_ptr() as usize);
    match start.checked_add(json.len()) {
        Some(end) if start <= body.len() && end <= body.len() => body.slice(start..end),
        _ => Bytes::copy_from_slice(json),
    }
}

/// The JSON-RPC pipeline and dispatch of one request.
fn handle_request(
    inner: Arc<Inner>,
    parts: &http::request::Parts,
    accepts: Accepts,
    request: SplitRequest<'_>,
    body: &Bytes,
) -> Step {
    let span = tracing::Span::current();
    span.record("method", &*request.method);
    let checked = match pipeline::check(&parts.headers, request) {
        Ok(c) => c,
        Err(rejection) => return Step::Done(reject(rejection)),
    };
    if checked.method == "subscriptions/listen" {
        return Step::Done(super::listen::open(
            &inner,
            &parts.extensions,
            checked,
            accepts.sse,
        ));
    }
    if let Some(name) = checked
        .name
        .as_ref()
        .or_else(|| checked.params.get("uri"))
        .and_then(Value::as_str)
    {
        span.record("name", name);
    }

    let cancel = CancellationToken::new();
    // A handler can emit only progress (with a progress token) and log messages (with a log
    // level, on a server that logs); without either, a client that accepts JSON gets JSON and
    // no event channel is made.
    let may_emit =
        checked.progress_token.is_some() || (checked.log_level.is_some() && inner.logging);
    let (events_tx, events_rx) = if accepts.sse && (may_emit || !accepts.json) {
        let (tx, rx) = mpsc::channel(inner.limits.event_buffer.max(1));
        (Some(tx), Some(rx))
    } else {
        (None, None)
    };
    let ctx = RequestContext::new(ContextParts {
        id: checked.id.clone(),
        method: checked.method.clone(),
        meta: crate::context::MetaSource::Raw(meta_bytes(body, &checked.meta)),
        progress_token: checked.progress_token,
        log_level: checked.log_level,
        logging_enabled: inner.logging,
        events: events_tx.clone(),
        cancel: cancel.clone(),
        server: Some(crate::Server {
            inner: inner.clone(),
        }),
    });
    let id = checked.id;
    let dispatched = dispatch::dispatch(Call {
        inner: &inner,
        headers: &parts.headers,
        id: &id,
        method: &checked.method,
        body,
        params: checked.params,
        tool_parts: dispatch::ToolParts {
            name: checked.name,
            arguments: checked.arguments,
        },
        ctx,
        principal: parts
            .extensions
            .get::<crate::security::Principal>()
            .map(|p| p.0.clone()),
    });
    match dispatched {
        Err(rejection) => Step::Done(reject(rejection)),
        Ok(Dispatch::Ready(outcome)) => {
            let (status, body) = result_bytes(&inner, id, outcome.map(Success::Value));
            Step::Json(status, body)
        }
        Ok(Dispatch::Pending(fut)) => match (events_tx, events_rx) {
            (Some(tx), Some(rx)) => Step::Stream(Box::pin(run_streaming(
                inner,
                id,
                Box::pin(caught(fut)),
                tx,
                rx,
                cancel,
                !accepts.json,
            ))),
            _ => Step::Pending {
                inner,
                id,
                fut,
                guard: cancel.drop_guard(),
            },
        },
    }
}

/// Runs a handler that may stream: JSON if it finishes before emitting anything, else SSE.
async fn run_streaming(
    inner: Arc<Inner>,
    id: RequestId,
    mut fut: std::pin::Pin<Box<dyn std::future::Future<Output = Finished> + Send>>,
    final_tx: mpsc::Sender<Bytes>,
    mut rx: mpsc::Receiver<Bytes>,
    cancel: CancellationToken,
    sse_only: bool,
) -> Response<McpBody> {
    let guard = cancel.clone().drop_guard();
    let first = if sse_only {
        None
    } else {
        tokio::select! {
            biased;
            outcome = &mut fut => {
                guard.disarm();
                let mut frames = Vec::new();
                while let Ok(frame) = rx.try_recv() {
                    frames.push(frame);
                }
                if frames.is_empty() {
                    return finish_json(&inner, id, outcome);
                }
                // Events raced the result: deliver all of them, in order, as SSE.
                let (_, body) = result_bytes(&inner, id, outcome);
                frames.push(sse_frame(&body));
                let (tx, rx) = mpsc::channel(frames.len());
                for frame in frames {
                    let _ = tx.try_send(frame);
                }
                drop(tx);
                return sse_response(McpBody::stream(None, rx, None));
            }
            Some(first) = rx.recv() => Some(first),
        }
    };
    let grace = inner.limits.cancel_grace;
    tokio::spawn(async move {
        tokio::select! {
            outcome = &mut fut => {
                let (_, body) = result_bytes(&inner, id, outcome);
                // Fails only when the client has gone; nothing more is sent then.
                let _ = final_tx.send(sse_frame(&body)).await;
            }
            () = async {
                cancel.cancelled().await;
                tokio::time::sleep(grace).await;
            } => {
                tracing::debug!("handler dropped after the cancellation grace period");
            }
        }
    });
    sse_response(McpBody::stream(first, rx, Some(guard)))
}

pub(super) fn sse_frame(json: &[u8]) -> Bytes {
    let mut frame = Vec::with_capacity(json.len() + 8);
    sse::encode_event(json, &mut frame);
    Bytes::from(frame)
}

/// Serializes the final response: the result (with `resultType` and the server's `_meta`)
/// or the error, and the HTTP status a JSON response would carry.
pub(super) fn result_bytes(
    inner: &Inner,
    id: RequestId,
    outcome: Finished,
) -> (StatusCode, Vec<u8>) {
    match outcome {
        Ok(Success::Value(result)) => (
            StatusCode::OK,
            success_bytes(&inner.result_meta, &id, &result),
        ),
        Ok(Success::Tool(result)) => (StatusCode::OK, tool_bytes(&inner.result_meta, &id, &result)),
        Err(error) => {
            let status = status_for_handler_error(&error);
            (status, error_bytes(Some(id), error))
        }
    }
}

/// `{"jsonrpc":"2.0","id":…,"result":…}` written straight from the borrowed result: an
/// object result gets `"resultType":"complete"` unless it has one, and the server's `_meta`
/// entries (merged into its own `_meta` object, the result's entries winning). Members keep
/// their order; the two additions come last. Same bytes as inserting them into the `Value`
/// and serializing the message, without copying the result or the server's `_meta`.
fn success_bytes(server_meta: &Value, id: &RequestId, result: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    write_json(&mut out, id);
    out.extend_from_slice(br#","result":"#);
    match result {
        Value::Object(obj) => {
            out.push(b'{');
            let mut first = true;
            let mut member = |out: &mut Vec<u8>, key: &str| {
                if !std::mem::take(&mut first) {
                    out.push(b',');
                }
                write_json(out, key);
                out.push(b':');
            };
            for (key, value) in obj {
                member(&mut out, key);
                if key == "_meta" {
                    write_meta(&mut out, value, server_meta);
                } else {
                    write_json(&mut out, value);
                }
            }
            if !obj.contains_key("resultType") {
                member(&mut out, "resultType");
                out.extend_from_slice(br#""complete""#);
            }
            if !obj.contains_key("_meta") {
                member(&mut out, "_meta");
                write_json(&mut out, server_meta);
            }
            out.push(b'}');
        }
        other => write_json(&mut out, other),
    }
    out.push(b'}');
    out
}

/// A typed `CallToolResult` as [`success_bytes`] would write its `Value`: its members in
/// declaration order (`_meta` merged with the server's in place), the server's `_meta` last
/// when it has none. The test `tool_bytes_match_the_value_route` keeps the two in step.
fn tool_bytes(server_meta: &Value, id: &RequestId, result: &CallToolResult) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    write_json(&mut out, id);
    out.extend_from_slice(br#","result":{"#);
    if let Some(meta) = &result.meta {
        out.extend_from_slice(br#""_meta":"#);
        write_meta_map(&mut out, meta, server_meta);
        out.push(b',');
    }
    out.extend_from_slice(br#""resultType":"#);
    write_json(&mut out, &result.result_type);
    out.extend_from_slice(br#","content":"#);
    write_json(&mut out, &result.content);
    if let Some(structured) = &result.structured_content {
        out.extend_from_slice(br#","structuredContent":"#);
        write_json(&mut out, structured);
    }
    if let Some(is_error) = result.is_error {
        out.extend_from_slice(br#","isError":"#);
        write_json(&mut out, &is_error);
    }
    if result.meta.is_none() {
        out.extend_from_slice(br#","_meta":"#);
        write_json(&mut out, server_meta);
    }
    out.extend_from_slice(b"}}");
    out
}

/// The result's `_meta` with the server's entries it lacks appended; a `_meta` that is not an
/// object is replaced by the server's.
fn write_meta(out: &mut Vec<u8>, meta: &Value, server_meta: &Value) {
    let Value::Object(meta) = meta else {
        write_json(out, server_meta);
        return;
    };
    write_meta_map(out, meta, server_meta);
}

/// A `_meta` object followed by the server's entries it lacks.
fn write_meta_map(out: &mut Vec<u8>, meta: &serde_json::Map<String, Value>, server_meta: &Value) {
    let Value::Object(server) = server_meta else {
        write_json(out, meta);
        return;
    };
    out.push(b'{');
    let mut first = true;
    let extra = server.iter().filter(|(k, _)| !meta.contains_key(*k));
    for (key, value) in meta.iter().chain(extra) {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        write_json(out, key);
        out.push(b':');
        write_json(out, value);
    }
    out.push(b'}');
}

fn write_json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Writing JSON values, strings and ids into a Vec cannot fail.
    let _ = serde_json::to_writer(out, value);
}

fn finish_json(inner: &Inner, id: RequestId, outcome: Finished) -> Response<McpBody> {
    let (status, body) = result_bytes(inner, id, outcome);
    json_response(status, body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The reference: insert the additions into the `Value`, then serialize the message.
    fn via_value(server_meta: &Value, id: &RequestId, mut result: Value) -> Vec<u8> {
        if let Value::Object(obj) = &mut result {
            obj.entry("resultType")
                .or_insert_with(|| Value::String("complete".to_owned()));
            match obj.get_mut("_meta") {
                Some(Value::Object(meta)) => {
                    if let Value::Object(server) = server_meta {
                        for (k, v) in server {
                            meta.entry(k.clone()).or_insert_with(|| v.clone());
                        }
                    }
                }
                _ => {
                    obj.insert("_meta".to_owned(), server_meta.clone());
                }
            }
        }
        Message::Result(ResultResponse {
            id: id.clone(),
            result,
        })
        .to_vec()
    }

    #[test]
    fn meta_is_a_slice_of_the_body_or_a_copy() {
        let body = Bytes::from_static(br#"{"params":{"_meta":{"a":1},"name":"x"}}"#);
        #[derive(serde::Deserialize)]
        struct P<'a> {
            #[serde(borrow)]
            params: Inner<'a>,
        }
        #[derive(serde::Deserialize)]
        struct Inner<'a> {
            #[serde(borrow, rename = "_meta")]
            meta: &'a RawValue,
        }
        let parsed: P<'_> = serde_json::from_slice(&body).unwrap();
        let sliced = meta_bytes(&body, parsed.params.meta);
        assert_eq!(&sliced[..], br#"{"a":1}"#);
        // A slice shares the body's storage.
        assert!(body.as_ptr_range().contains(&sliced.as_ptr()));
        let elsewhere = serde_json::value::to_raw_value(&json!({"a": 1})).unwrap();
        let copied = meta_bytes(&body, &elsewhere);
        assert_eq!(&copied[..], br#"{"a":1}"#);
        assert!(!body.as_ptr_range().contains(&copied.as_ptr()));
    }

    #[test]
    fn recycled_headers_keep_the_response_headers() {
        let mut request_headers = http::HeaderMap::with_capacity(32);
        request_headers.insert(HOST, HeaderValue::from_static("localhost"));
        let mut response = json_response(StatusCode::OK, b"{}".to_vec());
        response
            .headers_mut()
            .append("x-a", HeaderValue::from_static("1"));
        response
            .headers_mut()
            .append("x-a", HeaderValue::from_static("2"));
        let before: Vec<_> = response
            .headers()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let response = with_recycled_headers(response, request_headers);
        let after: Vec<_> = response
            .headers()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(before, after);
        assert!(response.headers().get(HOST).is_none());
        assert!(response.headers().capacity() >= 32);
    }

    #[test]
    fn tool_bytes_match_the_value_route() {
        let server_meta =
            json!({"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}, "x": 1});
        let mut with_meta = CallToolResult::text("a\"b\nc");
        with_meta.meta = Some(serde_json::from_value(json!({"x": 2, "y": [1.5, null]})).unwrap());
        let mut structured = CallToolResult::new(vec![
            serde_json::from_value(json!({"type": "text", "text": "one"})).unwrap(),
            serde_json::from_value(
                json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
            )
            .unwrap(),
        ]);
        structured.structured_content = Some(json!({"n": 1, "s": "ü", "f": 0.25}));
        structured.is_error = Some(true);
        let mut input_required = CallToolResult::new(vec![]);
        input_required.result_type = serde_json::from_value(json!("input_required")).unwrap();
        let results = [
            CallToolResult::text("hello"),
            with_meta,
            structured,
            input_required,
            CallToolResult::new(vec![]),
        ];
        for server in [server_meta, json!({})] {
            for id in [RequestId::Number(3.into()), RequestId::String("x".into())] {
                for result in &results {
                    let value = serde_json::to_value(result).unwrap();
                    assert_eq!(
                        String::from_utf8(tool_bytes(&server, &id, result)).unwrap(),
                        String::from_utf8(success_bytes(&server, &id, &value)).unwrap(),
                        "{result:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn success_bytes_match_the_value_route() {
        let server_meta =
            json!({"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}, "x": 1});
        let results = [
            json!({"content": [{"type": "text", "text": "hi \"there\"\n"}]}),
            json!({"resultType": "input_required", "inputRequests": {}}),
            json!({"_meta": {"a": 1, "x": 2}, "content": []}),
            json!({"content": [], "_meta": "not an object"}),
            json!({"content": [], "_meta": null, "resultType": "complete"}),
            json!({}),
            json!([1, 2]),
            json!(null),
            json!("text"),
        ];
        let ids = [
            RequestId::Number(7.into()),
            RequestId::String("a\"b".into()),
        ];
        for server in [server_meta, json!({}), json!(null)] {
            for id in &ids {
                for result in &results {
                    assert_eq!(
                        String::from_utf8(success_bytes(&server, id, result)).unwrap(),
                        String::from_utf8(via_value(&server, id, result.clone())).unwrap(),
                        "server {server}, id {id:?}, result {result}"
                    );
                }
            }
        }
    }
}
