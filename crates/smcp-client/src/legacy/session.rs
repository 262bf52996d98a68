//! One stateful Streamable HTTP session (MCP 2025-03-26 to 2025-11-25).
//!
//! `initialize` with the best version, `notifications/initialized`, then every request carries
//! `Mcp-Session-Id` and (2025-06-18 on) `MCP-Protocol-Version`. The standalone GET stream is
//! opened when the server offers one (405: not offered) and feeds the listen API. A 404 on an
//! established session re-initializes once. `close` ends the session with `DELETE`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};
use smcp_proto::basic::Implementation;
use smcp_proto::jsonrpc::{Message, Notification, Request, RequestId, ResultResponse};
use smcp_proto::messages::method;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use super::Era;
use super::stream::{ListenStream, SessionStream, answer};
use super::wire::{
    SESSION_VERSIONS, accept_version, initialize_params, sends_version_header, to_session_request,
};
use crate::error::{Error, Kind, Result};
use crate::mrtr::HandlerBox;
use crate::transport::ResponseStream;
use crate::transport::http::{
    HttpTransport, MAX_ERROR_BODY, Overflow, classify_status, into_stream, read_limited,
};

/// Longest wait for the `initialize` answer.
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// Consecutive failed reconnects of the standalone GET stream before it is given up.
const MAX_GET_RECONNECTS: u32 = 5;
/// Reconnect delay when the server gave no `retry:`.
pub(crate) const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// Longest reconnect delay honoured from `retry:`.
pub(crate) const MAX_RETRY: Duration = Duration::from_secs(30);
/// Shortest reconnect delay (a `retry: 0` must not make a busy loop).
pub(crate) const MIN_RETRY: Duration = Duration::from_millis(100);
/// Buffered change notifications per listener.
const NOTIFICATION_BUFFER: usize = 256;

const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// What an older-era connection needs from the client configuration.
#[derive(Debug, Clone)]
pub(crate) struct LegacyConfig {
    pub(crate) client_info: Option<Implementation>,
    pub(crate) handler: Option<HandlerBox>,
}

impl LegacyConfig {
    pub(crate) fn kinds(&self) -> crate::InputKinds {
        self.handler
            .as_ref()
            .map(|h| h.0.kinds())
            .unwrap_or_default()
    }
}

/// What the server said in `initialize`, with the era.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
/// client.list_tools().await?;
/// if let Some(info) = client.session_info().await {
///     println!("MCP {} ({:?}): {:?}", info.protocol_version, info.era, info.server_info);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionInfo {
    /// The negotiated version (e.g. `2025-11-25`).
    pub protocol_version: String,
    /// [`Era::Session`] or [`Era::HttpSse`].
    pub era: Era,
    /// `serverInfo`, as sent.
    pub server_info: Value,
    /// `capabilities`, as sent.
    pub capabilities: Value,
    /// `instructions`, if any.
    pub instructions: Option<String>,
    /// The `Mcp-Session-Id` the server assigned (none over HTTP+SSE, or when it sent none).
    pub session_id: Option<String>,
}

impl SessionInfo {
    pub(crate) fn from_result(era: Era, version: &str, result: &Value) -> Self {
        Self {
            protocol_version: version.to_owned(),
            era,
            server_info: result.get("serverInfo").cloned().unwrap_or(Value::Null),
            capabilities: result.get("capabilities").cloned().unwrap_or(json!({})),
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
            session_id: None,
        }
    }
}

/// The part of a session its streams share.
#[derive(Debug)]
pub(crate) struct Core {
    http: reqwest::Client,
    url: reqwest::Url,
    extra_headers: HeaderMap,
    gate: crate::transport::gate::Gate,
    pub(crate) config: LegacyConfig,
    pin: Option<String>,
    /// Session id, version and initialize result (replaced by a re-initialize).
    current: Mutex<Current>,
    /// Notifications of the standalone GET stream, for listeners.
    pub(crate) changes: broadcast::Sender<Notification>,
    /// Whether a GET stream is open (list changes can be delivered).
    pub(crate) get_open: Mutex<bool>,
    /// The level last set with `logging/setLevel`.
    log_level: Mutex<Option<String>>,
    next_id: std::sync::atomic::AtomicI64,
}

#[derive(Debug, Clone)]
struct Current {
    session_id: Option<HeaderValue>,
    version: String,
    info: SessionInfo,
}

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

impl Core {
    pub(crate) fn version(&self) -> String {
        self.current().version
    }

    fn current(&self) -> Current {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A request builder with the session headers.
    fn request(&self, m: reqwest::Method, accept: &'static str) -> reqwest::RequestBuilder {
        let cur = self.current();
        let mut req = self
            .http
            .request(m, self.url.clone())
            .headers(self.extra_headers.clone())
            .header(ACCEPT, accept);
        if let Some(id) = cur.session_id {
            req = req.header(SESSION_ID, id);
        }
        if sends_version_header(&cur.version) {
            req = req.header(PROTOCOL_VERSION, cur.version);
        }
        req
    }

    /// POSTs one JSON-RPC message (no session retry).
    async fn post_message(&self, message: &Message) -> Result<reqwest::Response> {
        let req = self
            .request(reqwest::Method::POST, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .body(message.to_vec());
        self.gate.send(req).await
    }

    /// POSTs a notification or a response: the server answers 202.
    pub(crate) async fn post_quiet(&self, message: &Message) -> Result<()> {
        let response = self.post_message(message).await?;
        let status = response.status().as_u16();
        if (200..300).contains(&status) {
            return Ok(());
        }
        let body = read_limited(response, MAX_ERROR_BODY, Overflow::Truncate).await?;
        Err(classify_status(status, &body))
    }

    /// POSTs the answer to a server request (a failure is only logged: the server times out).
    pub(crate) async fn post_answer(&self, reply: &Message) {
        if let Err(e) = self.post_quiet(reply).await {
            tracing::warn!(error = %e, "the answer to a server request was not accepted");
        }
    }

    /// The server's capabilities from `initialize`.
    pub(crate) fn current_capabilities(&self) -> Value {
        self.current().info.capabilities
    }

    /// GET on the endpoint with `Last-Event-ID` when resuming.
    pub(crate) async fn get(&self, last_event_id: Option<&str>) -> Result<reqwest::Response> {
        let mut req = self.request(reqwest::Method::GET, "text/event-stream");
        if let Some(id) = last_event_id
            && let Ok(v) = HeaderValue::from_str(id)
        {
            req = req.header(LAST_EVENT_ID, v);
        }
        self.gate.send(req).await
    }

    /// A fresh id for requests the session itself sends (initialize, subscribe).
    pub(crate) fn internal_id(&self) -> RequestId {
        RequestId::from(format!(
            "smcp-session-{}",
            self.next_id
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ))
    }

    /// Sends one request of the session's own and waits for its result.
    pub(crate) async fn call(self: &Arc<Self>, method_name: &str, params: Value) -> Result<Value> {
        let id = self.internal_id();
        let request = Request {
            id: id.clone(),
            method: method_name.to_owned(),
            params: Some(params),
        };
        let response = self.post_message(&Message::Request(request)).await?;
        let mut stream = ResponseStream::Legacy(SessionStream::new(
            self.clone(),
            id.clone(),
            into_stream(response).await?,
        ));
        let mut ignore = |_n: Notification| {};
        crate::response::read_response(&mut stream, &id, &mut ignore).await
    }

    /// Sends `notifications/cancelled` for a request whose caller went away.
    pub(crate) fn cancel_in_background(self: &Arc<Self>, id: RequestId) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let core = self.clone();
        rt.spawn(async move {
            let n = Notification {
                method: method::CANCELLED.to_owned(),
                params: Some(
                    json!({"requestId": id.to_value(), "reason": "cancelled by the client"}),
                ),
            };
            if let Err(e) = core.post_quiet(&Message::Notification(n)).await {
                tracing::debug!(error = %e, "notifications/cancelled not delivered");
            }
        });
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
        let offered = pin.unwrap_or(SESSION_VERSIONS[0]).to_owned();
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
        let offered = core
            .pin
            .clone()
            .unwrap_or_else(|| SESSION_VERSIONS[0].to_owned());
        {
            let mut cur = core.current.lock().unwrap_or_else(PoisonError::into_inner);
            cur.session_id = None;
            cur.version = offered.clone();
        }
        let id = core.internal_id();
        let request = Request {
            id: id.clone(),
            method: "initialize".to_owned(),
            params: Some(initialize_params(
                &offered,
                core.config.kinds(),
                core.config.client_info.as_ref(),
            )),
        };
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
                ResponseStream::Legacy(SessionStream::new(core.clone(), id.clone(), stream));
            let mut ignore = |_n: Notification| {};
            let result = crate::response::read_response(&mut stream, &id, &mut ignore).await?;
            Ok::<_, Error>((session_id, result))
        };
        let (session_id, result) = tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake)
            .await
            .map_err(|_| Error::new(Kind::Timeout(HANDSHAKE_TIMEOUT)))??;
        let version = accept_version(&result, &offered, core.pin.is_some())?;
        {
            let mut cur = core.current.lock().unwrap_or_else(PoisonError::into_inner);
            cur.session_id = session_id;
            cur.version = version.clone();
            cur.info = SessionInfo::from_result(Era::Session, &version, &result);
            cur.info.session_id = cur
                .session_id
                .as_ref()
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
        }
        let initialized = Notification {
            method: "notifications/initialized".to_owned(),
            params: None,
        };
        core.post_quiet(&Message::Notification(initialized)).await?;
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
                .map(ResponseStream::Listen);
        }
        self.set_log_level(request).await;
        let mut reinitialized = false;
        loop {
            let before = self.core.current().session_id;
            let request = to_session_request(request, &self.version())?;
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
            return Ok(ResponseStream::Legacy(SessionStream::new(
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
        let Some(level) = super::wire::requested_log_level(request) else {
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
        match self
            .core
            .call("logging/setLevel", json!({"level": level}))
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

pub(crate) fn is_sse(r: &reqwest::Response) -> bool {
    r.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("text/event-stream"))
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

/// A JSON-RPC result message.
pub(crate) fn result_message(id: RequestId, result: Value) -> Message {
    Message::Result(ResultResponse { id, result })
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
        Box::pin(async move { Core::call(&self, method, params).await })
    }
}
