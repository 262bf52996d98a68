//! `smcpd` with `OTEL_EXPORTER_OTLP_ENDPOINT`: the spans of a request reach an OTLP/HTTP
//! receiver (a tiny one in this test) in the trace the request's `_meta` names.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use support::{Smcpd, mcp, request_bytes, roundtrip};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader as AsyncBufReader};
use tokio::net::TcpListener;

/// One request the receiver got: its request line, content type and body.
#[derive(Debug, Clone)]
struct Received {
    line: String,
    content_type: String,
    body: Vec<u8>,
}

/// An OTLP/HTTP receiver that answers 200 to everything and keeps what it got.
async fn receiver() -> (std::net::SocketAddr, Arc<Mutex<Vec<Received>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let got = Arc::new(Mutex::new(Vec::new()));
    let store = got.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let store = store.clone();
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut read = AsyncBufReader::new(read);
                loop {
                    let mut line = String::new();
                    if read.read_line(&mut line).await.unwrap_or(0) == 0 {
                        return;
                    }
                    let (mut length, mut content_type) = (0usize, String::new());
                    loop {
                        let mut header = String::new();
                        read.read_line(&mut header).await.unwrap();
                        let header = header.trim_end();
                        if header.is_empty() {
                            break;
                        }
                        let (name, value) = header.split_once(':').unwrap();
                        match name.to_ascii_lowercase().as_str() {
                            "content-length" => length = value.trim().parse().unwrap(),
                            "content-type" => value.trim().clone_into(&mut content_type),
                            _ => {}
                        }
                    }
                    let mut body = vec![0; length];
                    read.read_exact(&mut body).await.unwrap();
                    store.lock().unwrap().push(Received {
                        line: line.trim_end().to_owned(),
                        content_type,
                        body,
                    });
                    write
                        .write_all(
                            b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n\
                              Content-Length: 0\r\n\r\n",
                        )
                        .await
                        .unwrap();
                }
            });
        }
    });
    (addr, got)
}

/// `smcpd` on a free port with `env` set.
fn start_with_env(env: &[(&str, String)]) -> Smcpd {
    let mut command = Command::new(env!("CARGO_BIN_EXE_smcpd"));
    command
        .args([
            "--listen",
            "127.0.0.1:0",
            "--log",
            "smcpd=info,smcp_server=info",
        ])
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command.spawn().expect("smcpd starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    Smcpd { child, addr }
}

#[tokio::test]
async fn spans_reach_the_otlp_endpoint_in_the_incoming_trace() {
    let (collector, got) = receiver().await;
    let smcpd = start_with_env(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{collector}")),
        ("OTEL_BSP_SCHEDULE_DELAY", "100".to_owned()),
    ]);
    let trace_id = "5b8efff798038103d269b633813fc60c";
    let mut echo = mcp(
        json!(1),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "traced"}}),
    );
    echo["params"]["_meta"]["traceparent"] = json!(format!("00-{trace_id}-eee19b7ec3c1b174-01"));
    let response = roundtrip(smcpd.addr, &request_bytes(&echo, &[])).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(!response.contains(trace_id), "never echoed: {response}");
    let (status, stderr) = smcpd.stop();
    assert!(status.success(), "{status}: {stderr}");

    let want: Vec<u8> = (0..16)
        .map(|i| u8::from_str_radix(&trace_id[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let parent: Vec<u8> = (0..8)
        .map(|i| u8::from_str_radix(&"eee19b7ec3c1b174"[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    // The exporter may still be writing when the process exits: allow it a moment.
    for _ in 0..50 {
        if !got.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let got = got.lock().unwrap().clone();
    assert!(!got.is_empty(), "no export arrived; smcpd said: {stderr}");
    for received in &got {
        assert_eq!(received.line, "POST /v1/traces HTTP/1.1");
        assert_eq!(received.content_type, "application/x-protobuf");
    }
    let contains = |needle: &[u8]| {
        got.iter()
            .any(|r| r.body.windows(needle.len()).any(|w| w == needle))
    };
    assert!(contains(&want), "the incoming trace id is in the export");
    assert!(contains(&parent), "the caller's span id is the parent");
    assert!(contains(b"mcp.handler"), "the handler span is exported");
}
