//! The per-request context handed to every handler.
//!
//! It carries what the request declared (client capabilities, `_meta`), the way to talk back
//! on the request's own response stream (progress, log messages), and the cancellation token
//! that fires when the client closes that stream. Nothing in it outlives the request, and
//! nothing is keyed by connection: the server is stateless between requests.

use std::borrow::Cow;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use bytes::Bytes;
use serde_json::{Map, Value};
use smcp_proto::basic::LoggingLevel;
use smcp_proto::jsonrpc::RequestId;
use smcp_proto::meta;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use super::notification::Framing;
use super::notification::{LogParams, Params, ProgressParams, WireNumber, notification_frame};

/// The authenticated caller, as established by an authentication layer in front of the
/// server (over HTTP: insert it as a request extension). `requestState` and SEP-2631 files are
/// bound to it, so what was minted for one principal is refused to another.
///
/// # Examples
///
/// Over HTTP, an authentication layer in front of the service inserts it as a request
/// extension; handlers read it from their context:
///
/// ```
/// use axum::extract::Request;
/// use axum::middleware::{self, Next};
/// use axum::response::Response;
/// use smcp_server::prelude::*;
/// use smcp_server::Principal;
///
/// async fn authenticate(mut request: Request, next: Next) -> Response {
///     // A real layer verifies a token; this one trusts a header.
///     let user = request.headers().get("x-user").and_then(|v| v.to_str().ok()).map(str::to_owned);
///     if let Some(user) = user {
///         request.extensions_mut().insert(Principal(user));
///     }
///     next.run(request).await
/// }
///
/// let server = Server::builder("demo", "1.0.0")
///     .tool(tool("whoami").handler(|call| async move {
///         let who = call.ctx.principal().map_or("anonymous", |p| p.0.as_str());
///         Ok(CallToolResult::text(who))
///     }))
///     .build()?;
/// let app = server.router("/mcp").layer(middleware::from_fn(authenticate));
/// # let _ = app;
/// # Ok::<(), smcp_server::BuildError>(())
/// ```
///
/// Over stdio, give it once for the connection with
/// [`StdioOptions::principal`](crate::StdioOptions::principal).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal(pub String);

/// Why a progress or log message could not be sent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NotifyError {
    /// The client closed the response stream; stop working.
    #[error("the request was cancelled")]
    Cancelled,
    /// `progress` must strictly increase (`basic/patterns/progress.mdx`).
    #[error("progress must increase: {next} is not above {last}")]
    ProgressNotIncreasing {
        /// The last value sent.
        last: f64,
        /// The rejected value.
        next: f64,
    },
}

/// Where the notifications of one request go: framed messages on a bounded channel.
#[derive(Debug, Clone)]
pub(crate) struct EventSink {
    pub(crate) tx: mpsc::Sender<Bytes>,
    pub(crate) framing: Framing,
}

/// Everything a handler may know about and do for its request.
///
/// Handlers find it in `call.ctx` ([`ToolCall`](crate::ToolCall)), `read.ctx`, `get.ctx` and
/// `request.ctx`.
///
/// # Examples
///
/// ```
/// use smcp_server::prelude::*;
///
/// let report = tool("report").handler(|call| async move {
///     let ctx = &call.ctx;
///     if !ctx.has_capability(&["elicitation"]) {
///         ctx.log(LoggingLevel::Warning, None, serde_json::json!("no elicitation")).await?;
///     }
///     ctx.progress(1.0, Some(2.0), Some("halfway")).await?;
///     Ok(CallToolResult::text(format!("request {:?}", ctx.request_id())))
/// });
/// ```
#[derive(Debug, Clone)]
pub struct RequestContext {
    inner: Arc<ContextInner>,
}

#[derive(Debug)]
struct ContextInner {
    id: RequestId,
    method: Cow<'static, str>,
    /// `params._meta` as received (a slice of the request body); parsed on first use (most
    /// handlers never look).
    meta_raw: Option<Bytes>,
    meta: OnceLock<Result<Map<String, Value>, String>>,
    /// `clientCapabilities` of `_meta`, read alone when nothing has read all of `_meta`.
    client_capabilities: OnceLock<Option<Map<String, Value>>>,
    /// Where `clientCapabilities` lie in `meta_raw`, when admission found them.
    capabilities_at: Option<std::ops::Range<usize>>,
    progress_token: Option<Value>,
    log_level: Option<LoggingLevel>,
    logging_enabled: bool,
    events: Option<EventSink>,
    last_progress: Mutex<Option<f64>>,
    cancel: CancellationToken,
    principal: Option<Principal>,
    access: Option<crate::core::access::Access>,
    pub(crate) server: ServerRef,
}

/// The server serving the request, as an opaque handle: the context is what every handler
/// receives, so it sits below the server and cannot name it. `core/server.rs` puts its state in
/// and gives it back as a `Server` ([`RequestContext::server`] is defined there). Debug output
/// does not dump the catalog.
#[derive(Clone)]
pub(crate) struct ServerRef(pub(crate) Option<Arc<dyn std::any::Any + Send + Sync>>);

impl std::fmt::Debug for ServerRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Server" } else { "None" })
    }
}

/// Where a context's `_meta` comes from.
#[derive(Debug)]
pub(crate) enum MetaSource {
    /// Raw JSON from the request, parsed on first use: a JSON object the full parser reads,
    /// as admission checked (`MetaView::parse`); for a legacy session's request, its own
    /// members followed by the session's (`core/legacy/request.rs`).
    Raw(Bytes),
    /// A request's own `_meta` as [`MetaSource::Raw`], with where its `clientCapabilities`
    /// lie in it (admission found them there).
    Request(Bytes, std::ops::Range<usize>),
    /// Already parsed (detached contexts).
    Parsed(Map<String, Value>),
}

pub(crate) struct ContextParts {
    pub(crate) id: RequestId,
    pub(crate) method: Cow<'static, str>,
    pub(crate) meta: MetaSource,
    pub(crate) progress_token: Option<Value>,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) logging_enabled: bool,
    pub(crate) events: Option<EventSink>,
    pub(crate) cancel: CancellationToken,
    pub(crate) principal: Option<Principal>,
    pub(crate) access: Option<crate::core::access::Access>,
    pub(crate) server: ServerRef,
}

impl RequestContext {
    pub(crate) fn new(parts: ContextParts) -> Self {
        let (meta_raw, meta, capabilities_at) = match parts.meta {
            MetaSource::Raw(raw) => (Some(raw), OnceLock::new(), None),
            MetaSource::Request(raw, caps) => (Some(raw), OnceLock::new(), Some(caps)),
            MetaSource::Parsed(map) => (None, OnceLock::from(Ok(map)), None),
        };
        Self {
            inner: Arc::new(ContextInner {
                id: parts.id,
                method: parts.method,
                meta_raw,
                meta,
                client_capabilities: OnceLock::new(),
                capabilities_at,
                progress_token: parts.progress_token,
                log_level: parts.log_level,
                logging_enabled: parts.logging_enabled,
                events: parts.events,
                last_progress: Mutex::new(None),
                cancel: parts.cancel,
                principal: parts.principal,
                access: parts.access,
                server: parts.server,
            }),
        }
    }

    /// A context for calling a handler directly, e.g. in a unit test: no stream, never
    /// cancelled unless `cancel` fires.
    ///
    /// # Examples
    ///
    /// Runs a handler's logic without a server, as a unit test would:
    ///
    /// ```
    /// use serde_json::Map;
    /// use smcp_server::proto::jsonrpc::RequestId;
    /// use smcp_server::RequestContext;
    /// use tokio_util::sync::CancellationToken;
    ///
    /// async fn work(ctx: &RequestContext) -> Result<u32, smcp_server::NotifyError> {
    ///     ctx.progress(1.0, None, None).await?; // no stream: sends nothing
    ///     Ok(42)
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let ctx = RequestContext::detached(RequestId::from(1), "tools/call", Map::new(), CancellationToken::new());
    /// assert_eq!(work(&ctx).await, Ok(42));
    /// assert!(ctx.server().is_none());
    /// # }
    /// ```
    pub fn detached(
        id: RequestId,
        method: &str,
        meta: Map<String, Value>,
        cancel: CancellationToken,
    ) -> Self {
        let progress_token = meta
            .get(meta::PROGRESS_TOKEN)
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
            .cloned();
        Self::new(ContextParts {
            id,
            method: Cow::Owned(method.to_owned()),
            meta: MetaSource::Parsed(meta),
            progress_token,
            log_level: None,
            logging_enabled: false,
            events: None,
            cancel,
            principal: None,
            access: None,
            server: ServerRef(None),
        })
    }

    /// The same detached context, acting for `principal` (for tests of principal binding).
    ///
    /// # Examples
    ///
    /// ```
    /// use serde_json::Map;
    /// use smcp_server::proto::jsonrpc::RequestId;
    /// use smcp_server::{Principal, RequestContext};
    /// use tokio_util::sync::CancellationToken;
    ///
    /// let ctx = RequestContext::detached(RequestId::from(1), "tools/call", Map::new(), CancellationToken::new())
    ///     .with_principal(Principal("alice".into()));
    /// assert_eq!(ctx.principal(), Some(&Principal("alice".into())));
    /// ```
    #[must_use]
    pub fn with_principal(self, principal: Principal) -> Self {
        let inner = &self.inner;
        Self::new(ContextParts {
            id: inner.id.clone(),
            method: inner.method.clone(),
            meta: MetaSource::Parsed(self.meta().clone()),
            progress_token: inner.progress_token.clone(),
            log_level: inner.log_level,
            logging_enabled: inner.logging_enabled,
            events: inner.events.clone(),
            cancel: inner.cancel.clone(),
            principal: Some(principal),
            access: inner.access.clone(),
            server: inner.server.clone(),
        })
    }

    /// A context for work that outlives this request, e.g. a tool call that runs on as a
    /// SEP-2663 task: the same request id, method, `_meta` (so the client capabilities the
    /// request declared), principal and server, but no stream to talk back on and `cancel`
    /// as its cancellation, owned by whoever runs the work. [`RequestContext::progress`] and
    /// [`RequestContext::log`] succeed and send nothing (a task's progress and log
    /// notifications are not sent, SEP-2663), unless `cancel` has fired; so a handler that
    /// reports progress runs unchanged either way.
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// use tokio_util::sync::CancellationToken;
    ///
    /// let index = tool("reindex").handler(|call| async move {
    ///     let ctx = call.ctx.detach(CancellationToken::new());
    ///     tokio::spawn(async move {
    ///         // Runs on after the response; progress is accepted and not sent.
    ///         let _ = ctx.progress(1.0, None, None).await;
    ///     });
    ///     Ok(CallToolResult::text("reindexing started"))
    /// });
    /// ```
    #[must_use]
    pub fn detach(&self, cancel: CancellationToken) -> Self {
        let inner = &self.inner;
        let meta = match self.try_meta() {
            Ok(meta) => MetaSource::Parsed(meta.clone()),
            // Admission guarantees a readable `_meta`; keep the raw text otherwise, so the
            // detached context answers exactly as this one does.
            Err(_) => match &inner.meta_raw {
                Some(raw) => MetaSource::Raw(raw.clone()),
                None => MetaSource::Parsed(Map::new()),
            },
        };
        Self::new(ContextParts {
            id: inner.id.clone(),
            method: inner.method.clone(),
            meta,
            progress_token: None,
            log_level: None,
            logging_enabled: false,
            events: None,
            cancel,
            principal: inner.principal.clone(),
            access: inner.access.clone(),
            server: inner.server.clone(),
        })
    }

    /// The authenticated caller, when an authentication layer established one.
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.principal.as_ref()
    }

    /// What the request's credentials allow, when an authentication layer said
    /// ([`crate::core::access`]).
    pub fn access(&self) -> Option<&crate::core::access::Access> {
        self.inner.access.as_ref()
    }

    /// The opaque handle to the serving server; [`RequestContext::server`] (in `core/server.rs`)
    /// turns it back into a `Server`.
    pub(crate) fn server_ref(&self) -> &ServerRef {
        &self.inner.server
    }

    /// The JSON-RPC id of this request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The method being served.
    pub fn method(&self) -> &str {
        &self.inner.method
    }

    /// The request's `params._meta` object (empty when the request had none).
    ///
    /// A transport admits a request only when the full parser reads its `_meta` as an object,
    /// so this is what the client sent. Should that ever not hold, the server's own checks
    /// (a tool's required capabilities) answer −32602 through `try_meta` rather than take
    /// this empty stand-in for what the client declared.
    pub fn meta(&self) -> &Map<String, Value> {
        static NONE: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);
        self.try_meta().unwrap_or(&NONE)
    }

    /// The request's `params._meta` object, or why it cannot be read (a −32602 message).
    pub(crate) fn try_meta(&self) -> Result<&Map<String, Value>, &str> {
        self.inner
            .meta
            .get_or_init(|| match &self.inner.meta_raw {
                None => Ok(Map::new()),
                Some(raw) => serde_json::from_slice(raw).map_err(|e| {
                    tracing::error!(error = %e, "a request's _meta was admitted unreadable");
                    format!("\"params._meta\" cannot be read as an object: {e}")
                }),
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// One member of the request's `_meta`, as [`meta`](Self::meta) has it. Until something
    /// reads all of `_meta`, only this member is parsed (the others are skipped), which is
    /// what a proxy passing a member or two on needs.
    ///
    /// Read alone, the other members are skipped unchecked: a transport admits only a `_meta`
    /// the full parser reads, so that cannot change the answer. Once a full read has failed,
    /// every member reads as absent, as in [`meta`](Self::meta).
    pub fn meta_member(&self, name: &str) -> Option<Value> {
        match self.inner.meta.get() {
            Some(Ok(meta)) => return meta.get(name).cloned(),
            Some(Err(_)) => return None,
            None => {}
        }
        let Some(raw) = &self.inner.meta_raw else {
            return None;
        };
        match std::str::from_utf8(raw).map(|text| meta::member(text, name)) {
            Ok(Ok(found)) => found,
            // Not readable alone (admission rules that out): the full parse's answer.
            _ => self.meta().get(name).cloned(),
        }
    }

    /// The `ClientCapabilities` declared on *this* request.
    pub fn client_capabilities(&self) -> &Map<String, Value> {
        static NONE: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);
        match self.inner.meta.get() {
            Some(Ok(meta)) => {
                return match meta.get(meta::CLIENT_CAPABILITIES) {
                    Some(Value::Object(caps)) => caps,
                    _ => &NONE,
                };
            }
            Some(Err(_)) => return &NONE,
            None => {}
        }
        let caps = self.inner.client_capabilities.get_or_init(|| {
            // Where admission found them, read alone; else looked for in `_meta`.
            let at = self
                .inner
                .meta_raw
                .as_ref()
                .zip(self.inner.capabilities_at.clone());
            if let Some(Ok(caps)) = at
                .and_then(|(raw, at)| raw.get(at))
                .map(serde_json::from_slice::<Map<String, Value>>)
            {
                return Some(caps);
            }
            match self.meta_member(meta::CLIENT_CAPABILITIES) {
                Some(Value::Object(caps)) => Some(caps),
                _ => None,
            }
        });
        caps.as_ref().unwrap_or(&NONE)
    }

    /// Whether the client declared the capability at this path, e.g. `["elicitation"]` or
    /// `["sampling", "tools"]`. A capability is declared when its member is an object.
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// let plan = tool("plan").handler(|call| async move {
    ///     if call.ctx.has_capability(&["sampling", "tools"]) {
    ///         Ok(CallToolResult::text("the client's model can use tools"))
    ///     } else {
    ///         Ok(CallToolResult::text("plain sampling only"))
    ///     }
    /// });
    /// ```
    pub fn has_capability(&self, path: &[&str]) -> bool {
        let mut current = self.client_capabilities();
        for (i, key) in path.iter().enumerate() {
            match current.get(*key) {
                Some(Value::Object(next)) => current = next,
                Some(Value::Bool(true)) if i + 1 == path.len() => return true,
                _ => return false,
            }
        }
        true
    }

    /// The progress token the client sent, if any.
    pub fn progress_token(&self) -> Option<&Value> {
        self.inner.progress_token.as_ref()
    }

    /// The least severe level the client takes log notifications at for this request: a
    /// 2026-07-28 request's `io.modelcontextprotocol/logLevel`, or a 2025 session's
    /// `logging/setLevel`. `None`: no log notification may be sent ([`log`](Self::log) sends
    /// none).
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.inner.log_level
    }

    /// Whether the client has gone away (closed the response stream).
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Completes when the client closes the response stream.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use smcp_server::prelude::*;
    /// let wait = tool("wait").handler(|call| async move {
    ///     tokio::select! {
    ///         () = tokio::time::sleep(Duration::from_secs(30)) => Ok(CallToolResult::text("waited")),
    ///         () = call.ctx.cancelled() => Err(HandlerError::failed("cancelled")),
    ///     }
    /// });
    /// ```
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await;
    }

    /// A clone of the cancellation token, to hand to work spawned by the handler.
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// let crawl = tool("crawl").handler(|call| async move {
    ///     let token = call.ctx.cancellation_token();
    ///     let job = tokio::spawn(async move {
    ///         // Stops early when the client goes away.
    ///         token.run_until_cancelled(async { 7 }).await
    ///     });
    ///     let pages = job.await.ok().flatten().unwrap_or(0);
    ///     Ok(CallToolResult::text(format!("{pages} pages")))
    /// });
    /// ```
    pub fn cancellation_token(&self) -> CancellationToken {
        self.inner.cancel.clone()
    }

    /// Sends `notifications/progress`. A no-op when the client sent no progress token or
    /// the response cannot stream; fails when the request was cancelled or the value does
    /// not increase. Waits when the client reads slowly (bounded buffer).
    ///
    /// # Errors
    ///
    /// [`NotifyError::Cancelled`] once the client has gone,
    /// [`NotifyError::ProgressNotIncreasing`] for a value not above the last one sent. Both
    /// convert into [`HandlerError`](crate::HandlerError), so `?` ends the handler.
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// let upload = tool("import").handler(|call| async move {
    ///     let rows = 1_000;
    ///     for done in (100..=rows).step_by(100) {
    ///         call.ctx.progress(f64::from(done), Some(f64::from(rows)), Some("importing")).await?;
    ///     }
    ///     Ok(CallToolResult::text("imported"))
    /// });
    /// ```
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), NotifyError> {
        if self.is_cancelled() {
            return Err(NotifyError::Cancelled);
        }
        let Some(token) = &self.inner.progress_token else {
            return Ok(());
        };
        {
            let mut last = self
                .inner
                .last_progress
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(prev) = *last
                && progress <= prev
            {
                return Err(NotifyError::ProgressNotIncreasing {
                    last: prev,
                    next: progress,
                });
            }
            *last = Some(progress);
        }
        let params = ProgressParams {
            progress_token: token,
            progress: WireNumber(progress),
            total: total.map(WireNumber),
            message,
        };
        self.emit(&params).await
    }

    /// Sends `notifications/message` when the request asked for logs at or below `level`
    /// (`_meta["io.modelcontextprotocol/logLevel"]`) and the server declared logging.
    /// Otherwise does nothing: a server must not log to a request that did not opt in.
    ///
    /// # Errors
    ///
    /// [`NotifyError::Cancelled`] once the client has gone; `?` ends the handler.
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// let sync = tool("sync").handler(|call| async move {
    ///     call.ctx
    ///         .log(LoggingLevel::Debug, Some("sync"), serde_json::json!({"step": "fetch"}))
    ///         .await?;
    ///     Ok(CallToolResult::text("synced"))
    /// });
    /// ```
    ///
    /// The server must advertise logging ([`ServerBuilder::logging`](crate::ServerBuilder::logging)).
    pub async fn log(
        &self,
        level: LoggingLevel,
        logger: Option<&str>,
        data: Value,
    ) -> Result<(), NotifyError> {
        if self.is_cancelled() {
            return Err(NotifyError::Cancelled);
        }
        let Some(min) = self.inner.log_level else {
            return Ok(());
        };
        if !self.inner.logging_enabled || level < min {
            return Ok(());
        }
        let params = LogParams {
            level,
            logger,
            data: &data,
        };
        self.emit(&params).await
    }

    /// Sends a notification as one framed message, serialized straight into its frame.
    async fn emit<P: Params + Sync>(&self, params: &P) -> Result<(), NotifyError> {
        let Some(events) = &self.inner.events else {
            return Ok(());
        };
        let frame =
            notification_frame(events.framing, params).map_err(|_| NotifyError::Cancelled)?;
        // Callers checked for cancellation; a buffer with room takes the event at once.
        let frame = match events.tx.try_send(Bytes::from(frame)) {
            Ok(()) => return Ok(()),
            Err(mpsc::error::TrySendError::Closed(_)) => return Err(NotifyError::Cancelled),
            Err(mpsc::error::TrySendError::Full(frame)) => frame,
        };
        tokio::select! {
            biased;
            () = self.inner.cancel.cancelled() => Err(NotifyError::Cancelled),
            sent = events.tx.send(frame) => sent.map_err(|_| NotifyError::Cancelled),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SSE: Framing = Framing {
        prefix: b"data: ",
        suffix: b"\n\n",
    };

    fn raw_context(raw: &'static [u8]) -> RequestContext {
        RequestContext::new(ContextParts {
            meta: MetaSource::Raw(Bytes::from_static(raw)),
            ..parts()
        })
    }

    /// A tools/call context's parts, with an empty `_meta`.
    fn parts() -> ContextParts {
        ContextParts {
            id: RequestId::from(1),
            method: Cow::Borrowed("tools/call"),
            meta: MetaSource::Parsed(Map::new()),
            progress_token: None,
            log_level: None,
            logging_enabled: false,
            events: None,
            cancel: CancellationToken::new(),
            principal: None,
            access: None,
            server: ServerRef(None),
        }
    }

    #[test]
    fn members_read_alone_match_the_full_parse() {
        const RAW: &[u8] = br#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{"tools":{}}},"io.modelcontextprotocol/logLevel":"info"}"#;
        let alone = raw_context(RAW);
        assert!(alone.has_capability(&["sampling", "tools"]));
        assert!(!alone.has_capability(&["roots"]));
        let level = alone.meta_member(meta::LOG_LEVEL);
        let caps = alone.client_capabilities().clone();
        let full = raw_context(RAW);
        assert!(full.try_meta().is_ok());
        assert_eq!(&caps, full.client_capabilities());
        assert_eq!(level, full.meta_member(meta::LOG_LEVEL));
        assert_eq!(level, Some(json!("info")));
        assert_eq!(alone.meta_member("absent"), None);
        // Read alone first, then all of it: the same answers.
        assert_eq!(
            alone.try_meta().unwrap().get(meta::LOG_LEVEL),
            level.as_ref()
        );
        assert_eq!(alone.client_capabilities(), &caps);
    }

    #[test]
    fn capabilities_where_admission_found_them_read_as_in_the_full_parse() {
        const RAW: &[u8] = br#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{"tools":{}}},"x":[1]}"#;
        let text = std::str::from_utf8(RAW).unwrap();
        let start = text.find(r#"{"elicitation"#).unwrap();
        let end = text.find(r#","x""#).unwrap();
        let with = |at: std::ops::Range<usize>| {
            RequestContext::new(ContextParts {
                meta: MetaSource::Request(Bytes::from_static(RAW), at),
                ..parts()
            })
        };
        let full = raw_context(RAW);
        assert!(full.try_meta().is_ok());
        let found = with(start..end);
        assert!(found.has_capability(&["sampling", "tools"]));
        assert_eq!(found.client_capabilities(), full.client_capabilities());
        // A range that is not an object of capabilities: `_meta` is looked in instead.
        let off = with(end + 1..RAW.len() - 1);
        assert_eq!(off.client_capabilities(), full.client_capabilities());
    }

    #[test]
    fn an_unreadable_meta_is_an_error_not_an_empty_object() {
        let ctx = raw_context(
            br#"{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"x":"\udc00"}"#,
        );
        let err = ctx.try_meta().unwrap_err();
        assert!(err.contains("params._meta"), "{err}");
        assert!(!ctx.has_capability(&["elicitation"]));
        let ctx =
            raw_context(br#"{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#);
        assert!(ctx.try_meta().is_ok());
        assert!(ctx.has_capability(&["elicitation"]));
    }

    #[tokio::test]
    async fn a_detached_context_keeps_what_the_request_declared_and_sends_nothing() {
        let (tx, mut rx) = mpsc::channel(4);
        let request_cancel = CancellationToken::new();
        let ctx = RequestContext::new(ContextParts {
            id: RequestId::from(9),
            method: Cow::Borrowed("tools/call"),
            meta: MetaSource::Raw(Bytes::from_static(
                br#"{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"x":{}}},"progressToken":"p"}"#,
            )),
            progress_token: Some(json!("p")),
            log_level: Some(LoggingLevel::Debug),
            logging_enabled: true,
            events: Some(EventSink { tx, framing: SSE }),
            cancel: request_cancel.clone(),
            principal: None,
            access: None,
            server: ServerRef(None),
        })
        .with_principal(Principal("alice".into()));
        let own = CancellationToken::new();
        let detached = ctx.detach(own.clone());
        assert_eq!(detached.request_id(), &RequestId::from(9));
        assert_eq!(detached.principal(), Some(&Principal("alice".into())));
        assert!(detached.has_capability(&["extensions", "x"]));
        assert_eq!(detached.progress_token(), None);
        detached.progress(1.0, None, Some("half")).await.unwrap();
        detached
            .log(LoggingLevel::Error, None, json!("boom"))
            .await
            .unwrap();
        assert!(rx.try_recv().is_err(), "a detached context sends nothing");
        request_cancel.cancel();
        assert!(
            !detached.is_cancelled(),
            "the request's end does not cancel it"
        );
        own.cancel();
        assert!(detached.is_cancelled());
        assert_eq!(
            detached.progress(2.0, None, None).await,
            Err(NotifyError::Cancelled)
        );
    }
}
