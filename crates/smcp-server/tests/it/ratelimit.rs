//! Rate limits, in-process: the refusal over 2026-07-28 HTTP (429, `Retry-After`, the exact
//! JSON-RPC error), per principal, per tool, for everyone, for unauthenticated requests by peer
//! address; a limiter that answers later (a shared store) refusing before the handler runs and
//! before the response is chosen; a 2025 session over HTTP (429 too); stdio (in-band); the
//! metrics; and nothing asked when there is no rule.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use serde_json::{Value, json};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::mrtr::MrtrConfig;
use smcp_server::ratelimit::{
    Anonymous, Bucket, MemoryRateLimiter, Rate, RateLimiter, RateLimits, Verdict,
};
use smcp_server::{KeyRing, McpService, Principal, SERVER_BUSY, Server, ServerBuilder, tool};

use crate::common::{Reply, body, request, send};

/// A clock the test moves: microseconds since the epoch.
#[derive(Clone, Default)]
struct TestClock(Arc<AtomicU64>);

impl TestClock {
    fn start() -> Self {
        Self(Arc::new(AtomicU64::new(1_800_000_000_000_000)))
    }

    fn advance(&self, d: Duration) {
        self.0
            .fetch_add(u64::try_from(d.as_micros()).unwrap(), Ordering::SeqCst);
    }

    fn mrtr(&self) -> MrtrConfig {
        let at = self.0.clone();
        MrtrConfig {
            clock: Arc::new(move || {
                SystemTime::UNIX_EPOCH + Duration::from_micros(at.load(Ordering::SeqCst))
            }),
            ..MrtrConfig::new(KeyRing::ephemeral().unwrap())
        }
    }
}

/// A server with `echo` and `other`, counting the calls that reach a handler.
fn builder(clock: &TestClock, runs: &Arc<AtomicUsize>) -> ServerBuilder {
    let (a, b) = (runs.clone(), runs.clone());
    Server::builder("limited", "1.0.0")
        .mrtr(clock.mrtr())
        .tool(tool("echo").handler(move |_call| {
            a.fetch_add(1, Ordering::SeqCst);
            async { Ok(CallToolResult::text("echo")) }
        }))
        .tool(tool("other").handler(move |_call| {
            b.fetch_add(1, Ordering::SeqCst);
            async { Ok(CallToolResult::text("other")) }
        }))
}

fn call_tool(id: u64, name: &str) -> Value {
    body(json!(id), "tools/call", json!({"name": name}))
}

/// POSTs `body` as `principal` (none: unauthenticated), optionally from `peer`.
async fn post_as(
    svc: &McpService,
    body: &Value,
    principal: Option<&str>,
    peer: Option<&str>,
) -> Reply {
    let mut req: Request<Full<Bytes>> = request(body)
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    if let Some(p) = principal {
        req.extensions_mut().insert(Principal(p.to_owned()));
    }
    if let Some(addr) = peer {
        let addr: SocketAddr = addr.parse().unwrap();
        req.extensions_mut()
            .insert(axum::extract::ConnectInfo(addr));
    }
    send(svc, req).await
}

/// Asserts the rate limit refusal: 429, `Retry-After`, code −31000 and the exact data.
fn assert_limited(reply: &Reply, id: u64, limit: &str, retry_after_ms: u64) {
    assert_eq!(reply.status, 429, "{:?}", reply.bytes);
    let secs = retry_after_ms.div_ceil(1000).to_string();
    assert_eq!(reply.headers["retry-after"], secs.as_str());
    assert_eq!(reply.content_type(), "application/json");
    let v = reply.json();
    assert_eq!(v["id"], id, "{v}");
    assert_eq!(v["error"]["code"], SERVER_BUSY, "{v}");
    assert_eq!(
        v["error"]["data"],
        json!({"limit": limit, "retryAfterMs": retry_after_ms}),
        "{v}"
    );
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains(limit), "{message}");
}

fn ok(reply: &Reply) {
    assert_eq!(reply.status, 200, "{:?}", reply.bytes);
    assert!(reply.json().get("result").is_some(), "{}", reply.json());
}

#[tokio::test]
async fn a_principal_gets_its_burst_then_429_with_retry_after() {
    let (clock, runs) = (TestClock::start(), Arc::new(AtomicUsize::new(0)));
    let svc = builder(&clock, &runs)
        .rate_limits(RateLimits::new().principal(Rate::per_minute(30).and_burst(2)))
        .build()
        .unwrap()
        .service();
    // Every method counts: tools/list, then a call.
    ok(&post_as(
        &svc,
        &body(json!(1), "tools/list", json!({})),
        Some("alice"),
        None,
    )
    .await);
    ok(&post_as(&svc, &call_tool(2, "echo"), Some("alice"), None).await);
    let refused = post_as(&svc, &call_tool(3, "echo"), Some("alice"), None).await;
    assert_limited(&refused, 3, "principal", 2000);
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the refused call never ran");
    // A bad request over the limit gets the refusal too (decided before anything else).
    let unknown = post_as(&svc, &call_tool(4, "nope"), Some("alice"), None).await;
    assert_limited(&unknown, 4, "principal", 2000);
    // Another principal has its own bucket; unauthenticated requests have none by default.
    ok(&post_as(&svc, &call_tool(5, "echo"), Some("bob"), None).await);
    for id in 6..10 {
        ok(&post_as(&svc, &call_tool(id, "echo"), None, None).await);
    }
    // 1.5 s later: 0.5 s to go, rounded up to 1 s in Retry-After.
    clock.advance(Duration::from_millis(1500));
    assert_limited(
        &post_as(&svc, &call_tool(10, "echo"), Some("alice"), None).await,
        10,
        "principal",
        500,
    );
    // 2 s after the burst: one token, not two.
    clock.advance(Duration::from_millis(500));
    ok(&post_as(&svc, &call_tool(11, "echo"), Some("alice"), None).await);
    assert_limited(
        &post_as(&svc, &call_tool(12, "echo"), Some("alice"), None).await,
        12,
        "principal",
        2000,
    );
}

#[tokio::test]
async fn tool_rules_per_caller_and_for_everyone() {
    let (clock, runs) = (TestClock::start(), Arc::new(AtomicUsize::new(0)));
    let limits = RateLimits::new()
        .principal(Rate::per_second(1).and_burst(4))
        .tool("echo", Rate::per_hour(1))
        .global_tool("other", Rate::per_minute(2));
    let svc = builder(&clock, &runs)
        .rate_limits(limits)
        .build()
        .unwrap()
        .service();
    ok(&post_as(&svc, &call_tool(1, "echo"), Some("alice"), None).await);
    // The tool's bucket for alice is empty: one token an hour.
    let refused = post_as(&svc, &call_tool(2, "echo"), Some("alice"), None).await;
    assert_limited(&refused, 2, "tool:echo", 3_600_000);
    // That refusal took nothing from alice's own bucket: three requests are left of four.
    ok(&post_as(&svc, &call_tool(3, "other"), Some("alice"), None).await);
    ok(&post_as(
        &svc,
        &body(json!(4), "tools/list", json!({})),
        Some("alice"),
        None,
    )
    .await);
    // `other` is limited for everyone together: bob takes its second token.
    ok(&post_as(&svc, &call_tool(5, "other"), Some("bob"), None).await);
    let refused = post_as(&svc, &call_tool(6, "other"), None, None).await;
    assert_limited(&refused, 6, "global-tool:other", 30_000);
    // bob's echo is his own.
    ok(&post_as(&svc, &call_tool(7, "echo"), Some("bob"), None).await);
    // alice's fourth request, then her bucket is empty.
    ok(&post_as(
        &svc,
        &body(json!(8), "tools/list", json!({})),
        Some("alice"),
        None,
    )
    .await);
    let refused = post_as(
        &svc,
        &body(json!(9), "tools/list", json!({})),
        Some("alice"),
        None,
    )
    .await;
    assert_limited(&refused, 9, "principal", 1000);
    assert_eq!(runs.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn unauthenticated_requests_by_peer_address_or_shared() {
    let (clock, runs) = (TestClock::start(), Arc::new(AtomicUsize::new(0)));
    let limits = RateLimits::new()
        .principal(Rate::per_second(1).and_burst(1))
        .anonymous(Anonymous::PeerAddress);
    let svc = builder(&clock, &runs)
        .rate_limits(limits)
        .build()
        .unwrap()
        .service();
    let a = Some("192.0.2.1:4000");
    ok(&post_as(&svc, &call_tool(1, "echo"), None, a).await);
    // The same address on another port is the same caller.
    let refused = post_as(&svc, &call_tool(2, "echo"), None, Some("192.0.2.1:4001")).await;
    assert_limited(&refused, 2, "principal", 1000);
    ok(&post_as(&svc, &call_tool(3, "echo"), None, Some("[2001:db8::1]:80")).await);
    // Without a peer address (the service driven in-process) no bucket applies.
    ok(&post_as(&svc, &call_tool(4, "echo"), None, None).await);
    ok(&post_as(&svc, &call_tool(5, "echo"), None, None).await);
    // A principal from that address is counted as the principal, not the address.
    ok(&post_as(&svc, &call_tool(6, "echo"), Some("alice"), a).await);

    let shared = builder(&clock, &runs)
        .rate_limits(
            RateLimits::new()
                .principal(Rate::per_second(1).and_burst(1))
                .anonymous(Anonymous::Shared),
        )
        .build()
        .unwrap()
        .service();
    ok(&post_as(&shared, &call_tool(1, "echo"), None, a).await);
    let refused = post_as(&shared, &call_tool(2, "echo"), None, Some("198.51.100.7:1")).await;
    assert_limited(&refused, 2, "principal", 1000);
}

/// A limiter that answers later, as a shared store does, from a memory limiter; it records
/// what it was asked.
#[derive(Debug, Default)]
struct Later {
    inner: MemoryRateLimiter,
    asked: Mutex<Vec<Vec<String>>>,
}

impl RateLimiter for Later {
    fn decide(&self, buckets: &[Bucket<'_>], now: SystemTime) -> Verdict {
        self.asked.lock().unwrap().push(
            buckets
                .iter()
                .map(|b| format!("{}|{}", b.key.rule, b.key.subject.unwrap_or("-")))
                .collect(),
        );
        let decision = match self.inner.decide(buckets, now) {
            Verdict::Ready(d) => d,
            Verdict::Pending(_) => unreachable!(),
        };
        Verdict::Pending(Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            decision
        }))
    }
}

#[tokio::test]
async fn a_limiter_that_answers_later_gates_the_handler_and_the_response() {
    let (clock, runs) = (TestClock::start(), Arc::new(AtomicUsize::new(0)));
    let later = Arc::new(Later::default());
    let limits = RateLimits::new()
        .tool("echo", Rate::per_second(1).and_burst(2))
        .limiter_arc(later.clone());
    let svc = builder(&clock, &runs)
        .rate_limits(limits)
        .build()
        .unwrap()
        .service();
    ok(&post_as(&svc, &call_tool(1, "echo"), Some("alice"), None).await);
    // A client that accepts only SSE still gets the 429 (the decision comes first).
    let sse_only = |id| {
        let b = call_tool(id, "echo");
        let mut req = request(&b)
            .body(Full::new(Bytes::from(b.to_string())))
            .unwrap();
        req.headers_mut().insert(
            "accept",
            http::HeaderValue::from_static("text/event-stream"),
        );
        req.extensions_mut().insert(Principal("alice".into()));
        req
    };
    let reply = send(&svc, sse_only(2)).await;
    assert_eq!(reply.content_type(), "text/event-stream", "allowed: SSE");
    let refused = send(&svc, sse_only(3)).await;
    assert_limited(&refused, 3, "tool:echo", 1000);
    assert_eq!(runs.load(Ordering::SeqCst), 2, "the refused call never ran");
    // Requests without a bucket are not asked about; listen is never asked about.
    ok(&post_as(
        &svc,
        &body(json!(4), "tools/list", json!({})),
        Some("alice"),
        None,
    )
    .await);
    let asked = later.asked.lock().unwrap().clone();
    assert_eq!(asked, vec![vec!["tool:echo|p:alice".to_owned()]; 3]);
}

#[tokio::test]
async fn without_rules_nothing_is_asked() {
    let (clock, runs) = (TestClock::start(), Arc::new(AtomicUsize::new(0)));
    let later = Arc::new(Later::default());
    // A limiter but no rule: off.
    let svc = builder(&clock, &runs)
        .rate_limits(RateLimits::new().limiter_arc(later.clone()))
        .build()
        .unwrap()
        .service();
    for id in 0..20 {
        ok(&post_as(&svc, &call_tool(id, "echo"), Some("alice"), None).await);
    }
    assert!(later.asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn decisions_are_counted_in_the_metrics() {
    let (clock, runs) = (TestClock::start(), Arc::new(AtomicUsize::new(0)));
    let prometheus = smcp_server::metrics::Prometheus::new();
    let server = builder(&clock, &runs)
        .metrics(Arc::new(prometheus.clone()))
        .rate_limits(
            RateLimits::new()
                .principal(Rate::per_second(1).and_burst(3))
                .tool("echo", Rate::per_second(1).and_burst(1)),
        )
        .build()
        .unwrap();
    let svc = server.service();
    ok(&post_as(&svc, &call_tool(1, "echo"), Some("alice"), None).await);
    assert_limited(
        &post_as(&svc, &call_tool(2, "echo"), Some("alice"), None).await,
        2,
        "tool:echo",
        1000,
    );
    ok(&post_as(&svc, &call_tool(3, "other"), Some("alice"), None).await);
    let text = prometheus.render(&server);
    for line in [
        r#"smcp_rate_limit_decisions_total{limit="principal",outcome="allowed"} 2"#,
        r#"smcp_rate_limit_decisions_total{limit="tool:echo",outcome="allowed"} 1"#,
        r#"smcp_rate_limit_decisions_total{limit="tool:echo",outcome="refused"} 1"#,
        r#"smcp_requests_total{method="tools/call",status="4xx",code="application"} 1"#,
    ] {
        assert!(text.contains(line), "{line} in\n{text}");
    }
    assert!(
        !text.contains(r#"limit="principal",outcome="refused""#),
        "{text}"
    );
}

#[cfg(feature = "legacy")]
#[tokio::test]
async fn a_2025_session_request_gets_429_in_its_own_shape() {
    let (clock, runs) = (TestClock::start(), Arc::new(AtomicUsize::new(0)));
    let svc = builder(&clock, &runs)
        .rate_limits(RateLimits::new().tool("echo", Rate::per_minute(1)))
        .build()
        .unwrap()
        .service();
    let post = |session: Option<&str>, body: &Value| {
        let mut b = Request::post("/mcp")
            .header("host", "127.0.0.1:8931")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(s) = session {
            b = b
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-11-25");
        }
        let mut req = b.body(Full::new(Bytes::from(body.to_string()))).unwrap();
        req.extensions_mut().insert(Principal("alice".into()));
        req
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}}});
    let reply = send(&svc, post(None, &init)).await;
    assert_eq!(reply.status, 200);
    let session = reply.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(send(&svc, post(Some(&session), &note)).await.status, 202);
    let call = |id| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                           "params": {"name": "echo", "arguments": {}}})
    };
    let first = send(&svc, post(Some(&session), &call(1))).await;
    assert_eq!(first.status, 200);
    assert_eq!(first.json()["result"]["content"][0]["text"], "echo");
    let refused = send(&svc, post(Some(&session), &call(2))).await;
    assert_limited(&refused, 2, "tool:echo", 60_000);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // The session's own methods are not limited.
    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
    assert_eq!(send(&svc, post(Some(&session), &ping)).await.status, 200);
}

#[cfg(feature = "stdio")]
mod stdio {
    use super::*;
    use smcp_server::{StdioOptions, serve_stream};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    /// Sends `lines` to a stdio connection of `principal` and returns the responses by id.
    async fn exchange(server: &Server, principal: &str, lines: &[Value]) -> Vec<Value> {
        let (mut input, read) = tokio::io::duplex(1 << 16);
        let (write, out) = tokio::io::duplex(1 << 16);
        let server = server.clone();
        let options = StdioOptions {
            principal: Some(Principal(principal.to_owned())),
            ..StdioOptions::default()
        };
        let task = tokio::spawn(async move {
            serve_stream(&server, read, write, std::future::pending(), options).await
        });
        let mut output = BufReader::new(out).lines();
        let mut answers = Vec::new();
        // One at a time, so the order of decisions is the order of the lines.
        for line in lines {
            let mut bytes = serde_json::to_vec(line).unwrap();
            bytes.push(b'\n');
            input.write_all(&bytes).await.unwrap();
            if line.get("id").is_none() {
                continue;
            }
            let got = tokio::time::timeout(Duration::from_secs(5), output.next_line())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            answers.push(serde_json::from_str(&got).unwrap());
        }
        drop(input);
        let _ = task.await;
        answers
    }

    fn refused(v: &Value, id: u64, limit: &str, ms: u64) {
        assert_eq!(v["id"], id, "{v}");
        assert_eq!(v["error"]["code"], SERVER_BUSY, "{v}");
        assert_eq!(
            v["error"]["data"],
            json!({"limit": limit, "retryAfterMs": ms}),
            "{v}"
        );
    }

    #[tokio::test]
    async fn stdio_answers_the_refusal_in_band() {
        let (clock, runs) = (TestClock::start(), Arc::new(AtomicUsize::new(0)));
        let server = builder(&clock, &runs)
            .rate_limits(RateLimits::new().principal(Rate::per_second(2).and_burst(2)))
            .build()
            .unwrap();
        let answers = exchange(
            &server,
            "alice",
            &[
                call_tool(1, "echo"),
                call_tool(2, "echo"),
                call_tool(3, "echo"),
            ],
        )
        .await;
        assert_eq!(answers[0]["result"]["content"][0]["text"], "echo");
        assert_eq!(answers[1]["result"]["content"][0]["text"], "echo");
        refused(&answers[2], 3, "principal", 500);
        assert_eq!(runs.load(Ordering::SeqCst), 2);
    }

    #[cfg(feature = "legacy")]
    #[tokio::test]
    async fn a_stdio_session_answers_the_refusal_in_band() {
        let (clock, runs) = (TestClock::start(), Arc::new(AtomicUsize::new(0)));
        let server = builder(&clock, &runs)
            .rate_limits(RateLimits::new().tool("other", Rate::per_hour(1)))
            .build()
            .unwrap();
        let call = |id, name| {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                                    "params": {"name": name, "arguments": {}}})
        };
        let answers = exchange(
            &server,
            "alice",
            &[
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "old", "version": "1"}}}),
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                call(1, "other"),
                call(2, "other"),
                call(3, "echo"),
            ],
        )
        .await;
        assert_eq!(answers[0]["result"]["protocolVersion"], "2025-11-25");
        assert_eq!(answers[1]["result"]["content"][0]["text"], "other");
        refused(&answers[2], 2, "tool:other", 3_600_000);
        assert_eq!(answers[3]["result"]["content"][0]["text"], "echo");
        assert_eq!(runs.load(Ordering::SeqCst), 2);
    }
}

/// A limiter whose store is down.
#[derive(Debug)]
struct Down;

impl RateLimiter for Down {
    fn decide(&self, _buckets: &[Bucket<'_>], _now: SystemTime) -> Verdict {
        Verdict::Pending(Box::pin(async {
            Err(smcp_server::ratelimit::LimitError::Store(
                "connection refused".into(),
            ))
        }))
    }
}

#[tokio::test]
async fn a_limiter_that_cannot_decide_lets_requests_through_and_counts_it() {
    let (clock, runs) = (TestClock::start(), Arc::new(AtomicUsize::new(0)));
    let prometheus = smcp_server::metrics::Prometheus::new();
    let server = builder(&clock, &runs)
        .metrics(Arc::new(prometheus.clone()))
        .rate_limits(RateLimits::new().principal(Rate::per_hour(1)).limiter(Down))
        .build()
        .unwrap();
    let svc = server.service();
    for id in 1..=3 {
        ok(&post_as(&svc, &call_tool(id, "echo"), Some("alice"), None).await);
    }
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    let text = prometheus.render(&server);
    let line = r#"smcp_rate_limit_decisions_total{limit="principal",outcome="error"} 3"#;
    assert!(text.contains(line), "{text}");
}
