//! Upstreams that misbehave: the call they belong to fails with a precise error naming the
//! upstream, the upstream is marked down where it is the cause, and every other upstream
//! keeps serving.
//!
//! The misbehaving upstream is a real smcp server behind an axum handler that answers the
//! calls of a few tools itself, wrongly.

use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, Server, tool};

use crate::common::{self, Served};

fn echo_server(name: &str, tools: &[&str]) -> Server {
    let mut builder = Server::builder(name, "1");
    for tool_name in tools {
        builder = builder.tool(
            tool(*tool_name)
                .input_schema(json!({"type": "object"}))
                .handler(|call| async move {
                    Ok::<_, HandlerError>(CallToolResult::text(format!("{} ran", call.name)))
                }),
        );
    }
    builder.build().unwrap()
}

/// An upstream listing `malformed`, `wrong_id`, `oversized`, `silent` and `fine`, answering
/// the first four wrongly.
async fn misbehaving() -> Served {
    let inner = echo_server(
        "bad",
        &["malformed", "wrong_id", "oversized", "silent", "fine"],
    );
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::any(move |request: Request| {
            let inner = inner.clone();
            async move { answer(&inner, request).await }
        }),
    );
    common::serve(app).await
}

async fn answer(inner: &Server, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    let message: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let id = message["id"].clone();
    let json = |text: String| {
        Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(text))
            .unwrap()
    };
    if message["method"] == "tools/list" {
        // The inner server's list, with one tool no server can serve (its schema's `type`
        // is a number) that the gateway must leave out.
        let request = http::Request::from_parts(parts, http_body_util::Full::new(bytes));
        let response = inner.service().handle(request).await;
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let mut listed: Value = serde_json::from_slice(&body).unwrap();
        listed["result"]["tools"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "unservable", "inputSchema": {"type": 5}}));
        return json(listed.to_string());
    }
    if message["method"] == "tools/call" {
        match message["params"]["name"].as_str() {
            Some("malformed") => return json("{\"jsonrpc\": \"2.0\", \"id\": ".to_owned()),
            Some("wrong_id") => {
                return json(
                    json!({"jsonrpc": "2.0", "id": 999_999, "result": {"content": []}}).to_string(),
                );
            }
            Some("oversized") => {
                let text = "x".repeat(33 * 1024 * 1024);
                return json(
                    json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", "content": [{"type": "text", "text": text}]}})
                        .to_string(),
                );
            }
            Some("silent") => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            _ => {}
        }
    }
    let request = http::Request::from_parts(parts, http_body_util::Full::new(bytes));
    inner.service().handle(request).await.map(Body::new)
}

#[tokio::test]
async fn each_misbehaviour_fails_its_call_precisely_and_the_other_upstream_serves_on() {
    let bad = misbehaving().await;
    let good_server = echo_server("good", &["ping"]);
    let good = common::serve_server(&good_server).await;
    let (gateway, server, prometheus) = common::gateway_measured(&format!(
        "[[upstream]]\nname = \"bad\"\nurl = \"{}\"\ntimeout = \"500ms\"\n\n\
         [[upstream]]\nname = \"good\"\nurl = \"{}\"\n",
        bad.url, good.url
    ))
    .await;
    let svc = server.service();
    let cases = [
        ("bad_malformed", "upstream \"bad\""),
        ("bad_wrong_id", "upstream \"bad\""),
        ("bad_oversized", "upstream \"bad\""),
        ("bad_silent", "upstream \"bad\" did not answer in time"),
    ];
    for (name, expected) in cases {
        let started = std::time::Instant::now();
        let (status, body) = common::call(&svc, name, json!({"arguments": {}})).await;
        assert_eq!(status, 200, "{name}: {body}");
        assert_eq!(body["error"]["code"], -32603, "{name}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(expected), "{name}: {message}");
        assert!(
            message.len() < 600,
            "{name}: the payload is not echoed ({} bytes)",
            message.len()
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{name}: bounded in time"
        );
        // The other upstream is untouched.
        let (_, body) = common::call(&svc, "good_ping", json!({"arguments": {}})).await;
        assert_eq!(
            body["result"]["content"][0]["text"], "ping ran",
            "{name}: {body}"
        );
    }
    // A broken answer marks its upstream down (readiness names it); its next good answer
    // brings it back.
    let (_, body) = common::call(&svc, "bad_malformed", json!({"arguments": {}})).await;
    assert!(body["error"].is_object(), "{body}");
    let down = gateway.down();
    assert_eq!(down.len(), 1, "{down:?}");
    assert_eq!(down[0].0, "bad");
    let readiness = server.readiness().await;
    assert!(!readiness.is_ready(), "{readiness:?}");
    assert!(format!("{readiness:?}").contains("bad"), "{readiness:?}");
    let (_, body) = common::call(&svc, "bad_fine", json!({"arguments": {}})).await;
    assert_eq!(body["result"]["content"][0]["text"], "fine ran", "{body}");
    assert!(gateway.down().is_empty(), "{:?}", gateway.down());
    assert!(server.readiness().await.is_ready());

    // Each upstream's requests, by outcome, in the gateway's metrics.
    let text = prometheus.render(&server);
    for series in [
        r#"smcp_upstream_requests_total{upstream="bad",outcome="failed"} 5"#,
        r#"smcp_upstream_requests_total{upstream="bad",outcome="ok"} 1"#,
        r#"smcp_upstream_requests_total{upstream="good",outcome="ok"} 4"#,
    ] {
        assert!(text.contains(series), "{series} in {text}");
    }
}

#[tokio::test]
async fn an_upstream_down_at_start_is_named_and_the_others_serve() {
    let good_server = echo_server("good", &["ping"]);
    let good = common::serve_server(&good_server).await;
    let bad = misbehaving().await;
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_addr = closed.local_addr().unwrap();
    let closed_url = format!("http://{closed_addr}/mcp");
    drop(closed);
    let (gateway, server) = common::gateway(&format!(
        "[[upstream]]\nname = \"missing\"\nurl = \"{closed_url}\"\n\n\
         [[upstream]]\nname = \"good\"\nurl = \"{}\"\n\n\
         [[upstream]]\nname = \"bad\"\nurl = \"{}\"\n",
        good.url, bad.url
    ))
    .await;
    let down = gateway.down();
    assert_eq!(down.len(), 1, "{down:?}");
    assert_eq!(down[0].0, "missing");
    let readiness = format!("{:?}", server.readiness().await);
    assert!(readiness.contains("missing"), "{readiness}");
    let svc = server.service();
    let (_, body) = common::call(&svc, "good_ping", json!({"arguments": {}})).await;
    assert_eq!(body["result"]["content"][0]["text"], "ping ran", "{body}");
    // The upstream's tool that cannot be served is left out; the rest of its list is served.
    let (_, body) = common::call(&svc, "bad_fine", json!({"arguments": {}})).await;
    assert_eq!(body["result"]["content"][0]["text"], "fine ran", "{body}");
    let (_, body) = common::call(&svc, "bad_unservable", json!({"arguments": {}})).await;
    assert!(body["error"].is_object(), "not served: {body}");

    // When it comes up, its tools join the catalog and it is no longer named.
    let listener = tokio::net::TcpListener::bind(closed_addr).await.unwrap();
    let late_server = echo_server("late", &["hello"]);
    tokio::spawn(smcp_server::serve(
        listener,
        late_server.service(),
        smcp_server::ServeOptions::default(),
        std::future::pending::<()>(),
    ));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (_, body) = common::call(&svc, "missing_hello", json!({"arguments": {}})).await;
        if body["result"]["content"][0]["text"] == "hello ran" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never served: {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gateway.down().is_empty(), "{:?}", gateway.down());
}

#[tokio::test]
async fn a_program_that_cannot_be_started_stops_the_start_naming_it() {
    let config = smcp_gateway::GatewayConfig::parse(
        "[[upstream]]\nname = \"missing\"\ncommand = [\"/nonexistent/mcp-server\"]\n",
    )
    .unwrap();
    let error = smcp_gateway::Gateway::start(config).await.unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("upstream \"missing\"") && text.contains("/nonexistent/mcp-server"),
        "{text}"
    );
}
