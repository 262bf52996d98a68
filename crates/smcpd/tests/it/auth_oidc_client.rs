//! The smcp client running the whole OAuth flow against `smcpd --auth-issuer` protected by
//! a real authorization server (npm `oidc-provider`, `scripts/oidc-provider`): protected
//! resource metadata, provider metadata, a pre-registered or dynamically registered client,
//! PKCE authorization with the browser step driven through the provider's own login and
//! consent pages, scope step-up on 403, refresh. `SMCP_OIDC=skip` disables these tests.

#![cfg(feature = "auth")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::oidc;
use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use oidc::{Browser, Provider, ProviderOptions};
use serde_json::json;
use smcp_client::BoxFuture;
use smcp_client::auth::{
    AuthError, AuthorizationResponse, Authorizer, KeySigner, MemoryTokenStore, OAuthConfig,
    TokenStore,
};
use support::Smcpd;

/// smcpd protected by `provider`: `mcp:tools` for everything, `mcp:admin` for `toggle_extra`,
/// no clock skew allowed.
fn protected_smcpd(provider: &Provider) -> Smcpd {
    Smcpd::start_with(&[
        "--auth-issuer",
        &provider.issuer,
        "--auth-scope",
        "mcp:tools",
        "--auth-tool-scope",
        "toggle_extra=mcp:admin",
        "--auth-leeway",
        "0",
    ])
}

fn endpoint(server: &Smcpd) -> String {
    format!("http://{}/mcp", server.addr)
}

/// The status of an unauthenticated tools/list.
async fn anonymous_status(server: &Smcpd) -> u16 {
    let body = support::mcp(json!(1), "tools/list", json!({}));
    reqwest::Client::new()
        .post(endpoint(server))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .json(&body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn the_smcp_client_signs_in_steps_up_and_refreshes() {
    if oidc::skipped() {
        return;
    }
    // Three-second access tokens, so that the refresh below happens within the test.
    let provider = Provider::start_with(&ProviderOptions {
        access_ttl: Some(3),
        ..ProviderOptions::default()
    });
    let server = protected_smcpd(&provider);
    let visits = Arc::new(AtomicUsize::new(0));
    let oauth = OAuthConfig::builder()
        .client_id(oidc::PUBLIC_CLIENT)
        .authorizer(ProviderBrowser::new(visits.clone()))
        .build();
    let client = smcp_client::Client::builder(endpoint(&server))
        .oauth(oauth)
        .build()
        .unwrap();

    // 401 → resource metadata → provider metadata → PKCE authorization as alice → token.
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "toggle_extra"), "{tools:?}");
    assert_eq!(
        visits.load(Ordering::SeqCst),
        1,
        "one trip through the browser"
    );

    // toggle_extra needs mcp:admin: 403 insufficient_scope → a second authorization for the
    // union of scopes → the retried call runs.
    client.call_tool("toggle_extra", json!({})).await.unwrap();
    assert_eq!(
        visits.load(Ordering::SeqCst),
        2,
        "step-up went through the browser"
    );
    let tools = client.list_tools().await.unwrap();
    assert!(
        tools.iter().any(|t| t.name == "extra"),
        "the step-up call ran: {tools:?}"
    );

    // Once the access token has expired, the refresh token gets a new one: no browser.
    tokio::time::sleep(Duration::from_millis(3300)).await;
    assert_eq!(
        anonymous_status(&server).await,
        401,
        "the server still wants a token"
    );
    client
        .call_tool("echo", json!({"text": "after refresh"}))
        .await
        .unwrap();
    assert_eq!(
        visits.load(Ordering::SeqCst),
        2,
        "refreshed without the browser"
    );
}

#[tokio::test]
async fn dpop_bound_refresh_tokens_refresh_with_the_same_key_only() {
    if oidc::skipped() {
        return;
    }
    let provider = Provider::start_with(&ProviderOptions {
        access_ttl: Some(3),
        dpop: true,
        dpop_nonce: true,
        ..ProviderOptions::default()
    });
    let server = crate::auth_oidc_extensions::dpop_smcpd(&provider);
    let store = Arc::new(MemoryTokenStore::new());
    let visits = Arc::new(AtomicUsize::new(0));
    let client_with = |builder: smcp_client::auth::OAuthConfigBuilder| {
        let oauth = builder
            .client_id(oidc::PUBLIC_CLIENT)
            .authorizer(ProviderBrowser::new(visits.clone()))
            .shared_token_store(store.clone())
            .build();
        smcp_client::Client::builder(endpoint(&server))
            .oauth(oauth)
            .build()
            .unwrap()
    };
    // Sign-in with DPoP (the provider offers it): a bound access token and refresh token.
    let client = client_with(OAuthConfig::builder());
    client.list_tools().await.unwrap();
    assert_eq!(visits.load(Ordering::SeqCst), 1);
    let stored = store.load(&endpoint(&server)).unwrap().unwrap();
    assert!(
        stored.is_dpop() && stored.refresh_token.is_some(),
        "{stored:?}"
    );

    // Expired: the refresh carries a proof of the same key, so no browser.
    tokio::time::sleep(Duration::from_millis(3300)).await;
    client
        .call_tool("echo", json!({"text": "refreshed"}))
        .await
        .unwrap();
    assert_eq!(
        visits.load(Ordering::SeqCst),
        1,
        "refreshed without the browser"
    );
    client.close().await;

    // Another key cannot use that refresh token: the provider refuses the refresh and the
    // client signs in again through the browser.
    tokio::time::sleep(Duration::from_millis(3300)).await;
    let other =
        client_with(OAuthConfig::builder().dpop_signer(KeySigner::generate_es256().unwrap()));
    other
        .call_tool("echo", json!({"text": "other key"}))
        .await
        .unwrap();
    assert_eq!(
        visits.load(Ordering::SeqCst),
        2,
        "the refresh with another key was refused"
    );
    other.close().await;
}

#[tokio::test]
async fn a_dynamically_registered_client_completes_the_flow() {
    if oidc::skipped() {
        return;
    }
    let provider = Provider::start();
    let server = protected_smcpd(&provider);
    let visits = Arc::new(AtomicUsize::new(0));
    // No client id: the client registers itself at the provider (RFC 7591).
    let oauth = OAuthConfig::builder()
        .client_name("smcp e2e (DCR)")
        .authorizer(ProviderBrowser::new(visits.clone()))
        .build();
    let client = smcp_client::Client::builder(endpoint(&server))
        .oauth(oauth)
        .build()
        .unwrap();
    let result = client
        .call_tool("echo", json!({"text": "registered"}))
        .await
        .unwrap();
    assert_eq!(visits.load(Ordering::SeqCst), 1);
    assert!(
        serde_json::to_string(&result)
            .unwrap()
            .contains("registered"),
        "{result:?}"
    );
}

/// The browser step through the provider's own pages, as `alice`; one session (cookie jar)
/// for every authorization, as a real browser would keep.
struct ProviderBrowser {
    browser: tokio::sync::Mutex<Browser>,
    redirect_uri: String,
    visits: Arc<AtomicUsize>,
}

impl std::fmt::Debug for ProviderBrowser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderBrowser").finish_non_exhaustive()
    }
}

impl ProviderBrowser {
    fn new(visits: Arc<AtomicUsize>) -> Self {
        Self {
            browser: tokio::sync::Mutex::new(Browser::new("alice")),
            // Never contacted: the scripted browser stops at the redirect.
            redirect_uri: "http://127.0.0.1:7/callback".to_owned(),
            visits,
        }
    }
}

impl Authorizer for ProviderBrowser {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, AuthError>> {
        Box::pin(async move {
            self.visits.fetch_add(1, Ordering::SeqCst);
            let back = self.browser.lock().await.authorize(authorization_url).await;
            Ok(AuthorizationResponse::from_query(&back))
        })
    }
}
