//! Newline-delimited messages from a byte stream, each within a size limit.
//!
//! A line longer than the limit is not kept: its bytes are skipped up to the next newline and
//! the reader reports how long it was, so the connection answers it with an error and goes on
//! with the next line. A `\r` before the newline is dropped (a client on CRLF); the last line
//! of the stream counts even without its newline.

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// One line of input.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A line within the limit, without its line ending.
    Message(Bytes),
    /// A line over the limit, skipped; at least this many bytes long.
    TooLong(usize),
}

/// Reads lines of at most `max` bytes through a buffer.
#[derive(Debug)]
pub(crate) struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
    buf: BytesMut,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(inner: BufReader<R>, max: usize) -> Self {
        Self {
            inner,
            max,
            buf: BytesMut::new(),
        }
    }

    /// The next line when it is already complete in the buffer, without waiting: a burst of
    /// requests is read with no future to poll per line.
    pub(crate) fn buffered_line(&mut self) -> Option<Line> {
        if !self.buf.is_empty() {
            return None;
        }
        let available = self.inner.buffer();
        let end = memchr::memchr(b'\n', available)?;
        let line = if end > self.max {
            Line::TooLong(end)
        } else {
            self.buf.extend_from_slice(&available[..end]);
            self.take()
        };
        self.inner.consume(end + 1);
        Some(line)
    }

    /// The next line; `Ok(None)` at the end of the stream.
    pub(crate) async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        let mut skipped: Option<usize> = None;
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                return Ok(match skipped {
                    Some(n) => Some(Line::TooLong(n)),
                    None if self.buf.is_empty() => None,
                    None => Some(self.take()),
                });
            }
            let (chunk, used, ended) = match memchr::memchr(b'\n', available) {
                Some(i) => (&available[..i], i + 1, true),
                None => (available, available.len(), false),
            };
            match &mut skipped {
                Some(n) => *n += chunk.len(),
                None if self.buf.len() + chunk.len() > self.max => {
                    skipped = Some(self.buf.len() + chunk.len());
                    self.buf.clear();
                }
                None => self.buf.extend_from_slice(chunk),
            }
            self.inner.consume(used);
            if ended {
                return Ok(Some(match skipped {
                    Some(n) => Line::TooLong(n),
                    None => self.take(),
                }));
            }
        }
    }

    fn take(&mut self) -> Line {
        if self.buf.last() == Some(&b'\r') {
            self.buf.truncate(self.buf.len() - 1);
        }
        Line::Message(self.buf.split().freeze())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    async fn lines(input: &'static [u8], max: usize, chunk: usize) -> Vec<Line> {
        // A reader that hands out `chunk` bytes at a time, to cross every boundary; lines
        // taken from the buffer and read by waiting, alternately.
        let reader = BufReader::with_capacity(chunk, input);
        let mut lines = LineReader::new(reader, max);
        let mut out = Vec::new();
        loop {
            if out.len() % 2 == 1
                && let Some(line) = lines.buffered_line()
            {
                out.push(line);
                continue;
            }
            match lines.next_line().await.unwrap() {
                Some(line) => out.push(line),
                None => break,
            }
        }
        out
    }

    fn msg(s: &str) -> Line {
        Line::Message(Bytes::copy_from_slice(s.as_bytes()))
    }

    #[tokio::test]
    async fn splits_on_newlines_at_any_chunking() {
        for chunk in [1, 2, 3, 7, 64] {
            assert_eq!(
                lines(b"{\"a\":1}\n\n{\"b\":2}\r\nlast", 100, chunk).await,
                [msg("{\"a\":1}"), msg(""), msg("{\"b\":2}"), msg("last")],
                "chunk {chunk}"
            );
        }
    }

    #[tokio::test]
    async fn an_overlong_line_is_skipped_and_reading_goes_on() {
        for chunk in [1, 4, 64] {
            assert_eq!(
                lines(b"12345\n1234567890\nok\n123456789", 5, chunk).await,
                [msg("12345"), Line::TooLong(10), msg("ok"), Line::TooLong(9)],
                "chunk {chunk}"
            );
        }
    }

    #[tokio::test]
    async fn empty_input_has_no_lines() {
        assert!(lines(b"", 5, 4).await.is_empty());
    }
}
