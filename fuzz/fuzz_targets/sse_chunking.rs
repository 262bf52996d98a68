//! The SSE decoder reads the same events (and the same error, and the same pending state at
//! the end) whatever the chunking of the stream, and what the encoder writes decodes back.

#![no_main]

use libfuzzer_sys::fuzz_target;
use smcp_proto::sse::{SseDecoder, SseError, SseEvent, SseLimits, encode_event};

type Outcome = (Vec<SseEvent>, Option<SseError>, bool);

fn decode(stream: &[u8], sizes: &mut dyn Iterator<Item = usize>, limits: SseLimits) -> Outcome {
    let mut decoder = SseDecoder::with_limits(limits);
    let mut events = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        let n = sizes.next().unwrap_or(rest.len()).clamp(1, rest.len());
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        decoder.feed(chunk);
        loop {
            match decoder.next_event() {
                Ok(Some(event)) => events.push(event),
                Ok(None) => break,
                Err(e) => return (events, Some(e), false),
            }
        }
    }
    let pending = decoder.has_pending();
    (events, None, pending)
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    let (pattern, stream) = rest.split_at(rest.len().min(usize::from(control & 7)));
    let limits = if control & 8 == 0 {
        SseLimits::default()
    } else {
        SseLimits {
            max_line_len: usize::from(control >> 4) * 8 + 1,
            max_event_size: usize::from(control >> 4) * 16 + 1,
        }
    };
    let whole = decode(stream, &mut std::iter::empty(), limits);
    let bytes = decode(stream, &mut std::iter::repeat(1), limits);
    assert_eq!(whole, bytes, "one byte at a time");
    if !pattern.is_empty() {
        let mut sizes = pattern.iter().map(|&b| usize::from(b) + 1).cycle();
        let chunked = decode(stream, &mut sizes, limits);
        assert_eq!(whole, chunked, "chunked by {pattern:?}");
    }
    // The encoder: any UTF-8 payload comes back with its line ends normalised to LF.
    if let Ok(text) = std::str::from_utf8(stream) {
        let mut out = Vec::new();
        encode_event(text.as_bytes(), &mut out);
        let (events, error, pending) = decode(&out, &mut std::iter::empty(), SseLimits::default());
        assert_eq!(error, None);
        assert!(!pending);
        let want = text.replace("\r\n", "\n").replace('\r', "\n");
        assert_eq!(
            events,
            [SseEvent {
                event: None,
                data: want
            }]
        );
    }
});
