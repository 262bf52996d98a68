//! Header value codec for `Mcp-Name` and `Mcp-Param-{Name}`
//! (`basic/transports/streamable-http.mdx` §Value Encoding, §Server Validation).
//!
//! A value that cannot travel as a plain header value — non-ASCII, control characters,
//! leading or trailing space/tab — is sent as `=?base64?<standard Base64 of UTF-8>?=`.
//! A plain value that *looks like* that sentinel is encoded too, so decoding is never
//! ambiguous: `decode_header_value(&encode_header_value(s)) == s` for every string.
//!
//! The server side ([`decode_header_value`], [`param_matches`]) is strict where the spec says
//! MUST (bad Base64 or a non-UTF-8 payload is an error, i.e. −32020) and lenient where
//! HTTP is (surrounding OWS is trimmed; `=?BASE64?…` or a missing suffix is a literal).

use std::borrow::Cow;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

/// The case-sensitive prefix of a Base64-encoded header value.
pub const BASE64_PREFIX: &str = "=?base64?";
/// The case-sensitive suffix of a Base64-encoded header value.
pub const BASE64_SUFFIX: &str = "?=";
/// Largest integer a parameter may carry (JavaScript's `Number.MAX_SAFE_INTEGER`, 2^53 − 1).
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Why a received header value could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderValueError {
    /// The value carries the Base64 sentinel but the payload is not canonical standard Base64
    /// (bad characters, bad or missing padding, non-zero trailing bits).
    #[error("invalid base64 in header value: {0}")]
    InvalidBase64(String),
    /// The Base64 payload decoded to bytes that are not UTF-8.
    #[error("base64 header value does not decode to UTF-8")]
    InvalidUtf8,
    /// A literal value contains a character outside visible ASCII, space and tab
    /// (RFC 9110 field-value as restricted by the spec).
    #[error("header value contains invalid character {0:?}")]
    InvalidChar(char),
}

/// True when `value` must be sent in the Base64 form (spec §Value Encoding).
///
/// That is the case if it has a non-ASCII character, a control character (0x00–0x1F, 0x7F),
/// leading or trailing space/tab, or if it already matches the sentinel pattern
/// (starts with `=?base64?` and ends with `?=`).
pub fn needs_base64(value: &str) -> bool {
    let bytes = value.as_bytes();
    let unsafe_byte = bytes
        .iter()
        .any(|&b| !b.is_ascii() || b < 0x20 || b == 0x7f);
    let edge_ws =
        matches!(bytes.first(), Some(b' ' | b'\t')) || matches!(bytes.last(), Some(b' ' | b'\t'));
    // Overlap is deliberate: "=?base64?=" is also encoded, which is always safe.
    let looks_encoded = value.starts_with(BASE64_PREFIX) && value.ends_with(BASE64_SUFFIX);
    unsafe_byte || edge_ws || looks_encoded
}

/// Encodes a string for an `Mcp-Name` or `Mcp-Param-*` header.
///
/// Safe values are returned as-is (borrowed); the empty string stays an empty header value.
pub fn encode_header_value(value: &str) -> Cow<'_, str> {
    if needs_base64(value) {
        Cow::Owned(format!(
            "{BASE64_PREFIX}{}{BASE64_SUFFIX}",
            STANDARD.encode(value)
        ))
    } else {
        Cow::Borrowed(value)
    }
}

/// Decodes a received `Mcp-Name` or `Mcp-Param-*` header value.
///
/// Surrounding OWS (space/tab) is trimmed first, as HTTP does. A value that starts with exactly
/// `=?base64?` and ends with `?=` is strictly Base64-decoded and must be UTF-8. Anything else is
/// a literal, which must consist of visible ASCII, space and tab only
/// ([`is_valid_header_value_chars`]); the spec requires rejecting values with invalid characters.
pub fn decode_header_value(raw: &str) -> Result<Cow<'_, str>, HeaderValueError> {
    let value = raw.trim_matches([' ', '\t']);
    let is_encoded = value.len() >= BASE64_PREFIX.len() + BASE64_SUFFIX.len()
        && value.starts_with(BASE64_PREFIX)
        && value.ends_with(BASE64_SUFFIX);
    if is_encoded {
        let payload = &value[BASE64_PREFIX.len()..value.len() - BASE64_SUFFIX.len()];
        let bytes = STANDARD
            .decode(payload)
            .map_err(|e| HeaderValueError::InvalidBase64(e.to_string()))?;
        let text = String::from_utf8(bytes).map_err(|_| HeaderValueError::InvalidUtf8)?;
        return Ok(Cow::Owned(text));
    }
    if let Some(bad) = value.chars().find(|&c| !is_field_char(c)) {
        return Err(HeaderValueError::InvalidChar(bad));
    }
    Ok(Cow::Borrowed(value))
}

/// True when `value` is a valid RFC 9110 field-value restricted to ASCII: visible ASCII
/// (0x21–0x7E), with space and tab allowed only *inside* the value. The empty value is valid.
pub fn is_valid_header_value_chars(value: &str) -> bool {
    let edge_ws = value.starts_with([' ', '\t']) || value.ends_with([' ', '\t']);
    !edge_ws && value.chars().all(is_field_char)
}

/// Visible ASCII, space or horizontal tab.
fn is_field_char(c: char) -> bool {
    matches!(c, '\x21'..='\x7e' | ' ' | '\t')
}

/// A tool parameter value within the annotation rules (a string, a boolean, an integer within
/// ±(2^53−1)). What a client actually mirrors is [`param_header_value`], for every value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamValue<'a> {
    /// A JSON string.
    String(&'a str),
    /// A JSON integer.
    Integer(i64),
    /// A JSON boolean.
    Bool(bool),
}

impl<'a> ParamValue<'a> {
    /// Reads a primitive from a JSON argument value.
    ///
    /// Integers written with a zero fraction (`42.0`) count as integers. Returns `None` for
    /// `null`, objects, arrays, non-integral numbers and integers outside ±[`MAX_SAFE_INTEGER`].
    pub fn from_json(value: &'a Value) -> Option<Self> {
        match value {
            Value::String(s) => Some(Self::String(s)),
            Value::Bool(b) => Some(Self::Bool(*b)),
            Value::Number(n) => {
                let i = match n.as_i64() {
                    Some(i) => i,
                    None => f64_to_safe_int(n.as_f64()?)?,
                };
                (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER)
                    .contains(&i)
                    .then_some(Self::Integer(i))
            }
            Value::Null | Value::Array(_) | Value::Object(_) => None,
        }
    }
}

/// `f` as an integer if it is integral and within the safe range.
fn f64_to_safe_int(f: f64) -> Option<i64> {
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    {
        let bound = MAX_SAFE_INTEGER as f64;
        (f.fract() == 0.0 && f.abs() <= bound).then_some(f as i64)
    }
}

/// Encodes a parameter value for its `Mcp-Param-*` header: strings through
/// [`encode_header_value`], integers in decimal, booleans as `true`/`false`.
pub fn encode_param<'a>(value: &ParamValue<'a>) -> Cow<'a, str> {
    match *value {
        ParamValue::String(s) => encode_header_value(s),
        ParamValue::Integer(i) => Cow::Owned(i.to_string()),
        ParamValue::Bool(true) => Cow::Borrowed("true"),
        ParamValue::Bool(false) => Cow::Borrowed("false"),
    }
}

/// The `Mcp-Param-*` header value a client sends for an argument value, or `None` when it
/// sends none. This is the one rule both sides follow: a client mirrors exactly the values
/// this returns `Some` for, and a server expects a header exactly for those.
///
/// The spec: a client MUST include the header whenever the value is present and not `null`
/// (`basic/transports/streamable-http.mdx` §Server Behavior for Custom Headers), a string as
/// is ([`encode_header_value`]), a boolean as `true`/`false`, an integer in decimal. So every
/// number is mirrored, whatever its size: integers in decimal (the rule that annotated
/// integers stay within ±(2^53−1) constrains the values a tool accepts, and the schema is
/// what refuses them, not a missing header), other numbers as the body writes them, so a
/// server parses both alike and, if the schema does not admit the value, says so. Arrays
/// and objects have no header form; no annotated type admits them (the annotation is only
/// valid on integer, string and boolean properties), so schema validation refuses the call.
pub fn param_header_value(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::Null | Value::Array(_) | Value::Object(_) => None,
        Value::String(s) => Some(encode_header_value(s)),
        Value::Bool(true) => Some(Cow::Borrowed("true")),
        Value::Bool(false) => Some(Cow::Borrowed("false")),
        Value::Number(n) => Some(Cow::Owned(match n.as_f64() {
            Some(f) if !n.is_i64() && !n.is_u64() => match f64_to_safe_int(f) {
                Some(i) => i.to_string(),
                None => n.to_string(),
            },
            _ => n.to_string(),
        })),
    }
}

/// Checks a received `Mcp-Param-*` (or `Mcp-Name`) header against the body value.
///
/// The header is decoded first ([`decode_header_value`]); a decode failure is an `Err`, which
/// the server answers with 400/−32020 just like a mismatch (`Ok(false)`). Comparison follows the
/// body's JSON type: strings exactly, booleans exactly (`true`/`false`), numbers numerically
/// (`42.0` equals `42`, in either position). A `null`, array or object body value never matches:
/// a client must omit the header for those.
pub fn param_matches(header: &str, body: &Value) -> Result<bool, HeaderValueError> {
    let decoded = decode_header_value(header)?;
    let decoded = decoded.as_ref();
    Ok(match body {
        Value::String(s) => decoded == s,
        Value::Bool(true) => decoded == "true",
        Value::Bool(false) => decoded == "false",
        Value::Number(n) => numbers_equal(decoded, n),
        Value::Null | Value::Array(_) | Value::Object(_) => false,
    })
}

/// Numeric comparison of a header string (JSON number grammar) with a body number.
///
/// An integer body (`i64`/`u64`, exact as parsed) compares exactly, digit for digit, with the
/// header's decimal value (`42`, `42.0` and `4.2e1` are all 42; `2^64−2` is not `2^64−1`
/// although both round to the same `f64`). A body the parser holds as an `f64` compares with
/// the header read by the same parser, so the same text always agrees with itself.
fn numbers_equal(header: &str, body: &serde_json::Number) -> bool {
    let Some(h) = Decimal::parse(header) else {
        return false;
    };
    if body.is_i64() || body.is_u64() {
        return Decimal::parse(&body.to_string()).is_some_and(|b| b == h);
    }
    match (
        serde_json::from_str::<serde_json::Number>(header)
            .ok()
            .and_then(|n| n.as_f64()),
        body.as_f64(),
    ) {
        (Some(h), Some(b)) => h == b,
        _ => false,
    }
}

/// The exact value of a JSON number: sign, significant digits (no leading or trailing
/// zeros) and a power of ten. Zero is always positive with no digits.
#[derive(Debug, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

impl Decimal {
    fn parse(text: &str) -> Option<Self> {
        if !is_json_number(text) {
            return None;
        }
        let (negative, unsigned) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
            Some((m, e)) => (m, e),
            None => (unsigned, "0"),
        };
        let (exp_negative, exp_digits) = match exponent.as_bytes().first() {
            Some(b'-') => (true, &exponent[1..]),
            Some(b'+') => (false, &exponent[1..]),
            _ => (false, exponent),
        };
        // Saturates: an exponent that large never equals a body number's, and zero is
        // handled apart.
        let magnitude = exp_digits.bytes().fold(0i64, |acc, d| {
            acc.saturating_mul(10).saturating_add(i64::from(d - b'0'))
        });
        let mut exponent = if exp_negative { -magnitude } else { magnitude };
        let (integer, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        exponent = exponent.saturating_sub(i64::try_from(fraction.len()).ok()?);
        let mut digits: Vec<u8> = integer.bytes().chain(fraction.bytes()).collect();
        let Some(first) = digits.iter().position(|&d| d != b'0') else {
            return Some(Self {
                negative: false,
                digits: Vec::new(),
                exponent: 0,
            });
        };
        digits.drain(..first);
        while digits.last() == Some(&b'0') {
            digits.pop();
            exponent = exponent.saturating_add(1);
        }
        Some(Self {
            negative,
            digits,
            exponent,
        })
    }
}

/// True when `s` matches the JSON number grammar (`-?int frac? exp?`), so `inf`, `NaN`, `+1`,
/// `01` and `.5` are not numbers.
fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    let int_start = i;
    let n = digits(&mut i);
    if n == 0 || (n > 1 && b[int_start] == b'0') {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_number_grammar() {
        for ok in ["0", "-0", "42", "-7", "42.0", "4.2e1", "1E+3", "1e-3"] {
            assert!(is_json_number(ok), "{ok}");
        }
        for bad in [
            "", "-", "+1", "01", ".5", "5.", "1e", "inf", "NaN", "0x10", "4 2",
        ] {
            assert!(!is_json_number(bad), "{bad}");
        }
    }

    #[test]
    fn safe_int_conversion() {
        assert_eq!(f64_to_safe_int(42.0), Some(42));
        assert_eq!(f64_to_safe_int(42.5), None);
        assert_eq!(f64_to_safe_int(1e300), None);
        assert_eq!(f64_to_safe_int(f64::NAN), None);
    }
}
