//! RFC 8693 token exchange for an upstream's requests: the client's access token (kept by
//! the authorization layer in front, `AuthLayerBuilder::keep_token`) is exchanged at the
//! configured token endpoint for a token of the upstream's audience, which goes up with the
//! request; the client's own token never does. Exchanged tokens are cached per client token
//! until shortly before they expire.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde::Deserialize;
use smcp_proto::error::ErrorObject;
use smcp_server::{HandlerError, RequestContext};
use tokio::time::Instant;

use crate::config::{TokenExchangeConfig, UpstreamConfig};
use crate::error::GatewayError;

/// Most exchanged tokens kept.
const MAX_CACHED: usize = 10_000;

/// How long before its expiry a cached token is no longer used.
const EARLY: Duration = Duration::from_secs(30);

/// How long a token whose response gave no `expires_in` is used.
const DEFAULT_LIFETIME: Duration = Duration::from_secs(60);

/// Longest an exchange may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Largest token endpoint response read.
const MAX_RESPONSE: usize = 64 * 1024;

/// The exchange of one upstream.
#[derive(Debug)]
pub(crate) struct TokenExchange {
    upstream: String,
    endpoint: String,
    client_id: String,
    secret: String,
    audience: String,
    scope: Option<String>,
    http: reqwest::Client,
    /// Exchanged tokens by client token, with when they stop being used.
    cache: Mutex<HashMap<String, (String, Instant)>>,
}

#[derive(Deserialize)]
struct Issued {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

#[derive(Deserialize)]
struct Refused {
    error: String,
}

impl TokenExchange {
    /// The exchange `config` describes for `upstream`; its secret read from the environment.
    pub(crate) fn new(
        upstream: &UpstreamConfig,
        config: &TokenExchangeConfig,
    ) -> Result<Self, GatewayError> {
        let secret =
            std::env::var(&config.client_secret_env).map_err(|_| GatewayError::MissingEnv {
                upstream: upstream.name.clone(),
                variable: config.client_secret_env.clone(),
            })?;
        let http = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| GatewayError::TokenExchange {
                upstream: upstream.name.clone(),
                message: e.to_string(),
            })?;
        Ok(Self {
            upstream: upstream.name.clone(),
            endpoint: config.token_endpoint.clone(),
            client_id: config.client_id.clone(),
            secret,
            audience: config
                .audience
                .clone()
                .or_else(|| upstream.url.clone())
                .unwrap_or_default(),
            scope: config.scope.clone(),
            http,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// A token of the upstream's audience for the client of `ctx`.
    pub(crate) async fn token_for(&self, ctx: &RequestContext) -> Result<String, HandlerError> {
        let subject = ctx
            .access()
            .and_then(|access| access.0.subject_token())
            .ok_or_else(|| {
                HandlerError::Rpc(ErrorObject::internal(format!(
                    "upstream {:?} needs the caller's access token for a token exchange, and \
                     the gateway was not given it (serve it behind authorization that keeps \
                     the token)",
                    self.upstream
                )))
            })?;
        let now = Instant::now();
        if let Some((token, until)) = self.cache().get(subject)
            && *until > now
        {
            return Ok(token.clone());
        }
        let (token, lifetime) = self.exchange(subject).await?;
        let mut cache = self.cache();
        if cache.len() >= MAX_CACHED {
            cache.retain(|_, (_, until)| *until > now);
            if cache.len() >= MAX_CACHED {
                cache.clear();
            }
        }
        let until = now + lifetime.saturating_sub(EARLY);
        cache.insert(subject.to_owned(), (token.clone(), until));
        Ok(token)
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, HashMap<String, (String, Instant)>> {
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// One exchange at the token endpoint.
    async fn exchange(&self, subject: &str) -> Result<(String, Duration), HandlerError> {
        let mut form = vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange",
            ),
            ("subject_token", subject),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:access_token",
            ),
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:access_token",
            ),
            ("audience", &self.audience),
            ("resource", &self.audience),
        ];
        if let Some(scope) = &self.scope {
            form.push(("scope", scope));
        }
        let failed = |why: String| {
            tracing::warn!(upstream = %self.upstream, "token exchange failed: {why}");
            HandlerError::Rpc(ErrorObject::internal(format!(
                "upstream {:?}: the token exchange failed: {why}",
                self.upstream
            )))
        };
        let response = self
            .http
            .post(&self.endpoint)
            .basic_auth(&self.client_id, Some(&self.secret))
            .form(&form)
            .send()
            .await
            .map_err(|e| failed(format!("the token endpoint did not answer ({})", kind(&e))))?;
        let status = response.status();
        let body = read_bounded(response)
            .await
            .map_err(|e| failed(format!("reading its answer: {e}")))?;
        if !status.is_success() {
            // The error code only: a description may quote what was sent.
            let code = serde_json::from_slice::<Refused>(&body)
                .map(|r| r.error)
                .unwrap_or_else(|_| "no OAuth error".to_owned());
            return Err(failed(format!("refused ({status}, {code})")));
        }
        let issued: Issued = serde_json::from_slice(&body)
            .map_err(|_| failed("its answer is not a token response".to_owned()))?;
        if issued.access_token.is_empty() {
            return Err(failed("its answer has an empty access_token".to_owned()));
        }
        let lifetime = issued
            .expires_in
            .map_or(DEFAULT_LIFETIME, Duration::from_secs)
            .min(Duration::from_secs(24 * 3600));
        Ok((issued.access_token, lifetime))
    }
}

/// What kind of transport failure `e` is, without its URL or payload.
fn kind(e: &reqwest::Error) -> &'static str {
    if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else {
        "transport error"
    }
}

/// The body, at most [`MAX_RESPONSE`] bytes.
async fn read_bounded(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| kind(&e).to_owned())? {
        if body.len() + chunk.len() > MAX_RESPONSE {
            return Err(format!("larger than {MAX_RESPONSE} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
