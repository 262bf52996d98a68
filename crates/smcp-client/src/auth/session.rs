//! The per-client OAuth state and the retry logic around every request to the MCP server.

use std::collections::{BTreeSet, HashMap};

use http::HeaderValue;
use http::header::{AUTHORIZATION, WWW_AUTHENTICATE};

use super::challenge::BearerChallenge;
use super::discovery::{self, ResourceMetadata, ServerMetadata};
use super::store::{ClientRegistration, StoredTokens};
use super::{AuthError, OAuthConfig, flow};

/// Refresh this long before the token's expiry.
const EXPIRY_SKEW_SECS: u64 = 30;

#[derive(Debug, Default)]
struct Inner {
    loaded: bool,
    tokens: Option<StoredTokens>,
    discovered: Option<(ResourceMetadata, ServerMetadata)>,
    /// Scopes requested so far (unioned on step-up).
    scopes: BTreeSet<String>,
    /// Registrations per issuer (never reused across issuers).
    clients: HashMap<String, ClientRegistration>,
}

/// One client's OAuth state for one MCP server.
#[derive(Debug)]
pub(crate) struct OAuthSession {
    config: OAuthConfig,
    server: reqwest::Url,
    key: String,
    http: reqwest::Client,
    inner: tokio::sync::Mutex<Inner>,
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
            inner: tokio::sync::Mutex::new(Inner::default()),
        })
    }

    fn save(&self, inner: &mut Inner, tokens: StoredTokens) -> Result<(), AuthError> {
        if let Some(c) = &tokens.client {
            inner.clients.insert(tokens.issuer.clone(), c.clone());
        }
        self.config.store.save(&self.key, &tokens)?;
        inner.tokens = Some(tokens);
        Ok(())
    }

    /// The access token to send, refreshed first when it is about to expire.
    pub(crate) async fn bearer(&self) -> Result<Option<String>, AuthError> {
        let mut inner = self.inner.lock().await;
        if !inner.loaded {
            inner.loaded = true;
            let stored = self.config.store.load(&self.key)?;
            if let Some(t) = &stored {
                inner.scopes = scopes_of(t.scope.as_deref());
                if let Some(c) = &t.client {
                    inner.clients.insert(t.issuer.clone(), c.clone());
                }
            }
            inner.tokens = stored;
        }
        let expiring = inner
            .tokens
            .as_ref()
            .is_some_and(|t| t.refresh_token.is_some() && t.expires_within(EXPIRY_SKEW_SECS));
        if expiring && let Err(e) = self.refresh_locked(&mut inner, None).await {
            tracing::debug!(error = %e, "refresh before expiry failed; sending the old token");
        }
        Ok(inner
            .tokens
            .as_ref()
            .map(|t| t.access_token.expose().to_owned()))
    }

    async fn discover(
        &self,
        inner: &mut Inner,
        header: Option<&str>,
    ) -> Result<(ResourceMetadata, ServerMetadata), AuthError> {
        let prm = discovery::resource_metadata(&self.http, &self.server, header).await?;
        let issuer = prm
            .authorization_servers
            .first()
            .cloned()
            .unwrap_or_default();
        let meta = discovery::server_metadata(&self.http, &issuer).await?;
        if let Some(t) = &inner.tokens
            && t.issuer != meta.issuer
        {
            // Authorization server migration: the old issuer's tokens are dropped.
            tracing::info!(old = %t.issuer, new = %meta.issuer, "authorization server changed; dropping its tokens");
            inner.tokens = None;
            inner.scopes.clear();
            self.config.store.clear(&self.key)?;
        }
        inner.discovered = Some((prm.clone(), meta.clone()));
        Ok((prm, meta))
    }

    async fn refresh_locked(
        &self,
        inner: &mut Inner,
        header: Option<&str>,
    ) -> Result<(), AuthError> {
        let (prm, meta) = match (&inner.discovered, header) {
            (Some(d), None) => d.clone(),
            _ => self.discover(inner, header).await?,
        };
        let old = inner.tokens.clone().ok_or(AuthError::Token {
            error: "no token to refresh".to_owned(),
            description: None,
        })?;
        let fresh = flow::refresh(&self.http, &prm, &meta, &old).await?;
        tracing::debug!("access token refreshed");
        self.save(inner, fresh)
    }

    async fn authorize_locked(
        &self,
        inner: &mut Inner,
        prm: &ResourceMetadata,
        meta: &ServerMetadata,
    ) -> Result<(), AuthError> {
        let client = inner.clients.get(&meta.issuer).cloned();
        let tokens =
            flow::authorize(&self.http, &self.config, prm, meta, client, &inner.scopes).await?;
        self.save(inner, tokens)
    }

    /// Whether a grant can run without a stored refresh token (an authorizer, or client
    /// credentials).
    fn can_authorize(&self) -> bool {
        self.config.authorizer.is_some() || self.config.client_credentials
    }

    /// A `401`: discover, refresh if possible, else run the grant. `sent` is the token the
    /// rejected request carried (another request may have replaced it meanwhile). `Ok(false)`
    /// when nothing can be done (no refresh token, no way to authorize): the `401` stands.
    pub(crate) async fn unauthorized(
        &self,
        challenge: &BearerChallenge,
        sent: Option<&str>,
    ) -> Result<bool, AuthError> {
        let mut inner = self.inner.lock().await;
        let current = inner
            .tokens
            .as_ref()
            .map(|t| t.access_token.expose().to_owned());
        if current.is_some() && current.as_deref() != sent {
            return Ok(true);
        }
        let refreshable = inner
            .tokens
            .as_ref()
            .is_some_and(|t| t.refresh_token.is_some());
        if !refreshable && !self.can_authorize() {
            return Ok(false);
        }
        let (prm, meta) = self
            .discover(&mut inner, challenge.resource_metadata.as_deref())
            .await?;
        if inner
            .tokens
            .as_ref()
            .is_some_and(|t| t.refresh_token.is_some())
        {
            match self.refresh_locked(&mut inner, None).await {
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
        inner.scopes.extend(wanted);
        inner.tokens = None;
        self.authorize_locked(&mut inner, &prm, &meta).await?;
        Ok(true)
    }

    /// A `403 insufficient_scope`: re-authorizes with the union of scopes. `Ok(false)` when the
    /// union adds nothing (re-authorizing could not help).
    pub(crate) async fn step_up(&self, challenge: &BearerChallenge) -> Result<bool, AuthError> {
        let mut inner = self.inner.lock().await;
        let wanted = scopes_of(challenge.scope.as_deref());
        if wanted.is_subset(&inner.scopes) || !self.can_authorize() {
            return Ok(false);
        }
        let (prm, meta) = self
            .discover(&mut inner, challenge.resource_metadata.as_deref())
            .await?;
        inner.scopes.extend(wanted);
        self.authorize_locked(&mut inner, &prm, &meta).await?;
        Ok(true)
    }

    pub(crate) fn max_step_ups(&self) -> u32 {
        self.config.max_step_ups
    }
}

/// Sends `request` with the bearer token and handles `401` and `403 insufficient_scope`.
/// Without OAuth it only sends. Requests whose body cannot be cloned (streams) are sent once.
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
    loop {
        let token = oauth.bearer().await.map_err(auth)?;
        let Some(attempt) = request.try_clone() else {
            return with_token(request, token.as_deref())
                .send()
                .await
                .map_err(transport);
        };
        let response = with_token(attempt, token.as_deref())
            .send()
            .await
            .map_err(transport)?;
        let status = response.status().as_u16();
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
        if status == 401 && !reauthorized {
            reauthorized = true;
            if oauth
                .unauthorized(&challenge, token.as_deref())
                .await
                .map_err(auth)?
            {
                continue;
            }
        }
        if status == 403 && challenge.is_insufficient_scope() && step_ups < oauth.max_step_ups() {
            if oauth.step_up(&challenge).await.map_err(auth)? {
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

fn with_token(r: reqwest::RequestBuilder, token: Option<&str>) -> reqwest::RequestBuilder {
    match token.and_then(|t| HeaderValue::from_str(&format!("Bearer {t}")).ok()) {
        Some(mut v) => {
            v.set_sensitive(true);
            r.header(AUTHORIZATION, v)
        }
        None => r,
    }
}
