//! `ClientBuilder::retry`: what is resent after a failure in transit, and what is not.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use axum::body::Body;
use axum::response::Response;
use common::{result, scripted};
use serde_json::json;
use smcp_client::{Client, RetryPolicy};

/// What nginx answers when the instance it passed the request to went away.
fn bad_gateway() -> Response {
    Response::builder()
        .status(502)
        .header("content-type", "text/html")
        .body(Body::from("<html><body>502 Bad Gateway</body></html>"))
        .unwrap()
}

fn client(url: &str, policy: RetryPolicy) -> Client {
    Client::builder(url).retry(policy).build().unwrap()
}

fn calls(seen: &[common::Seen], method: &str) -> usize {
    seen.iter().filter(|s| s.body["method"] == method).count()
}

#[tokio::test]
async fn a_list_lost_at_the_proxy_is_resent_only_when_retries_are_on() {
    let answer = |n: usize, r: &serde_json::Value| {
        if n == 0 {
            bad_gateway()
        } else {
            result(r, json!({"tools": []}))
        }
    };
    let s = scripted(answer).await;
    client(&s.url, RetryPolicy::retries(2))
        .list_tools()
        .await
        .unwrap();
    assert_eq!(calls(&s.seen(), "tools/list"), 2);

    let s = scripted(answer).await;
    let e = client(&s.url, RetryPolicy::none())
        .list_tools()
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(502), "{e}");
    assert_eq!(calls(&s.seen(), "tools/list"), 1);
}

#[tokio::test]
async fn a_call_that_may_have_run_is_resent_only_for_a_tool_listed_read_only_or_idempotent() {
    let s = scripted(|n, r| match r["method"].as_str() {
        Some("tools/list") => result(
            r,
            json!({"tools": [
                {"name": "lookup", "inputSchema": {"type": "object"},
                 "annotations": {"readOnlyHint": true}},
                {"name": "pay", "inputSchema": {"type": "object"},
                 "annotations": {"destructiveHint": true}}
            ]}),
        ),
        // The first call of each tool is lost at the proxy.
        Some("tools/call") if n <= 2 => bad_gateway(),
        _ => result(r, json!({"content": [{"type": "text", "text": "ok"}]})),
    })
    .await;
    let c = client(&s.url, RetryPolicy::retries(3));
    c.list_tools().await.unwrap();
    let e = c.call_tool("pay", json!({})).await.unwrap_err();
    assert_eq!(e.status(), Some(502), "{e}");
    let seen = s.seen();
    assert_eq!(calls(&seen, "tools/call"), 1, "a payment is never resent");
    let r = c.call_tool("lookup", json!({})).await.unwrap();
    assert_eq!(r.content.len(), 1);
    let seen = s.seen();
    // pay once; lookup lost once (n = 2) and resent (n = 3).
    assert_eq!(calls(&seen, "tools/call"), 3);
    assert_eq!(seen[3].body["params"]["name"], "lookup");
}

#[tokio::test]
async fn a_request_that_never_reached_a_server_fails_after_the_retries_with_the_connect_error() {
    // A port nothing listens on: every attempt is refused, so every method may be resent.
    let port = smcp_test_support::free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let started = std::time::Instant::now();
    let e = client(&url, RetryPolicy::retries(2))
        .call_tool("pay", json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), smcp_client::ErrorKind::ConnectionRefused, "{e}");
    // Two resends: 100 ms, then 200 ms.
    assert!(started.elapsed() >= std::time::Duration::from_millis(300));
}
