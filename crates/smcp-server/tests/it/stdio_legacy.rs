//! The earlier revisions (2025-11-25 and before) over the stdio framing, in-process
//! (`serve_stream` over an in-memory pipe) with a scripted client: the handshake and its
//! errors, results trimmed of the 2026-only members, progress and log messages filtered by
//! `logging/setLevel`, an elicitation answered by the client (and a response for an id the
//! server never sent, dropped; a client error; an unanswered one timing out), cancellation,
//! change notifications, and a connection that
//! started 2026-07-28 staying so.

#![cfg(all(feature = "stdio", feature = "legacy"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use smcp_proto::content::TextResourceContents;
use smcp_proto::server::tools::CallToolResult;
use smcp_server::legacy::LegacyConfig;
use smcp_server::{
    HandlerError, LoggingLevel, Server, StdioOptions, mrtr, resource, serve_stream, tool,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

const WAIT: Duration = Duration::from_secs(5);

struct Peer {
    input: DuplexStream,
    output: Lines<BufReader<DuplexStream>>,
}

impl Peer {
    fn start(server: &Server) -> Self {
        let (input, read) = tokio::io::duplex(1 << 20);
        let (write, client_read) = tokio::io::duplex(1 << 20);
        let server = server.clone();
        tokio::spawn(async move {
            serve_stream(
                &server,
                read,
                write,
                std::future::pending(),
                StdioOptions::default(),
            )
            .await
        });
        Self {
            input,
            output: BufReader::new(client_read).lines(),
        }
    }

    async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.input.write_all(&line).await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.output.next_line())
            .await
            .expect("a message within 5 s")
            .unwrap()
            .expect("the output is open");
        serde_json::from_str(&line).expect("a line is one JSON value")
    }

    async fn silent(&mut self, wait: Duration) {
        if let Ok(line) = tokio::time::timeout(wait, self.output.next_line()).await {
            panic!("unexpected output: {line:?}");
        }
    }

    async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.recv().await
    }

    /// `initialize` with `version`, then `notifications/initialized`; the result.
    async fn handshake(&mut self, version: &str, capabilities: Value) -> Value {
        let result = self
            .request(
                0,
                "initialize",
                json!({"protocolVersion": version, "capabilities": capabilities,
                       "clientInfo": {"name": "old", "version": "1"}}),
            )
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        result
    }
}

fn server(cancelled: Arc<AtomicBool>) -> Server {
    Server::builder("stdio-legacy", "1.0.0")
        .instructions("Be kind.")
        .logging(true)
        .tools_list_changed(true)
        .resources_subscribe(true)
        .tool(tool("echo").handler(|call| async move {
            Ok::<_, HandlerError>(CallToolResult::text(
                call.str_arg("text").unwrap_or_default().to_owned(),
            ))
        }))
        .tool(tool("greet").handler(|call| async move {
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
        }))
        .tool(tool("wait").handler(move |call| {
            let cancelled = cancelled.clone();
            async move {
                call.ctx.cancelled().await;
                cancelled.store(true, Ordering::SeqCst);
                Ok::<_, HandlerError>(CallToolResult::text("cancelled"))
            }
        }))
        .tool(tool("toggle").handler(|call| async move {
            let server = call.ctx.server().unwrap();
            if !server.remove_tool("extra") {
                server
                    .add_tool(tool("extra").handler(|_call| async move {
                        Ok::<_, HandlerError>(CallToolResult::text("extra"))
                    }))
                    .unwrap();
            }
            Ok::<_, HandlerError>(CallToolResult::text("toggled"))
        }))
        .resource(resource("test://doc", "doc").handler(|read| async move {
            Ok(vec![TextResourceContents::new(read.uri, "text").into()])
        }))
        .build()
        .unwrap()
}

fn plain() -> Server {
    server(Arc::new(AtomicBool::new(false)))
}

#[tokio::test]
async fn the_handshake_negotiates_and_its_errors_are_those_of_http() {
    let mut peer = Peer::start(&plain());
    let init = peer
        .request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "old", "version": "1"}}),
        )
        .await;
    assert_eq!(init["id"], 1);
    let result = &init["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(result["serverInfo"]["name"], "stdio-legacy");
    assert_eq!(result["instructions"], "Be kind.");
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(result["capabilities"]["resources"]["subscribe"], true);
    assert!(result["capabilities"].get("extensions").is_none(), "{init}");

    // Before notifications/initialized: ping only.
    let early = peer.request(2, "tools/list", json!({})).await;
    assert_eq!(
        (early["id"].clone(), early["error"]["code"].clone()),
        (json!(2), json!(-32600))
    );
    assert_eq!(
        peer.request(3, "ping", json!({})).await,
        json!({"jsonrpc": "2.0", "id": 3, "result": {}})
    );
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    // The same dispatch, results without the 2026-only members.
    let list = peer.request(4, "tools/list", json!({})).await;
    let tools = list["result"]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "echo"), "{list}");
    for member in ["resultType", "ttlMs", "cacheScope", "_meta"] {
        assert!(list["result"].get(member).is_none(), "{member}: {list}");
    }
    let call = peer
        .request(
            5,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(
        call,
        json!({"jsonrpc": "2.0", "id": 5, "result": {"content": [{"type": "text", "text": "hi"}]}})
    );
    let read = peer
        .request(6, "resources/read", json!({"uri": "test://doc"}))
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "text", "{read}");

    // initialize twice, a 2026-07-28 request, a 2026-only method: refused, serving goes on.
    let again = peer
        .request(
            7,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}}),
        )
        .await;
    assert_eq!(again["error"]["code"], -32600, "{again}");
    let modern = peer
        .request(
            8,
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}}}),
        )
        .await;
    assert_eq!(modern["error"]["code"], -32602, "{modern}");
    assert!(
        modern["error"]["message"]
            .as_str()
            .unwrap()
            .contains("params._meta"),
        "{modern}"
    );
    let discover = peer.request(9, "server/discover", json!({})).await;
    assert_eq!(discover["error"]["code"], -32601, "{discover}");
    let bad_level = peer
        .request(10, "logging/setLevel", json!({"level": "loud"}))
        .await;
    assert_eq!(bad_level["error"]["code"], -32602, "{bad_level}");
    assert_eq!(
        peer.request(11, "ping", json!({})).await["result"],
        json!({})
    );
}

#[tokio::test]
async fn an_unknown_version_gets_the_newest_and_a_bad_initialize_decides_nothing() {
    let mut peer = Peer::start(&plain());
    let bad = peer
        .request(1, "initialize", json!({"protocolVersion": "2025-11-25"}))
        .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("params.capabilities")
    );
    let init = peer.handshake("2024-01-01", json!({})).await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
}

#[tokio::test]
async fn a_connection_that_started_2026_stays_2026() {
    let mut peer = Peer::start(&plain());
    let discover = peer
        .request(
            1,
            "server/discover",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {},
                             "io.modelcontextprotocol/clientInfo": {"name": "new", "version": "1"}}}),
        )
        .await;
    assert!(discover.get("result").is_some(), "{discover}");
    let init = peer
        .request(
            2,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
        )
        .await;
    assert_eq!(init["error"]["code"], -32022, "{init}");
    assert_eq!(init["error"]["data"]["requested"], "2025-11-25");

    // A server that does not serve the earlier revisions answers −32022 from the start.
    let off = Server::builder("off", "1")
        .legacy(LegacyConfig {
            enabled: false,
            ..LegacyConfig::default()
        })
        .build()
        .unwrap();
    let mut peer = Peer::start(&off);
    let init = peer
        .request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
        )
        .await;
    assert_eq!(init["error"]["code"], -32022, "{init}");
}

#[tokio::test]
async fn input_ask_becomes_a_server_request_answered_on_the_input() {
    let mut peer = Peer::start(&plain());
    let init = peer
        .handshake("2025-11-25", json!({"elicitation": {}}))
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        peer.request(1, "logging/setLevel", json!({"level": "info"}))
            .await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "greet", "arguments": {}, "_meta": {"progressToken": "p"}}}))
        .await;
    let progress = peer.recv().await;
    assert_eq!(
        progress,
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": "p", "progress": 1, "total": 2, "message": "asking"}})
    );
    // Info passes the level; debug does not.
    let log = peer.recv().await;
    assert_eq!(log["method"], "notifications/message", "{log}");
    assert_eq!(log["params"]["level"], "info");
    assert_eq!(log["params"]["data"], "asking");
    let ask = peer.recv().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert_eq!(ask["params"]["message"], "Your name?");
    let ask_id = ask["id"].clone();
    assert!(ask_id.is_string(), "server-issued ids are strings: {ask}");

    // A response for an id the server never sent is dropped: the next line answers the ping.
    peer.send(json!({"jsonrpc": "2.0", "id": "smcp-999", "result": {"action": "accept"}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": 999, "error": {"code": 1, "message": "x"}}))
        .await;
    assert_eq!(
        peer.request(3, "ping", json!({})).await,
        json!({"jsonrpc": "2.0", "id": 3, "result": {}})
    );

    peer.send(json!({"jsonrpc": "2.0", "id": ask_id,
        "result": {"action": "accept", "content": {"name": "Ada"}}}))
        .await;
    // The handler runs again with the answer (the MRTR retry): its events come again.
    let mut done = peer.recv().await;
    let mut again = Vec::new();
    while done.get("id").is_none() {
        again.push(done["method"].clone());
        done = peer.recv().await;
    }
    assert_eq!(
        again,
        vec![
            json!("notifications/progress"),
            json!("notifications/message")
        ]
    );
    assert_eq!(
        done,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "Hello, Ada!"}]}})
    );
    // The same answer again is for no request waiting: dropped.
    peer.send(json!({"jsonrpc": "2.0", "id": ask_id, "result": {"action": "accept"}}))
        .await;
    peer.silent(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn a_client_error_for_the_server_request_fails_the_call() {
    let mut peer = Peer::start(&plain());
    peer.handshake("2025-11-25", json!({"elicitation": {}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "greet", "arguments": {}}}))
        .await;
    let ask = peer.recv().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    peer.send(json!({"jsonrpc": "2.0", "id": ask["id"], "error": {"code": -1, "message": "no"}}))
        .await;
    let failed = peer.recv().await;
    assert_eq!(failed["id"], 1);
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("elicitation/create"),
        "{failed}"
    );
}

#[tokio::test]
async fn cancelled_stops_the_request_without_a_response() {
    let cancelled = Arc::new(AtomicBool::new(false));
    let mut peer = Peer::start(&server(cancelled.clone()));
    let init = peer.handshake("2025-03-26", json!({})).await;
    assert_eq!(init["result"]["protocolVersion"], "2025-03-26");
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "wait", "arguments": {}}}))
        .await;
    // The same id while it runs is refused.
    let twice = peer
        .request(1, "tools/call", json!({"name": "echo", "arguments": {}}))
        .await;
    assert_eq!(twice["error"]["code"], -32600, "{twice}");
    peer.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "changed my mind"}}),
    )
    .await;
    peer.silent(Duration::from_millis(300)).await;
    assert!(cancelled.load(Ordering::SeqCst));
    assert_eq!(
        peer.request(2, "ping", json!({})).await["result"],
        json!({})
    );
}

#[tokio::test]
async fn change_notifications_follow_initialized_and_subscriptions() {
    let server = plain();
    let mut peer = Peer::start(&server);
    peer.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}))
        .await;
    peer.recv().await;
    // Not initialized yet: nothing is sent.
    server.notify_resource_updated("test://doc");
    peer.silent(Duration::from_millis(200)).await;
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    assert_eq!(
        peer.request(1, "resources/subscribe", json!({"uri": "test://doc"}))
            .await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    // The change task re-subscribes on its own; wait until an update arrives.
    let mut updated = None;
    for _ in 0..50 {
        server.notify_resource_updated("test://doc");
        if let Ok(Ok(Some(line))) =
            tokio::time::timeout(Duration::from_millis(100), peer.output.next_line()).await
        {
            updated = Some(serde_json::from_str::<Value>(&line).unwrap());
            break;
        }
    }
    assert_eq!(
        updated.unwrap(),
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
               "params": {"uri": "test://doc"}})
    );
    // Drain the updates still in flight, then a list change from a tool.
    while let Ok(Ok(Some(_))) =
        tokio::time::timeout(Duration::from_millis(200), peer.output.next_line()).await
    {}
    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "toggle", "arguments": {}}}))
        .await;
    let mut got = [peer.recv().await, peer.recv().await];
    got.sort_by_key(|m| m.get("id").is_some());
    assert_eq!(
        got[0],
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    assert_eq!(got[1]["result"]["content"][0]["text"], "toggled");
    // Unsubscribed: updates stop.
    assert_eq!(
        peer.request(3, "resources/unsubscribe", json!({"uri": "test://doc"}))
            .await["result"],
        json!({})
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    server.notify_resource_updated("test://doc");
    peer.silent(Duration::from_millis(300)).await;
}

#[tokio::test]
async fn an_unanswered_server_request_times_out_and_a_late_answer_is_dropped() {
    let server = Server::builder("stdio-legacy", "1.0.0")
        .tool(tool("greet").handler(|call| async move {
            let answer = call.input.ask(mrtr::elicit_form(
                "who",
                "Your name?",
                json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            ))?;
            Ok::<_, HandlerError>(CallToolResult::text(format!("{:?}", answer.action)))
        }))
        .legacy(LegacyConfig {
            response_timeout: Duration::from_millis(200),
            ..LegacyConfig::default()
        })
        .build()
        .unwrap();
    let mut peer = Peer::start(&server);
    peer.handshake("2025-11-25", json!({"elicitation": {}}))
        .await;
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "greet", "arguments": {}}}))
        .await;
    let ask = peer.recv().await;
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    let failed = peer.recv().await;
    assert_eq!(failed["id"], 1);
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did not answer elicitation/create"),
        "{failed}"
    );
    peer.send(json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept"}}))
        .await;
    peer.silent(Duration::from_millis(200)).await;
}
