//! Who may use the inspector: the page opened from the URL it printed, on this machine.
//!
//! - The URL carries a one-time token. Its first use sets a session cookie (`HttpOnly`,
//!   `SameSite=Strict`, named after the port) and redirects to `/`, so the token leaves the
//!   address bar and history; a second use is refused.
//! - Every other request needs that cookie.
//! - The `Host` must be a loopback name with the inspector's port (a DNS-rebinding page
//!   sends its own host name), and an `Origin`, when sent, must be the inspector's own
//!   origin; a state-changing request must send one. An MCP App's frame is sandboxed
//!   without `allow-same-origin`, so its requests say `Origin: null` and are refused.

use std::sync::atomic::{AtomicBool, Ordering};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The secrets and the port the inspector's requests are checked against.
#[derive(Debug)]
pub(crate) struct Guard {
    token: String,
    session: String,
    port: u16,
    used: AtomicBool,
}

/// Why a request is refused (the page shows the message; none echoes a secret).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The `Host` is not this inspector on loopback.
    Host,
    /// The `Origin` is another site (or an opaque one).
    Origin,
    /// A state-changing request without an `Origin`.
    NoOrigin,
    /// No session cookie, or a wrong one.
    NoSession,
    /// The URL's token is wrong or was used already.
    Token,
}

impl Refusal {
    fn message(self) -> &'static str {
        match self {
            Self::Host => "refused: the Host header is not this inspector on 127.0.0.1/localhost",
            Self::Origin => "refused: the request comes from another origin",
            Self::NoOrigin => "refused: a state-changing request must send its Origin",
            Self::NoSession => {
                "refused: open the inspector from the URL `smcp inspect` printed (it carries a one-time token)"
            }
            Self::Token => {
                "refused: this inspector URL was used already or its token is wrong; \
                 run `smcp inspect` again for a new one"
            }
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let status = match self {
            Self::Host => StatusCode::MISDIRECTED_REQUEST,
            _ => StatusCode::FORBIDDEN,
        };
        let body = serde_json::json!({ "error": self.message() }).to_string();
        (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
    }
}

/// A random secret of 32 bytes, as hex.
pub(crate) fn secret() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(std::io::Error::other)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl Guard {
    pub(crate) fn new(port: u16) -> std::io::Result<Self> {
        Ok(Self {
            token: secret()?,
            session: secret()?,
            port,
            used: AtomicBool::new(false),
        })
    }

    /// The URL to open.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/?token={}", self.port, self.token)
    }

    fn cookie_name(&self) -> String {
        format!("smcp_inspect_{}", self.port)
    }

    fn host_ok(&self, headers: &HeaderMap) -> bool {
        let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
            return false;
        };
        let port = self.port.to_string();
        ["127.0.0.1", "localhost", "[::1]"]
            .iter()
            .any(|name| host.strip_prefix(name).and_then(|r| r.strip_prefix(':')) == Some(&port))
    }

    fn origin_ok(&self, origin: &str) -> bool {
        let port = self.port.to_string();
        ["http://127.0.0.1", "http://localhost", "http://[::1]"]
            .iter()
            .any(|o| origin.strip_prefix(o).and_then(|r| r.strip_prefix(':')) == Some(&port))
    }

    fn session_ok(&self, headers: &HeaderMap) -> bool {
        let name = self.cookie_name();
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .any(|(n, v)| n == name && constant_time_eq(v.as_bytes(), self.session.as_bytes()))
    }

    /// Checks a request; `Ok(Some(response))` answers it here (the token's redirect).
    pub(crate) fn check(
        &self,
        method: &Method,
        path: &str,
        query: Option<&str>,
        headers: &HeaderMap,
    ) -> Result<Option<Response>, Refusal> {
        if !self.host_ok(headers) {
            return Err(Refusal::Host);
        }
        match headers
            .get(header::ORIGIN)
            .map(|o| o.to_str().unwrap_or(""))
        {
            Some(origin) if !self.origin_ok(origin) => return Err(Refusal::Origin),
            None if *method != Method::GET && *method != Method::HEAD => {
                return Err(Refusal::NoOrigin);
            }
            _ => {}
        }
        let token = query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .find_map(|pair| pair.strip_prefix("token="));
        if path == "/"
            && let Some(token) = token
        {
            if !constant_time_eq(token.as_bytes(), self.token.as_bytes())
                || self.used.swap(true, Ordering::SeqCst)
            {
                return Err(Refusal::Token);
            }
            let cookie = format!(
                "{}={}; HttpOnly; SameSite=Strict; Path=/",
                self.cookie_name(),
                self.session
            );
            return Ok(Some(
                Response::builder()
                    .status(StatusCode::SEE_OTHER)
                    .header(header::LOCATION, "/")
                    .header(header::SET_COOKIE, cookie)
                    .header(header::CACHE_CONTROL, "no-store")
                    .body(Body::empty())
                    .unwrap_or_default(),
            ));
        }
        if !self.session_ok(headers) {
            return Err(Refusal::NoSession);
        }
        Ok(None)
    }
}

/// Compares two secrets without stopping at the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The middleware: every request passes [`Guard::check`].
pub(crate) async fn layer(
    State(guard): State<std::sync::Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
    let uri = request.uri().clone();
    match guard.check(request.method(), uri.path(), uri.query(), request.headers()) {
        Err(refusal) => {
            tracing::info!(path = uri.path(), ?refusal, "inspector request refused");
            refusal.into_response()
        }
        Ok(Some(answer)) => answer,
        Ok(None) => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (n, v) in pairs {
            h.append(*n, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn the_token_works_once_and_sets_the_session_cookie() {
        let guard = Guard::new(4000).unwrap();
        let query = format!("token={}", guard.token);
        let host = headers(&[("host", "127.0.0.1:4000")]);
        let answer = guard
            .check(&Method::GET, "/", Some(&query), &host)
            .unwrap()
            .unwrap();
        assert_eq!(answer.status(), StatusCode::SEE_OTHER);
        let cookie = answer.headers()[header::SET_COOKIE].to_str().unwrap();
        assert!(cookie.starts_with("smcp_inspect_4000=") && cookie.contains("HttpOnly"));
        assert_eq!(
            guard
                .check(&Method::GET, "/", Some(&query), &host)
                .unwrap_err(),
            Refusal::Token
        );
        let pair = cookie.split(';').next().unwrap();
        let with = headers(&[("host", "localhost:4000"), ("cookie", pair)]);
        assert!(
            guard
                .check(&Method::GET, "/api/tools", None, &with)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn wrong_hosts_origins_and_sessions_are_refused() {
        let guard = Guard::new(4000).unwrap();
        let good = format!("smcp_inspect_4000={}", guard.session);
        let other_port = format!("smcp_inspect_4001={}", guard.session);
        let cases = [
            (
                Method::GET,
                vec![("host", "evil.example:4000"), ("cookie", good.as_str())],
                Refusal::Host,
            ),
            (
                Method::GET,
                vec![("host", "127.0.0.1:4001"), ("cookie", good.as_str())],
                Refusal::Host,
            ),
            (Method::GET, vec![("cookie", good.as_str())], Refusal::Host),
            (
                Method::POST,
                vec![
                    ("host", "127.0.0.1:4000"),
                    ("cookie", &good),
                    ("origin", "null"),
                ],
                Refusal::Origin,
            ),
            (
                Method::GET,
                vec![
                    ("host", "127.0.0.1:4000"),
                    ("cookie", &good),
                    ("origin", "http://evil.example"),
                ],
                Refusal::Origin,
            ),
            (
                Method::POST,
                vec![("host", "127.0.0.1:4000"), ("cookie", &good)],
                Refusal::NoOrigin,
            ),
            (
                Method::GET,
                vec![("host", "127.0.0.1:4000")],
                Refusal::NoSession,
            ),
            (
                Method::GET,
                vec![
                    ("host", "127.0.0.1:4000"),
                    ("cookie", "smcp_inspect_4000=guess"),
                ],
                Refusal::NoSession,
            ),
            (
                Method::GET,
                vec![("host", "127.0.0.1:4000"), ("cookie", &other_port)],
                Refusal::NoSession,
            ),
        ];
        for (method, pairs, refusal) in cases {
            let got = guard.check(&method, "/api/tools", None, &headers(&pairs));
            assert_eq!(got.unwrap_err(), refusal, "{method} {pairs:?}");
        }
        let post = headers(&[
            ("host", "127.0.0.1:4000"),
            ("cookie", &good),
            ("origin", "http://127.0.0.1:4000"),
        ]);
        assert!(
            guard
                .check(&Method::POST, "/api/call", None, &post)
                .unwrap()
                .is_none()
        );
        let wrong = guard.check(
            &Method::GET,
            "/",
            Some("token=nope"),
            &headers(&[("host", "127.0.0.1:4000")]),
        );
        assert_eq!(wrong.unwrap_err(), Refusal::Token);
    }
}
