//! The OAuth client against an in-process authorization server and MCP endpoint (axum):
//! refresh before expiry, refresh on a 401, step-up bounded by what it can change, a server
//! without PKCE S256 refused before any authorization request, a static bearer, and a login
//! in progress that stalls no request with a valid token while concurrent `401`s share it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use smcp_client::auth::{
    AuthError, AuthorizationResponse, Authorizer, HeadlessAuthorizer, OAuthConfig,
};
use smcp_client::{BoxFuture, Client};

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
    /// MCP requests answered 401 for carrying no token.
    rejected: AtomicUsize,
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
        f.rejected.fetch_add(1, Ordering::SeqCst);
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

/// An authorizer whose login lasts until the test releases it: one permit of `release` per
/// login (a user taking their time in the browser).
#[derive(Debug)]
struct SlowAuthorizer {
    inner: HeadlessAuthorizer,
    logins: Arc<AtomicUsize>,
    release: Arc<tokio::sync::Semaphore>,
}

impl Authorizer for SlowAuthorizer {
    fn redirect_uri(&self) -> String {
        self.inner.redirect_uri()
    }

    fn authorize<'a>(
        &'a self,
        authorization_url: &'a str,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, AuthError>> {
        Box::pin(async move {
            self.logins.fetch_add(1, Ordering::SeqCst);
            self.release
                .acquire()
                .await
                .map_err(|e| AuthError::Authorizer(e.to_string()))?
                .forget();
            self.inner.authorize(authorization_url).await
        })
    }
}

/// A client whose logins wait for `release`. `pinned` skips the era probe, which holds back
/// every other request until the first one has an answer.
fn slow_client(url: &str, pinned: bool) -> (Client, Arc<AtomicUsize>, Arc<tokio::sync::Semaphore>) {
    let logins = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let authorizer = SlowAuthorizer {
        inner: HeadlessAuthorizer::new("http://127.0.0.1:9/cb").unwrap(),
        logins: logins.clone(),
        release: release.clone(),
    };
    let oauth = OAuthConfig::builder().authorizer(authorizer).build();
    let mut builder = Client::builder(url).oauth(oauth);
    if pinned {
        builder = builder.protocol_version("2026-07-28");
    }
    (builder.build().unwrap(), logins, release)
}

/// Waits (up to 10 s) until `done` holds.
async fn until(what: &str, done: impl Fn() -> bool) {
    let wait = async {
        while !done() {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), wait)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting until {what}"));
}

#[tokio::test]
async fn a_login_in_progress_does_not_stall_a_request_with_a_valid_token() {
    let fake = Arc::new(Fake::default());
    fake.pkce.store(true, Ordering::SeqCst);
    fake.forbid_calls.store(true, Ordering::SeqCst);
    let url = serve(fake.clone()).await;
    let (c, logins, release) = slow_client(&url, false);
    release.add_permits(1);
    c.list_tools().await.unwrap();
    assert_eq!(logins.load(Ordering::SeqCst), 1);
    let valid = fake.bearers.lock().unwrap().last().cloned().unwrap();

    // tools/call needs scope `admin`: its step-up login waits for the user.
    let call = tokio::spawn({
        let c = c.clone();
        async move { c.call_tool("echo", json!({})).await }
    });
    until("the step-up login started", || {
        logins.load(Ordering::SeqCst) == 2
    })
    .await;

    // Meanwhile a request that needs no login goes through with the token in hand.
    let listed = tokio::time::timeout(std::time::Duration::from_secs(5), c.list_tools())
        .await
        .expect("tools/list waited for the login in progress");
    assert_eq!(listed.unwrap().len(), 1);
    assert_eq!(
        fake.bearers.lock().unwrap().last(),
        Some(&valid),
        "sent with the valid token"
    );
    assert!(!call.is_finished(), "the login is still in progress");

    release.add_permits(1);
    let e = call.await.unwrap().unwrap_err();
    assert_eq!(e.status(), Some(403), "{e}");
    assert_eq!(logins.load(Ordering::SeqCst), 2);
    assert_eq!(*fake.scopes.lock().unwrap(), ["read", "admin read"]);
}

#[tokio::test]
async fn concurrent_401s_run_one_grant() {
    let fake = Arc::new(Fake::default());
    fake.pkce.store(true, Ordering::SeqCst);
    let url = serve(fake.clone()).await;
    let (c, logins, release) = slow_client(&url, true);
    let calls: Vec<_> = (0..2)
        .map(|_| {
            let c = c.clone();
            tokio::spawn(async move { c.list_tools().await })
        })
        .collect();
    // Both requests were refused before the (held) login could finish.
    until("one login started", || logins.load(Ordering::SeqCst) == 1).await;
    until("both requests were refused", || {
        fake.rejected.load(Ordering::SeqCst) == 2
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    // Enough permits for a second login, so one would show in the counts rather than hang.
    release.add_permits(2);
    for call in calls {
        call.await.unwrap().unwrap();
    }
    assert_eq!(logins.load(Ordering::SeqCst), 1, "one grant for both 401s");
    assert_eq!(fake.authorizations.load(Ordering::SeqCst), 1);
    assert_eq!(
        fake.refreshes.load(Ordering::SeqCst),
        1,
        "the grant's expired token was refreshed once, not once per request"
    );
    assert_eq!(fake.rejected.load(Ordering::SeqCst), 2);
}
