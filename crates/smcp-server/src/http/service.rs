//! The MCP endpoint as a tower `Service`: one request from its head to its response.
//!
//! 1. the head: Host / Origin allow-lists (403), HTTP method (405, `Allow: POST`),
//!    `Content-Type` (415), `Accept` (406) — `request.rs`;
//! 2. the body, within its size limit (413) — `request.rs`;
//! 3. one parse into a typed request (`smcp_proto::jsonrpc::Incoming`): not JSON (400 /
//!    −32700), not a JSON-RPC message (400 / −32600), a notification (202), a response (400);
//! 4. the header and `_meta` checks (400) — `pipeline.rs`;
//! 5. the request context, then the core's dispatch (`core/dispatch.rs`), with the
//!    `Mcp-Param-*` headers as the mirror it checks tool arguments against (`mirror.rs`);
//! 6. the answer: JSON now, a handler's outcome as JSON or SSE (`streaming.rs`), or a listen
//!    stream (`listen.rs`), written by the core's one response writer.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use futures_util::FutureExt;
use http::{Request, Response, StatusCode};
use http_body::Body;
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::{Incoming, IncomingRequest, RequestId};
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};
use tracing::{Instrument, field};

use super::body::McpBody;
use super::mirror::HeaderMirror;
use super::pipeline;
use super::rejection::Rejection;
use super::request::{Accepts, check_head, read_body};
use super::response::{SSE, json_response_in, outcome_bytes, refuse, reject};
use super::serve::ConnectionInfo;
use super::streaming::{HandlerFuture, run_streaming, unless_cut};
use crate::core::access::{Access, INSUFFICIENT_SCOPE, InsufficientScope};
use crate::core::context::{EventSink, Principal};
use crate::core::dispatch::{self, Admission, Call, Dispatch, RateCheck};
use crate::core::error::SERVER_BUSY;
use crate::core::ratelimit::RateLimited;
use crate::core::reply::{Finished, caught};
use crate::core::server::Shared;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The Streamable HTTP endpoint of a [`crate::Server`]. Cheap to clone.
///
/// Made by [`Server::service`](crate::Server::service) (or, at a path,
/// [`Server::router`](crate::Server::router) and [`Server::endpoint`](crate::Server::endpoint)).
///
/// # Examples
///
/// Mounted into an existing axum app, behind a middleware of the app's own:
///
/// ```
/// use axum::extract::Request;
/// use axum::middleware::{self, Next};
/// use axum::response::Response;
/// use smcp_server::Server;
///
/// async fn log_requests(request: Request, next: Next) -> Response {
///     let path = request.uri().path().to_owned();
///     let response = next.run(request).await;
///     tracing::info!(%path, status = %response.status(), "request");
///     response
/// }
///
/// let server = Server::builder("demo", "1.0.0").build()?;
/// let app: axum::Router = axum::Router::new()
///     .route("/", axum::routing::get(|| async { "my app" }))
///     .route_service("/mcp", server.service())
///     .layer(middleware::from_fn(log_requests));
/// # let _ = app;
/// # Ok::<(), smcp_server::BuildError>(())
/// ```
#[derive(Clone, Debug)]
pub struct McpService {
    shared: Arc<Shared>,
}

impl McpService {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Serves one HTTP request.
    ///
    /// # Examples
    ///
    /// One `tools/call` served in-process, as a test would send it:
    ///
    /// ```
    /// use http_body_util::{BodyExt, Full};
    /// use smcp_server::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> anyhow::Result<()> {
    /// let server = Server::builder("demo", "1.0.0")
    ///     .tool(tool("ping").handler(|_call| async { Ok(CallToolResult::text("pong")) }))
    ///     .build()?;
    /// let body = serde_json::json!({
    ///     "jsonrpc": "2.0", "id": 1, "method": "tools/call",
    ///     "params": {"name": "ping", "_meta": {
    ///         "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    ///         "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    ///         "io.modelcontextprotocol/clientCapabilities": {}
    ///     }}
    /// });
    /// let request = http::Request::post("/mcp")
    ///     .header("host", "localhost")
    ///     .header("content-type", "application/json")
    ///     .header("accept", "application/json, text/event-stream")
    ///     .header("mcp-protocol-version", "2026-07-28")
    ///     .header("mcp-method", "tools/call")
    ///     .header("mcp-name", "ping")
    ///     .body(Full::new(bytes::Bytes::from(body.to_string())))?;
    /// let response = server.service().handle(request).await;
    /// assert_eq!(response.status(), 200);
    /// let reply: serde_json::Value =
    ///     serde_json::from_slice(&response.into_body().collect().await?.to_bytes())?;
    /// assert_eq!(reply["result"]["content"][0]["text"], "pong");
    /// # Ok(()) }
    /// ```
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
            trace_id = field::Empty,
            parent_span_id = field::Empty,
        );
        let metered = self.shared.metrics.is_on();
        // The HTTP exchange's own span follows the `traceparent` header (what a proxy in
        // front sees); the handler span below follows the request's context (`_meta` first).
        #[cfg(feature = "otel")]
        if !span.is_disabled()
            && let Some(ctx) = request
                .headers()
                .get("traceparent")
                .and_then(|v| v.to_str().ok())
                .and_then(|tp| {
                    let ts = request
                        .headers()
                        .get("tracestate")
                        .and_then(|v| v.to_str().ok());
                    crate::core::trace::TraceContext::parse(tp, ts)
                })
        {
            ctx.set_parent_of(&span);
        }
        let fut = handle(self.shared.clone(), request);
        if span.is_disabled() && !metered {
            // Nothing records the span and no metrics: no clock, no wrapper.
            return futures_util::future::Either::Left(fut);
        }
        let shared = metered.then(|| self.shared.clone());
        // Boxed so that the untraced path above keeps a small future.
        futures_util::future::Either::Right(Box::pin(async move {
            let start = Instant::now();
            let fut = fut.instrument(span.clone());
            let response = match shared {
                Some(shared) => super::observe::metered(shared, start, fut).await,
                None => fut.await,
            };
            if !span.is_disabled() {
                span.record("status", response.status().as_u16());
                span.record("duration_us", start.elapsed().as_micros() as u64);
                span.in_scope(|| tracing::debug!("served"));
            }
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

/// Serves one request. A plain function returning the future, so that the request itself is
/// not kept in the future's state next to its parts: the future is boxed on every request,
/// and staying small keeps that allocation on the allocator's fast path.
fn handle<B>(
    shared: Arc<Shared>,
    request: Request<B>,
) -> impl std::future::Future<Output = Response<McpBody>> + Send + use<B>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let (parts, body) = request.into_parts();
    async move {
        #[cfg(feature = "legacy")]
        if let Some(legacy) = &shared.legacy
            && super::legacy::claims_other(&parts.method, &parts.headers)
        {
            if let Err(refusal) = super::request::check_host_origin(&shared, &parts) {
                return *refusal;
            }
            let head = match super::legacy::head(&parts) {
                Ok(head) => head,
                Err(refusal) => return *refusal,
            };
            let legacy = legacy.clone();
            return super::legacy::get_or_delete(shared, legacy, parts.method, head).await;
        }
        let accepts = match check_head(&shared, &parts) {
            Ok(accepts) => accepts,
            Err(refusal) => return *refusal,
        };
        let bytes = match read_body(&shared, &parts, body).await {
            Ok(bytes) => bytes,
            Err(refusal) => return *refusal,
        };
        match route(shared, &parts, accepts, &bytes) {
            Step::Done(response) => with_recycled_headers(response, parts.headers),
            Step::Json(status, body) => json_response_in(status, body, parts.headers),
            Step::Pending {
                shared,
                id,
                fut,
                guard,
            } => {
                match unless_cut(caught(fut), guard).await {
                    // A handler's own rate limit refusal gets its Retry-After too.
                    Err(e) if e.code == SERVER_BUSY => {
                        with_recycled_headers(ready(&shared, id, Err(e)), parts.headers)
                    }
                    outcome => {
                        let (status, body) = outcome_bytes(&shared, id, outcome);
                        json_response_in(status, body, parts.headers)
                    }
                }
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
        shared: Arc<Shared>,
        id: RequestId,
        fut: HandlerFuture,
        guard: DropGuard,
    },
    /// A handler that may stream (see [`run_streaming`]).
    Stream(std::pin::Pin<Box<dyn std::future::Future<Output = Response<McpBody>> + Send>>),
}

/// Parses the body as one JSON-RPC message and routes it: requests go through the pipeline
/// and dispatch, anything else is answered here.
fn route(
    shared: Arc<Shared>,
    parts: &http::request::Parts,
    accepts: Accepts,
    bytes: &Bytes,
) -> Step {
    #[cfg(feature = "legacy")]
    if let Some(legacy) = &shared.legacy
        && super::legacy::claims(&parts.headers)
    {
        return legacy_post(shared.clone(), legacy.clone(), parts, bytes);
    }
    match Incoming::parse(bytes) {
        #[cfg(feature = "legacy")]
        Ok(Incoming::Request(request))
            if shared.legacy.is_some()
                && super::legacy::legacy_request(&parts.headers, &request) =>
        {
            match &shared.legacy {
                Some(legacy) => legacy_post(shared.clone(), legacy.clone(), parts, bytes),
                None => handle_request(shared, parts, accepts, request, bytes),
            }
        }
        Ok(Incoming::Request(request)) => handle_request(shared, parts, accepts, request, bytes),
        Ok(Incoming::Notification(n)) => {
            // 2026-07-28 defines no client-to-server notifications on HTTP; accept and ignore.
            tracing::Span::current().record("method", n.method.as_str());
            let mut response = Response::new(McpBody::empty());
            *response.status_mut() = StatusCode::ACCEPTED;
            Step::Done(response)
        }
        Ok(Incoming::Response(Some(id))) => Step::Done(reject(Rejection::new(
            StatusCode::BAD_REQUEST,
            Some(id),
            ErrorObject::invalid_request(
                "Invalid request: clients must not send JSON-RPC responses to this endpoint",
            ),
        ))),
        Ok(Incoming::Response(None)) => Step::Done(refuse(
            StatusCode::BAD_REQUEST,
            smcp_proto::error::INVALID_REQUEST,
            "Invalid request: clients must not send JSON-RPC responses to this endpoint".to_owned(),
        )),
        Err(e) => Step::Done(reject(Rejection::new(
            StatusCode::BAD_REQUEST,
            e.id().cloned(),
            e.to_error_object(),
        ))),
    }
}

/// A POST of the earlier revisions (`http/legacy/`).
#[cfg(feature = "legacy")]
fn legacy_post(
    shared: Arc<Shared>,
    legacy: Arc<crate::core::legacy::Legacy>,
    parts: &http::request::Parts,
    bytes: &Bytes,
) -> Step {
    if shared.metrics.is_on() {
        super::probe::note_method("legacy");
    }
    match super::legacy::head(parts) {
        Ok(head) => Step::Stream(Box::pin(super::legacy::post(
            shared,
            legacy,
            head,
            bytes.clone(),
        ))),
        Err(refusal) => Step::Done(*refusal),
    }
}

/// The JSON-RPC pipeline and dispatch of one request.
fn handle_request(
    shared: Arc<Shared>,
    parts: &http::request::Parts,
    accepts: Accepts,
    request: IncomingRequest<'_>,
    body: &Bytes,
) -> Step {
    let span = tracing::Span::current();
    span.record("method", &*request.method);
    let trace = if span.is_disabled() {
        None
    } else {
        super::observe::trace_context(&span, parts, &request)
    };
    let metered = shared.metrics.is_on();
    if metered {
        super::probe::note_method(shared.method_label(&request.method));
    }
    let checked = match pipeline::check(&shared, &parts.headers, &request) {
        Ok(c) => c,
        Err(rejection) => {
            if metered {
                super::probe::note_code(rejection.error.code);
            }
            return Step::Done(reject(rejection));
        }
    };
    if let Some(name) = request.name() {
        span.record("name", name);
    }

    let cancel = CancellationToken::new();
    // Without progress or logs to send, a client that accepts JSON gets JSON and no event
    // channel is made.
    let (events_tx, events_rx) =
        if accepts.sse && (checked.may_emit(shared.features.logging) || !accepts.json) {
            let (tx, rx) = mpsc::channel(shared.limits.event_buffer.max(1));
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
    let id = request.id.clone();
    let admission = Admission {
        admitted: checked,
        events: events_tx.clone().map(|tx| EventSink { tx, framing: SSE }),
        cancel: cancel.clone(),
        principal: parts.extensions.get::<Principal>().cloned(),
        access: parts.extensions.get::<Access>().cloned(),
        rate: RateCheck::Apply {
            peer: shared.rate_limits.as_ref().and_then(|_| {
                super::listen::peer_address(ConnectionInfo::current().as_ref(), &parts.extensions)
            }),
        },
    };
    let mirror = HeaderMirror(&parts.headers);
    let handler_span = handler_span(trace);
    let dispatched = handler_span.in_scope(|| {
        dispatch::dispatch(
            &shared,
            Call::new(&shared, request, body, admission, &mirror),
        )
    });
    let dispatched = if handler_span.is_disabled() {
        dispatched
    } else {
        instrumented(dispatched, handler_span)
    };
    match dispatched {
        Dispatch::Ready(Err(e)) if e.code == INSUFFICIENT_SCOPE || e.code == SERVER_BUSY => {
            Step::Done(ready(&shared, id, Err(e)))
        }
        Dispatch::Ready(outcome) => {
            let (status, body) = outcome_bytes(&shared, id, outcome);
            Step::Json(status, body)
        }
        Dispatch::Listen(params, ctx) => {
            if super::listen::needs_extensions(&shared, &params, accepts.sse)
                && let Ok(params) = params
            {
                Step::Stream(Box::pin(super::listen::open_extended(
                    shared,
                    parts.extensions.clone(),
                    id,
                    params,
                    ctx,
                )))
            } else {
                Step::Done(super::listen::open(
                    &shared,
                    &parts.extensions,
                    id,
                    params,
                    Vec::new(),
                    accepts.sse,
                ))
            }
        }
        Dispatch::Pending(fut) => match (events_tx, events_rx) {
            (Some(tx), Some(rx)) => Step::Stream(Box::pin(run_streaming(
                shared,
                id,
                Box::pin(caught(fut)),
                tx,
                rx,
                cancel,
                !accepts.json,
            ))),
            _ => Step::Pending {
                shared,
                id,
                fut,
                guard: cancel.drop_guard(),
            },
        },
        // The decision first, so that a refusal is a 429 whatever the response would have
        // been (JSON or SSE); then the request as dispatched.
        Dispatch::Gated(gate, then) => Step::Stream(Box::pin(async move {
            if let Err(refused) = gate.await {
                return ready(&shared, id, Err(refused.to_error_object()));
            }
            let fut = match *then {
                Dispatch::Pending(fut) => fut,
                Dispatch::Ready(outcome) => return ready(&shared, id, outcome),
                _ => return ready(&shared, id, Err(ErrorObject::internal("gated listen"))),
            };
            match (events_tx, events_rx) {
                (Some(tx), Some(rx)) => {
                    let fut = Box::pin(caught(fut));
                    run_streaming(shared, id, fut, tx, rx, cancel, !accepts.json).await
                }
                _ => {
                    let outcome = unless_cut(caught(fut), cancel.drop_guard()).await;
                    ready(&shared, id, outcome)
                }
            }
        })),
    }
}

/// A handler's future (a gated one's too) running in `span`.
fn instrumented(dispatched: Dispatch, span: tracing::Span) -> Dispatch {
    match dispatched {
        Dispatch::Pending(fut) => Dispatch::Pending(Box::pin(fut.instrument(span))),
        Dispatch::Gated(gate, then) => Dispatch::Gated(gate, Box::new(instrumented(*then, span))),
        other => other,
    }
}

/// The JSON response of an outcome known now. A scope refusal (403) carries the refusal for
/// the authentication layer outside, which adds the challenge; a rate limit refusal (429)
/// carries `Retry-After`.
fn ready(shared: &Shared, id: RequestId, outcome: Finished) -> Response<McpBody> {
    let (scope, limited) = match &outcome {
        Err(e) => (
            InsufficientScope::from_error_object(e),
            RateLimited::from_error_object(e),
        ),
        Ok(_) => (None, None),
    };
    let (status, body) = outcome_bytes(shared, id, outcome);
    let mut response = super::response::json_response(status, body);
    if let Some(refusal) = scope {
        response.extensions_mut().insert(refusal);
    }
    if let Some(refused) = limited {
        super::response::retry_after(&mut response, refused.retry_after_secs());
    }
    response
}

/// The span a request's handler runs in: with the feature `otel` and an incoming trace
/// context, `mcp.handler`, whose OpenTelemetry parent is that context; otherwise none (the
/// request's own span is current).
#[cfg(feature = "otel")]
fn handler_span(trace: Option<crate::core::trace::TraceContext>) -> tracing::Span {
    match trace {
        Some(ctx) => {
            let span = tracing::debug_span!(
                "mcp.handler",
                trace_id = %ctx.trace_id_hex(),
                parent_span_id = %ctx.parent_id_hex(),
            );
            ctx.set_parent_of(&span);
            span
        }
        None => tracing::Span::none(),
    }
}

#[cfg(not(feature = "otel"))]
fn handler_span(_trace: Option<crate::core::trace::TraceContext>) -> tracing::Span {
    tracing::Span::none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use http::header::HOST;

    #[test]
    fn recycled_headers_keep_the_response_headers() {
        let mut request_headers = http::HeaderMap::with_capacity(32);
        request_headers.insert(HOST, HeaderValue::from_static("localhost"));
        let mut response = super::super::response::json_response(StatusCode::OK, b"{}".to_vec());
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
}
