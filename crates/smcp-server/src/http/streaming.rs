//! A handler that may stream: the response is JSON if the handler finishes before emitting
//! anything, else SSE — the handler moves to its own task and the body streams its events
//! followed by the final response. Closing that stream cancels the handler (the body owns the
//! cancellation guard); after [`crate::Limits::cancel_grace`] it is dropped.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Response;
use smcp_proto::jsonrpc::RequestId;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use futures_util::FutureExt as _;

use super::body::McpBody;
use super::response::{json_response, outcome_bytes, sse_frame, sse_response};
use super::serve::{ConnectionInfo, DrainState};
use crate::core::reply::Finished;
use crate::core::server::Shared;

/// A handler's outcome, boxed.
pub(crate) type HandlerFuture = Pin<Box<dyn Future<Output = Finished> + Send>>;

/// After the drain cuts a request, how long its handler has to notice the cancellation
/// before it is dropped.
const CUT_GRACE: Duration = Duration::from_millis(500);

/// The handler's outcome (the guard is disarmed); or, when the server's drain timeout passes
/// first, the error a cut request gets: the guard cancels the handler's token, and the handler
/// is dropped after [`CUT_GRACE`]. A handler that finishes on its first poll never looks at
/// the drain.
pub(crate) async fn unless_cut<F: Future<Output = Finished>>(fut: F, guard: DropGuard) -> Finished {
    let mut fut = std::pin::pin!(fut);
    // Declared after the handler, so dropped before it: if the connection drops this future,
    // the handler's token is cancelled before the handler is dropped, and code that runs on
    // its drop sees the cancellation.
    let guard = guard;
    let outcome = match fut.as_mut().now_or_never() {
        Some(outcome) => outcome,
        None => match ConnectionInfo::current() {
            None => fut.await,
            Some(connection) => {
                let drain = connection.drain();
                tokio::select! {
                    biased;
                    outcome = &mut fut => outcome,
                    () = drain.cut().cancelled() => {
                        drop(guard);
                        let _ = tokio::time::timeout(CUT_GRACE, fut).await;
                        return Err(drain.cut_one());
                    }
                }
            }
        },
    };
    guard.disarm();
    outcome
}

/// Completes with the drain when it cuts requests; never without a drain.
async fn cut(drain: Option<&DrainState>) -> &DrainState {
    match drain {
        Some(drain) => {
            drain.cut().cancelled().await;
            drain
        }
        None => std::future::pending().await,
    }
}

/// Runs a handler that may stream: JSON if it finishes before emitting anything, else SSE.
/// The server's drain cuts it like any other request.
pub(crate) async fn run_streaming(
    shared: Arc<Shared>,
    id: RequestId,
    mut fut: HandlerFuture,
    final_tx: mpsc::Sender<Bytes>,
    mut rx: mpsc::Receiver<Bytes>,
    cancel: CancellationToken,
    sse_only: bool,
) -> Response<McpBody> {
    let guard = cancel.clone().drop_guard();
    let drain = ConnectionInfo::current().map(|c| c.drain().clone());
    let first = if sse_only {
        None
    } else {
        tokio::select! {
            biased;
            outcome = &mut fut => {
                guard.disarm();
                let mut frames = Vec::new();
                while let Ok(frame) = rx.try_recv() {
                    frames.push(frame);
                }
                let (status, body) = outcome_bytes(&shared, id, outcome);
                if frames.is_empty() {
                    return json_response(status, body);
                }
                // Events raced the result: deliver all of them, in order, as SSE.
                frames.push(sse_frame(&body));
                let (tx, rx) = mpsc::channel(frames.len());
                for frame in frames {
                    let _ = tx.try_send(frame);
                }
                drop(tx);
                return sse_response(McpBody::stream(None, rx, None));
            }
            Some(first) = rx.recv() => Some(first),
            drain = cut(drain.as_deref()) => {
                drop(guard); // cancels the handler's token
                let _ = tokio::time::timeout(CUT_GRACE, fut).await;
                let (status, body) = outcome_bytes(&shared, id, Err(drain.cut_one()));
                return json_response(status, body);
            }
        }
    };
    let grace = shared.limits.cancel_grace;
    tokio::spawn(async move {
        tokio::select! {
            outcome = &mut fut => {
                let (_, body) = outcome_bytes(&shared, id, outcome);
                // Fails only when the client has gone; nothing more is sent then.
                let _ = final_tx.send(sse_frame(&body)).await;
            }
            () = async {
                cancel.cancelled().await;
                tokio::time::sleep(grace).await;
            } => {
                tracing::debug!("handler dropped after the cancellation grace period");
            }
            drain = cut(drain.as_deref()) => {
                cancel.cancel();
                let _ = tokio::time::timeout(CUT_GRACE, fut).await;
                let (_, body) = outcome_bytes(&shared, id, Err(drain.cut_one()));
                let _ = final_tx.send(sse_frame(&body)).await;
            }
        }
    });
    sse_response(McpBody::stream(first, rx, Some(guard)))
}
