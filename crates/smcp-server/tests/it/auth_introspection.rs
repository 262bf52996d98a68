//! `IntrospectionVerifier` (RFC 7662) against an introspection endpoint on 127.0.0.1:0 that
//! requires client authentication, directly and behind `AuthLayer`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use http::{Request, StatusCode};
use serde_json::{Value, json};
use smcp_server::auth::{
    AuthLayer, IntrospectionVerifier, ProtectedResourceMetadata, TokenError, TokenVerifier,
};
use smcp_server::prelude::*;
use tower::ServiceExt as _;

const RESOURCE: &str = "https://mcp.example/mcp";
const ISSUER: &str = "https://as.example";

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The endpoint: answers by token; refuses requests without `rs:s3cret` Basic credentials.
/// Records the form bodies it received.
async fn introspection_endpoint() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/introspect", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let app = axum::Router::new().route(
        "/introspect",
        axum::routing::post(move |headers: http::HeaderMap, body: String| {
            let log = log.clone();
            async move {
                let expected = format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode("rs:s3cret")
                );
                if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(&expected) {
                    return (StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "invalid_client"})));
                }
                log.lock().unwrap().push(body.clone());
                let token = body
                    .split('&')
                    .find_map(|p| p.strip_prefix("token="))
                    .unwrap_or_default()
                    .to_owned();
                let answer = match token.as_str() {
                    "good" => json!({"active": true, "sub": "alice", "iss": ISSUER, "aud": [RESOURCE], "scope": "mcp files", "exp": now() + 600, "client_id": "app"}),
                    "elsewhere" => json!({"active": true, "sub": "alice", "iss": ISSUER, "aud": "https://other.example/mcp", "exp": now() + 600}),
                    "foreign-iss" => json!({"active": true, "sub": "alice", "iss": "https://evil.example", "aud": RESOURCE, "exp": now() + 600}),
                    "bound" => json!({"active": true, "sub": "alice", "iss": ISSUER, "aud": RESOURCE, "exp": now() + 600, "cnf": {"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}}),
                    "stale" => json!({"active": true, "sub": "alice", "iss": ISSUER, "aud": RESOURCE, "exp": now() - 600}),
                    _ => json!({"active": false}),
                };
                (StatusCode::OK, axum::Json(answer))
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

fn verifier(url: &str, secret: &str) -> IntrospectionVerifier {
    IntrospectionVerifier::builder(url)
        .issuer(ISSUER)
        .audience(RESOURCE)
        .client("rs", secret)
        .build()
        .unwrap()
}

#[tokio::test]
async fn introspection_accepts_active_tokens_for_this_resource_only() {
    let (url, seen) = introspection_endpoint().await;
    let verifier = verifier(&url, "s3cret");
    let ok = verifier.verify("good").await.unwrap();
    assert_eq!(ok.subject, "alice");
    assert_eq!(ok.scopes, ["mcp", "files"]);
    assert_eq!(ok.client_id.as_deref(), Some("app"));
    assert_eq!(ok.jkt, None);
    let bound = verifier.verify("bound").await.unwrap();
    assert_eq!(
        bound.jkt.as_deref(),
        Some("0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"),
        "cnf.jkt of the introspection answer"
    );
    assert_eq!(
        seen.lock().unwrap()[0],
        "token=good&token_type_hint=access_token"
    );
    assert_eq!(verifier.verify("revoked").await, Err(TokenError::Inactive));
    assert_eq!(
        verifier.verify("elsewhere").await,
        Err(TokenError::WrongAudience)
    );
    assert_eq!(
        verifier.verify("foreign-iss").await,
        Err(TokenError::WrongIssuer)
    );
    assert_eq!(verifier.verify("stale").await, Err(TokenError::Expired));
}

#[tokio::test]
async fn a_refused_client_is_unavailability_and_never_echoes_the_secret() {
    let (url, _) = introspection_endpoint().await;
    let verifier = verifier(&url, "wrong-secret");
    let error = verifier.verify("good").await.unwrap_err();
    assert!(error.is_unavailable(), "{error:?}");
    let text = format!("{error} {error:?} {verifier:?}");
    assert!(!text.contains("wrong-secret"), "{text}");
    assert!(!text.contains("good"), "{text}");
}

#[tokio::test]
async fn opaque_tokens_behind_the_layer() {
    let (url, seen) = introspection_endpoint().await;
    let app = Server::builder("t", "1")
        .tool(tool("whoami").handler(|call| async move {
            Ok(CallToolResult::text(
                call.ctx
                    .principal()
                    .map(|p| p.0.clone())
                    .unwrap_or_default(),
            ))
        }))
        .build()
        .unwrap()
        .router("/mcp")
        .layer(
            AuthLayer::builder(
                verifier(&url, "s3cret"),
                ProtectedResourceMetadata::new(RESOURCE).unwrap(),
            )
            .build(),
        );
    let call = |token: &str| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "whoami", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}}});
        Request::post("/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "whoami")
            .header("authorization", format!("Bearer {token}"))
            .body(axum::body::Body::from(body.to_string()))
            .unwrap()
    };
    for _ in 0..3 {
        let response = app.clone().oneshot(call("good")).await.unwrap();
        assert_eq!(response.status(), 200);
        let bytes = http_body_util::BodyExt::collect(response.into_body())
            .await
            .unwrap()
            .to_bytes();
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(body["result"]["content"][0]["text"], "alice");
    }
    assert_eq!(seen.lock().unwrap().len(), 1, "the answer is cached");
    let response = app.clone().oneshot(call("revoked")).await.unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.headers()["www-authenticate"],
        r#"Bearer error="invalid_token", error_description="the access token is not active", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp""#
    );
}
