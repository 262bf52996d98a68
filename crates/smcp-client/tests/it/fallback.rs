//! Era detection against scripted servers: what counts as a modern refusal (no fallback),
//! what a stateful session looks like on the wire after the fallback, the per-endpoint memory,
//! re-initialization after a 404, and the error text when no version is shared.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use axum::response::Response;
use common::{id_of, json, result, scripted};
use serde_json::{Value, json};
use smcp_client::{Client, Era};

fn client(url: &str) -> Client {
    Client::builder(url)
        .timeout(Some(Duration::from_secs(10)))
        .build()
        .unwrap()
}

fn method(r: &Value) -> &str {
    r["method"].as_str().unwrap_or("")
}

/// A result carrying `Mcp-Session-Id: sid`.
fn with_session(mut r: Response, sid: &str) -> Response {
    r.headers_mut()
        .insert("mcp-session-id", sid.parse().unwrap());
    r
}

fn initialize_result(r: &Value, version: &str) -> Response {
    result(
        r,
        json!({"protocolVersion": version, "capabilities": {"tools": {}},
               "serverInfo": {"name": "scripted-2025", "version": "1"}}),
    )
}

/// The answer of a stateful server to a request without a session.
fn no_session() -> Response {
    json(
        400,
        json!({"jsonrpc": "2.0", "id": "server-error",
               "error": {"code": -32600, "message": "Bad Request: No valid session ID provided"}}),
    )
}

#[tokio::test]
async fn a_recognized_2026_error_never_falls_back() {
    let cases = [
        (
            400,
            -32022,
            json!({"supported": ["2099-01-01"], "requested": "2026-07-28"}),
        ),
        (400, -32020, Value::Null),
        (400, -32602, Value::Null),
        (404, -32601, Value::Null),
    ];
    for (status, code, data) in cases {
        let s = scripted(move |_, r| {
            json(
                status,
                json!({"jsonrpc": "2.0", "id": id_of(r),
                       "error": {"code": code, "message": "modern refusal", "data": data.clone()}}),
            )
        })
        .await;
        let c = client(&s.url);
        let err = c.list_tools().await.unwrap_err();
        assert_eq!(err.jsonrpc_code(), Some(code), "{err}");
        assert!(
            s.seen().iter().all(|p| method(&p.body) != "initialize"),
            "{code}: fell back"
        );
        assert_eq!(c.era(), Some(Era::Stateless), "{code}");
    }
}

#[tokio::test]
async fn another_eras_error_falls_back_to_a_session_and_the_era_is_remembered() {
    let s = scripted(|_, r| match method(r) {
        "initialize" => with_session(initialize_result(r, "2025-11-25"), "sid-1"),
        "notifications/initialized" => json(202, Value::Null),
        _ if r.get("params").and_then(|p| p.get("_meta")).is_some() => no_session(),
        "tools/list" => result(r, json!({"tools": []})),
        _ => no_session(),
    })
    .await;
    let c = client(&s.url);
    c.list_tools().await.unwrap();
    assert_eq!(c.era(), Some(Era::Session));
    assert_eq!(c.protocol_version(), "2025-11-25");
    let seen = s.seen();
    let methods: Vec<_> = seen.iter().map(|p| method(&p.body).to_owned()).collect();
    assert_eq!(
        methods,
        [
            "tools/list",
            "initialize",
            "notifications/initialized",
            "tools/list"
        ]
    );
    // initialize: no session yet, the capabilities and clientInfo in its params.
    assert!(seen[1].headers.get("mcp-session-id").is_none());
    assert_eq!(seen[1].body["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(seen[1].body["params"]["clientInfo"]["name"], "smcp-client");
    // Then the session id and the negotiated version on every message, no 2026 _meta.
    for post in &seen[2..] {
        assert_eq!(post.headers["mcp-session-id"], "sid-1");
        assert_eq!(post.headers["mcp-protocol-version"], "2025-11-25");
        assert!(post.body["params"].get("_meta").is_none(), "{}", post.body);
    }

    // A second client of the same endpoint skips the 2026-07-28 probe.
    let again = client(&s.url);
    again.list_tools().await.unwrap();
    let methods: Vec<_> = s.seen()[4..]
        .iter()
        .map(|p| method(&p.body).to_owned())
        .collect();
    assert_eq!(
        methods,
        ["initialize", "notifications/initialized", "tools/list"]
    );
}

#[tokio::test]
async fn a_404_on_an_established_session_initializes_again_once() {
    let s = scripted(|n, r| match method(r) {
        "initialize" => with_session(initialize_result(r, "2025-06-18"), &format!("sid-{n}")),
        "notifications/initialized" => json(202, Value::Null),
        _ if r.get("params").and_then(|p| p.get("_meta")).is_some() => no_session(),
        // The first session expires after one request.
        "tools/list" if n == 3 => json(
            404,
            json!({"jsonrpc": "2.0", "id": id_of(r),
            "error": {"code": -32001, "message": "Session not found"}}),
        ),
        "tools/list" => result(r, json!({"tools": []})),
        _ => no_session(),
    })
    .await;
    let c = Client::builder(&s.url)
        .protocol_version("2025-06-18")
        .build()
        .unwrap();
    c.list_tools().await.unwrap();
    c.list_tools().await.unwrap();
    let seen = s.seen();
    let methods: Vec<_> = seen.iter().map(|p| method(&p.body).to_owned()).collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/list",
            "initialize",
            "notifications/initialized",
            "tools/list"
        ]
    );
    // Pinned: no probe; the version header is the pinned one; the retry uses the new session.
    assert_eq!(methods[0], "initialize");
    assert_eq!(seen[0].body["params"]["protocolVersion"], "2025-06-18");
    let last = seen.last().unwrap();
    assert_eq!(method(&last.body), "tools/list");
    assert_ne!(
        last.headers["mcp-session-id"],
        seen[2].headers["mcp-session-id"]
    );
    assert_eq!(last.headers["mcp-protocol-version"], "2025-06-18");
    assert_eq!(methods.iter().filter(|m| *m == "initialize").count(), 2);
}

#[tokio::test]
async fn a_server_offering_only_an_unknown_version_is_refused_with_both_sides_named() {
    let s = scripted(|_, r| match method(r) {
        "initialize" => with_session(initialize_result(r, "2024-10-07"), "sid"),
        _ => no_session(),
    })
    .await;
    let err = client(&s.url).list_tools().await.unwrap_err();
    assert_eq!(err.kind(), smcp_client::ErrorKind::VersionMismatch, "{err}");
    let text = err.to_string();
    assert!(text.contains("this client offered 2025-11-25"), "{text}");
    assert!(
        text.contains("2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05"),
        "{text}"
    );
    assert!(
        text.contains("answered initialize with \"2024-10-07\""),
        "{text}"
    );
}

#[tokio::test]
async fn an_unknown_pin_is_a_configuration_error() {
    let err = Client::builder("http://127.0.0.1:1/mcp")
        .protocol_version("2024-10-07")
        .build()
        .unwrap_err();
    assert!(err.is_config(), "{err}");
    assert!(err.to_string().contains("2025-11-25"), "{err}");
}

#[tokio::test]
async fn a_call_that_times_out_sends_notifications_cancelled_in_the_session() {
    let s = scripted(|_, r| match method(r) {
        "initialize" => with_session(initialize_result(r, "2025-11-25"), "sid"),
        "notifications/initialized" | "notifications/cancelled" => json(202, Value::Null),
        // An SSE response that never ends.
        "tools/call" => Response::builder()
            .status(200)
            .header("content-type", "text/event-stream")
            .body(axum::body::Body::from_stream(
                futures_util::stream::pending::<Result<axum::body::Bytes, std::io::Error>>(),
            ))
            .unwrap(),
        _ => no_session(),
    })
    .await;
    let c = Client::builder(&s.url)
        .protocol_version("2025-11-25")
        .timeout(Some(Duration::from_millis(300)))
        .build()
        .unwrap();
    let err = c.call_tool("slow", json!({})).await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let call_id = s
        .seen()
        .iter()
        .find(|p| method(&p.body) == "tools/call")
        .map(|p| p.body["id"].clone())
        .unwrap();
    let mut cancelled = None;
    for _ in 0..50 {
        cancelled = s
            .seen()
            .into_iter()
            .find(|p| method(&p.body) == "notifications/cancelled");
        if cancelled.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cancelled = cancelled.expect("notifications/cancelled was sent");
    assert_eq!(cancelled.body["params"]["requestId"], call_id);
    assert_eq!(cancelled.headers["mcp-session-id"], "sid");
}

#[tokio::test]
async fn an_http_sse_endpoint_event_naming_another_origin_is_refused() {
    let app = axum::Router::new().route(
        "/sse",
        axum::routing::get(|| async {
            Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .body(axum::body::Body::from(
                    "event: endpoint\ndata: http://elsewhere.example/messages?session=1\n\n",
                ))
                .unwrap()
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let err = client(&format!("http://{addr}/sse"))
        .list_tools()
        .await
        .unwrap_err();
    assert!(err.is_protocol_violation(), "{err}");
    assert!(
        err.to_string()
            .contains("another origin (http://elsewhere.example)"),
        "{err}"
    );
}
