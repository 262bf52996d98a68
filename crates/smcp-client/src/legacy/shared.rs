//! The part of a stateful Streamable HTTP session that its streams share: the session
//! headers (`Mcp-Session-Id`, `MCP-Protocol-Version`) on every request, POSTs of messages
//! that the server answers with 202, the GET for the standalone stream and resumption.
//! Below the session (`session.rs`) and its response streams (`stream.rs`), which both use it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};
use smcp_proto::jsonrpc::{Message, Notification, RequestId};
use smcp_proto::messages::method;
use tokio::sync::broadcast;

use super::adapter::Adapter;
use super::info::{LegacyConfig, SessionInfo};
use crate::error::Result;
use crate::transport::http::{MAX_ERROR_BODY, Overflow, classify_status, read_limited};

/// Reconnect delay when the server gave no `retry:`.
pub(crate) const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// Longest reconnect delay honoured from `retry:`.
pub(crate) const MAX_RETRY: Duration = Duration::from_secs(30);
/// Shortest reconnect delay (a `retry: 0` must not make a busy loop).
pub(crate) const MIN_RETRY: Duration = Duration::from_millis(100);

/// The header that names the session.
pub(crate) const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// The part of a session its streams share.
#[derive(Debug)]
pub(crate) struct Core {
    pub(crate) http: reqwest::Client,
    pub(crate) url: reqwest::Url,
    pub(crate) extra_headers: HeaderMap,
    pub(crate) gate: crate::transport::gate::Gate,
    pub(crate) config: LegacyConfig,
    pub(crate) pin: Option<String>,
    /// Session id, version and initialize result (replaced by a re-initialize).
    pub(crate) current: Mutex<Current>,
    /// Notifications of the standalone GET stream, for listeners.
    pub(crate) changes: broadcast::Sender<Notification>,
    /// Whether a GET stream is open (list changes can be delivered).
    pub(crate) get_open: Mutex<bool>,
    /// The level last set with `logging/setLevel`.
    pub(crate) log_level: Mutex<Option<String>>,
    pub(crate) next_id: std::sync::atomic::AtomicI64,
}

/// What an `initialize` established (a re-initialize replaces it whole).
#[derive(Debug, Clone)]
pub(crate) struct Current {
    pub(crate) session_id: Option<HeaderValue>,
    pub(crate) version: String,
    pub(crate) info: SessionInfo,
}

impl Core {
    pub(crate) fn version(&self) -> String {
        self.current().version
    }

    pub(crate) fn current(&self) -> Current {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A request builder with the session headers.
    pub(crate) fn request(
        &self,
        m: reqwest::Method,
        accept: &'static str,
    ) -> reqwest::RequestBuilder {
        let cur = self.current();
        let mut req = self
            .http
            .request(m, self.url.clone())
            .headers(self.extra_headers.clone())
            .header(ACCEPT, accept);
        if let Some(id) = cur.session_id {
            req = req.header(SESSION_ID, id);
        }
        if Adapter::new(&cur.version).sends_version_header() {
            req = req.header(PROTOCOL_VERSION, cur.version);
        }
        req
    }

    /// POSTs one JSON-RPC message (no session retry).
    pub(crate) async fn post_message(&self, message: &Message) -> Result<reqwest::Response> {
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
