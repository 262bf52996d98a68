//! How the client makes its HTTP connections: the CAs it trusts, the connect timeout and the
//! HTTP version, the same for the MCP endpoint and for SEP-2631 descriptor URLs.

use std::time::Duration;

/// The HTTP version the client speaks to the server and to its file descriptor URLs
/// ([`ClientBuilder::http_version`](crate::ClientBuilder::http_version)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpVersion {
    /// HTTP/1.1 over `http://`; over `https://` HTTP/2 when the server offers it in TLS ALPN,
    /// else HTTP/1.1. The default.
    #[default]
    Auto,
    /// HTTP/1.1 only, also where the server offers HTTP/2 (ALPN offers only `http/1.1`).
    Http1,
    /// HTTP/2 only: ALPN offers only `h2` over `https://`, and `http://` speaks HTTP/2 with
    /// prior knowledge (h2c). A server without HTTP/2 fails the connection.
    Http2,
}

impl std::str::FromStr for HttpVersion {
    type Err = String;

    /// `auto`, `1.1` (or `1`, `http1.1`) and `2` (or `http2`), case-insensitive.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "1" | "1.1" | "http1" | "http1.1" | "http/1.1" => Ok(Self::Http1),
            "2" | "http2" | "http/2" | "h2" => Ok(Self::Http2),
            _ => Err(format!(
                "unknown HTTP version {s:?} (expected auto, 1.1 or 2)"
            )),
        }
    }
}

/// What every HTTP client of one [`Client`](crate::Client) shares.
#[derive(Debug, Clone, Default)]
pub(crate) struct HttpSettings {
    /// CAs trusted besides the platform's.
    pub(crate) roots: Vec<reqwest::Certificate>,
    /// Bound on TCP connect and TLS handshake.
    pub(crate) connect_timeout: Option<Duration>,
    /// The HTTP version spoken.
    pub(crate) version: HttpVersion,
}

impl HttpSettings {
    /// A reqwest builder with these settings and no redirects; callers add their own.
    pub(crate) fn builder(&self) -> reqwest::ClientBuilder {
        let mut builder = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none());
        for root in &self.roots {
            builder = builder.add_root_certificate(root.clone());
        }
        if let Some(t) = self.connect_timeout {
            builder = builder.connect_timeout(t);
        }
        match self.version {
            HttpVersion::Auto => builder,
            HttpVersion::Http1 => builder.http1_only(),
            HttpVersion::Http2 => builder.http2_prior_knowledge(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_as_curl_and_users_spell_them() {
        for (text, v) in [
            ("auto", HttpVersion::Auto),
            ("1.1", HttpVersion::Http1),
            ("HTTP/1.1", HttpVersion::Http1),
            ("2", HttpVersion::Http2),
            ("h2", HttpVersion::Http2),
        ] {
            assert_eq!(text.parse::<HttpVersion>(), Ok(v), "{text}");
        }
        let err = "3".parse::<HttpVersion>().unwrap_err();
        assert!(
            err.contains("\"3\"") && err.contains("auto, 1.1 or 2"),
            "{err}"
        );
    }
}
