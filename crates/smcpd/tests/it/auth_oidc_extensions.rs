//! The authorization extensions end to end, with a real authorization server (npm
//! `oidc-provider`, `scripts/oidc-provider`), the smcp client and smcpd: DPoP-bound tokens with
//! nonces required on both sides; `private_key_jwt` client authentication; a DPoP-bound token
//! presented as a bearer token to a server that does not do DPoP; workload identity federation
//! and enterprise-managed authorization (the grants oidc-provider does not ship, registered
//! through its `registerGrantType` in tests/oidc/provider.mjs).
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
use smcp_client::auth::{
    AssertionFile, AuthError, EnterpriseIdp, JwtSigner as _, KeySigner, MemoryTokenStore,
    OAuthConfig, Secret, TokenStore,
};
use support::Smcpd;

fn endpoint(server: &Smcpd) -> String {
    format!("http://{}/mcp", server.addr)
}

/// smcpd protected by `provider`, requiring `mcp:tools`, DPoP-bound tokens and DPoP nonces.
pub(crate) fn dpop_smcpd(provider: &Provider) -> Smcpd {
    Smcpd::start_env(
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
    )
}

/// `jwks` written to a temporary file named after `what` (removed by the caller).
fn jwks_file(what: &str, jwks: &serde_json::Value) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "smcpd-oidc-{what}-jwks-{}.json",
        std::process::id()
    ));
    std::fs::write(&path, jwks.to_string()).unwrap();
    path
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
    let server = dpop_smcpd(&provider);
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
    let jwks_file = jwks_file("client", &jwks);
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

/// A compact ES256 JWT with `claims`, signed by `key`.
fn signed(key: &KeySigner, claims: &serde_json::Value) -> String {
    let header = json!({"alg": "ES256", "typ": "JWT"});
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature = key.sign(input.as_bytes()).unwrap();
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature))
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn a_workloads_jwt_gets_a_token_and_a_wrong_audience_is_reported_not_retried() {
    if oidc::skipped() {
        return;
    }
    let (pem, jwks) = client_key();
    let jwks_file = jwks_file("workload", &jwks);
    let provider = Provider::start_with(&ProviderOptions {
        workload_jwks: Some(jwks_file.clone()),
        ..ProviderOptions::default()
    });
    let server = Smcpd::start_with(&[
        "--auth-issuer",
        &provider.issuer,
        "--auth-scope",
        "mcp:tools",
    ]);
    let key = KeySigner::from_pem(pem.as_bytes()).unwrap();
    let token_file =
        std::env::temp_dir().join(format!("smcpd-oidc-workload-token-{}", std::process::id()));
    let workload_token = |aud: &str| {
        signed(
            &key,
            &json!({
                "iss": "https://workload-issuer.example",
                "sub": "system:serviceaccount:mcp:agent",
                "aud": aud,
                "iat": now(),
                "exp": now() + 300,
            }),
        )
    };
    let client = || {
        let oauth = OAuthConfig::builder()
            .client_id(oidc::WORKLOAD_CLIENT)
            .workload_identity(AssertionFile::new(&token_file))
            .build();
        smcp_client::Client::builder(endpoint(&server))
            .oauth(oauth)
            .build()
            .unwrap()
    };

    std::fs::write(&token_file, workload_token(&provider.issuer)).unwrap();
    let c = client();
    let result = c
        .call_tool("echo", json!({"text": "workload"}))
        .await
        .unwrap();
    assert!(format!("{result:?}").contains("workload"));
    c.close().await;

    // A token for another audience: the provider refuses the grant, and the client reports it.
    std::fs::write(&token_file, workload_token("https://elsewhere.example")).unwrap();
    let c = client();
    let err = c.list_tools().await.unwrap_err();
    assert!(
        matches!(err.auth_error(), Some(AuthError::Token { error, .. }) if error == "invalid_grant"),
        "{err:?}"
    );
    c.close().await;
    let _ = std::fs::remove_file(jwks_file);
    let _ = std::fs::remove_file(token_file);
}

#[tokio::test]
async fn an_enterprise_id_token_becomes_an_id_jag_then_an_access_token() {
    if oidc::skipped() {
        return;
    }
    let idp = Provider::start_with(&ProviderOptions {
        idp: true,
        ..ProviderOptions::default()
    });
    let authorization_server = Provider::start_with(&ProviderOptions {
        trust_idp: Some(idp.issuer.clone()),
        ..ProviderOptions::default()
    });
    let server = Smcpd::start_with(&[
        "--auth-issuer",
        &authorization_server.issuer,
        "--auth-scope",
        "mcp:tools",
    ]);
    let client_with = |id_token: String| {
        let oauth = OAuthConfig::builder()
            .client_id(oidc::JAG_CLIENT.0)
            .client_secret(oidc::JAG_CLIENT.1)
            .enterprise_idp(EnterpriseIdp::new(
                format!("{}/token", idp.issuer),
                oidc::PUBLIC_CLIENT,
                Secret::new(id_token),
            ))
            .build();
        smcp_client::Client::builder(endpoint(&server))
            .oauth(oauth)
            .build()
            .unwrap()
    };
    // The host signed the user in with the identity provider.
    let client = client_with(idp.id_token("alice").await);
    let result = client
        .call_tool("echo", json!({"text": "enterprise"}))
        .await
        .unwrap();
    assert!(format!("{result:?}").contains("enterprise"));
    client.close().await;

    // An ID token the identity provider did not issue is refused at the exchange.
    let forged = signed(
        &KeySigner::generate_es256().unwrap(),
        &json!({"iss": idp.issuer, "sub": "mallory", "aud": oidc::PUBLIC_CLIENT, "iat": now(), "exp": now() + 300}),
    );
    let client = client_with(forged);
    let err = client.list_tools().await.unwrap_err();
    assert!(
        matches!(err.auth_error(), Some(AuthError::Token { error, .. }) if error == "invalid_grant"),
        "{err:?}"
    );
    client.close().await;
}
