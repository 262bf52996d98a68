//! `smcpd`'s session flags against the real binary: `--no-legacy`, `--max-sessions`,
//! `--session-idle-timeout` (issue 13).

#![cfg(feature = "legacy")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::Smcpd;

async fn initialize(http: &reqwest::Client, server: &Smcpd) -> (u16, Option<String>, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let response = http
        .post(format!("http://{}/mcp", server.addr))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, session, response.json().await.unwrap())
}

async fn ping(http: &reqwest::Client, server: &Smcpd, session: &str) -> (u16, Value) {
    let response = http
        .post(format!("http://{}/mcp", server.addr))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string())
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test]
async fn sessions_are_on_by_default_bounded_and_expire_when_idle() {
    let server = Smcpd::start_with(&["--max-sessions", "1", "--session-idle-timeout", "1s"]);
    let http = reqwest::Client::new();
    let (status, session, body) = initialize(&http, &server).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["protocolVersion"], "2025-11-25");
    let session = session.expect("a session id");
    assert_eq!(ping(&http, &server, &session).await.0, 200);
    // The one session slot is taken.
    let (status, none, body) = initialize(&http, &server).await;
    assert_eq!((status, none), (503, None), "{body}");
    assert_eq!(body["error"]["code"], smcp_server::SERVER_BUSY);
    // Idle past the timeout, the session is gone and its slot free again.
    tokio::time::sleep(Duration::from_millis(1300)).await;
    let (status, body) = ping(&http, &server, &session).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!(-32600)),
        "{body}"
    );
    let (status, session, _) = initialize(&http, &server).await;
    assert_eq!(status, 200);
    assert!(session.is_some());
}

#[tokio::test]
async fn no_legacy_answers_initialize_with_unsupported_version() {
    let server = Smcpd::start_with(&["--no-legacy"]);
    let http = reqwest::Client::new();
    let (status, session, body) = initialize(&http, &server).await;
    assert_eq!((status, session), (400, None), "{body}");
    assert_eq!(body["error"]["code"], -32022);
    assert_eq!(body["error"]["data"]["supported"], json!(["2026-07-28"]));
}
