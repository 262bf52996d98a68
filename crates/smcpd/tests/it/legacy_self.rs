//! smcp against smcp in the earlier revisions: `smcp-client` pinned to 2025-11-25, 2025-06-18
//! and 2025-03-26 against a real `smcpd` over Streamable HTTP (a session on the same endpoint
//! a 2026-07-28 client uses) and over stdio (the connection is the session). The same
//! exchange each time: the tool list, a call with progress, an elicitation the server sends as
//! `elicitation/create` and the client's `InputHandler` answers, a resource, a prompt, a
//! list-changed notification through `listen` (over HTTP from the session's GET stream, over
//! stdio from the child's stdout), and the session ended on close. A client that
//! is not pinned, probing over stdio, finds smcpd to be a 2026-07-28 server.

#![cfg(feature = "legacy")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::json;
use smcp_client::proto::content::ContentBlock;
use smcp_client::proto::patterns::subscriptions::SubscriptionFilter;
use smcp_client::{Client, ClientBuilder, Era, StdioCommand, SubscriptionEvent};
use support::{Confirm, Smcpd};

fn text(blocks: &[ContentBlock]) -> String {
    match blocks.first() {
        Some(ContentBlock::Text(t)) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

/// The exchange every pinned client goes through.
async fn exchange(builder: ClientBuilder, version: &str) -> Client {
    let asked = Confirm::default();
    let client = builder
        .protocol_version(version)
        .input_handler(asked.clone())
        .timeout(Some(Duration::from_secs(20)))
        .build()
        .unwrap();

    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(names.iter().any(|n| n == "progress_echo"), "{names:?}");
    assert_eq!(client.era(), Some(Era::Session));
    let info = client.session_info().await.expect("a session");
    assert_eq!(info.protocol_version, version);
    assert_eq!(info.server_info["name"], "smcpd", "{info:?}");
    assert_eq!(client.protocol_version(), version);

    let progress = Arc::new(Mutex::new(Vec::new()));
    let p = progress.clone();
    let r = client
        .tool_call("count")
        .arguments(json!({"to": 3, "delay_ms": 1}))
        .on_progress(move |n| p.lock().unwrap().push(n.progress))
        .send()
        .await
        .unwrap();
    assert_eq!(text(&r.content), "counted to 3");
    assert_eq!(*progress.lock().unwrap(), [1.0, 2.0, 3.0]);

    let r = client
        .call_tool("confirm_action", json!({"action": "deploy"}))
        .await
        .unwrap();
    assert_eq!(text(&r.content), "done: deploy");
    assert_eq!(*asked.0.lock().unwrap(), ["Really deploy?"]);

    let readme = client.read_resource("smcp://readme").await.unwrap();
    assert!(!readme.contents.is_empty(), "{readme:?}");
    let prompt = client
        .get_prompt(
            "greet",
            BTreeMap::from([("name".to_owned(), "Ada".to_owned())]),
        )
        .await
        .unwrap();
    assert_eq!(prompt.text(), "Write a warm, one-line greeting for Ada.");

    let mut sub = client.listen(SubscriptionFilter {
        tools_list_changed: Some(true),
        ..SubscriptionFilter::default()
    });
    let first = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .unwrap();
    assert!(
        matches!(first, Some(Ok(SubscriptionEvent::Acknowledged(_)))),
        "{first:?}"
    );
    client.call_tool("toggle_extra", json!({})).await.unwrap();
    let next = tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .unwrap();
    assert!(
        matches!(next, Some(Ok(SubscriptionEvent::ToolsListChanged))),
        "{next:?}"
    );
    drop(sub);
    client
}

#[tokio::test(flavor = "multi_thread")]
async fn smcp_client_pinned_to_each_earlier_revision_against_smcpd_over_http() {
    let server = Smcpd::start_with(&["--clock-secs", "0"]);
    let url = format!("http://{}/mcp", server.addr);
    for version in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        let client = exchange(Client::builder(&url), version).await;
        let session = client
            .session_info()
            .await
            .and_then(|i| i.session_id)
            .expect("smcpd minted a session id");
        client.close().await;
        // The session ended with DELETE: the same id is unknown now (404).
        let status = reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", version)
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, 404, "{version}: the session outlived close()");
    }
    let (_, log) = server.stop();
    assert!(!log.contains("panicked"), "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn smcp_client_pinned_to_2025_11_25_against_smcpd_over_stdio() {
    let command = StdioCommand::new(env!("CARGO_BIN_EXE_smcpd")).args(["--stdio"]);
    let client = exchange(Client::stdio(command), "2025-11-25").await;
    let info = client.session_info().await.expect("a session");
    assert_eq!(info.session_id, None, "the connection is the session");
    let status = client
        .close()
        .await
        .expect("a stdio client has an exit status");
    assert!(status.success(), "{status:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stdio_client_probes_by_default_and_finds_smcpd_modern() {
    let command = StdioCommand::new(env!("CARGO_BIN_EXE_smcpd")).args(["--stdio"]);
    let client = Client::stdio(command).build().unwrap();
    let r = client
        .call_tool("echo", json!({"text": "modern"}))
        .await
        .unwrap();
    assert_eq!(text(&r.content), "modern");
    assert_eq!(client.era(), Some(Era::Stateless));
    assert!(client.session_info().await.is_none());
    assert_eq!(client.protocol_version(), "2026-07-28");
    client.close().await;
}
