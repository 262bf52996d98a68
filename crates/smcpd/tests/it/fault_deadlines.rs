//! Slow and stalled clients, and shutdown, against the real `smcpd`: every deadline closes
//! what it guards within its configured time, and SIGTERM answers every open request.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::Read as _;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Smcpd, https_client, mcp, post_mcp, request_bytes};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads from `stream` until the text read so far contains `needle`, the peer closes, or
/// `limit` passes; returns the text and whether the peer closed.
async fn read_until(stream: &mut TcpStream, needle: &str, limit: Duration) -> (String, bool) {
    let deadline = Instant::now() + limit;
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        if !needle.is_empty() && String::from_utf8_lossy(&seen).contains(needle) {
            return (String::from_utf8_lossy(&seen).into_owned(), false);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Err(_) => return (String::from_utf8_lossy(&seen).into_owned(), false),
            Ok(Ok(0) | Err(_)) => return (String::from_utf8_lossy(&seen).into_owned(), true),
            Ok(Ok(n)) => seen.extend_from_slice(&buf[..n]),
        }
    }
}

/// The JSON-RPC messages in a raw HTTP response: a JSON body, or every SSE `data:` line.
fn messages(raw: &str) -> Vec<Value> {
    let body = match raw.split_once("\r\n\r\n") {
        Some((_, body)) if raw.starts_with("HTTP/") => body,
        _ => raw,
    };
    let mut out: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    if out.is_empty()
        && let Some(v) = body
            .find('{')
            .and_then(|i| serde_json::from_str(body[i..].trim()).ok())
    {
        out.push(v);
    }
    out
}

fn stderr_of(status_and_log: &(std::process::ExitStatus, String)) -> &str {
    &status_and_log.1
}

// Multi-threaded: the client's connection must answer the server's shutdown while the test
// waits for the process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_tls_connections_are_closed_at_the_handshake_deadline() {
    let dir = std::env::temp_dir().join(format!("smcpd-fault-tls-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let server = Smcpd::start_with(&[
        "--tls-self-signed",
        dir.to_str().unwrap(),
        "--handshake-timeout",
        "1s",
        "--max-connections",
        "3",
        "--clock-secs",
        "0",
    ]);
    // Three clients connect and never say hello: every connection permit is taken.
    let mut idle = Vec::new();
    for _ in 0..3 {
        idle.push(TcpStream::connect(server.addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let http = https_client(&dir)
        .timeout(Duration::from_secs(15))
        .build()
        .unwrap();
    let body = mcp(json!(1), "server/discover", json!({}));
    let response = post_mcp(&http, server.addr, &body)
        .send()
        .await
        .expect("served once the idle handshakes time out");
    assert_eq!(response.status(), 200);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "waited {:?} for a permit",
        started.elapsed()
    );
    for mut socket in idle {
        let (_, closed) = read_until(&mut socket, "", Duration::from_secs(3)).await;
        assert!(closed, "an idle TLS connection was left open");
    }
    let log = server.stop();
    assert!(log.0.success(), "{}", stderr_of(&log));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A request head with the whole body's length, and the first `sent` bytes of the body.
fn partial_request(sent: usize) -> (Vec<u8>, Vec<u8>) {
    let call = mcp(
        json!(7),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x".repeat(200)}}),
    );
    let raw = request_bytes(&call, &[]);
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4 + sent;
    (raw[..split].to_vec(), raw[split..].to_vec())
}

#[tokio::test]
async fn a_stalled_body_gets_408_at_the_idle_deadline() {
    let server = Smcpd::start_with(&["--body-idle-timeout", "1s", "--clock-secs", "0"]);
    let (first, _rest) = partial_request(20);
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let started = Instant::now();
    stream.write_all(&first).await.unwrap();
    let (raw, _) = read_until(&mut stream, "}}", Duration::from_secs(5)).await;
    let waited = started.elapsed();
    assert!(raw.starts_with("HTTP/1.1 408"), "{raw}");
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(4),
        "{waited:?}"
    );
    let error = &messages(&raw)[0]["error"];
    assert_eq!(error["code"], -32600, "{raw}");
    assert!(
        error["message"].as_str().unwrap().contains("stalled"),
        "{raw}"
    );
    // Nothing of the body is echoed, and the connection is not reused.
    assert!(!raw.contains("xxxx"), "{raw}");
    let (_, closed) = read_until(&mut stream, "", Duration::from_secs(3)).await;
    assert!(closed, "the connection stayed open after a stalled body");
    server.stop();
}

#[tokio::test]
async fn a_trickled_body_gets_408_below_the_minimum_rate() {
    let server = Smcpd::start_with(&[
        "--body-min-rate",
        "1000",
        "--body-grace",
        "1s",
        "--body-idle-timeout",
        "30s",
        "--clock-secs",
        "0",
    ]);
    let (first, rest) = partial_request(1);
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let started = Instant::now();
    stream.write_all(&first).await.unwrap();
    // About 10 bytes a second: never idle for long, far below 1000 bytes a second.
    let (mut reader, mut writer) = stream.into_split();
    let trickle = tokio::spawn(async move {
        for byte in rest {
            if writer.write_all(&[byte]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let mut raw = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(6), async {
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&raw).contains("}}") {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => raw.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    trickle.abort();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    assert!(raw.starts_with("HTTP/1.1 408"), "{raw}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let error = &messages(&raw)[0]["error"];
    assert!(
        error["message"].as_str().unwrap().contains("too slowly"),
        "{raw}"
    );
    server.stop();
}

#[tokio::test]
async fn slow_headers_are_closed_at_the_header_deadline() {
    let server = Smcpd::start_with(&["--header-timeout", "1s", "--clock-secs", "0"]);
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let started = Instant::now();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let trickle = tokio::spawn(async move {
        for i in 0..100 {
            let line = format!("X-Slow-{i}: y\r\n");
            if writer.write_all(line.as_bytes()).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let mut buf = [0u8; 1024];
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await;
    trickle.abort();
    assert!(closed.is_ok(), "a trickled request head was never cut");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    server.stop();
}

/// Opens a `subscriptions/listen` stream for tool list changes and waits for its
/// acknowledgement.
async fn open_listen(addr: SocketAddr) -> TcpStream {
    let body = mcp(
        json!("listen-1"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(&request_bytes(&body, &[])).await.unwrap();
    let (raw, _) = read_until(&mut stream, "data: ", Duration::from_secs(5)).await;
    assert!(raw.starts_with("HTTP/1.1 200"), "{raw}");
    stream
}

/// Starts `count` (slow) on a new connection: with a progress token it streams (SSE), without
/// one it answers in JSON. Returns once the server is running it.
async fn start_count(addr: SocketAddr, id: i64, progress: bool) -> TcpStream {
    let mut call = mcp(
        json!(id),
        "tools/call",
        json!({"name": "count", "arguments": {"to": 1000, "delay_ms": 100}}),
    );
    if progress {
        call["params"]["_meta"]["progressToken"] = json!(format!("p{id}"));
    }
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(&request_bytes(&call, &[])).await.unwrap();
    if progress {
        let (raw, _) = read_until(
            &mut stream,
            "notifications/progress",
            Duration::from_secs(5),
        )
        .await;
        assert!(raw.contains("text/event-stream"), "{raw}");
    } else {
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    stream
}

fn sigterm(server: &Smcpd) {
    let pid = server.child.id().to_string();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn sigterm_cuts_long_calls_with_an_error_each_and_exits_1() {
    let mut server = Smcpd::start_with(&["--drain-timeout", "1s", "--clock-secs", "0"]);
    let mut listen = open_listen(server.addr).await;
    let mut json_call = start_count(server.addr, 1, false).await;
    let mut sse_call = start_count(server.addr, 2, true).await;
    let started = Instant::now();
    sigterm(&server);

    // The listen stream ends with its result, at once.
    let (raw, closed) =
        read_until(&mut listen, "\"id\":\"listen-1\"", Duration::from_secs(5)).await;
    let last = messages(&raw).pop().unwrap_or_else(|| panic!("{raw}"));
    assert_eq!(last["id"], "listen-1", "{raw}");
    assert!(last.get("result").is_some(), "{raw}");
    assert!(!closed || raw.contains("listen-1"));

    // Each call gets a JSON-RPC error after the drain timeout, in its own framing.
    // (The SSE call's head, read before, said text/event-stream.)
    for (stream, id, framing) in [
        (&mut json_call, 1, "content-type: application/json"),
        (&mut sse_call, 2, "data: "),
    ] {
        let needle = format!("\"id\":{id}");
        let (raw, _) = read_until(stream, &needle, Duration::from_secs(6)).await;
        assert!(raw.contains(framing), "{raw}");
        let last = messages(&raw).pop().unwrap_or_else(|| panic!("{raw}"));
        assert_eq!(last["id"], id, "{raw}");
        assert_eq!(last["error"]["code"], -32603, "{raw}");
        assert!(
            last["error"]["message"]
                .as_str()
                .unwrap()
                .contains("Server shutting down"),
            "{raw}"
        );
    }
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "cut before the drain timeout: {:?}",
        started.elapsed()
    );

    let status = server.child.wait().unwrap();
    let mut log = String::new();
    server
        .child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    assert_eq!(status.code(), Some(1), "{log}");
    assert!(
        log.contains("stopped without a complete drain: 2 requests"),
        "{log}"
    );
    // Both handlers saw the cancellation before they were dropped.
    assert_eq!(
        log.matches("count cancelled by the client").count(),
        2,
        "{log}"
    );
}

#[tokio::test]
async fn sigterm_with_only_listen_streams_and_short_calls_drains_completely() {
    let mut server = Smcpd::start_with(&["--drain-timeout", "5s", "--clock-secs", "0"]);
    let mut listen = open_listen(server.addr).await;
    // A call that finishes within the drain timeout gets its result.
    let mut call = mcp(
        json!(3),
        "tools/call",
        json!({"name": "count", "arguments": {"to": 3, "delay_ms": 200}}),
    );
    call["params"]["_meta"]["progressToken"] = json!("p3");
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(&request_bytes(&call, &[])).await.unwrap();
    let (raw, _) = read_until(
        &mut stream,
        "notifications/progress",
        Duration::from_secs(5),
    )
    .await;
    assert!(raw.contains("text/event-stream"), "{raw}");
    sigterm(&server);
    let (raw, _) = read_until(&mut listen, "\"id\":\"listen-1\"", Duration::from_secs(5)).await;
    assert!(
        messages(&raw)
            .pop()
            .unwrap_or_else(|| panic!("{raw}"))
            .get("result")
            .is_some(),
        "{raw}"
    );
    let (raw, _) = read_until(&mut stream, "counted to 3", Duration::from_secs(5)).await;
    assert!(raw.contains("counted to 3"), "{raw}");
    let status = server.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

/// A PUT upload that sends part of its bytes and stalls is cut at the body deadline, and
/// nothing of it stays staged.
#[cfg(feature = "files")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_upload_is_cut_and_leaves_nothing_staged() {
    use sha2::Digest as _;
    let dir = std::env::temp_dir().join(format!("smcpd-fault-upload-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let files_dir = dir.join("files");
    let server = Smcpd::start_with(&[
        "--tls-self-signed",
        dir.to_str().unwrap(),
        "--files-dir",
        files_dir.to_str().unwrap(),
        "--body-idle-timeout",
        "1s",
        "--clock-secs",
        "0",
    ]);
    let http = https_client(&dir)
        .timeout(Duration::from_secs(15))
        .build()
        .unwrap();
    let bytes = vec![7u8; 256 * 1024];
    let digest = base64::Engine::encode(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        sha2::Sha256::digest(&bytes),
    );
    let mut body = mcp(
        json!(1),
        "files/authorizeUpload",
        json!({"name": "big.bin", "mimeType": "application/octet-stream", "size": bytes.len(),
            "digest": {"algorithm": "sha-256", "value": digest}}),
    );
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"files": {"upload": true, "download": true, "transports": ["https"]}});
    let authorized: Value = post_mcp(&http, server.addr, &body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let url = authorized["result"]["upload"]["url"]
        .as_str()
        .unwrap_or_else(|| panic!("{authorized}"))
        .to_owned();
    // The first 64 KiB, then nothing more (the stream never ends).
    use futures_util::StreamExt as _;
    let first = bytes[..64 * 1024].to_vec();
    let stream = futures_util::stream::once(async move { Ok::<_, std::io::Error>(first) })
        .chain(futures_util::stream::pending());
    let started = Instant::now();
    let response = http
        .put(&url)
        .header("content-type", "application/octet-stream")
        .header("content-length", bytes.len().to_string())
        .body(reqwest::Body::wrap_stream(stream))
        .send()
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the stalled upload was held for {:?}",
        started.elapsed()
    );
    if let Ok(response) = response {
        assert!(response.status().is_client_error(), "{}", response.status());
    }
    // Nothing staged is left behind, and the file never became available.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let staged: Vec<_> = std::fs::read_dir(files_dir.join("tmp"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(staged.is_empty(), "staged files left: {staged:?}");
    let blobs = std::fs::read_dir(files_dir.join("blobs")).unwrap().count();
    assert_eq!(blobs, 0, "a partial upload became a blob");
    drop(http);
    server.stop();
    let _ = std::fs::remove_dir_all(&dir);
}
