//! The MCP POST to a plain `http://` endpoint over hyper's connection pool, without reqwest's
//! layers around it.
//!
//! reqwest wraps every request in a redirect layer, a retry layer and a proxy matcher; the
//! redirect layer parses the request's URI into a `Url` on the way out and its response future
//! parses it again on the way back, also with redirects turned off. For an MCP POST to an
//! endpoint no proxy takes, none of that applies (the client follows no redirects and decides
//! itself what to resend: `retry.rs`), and it was a sixth of what a call through the gateway
//! cost. This path sends the same bytes over the same kind of pool: hyper-util's client,
//! with reqwest's defaults for the connection (no Nagle, TCP keep-alive every 15 s, idle
//! connections kept 90 s, the connect timeout of [`HttpSettings`]).
//!
//! It carries a request only when nothing reqwest adds is needed: `http://` without
//! credentials in the URL, HTTP/1.1 (`HttpVersion::Auto` or `Http1`; prior-knowledge HTTP/2
//! and TLS stay on reqwest), no proxy for the endpoint (reqwest's reading of the environment,
//! `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY`, made with the same matcher), and no OAuth session
//! or wire tap on the request (`gate.rs`).

use std::time::Duration;

use bytes::Bytes;
use http::header::{HOST, HeaderMap, HeaderValue};
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use super::direct_error::DirectError;
use super::http_client::{HttpSettings, HttpVersion};

/// How long an idle pooled connection is kept (reqwest's default).
const POOL_IDLE: Duration = Duration::from_secs(90);
/// TCP keep-alive: first probe, interval, probes before the connection is dropped (reqwest's
/// defaults).
const KEEPALIVE: Duration = Duration::from_secs(15);
const KEEPALIVE_RETRIES: u32 = 3;

/// A POST straight through hyper's pool to one `http://` endpoint. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct DirectHttp {
    client: Client<HttpConnector, Full<Bytes>>,
    uri: http::Uri,
    /// `Host`, as hyper-util would write it for every request (the host, and the port unless
    /// it is 80), made once.
    host: HeaderValue,
}

impl DirectHttp {
    /// The direct path to `url`, when it can carry requests there (see the module docs).
    pub(crate) fn for_endpoint(url: &reqwest::Url, settings: &HttpSettings) -> Option<Self> {
        Self::unless_proxied(url, settings, &Matcher::from_system())
    }

    /// [`for_endpoint`](Self::for_endpoint) with the proxies `proxies` names.
    fn unless_proxied(
        url: &reqwest::Url,
        settings: &HttpSettings,
        proxies: &Matcher,
    ) -> Option<Self> {
        if url.scheme() != "http"
            || !url.username().is_empty()
            || url.password().is_some()
            || url.fragment().is_some()
            || settings.version == HttpVersion::Http2
        {
            return None;
        }
        let uri: http::Uri = url.as_str().parse().ok()?;
        if proxies.intercept(&uri).is_some() {
            return None;
        }
        let host = match uri.port_u16() {
            Some(port) if port != 80 => format!("{}:{port}", uri.host()?),
            _ => uri.host()?.to_owned(),
        };
        let host = HeaderValue::from_str(&host).ok()?;
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(settings.connect_timeout);
        connector.set_keepalive(Some(KEEPALIVE));
        connector.set_keepalive_interval(Some(KEEPALIVE));
        connector.set_keepalive_retries(Some(KEEPALIVE_RETRIES));
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(POOL_IDLE)
            .build(connector);
        Some(Self { client, uri, host })
    }

    /// POSTs `body` with `headers` (the request's whole header map; a `Host` there is kept).
    pub(crate) async fn post(
        &self,
        mut headers: HeaderMap,
        body: Vec<u8>,
    ) -> Result<http::Response<hyper::body::Incoming>, DirectError> {
        headers.entry(HOST).or_insert_with(|| self.host.clone());
        let mut request = http::Request::new(Full::new(Bytes::from(body)));
        *request.method_mut() = http::Method::POST;
        *request.uri_mut() = self.uri.clone();
        *request.headers_mut() = headers;
        self.client
            .request(request)
            .await
            .map_err(DirectError::Send)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_11_without_credentials_takes_the_direct_path() {
        let settings = |version| HttpSettings {
            version,
            ..HttpSettings::default()
        };
        let url = |u: &str| reqwest::Url::parse(u).expect("a URL");
        for (u, version, direct) in [
            ("http://127.0.0.1:8931/mcp", HttpVersion::Auto, true),
            ("http://[::1]:8931/mcp?x=1", HttpVersion::Http1, true),
            ("http://127.0.0.1:8931/mcp", HttpVersion::Http2, false),
            ("https://127.0.0.1:8931/mcp", HttpVersion::Auto, false),
            (
                "http://user:secret@127.0.0.1:8931/mcp",
                HttpVersion::Auto,
                false,
            ),
            ("http://127.0.0.1:8931/mcp#frag", HttpVersion::Auto, false),
        ] {
            let got = DirectHttp::unless_proxied(&url(u), &settings(version), &no_proxy());
            assert_eq!(got.is_some(), direct, "{u} {version:?}");
        }
    }

    #[test]
    fn host_is_written_as_hyper_util_writes_it() {
        for (u, host) in [
            ("http://127.0.0.1:8931/mcp", "127.0.0.1:8931"),
            ("http://[::1]:8931/mcp", "[::1]:8931"),
            ("http://mcp.example.test/mcp", "mcp.example.test"),
            ("http://mcp.example.test:80/mcp", "mcp.example.test"),
            ("http://MCP.Example.TEST:8080/mcp", "mcp.example.test:8080"),
        ] {
            let url = reqwest::Url::parse(u).expect("a URL");
            let direct = DirectHttp::unless_proxied(&url, &HttpSettings::default(), &no_proxy())
                .expect("a direct path");
            assert_eq!(direct.host, host, "{u}");
        }
    }

    fn no_proxy() -> Matcher {
        Matcher::builder().build()
    }

    #[test]
    fn an_endpoint_behind_a_proxy_stays_on_reqwest() {
        let url = reqwest::Url::parse("http://mcp.internal.example:8931/mcp").expect("a URL");
        let settings = HttpSettings::default();
        let proxied = Matcher::builder().http("http://proxy.example:3128").build();
        assert!(DirectHttp::unless_proxied(&url, &settings, &proxied).is_none());
        let all = Matcher::builder().all("http://proxy.example:3128").build();
        assert!(DirectHttp::unless_proxied(&url, &settings, &all).is_none());
        let exempt = Matcher::builder()
            .http("http://proxy.example:3128")
            .no("mcp.internal.example")
            .build();
        assert!(DirectHttp::unless_proxied(&url, &settings, &exempt).is_some());
        assert!(DirectHttp::unless_proxied(&url, &settings, &no_proxy()).is_some());
    }
}
