//! The browser step, pluggable: [`Authorizer`] gets the authorization URL and returns the
//! redirect's query. [`LoopbackAuthorizer`] opens a browser (or prints the URL) and listens on
//! 127.0.0.1; [`HeadlessAuthorizer`] GETs the URL and reads the redirect's `Location` (for
//! authorization servers that redirect without a user, as in tests).

use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::AuthError;

/// The parameters of the redirect back to the client (RFC 6749 §4.1.2, RFC 9207).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AuthorizationResponse {
    /// `code`.
    pub code: Option<String>,
    /// `state`.
    pub state: Option<String>,
    /// `iss` (RFC 9207).
    pub iss: Option<String>,
    /// `error`, when the server refused.
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
}

impl std::fmt::Debug for AuthorizationResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthorizationResponse")
            .field("code", &self.code.as_ref().map(|_| "<redacted>"))
            .field("state", &self.state.as_ref().map(|_| "<redacted>"))
            .field("iss", &self.iss)
            .field("error", &self.error)
            .finish()
    }
}

impl AuthorizationResponse {
    /// Reads the parameters from a redirect URL or its query string.
    pub fn from_query(query: &str) -> Self {
        let query = query.split_once('?').map_or(query, |(_, q)| q);
        let query = query.split_once('#').map_or(query, |(q, _)| q);
        let mut out = Self::default();
        for (k, v) in url_pairs(query) {
            let slot = match k.as_str() {
                "code" => &mut out.code,
                "state" => &mut out.state,
                "iss" => &mut out.iss,
                "error" => &mut out.error,
                "error_description" => &mut out.error_description,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(v);
            }
        }
        out
    }
}

fn url_pairs(query: &str) -> Vec<(String, String)> {
    reqwest::Url::parse(&format!("http://x/?{query}"))
        .map(|u| u.query_pairs().into_owned().collect())
        .unwrap_or_default()
}

/// The user-agent step of the authorization code flow.
///
/// Implement it to drive a real browser, an embedded web view, or a test's login form.
pub trait Authorizer: Send + Sync + std::fmt::Debug + 'static {
    /// The `redirect_uri` to register and send.
    fn redirect_uri(&self) -> String;
    /// Sends the user to `authorization_url` and returns the redirect's parameters.
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, AuthError>>;
}

/// GETs the authorization URL without a browser and reads the `Location` of its redirect:
/// for authorization servers that redirect at once (tests, the conformance suite, servers
/// with a pre-established session). Redirects inside the server's own origin are followed,
/// at most 10.
#[derive(Debug, Clone)]
pub struct HeadlessAuthorizer {
    redirect_uri: String,
    http: reqwest::Client,
}

impl HeadlessAuthorizer {
    /// With the redirect URI to announce (it is never contacted).
    pub fn new(redirect_uri: impl Into<String>) -> Result<Self, AuthError> {
        Ok(Self {
            redirect_uri: redirect_uri.into(),
            http: super::fetch::http_client(&[])?,
        })
    }
}

impl Authorizer for HeadlessAuthorizer {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, AuthError>> {
        Box::pin(async move {
            let mut url = authorization_url.to_owned();
            for _ in 0..10 {
                let r =
                    self.http.get(&url).send().await.map_err(|e| {
                        AuthError::Authorizer(format!("authorization request: {e}"))
                    })?;
                let location = r
                    .headers()
                    .get(http::header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
                    .ok_or_else(|| {
                        AuthError::Authorizer(format!(
                            "the authorization endpoint answered {} without a redirect",
                            r.status().as_u16()
                        ))
                    })?;
                let next = reqwest::Url::parse(&url)
                    .and_then(|base| base.join(&location))
                    .map_err(|e| AuthError::Authorizer(format!("bad redirect location: {e}")))?;
                if next.as_str().starts_with(&self.redirect_uri) {
                    return Ok(AuthorizationResponse::from_query(next.as_str()));
                }
                url = next.to_string();
            }
            Err(AuthError::Authorizer(
                "too many redirects before the redirect URI".to_owned(),
            ))
        })
    }
}

/// The desktop flow (RFC 8252 §7.3): listens on `127.0.0.1:<port>/callback`, opens the
/// system browser on the authorization URL (or only prints it), and waits at most `timeout`
/// for the redirect.
#[derive(Debug)]
pub struct LoopbackAuthorizer {
    listener: std::sync::Mutex<Option<std::net::TcpListener>>,
    port: u16,
    open_browser: bool,
    timeout: Duration,
}

/// Default wait for the user to finish in the browser.
pub const DEFAULT_LOOPBACK_TIMEOUT: Duration = Duration::from_secs(300);

impl LoopbackAuthorizer {
    /// Binds `127.0.0.1:port` now (`0` picks a free port) so the redirect URI is known.
    pub fn bind(port: u16) -> Result<Self, AuthError> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port)).map_err(|e| {
            AuthError::Authorizer(format!("cannot listen on 127.0.0.1:{port}: {e}"))
        })?;
        listener
            .set_nonblocking(true)
            .map_err(|e| AuthError::Authorizer(e.to_string()))?;
        let port = listener
            .local_addr()
            .map_err(|e| AuthError::Authorizer(e.to_string()))?
            .port();
        Ok(Self {
            listener: std::sync::Mutex::new(Some(listener)),
            port,
            open_browser: true,
            timeout: DEFAULT_LOOPBACK_TIMEOUT,
        })
    }

    /// Whether to launch the system browser (`xdg-open`, `open`, `start`); otherwise the
    /// URL is only printed to stderr. Default: true (it is printed either way).
    pub fn open_browser(mut self, open: bool) -> Self {
        self.open_browser = open;
        self
    }

    /// How long to wait for the redirect (default [`DEFAULT_LOOPBACK_TIMEOUT`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    async fn wait(&self) -> Result<AuthorizationResponse, AuthError> {
        // A clone of the bound socket per authorization, so one authorizer serves several
        // (a step-up re-authorizes in the same process).
        let std_listener = self
            .listener
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .map(std::net::TcpListener::try_clone)
            .ok_or_else(|| AuthError::Authorizer("the loopback listener is gone".into()))?
            .map_err(|e| AuthError::Authorizer(e.to_string()))?;
        let listener = tokio::net::TcpListener::from_std(std_listener)
            .map_err(|e| AuthError::Authorizer(e.to_string()))?;
        loop {
            let (mut sock, _) = listener
                .accept()
                .await
                .map_err(|e| AuthError::Authorizer(e.to_string()))?;
            let mut buf = vec![0u8; 8192];
            let mut n = 0;
            while n < buf.len() {
                let read = sock
                    .read(&mut buf[n..])
                    .await
                    .map_err(|e| AuthError::Authorizer(e.to_string()))?;
                if read == 0 {
                    break;
                }
                n += read;
                if buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            let head = String::from_utf8_lossy(&buf[..n]);
            let target = head
                .lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1))
                .unwrap_or("");
            if !target.starts_with("/callback") {
                let _ = sock
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            }
            let body = "Authorization finished; you can close this window.";
            let _ = sock
                .write_all(
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    )
                    .as_bytes(),
                )
                .await;
            return Ok(AuthorizationResponse::from_query(target));
        }
    }
}

impl Authorizer for LoopbackAuthorizer {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, AuthError>> {
        Box::pin(async move {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("Open this URL to authorize:\n  {authorization_url}");
            }
            if self.open_browser && !launch_browser(authorization_url) {
                tracing::info!("no browser could be launched; open the URL by hand");
            }
            tokio::time::timeout(self.timeout, self.wait())
                .await
                .map_err(|_| {
                    AuthError::Authorizer(format!(
                        "no redirect within {:?} (timed out waiting for the browser)",
                        self.timeout
                    ))
                })?
        })
    }
}

/// Starts the platform's URL opener; whether it started.
fn launch_browser(url: &str) -> bool {
    let cmd = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    std::process::Command::new(cmd)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .is_ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn parses_redirect_query_and_redacts_code() {
        let r = AuthorizationResponse::from_query(
            "http://127.0.0.1:1/callback?code=c%2B1&state=s&iss=https%3A%2F%2Fas",
        );
        assert_eq!(r.code.as_deref(), Some("c+1"));
        assert_eq!(r.state.as_deref(), Some("s"));
        assert_eq!(r.iss.as_deref(), Some("https://as"));
        assert!(!format!("{r:?}").contains("c+1"));
    }

    #[tokio::test]
    async fn loopback_receives_the_redirect() {
        let a = LoopbackAuthorizer::bind(0)
            .unwrap()
            .open_browser(false)
            .timeout(Duration::from_secs(10));
        let uri = a.redirect_uri();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"));
        let hit = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            reqwest::get(format!("{uri}?code=abc&state=xyz"))
                .await
                .unwrap()
        };
        let (got, resp) = tokio::join!(a.authorize("http://as.invalid/authorize"), hit);
        assert_eq!(resp.status().as_u16(), 200);
        let got = got.unwrap();
        assert_eq!(got.code.as_deref(), Some("abc"));
        assert_eq!(got.state.as_deref(), Some("xyz"));
        // The same authorizer serves a second authorization (step-up).
        let again = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            reqwest::get(format!("{uri}?code=def&state=s2"))
                .await
                .unwrap()
        };
        let (got, _) = tokio::join!(a.authorize("http://as.invalid/authorize"), again);
        assert_eq!(got.unwrap().code.as_deref(), Some("def"));
    }

    #[tokio::test]
    async fn loopback_wait_is_bounded() {
        let a = LoopbackAuthorizer::bind(0)
            .unwrap()
            .open_browser(false)
            .timeout(Duration::from_millis(50));
        let e = a
            .authorize("http://as.invalid/authorize")
            .await
            .unwrap_err();
        assert!(e.to_string().contains("timed out"), "{e}");
    }
}
