//! The per-client OAuth state and the retry logic around every request to the MCP server.
//!
//! Two locks, so that a login never stalls the requests that do not need it:
//!
//! * `state`, a short lock around the tokens, scopes, registrations and discovery results: it
//!   is taken to read or write them and never held across a network call or a user's login.
//! * `flight`, taken by whatever replaces the tokens (discovery, refresh, the authorization
//!   grant, which may wait for a user in a browser): one at a time, so concurrent `401`s cause
//!   one grant. A request whose token is still valid never waits for it: it reads the token
//!   and goes. One whose token has expired waits for the flight in progress (the new token is
//!   what it needs) rather than starting its own.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use http::HeaderValue;
use http::header::{AUTHORIZATION, WWW_AUTHENTICATE};

use super::challenge::BearerChallenge;
use super::discovery::{self, ResourceMetadata, ServerMetadata};
use super::dpop::{DPOP, Dpop, DpopMode};
use super::jws::KeySigner;
use super::store::{ClientRegistration, StoredTokens};
use super::{AuthError, OAuthConfig, flow};

/// Bound on DPoP nonce retries of one request to the MCP server (a server that hands out a
/// new nonce on every answer cannot keep a request looping).
const MAX_NONCE_RETRIES: u32 = 2;

/// The access token to present, and the key it is bound to (DPoP), if any.
#[derive(Debug, Clone)]
pub(crate) struct Presented {
    pub(crate) token: String,
    pub(crate) dpop: Option<Arc<Dpop>>,
}

/// Refresh this long before the token's expiry.
const EXPIRY_SKEW_SECS: u64 = 30;

#[derive(Debug, Default)]
struct State {
    loaded: bool,
    tokens: Option<StoredTokens>,
    discovered: Option<(ResourceMetadata, ServerMetadata)>,
    /// Scopes requested so far (unioned on step-up).
    scopes: BTreeSet<String>,
    /// Registrations per issuer (never reused across issuers).
    clients: HashMap<String, ClientRegistration>,
}

impl State {
    fn access_token(&self) -> Option<String> {
        self.tokens
            .as_ref()
            .map(|t| t.access_token.expose().to_owned())
    }

    fn is_dpop(&self) -> bool {
        self.tokens.as_ref().is_some_and(StoredTokens::is_dpop)
    }

    fn refreshable(&self) -> bool {
        self.tokens
            .as_ref()
            .is_some_and(|t| t.refresh_token.is_some())
    }

    /// A refreshable token that expires within `skew_secs` (0: already expired).
    fn refresh_due(&self, skew_secs: u64) -> bool {
        self.tokens
            .as_ref()
            .is_some_and(|t| t.refresh_token.is_some() && t.expires_within(skew_secs))
    }
}

/// One client's OAuth state for one MCP server.
#[derive(Debug)]
pub(crate) struct OAuthSession {
    config: OAuthConfig,
    server: reqwest::Url,
    key: String,
    http: reqwest::Client,
    /// The tokens and what goes with them; never held across an `.await`.
    state: Mutex<State>,
    /// Single flight for discovery, refresh and the grant (see the module docs).
    flight: tokio::sync::Mutex<()>,
    /// The DPoP key, made on first use (never held across an `.await`).
    dpop: Mutex<Option<Arc<Dpop>>>,
    /// Set when the MCP server refused a DPoP presentation with only a `Bearer` challenge (a
    /// resource server unaware of DPoP, RFC 9449 §7.2): bound tokens then go as bearer tokens.
    bearer_only: std::sync::atomic::AtomicBool,
}

fn scopes_of(s: Option<&str>) -> BTreeSet<String> {
    s.map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

impl OAuthSession {
    /// `key` names the server in the token store (the URL as the user gave it).
    pub(crate) fn new(
        config: OAuthConfig,
        server: &reqwest::Url,
        key: &str,
        roots: &[reqwest::Certificate],
    ) -> Result<Self, AuthError> {
        Ok(Self {
            config,
            server: server.clone(),
            key: key.to_owned(),
            http: super::fetch::http_client(roots)?,
            state: Mutex::new(State::default()),
            flight: tokio::sync::Mutex::new(()),
            dpop: Mutex::new(None),
            bearer_only: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The DPoP key: the configured signer, else the one stored with the tokens, else a new
    /// ES256 key.
    fn dpop_key(&self) -> Result<Arc<Dpop>, AuthError> {
        let mut slot = self.dpop.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(d) = slot.as_ref() {
            return Ok(d.clone());
        }
        let stored = self
            .state()
            .tokens
            .as_ref()
            .and_then(|t| t.dpop_key.clone());
        let dpop = match (&self.config.dpop_signer, stored) {
            (Some(signer), _) => Dpop::new(signer.clone(), None)?,
            (None, Some(key)) => Dpop::new(Arc::new(KeySigner::from_stored(&key)?), Some(key))?,
            (None, None) => {
                let signer = KeySigner::generate_es256()?;
                let stored = signer.generated().cloned();
                Dpop::new(Arc::new(signer), stored)?
            }
        };
        let dpop = Arc::new(dpop);
        *slot = Some(dpop.clone());
        Ok(dpop)
    }

    /// The DPoP key to prove possession of at `meta`'s token endpoint, if DPoP is on for it:
    /// always with [`DpopMode::Always`], when the server offers the key's algorithm with
    /// [`DpopMode::Auto`].
    fn dpop_for(&self, meta: &ServerMetadata) -> Result<Option<Arc<Dpop>>, AuthError> {
        let alg = self
            .config
            .dpop_signer
            .as_ref()
            .map_or("ES256", |s| s.algorithm());
        let on = match self.config.dpop {
            DpopMode::Always => true,
            DpopMode::Auto => meta.offers_dpop(alg),
            DpopMode::Off => false,
        };
        if !on {
            return Ok(None);
        }
        self.dpop_key().map(Some)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Loads the stored tokens on first use.
    fn ensure_loaded(&self) -> Result<(), AuthError> {
        let mut state = self.state();
        if state.loaded {
            return Ok(());
        }
        let stored = self.config.store.load(&self.key)?;
        state.loaded = true;
        if let Some(t) = &stored {
            state.scopes = scopes_of(t.scope.as_deref());
            if let Some(c) = &t.client {
                state.clients.insert(t.issuer.clone(), c.clone());
            }
        }
        state.tokens = stored;
        Ok(())
    }

    fn save(&self, mut tokens: StoredTokens) -> Result<(), AuthError> {
        if tokens.is_dpop() {
            tokens.dpop_key = self
                .dpop
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .as_ref()
                .and_then(|d| d.stored.clone());
        }
        let mut state = self.state();
        if let Some(c) = &tokens.client {
            state.clients.insert(tokens.issuer.clone(), c.clone());
        }
        self.config.store.save(&self.key, &tokens)?;
        state.tokens = Some(tokens);
        Ok(())
    }

    /// The token to present now (and its DPoP key when it is bound to one).
    fn presented(&self) -> Result<Option<Presented>, AuthError> {
        let (token, dpop) = {
            let state = self.state();
            (state.access_token(), state.is_dpop())
        };
        let Some(token) = token else {
            return Ok(None);
        };
        let bearer_only = self.bearer_only.load(std::sync::atomic::Ordering::Relaxed);
        let dpop = if dpop && !bearer_only {
            Some(self.dpop_key()?)
        } else {
            None
        };
        Ok(Some(Presented { token, dpop }))
    }

    /// The access token to send, refreshed first when it is about to expire. A token that
    /// is about to expire but still valid is sent as is while another flight (a refresh, a
    /// login) is in progress; an expired one waits for that flight.
    pub(crate) async fn access(&self) -> Result<Option<Presented>, AuthError> {
        self.ensure_loaded()?;
        let (token, expiring, expired) = {
            let state = self.state();
            (
                state.access_token(),
                state.refresh_due(EXPIRY_SKEW_SECS),
                state.refresh_due(0),
            )
        };
        if !expiring || token.is_none() {
            return self.presented();
        }
        let _flight = if expired {
            self.flight.lock().await
        } else {
            match self.flight.try_lock() {
                Ok(flight) => flight,
                Err(_) => return self.presented(),
            }
        };
        // Another flight may have refreshed (or replaced) the token while this one waited.
        let due = self.state().refresh_due(EXPIRY_SKEW_SECS);
        if due && let Err(e) = self.refresh(None).await {
            tracing::debug!(error = %e, "refresh before expiry failed; sending the old token");
        }
        self.presented()
    }

    /// Discovers the protected resource and its authorization server. The caller holds the
    /// flight.
    async fn discover(
        &self,
        header: Option<&str>,
    ) -> Result<(ResourceMetadata, ServerMetadata), AuthError> {
        let prm = discovery::resource_metadata(&self.http, &self.server, header).await?;
        let issuer = prm
            .authorization_servers
            .first()
            .cloned()
            .unwrap_or_default();
        let meta = discovery::server_metadata(&self.http, &issuer).await?;
        let mut state = self.state();
        if let Some(t) = &state.tokens
            && t.issuer != meta.issuer
        {
            // Authorization server migration: the old issuer's tokens are dropped.
            tracing::info!(old = %t.issuer, new = %meta.issuer, "authorization server changed; dropping its tokens");
            state.tokens = None;
            state.scopes.clear();
            self.config.store.clear(&self.key)?;
        }
        state.discovered = Some((prm.clone(), meta.clone()));
        Ok((prm, meta))
    }

    /// Refreshes the token. The caller holds the flight.
    async fn refresh(&self, header: Option<&str>) -> Result<(), AuthError> {
        let discovered = self.state().discovered.clone();
        let (prm, meta) = match (discovered, header) {
            (Some(d), None) => d,
            _ => self.discover(header).await?,
        };
        let old = self.state().tokens.clone().ok_or(AuthError::Token {
            error: "no token to refresh".to_owned(),
            description: None,
        })?;
        let dpop = if old.is_dpop() {
            Some(self.dpop_key()?)
        } else {
            self.dpop_for(&meta)?
        };
        let fresh =
            flow::refresh(&self.http, &self.config, &prm, &meta, &old, dpop.as_deref()).await?;
        tracing::debug!("access token refreshed");
        self.save(fresh)
    }

    /// Runs the grant (the user's login, or client credentials). The caller holds the
    /// flight; the token state is not locked meanwhile.
    async fn authorize(
        &self,
        prm: &ResourceMetadata,
        meta: &ServerMetadata,
    ) -> Result<(), AuthError> {
        let (client, scopes) = {
            let state = self.state();
            (
                state.clients.get(&meta.issuer).cloned(),
                state.scopes.clone(),
            )
        };
        let dpop = self.dpop_for(meta)?;
        let tokens = flow::authorize(
            &self.http,
            &self.config,
            prm,
            meta,
            client,
            &scopes,
            dpop.as_deref(),
        )
        .await?;
        self.save(tokens)
    }

    /// Whether a grant can run without a stored refresh token (an authorizer, or a grant
    /// with no user).
    fn can_authorize(&self) -> bool {
        self.config.authorizer.is_some() || !self.config.grant.is_interactive()
    }

    /// Whether the token was replaced since a request was sent with `sent`: then that request
    /// only needs to go again with the new one.
    fn replaced(&self, sent: Option<&str>) -> bool {
        let current = self.state().access_token();
        current.is_some() && current.as_deref() != sent
    }

    /// A `401`: discover, refresh if possible, else run the grant. `sent` is the token the
    /// rejected request carried (another request may have replaced it meanwhile). `Ok(false)`
    /// when nothing can be done (no refresh token, no way to authorize): the `401` stands.
    pub(crate) async fn unauthorized(
        &self,
        challenge: &BearerChallenge,
        sent: Option<&str>,
    ) -> Result<bool, AuthError> {
        let _flight = self.flight.lock().await;
        if self.replaced(sent) {
            return Ok(true);
        }
        if !self.state().refreshable() && !self.can_authorize() {
            return Ok(false);
        }
        let (prm, meta) = self
            .discover(challenge.resource_metadata.as_deref())
            .await?;
        if self.state().refreshable() {
            match self.refresh(None).await {
                Ok(()) => return Ok(true),
                Err(e) if self.can_authorize() => {
                    tracing::info!(error = %e, "refresh failed; authorizing again");
                }
                Err(e) => {
                    tracing::info!(error = %e, "refresh failed");
                    return Ok(false);
                }
            }
        }
        let wanted = match challenge.scope.as_deref() {
            Some(s) => scopes_of(Some(s)),
            None => prm
                .scopes_supported
                .as_ref()
                .map(|v| v.iter().cloned().collect())
                .unwrap_or_default(),
        };
        {
            let mut state = self.state();
            state.scopes.extend(wanted);
            state.tokens = None;
        }
        self.authorize(&prm, &meta).await?;
        Ok(true)
    }

    /// A `403 insufficient_scope`: re-authorizes with the union of scopes. `Ok(false)` when the
    /// union adds nothing (re-authorizing could not help). `sent` is the token the refused
    /// request carried: when a concurrent step-up already replaced it, the request goes again
    /// with the new token instead of a second grant.
    pub(crate) async fn step_up(
        &self,
        challenge: &BearerChallenge,
        sent: Option<&str>,
    ) -> Result<bool, AuthError> {
        let _flight = self.flight.lock().await;
        if self.replaced(sent) {
            return Ok(true);
        }
        let wanted = scopes_of(challenge.scope.as_deref());
        if wanted.is_subset(&self.state().scopes) || !self.can_authorize() {
            return Ok(false);
        }
        let (prm, meta) = self
            .discover(challenge.resource_metadata.as_deref())
            .await?;
        self.state().scopes.extend(wanted);
        self.authorize(&prm, &meta).await?;
        Ok(true)
    }

    pub(crate) fn max_step_ups(&self) -> u32 {
        self.config.max_step_ups
    }
}

/// Sends `request` with the access token (as a bearer, or with the `DPoP` scheme and a fresh
/// proof) and handles `401` (a new grant, or a DPoP nonce to retry with) and
/// `403 insufficient_scope`. Without OAuth it only sends. Requests whose body cannot be cloned
/// (streams) are sent once.
pub(crate) async fn send(
    oauth: Option<&OAuthSession>,
    request: reqwest::RequestBuilder,
) -> crate::Result<reqwest::Response> {
    use crate::error::{Error, Kind};
    let transport = |e| Error::new(Kind::Transport(e));
    let auth = |e| Error::new(Kind::Auth(e));
    let Some(oauth) = oauth else {
        return request.send().await.map_err(transport);
    };
    let mut reauthorized = false;
    let mut step_ups = 0;
    let mut nonce_retries = 0;
    loop {
        let presented = oauth.access().await.map_err(auth)?;
        let Some(attempt) = request.try_clone() else {
            return send_with(request, presented.as_ref())
                .await
                .map_err(auth)?
                .map_err(transport);
        };
        let response = send_with(attempt, presented.as_ref())
            .await
            .map_err(auth)?
            .map_err(transport)?;
        let status = response.status().as_u16();
        let dpop = presented.as_ref().and_then(|p| p.dpop.as_ref());
        let fresh_nonce =
            dpop.is_some_and(|d| d.remember_nonce(response.url(), response.headers()));
        if status != 401 && status != 403 {
            return Ok(response);
        }
        let challenge = BearerChallenge::from_headers(
            response
                .headers()
                .get_all(WWW_AUTHENTICATE)
                .iter()
                .filter_map(|v| v.to_str().ok()),
        )
        .unwrap_or_default();
        let sent = presented.as_ref().map(|p| p.token.as_str());
        if status == 401 && dpop.is_some() && only_bearer_challenges(response.headers()) {
            // A resource server that does not do DPoP (RFC 9449 §7.2): the same token again
            // as a bearer token, and so from now on for this server.
            tracing::info!(
                "the MCP server challenges only Bearer; presenting the DPoP-bound token as a bearer token"
            );
            oauth
                .bearer_only
                .store(true, std::sync::atomic::Ordering::Relaxed);
            continue;
        }
        if status == 401
            && challenge.error.as_deref() == Some("use_dpop_nonce")
            && fresh_nonce
            && nonce_retries < MAX_NONCE_RETRIES
        {
            // RFC 9449 §9: the same request again, with the server's nonce in the proof.
            nonce_retries += 1;
            continue;
        }
        if status == 401 && !reauthorized {
            reauthorized = true;
            if oauth.unauthorized(&challenge, sent).await.map_err(auth)? {
                continue;
            }
        }
        if status == 403 && challenge.is_insufficient_scope() && step_ups < oauth.max_step_ups() {
            if oauth.step_up(&challenge, sent).await.map_err(auth)? {
                step_ups += 1;
                continue;
            }
            tracing::info!(
                "insufficient_scope again for scopes already requested; not re-authorizing"
            );
        }
        return Ok(response);
    }
}

/// Whether the response challenges with `Bearer` and never with `DPoP`.
fn only_bearer_challenges(headers: &http::HeaderMap) -> bool {
    let schemes: Vec<String> = headers
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(super::challenge::schemes)
        .collect();
    let has = |scheme: &str| schemes.iter().any(|s| s.eq_ignore_ascii_case(scheme));
    has("bearer") && !has("dpop")
}

/// Sends `r` with the token: `Authorization: Bearer`, or `Authorization: DPoP` and a `DPoP`
/// proof for the request's method and URL (RFC 9449 §7.1). The outer `Err` is a proof that
/// could not be signed; the inner one the transport's.
async fn send_with(
    r: reqwest::RequestBuilder,
    presented: Option<&Presented>,
) -> Result<reqwest::Result<reqwest::Response>, AuthError> {
    let Some(p) = presented else {
        return Ok(r.send().await);
    };
    let (client, request) = r.build_split();
    let mut request = match request {
        Ok(request) => request,
        Err(e) => return Ok(Err(e)),
    };
    let scheme = if p.dpop.is_some() { "DPoP" } else { "Bearer" };
    if let Ok(mut v) = HeaderValue::from_str(&format!("{scheme} {}", p.token)) {
        v.set_sensitive(true);
        request.headers_mut().insert(AUTHORIZATION, v);
    }
    if let Some(dpop) = &p.dpop {
        let proof = dpop.proof(request.method().as_str(), request.url(), Some(&p.token))?;
        let value = HeaderValue::from_str(&proof)
            .map_err(|_| AuthError::Config("a DPoP proof is not a header value".into()))?;
        request.headers_mut().insert(DPOP, value);
    }
    Ok(client.execute(request).await)
}
