//! JSON vs SSE selection, progress and logging opt-in, and cancellation when the client
//! closes the response stream (REQUIREMENTS A1 items 6, 7, 10, 15; A9; A10).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    clippy::type_complexity
)]

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use http_body_util::BodyExt;
use serde_json::json;
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, Server, tool};
use tokio::sync::Notify;

fn with_progress_token(mut b: serde_json::Value, token: serde_json::Value) -> serde_json::Value {
    b["params"]["_meta"]["progressToken"] = token;
    b
}

#[tokio::test]
async fn progress_switches_the_response_to_sse() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let b = with_progress_token(
        body(json!("p1"), "tools/call", json!({"name": "progress3"})),
        json!("tok-1"),
    );
    let reply = call(&svc, &b).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.content_type(), "text/event-stream");
    assert_eq!(reply.headers["x-accel-buffering"], "no");
    assert_eq!(reply.headers["cache-control"], "no-cache");
    let messages = reply.sse_messages();
    assert_eq!(messages.len(), 4, "{messages:?}");
    for (i, m) in messages[..3].iter().enumerate() {
        assert_eq!(m["method"], "notifications/progress");
        assert_eq!(m["params"]["progressToken"], "tok-1");
        assert_eq!(m["params"]["progress"], i as u64 + 1);
        assert_eq!(m["params"]["total"], 3);
        assert!(m.get("id").is_none(), "a notification, never a request");
    }
    let last = &messages[3];
    assert_eq!(last["id"], "p1");
    assert_eq!(last["result"]["resultType"], "complete");
    assert_eq!(
        last["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "probe"
    );
    // No log level was requested, so no notifications/message was sent.
    assert!(
        messages
            .iter()
            .all(|m| m["method"] != "notifications/message")
    );
}

#[tokio::test]
async fn numeric_progress_tokens_keep_their_type() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let b = with_progress_token(
        body(json!(7), "tools/call", json!({"name": "progress3"})),
        json!(42),
    );
    let messages = call(&svc, &b).await.sse_messages();
    assert_eq!(messages[0]["params"]["progressToken"], 42);
    assert_eq!(messages[3]["id"], 7);
}

#[tokio::test]
async fn without_a_progress_token_the_answer_is_json() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let b = body(json!(1), "tools/call", json!({"name": "progress3"}));
    let reply = call(&svc, &b).await;
    assert_eq!(reply.content_type(), "application/json");
    assert_eq!(reply.json()["result"]["content"][0]["text"], "done");
}

#[tokio::test]
async fn json_only_clients_get_json_and_no_notifications() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let b = with_progress_token(
        body(json!(1), "tools/call", json!({"name": "progress3"})),
        json!("t"),
    );
    let req = request(&b)
        .header("accept", "application/json")
        .body(full(&b))
        .unwrap();
    let mut req = req;
    req.headers_mut()
        .insert("accept", "application/json".parse().unwrap());
    let reply = send(&svc, req).await;
    assert_eq!(reply.content_type(), "application/json");
    assert_eq!(reply.json()["result"]["content"][0]["text"], "done");
}

#[tokio::test]
async fn sse_only_clients_get_sse_even_without_notifications() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let b = body(json!(1), "tools/call", json!({"name": "progress3"}));
    let mut req = request(&b).body(full(&b)).unwrap();
    req.headers_mut()
        .insert("accept", "text/event-stream".parse().unwrap());
    let reply = send(&svc, req).await;
    assert_eq!(reply.content_type(), "text/event-stream");
    let messages = reply.sse_messages();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["result"]["content"][0]["text"], "done");
}

#[tokio::test]
async fn log_messages_only_when_the_request_asks() {
    let runs = Runs::default();
    let svc = probe_server(&runs);
    let mut b = with_progress_token(
        body(json!(1), "tools/call", json!({"name": "progress3"})),
        json!("t"),
    );
    b["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let messages = call(&svc, &b).await.sse_messages();
    let logs: Vec<_> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert_eq!(logs.len(), 1, "{messages:?}");
    assert_eq!(logs[0]["params"]["level"], "info");
    assert_eq!(logs[0]["params"]["data"], "done");

    // A stricter level filters the info message out.
    b["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("error");
    let messages = call(&svc, &b).await.sse_messages();
    assert!(
        messages
            .iter()
            .all(|m| m["method"] != "notifications/message")
    );
}

#[tokio::test]
async fn logging_needs_the_capability() {
    // Same tool on a server that did not declare logging: the request's opt-in is not enough.
    let runs = Runs::default();
    let svc = probe_tools(Server::builder("p", "1"), &runs)
        .build()
        .unwrap()
        .service();
    let mut b = body(json!(1), "tools/call", json!({"name": "progress3"}));
    b["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("debug");
    let reply = call(&svc, &b).await;
    assert_eq!(reply.content_type(), "application/json");
}

/// The handler emits one progress notification (so the response becomes SSE), then waits
/// for cancellation and records that it saw it.
fn cancellable_server(observed: Arc<Notify>) -> smcp_server::McpService {
    Server::builder("c", "1")
        .tool(tool("wait").handler(move |call| {
            let observed = observed.clone();
            async move {
                call.ctx
                    .progress(1.0, None, None)
                    .await
                    .map_err(|e| HandlerError::failed(e.to_string()))?;
                tokio::select! {
                    () = call.ctx.cancelled() => {
                        observed.notify_one();
                        // Nothing more may be sent for a cancelled request.
                        assert!(call.ctx.progress(2.0, None, None).await.is_err());
                        Err(HandlerError::failed("cancelled"))
                    }
                    () = tokio::time::sleep(Duration::from_secs(30)) => {
                        Ok(CallToolResult::text("not cancelled"))
                    }
                }
            }
        }))
        .build()
        .unwrap()
        .service()
}

#[tokio::test]
async fn closing_the_stream_cancels_the_handler() {
    let observed = Arc::new(Notify::new());
    let svc = cancellable_server(observed.clone());
    let b = with_progress_token(
        body(json!(1), "tools/call", json!({"name": "wait"})),
        json!("t"),
    );
    let response = svc.handle(request(&b).body(full(&b)).unwrap()).await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert!(
        std::str::from_utf8(&first)
            .unwrap()
            .contains("notifications/progress")
    );
    // The client goes away.
    drop(body);
    tokio::time::timeout(Duration::from_secs(5), observed.notified())
        .await
        .expect("the handler observed the cancellation");
}
