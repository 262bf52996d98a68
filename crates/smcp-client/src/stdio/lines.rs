//! Newline-delimited reading with a hard cap on the line length.
//!
//! `AsyncBufReadExt::read_until` grows its buffer without bound; a server that writes a
//! gigabyte without a newline must cost at most `max` bytes of memory, so this reader keeps the
//! first `max` bytes of a line and skips the rest up to the next newline.

use tokio::io::{AsyncBufRead, AsyncBufReadExt as _};

/// What [`read_line`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Line {
    /// A whole line (without its `\n`, and without a trailing `\r`) is in the buffer. A last
    /// line without a newline before end of file counts too.
    Complete,
    /// The line was longer than the cap: the buffer holds its first `max` bytes; `len` is its
    /// full length (the rest was skipped).
    TooLong {
        /// The length of the whole line.
        len: usize,
    },
    /// End of file, nothing read.
    Eof,
}

/// Reads the next line into `buf` (cleared first), keeping at most `max` bytes of it.
pub(crate) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    buf.clear();
    let mut len = 0usize;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if len == 0 {
                Line::Eof
            } else {
                finish(buf, len, max)
            });
        }
        let (chunk, used, ended) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..i], i + 1, true),
            None => (available, available.len(), false),
        };
        let room = max.saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
        len = len.saturating_add(chunk.len());
        reader.consume(used);
        if ended {
            return Ok(finish(buf, len, max));
        }
    }
}

fn finish(buf: &mut Vec<u8>, len: usize, max: usize) -> Line {
    if len > max {
        return Line::TooLong { len };
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Line::Complete
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    async fn all(input: &[u8], max: usize) -> Vec<(Line, Vec<u8>)> {
        // A tiny buffer so that lines span many fill_buf calls.
        let mut reader = tokio::io::BufReader::with_capacity(3, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            let line = read_line(&mut reader, &mut buf, max).await.unwrap();
            if line == Line::Eof {
                return out;
            }
            out.push((line, buf.clone()));
        }
    }

    #[tokio::test]
    async fn splits_lines_and_caps_long_ones() {
        let got = all(b"ab\r\n\n0123456789\nxyz", 5).await;
        assert_eq!(
            got,
            vec![
                (Line::Complete, b"ab".to_vec()),
                (Line::Complete, Vec::new()),
                (Line::TooLong { len: 10 }, b"01234".to_vec()),
                (Line::Complete, b"xyz".to_vec()),
            ]
        );
        assert_eq!(all(b"", 5).await, vec![]);
        assert_eq!(
            all(b"12345\n", 5).await,
            vec![(Line::Complete, b"12345".to_vec())]
        );
    }
}
