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
//! Decisions where the spec is silent:
//! * A server that advertises no `listChanged` and no `resources.subscribe` has nothing to
//!   deliver: `subscriptions/listen` is then an unknown method (404, −32601).
//! * `Accept` without `text/event-stream` → 406 with a JSON-RPC error echoing the id
//!   (REQUIREMENTS A1 item 17): the method has no JSON form.
//! * A filter of the wrong shape → −32602, HTTP 400, before any stream. Unknown keys are
//!   ignored; `null` counts as omitted; `false` is honoured by omission from the ack.
//! * Caps: past [`ListenConfig::max_streams`] (or after shutdown) → 503 with `Retry-After`,
//!   past [`ListenConfig::max_streams_per_address`] → 429; both with code [`SERVER_BUSY`].

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, StatusCode};
use serde_json::{Map, Value, json};
use smcp_bus::{Change, Interest, Subscription};
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::{Message, Notification, RequestId};
use smcp_proto::meta;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::CancellationToken;

use super::body::McpBody;
use super::pipeline::Checked;
use super::serve::ConnectionInfo;
use super::service::{reject, result_bytes, sse_frame, sse_response};
use crate::config::ListenConfig;
use crate::dispatch::Success;
use crate::error::Rejection;
use crate::server::Inner;

/// JSON-RPC code of a refusal because too many listen streams are open (implementation-defined
/// server-error range). `error.data.limit` names the cap, `error.data.scope` is `"server"` or
/// `"address"`.
pub const SERVER_BUSY: i64 = -32000;

/// The open listen streams of one server instance.
#[derive(Debug, Default)]
pub(crate) struct ListenRegistry {
    counts: Mutex<Counts>,
    shutdown: CancellationToken,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    per_address: HashMap<IpAddr, usize>,
}

/// Why a stream could not be opened.
enum Refusal {
    ShuttingDown,
    Total(usize),
    Address(usize),
}

impl ListenRegistry {
    pub(crate) fn open(&self) -> usize {
        self.counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .total
    }

    pub(crate) fn shutdown(&self) {
        self.shutdown.cancel();
    }

    fn acquire(
        self: &Arc<Self>,
        address: Option<IpAddr>,
        config: &ListenConfig,
    ) -> Result<Slot, Refusal> {
        if self.shutdown.is_cancelled() {
            return Err(Refusal::ShuttingDown);
        }
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        if counts.total >= config.max_streams {
            return Err(Refusal::Total(config.max_streams));
        }
        if let Some(address) = address {
            let n = counts.per_address.entry(address).or_insert(0);
            if *n >= config.max_streams_per_address {
                return Err(Refusal::Address(config.max_streams_per_address));
            }
            *n += 1;
        }
        counts.total += 1;
        Ok(Slot {
            registry: self.clone(),
            address,
        })
    }
}

/// One counted stream; dropping it gives the place back.
struct Slot {
    registry: Arc<ListenRegistry>,
    address: Option<IpAddr>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self
            .registry
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        counts.total = counts.total.saturating_sub(1);
        if let Some(address) = self.address
            && let Some(n) = counts.per_address.get_mut(&address)
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                counts.per_address.remove(&address);
            }
        }
    }
}

/// What the client asked for, after validation.
#[derive(Debug, Default)]
struct Requested {
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: Option<Vec<String>>,
}

fn flag(filter: &Map<String, Value>, key: &str) -> Result<bool, ErrorObject> {
    match filter.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(ErrorObject::invalid_params(format!(
            "\"params.notifications.{key}\" must be a boolean"
        ))),
    }
}

fn parse_filter(
    params: &Map<String, Value>,
    config: &ListenConfig,
) -> Result<Requested, ErrorObject> {
    let filter = match params.get("notifications") {
        Some(Value::Object(f)) => f,
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "\"params.notifications\" must be an object (a SubscriptionFilter)",
            ));
        }
        None => {
            return Err(ErrorObject::invalid_params(
                "\"params.notifications\" is required",
            ));
        }
    };
    let uris = match filter.get("resourceSubscriptions") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => {
            if items.len() > config.max_resource_subscriptions {
                return Err(ErrorObject::invalid_params(format!(
                    "\"params.notifications.resourceSubscriptions\" has {} URIs; at most {} are allowed",
                    items.len(),
                    config.max_resource_subscriptions
                )));
            }
            let uris = items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    ErrorObject::invalid_params(
                        "\"params.notifications.resourceSubscriptions\" must be an array of URI strings",
                    )
                })?;
            Some(uris)
        }
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "\"params.notifications.resourceSubscriptions\" must be an array of URI strings",
            ));
        }
    };
    Ok(Requested {
        tools: flag(filter, "toolsListChanged")?,
        prompts: flag(filter, "promptsListChanged")?,
        resources: flag(filter, "resourcesListChanged")?,
        uris,
    })
}

/// The honoured subset: what the client asked for and the server advertises.
fn honour(requested: Requested, inner: &Inner) -> (Interest, Value) {
    let f = &inner.features;
    let interest = Interest {
        tools_list_changed: requested.tools && f.tools_list_changed,
        prompts_list_changed: requested.prompts && f.prompts_list_changed,
        resources_list_changed: requested.resources && f.resources_list_changed,
        resource_uris: if f.resources_subscribe {
            requested.uris.clone().unwrap_or_default()
        } else {
            Vec::new()
        },
    };
    let mut ack = Map::new();
    for (key, on) in [
        ("toolsListChanged", interest.tools_list_changed),
        ("promptsListChanged", interest.prompts_list_changed),
        ("resourcesListChanged", interest.resources_list_changed),
    ] {
        if on {
            ack.insert(key.to_owned(), Value::Bool(true));
        }
    }
    if f.resources_subscribe
        && let Some(uris) = requested.uris
    {
        ack.insert("resourceSubscriptions".to_owned(), json!(uris));
    }
    (interest, Value::Object(ack))
}

/// The peer's IP address, from [`crate::serve`] or axum's `ConnectInfo`.
fn peer_address(
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

/// Answers a `subscriptions/listen` request that passed the validation pipeline.
pub(super) fn open(
    inner: &Arc<Inner>,
    extensions: &http::Extensions,
    checked: Checked<'_>,
    accepts_sse: bool,
) -> http::Response<McpBody> {
    let id = checked.id;
    if !inner.features.any_change_notifications() {
        return reject(Rejection::protocol(
            Some(id),
            ErrorObject::method_not_found("subscriptions/listen"),
        ));
    }
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
    let config = &inner.listen;
    let requested = match parse_filter(&checked.params, config) {
        Ok(r) => r,
        Err(e) => return reject(Rejection::protocol(Some(id), e)),
    };
    let (interest, ack_filter) = honour(requested, inner);
    let connection = ConnectionInfo::current();
    let connection = connection.as_ref();
    if connection.is_some_and(|c| c.shutdown().is_cancelled()) {
        return busy(&id, &Refusal::ShuttingDown);
    }
    let slot = match inner
        .listeners
        .acquire(peer_address(connection, extensions), config)
    {
        Ok(slot) => slot,
        Err(refusal) => return busy(&id, &refusal),
    };
    let subscription = match inner.bus.subscribe(interest, config.buffer) {
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

    let id_value = id.to_value();
    let ack = Notification {
        method: "notifications/subscriptions/acknowledged".to_owned(),
        params: Some(json!({
            "_meta": {meta::SUBSCRIPTION_ID: id_value},
            "notifications": ack_filter,
        })),
    };
    let ack = sse_frame(&Message::Notification(ack).to_vec());
    let (_, close) = result_bytes(
        inner,
        id.clone(),
        Ok(Success::Value(
            json!({"_meta": {meta::SUBSCRIPTION_ID: id_value}}),
        )),
    );
    let server_down = inner.listeners.shutdown.clone();
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
        ack: Some(ack),
        close: Some(sse_frame(&close)),
        id_json: id_value.to_string().into_boxed_str(),
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

/// The state of one open listen stream; see the module docs.
pub(crate) struct ListenStream {
    ack: Option<Bytes>,
    close: Option<Bytes>,
    /// The listen id as JSON text, spliced into every notification.
    id_json: Box<str>,
    subscription: Subscription,
    shutdown: Pin<Box<dyn Future<Output = ()> + Send>>,
    keep_alive: Pin<Box<Sleep>>,
    interval: std::time::Duration,
    done: bool,
    span: tracing::Span,
    _slot: Slot,
}

impl fmt::Debug for ListenStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ListenStream")
            .field("id", &self.id_json)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

const KEEP_ALIVE: &[u8] = b":\n\n";

impl ListenStream {
    /// The next SSE frame, or the end of the stream.
    pub(crate) fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if self.done {
            return Poll::Ready(None);
        }
        if let Some(ack) = self.ack.take() {
            return Poll::Ready(Some(ack));
        }
        if self.shutdown.as_mut().poll(cx).is_ready() {
            return Poll::Ready(self.finish("shutdown"));
        }
        match self.subscription.poll_recv(cx) {
            Poll::Ready(Some(change)) => {
                self.rearm();
                return Poll::Ready(Some(render(&self.id_json, &change)));
            }
            Poll::Ready(None) if self.subscription.is_overflowed() => {
                self.done = true;
                self.span
                    .in_scope(|| tracing::debug!("listen stream overflowed: client not reading"));
                return Poll::Ready(None);
            }
            Poll::Ready(None) => return Poll::Ready(self.finish("change bus closed")),
            Poll::Pending => {}
        }
        if self.keep_alive.as_mut().poll(cx).is_ready() {
            self.rearm();
            return Poll::Ready(Some(Bytes::from_static(KEEP_ALIVE)));
        }
        Poll::Pending
    }

    fn rearm(&mut self) {
        let at = Instant::now() + self.interval;
        self.keep_alive.as_mut().reset(at);
    }

    fn finish(&mut self, why: &str) -> Option<Bytes> {
        self.done = true;
        self.span
            .in_scope(|| tracing::debug!(reason = why, "listen stream closed gracefully"));
        self.close.take()
    }
}

/// `data: {"jsonrpc":"2.0","method":…,"params":{"_meta":{subscriptionId},…}}` and the
/// blank line, as one SSE event in one buffer. Written by hand: the same few bytes go to
/// every listener, each with its own id, and compact JSON has no line break to split on.
fn render(id_json: &str, change: &Change) -> Bytes {
    let mut frame = Vec::with_capacity(176 + id_json.len());
    frame.extend_from_slice(br#"data: {"jsonrpc":"2.0","method":""#);
    frame.extend_from_slice(change.method().as_bytes());
    frame.extend_from_slice(br#"","params":{"_meta":{""#);
    frame.extend_from_slice(meta::SUBSCRIPTION_ID.as_bytes());
    frame.extend_from_slice(br#"":"#);
    frame.extend_from_slice(id_json.as_bytes());
    frame.push(b'}');
    if let Change::ResourceUpdated { uri } = change {
        frame.extend_from_slice(br#","uri":"#);
        // Serializing a string into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut frame, &**uri);
    }
    frame.extend_from_slice(b"}}\n\n");
    Bytes::from(frame)
}

impl Drop for ListenStream {
    fn drop(&mut self) {
        if !self.done {
            self.span
                .in_scope(|| tracing::debug!("listen stream closed by the client"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-written frame is exactly what the generic encoder makes of the notification.
    #[test]
    fn render_matches_the_generic_encoder() {
        let changes = [
            Change::ToolsListChanged,
            Change::PromptsListChanged,
            Change::ResourcesListChanged,
            Change::ResourceUpdated {
                uri: "file:///a \"quoted\"\nline/ü".into(),
            },
        ];
        for id in [json!(7), json!("listen-1"), json!("quote\"d")] {
            for change in &changes {
                let mut params = Map::new();
                params.insert(
                    "_meta".to_owned(),
                    json!({ meta::SUBSCRIPTION_ID: id.clone() }),
                );
                if let Change::ResourceUpdated { uri } = change {
                    params.insert("uri".to_owned(), json!(&**uri));
                }
                let expected = sse_frame(
                    &Message::Notification(Notification {
                        method: change.method().to_owned(),
                        params: Some(Value::Object(params)),
                    })
                    .to_vec(),
                );
                assert_eq!(render(&id.to_string(), change), expected, "{id} {change:?}");
            }
        }
    }
}
