//! One open `subscriptions/listen` stream as the HTTP body polls it: the acknowledgement, each
//! change rendered as an SSE event, keep-alives, and the closing event on shutdown.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use smcp_bus::Subscription;
use tokio::time::{Instant, Sleep};

use super::framing::SSE;
use crate::core::listen::{self as protocol, Slot};

/// The state of one open listen stream; see the module docs.
pub(crate) struct ListenStream {
    pub(super) ack: Option<Bytes>,
    pub(super) close: Option<Bytes>,
    /// The listen id as JSON text, spliced into every notification.
    pub(super) id_json: Box<str>,
    pub(super) subscription: Subscription,
    pub(super) shutdown: Pin<Box<dyn Future<Output = ()> + Send>>,
    pub(super) keep_alive: Pin<Box<Sleep>>,
    pub(super) interval: std::time::Duration,
    pub(super) done: bool,
    pub(super) span: tracing::Span,
    pub(super) _slot: Slot,
}

impl fmt::Debug for ListenStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ListenStream")
            .field("id", &self.id_json)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

const KEEP_ALIVE: &[u8] = b":\n\n";

impl ListenStream {
    /// The next SSE frame, or the end of the stream.
    pub(crate) fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if self.done {
            return Poll::Ready(None);
        }
        if let Some(ack) = self.ack.take() {
            return Poll::Ready(Some(ack));
        }
        if self.shutdown.as_mut().poll(cx).is_ready() {
            return Poll::Ready(self.finish("shutdown"));
        }
        match self.subscription.poll_recv(cx) {
            Poll::Ready(Some(change)) => {
                self.rearm();
                return Poll::Ready(Some(protocol::render(SSE, &self.id_json, &change)));
            }
            Poll::Ready(None) if self.subscription.is_overflowed() => {
                self.done = true;
                self.span
                    .in_scope(|| tracing::debug!("listen stream overflowed: client not reading"));
                return Poll::Ready(None);
            }
            Poll::Ready(None) => return Poll::Ready(self.finish("change bus closed")),
            Poll::Pending => {}
        }
        if self.keep_alive.as_mut().poll(cx).is_ready() {
            self.rearm();
            return Poll::Ready(Some(Bytes::from_static(KEEP_ALIVE)));
        }
        Poll::Pending
    }

    fn rearm(&mut self) {
        let at = Instant::now() + self.interval;
        self.keep_alive.as_mut().reset(at);
    }

    fn finish(&mut self, why: &str) -> Option<Bytes> {
        self.done = true;
        self.span
            .in_scope(|| tracing::debug!(reason = why, "listen stream closed gracefully"));
        self.close.take()
    }
}

impl Drop for ListenStream {
    fn drop(&mut self) {
        if !self.done {
            self.span
                .in_scope(|| tracing::debug!("listen stream closed by the client"));
        }
    }
}
