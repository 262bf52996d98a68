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

use bytes::Bytes;
use futures_util::FutureExt;
use http::header::{ACCEPT, ALLOW, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Limited};
use serde_json::Value;
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::{ErrorResponse, Message, RequestId, ResultResponse};
use smcp_proto::jsonrpc_split::SplitRequest;
use smcp_proto::sse;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, field};

use super::body::McpBody;
use super::pipeline;
use crate::context::{ContextParts, RequestContext};
use crate::dispatch::{self, Call, Dispatch, Outcome};
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
    pub async fn handle<B>(&self, request: Request<B>) -> Response<McpBody>
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
        let start = Instant::now();
        let inner = self.inner.clone();
        async move {
            let response = handle(inner, request).await;
            let span = tracing::Span::current();
            span.record("status", response.status().as_u16());
            span.record("duration_us", start.elapsed().as_micros() as u64);
            tracing::debug!("served");
            response
        }
        .instrument(span)
        .await
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
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(request).await) })
    }
}

const APPLICATION_JSON: HeaderValue = HeaderValue::from_static("application/json");
const EVENT_STREAM: HeaderValue = HeaderValue::from_static("text/event-stream");

fn json_response(status: StatusCode, body: Vec<u8>) -> Response<McpBody> {
    let mut response = Response::new(McpBody::full(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, APPLICATION_JSON);
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

async fn handle<B>(inner: Arc<Inner>, request: Request<B>) -> Response<McpBody>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let (parts, body) = request.into_parts();

    // Host and Origin allow-lists: the DNS-rebinding defence.
    let host = parts
        .headers
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| parts.uri.authority().map(http::uri::Authority::as_str));
    match host {
        Some(h) if inner.security.host_allowed(h) => {}
        Some(h) => {
            return refuse(
                StatusCode::FORBIDDEN,
                smcp_proto::error::INVALID_REQUEST,
                format!("Forbidden: Host {h:?} is not allowed"),
            );
        }
        None => {
            return refuse(
                StatusCode::FORBIDDEN,
                smcp_proto::error::INVALID_REQUEST,
                "Forbidden: the Host header is required".to_owned(),
            );
        }
    }
    if let Some(origin) = parts.headers.get(ORIGIN) {
        let allowed = origin
            .to_str()
            .is_ok_and(|o| inner.security.origin_allowed(o));
        if !allowed {
            return refuse(
                StatusCode::FORBIDDEN,
                smcp_proto::error::INVALID_REQUEST,
                format!(
                    "Forbidden: Origin {:?} is not allowed",
                    String::from_utf8_lossy(origin.as_bytes())
                ),
            );
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
        return response;
    }

    if !is_json_content_type(&parts.headers) {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            smcp_proto::error::INVALID_REQUEST,
            "Unsupported Media Type: Content-Type must be application/json".to_owned(),
        );
    }
    let accepts = accepts(&parts.headers);
    if !accepts.json && !accepts.sse {
        return refuse(
            StatusCode::NOT_ACCEPTABLE,
            smcp_proto::error::INVALID_REQUEST,
            "Not Acceptable: Accept must allow application/json or text/event-stream".to_owned(),
        );
    }

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
        return too_large();
    }
    let bytes = match Limited::new(body, limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                return too_large();
            }
            return refuse(
                StatusCode::BAD_REQUEST,
                smcp_proto::error::INVALID_REQUEST,
                format!("Bad Request: could not read the body: {e}"),
            );
        }
    };

    // Fast path: a well-formed request, with `_meta` kept raw. Anything else goes through
    // the precise parser, which explains what is wrong.
    if let Some(request) = SplitRequest::parse(&bytes) {
        return handle_request(inner, parts, accepts, request).await;
    }
    let message = match Message::from_slice(&bytes) {
        Ok(m) => m,
        Err(e) => {
            let id = e.id().cloned();
            return reject(Rejection::new(
                StatusCode::BAD_REQUEST,
                id,
                e.to_error_object(),
            ));
        }
    };
    let request = match message {
        Message::Request(r) => r,
        Message::Notification(n) => {
            // 2026-07-28 defines no client-to-server notifications on HTTP; accept and ignore.
            tracing::Span::current().record("method", n.method.as_str());
            let mut response = Response::new(McpBody::empty());
            *response.status_mut() = StatusCode::ACCEPTED;
            return response;
        }
        Message::Result(ResultResponse { id, .. })
        | Message::Error(ErrorResponse { id: Some(id), .. }) => {
            return reject(Rejection::new(
                StatusCode::BAD_REQUEST,
                Some(id),
                ErrorObject::invalid_request(
                    "Invalid request: clients must not send JSON-RPC responses to this endpoint",
                ),
            ));
        }
        Message::Error(ErrorResponse { id: None, .. }) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                smcp_proto::error::INVALID_REQUEST,
                "Invalid request: clients must not send JSON-RPC responses to this endpoint"
                    .to_owned(),
            );
        }
    };

    handle_request(inner, parts, accepts, SplitRequest::from_request(request)).await
}

/// The JSON-RPC pipeline, dispatch and response of one request.
async fn handle_request(
    inner: Arc<Inner>,
    parts: http::request::Parts,
    accepts: Accepts,
    request: SplitRequest,
) -> Response<McpBody> {
    let span = tracing::Span::current();
    span.record("method", request.method.as_str());
    let checked = match pipeline::check(&parts.headers, request) {
        Ok(c) => c,
        Err(rejection) => return reject(rejection),
    };
    if checked.method == "subscriptions/listen" {
        return super::listen::open(&inner, &parts.extensions, checked, accepts.sse);
    }
    if let Some(name) = checked
        .params
        .get("name")
        .or_else(|| checked.params.get("uri"))
        .and_then(Value::as_str)
    {
        span.record("name", name);
    }

    let cancel = CancellationToken::new();
    let (events_tx, events_rx) = if accepts.sse {
        let (tx, rx) = mpsc::channel(inner.limits.event_buffer.max(1));
        (Some(tx), Some(rx))
    } else {
        (None, None)
    };
    let ctx = RequestContext::new(ContextParts {
        id: checked.id.clone(),
        method: checked.method.clone(),
        meta: crate::context::MetaSource::Raw(checked.meta),
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
        params: checked.params,
        ctx,
        principal: parts
            .extensions
            .get::<crate::security::Principal>()
            .map(|p| p.0.clone()),
    });
    match dispatched {
        Err(rejection) => reject(rejection),
        Ok(Dispatch::Ready(outcome)) => finish_json(&inner, id, outcome),
        Ok(Dispatch::Pending(fut)) => {
            let fut =
                Box::pin(AssertUnwindSafe(fut).catch_unwind().map(|r| {
                    r.unwrap_or_else(|_| Err(ErrorObject::internal("the handler panicked")))
                }));
            match (events_tx, events_rx) {
                (Some(tx), Some(rx)) => {
                    run_streaming(inner, id, fut, tx, rx, cancel, !accepts.json).await
                }
                _ => {
                    let guard = cancel.drop_guard();
                    let outcome = fut.await;
                    guard.disarm();
                    finish_json(&inner, id, outcome)
                }
            }
        }
    }
}

/// Runs a handler that may stream: JSON if it finishes before emitting anything, else SSE.
async fn run_streaming(
    inner: Arc<Inner>,
    id: RequestId,
    mut fut: std::pin::Pin<Box<dyn std::future::Future<Output = Outcome> + Send>>,
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
    outcome: Outcome,
) -> (StatusCode, Vec<u8>) {
    match outcome {
        Ok(mut result) => {
            if let Value::Object(obj) = &mut result {
                obj.entry("resultType")
                    .or_insert_with(|| Value::String("complete".to_owned()));
                match obj.get_mut("_meta") {
                    Some(Value::Object(meta)) => {
                        if let Value::Object(server_meta) = &inner.result_meta {
                            for (k, v) in server_meta {
                                meta.entry(k.clone()).or_insert_with(|| v.clone());
                            }
                        }
                    }
                    _ => {
                        obj.insert("_meta".to_owned(), inner.result_meta.clone());
                    }
                }
            }
            (
                StatusCode::OK,
                Message::Result(ResultResponse { id, result }).to_vec(),
            )
        }
        Err(error) => {
            let status = status_for_handler_error(&error);
            (status, error_bytes(Some(id), error))
        }
    }
}

fn finish_json(inner: &Inner, id: RequestId, outcome: Outcome) -> Response<McpBody> {
    let (status, body) = result_bytes(inner, id, outcome);
    json_response(status, body)
}
