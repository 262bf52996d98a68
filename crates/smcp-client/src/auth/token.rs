//! The token endpoint: every grant's request, with `client_secret_basic`, `client_secret_post`,
//! `private_key_jwt` (RFC 7523 §2.2) or `none`, `resource` (RFC 8707), and a DPoP proof
//! (RFC 9449 §5) retried once with the server's nonce (§8).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::HeaderValue;
use serde::Deserialize;
use serde_json::{Map, json};

use super::dpop::{DPOP, Dpop};
use super::fetch::read_body;
use super::jws::{JwtSigner, sign_jwt};
use super::pkce::random_token;
use super::store::{ClientRegistration, StoredTokens};
use super::{AuthError, Secret, now_secs};

/// RFC 7523 §2.2: the client assertion type of `private_key_jwt`.
const JWT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// Lifetime of a client assertion.
const ASSERTION_TTL_SECS: u64 = 60;

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    issued_token_type: Option<String>,
}

#[derive(Deserialize)]
struct OAuthErrorBody {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// `application/x-www-form-urlencoded` escaping, also used by `client_secret_basic`
/// (RFC 6749 §2.3.1).
fn form_encode(s: &str) -> String {
    url_form(&[("", s)]).trim_start_matches('=').to_owned()
}

fn url_form(pairs: &[(&str, &str)]) -> String {
    let mut ser = reqwest::Url::parse("http://x/").ok();
    if let Some(u) = ser.as_mut() {
        let mut q = u.query_pairs_mut();
        for (k, v) in pairs {
            q.append_pair(k, v);
        }
    }
    ser.and_then(|u| u.query().map(str::to_owned))
        .unwrap_or_default()
}

/// One token endpoint and how to talk to it.
pub(crate) struct Endpoint<'a> {
    pub(crate) http: &'a reqwest::Client,
    /// The token endpoint URL.
    pub(crate) url: &'a str,
    /// The issuer (the audience of client assertions, and whose tokens these are).
    pub(crate) issuer: &'a str,
    /// A proof on every request when set.
    pub(crate) dpop: Option<&'a Dpop>,
    /// Signs `private_key_jwt` client assertions.
    pub(crate) assertion_signer: Option<&'a dyn JwtSigner>,
}

/// A `private_key_jwt` client assertion for `client_id` at `issuer` (RFC 7523 §3).
fn client_assertion(
    signer: &dyn JwtSigner,
    client_id: &str,
    issuer: &str,
) -> Result<String, AuthError> {
    let now = now_secs();
    let claims = json!({
        "iss": client_id,
        "sub": client_id,
        "aud": issuer,
        "jti": random_token()?,
        "iat": now,
        "exp": now + ASSERTION_TTL_SECS,
    });
    let mut header = Map::new();
    header.insert("typ".to_owned(), json!("JWT"));
    sign_jwt(signer, header, &claims)
}

/// What a token endpoint answered.
pub(crate) struct Issued {
    pub(crate) access_token: String,
    pub(crate) token_type: Option<String>,
    pub(crate) refresh_token: Option<String>,
    pub(crate) expires_in: Option<u64>,
    pub(crate) scope: Option<String>,
    pub(crate) issued_token_type: Option<String>,
}

impl Endpoint<'_> {
    /// POSTs `params` with the client's authentication (a fresh assertion and proof per
    /// attempt); one more attempt when the server asks for a DPoP nonce.
    pub(crate) async fn post(
        &self,
        client: Option<&ClientRegistration>,
        params: &[(&str, String)],
    ) -> Result<Issued, AuthError> {
        let fail = |detail: String| AuthError::Fetch {
            what: "token endpoint",
            url: self.url.to_owned(),
            detail,
        };
        let url = reqwest::Url::parse(self.url).map_err(|e| fail(format!("not a URL: {e}")))?;
        let mut nonce_retry = true;
        loop {
            let mut req = self.http.post(url.clone());
            let mut params = params.to_vec();
            if let Some(client) = client {
                req = self.authenticate(req, client, &mut params)?;
            }
            if let Some(dpop) = self.dpop {
                let proof = dpop.proof("POST", &url, None)?;
                let value = HeaderValue::from_str(&proof)
                    .map_err(|_| AuthError::Config("a DPoP proof is not a header value".into()))?;
                req = req.header(DPOP, value);
            }
            let pairs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let response = req
                .header(
                    http::header::CONTENT_TYPE,
                    "application/x-www-form-urlencoded",
                )
                .header(http::header::ACCEPT, "application/json")
                .body(url_form(&pairs))
                .send()
                .await
                .map_err(|e| fail(e.to_string()))?;
            let status = response.status().as_u16();
            let fresh_nonce = self
                .dpop
                .is_some_and(|d| d.remember_nonce(&url, response.headers()));
            let bytes = read_body(response).await.map_err(fail)?;
            if !(200..300).contains(&status) {
                let error = match serde_json::from_slice::<OAuthErrorBody>(&bytes) {
                    Ok(e) => AuthError::Token {
                        error: e.error,
                        description: e.error_description,
                    },
                    Err(_) => AuthError::Token {
                        error: format!("HTTP {status}"),
                        description: None,
                    },
                };
                if let AuthError::Token { error: code, .. } = &error
                    && code == "use_dpop_nonce"
                    && fresh_nonce
                    && std::mem::take(&mut nonce_retry)
                {
                    tracing::debug!(endpoint = %self.url, "token endpoint asked for a DPoP nonce; retrying once");
                    continue;
                }
                return Err(error);
            }
            let t: TokenResponse =
                serde_json::from_slice(&bytes).map_err(|e| AuthError::BadMetadata {
                    document: "token response",
                    field: "access_token",
                    problem: format!("missing or malformed ({})", e.classify_name()),
                })?;
            return Ok(Issued {
                access_token: t.access_token,
                token_type: t.token_type,
                refresh_token: t.refresh_token,
                expires_in: t.expires_in,
                scope: t.scope,
                issued_token_type: t.issued_token_type,
            });
        }
    }

    fn authenticate(
        &self,
        req: reqwest::RequestBuilder,
        client: &ClientRegistration,
        params: &mut Vec<(&str, String)>,
    ) -> Result<reqwest::RequestBuilder, AuthError> {
        Ok(match client.auth_method.as_str() {
            "client_secret_basic" => {
                let secret = client
                    .client_secret
                    .as_ref()
                    .map(Secret::expose)
                    .unwrap_or("");
                let pair = format!("{}:{}", form_encode(&client.client_id), form_encode(secret));
                let mut value = HeaderValue::from_str(&format!("Basic {}", STANDARD.encode(pair)))
                    .map_err(|_| {
                        AuthError::Config("client credentials are not a header value".into())
                    })?;
                value.set_sensitive(true);
                req.header(http::header::AUTHORIZATION, value)
            }
            "client_secret_post" => {
                params.push(("client_id", client.client_id.clone()));
                if let Some(s) = &client.client_secret {
                    params.push(("client_secret", s.expose().to_owned()));
                }
                req
            }
            "private_key_jwt" => {
                let signer = self.assertion_signer.ok_or_else(|| {
                    AuthError::Config(
                        "the client authenticates with private_key_jwt but no assertion key is configured".into(),
                    )
                })?;
                params.push(("client_id", client.client_id.clone()));
                params.push(("client_assertion_type", JWT_ASSERTION_TYPE.to_owned()));
                params.push((
                    "client_assertion",
                    client_assertion(signer, &client.client_id, self.issuer)?,
                ));
                req
            }
            _ => {
                params.push(("client_id", client.client_id.clone()));
                req
            }
        })
    }

    /// POSTs a grant and returns the tokens to store.
    pub(crate) async fn request(
        &self,
        client: Option<&ClientRegistration>,
        params: Vec<(&str, String)>,
        scope_requested: Option<&str>,
    ) -> Result<StoredTokens, AuthError> {
        let t = self.post(client, &params).await?;
        Ok(StoredTokens {
            issuer: self.issuer.to_owned(),
            access_token: Secret::new(t.access_token),
            token_type: t.token_type,
            refresh_token: t.refresh_token.map(Secret::new),
            expires_at: t.expires_in.map(|s| now_secs().saturating_add(s)),
            scope: t.scope.or_else(|| scope_requested.map(str::to_owned)),
            client: client.cloned(),
            dpop_key: None,
        })
    }
}

trait Classify {
    fn classify_name(&self) -> &'static str;
}

impl Classify for serde_json::Error {
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "I/O",
            serde_json::error::Category::Syntax => "not JSON",
            serde_json::error::Category::Data => "wrong shape",
            serde_json::error::Category::Eof => "truncated",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_encoding_escapes_reserved_characters() {
        assert_eq!(form_encode("a b:c"), "a+b%3Ac");
        assert_eq!(
            url_form(&[("k", "v&w"), ("r", "http://h/mcp")]),
            "k=v%26w&r=http%3A%2F%2Fh%2Fmcp"
        );
    }
}
