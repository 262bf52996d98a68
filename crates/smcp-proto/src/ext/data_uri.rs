//! RFC 2397 `data:` URIs, the SEP-2356 inline file value.
//!
//! `data:[<mediatype>][;base64],<data>`. The media type defaults to
//! `text/plain;charset=US-ASCII`; parameters (including a legacy `name=`) are kept but ignored
//! for matching. [`DataUri::decoded_len`] is computed from the text alone, so `maxSize` is
//! checked before anything is decoded.
//!
//! Base64 payloads are strict (RFC 4648 §4, as RFC 2397 refers to RFC 2045): only the standard
//! alphabet, no whitespace (a URI has none), padding `=` only at the end and exactly as much as
//! the length needs, and zero unused bits in the last character, so every decoded byte string
//! has one accepted encoding. Percent escapes are decoded first.

use base64::Engine as _;

use super::files::{FileErrorReason, is_valid_mime, mime_essence};

/// The RFC 2397 default media type.
pub const DEFAULT_MEDIA_TYPE: &str = "text/plain;charset=US-ASCII";

/// Why a `data:` URI was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DataUriError {
    /// Not `data:…,…`, bad base64 or a bad percent escape.
    #[error("malformed data: URI: {0}")]
    Malformed(&'static str),
    /// The media type is not `type/subtype`.
    #[error("data: URI media type is not type/subtype")]
    InvalidMimeType,
    /// Decoded size above the limit.
    #[error("data: URI decodes to {actual} bytes, more than {max}")]
    TooLarge {
        /// The limit.
        max: u64,
        /// The decoded size.
        actual: u64,
    },
}

impl DataUriError {
    /// The A21 reason.
    pub fn reason(&self) -> FileErrorReason {
        match self {
            Self::Malformed(_) => FileErrorReason::MalformedFileUri,
            Self::InvalidMimeType => FileErrorReason::InvalidMimeType,
            Self::TooLarge { .. } => FileErrorReason::MaxSizeExceeded,
        }
    }
}

/// A parsed, not yet decoded `data:` URI borrowing the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataUri<'a> {
    media_type: String,
    base64: bool,
    payload: &'a str,
}

/// Whether `s` starts with `data:` (case-insensitive).
pub fn is_data_uri(s: &str) -> bool {
    s.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("data:"))
}

impl<'a> DataUri<'a> {
    /// Parses the envelope; the payload is checked for well-formedness but not decoded.
    pub fn parse(s: &'a str) -> Result<Self, DataUriError> {
        if !is_data_uri(s) {
            return Err(DataUriError::Malformed("missing the data: scheme"));
        }
        let rest = &s[5..];
        let (header, payload) = rest
            .split_once(',')
            .ok_or(DataUriError::Malformed("missing the ',' before the data"))?;
        let mut params: Vec<&str> = header.split(';').collect();
        let base64 = params
            .last()
            .is_some_and(|p| p.trim().eq_ignore_ascii_case("base64"))
            && params.len() > 1;
        if base64 {
            params.pop();
        }
        let mime = params.first().map(|m| m.trim()).unwrap_or_default();
        let media_type = if mime.is_empty() {
            let extra: Vec<&str> = params.iter().skip(1).copied().collect();
            if extra.is_empty() {
                DEFAULT_MEDIA_TYPE.to_owned()
            } else {
                format!("text/plain;{}", extra.join(";"))
            }
        } else {
            if !is_valid_mime(mime) {
                return Err(DataUriError::InvalidMimeType);
            }
            params.join(";")
        };
        let uri = Self {
            media_type,
            base64,
            payload,
        };
        uri.check_payload()?;
        Ok(uri)
    }

    fn check_payload(&self) -> Result<(), DataUriError> {
        let bytes = self.payload.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' {
                let ok = bytes.len() > i + 2
                    && bytes[i + 1].is_ascii_hexdigit()
                    && bytes[i + 2].is_ascii_hexdigit();
                if !ok {
                    return Err(DataUriError::Malformed("bad percent escape"));
                }
                i += 3;
            } else {
                i += 1;
            }
        }
        if self.base64 {
            check_base64(&self.unescaped())?;
        }
        Ok(())
    }

    fn unescaped(&self) -> std::borrow::Cow<'a, [u8]> {
        percent_encoding::percent_decode_str(self.payload).into()
    }

    /// The full media type, parameters included (default applied).
    pub fn media_type(&self) -> &str {
        &self.media_type
    }

    /// The lower-cased `type/subtype`, for `accept` matching.
    pub fn essence(&self) -> String {
        mime_essence(&self.media_type)
    }

    /// Whether the payload is base64.
    pub fn is_base64(&self) -> bool {
        self.base64
    }

    /// The decoded byte count, computed without decoding.
    pub fn decoded_len(&self) -> u64 {
        if self.base64 {
            let text = self.unescaped();
            let pad = text.iter().rev().take_while(|b| **b == b'=').count();
            (text.len() / 4 * 3).saturating_sub(pad) as u64
        } else {
            let escapes = self.payload.bytes().filter(|b| *b == b'%').count();
            (self.payload.len() - 2 * escapes) as u64
        }
    }

    /// Decodes, refusing before any decoding when the size exceeds `max_size`.
    pub fn decode(&self, max_size: Option<u64>) -> Result<Vec<u8>, DataUriError> {
        let actual = self.decoded_len();
        if let Some(max) = max_size
            && actual > max
        {
            return Err(DataUriError::TooLarge { max, actual });
        }
        if self.base64 {
            base64::engine::general_purpose::STANDARD
                .decode(self.unescaped())
                .map_err(|_| DataUriError::Malformed("invalid base64"))
        } else {
            Ok(self.unescaped().into_owned())
        }
    }
}

/// Strict base64: the standard alphabet, length a multiple of 4, at most two `=` and only at
/// the end, and zero unused bits in the last data character (canonical).
fn check_base64(text: &[u8]) -> Result<(), DataUriError> {
    let pad = text.iter().rev().take_while(|b| **b == b'=').count();
    let data = &text[..text.len() - pad];
    if let Some(b) = data.iter().find(|b| !is_base64_char(**b)) {
        return Err(DataUriError::Malformed(match b {
            b'=' => "base64 padding '=' before the end",
            b if b.is_ascii_whitespace() => "whitespace in base64",
            _ => "a character outside the base64 alphabet",
        }));
    }
    if pad > 2 || !text.len().is_multiple_of(4) {
        return Err(DataUriError::Malformed(
            "base64 length is not a multiple of 4 with canonical '=' padding",
        ));
    }
    // The bits of the last character that fall beyond the data must be zero.
    let unused_mask = match pad {
        1 => 0b11,
        2 => 0b1111,
        _ => 0,
    };
    if let Some(last) = data.last()
        && base64_value(*last) & unused_mask != 0
    {
        return Err(DataUriError::Malformed(
            "non-canonical base64 (unused bits set)",
        ));
    }
    Ok(())
}

fn is_base64_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/'
}

fn base64_value(b: u8) -> u8 {
    match b {
        b'A'..=b'Z' => b - b'A',
        b'a'..=b'z' => b - b'a' + 26,
        b'0'..=b'9' => b - b'0' + 52,
        b'+' => 62,
        _ => 63,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_form() -> Result<(), DataUriError> {
        let u = DataUri::parse("data:text/plain;base64,SGVsbG8gd29ybGQh")?;
        assert!(u.is_base64());
        assert_eq!(u.essence(), "text/plain");
        assert_eq!(u.decoded_len(), 12);
        assert_eq!(u.decode(Some(12))?, b"Hello world!");
        assert_eq!(
            u.decode(Some(11)),
            Err(DataUriError::TooLarge {
                max: 11,
                actual: 12
            })
        );
        for (text, len) in [
            ("", 0),
            ("YQ==", 1),
            ("YWI=", 2),
            ("YWJj", 3),
            ("YW%4A%6a", 3),
        ] {
            let s = format!("data:application/octet-stream;base64,{text}");
            let u = DataUri::parse(&s)?;
            assert_eq!(u.decoded_len(), len, "{s}");
            assert_eq!(u.decode(None)?.len() as u64, len, "{s}");
        }
        Ok(())
    }

    #[test]
    fn percent_form_and_default_type() -> Result<(), DataUriError> {
        let u = DataUri::parse("data:,A%20brief%20note")?;
        assert_eq!(u.media_type(), DEFAULT_MEDIA_TYPE);
        assert_eq!(u.essence(), "text/plain");
        assert_eq!(u.decoded_len(), 12);
        assert_eq!(u.decode(None)?, b"A brief note");
        let u = DataUri::parse("data:;charset=utf-8,x")?;
        assert_eq!(u.media_type(), "text/plain;charset=utf-8");
        let u = DataUri::parse("DATA:Image/PNG;name=a.png;base64,iVBORw0KGgo=")?;
        assert_eq!(u.essence(), "image/png");
        assert_eq!(u.decoded_len(), 8);
        Ok(())
    }

    #[test]
    fn malformed() {
        assert!(matches!(
            DataUri::parse("data:text/plain;base64"),
            Err(DataUriError::Malformed(_))
        ));
        assert!(matches!(
            DataUri::parse("data:,100%"),
            Err(DataUriError::Malformed(_))
        ));
        assert!(matches!(
            DataUri::parse("data:text/plain;base64,A"),
            Err(DataUriError::Malformed(_))
        ));
        assert_eq!(
            DataUri::parse("data:notamime;base64,AA==").err(),
            Some(DataUriError::InvalidMimeType)
        );
        let bad = DataUri::parse("data:a/b;base64,!!!!");
        assert!(matches!(
            bad.and_then(|u| u.decode(None)),
            Err(DataUriError::Malformed(_))
        ));
        assert!(!is_data_uri("https://x"));
    }

    #[test]
    fn base64_is_strict_and_canonical() {
        for bad in [
            "YQ",       // padding missing
            "YWI",      // padding missing
            "YQ=",      // padding short
            "YQ===",    // padding long
            "YQ==YQ==", // '=' in the middle
            "Y=Q=",     // '=' in the middle
            "YW Jj",    // whitespace
            "YWJj\n",   // whitespace at the end
            "%20YWJj",  // whitespace, percent-encoded
            "YR==",     // unused bits set ("YQ==" is the canonical 'a')
            "YWJ=YWJj", // '=' inside
            "YW-j",     // base64url alphabet
            "====",     // padding only
        ] {
            let s = format!("data:application/octet-stream;base64,{bad}");
            assert!(
                matches!(DataUri::parse(&s), Err(DataUriError::Malformed(_))),
                "{bad:?} must be refused"
            );
        }
        // The refusal names the problem, never the payload.
        let e = DataUri::parse("data:a/b;base64,c2VjcmV0=c2VjcmV0").err();
        assert_eq!(
            e.map(|e| e.to_string()),
            Some("malformed data: URI: base64 padding '=' before the end".to_owned())
        );
    }
}
