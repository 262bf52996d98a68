//! Opening a `requestState` (MRTR): random tokens, authentic ones with bits flipped, and
//! authentic ones. Nothing panics, and only an authentic, unmodified token opens, to exactly
//! what was sealed.

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use smcp_server::{Key, KeyRing};

const MAX_LEN: usize = 1 << 16;

/// The active key and a previous one, as after a rotation.
static RING: LazyLock<KeyRing> =
    LazyLock::new(
        || match (Key::new("k2", [7; 32]), Key::new("k1", [9; 32])) {
            (Ok(active), Ok(previous)) => KeyRing::new(active).with_previous(previous),
            _ => panic!("fixed keys are valid"),
        },
    );

/// An envelope made of the input, every member present (so it serializes back the same).
fn envelope(bytes: &[u8]) -> Value {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let half = text.len() / 2;
    let (a, b) = text.split_at(text.floor_char_boundary(half));
    let number = bytes
        .iter()
        .fold(0u64, |n, &b| n.rotate_left(5) ^ u64::from(b));
    json!({
        "m": a, "d": b, "p": b, "e": number, "n": (number % 7) as u32, "j": a,
        "q": [a, b], "a": {a: b}, "s": {"bytes": bytes, "text": text},
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        0 => {
            let token = String::from_utf8_lossy(rest);
            assert!(
                smcp_server::fuzzing::open_request_state(&RING, &token, MAX_LEN).is_err(),
                "a made-up token opened: {token}"
            );
        }
        1 => {
            let (flips, seed) = rest.split_at(rest.len().min(4));
            let Ok(token) = smcp_server::fuzzing::seal_request_state(&RING, &envelope(seed)) else {
                panic!("an envelope does not seal");
            };
            let mut bytes = token.clone().into_bytes();
            for &f in flips {
                let i = usize::from(f) * 7 % bytes.len();
                bytes[i] ^= 1 << (f % 8);
            }
            let flipped = String::from_utf8_lossy(&bytes);
            if flipped != token {
                assert!(
                    smcp_server::fuzzing::open_request_state(&RING, &flipped, MAX_LEN).is_err(),
                    "a modified token opened: {flipped}"
                );
            }
        }
        _ => {
            let sealed = envelope(rest);
            let Ok(token) = smcp_server::fuzzing::seal_request_state(&RING, &sealed) else {
                panic!("an envelope does not seal");
            };
            let opened = smcp_server::fuzzing::open_request_state(&RING, &token, usize::MAX)
                .unwrap_or_else(|e| panic!("an authentic token does not open: {e}"));
            assert_eq!(opened, sealed);
        }
    }
});
