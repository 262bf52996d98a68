//! [`IntrospectionVerifier`]: opaque (or any) access tokens checked by the authorization
//! server's introspection endpoint (RFC 7662).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use serde_json::Value;

use super::fetch::{self, FetchLimits};
use super::jwt::AuthConfigError;
use super::verifier::{TokenError, TokenVerifier, VerifiedToken, VerifyFuture};

/// Verifies tokens by POSTing them to an RFC 7662 introspection endpoint, authenticated as
/// a client (`client_secret_basic`).
///
/// A token is accepted when the answer says `active: true`, its `iss` (when present) is the
/// issuer, its `aud` names one of the accepted audiences (RFC 8707; a missing `aud` is
/// refused unless [`IntrospectionVerifierBuilder::allow_missing_audience`]), and its `exp`
/// (when present) has not passed. The subject is `sub`, else `username`, else `client_id`.
/// Cache the answers with [`super::AuthLayerBuilder::cache`]: its TTL bounds how long a
/// revoked token stays accepted.
///
/// # Examples
///
/// ```no_run
/// use smcp_server::auth::IntrospectionVerifier;
///
/// let verifier = IntrospectionVerifier::builder("https://auth.example.com/introspect")
///     .issuer("https://auth.example.com")
///     .audience("https://mcp.example.com/mcp")
///     .client("mcp-server", std::env::var("INTROSPECTION_SECRET").unwrap_or_default())
///     .build()?;
/// # Ok::<(), smcp_server::auth::AuthConfigError>(())
/// ```
#[derive(Clone)]
pub struct IntrospectionVerifier {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.inner.endpoint.as_str())
            .field("client_id", &self.inner.client_id)
            .finish_non_exhaustive()
    }
}

struct Inner {
    endpoint: reqwest::Url,
    issuer: Option<String>,
    audiences: Vec<String>,
    allow_missing_audience: bool,
    client_id: Option<String>,
    client_secret: Option<String>,
    leeway: u64,
    client: reqwest::Client,
    limits: FetchLimits,
}

/// Builds an [`IntrospectionVerifier`].
pub struct IntrospectionVerifierBuilder {
    endpoint: String,
    issuer: Option<String>,
    audiences: Vec<String>,
    allow_missing_audience: bool,
    client_id: Option<String>,
    client_secret: Option<String>,
    leeway: u64,
    limits: FetchLimits,
}

impl std::fmt::Debug for IntrospectionVerifierBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionVerifierBuilder")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .finish_non_exhaustive()
    }
}

impl IntrospectionVerifier {
    /// A verifier POSTing to `endpoint` (`https`, or `http` on a loopback host).
    pub fn builder(endpoint: impl Into<String>) -> IntrospectionVerifierBuilder {
        IntrospectionVerifierBuilder {
            endpoint: endpoint.into(),
            issuer: None,
            audiences: Vec::new(),
            allow_missing_audience: false,
            client_id: None,
            client_secret: None,
            leeway: 30,
            limits: FetchLimits::default(),
        }
    }

    async fn introspect(&self, token: &str) -> Result<VerifiedToken, TokenError> {
        let inner = &self.inner;
        let mut request = inner
            .client
            .post(inner.endpoint.clone())
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(format!(
                "token={}&token_type_hint=access_token",
                form_encode(token)
            ));
        if let Some(id) = &inner.client_id {
            request = request.basic_auth(
                form_encode(id),
                inner.client_secret.as_deref().map(form_encode),
            );
        }
        let answer: Answer = fetch::json(request, "the introspection endpoint", inner.limits)
            .await?
            .ok_or_else(|| {
                TokenError::Unavailable("the introspection endpoint: HTTP 404".to_owned())
            })?;
        if !answer.active {
            return Err(TokenError::Inactive);
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if answer
            .exp
            .is_some_and(|exp| exp.saturating_add(inner.leeway) <= now)
        {
            return Err(TokenError::Expired);
        }
        if answer
            .nbf
            .is_some_and(|nbf| nbf > now.saturating_add(inner.leeway))
        {
            return Err(TokenError::NotYetValid);
        }
        if let (Some(expected), Some(iss)) = (&inner.issuer, &answer.iss)
            && expected.trim_end_matches('/') != iss.trim_end_matches('/')
        {
            return Err(TokenError::WrongIssuer);
        }
        let audience: Vec<String> = match answer.aud {
            Some(Value::String(s)) => vec![s],
            Some(Value::Array(a)) => a
                .into_iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        };
        let fits = audience.iter().any(|a| inner.audiences.contains(a))
            || (audience.is_empty() && inner.allow_missing_audience);
        if !fits {
            return Err(TokenError::WrongAudience);
        }
        let subject = answer
            .sub
            .or(answer.username)
            .or_else(|| answer.client_id.clone())
            .ok_or(TokenError::Claim("sub"))?;
        Ok(VerifiedToken {
            subject,
            issuer: answer
                .iss
                .or_else(|| inner.issuer.clone())
                .unwrap_or_default(),
            scopes: answer
                .scope
                .map(|s| s.split_ascii_whitespace().map(str::to_owned).collect())
                .unwrap_or_default(),
            audience,
            client_id: answer.client_id,
            expires_at: answer
                .exp
                .and_then(|exp| UNIX_EPOCH.checked_add(Duration::from_secs(exp))),
            jkt: answer.cnf.and_then(|cnf| cnf.jkt),
        })
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(self.introspect(token))
    }
}

impl IntrospectionVerifierBuilder {
    /// The expected `iss` (checked when the answer carries one).
    #[must_use]
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// An accepted audience (the resource URI). Repeatable; at least one is required.
    #[must_use]
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// Accepts answers without `aud` (some authorization servers omit it); off by default.
    #[must_use]
    pub fn allow_missing_audience(mut self, allow: bool) -> Self {
        self.allow_missing_audience = allow;
        self
    }

    /// The resource server's client credentials (`client_secret_basic`).
    #[must_use]
    pub fn client(mut self, id: impl Into<String>, secret: impl Into<String>) -> Self {
        self.client_id = Some(id.into());
        self.client_secret = Some(secret.into());
        self
    }

    /// Clock skew allowed on `exp` and `nbf`, in seconds (default 30).
    #[must_use]
    pub fn leeway(mut self, seconds: u64) -> Self {
        self.leeway = seconds;
        self
    }

    /// The timeout of each introspection request (default 5 s).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.limits.timeout = timeout;
        self
    }

    /// The verifier.
    ///
    /// # Errors
    ///
    /// An endpoint that is not `https` (nor `http` on loopback), or no audience.
    pub fn build(self) -> Result<IntrospectionVerifier, AuthConfigError> {
        let endpoint = fetch::check_url(&self.endpoint)
            .map_err(|e| AuthConfigError(format!("the introspection endpoint {e}")))?;
        if self.audiences.is_empty() && !self.allow_missing_audience {
            return Err(AuthConfigError(
                "IntrospectionVerifier: an audience (the resource URI) is required".to_owned(),
            ));
        }
        let client = fetch::client(self.limits).map_err(AuthConfigError)?;
        Ok(IntrospectionVerifier {
            inner: Arc::new(Inner {
                endpoint,
                issuer: self.issuer,
                audiences: self.audiences,
                allow_missing_audience: self.allow_missing_audience,
                client_id: self.client_id,
                client_secret: self.client_secret,
                leeway: self.leeway,
                client,
                limits: self.limits,
            }),
        })
    }
}

/// An introspection answer (RFC 7662 §2.2).
#[derive(Deserialize)]
struct Answer {
    active: bool,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    aud: Option<Value>,
    #[serde(default)]
    iss: Option<String>,
    #[serde(default)]
    exp: Option<u64>,
    #[serde(default)]
    nbf: Option<u64>,
    #[serde(default)]
    cnf: Option<super::jwt::Confirmation>,
}

/// `application/x-www-form-urlencoded` encoding of one value (also what RFC 6749 §2.3.1
/// asks of client credentials in Basic authentication).
fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::form_encode;

    #[test]
    fn form_encoding() {
        assert_eq!(form_encode("a b+c/=é"), "a+b%2Bc%2F%3D%C3%A9");
        assert_eq!(form_encode("Az09-._~"), "Az09-._~");
    }
}
