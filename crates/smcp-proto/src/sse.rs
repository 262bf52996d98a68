//! Server-Sent Events codec (`basic/transports/streamable-http.mdx` §Receiving Messages;
//! WHATWG HTML §9.2 "event stream interpretation").
//!
//! MCP 2026-07-28 puts one JSON-RPC message in each event's `data`, with no `id:` (resumability
//! was removed) and no `event:` name. The encoder writes exactly that; the decoder follows the
//! WHATWG algorithm so it also accepts anything a conforming server may send: CR, LF or CRLF line
//! ends (also split across chunks), a leading BOM, multi-line `data:`, comments (keep-alives),
//! and `id:`/`retry:`/unknown fields, which are ignored.
//!
//! The decoder is incremental and sans-IO: [`SseDecoder::feed`] bytes as they arrive, then drain
//! [`SseDecoder::next_event`] until it returns `Ok(None)`. Memory is bounded by
//! [`SseLimits`]: a line or an event larger than the limit is an error, never an allocation.

use std::fmt;

/// Writes one event whose `data` is `payload` (normally a serialized JSON-RPC message).
///
/// Each line of `payload` (split on CRLF, CR or LF) becomes its own `data:` line, so the
/// decoder's `\n`-join reproduces it with line ends normalised to `\n`. JSON from
/// `serde_json` has no raw newlines, so in practice this is one `data: <json>` line.
pub fn encode_event(payload: &[u8], out: &mut Vec<u8>) {
    for line in split_lines(payload) {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out.push(b'\n');
}

/// Writes a comment, one `: ` line per line of `text`; an empty `text` writes the bare
/// keep-alive `:\n\n`. Receivers ignore comments; they keep idle connections open.
pub fn encode_comment(text: &str, out: &mut Vec<u8>) {
    if text.is_empty() {
        out.extend_from_slice(b":\n\n");
        return;
    }
    for line in split_lines(text.as_bytes()) {
        out.extend_from_slice(b": ");
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out.push(b'\n');
}

/// Writes the keep-alive comment `:\n\n`.
pub fn encode_keep_alive(out: &mut Vec<u8>) {
    encode_comment("", out);
}

/// Splits on CRLF, CR or LF; always yields at least one (possibly empty) line.
fn split_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(bytes);
    std::iter::from_fn(move || {
        let cur = rest?;
        match cur.iter().position(|&b| b == b'\r' || b == b'\n') {
            None => {
                rest = None;
                Some(cur)
            }
            Some(i) => {
                let skip = if cur[i] == b'\r' && cur.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                rest = Some(&cur[i + skip..]);
                Some(&cur[..i])
            }
        }
    })
}

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` name, if one was given and non-empty (`None` means the default `message`).
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Decoding failure. Once returned, the decoder stays failed: the stream must be dropped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// A line or an event exceeded the configured [`SseLimits`].
    #[error("SSE {what} exceeds the limit of {limit} bytes")]
    EventTooLarge {
        /// `"line"` or `"event"`.
        what: &'static str,
        /// The limit that was exceeded.
        limit: usize,
    },
}

/// Size limits of an [`SseDecoder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseLimits {
    /// Longest line accepted, in bytes, without its line end.
    pub max_line_len: usize,
    /// Largest event accepted: the joined `data` plus the `event` name, in bytes.
    pub max_event_size: usize,
}

impl SseLimits {
    /// 16 MiB, the default for both limits.
    pub const DEFAULT_LIMIT: usize = 16 * 1024 * 1024;
}

impl Default for SseLimits {
    fn default() -> Self {
        Self {
            max_line_len: Self::DEFAULT_LIMIT,
            max_event_size: Self::DEFAULT_LIMIT,
        }
    }
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Incremental `text/event-stream` decoder.
///
/// Buffered memory is at most `max_line_len` plus the last chunk fed, plus `max_event_size`
/// for the event being assembled, as long as the caller drains [`next_event`](Self::next_event)
/// after each [`feed`](Self::feed).
pub struct SseDecoder {
    limits: SseLimits,
    /// Bytes received and not yet consumed start at `buf[start..]`.
    buf: Vec<u8>,
    start: usize,
    /// `buf[start..start + scanned]` is known to hold no CR or LF.
    scanned: usize,
    /// The previous line ended with a CR that was the last byte available: a LF that comes
    /// next belongs to it (CRLF split across chunks) and must not make an empty line.
    after_cr: bool,
    /// Whether the start-of-stream BOM check is done.
    bom_done: bool,
    /// The event being assembled.
    data: String,
    has_data: bool,
    event: Option<String>,
    failed: Option<SseError>,
    /// The last `id:` field seen (WHATWG "last event ID buffer").
    last_id: Option<String>,
    /// The last valid `retry:` field, in milliseconds.
    retry_ms: Option<u64>,
}

impl fmt::Debug for SseDecoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SseDecoder")
            .field("limits", &self.limits)
            .field("buffered", &(self.buf.len() - self.start))
            .field("data_len", &self.data.len())
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    /// A decoder with the default 16 MiB limits.
    pub fn new() -> Self {
        Self::with_limits(SseLimits::default())
    }

    /// A decoder with explicit limits.
    pub fn with_limits(limits: SseLimits) -> Self {
        Self {
            limits,
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            after_cr: false,
            bom_done: false,
            data: String::new(),
            has_data: false,
            event: None,
            failed: None,
            last_id: None,
            retry_ms: None,
        }
    }

    /// The last `id:` field the stream carried (what a client sends as `Last-Event-ID` when it
    /// resumes), if any. An `id:` without a value resets it.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The reconnection time the stream asked for with its last valid `retry:` field.
    pub fn retry(&self) -> Option<std::time::Duration> {
        self.retry_ms.map(std::time::Duration::from_millis)
    }

    /// Appends received bytes. Call [`next_event`](Self::next_event) until `Ok(None)` afterwards.
    pub fn feed(&mut self, chunk: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(chunk);
    }

    /// True when a partial line or a partially assembled event is buffered, i.e. the stream
    /// would lose data if it ended now (WHATWG discards an unterminated event at end of stream).
    pub fn has_pending(&self) -> bool {
        let rest = &self.buf[self.start..];
        let only_bom = !self.bom_done && BOM.starts_with(rest);
        (!rest.is_empty() && !only_bom) || self.has_data || self.event.is_some()
    }

    /// The next complete event, `Ok(None)` if more bytes are needed.
    pub fn next_event(&mut self) -> Result<Option<SseEvent>, SseError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let result = self.next_event_inner();
        if let Err(e) = &result {
            self.failed = Some(e.clone());
            self.buf = Vec::new();
            self.start = 0;
            self.data = String::new();
        }
        result
    }

    fn next_event_inner(&mut self) -> Result<Option<SseEvent>, SseError> {
        loop {
            if !self.bom_done {
                let rest = &self.buf[self.start..];
                if rest.len() < BOM.len() && BOM.starts_with(rest) {
                    return Ok(None); // could still be a BOM
                }
                if rest.starts_with(BOM) {
                    self.start += BOM.len();
                }
                self.bom_done = true;
            }
            if self.after_cr {
                match self.buf.get(self.start) {
                    None => return Ok(None),
                    Some(b'\n') => self.start += 1,
                    Some(_) => {}
                }
                self.after_cr = false;
            }
            let rest = &self.buf[self.start..];
            let Some(i) = rest[self.scanned..]
                .iter()
                .position(|&b| b == b'\r' || b == b'\n')
                .map(|i| i + self.scanned)
            else {
                self.scanned = rest.len();
                if rest.len() > self.limits.max_line_len {
                    return Err(self.too_large("line", self.limits.max_line_len));
                }
                return Ok(None);
            };
            if i > self.limits.max_line_len {
                return Err(self.too_large("line", self.limits.max_line_len));
            }
            let line_start = self.start;
            if rest[i] == b'\r' {
                match rest.get(i + 1) {
                    Some(b'\n') => self.start += i + 2,
                    Some(_) => self.start += i + 1,
                    None => {
                        self.start += i + 1;
                        self.after_cr = true;
                    }
                }
            } else {
                self.start += i + 1;
            }
            self.scanned = 0;
            let line = String::from_utf8_lossy(&self.buf[line_start..line_start + i]).into_owned();
            if let Some(event) = self.process_line(&line)? {
                return Ok(Some(event));
            }
        }
    }

    fn too_large(&self, what: &'static str, limit: usize) -> SseError {
        SseError::EventTooLarge { what, limit }
    }

    /// One line of the WHATWG algorithm; returns an event when an empty line dispatches one.
    fn process_line(&mut self, line: &str) -> Result<Option<SseEvent>, SseError> {
        if line.is_empty() {
            let event = self.event.take().filter(|e| !e.is_empty());
            if !self.has_data {
                return Ok(None);
            }
            self.has_data = false;
            let data = std::mem::take(&mut self.data);
            return Ok(Some(SseEvent { event, data }));
        }
        if line.starts_with(':') {
            return Ok(None); // comment / keep-alive
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                let name_len = self.event.as_ref().map_or(0, String::len);
                let new_len = self.data.len() + usize::from(self.has_data) + value.len() + name_len;
                if new_len > self.limits.max_event_size {
                    return Err(self.too_large("event", self.limits.max_event_size));
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => {
                if self.data.len() + value.len() > self.limits.max_event_size {
                    return Err(self.too_large("event", self.limits.max_event_size));
                }
                self.event = Some(value.to_owned());
            }
            // WHATWG: an id containing NUL is ignored; an empty one resets the buffer.
            "id" if !value.contains('\0') => {
                self.last_id = (!value.is_empty()).then(|| value.to_owned());
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry_ms = value.parse().ok();
            }
            // Unknown fields are ignored.
            _ => {}
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_lines_variants() {
        let got: Vec<&[u8]> = split_lines(b"a\r\nb\rc\nd").collect();
        assert_eq!(got, [&b"a"[..], b"b", b"c", b"d"]);
        let got: Vec<&[u8]> = split_lines(b"").collect();
        assert_eq!(got, [&b""[..]]);
        let got: Vec<&[u8]> = split_lines(b"x\n").collect();
        assert_eq!(got, [&b"x"[..], b""]);
    }

    #[test]
    fn id_and_retry_are_remembered_for_resumption() {
        let mut d = SseDecoder::new();
        d.feed(b"id: event-1\nretry: 500\ndata: \n\nretry: soon\ndata: x\n\n");
        assert_eq!(d.next_event().unwrap().unwrap().data, "");
        assert_eq!(d.last_event_id(), Some("event-1"));
        assert_eq!(d.next_event().unwrap().unwrap().data, "x");
        assert_eq!(d.retry(), Some(std::time::Duration::from_millis(500)));
        d.feed(b"id\ndata: y\n\n");
        assert_eq!(d.next_event().unwrap().unwrap().data, "y");
        assert_eq!(d.last_event_id(), None);
    }
}
