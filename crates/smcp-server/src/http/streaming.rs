//! A handler that may stream: the response is JSON if the handler finishes before emitting
//! anything, else SSE — the handler moves to its own task and the body streams its events
//! followed by the final response. Closing that stream cancels the handler (the body owns the
//! cancellation guard); after [`crate::Limits::cancel_grace`] it is dropped.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use http::Response;
use smcp_proto::jsonrpc::RequestId;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::body::McpBody;
use super::response::{json_response, outcome_bytes, sse_frame, sse_response};
use crate::core::reply::Finished;
use crate::core::server::Shared;

/// A handler's outcome, boxed.
pub(crate) type HandlerFuture = Pin<Box<dyn Future<Output = Finished> + Send>>;

/// Runs a handler that may stream: JSON if it finishes before emitting anything, else SSE.
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
        }
    });
    sse_response(McpBody::stream(first, rx, Some(guard)))
}
