//! The stdio transport in-process (`serve_stream` over an in-memory pipe): concurrent
//! requests, progress and logs before the response, cancellation, `subscriptions/listen`
//! correlated by subscription id, multi round-trip requests, every kind of bad input (each
//! answered, and followed by a request that is still served), the in-flight limits, and the
//! drain at the end of input.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value
)]
use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::meta;
use serde_json::{Value, json};
use smcp_proto::content::TextResourceContents;
use smcp_proto::server::tools::CallToolResult;
use smcp_server::SERVER_BUSY;
use smcp_server::{
    Drained, HandlerError, LoggingLevel, Server, StdioOptions, mrtr, resource, serve_stream, tool,
};
use smcp_test_support::jsonrpc::request;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;

const SUB_ID: &str = "io.modelcontextprotocol/subscriptionId";
const WAIT: Duration = Duration::from_secs(5);

/// The client's end of a connection served by `serve_stream`.
struct Peer {
    input: DuplexStream,
    output: Lines<BufReader<DuplexStream>>,
    served: JoinHandle<std::io::Result<Drained>>,
}

impl Peer {
    async fn start(server: &Server, options: StdioOptions) -> Self {
        Self::start_after(server, options, b"").await
    }

    /// Serves a connection whose first bytes were written before serving started.
    async fn start_after(server: &Server, options: StdioOptions, early: &[u8]) -> Self {
        // One pipe each way, as a child process's stdin and stdout.
        let (mut input, read) = tokio::io::duplex(1 << 20);
        let (write, client_read) = tokio::io::duplex(1 << 20);
        input.write_all(early).await.unwrap();
        let server = server.clone();
        let served = tokio::spawn(async move {
            serve_stream(&server, read, write, std::future::pending(), options).await
        });
        Self {
            input,
            output: BufReader::new(client_read).lines(),
            served,
        }
    }

    async fn send_raw(&mut self, bytes: &[u8]) {
        self.input.write_all(bytes).await.unwrap();
    }

    async fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    async fn call(&mut self, id: i64, name: &str, arguments: Value) {
        self.send(&request(
            json!(id),
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        ))
        .await;
    }

    /// The next message; every line the server writes must be one JSON-RPC object.
    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.output.next_line())
            .await
            .expect("a message within 5 s")
            .unwrap()
            .expect("the output is open");
        let message: Value = serde_json::from_str(&line).expect("a line is one JSON value");
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        message
    }

    /// Nothing arrives for a while.
    async fn silent(&mut self, wait: Duration) {
        if let Ok(line) = tokio::time::timeout(wait, self.output.next_line()).await {
            panic!("unexpected output: {line:?}");
        }
    }

    /// Closes the input and returns what was still written, and how serving ended.
    async fn close(mut self) -> (Vec<Value>, Drained) {
        self.input.shutdown().await.unwrap();
        drop(self.input);
        let mut rest = Vec::new();
        while let Some(line) = tokio::time::timeout(WAIT, self.output.next_line())
            .await
            .expect("the output ends")
            .unwrap()
        {
            rest.push(serde_json::from_str(&line).unwrap());
        }
        let drained = tokio::time::timeout(WAIT, self.served)
            .await
            .expect("serving ends")
            .unwrap()
            .unwrap();
        (rest, drained)
    }
}

fn text(message: &Value) -> &str {
    message["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
}

/// Handlers that show what the transport did: echo, a call that waits (and records whether
/// it saw its cancellation), progress and logs, an elicitation, a tool-list change.
#[derive(Clone, Default)]
struct Probe {
    cancelled: Arc<AtomicBool>,
}

fn server(probe: &Probe) -> Server {
    let cancelled = probe.cancelled.clone();
    Server::builder("stdio-test", "1")
        .logging(true)
        .tools_list_changed(true)
        .resources_subscribe(true)
        .tool(tool("echo").handler(|call| async move {
            let text = call.str_arg("text").unwrap_or_default().to_owned();
            Ok::<_, HandlerError>(CallToolResult::text(text))
        }))
        .tool(tool("wait").handler(move |call| {
            let cancelled = cancelled.clone();
            async move {
                let ms = call.args::<Value>()?["ms"].as_u64().unwrap_or(60_000);
                tokio::select! {
                    () = call.ctx.cancelled() => {
                        cancelled.store(true, Ordering::SeqCst);
                        Err(HandlerError::failed("cancelled"))
                    }
                    () = tokio::time::sleep(Duration::from_millis(ms)) => {
                        Ok(CallToolResult::text(format!("waited {ms}")))
                    }
                }
            }
        }))
        .tool(tool("report").handler(|call| async move {
            for i in 1..=3 {
                call.ctx
                    .progress(f64::from(i), Some(3.0), None)
                    .await
                    .map_err(|e| HandlerError::failed(e.to_string()))?;
            }
            call.ctx
                .log(LoggingLevel::Info, Some("test"), json!("working"))
                .await
                .map_err(|e| HandlerError::failed(e.to_string()))?;
            Ok::<_, HandlerError>(CallToolResult::text("reported"))
        }))
        .tool(tool("confirm").handler(|call| async move {
            let answer = call.input.ask(mrtr::elicit_form(
                "ok",
                "Proceed?",
                json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
            ))?;
            Ok::<_, HandlerError>(CallToolResult::text(format!("{:?}", answer.action)))
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

#[tokio::test]
async fn requests_run_concurrently_and_answer_by_id() {
    let probe = Probe::default();
    let mut peer = Peer::start(&server(&probe), StdioOptions::default()).await;
    peer.call(1, "wait", json!({"ms": 300})).await;
    peer.call(2, "echo", json!({"text": "fast"})).await;
    peer.send(&request(json!("s"), "server/discover", json!({})))
        .await;
    let first = peer.recv().await;
    assert_eq!((first["id"].clone(), text(&first)), (json!(2), "fast"));
    let second = peer.recv().await;
    assert_eq!(second["id"], "s");
    assert_eq!(second["result"]["supportedVersions"], json!(["2026-07-28"]));
    let third = peer.recv().await;
    assert_eq!(
        (third["id"].clone(), text(&third)),
        (json!(1), "waited 300")
    );
    let (rest, drained) = peer.close().await;
    assert!(rest.is_empty(), "{rest:?}");
    assert_eq!(drained, Drained::Complete);
}

#[tokio::test]
async fn progress_and_logs_come_before_the_response() {
    let mut peer = Peer::start(&server(&Probe::default()), StdioOptions::default()).await;
    let mut m = meta();
    m["progressToken"] = json!("p-1");
    m["io.modelcontextprotocol/logLevel"] = json!("info");
    peer.send(&request(
        json!(7),
        "tools/call",
        json!({"_meta": m, "name": "report", "arguments": {}}),
    ))
    .await;
    for i in 1..=3 {
        let n = peer.recv().await;
        assert_eq!(n["method"], "notifications/progress", "{n}");
        assert_eq!(n["params"]["progressToken"], "p-1");
        assert_eq!(n["params"]["progress"], json!(i));
    }
    let log = peer.recv().await;
    assert_eq!(log["method"], "notifications/message", "{log}");
    assert_eq!(log["params"]["data"], "working");
    let done = peer.recv().await;
    assert_eq!((done["id"].clone(), text(&done)), (json!(7), "reported"));
    // Without a progress token or log level, only the response.
    peer.call(8, "report", json!({})).await;
    let done = peer.recv().await;
    assert_eq!(done["id"], 8, "{done}");
}

#[tokio::test]
async fn a_cancelled_request_stops_and_gets_no_response() {
    let probe = Probe::default();
    let mut peer = Peer::start(&server(&probe), StdioOptions::default()).await;
    peer.call(1, "wait", json!({})).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    peer.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "user"}}),
    )
    .await;
    // Cancelling an id nobody uses, or with no id, is ignored.
    peer.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 99}}),
    )
    .await;
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled"}))
        .await;
    peer.call(2, "echo", json!({"text": "after"})).await;
    let next = peer.recv().await;
    assert_eq!((next["id"].clone(), text(&next)), (json!(2), "after"));
    peer.silent(Duration::from_millis(300)).await;
    assert!(probe.cancelled.load(Ordering::SeqCst), "the handler saw it");
    // The id is free again once the request is gone.
    peer.call(1, "echo", json!({"text": "reused"})).await;
    assert_eq!(text(&peer.recv().await), "reused");
}

#[tokio::test]
async fn subscriptions_are_acknowledged_tagged_cancelled_and_closed() {
    let server = server(&Probe::default());
    let mut peer = Peer::start(&server, StdioOptions::default()).await;
    peer.send(&request(
        json!("tools"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    ))
    .await;
    let ack = peer.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUB_ID], "tools");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    peer.send(&request(
        json!(5),
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": ["test://doc"]}}),
    ))
    .await;
    assert_eq!(peer.recv().await["params"]["_meta"][SUB_ID], 5);

    // A change reaches only the subscription that asked for it, tagged with its id.
    peer.call(1, "toggle", json!({})).await;
    let mut got = [peer.recv().await, peer.recv().await];
    got.sort_by_key(|m| m.get("id").is_some());
    assert_eq!(got[0]["method"], "notifications/tools/list_changed");
    assert_eq!(got[0]["params"]["_meta"][SUB_ID], "tools");
    assert_eq!(got[1]["id"], 1);
    server.notify_resource_updated("test://doc");
    let updated = peer.recv().await;
    assert_eq!(updated["method"], "notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], "test://doc");
    assert_eq!(updated["params"]["_meta"][SUB_ID], 5);

    // Cancelled: no response, no more notifications.
    peer.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": "tools"}}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    peer.call(2, "toggle", json!({})).await;
    assert_eq!(peer.recv().await["id"], 2);
    peer.silent(Duration::from_millis(200)).await;

    // The end of input closes the other one gracefully: its listen result, with its id.
    let (rest, drained) = peer.close().await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], 5);
    assert_eq!(rest[0]["result"]["resultType"], "complete");
    assert_eq!(rest[0]["result"]["_meta"][SUB_ID], 5);
    assert_eq!(drained, Drained::Complete);
}

#[tokio::test]
async fn server_shutdown_closes_subscriptions_gracefully() {
    let server = server(&Probe::default());
    let mut peer = Peer::start(&server, StdioOptions::default()).await;
    peer.send(&request(
        json!(1),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    ))
    .await;
    assert_eq!(peer.recv().await["params"]["_meta"][SUB_ID], 1);
    server.shutdown();
    let closed = peer.recv().await;
    assert_eq!(closed["id"], 1);
    assert_eq!(closed["result"]["_meta"][SUB_ID], 1);
    // New subscriptions are refused while shutting down; requests are still served.
    peer.send(&request(
        json!(2),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    ))
    .await;
    let refused = peer.recv().await;
    assert_eq!(refused["error"]["code"], SERVER_BUSY, "{refused}");
    peer.call(3, "echo", json!({"text": "still"})).await;
    assert_eq!(text(&peer.recv().await), "still");
}

#[tokio::test]
async fn multi_round_trip_works_as_over_http() {
    let mut peer = Peer::start(&server(&Probe::default()), StdioOptions::default()).await;
    let mut m = meta();
    m["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {"form": {}}});
    peer.send(&request(
        json!(1),
        "tools/call",
        json!({"_meta": m.clone(), "name": "confirm", "arguments": {}}),
    ))
    .await;
    let asked = peer.recv().await;
    let result = &asked["result"];
    assert_eq!(result["resultType"], "input_required", "{asked}");
    assert_eq!(
        result["inputRequests"]["ok"]["method"],
        "elicitation/create"
    );
    let state = result["requestState"].as_str().unwrap().to_owned();
    peer.send(&request(
        json!(2),
        "tools/call",
        json!({"_meta": m.clone(), "name": "confirm", "arguments": {},
            "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}},
            "requestState": state}),
    ))
    .await;
    let done = peer.recv().await;
    assert_eq!((done["id"].clone(), text(&done)), (json!(2), "Accept"));
    // A state that was not sealed by this server is refused.
    peer.send(&request(
        json!(3),
        "tools/call",
        json!({"_meta": m, "name": "confirm", "arguments": {},
            "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}},
            "requestState": "forged"}),
    ))
    .await;
    assert_eq!(peer.recv().await["error"]["code"], -32602);
}

/// Each bad line gets its error, and the next request is still served.
#[tokio::test]
async fn bad_input_is_answered_and_serving_goes_on() {
    let mut peer = Peer::start(
        &server(&Probe::default()),
        StdioOptions::default().max_line_bytes(4096),
    )
    .await;
    let cases: Vec<(&[u8], Value, Option<Value>)> = vec![
        (b"not json\n", json!(-32700), None),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\",\"\":\"\xFF\"}\n",
            json!(-32700),
            None,
        ),
        (
            b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\"}]\n",
            json!(-32600),
            None,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}\n",
            json!(-32600),
            None,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":1,\"message\":\"x\"}}\n",
            json!(-32600),
            None,
        ),
        (
            b"{\"jsonrpc\":\"1.0\",\"id\":5,\"method\":\"server/discover\"}\n",
            json!(-32600),
            Some(json!(5)),
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"server/discover\"}\n",
            json!(-32602),
            Some(json!(6)),
        ),
    ];
    for (line, code, id) in cases {
        peer.send_raw(line).await;
        let error = peer.recv().await;
        assert_eq!(
            error["error"]["code"],
            code,
            "{}: {error}",
            String::from_utf8_lossy(line)
        );
        assert_eq!(error.get("id"), id.as_ref(), "{error}");
        assert!(error.get("result").is_none());
    }
    let with_meta = |meta: Value| json!({"jsonrpc": "2.0", "id": 10, "method": "server/discover", "params": {"_meta": meta}});
    let mut unsupported = meta();
    unsupported["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    peer.send(&with_meta(unsupported)).await;
    let e = peer.recv().await;
    assert_eq!(e["error"]["code"], -32022, "{e}");
    assert_eq!(e["error"]["data"]["supported"], json!(["2026-07-28"]));
    let mut no_caps = meta();
    no_caps
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    peer.send(&with_meta(no_caps)).await;
    let e = peer.recv().await;
    assert_eq!(e["error"]["code"], -32602);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clientCapabilities"),
        "{e}"
    );
    let mut bad_level = meta();
    bad_level["io.modelcontextprotocol/logLevel"] = json!("loud");
    peer.send(&with_meta(bad_level)).await;
    assert_eq!(peer.recv().await["error"]["code"], -32602);

    // A client of an earlier revision: −32022 naming the versions spoken here.
    peer.send(
        &json!({"jsonrpc": "2.0", "id": 11, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}}}),
    )
    .await;
    let e = peer.recv().await;
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (json!(11), json!(-32022))
    );
    assert_eq!(e["error"]["data"]["requested"], "2025-11-25");

    // Unknown method; params of the wrong shape, named.
    peer.send(&request(json!(12), "tools/frobnicate", json!({})))
        .await;
    assert_eq!(peer.recv().await["error"]["code"], -32601);
    peer.send(&request(json!(13), "tools/call", json!({"name": 5})))
        .await;
    let e = peer.recv().await;
    assert_eq!(e["error"]["code"], -32602);
    assert!(
        e["error"]["message"].as_str().unwrap().contains("name"),
        "{e}"
    );

    // A line over the limit: −32600 naming the limit, and the payload is not echoed.
    let long = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"x\",\"p\":\"{}\"}}\n",
        "z".repeat(5000)
    );
    peer.send_raw(long.as_bytes()).await;
    let e = peer.recv().await;
    assert_eq!(e["error"]["code"], -32600, "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("4096"),
        "{e}"
    );
    assert!(!e.to_string().contains("zzzz"));

    // A message with embedded newlines is several broken lines: each is refused.
    let pretty =
        serde_json::to_string_pretty(&request(json!(15), "server/discover", json!({}))).unwrap();
    let broken = pretty.lines().filter(|l| !l.trim().is_empty()).count();
    peer.send_raw(format!("{pretty}\n").as_bytes()).await;
    for _ in 0..broken {
        assert_eq!(peer.recv().await["error"]["code"], -32700);
    }

    // Blank lines and CRLF line endings are fine; notifications get no answer.
    peer.send_raw(b"\n  \n").await;
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let mut crlf = serde_json::to_vec(&request(
        json!(16),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "crlf"}}),
    ))
    .unwrap();
    crlf.extend_from_slice(b"\r\n");
    peer.send_raw(&crlf).await;
    let ok = peer.recv().await;
    assert_eq!((ok["id"].clone(), text(&ok)), (json!(16), "crlf"));
}

#[tokio::test]
async fn requests_written_before_serving_starts_are_served() {
    let mut early = Vec::new();
    for id in 1..=3 {
        early.extend(
            serde_json::to_vec(&request(
                json!(id),
                "tools/call",
                json!({"name": "echo", "arguments": {"text": format!("early {id}")}}),
            ))
            .unwrap(),
        );
        early.push(b'\n');
    }
    let mut peer =
        Peer::start_after(&server(&Probe::default()), StdioOptions::default(), &early).await;
    for id in 1..=3 {
        let m = peer.recv().await;
        assert_eq!(
            (m["id"].clone(), text(&m).to_owned()),
            (json!(id), format!("early {id}"))
        );
    }
}

#[tokio::test]
async fn in_flight_ids_and_limits_are_enforced() {
    let mut peer = Peer::start(
        &server(&Probe::default()),
        StdioOptions::default()
            .max_in_flight(2)
            .max_subscriptions(1),
    )
    .await;
    peer.call(1, "wait", json!({"ms": 400})).await;
    peer.call(1, "echo", json!({"text": "same id"})).await;
    let e = peer.recv().await;
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (json!(1), json!(-32600))
    );
    peer.call(2, "wait", json!({"ms": 400})).await;
    peer.call(3, "wait", json!({"ms": 10})).await;
    let e = peer.recv().await;
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (json!(3), json!(SERVER_BUSY))
    );
    assert_eq!(e["error"]["data"]["limit"], 2);
    // The limit holds for any request: whether one would finish at once is not known before
    // it runs.
    peer.call(4, "echo", json!({"text": "instant"})).await;
    assert_eq!(peer.recv().await["error"]["code"], SERVER_BUSY);
    let listen = |id: i64| {
        request(
            json!(id),
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        )
    };
    peer.send(&listen(5)).await;
    assert_eq!(peer.recv().await["params"]["_meta"][SUB_ID], 5);
    peer.send(&listen(6)).await;
    let e = peer.recv().await;
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (json!(6), json!(SERVER_BUSY))
    );
    let mut done: Vec<Value> = vec![
        peer.recv().await["id"].clone(),
        peer.recv().await["id"].clone(),
    ];
    done.sort_by_key(|v| v.as_i64());
    assert_eq!(done, [json!(1), json!(2)]);
}

#[tokio::test]
async fn the_drain_waits_for_requests_then_cuts_them() {
    let probe = Probe::default();
    let server = server(&probe);
    // Finishes within the drain: its response is written after the end of input.
    let mut peer = Peer::start(&server, StdioOptions::default()).await;
    peer.call(1, "wait", json!({"ms": 200})).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (rest, drained) = peer.close().await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(text(&rest[0]), "waited 200");
    assert_eq!(drained, Drained::Complete);

    // Outlasts the drain: cancelled, and answered with an error.
    let mut peer = Peer::start(
        &server,
        StdioOptions::default().drain_timeout(Duration::from_millis(200)),
    )
    .await;
    peer.call(2, "wait", json!({})).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (rest, drained) = peer.close().await;
    assert_eq!(drained, Drained::TimedOut(1));
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], 2);
    assert_eq!(rest[0]["error"]["code"], -32603);
    assert!(
        rest[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("shutting down")
    );
}

#[tokio::test]
async fn serving_ends_when_the_output_is_closed() {
    let probe = Probe::default();
    let mut peer = Peer::start(&server(&probe), StdioOptions::default()).await;
    peer.call(1, "echo", json!({"text": "x"})).await;
    assert_eq!(text(&peer.recv().await), "x");
    let Peer {
        input,
        output,
        served,
    } = peer;
    drop(output);
    // The next response cannot be written: serving stops without the input being closed.
    let mut input = input;
    let line = serde_json::to_vec(&request(json!(2), "server/discover", json!({}))).unwrap();
    input.write_all(&line).await.unwrap();
    input.write_all(b"\n").await.unwrap();
    let drained = tokio::time::timeout(WAIT, served)
        .await
        .expect("serving ends")
        .unwrap();
    assert_eq!(drained.unwrap(), Drained::Complete);
}
