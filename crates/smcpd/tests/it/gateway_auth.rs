//! `smcpd gateway` behind `--auth-issuer`, with scopes per upstream and per tool from the
//! configuration: a token without them gets `403` naming every needed scope for each kind
//! of request (call, prompt, read, completion) and the upstream never sees it; the scopes
//! are listed in the resource metadata; a file that declares scopes refuses to start
//! without authorization.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::auth::{authorization_server, key, token};
use crate::gateway::run_to_end;
use crate::gateway_support::{config, rpc_answer as answer};
use crate::support::{Smcpd, mcp, post_rpc};

const SCOPED: &str = r#"
[[upstream]]
name = "guarded"
command = ["{smcpd}", "--stdio", "--log", "warn"]
scopes = ["demo"]
tool_scopes = { echo = ["demo:echo"] }

[[upstream]]
name = "open"
command = ["{smcpd}", "--stdio", "--log", "warn"]
resources.deny = ["smcp://readme", "smcp://clock"]
"#;

// Multi-threaded: the test authorization server answers while smcpd starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_and_tool_scopes_are_checked_at_the_edge() {
    let key = key();
    let issuer = authorization_server(key.jwk.clone()).await;
    let (_dir, path) = config(SCOPED);
    let gateway = Smcpd::start_gateway(
        &path,
        &["--auth-issuer", &issuer, "--auth-scope", "mcp"],
        "smcpd=info",
    );
    let url = format!("http://{}/mcp", gateway.addr);
    let http = reqwest::Client::new();
    let send = |bearer: String, method: &'static str, params: Value| {
        let body = mcp(json!(1), method, params);
        let request = post_rpc(&http, &url, &body).bearer_auth(bearer);
        async move { answer(request.send().await.unwrap()).await }
    };
    let bearer = |scope: &str| token(&key, &issuer, &url, scope);

    let echo = json!({"name": "guarded_echo", "arguments": {"text": "hi"}});
    let requests = [
        ("tools/call", echo.clone(), "mcp demo demo:echo"),
        (
            "prompts/get",
            json!({"name": "guarded_greet", "arguments": {"name": "Ada"}}),
            "mcp demo",
        ),
        (
            "resources/read",
            json!({"uri": "smcp://readme"}),
            "mcp demo",
        ),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "guarded_greet"},
                   "argument": {"name": "name", "value": "A"}}),
            "mcp demo",
        ),
    ];
    for (method, params, needed) in &requests {
        let (status, body) = send(bearer("mcp"), method, params.clone()).await;
        assert_eq!(status, 403, "{method}: {body}");
        assert_eq!(body["error"]["data"]["scope"], *needed, "{method}: {body}");
    }
    // The upstream-wide scope alone opens all but the tool that needs one more.
    for (method, params, _) in &requests[1..] {
        let (status, body) = send(bearer("mcp demo"), method, params.clone()).await;
        assert_eq!(status, 200, "{method}: {body}");
        assert!(body.get("result").is_some(), "{method}: {body}");
    }
    let (status, body) = send(bearer("mcp demo"), "tools/call", echo.clone()).await;
    assert_eq!(
        (status, &body["error"]["data"]["scope"]),
        (403, &json!("mcp demo demo:echo"))
    );
    let (status, body) = send(bearer("mcp demo demo:echo"), "tools/call", echo).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "hi");

    // The other upstream needs only the server's scope.
    let open = json!({"name": "open_echo", "arguments": {"text": "open"}});
    let (status, body) = send(bearer("mcp"), "tools/call", open).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["content"][0]["text"], "open");

    let metadata: Value = reqwest::get(format!(
        "http://{}/.well-known/oauth-protected-resource/mcp",
        gateway.addr
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(
        metadata["scopes_supported"],
        json!(["mcp", "demo", "demo:echo"])
    );
}

#[test]
fn declared_scopes_without_authorization_refuse_to_start() {
    let (_dir, path) = config(SCOPED);
    let (status, stderr) = run_to_end(&path);
    assert!(!status.success());
    assert!(
        stderr.contains(
            "`scopes`, `tool_scopes` and `token_exchange` need the gateway served over HTTP with --auth-issuer"
        ),
        "{stderr}"
    );
}
