//! Scopes a tool, prompt or resource declares itself (`.scope(..)` on its builder), checked
//! behind `AuthLayer` on top of the server's `ScopePolicy`: a token without them gets `403`
//! naming every needed scope and no handler runs; reading, completing and listing follow
//! the same rule; a token holding them is served.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http::{Request, StatusCode};
use serde_json::{Value, json};
use smcp_server::auth::{AuthLayer, JwtVerifier, ProtectedResourceMetadata, ScopePolicy};
use smcp_server::prelude::*;
use smcp_server::proto::server::prompts::{GetPromptResult, PromptMessage};
use smcp_server::{Completion, resource_template};

use crate::auth::{Answer, send};
use crate::auth_support::{SigningKey, TestAs, claims};

const RESOURCE: &str = "https://mcp.example/mcp";

struct Fixture {
    app: axum::Router,
    runs: Arc<AtomicUsize>,
    as_: TestAs,
    key: SigningKey,
}

impl Fixture {
    async fn start() -> Self {
        let key = SigningKey::generate("k1");
        let as_ = TestAs::start(&[&key]).await;
        let runs = Arc::new(AtomicUsize::new(0));
        let (r1, r2, r3, r4) = (runs.clone(), runs.clone(), runs.clone(), runs.clone());
        let server = Server::builder("declared", "1.0.0")
            .tool(tool("echo").handler(|_call| async { Ok(CallToolResult::text("echo")) }))
            .tool(tool("fs_read").scope("fs").handler(move |_call| {
                r1.fetch_add(1, Ordering::SeqCst);
                async { Ok(CallToolResult::text("read")) }
            }))
            .prompt(prompt("fs_summary").scope("fs").handler(move |_get| {
                r2.fetch_add(1, Ordering::SeqCst);
                async { Ok(GetPromptResult::new(vec![PromptMessage::user_text("s")])) }
            }))
            .resource(
                resource("fs:///motd", "motd")
                    .scope("fs")
                    .handler(move |read| {
                        r3.fetch_add(1, Ordering::SeqCst);
                        async move { Ok(vec![TextResourceContents::new(read.uri, "hi").into()]) }
                    }),
            )
            .resource(
                resource_template("fs:///files/{name}", "files")
                    .scope("fs")
                    .handler(move |read| {
                        r4.fetch_add(1, Ordering::SeqCst);
                        async move { Ok(vec![TextResourceContents::new(read.uri, "f").into()]) }
                    }),
            )
            .completion(|_request| async { Ok(Completion::values(vec!["a.txt".to_owned()])) })
            .build()
            .unwrap();
        let verifier = JwtVerifier::builder(&as_.issuer)
            .audience(RESOURCE)
            .build()
            .unwrap();
        let metadata = ProtectedResourceMetadata::new(RESOURCE)
            .unwrap()
            .authorization_server(&as_.issuer)
            .scopes_supported(["mcp", "fs"]);
        let policy = ScopePolicy::builder()
            .require("mcp")
            .hide_tools(true)
            .build();
        let auth = AuthLayer::builder(verifier, metadata)
            .scopes(policy)
            .build();
        Self {
            app: server.router("/mcp").layer(auth),
            runs,
            as_,
            key,
        }
    }

    fn bearer(&self, scope: &str) -> String {
        let token = self
            .key
            .sign(&claims("alice", &self.as_.issuer, RESOURCE, scope));
        format!("Bearer {token}")
    }

    async fn rpc(&self, method: &str, extra: Value, bearer: &str) -> Answer {
        let mut params = json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }});
        for (key, value) in extra.as_object().unwrap() {
            params[key] = value.clone();
        }
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut request = Request::post("/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .header("authorization", bearer);
        if let Some(name) = params.get("name").or_else(|| params.get("uri")) {
            request = request.header("mcp-name", name.as_str().unwrap());
        }
        let request = request
            .body(axum::body::Body::from(body.to_string()))
            .unwrap();
        send(&self.app, request).await
    }
}

/// Every request that addresses an item declaring `fs`, in the order tried.
fn addressing_fs() -> Vec<(&'static str, Value)> {
    vec![
        ("tools/call", json!({"name": "fs_read", "arguments": {}})),
        ("prompts/get", json!({"name": "fs_summary"})),
        ("resources/read", json!({"uri": "fs:///motd"})),
        ("resources/read", json!({"uri": "fs:///files/a.txt"})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "fs_summary"},
                   "argument": {"name": "x", "value": ""}}),
        ),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "fs:///files/{name}"},
                   "argument": {"name": "name", "value": ""}}),
        ),
    ]
}

#[tokio::test]
async fn a_token_without_an_items_scope_gets_403_naming_every_needed_scope() {
    let f = Fixture::start().await;
    let plain = f.bearer("mcp");
    for (method, params) in addressing_fs() {
        let answer = f.rpc(method, params.clone(), &plain).await;
        assert_eq!(
            answer.status,
            StatusCode::FORBIDDEN,
            "{method} {params}: {:?}",
            answer.body
        );
        assert_eq!(
            answer.body["error"]["code"],
            smcp_server::auth::INSUFFICIENT_SCOPE
        );
        assert_eq!(answer.body["error"]["data"]["scope"], "mcp fs", "{method}");
        let challenge = answer.challenge.unwrap();
        assert!(
            challenge.contains(r#"error="insufficient_scope", scope="mcp fs""#),
            "{challenge}"
        );
    }
    assert_eq!(f.runs.load(Ordering::SeqCst), 0, "a handler ran");

    // An item that declares nothing needs only the policy's scopes.
    let answer = f
        .rpc(
            "tools/call",
            json!({"name": "echo", "arguments": {}}),
            &plain,
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
}

#[tokio::test]
async fn a_token_holding_the_items_scope_is_served() {
    let f = Fixture::start().await;
    let stepped_up = f.bearer("mcp fs");
    for (method, params) in addressing_fs() {
        let answer = f.rpc(method, params.clone(), &stepped_up).await;
        assert_eq!(answer.status, StatusCode::OK, "{method} {params}");
        assert!(
            answer.body.get("result").is_some(),
            "{method}: {:?}",
            answer.body
        );
    }
    assert_eq!(
        f.runs.load(Ordering::SeqCst),
        4,
        "one run per read, get, call"
    );
}

#[tokio::test]
async fn hidden_tools_follow_the_declared_scopes() {
    let f = Fixture::start().await;
    let names = |answer: &Answer| -> Vec<String> {
        answer.body["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let answer = f.rpc("tools/list", json!({}), &f.bearer("mcp")).await;
    assert_eq!(names(&answer), ["echo"]);
    let answer = f.rpc("tools/list", json!({}), &f.bearer("mcp fs")).await;
    assert_eq!(names(&answer), ["echo", "fs_read"]);
}
