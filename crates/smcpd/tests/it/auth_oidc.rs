//! `smcpd --auth-issuer` against a real authorization server: the npm `oidc-provider` (a
//! certified OpenID Provider, `scripts/oidc-provider`) on a loopback port issuing JWT access
//! tokens per resource indicator. Every bad token is refused with the exact status and
//! challenge (no token, wrong audience, bad signature, wrong issuer, missing scope, expired),
//! and an unknown `kid` makes smcpd fetch the rotated keys. The client side of the flow is in
//! `auth_oidc_client.rs`. `SMCP_OIDC=skip` disables these tests.

#![cfg(feature = "auth")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::oidc;
use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use oidc::{Provider, ProviderOptions};
use serde_json::{Value, json};
use support::Smcpd;

/// The scope every request needs, and the one `toggle_extra` needs on top.
const TOOLS_SCOPE: &str = "mcp:tools";
const ADMIN_SCOPE: &str = "mcp:admin";

/// smcpd protected by `provider`: `mcp:tools` for everything, `mcp:admin` for `toggle_extra`,
/// no clock skew allowed and keys refetched on an unknown `kid` at most every second.
fn protected_smcpd(provider: &Provider) -> Smcpd {
    Smcpd::start_with(&[
        "--auth-issuer",
        &provider.issuer,
        "--auth-scope",
        TOOLS_SCOPE,
        "--auth-tool-scope",
        "toggle_extra=mcp:admin",
        "--auth-leeway",
        "0",
        "--auth-jwks-refetch",
        "1s",
    ])
}

fn endpoint(server: &Smcpd) -> String {
    format!("http://{}/mcp", server.addr)
}

/// A 2026-07-28 request with an optional bearer token; status, `WWW-Authenticate`, body.
async fn post(
    server: &Smcpd,
    token: Option<&str>,
    method: &str,
    params: Value,
) -> (u16, Option<String>, Value) {
    let body = support::mcp(json!(1), method, params);
    let mut req = reqwest::Client::new()
        .post(endpoint(server))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = body["params"]["name"].as_str() {
        req = req.header("mcp-name", name);
    }
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    let res = req.json(&body).send().await.unwrap();
    let status = res.status().as_u16();
    let challenge = res
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = res.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, challenge, body)
}

fn metadata_url(server: &Smcpd) -> String {
    format!(
        "http://{}/.well-known/oauth-protected-resource/mcp",
        server.addr
    )
}

/// Asserts a 401 whose challenge points at the resource metadata and names the scope, with
/// `error="invalid_token"` when a token was sent.
fn assert_unauthorized(server: &Smcpd, got: &(u16, Option<String>, Value), token_sent: bool) {
    let (status, challenge, body) = got;
    assert_eq!(*status, 401, "{body}");
    let challenge = challenge.as_deref().expect("a WWW-Authenticate header");
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(
        challenge.contains(&format!(r#"resource_metadata="{}""#, metadata_url(server))),
        "{challenge}"
    );
    assert!(
        challenge.contains(&format!(r#"scope="{TOOLS_SCOPE}""#)),
        "{challenge}"
    );
    assert_eq!(
        challenge.contains(r#"error="invalid_token""#),
        token_sent,
        "{challenge}"
    );
}

/// Part `index` of a JWT (0 the header, 1 the payload), decoded.
fn jwt_part(token: &str, index: usize) -> Value {
    use base64::Engine as _;
    let part = token.split('.').nth(index).unwrap();
    serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(part)
            .unwrap(),
    )
    .unwrap()
}

fn claims(token: &str) -> Value {
    jwt_part(token, 1)
}

/// A provider signing with the keys kept in a fresh `keys.json`, and smcpd protected by it.
fn provider_and_smcpd() -> (std::path::PathBuf, Provider, Smcpd) {
    let keys = tempdir().join("keys.json");
    let provider = Provider::start_with(&ProviderOptions {
        keys: Some(keys.clone()),
        ..ProviderOptions::default()
    });
    let server = protected_smcpd(&provider);
    (keys, provider, server)
}

#[tokio::test]
async fn smcpd_refuses_every_bad_token_from_a_real_provider() {
    if oidc::skipped() {
        return;
    }
    let (keys, provider, server) = provider_and_smcpd();
    let resource = endpoint(&server);

    // The resource metadata is public and names the provider.
    let prm: Value = reqwest::get(metadata_url(&server))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(prm["resource"], resource);
    assert_eq!(prm["authorization_servers"], json!([provider.issuer]));

    // No token.
    let got = post(&server, None, "tools/list", json!({})).await;
    assert_unauthorized(&server, &got, false);

    // A valid token: the provider's JWT for this resource.
    let good = provider
        .client_credentials(&resource, &format!("{TOOLS_SCOPE} {ADMIN_SCOPE}"))
        .await;
    assert_eq!(claims(&good)["aud"], resource);
    let (status, _, body) = post(&server, Some(&good), "tools/list", json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["result"]["tools"].as_array().unwrap().len() > 1);

    // Minted for another resource (RFC 8707 audience).
    let other = provider
        .client_credentials("http://127.0.0.1:9/mcp", TOOLS_SCOPE)
        .await;
    assert_unauthorized(
        &server,
        &post(&server, Some(&other), "tools/list", json!({})).await,
        true,
    );

    // A bad signature: the same token with its signature's first byte changed.
    let (head, sig) = good.rsplit_once('.').unwrap();
    let flipped = if sig.starts_with('A') { 'B' } else { 'A' };
    let forged = format!("{head}.{flipped}{}", &sig[1..]);
    assert_unauthorized(
        &server,
        &post(&server, Some(&forged), "tools/list", json!({})).await,
        true,
    );

    // Another issuer signing with the very same keys: a valid signature, the wrong `iss`.
    let impostor = Provider::start_with(&ProviderOptions {
        keys: Some(keys.clone()),
        ..ProviderOptions::default()
    });
    let foreign = impostor.client_credentials(&resource, TOOLS_SCOPE).await;
    assert_ne!(claims(&foreign)["iss"], claims(&good)["iss"]);
    assert_unauthorized(
        &server,
        &post(&server, Some(&foreign), "tools/list", json!({})).await,
        true,
    );

    // A token without the tool's scope: 403 asking for it (step-up), the handler not run.
    let narrow = provider.client_credentials(&resource, TOOLS_SCOPE).await;
    let (status, challenge, body) = post(
        &server,
        Some(&narrow),
        "tools/call",
        json!({"name": "toggle_extra", "arguments": {}}),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    let challenge = challenge.unwrap();
    assert!(
        challenge.contains(r#"error="insufficient_scope""#),
        "{challenge}"
    );
    assert!(challenge.contains(ADMIN_SCOPE), "{challenge}");
    let (_, _, tools) = post(&server, Some(&narrow), "tools/list", json!({})).await;
    assert!(
        !tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "extra"),
        "toggle_extra never ran, so the extra tool is not listed: {tools}"
    );

    // Expired: the provider restarted on its port (same issuer, same keys) issuing
    // one-second tokens; smcpd allows no clock skew.
    drop(impostor);
    let port = provider.port;
    drop(provider);
    let provider = Provider::start_with(&ProviderOptions {
        keys: Some(keys),
        port: Some(port),
        access_ttl: Some(1),
        ..ProviderOptions::default()
    });
    let brief = provider.client_credentials(&resource, TOOLS_SCOPE).await;
    let (status, _, body) = post(&server, Some(&brief), "tools/list", json!({})).await;
    assert_eq!(status, 200, "fresh: {body}");
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_unauthorized(
        &server,
        &post(&server, Some(&brief), "tools/list", json!({})).await,
        true,
    );
}

#[tokio::test]
async fn an_unknown_key_id_makes_smcpd_fetch_the_rotated_keys() {
    if oidc::skipped() {
        return;
    }
    let (keys, provider, server) = provider_and_smcpd();
    let resource = endpoint(&server);
    let before = provider.client_credentials(&resource, TOOLS_SCOPE).await;
    let (status, _, body) = post(&server, Some(&before), "tools/list", json!({})).await;
    assert_eq!(status, 200, "{body}");

    // The provider rotates: a new signing key first, the old one still published.
    let port = provider.port;
    drop(provider);
    let provider = Provider::start_with(&ProviderOptions {
        keys: Some(keys),
        port: Some(port),
        rotate: true,
        ..ProviderOptions::default()
    });
    let after = provider.client_credentials(&resource, TOOLS_SCOPE).await;
    let kid = |t: &str| jwt_part(t, 0)["kid"].clone();
    assert_ne!(
        kid(&before),
        kid(&after),
        "the provider signs with a new key"
    );
    // smcpd refetches on an unknown kid at most once a second (--auth-jwks-refetch).
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (status, _, body) = post(&server, Some(&after), "tools/list", json!({})).await;
    assert_eq!(status, 200, "the rotated key is fetched: {body}");
    let (status, _, body) = post(&server, Some(&before), "tools/list", json!({})).await;
    assert_eq!(status, 200, "the old key is still published: {body}");
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "smcpd-auth-oidc-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

static NEXT: AtomicUsize = AtomicUsize::new(0);
