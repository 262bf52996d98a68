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

/// A tool parameter value that may be mirrored into an `Mcp-Param-*` header.
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
fn numbers_equal(header: &str, body: &serde_json::Number) -> bool {
    if !is_json_number(header) {
        return false;
    }
    // Exact integer comparison when both sides are integers (no f64 rounding above 2^53).
    if let (Ok(h), Some(b)) = (header.parse::<i64>(), body.as_i64()) {
        return h == b;
    }
    match (header.parse::<f64>(), body.as_f64()) {
        (Ok(h), Some(b)) => h == b,
        _ => false,
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
