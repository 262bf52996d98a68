//! [`AuthLayer`]: the tower layer in front of the MCP endpoint (both eras) that turns a
//! bearer token into a [`Principal`] and an [`Access`], or refuses the request.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{Either, Full};
use smcp_proto::error::INTERNAL_ERROR;

use super::cache::TokenCache;
use super::challenge::{self, UNAUTHORIZED};
use super::dpop::{self, DPOP_NONCE, DpopConfig, DpopError, Target};
use super::metadata::ProtectedResourceMetadata;
use super::scopes::{Granted, ScopePolicy};
use super::verifier::{TokenError, TokenVerifier};
use crate::core::access::{Access, InsufficientScope};
use crate::core::context::Principal;
use crate::core::mrtr::Redeem;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The body of an [`AuthService`]'s responses: the wrapped service's, or the layer's own
/// (a refusal, the metadata document).
pub type AuthBody<B> = Either<B, Full<Bytes>>;

/// The root form of the metadata path (RFC 9728 §3), served too: clients of an endpoint at
/// a path try it after the path-suffixed form.
const ROOT_METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Requires a valid bearer token on every request to the service it wraps.
///
/// - A request without a token, or with one the verifier refuses, gets `401` with
///   `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` (plus
///   `error="invalid_token"` and a description when a token was given), a JSON-RPC error
///   body (code [`UNAUTHORIZED`](super::UNAUTHORIZED), id null), and never reaches the
///   service.
/// - A valid token lacking a scope the [`ScopePolicy`] requires gets `403` with
///   `WWW-Authenticate: Bearer error="insufficient_scope", scope="<every needed scope>",
///   resource_metadata="…"`: server-wide scopes here, per-method and per-tool scopes in the
///   core's dispatch, before any handler runs.
/// - A valid token reaches the service with a [`Principal`] (the token's subject: one
///   verifier serves one issuer, so the subject alone names the caller) and an [`Access`]
///   (its scopes under the policy) in the request extensions.
/// - `GET` of the Protected Resource Metadata path (the endpoint's, and the root form) is
///   answered here, unauthenticated; mount [`AuthLayer::metadata_router`] too when the layer
///   wraps only the endpoint's route.
/// - If the verifier cannot reach the authorization server: `503`.
/// - With [`AuthLayerBuilder::dpop`], DPoP-bound tokens (RFC 9449): `Authorization: DPoP
///   <token>` and a `DPoP` proof, checked against the request and the token's `cnf.jkt`;
///   a bound token sent as `Bearer` is refused, and so is every plain bearer token when
///   DPoP is required. `401`s then carry a `DPoP` challenge too (see `docs/auth.md`).
///
/// Validated tokens are cached until they expire (bounded; see
/// [`AuthLayerBuilder::cache`]), so a request with a known token costs one map lookup.
///
/// # Examples
///
/// ```no_run
/// use smcp_server::auth::{AuthLayer, JwtVerifier, ProtectedResourceMetadata, ScopePolicy};
/// use smcp_server::Server;
///
/// # async fn run() -> anyhow::Result<()> {
/// let server = Server::builder("demo", "1.0.0").build()?;
/// let resource = "https://mcp.example.com/mcp";
/// let verifier = JwtVerifier::builder("https://auth.example.com").audience(resource).build()?;
/// let auth = AuthLayer::builder(
///     verifier,
///     ProtectedResourceMetadata::new(resource)?
///         .authorization_server("https://auth.example.com")
///         .scopes_supported(["mcp"]),
/// )
/// .scopes(ScopePolicy::builder().require("mcp").tool("admin_reset", "admin").build())
/// .build();
/// let app = server.router("/mcp").layer(auth.clone()).merge(auth.metadata_router());
/// # let _ = app;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct AuthLayer {
    config: Arc<Config>,
}

impl std::fmt::Debug for AuthLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthLayer")
            .field("metadata", &self.config.metadata)
            .field("policy", &self.config.policy)
            .finish_non_exhaustive()
    }
}

struct Config {
    verifier: Arc<dyn TokenVerifier>,
    metadata: ProtectedResourceMetadata,
    metadata_json: Bytes,
    metadata_path: String,
    metadata_url: String,
    policy: Arc<ScopePolicy>,
    /// The `scope` of a `401` challenge: the server-wide scopes, else `scopes_supported`.
    challenge_scope: Option<String>,
    cache: TokenCache<Grant>,
    /// When set, only requests for this path need a token.
    protected_path: Option<String>,
    /// DPoP, when on.
    dpop: Option<DpopConfig>,
    /// The accepted DPoP algorithms, space-separated (the challenges' `algs`).
    dpop_algs: String,
    /// Whether handlers see the access token ([`AuthLayerBuilder::keep_token`]).
    keep_token: bool,
}

/// What a valid token grants, cached per token.
struct Grant {
    principal: Principal,
    access: Access,
    /// The server-wide scopes it lacks, if any (answered with `403` here).
    missing_server_scope: bool,
    /// The token's DPoP key binding (`cnf.jkt`).
    jkt: Option<String>,
}

/// Builds an [`AuthLayer`] (see [`AuthLayer::builder`]).
pub struct AuthLayerBuilder {
    verifier: Arc<dyn TokenVerifier>,
    metadata: ProtectedResourceMetadata,
    policy: ScopePolicy,
    cache_entries: usize,
    cache_ttl: Duration,
    protected_path: Option<String>,
    dpop: Option<DpopConfig>,
    keep_token: bool,
}

impl std::fmt::Debug for AuthLayerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthLayerBuilder")
            .field("metadata", &self.metadata)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl AuthLayer {
    /// A layer verifying tokens with `verifier`, advertising `metadata`.
    pub fn builder(
        verifier: impl TokenVerifier,
        metadata: ProtectedResourceMetadata,
    ) -> AuthLayerBuilder {
        Self::builder_arc(Arc::new(verifier), metadata)
    }

    /// [`AuthLayer::builder`] with a shared verifier.
    pub fn builder_arc(
        verifier: Arc<dyn TokenVerifier>,
        metadata: ProtectedResourceMetadata,
    ) -> AuthLayerBuilder {
        AuthLayerBuilder {
            verifier,
            metadata,
            policy: ScopePolicy::default(),
            cache_entries: 10_000,
            cache_ttl: Duration::from_secs(300),
            protected_path: None,
            dpop: None,
            keep_token: false,
        }
    }

    /// The Protected Resource Metadata this layer advertises.
    pub fn metadata(&self) -> &ProtectedResourceMetadata {
        &self.config.metadata
    }

    /// A router serving the metadata document at its well-known path and at the root form,
    /// unauthenticated; merge it into the app next to the endpoint.
    pub fn metadata_router(&self) -> axum::Router {
        let config = self.config.clone();
        let serve = move || {
            let config = config.clone();
            async move { metadata_response(&config) }
        };
        let mut router =
            axum::Router::new().route(ROOT_METADATA_PATH, axum::routing::get(serve.clone()));
        if self.config.metadata_path != ROOT_METADATA_PATH {
            router = router.route(&self.config.metadata_path, axum::routing::get(serve));
        }
        router
    }
}

impl AuthLayerBuilder {
    /// The scopes required per server, method and tool (default: none).
    #[must_use]
    pub fn scopes(mut self, policy: ScopePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Bounds the cache of validated tokens: at most `max_entries`, each kept until the
    /// token expires or for `max_ttl`, whichever is sooner (default 10 000 and 5 minutes;
    /// `0` turns caching off). With an introspection verifier, `max_ttl` is how long a
    /// revoked token may still be accepted.
    #[must_use]
    pub fn cache(mut self, max_entries: usize, max_ttl: Duration) -> Self {
        self.cache_entries = max_entries;
        self.cache_ttl = max_ttl;
        self
    }

    /// Requires a token only for requests to `path` (the MCP endpoint, e.g. `"/mcp"`); the
    /// wrapped service's other paths (say, a SEP-2631 data plane whose URLs are signed
    /// capabilities of their own) pass through untouched. By default every request the
    /// layer wraps needs a token.
    #[must_use]
    pub fn protect_only(mut self, path: impl Into<String>) -> Self {
        self.protected_path = Some(path.into());
        self
    }

    /// Accepts DPoP-bound access tokens (RFC 9449) checked as `dpop` says; the metadata
    /// advertises `dpop_signing_alg_values_supported` (and
    /// `dpop_bound_access_tokens_required` when [`DpopConfigBuilder::required`](super::DpopConfigBuilder::required)).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use smcp_server::auth::{AuthLayer, DpopConfig, JwtVerifier, ProtectedResourceMetadata};
    ///
    /// # fn run() -> anyhow::Result<()> {
    /// let resource = "https://mcp.example.com/mcp";
    /// let verifier = JwtVerifier::builder("https://auth.example.com").audience(resource).build()?;
    /// let auth = AuthLayer::builder(verifier, ProtectedResourceMetadata::new(resource)?)
    ///     .dpop(DpopConfig::builder().required(true).build()?)
    ///     .build();
    /// # let _ = auth;
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn dpop(mut self, dpop: DpopConfig) -> Self {
        self.dpop = Some(dpop);
        self
    }

    /// Lets handlers see each request's access token (`AccessPolicy::subject_token` on the
    /// request context's [`Access`]), to exchange it for a token of another audience (RFC
    /// 8693), as a gateway does for its upstreams. Off by default: a token that reaches
    /// handler code can leak from it, so turn this on only for a server that delegates.
    #[must_use]
    pub fn keep_token(mut self, keep: bool) -> Self {
        self.keep_token = keep;
        self
    }

    /// The layer.
    pub fn build(mut self) -> AuthLayer {
        let dpop_algs = match &self.dpop {
            Some(dpop) => {
                self.metadata = self
                    .metadata
                    .dpop(dpop.algorithm_names(), dpop.is_required());
                dpop.algorithm_names().join(" ")
            }
            None => String::new(),
        };
        let required = self.policy.required().join(" ");
        let challenge_scope = if !required.is_empty() {
            Some(required)
        } else if !self.metadata.supported_scopes().is_empty() {
            Some(self.metadata.supported_scopes().join(" "))
        } else {
            None
        };
        AuthLayer {
            config: Arc::new(Config {
                verifier: self.verifier,
                metadata_json: Bytes::from(self.metadata.to_json()),
                metadata_path: self.metadata.well_known_path(),
                metadata_url: self.metadata.url(),
                metadata: self.metadata,
                policy: Arc::new(self.policy),
                challenge_scope,
                cache: TokenCache::new(self.cache_entries, self.cache_ttl),
                protected_path: self.protected_path,
                dpop: self.dpop,
                dpop_algs,
                keep_token: self.keep_token,
            }),
        }
    }
}

impl<S> tower::Layer<S> for AuthLayer {
    type Service = AuthService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        AuthService {
            inner,
            config: self.config.clone(),
        }
    }
}

/// The service an [`AuthLayer`] wraps around another.
#[derive(Clone)]
pub struct AuthService<S> {
    inner: S,
    config: Arc<Config>,
}

impl<S> std::fmt::Debug for AuthService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthService").finish_non_exhaustive()
    }
}

impl<S, B, ResB> tower::Service<Request<B>> for AuthService<S>
where
    S: tower::Service<Request<B>, Response = Response<ResB>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
    ResB: http_body::Body<Data = Bytes> + Send + 'static,
    ResB::Error: Into<BoxError>,
{
    type Response = Response<AuthBody<ResB>>;
    type Error = S::Error;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Response<AuthBody<ResB>>, S::Error>> + Send>,
    >;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let config = self.config.clone();
        // The clone is ready only if polled; keep the polled one (tower's usual swap).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move {
            if request.method() == Method::GET
                && (request.uri().path() == config.metadata_path
                    || request.uri().path() == ROOT_METADATA_PATH)
            {
                return Ok(metadata_response(&config).map(Either::Right));
            }
            if config
                .protected_path
                .as_deref()
                .is_some_and(|path| request.uri().path() != path)
            {
                let response = inner.call(request).await?;
                return Ok(response.map(Either::Left));
            }
            let grant = match authenticate(
                &config,
                request.method(),
                request.uri().path(),
                request.headers(),
            )
            .await
            {
                Ok(grant) => grant,
                Err(refusal) => return Ok(refusal.map(Either::Right)),
            };
            let Authenticated {
                grant,
                scheme,
                next_nonce,
            } = grant;
            let scheme = scheme.name();
            if grant.missing_server_scope {
                return Ok(challenge::forbidden(
                    scheme,
                    &config.metadata_url,
                    &config.policy.required().join(" "),
                )
                .map(Either::Right));
            }
            let extensions = request.extensions_mut();
            extensions.insert(grant.principal.clone());
            extensions.insert(grant.access.clone());
            let response = inner.call(request).await?;
            let (mut parts, body) = response.into_parts();
            if let Some(refusal) = parts.extensions.remove::<InsufficientScope>()
                && let Ok(value) = HeaderValue::from_str(&challenge::insufficient_scope(
                    scheme,
                    &config.metadata_url,
                    &refusal.scope,
                ))
            {
                parts.headers.insert(WWW_AUTHENTICATE, value);
            }
            if let Some(nonce) = next_nonce.and_then(|n| HeaderValue::from_str(&n).ok()) {
                parts.headers.insert(DPOP_NONCE, nonce);
            }
            Ok(Response::from_parts(parts, Either::Left(body)))
        })
    }
}

fn metadata_response(config: &Config) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(config.metadata_json.clone()));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// How the token was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    Bearer,
    Dpop,
}

impl Scheme {
    /// Its name in a challenge.
    fn name(self) -> &'static str {
        match self {
            Self::Bearer => "Bearer",
            Self::Dpop => "DPoP",
        }
    }
}

/// The token of `headers` and its scheme (`DPoP` only when `dpop` is on).
fn credentials(headers: &HeaderMap, dpop: bool) -> Result<(Scheme, &str), TokenError> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(TokenError::Missing);
    };
    if values.next().is_some() {
        return Err(TokenError::Malformed(
            "the Authorization header appears more than once".to_owned(),
        ));
    }
    let value = value.to_str().map_err(|_| TokenError::NotBearer)?;
    let (scheme, token) = value.split_once(' ').ok_or(TokenError::NotBearer)?;
    let scheme = if scheme.eq_ignore_ascii_case("bearer") {
        Scheme::Bearer
    } else if dpop && scheme.eq_ignore_ascii_case("dpop") {
        Scheme::Dpop
    } else {
        return Err(TokenError::NotBearer);
    };
    let token = token.trim_matches(' ');
    // RFC 6750 §2.1 b64token.
    let b64token = !token.is_empty()
        && token
            .trim_end_matches('=')
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b));
    if !b64token {
        return Err(TokenError::Malformed(
            "the bearer token has characters a token cannot have".to_owned(),
        ));
    }
    Ok((scheme, token))
}

/// A request's valid token: what it grants, how it came, and the `DPoP-Nonce` to send back.
struct Authenticated {
    grant: Arc<Grant>,
    scheme: Scheme,
    next_nonce: Option<String>,
}

async fn authenticate(
    config: &Config,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
) -> Result<Authenticated, Response<Full<Bytes>>> {
    let now = Instant::now();
    let (scheme, token) =
        credentials(headers, config.dpop.is_some()).map_err(|e| refuse(config, &e, None))?;
    let proof = match (&config.dpop, scheme) {
        (Some(dpop), Scheme::Dpop) => {
            let target = Target {
                method,
                origin: config.metadata.origin(),
                path,
                token,
            };
            Some(
                dpop::check_proof(dpop, headers, &target, SystemTime::now())
                    .map_err(|e| refuse_dpop(config, &e))?,
            )
        }
        _ => None,
    };
    let grant = match config.cache.get(token, now) {
        Some(grant) => grant,
        None => verify(config, token, now)
            .await
            .map_err(|e| refuse(config, &e, Some(scheme)))?,
    };
    let mut next_nonce = None;
    if let Some(dpop) = &config.dpop {
        match (proof, &grant.jkt) {
            (None, Some(_)) => return Err(refuse_dpop(config, &DpopError::BoundAsBearer)),
            (None, None) if dpop.is_required() => {
                return Err(refuse_dpop(config, &DpopError::BearerRefused));
            }
            (None, None) => {}
            (Some(_), None) => return Err(refuse_dpop(config, &DpopError::NotBound)),
            (Some(proof), Some(jkt)) => {
                if proof.jkt != *jkt {
                    return Err(refuse_dpop(config, &DpopError::KeyMismatch));
                }
                match dpop.redeem(&proof).await {
                    Redeem::First => {}
                    Redeem::Seen => return Err(refuse_dpop(config, &DpopError::Replayed)),
                    Redeem::Full => {
                        tracing::warn!(
                            "the DPoP replay guard is full: proofs refused until ids expire (share a larger guard, e.g. Redis, or shorten the proof age)"
                        );
                        let mut busy = challenge::refusal(
                            StatusCode::SERVICE_UNAVAILABLE,
                            &[],
                            INTERNAL_ERROR,
                            "too many DPoP proofs in their validity window; try again later",
                            None,
                        );
                        busy.headers_mut().insert(
                            http::header::RETRY_AFTER,
                            http::HeaderValue::from_static("1"),
                        );
                        return Err(busy);
                    }
                }
                next_nonce = proof.next_nonce;
            }
        }
    }
    Ok(Authenticated {
        grant,
        scheme,
        next_nonce,
    })
}

/// Verifies `token` and caches what it grants.
async fn verify(config: &Config, token: &str, now: Instant) -> Result<Arc<Grant>, TokenError> {
    let verified = config.verifier.verify(token).await?;
    let expires = verified.expires_at.map(|at| {
        let left = at.duration_since(SystemTime::now()).unwrap_or_default();
        now + left
    });
    let missing_server_scope = config
        .policy
        .required()
        .iter()
        .any(|r| !verified.has_scope(r));
    tracing::debug!(subject = %verified.subject, scopes = ?verified.scopes, bound = verified.jkt.is_some(), "access token accepted");
    let grant = Arc::new(Grant {
        principal: Principal(verified.subject),
        access: Access(Arc::new(Granted {
            scopes: verified.scopes,
            policy: config.policy.clone(),
            token: config.keep_token.then(|| token.into()),
        })),
        missing_server_scope,
        jkt: verified.jkt,
    });
    config.cache.insert(token, grant.clone(), expires, now);
    Ok(grant)
}

/// The refusal of `error`; `scheme`, the scheme the token came with (`None`: no usable
/// token), decides which challenge carries the error when DPoP is on.
fn refuse(config: &Config, error: &TokenError, scheme: Option<Scheme>) -> Response<Full<Bytes>> {
    if error.is_unavailable() {
        tracing::warn!(%error, "cannot verify a bearer token");
        return challenge::refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            &[],
            INTERNAL_ERROR,
            "the authorization server is unavailable; try again later",
            None,
        );
    }
    tracing::debug!(%error, "bearer token refused");
    let message = error.to_string();
    let invalid = error.token_given().then_some(message.as_str());
    let challenges = match (&config.dpop, scheme) {
        (None, _) => vec![bearer_challenge(config, invalid)],
        // The error goes on the DPoP challenge when the token came with that scheme, or
        // when plain bearer tokens are refused anyway.
        (Some(dpop), scheme) if scheme == Some(Scheme::Dpop) || dpop.is_required() => challenges(
            config,
            invalid.map(|description| ("invalid_token", description)),
            invalid.is_none(),
        ),
        (Some(_), _) => {
            let mut all = Vec::new();
            if let Some(description) = invalid {
                all.push(bearer_challenge(config, Some(description)));
            }
            all.extend(challenges(config, None, invalid.is_none()));
            all
        }
    };
    unauthorized(config, &challenges, &message)
}

/// The `Bearer` challenge of a `401`.
fn bearer_challenge(config: &Config, invalid: Option<&str>) -> String {
    challenge::unauthorized(
        &config.metadata_url,
        config.challenge_scope.as_deref(),
        invalid,
    )
}

/// With DPoP on: the `DPoP` challenge (with `error`, if any), then a plain `Bearer` one
/// when `bearer` and plain bearer tokens are still accepted.
fn challenges(config: &Config, error: Option<(&str, &str)>, bearer: bool) -> Vec<String> {
    let mut all = vec![challenge::dpop(
        &config.metadata_url,
        config.challenge_scope.as_deref(),
        &config.dpop_algs,
        error,
    )];
    if bearer && !config.dpop.as_ref().is_some_and(DpopConfig::is_required) {
        all.push(bearer_challenge(config, None));
    }
    all
}

/// The refusal of a DPoP request: the `DPoP` challenge carries the error.
fn refuse_dpop(config: &Config, error: &DpopError) -> Response<Full<Bytes>> {
    tracing::debug!(%error, "DPoP request refused");
    let message = error.to_string();
    let challenges = challenges(config, Some((error.error_code(), &message)), false);
    unauthorized(config, &challenges, &message)
}

/// A `401` with `challenges`, and a fresh `DPoP-Nonce` when nonces are on.
fn unauthorized(config: &Config, challenges: &[String], message: &str) -> Response<Full<Bytes>> {
    let mut response = challenge::refusal(
        StatusCode::UNAUTHORIZED,
        challenges,
        UNAUTHORIZED,
        &format!("Unauthorized: {message}"),
        None,
    );
    if let Some(nonce) = config
        .dpop
        .as_ref()
        .filter(|d| d.nonces())
        .and_then(|d| d.fresh_nonce(SystemTime::now()))
        && let Ok(value) = HeaderValue::from_str(&nonce)
    {
        response.headers_mut().insert(DPOP_NONCE, value);
    }
    response
}
