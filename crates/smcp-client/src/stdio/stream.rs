//! The response stream of one request sent over stdio.
//!
//! It yields the notifications routed to the request, then its final message. Dropped before
//! that final message (a timeout, a dropped future, a dropped [`crate::Subscription`]), it
//! takes the request out of flight and sends `notifications/cancelled` for its id: on stdio that
//! is the only way to cancel (and the way to end a `subscriptions/listen`).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use smcp_proto::jsonrpc::{Message, Notification, RequestId};
use smcp_proto::messages::method;
use smcp_proto::patterns::cancellation::CancelledNotificationParams;
use tokio::sync::{mpsc, oneshot};

use super::demux::{Registration, Shared};
use crate::error::{Error, Kind, Result};
use crate::transport::{Inbound, MessageStream};

/// Why the client gives up on a request, sent in `notifications/cancelled`.
const CANCEL_REASON: &str = "the client stopped waiting for the response";

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct StdioStream {
    id: RequestId,
    shared: Arc<Shared>,
    writer: mpsc::Sender<Vec<u8>>,
    notes: mpsc::Receiver<Notification>,
    done: oneshot::Receiver<Result<Inbound>>,
    /// The final message (or the connection's failure) has been returned.
    finished: bool,
    /// The server answered (a response or an error response arrived).
    answered: bool,
    /// The request line is queued for the child, so a cancellation must follow it.
    sent: bool,
}

impl StdioStream {
    pub(crate) fn new(
        id: RequestId,
        shared: Arc<Shared>,
        writer: mpsc::Sender<Vec<u8>>,
        registration: Registration,
    ) -> Self {
        Self {
            id,
            shared,
            writer,
            notes: registration.notes,
            done: registration.done,
            finished: false,
            answered: false,
            sent: false,
        }
    }

    /// Records that the request line was queued.
    pub(crate) fn mark_sent(&mut self) {
        self.sent = true;
    }

    /// The next message for this request; `Ok(None)` after its final message.
    pub(crate) async fn next_message(&mut self) -> Result<Option<Inbound>> {
        if self.finished {
            return Ok(None);
        }
        // Notifications first: the reader queues them before it hands over the final message,
        // so none is lost or reordered behind it.
        tokio::select! {
            biased;
            Some(n) = self.notes.recv() => Ok(Some(Message::Notification(n))),
            done = &mut self.done => {
                self.finished = true;
                match done {
                    Ok(Ok(message)) => {
                        self.answered = true;
                        Ok(Some(message))
                    }
                    Ok(Err(e)) => Err(e),
                    Err(_) => Err(self
                        .shared
                        .ended()
                        .map_or_else(|| Error::new(Kind::StreamBroken), |e| e.error())),
                }
            }
        }
    }

    /// Queues `notifications/cancelled` for this request without waiting.
    fn send_cancel(&self) {
        let params = CancelledNotificationParams {
            meta: None,
            request_id: self.id.clone(),
            reason: Some(CANCEL_REASON.to_owned()),
        };
        let Ok(params) = serde_json::to_value(params) else {
            return;
        };
        let note = Message::Notification(Notification {
            method: method::CANCELLED.to_owned(),
            params: Some(params),
        });
        let mut line = note.to_vec();
        line.push(b'\n');
        match self.writer.try_send(line) {
            Ok(()) => tracing::debug!(id = %self.id, "sent notifications/cancelled"),
            Err(mpsc::error::TrySendError::Full(line)) => {
                // The writer is busy: queue it behind the other lines from a task.
                let writer = self.writer.clone();
                match tokio::runtime::Handle::try_current() {
                    Ok(handle) => {
                        handle.spawn(async move {
                            let _ = writer.send(line).await;
                        });
                    }
                    Err(_) => {
                        tracing::debug!(id = %self.id, "no runtime to send notifications/cancelled");
                    }
                }
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }
}

impl MessageStream for StdioStream {
    fn next_message(&mut self) -> BoxFuture<'_, Result<Option<Inbound>>> {
        Box::pin(StdioStream::next_message(self))
    }

    fn rpc_status(&self) -> Option<u16> {
        None
    }
}

impl Drop for StdioStream {
    fn drop(&mut self) {
        if self.answered || matches!(self.done.try_recv(), Ok(Ok(_))) {
            return;
        }
        // Still in flight, or failed locally (an oversized line) while the server may still
        // be working on it: either way the server is told to stop.
        self.shared.forget(&self.id, self.sent);
        if self.sent && self.shared.ended().is_none() {
            self.send_cancel();
        }
    }
}
