//! Which grant gets the tokens, and where the JWTs of the JWT bearer grants come from:
//! [`AssertionSource`] (a workload's identity token, the user's enterprise ID token),
//! [`AssertionFile`], [`AssertionEnv`], [`AssertionFn`], and [`EnterpriseIdp`] (enterprise-managed
//! authorization: the ID token exchanged for an ID-JAG at the identity provider first).

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::{AuthError, Secret};

/// RFC 7523 §2.1: the JWT bearer grant type.
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// RFC 8693: the token exchange grant type.
pub(crate) const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an OpenID Connect ID token (RFC 8693 §3).
pub(crate) const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
/// The token type of an Identity Assertion JWT Authorization Grant (ID-JAG).
pub(crate) const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// Largest assertion read from a file or the environment.
const MAX_ASSERTION_BYTES: usize = 64 * 1024;
/// Largest file read for one (whitespace around the JWT included).
const MAX_FILE_BYTES: u64 = 128 * 1024;

/// Supplies a JWT the client exchanges for tokens, fetched anew for every grant (workload
/// tokens rotate): a workload's identity token for workload identity federation, or the user's
/// ID token from the enterprise identity provider.
pub trait AssertionSource: Send + Sync + std::fmt::Debug + 'static {
    /// The current JWT.
    fn assertion(&self) -> BoxFuture<'_, Result<Secret, AuthError>>;
}

/// A JWT read from a file each time (a Kubernetes projected service account token, a CI
/// job's OIDC token written to disk), surrounding whitespace trimmed, at most 64 KiB.
#[derive(Debug, Clone)]
pub struct AssertionFile(PathBuf);

impl AssertionFile {
    /// The file at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self(path.into())
    }
}

fn checked(value: &str, from: &str) -> Result<Secret, AuthError> {
    let value = value.trim();
    if value.is_empty() {
        return Err(AuthError::Config(format!("{from} is empty")));
    }
    if value.len() > MAX_ASSERTION_BYTES {
        return Err(AuthError::Config(format!(
            "{from} is larger than {MAX_ASSERTION_BYTES} bytes"
        )));
    }
    if value.split('.').count() != 3 {
        return Err(AuthError::Config(format!(
            "{from} is not a JWT (three dot-separated parts)"
        )));
    }
    Ok(Secret::new(value))
}

impl AssertionSource for AssertionFile {
    fn assertion(&self) -> BoxFuture<'_, Result<Secret, AuthError>> {
        Box::pin(async move {
            let from = self.0.display().to_string();
            let unreadable =
                |e: std::io::Error| AuthError::Config(format!("cannot read {from}: {e}"));
            // A small file, read once per grant: not worth a blocking-pool hop.
            if std::fs::metadata(&self.0).map_err(unreadable)?.len() > MAX_FILE_BYTES {
                return Err(AuthError::Config(format!(
                    "{from} is larger than {MAX_ASSERTION_BYTES} bytes"
                )));
            }
            let bytes = std::fs::read(&self.0).map_err(unreadable)?;
            let text = std::str::from_utf8(&bytes)
                .map_err(|_| AuthError::Config(format!("{from} is not UTF-8")))?;
            checked(text, &from)
        })
    }
}

/// A JWT read from an environment variable each time.
#[derive(Debug, Clone)]
pub struct AssertionEnv(String);

impl AssertionEnv {
    /// The variable `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self(name.into())
    }
}

impl AssertionSource for AssertionEnv {
    fn assertion(&self) -> BoxFuture<'_, Result<Secret, AuthError>> {
        Box::pin(async move {
            let from = format!("${}", self.0);
            let value = std::env::var(&self.0)
                .map_err(|_| AuthError::Config(format!("{from} is not set")))?;
            checked(&value, &from)
        })
    }
}

/// A JWT from a callback, called for every grant (a token from a metadata service, an agent,
/// a cloud SDK).
pub struct AssertionFn<F>(F);

impl<F> AssertionFn<F>
where
    F: Fn() -> BoxFuture<'static, Result<Secret, AuthError>> + Send + Sync + 'static,
{
    /// Wraps `fetch`.
    pub fn new(fetch: F) -> Self {
        Self(fetch)
    }
}

impl<F> std::fmt::Debug for AssertionFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AssertionFn")
    }
}

impl<F> AssertionSource for AssertionFn<F>
where
    F: Fn() -> BoxFuture<'static, Result<Secret, AuthError>> + Send + Sync + 'static,
{
    fn assertion(&self) -> BoxFuture<'_, Result<Secret, AuthError>> {
        let fetched = (self.0)();
        Box::pin(async move { checked(fetched.await?.expose(), "the callback's assertion") })
    }
}

/// A fixed JWT (one a host obtained itself).
impl AssertionSource for Secret {
    fn assertion(&self) -> BoxFuture<'_, Result<Secret, AuthError>> {
        Box::pin(async move { checked(self.expose(), "the assertion") })
    }
}

/// Enterprise-managed authorization: the enterprise identity provider that turns the user's ID
/// token into an ID-JAG (RFC 8693 token exchange), which the MCP server's authorization server
/// then accepts in the JWT bearer grant.
#[derive(Debug, Clone)]
pub struct EnterpriseIdp {
    pub(crate) token_endpoint: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<Secret>,
    pub(crate) id_token: Arc<dyn AssertionSource>,
}

impl EnterpriseIdp {
    /// The identity provider's token endpoint, this client's `client_id` there, and where the
    /// user's ID token comes from (the host signs the user in with the provider).
    pub fn new(
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
        id_token: impl AssertionSource,
    ) -> Self {
        Self {
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret: None,
            id_token: Arc::new(id_token),
        }
    }

    /// This client's secret at the identity provider (`client_secret_basic`); without one
    /// the exchange sends only `client_id`.
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(Secret::new(secret));
        self
    }
}

/// How the client obtains tokens.
#[derive(Debug, Clone, Default)]
pub(crate) enum Grant {
    /// In the browser, with PKCE (the default).
    #[default]
    AuthorizationCode,
    /// The client's own credentials, no user.
    ClientCredentials,
    /// A workload's JWT in the JWT bearer grant (workload identity federation).
    WorkloadIdentity(Arc<dyn AssertionSource>),
    /// The user's ID token → ID-JAG at the identity provider → JWT bearer grant.
    Enterprise(EnterpriseIdp),
}

impl Grant {
    /// Whether the grant needs a user in a browser.
    pub(crate) fn is_interactive(&self) -> bool {
        matches!(self, Self::AuthorizationCode)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[tokio::test]
    async fn sources_read_fresh_values_and_refuse_what_is_not_a_jwt() {
        let path = std::env::temp_dir().join(format!("smcp-assertion-{}", std::process::id()));
        std::fs::write(&path, "a.b.c\n").unwrap();
        let file = AssertionFile::new(&path);
        assert_eq!(file.assertion().await.unwrap().expose(), "a.b.c");
        std::fs::write(&path, "d.e.f").unwrap();
        assert_eq!(file.assertion().await.unwrap().expose(), "d.e.f");
        std::fs::write(&path, "secret-but-no-jwt").unwrap();
        let err = file.assertion().await.unwrap_err().to_string();
        assert!(
            err.contains("not a JWT") && !err.contains("secret-but"),
            "{err}"
        );
        std::fs::remove_file(&path).unwrap();
        assert!(file.assertion().await.is_err());
        let err = AssertionEnv::new("SMCP_TEST_SURELY_UNSET_VAR")
            .assertion()
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("SMCP_TEST_SURELY_UNSET_VAR is not set"),
            "{err}"
        );
        assert!(Secret::new("").assertion().await.is_err());
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = calls.clone();
        let callback = AssertionFn::new(move || {
            let n = counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::pin(async move { Ok(Secret::new(format!("h.p{n}.s"))) })
        });
        assert_eq!(callback.assertion().await.unwrap().expose(), "h.p0.s");
        assert_eq!(callback.assertion().await.unwrap().expose(), "h.p1.s");
    }
}
