//! The 2024-11-05 HTTP+SSE transport: `GET` the endpoint for an event stream whose first event
//! (`endpoint`) names the URL to POST messages to; every response, notification and server
//! request then arrives on that one stream and is routed here by id (progress by token).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use serde_json::{Value, json};
use smcp_proto::jsonrpc::{Message, Notification, Request, RequestId};
use smcp_proto::messages::method;
use smcp_proto::meta;
use smcp_proto::sse::SseDecoder;
use tokio::sync::{broadcast, mpsc};
use tokio::task::JoinHandle;

use super::adapter::{self, Adapter, HANDSHAKE_TIMEOUT, Initialize, not_in_era};
use super::answer::answer;
use super::info::{Era, LegacyConfig, SessionInfo};
use crate::error::{Error, Kind, Result};
use crate::transport::http::{
    HttpTransport, MAX_ERROR_BODY, Overflow, classify_status, is_sse, read_limited,
};
use crate::transport::{Inbound, MessageStream, ResponseStream};

/// Requests in flight at once on one HTTP+SSE connection.
const MAX_PENDING: usize = 256;
/// Messages buffered per request.
const PER_REQUEST_BUFFER: usize = 64;

#[derive(Debug, Default)]
struct Routes {
    /// Request id → its channel.
    pending: HashMap<RequestId, mpsc::Sender<Inbound>>,
    /// progressToken → request id.
    progress: HashMap<String, RequestId>,
}

#[derive(Debug)]
pub(crate) struct SseCore {
    http: reqwest::Client,
    post_url: reqwest::Url,
    extra_headers: HeaderMap,
    gate: crate::transport::gate::Gate,
    config: LegacyConfig,
    routes: Mutex<Routes>,
    changes: broadcast::Sender<Notification>,
    version: Mutex<String>,
    info: Mutex<Option<SessionInfo>>,
}

/// A 2024-11-05 HTTP+SSE connection.
#[derive(Debug)]
pub(crate) struct SseSession {
    core: Arc<SseCore>,
    reader: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for SseSession {
    fn drop(&mut self) {
        if let Some(t) = self
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            t.abort();
        }
    }
}

impl SseCore {
    async fn post(&self, message: &Message) -> Result<()> {
        let req = self
            .http
            .post(self.post_url.clone())
            .headers(self.extra_headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(message.to_vec());
        let response = self.gate.send(req).await?;
        let status = response.status().as_u16();
        if (200..300).contains(&status) {
            return Ok(());
        }
        let body = read_limited(response, MAX_ERROR_BODY, Overflow::Truncate).await?;
        Err(classify_status(status, &body))
    }

    fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Routes one message from the stream.
    async fn route(self: &Arc<Self>, message: Inbound) {
        let target = match &message {
            Message::Result(r) => self.routes().pending.get(&r.id).cloned(),
            Message::Error(e) => {
                e.id.as_ref()
                    .and_then(|id| self.routes().pending.get(id).cloned())
            }
            Message::Notification(n) if n.method == method::PROGRESS => {
                let token = n
                    .params
                    .as_ref()
                    .and_then(|p| p.get(meta::PROGRESS_TOKEN))
                    .map(token_key);
                let routes = self.routes();
                token
                    .and_then(|t| routes.progress.get(&t))
                    .and_then(|id| routes.pending.get(id))
                    .cloned()
            }
            Message::Notification(n) if n.method == method::MESSAGE => {
                // A log line names no request: every request in flight gets it (as over
                // stdio); each call shows it only if it asked for logs.
                let targets: Vec<_> = self.routes().pending.values().cloned().collect();
                for tx in targets {
                    let _ = tx.try_send(message.clone());
                }
                return;
            }
            Message::Notification(n) => {
                let _ = self.changes.send(n.clone());
                return;
            }
            Message::Request(_) => None,
        };
        if let Message::Request(r) = message {
            let reply = answer(&self.config, r).await;
            if let Err(e) = self.post(&reply).await {
                tracing::warn!(error = %e, "the answer to a server request was not accepted");
            }
            return;
        }
        match target {
            // A slow reader does not stall the others: its message is dropped with a warning.
            Some(tx) => {
                if tx.try_send(message).is_err() {
                    tracing::warn!("a request's buffer is full or gone; message dropped");
                }
            }
            None => tracing::debug!("message for no request in flight ignored"),
        }
    }
}

fn token_key(v: &Value) -> String {
    v.to_string()
}

impl SseSession {
    /// `GET`, the `endpoint` event, then `initialize` and `notifications/initialized`.
    pub(crate) async fn connect(
        http: &HttpTransport,
        pin: Option<&str>,
        config: LegacyConfig,
    ) -> Result<Arc<Self>> {
        let req = http
            .client()
            .get(http.endpoint().clone())
            .headers(http.extra_headers().clone())
            .header(ACCEPT, "text/event-stream");
        let response = http.gate().send(req).await?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let body = read_limited(response, MAX_ERROR_BODY, Overflow::Truncate).await?;
            return Err(classify_status(status, &body));
        }
        if !is_sse(&response) {
            // Not an HTTP+SSE server at all (a page, a GET-only route): nothing to report
            // beyond the status; the fallback then tells what the other attempts got.
            return Err(Error::new(Kind::HttpStatus {
                status,
                body: "the GET answer is not an event stream".to_owned(),
            }));
        }
        let mut bytes = response.bytes_stream();
        let mut decoder = SseDecoder::new();
        let endpoint = tokio::time::timeout(HANDSHAKE_TIMEOUT, async {
            loop {
                match decoder.next_event() {
                    Err(e) => return Err(Error::protocol(format!("bad SSE stream: {e}"))),
                    Ok(Some(ev)) if ev.event.as_deref() == Some("endpoint") => return Ok(ev.data),
                    Ok(Some(_)) => {
                        return Err(Error::protocol(
                            "the HTTP+SSE stream did not start with an endpoint event",
                        ));
                    }
                    Ok(None) => match bytes.next().await {
                        Some(Ok(chunk)) => decoder.feed(&chunk),
                        _ => return Err(Error::new(Kind::StreamBroken)),
                    },
                }
            }
        })
        .await
        .map_err(|_| Error::new(Kind::Timeout(HANDSHAKE_TIMEOUT)))??;
        let post_url = http
            .endpoint()
            .join(endpoint.trim())
            .map_err(|e| Error::protocol(format!("invalid endpoint event {endpoint:?}: {e}")))?;
        if post_url.origin() != http.endpoint().origin() {
            return Err(Error::protocol(format!(
                "the endpoint event names another origin ({}); refusing to POST there",
                post_url.origin().ascii_serialization()
            )));
        }
        let handshake = Initialize::new(pin);
        let core = Arc::new(SseCore {
            http: http.client().clone(),
            post_url,
            extra_headers: http.extra_headers().clone(),
            gate: http.gate().clone(),
            config,
            routes: Mutex::default(),
            changes: broadcast::channel(256).0,
            version: Mutex::new(handshake.offered().to_owned()),
            info: Mutex::new(None),
        });
        let reader_core = Arc::downgrade(&core);
        let reader = tokio::spawn(async move {
            loop {
                let event = match decoder.next_event() {
                    Err(e) => {
                        tracing::warn!(error = %e, "bad HTTP+SSE stream");
                        break;
                    }
                    Ok(Some(ev)) => ev,
                    Ok(None) => match bytes.next().await {
                        Some(Ok(chunk)) => {
                            decoder.feed(&chunk);
                            continue;
                        }
                        _ => break,
                    },
                };
                if event.event.as_deref().is_some_and(|n| n != "message")
                    || event.data.trim().is_empty()
                {
                    continue;
                }
                let Some(core) = reader_core.upgrade() else {
                    return;
                };
                match Message::from_slice_raw(event.data.as_bytes()) {
                    Ok(m) => core.route(m).await,
                    Err(e) => tracing::warn!(error = %e, "an SSE event is not a JSON-RPC message"),
                }
            }
            // The stream is gone: every request in flight ends (its channel closes).
            if let Some(core) = reader_core.upgrade() {
                let mut routes = core.routes();
                routes.pending.clear();
                routes.progress.clear();
            }
        });
        let session = Arc::new(Self {
            core,
            reader: Mutex::new(Some(reader)),
        });
        let init = handshake.request(
            RequestId::from("smcp-sse-init".to_owned()),
            &session.core.config,
        );
        let mut stream = session.send_raw(init.clone()).await?;
        let mut ignore = |_n: Notification| {};
        let result = tokio::time::timeout(
            HANDSHAKE_TIMEOUT,
            crate::response::read_response(&mut stream, &init.id, &mut ignore),
        )
        .await
        .map_err(|_| Error::new(Kind::Timeout(HANDSHAKE_TIMEOUT)))??;
        let info = handshake.accept(Era::HttpSse, &crate::response::value_of(&result)?)?;
        *session
            .core
            .version
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = info.protocol_version.clone();
        *session
            .core
            .info
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(info);
        session
            .core
            .post(&Message::Notification(adapter::initialized()))
            .await?;
        Ok(session)
    }

    pub(crate) fn version(&self) -> String {
        self.core
            .version
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn info(&self) -> SessionInfo {
        self.core
            .info
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .unwrap_or_else(|| {
                SessionInfo::from_result(Era::HttpSse, &self.version(), &Value::Null)
            })
    }

    /// Sends a (2026-07-28 shaped) request.
    pub(crate) async fn send(&self, request: &Request) -> Result<ResponseStream> {
        if request.method == method::SUBSCRIPTIONS_LISTEN {
            return Err(not_in_era(
                method::SUBSCRIPTIONS_LISTEN,
                format!("{} over HTTP+SSE", self.version()),
            ));
        }
        let request = Adapter::new(&self.version()).request(request)?;
        self.send_raw(request).await
    }

    async fn send_raw(&self, request: Request) -> Result<ResponseStream> {
        let (tx, rx) = mpsc::channel(PER_REQUEST_BUFFER);
        let token = request
            .params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(meta::PROGRESS_TOKEN))
            .map(token_key);
        {
            let mut routes = self.core.routes();
            if routes.pending.len() >= MAX_PENDING {
                return Err(Error::protocol(format!(
                    "more than {MAX_PENDING} requests in flight on one HTTP+SSE connection"
                )));
            }
            routes.pending.insert(request.id.clone(), tx);
            if let Some(t) = &token {
                routes.progress.insert(t.clone(), request.id.clone());
            }
        }
        let stream = ChannelStream {
            core: self.core.clone(),
            id: request.id.clone(),
            token,
            rx,
            done: false,
        };
        self.core.post(&Message::Request(request)).await?;
        Ok(ResponseStream::new(stream))
    }

    pub(crate) async fn close(&self) {
        if let Some(t) = self
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            t.abort();
        }
    }
}

/// One request's messages, routed from the shared stream.
#[derive(Debug)]
pub(crate) struct ChannelStream {
    core: Arc<SseCore>,
    id: RequestId,
    token: Option<String>,
    rx: mpsc::Receiver<Inbound>,
    done: bool,
}

impl ChannelStream {
    pub(crate) async fn next_message(&mut self) -> Result<Option<Inbound>> {
        let m = self.rx.recv().await;
        if matches!(m, Some(Message::Result(_) | Message::Error(_))) {
            self.done = true;
        }
        Ok(m)
    }
}

impl MessageStream for ChannelStream {
    fn next_message(&mut self) -> BoxFuture<'_, Result<Option<Inbound>>> {
        Box::pin(ChannelStream::next_message(self))
    }

    fn rpc_status(&self) -> Option<u16> {
        Some(200)
    }
}

impl Drop for ChannelStream {
    fn drop(&mut self) {
        {
            let mut routes = self.core.routes();
            routes.pending.remove(&self.id);
            if let Some(t) = &self.token {
                routes.progress.remove(t);
            }
        }
        if self.done {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let core = self.core.clone();
        let id = self.id.clone();
        rt.spawn(async move {
            let n = Notification {
                method: method::CANCELLED.to_owned(),
                params: Some(
                    json!({"requestId": id.to_value(), "reason": "cancelled by the client"}),
                ),
            };
            let _ = core.post(&Message::Notification(n)).await;
        });
    }
}
