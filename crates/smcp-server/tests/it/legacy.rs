//! The stateful revisions on the same endpoint (issue 13): `initialize` and sessions, the
//! session's own methods, a handler's input rounds as server-to-client requests, the GET
//! stream, cancellation, and every bad input with its exact status and JSON-RPC code.

#![cfg(feature = "legacy")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::legacy::{LegacyConfig, MemorySessionStore};
use smcp_server::{Change, HandlerError, LoggingLevel, McpBody, McpService, Server, mrtr, tool};

const V2025: &str = "2025-11-25";

struct Fixture {
    server: Server,
    svc: McpService,
    cancelled: Arc<AtomicBool>,
}

fn fixture(max_sessions: usize) -> Fixture {
    let cancelled = Arc::new(AtomicBool::new(false));
    let seen = cancelled.clone();
    let server = Server::builder("legacy", "1.0.0")
        .instructions("Be kind.")
        .logging(true)
        .tools_list_changed(true)
        .resources_subscribe(true)
        .tool(
            tool("greet")
                .description("asks for a name")
                .requires_client_capability("elicitation")
                .handler(|call| async move {
                    call.ctx.progress(1.0, Some(2.0), Some("asking")).await?;
                    call.ctx
                        .log(LoggingLevel::Info, None, json!("asking"))
                        .await?;
                    call.ctx
                        .log(LoggingLevel::Debug, None, json!("filtered out"))
                        .await?;
                    let answer = call.input.ask(mrtr::elicit_form(
                        "who",
                        "Your name?",
                        json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                    ))?;
                    let name = answer
                        .content
                        .as_ref()
                        .and_then(|c| serde_json::to_value(c).ok())
                        .and_then(|c| c["name"].as_str().map(str::to_owned))
                        .unwrap_or_default();
                    Ok::<_, HandlerError>(CallToolResult::text(format!("Hello, {name}!")))
                }),
        )
        .tool(tool("echo").description("echo").handler(|call| async move {
            Ok::<_, HandlerError>(CallToolResult::text(
                call.str_arg("text").unwrap_or_default().to_owned(),
            ))
        }))
        .tool(
            tool("wait")
                .description("waits for cancellation")
                .handler(move |call| {
                    let seen = seen.clone();
                    async move {
                        call.ctx.progress(1.0, None, None).await?;
                        call.ctx.cancelled().await;
                        seen.store(true, Ordering::SeqCst);
                        Ok::<_, HandlerError>(CallToolResult::text("cancelled"))
                    }
                }),
        )
        .legacy(LegacyConfig {
            max_sessions,
            ..LegacyConfig::default()
        })
        .session_store(MemorySessionStore::new(
            max_sessions,
            Duration::from_secs(600),
        ))
        .build()
        .unwrap();
    let svc = server.service();
    Fixture {
        server,
        svc,
        cancelled,
    }
}

fn post(session: Option<&str>, version: Option<&str>, body: &Value) -> Request<Full<Bytes>> {
    let mut b = Request::post("/mcp")
        .header("host", "127.0.0.1:8931")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(s) = session {
        b = b.header("mcp-session-id", s);
    }
    if let Some(v) = version {
        b = b.header("mcp-protocol-version", v);
    }
    b.body(Full::new(Bytes::from(body.to_string()))).unwrap()
}

fn other(method: http::Method, session: Option<&str>) -> Request<Full<Bytes>> {
    let mut b = Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", "127.0.0.1:8931")
        .header("accept", "text/event-stream");
    if let Some(s) = session {
        b = b.header("mcp-session-id", s);
    }
    b.body(Full::new(Bytes::new())).unwrap()
}

struct Reply {
    status: StatusCode,
    headers: http::HeaderMap,
    body: Value,
}

async fn send(svc: &McpService, req: Request<Full<Bytes>>) -> Reply {
    let response = svc.handle(req).await;
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap()
    };
    Reply {
        status,
        headers,
        body,
    }
}

fn assert_refused(reply: &Reply, status: u16, code: i64, id: Value) {
    assert_eq!(reply.status.as_u16(), status, "{}", reply.body);
    assert_eq!(reply.body["error"]["code"], code, "{}", reply.body);
    assert_eq!(reply.body["id"], id, "{}", reply.body);
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
}

fn initialize(id: i64, version: &str, caps: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": caps,
        "clientInfo": {"name": "old-client", "version": "1"}}})
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Starts a session and sends `notifications/initialized`; returns its id.
async fn session(svc: &McpService, caps: Value) -> String {
    let reply = send(svc, post(None, None, &initialize(1, V2025, caps))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let id = reply.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = send(svc, post(Some(&id), Some(V2025), &note)).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED);
    id
}

/// Reads SSE events from a streaming body: (id, data) pairs, `n` of them.
async fn events(body: &mut McpBody, buf: &mut String, n: usize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    while out.len() < n {
        if let Some(end) = buf.find("\n\n") {
            let event: String = buf.drain(..end + 2).collect();
            let mut id = String::new();
            let mut data = String::new();
            for line in event.lines() {
                if let Some(v) = line.strip_prefix("id: ") {
                    id = v.to_owned();
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data.push_str(v);
                }
            }
            out.push((id, data));
            continue;
        }
        let frame = tokio::time::timeout(Duration::from_secs(5), body.frame())
            .await
            .expect("an event within 5 s")
            .expect("the stream is open")
            .unwrap();
        if let Ok(data) = frame.into_data() {
            buf.push_str(std::str::from_utf8(&data).unwrap());
        }
    }
    out
}

#[tokio::test]
async fn initialize_negotiates_and_describes_the_server() {
    let f = fixture(10);
    for (asked, got) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", V2025),
    ] {
        let reply = send(&f.svc, post(None, None, &initialize(7, asked, json!({})))).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        let session = reply.headers["mcp-session-id"].to_str().unwrap();
        assert!(session.len() >= 32);
        assert!(session.bytes().all(|b| (0x21..=0x7e).contains(&b)));
        let result = &reply.body["result"];
        assert_eq!(reply.body["id"], 7);
        assert_eq!(result["protocolVersion"], got);
        assert_eq!(result["serverInfo"]["name"], "legacy");
        assert_eq!(result["instructions"], "Be kind.");
        assert_eq!(result["capabilities"]["logging"], json!({}));
        assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
        assert_eq!(result["capabilities"]["resources"]["subscribe"], true);
        assert!(result.get("resultType").is_none() && result.get("_meta").is_none());
    }
    // An initialize with an earlier version header is legacy too.
    let reply = send(
        &f.svc,
        post(None, Some(V2025), &initialize(8, V2025, json!({}))),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.headers.contains_key("mcp-session-id"));
    // Its params are checked.
    let bad =
        json!({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {"capabilities": {}}});
    assert_refused(
        &send(&f.svc, post(None, None, &bad)).await,
        400,
        -32602,
        json!(9),
    );
}

#[tokio::test]
async fn session_methods_and_results_in_the_earlier_shape() {
    let f = fixture(10);
    let s = session(&f.svc, json!({})).await;
    let ping = send(
        &f.svc,
        post(Some(&s), Some(V2025), &rpc(2, "ping", json!({}))),
    )
    .await;
    assert_eq!(
        (ping.status, &ping.body["result"]),
        (StatusCode::OK, &json!({}))
    );
    let set = rpc(3, "logging/setLevel", json!({"level": "info"}));
    assert_eq!(
        send(&f.svc, post(Some(&s), None, &set)).await.body["result"],
        json!({})
    );
    let bad = rpc(4, "logging/setLevel", json!({"level": "loud"}));
    assert_refused(
        &send(&f.svc, post(Some(&s), None, &bad)).await,
        200,
        -32602,
        json!(4),
    );
    let sub = rpc(5, "resources/subscribe", json!({"uri": "test://a"}));
    assert_eq!(
        send(&f.svc, post(Some(&s), None, &sub)).await.body["result"],
        json!({})
    );
    let unsub = rpc(6, "resources/unsubscribe", json!({"uri": "test://a"}));
    assert_eq!(
        send(&f.svc, post(Some(&s), None, &unsub)).await.body["result"],
        json!({})
    );
    // 2026-07-28-only methods do not exist here.
    let discover = rpc(7, "server/discover", json!({}));
    assert_refused(
        &send(&f.svc, post(Some(&s), None, &discover)).await,
        200,
        -32601,
        json!(7),
    );
    let list = send(
        &f.svc,
        post(Some(&s), None, &rpc(8, "tools/list", json!({}))),
    )
    .await;
    let result = &list.body["result"];
    assert!(result["tools"].as_array().is_some_and(|t| t.len() == 3));
    for member in ["resultType", "ttlMs", "cacheScope", "_meta"] {
        assert!(result.get(member).is_none(), "{member} in {result}");
    }
    // A call that needs nothing from the client answers with JSON.
    let call = rpc(
        9,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let reply = send(&f.svc, post(Some(&s), None, &call)).await;
    assert_eq!(reply.status, StatusCode::OK);
}

#[tokio::test]
async fn a_handler_that_asks_gets_its_answer_from_a_server_to_client_request() {
    let f = fixture(10);
    let s = session(&f.svc, json!({"elicitation": {}})).await;
    let set = rpc(2, "logging/setLevel", json!({"level": "info"}));
    send(&f.svc, post(Some(&s), None, &set)).await;
    let call = rpc(
        3,
        "tools/call",
        json!({"name": "greet", "arguments": {}, "_meta": {"progressToken": "p"}}),
    );
    let response = f.svc.handle(post(Some(&s), Some(V2025), &call)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    let mut buf = String::new();
    let got = events(&mut body, &mut buf, 4).await;
    // The priming event: an id, no data.
    assert_eq!(got[0].1, "");
    assert!(got[0].0.ends_with("-0"));
    let progress: Value = serde_json::from_str(&got[1].1).unwrap();
    assert_eq!(progress["method"], "notifications/progress");
    assert_eq!(progress["params"]["progressToken"], "p");
    let log: Value = serde_json::from_str(&got[2].1).unwrap();
    assert_eq!(
        (log["method"].as_str(), &log["params"]["data"]),
        (Some("notifications/message"), &json!("asking"))
    );
    let ask: Value = serde_json::from_str(&got[3].1).unwrap();
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(ask["params"]["message"], "Your name?");
    let ask_id = ask["id"].clone();
    assert!(ask_id.is_string());
    // A response for an id the server never sent is refused precisely.
    let stray = json!({"jsonrpc": "2.0", "id": "nope", "result": {"action": "cancel"}});
    let refused = send(&f.svc, post(Some(&s), Some(V2025), &stray)).await;
    assert_refused(&refused, 400, -32600, Value::Null);
    let answer = json!({"jsonrpc": "2.0", "id": ask_id,
        "result": {"action": "accept", "content": {"name": "Ada"}}});
    let taken = send(&f.svc, post(Some(&s), Some(V2025), &answer)).await;
    assert_eq!(taken.status, StatusCode::ACCEPTED);
    // The same response twice: nothing waits for it any more.
    let again = send(&f.svc, post(Some(&s), Some(V2025), &answer)).await;
    assert_refused(&again, 400, -32600, Value::Null);
    // The handler runs again with the answer (as a 2026-07-28 retry would): its progress and
    // log again, then the response.
    let done = events(&mut body, &mut buf, 3).await;
    assert!(done[0].1.contains("notifications/progress"));
    assert!(done[1].1.contains("notifications/message"));
    let result: Value = serde_json::from_str(&done[2].1).unwrap();
    assert_eq!(result["id"], 3);
    assert_eq!(result["result"]["content"][0]["text"], "Hello, Ada!");
    assert!(result["result"].get("resultType").is_none());
    assert!(
        body.frame().await.is_none(),
        "the stream ends after the response"
    );

    // Last-Event-ID on GET replays what followed the given event of that stream.
    let first = &got[1].0;
    let mut get = other(http::Method::GET, Some(&s));
    get.headers_mut()
        .insert("last-event-id", first.parse().unwrap());
    let replay = f.svc.handle(get).await;
    assert_eq!(replay.status(), StatusCode::OK);
    let mut body = replay.into_body();
    let mut buf = String::new();
    let replayed = events(&mut body, &mut buf, 5).await;
    assert_eq!(replayed[0].0, got[2].0);
    assert_eq!(replayed[4].1, done[2].1);
}

#[tokio::test]
async fn required_capabilities_come_from_initialize() {
    let f = fixture(10);
    let s = session(&f.svc, json!({})).await;
    let call = rpc(2, "tools/call", json!({"name": "greet", "arguments": {}}));
    let reply = send(&f.svc, post(Some(&s), None, &call)).await;
    assert_refused(&reply, 200, -32021, json!(2));
}

#[tokio::test]
async fn cancelled_notification_cancels_the_request_in_flight() {
    let f = fixture(10);
    let s = session(&f.svc, json!({})).await;
    let call = rpc(
        4,
        "tools/call",
        json!({"name": "wait", "arguments": {}, "_meta": {"progressToken": 1}}),
    );
    let response = f.svc.handle(post(Some(&s), None, &call)).await;
    let mut body = response.into_body();
    let mut buf = String::new();
    let got = events(&mut body, &mut buf, 2).await;
    assert!(got[1].1.contains("notifications/progress"));
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}});
    assert_eq!(
        send(&f.svc, post(Some(&s), None, &cancel)).await.status,
        StatusCode::ACCEPTED
    );
    // The stream ends without a response.
    let end = tokio::time::timeout(Duration::from_secs(5), body.frame())
        .await
        .unwrap();
    assert!(end.is_none());
    assert!(f.cancelled.load(Ordering::SeqCst));
}

#[tokio::test]
async fn the_get_stream_carries_list_changed_and_subscribed_updates() {
    let f = fixture(10);
    let s = session(&f.svc, json!({})).await;
    assert_eq!(
        send(&f.svc, other(http::Method::GET, None)).await.status,
        StatusCode::METHOD_NOT_ALLOWED
    );
    let sub = rpc(2, "resources/subscribe", json!({"uri": "test://watched"}));
    send(&f.svc, post(Some(&s), None, &sub)).await;
    let response = f.svc.handle(other(http::Method::GET, Some(&s))).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    let mut buf = String::new();
    let primed = events(&mut body, &mut buf, 1).await;
    assert_eq!(primed[0].1, "");
    // One standalone stream per session.
    let second = send(&f.svc, other(http::Method::GET, Some(&s))).await;
    assert_refused(&second, 409, -32600, Value::Null);
    f.server.publish(Change::ToolsListChanged);
    f.server.publish(Change::resource_updated("test://other"));
    f.server.publish(Change::resource_updated("test://watched"));
    let got = events(&mut body, &mut buf, 2).await;
    let a: Value = serde_json::from_str(&got[0].1).unwrap();
    let b: Value = serde_json::from_str(&got[1].1).unwrap();
    assert_eq!(a["method"], "notifications/tools/list_changed");
    assert_eq!(b["method"], "notifications/resources/updated");
    assert_eq!(b["params"]["uri"], "test://watched");
    assert!(!got[0].0.is_empty() && got[0].0 != got[1].0);
}

#[tokio::test]
async fn bad_inputs_get_exact_statuses_and_codes() {
    let f = fixture(2);
    let s = session(&f.svc, json!({})).await;
    // Unknown session.
    let list = rpc(2, "tools/list", json!({}));
    assert_refused(
        &send(&f.svc, post(Some("no-such-session"), Some(V2025), &list)).await,
        404,
        -32600,
        json!(2),
    );
    // A legacy version header without a session.
    assert_refused(
        &send(&f.svc, post(None, Some(V2025), &list)).await,
        400,
        -32600,
        json!(2),
    );
    // initialize on a session.
    let again = initialize(3, V2025, json!({}));
    assert_refused(
        &send(&f.svc, post(Some(&s), Some(V2025), &again)).await,
        400,
        -32600,
        json!(3),
    );
    // A header version other than the session's.
    assert_refused(
        &send(&f.svc, post(Some(&s), Some("2025-06-18"), &list)).await,
        400,
        -32600,
        json!(2),
    );
    // Mixed eras: 2026-07-28 _meta on a session request, with or without the version header.
    let mixed = rpc(
        4,
        "tools/list",
        json!({"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    assert_refused(
        &send(&f.svc, post(Some(&s), None, &mixed)).await,
        400,
        -32602,
        json!(4),
    );
    assert_refused(
        &send(&f.svc, post(Some(&s), Some(V2025), &mixed)).await,
        400,
        -32602,
        json!(4),
    );
    // A legacy version header with 2026 _meta and no session: a 2026-07-28 request whose
    // header does not match its _meta.
    assert_refused(
        &send(&f.svc, post(None, Some(V2025), &mixed)).await,
        400,
        -32020,
        json!(4),
    );
    // A batch.
    let batch = json!([list.clone()]);
    assert_refused(
        &send(&f.svc, post(Some(&s), None, &batch)).await,
        400,
        -32600,
        Value::Null,
    );
    // Requests before notifications/initialized (ping is allowed).
    let fresh = send(&f.svc, post(None, None, &initialize(5, V2025, json!({})))).await;
    let fresh = fresh.headers["mcp-session-id"].to_str().unwrap().to_owned();
    assert_refused(
        &send(&f.svc, post(Some(&fresh), None, &list)).await,
        400,
        -32600,
        json!(2),
    );
    let ping = send(&f.svc, post(Some(&fresh), None, &rpc(6, "ping", json!({})))).await;
    assert_eq!(ping.body["result"], json!({}));
    // The store is full (two sessions): a third is refused with 503 and SERVER_BUSY.
    let full = send(&f.svc, post(None, None, &initialize(7, V2025, json!({})))).await;
    assert_refused(&full, 503, smcp_server::SERVER_BUSY, json!(7));
    assert_eq!(full.body["error"]["data"]["limit"], "sessions");
    assert!(!full.headers.contains_key("mcp-session-id"));
    // A 2026-07-28 request carrying a session id: served as always, no session echoed or
    // minted (the store stays full, so a minted one would have failed).
    let modern = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let mut req = post(Some(&s), Some("2026-07-28"), &modern);
    req.headers_mut()
        .insert("mcp-method", "tools/list".parse().unwrap());
    let reply = send(&f.svc, req).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.body["result"]["resultType"], "complete");
    assert!(!reply.headers.contains_key("mcp-session-id"));
    // DELETE ends the session; then it is unknown everywhere.
    assert_eq!(
        send(&f.svc, other(http::Method::DELETE, Some(&fresh)))
            .await
            .status,
        StatusCode::NO_CONTENT
    );
    assert_refused(
        &send(&f.svc, post(Some(&fresh), None, &list)).await,
        404,
        -32600,
        json!(2),
    );
    assert_refused(
        &send(&f.svc, other(http::Method::DELETE, Some(&fresh))).await,
        404,
        -32600,
        Value::Null,
    );
    assert_refused(
        &send(&f.svc, other(http::Method::GET, Some(&fresh))).await,
        404,
        -32600,
        Value::Null,
    );
    // With the slot free again, a new session starts.
    let reply = send(&f.svc, post(None, None, &initialize(9, V2025, json!({})))).await;
    assert_eq!(reply.status, StatusCode::OK);
    // DELETE without a session stays 405.
    assert_eq!(
        send(&f.svc, other(http::Method::DELETE, None)).await.status,
        StatusCode::METHOD_NOT_ALLOWED
    );
}

#[tokio::test]
async fn host_and_origin_protect_the_legacy_era_too() {
    let f = fixture(10);
    let mut req = post(None, None, &initialize(1, V2025, json!({})));
    req.headers_mut()
        .insert("host", "evil.example".parse().unwrap());
    assert_eq!(send(&f.svc, req).await.status, StatusCode::FORBIDDEN);
    let mut req = other(http::Method::GET, Some("x"));
    req.headers_mut()
        .insert("origin", "http://evil.example".parse().unwrap());
    assert_eq!(send(&f.svc, req).await.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn legacy_off_answers_initialize_as_a_2026_only_server() {
    let svc = Server::builder("modern", "1.0.0")
        .legacy(LegacyConfig {
            enabled: false,
            ..LegacyConfig::default()
        })
        .build()
        .unwrap()
        .service();
    let reply = send(&svc, post(None, None, &initialize(1, V2025, json!({})))).await;
    assert_refused(&reply, 400, -32022, json!(1));
}
