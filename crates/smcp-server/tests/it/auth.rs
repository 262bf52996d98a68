//! The endpoint behind `AuthLayer` (feature `auth`): every bad-token case answers `401` with
//! the exact challenge and runs no handler; missing scopes answer `403` for step-up; a valid
//! token reaches the handler as its principal. Tokens are JWTs signed with keys generated per
//! run; the authorization server (metadata and a rotating JWKS) runs on 127.0.0.1:0.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::auth_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use auth_support::{SigningKey, TestAs, claims, now, unsigned};
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use smcp_server::auth::{AuthLayer, JwtVerifier, ProtectedResourceMetadata, ScopePolicy};
use smcp_server::prelude::*;
use tower::ServiceExt as _;

const RESOURCE: &str = "https://mcp.example/mcp";
const METADATA: &str = "https://mcp.example/.well-known/oauth-protected-resource/mcp";

struct Fixture {
    app: axum::Router,
    runs: Arc<AtomicUsize>,
    as_: TestAs,
    key: SigningKey,
}

fn server(runs: &Arc<AtomicUsize>) -> Server {
    let (r1, r2) = (runs.clone(), runs.clone());
    Server::builder("auth-test", "1.0.0")
        .tool(tool("whoami").handler(move |call| {
            r1.fetch_add(1, Ordering::SeqCst);
            async move {
                let who = call
                    .ctx
                    .principal()
                    .map(|p| p.0.clone())
                    .unwrap_or_default();
                Ok(CallToolResult::text(who))
            }
        }))
        .tool(tool("wipe").handler(move |_call| {
            r2.fetch_add(1, Ordering::SeqCst);
            async move { Ok(CallToolResult::text("wiped")) }
        }))
        .build()
        .unwrap()
}

async fn fixture_with(policy: ScopePolicy, min_refetch: Duration) -> Fixture {
    let key = SigningKey::generate("k1");
    let as_ = TestAs::start(&[&key]).await;
    let runs = Arc::new(AtomicUsize::new(0));
    let verifier = JwtVerifier::builder(&as_.issuer)
        .audience(RESOURCE)
        .leeway(5)
        .min_refetch_interval(min_refetch)
        .build()
        .unwrap();
    let metadata = ProtectedResourceMetadata::new(RESOURCE)
        .unwrap()
        .authorization_server(&as_.issuer)
        .scopes_supported(["mcp", "admin"]);
    let auth = AuthLayer::builder(verifier, metadata)
        .scopes(policy)
        .build();
    let app = server(&runs).router("/mcp").layer(auth);
    Fixture {
        app,
        runs,
        as_,
        key,
    }
}

async fn fixture() -> Fixture {
    fixture_with(
        ScopePolicy::builder()
            .require("mcp")
            .tool("wipe", "admin")
            .build(),
        Duration::from_secs(30),
    )
    .await
}

fn rpc(method: &str, name: Option<&str>, authorization: Option<&str>) -> Request<axum::body::Body> {
    let mut params = json!({"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    }});
    if let Some(name) = name {
        params["name"] = json!(name);
        params["arguments"] = json!({});
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut request = Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    if let Some(a) = authorization {
        request = request.header("authorization", a);
    }
    request
        .body(axum::body::Body::from(body.to_string()))
        .unwrap()
}

pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) challenge: Option<String>,
    pub(crate) body: Value,
}

pub(crate) async fn send(app: &axum::Router, request: Request<axum::body::Body>) -> Answer {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Answer {
        status,
        challenge,
        body,
    }
}

async fn call_whoami(f: &Fixture, authorization: Option<&str>) -> Answer {
    send(&f.app, rpc("tools/call", Some("whoami"), authorization)).await
}

fn invalid(description: &str) -> String {
    format!(
        r#"Bearer error="invalid_token", error_description="{description}", resource_metadata="{METADATA}", scope="mcp""#
    )
}

/// A refused request: `401`, exactly `challenge`, a JSON-RPC error body, no handler run.
async fn assert_401(f: &Fixture, authorization: Option<&str>, challenge: &str) {
    let answer = call_whoami(f, authorization).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{:?}", answer.body);
    assert_eq!(answer.challenge.as_deref(), Some(challenge));
    assert_eq!(answer.body["jsonrpc"], "2.0");
    assert_eq!(answer.body["id"], Value::Null);
    assert_eq!(
        answer.body["error"]["code"],
        smcp_server::auth::UNAUTHORIZED
    );
    assert_eq!(f.runs.load(Ordering::SeqCst), 0, "a handler ran");
}

#[tokio::test]
async fn no_token_gets_the_plain_challenge() {
    let f = fixture().await;
    let plain = format!(r#"Bearer resource_metadata="{METADATA}", scope="mcp""#);
    assert_401(&f, None, &plain).await;
    assert_401(&f, Some("Basic YWxpY2U6c2VjcmV0"), &plain).await;
    assert_401(&f, Some("Bearer"), &plain).await;
}

#[tokio::test]
async fn malformed_tokens_are_invalid() {
    let f = fixture().await;
    assert_401(
        &f,
        Some("Bearer abc.def"),
        &invalid("malformed access token: a JWT has three dot-separated parts"),
    )
    .await;
    assert_401(
        &f,
        Some("Bearer a.b.c"),
        &invalid("malformed access token: the JOSE header is not valid"),
    )
    .await;
    assert_401(
        &f,
        Some("Bearer not\"a token"),
        &invalid("malformed access token: the bearer token has characters a token cannot have"),
    )
    .await;
}

#[tokio::test]
async fn expired_and_not_yet_valid_tokens_are_refused() {
    let f = fixture().await;
    let mut expired = claims("alice", &f.as_.issuer, RESOURCE, "mcp");
    expired["exp"] = json!(now() - 60);
    let token = f.key.sign(&expired);
    assert_401(
        &f,
        Some(&format!("Bearer {token}")),
        &invalid("the access token has expired"),
    )
    .await;

    let mut early = claims("alice", &f.as_.issuer, RESOURCE, "mcp");
    early["nbf"] = json!(now() + 600);
    let token = f.key.sign(&early);
    assert_401(
        &f,
        Some(&format!("Bearer {token}")),
        &invalid("the access token is not valid yet (nbf)"),
    )
    .await;
}

#[tokio::test]
async fn a_token_for_another_resource_or_issuer_is_refused() {
    let f = fixture().await;
    let token = f.key.sign(&claims(
        "alice",
        &f.as_.issuer,
        "https://other.example/mcp",
        "mcp",
    ));
    assert_401(
        &f,
        Some(&format!("Bearer {token}")),
        &invalid("the access token was not issued for this resource (aud)"),
    )
    .await;
    let token = f
        .key
        .sign(&claims("alice", "https://evil.example", RESOURCE, "mcp"));
    assert_401(
        &f,
        Some(&format!("Bearer {token}")),
        &invalid("the access token was not issued by the expected authorization server (iss)"),
    )
    .await;
}

#[tokio::test]
async fn bad_signatures_and_alg_none_are_refused() {
    let f = fixture().await;
    // Another key under the same kid.
    let forger = SigningKey::generate("k1");
    let token = forger.sign(&claims("alice", &f.as_.issuer, RESOURCE, "mcp"));
    assert_401(
        &f,
        Some(&format!("Bearer {token}")),
        &invalid("the access token's signature does not verify"),
    )
    .await;
    let token = unsigned(&claims("alice", &f.as_.issuer, RESOURCE, "mcp"));
    assert_401(
        &f,
        Some(&format!("Bearer {token}")),
        &invalid(r#"the access token's algorithm is not accepted: \"none\" is never accepted"#),
    )
    .await;
}

#[tokio::test]
async fn an_unknown_kid_refetches_the_jwks_and_a_rotated_key_validates() {
    let f = fixture_with(
        ScopePolicy::builder().require("mcp").build(),
        Duration::ZERO,
    )
    .await;
    let rotated = SigningKey::generate("k2");
    let token = rotated.sign(&claims("alice", &f.as_.issuer, RESOURCE, "mcp"));
    let bearer = format!("Bearer {token}");
    assert_401(
        &f,
        Some(&bearer),
        &invalid("the access token was signed with an unknown key (kid)"),
    )
    .await;
    let fetched = f.as_.fetches();
    assert!(
        fetched >= 2,
        "the unknown kid refetched the JWKS ({fetched} fetches)"
    );

    f.as_.rotate(&[&rotated]);
    let answer = call_whoami(&f, Some(&bearer)).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(answer.body["result"]["content"][0]["text"], "alice");
    assert_eq!(f.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn unknown_kids_refetch_at_most_once_per_interval() {
    let f = fixture().await;
    let good = f.key.sign(&claims("alice", &f.as_.issuer, RESOURCE, "mcp"));
    assert_eq!(
        call_whoami(&f, Some(&format!("Bearer {good}")))
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(f.as_.fetches(), 1);
    let stranger = SigningKey::generate("k9");
    for i in 0..5 {
        let token = stranger.sign(&claims(&format!("u{i}"), &f.as_.issuer, RESOURCE, "mcp"));
        let answer = call_whoami(&f, Some(&format!("Bearer {token}"))).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(
        f.as_.fetches(),
        1,
        "unknown kids within the interval fetched the JWKS again"
    );
}

#[tokio::test]
async fn a_valid_token_reaches_the_handler_as_its_principal() {
    let f = fixture().await;
    let token = f.key.sign(&claims("alice", &f.as_.issuer, RESOURCE, "mcp"));
    let bearer = format!("Bearer {token}");
    for expected_runs in 1..=3 {
        let answer = call_whoami(&f, Some(&bearer)).await;
        assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
        assert_eq!(answer.challenge, None);
        assert_eq!(answer.body["result"]["content"][0]["text"], "alice");
        assert_eq!(f.runs.load(Ordering::SeqCst), expected_runs);
    }
    // Validated once, then served from the cache: one JWKS fetch in all.
    assert_eq!(f.as_.fetches(), 1);
}

#[tokio::test]
async fn a_missing_scope_gets_403_for_step_up() {
    let f = fixture().await;
    // The tool's scope: refused in dispatch, before the handler.
    let token = f.key.sign(&claims("alice", &f.as_.issuer, RESOURCE, "mcp"));
    let answer = send(
        &f.app,
        rpc("tools/call", Some("wipe"), Some(&format!("Bearer {token}"))),
    )
    .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN, "{:?}", answer.body);
    assert_eq!(
        answer.challenge.as_deref(),
        Some(
            format!(
                r#"Bearer error="insufficient_scope", scope="mcp admin", resource_metadata="{METADATA}", error_description="the access token lacks a scope this request needs""#
            )
            .as_str()
        )
    );
    assert_eq!(
        answer.body["error"]["code"],
        smcp_server::auth::INSUFFICIENT_SCOPE
    );
    assert_eq!(answer.body["error"]["data"]["scope"], "mcp admin");
    assert_eq!(answer.body["id"], 1);
    assert_eq!(f.runs.load(Ordering::SeqCst), 0, "a handler ran");

    // The server-wide scope: refused by the layer.
    let token = f
        .key
        .sign(&claims("bob", &f.as_.issuer, RESOURCE, "profile"));
    let answer = call_whoami(&f, Some(&format!("Bearer {token}"))).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert_eq!(
        answer.challenge.as_deref(),
        Some(
            format!(
                r#"Bearer error="insufficient_scope", scope="mcp", resource_metadata="{METADATA}", error_description="the access token lacks a scope this request needs""#
            )
            .as_str()
        )
    );
    assert_eq!(f.runs.load(Ordering::SeqCst), 0, "a handler ran");

    // Stepped up: the same call goes through.
    let token = f
        .key
        .sign(&claims("alice", &f.as_.issuer, RESOURCE, "mcp admin"));
    let answer = send(
        &f.app,
        rpc("tools/call", Some("wipe"), Some(&format!("Bearer {token}"))),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(f.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn method_scopes_and_hidden_tools() {
    let f = fixture_with(
        ScopePolicy::builder()
            .method("tools/list", "catalog")
            .tool("wipe", "admin")
            .hide_tools(true)
            .build(),
        Duration::from_secs(30),
    )
    .await;
    let names = |answer: &Answer| -> Vec<String> {
        answer.body["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let plain = f.key.sign(&claims("alice", &f.as_.issuer, RESOURCE, "mcp"));
    let answer = send(
        &f.app,
        rpc("tools/list", None, Some(&format!("Bearer {plain}"))),
    )
    .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert_eq!(answer.body["error"]["data"]["scope"], "catalog");

    let user = f
        .key
        .sign(&claims("alice", &f.as_.issuer, RESOURCE, "catalog"));
    let answer = send(
        &f.app,
        rpc("tools/list", None, Some(&format!("Bearer {user}"))),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(names(&answer), ["whoami"]);

    let admin = f
        .key
        .sign(&claims("root", &f.as_.issuer, RESOURCE, "catalog admin"));
    let answer = send(
        &f.app,
        rpc("tools/list", None, Some(&format!("Bearer {admin}"))),
    )
    .await;
    assert_eq!(names(&answer), ["whoami", "wipe"]);
}

#[tokio::test]
async fn the_resource_metadata_is_served_without_a_token() {
    let f = fixture().await;
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let request = Request::get(path)
            .header("host", "localhost")
            .body(axum::body::Body::empty())
            .unwrap();
        let app = f.app.clone();
        let answer = send(&app, request).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        assert_eq!(
            answer.body,
            json!({
                "resource": RESOURCE,
                "authorization_servers": [f.as_.issuer],
                "scopes_supported": ["mcp", "admin"],
                "bearer_methods_supported": ["header"],
            }),
            "{path}"
        );
    }
}

#[tokio::test]
async fn static_keys_verify_without_fetching() {
    let key = SigningKey::generate("static");
    let verifier = JwtVerifier::from_jwks("https://as.example", auth_support::jwks(&[&key]))
        .audience(RESOURCE)
        .build()
        .unwrap();
    let token = key.sign(&claims("carol", "https://as.example", RESOURCE, "a b"));
    let verified = smcp_server::auth::TokenVerifier::verify(&verifier, &token)
        .await
        .unwrap();
    assert_eq!(verified.subject, "carol");
    assert_eq!(verified.scopes, ["a", "b"]);
    assert_eq!(verified.audience, [RESOURCE]);
    let other = SigningKey::generate("other");
    let token = other.sign(&claims("carol", "https://as.example", RESOURCE, "a"));
    assert_eq!(
        smcp_server::auth::TokenVerifier::verify(&verifier, &token).await,
        Err(smcp_server::auth::TokenError::UnknownKey)
    );
}

#[test]
fn discovery_needs_https_except_on_loopback() {
    let refused = JwtVerifier::builder("http://as.example")
        .audience(RESOURCE)
        .build()
        .unwrap_err();
    assert!(refused.0.contains("must use https"), "{refused}");
    let refused = JwtVerifier::builder("https://as.example")
        .build()
        .unwrap_err();
    assert!(refused.0.contains("audience"), "{refused}");
}

#[tokio::test]
async fn request_state_is_bound_to_the_token_subject() {
    let key = SigningKey::generate("k1");
    let verifier = JwtVerifier::from_jwks("https://as.example", auth_support::jwks(&[&key]))
        .audience(RESOURCE)
        .build()
        .unwrap();
    let auth =
        AuthLayer::builder(verifier, ProtectedResourceMetadata::new(RESOURCE).unwrap()).build();
    let confirmed = Arc::new(AtomicUsize::new(0));
    let counter = confirmed.clone();
    let app = Server::builder("mrtr-auth", "1.0.0")
        .tool(tool("confirm").handler(move |call| {
            let counter = counter.clone();
            async move {
                call.input.ask(mrtr::elicit_form(
                    "ok",
                    "Sure?",
                    json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                ))?;
                counter.fetch_add(1, Ordering::SeqCst);
                Ok::<_, HandlerError>(CallToolResult::text("confirmed"))
            }
        }))
        .build()
        .unwrap()
        .router("/mcp")
        .layer(auth);
    let alice = format!(
        "Bearer {}",
        key.sign(&claims("alice", "https://as.example", RESOURCE, ""))
    );
    let bob = format!(
        "Bearer {}",
        key.sign(&claims("bob", "https://as.example", RESOURCE, ""))
    );
    let with_elicitation = |mut request: Request<axum::body::Body>, extra: Value| {
        let (parts, _) = request.into_parts();
        let mut body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "confirm", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
        }}});
        for (k, v) in extra.as_object().unwrap() {
            body["params"][k] = v.clone();
        }
        request = Request::from_parts(parts, axum::body::Body::from(body.to_string()));
        request
    };
    let first = send(
        &app,
        with_elicitation(rpc("tools/call", Some("confirm"), Some(&alice)), json!({})),
    )
    .await;
    assert_eq!(
        first.body["result"]["resultType"], "input_required",
        "{:?}",
        first.body
    );
    let retry = json!({
        "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}},
        "requestState": first.body["result"]["requestState"],
    });
    let stolen = send(
        &app,
        with_elicitation(
            rpc("tools/call", Some("confirm"), Some(&bob)),
            retry.clone(),
        ),
    )
    .await;
    assert_eq!(stolen.body["error"]["code"], -32602, "{:?}", stolen.body);
    assert_eq!(stolen.body["error"]["data"]["reason"], "wrongPrincipal");
    assert_eq!(
        confirmed.load(Ordering::SeqCst),
        0,
        "the handler finished for the wrong principal"
    );
    let own = send(
        &app,
        with_elicitation(rpc("tools/call", Some("confirm"), Some(&alice)), retry),
    )
    .await;
    assert_eq!(
        own.body["result"]["content"][0]["text"], "confirmed",
        "{:?}",
        own.body
    );
    assert_eq!(confirmed.load(Ordering::SeqCst), 1);
}

fn legacy(body: &Value, bearer: &str, session: Option<&str>) -> Request<axum::body::Body> {
    let mut request = Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", bearer);
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25");
    }
    request
        .body(axum::body::Body::from(body.to_string()))
        .unwrap()
}

#[tokio::test]
async fn a_legacy_session_is_bound_to_the_token_that_opened_it() {
    let f = fixture().await;
    let alice = format!(
        "Bearer {}",
        f.key.sign(&claims("alice", &f.as_.issuer, RESOURCE, "mcp"))
    );
    let bob = format!(
        "Bearer {}",
        f.key.sign(&claims("bob", &f.as_.issuer, RESOURCE, "mcp"))
    );
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}}});
    // No token: refused before the session layer.
    let mut anonymous = legacy(&initialize, "x", None);
    anonymous.headers_mut().remove("authorization");
    assert_eq!(
        send(&f.app, anonymous).await.status,
        StatusCode::UNAUTHORIZED
    );

    let response = f
        .app
        .clone()
        .oneshot(legacy(&initialize, &alice, None))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let stolen = send(&f.app, legacy(&initialized, &bob, Some(&session))).await;
    assert_eq!(stolen.status, StatusCode::NOT_FOUND);
    let done = send(&f.app, legacy(&initialized, &alice, Some(&session))).await;
    assert_eq!(done.status, StatusCode::ACCEPTED);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "whoami", "arguments": {}}});
    let stolen = send(&f.app, legacy(&call, &bob, Some(&session))).await;
    assert_eq!(stolen.status, StatusCode::NOT_FOUND, "{:?}", stolen.body);
    assert_eq!(
        f.runs.load(Ordering::SeqCst),
        0,
        "a handler ran for another principal"
    );
    let own = send(&f.app, legacy(&call, &alice, Some(&session))).await;
    assert_eq!(own.status, StatusCode::OK, "{:?}", own.body);
    assert_eq!(own.body["result"]["content"][0]["text"], "alice");

    // A tool scope on the session: refused in dispatch, before the handler.
    let wipe = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "wipe", "arguments": {}}});
    let refused = send(&f.app, legacy(&wipe, &alice, Some(&session))).await;
    assert_eq!(
        refused.body["error"]["code"],
        smcp_server::auth::INSUFFICIENT_SCOPE,
        "{:?}",
        refused.body
    );
    assert_eq!(refused.body["error"]["data"]["scope"], "mcp admin");
    assert_eq!(f.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_unreachable_authorization_server_is_503_not_401() {
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let issuer = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let verifier = JwtVerifier::builder(&issuer)
        .audience(RESOURCE)
        .fetch_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let runs = Arc::new(AtomicUsize::new(0));
    let auth =
        AuthLayer::builder(verifier, ProtectedResourceMetadata::new(RESOURCE).unwrap()).build();
    let app = server(&runs).router("/mcp").layer(auth);
    let key = SigningKey::generate("k1");
    let bearer = format!(
        "Bearer {}",
        key.sign(&claims("alice", &issuer, RESOURCE, "mcp"))
    );
    for _ in 0..2 {
        let answer = send(&app, rpc("tools/call", Some("whoami"), Some(&bearer))).await;
        assert_eq!(
            answer.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{:?}",
            answer.body
        );
        assert_eq!(answer.challenge, None);
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn protect_only_leaves_other_paths_open() {
    let key = SigningKey::generate("k1");
    let verifier = JwtVerifier::from_jwks("https://as.example", auth_support::jwks(&[&key]))
        .audience(RESOURCE)
        .build()
        .unwrap();
    let auth = AuthLayer::builder(verifier, ProtectedResourceMetadata::new(RESOURCE).unwrap())
        .protect_only("/mcp")
        .build();
    let runs = Arc::new(AtomicUsize::new(0));
    let endpoint = server(&runs)
        .endpoint("/mcp")
        .fallback(axum::Router::new().route(
            "/download/{token}",
            axum::routing::get(|| async { "bytes" }),
        ));
    let service = tower::Layer::layer(&auth, endpoint);
    let open = Request::get("/download/abc")
        .header("host", "localhost")
        .body(axum::body::Body::empty())
        .unwrap();
    let response = service.clone().oneshot(open).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let refused = service
        .clone()
        .oneshot(rpc("tools/call", Some("whoami"), None))
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let metadata = Request::get("/.well-known/oauth-protected-resource/mcp")
        .header("host", "localhost")
        .body(axum::body::Body::empty())
        .unwrap();
    assert_eq!(
        service.clone().oneshot(metadata).await.unwrap().status(),
        StatusCode::OK
    );
    let token = key.sign(&claims("alice", "https://as.example", RESOURCE, ""));
    let ok = service
        .oneshot(rpc(
            "tools/call",
            Some("whoami"),
            Some(&format!("Bearer {token}")),
        ))
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}
