//! The one writer of a stream connection: framed messages from a bounded channel, written in
//! order and flushed whenever the channel runs dry, so that a burst goes out in few writes.

use bytes::Bytes;
use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Writes every frame from `rx` to `out` until all senders are gone. A write error (the
/// client closed its end) cancels `gone` and ends the writer; what is still queued is dropped.
pub(crate) async fn run<W: AsyncWrite + Unpin>(
    out: W,
    mut rx: mpsc::Receiver<Bytes>,
    gone: CancellationToken,
) {
    let mut out = BufWriter::with_capacity(64 * 1024, out);
    while let Some(frame) = rx.recv().await {
        let mut result = out.write_all(&frame).await;
        while result.is_ok() {
            match rx.try_recv() {
                Ok(frame) => result = out.write_all(&frame).await,
                Err(_) => break,
            }
        }
        if let Err(e) = result.and(out.flush().await) {
            tracing::debug!(error = %e, "output closed");
            gone.cancel();
            return;
        }
    }
    let _ = out.shutdown().await;
}
