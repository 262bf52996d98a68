//! What `subscriptions/listen` mapped onto a session needs of the connection under it, so the
//! same mapping ([`ListenStream`](super::stream::ListenStream)) serves a stateful HTTP session
//! (changes from its standalone GET stream) and a stdio session (changes from the child's
//! stdout).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;
use smcp_proto::jsonrpc::Notification;
use tokio::sync::broadcast;

use crate::error::Result;

/// A session's way to the server, for listen streams.
pub(crate) trait SessionLink: std::fmt::Debug + Send + Sync + 'static {
    /// The session's change notifications (untagged `list_changed`, `resources/updated`).
    fn changes(&self) -> broadcast::Receiver<Notification>;
    /// Whether change notifications reach this client at all (over HTTP: a GET stream is open).
    fn delivers_changes(&self) -> bool;
    /// The server's capabilities from `initialize`.
    fn capabilities(&self) -> Value;
    /// Sends one request of the session's own (`resources/subscribe`, `…/unsubscribe`) and
    /// waits for its result.
    fn call(
        self: Arc<Self>,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<'static, Result<Value>>;
}
