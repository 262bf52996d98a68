//! `smcpd --metrics-listen`: Prometheus metrics and the probes, on the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::net::SocketAddr;

use serde_json::json;
use support::{Smcpd, mcp, request_bytes, roundtrip};

/// A loopback port free now (bound, then released).
fn free_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

async fn get(addr: SocketAddr, path: &str, host: &str) -> String {
    let raw = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n");
    roundtrip(addr, raw.as_bytes()).await
}

/// Waits for the operations listener, which starts just after the main one.
async fn ops_up(addr: SocketAddr) {
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(addr).await.is_ok() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("the metrics listener never came up on {addr}");
}

#[tokio::test]
async fn metrics_listener_counts_requests_and_probes_answer() {
    let ops = free_port();
    let smcpd = Smcpd::start_with(&["--metrics-listen", &ops.to_string()]);
    ops_up(ops).await;

    let echo = mcp(
        json!(1),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    for _ in 0..2 {
        let response = roundtrip(smcpd.addr, &request_bytes(&echo, &[])).await;
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    }
    let metrics = get(ops, "/metrics", "10.0.0.7:9100").await;
    assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
    assert!(
        metrics.contains(r#"smcp_requests_total{method="tools/call",status="2xx",code="none"} 2"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"smcp_request_duration_seconds_count{method="tools/call"} 2"#),
        "{metrics}"
    );
    assert!(metrics.contains("smcp_listen_streams 0"), "{metrics}");

    // Readiness on both listeners; the main one keeps its Host allow-list.
    let ready = get(smcpd.addr, "/readyz", "127.0.0.1").await;
    assert!(ready.starts_with("HTTP/1.1 200"), "{ready}");
    assert!(ready.ends_with(r#"{"status":"ready"}"#), "{ready}");
    let refused = get(smcpd.addr, "/readyz", "evil.example").await;
    assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
    let ready = get(ops, "/readyz", "10.0.0.7:9100").await;
    assert!(ready.starts_with("HTTP/1.1 200"), "{ready}");
    let live = get(smcpd.addr, "/livez", "localhost").await;
    assert!(live.ends_with(r#"{"status":"live"}"#), "{live}");

    let (status, _) = smcpd.stop();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn without_metrics_listen_the_probes_still_answer_on_the_main_listener() {
    let smcpd = Smcpd::start_with(&["--readyz-path", "/health/ready"]);
    let ready = get(smcpd.addr, "/health/ready", "127.0.0.1").await;
    assert!(ready.starts_with("HTTP/1.1 200"), "{ready}");
    let moved = get(smcpd.addr, "/readyz", "127.0.0.1").await;
    assert!(moved.starts_with("HTTP/1.1 404"), "{moved}");
    let (status, _) = smcpd.stop();
    assert!(status.success(), "{status}");
}
