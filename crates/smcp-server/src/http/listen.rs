//! `subscriptions/listen` over HTTP (`basic/patterns/subscriptions.mdx`, REQUIREMENTS A7).
//!
//! The response is an SSE stream that lives as long as the client keeps it open. It is a
//! [`McpBody`] variant polled directly by the connection, with no task of its own, so an idle
//! stream costs a bus [`Subscription`], a timer and a few hundred bytes, and a closed stream
//! frees everything the moment hyper drops the body:
//!
//! 1. `notifications/subscriptions/acknowledged` with the honoured part of the filter, first,
//!    in the same write as the response head;
//! 2. then the changes the bus delivers, rendered as notifications tagged with
//!    `_meta["io.modelcontextprotocol/subscriptionId"]` = the listen id (JSON type kept);
//! 3. a `:` comment after [`ListenConfig::keep_alive`] without an event;
//! 4. on shutdown ([`crate::Server::shutdown`], or [`crate::serve`] stopping) the listen
//!    result `{"resultType":"complete","_meta":{subscriptionId}}`, then the end of the stream.
//!
//! A stream whose bus buffer overflows (the client stopped reading) ends without the result,
//! and, when [`crate::serve`] accepted the connection, the connection is dropped at once, so the
//! bytes already queued in hyper and the kernel are freed too.
//!
//! Decisions where the spec is silent (the protocol side's are in `core/listen.rs`):
//! * `Accept` without `text/event-stream` → 406 with a JSON-RPC error echoing the id
//!   (REQUIREMENTS A1 item 17): the method has no JSON form.
//! * A filter of the wrong shape → −32602, HTTP 400, before any stream.
//! * Caps: past [`ListenConfig::max_streams`](crate::ListenConfig::max_streams) (or after
//!   shutdown) → 503 with `Retry-After`, past
//!   [`ListenConfig::max_streams_per_address`](crate::ListenConfig::max_streams_per_address)
//!   → 429; both with code [`SERVER_BUSY`] (`error.data.scope` is `"server"` or
//!   `"address"`).

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;

use http::{HeaderValue, StatusCode};
use serde_json::json;
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::RequestId;
use smcp_proto::patterns::subscriptions::SubscriptionsListenRequestParams;

use super::body::McpBody;
use super::listen_stream::ListenStream;
use super::rejection::Rejection;
use super::response::{SSE, reject, sse_response};
use super::serve::ConnectionInfo;
use crate::core::context::RequestContext;
use crate::core::error::SERVER_BUSY;
use crate::core::extension::ListenGrant;
use crate::core::listen::{self as protocol, Refusal};
use crate::core::server::Shared;

/// The peer's IP address, from [`crate::serve`] or axum's `ConnectInfo`.
pub(crate) fn peer_address(
    connection: Option<&ConnectionInfo>,
    extensions: &http::Extensions,
) -> Option<IpAddr> {
    connection.map(|c| c.peer().ip()).or_else(|| {
        extensions
            .get::<axum::extract::ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip())
    })
}

fn busy(id: &RequestId, refusal: &Refusal) -> http::Response<McpBody> {
    let (status, message, data) = match refusal {
        Refusal::ShuttingDown => (
            StatusCode::SERVICE_UNAVAILABLE,
            "Service Unavailable: the server is shutting down".to_owned(),
            json!({"scope": "server"}),
        ),
        Refusal::Total(limit) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "Service Unavailable: {limit} listen streams are open, the most this server allows"
            ),
            json!({"scope": "server", "limit": limit}),
        ),
        Refusal::Address(limit) => (
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "Too Many Requests: {limit} listen streams are open from this address, the most allowed"
            ),
            json!({"scope": "address", "limit": limit}),
        ),
    };
    let mut response = reject(Rejection::new(
        status,
        Some(id.clone()),
        ErrorObject::new(SERVER_BUSY, message).with_data(data),
    ));
    response
        .headers_mut()
        .insert(http::header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// Whether [`open_extended`] must answer this request (some extension listens), rather than
/// [`open`] at once.
pub(super) fn needs_extensions(
    shared: &Shared,
    params: &Result<SubscriptionsListenRequestParams, ErrorObject>,
    accepts_sse: bool,
) -> bool {
    accepts_sse && params.is_ok() && protocol::extensions_listen(shared)
}

/// [`open`], after asking the extensions that listen what they honour of the filter (or
/// answering their refusal).
pub(super) async fn open_extended(
    shared: Arc<Shared>,
    extensions: http::Extensions,
    id: RequestId,
    params: SubscriptionsListenRequestParams,
    ctx: RequestContext,
) -> http::Response<McpBody> {
    match protocol::extension_grants(&shared, &ctx, &params).await {
        Ok(grants) => open(&shared, &extensions, id, Ok(params), grants, true),
        Err(e) => reject(Rejection::protocol(Some(id), e)),
    }
}

/// Answers a `subscriptions/listen` request that dispatch routed here, with what extensions
/// granted ([`open_extended`]).
pub(super) fn open(
    shared: &Arc<Shared>,
    extensions: &http::Extensions,
    id: RequestId,
    params: Result<SubscriptionsListenRequestParams, ErrorObject>,
    grants: Vec<ListenGrant>,
    accepts_sse: bool,
) -> http::Response<McpBody> {
    if !accepts_sse {
        return reject(Rejection::new(
            StatusCode::NOT_ACCEPTABLE,
            Some(id),
            ErrorObject::invalid_request(
                "Not Acceptable: subscriptions/listen answers with an SSE stream; \
                 Accept must include text/event-stream",
            ),
        ));
    }
    let plan = match params.and_then(|p| protocol::plan(shared, &id, p, grants)) {
        Ok(plan) => plan,
        Err(e) => return reject(Rejection::protocol(Some(id), e)),
    };
    let config = &shared.listen;
    let connection = ConnectionInfo::current();
    let connection = connection.as_ref();
    if connection.is_some_and(|c| c.shutdown().is_cancelled()) {
        return busy(&id, &Refusal::ShuttingDown);
    }
    let slot = match shared
        .listeners
        .acquire(peer_address(connection, extensions), config)
    {
        Ok(slot) => slot,
        Err(refusal) => return busy(&id, &refusal),
    };
    let subscription = match shared.bus.subscribe(plan.interest, config.buffer) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "change bus refused a subscription");
            return busy(&id, &Refusal::ShuttingDown);
        }
    };
    if let Some(connection) = connection {
        let abort = connection.abort().clone();
        subscription.on_overflow(move || abort.cancel());
    }
    let server_down = shared.listeners.shutdown.clone();
    let shutdown: Pin<Box<dyn Future<Output = ()> + Send>> = match connection {
        Some(c) => {
            let serve_down = c.shutdown().clone();
            Box::pin(async move {
                tokio::select! {
                    () = server_down.cancelled() => {}
                    () = serve_down.cancelled() => {}
                }
            })
        }
        None => Box::pin(async move { server_down.cancelled().await }),
    };
    let span = tracing::debug_span!("mcp.listen", subscription_id = %id);
    span.in_scope(|| tracing::debug!("listen stream opened"));
    let stream = ListenStream {
        ack: Some(SSE.frame(&plan.ack)),
        close: Some(SSE.frame(&plan.close)),
        id_json: plan.id_json,
        subscription,
        shutdown,
        keep_alive: Box::pin(tokio::time::sleep(config.keep_alive)),
        interval: config.keep_alive,
        done: false,
        span,
        _slot: slot,
    };
    sse_response(McpBody::listen(Box::new(stream)))
}
