//! Pure helpers shared by both legs and the test fixtures: sha-256 digests (base64url without
//! padding), RFC 2397 `data:` URIs, `accept` matching, multipart/form-data encoding and decoding,
//! and the fixture byte pattern.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use sha2::{Digest as _, Sha256};

/// `FileDigest.value` for `bytes`: base64url without padding of the SHA-256 (43 characters).
pub fn sha256_b64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(bytes))
}

/// The `FileDigest` JSON object for `bytes`.
pub fn digest_json(bytes: &[u8]) -> serde_json::Value {
    serde_json::json!({"algorithm": "sha-256", "value": sha256_b64url(bytes)})
}

/// True when `v` is a syntactically valid sha-256 digest value (43 base64url chars, no padding).
pub fn is_sha256_b64url(v: &str) -> bool {
    v.len() == 43 && URL_SAFE_NO_PAD.decode(v).is_ok_and(|d| d.len() == 32)
}

/// `files_generate` bytes: byte `i` is `i % 251`.
pub fn generated_bytes(size: usize) -> Vec<u8> {
    (0..size).map(|i| (i % 251) as u8).collect()
}

/// `data:<mime>;base64,<b64>`.
pub fn data_uri_base64(mime: &str, bytes: &[u8]) -> String {
    format!("data:{mime};base64,{}", STANDARD.encode(bytes))
}

/// `data:<mime>,<percent-encoded>` (every byte outside unreserved characters is `%XX`).
pub fn data_uri_percent(mime: &str, bytes: &[u8]) -> String {
    let mut s = format!("data:{mime},");
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// A decoded `data:` URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataUri {
    /// `type/subtype`, lower-cased; `text/plain` when omitted (RFC 2397 default).
    pub media_type: String,
    /// Parameters other than `base64`, as written.
    pub params: Vec<String>,
    /// Decoded bytes.
    pub bytes: Vec<u8>,
}

/// Why a `data:` URI did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DataUriError {
    /// Not `data:` at all.
    #[error("not a data: URI")]
    NotData,
    /// No comma separating the header from the data.
    #[error("data: URI has no ','")]
    NoComma,
    /// Bad base64 or percent escape.
    #[error("data: URI payload does not decode")]
    BadPayload,
    /// Media type is not `type/subtype`.
    #[error("data: URI media type is not type/subtype")]
    BadMediaType,
}

/// Parses an RFC 2397 `data:` URI (both the `;base64` and the percent-encoded form).
pub fn parse_data_uri(uri: &str) -> Result<DataUri, DataUriError> {
    let rest = uri
        .get(..5)
        .filter(|p| p.eq_ignore_ascii_case("data:"))
        .map(|_| &uri[5..])
        .ok_or(DataUriError::NotData)?;
    let (header, payload) = rest.split_once(',').ok_or(DataUriError::NoComma)?;
    let mut parts = header.split(';');
    let mt = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let mut base64 = false;
    let mut params = Vec::new();
    for p in parts {
        if p.eq_ignore_ascii_case("base64") {
            base64 = true;
        } else {
            params.push(p.to_owned());
        }
    }
    let media_type = if mt.is_empty() {
        "text/plain".to_owned()
    } else {
        mt
    };
    match media_type.split_once('/') {
        Some((t, s)) if !t.is_empty() && !s.is_empty() && !s.contains('/') => {}
        _ => return Err(DataUriError::BadMediaType),
    }
    let decoded = percent_decode(payload).ok_or(DataUriError::BadPayload)?;
    let bytes = if base64 {
        STANDARD
            .decode(&decoded)
            .map_err(|_| DataUriError::BadPayload)?
    } else {
        decoded
    };
    Ok(DataUri {
        media_type,
        params,
        bytes,
    })
}

/// Decodes `%XX` escapes; `None` on a broken escape.
pub fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

/// True when `media_type` (already `type/subtype`, any case, parameters allowed) matches one of
/// the `accept` entries. Dot-extension entries are picker hints and never match; an empty or
/// absent `accept` list accepts everything.
pub fn accept_matches(accept: &[String], media_type: &str) -> bool {
    let mt = media_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let mime_entries: Vec<&String> = accept.iter().filter(|a| !a.starts_with('.')).collect();
    if mime_entries.is_empty() {
        return true;
    }
    mime_entries.iter().any(|a| {
        let a = a
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match a.strip_suffix("/*") {
            Some(t) => mt.split_once('/').is_some_and(|(mt_t, _)| mt_t == t),
            None => a == "*/*" || a == mt,
        }
    })
}

/// Builds a `multipart/form-data` body: every `(name, value)` field, then the file under
/// `file_field`. Returns `(content_type_with_boundary, body)`.
pub fn multipart_encode(
    fields: &[(String, String)],
    file_field: &str,
    file_name: &str,
    mime: &str,
    bytes: &[u8],
) -> (String, Vec<u8>) {
    let boundary = format!(
        "sep2631-{}",
        &sha256_b64url(bytes).replace(['-', '_'], "x")[..24]
    );
    let mut body = Vec::with_capacity(bytes.len() + 512);
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    body.extend_from_slice(
        format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{file_field}\"; filename=\"{file_name}\"\r\nContent-Type: {mime}\r\n\r\n").as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// One decoded multipart part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// `name` from Content-Disposition.
    pub name: String,
    /// The part's bytes.
    pub data: Vec<u8>,
}

/// Decodes a `multipart/form-data` body given its Content-Type; `None` when malformed.
pub fn multipart_decode(content_type: &str, body: &[u8]) -> Option<Vec<Part>> {
    let boundary = content_type
        .split(';')
        .filter_map(|p| p.trim().strip_prefix("boundary="))
        .next()?
        .trim_matches('"');
    let delim = format!("--{boundary}");
    let mut parts = Vec::new();
    let mut pos = find(body, delim.as_bytes(), 0)? + delim.len();
    for _ in 0..1024 {
        if body.get(pos..pos + 2)? == b"--" {
            return Some(parts);
        }
        pos += 2; // CRLF after the delimiter
        let header_end = find(body, b"\r\n\r\n", pos)?;
        let headers = std::str::from_utf8(&body[pos..header_end]).ok()?;
        let name = headers
            .split(';')
            .filter_map(|p| p.trim().strip_prefix("name="))
            .next()?
            .split("\r\n")
            .next()?
            .trim_matches('"')
            .to_owned();
        let data_start = header_end + 4;
        let next = find(body, format!("\r\n{delim}").as_bytes(), data_start)?;
        parts.push(Part {
            name,
            data: body[data_start..next].to_vec(),
        });
        pos = next + 2 + delim.len();
    }
    None
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_uris_decode() {
        let d = parse_data_uri("data:text/plain;base64,SGVsbG8gd29ybGQh").unwrap();
        assert_eq!(d.bytes, b"Hello world!");
        let d = parse_data_uri(&data_uri_percent("TEXT/Plain;charset=utf-8", b"a b%")).unwrap();
        assert_eq!(
            (d.media_type.as_str(), d.bytes.as_slice()),
            ("text/plain", &b"a b%"[..])
        );
        assert_eq!(parse_data_uri("data:,x").unwrap().media_type, "text/plain");
        assert!(parse_data_uri("data:text/plain;base64,@@").is_err());
        assert!(parse_data_uri("mcp-file://x").is_err());
    }

    #[test]
    fn accept_rules() {
        let a = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert!(accept_matches(&a(&["image/*"]), "IMAGE/PNG"));
        assert!(!accept_matches(&a(&["image/*"]), "text/plain"));
        assert!(accept_matches(
            &a(&["text/plain"]),
            "text/plain; charset=utf-8"
        ));
        assert!(accept_matches(&a(&[".pdf"]), "application/pdf"));
        assert!(!accept_matches(
            &a(&[".pdf", "text/plain"]),
            "application/pdf"
        ));
    }

    #[test]
    fn multipart_round_trip_and_digest() {
        let fields = vec![("token".to_owned(), "abc".to_owned())];
        let (ct, body) = multipart_encode(
            &fields,
            "file",
            "f.bin",
            "application/octet-stream",
            b"\r\n--x\r\n",
        );
        let parts = multipart_decode(&ct, &body).unwrap();
        assert_eq!(
            parts[0],
            Part {
                name: "token".into(),
                data: b"abc".to_vec()
            }
        );
        assert_eq!(parts[1].data, b"\r\n--x\r\n");
        assert!(is_sha256_b64url(&sha256_b64url(b"")));
        assert_eq!(
            sha256_b64url(b""),
            "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"
        );
    }
}
