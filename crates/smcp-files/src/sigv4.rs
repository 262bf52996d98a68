//! AWS Signature Version 4 for query-string presigned S3 URLs (feature `s3`).
//!
//! `object_store`'s signer can bind extra headers to a presigned URL, but not
//! `content-length`; a presigned upload must bind the exact size as well as the
//! `x-amz-checksum-sha256` digest, so the store refuses any other body. This is the public
//! algorithm (AWS: "Authenticating Requests: Using Query Parameters"), over `sha2` and `hmac`,
//! checked against AWS's published S3 examples (`tests/data/sigv4-aws-s3-examples.json`).

use hmac::Mac as _;
use sha2::{Digest as _, Sha256};

type HmacSha256 = hmac::Hmac<Sha256>;

/// The signing algorithm's name.
const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// What query-string signatures sign instead of the body's hash.
pub(crate) const UNSIGNED_PAYLOAD: &str = "UNSIGNED-PAYLOAD";

/// The longest validity SigV4 allows a presigned URL (7 days), seconds.
pub(crate) const MAX_EXPIRES: u64 = 7 * 24 * 3600;

/// The credentials a request is signed with.
#[derive(Clone)]
pub(crate) struct Credentials {
    /// `AWS_ACCESS_KEY_ID`.
    pub(crate) key_id: String,
    /// `AWS_SECRET_ACCESS_KEY`.
    pub(crate) secret: String,
    /// `AWS_SESSION_TOKEN`, for temporary credentials.
    pub(crate) token: Option<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

/// One request to presign.
#[derive(Debug)]
pub(crate) struct Presign<'a> {
    /// `GET`, `PUT`, `HEAD`.
    pub(crate) method: &'a str,
    /// `scheme://host[:port]`, without a trailing slash.
    pub(crate) origin: &'a str,
    /// The `Host` header the client will send (the origin's authority).
    pub(crate) host: &'a str,
    /// The path, already URI-encoded ([`encode_path`]).
    pub(crate) path: &'a str,
    /// Query parameters besides the signature's own (unencoded).
    pub(crate) query: &'a [(&'a str, &'a str)],
    /// Headers besides `host` the request must carry with exactly these values (names in
    /// lowercase).
    pub(crate) headers: &'a [(&'a str, &'a str)],
    /// The region.
    pub(crate) region: &'a str,
    /// Unix seconds of the signature.
    pub(crate) now: u64,
    /// Validity from `now`, seconds (at most [`MAX_EXPIRES`]).
    pub(crate) expires: u64,
}

/// The presigned URL of `request`.
pub(crate) fn presign(credentials: &Credentials, request: &Presign<'_>) -> String {
    let amz_date = amz_date(request.now);
    let date = &amz_date[..8];
    let scope = format!("{date}/{}/s3/aws4_request", request.region);
    let mut headers: Vec<(String, String)> = vec![("host".to_owned(), request.host.to_owned())];
    headers.extend(
        request
            .headers
            .iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), (*v).to_owned())),
    );
    let signed = signed_headers(&headers);
    let credential = format!("{}/{scope}", credentials.key_id);
    let expires = request.expires.clamp(1, MAX_EXPIRES).to_string();
    let mut query: Vec<(&str, &str)> = request.query.to_vec();
    query.extend([
        ("X-Amz-Algorithm", ALGORITHM),
        ("X-Amz-Credential", credential.as_str()),
        ("X-Amz-Date", amz_date.as_str()),
        ("X-Amz-Expires", expires.as_str()),
        ("X-Amz-SignedHeaders", signed.as_str()),
    ]);
    if let Some(token) = &credentials.token {
        query.push(("X-Amz-Security-Token", token.as_str()));
    }
    let canonical_query = canonical_query(&query);
    let canonical = canonical_request(
        request.method,
        request.path,
        &canonical_query,
        &headers,
        UNSIGNED_PAYLOAD,
    );
    let signature = signature(&credentials.secret, request.region, &amz_date, &canonical);
    format!(
        "{}{}?{canonical_query}&X-Amz-Signature={signature}",
        request.origin, request.path
    )
}

/// `YYYYMMDDTHHMMSSZ` of Unix seconds.
pub(crate) fn amz_date(unix: u64) -> String {
    let rfc = smcp_proto::time::rfc3339(i64::try_from(unix).unwrap_or(i64::MAX));
    rfc.chars().filter(|c| !matches!(c, '-' | ':')).collect()
}

/// AWS's URI encoding: every byte but `A-Z a-z 0-9 - _ . ~` as `%XX` (uppercase).
pub(crate) fn uri_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// An object key as a URI path: each `/`-separated segment encoded, with a leading `/`.
pub(crate) fn encode_path(key: &str) -> String {
    key.split('/')
        .map(uri_encode)
        .fold(String::new(), |mut acc, s| {
            acc.push('/');
            acc.push_str(&s);
            acc
        })
}

/// The canonical query string: encoded names and values, sorted.
fn canonical_query(query: &[(&str, &str)]) -> String {
    let mut pairs: Vec<(String, String)> = query
        .iter()
        .map(|(k, v)| (uri_encode(k), uri_encode(v)))
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// The signed header names, lowercase, sorted, `;`-separated.
fn signed_headers(headers: &[(String, String)]) -> String {
    let mut names: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
    names.sort_unstable();
    names.join(";")
}

/// A header value as signed: trimmed, inner runs of spaces collapsed to one.
fn canonical_value(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The canonical request (`headers`' names lowercase).
pub(crate) fn canonical_request(
    method: &str,
    path: &str,
    canonical_query: &str,
    headers: &[(String, String)],
    payload_hash: &str,
) -> String {
    let mut sorted: Vec<&(String, String)> = headers.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let canonical_headers: String = sorted
        .iter()
        .map(|(k, v)| format!("{k}:{}\n", canonical_value(v)))
        .collect();
    format!(
        "{method}\n{path}\n{canonical_query}\n{canonical_headers}\n{}\n{payload_hash}",
        signed_headers(headers)
    )
}

/// The hex signature of `canonical_request` at `amz_date` in `region`'s S3 scope.
pub(crate) fn signature(
    secret: &str,
    region: &str,
    amz_date: &str,
    canonical_request: &str,
) -> String {
    let date = amz_date.get(..8).unwrap_or_default();
    let scope = format!("{date}/{region}/s3/aws4_request");
    let string_to_sign = format!(
        "{ALGORITHM}\n{amz_date}\n{scope}\n{}",
        hex(&Sha256::digest(canonical_request.as_bytes()))
    );
    let mut key = hmac(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    for part in [region, "s3", "aws4_request"] {
        key = hmac(&key, part.as_bytes());
    }
    hex(&hmac(&key, string_to_sign.as_bytes()))
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    // HMAC takes a key of any length: `new_from_slice` cannot fail.
    match <HmacSha256 as hmac::KeyInit>::new_from_slice(key) {
        Ok(mut mac) => {
            mac.update(data);
            mac.finalize().into_bytes().to_vec()
        }
        Err(_) => Vec::new(),
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn vectors() -> Value {
        serde_json::from_str(include_str!("../tests/data/sigv4-aws-s3-examples.json"))
            .expect("the vectors parse")
    }

    fn pairs(v: &Value) -> Vec<(String, String)> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                (
                    p[0].as_str().unwrap_or_default().to_owned(),
                    p[1].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn aws_header_examples() {
        let v = vectors();
        let secret = v["secret_access_key"].as_str().unwrap_or_default();
        let region = v["region"].as_str().unwrap_or_default();
        let amz = v["amz_date"].as_str().unwrap_or_default();
        let examples = v["header_examples"].as_array().cloned().unwrap_or_default();
        assert_eq!(examples.len(), 3);
        for ex in examples {
            let query = pairs(&ex["query"]);
            let query: Vec<(&str, &str)> = query
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let canonical = canonical_request(
                ex["method"].as_str().unwrap_or_default(),
                ex["path"].as_str().unwrap_or_default(),
                &canonical_query(&query),
                &pairs(&ex["headers"]),
                ex["payload_hash"].as_str().unwrap_or_default(),
            );
            assert_eq!(
                signature(secret, region, amz, &canonical),
                ex["signature"].as_str().unwrap_or_default(),
                "{}",
                ex["name"]
            );
        }
    }

    #[test]
    fn aws_presigned_example() {
        let v = vectors();
        let ex = &v["presigned_example"];
        let credentials = Credentials {
            key_id: v["access_key_id"].as_str().unwrap_or_default().to_owned(),
            secret: v["secret_access_key"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            token: None,
        };
        let url = presign(
            &credentials,
            &Presign {
                method: "GET",
                origin: ex["origin"].as_str().unwrap_or_default(),
                host: "examplebucket.s3.amazonaws.com",
                path: ex["path"].as_str().unwrap_or_default(),
                query: &[],
                headers: &[],
                region: "us-east-1",
                now: ex["unix_time"].as_u64().unwrap_or_default(),
                expires: ex["expires"].as_u64().unwrap_or_default(),
            },
        );
        assert_eq!(url, ex["url"].as_str().unwrap_or_default());
    }

    #[test]
    fn extra_headers_and_tokens_are_signed() {
        let credentials = Credentials {
            key_id: "AK".into(),
            secret: "SK".into(),
            token: Some("tok/en=".into()),
        };
        let sign = |len: &str| {
            presign(
                &credentials,
                &Presign {
                    method: "PUT",
                    origin: "http://127.0.0.1:9000",
                    host: "127.0.0.1:9000",
                    path: "/bucket/blobs/ab",
                    query: &[],
                    headers: &[("Content-Length", len), ("x-amz-checksum-sha256", "q83v")],
                    region: "us-east-1",
                    now: 1_369_353_600,
                    expires: 300,
                },
            )
        };
        let url = sign("5");
        assert!(
            url.contains("X-Amz-SignedHeaders=content-length%3Bhost%3Bx-amz-checksum-sha256"),
            "{url}"
        );
        assert!(url.contains("X-Amz-Security-Token=tok%2Fen%3D"), "{url}");
        // Another length is another signature.
        assert_ne!(url, sign("6"));
        assert_eq!(amz_date(1_369_353_600), "20130524T000000Z");
        assert_eq!(encode_path("a b/c$d"), "/a%20b/c%24d");
        assert_eq!(
            canonical_value("  text/plain;   charset=utf-8 "),
            "text/plain; charset=utf-8"
        );
    }
}
