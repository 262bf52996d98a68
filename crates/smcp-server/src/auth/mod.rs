//! OAuth 2.1 protected resource (`basic/authorization/`), feature `auth`: the MCP endpoint
//! behind bearer tokens, optionally DPoP-bound.
//!
//! | module | responsibility |
//! |---|---|
//! | `verifier` | [`TokenVerifier`], the one trait token checks implement; [`VerifiedToken`], [`TokenError`] |
//! | `jwt`, `keys`, `discovery` | [`JwtVerifier`]: JWT access tokens against the authorization server's JWKS (discovered from its metadata, cached, refetched on an unknown `kid`) |
//! | `introspection` | [`IntrospectionVerifier`]: opaque tokens through RFC 7662 introspection |
//! | `fetch` | bounded fetches (timeout, size cap, no redirects, `https` except loopback) |
//! | `cache` | validated tokens until they expire, bounded |
//! | `metadata` | [`ProtectedResourceMetadata`] (RFC 9728) |
//! | `scopes` | [`ScopePolicy`]: scopes per server, method and tool, then those an item declares (`ToolBuilder::scope`); hiding tools from `tools/list` |
//! | `dpop` | [`DpopConfig`]: DPoP-bound tokens (RFC 9449): proof checks, the RFC 7638 thumbprint, stateless nonces, `jti` replay through a [`ReplayGuard`](crate::mrtr::ReplayGuard) |
//! | `challenge` | the `WWW-Authenticate` challenges (`Bearer`, `DPoP`) and refusal bodies |
//! | `layer` | [`AuthLayer`]: the tower layer in front of the endpoint |
//!
//! The layer depends on the core's access seam ([`crate::core::access`]) and nothing in
//! the core or the HTTP transport depends on it. See `docs/auth.md`.

mod cache;
mod challenge;
mod discovery;
mod dpop;
mod fetch;
mod introspection;
mod jwt;
mod keys;
mod layer;
mod metadata;
mod scopes;
mod verifier;

pub use crate::core::access::{INSUFFICIENT_SCOPE, InsufficientScope};
pub use challenge::UNAUTHORIZED;
pub use dpop::{
    DPOP, DPOP_NONCE, DpopConfig, DpopConfigBuilder, DpopError, thumbprint as jwk_thumbprint,
};
pub use introspection::{IntrospectionVerifier, IntrospectionVerifierBuilder};
pub use jsonwebtoken::Algorithm;
pub use jsonwebtoken::jwk::JwkSet;
pub use jwt::{AuthConfigError, JwtVerifier, JwtVerifierBuilder};
pub use layer::{AuthBody, AuthLayer, AuthLayerBuilder, AuthService};
pub use metadata::ProtectedResourceMetadata;
pub use scopes::{ScopePolicy, ScopePolicyBuilder};
pub use verifier::{TokenError, TokenVerifier, VerifiedToken, VerifyFuture};
