//! OAuth 2.1 authorization for HTTP servers (MCP "Authorization"; feature `oauth`, default).
//!
//! Configure it with [`OAuthConfig`] on [`ClientBuilder::oauth`](crate::ClientBuilder::oauth).
//! Every HTTP request to the MCP server then carries `Authorization: Bearer <token>`; a `401`
//! runs the flow and retries once; a `403` with `error="insufficient_scope"` asks for the
//! union of scopes and retries (bounded); an expired token is refreshed first.
//!
//! | file | what |
//! |---|---|
//! | `challenge` | `WWW-Authenticate: Bearer` and `DPoP` parsing ([`BearerChallenge`]) |
//! | `discovery` | Protected Resource Metadata, authorization server metadata, the URL orders, `resource` and `issuer` checks |
//! | `registration` | pre-registered client → Client ID Metadata Document → Dynamic Client Registration |
//! | `pkce` | S256 verifier/challenge, `state` |
//! | `flow` | authorization code request, redirect checks (`state`, RFC 9207 `iss`), refresh, client credentials, the JWT bearer grants |
//! | `grant` | which grant; [`AssertionSource`] and [`EnterpriseIdp`] for workload identity and enterprise-managed authorization |
//! | `token` | the token endpoint, its auth methods (`private_key_jwt` included), the DPoP nonce retry |
//! | `jws` | [`JwtSigner`], [`KeySigner`]: the JWTs the client signs |
//! | `dpop` | DPoP proofs and server nonces ([`DpopMode`]) |
//! | `store` | [`TokenStore`], [`MemoryTokenStore`], [`FileTokenStore`] |
//! | `authorizer` | [`Authorizer`] (the browser step), [`LoopbackAuthorizer`], [`HeadlessAuthorizer`] |
//! | `session` | the per-client state and the retry logic wrapped around every request |

mod authorizer;
mod challenge;
mod discovery;
mod dpop;
mod error;
mod fetch;
mod flow;
mod grant;
mod jws;
mod pkce;
mod registration;
mod secret;
pub(crate) mod session;
mod store;
mod token;

use std::sync::Arc;

pub use authorizer::{
    AuthorizationResponse, Authorizer, DEFAULT_LOOPBACK_TIMEOUT, HeadlessAuthorizer,
    LoopbackAuthorizer,
};
pub use challenge::BearerChallenge;
pub use dpop::DpopMode;
pub use error::AuthError;
pub use grant::{AssertionEnv, AssertionFile, AssertionFn, AssertionSource, EnterpriseIdp};
pub use jws::{JwtSigner, KeySigner};
pub use secret::Secret;
pub(crate) use store::now_secs;
pub use store::{ClientRegistration, FileTokenStore, MemoryTokenStore, StoredTokens, TokenStore};

/// Default bound on step-up re-authorizations for one request.
pub const DEFAULT_MAX_STEP_UPS: u32 = 2;

/// How the client obtains tokens. Built with [`OAuthConfig::builder`].
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use smcp_client::auth::{FileTokenStore, LoopbackAuthorizer, OAuthConfig};
/// let oauth = OAuthConfig::builder()
///     .authorizer(LoopbackAuthorizer::bind(0)?)
///     .token_store(FileTokenStore::new("/home/me/.cache/my-app/tokens"))
///     .client_name("my-app")
///     .build();
/// let client = smcp_client::Client::builder("https://mcp.example.com/mcp").oauth(oauth).build()?;
/// client.list_tools().await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<Secret>,
    pub(crate) client_issuer: Option<String>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) client_name: String,
    pub(crate) authorizer: Option<Arc<dyn Authorizer>>,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) offline_access: bool,
    pub(crate) max_step_ups: u32,
    pub(crate) grant: grant::Grant,
    pub(crate) dpop: DpopMode,
    pub(crate) dpop_signer: Option<jws::Signer>,
    pub(crate) assertion_signer: Option<jws::Signer>,
}

impl OAuthConfig {
    /// A builder: no pre-registered client, no CIMD URL (so Dynamic Client Registration),
    /// tokens in memory, `offline_access` requested when offered, [`DEFAULT_MAX_STEP_UPS`].
    pub fn builder() -> OAuthConfigBuilder {
        OAuthConfigBuilder(Self {
            client_id: None,
            client_secret: None,
            client_issuer: None,
            client_metadata_url: None,
            client_name: "smcp".to_owned(),
            authorizer: None,
            store: Arc::new(MemoryTokenStore::new()),
            offline_access: true,
            max_step_ups: DEFAULT_MAX_STEP_UPS,
            grant: grant::Grant::AuthorizationCode,
            dpop: DpopMode::Auto,
            dpop_signer: None,
            assertion_signer: None,
        })
    }
}

/// Builds an [`OAuthConfig`].
#[derive(Debug, Clone)]
pub struct OAuthConfigBuilder(OAuthConfig);

impl OAuthConfigBuilder {
    /// A pre-registered `client_id` (first choice of the registration order).
    pub fn client_id(mut self, id: impl Into<String>) -> Self {
        self.0.client_id = Some(id.into());
        self
    }

    /// The pre-registered client's secret (makes it a confidential client:
    /// `client_secret_basic` or `client_secret_post`, as the server offers).
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.0.client_secret = Some(Secret::new(secret));
        self
    }

    /// Use the pre-registered client only with this issuer (others get CIMD or DCR).
    pub fn client_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.0.client_issuer = Some(issuer.into());
        self
    }

    /// The HTTPS URL of this client's Client ID Metadata Document, used as `client_id` with
    /// servers that advertise `client_id_metadata_document_supported`.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.0.client_metadata_url = Some(url.into());
        self
    }

    /// `client_name` sent in Dynamic Client Registration (default `smcp`).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.0.client_name = name.into();
        self
    }

    /// The browser step. Required for the authorization code flow.
    pub fn authorizer(mut self, authorizer: impl Authorizer) -> Self {
        self.0.authorizer = Some(Arc::new(authorizer));
        self
    }

    /// Where tokens are kept (default [`MemoryTokenStore`]).
    pub fn token_store(mut self, store: impl TokenStore) -> Self {
        self.0.store = Arc::new(store);
        self
    }

    /// A store shared with other code (e.g. to clear it on logout).
    pub fn shared_token_store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.0.store = store;
        self
    }

    /// Whether to add `offline_access` when the server lists it (to get a refresh token).
    /// Default true.
    pub fn offline_access(mut self, on: bool) -> Self {
        self.0.offline_access = on;
        self
    }

    /// Bound on step-up re-authorizations for one request (default [`DEFAULT_MAX_STEP_UPS`]).
    pub fn max_step_ups(mut self, n: u32) -> Self {
        self.0.max_step_ups = n;
        self
    }

    /// Machine-to-machine: the `client_credentials` grant with the pre-registered client id
    /// and its secret or assertion key, no browser (the MCP `oauth-client-credentials`
    /// extension). `false` returns to the authorization code flow.
    pub fn client_credentials(mut self, on: bool) -> Self {
        self.0.grant = if on {
            grant::Grant::ClientCredentials
        } else {
            grant::Grant::AuthorizationCode
        };
        self
    }

    /// Workload identity federation: the workload's JWT (from `source`, fetched anew for each
    /// grant) in the JWT bearer grant (RFC 7523 §2.1), no browser. A failed grant is reported,
    /// never retried with another grant. With a pre-registered client id it authenticates as
    /// that client; without one it sends none.
    pub fn workload_identity(mut self, source: impl AssertionSource) -> Self {
        self.0.grant = grant::Grant::WorkloadIdentity(Arc::new(source));
        self
    }

    /// Enterprise-managed authorization: the user's ID token exchanged at the enterprise
    /// identity provider for an ID-JAG, which the MCP server's authorization server takes in
    /// the JWT bearer grant (with this client's registration there), no browser.
    pub fn enterprise_idp(mut self, idp: EnterpriseIdp) -> Self {
        self.0.grant = grant::Grant::Enterprise(idp);
        self
    }

    /// When to bind tokens to a key with DPoP (default [`DpopMode::Auto`]: when the
    /// authorization server offers it).
    pub fn dpop(mut self, mode: DpopMode) -> Self {
        self.0.dpop = mode;
        self
    }

    /// The DPoP key (default: an ES256 key generated per client and kept with its tokens).
    /// Its [`JwtSigner::public_jwk`] must be `Some`.
    pub fn dpop_signer(mut self, signer: impl JwtSigner) -> Self {
        self.0.dpop_signer = Some(Arc::new(signer));
        self
    }

    /// Authenticate to the token endpoint with `private_key_jwt` (RFC 7523 §2.2), assertions
    /// signed by `signer` (e.g. [`KeySigner::from_pem`]); chosen over a client secret when the
    /// server offers it.
    pub fn client_assertion_signer(mut self, signer: impl JwtSigner) -> Self {
        self.0.assertion_signer = Some(Arc::new(signer));
        self
    }

    /// The configuration.
    pub fn build(self) -> OAuthConfig {
        self.0
    }
}
