//! Test support for the authorization tests: signing keys generated per run (rcgen, P-256),
//! tokens, and a tiny authorization server on 127.0.0.1:0 serving its RFC 8414 metadata and
//! a JWKS that a test can rotate.

#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    missing_debug_implementations
)]
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

/// A signing key and its public JWK.
#[derive(Clone)]
pub struct SigningKey {
    pub kid: String,
    pub encoding: EncodingKey,
    pub jwk: Jwk,
}

impl SigningKey {
    pub fn generate(kid: &str) -> Self {
        let pair = rcgen::KeyPair::generate().unwrap();
        let encoding = EncodingKey::from_ec_der(&pair.serialize_der());
        let mut jwk = Jwk::from_encoding_key(&encoding, Algorithm::ES256).unwrap();
        jwk.common.key_id = Some(kid.to_owned());
        Self {
            kid: kid.to_owned(),
            encoding,
            jwk,
        }
    }

    /// A token with `claims`, signed with this key.
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        header.typ = Some("at+jwt".to_owned());
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Claims valid for an hour for `sub`, `iss`, `aud`, with `scope`.
pub fn claims(sub: &str, iss: &str, aud: &str, scope: &str) -> Value {
    json!({
        "sub": sub, "iss": iss, "aud": aud, "scope": scope,
        "iat": now(), "exp": now() + 3600, "client_id": "test-client"
    })
}

/// A token with `alg: none` and no signature.
pub fn unsigned(claims: &Value) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header = b64.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let body = b64.encode(claims.to_string());
    format!("{header}.{body}.")
}

/// A JWKS of these keys.
pub fn jwks(keys: &[&SigningKey]) -> JwkSet {
    JwkSet {
        keys: keys.iter().map(|k| k.jwk.clone()).collect(),
    }
}

/// An authorization server on 127.0.0.1:0: `/.well-known/oauth-authorization-server` and
/// `/jwks`, the JWKS replaceable; counts JWKS fetches.
pub struct TestAs {
    pub issuer: String,
    pub jwks: Arc<Mutex<JwkSet>>,
    pub jwks_fetches: Arc<std::sync::atomic::AtomicUsize>,
}

impl TestAs {
    pub async fn start(keys: &[&SigningKey]) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let jwks = Arc::new(Mutex::new(jwks(keys)));
        let fetches = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let metadata = json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "jwks_uri": format!("{issuer}/jwks"),
            "response_types_supported": ["code"],
        });
        let served = jwks.clone();
        let counted = fetches.clone();
        let app = axum::Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                axum::routing::get(move || {
                    let metadata = metadata.clone();
                    async move { axum::Json(metadata) }
                }),
            )
            .route(
                "/jwks",
                axum::routing::get(move || {
                    let set = served.lock().unwrap().clone();
                    counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    async move { axum::Json(serde_json::to_value(set).unwrap()) }
                }),
            );
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            issuer,
            jwks,
            jwks_fetches: fetches,
        }
    }

    pub fn rotate(&self, keys: &[&SigningKey]) {
        *self.jwks.lock().unwrap() = jwks(keys);
    }

    pub fn fetches(&self) -> usize {
        self.jwks_fetches.load(std::sync::atomic::Ordering::SeqCst)
    }
}
