//! What the code serving one message of a connection needs of it: the server, the
//! connection's settings, its requests in flight, the output tasks queue on, the signal that
//! serving ends, and the reader's batch of answers. The connection (`connection.rs`) owns one
//! and lends it to the code below it — the earlier revisions' sessions (`legacy.rs`) and
//! `subscriptions/listen` (`listen.rs`) — which so never see the reader loop that calls them.

use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::options::StdioOptions;
use super::running::Running;
use crate::core::server::Shared;

/// A connection, as the code answering its messages sees it.
pub(super) struct Link {
    pub(super) shared: Arc<Shared>,
    pub(super) options: StdioOptions,
    pub(super) running: Arc<Running>,
    /// Where tasks queue their messages for the loop to write.
    pub(super) out: mpsc::Sender<Bytes>,
    /// Cancelled when serving ends: subscriptions close gracefully.
    pub(super) closing: CancellationToken,
    /// The reader's answers since it last waited for input, written before it waits again.
    pub(super) batch: Vec<u8>,
}

impl Link {
    /// Answers with one message (a JSON-RPC message without its newline), in the reader's
    /// batch.
    pub(super) fn send(&mut self, json: Vec<u8>) {
        if self.batch.is_empty() {
            self.batch = json;
        } else {
            self.batch.extend_from_slice(&json);
        }
        self.batch.push(b'\n');
    }
}
