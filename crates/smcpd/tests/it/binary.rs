//! The real `smcpd` binary on port 0, spoken to with raw HTTP/1.1 over TCP (the mini-redis
//! style: assert on the wire, not on the library).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    clippy::type_complexity
)]

use crate::support;

use std::time::Duration;
use support::{Smcpd, mcp, request_bytes, roundtrip};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[tokio::test]
async fn serves_discover_and_tools_over_the_wire() {
    let server = Smcpd::start();
    let resp = roundtrip(
        server.addr,
        &request_bytes(&mcp(json!(1), "server/discover", json!({})), &[]),
    )
    .await;
    assert!(resp.starts_with("HTTP/1.1 200 OK\r\n"), "{resp}");
    assert!(
        resp.contains("\"supportedVersions\":[\"2026-07-28\"]"),
        "{resp}"
    );
    assert!(
        resp.contains("\"io.modelcontextprotocol/serverInfo\":{\"name\":\"smcpd\""),
        "{resp}"
    );

    let call = mcp(
        json!("c"),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let resp = roundtrip(server.addr, &request_bytes(&call, &[])).await;
    assert!(
        resp.contains("\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]"),
        "{resp}"
    );

    let resp = roundtrip(
        server.addr,
        b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n",
    )
    .await;
    assert!(resp.starts_with("HTTP/1.1 405"), "{resp}");
    assert!(resp.to_ascii_lowercase().contains("allow: post"), "{resp}");

    let (status, _) = server.stop();
    assert!(status.success(), "graceful exit on SIGTERM: {status:?}");
}

#[tokio::test]
async fn oversized_headers_get_431() {
    let server = Smcpd::start();
    let big = "x".repeat(100 * 1024);
    let body = mcp(json!(1), "server/discover", json!({}));
    let resp = roundtrip(server.addr, &request_bytes(&body, &[("X-Big", &big)])).await;
    assert!(
        resp.starts_with("HTTP/1.1 431"),
        "{}",
        &resp[..resp.len().min(200)]
    );
    server.stop();
}

#[tokio::test]
async fn closing_the_connection_cancels_a_streaming_call() {
    let server = Smcpd::start();
    let mut call = mcp(
        json!(9),
        "tools/call",
        json!({"name": "count", "arguments": {"to": 50, "delay_ms": 50}}),
    );
    call["params"]["_meta"]["progressToken"] = json!("p");
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(&request_bytes(&call, &[])).await.unwrap();
    // Read until the first progress event has arrived.
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("notifications/progress") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("progress in time")
            .unwrap();
        assert!(n > 0, "server closed early");
        seen.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&seen).to_string();
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    assert!(head.contains("x-accel-buffering: no"), "{head}");
    drop(stream);
    // Give the server a moment to notice, then stop it and read its log.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (_, log) = server.stop();
    assert!(
        log.contains("count cancelled by the client"),
        "the handler did not observe the cancellation:\n{log}"
    );
}

fn body_json(resp: &str) -> Value {
    let start = resp.find("\r\n\r\n").expect("a head") + 4;
    serde_json::from_str(resp[start..].trim()).expect("a JSON body")
}

#[tokio::test]
async fn two_instances_sharing_a_key_ring_accept_each_others_request_state() {
    let key = "shared:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";
    let a = Smcpd::start_with(&["--state-key", key]);
    let b = Smcpd::start_with(&["--state-key", key]);
    let stranger = Smcpd::start_with(&[
        "--state-key",
        "other:HyAhIiMkJSYnKCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4",
    ]);
    let caps = json!({"elicitation": {}});
    let mut first = mcp(
        json!(1),
        "tools/call",
        json!({"name": "confirm_action", "arguments": {"action": "rotate logs"}}),
    );
    first["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = caps.clone();
    let r1 = body_json(&roundtrip(a.addr, &request_bytes(&first, &[])).await);
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    assert_eq!(
        r1["result"]["inputRequests"]["confirm"]["method"],
        "elicitation/create"
    );
    let state = r1["result"]["requestState"].clone();

    let mut retry = mcp(
        json!(2),
        "tools/call",
        json!({
            "name": "confirm_action",
            "arguments": {"action": "rotate logs"},
            "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}},
            "requestState": state
        }),
    );
    retry["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = caps;
    // The retry lands on the other instance.
    let r2 = body_json(&roundtrip(b.addr, &request_bytes(&retry, &[])).await);
    assert_eq!(
        r2["result"]["content"][0]["text"], "done: rotate logs",
        "{r2}"
    );
    // An instance with other keys refuses it.
    let r3 = body_json(&roundtrip(stranger.addr, &request_bytes(&retry, &[])).await);
    assert_eq!(r3["error"]["code"], -32602, "{r3}");
    assert_eq!(r3["error"]["data"]["reason"], "unknownKey", "{r3}");
    for s in [a, b, stranger] {
        s.stop();
    }
}

#[tokio::test]
async fn sampling_demo_asks_the_clients_model() {
    let server = Smcpd::start();
    let mut first = mcp(
        json!(1),
        "tools/call",
        json!({"name": "ask_llm", "arguments": {"text": "MCP is stateless now."}}),
    );
    // Without the sampling capability the server must not ask: -32021.
    let r0 = body_json(&roundtrip(server.addr, &request_bytes(&first, &[])).await);
    assert_eq!(r0["error"]["code"], -32021, "{r0}");
    first["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"sampling": {}});
    let r1 = body_json(&roundtrip(server.addr, &request_bytes(&first, &[])).await);
    assert_eq!(
        r1["result"]["inputRequests"]["summary"]["method"], "sampling/createMessage",
        "{r1}"
    );
    let mut retry = first.clone();
    retry["id"] = json!(2);
    retry["params"]["inputResponses"] = json!({"summary": {
        "role": "assistant", "content": {"type": "text", "text": "MCP dropped sessions."},
        "model": "test-model", "stopReason": "endTurn"}});
    retry["params"]["requestState"] = r1["result"]["requestState"].clone();
    let r2 = body_json(&roundtrip(server.addr, &request_bytes(&retry, &[])).await);
    assert_eq!(
        r2["result"]["content"][0]["text"], "MCP dropped sessions. (model: test-model)",
        "{r2}"
    );
    server.stop();
}

/// A redirected log has no colour codes, and its first line is the ready line: where smcpd
/// listens and the command to try next (not a warning about an optional feature).
#[tokio::test]
async fn the_log_starts_with_the_ready_line_and_has_no_escape_codes() {
    let server = Smcpd::start();
    let addr = server.addr;
    let (_, log) = server.stop();
    assert!(
        !log.contains('\u{1b}'),
        "escape codes in a redirected log: {log:?}"
    );
    let first = log.lines().next().unwrap_or_default();
    let url = format!("http://{addr}/mcp");
    assert!(
        first.contains(&format!(
            "smcpd ready on {url}; try: smcp --url {url} tools"
        )),
        "{log}"
    );
    assert!(!log.contains("WARN"), "{log}");
}

/// Behind a TLS-terminating proxy, an https:// `--files-base-url` turns file transfer on; a
/// base URL that cannot carry descriptors is refused at start, naming the flag.
#[cfg(feature = "files")]
#[tokio::test]
async fn the_files_base_url_is_the_proxys_and_must_be_https() {
    let dir = std::env::temp_dir().join(format!("smcpd-base-url-{}", std::process::id()));
    let dir_arg = dir.to_str().unwrap().to_owned();
    let behind = Smcpd::start_with(&[
        "--files-dir",
        &dir_arg,
        "--files-base-url",
        "https://mcp.example.com",
    ]);
    let discover = mcp(json!(1), "server/discover", json!({}));
    let r = body_json(&roundtrip(behind.addr, &request_bytes(&discover, &[])).await);
    assert_eq!(
        r["result"]["capabilities"]["files"]["transports"],
        json!(["https"]),
        "{r}"
    );
    behind.stop();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_smcpd"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--files-base-url",
            "ftp://files.example.com",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--files-base-url"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}
