//! Bounded fetches of the authorization server's documents: metadata, JWKS, introspection.
//! Every fetch has a timeout and a size cap, follows no redirects, and speaks `https` only
//! (plain `http` only to a loopback host, for development and tests).

use std::time::Duration;

use futures_util::StreamExt as _;
use serde::de::DeserializeOwned;

use super::verifier::TokenError;

/// The limits of one fetch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FetchLimits {
    pub(crate) timeout: Duration,
    pub(crate) max_bytes: usize,
}

impl Default for FetchLimits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(5),
            max_bytes: 256 * 1024,
        }
    }
}

/// Whether `url` may be fetched: `https`, or `http` to a loopback host.
pub(crate) fn check_url(url: &str) -> Result<reqwest::Url, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if is_loopback(&parsed) => Ok(parsed),
        "http" => Err(format!(
            "{url:?} must use https (plain http is allowed only for a loopback host)"
        )),
        other => Err(format!("{url:?}: unsupported scheme {other:?}")),
    }
}

pub(crate) fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// An HTTP client for these fetches: no redirects, the timeout of `limits`.
pub(crate) fn client(limits: FetchLimits) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(limits.timeout)
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// Sends `request` and reads a JSON body of at most `limits.max_bytes`; `Ok(None)` on 404.
pub(crate) async fn json<T: DeserializeOwned>(
    request: reqwest::RequestBuilder,
    what: &str,
    limits: FetchLimits,
) -> Result<Option<T>, TokenError> {
    let unavailable = |msg: String| TokenError::Unavailable(format!("{what}: {msg}"));
    let response = request
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| unavailable(without_url(&e)))?;
    let status = response.status();
    if status == reqwest::StatusCode::NOT_FOUND {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(unavailable(format!("HTTP {status}")));
    }
    if response
        .content_length()
        .is_some_and(|n| n > limits.max_bytes as u64)
    {
        return Err(unavailable(format!(
            "larger than {} bytes",
            limits.max_bytes
        )));
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| unavailable(without_url(&e)))?;
        if body.len() + chunk.len() > limits.max_bytes {
            return Err(unavailable(format!(
                "larger than {} bytes",
                limits.max_bytes
            )));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| unavailable(format!("not the expected JSON: {e}")))
}

/// A reqwest error's message without its URL (which may carry a query the caller put a
/// secret in).
fn without_url(error: &reqwest::Error) -> String {
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "connection failed"
    } else if error.is_body() || error.is_decode() {
        "could not read the body"
    } else {
        "request failed"
    };
    kind.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_is_required_except_on_loopback() {
        assert!(check_url("https://as.example/").is_ok());
        assert!(check_url("http://127.0.0.1:8080/").is_ok());
        assert!(check_url("http://[::1]:8080/").is_ok());
        assert!(check_url("http://localhost:8080/").is_ok());
        let refused = check_url("http://as.example/").unwrap_err();
        assert!(refused.contains("must use https"), "{refused}");
        assert!(check_url("ftp://as.example/").is_err());
        assert!(check_url("not a url").is_err());
    }
}
