//! Pagination cursors: any cursor either names a page of the list or is refused (−32602),
//! never a panic or a silent first page; the cursors the server hands out walk the list
//! exactly once.

#![no_main]

use libfuzzer_sys::fuzz_target;
use smcp_server::fuzzing::{decode_cursor, encode_cursor, page};

fuzz_target!(|data: &[u8]| {
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    let len = usize::from(control) * 3;
    let page_size = usize::from(control % 11);
    let cursor = String::from_utf8_lossy(rest);
    let decoded = decode_cursor(&cursor);
    if let Some(offset) = decoded {
        assert_eq!(decode_cursor(&encode_cursor(offset)), Some(offset));
    }
    match page(len, Some(&cursor), page_size) {
        Ok((range, next)) => {
            assert_eq!(Some(range.start), decoded);
            assert!(range.end <= len);
            assert_eq!(
                next.as_deref().and_then(decode_cursor),
                (range.end < len).then_some(range.end)
            );
        }
        Err(message) => {
            assert!(
                decoded.is_none_or(|offset| offset > len),
                "{cursor:?} refused: {message}"
            );
        }
    }
    // From the first page on, the server's own cursors visit every item once.
    let mut seen = 0;
    let mut cursor = None;
    loop {
        let (range, next) = page(len, cursor.as_deref(), page_size)
            .unwrap_or_else(|e| panic!("the server's own cursor refused: {e}"));
        assert_eq!(range.start, seen);
        seen = range.end;
        match next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, len);
});
