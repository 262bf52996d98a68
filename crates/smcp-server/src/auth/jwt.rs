//! [`JwtVerifier`]: JWT access tokens (RFC 9068) checked against the authorization server's
//! JWKS, its issuer, their expiry and their audience (RFC 8707).

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, UNIX_EPOCH};

use base64::Engine as _;
use jsonwebtoken::Validation;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::JwkSet;
use serde::Deserialize;
use serde_json::Value;

use super::discovery;
use super::fetch::{self, FetchLimits};
use super::keys::Keys;
use super::verifier::{TokenError, TokenVerifier, VerifiedToken, VerifyFuture};

/// Verifies JWT access tokens.
///
/// Keys come from the authorization server: its metadata (RFC 8414
/// `/.well-known/oauth-authorization-server`, then OpenID Connect discovery, with the
/// path-insertion variants) names `jwks_uri`; the JWKS is fetched on first use, cached, and
/// fetched again when a token names an unknown `kid` (at most once per
/// [`JwtVerifierBuilder::min_refetch_interval`]; while no keys could be fetched at all, at
/// most once a second). Or keys are given
/// ([`JwtVerifier::from_jwks`]).
///
/// A token is accepted when its signature verifies with a key of the JWKS under an
/// algorithm that key allows (never `none`, never `HS*`), `iss` is the issuer, `aud` names
/// one of the accepted audiences (the resource, RFC 8707), and `exp` / `nbf` hold within the
/// leeway. `typ` may be `at+jwt` (RFC 9068) or absent. Scopes come from `scope`
/// (space-separated) or `scp` (an array or a string).
///
/// # Examples
///
/// ```no_run
/// use smcp_server::auth::JwtVerifier;
///
/// let verifier = JwtVerifier::builder("https://auth.example.com")
///     .audience("https://mcp.example.com/mcp")
///     .leeway(30)
///     .build()?;
/// # Ok::<(), smcp_server::auth::AuthConfigError>(())
/// ```
#[derive(Clone)]
pub struct JwtVerifier {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.inner.issuer)
            .field("audiences", &self.inner.audiences)
            .finish_non_exhaustive()
    }
}

struct Inner {
    issuer: String,
    audiences: Vec<String>,
    leeway: u64,
    require_at_jwt: bool,
    keys: RwLock<Arc<Keys>>,
    source: Option<Source>,
}

/// While no keys could be fetched at all, how often a request may try again.
const EMPTY_RETRY: Duration = Duration::from_secs(1);

/// Where the keys come from when they are fetched.
struct Source {
    client: reqwest::Client,
    limits: FetchLimits,
    min_refetch: Duration,
    /// One fetch at a time; the time of the last one and the discovered `jwks_uri`.
    state: tokio::sync::Mutex<FetchState>,
}

#[derive(Default)]
struct FetchState {
    jwks_uri: Option<reqwest::Url>,
    last: Option<Instant>,
}

/// Why a verifier or layer could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AuthConfigError(pub String);

/// Builds a [`JwtVerifier`] (see [`JwtVerifier::builder`]).
#[derive(Debug, Clone)]
pub struct JwtVerifierBuilder {
    issuer: String,
    audiences: Vec<String>,
    leeway: u64,
    require_at_jwt: bool,
    limits: FetchLimits,
    min_refetch: Duration,
    jwks: Option<JwkSet>,
}

impl JwtVerifier {
    /// A verifier for tokens of the authorization server `issuer` (its issuer identifier,
    /// e.g. `https://auth.example.com`), discovering its keys.
    pub fn builder(issuer: impl Into<String>) -> JwtVerifierBuilder {
        JwtVerifierBuilder {
            issuer: issuer.into(),
            audiences: Vec::new(),
            leeway: 30,
            require_at_jwt: false,
            limits: FetchLimits::default(),
            min_refetch: Duration::from_secs(30),
            jwks: None,
        }
    }

    /// A verifier with fixed keys (nothing is fetched), for tests and benchmarks; set the
    /// audience with [`JwtVerifierBuilder::audience`] before [`JwtVerifierBuilder::build`].
    pub fn from_jwks(issuer: impl Into<String>, jwks: JwkSet) -> JwtVerifierBuilder {
        let mut builder = Self::builder(issuer);
        builder.jwks = Some(jwks);
        builder
    }

    /// The issuer this verifier accepts.
    pub fn issuer(&self) -> &str {
        &self.inner.issuer
    }

    /// Fetches the keys now (they are otherwise fetched on first use), so that a
    /// misconfigured issuer shows at startup.
    ///
    /// # Errors
    ///
    /// [`TokenError::Unavailable`] when the metadata or the JWKS cannot be fetched.
    pub async fn prefetch(&self) -> Result<(), TokenError> {
        self.refetch(self.keys().is_empty()).await.map(|_| ())
    }

    /// Fetches the JWKS again, unless fetched less than the minimum interval ago (`empty`:
    /// there are no keys at all, so retry after [`EMPTY_RETRY`] instead). Returns whether the
    /// keys were replaced.
    async fn refetch(&self, empty: bool) -> Result<bool, TokenError> {
        let Some(source) = &self.inner.source else {
            return Ok(false);
        };
        let mut state = source.state.lock().await;
        let interval = if empty {
            EMPTY_RETRY.min(source.min_refetch)
        } else {
            source.min_refetch
        };
        if let Some(last) = state.last
            && last.elapsed() < interval
        {
            return Ok(false);
        }
        state.last = Some(Instant::now());
        let jwks_uri = match &state.jwks_uri {
            Some(uri) => uri.clone(),
            None => {
                let uri =
                    discovery::jwks_uri(&source.client, &self.inner.issuer, source.limits).await?;
                state.jwks_uri = Some(uri.clone());
                uri
            }
        };
        let set: JwkSet = fetch::json(source.client.get(jwks_uri), "the JWKS", source.limits)
            .await?
            .ok_or_else(|| TokenError::Unavailable("the JWKS: HTTP 404".to_owned()))?;
        let keys = Keys::from_set(&set);
        tracing::debug!(issuer = %self.inner.issuer, ?keys, "JWKS fetched");
        if let Ok(mut current) = self.inner.keys.write() {
            *current = Arc::new(keys);
        }
        Ok(true)
    }

    fn keys(&self) -> Arc<Keys> {
        self.inner
            .keys
            .read()
            .map(|k| k.clone())
            .unwrap_or_default()
    }

    async fn verify_token(&self, token: &str) -> Result<VerifiedToken, TokenError> {
        let header = header(token)?;
        if self.inner.require_at_jwt
            && !header.typ.as_deref().is_some_and(|t| {
                t.eq_ignore_ascii_case("at+jwt") || t.eq_ignore_ascii_case("application/at+jwt")
            })
        {
            return Err(TokenError::Malformed(
                "typ must be at+jwt (RFC 9068)".to_owned(),
            ));
        }
        let kid = header.kid.as_deref();
        let mut keys = self.keys();
        if keys.is_empty() {
            self.refetch(true).await?;
            keys = self.keys();
        }
        if keys.find(kid).is_none() && self.refetch(false).await? {
            keys = self.keys();
        }
        if keys.is_empty() {
            // Nothing fetched yet (the last attempt failed and the next is rate-limited): the
            // server's fault, not the token's.
            return Err(TokenError::Unavailable(
                "the authorization server's keys are not available yet".to_owned(),
            ));
        }
        let key = keys.find(kid).ok_or(TokenError::UnknownKey)?;
        if !key.algorithms.contains(&header.alg) {
            return Err(TokenError::Algorithm(format!(
                "{:?} is not allowed for this key",
                header.alg
            )));
        }
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.inner.leeway;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.inner.issuer]);
        validation.set_audience(&self.inner.audiences);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let data = jsonwebtoken::decode::<Claims>(token, &key.decoding, &validation)
            .map_err(|e| map_error(e.kind()))?;
        let claims = data.claims;
        let scopes = claims.scopes();
        Ok(VerifiedToken {
            subject: claims.sub,
            issuer: claims.iss,
            scopes,
            audience: match claims.aud {
                Value::String(s) => vec![s],
                Value::Array(a) => a
                    .into_iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect(),
                _ => Vec::new(),
            },
            client_id: claims.client_id,
            expires_at: UNIX_EPOCH.checked_add(Duration::from_secs(claims.exp)),
            jkt: claims.cnf.and_then(|cnf| cnf.jkt),
        })
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.verify_token(token))
    }
}

impl JwtVerifierBuilder {
    /// Accepts tokens whose `aud` names `audience` (the resource's canonical URI, RFC 8707).
    /// Repeatable; at least one is required.
    #[must_use]
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// Clock skew allowed on `exp` and `nbf`, in seconds (default 30).
    #[must_use]
    pub fn leeway(mut self, seconds: u64) -> Self {
        self.leeway = seconds;
        self
    }

    /// Refuses tokens whose `typ` is not `at+jwt` (RFC 9068; off by default, since many
    /// authorization servers send `JWT`).
    #[must_use]
    pub fn require_at_jwt(mut self, require: bool) -> Self {
        self.require_at_jwt = require;
        self
    }

    /// The shortest time between two JWKS fetches caused by unknown `kid`s (default 30 s).
    #[must_use]
    pub fn min_refetch_interval(mut self, interval: Duration) -> Self {
        self.min_refetch = interval;
        self
    }

    /// The timeout of each metadata or JWKS fetch (default 5 s).
    #[must_use]
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.limits.timeout = timeout;
        self
    }

    /// The largest metadata or JWKS document accepted, in bytes (default 256 KiB).
    #[must_use]
    pub fn max_document_bytes(mut self, bytes: usize) -> Self {
        self.limits.max_bytes = bytes;
        self
    }

    /// The verifier.
    ///
    /// # Errors
    ///
    /// No audience; an issuer that is not an `https` URL (plain `http` only for a loopback
    /// host) when keys are to be discovered.
    pub fn build(self) -> Result<JwtVerifier, AuthConfigError> {
        if self.audiences.is_empty() {
            return Err(AuthConfigError(
                "JwtVerifier: an audience (the resource URI) is required".to_owned(),
            ));
        }
        let (keys, source) = match &self.jwks {
            Some(set) => (Keys::from_set(set), None),
            None => {
                fetch::check_url(&self.issuer)
                    .map_err(|e| AuthConfigError(format!("the issuer {e}")))?;
                let client = fetch::client(self.limits).map_err(AuthConfigError)?;
                (
                    Keys::default(),
                    Some(Source {
                        client,
                        limits: self.limits,
                        min_refetch: self.min_refetch,
                        state: tokio::sync::Mutex::new(FetchState::default()),
                    }),
                )
            }
        };
        Ok(JwtVerifier {
            inner: Arc::new(Inner {
                issuer: self.issuer,
                audiences: self.audiences,
                leeway: self.leeway,
                require_at_jwt: self.require_at_jwt,
                keys: RwLock::new(Arc::new(keys)),
                source,
            }),
        })
    }
}

/// The claims read from an access token.
#[derive(Deserialize)]
struct Claims {
    sub: String,
    iss: String,
    aud: Value,
    exp: u64,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    scp: Option<Value>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    cnf: Option<Confirmation>,
}

/// The `cnf` claim (RFC 7800): what the token is bound to; only `jkt` (RFC 9449) is read.
#[derive(Deserialize)]
pub(crate) struct Confirmation {
    #[serde(default)]
    pub(crate) jkt: Option<String>,
}

impl Claims {
    fn scopes(&self) -> Vec<String> {
        if let Some(scope) = &self.scope {
            return scope.split_ascii_whitespace().map(str::to_owned).collect();
        }
        match &self.scp {
            Some(Value::String(s)) => s.split_ascii_whitespace().map(str::to_owned).collect(),
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// The token's header; `alg: none` and other unknown algorithms are named.
fn header(token: &str) -> Result<jsonwebtoken::Header, TokenError> {
    if token.split('.').count() != 3 {
        return Err(TokenError::Malformed(
            "a JWT has three dot-separated parts".to_owned(),
        ));
    }
    jsonwebtoken::decode_header(token).map_err(|_| {
        // Say why, without echoing the token: an algorithm we do not know (e.g. `none`), or
        // not a JOSE header at all.
        let alg = token
            .split('.')
            .next()
            .and_then(|h| {
                base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .decode(h)
                    .ok()
            })
            .and_then(|h| serde_json::from_slice::<Value>(&h).ok())
            .and_then(|h| h.get("alg").and_then(Value::as_str).map(str::to_owned));
        match alg {
            Some(alg) if alg.len() <= 16 && alg.bytes().all(|b| b.is_ascii_alphanumeric()) => {
                TokenError::Algorithm(format!("{alg:?} is never accepted"))
            }
            _ => TokenError::Malformed("the JOSE header is not valid".to_owned()),
        }
    })
}

fn map_error(kind: &ErrorKind) -> TokenError {
    match kind {
        ErrorKind::ExpiredSignature => TokenError::Expired,
        ErrorKind::ImmatureSignature => TokenError::NotYetValid,
        ErrorKind::InvalidAudience => TokenError::WrongAudience,
        ErrorKind::InvalidIssuer => TokenError::WrongIssuer,
        ErrorKind::InvalidSignature => TokenError::BadSignature,
        ErrorKind::InvalidAlgorithm | ErrorKind::MissingAlgorithm => {
            TokenError::Algorithm("not allowed for this key".to_owned())
        }
        ErrorKind::MissingRequiredClaim(claim) => TokenError::Claim(static_claim(claim)),
        ErrorKind::Json(_) => {
            TokenError::Malformed("the claims are not the expected JSON".to_owned())
        }
        _ => TokenError::Malformed("the token could not be decoded".to_owned()),
    }
}

fn static_claim(claim: &str) -> &'static str {
    match claim {
        "exp" => "exp",
        "iss" => "iss",
        "aud" => "aud",
        "sub" => "sub",
        "nbf" => "nbf",
        _ => "required",
    }
}
