//! The `--auth-*` flags (feature `auth`): the endpoint as an OAuth 2.1 protected resource.
//! Without the feature, no flags and no authorization.

#[cfg(feature = "auth")]
use std::sync::Arc;

#[cfg(feature = "auth")]
use anyhow::Context as _;
#[cfg(feature = "auth")]
use smcp_server::auth::{
    AuthLayer, DpopConfig, IntrospectionVerifier, JwtVerifier, ProtectedResourceMetadata,
    ScopePolicy, TokenVerifier,
};
use smcp_server::http::Endpoint;
#[cfg(feature = "auth")]
use smcp_server::mrtr::ReplayGuard;
use smcp_server::{Drained, ServeOptions};
use tokio::net::TcpListener;

/// Authorization (off unless --auth-issuer is given).
#[cfg(feature = "auth")]
#[derive(Debug, clap::Args)]
pub(crate) struct AuthArgs {
    /// Require OAuth 2.1 bearer tokens issued by this authorization server (its issuer
    /// identifier, `https`, or `http` on loopback). Its metadata (RFC 8414 or OpenID
    /// discovery) names the JWKS that signs JWT access tokens.
    #[arg(long, value_name = "URL", env = "SMCPD_AUTH_ISSUER")]
    auth_issuer: Option<String>,
    /// The audience tokens must name (RFC 8707). Default: the resource, --public-url.
    #[arg(long, value_name = "URI", requires = "auth_issuer")]
    auth_audience: Vec<String>,
    /// A scope every request needs. Repeatable.
    #[arg(long = "auth-scope", value_name = "SCOPE", requires = "auth_issuer")]
    auth_scopes: Vec<String>,
    /// A scope calls of one tool need, as TOOL=SCOPE. Repeatable.
    #[arg(long = "auth-tool-scope", value_name = "TOOL=SCOPE", requires = "auth_issuer", value_parser = tool_scope)]
    auth_tool_scopes: Vec<(String, String)>,
    /// Hide from tools/list the tools the token may not call.
    #[arg(long, requires = "auth_issuer")]
    auth_hide_tools: bool,
    /// Verify tokens by RFC 7662 introspection at this endpoint instead of as JWTs. The
    /// client secret comes from SMCPD_AUTH_CLIENT_SECRET (never a flag).
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    auth_introspection_url: Option<String>,
    /// Verify JWTs with the keys of this JWKS file instead of fetching the authorization
    /// server's (fixed keys: benchmarks, air-gapped tests).
    #[arg(
        long,
        value_name = "FILE",
        requires = "auth_issuer",
        conflicts_with = "auth_introspection_url"
    )]
    auth_jwks: Option<std::path::PathBuf>,
    /// The shortest time between two JWKS fetches caused by tokens naming an unknown key
    /// (`kid`), e.g. after the authorization server rotated its keys.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = smcpd::parse_duration, requires = "auth_issuer")]
    auth_jwks_refetch: std::time::Duration,
    /// The clock skew tolerated on a JWT's `exp` and `nbf`, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(0..=300), requires = "auth_issuer")]
    auth_leeway: u64,
    /// The client id smcpd authenticates to the introspection endpoint with.
    #[arg(
        long,
        value_name = "ID",
        env = "SMCPD_AUTH_CLIENT_ID",
        requires = "auth_introspection_url"
    )]
    auth_client_id: Option<String>,
    /// The endpoint's public URL (the OAuth resource), when clients reach smcpd at another
    /// address than the one it listens on (a proxy, 0.0.0.0). Default: the listen URL + /mcp.
    #[arg(long, value_name = "URL", env = "SMCPD_PUBLIC_URL")]
    public_url: Option<String>,
    /// Accept DPoP-bound access tokens (RFC 9449): `Authorization: DPoP` with a `DPoP`
    /// proof. Plain bearer tokens are still accepted unless --auth-dpop-required. With
    /// --redis, a proof's `jti` is refused on replay across instances.
    #[arg(long, requires = "auth_issuer")]
    auth_dpop: bool,
    /// Refuse plain bearer tokens: every request needs a DPoP-bound token and a proof
    /// (implies --auth-dpop).
    #[arg(long, requires = "auth_issuer")]
    auth_dpop_required: bool,
    /// Require a server nonce in DPoP proofs (implies --auth-dpop). The nonce key comes
    /// from SMCPD_AUTH_DPOP_NONCE_KEY (at least 32 bytes, the same on every instance; never
    /// a flag); without it, a random key per process.
    #[arg(long, requires = "auth_issuer")]
    auth_dpop_nonce: bool,
    /// Without --redis: how many DPoP proofs one instance remembers within their validity
    /// window (5 minutes), which bounds the sustained DPoP request rate (the default allows
    /// about 330 per second); past it, proofs get 503 until older ones expire. About 100 bytes
    /// each.
    #[arg(long, value_name = "N", default_value_t = smcp_server::mrtr::DEFAULT_REPLAY_CAPACITY, requires = "auth_issuer")]
    auth_dpop_replay_capacity: usize,
}

/// Without the feature: no flags.
#[cfg(not(feature = "auth"))]
#[derive(Debug, clap::Args)]
pub(crate) struct AuthArgs {}

/// What checks the tokens in front of the endpoint: the layer of `--auth-issuer`, or nothing.
#[derive(Debug)]
pub(crate) struct Guard(#[cfg(feature = "auth")] Option<AuthLayer>);

#[cfg(feature = "auth")]
fn tool_scope(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((tool, scope)) if !tool.is_empty() && !scope.is_empty() && !scope.contains(' ') => {
            Ok((tool.to_owned(), scope.to_owned()))
        }
        _ => Err(format!(
            "{text:?}: expected TOOL=SCOPE (one scope, no spaces)"
        )),
    }
}

#[cfg(feature = "auth")]
impl AuthArgs {
    /// Whether authorization is on.
    pub(crate) fn enabled(&self) -> bool {
        self.auth_issuer.is_some()
    }

    /// The guard of the endpoint at `url` (the resource, unless `--public-url`); `replay`,
    /// the replay guard the instances share, if any; `declared`, the scopes the served items
    /// declare, listed as supported; `keep_token`, whether handlers see the client's token
    /// (a gateway that exchanges it).
    pub(crate) async fn guard(
        &self,
        url: &str,
        replay: Option<Arc<dyn ReplayGuard>>,
        declared: &[String],
        keep_token: bool,
    ) -> anyhow::Result<Guard> {
        let resource = self.public_url.as_deref().unwrap_or(url);
        Ok(Guard(
            self.layer(resource, replay, declared, keep_token).await?,
        ))
    }

    /// The DPoP settings of `--auth-dpop*`, `None` when DPoP is off.
    fn dpop(&self, replay: Option<Arc<dyn ReplayGuard>>) -> anyhow::Result<Option<DpopConfig>> {
        if !(self.auth_dpop || self.auth_dpop_required || self.auth_dpop_nonce) {
            return Ok(None);
        }
        let mut builder = DpopConfig::builder().required(self.auth_dpop_required);
        if self.auth_dpop_nonce {
            let key = match std::env::var("SMCPD_AUTH_DPOP_NONCE_KEY") {
                Ok(key) => key.into_bytes(),
                Err(_) => {
                    tracing::warn!(
                        "--auth-dpop-nonce without SMCPD_AUTH_DPOP_NONCE_KEY: a random nonce key; other instances will not accept this one's nonces"
                    );
                    smcp_server::keys::random_hex::<32>()?.into_bytes()
                }
            };
            builder = builder.require_nonce(key);
        }
        builder = match replay {
            Some(replay) => builder.replay_guard_arc(replay),
            None => builder.replay_guard(smcp_server::mrtr::MemoryReplayGuard::new(
                self.auth_dpop_replay_capacity,
            )),
        };
        Ok(Some(builder.build().context("--auth-dpop")?))
    }

    /// The layer, when --auth-issuer is given; `resource` is the endpoint's URL.
    async fn layer(
        &self,
        resource: &str,
        replay: Option<Arc<dyn ReplayGuard>>,
        declared: &[String],
        keep_token: bool,
    ) -> anyhow::Result<Option<AuthLayer>> {
        let Some(issuer) = &self.auth_issuer else {
            return Ok(None);
        };
        let audiences = if self.auth_audience.is_empty() {
            vec![resource.to_owned()]
        } else {
            self.auth_audience.clone()
        };
        let verifier: Arc<dyn TokenVerifier> = match &self.auth_introspection_url {
            Some(url) => {
                let mut builder = IntrospectionVerifier::builder(url).issuer(issuer);
                for audience in &audiences {
                    builder = builder.audience(audience);
                }
                if let Some(id) = &self.auth_client_id {
                    let secret = std::env::var("SMCPD_AUTH_CLIENT_SECRET").unwrap_or_default();
                    builder = builder.client(id, secret);
                }
                builder = builder.leeway(self.auth_leeway);
                Arc::new(builder.build().context("--auth-introspection-url")?)
            }
            None => {
                let mut builder = match &self.auth_jwks {
                    Some(path) => {
                        let text = std::fs::read(path)
                            .with_context(|| format!("--auth-jwks {}", path.display()))?;
                        let set = serde_json::from_slice(&text).with_context(|| {
                            format!("--auth-jwks {}: not a JWKS", path.display())
                        })?;
                        JwtVerifier::from_jwks(issuer, set)
                    }
                    None => JwtVerifier::builder(issuer),
                };
                for audience in &audiences {
                    builder = builder.audience(audience);
                }
                let verifier = builder
                    .min_refetch_interval(self.auth_jwks_refetch)
                    .leeway(self.auth_leeway)
                    .build()
                    .context("--auth-issuer")?;
                if let Err(error) = verifier.prefetch().await {
                    tracing::warn!(%error, "cannot fetch the authorization server's keys yet; will retry on the first request");
                }
                Arc::new(verifier)
            }
        };
        let mut policy = ScopePolicy::builder().hide_tools(self.auth_hide_tools);
        for scope in &self.auth_scopes {
            policy = policy.require(scope);
        }
        for (tool, scope) in &self.auth_tool_scopes {
            policy = policy.tool(tool, scope);
        }
        let mut supported = self.auth_scopes.clone();
        for scope in self.auth_tool_scopes.iter().map(|(_, s)| s).chain(declared) {
            if !supported.contains(scope) {
                supported.push(scope.clone());
            }
        }
        let metadata = ProtectedResourceMetadata::new(resource)
            .context("the resource URL (--public-url)")?
            .authorization_server(issuer)
            .scopes_supported(supported)
            .resource_name("smcpd");
        let dpop = self.dpop(replay)?;
        tracing::info!(%issuer, %resource, dpop = dpop.is_some(), dpop_required = self.auth_dpop_required, "authorization on: access tokens required");
        let mut layer = AuthLayer::builder_arc(verifier, metadata)
            .scopes(policy.build())
            .keep_token(keep_token)
            .protect_only("/mcp");
        if let Some(dpop) = dpop {
            layer = layer.dpop(dpop);
        }
        Ok(Some(layer.build()))
    }
}

#[cfg(feature = "auth")]
impl Guard {
    /// Serves `endpoint` on `listener` until `shutdown` and the drain: behind the layer,
    /// which also answers the metadata document, when there is one. The data plane, whose
    /// URLs are signed capabilities of their own, passes through.
    pub(crate) async fn serve(
        self,
        listener: TcpListener,
        endpoint: Endpoint,
        options: ServeOptions,
        shutdown: impl Future<Output = ()>,
    ) -> std::io::Result<Drained> {
        match self.0 {
            Some(auth) => {
                let app = tower::Layer::layer(&auth, endpoint);
                smcp_server::serve(listener, app, options, shutdown).await
            }
            None => smcp_server::serve(listener, endpoint, options, shutdown).await,
        }
    }
}

#[cfg(not(feature = "auth"))]
impl AuthArgs {
    /// Authorization is off.
    pub(crate) fn enabled(&self) -> bool {
        false
    }

    /// No guard.
    pub(crate) async fn guard(
        &self,
        _url: &str,
        _replay: Option<std::sync::Arc<dyn smcp_server::mrtr::ReplayGuard>>,
        _declared: &[String],
        _keep_token: bool,
    ) -> anyhow::Result<Guard> {
        Ok(Guard())
    }
}

#[cfg(not(feature = "auth"))]
impl Guard {
    /// Serves `endpoint` on `listener` until `shutdown` and the drain.
    pub(crate) async fn serve(
        self,
        listener: TcpListener,
        endpoint: Endpoint,
        options: ServeOptions,
        shutdown: impl Future<Output = ()>,
    ) -> std::io::Result<Drained> {
        smcp_server::serve(listener, endpoint, options, shutdown).await
    }
}
