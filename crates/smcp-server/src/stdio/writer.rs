//! The output of a stream connection, written by the connection's own loop: what tasks queued
//! (their notifications, their responses), then what the reader answered, then one flush
//! before the loop waits again. Writing before the next read keeps one request's round trip
//! to one write and one read, as a plain newline-JSON echo loop has it.

use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};

/// A buffered writer that remembers whether it has something to flush.
pub(crate) struct Output<W> {
    inner: BufWriter<W>,
    dirty: bool,
}

impl<W: AsyncWrite + Unpin> Output<W> {
    pub(crate) fn new(inner: W) -> Self {
        Self {
            inner: BufWriter::with_capacity(64 * 1024, inner),
            dirty: false,
        }
    }

    /// Queues framed messages (written through when the buffer is full).
    pub(crate) async fn put(&mut self, frames: &[u8]) -> std::io::Result<()> {
        if frames.is_empty() {
            return Ok(());
        }
        self.dirty = true;
        self.inner.write_all(frames).await
    }

    /// Flushes what was queued, if anything.
    pub(crate) async fn flush(&mut self) -> std::io::Result<()> {
        if self.dirty {
            self.dirty = false;
            self.inner.flush().await?;
        }
        Ok(())
    }

    /// Flushes and closes the output.
    pub(crate) async fn close(&mut self) -> std::io::Result<()> {
        self.flush().await?;
        self.inner.shutdown().await
    }
}
