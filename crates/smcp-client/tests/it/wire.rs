//! The wire tap: what the client sends and reads, as it happens, over HTTP (a JSON answer and
//! an SSE stream, against smcpd) and over stdio (against the Python SDK-free fake server).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use smcp_client::wire::{WireEvent, WireKind, WireTap};
use smcp_client::{Client, StdioCommand};

use crate::common;

/// A tap keeping every event.
fn recording() -> (WireTap, Arc<Mutex<Vec<WireEvent>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let kept = events.clone();
    (WireTap::new(move |e| kept.lock().unwrap().push(e)), events)
}

fn body_json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

#[tokio::test]
async fn http_requests_their_headers_answers_and_sse_events_are_tapped() {
    let url = common::smcpd().await;
    let (tap, events) = recording();
    let client = Client::builder(&url)
        .header("Authorization", "Bearer t0k")
        .wire_tap(tap)
        .build()
        .unwrap();
    client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    client
        .tool_call("progress_echo")
        .arguments(json!({"text": "p"}))
        .on_progress(|_| {})
        .send()
        .await
        .unwrap();
    let events = events.lock().unwrap().clone();
    // echo: its request, then its JSON answer, in one exchange.
    let (exchange, headers) = events
        .iter()
        .find_map(|e| match &e.kind {
            WireKind::HttpRequest {
                method,
                url: u,
                headers,
                body,
            } if body_json(body)["params"]["name"] == "echo" => {
                assert_eq!(method, "POST");
                assert_eq!(u, &url);
                Some((e.exchange, headers.clone()))
            }
            _ => None,
        })
        .expect("the echo request");
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(header("mcp-method"), Some("tools/call"));
    assert_eq!(header("mcp-name"), Some("echo"));
    assert_eq!(
        header("authorization"),
        Some("Bearer t0k"),
        "headers as sent"
    );
    let answer = events
        .iter()
        .find_map(|e| match &e.kind {
            WireKind::HttpResponse { status, body, .. } if e.exchange == exchange => {
                Some((*status, body.clone()))
            }
            _ => None,
        })
        .expect("the echo answer");
    assert_eq!(answer.0, 200);
    assert_eq!(
        body_json(&answer.1.unwrap())["result"]["content"][0]["text"],
        "hi"
    );
    // progress_echo: an SSE answer, each event tapped in its exchange, the result last.
    let progress = events
        .iter()
        .find(|e| matches!(&e.kind, WireKind::HttpRequest { body, .. } if body_json(body)["params"]["name"] == "progress_echo"))
        .unwrap()
        .exchange;
    let sse: Vec<Value> = events
        .iter()
        .filter(|e| e.exchange == progress)
        .filter_map(|e| match &e.kind {
            WireKind::SseEvent { data, .. } => Some(serde_json::from_str(data).unwrap()),
            _ => None,
        })
        .collect();
    assert_eq!(
        sse.iter()
            .filter(|m| m["method"] == "notifications/progress")
            .count(),
        10
    );
    assert!(sse.last().unwrap().get("result").is_some());
    assert!(
        events.windows(2).all(|w| w[0].at <= w[1].at),
        "events arrive in order"
    );
}

#[tokio::test]
async fn stdio_lines_both_ways_are_tapped() {
    let (tap, events) = recording();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/stdio_fake_server.py");
    let record = std::env::temp_dir().join(format!("smcp-wire-test-{}.jsonl", std::process::id()));
    let command = StdioCommand::new("python3")
        .arg(script)
        .arg("serve")
        .arg(&record)
        .stderr(smcp_client::ServerStderr::Null);
    let client = Client::stdio(command).wire_tap(tap).build().unwrap();
    client
        .call_tool("echo", json!({"text": "over stdio"}))
        .await
        .unwrap();
    client.close().await;
    let _ = std::fs::remove_file(&record);
    let events = events.lock().unwrap().clone();
    let out: Vec<Value> = events
        .iter()
        .filter_map(|e| match &e.kind {
            WireKind::StdioOut(line) => Some(body_json(line)),
            _ => None,
        })
        .collect();
    let inbound: Vec<Value> = events
        .iter()
        .filter_map(|e| match &e.kind {
            WireKind::StdioIn(line) => Some(body_json(line)),
            _ => None,
        })
        .collect();
    let call = out
        .iter()
        .find(|m| m["method"] == "tools/call")
        .expect("the call line, without its newline");
    assert_eq!(call["params"]["arguments"]["text"], "over stdio");
    assert!(
        inbound
            .iter()
            .any(|m| m["id"] == call["id"] && m["result"]["content"][0]["text"] == "over stdio"),
        "{inbound:?}"
    );
    assert!(events.iter().all(|e| e.exchange == 0));
}
