//! DPoP-bound access tokens (RFC 9449) through `AuthLayer`: each bad proof answers `401`
//! with the exact `DPoP` challenge and runs no handler; a bound token sent as `Bearer` is
//! refused; nonces are issued and accepted; a good proof reaches the handler. Tokens and
//! proofs are signed with P-256 keys generated per run; the JWKS is static.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::auth_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use auth_support::{SigningKey, claims, jwks, now};
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use jsonwebtoken::{Algorithm, Header};
use serde_json::{Value, json};
use smcp_server::auth::{
    AuthLayer, DpopConfig, JwtVerifier, ProtectedResourceMetadata, ScopePolicy, jwk_thumbprint,
};
use smcp_server::prelude::*;
use tower::ServiceExt as _;

const ISSUER: &str = "https://as.example";
const RESOURCE: &str = "https://mcp.example/mcp";
const METADATA: &str = "https://mcp.example/.well-known/oauth-protected-resource/mcp";
const ALGS: &str = "ES256 ES384 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA";
const NONCE_KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

struct Fixture {
    app: axum::Router,
    runs: Arc<AtomicUsize>,
    /// The authorization server's key.
    issuer: SigningKey,
    /// The client's DPoP key.
    client: SigningKey,
}

fn fixture(dpop: DpopConfig) -> Fixture {
    fixture_with_keys(
        dpop,
        SigningKey::generate("as"),
        SigningKey::generate("client"),
    )
}

fn fixture_with_keys(dpop: DpopConfig, issuer: SigningKey, client: SigningKey) -> Fixture {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let server = Server::builder("dpop-test", "1.0.0")
        .tool(tool("whoami").handler(move |call| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move {
                let who = call
                    .ctx
                    .principal()
                    .map(|p| p.0.clone())
                    .unwrap_or_default();
                Ok(CallToolResult::text(who))
            }
        }))
        .build()
        .unwrap();
    let verifier = JwtVerifier::from_jwks(ISSUER, jwks(&[&issuer]))
        .audience(RESOURCE)
        .build()
        .unwrap();
    let metadata = ProtectedResourceMetadata::new(RESOURCE)
        .unwrap()
        .authorization_server(ISSUER)
        .scopes_supported(["mcp"]);
    let auth = AuthLayer::builder(verifier, metadata)
        .scopes(ScopePolicy::builder().require("mcp").build())
        .dpop(dpop)
        .build();
    Fixture {
        app: server
            .router("/mcp")
            .layer(auth.clone())
            .merge(auth.metadata_router()),
        runs,
        issuer,
        client,
    }
}

fn default_fixture() -> Fixture {
    fixture(DpopConfig::builder().build().unwrap())
}

fn thumbprint(key: &SigningKey) -> String {
    let mut jwk = serde_json::to_value(&key.jwk).unwrap();
    jwk.as_object_mut().unwrap().remove("kid");
    jwk_thumbprint(&jwk).unwrap()
}

impl Fixture {
    /// An access token for alice, bound to the client's key.
    fn bound_token(&self) -> String {
        let mut claims = claims("alice", ISSUER, RESOURCE, "mcp");
        claims["cnf"] = json!({ "jkt": thumbprint(&self.client) });
        self.issuer.sign(&claims)
    }

    /// An access token for alice, not bound.
    fn plain_token(&self) -> String {
        self.issuer.sign(&claims("alice", ISSUER, RESOURCE, "mcp"))
    }

    /// The claims of a good proof for `POST /mcp` with `token`.
    fn proof_claims(&self, token: &str) -> Value {
        use base64::Engine as _;
        use sha2::Digest as _;
        let ath = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(sha2::Sha256::digest(token.as_bytes()));
        json!({
            "jti": format!("{:x}", rand_id()),
            "htm": "POST",
            "htu": RESOURCE,
            "iat": now(),
            "ath": ath,
        })
    }

    fn good_proof(&self, token: &str) -> String {
        proof(&self.client, "dpop+jwt", &self.proof_claims(token))
    }
}

/// A unique-enough id per call.
fn rand_id() -> u128 {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    (u128::from(now()) << 64) | NEXT.fetch_add(1, Ordering::SeqCst) as u128
}

/// A proof signed by `key`, its public JWK in the header.
fn proof(key: &SigningKey, typ: &str, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some(typ.to_owned());
    let mut jwk = key.jwk.clone();
    jwk.common.key_id = None;
    header.jwk = Some(jwk);
    jsonwebtoken::encode(&header, claims, &key.encoding).unwrap()
}

fn call(authorization: &str, proofs: &[&str]) -> Request<axum::body::Body> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "whoami", "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }
    }});
    let mut request = Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "whoami")
        .header("authorization", authorization);
    for proof in proofs {
        request = request.header("dpop", *proof);
    }
    request
        .body(axum::body::Body::from(body.to_string()))
        .unwrap()
}

struct Answer {
    status: StatusCode,
    challenges: Vec<String>,
    nonce: Option<String>,
    body: Value,
}

async fn send(f: &Fixture, request: Request<axum::body::Body>) -> Answer {
    let response = f.app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let challenges = response
        .headers()
        .get_all("www-authenticate")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect();
    let nonce = response
        .headers()
        .get("dpop-nonce")
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    Answer {
        status,
        challenges,
        nonce,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    }
}

fn dpop_challenge(error: &str, description: &str) -> String {
    format!(
        r#"DPoP error="{error}", error_description="{description}", algs="{ALGS}", resource_metadata="{METADATA}", scope="mcp""#
    )
}

fn bad_proof(description: &str) -> Vec<String> {
    vec![dpop_challenge("invalid_dpop_proof", description)]
}

/// A refused request: `401`, exactly `challenges`, a JSON-RPC error body, and no more
/// handler runs than `runs`.
fn assert_refused(f: &Fixture, answer: &Answer, challenges: &[String], runs: usize) {
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{:?}", answer.body);
    assert_eq!(answer.challenges, challenges);
    assert_eq!(answer.body["id"], Value::Null);
    assert_eq!(
        answer.body["error"]["code"],
        smcp_server::auth::UNAUTHORIZED
    );
    assert_eq!(f.runs.load(Ordering::SeqCst), runs, "a handler ran");
}

async fn refused_proof(f: &Fixture, token: &str, proof: &str, description: &str) {
    let answer = send(f, call(&format!("DPoP {token}"), &[proof])).await;
    assert_refused(f, &answer, &bad_proof(description), 0);
}

#[tokio::test]
async fn dpop_good_proof_reaches_the_handler() {
    let f = default_fixture();
    let token = f.bound_token();
    let answer = send(&f, call(&format!("DPoP {token}"), &[&f.good_proof(&token)])).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(answer.body["result"]["content"][0]["text"], "alice");
    assert_eq!(f.runs.load(Ordering::SeqCst), 1);
    // A second request with a fresh proof (the token is cached now) passes too.
    let answer = send(&f, call(&format!("dpop {token}"), &[&f.good_proof(&token)])).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(f.runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn dpop_missing_proof_is_refused() {
    let f = default_fixture();
    let token = f.bound_token();
    let answer = send(&f, call(&format!("DPoP {token}"), &[])).await;
    assert_refused(
        &f,
        &answer,
        &bad_proof("no DPoP proof: send a DPoP header"),
        0,
    );
}

#[tokio::test]
async fn dpop_two_proof_headers_are_refused() {
    let f = default_fixture();
    let token = f.bound_token();
    let (a, b) = (f.good_proof(&token), f.good_proof(&token));
    let answer = send(&f, call(&format!("DPoP {token}"), &[&a, &b])).await;
    assert_refused(&f, &answer, &bad_proof("more than one DPoP header"), 0);
}

#[tokio::test]
async fn dpop_wrong_typ_is_refused() {
    let f = default_fixture();
    let token = f.bound_token();
    let jwt = proof(&f.client, "JWT", &f.proof_claims(&token));
    refused_proof(&f, &token, &jwt, "DPoP proof typ must be dpop+jwt").await;
}

#[tokio::test]
async fn dpop_wrong_htm_is_refused() {
    let f = default_fixture();
    let token = f.bound_token();
    let mut claims = f.proof_claims(&token);
    claims["htm"] = json!("GET");
    let jwt = proof(&f.client, "dpop+jwt", &claims);
    refused_proof(
        &f,
        &token,
        &jwt,
        "DPoP proof htm does not match the request method",
    )
    .await;
}

#[tokio::test]
async fn dpop_wrong_htu_is_refused() {
    let f = default_fixture();
    let token = f.bound_token();
    for htu in [
        "https://other.example/mcp",
        "https://mcp.example/other",
        "http://mcp.example/mcp",
    ] {
        let mut claims = f.proof_claims(&token);
        claims["htu"] = json!(htu);
        let jwt = proof(&f.client, "dpop+jwt", &claims);
        refused_proof(
            &f,
            &token,
            &jwt,
            "DPoP proof htu does not match the request URI",
        )
        .await;
    }
    // Query and fragment are not part of the comparison.
    let mut claims = f.proof_claims(&token);
    claims["htu"] = json!("https://MCP.example:443/mcp?x=1#y");
    let jwt = proof(&f.client, "dpop+jwt", &claims);
    let answer = send(&f, call(&format!("DPoP {token}"), &[&jwt])).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
}

#[tokio::test]
async fn dpop_stale_or_future_iat_is_refused() {
    let f = default_fixture();
    let token = f.bound_token();
    for iat in [now() - 301, now() + 61] {
        let mut claims = f.proof_claims(&token);
        claims["iat"] = json!(iat);
        let jwt = proof(&f.client, "dpop+jwt", &claims);
        refused_proof(
            &f,
            &token,
            &jwt,
            "DPoP proof iat is outside the accepted window",
        )
        .await;
    }
}

#[tokio::test]
async fn dpop_replayed_jti_is_refused() {
    let f = default_fixture();
    let token = f.bound_token();
    let jwt = f.good_proof(&token);
    let first = send(&f, call(&format!("DPoP {token}"), &[&jwt])).await;
    assert_eq!(first.status, StatusCode::OK, "{:?}", first.body);
    assert_eq!(f.runs.load(Ordering::SeqCst), 1);
    let again = send(&f, call(&format!("DPoP {token}"), &[&jwt])).await;
    assert_refused(&f, &again, &bad_proof("DPoP proof jti was already used"), 1);
}

#[tokio::test]
async fn a_full_replay_guard_answers_503_not_a_replay() {
    // Room for one live proof: the second fresh one cannot be remembered, so it is refused
    // (fail closed), as the server's overload and not as the client's replay.
    let f = fixture(
        DpopConfig::builder()
            .replay_guard(smcp_server::mrtr::MemoryReplayGuard::new(1))
            .build()
            .unwrap(),
    );
    let token = f.bound_token();
    let first = send(&f, call(&format!("DPoP {token}"), &[&f.good_proof(&token)])).await;
    assert_eq!(first.status, StatusCode::OK, "{:?}", first.body);
    let request = call(&format!("DPoP {token}"), &[&f.good_proof(&token)]);
    let response = f.app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers()["retry-after"], "1");
    assert!(response.headers().get("www-authenticate").is_none());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        body["error"]["message"],
        "too many DPoP proofs in their validity window; try again later"
    );
    assert_eq!(f.runs.load(Ordering::SeqCst), 1, "a handler ran");
}

#[tokio::test]
async fn dpop_proof_by_another_key_is_refused() {
    let f = default_fixture();
    let token = f.bound_token();
    let other = SigningKey::generate("other");
    let jwt = proof(&other, "dpop+jwt", &f.proof_claims(&token));
    let answer = send(&f, call(&format!("DPoP {token}"), &[&jwt])).await;
    assert_refused(
        &f,
        &answer,
        &[dpop_challenge(
            "invalid_token",
            "the DPoP proof key does not match the access token's key binding (cnf.jkt)",
        )],
        0,
    );
}

#[tokio::test]
async fn dpop_wrong_ath_is_refused() {
    let f = default_fixture();
    let token = f.bound_token();
    let jwt = proof(&f.client, "dpop+jwt", &f.proof_claims(&f.bound_token()));
    refused_proof(
        &f,
        &token,
        &jwt,
        "DPoP proof ath does not match the access token",
    )
    .await;
}

#[tokio::test]
async fn dpop_bound_token_as_bearer_is_refused() {
    let f = default_fixture();
    let token = f.bound_token();
    let answer = send(&f, call(&format!("Bearer {token}"), &[])).await;
    assert_refused(
        &f,
        &answer,
        &[dpop_challenge(
            "invalid_token",
            "a DPoP-bound access token must be sent with the DPoP scheme and a proof",
        )],
        0,
    );
}

#[tokio::test]
async fn dpop_unbound_token_with_dpop_scheme_is_refused() {
    let f = default_fixture();
    let token = f.plain_token();
    let answer = send(&f, call(&format!("DPoP {token}"), &[&f.good_proof(&token)])).await;
    assert_refused(
        &f,
        &answer,
        &[dpop_challenge(
            "invalid_token",
            "the access token is not DPoP-bound (no cnf.jkt)",
        )],
        0,
    );
}

#[tokio::test]
async fn dpop_optional_still_accepts_plain_bearer_and_offers_both_challenges() {
    let f = default_fixture();
    let answer = send(&f, call(&format!("Bearer {}", f.plain_token()), &[])).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let answer = send(&f, call("Basic YWxpY2U6c2VjcmV0", &[])).await;
    assert_refused(
        &f,
        &answer,
        &[
            format!(r#"DPoP algs="{ALGS}", resource_metadata="{METADATA}", scope="mcp""#),
            format!(r#"Bearer resource_metadata="{METADATA}", scope="mcp""#),
        ],
        1,
    );
}

#[tokio::test]
async fn dpop_required_refuses_plain_bearer() {
    let f = fixture(DpopConfig::builder().required(true).build().unwrap());
    let answer = send(&f, call(&format!("Bearer {}", f.plain_token()), &[])).await;
    assert_refused(
        &f,
        &answer,
        &[dpop_challenge(
            "invalid_token",
            "this resource requires DPoP-bound access tokens",
        )],
        0,
    );
    let answer = send(&f, call("Basic YWxpY2U6c2VjcmV0", &[])).await;
    assert_refused(
        &f,
        &answer,
        &[format!(
            r#"DPoP algs="{ALGS}", resource_metadata="{METADATA}", scope="mcp""#
        )],
        0,
    );
    // A bad token, whatever its scheme, gets only the DPoP challenge.
    let answer = send(&f, call("Bearer a.b.c", &[])).await;
    assert_refused(
        &f,
        &answer,
        &[dpop_challenge(
            "invalid_token",
            "malformed access token: the JOSE header is not valid",
        )],
        0,
    );
}

#[tokio::test]
async fn dpop_optional_bad_bearer_token_gets_both_challenges() {
    let f = default_fixture();
    let answer = send(&f, call("Bearer a.b.c", &[])).await;
    assert_refused(
        &f,
        &answer,
        &[
            format!(
                r#"Bearer error="invalid_token", error_description="malformed access token: the JOSE header is not valid", resource_metadata="{METADATA}", scope="mcp""#
            ),
            format!(r#"DPoP algs="{ALGS}", resource_metadata="{METADATA}", scope="mcp""#),
        ],
        0,
    );
}

#[tokio::test]
async fn dpop_nonce_is_required_and_the_issued_one_is_accepted() {
    let f = fixture(
        DpopConfig::builder()
            .require_nonce(NONCE_KEY.to_vec())
            .build()
            .unwrap(),
    );
    let token = f.bound_token();
    let answer = send(&f, call(&format!("DPoP {token}"), &[&f.good_proof(&token)])).await;
    assert_refused(
        &f,
        &answer,
        &[dpop_challenge(
            "use_dpop_nonce",
            "DPoP proof nonce is missing or no longer valid; use the DPoP-Nonce given",
        )],
        0,
    );
    let nonce = answer.nonce.expect("a DPoP-Nonce header");
    // A forged nonce is refused the same way.
    let mut claims = f.proof_claims(&token);
    claims["nonce"] = json!("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    let forged = send(
        &f,
        call(
            &format!("DPoP {token}"),
            &[&proof(&f.client, "dpop+jwt", &claims)],
        ),
    )
    .await;
    assert_eq!(forged.status, StatusCode::UNAUTHORIZED);
    assert_eq!(f.runs.load(Ordering::SeqCst), 0, "a handler ran");
    let mut claims = f.proof_claims(&token);
    claims["nonce"] = json!(nonce);
    let retry = send(
        &f,
        call(
            &format!("DPoP {token}"),
            &[&proof(&f.client, "dpop+jwt", &claims)],
        ),
    )
    .await;
    assert_eq!(retry.status, StatusCode::OK, "{:?}", retry.body);
    assert_eq!(f.runs.load(Ordering::SeqCst), 1);
    // Another instance with the same nonce key accepts it too: nothing is shared but the key.
    let g = fixture_with_keys(
        DpopConfig::builder()
            .require_nonce(NONCE_KEY.to_vec())
            .build()
            .unwrap(),
        f.issuer.clone(),
        f.client.clone(),
    );
    let mut claims = g.proof_claims(&token);
    claims["nonce"] = json!(nonce);
    let elsewhere = send(
        &g,
        call(
            &format!("DPoP {token}"),
            &[&proof(&g.client, "dpop+jwt", &claims)],
        ),
    )
    .await;
    assert_eq!(elsewhere.status, StatusCode::OK, "{:?}", elsewhere.body);
    assert_eq!(g.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn dpop_metadata_advertises_algorithms_and_requirement() {
    for required in [false, true] {
        let f = fixture(DpopConfig::builder().required(required).build().unwrap());
        let request = Request::get("/.well-known/oauth-protected-resource/mcp")
            .body(axum::body::Body::empty())
            .unwrap();
        let answer = send(&f, request).await;
        assert_eq!(answer.status, StatusCode::OK);
        let algs: Vec<&str> = ALGS.split(' ').collect();
        assert_eq!(
            answer.body["dpop_signing_alg_values_supported"],
            json!(algs)
        );
        if required {
            assert_eq!(answer.body["dpop_bound_access_tokens_required"], true);
        } else {
            assert!(
                answer
                    .body
                    .get("dpop_bound_access_tokens_required")
                    .is_none()
            );
        }
    }
}

#[tokio::test]
async fn dpop_missing_scope_gets_a_dpop_insufficient_scope_challenge() {
    let f = default_fixture();
    let mut claims = claims("alice", ISSUER, RESOURCE, "other");
    claims["cnf"] = json!({ "jkt": thumbprint(&f.client) });
    let token = f.issuer.sign(&claims);
    let answer = send(&f, call(&format!("DPoP {token}"), &[&f.good_proof(&token)])).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN, "{:?}", answer.body);
    assert_eq!(
        answer.challenges,
        [format!(
            r#"DPoP error="insufficient_scope", scope="mcp", resource_metadata="{METADATA}", error_description="the access token lacks a scope this request needs""#
        )]
    );
    assert_eq!(f.runs.load(Ordering::SeqCst), 0, "a handler ran");
}

#[tokio::test]
async fn dpop_nonce_of_the_previous_window_is_accepted_and_renewed() {
    let window = 2;
    let f = fixture(
        DpopConfig::builder()
            .require_nonce(NONCE_KEY.to_vec())
            .nonce_window(std::time::Duration::from_secs(window))
            .build()
            .unwrap(),
    );
    let token = f.bound_token();
    let first = send(&f, call(&format!("DPoP {token}"), &[&f.good_proof(&token)])).await;
    assert_eq!(first.status, StatusCode::UNAUTHORIZED);
    let nonce = first.nonce.expect("a DPoP-Nonce header");
    // Into the next window (a tenth of a second past its start).
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let into = since.as_millis() % u128::from(window * 1000);
    let wait = u64::try_from(u128::from(window * 1000) - into + 100).unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
    let mut claims = f.proof_claims(&token);
    claims["nonce"] = json!(nonce);
    let answer = send(
        &f,
        call(
            &format!("DPoP {token}"),
            &[&proof(&f.client, "dpop+jwt", &claims)],
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    let renewed = answer.nonce.expect("a new DPoP-Nonce on success");
    assert_ne!(renewed, nonce);
    // The renewed nonce is of the current window: accepted, and not renewed again.
    let mut claims = f.proof_claims(&token);
    claims["nonce"] = json!(renewed);
    let again = send(
        &f,
        call(
            &format!("DPoP {token}"),
            &[&proof(&f.client, "dpop+jwt", &claims)],
        ),
    )
    .await;
    assert_eq!(again.status, StatusCode::OK, "{:?}", again.body);
    assert_eq!(again.nonce, None);
}
