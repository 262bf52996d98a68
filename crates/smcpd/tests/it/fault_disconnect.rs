//! Fault tests on the real `smcpd` (issue #16): a client that goes away in the middle of a
//! call cancels it, whether the response was already streaming (SSE) or still a pending JSON
//! response with nothing written yet, and the server goes on serving.
//!
//! The proof is smcpd's log, read while the server runs (not at shutdown, which ends every
//! call anyway): the demo tool `count` logs `count cancelled by the client` when it sees its
//! cancellation, and `count dropped after I of N steps` when the server drops it unfinished.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value
)]

use crate::support;

use std::time::Duration;

use serde_json::json;
use support::{LogTail, Smcpd, mcp, request_bytes, roundtrip};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Steps of the slow call: 100 × 50 ms = 5 s, far longer than any test waits for it.
const STEPS: u32 = 100;

fn count_call(progress: bool) -> serde_json::Value {
    let mut call = mcp(
        json!(7),
        "tools/call",
        json!({"name": "count", "arguments": {"to": STEPS, "delay_ms": 50}}),
    );
    if progress {
        call["params"]["_meta"]["progressToken"] = json!("p");
    }
    call
}

/// The server still answers a new request.
async fn still_serves(server: &Smcpd) {
    let echo = mcp(
        json!(8),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "still here"}}),
    );
    let resp = roundtrip(server.addr, &request_bytes(&echo, &[])).await;
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    assert!(resp.contains("still here"), "{resp}");
}

/// A log line without its colours (ANSI escape sequences).
fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI: ESC [ parameters final-byte (a letter).
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The number `I` in `count dropped after I of N steps`.
fn steps_done(line: &str) -> u32 {
    let rest = line
        .split("count dropped after ")
        .nth(1)
        .expect("the message");
    rest.split(' ').next().unwrap().parse().unwrap()
}

/// Nothing more is logged about the call: it is not still running somewhere.
fn assert_one_end(log: &LogTail) {
    std::thread::sleep(Duration::from_millis(300));
    let ends: Vec<String> = log
        .lines()
        .into_iter()
        .filter(|l| l.contains("count cancelled by the client") || l.contains("count dropped"))
        .collect();
    assert_eq!(ends.len(), 1, "one end of the call, logged once: {ends:#?}");
}

#[tokio::test]
async fn a_client_gone_mid_json_response_cancels_the_call() {
    let mut server = Smcpd::start();
    let log = server.follow_log();
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(&request_bytes(&count_call(false), &[]))
        .await
        .unwrap();
    // No progress token and no log level: nothing to stream, so the response stays a pending
    // JSON response until the call ends. Nothing at all may have been written yet.
    let mut buf = [0u8; 1024];
    let early = tokio::time::timeout(Duration::from_millis(400), stream.read(&mut buf)).await;
    assert!(early.is_err(), "the server answered early: {early:?}");
    drop(stream);

    let line = log
        .wait_for("count dropped after", Duration::from_secs(3))
        .unwrap_or_else(|| {
            panic!(
                "the handler was not stopped when its client went away:\n{}",
                log.lines().join("\n")
            )
        });
    let line = plain(&line);
    assert!(steps_done(&line) < STEPS, "{line}");
    assert_one_end(&log);
    still_serves(&server).await;
    assert!(server.terminate().success());
}

#[tokio::test]
async fn a_client_gone_mid_sse_stream_cancels_the_call() {
    let mut server = Smcpd::start();
    let log = server.follow_log();
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(&request_bytes(&count_call(true), &[]))
        .await
        .unwrap();
    // Read until the stream has started: the head and a first progress event.
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
    assert!(
        String::from_utf8_lossy(&seen).contains("content-type: text/event-stream"),
        "{}",
        String::from_utf8_lossy(&seen)
    );
    drop(stream);

    let line = log
        .wait_for("count cancelled by the client", Duration::from_secs(3))
        .unwrap_or_else(|| {
            panic!(
                "the handler did not observe the cancellation:\n{}",
                log.lines().join("\n")
            )
        });
    let line = plain(&line);
    let step: u32 = line
        .split("step=")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .expect("a step number");
    assert!(step < STEPS, "{line}");
    assert_one_end(&log);
    still_serves(&server).await;
    assert!(server.terminate().success());
}
