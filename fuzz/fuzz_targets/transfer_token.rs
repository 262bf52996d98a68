//! SEP-2631 transfer tokens: random tokens, authentic ones with bits flipped, and authentic
//! ones. Nothing panics, and only an authentic, unmodified, unexpired token of the right
//! direction verifies, to exactly the claims it was signed with.

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use smcp_files::token::{self, Claims, Direction, Route, TransferTokenError};
use smcp_server::{Key, KeyRing};

static RING: LazyLock<KeyRing> =
    LazyLock::new(
        || match (Key::new("k2", [3; 32]), Key::new("k1", [4; 32])) {
            (Ok(active), Ok(previous)) => KeyRing::new(active).with_previous(previous),
            _ => panic!("fixed keys are valid"),
        },
    );

/// `text` cut to at most `max` bytes.
fn cut(text: &str, max: usize) -> String {
    text[..text.floor_char_boundary(max)].to_owned()
}

/// Claims within the bounds the service mints them with: a short server-made file id, a
/// name of at most 1024 bytes (`files/authorizeUpload` refuses longer ones), a short media
/// type and principal. (Unbounded, a token can outgrow the 16 KiB `verify` reads.)
fn claims(bytes: &[u8]) -> Claims {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let number = bytes
        .iter()
        .fold(0u64, |n, &b| n.rotate_left(7) ^ u64::from(b));
    let some = |bit: u64| (number >> bit) & 1 == 1;
    Claims {
        dir: if some(0) {
            Direction::Upload
        } else {
            Direction::Download
        },
        fid: cut(&text, 64),
        sub: some(1).then(|| cut(&text.chars().rev().collect::<String>(), 256)),
        exp: number | 1,
        size: some(2).then_some(number >> 3),
        max: some(3).then_some(number >> 5),
        digest: None,
        mime: some(4).then(|| cut(&text, 64)),
        name: some(5).then(|| cut(&text, 1024)),
        ret: some(6).then_some(number),
        via: some(7).then(|| if some(8) { Route::Form } else { Route::Put }),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        0 => {
            let token = String::from_utf8_lossy(rest);
            for dir in [Direction::Upload, Direction::Download] {
                assert!(
                    token::verify(&RING, &token, dir, 0).is_err(),
                    "a made-up token verified: {token}"
                );
            }
        }
        1 => {
            let (flips, seed) = rest.split_at(rest.len().min(4));
            let claims = claims(seed);
            let token = token::sign(&RING, &claims);
            let mut bytes = token.clone().into_bytes();
            for &f in flips {
                let i = usize::from(f) * 7 % bytes.len();
                bytes[i] ^= 1 << (f % 8);
            }
            let flipped = String::from_utf8_lossy(&bytes);
            if flipped != token {
                assert!(
                    token::verify(&RING, &flipped, claims.dir, 0).is_err(),
                    "a modified token verified: {flipped}"
                );
            }
        }
        _ => {
            let claims = claims(rest);
            let token = token::sign(&RING, &claims);
            assert_eq!(
                token::verify(&RING, &token, claims.dir, 0).as_ref(),
                Ok(&claims)
            );
            assert_eq!(
                token::verify(&RING, &token, claims.dir, claims.exp),
                Err(TransferTokenError::Expired)
            );
            let other = match claims.dir {
                Direction::Upload => Direction::Download,
                Direction::Download => Direction::Upload,
            };
            assert_eq!(
                token::verify(&RING, &token, other, 0),
                Err(TransferTokenError::WrongDirection)
            );
        }
    }
});
