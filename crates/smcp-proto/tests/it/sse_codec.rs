//! SSE codec: WHATWG event-stream parsing, chunk-split invariance, limits, encode→decode identity.
#![allow(clippy::unwrap_used)] // test helpers panic on purpose

use proptest::prelude::*;
use smcp_proto::sse::{
    SseDecoder, SseError, SseEvent, SseLimits, encode_comment, encode_event, encode_keep_alive,
};

fn ev(data: &str) -> SseEvent {
    SseEvent {
        event: None,
        data: data.to_owned(),
    }
}

fn drain(d: &mut SseDecoder, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
    while let Some(e) = d.next_event()? {
        out.push(e);
    }
    Ok(())
}

/// Decodes `input` fed in one go.
fn one_shot(input: &[u8]) -> Result<Vec<SseEvent>, SseError> {
    let mut d = SseDecoder::new();
    let mut out = Vec::new();
    d.feed(input);
    drain(&mut d, &mut out)?;
    Ok(out)
}

/// Decodes `input` split into the given chunk sizes (cycled).
fn chunked(input: &[u8], sizes: &[usize]) -> Result<Vec<SseEvent>, SseError> {
    let mut d = SseDecoder::new();
    let mut out = Vec::new();
    let mut rest = input;
    let mut i = 0;
    while !rest.is_empty() {
        let n = sizes[i % sizes.len()].clamp(1, rest.len());
        d.feed(&rest[..n]);
        rest = &rest[n..];
        drain(&mut d, &mut out)?;
        i += 1;
    }
    Ok(out)
}

/// Asserts that every way of splitting `input` in two, and byte-at-a-time, gives the one-shot result.
fn assert_split_invariant(input: &[u8]) -> Vec<SseEvent> {
    let expected = one_shot(input).unwrap();
    assert_eq!(chunked(input, &[1]).unwrap(), expected, "byte at a time");
    for cut in 0..=input.len() {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.feed(&input[..cut]);
        drain(&mut d, &mut out).unwrap();
        d.feed(&input[cut..]);
        drain(&mut d, &mut out).unwrap();
        assert_eq!(out, expected, "split at {cut}");
    }
    expected
}

#[test]
fn single_event() {
    assert_eq!(
        assert_split_invariant(b"data: {\"a\":1}\n\n"),
        [ev("{\"a\":1}")]
    );
}

#[test]
fn multi_line_data_joined_with_lf() {
    assert_eq!(
        assert_split_invariant(b"data: a\ndata: b\ndata:c\n\n"),
        [ev("a\nb\nc")]
    );
}

#[test]
fn only_one_space_stripped() {
    assert_eq!(
        assert_split_invariant(b"data:  two\ndata:none\n\n"),
        [ev(" two\nnone")]
    );
}

#[test]
fn cr_lf_and_crlf_line_ends() {
    let expected = [ev("a\nb"), ev("c")];
    assert_eq!(
        assert_split_invariant(b"data: a\rdata: b\r\rdata: c\r\r"),
        expected
    );
    assert_eq!(
        assert_split_invariant(b"data: a\ndata: b\n\ndata: c\n\n"),
        expected
    );
    assert_eq!(
        assert_split_invariant(b"data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n"),
        expected
    );
    assert_eq!(
        assert_split_invariant(b"data: a\r\ndata: b\r\n\ndata: c\r\r\n"),
        expected
    );
}

#[test]
fn crlf_split_across_chunks_is_one_line_end() {
    let mut d = SseDecoder::new();
    d.feed(b"data: a\r");
    assert_eq!(d.next_event().unwrap(), None);
    d.feed(b"\ndata: b\r");
    assert_eq!(d.next_event().unwrap(), None);
    d.feed(b"\n\r");
    assert_eq!(d.next_event().unwrap(), Some(ev("a\nb")));
    d.feed(b"\n");
    assert_eq!(d.next_event().unwrap(), None);
    assert!(!d.has_pending());
}

#[test]
fn cr_cr_is_two_line_ends_even_when_split() {
    let mut d = SseDecoder::new();
    d.feed(b"data: a\r");
    assert_eq!(d.next_event().unwrap(), None);
    d.feed(b"\r");
    assert_eq!(d.next_event().unwrap(), Some(ev("a")));
}

#[test]
fn comments_and_keep_alives_ignored() {
    assert_eq!(
        assert_split_invariant(b":\n\n: ping\n:\r\ndata: x\n: inside\ndata: y\n\n:\n\n"),
        [ev("x\ny")]
    );
}

#[test]
fn id_retry_and_unknown_fields_ignored() {
    assert_eq!(
        assert_split_invariant(b"id: 7\nretry: 1000\nfoo: bar\nid\ndata: x\nbaz\n\n"),
        [ev("x")]
    );
}

#[test]
fn event_name_recorded_and_reset() {
    let got = assert_split_invariant(
        b"event: message\ndata: a\n\nevent: x\n\ndata: b\n\nevent:\ndata: c\n\n",
    );
    assert_eq!(
        got,
        [
            SseEvent {
                event: Some("message".to_owned()),
                data: "a".to_owned()
            },
            ev("b"),
            ev("c"),
        ]
    );
}

#[test]
fn field_without_colon_and_empty_data() {
    // `data` alone appends an empty line; an event with only empty data still dispatches.
    assert_eq!(assert_split_invariant(b"data\n\n"), [ev("")]);
    assert_eq!(assert_split_invariant(b"data:\ndata:\n\n"), [ev("\n")]);
    // Blank lines without data dispatch nothing.
    assert_eq!(assert_split_invariant(b"\n\n\r\n\r"), []);
}

#[test]
fn bom_stripped_once() {
    assert_eq!(
        assert_split_invariant(b"\xEF\xBB\xBFdata: x\n\n"),
        [ev("x")]
    );
    // A second BOM is part of the field name, so the line is an unknown field.
    assert_eq!(
        assert_split_invariant(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n"),
        [ev("y")]
    );
    // A BOM later in the stream is not stripped.
    assert_eq!(
        assert_split_invariant(b"data: a\n\n\xEF\xBB\xBFdata: x\n\n"),
        [ev("a")]
    );
    // A partial BOM prefix that turns out not to be one.
    assert_eq!(assert_split_invariant(b"\xEFdata: x\n\n"), []);
}

#[test]
fn unterminated_event_is_pending_not_dispatched() {
    let mut d = SseDecoder::new();
    assert!(!d.has_pending());
    d.feed(b"data: x\n");
    assert_eq!(d.next_event().unwrap(), None);
    assert!(d.has_pending());
    d.feed(b"\n");
    assert_eq!(d.next_event().unwrap(), Some(ev("x")));
    assert!(!d.has_pending());
    d.feed(b"data: partial");
    assert_eq!(d.next_event().unwrap(), None);
    assert!(d.has_pending());
}

#[test]
fn invalid_utf8_replaced() {
    assert_eq!(
        assert_split_invariant(b"data: a\xFFb\n\n"),
        [ev("a\u{FFFD}b")]
    );
}

#[test]
fn non_ascii_split_inside_a_char() {
    assert_eq!(
        assert_split_invariant("data: Hello, 世界\n\n".as_bytes()),
        [ev("Hello, 世界")]
    );
}

fn small(max_line_len: usize, max_event_size: usize) -> SseDecoder {
    SseDecoder::with_limits(SseLimits {
        max_line_len,
        max_event_size,
    })
}

#[test]
fn line_without_newline_is_bounded() {
    let mut d = small(64, 1024);
    for _ in 0..6 {
        d.feed(&[b'a'; 10]);
        assert_eq!(d.next_event().unwrap(), None);
    }
    d.feed(&[b'a'; 10]);
    let err = d.next_event().unwrap_err();
    assert_eq!(
        err,
        SseError::EventTooLarge {
            what: "line",
            limit: 64
        }
    );
    // The decoder stays failed and stops buffering.
    d.feed(b"\n\ndata: x\n\n");
    assert_eq!(d.next_event(), Err(err));
}

#[test]
fn long_complete_line_rejected() {
    let mut d = small(8, 1024);
    d.feed(b"data: 12345\n\n");
    assert!(matches!(
        d.next_event(),
        Err(SseError::EventTooLarge { what: "line", .. })
    ));
    let mut d = small(8, 1024);
    d.feed(b"data: 12\n\n");
    assert_eq!(d.next_event().unwrap(), Some(ev("12")));
}

#[test]
fn event_accumulation_bounded() {
    let mut d = small(64, 10);
    d.feed(b"data: 12345\ndata: 1234\n");
    assert_eq!(d.next_event().unwrap(), None); // 5 + 1 + 4 = 10
    d.feed(b"data: x\n");
    assert!(matches!(
        d.next_event(),
        Err(SseError::EventTooLarge { what: "event", .. })
    ));
}

#[test]
fn limits_at_exact_boundary() {
    let mut d = small(11, 5);
    d.feed(b"data: 12345\n\n");
    assert_eq!(d.next_event().unwrap(), Some(ev("12345")));
}

#[test]
fn encoder_shapes() {
    let mut out = Vec::new();
    encode_event(br#"{"jsonrpc":"2.0"}"#, &mut out);
    assert_eq!(out, b"data: {\"jsonrpc\":\"2.0\"}\n\n");
    out.clear();
    encode_event(b"a\nb\r\nc\rd", &mut out);
    assert_eq!(out, b"data: a\ndata: b\ndata: c\ndata: d\n\n");
    out.clear();
    encode_comment("ping", &mut out);
    assert_eq!(out, b": ping\n\n");
    out.clear();
    encode_comment("a\nb", &mut out);
    assert_eq!(out, b": a\n: b\n\n");
    out.clear();
    encode_keep_alive(&mut out);
    assert_eq!(out, b":\n\n");
}

#[test]
fn encoded_stream_decodes() {
    let mut out = Vec::new();
    encode_keep_alive(&mut out);
    encode_event(b"{\"id\":1}", &mut out);
    encode_comment("still here", &mut out);
    encode_event(b"", &mut out);
    encode_event(b" lead", &mut out);
    assert_eq!(
        assert_split_invariant(&out),
        [ev("{\"id\":1}"), ev(""), ev(" lead")]
    );
}

proptest! {
    #[test]
    fn encode_decode_identity_under_chunking(
        payloads in proptest::collection::vec("[^\r\n]{0,40}|[a\r\n :]{0,12}", 0..8),
        comments in proptest::collection::vec("[ -~]{0,10}", 0..8),
        sizes in proptest::collection::vec(1usize..17, 1..6),
    ) {
        let mut out = Vec::new();
        for (i, p) in payloads.iter().enumerate() {
            if let Some(c) = comments.get(i) {
                encode_comment(c, &mut out);
            }
            encode_event(p.as_bytes(), &mut out);
        }
        // Line ends inside a payload come back as `\n`.
        let expected: Vec<SseEvent> = payloads
            .iter()
            .map(|p| ev(&p.replace("\r\n", "\n").replace('\r', "\n")))
            .collect();
        prop_assert_eq!(&one_shot(&out).unwrap(), &expected);
        prop_assert_eq!(&chunked(&out, &sizes).unwrap(), &expected);
    }

    #[test]
    fn arbitrary_bytes_split_invariant(
        input in proptest::collection::vec(
            prop_oneof![Just(b'\r'), Just(b'\n'), Just(b':'), Just(b' '), Just(b'a'),
                        Just(0xEF), Just(0xBB), Just(0xBF), any::<u8>()],
            0..64),
        sizes in proptest::collection::vec(1usize..9, 1..5),
    ) {
        let mut prefixed = b"data".to_vec();
        prefixed.extend_from_slice(&input);
        for bytes in [&input, &prefixed] {
            let expected = one_shot(bytes).unwrap();
            prop_assert_eq!(chunked(bytes, &sizes).unwrap(), expected.clone());
            prop_assert_eq!(chunked(bytes, &[1]).unwrap(), expected);
        }
    }
}
