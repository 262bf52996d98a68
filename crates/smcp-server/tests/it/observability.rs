//! Metrics (feature `metrics`) and readiness: what an operator of several instances reads.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use common::{body, call};
use http::Request;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use smcp_server::core::health::{CheckFuture, HealthCheck, Unhealthy};
use smcp_server::metrics::Prometheus;
use smcp_server::prelude::*;
use tower::ServiceExt;

fn server(prometheus: &Prometheus) -> Server {
    Server::builder("obs", "1.0.0")
        .tool(tool("ping").handler(|_call| async { Ok(CallToolResult::text("pong")) }))
        .tool(tool("slow").handler(|_call| async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            Ok(CallToolResult::text("done"))
        }))
        .tool(tool("ask").handler(|call| async move {
            call.input.ask(mrtr::elicit_form(
                "confirm",
                "Sure?",
                json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
            ))?;
            Ok::<_, HandlerError>(CallToolResult::text("asked"))
        }))
        .metrics(Arc::new(prometheus.clone()))
        .build()
        .unwrap()
}

/// Asserts that the exposition has the sample `sample` (a whole line: name, labels, value).
fn has(text: &str, sample: &str) {
    assert!(
        text.lines().any(|l| l == sample),
        "no `{sample}` in:\n{text}"
    );
}

fn line<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.lines().find(|l| l.starts_with(prefix))
}

#[tokio::test]
async fn requests_are_counted_by_method_status_and_code() {
    let prometheus = Prometheus::new();
    let server = server(&prometheus);
    let svc = server.service();
    for id in 0..3 {
        let reply = call(
            &svc,
            &body(json!(id), "tools/call", json!({"name": "ping"})),
        )
        .await;
        assert_eq!(reply.status, 200);
    }
    // An unknown tool: a JSON-RPC error on a 200, told apart by its code; the tool name from
    // the wire is not a label.
    let reply = call(
        &svc,
        &body(json!(9), "tools/call", json!({"name": "no-such-tool-xyz"})),
    )
    .await;
    reply.assert_error(200, -32602, Some(json!(9)));
    // A method nobody serves: labelled "other", never by its name.
    let reply = call(&svc, &body(json!(10), "made/up-method", json!({}))).await;
    assert_eq!(reply.status, 404);

    let text = prometheus.render(&server);
    assert_eq!(
        line(
            &text,
            r#"smcp_requests_total{method="tools/call",status="2xx",code="none"}"#
        ),
        Some(r#"smcp_requests_total{method="tools/call",status="2xx",code="none"} 3"#),
        "{text}"
    );
    has(
        &text,
        r#"smcp_requests_total{method="tools/call",status="2xx",code="-32602"} 1"#,
    );
    has(
        &text,
        r#"smcp_requests_total{method="other",status="4xx",code="-32601"} 1"#,
    );
    assert!(!text.contains("made/up-method"), "{text}");
    assert!(!text.contains("no-such-tool-xyz"), "{text}");
    has(
        &text,
        r#"smcp_request_duration_seconds_count{method="tools/call"} 4"#,
    );
}

#[tokio::test]
async fn requests_over_stdio_are_counted_as_over_http() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let prometheus = Prometheus::new();
    let server = server(&prometheus);
    let (mut input, read) = tokio::io::duplex(1 << 16);
    let (write, mut output) = tokio::io::duplex(1 << 16);
    let mut lines = Vec::new();
    for (id, name) in [
        (1, "ping"),
        (2, "ping"),
        (3, "slow"),
        (4, "no-such-tool-xyz"),
    ] {
        lines.push(body(json!(id), "tools/call", json!({"name": name})));
    }
    lines.push(body(json!(5), "made/up-method", json!({})));
    let mut text = String::new();
    for line in &lines {
        text.push_str(&line.to_string());
        text.push('\n');
    }
    text.push_str("{not json\n");
    input.write_all(text.as_bytes()).await.unwrap();
    drop(input);
    let served = smcp_server::serve_stream(
        &server,
        read,
        write,
        std::future::pending(),
        smcp_server::StdioOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(served, smcp_server::Drained::Complete);
    let mut answers = String::new();
    output.read_to_string(&mut answers).await.unwrap();
    assert_eq!(answers.lines().count(), 6, "{answers}");

    let text = prometheus.render(&server);
    // Ready at once (2), after a wait (1): three results; no HTTP status, so 2xx.
    has(
        &text,
        r#"smcp_requests_total{method="tools/call",status="2xx",code="none"} 3"#,
    );
    has(
        &text,
        r#"smcp_requests_total{method="tools/call",status="2xx",code="-32602"} 1"#,
    );
    has(
        &text,
        r#"smcp_requests_total{method="other",status="2xx",code="-32601"} 1"#,
    );
    has(
        &text,
        r#"smcp_requests_total{method="none",status="2xx",code="-32700"} 1"#,
    );
    assert!(!text.contains("made/up-method"), "{text}");
    has(
        &text,
        r#"smcp_request_duration_seconds_count{method="tools/call"} 4"#,
    );
}

#[tokio::test]
async fn mrtr_rounds_are_counted() {
    let prometheus = Prometheus::new();
    let server = server(&prometheus);
    let svc = server.service();
    let mut first = body(json!(1), "tools/call", json!({"name": "ask"}));
    first["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {}});
    let reply = call(&svc, &first).await;
    let result = reply.json()["result"].clone();
    assert_eq!(result["resultType"], "input_required", "{result}");
    let mut retry = first.clone();
    retry["params"]["inputResponses"] =
        json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    retry["params"]["requestState"] = result["requestState"].clone();
    let reply = call(&svc, &retry).await;
    assert_eq!(reply.json()["result"]["content"][0]["text"], "asked");

    let text = prometheus.render(&server);
    has(&text, r#"smcp_mrtr_rounds_total{round="input_required"} 1"#);
    has(&text, r#"smcp_mrtr_rounds_total{round="retry"} 1"#);
}

#[tokio::test]
async fn file_bytes_and_bus_lag_hooks_reach_the_registry() {
    let prometheus = Prometheus::new();
    let server = server(&prometheus);
    let handle = server.metrics();
    handle.file_bytes(smcp_server::core::metrics::FileDirection::Out, 4096);
    handle.bus_lag(Duration::from_millis(2));
    let text = prometheus.render(&server);
    has(&text, r#"smcp_file_bytes_total{direction="out"} 4096"#);
    assert!(text.contains("smcp_bus_lag_seconds_count 1"), "{text}");
}

/// A check the test turns on and off.
#[derive(Debug, Clone)]
struct Switch(Arc<AtomicBool>);

impl HealthCheck for Switch {
    fn name(&self) -> &str {
        "shared-store"
    }
    fn check(&self) -> CheckFuture<'_> {
        let up = self.0.load(Ordering::SeqCst);
        Box::pin(async move {
            if up {
                Ok(())
            } else {
                Err(Unhealthy::new("connection refused"))
            }
        })
    }
}

/// A check that never answers.
#[derive(Debug)]
struct Hangs;

impl HealthCheck for Hangs {
    fn name(&self) -> &str {
        "slow-bus"
    }
    fn check(&self) -> CheckFuture<'_> {
        Box::pin(std::future::pending())
    }
    fn timeout(&self) -> Duration {
        Duration::from_millis(50)
    }
}

async fn get(endpoint: smcp_server::Endpoint, path: &str, host: &str) -> (u16, Value) {
    let request = Request::get(path)
        .header("host", host)
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = endpoint.oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn readiness_follows_health_checks_and_drain() {
    let up = Arc::new(AtomicBool::new(true));
    let server = Server::builder("obs", "1.0.0")
        .health_check(Switch(up.clone()))
        .build()
        .unwrap();
    let endpoint = || {
        server
            .endpoint("/mcp")
            .readiness("/readyz")
            .liveness("/livez")
    };

    let (status, body) = get(endpoint(), "/readyz", "127.0.0.1").await;
    assert_eq!((status, &body), (200, &json!({"status": "ready"})));

    up.store(false, Ordering::SeqCst);
    let (status, body) = get(endpoint(), "/readyz", "127.0.0.1").await;
    assert_eq!(status, 503);
    assert_eq!(
        body,
        json!({"status": "failing", "failing": [{"check": "shared-store", "reason": "connection refused"}]})
    );
    // Liveness does not depend on the checks.
    let (status, body) = get(endpoint(), "/livez", "127.0.0.1").await;
    assert_eq!((status, &body), (200, &json!({"status": "live"})));

    up.store(true, Ordering::SeqCst);
    server.shutdown();
    let (status, body) = get(endpoint(), "/readyz", "127.0.0.1").await;
    assert_eq!((status, &body), (503, &json!({"status": "draining"})));
}

#[tokio::test]
async fn a_check_that_hangs_fails_at_its_timeout() {
    let server = Server::builder("obs", "1.0.0")
        .health_check(Hangs)
        .build()
        .unwrap();
    let verdict = server.readiness().await;
    assert_eq!(
        verdict.to_json(),
        json!({"status": "failing", "failing": [{"check": "slow-bus", "reason": "no answer within 50 ms"}]})
    );
}

#[tokio::test]
async fn probes_keep_the_host_checks_and_answer_get_only() {
    let server = Server::builder("obs", "1.0.0").build().unwrap();
    let endpoint = server.endpoint("/mcp").readiness("/readyz");
    let (status, _) = get(endpoint.clone(), "/readyz", "evil.example").await;
    assert_eq!(status, 403);
    let request = Request::post("/readyz")
        .header("host", "localhost")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = endpoint.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 405);
    assert_eq!(response.headers()["allow"], "GET, HEAD");
    // Without a probe path configured, the path is not answered.
    let (status, _) = get(server.endpoint("/mcp"), "/readyz", "localhost").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn the_ops_router_serves_metrics_and_readiness() {
    let prometheus = Prometheus::new();
    let server = server(&prometheus);
    let reply = call(
        &server.service(),
        &body(json!(1), "tools/call", json!({"name": "ping"})),
    )
    .await;
    assert_eq!(reply.status, 200);
    let ops = smcp_server::http::OpsRouter::new(&server)
        .readiness("/readyz")
        .metrics("/metrics", prometheus)
        .build();
    let response = ops
        .clone()
        .oneshot(
            Request::get("/metrics")
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/openmetrics-text")
    );
    let text = String::from_utf8(
        response
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec(),
    )
    .unwrap();
    has(
        &text,
        r#"smcp_requests_total{method="tools/call",status="2xx",code="none"} 1"#,
    );
    assert!(text.contains("smcp_listen_streams 0"), "{text}");
    let response = ops
        .oneshot(
            Request::get("/readyz")
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}
