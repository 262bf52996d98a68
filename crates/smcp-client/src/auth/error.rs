//! [`AuthError`]: why authorization failed. Never carries a token, secret or code.

/// Why the OAuth flow (or a stored token) could not authorize a request.
///
/// Reached through [`crate::Error::auth_error`]. Messages name the document, field or step
/// that failed and never quote a token, secret or authorization code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// A metadata document or endpoint could not be fetched (network, status, size, timeout).
    #[error("cannot fetch {what} from {url}: {detail}")]
    Fetch {
        /// Which document or endpoint ("protected resource metadata", "token endpoint"…).
        what: &'static str,
        /// Where.
        url: String,
        /// Why.
        detail: String,
    },
    /// No Protected Resource Metadata was found (header URL and well-known fallbacks).
    #[error("no protected resource metadata found for {server} (tried {tried})")]
    NoResourceMetadata {
        /// The MCP server URL.
        server: String,
        /// The URLs tried, in order.
        tried: String,
    },
    /// The PRM `resource` does not identify the MCP server this client talks to (RFC 9728 §3.3).
    #[error(
        "the protected resource metadata names resource {resource:?}, which is not the MCP server {server}; refusing to authorize"
    )]
    ResourceMismatch {
        /// The `resource` of the metadata.
        resource: String,
        /// The MCP server URL.
        server: String,
    },
    /// No authorization server metadata was found at any of the RFC 8414 / OpenID URLs.
    #[error("no authorization server metadata found for issuer {issuer} (tried {tried})")]
    NoServerMetadata {
        /// The issuer named by the PRM.
        issuer: String,
        /// The URLs tried, in order.
        tried: String,
    },
    /// The metadata's `issuer` is not the issuer its well-known URL was built from (RFC 8414 §3.3).
    #[error(
        "authorization server metadata at {url} names issuer {found:?}, expected {expected:?}; refusing to use it"
    )]
    IssuerMismatch {
        /// The issuer the URL was derived from.
        expected: String,
        /// The `issuer` in the document.
        found: String,
        /// The document's URL.
        url: String,
    },
    /// A required metadata field is missing or malformed.
    #[error("{document}: field `{field}` {problem}")]
    BadMetadata {
        /// Which document.
        document: &'static str,
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// The authorization server does not advertise PKCE `S256` (`code_challenge_methods_supported`).
    #[error(
        "the authorization server {issuer} does not advertise PKCE S256 in code_challenge_methods_supported; refusing to authorize without it"
    )]
    NoPkce {
        /// The issuer.
        issuer: String,
    },
    /// No way to identify this client to the authorization server: no pre-registered client id,
    /// no Client ID Metadata Document support, no registration endpoint.
    #[error(
        "cannot register with {issuer}: no pre-registered client_id, no client ID metadata document support and no registration_endpoint"
    )]
    NoRegistration {
        /// The issuer.
        issuer: String,
    },
    /// The redirect carried an `error` (the user denied, or the server refused).
    #[error("the authorization server refused: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Denied {
        /// The `error` code.
        error: String,
        /// The `error_description`, if any.
        description: Option<String>,
    },
    /// The redirect's `state` is missing or differs from the one sent (possible CSRF).
    #[error("the authorization response's state does not match the request's; refusing it")]
    StateMismatch,
    /// The redirect's `iss` is missing (when advertised) or differs from the issuer (RFC 9207).
    #[error("the authorization response's iss {}; expected {expected:?} (RFC 9207); refusing it", found.as_deref().map(|f| format!("is {f:?}")).unwrap_or_else(|| "is missing".to_owned()))]
    IssMismatch {
        /// The recorded issuer.
        expected: String,
        /// The `iss` received, if any.
        found: Option<String>,
    },
    /// The redirect has no `code`.
    #[error("the authorization response has no code")]
    NoCode,
    /// The token endpoint answered with an OAuth error.
    #[error("token endpoint error {error}{}", description.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    Token {
        /// The `error` code (`invalid_grant`…), or the HTTP status.
        error: String,
        /// The `error_description`.
        description: Option<String>,
    },
    /// The pluggable [`Authorizer`](crate::auth::Authorizer) failed (browser, listener, timeout).
    #[error("authorization step failed: {0}")]
    Authorizer(String),
    /// The token store failed (I/O, bad file).
    #[error("token store: {0}")]
    Store(String),
    /// The configuration cannot work (bad URL, missing authorizer…).
    #[error("OAuth configuration: {0}")]
    Config(String),
}
