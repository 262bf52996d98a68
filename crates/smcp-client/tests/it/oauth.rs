//! The OAuth client against an in-process authorization server and MCP endpoint (axum):
//! refresh before expiry, refresh on a 401, step-up bounded by what it can change, a server
//! without PKCE S256 refused before any authorization request, and a static bearer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use smcp_client::Client;
use smcp_client::auth::{AuthError, HeadlessAuthorizer, OAuthConfig};

#[derive(Default)]
struct Fake {
    base: std::sync::OnceLock<String>,
    pkce: AtomicBool,
    /// Reject the next authorized MCP request once with 401.
    reject_once: AtomicBool,
    /// tools/call answers 403 insufficient_scope for scope `admin`.
    forbid_calls: AtomicBool,
    authorizations: AtomicUsize,
    refreshes: AtomicUsize,
    issued: AtomicUsize,
    bearers: std::sync::Mutex<Vec<String>>,
    scopes: std::sync::Mutex<Vec<String>>,
}

fn params(q: &str) -> Vec<(String, String)> {
    reqwest::Url::parse(&format!("http://x/?{q}"))
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect()
}

fn get(p: &[(String, String)], k: &str) -> Option<String> {
    p.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
}

async fn serve(fake: Arc<Fake>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    fake.base.set(base.clone()).unwrap();
    let f = fake.clone();
    let router = axum::Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            axum::routing::get({
                let b = base.clone();
                move || async move {
                    axum::Json(json!({"resource": format!("{b}/mcp"), "authorization_servers": [b], "scopes_supported": ["read"]}))
                }
            }),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get({
                let f = f.clone();
                move || async move {
                    let b = f.base.get().unwrap();
                    let mut m = json!({
                        "issuer": b,
                        "authorization_endpoint": format!("{b}/authorize"),
                        "token_endpoint": format!("{b}/token"),
                        "registration_endpoint": format!("{b}/register"),
                        "token_endpoint_auth_methods_supported": ["none"],
                    });
                    if f.pkce.load(Ordering::SeqCst) {
                        m["code_challenge_methods_supported"] = json!(["S256"]);
                    }
                    axum::Json(m)
                }
            }),
        )
        .route(
            "/register",
            axum::routing::post(|| async { (StatusCode::CREATED, axum::Json(json!({"client_id": "c"}))) }),
        )
        .route(
            "/authorize",
            axum::routing::get({
                let f = f.clone();
                move |uri: Uri| async move {
                    f.authorizations.fetch_add(1, Ordering::SeqCst);
                    let p = params(uri.query().unwrap_or(""));
                    f.scopes.lock().unwrap().push(get(&p, "scope").unwrap_or_default());
                    let loc = format!(
                        "{}?code=k&state={}",
                        get(&p, "redirect_uri").unwrap(),
                        get(&p, "state").unwrap()
                    );
                    (StatusCode::FOUND, [(header::LOCATION, loc)]).into_response()
                }
            }),
        )
        .route(
            "/token",
            axum::routing::post({
                let f = f;
                move |body: Bytes| async move {
                    let p = params(std::str::from_utf8(&body).unwrap());
                    let b = f.base.get().unwrap();
                    assert_eq!(get(&p, "resource"), Some(format!("{b}/mcp")));
                    let n = f.issued.fetch_add(1, Ordering::SeqCst) + 1;
                    let expires = match get(&p, "grant_type").as_deref() {
                        Some("refresh_token") => {
                            assert_eq!(get(&p, "refresh_token").as_deref(), Some("rt"));
                            f.refreshes.fetch_add(1, Ordering::SeqCst);
                            3600
                        }
                        // The first token of a code grant is already expired.
                        _ => 0,
                    };
                    axum::Json(json!({"access_token": format!("at-{n}"), "token_type": "Bearer", "expires_in": expires, "refresh_token": "rt"}))
                }
            }),
        )
        .route(
            "/mcp",
            axum::routing::post(move |h: HeaderMap, body: Bytes| {
                let f = fake.clone();
                async move { mcp(&f, &h, &body) }
            }),
        );
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("{base}/mcp")
}

fn mcp(f: &Fake, h: &HeaderMap, body: &[u8]) -> Response {
    let b = f.base.get().unwrap();
    let challenge = |extra: &str| {
        format!(r#"Bearer resource_metadata="{b}/.well-known/oauth-protected-resource/mcp"{extra}"#)
    };
    let auth = h
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap().to_owned());
    let Some(token) = auth.as_deref().and_then(|a| a.strip_prefix("Bearer at-")) else {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, challenge(""))],
        )
            .into_response();
    };
    f.bearers.lock().unwrap().push(format!("at-{token}"));
    if f.reject_once.swap(false, Ordering::SeqCst) {
        return (
            StatusCode::UNAUTHORIZED,
            [(
                header::WWW_AUTHENTICATE,
                challenge(r#", error="invalid_token""#),
            )],
        )
            .into_response();
    }
    let req: Value = serde_json::from_slice(body).unwrap();
    if req["method"] == "tools/call" && f.forbid_calls.load(Ordering::SeqCst) {
        return (
            StatusCode::FORBIDDEN,
            [(
                header::WWW_AUTHENTICATE,
                challenge(r#", error="insufficient_scope", scope="admin""#),
            )],
        )
            .into_response();
    }
    let result = if req["method"] == "tools/call" {
        json!({"content": [{"type": "text", "text": "ok"}]})
    } else {
        json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
    };
    axum::Json(json!({"jsonrpc": "2.0", "id": req["id"], "result": result})).into_response()
}

fn client(url: &str) -> Client {
    let oauth = OAuthConfig::builder()
        .authorizer(HeadlessAuthorizer::new("http://127.0.0.1:9/cb").unwrap())
        .build();
    Client::builder(url).oauth(oauth).build().unwrap()
}

#[tokio::test]
async fn expired_token_is_refreshed_and_a_401_refreshes_without_a_new_authorization() {
    let fake = Arc::new(Fake::default());
    fake.pkce.store(true, Ordering::SeqCst);
    let url = serve(fake.clone()).await;
    let c = client(&url);
    c.list_tools().await.unwrap();
    // The code grant's token came back expired, so it was refreshed before the retry.
    assert_eq!(fake.authorizations.load(Ordering::SeqCst), 1);
    assert_eq!(fake.refreshes.load(Ordering::SeqCst), 1);
    assert_eq!(*fake.bearers.lock().unwrap(), ["at-2"]);
    assert_eq!(
        *fake.scopes.lock().unwrap(),
        ["read"],
        "the PRM's scopes_supported"
    );
    // The server rejects the token once: refresh, no new authorization.
    fake.reject_once.store(true, Ordering::SeqCst);
    c.call_tool("echo", json!({})).await.unwrap();
    assert_eq!(fake.authorizations.load(Ordering::SeqCst), 1);
    assert_eq!(fake.refreshes.load(Ordering::SeqCst), 2);
    assert_eq!(
        fake.bearers.lock().unwrap().last().map(String::as_str),
        Some("at-3")
    );
}

#[tokio::test]
async fn step_up_asks_once_for_the_union_then_stops() {
    let fake = Arc::new(Fake::default());
    fake.pkce.store(true, Ordering::SeqCst);
    fake.forbid_calls.store(true, Ordering::SeqCst);
    let url = serve(fake.clone()).await;
    let c = client(&url);
    c.list_tools().await.unwrap();
    let e = c.call_tool("echo", json!({})).await.unwrap_err();
    assert_eq!(e.status(), Some(403), "{e}");
    // One step-up (read + admin); the second 403 for a scope already requested stops it.
    assert_eq!(*fake.scopes.lock().unwrap(), ["read", "admin read"]);
}

#[tokio::test]
async fn a_server_without_pkce_s256_is_refused_before_authorizing() {
    let fake = Arc::new(Fake::default());
    let url = serve(fake.clone()).await;
    let e = client(&url).list_tools().await.unwrap_err();
    assert!(
        matches!(e.auth_error(), Some(AuthError::NoPkce { .. })),
        "{e}"
    );
    assert_eq!(fake.authorizations.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_static_bearer_is_sent_and_hidden_from_debug() {
    let fake = Arc::new(Fake::default());
    let url = serve(fake.clone()).await;
    let c = Client::builder(&url)
        .bearer_token("at-static")
        .build()
        .unwrap();
    assert!(!format!("{c:?}").contains("at-static"));
    c.list_tools().await.unwrap();
    assert_eq!(*fake.bearers.lock().unwrap(), ["at-static"]);
    // Without OAuth a 401 is an HTTP status error, as before.
    let e = Client::builder(&url)
        .build()
        .unwrap()
        .list_tools()
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(401), "{e}");
}
