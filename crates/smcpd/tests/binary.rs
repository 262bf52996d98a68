//! The real `smcpd` binary on port 0, spoken to with raw HTTP/1.1 over TCP (the mini-redis
//! style: assert on the wire, not on the library).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value
)]

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Smcpd {
    child: Child,
    addr: SocketAddr,
}

impl Smcpd {
    fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_smcpd"))
            .args([
                "--listen",
                "127.0.0.1:0",
                "--log",
                "smcpd=info,smcp_server=info",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("smcpd starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
        let addr = url.trim_end_matches("/mcp").parse().unwrap();
        Self { child, addr }
    }

    /// Stops the server with SIGTERM and returns its exit status and stderr.
    fn stop(mut self) -> (std::process::ExitStatus, String) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let status = self.child.wait().unwrap();
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        (status, err)
    }
}

fn request_bytes(body: &Value, extra: &[(&str, &str)]) -> Vec<u8> {
    let method = body["method"].as_str().unwrap();
    let text = body.to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\nContent-Length: {}\r\n",
        text.len()
    );
    if let Some(name) = body["params"]["name"].as_str() {
        head.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(text.as_bytes());
    bytes
}

fn mcp(id: Value, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Sends one request on a fresh connection and reads the whole response (Connection: close).
async fn roundtrip(addr: SocketAddr, raw: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut raw = raw.to_vec();
    // Ask the server to close after the response so read_to_end terminates.
    let pos = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    raw.splice(pos + 2..pos + 2, b"Connection: close\r\n".iter().copied());
    stream.write_all(&raw).await.unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut out))
        .await
        .expect("response in time")
        .unwrap();
    String::from_utf8(out).unwrap()
}

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
