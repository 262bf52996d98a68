//! A real OpenID provider for the authorization tests (`scripts/oidc-provider run`, npm
//! `oidc-provider` 9.x on a loopback port), a way to mint tokens from it without a browser
//! (client credentials), and a scripted browser that walks its login and consent pages.
//! `SMCP_OIDC=skip` disables the tests that use it (and the install step).

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr
)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// The pre-registered public client (PKCE, any loopback redirect port).
pub(crate) const PUBLIC_CLIENT: &str = "smcp-e2e";
/// The confidential client allowed the client-credentials grant.
pub(crate) const M2M_CLIENT: (&str, &str) = ("smcp-e2e-m2m", "smcp-e2e-m2m-secret");
/// The client that authenticates with `private_key_jwt` (with `ProviderOptions::client_jwks`).
pub(crate) const JWT_CLIENT: &str = "smcp-e2e-jwt";
/// The public client allowed the JWT bearer grant with a workload's JWT (`workload_jwks`).
pub(crate) const WORKLOAD_CLIENT: &str = "smcp-e2e-workload";
/// The confidential client allowed the JWT bearer grant with an ID-JAG (`trust_idp`).
pub(crate) const JAG_CLIENT: (&str, &str) = ("smcp-e2e-jag", "smcp-e2e-jag-secret");
/// The resource-server client allowed to introspect tokens.
pub(crate) const RS_CLIENT: (&str, &str) = ("smcp-e2e-rs", "smcp-e2e-rs-secret");

use smcp_test_support::root;

/// Whether the provider tests are disabled (`SMCP_OIDC=skip`).
pub(crate) fn skipped() -> bool {
    !smcp_test_support::require_service("OpenID provider", "SMCP_OIDC")
}

/// A running provider, killed when dropped.
pub(crate) struct Provider {
    child: Child,
    /// Its issuer identifier, `http://127.0.0.1:PORT`.
    pub(crate) issuer: String,
    /// Its port.
    pub(crate) port: u16,
}

/// How to start a provider.
#[derive(Default, Clone)]
pub(crate) struct ProviderOptions {
    /// A fixed port (0 or `None`: a free one).
    pub(crate) port: Option<u16>,
    /// The signing keys file (kept across restarts).
    pub(crate) keys: Option<PathBuf>,
    /// Put a new signing key first (needs `keys`).
    pub(crate) rotate: bool,
    /// Access-token lifetime in seconds.
    pub(crate) access_ttl: Option<u64>,
    /// Accept DPoP proofs (bound tokens for token requests with one).
    pub(crate) dpop: bool,
    /// With `dpop`, require a DPoP nonce at the token endpoint.
    pub(crate) dpop_nonce: bool,
    /// Register [`JWT_CLIENT`] with the public JWKS in this file.
    pub(crate) client_jwks: Option<PathBuf>,
    /// Workload identity: the JWT bearer grant for [`WORKLOAD_CLIENT`], workload JWTs signed
    /// by a key in this JWKS file.
    pub(crate) workload_jwks: Option<PathBuf>,
    /// Act as an enterprise identity provider too (the token exchange to an ID-JAG).
    pub(crate) idp: bool,
    /// Accept ID-JAGs of this identity provider in the JWT bearer grant of [`JAG_CLIENT`].
    pub(crate) trust_idp: Option<String>,
}

impl Provider {
    /// Starts one on a free port with fresh keys.
    pub(crate) fn start() -> Self {
        Self::start_with(&ProviderOptions::default())
    }

    /// Starts one with `options`; waits for its ready line.
    pub(crate) fn start_with(options: &ProviderOptions) -> Self {
        let mut cmd = Command::new(root().join("scripts/oidc-provider"));
        cmd.arg("run")
            .args(["--port", &options.port.unwrap_or(0).to_string()]);
        if let Some(keys) = &options.keys {
            cmd.arg("--keys").arg(keys);
        }
        if options.rotate {
            cmd.arg("--rotate");
        }
        if let Some(ttl) = options.access_ttl {
            cmd.args(["--access-ttl", &ttl.to_string()]);
        }
        if options.dpop {
            cmd.arg("--dpop");
        }
        if options.dpop_nonce {
            cmd.arg("--dpop-nonce");
        }
        if let Some(jwks) = &options.client_jwks {
            cmd.arg("--client-jwks").arg(jwks);
        }
        if let Some(jwks) = &options.workload_jwks {
            cmd.arg("--workload-jwks").arg(jwks);
        }
        if options.idp {
            cmd.arg("--idp");
        }
        if let Some(idp) = &options.trust_idp {
            cmd.args(["--trust-idp", idp]);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("scripts/oidc-provider starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ready: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("provider ready line {line:?}: {e}"));
        Self {
            child,
            issuer: ready["issuer"].as_str().unwrap().to_owned(),
            port: u16::try_from(ready["port"].as_u64().unwrap()).unwrap(),
        }
    }

    /// Mints an access token for `resource` with the client-credentials grant (the
    /// machine-to-machine client), no browser involved.
    pub(crate) async fn client_credentials(&self, resource: &str, scope: &str) -> String {
        let request = reqwest::Client::new()
            .post(format!("{}/token", self.issuer))
            .basic_auth(M2M_CLIENT.0, Some(M2M_CLIENT.1))
            .form(&[
                ("grant_type", "client_credentials"),
                ("resource", resource),
                ("scope", scope),
            ]);
        token_response(request).await["access_token"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}

impl Provider {
    /// An ID token for `login`, issued to [`PUBLIC_CLIENT`]: the authorization code flow with
    /// PKCE through the provider's pages, then the token request.
    pub(crate) async fn id_token(&self, login: &str) -> String {
        use base64::Engine as _;
        use sha2::Digest as _;
        let verifier = "an-e2e-pkce-verifier-that-is-long-enough-to-be-valid-0123456789";
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(sha2::Sha256::digest(verifier.as_bytes()));
        let redirect = "http://127.0.0.1/callback";
        let mut url = reqwest::Url::parse(&format!("{}/auth", self.issuer)).unwrap();
        url.query_pairs_mut()
            .append_pair("client_id", PUBLIC_CLIENT)
            .append_pair("response_type", "code")
            .append_pair("scope", "openid")
            .append_pair("redirect_uri", redirect)
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256");
        let back = Browser::new(login).authorize(url.as_str()).await;
        let back = reqwest::Url::parse(&back).unwrap();
        let code = back
            .query_pairs()
            .find(|(k, _)| k == "code")
            .map(|(_, v)| v.into_owned())
            .unwrap_or_else(|| panic!("no code in {back}"));
        let request = reqwest::Client::new()
            .post(format!("{}/token", self.issuer))
            .form(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", redirect),
                ("code_verifier", verifier),
                ("client_id", PUBLIC_CLIENT),
            ]);
        token_response(request).await["id_token"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}

/// Sends a token request; panics with the answer unless it succeeded.
async fn token_response(request: reqwest::RequestBuilder) -> Value {
    let res = request.send().await.unwrap();
    let status = res.status();
    let body: Value = res.json().await.unwrap();
    assert!(status.is_success(), "token endpoint: {status} {body}");
    body
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scripted browser: follows the provider's redirects, signs in as `login` on its login
/// page and confirms its consent page, and stops at the first redirect that leaves the
/// provider (the client's redirect URI), which it returns without requesting it.
pub(crate) struct Browser {
    http: reqwest::Client,
    cookies: BTreeMap<String, String>,
    login: String,
}

impl Browser {
    /// A browser with an empty cookie jar that signs in as `login`.
    pub(crate) fn new(login: &str) -> Self {
        Self {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            cookies: BTreeMap::new(),
            login: login.to_owned(),
        }
    }

    /// Walks the authorization request at `url` to the redirect back to the client and
    /// returns that redirect's URL (with `code`, `state`, `iss` or an `error`).
    pub(crate) async fn authorize(&mut self, url: &str) -> String {
        let origin = origin(url);
        let mut next = Step::Get(url.to_owned());
        for _ in 0..12 {
            let res = match &next {
                Step::Get(u) => self.send(self.http.get(u)).await,
                Step::Post(u, form) => self.send(self.http.post(u).form(form)).await,
            };
            if res.status().is_redirection() {
                let location = res.headers()["location"].to_str().unwrap().to_owned();
                let location = if location.starts_with('/') {
                    format!("{origin}{location}")
                } else {
                    location
                };
                if !location.starts_with(&origin) {
                    return location;
                }
                next = Step::Get(location);
                continue;
            }
            let status = res.status();
            let page = res.text().await.unwrap();
            assert!(status.is_success(), "provider page {status}: {page}");
            let action = attribute(&page, "<form", "action").expect("a form on the page");
            next = if page.contains(r#"name="prompt" value="login""#) {
                Step::Post(
                    action,
                    vec![
                        ("prompt".into(), "login".into()),
                        ("login".into(), self.login.clone()),
                        ("password".into(), "any".into()),
                    ],
                )
            } else if page.contains(r#"name="prompt" value="consent""#) {
                Step::Post(action, vec![("prompt".into(), "consent".into())])
            } else {
                panic!("unexpected provider page: {page}");
            };
        }
        panic!("the authorization request did not come back to the client");
    }

    async fn send(&mut self, req: reqwest::RequestBuilder) -> reqwest::Response {
        let jar = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let req = if jar.is_empty() {
            req
        } else {
            req.header("cookie", jar)
        };
        let res = req.send().await.unwrap();
        for set in res.headers().get_all("set-cookie") {
            let pair = set.to_str().unwrap().split(';').next().unwrap();
            if let Some((k, v)) = pair.split_once('=') {
                if v.is_empty() {
                    self.cookies.remove(k.trim());
                } else {
                    self.cookies.insert(k.trim().to_owned(), v.to_owned());
                }
            }
        }
        res
    }
}

enum Step {
    Get(String),
    Post(String, Vec<(String, String)>),
}

/// `scheme://host:port` of a URL.
fn origin(url: &str) -> String {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let end = url[after_scheme..]
        .find('/')
        .map_or(url.len(), |i| after_scheme + i);
    url[..end].to_owned()
}

/// The value of `attr` on the first `tag` element of an HTML page.
fn attribute(page: &str, tag: &str, attr: &str) -> Option<String> {
    let start = page.find(tag)?;
    let element = &page[start..start + page[start..].find('>')?];
    let key = format!("{attr}=\"");
    let from = element.find(&key)? + key.len();
    let len = element[from..].find('"')?;
    Some(element[from..from + len].replace("&amp;", "&"))
}
