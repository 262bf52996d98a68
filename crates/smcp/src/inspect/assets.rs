//! The page: its three files, embedded in the binary, served with a strict policy (scripts,
//! styles and connections to this origin only; frames only for the app views, which are
//! sandboxed), and the event feed as Server-Sent Events.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

use super::state::Inspector;

const INDEX: &str = include_str!("../../assets/inspect/index.html");
const SCRIPT: &str = include_str!("../../assets/inspect/inspect.js");
const STYLE: &str = include_str!("../../assets/inspect/inspect.css");

/// The page's policy.
const PAGE_CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data: blob:; media-src 'self' data: blob:; frame-src 'self'; \
     connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";
/// How often an idle feed sends a comment (keeps proxies and the browser from closing it).
const KEEP_ALIVE: Duration = Duration::from_secs(15);

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, PAGE_CSP),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        body,
    )
        .into_response()
}

pub(crate) async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX)
}

pub(crate) async fn script() -> Response {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

pub(crate) async fn style() -> Response {
    asset("text/css; charset=utf-8", STYLE)
}

fn event(data: &str) -> Result<Bytes, Infallible> {
    Ok(Bytes::from(format!("data: {data}\n\n")))
}

/// The feed: `hello` with the server's summary, the wire entries kept so far, then every
/// event as it is published. A page that falls too far behind is cut off; its
/// `EventSource` reconnects and gets the replay again.
pub(crate) async fn events(State(app): State<Arc<Inspector>>) -> Response {
    let (kept, rx) = app.feed.subscribe();
    let hello = json!({"type": "hello", "server": app.server}).to_string();
    let head = stream::iter(
        std::iter::once(hello)
            .chain(kept.iter().map(ToString::to_string))
            .map(|e| event(&e))
            .collect::<Vec<_>>(),
    );
    let live = stream::unfold(rx, |mut rx| async move {
        match tokio::time::timeout(KEEP_ALIVE, rx.recv()).await {
            Err(_) => Some((Ok(Bytes::from_static(b": keep-alive\n\n")), rx)),
            Ok(Ok(e)) => Some((event(&e), rx)),
            Ok(Err(RecvError::Lagged(n))) => {
                tracing::info!(missed = n, "an inspector page fell behind; it reconnects");
                None
            }
            Ok(Err(RecvError::Closed)) => None,
        }
    });
    use futures_util::StreamExt as _;
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        Body::from_stream(head.chain(live)),
    )
        .into_response()
}
