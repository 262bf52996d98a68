//! `notifications/tasks` on `subscriptions/listen`, over Streamable HTTP (the in-process
//! service) and over stdio (`serve_stream` on in-memory pipes): the acknowledgement lists
//! exactly the ids the principal may see; each notification carries the full `DetailedTask`,
//! the same as `tasks/get` at that moment, through `input_required` → `working` → `completed`;
//! another principal's task is never acknowledged nor notified; `taskIds` without the
//! extension is −32021; the number of `taskIds` is bounded (−32602 naming the bound).
//!
//! The official suite's `tasks-status-notifications` scenario is skipped by the suite
//! (0.2.0-alpha.12), so these tests are what covers the notifications.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::common;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Req, accept, detailed, field, meta, one_field};
use http::StatusCode;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{
    HandlerError, McpBody, McpService, Principal, Server, StdioOptions, mrtr, serve_stream, tool,
};
use smcp_tasks::{MAX_LISTEN_TASK_IDS, TaskSupport, TaskToolExt, TasksExtension};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::sync::Notify;

const SUB_ID: &str = "io.modelcontextprotocol/subscriptionId";
const WAIT: Duration = Duration::from_secs(5);

/// Two gates per tag, opened by the test: before the task asks for input, and before it ends.
/// Tasks wait on them so that every status change happens when the test says.
#[derive(Clone, Default)]
struct Gates(Arc<Mutex<HashMap<String, GatePair>>>);

/// The gate before the question, the gate before the end.
type GatePair = (Arc<Notify>, Arc<Notify>);

impl Gates {
    fn of(&self, tag: &str) -> GatePair {
        self.0
            .lock()
            .unwrap()
            .entry(tag.to_owned())
            .or_default()
            .clone()
    }
    fn open_ask(&self, tag: &str) {
        self.of(tag).0.notify_one();
    }
    fn open_end(&self, tag: &str) {
        self.of(tag).1.notify_one();
    }
}

fn server(gates: &Gates) -> Server {
    let gates = gates.clone();
    Server::builder("notifications-test", "1.0.0")
        .extension(
            TasksExtension::builder()
                .poll_interval(Duration::from_millis(20))
                .build(),
        )
        .tool(
            tool("gated")
                .task_support(TaskSupport::optional().immediate_window(Duration::ZERO))
                .handler(move |call| {
                    let gates = gates.clone();
                    async move {
                        let tag = call
                            .arguments
                            .get("tag")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned();
                        let (ask, end) = gates.of(&tag);
                        if call.input.round() == 0 {
                            ask.notified().await;
                        }
                        // Progress inside a task is never sent, on the listen stream or else.
                        call.ctx.progress(1.0, None, Some("asking")).await.ok();
                        let go = call.input.ask(mrtr::elicit_form(
                            "go",
                            "Go on?",
                            one_field("go", "boolean"),
                        ))?;
                        end.notified().await;
                        Ok::<_, HandlerError>(CallToolResult::text(format!(
                            "{tag}: go={}",
                            field(&go, "go")
                        )))
                    }
                }),
        )
        .build()
        .unwrap()
}

/// One principal's connection: JSON-RPC requests, and one listen stream.
trait Conn {
    /// Sends a request; returns the JSON-RPC response (`result` or `error`).
    async fn request(&mut self, method: &str, params: Value, ext: bool) -> Value;
    /// Opens a listen stream with id `id`; `Err` with the JSON-RPC error response when refused.
    async fn listen(&mut self, id: &str, params: Value, ext: bool) -> Result<(), Value>;
    /// The next message of the listen stream (bounded wait).
    async fn next_notification(&mut self) -> Value;
}

/// Streamable HTTP, through the tower service.
struct Http {
    svc: McpService,
    principal: &'static str,
    stream: Option<McpBody>,
    pending: String,
    queue: VecDeque<Value>,
    /// The HTTP status and JSON-RPC code of each refused listen.
    refusals: Vec<(StatusCode, i64)>,
}

impl Http {
    fn new(svc: &McpService, principal: &'static str) -> Self {
        Self {
            svc: svc.clone(),
            principal,
            stream: None,
            pending: String::new(),
            queue: VecDeque::new(),
            refusals: Vec::new(),
        }
    }
}

impl Conn for Http {
    async fn request(&mut self, method: &str, params: Value, ext: bool) -> Value {
        let mut req = Req::new(method, params).acting_for(self.principal);
        req.ext = ext;
        common::send(&self.svc, req).await.1
    }

    async fn listen(&mut self, id: &str, params: Value, ext: bool) -> Result<(), Value> {
        let mut req = Req::new("subscriptions/listen", params).acting_for(self.principal);
        req.ext = ext;
        let response = self.svc.handle(req.build(json!(id))).await;
        let status = response.status();
        let is_sse = response
            .headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        if status != StatusCode::OK || !is_sse {
            let bytes = response.into_body().collect().await.unwrap().to_bytes();
            let error: Value = serde_json::from_slice(&bytes).unwrap();
            let code = error["error"]["code"].as_i64().unwrap();
            self.refusals.push((status, code));
            return Err(error);
        }
        self.stream = Some(response.into_body());
        Ok(())
    }

    async fn next_notification(&mut self) -> Value {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            if let Some(message) = self.queue.pop_front() {
                return message;
            }
            let body = self.stream.as_mut().expect("a listen stream is open");
            let frame = tokio::time::timeout_at(deadline, body.frame())
                .await
                .expect("a notification within 5 s")
                .expect("the stream is open")
                .unwrap();
            let Ok(data) = frame.into_data() else {
                continue;
            };
            self.pending.push_str(&String::from_utf8_lossy(&data));
            while let Some(end) = self.pending.find('\n') {
                let line: String = self.pending.drain(..=end).collect();
                if let Some(json) = line.trim_end().strip_prefix("data: ") {
                    self.queue.push_back(serde_json::from_str(json).unwrap());
                }
            }
        }
    }
}

/// stdio: one connection, served by `serve_stream` over in-memory pipes.
struct Stdio {
    input: DuplexStream,
    output: Lines<BufReader<DuplexStream>>,
    next_id: i64,
    notifications: VecDeque<Value>,
    responses: Vec<Value>,
}

impl Stdio {
    fn start(server: &Server, principal: &str) -> Self {
        let (input, read) = tokio::io::duplex(1 << 20);
        let (write, client_read) = tokio::io::duplex(1 << 20);
        let server = server.clone();
        let options = StdioOptions::default().principal(Principal(principal.to_owned()));
        tokio::spawn(async move {
            serve_stream(&server, read, write, std::future::pending(), options).await
        });
        Self {
            input,
            output: BufReader::new(client_read).lines(),
            next_id: 0,
            notifications: VecDeque::new(),
            responses: Vec::new(),
        }
    }

    async fn send(&mut self, id: Value, method: &str, mut params: Value, ext: bool) {
        params["_meta"] = meta(ext);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.input.write_all(&line).await.unwrap();
    }

    /// Reads one message, sorting it into notifications or responses.
    async fn read(&mut self) {
        let line = tokio::time::timeout(WAIT, self.output.next_line())
            .await
            .expect("a message within 5 s")
            .unwrap()
            .expect("the output is open");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message.get("id").is_some() {
            self.responses.push(message);
        } else {
            self.notifications.push_back(message);
        }
    }

    async fn response(&mut self, id: &Value) -> Value {
        loop {
            if let Some(at) = self.responses.iter().position(|r| &r["id"] == id) {
                return self.responses.remove(at);
            }
            self.read().await;
        }
    }
}

impl Conn for Stdio {
    async fn request(&mut self, method: &str, params: Value, ext: bool) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(id.clone(), method, params, ext).await;
        self.response(&id).await
    }

    async fn listen(&mut self, id: &str, params: Value, ext: bool) -> Result<(), Value> {
        self.send(json!(id), "subscriptions/listen", params, ext)
            .await;
        loop {
            if let Some(at) = self.responses.iter().position(|r| r["id"] == id) {
                return Err(self.responses.remove(at));
            }
            if self
                .notifications
                .iter()
                .any(|n| n["params"]["_meta"][SUB_ID] == id)
            {
                return Ok(());
            }
            self.read().await;
        }
    }

    async fn next_notification(&mut self) -> Value {
        loop {
            if let Some(n) = self.notifications.pop_front() {
                return n;
            }
            self.read().await;
        }
    }
}

async fn start_task(conn: &mut impl Conn, tag: &str) -> String {
    let response = conn
        .request(
            "tools/call",
            json!({"name": "gated", "arguments": {"tag": tag}}),
            true,
        )
        .await;
    assert_eq!(response["result"]["resultType"], "task", "{response}");
    response["result"]["taskId"].as_str().unwrap().to_owned()
}

async fn get(conn: &mut impl Conn, id: &str) -> Value {
    let response = conn.request("tasks/get", json!({"taskId": id}), true).await;
    assert!(response.get("error").is_none(), "{response}");
    response["result"].clone()
}

async fn until(conn: &mut impl Conn, id: &str, status: &str) -> Value {
    for _ in 0..250 {
        let task = get(conn, id).await;
        if task["status"] == status {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {id} never reached {status}");
}

async fn answer(conn: &mut impl Conn, id: &str, go: bool) {
    let ack = conn
        .request(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"go": accept("go", json!(go))}}),
            true,
        )
        .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
}

/// The next `notifications/tasks` of subscription `sub`; it must equal `tasks/get` now.
async fn expect_status(alice: &mut impl Conn, sub: &str, id: &str, status: &str) -> Value {
    let n = alice.next_notification().await;
    assert_eq!(n["method"], "notifications/tasks", "{n}");
    assert_eq!(n["params"]["_meta"][SUB_ID], sub, "{n}");
    assert_eq!(n["params"]["taskId"], id, "{n}");
    assert_eq!(n["params"]["status"], status, "{n}");
    let now = get(alice, id).await;
    assert_eq!(
        detailed(&n["params"]),
        detailed(&now),
        "a notification carries what tasks/get answers"
    );
    n["params"].clone()
}

/// The whole story for one transport: `alice` and `bob` are two principals' connections to
/// the same server.
async fn scenario(gates: &Gates, alice: &mut impl Conn, bob: &mut impl Conn) {
    let mine = start_task(alice, "alice").await;
    let theirs = start_task(bob, "bob").await;

    // taskIds without the extension declared: −32021 naming it.
    let refused = alice
        .listen(
            "no-ext",
            json!({"notifications": {"taskIds": [mine]}}),
            false,
        )
        .await
        .expect_err("refused without the extension");
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );

    // More ids than the bound: −32602 naming the member and the bound.
    let many: Vec<String> = (0..=MAX_LISTEN_TASK_IDS).map(|i| format!("t{i}")).collect();
    let refused = alice
        .listen("many", json!({"notifications": {"taskIds": many}}), true)
        .await
        .expect_err("refused over the bound");
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("taskIds") && message.contains(&MAX_LISTEN_TASK_IDS.to_string()),
        "{message}"
    );

    // The acknowledgement lists exactly the ids alice may see: not bob's, not an unknown one,
    // not a duplicate.
    alice
        .listen(
            "L1",
            json!({"notifications": {"taskIds": [mine, theirs, "0123456789abcdef0123456789abcdef", mine]}}),
            true,
        )
        .await
        .expect("listen accepted");
    let ack = alice.next_notification().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUB_ID], "L1");
    assert_eq!(ack["params"]["notifications"], json!({"taskIds": [mine]}));

    // Bob's task goes through every status; alice is told nothing of it.
    gates.open_ask("bob");
    until(bob, &theirs, "input_required").await;
    answer(bob, &theirs, false).await;
    gates.open_end("bob");
    let done = until(bob, &theirs, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "bob: go=false");

    // Alice's task: input_required → working → completed, each the full DetailedTask.
    gates.open_ask("alice");
    let waiting = expect_status(alice, "L1", &mine, "input_required").await;
    assert_eq!(
        waiting["inputRequests"]["go"]["method"],
        "elicitation/create"
    );
    assert!(waiting.get("result").is_none() && waiting.get("error").is_none());
    answer(alice, &mine, true).await;
    let working = expect_status(alice, "L1", &mine, "working").await;
    assert!(working.get("inputRequests").is_none(), "{working}");
    gates.open_end("alice");
    let completed = expect_status(alice, "L1", &mine, "completed").await;
    assert_eq!(completed["result"]["content"][0]["text"], "alice: go=true");
    assert!(completed["ttlMs"].is_u64() && completed["pollIntervalMs"].is_u64());
    assert!(completed["createdAt"].is_string() && completed["lastUpdatedAt"].is_string());
}

#[tokio::test]
async fn task_notifications_over_http() {
    let gates = Gates::default();
    let svc = server(&gates).service();
    let mut alice = Http::new(&svc, "alice");
    let mut bob = Http::new(&svc, "bob");
    scenario(&gates, &mut alice, &mut bob).await;
    // Refused before any stream opens: HTTP 400, as for any malformed listen filter.
    assert_eq!(
        alice.refusals,
        [
            (StatusCode::BAD_REQUEST, -32021),
            (StatusCode::BAD_REQUEST, -32602)
        ]
    );
}

#[tokio::test]
async fn task_notifications_over_stdio() {
    let gates = Gates::default();
    let server = server(&gates);
    let mut alice = Stdio::start(&server, "alice");
    let mut bob = Stdio::start(&server, "bob");
    scenario(&gates, &mut alice, &mut bob).await;
    // Nothing else reached alice's connection (no progress, nothing about bob's task), up
    // to the answer of one more request.
    alice.request("tools/list", json!({}), true).await;
    assert!(
        alice.notifications.is_empty(),
        "unexpected notifications {:?}",
        alice.notifications
    );
}
