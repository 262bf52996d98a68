//! The one trait every token verifier implements, what it returns and how it fails.

use std::future::Future;
use std::pin::Pin;
use std::time::SystemTime;

/// A boxed, sendable future (what [`TokenVerifier::verify`] returns).
pub type VerifyFuture<'a> =
    Pin<Box<dyn Future<Output = Result<VerifiedToken, TokenError>> + Send + 'a>>;

/// What a valid access token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedToken {
    /// The `sub` claim (for introspection, `sub`, else `username`, else `client_id`).
    pub subject: String,
    /// The `iss` claim.
    pub issuer: String,
    /// The granted scopes (`scope`, space-separated, or `scp`).
    pub scopes: Vec<String>,
    /// The `aud` claim (one or more resources).
    pub audience: Vec<String>,
    /// The `client_id` claim, if any.
    pub client_id: Option<String>,
    /// When the token expires (`exp`); `None` when it carries none (introspection only).
    pub expires_at: Option<SystemTime>,
    /// The key the token is bound to (`cnf.jkt`, RFC 9449 §6): the RFC 7638 thumbprint of
    /// the client's DPoP key. A bound token is accepted only with the `DPoP` scheme and a
    /// proof signed by that key.
    pub jkt: Option<String>,
}

impl VerifiedToken {
    /// Whether `scope` was granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

/// Why a token was refused. The message names what is wrong and never contains the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// No `Authorization` header.
    #[error("no access token: send Authorization: Bearer <token>")]
    Missing,
    /// An `Authorization` header that is not `Bearer <token>`.
    #[error("the Authorization header must use the Bearer scheme")]
    NotBearer,
    /// Not a well-formed token (e.g. not three base64url parts, bad JSON, `alg: none`).
    #[error("malformed access token: {0}")]
    Malformed(String),
    /// `exp` has passed.
    #[error("the access token has expired")]
    Expired,
    /// `nbf` is in the future.
    #[error("the access token is not valid yet (nbf)")]
    NotYetValid,
    /// `aud` does not name this resource (RFC 8707).
    #[error("the access token was not issued for this resource (aud)")]
    WrongAudience,
    /// `iss` is not the configured authorization server.
    #[error("the access token was not issued by the expected authorization server (iss)")]
    WrongIssuer,
    /// The signature does not verify.
    #[error("the access token's signature does not verify")]
    BadSignature,
    /// The signing key (`kid`) is not in the authorization server's JWKS, even after a
    /// refetch.
    #[error("the access token was signed with an unknown key (kid)")]
    UnknownKey,
    /// The header names an algorithm this verifier does not accept for the key.
    #[error("the access token's algorithm is not accepted: {0}")]
    Algorithm(String),
    /// Introspection says the token is not active.
    #[error("the access token is not active")]
    Inactive,
    /// A required claim is missing or of the wrong type.
    #[error("the access token's {0} claim is missing or invalid")]
    Claim(&'static str),
    /// The keys or the introspection endpoint could not be reached; not the client's fault.
    #[error("the authorization server is unavailable: {0}")]
    Unavailable(String),
}

impl TokenError {
    /// Whether a token was given at all (RFC 6750 §3.1: a challenge to a request without a
    /// token carries no `error`).
    pub fn token_given(&self) -> bool {
        !matches!(self, Self::Missing | Self::NotBearer)
    }

    /// Whether the server, not the token, is at fault (answered with `503`).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::Unavailable(_))
    }
}

/// Verifies a bearer token. Implement it to plug in another verifier (the crate ships
/// [`super::JwtVerifier`] and [`super::IntrospectionVerifier`]); use it as
/// `Arc<dyn TokenVerifier>`.
///
/// # Examples
///
/// ```
/// use smcp_server::auth::{TokenError, TokenVerifier, VerifiedToken, VerifyFuture};
///
/// /// Accepts one fixed token (a test double).
/// struct Fixed;
///
/// impl TokenVerifier for Fixed {
///     fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
///         Box::pin(async move {
///             if token != "let-me-in" {
///                 return Err(TokenError::BadSignature);
///             }
///             Ok(VerifiedToken {
///                 subject: "alice".into(),
///                 issuer: "https://as.example".into(),
///                 scopes: vec!["mcp".into()],
///                 audience: vec!["https://mcp.example/mcp".into()],
///                 client_id: None,
///                 expires_at: None,
///                 jkt: None,
///             })
///         })
///     }
/// }
/// ```
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` (the part after `Bearer `).
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a>;
}
