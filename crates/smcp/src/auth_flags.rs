//! The OAuth flags (global, each with an environment variable): the pre-registered client, its
//! assertion key (`private_key_jwt`), DPoP, and the grants that need no browser (client
//! credentials, workload identity, enterprise-managed authorization). A leaf, read by
//! `login` when it builds the client's `OAuthConfig`.

use std::path::PathBuf;

/// When to bind tokens to a key with DPoP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Dpop {
    /// When the authorization server offers it.
    Auto,
    /// Always.
    Always,
    /// Never.
    Off,
}

// Flattened into `Globals`; no doc comment, which would become help text.
#[derive(Debug, clap::Args)]
#[group(skip)]
pub(crate) struct AuthFlags {
    /// A pre-registered OAuth client id (otherwise the client registers itself: Client ID
    /// Metadata Document or Dynamic Client Registration).
    #[arg(long, env = "SMCP_CLIENT_ID", global = true)]
    pub(crate) client_id: Option<String>,
    /// The pre-registered client's secret.
    #[arg(
        long,
        env = "SMCP_CLIENT_SECRET",
        hide_env_values = true,
        global = true
    )]
    pub(crate) client_secret: Option<String>,
    /// A PEM private key (PKCS#8, SEC1 or PKCS#1; ES256, ES384 or RS256) the pre-registered
    /// client authenticates with (`private_key_jwt`).
    #[arg(
        long,
        value_name = "PEM",
        env = "SMCP_CLIENT_ASSERTION_KEY",
        global = true
    )]
    pub(crate) client_assertion_key: Option<PathBuf>,
    /// Bind tokens to a key with DPoP: `--dpop=auto` (when the authorization server offers
    /// it, the default), `--dpop` or `--dpop=always`, `--dpop=off`.
    #[arg(
        long,
        value_enum,
        env = "SMCP_DPOP",
        default_value = "auto",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "always",
        global = true
    )]
    pub(crate) dpop: Dpop,
    /// Machine to machine: the client credentials grant with the pre-registered client's
    /// secret or assertion key, no browser.
    #[arg(long, env = "SMCP_CLIENT_CREDENTIALS", global = true)]
    pub(crate) client_credentials: bool,
    /// Workload identity federation: the workload's JWT, read from this file for every grant
    /// (a projected service-account token, a CI job's OIDC token), in the JWT bearer grant.
    #[arg(
        long,
        value_name = "FILE",
        env = "SMCP_WORKLOAD_TOKEN_FILE",
        global = true
    )]
    pub(crate) workload_token_file: Option<PathBuf>,
    /// Workload identity federation with the JWT in this environment variable.
    #[arg(
        long,
        value_name = "VAR",
        global = true,
        conflicts_with = "workload_token_file"
    )]
    pub(crate) workload_token_env: Option<String>,
    /// Enterprise-managed authorization: the identity provider's token endpoint, where the
    /// user's ID token (--idp-token-file or --idp-token-env) becomes an ID-JAG.
    #[arg(
        long,
        value_name = "URL",
        env = "SMCP_IDP_TOKEN_ENDPOINT",
        global = true
    )]
    pub(crate) idp_token_endpoint: Option<String>,
    /// This client's id at the identity provider.
    #[arg(long, value_name = "ID", env = "SMCP_IDP_CLIENT_ID", global = true)]
    pub(crate) idp_client_id: Option<String>,
    /// This client's secret at the identity provider.
    #[arg(
        long,
        env = "SMCP_IDP_CLIENT_SECRET",
        hide_env_values = true,
        global = true
    )]
    pub(crate) idp_client_secret: Option<String>,
    /// The user's ID token from the identity provider, read from this file for every grant.
    #[arg(long, value_name = "FILE", env = "SMCP_IDP_TOKEN_FILE", global = true)]
    pub(crate) idp_token_file: Option<PathBuf>,
    /// The user's ID token in this environment variable.
    #[arg(
        long,
        value_name = "VAR",
        global = true,
        conflicts_with = "idp_token_file"
    )]
    pub(crate) idp_token_env: Option<String>,
}
