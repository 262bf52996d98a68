//! The authorization extensions end to end, with a real authorization server (npm
//! `oidc-provider`, `scripts/oidc-provider`), the smcp client and smcpd: DPoP-bound tokens with
//! nonces required on both sides; `private_key_jwt` client authentication; a DPoP-bound token
//! presented as a bearer token to a server that does not do DPoP.
//! `SMCP_OIDC=skip` disables these tests.

#![cfg(feature = "auth")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::oidc;
use crate::support;

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use oidc::{Provider, ProviderOptions};
use serde_json::json;
use smcp_client::auth::{KeySigner, MemoryTokenStore, OAuthConfig, TokenStore};
use support::Smcpd;

fn endpoint(server: &Smcpd) -> String {
    format!("http://{}/mcp", server.addr)
}

#[tokio::test]
async fn dpop_binds_the_clients_tokens_with_nonces_required_by_both_servers() {
    if oidc::skipped() {
        return;
    }
    let provider = Provider::start_with(&ProviderOptions {
        dpop: true,
        dpop_nonce: true,
        ..ProviderOptions::default()
    });
    let server = Smcpd::start_env(
        &[
            "--auth-issuer",
            &provider.issuer,
            "--auth-scope",
            "mcp:tools",
            "--auth-dpop-required",
            "--auth-dpop-nonce",
        ],
        &[(
            "SMCPD_AUTH_DPOP_NONCE_KEY",
            "an-e2e-nonce-key-of-at-least-32-bytes".to_owned(),
        )],
        "smcpd=info,smcp_server=info",
    );
    let store = Arc::new(MemoryTokenStore::new());
    // No DPoP setting: the provider's metadata offers ES256 proofs, so the client uses them.
    let oauth = OAuthConfig::builder()
        .client_id(oidc::M2M_CLIENT.0)
        .client_secret(oidc::M2M_CLIENT.1)
        .client_credentials(true)
        .shared_token_store(store.clone())
        .build();
    let client = smcp_client::Client::builder(endpoint(&server))
        .oauth(oauth)
        .build()
        .unwrap();
    // The token request is refused once for want of a nonce, then granted; the first MCP
    // request too (smcpd's nonce), then served.
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let stored = store.load(&endpoint(&server)).unwrap().unwrap();
    assert_eq!(stored.token_type.as_deref(), Some("DPoP"));
    assert!(
        stored.dpop_key.is_some(),
        "the generated key is kept with its tokens"
    );
    // The access token is bound to that key (RFC 9449 §6: cnf.jkt).
    let payload = stored.access_token.expose().split('.').nth(1).unwrap();
    let claims: serde_json::Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    assert!(claims["cnf"]["jkt"].is_string(), "{claims}");
    // Later requests carry fresh proofs with the nonce already known.
    let result = client
        .call_tool("echo", json!({"text": "bound"}))
        .await
        .unwrap();
    assert!(format!("{result:?}").contains("bound"));
    client.close().await;
}

/// An EC P-256 key as PEM, and its public JWKS.
fn client_key() -> (String, serde_json::Value) {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let point = key.public_key_raw();
    let (x, y) = point[1..].split_at(32);
    let jwks = json!({"keys": [{
        "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig",
        "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y),
    }]});
    (key.serialize_pem(), jwks)
}

#[tokio::test]
async fn private_key_jwt_authenticates_the_client_and_a_wrong_key_is_refused() {
    if oidc::skipped() {
        return;
    }
    let (pem, jwks) = client_key();
    let jwks_file = std::env::temp_dir().join(format!(
        "smcpd-oidc-client-jwks-{}.json",
        std::process::id()
    ));
    std::fs::write(&jwks_file, jwks.to_string()).unwrap();
    // The provider binds tokens with DPoP; this smcpd does not do DPoP and challenges only
    // Bearer, so the client presents its bound token as a bearer token (RFC 9449 §7.2).
    let provider = Provider::start_with(&ProviderOptions {
        dpop: true,
        client_jwks: Some(jwks_file.clone()),
        ..ProviderOptions::default()
    });
    let server = Smcpd::start_with(&[
        "--auth-issuer",
        &provider.issuer,
        "--auth-scope",
        "mcp:tools",
    ]);
    let client_with = |pem: &str| {
        let oauth = OAuthConfig::builder()
            .client_id(oidc::JWT_CLIENT)
            .client_assertion_signer(KeySigner::from_pem(pem.as_bytes()).unwrap())
            .client_credentials(true)
            .build();
        smcp_client::Client::builder(endpoint(&server))
            .oauth(oauth)
            .build()
            .unwrap()
    };
    let client = client_with(&pem);
    assert!(!client.list_tools().await.unwrap().is_empty());
    client.close().await;

    let (other, _) = client_key();
    let client = client_with(&other);
    let err = client.list_tools().await.unwrap_err();
    let auth = err.auth_error().expect("an authorization error");
    assert!(
        matches!(auth, smcp_client::auth::AuthError::Token { error, .. } if error == "invalid_client"),
        "{auth:?}"
    );
    client.close().await;
    let _ = std::fs::remove_file(jwks_file);
}
