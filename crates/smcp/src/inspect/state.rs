//! What the inspector's handlers share: the client, the feed, the questions, the calls in
//! flight, the app views; and the error every handler answers with.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use smcp_client::{CancellationToken, Client};

use super::feed::Feed;
use super::questions::Questions;
use super::wire::Target;

/// App views kept at once (the oldest goes first).
const VIEWS_KEPT: usize = 64;

/// One rendered MCP App view.
#[derive(Debug, Clone)]
pub(crate) struct View {
    /// Its HTML.
    pub(crate) html: String,
    /// The `Content-Security-Policy` it is served with.
    pub(crate) csp: String,
}

/// The inspector. Shared by every handler.
pub(crate) struct Inspector {
    pub(crate) client: Client,
    pub(crate) feed: Feed,
    pub(crate) questions: Questions,
    /// `/api/server`'s answer, found at start.
    pub(crate) server: Value,
    /// Where uploaded files wait for their transfer (private to this process).
    pub(crate) uploads: PathBuf,
    pub(crate) listening: AtomicBool,
    calls: Mutex<HashMap<String, CancellationToken>>,
    next: AtomicU64,
    views: Mutex<Vec<(String, View)>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Inspector {
    pub(crate) fn new(
        client: Client,
        feed: Feed,
        questions: Questions,
        server: Value,
        uploads: PathBuf,
    ) -> Arc<Self> {
        Arc::new(Self {
            client,
            feed,
            questions,
            server,
            uploads,
            listening: AtomicBool::new(false),
            calls: Mutex::default(),
            next: AtomicU64::new(1),
            views: Mutex::default(),
        })
    }

    /// A new id with `prefix`.
    pub(crate) fn id(&self, prefix: &str) -> String {
        format!("{prefix}{}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Registers a running call and its cancellation.
    pub(crate) fn started(&self, call: &str, cancel: CancellationToken) {
        lock(&self.calls).insert(call.to_owned(), cancel);
    }

    /// Forgets a finished call.
    pub(crate) fn finished(&self, call: &str) {
        lock(&self.calls).remove(call);
    }

    /// Cancels a running call; false when none runs under `call`.
    pub(crate) fn cancel(&self, call: &str) -> bool {
        lock(&self.calls)
            .get(call)
            .map(CancellationToken::cancel)
            .is_some()
    }

    /// Keeps a view and returns its id.
    pub(crate) fn add_view(&self, id: String, view: View) {
        let mut views = lock(&self.views);
        if views.len() == VIEWS_KEPT {
            views.remove(0);
        }
        views.push((id, view));
    }

    /// The view `id`, if kept.
    pub(crate) fn view(&self, id: &str) -> Option<View> {
        lock(&self.views)
            .iter()
            .find(|(v, _)| v == id)
            .map(|(_, view)| view.clone())
    }
}

/// What a handler answers when it fails: a status and a message for the page.
#[derive(Debug)]
pub(crate) struct ApiError(pub(crate) StatusCode, pub(crate) String);

impl ApiError {
    /// A bad request naming what is wrong.
    pub(crate) fn bad(message: impl Into<String>) -> Self {
        Self(StatusCode::BAD_REQUEST, message.into())
    }
}

impl From<smcp_client::Error> for ApiError {
    fn from(e: smcp_client::Error) -> Self {
        Self(StatusCode::BAD_GATEWAY, e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

/// The server's summary for the page: how it is reached, its era, what it says of itself.
pub(crate) async fn summary(client: &Client, target: &Target) -> Result<Value, smcp_client::Error> {
    let (transport, shown) = match target {
        Target::Http(url) => ("http", url.clone()),
        Target::Stdio(command) => ("stdio", command.clone()),
    };
    let prefix = match target {
        Target::Http(url) => format!("smcp --url {}", super::wire::quote(url)),
        Target::Stdio(_) => "smcp --stdio".to_owned(),
    };
    let mut out = json!({
        "transport": transport, "target": shown, "smcp": prefix,
        "era": client.protocol_version(), "discover": null,
    });
    match client.discover().await {
        Ok(found) => {
            let found = serde_json::to_value(&found).unwrap_or_default();
            // 2026-07-28 puts the server's identity in `_meta`.
            out["serverInfo"] = found
                .get("serverInfo")
                .or_else(|| found.pointer("/_meta/io.modelcontextprotocol~1serverInfo"))
                .cloned()
                .unwrap_or(Value::Null);
            out["capabilities"] = found["capabilities"].clone();
            out["instructions"] = found["instructions"].clone();
            out["discover"] = found;
        }
        Err(e) if e.kind() == smcp_client::ErrorKind::UnsupportedInEra => {
            let Some(info) = client.session_info().await else {
                return Err(e);
            };
            out["era"] = json!(info.protocol_version);
            out["serverInfo"] = info.server_info;
            out["capabilities"] = info.capabilities;
            out["instructions"] = json!(info.instructions);
            out["session"] = json!(info.session_id.is_some());
        }
        Err(e) => return Err(e),
    }
    Ok(out)
}
