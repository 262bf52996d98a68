//! RFC 8693 token exchange for an upstream (`token_exchange`): the gateway, behind an
//! authorization layer that keeps the client's token, exchanges it at the token endpoint for
//! one of the upstream's audience, which goes up instead; the client's token never reaches
//! the upstream; an exchanged token is reused until shortly before it expires; a refusal at
//! the token endpoint fails the call, naming the OAuth error and nothing that was sent.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::http::HeaderMap;
use base64::Engine as _;
use serde_json::{Value, json};
use smcp_server::auth::{
    AuthLayer, ProtectedResourceMetadata, TokenError, TokenVerifier, VerifiedToken, VerifyFuture,
};
use smcp_server::proto::server::prompts::GetPromptResult;
use smcp_server::proto::server::tools::CallToolResult;
use smcp_server::{Completion, HandlerError, Server, prompt, tool};

use crate::common::{self, Served};

/// The environment variable holding the gateway's client secret: one cargo sets for every
/// test run (a test may not set variables).
const SECRET_ENV: &str = "CARGO_PKG_NAME";

/// Accepts the tokens that start with `client-`; the rest is the subject.
struct Clients;

impl TokenVerifier for Clients {
    fn verify<'a>(&'a self, token: &'a str) -> VerifyFuture<'a> {
        Box::pin(async move {
            let subject = token
                .strip_prefix("client-")
                .ok_or_else(|| TokenError::Malformed("not a client token".to_owned()))?;
            Ok(VerifiedToken {
                subject: subject.to_owned(),
                issuer: "https://as.test".to_owned(),
                scopes: Vec::new(),
                audience: Vec::new(),
                client_id: None,
                expires_at: Some(SystemTime::now() + Duration::from_secs(600)),
                jkt: None,
            })
        })
    }
}

/// The fields of one form, in order.
type Form = Vec<(String, String)>;

/// What a fake server saw: each request's `Authorization`, and the form of each exchange.
#[derive(Clone, Default)]
struct Seen {
    authorizations: Arc<Mutex<Vec<String>>>,
    exchanges: Arc<Mutex<Vec<Form>>>,
    calls: Arc<AtomicUsize>,
}

/// Every `Authorization` value, joined: two would show as `a, b`.
fn authorization(headers: &HeaderMap) -> String {
    headers
        .get_all("authorization")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A token endpoint exchanging `client-X` for `upstream-X`, refusing `client-mallory`.
async fn token_endpoint(seen: Seen) -> Served {
    let app = axum::Router::new().route(
        "/token",
        axum::routing::post(
            move |headers: HeaderMap, axum::Form(form): axum::Form<Form>| {
                let seen = seen.clone();
                async move {
                    seen.calls.fetch_add(1, Ordering::SeqCst);
                    seen.authorizations
                        .lock()
                        .unwrap()
                        .push(authorization(&headers));
                    seen.exchanges.lock().unwrap().push(form.clone());
                    let get = |k: &str| {
                        form.iter()
                            .find(|(key, _)| key == k)
                            .map(|(_, v)| v.clone())
                            .unwrap_or_default()
                    };
                    let subject = get("subject_token");
                    if subject == "client-mallory" {
                        return (
                            axum::http::StatusCode::BAD_REQUEST,
                            axum::Json(json!({"error": "invalid_grant",
                                "error_description": format!("no exchange for {subject}")})),
                        );
                    }
                    (
                        axum::http::StatusCode::OK,
                        axum::Json(json!({
                            "access_token": subject.replace("client-", "upstream-"),
                            "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
                            "token_type": "Bearer",
                            "expires_in": 300
                        })),
                    )
                }
            },
        ),
    );
    common::serve(app).await
}

/// An upstream recording the `Authorization` of every request it gets.
async fn upstream(seen: Seen) -> Served {
    let server =
        Server::builder("upstream", "1")
            .tool(tool("echo").handler(|_call| async move {
                Ok::<_, HandlerError>(CallToolResult::text("echoed"))
            }))
            .prompt(
                prompt("greet")
                    .argument("name", "whom to greet", true)
                    .handler(|_get| async move { Ok(GetPromptResult::new(Vec::new())) }),
            )
            .completion(|request: smcp_server::CompletionRequest| async move {
                Ok(Completion::values(vec![format!("{}-done", request.value)]))
            })
            .build()
            .unwrap();
    let app = server.router("/mcp").layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            let seen = seen.clone();
            async move {
                seen.authorizations
                    .lock()
                    .unwrap()
                    .push(authorization(request.headers()));
                next.run(request).await
            }
        },
    ));
    common::serve(app).await
}

async fn call(svc: &axum::Router, bearer: &str) -> Value {
    let params = json!({"name": "up_echo", "arguments": {}});
    send(svc, bearer, "tools/call", params, Some("up_echo")).await
}

/// A `completion/complete` of the served prompt's argument.
async fn complete(svc: &axum::Router, bearer: &str) -> Value {
    let params = json!({"ref": {"type": "ref/prompt", "name": "up_greet"},
                        "argument": {"name": "name", "value": "car"}});
    send(svc, bearer, "completion/complete", params, None).await
}

async fn send(
    svc: &axum::Router,
    bearer: &str,
    method: &str,
    mut params: Value,
    name: Option<&str>,
) -> Value {
    use tower::ServiceExt as _;
    params["_meta"] = common::meta(json!({}));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut request = http::Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("authorization", format!("Bearer {bearer}"));
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let request = request
        .body(axum::body::Body::from(body.to_string()))
        .unwrap();
    let response = svc.clone().oneshot(request).await.unwrap();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    serde_json::from_slice(&bytes).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_token_is_exchanged_for_the_upstreams_and_never_sent_up() {
    let (at_endpoint, at_upstream) = (Seen::default(), Seen::default());
    let endpoint = token_endpoint(at_endpoint.clone()).await;
    let upstream = upstream(at_upstream.clone()).await;
    let token_url = endpoint.url.replace("/mcp", "/token");
    let config = smcp_gateway::GatewayConfig::parse(&format!(
        "[[upstream]]\nname = \"up\"\nurl = \"{}\"\nbearer_token_env = \"{SECRET_ENV}\"\n\n\
         [upstream.token_exchange]\n\
         token_endpoint = \"{token_url}\"\nclient_id = \"gateway\"\n\
         client_secret_env = \"{SECRET_ENV}\"\nscope = \"echo\"\n",
        upstream.url
    ))
    .unwrap();
    assert!(config.exchanges_tokens());
    let gateway = smcp_gateway::Gateway::start(config).await.unwrap();
    let front = gateway
        .configure(Server::builder("gw", "1"))
        .build()
        .unwrap();
    gateway.attach(&front);
    let metadata = ProtectedResourceMetadata::new("http://localhost/mcp").unwrap();
    let auth = AuthLayer::builder(Clients, metadata)
        .keep_token(true)
        .build();
    let svc = front.router("/mcp").layer(auth);

    for _ in 0..2 {
        let answer = call(&svc, "client-alice").await;
        assert_eq!(answer["result"]["content"][0]["text"], "echoed", "{answer}");
    }
    let answer = call(&svc, "client-bob").await;
    assert_eq!(answer["result"]["content"][0]["text"], "echoed", "{answer}");

    // One exchange per client token (the second call of alice's reused it), each with the
    // gateway's client credentials and the upstream as audience and resource.
    assert_eq!(at_endpoint.calls.load(Ordering::SeqCst), 2);
    let secret = std::env::var(SECRET_ENV).unwrap();
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("gateway:{secret}"));
    for sent in at_endpoint.authorizations.lock().unwrap().iter() {
        assert_eq!(sent, &format!("Basic {basic}"));
    }
    let exchanges = at_endpoint.exchanges.lock().unwrap().clone();
    let first: std::collections::BTreeMap<_, _> = exchanges[0].iter().cloned().collect();
    assert_eq!(
        first["grant_type"],
        "urn:ietf:params:oauth:grant-type:token-exchange"
    );
    assert_eq!(first["subject_token"], "client-alice");
    assert_eq!(
        first["subject_token_type"],
        "urn:ietf:params:oauth:token-type:access_token"
    );
    assert_eq!(first["audience"], upstream.url);
    assert_eq!(first["resource"], upstream.url);
    assert_eq!(first["scope"], "echo");

    // The upstream got the exchanged tokens on the calls (in place of the gateway's own,
    // which its listing carried), and never a client's.
    let got = at_upstream.authorizations.lock().unwrap().clone();
    assert!(
        got.iter().any(|a| *a == format!("Bearer {secret}")),
        "{got:?}"
    );
    assert!(
        !got.iter().any(|a| a.contains(", ")),
        "one token per request: {got:?}"
    );
    assert!(
        got.iter().filter(|a| *a == "Bearer upstream-alice").count() == 2,
        "{got:?}"
    );
    assert!(got.iter().any(|a| a == "Bearer upstream-bob"), "{got:?}");
    assert!(!got.iter().any(|a| a.contains("client-")), "{got:?}");

    // Completion goes up with the exchanged token too (carol's, exchanged for it).
    let answer = complete(&svc, "client-carol").await;
    assert_eq!(
        answer["result"]["completion"]["values"],
        json!(["car-done"]),
        "{answer}"
    );
    let got = at_upstream.authorizations.lock().unwrap().clone();
    assert_eq!(
        got.last().map(String::as_str),
        Some("Bearer upstream-carol")
    );

    // A refused exchange fails the call with the OAuth error, not what was sent.
    let answer = call(&svc, "client-mallory").await;
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("invalid_grant"), "{answer}");
    assert!(!message.contains("mallory"), "{answer}");
    assert!(
        !at_upstream
            .authorizations
            .lock()
            .unwrap()
            .iter()
            .any(|a| a.contains("mallory"))
    );
}
