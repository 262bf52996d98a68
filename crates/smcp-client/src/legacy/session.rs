//! One stateful Streamable HTTP session (MCP 2025-03-26 to 2025-11-25).
//!
//! `initialize` with the best version, `notifications/initialized`, then every request carries
//! `Mcp-Session-Id` and (2025-06-18 on) `MCP-Protocol-Version`. The standalone GET stream is
//! opened when the server offers one (405: not offered) and feeds the listen API. A 404 on an
//! established session re-initializes once. `close` ends the session with `DELETE`. What is
//! said on the wire in the negotiated version (the `initialize` exchange, each request) is the
//! era adapter's (`adapter.rs`); what the session's streams share is in `shared.rs`.

use std::sync::{Arc, Mutex, PoisonError};

use http::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Value, json};
use smcp_proto::jsonrpc::{Message, Notification, Request};
use smcp_proto::messages::method;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use super::adapter::{self, Adapter, HANDSHAKE_TIMEOUT, Initialize};
use super::answer::answer;
use super::info::{Era, LegacyConfig, SessionInfo};
use super::listen::ListenStream;
use super::shared::{Core, Current, DEFAULT_RETRY, MAX_RETRY, MIN_RETRY, SESSION_ID};
use super::stream::SessionStream;
use crate::error::{Error, Kind, Result};
use crate::transport::ResponseStream;
use crate::transport::http::{HttpTransport, into_stream, is_sse};

/// Consecutive failed reconnects of the standalone GET stream before it is given up.
const MAX_GET_RECONNECTS: u32 = 5;
/// Buffered change notifications per listener.
const NOTIFICATION_BUFFER: usize = 256;

/// A stateful session.
#[derive(Debug)]
pub(crate) struct Session {
    pub(crate) core: Arc<Core>,
    get_task: Mutex<Option<JoinHandle<()>>>,
    reinit: tokio::sync::Mutex<()>,
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(t) = self
            .get_task
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            t.abort();
        }
    }
}

impl Session {
    /// `initialize` (the pinned version, or the best one), `notifications/initialized`, and the
    /// standalone GET stream.
    pub(crate) async fn connect(
        http: &HttpTransport,
        pin: Option<&str>,
        config: LegacyConfig,
    ) -> Result<Arc<Self>> {
        let offered = Initialize::new(pin).offered().to_owned();
        let core = Arc::new(Core {
            http: http.client().clone(),
            url: http.endpoint().clone(),
            extra_headers: http.extra_headers().clone(),
            gate: http.gate().clone(),
            config,
            pin: pin.map(str::to_owned),
            current: Mutex::new(Current {
                session_id: None,
                version: offered.clone(),
                info: SessionInfo::from_result(Era::Session, &offered, &Value::Null),
            }),
            changes: broadcast::channel(NOTIFICATION_BUFFER).0,
            get_open: Mutex::new(false),
            log_level: Mutex::new(None),
            next_id: std::sync::atomic::AtomicI64::new(1),
        });
        let session = Arc::new(Self {
            core,
            get_task: Mutex::new(None),
            reinit: tokio::sync::Mutex::new(()),
        });
        session.initialize().await?;
        Ok(session)
    }

    async fn initialize(&self) -> Result<()> {
        let core = &self.core;
        let init = Initialize::new(core.pin.as_deref());
        {
            let mut cur = core.current.lock().unwrap_or_else(PoisonError::into_inner);
            cur.session_id = None;
            cur.version = init.offered().to_owned();
        }
        let id = core.internal_id();
        let request = init.request(id.clone(), &core.config);
        let handshake = async {
            // Before the session exists: no version header yet (the server picks the version).
            let req = core
                .http
                .post(core.url.clone())
                .headers(core.extra_headers.clone())
                .header(ACCEPT, "application/json, text/event-stream")
                .header(CONTENT_TYPE, "application/json")
                .body(Message::Request(request).to_vec());
            let response = core.gate.send(req).await?;
            let session_id = response.headers().get(&SESSION_ID).cloned();
            let stream = into_stream(response).await?;
            let mut stream =
                ResponseStream::new(SessionStream::new(core.clone(), id.clone(), stream));
            let mut ignore = |_n: Notification| {};
            let result = crate::response::read_response(&mut stream, &id, &mut ignore).await?;
            Ok::<_, Error>((session_id, crate::response::value_of(&result)?))
        };
        let (session_id, result) = tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake)
            .await
            .map_err(|_| Error::new(Kind::Timeout(HANDSHAKE_TIMEOUT)))??;
        let info = init.accept(Era::Session, &result)?;
        {
            let mut cur = core.current.lock().unwrap_or_else(PoisonError::into_inner);
            cur.session_id = session_id;
            cur.version = info.protocol_version.clone();
            cur.info = info;
            cur.info.session_id = cur
                .session_id
                .as_ref()
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
        }
        core.post_quiet(&Message::Notification(adapter::initialized()))
            .await?;
        self.open_get_stream().await;
        Ok(())
    }

    /// Opens the standalone GET stream if the server offers one, and keeps it up.
    async fn open_get_stream(&self) {
        let core = self.core.clone();
        let first = match core.get(None).await {
            Ok(r) if r.status().is_success() && is_sse(&r) => r,
            Ok(r) => {
                tracing::debug!(
                    status = r.status().as_u16(),
                    "no standalone GET stream offered"
                );
                return;
            }
            Err(e) => {
                tracing::debug!(error = %e, "standalone GET stream failed");
                return;
            }
        };
        *core.get_open.lock().unwrap_or_else(PoisonError::into_inner) = true;
        let task = tokio::spawn(get_stream(Arc::downgrade(&core), first));
        if let Some(old) = self
            .get_task
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .replace(task)
        {
            old.abort();
        }
    }

    pub(crate) fn version(&self) -> String {
        self.core.version()
    }

    pub(crate) fn info(&self) -> SessionInfo {
        self.core.current().info
    }

    /// Sends a (2026-07-28 shaped) request in this session.
    pub(crate) async fn send(&self, request: &Request) -> Result<ResponseStream> {
        if request.method == method::SUBSCRIPTIONS_LISTEN {
            return ListenStream::open(self.core.clone(), request)
                .await
                .map(ResponseStream::new);
        }
        self.set_log_level(request).await;
        let mut reinitialized = false;
        loop {
            let before = self.core.current().session_id;
            let request = Adapter::new(&self.version()).request(request)?;
            let response = self
                .core
                .post_message(&Message::Request(request.clone()))
                .await?;
            if response.status().as_u16() == 404 && before.is_some() && !reinitialized {
                // The session ended server-side: start a new one, once.
                let _guard = self.reinit.lock().await;
                if self.core.current().session_id == before {
                    tracing::info!("session not found (404); initializing a new one");
                    self.initialize().await?;
                }
                reinitialized = true;
                continue;
            }
            let stream = into_stream(response).await?;
            return Ok(ResponseStream::new(SessionStream::new(
                self.core.clone(),
                request.id,
                stream,
            )));
        }
    }

    /// A request that asks for log messages (`_meta` log level in 2026-07-28) becomes
    /// `logging/setLevel` when the level changes; the messages then arrive as
    /// `notifications/message` on the request's stream (or the GET stream).
    async fn set_log_level(&self, request: &Request) {
        let Some(level) = adapter::requested_log_level(request) else {
            return;
        };
        let logs = self
            .core
            .current_capabilities()
            .get("logging")
            .is_some_and(Value::is_object);
        let same = self
            .core
            .log_level
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_deref()
            == Some(level.as_str());
        if !logs || same {
            return;
        }
        match call(
            &self.core,
            adapter::method::LOGGING_SET_LEVEL,
            json!({"level": level}),
        )
        .await
        {
            Ok(_) => {
                *self
                    .core
                    .log_level
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(level);
            }
            Err(e) => tracing::info!(error = %e, "logging/setLevel refused"),
        }
    }

    /// Ends the session: `DELETE` (405 means the server does not allow it), GET stream closed.
    pub(crate) async fn close(&self) {
        if let Some(t) = self
            .get_task
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            t.abort();
        }
        if self.core.current().session_id.is_none() {
            return;
        }
        let req = self
            .core
            .request(reqwest::Method::DELETE, "application/json");
        match self.core.gate.send(req).await {
            Ok(r) => tracing::debug!(status = r.status().as_u16(), "session DELETE"),
            Err(e) => tracing::debug!(error = %e, "session DELETE failed"),
        }
    }
}

/// Reads the standalone GET stream: notifications go to listeners, server requests are
/// answered; a closed stream is reopened (with `Last-Event-ID` when events had ids) after the
/// server's `retry:` delay, up to [`MAX_GET_RECONNECTS`] failures in a row.
async fn get_stream(core: std::sync::Weak<Core>, first: reqwest::Response) {
    let mut response = Some(first);
    let mut failures = 0u32;
    let mut last_id: Option<String> = None;
    let mut retry = DEFAULT_RETRY;
    loop {
        let Some(core_now) = core.upgrade() else {
            return;
        };
        let r = match response.take() {
            Some(r) => r,
            None => match core_now.get(last_id.as_deref()).await {
                Ok(r) if r.status().is_success() && is_sse(&r) => r,
                Ok(r) if r.status().as_u16() == 405 => return,
                other => {
                    failures += 1;
                    tracing::debug!(ok = other.is_ok(), failures, "GET stream reconnect failed");
                    if failures >= MAX_GET_RECONNECTS {
                        *core_now
                            .get_open
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner) = false;
                        return;
                    }
                    drop(core_now);
                    tokio::time::sleep(retry).await;
                    continue;
                }
            },
        };
        let Ok(mut stream) = into_stream(r).await else {
            continue;
        };
        drop(core_now);
        loop {
            let message = stream.next_message().await;
            let Some(core_now) = core.upgrade() else {
                return;
            };
            match message {
                Ok(Some(Message::Notification(n))) => {
                    failures = 0;
                    let _ = core_now.changes.send(n);
                }
                Ok(Some(Message::Request(r))) => {
                    failures = 0;
                    let reply = answer(&core_now.config, r).await;
                    core_now.post_answer(&reply).await;
                }
                Ok(Some(_)) => tracing::debug!("response on the GET stream ignored"),
                Ok(None) | Err(_) => break,
            }
        }
        let (id, r) = stream.resume_point();
        if id.is_some() {
            last_id = id;
        }
        if let Some(r) = r {
            retry = r.clamp(MIN_RETRY, MAX_RETRY);
        }
        tokio::time::sleep(retry).await;
    }
}

/// Sends one request of the session's own and waits for its result.
async fn call(core: &Arc<Core>, method_name: &str, params: Value) -> Result<Value> {
    let id = core.internal_id();
    let request = Request {
        id: id.clone(),
        method: method_name.to_owned(),
        params: Some(params),
    };
    let response = core.post_message(&Message::Request(request)).await?;
    let mut stream = ResponseStream::new(SessionStream::new(
        core.clone(),
        id.clone(),
        into_stream(response).await?,
    ));
    let mut ignore = |_n: Notification| {};
    let result = crate::response::read_response(&mut stream, &id, &mut ignore).await?;
    crate::response::value_of(&result)
}

impl super::link::SessionLink for Core {
    fn changes(&self) -> broadcast::Receiver<Notification> {
        self.changes.subscribe()
    }

    fn delivers_changes(&self) -> bool {
        *self.get_open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn capabilities(&self) -> Value {
        self.current_capabilities()
    }

    fn call(
        self: Arc<Self>,
        method: &'static str,
        params: Value,
    ) -> futures_util::future::BoxFuture<'static, Result<Value>> {
        Box::pin(async move { call(&self, method, params).await })
    }
}
