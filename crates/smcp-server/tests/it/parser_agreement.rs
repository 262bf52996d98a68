//! The fast body parser and the precise one agree (issue #16 item 10): bytes the precise
//! parser rejects with −32700 are rejected wherever they sit, also in members the fast route
//! skips (an unknown envelope or params member, `_meta`), and no handler runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use bytes::Bytes;
use common::*;
use http_body_util::Full;
use serde_json::json;

/// Values the precise parser refuses: invalid UTF-8, lone surrogates, numbers out of range,
/// nesting past the limit.
fn bad_values() -> Vec<Vec<u8>> {
    let deep = format!("{}{}", "[".repeat(140), "]".repeat(140));
    vec![
        b"\"\xFF\"".to_vec(),
        b"\"caf\xC3\"".to_vec(),
        b"\"\xED\xB0\x80\"".to_vec(),
        br#""\udc00""#.to_vec(),
        br#""\ud800""#.to_vec(),
        br#""\ud800\u0041""#.to_vec(),
        b"1e400".to_vec(),
        b"-1E+400".to_vec(),
        format!("1{}", "0".repeat(400)).into_bytes(),
        deep.into_bytes(),
    ]
}

/// A well-formed `tools/call` of `probe` with `value` spliced in at `place`.
fn body_with(place: &str, value: &[u8]) -> Vec<u8> {
    let meta = meta().to_string();
    let meta = meta.strip_suffix('}').unwrap();
    let (before, after) = match place {
        "envelope" => (
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"probe","arguments":{{}},"_meta":{meta}}}}},"x":"#
            ),
            "}".to_owned(),
        ),
        "params" => (
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"probe","arguments":{{}},"_meta":{meta}}},"x":"#
            ),
            "}}".to_owned(),
        ),
        "_meta" => (
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"probe","arguments":{{}},"_meta":{meta},"x":"#
            ),
            "}}}".to_owned(),
        ),
        _ => unreachable!(),
    };
    let mut body = before.into_bytes();
    body.extend_from_slice(value);
    body.extend_from_slice(after.as_bytes());
    body
}

#[tokio::test]
async fn bytes_the_precise_parser_rejects_are_400_32700_wherever_they_are() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let head = body(json!(7), "tools/call", json!({"name": "probe"}));
    // The same body with a valid value is served: the splice itself is sound.
    for place in ["envelope", "params", "_meta"] {
        let ok = body_with(place, br#""fine""#);
        let req = request(&head).body(Full::new(Bytes::from(ok))).unwrap();
        let reply = send(&svc, req).await;
        assert_eq!(reply.status, 200, "{place}: {}", reply.json());
        assert_eq!(reply.json()["result"]["isError"], json!(null), "{place}");
    }
    assert_eq!(runs.get(), 3);
    for value in bad_values() {
        for place in ["envelope", "params", "_meta"] {
            let bytes = body_with(place, &value);
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let req = request(&head).body(Full::new(Bytes::from(bytes))).unwrap();
            let reply = send(&svc, req).await;
            assert_eq!(reply.status, 400, "{place}: {text}");
            reply.assert_error(400, -32700, None);
        }
    }
    assert_eq!(runs.get(), 3, "no handler ran for a rejected body");
}
