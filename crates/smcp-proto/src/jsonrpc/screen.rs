//! What the one-pass route must check itself before it may trust a body.
//!
//! [`super::Incoming::parse`] reads a request in one pass with serde_json, skipping what it
//! does not need: unknown members, and `_meta`, kept raw. serde_json's skipping is lenient
//! where its full parse is strict — a skipped string may hold invalid UTF-8 or a lone
//! surrogate escape (`"\udc00"`), a skipped number may be out of range (`1e400`), and a
//! skipped value may nest past the recursion limit — all of which the precise route rejects
//! with −32700. [`screen`] finds them in one cheap scan of the whole body so the one-pass
//! route declines such a body and the precise route gives its verdict.
//!
//! The scan is conservative: it may decline a body the precise route accepts (a number with
//! a four-digit exponent, say), which costs only the second parse; it never lets through a
//! body the precise route rejects, when the one-pass parse accepts it.

/// The deepest nesting of arrays and objects serde_json parses into a `Value` (its recursion
/// limit is 128 and the 128th level fails).
const MAX_DEPTH: u32 = 127;

/// Integer digits plus a positive exponent up to which a number is surely finite as an `f64`:
/// it is below `10^305`, far from `f64::MAX` (about `1.8e308`) whatever the rounding.
const SAFE_MAGNITUDE: u32 = 305;

/// The body as text when nothing in it can make the precise parser fail where the one-pass
/// parser would succeed: it is UTF-8, every `\u` escape of a surrogate is a high one followed
/// by a low one, every number is surely in range, and the nesting is within the limit.
/// `None` sends the body to the precise route.
pub(crate) fn screen(bytes: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut depth = 0u32;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        i = match b {
            b'"' => string_end(bytes, i + 1)?,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return None;
                }
                i + 1
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i + 1
            }
            b'-' | b'0'..=b'9' => number_end(bytes, i)?,
            _ => i + 1,
        };
    }
    Some(text)
}

/// The index after the closing quote of the string whose contents start at `i`; `None` when
/// it has a lone surrogate escape or no end.
fn string_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    loop {
        i += memchr::memchr2(b'"', b'\\', bytes.get(i..)?)?;
        if bytes[i] == b'"' {
            return Some(i + 1);
        }
        // A backslash: an escape.
        if bytes.get(i + 1) != Some(&b'u') {
            i += 2;
            continue;
        }
        let unit = hex4(bytes, i + 2)?;
        i += 6;
        match unit {
            0xD800..=0xDBFF => {
                if bytes.get(i..i + 2) != Some(b"\\u") {
                    return None;
                }
                if !matches!(hex4(bytes, i + 2)?, 0xDC00..=0xDFFF) {
                    return None;
                }
                i += 6;
            }
            0xDC00..=0xDFFF => return None,
            _ => {}
        }
    }
}

/// The four hex digits at `at`, as a UTF-16 code unit.
fn hex4(bytes: &[u8], at: usize) -> Option<u16> {
    bytes.get(at..at + 4)?.iter().try_fold(0u16, |unit, &d| {
        let nibble = char::from(d).to_digit(16)?;
        Some(unit << 4 | u16::try_from(nibble).ok()?)
    })
}

/// The index after the number starting at `i`; `None` unless it is surely a finite `f64`.
fn number_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    let digits = |i: &mut usize| {
        let start = *i;
        while bytes.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    if bytes[i] == b'-' {
        i += 1;
    }
    let integer = digits(&mut i);
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        digits(&mut i);
    }
    let mut exponent = 0i64;
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        let negative = match bytes.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        if digits(&mut i) > 3 {
            return None;
        }
        // At most three digits: no overflow.
        for &d in &bytes[start..i] {
            exponent = exponent * 10 + i64::from(d - b'0');
        }
        if negative {
            exponent = -exponent;
        }
    }
    let magnitude = i64::try_from(integer).ok()? + exponent.max(0);
    (integer <= SAFE_MAGNITUDE as usize && magnitude <= i64::from(SAFE_MAGNITUDE)).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passes(text: &str) -> bool {
        screen(text.as_bytes()).is_some()
    }

    #[test]
    fn invalid_utf8_is_declined() {
        assert!(screen(b"\"\xFF\"").is_none());
        assert!(
            screen(b"\"\xED\xA0\x80\"").is_none(),
            "an encoded surrogate"
        );
        assert!(passes("\"é ü 世界 😀\""));
    }

    #[test]
    fn surrogate_escapes_must_pair() {
        for lone in [
            r#""\udc00""#,
            r#""\uD800""#,
            r#""\ud800x""#,
            r#""\ud800\u0041""#,
            r#""\ud800\n""#,
            r#""\ud800\ud800""#,
            r#""\ud800"#,
        ] {
            assert!(!passes(lone), "{lone}");
        }
        for ok in [
            r#""\ud83d\ude00""#,
            r#""\uD83D\uDE00""#,
            r#""\\ud800""#,
            r#""\\\ud83d\ude00\\""#,
            r#""\u00e9\"\/\b""#,
        ] {
            assert!(passes(ok), "{ok}");
        }
    }

    #[test]
    fn numbers_must_be_surely_finite() {
        for big in [
            "1e400",
            "-1E+400",
            "0.5e309",
            "1e1000",
            "1e0001",
            "10e305",
            &format!("1{}", "0".repeat(305)),
        ] {
            assert!(!passes(big), "{big}");
        }
        for ok in [
            "0",
            "-0",
            "1e300",
            "1e-999",
            "-1.5E-400",
            "0.000001",
            "12345678901234567890",
            "99e303",
            &format!("1{}", "0".repeat(304)),
            &format!("0.{}1", "0".repeat(500)),
            "\"1e400\"",
        ] {
            assert!(passes(ok), "{ok}");
        }
    }

    #[test]
    fn nesting_within_the_limit() {
        let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(passes(&nest(MAX_DEPTH as usize)));
        assert!(!passes(&nest(MAX_DEPTH as usize + 1)));
        assert!(passes(&format!("[{}]", "[],".repeat(500) + "[]")));
        assert!(
            passes(r#"["[[[[", "{{{{"]"#),
            "brackets inside strings do not count"
        );
    }

    #[test]
    fn agrees_with_serde_json_on_its_limits() {
        let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let parses = |t: &str| serde_json::from_str::<serde_json::Value>(t).is_ok();
        assert!(parses(&nest(MAX_DEPTH as usize)));
        assert!(!parses(&nest(MAX_DEPTH as usize + 1)));
        assert!(parses(&format!(
            "9{}",
            "9".repeat(SAFE_MAGNITUDE as usize - 1)
        )));
    }
}
