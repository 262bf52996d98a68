//! [`Client`]: the shared state behind every clone, and what the client tells about its
//! connection (URL, era, protocol version, declared capabilities).

use std::borrow::Cow;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Map, Value};
use smcp_proto::capabilities::ClientCapabilities;
use smcp_proto::ext::tasks;
use smcp_proto::jsonrpc::RequestId;
use smcp_proto::messages::method;

use crate::cache::Cache;
use crate::connection::Transport;
use crate::headers::ToolCatalog;
use crate::mrtr::{HandlerBox, InputHandler};
use crate::task_polling::TaskPolling;

/// A 2026-07-28 client for one MCP server, over Streamable HTTP ([`Client::builder`]) or stdio
/// ([`Client::stdio`]). Cheap to clone; clones share the connection, the tool catalog, the
/// negotiated version and the cache.
///
/// # Examples
///
/// ```no_run
/// use smcp_client::Client;
///
/// # async fn run() -> Result<(), smcp_client::Error> {
/// let client = Client::builder("http://127.0.0.1:8931/mcp").build()?;
/// for tool in client.list_tools().await? {
///     println!("{}: {}", tool.name, tool.description.unwrap_or_default());
/// }
/// let result = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
/// println!("{}", result.text_content());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(super) transport: Transport,
    /// Versions this client speaks, preferred first.
    pub(super) versions: Vec<String>,
    /// The version in use (changes after a −32022 negotiation).
    pub(super) version: Mutex<String>,
    /// The client's `Implementation`, serialized once: stamped on every request.
    pub(super) client_info: Option<Value>,
    pub(super) handler: Option<HandlerBox>,
    pub(crate) timeout: Option<Duration>,
    pub(super) max_rounds: u32,
    pub(super) retry: crate::RetryPolicy,
    pub(super) next_id: AtomicI64,
    pub(super) catalog: Mutex<ToolCatalog>,
    pub(crate) cache: Option<Cache>,
    pub(crate) auth_context: String,
    pub(crate) files: Option<crate::files::FileTransfer>,
    /// A separate HTTP client for descriptor URLs: it never carries the MCP headers
    /// (`Authorization`, cookies) configured for the endpoint.
    /// The data-plane HTTP client and the address policy its resolver applies.
    pub(crate) data_plane: Option<(reqwest::Client, crate::files::AddressPolicy)>,
    /// Whether the tasks extension is declared (SEP-2663).
    pub(crate) tasks: bool,
    /// How tasks are polled.
    pub(crate) task_polling: TaskPolling,
    /// Extensions the application declares itself ([`crate::ClientBuilder::extension`]).
    pub(super) extensions: std::collections::BTreeMap<String, Map<String, Value>>,
    /// Where the trace context sent with each request comes from.
    pub(super) trace: Option<crate::trace::TraceSource>,
}

impl Client {
    /// The endpoint URL; for a stdio server, `stdio:` followed by the command line.
    pub fn url(&self) -> &str {
        self.inner.transport.url()
    }

    /// Ends the connection. For a stdio server: fails the requests in flight (with an error for
    /// of kind [`ErrorKind::Closed`](crate::ErrorKind::Closed)), closes the server's stdin, waits up to the shutdown
    /// timeout for it to exit, then sends SIGTERM, waits again, then SIGKILL; returns its exit
    /// status. Every clone of this client is closed. Dropping the last clone does the same in
    /// the background. Over HTTP a stateful session (older revisions) is ended with `DELETE`
    /// (a later request starts a new one); a 2026-07-28 server has nothing to close: `None`.
    ///
    /// # Examples
    ///
    /// See [`Client::stdio`].
    pub async fn close(&self) -> Option<ExitStatus> {
        self.inner.transport.close().await
    }

    /// The era this client speaks with its server, once a request got through (`None`
    /// before). A stdio server is [`Era::Stateless`](crate::Era::Stateless) until its probe
    /// finds an older one ([`Era::Session`](crate::Era::Session)).
    pub fn era(&self) -> Option<crate::Era> {
        match &self.inner.transport {
            Transport::Http(e) => e.known_era(),
            Transport::Stdio(t) => Some(match t.legacy_info() {
                Some(_) => crate::Era::Session,
                None => crate::Era::Stateless,
            }),
        }
    }

    /// What the server said in `initialize`, when the client fell back to (or was pinned to)
    /// an older revision; `None` for a 2026-07-28 server (ask [`discover`](Self::discover)).
    pub async fn session_info(&self) -> Option<crate::SessionInfo> {
        match &self.inner.transport {
            Transport::Http(e) => e.legacy().await.map(|l| l.info()),
            Transport::Stdio(t) => t.era().await.ok().and_then(|_| t.legacy_info()),
        }
    }

    /// The protocol version currently sent (after a fallback, the negotiated older one).
    pub fn protocol_version(&self) -> String {
        self.version_sent().into_owned()
    }

    /// [`protocol_version`](Self::protocol_version) as each request reads it: 2026-07-28 as
    /// the constant, without an allocation.
    pub(crate) fn version_sent(&self) -> Cow<'static, str> {
        match &self.inner.transport {
            Transport::Http(e) => {
                if let Some((crate::Era::Session | crate::Era::HttpSse, v)) = e.known() {
                    return v;
                }
            }
            Transport::Stdio(t) => {
                if let Some(info) = t.legacy_info() {
                    return Cow::Owned(info.protocol_version);
                }
            }
        }
        let version = self
            .inner
            .version
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if *version == smcp_proto::PROTOCOL_VERSION {
            Cow::Borrowed(smcp_proto::PROTOCOL_VERSION)
        } else {
            Cow::Owned(version.clone())
        }
    }

    /// The capabilities declared on every request (from the installed input handler, and
    /// SEP-2631 `files` when enabled). `tools/call` and the task methods also declare the
    /// SEP-2663 tasks extension unless it was turned off ([`ClientBuilder::tasks`](crate::ClientBuilder::tasks)); see
    /// [`capabilities_for`](Self::capabilities_for).
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_client::{Client, FnInputHandler};
    /// use smcp_client::proto::client::roots::ListRootsResult;
    ///
    /// let client = Client::builder("http://127.0.0.1:8931/mcp")
    ///     .input_handler(FnInputHandler::new().on_roots(|_| async { Ok(ListRootsResult { roots: vec![] }) }))
    ///     .build()?;
    /// let caps = client.capabilities();
    /// assert!(caps.roots.is_some());
    /// assert!(caps.sampling.is_none());
    /// # Ok::<(), smcp_client::Error>(())
    /// ```
    pub fn capabilities(&self) -> ClientCapabilities {
        let mut caps: ClientCapabilities = self
            .inner
            .handler
            .as_ref()
            .map(|h| h.0.kinds().to_capabilities())
            .unwrap_or_default();
        if let Some(files) = &self.inner.files {
            caps.extra.insert("files".to_owned(), files.capability());
        }
        if !self.inner.extensions.is_empty() {
            caps.extensions
                .get_or_insert_with(Default::default)
                .extend(self.inner.extensions.clone());
        }
        caps
    }

    /// The capabilities declared on a request of `method_name` (for `subscriptions/listen`,
    /// as if it asked for task notifications).
    pub fn capabilities_for(&self, method_name: &str) -> ClientCapabilities {
        let mut caps = self.capabilities();
        if self.declares_tasks(method_name, None) {
            caps.extensions
                .get_or_insert_with(Default::default)
                .insert(tasks::EXTENSION_ID.to_owned(), Map::new());
        }
        caps
    }

    /// Whether the tasks extension is declared on this request: `tools/call` (the one method
    /// that supports tasks), the task methods, and a listen request that asks for `taskIds`.
    pub(super) fn declares_tasks(
        &self,
        method_name: &str,
        params: Option<&Map<String, Value>>,
    ) -> bool {
        self.inner.tasks
            && match method_name {
                method::TOOLS_CALL
                | tasks::METHOD_GET
                | tasks::METHOD_UPDATE
                | tasks::METHOD_CANCEL => true,
                method::SUBSCRIPTIONS_LISTEN => params.is_none_or(|p| {
                    p.get("notifications")
                        .and_then(|n| n.get("taskIds"))
                        .is_some_and(|t| !t.is_null())
                }),
                _ => false,
            }
    }

    /// The installed input handler, if any.
    pub(crate) fn inner_handler(&self) -> Option<&dyn InputHandler> {
        self.inner.handler.as_ref().map(|h| &*h.0)
    }

    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::from(self.inner.next_id.fetch_add(1, Ordering::Relaxed))
    }

    pub(crate) fn catalog(&self) -> std::sync::MutexGuard<'_, ToolCatalog> {
        self.inner
            .catalog
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a `tools/list` has been seen that names `tool`.
    pub fn knows_tool(&self, tool: &str) -> bool {
        self.catalog().knows(tool)
    }
}
