//! SEP-2663 over the in-process HTTP service: the lifecycle, input through `tasks/update`,
//! statuses, cancellation, listen, and every bad input with its exact status and code.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, McpService, Principal, Server, mrtr, tool};
use smcp_tasks::{EXTENSION_ID, TaskSupport, TaskToolExt, TasksExtension};

const VERSION: &str = "2026-07-28";

/// `content[key]` of an elicitation answer, as JSON.
fn field(answer: &smcp_proto::client::elicitation::ElicitResult, key: &str) -> Value {
    serde_json::to_value(answer).unwrap()["content"][key].clone()
}

fn server(tasks: TasksExtension) -> McpService {
    let confirm = json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]});
    let name =
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    Server::builder("tasks-test", "1.0.0")
        .extension(tasks)
        .tool(tool("plain").handler(|_| async { Ok::<_, HandlerError>(CallToolResult::text("plain")) }))
        .tool(
            tool("sleepy")
                .task_support(TaskSupport::optional())
                .input_schema(json!({"type": "object", "properties": {"ms": {"type": "integer"}}}))
                .handler(|call| async move {
                    let ms = call.arguments.get("ms").and_then(Value::as_u64).unwrap_or(0);
                    call.ctx.progress(1.0, None, Some("started")).await.map_err(|e| HandlerError::failed(e.to_string()))?;
                    tokio::select! {
                        () = call.ctx.cancelled() => Err(HandlerError::failed("stopped")),
                        () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(CallToolResult::text(format!("slept {ms}"))),
                    }
                }),
        )
        .tool(tool("must_task").task_support(TaskSupport::required()).handler(|_| async {
            Ok::<_, HandlerError>(CallToolResult::text("ran"))
        }))
        .tool({
            let confirm = confirm.clone();
            tool("asker")
                .task_support(TaskSupport::optional().immediate_window(Duration::ZERO))
                .handler(move |call| {
                    let confirm = confirm.clone();
                    async move {
                        let answer = call.input.ask(mrtr::elicit_form("confirm", "Go on?", confirm))?;
                        let ok = field(&answer, "confirm");
                        Ok::<_, HandlerError>(CallToolResult::text(format!("confirm={ok}")))
                    }
                })
        })
        .tool({
            let name = name.clone();
            tool("two")
                .task_support(TaskSupport::optional().immediate_window(Duration::ZERO))
                .handler(move |call| {
                    let (confirm, name) = (confirm.clone(), name.clone());
                    async move {
                        let (a, b) = call.input.ask((
                            mrtr::elicit_form("name", "Name?", name),
                            mrtr::elicit_form("confirm", "Sure?", confirm),
                        ))?;
                        let name = field(&a, "name");
                        let ok = field(&b, "confirm");
                        Ok::<_, HandlerError>(CallToolResult::text(format!("{name} {ok}")))
                    }
                })
        })
        .tool({
            tool("compose")
                .task_support(TaskSupport::required())
                .handler(move |call| {
                    let name = name.clone();
                    async move {
                        let answer = call.input.ask(mrtr::elicit_form("user_name", "Who?", name))?;
                        tokio::time::sleep(Duration::from_millis(300)).await;
                        let who = field(&answer, "name");
                        Ok::<_, HandlerError>(CallToolResult::text(format!("Hello, {who}")))
                    }
                })
        })
        .tool(tool("tool_error").task_support(TaskSupport::optional().immediate_window(Duration::ZERO)).handler(|_| async {
            Err::<CallToolResult, _>(HandlerError::failed("the job failed"))
        }))
        .tool(tool("rpc_error").task_support(TaskSupport::optional().immediate_window(Duration::ZERO)).handler(|_| async {
            Err::<CallToolResult, _>(HandlerError::Rpc(smcp_proto::error::ErrorObject::new(-32050, "backend refused")))
        }))
        .tool(tool("panics").task_support(TaskSupport::optional().immediate_window(Duration::ZERO)).handler(|_| async {
            if std::env::var("NEVER_SET_IN_TESTS_X").is_err() {
                panic!("secret panic text");
            }
            Ok::<_, HandlerError>(CallToolResult::text("unreachable"))
        }))
        .build()
        .unwrap()
        .service()
}

fn tasks() -> TasksExtension {
    TasksExtension::builder()
        .immediate_window(Duration::from_millis(50))
        .poll_interval(Duration::from_millis(20))
        .build()
}

struct Req<'a> {
    method: &'a str,
    params: Value,
    ext: bool,
    principal: Option<&'a str>,
    name: Option<&'a str>,
}

impl<'a> Req<'a> {
    fn new(method: &'a str, params: Value) -> Self {
        let name = None;
        Self {
            method,
            params,
            ext: true,
            principal: None,
            name,
        }
    }
    fn no_ext(mut self) -> Self {
        self.ext = false;
        self
    }
    fn acting_for(mut self, p: &'a str) -> Self {
        self.principal = Some(p);
        self
    }
    fn name(mut self, n: &'a str) -> Self {
        self.name = Some(n);
        self
    }
}

async fn send(svc: &McpService, req: Req<'_>) -> (StatusCode, Value) {
    let caps = if req.ext {
        json!({"extensions": {EXTENSION_ID: {}}, "elicitation": {}})
    } else {
        json!({"elicitation": {}})
    };
    let mut params = req.params.clone();
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps,
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": req.method, "params": params});
    let mut builder = Request::post("http://localhost/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", VERSION)
        .header("mcp-method", req.method);
    let name = req.name.map(str::to_owned).or_else(|| {
        req.params
            .get("name")
            .or_else(|| req.params.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    if let Some(name) = name {
        builder = builder.header("mcp-name", name);
    }
    let mut request = builder
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    if let Some(p) = req.principal {
        request.extensions_mut().insert(Principal(p.to_owned()));
    }
    let response = svc.handle(request).await;
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    let json = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("data: "))
        .map_or_else(
            || serde_json::from_str(&text).unwrap(),
            |l| serde_json::from_str(l).unwrap(),
        );
    (status, json)
}

async fn call(svc: &McpService, name: &str, args: Value) -> Value {
    let (status, body) = send(
        svc,
        Req::new("tools/call", json!({"name": name, "arguments": args})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["result"].clone()
}

async fn get(svc: &McpService, id: &str) -> Value {
    let (status, body) = send(svc, Req::new("tasks/get", json!({"taskId": id}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["result"].clone()
}

async fn until(svc: &McpService, id: &str, status: &str) -> Value {
    for _ in 0..250 {
        let task = get(svc, id).await;
        if task["status"] == status
            || (task["status"] != "working" && task["status"] != "input_required")
        {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {id} never reached {status}");
}

fn error_of(status: StatusCode, body: &Value, want_status: StatusCode, code: i64) -> String {
    assert_eq!(status, want_status, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    body["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn fast_calls_stay_inline_and_slow_ones_become_tasks() {
    let svc = server(tasks());
    let plain = call(&svc, "sleepy", json!({"ms": 0})).await;
    assert_eq!(plain["resultType"], "complete");
    assert!(plain.get("taskId").is_none());
    let created = call(&svc, "sleepy", json!({"ms": 300})).await;
    assert_eq!(created["resultType"], "task", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 32);
    for key in ["requestState", "ttl", "pollInterval", "result", "task"] {
        assert!(created.get(key).is_none(), "{key} in {created}");
    }
    assert!(
        created["ttlMs"].is_u64() && created["pollIntervalMs"].is_u64(),
        "{created}"
    );
    // Durable before it was answered.
    let now = get(&svc, &id).await;
    assert_eq!(now["resultType"], "complete");
    assert_eq!(now["status"], "working");
    let done = until(&svc, &id, "completed").await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["content"][0]["text"], "slept 300");
    assert!(done["result"].get("_meta").is_none());
    // Without the extension the same tool runs synchronously.
    let (status, body) = send(
        &svc,
        Req::new(
            "tools/call",
            json!({"name": "sleepy", "arguments": {"ms": 100}}),
        )
        .no_ext(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["result"]["content"][0]["text"], "slept 100");
    // A tool without task support never becomes a task.
    assert_eq!(
        call(&svc, "plain", json!({})).await["content"][0]["text"],
        "plain"
    );
}

#[tokio::test]
async fn input_required_update_and_resume() {
    let svc = server(tasks());
    let id = call(&svc, "asker", json!({})).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let waiting = until(&svc, &id, "input_required").await;
    assert_eq!(waiting["status"], "input_required");
    assert_eq!(
        waiting["inputRequests"]["confirm"]["method"],
        "elicitation/create"
    );
    assert!(waiting.get("requestState").is_none());
    // An answer that does not fit the form: -32602 naming the key.
    let (status, body) = send(&svc, Req::new("tasks/update", json!({"taskId": id, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": "yes"}}}}))).await;
    let message = error_of(status, &body, StatusCode::OK, -32602);
    assert!(message.contains("\"confirm\""), "{message}");
    // Keys not outstanding are ignored.
    let (status, body) = send(
        &svc,
        Req::new(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"unknown-key": {"ignored": true}}}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body["result"],
        json!({"resultType": "complete", "_meta": body["result"]["_meta"]})
    );
    assert_eq!(get(&svc, &id).await["status"], "input_required");
    let (status, body) = send(&svc, Req::new("tasks/update", json!({"taskId": id, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["result"].get("taskId").is_none());
    let done = until(&svc, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "confirm=true");
    // tasks/update for a task not waiting for input: acknowledged and ignored.
    let (status, body) = send(
        &svc,
        Req::new(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"confirm": {"action": "decline"}}}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["resultType"], "complete");
    assert_eq!(
        get(&svc, &id).await["result"]["content"][0]["text"],
        "confirm=true"
    );
}

#[tokio::test]
async fn partial_answers_keep_the_rest_outstanding() {
    let svc = server(tasks());
    let id = call(&svc, "two", json!({})).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let waiting = until(&svc, &id, "input_required").await;
    assert_eq!(waiting["inputRequests"].as_object().unwrap().len(), 2);
    send(&svc, Req::new("tasks/update", json!({"taskId": id, "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}}}))).await;
    let still = get(&svc, &id).await;
    assert_eq!(still["status"], "input_required");
    let keys: Vec<&String> = still["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["confirm"]);
    send(&svc, Req::new("tasks/update", json!({"taskId": id, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": false}}}}))).await;
    let done = until(&svc, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "\"Ada\" false");
}

#[tokio::test]
async fn mrtr_before_the_task_then_a_task_with_the_answer() {
    let svc = server(tasks());
    let round1 = call(&svc, "compose", json!({})).await;
    assert_eq!(round1["resultType"], "input_required", "{round1}");
    assert!(round1.get("taskId").is_none());
    let state = round1["requestState"].clone();
    let (status, body) = send(
        &svc,
        Req::new(
            "tools/call",
            json!({
                "name": "compose", "arguments": {}, "requestState": state,
                "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}}
            }),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let created = &body["result"];
    assert_eq!(created["resultType"], "task", "{created}");
    assert!(created.get("requestState").is_none() && created.get("inputRequests").is_none());
    let done = until(&svc, created["taskId"].as_str().unwrap(), "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, \"Alice\"");
}

#[tokio::test]
async fn tool_errors_complete_and_protocol_errors_and_panics_fail() {
    let svc = server(tasks());
    let id = call(&svc, "tool_error", json!({})).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let done = until(&svc, &id, "completed").await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["isError"], true);
    assert!(done.get("error").is_none());
    let id = call(&svc, "rpc_error", json!({})).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let failed = until(&svc, &id, "failed").await;
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["error"]["code"], -32050);
    assert!(failed.get("result").is_none());
    assert!(
        failed["statusMessage"]
            .as_str()
            .unwrap()
            .contains("backend refused")
    );
    let id = call(&svc, "panics", json!({})).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let failed = until(&svc, &id, "failed").await;
    assert_eq!(failed["error"]["code"], -32603);
    assert!(
        !failed.to_string().contains("secret panic text"),
        "{failed}"
    );
}

#[tokio::test]
async fn cancel_is_acknowledged_settles_to_cancelled_and_is_idempotent() {
    let svc = server(tasks());
    let id = call(&svc, "sleepy", json!({"ms": 60_000})).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, body) = send(&svc, Req::new("tasks/cancel", json!({"taskId": id}))).await;
    assert_eq!(status, StatusCode::OK);
    let ack = body["result"].as_object().unwrap();
    assert_eq!(ack["resultType"], "complete");
    for key in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(!ack.contains_key(key), "{key}");
    }
    let done = until(&svc, &id, "cancelled").await;
    assert_eq!(done["status"], "cancelled");
    let (status, body) = send(&svc, Req::new("tasks/cancel", json!({"taskId": id}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["result"]["resultType"], "complete");
    assert_eq!(get(&svc, &id).await["status"], "cancelled");
    // A task waiting for input is cancelled too.
    let id = call(&svc, "asker", json!({})).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    until(&svc, &id, "input_required").await;
    send(&svc, Req::new("tasks/cancel", json!({"taskId": id}))).await;
    assert_eq!(until(&svc, &id, "cancelled").await["status"], "cancelled");
}

#[tokio::test]
async fn unknown_foreign_expired_and_malformed_task_ids() {
    let svc = server(
        TasksExtension::builder()
            .immediate_window(Duration::ZERO)
            .ttl(Some(Duration::from_millis(300)))
            .build(),
    );
    let (_, body) = send(
        &svc,
        Req::new(
            "tools/call",
            json!({"name": "sleepy", "arguments": {"ms": 0}}),
        )
        .acting_for("alice"),
    )
    .await;
    let id = body["result"]["taskId"].as_str().unwrap().to_owned();
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let params = |id: &str| json!({"taskId": id, "inputResponses": {}});
        let (s1, unknown) = send(
            &svc,
            Req::new(method, params("0123456789abcdef0123456789abcdef")).acting_for("alice"),
        )
        .await;
        let (s2, foreign) = send(&svc, Req::new(method, params(&id)).acting_for("mallory")).await;
        let action = match method {
            "tasks/get" => "retrieve",
            "tasks/update" => "update",
            _ => "cancel",
        };
        assert_eq!(
            error_of(s1, &unknown, StatusCode::OK, -32602),
            format!("Failed to {action} task: Task not found")
        );
        assert_eq!(
            error_of(s2, &foreign, StatusCode::OK, -32602),
            format!("Failed to {action} task: Task not found")
        );
        assert_eq!(
            unknown["error"], foreign["error"],
            "existence must not leak"
        );
    }
    assert_eq!(until_as(&svc, &id, "alice").await, "completed");
    tokio::time::sleep(Duration::from_millis(350)).await;
    let (status, body) = send(
        &svc,
        Req::new("tasks/get", json!({"taskId": id})).acting_for("alice"),
    )
    .await;
    assert_eq!(
        error_of(status, &body, StatusCode::OK, -32602),
        "Failed to retrieve task: Task has expired"
    );
    let (status, body) = send(
        &svc,
        Req::new("tasks/get", json!({"taskId": id})).acting_for("mallory"),
    )
    .await;
    assert_eq!(
        error_of(status, &body, StatusCode::OK, -32602),
        "Failed to retrieve task: Task not found"
    );
    // Malformed ids: the HTTP layer reads the member Mcp-Name mirrors before dispatch.
    let (status, body) = send(&svc, Req::new("tasks/get", json!({})).name("x")).await;
    let message = error_of(status, &body, StatusCode::BAD_REQUEST, -32602);
    assert!(message.contains("params.taskId"), "{message}");
    let (status, body) = send(&svc, Req::new("tasks/get", json!({"taskId": 7})).name("7")).await;
    let message = error_of(status, &body, StatusCode::BAD_REQUEST, -32602);
    assert!(message.contains("must be a string"), "{message}");
    let long = "a".repeat(300);
    let (status, body) = send(&svc, Req::new("tasks/get", json!({"taskId": long}))).await;
    let message = error_of(status, &body, StatusCode::OK, -32602);
    assert!(
        message.contains("taskId") && message.contains("256"),
        "{message}"
    );
    // tasks/update without inputResponses names the member.
    let (status, body) = send(&svc, Req::new("tasks/update", json!({"taskId": "abc"}))).await;
    assert!(error_of(status, &body, StatusCode::OK, -32602).contains("inputResponses"));
}

async fn until_as(svc: &McpService, id: &str, principal: &str) -> String {
    for _ in 0..100 {
        let (_, body) = send(
            svc,
            Req::new("tasks/get", json!({"taskId": id})).acting_for(principal),
        )
        .await;
        let status = body["result"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if status != "working" {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never finished");
}

#[tokio::test]
async fn headers_extension_and_removed_methods() {
    let svc = server(tasks());
    let id = call(&svc, "sleepy", json!({"ms": 60_000})).await["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    // Mcp-Name mismatched, then missing.
    let (status, body) = send(
        &svc,
        Req::new("tasks/get", json!({"taskId": id})).name("other"),
    )
    .await;
    error_of(status, &body, StatusCode::BAD_REQUEST, -32020);
    let (status, body) = send_without_name(&svc, "tasks/get", json!({"taskId": id})).await;
    error_of(status, &body, StatusCode::BAD_REQUEST, -32020);
    // Without the extension on the request: -32021 with the required capability.
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let (status, body) = send(
            &svc,
            Req::new(method, json!({"taskId": id, "inputResponses": {}})).no_ext(),
        )
        .await;
        error_of(status, &body, StatusCode::BAD_REQUEST, -32021);
        assert_eq!(
            body["error"]["data"]["requiredCapabilities"]["extensions"][EXTENSION_ID],
            json!({})
        );
    }
    let (status, body) = send(
        &svc,
        Req::new("tools/call", json!({"name": "must_task", "arguments": {}})).no_ext(),
    )
    .await;
    error_of(status, &body, StatusCode::BAD_REQUEST, -32021);
    assert_eq!(
        body["error"]["data"]["requiredCapabilities"]["extensions"][EXTENSION_ID],
        json!({})
    );
    for method in ["tasks/result", "tasks/list"] {
        let (status, body) = send(&svc, Req::new(method, json!({"taskId": id}))).await;
        error_of(status, &body, StatusCode::NOT_FOUND, -32601);
    }
    send(&svc, Req::new("tasks/cancel", json!({"taskId": id}))).await;
}

async fn send_without_name(svc: &McpService, method: &str, params: Value) -> (StatusCode, Value) {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION_ID: {}}},
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let request = Request::post("http://localhost/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", VERSION)
        .header("mcp-method", method)
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let response = svc.handle(request).await;
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap())
}

#[tokio::test]
async fn a_full_store_refuses_with_the_limit() {
    let svc = server(
        TasksExtension::builder()
            .immediate_window(Duration::ZERO)
            .max_tasks(1)
            .build(),
    );
    let first = call(&svc, "sleepy", json!({"ms": 60_000})).await;
    assert_eq!(first["resultType"], "task");
    let (status, body) = send(
        &svc,
        Req::new(
            "tools/call",
            json!({"name": "sleepy", "arguments": {"ms": 1}}),
        ),
    )
    .await;
    let message = error_of(status, &body, StatusCode::OK, -32603);
    assert!(
        message.contains("busy") && message.contains('1'),
        "{message}"
    );
    assert_eq!(body["error"]["data"]["limit"], 1);
    assert_eq!(
        get(&svc, first["taskId"].as_str().unwrap()).await["status"],
        "working"
    );
}

#[tokio::test]
async fn listen_acknowledges_own_task_ids_and_streams_their_status() {
    let svc = server(tasks());
    let (_, body) = send(
        &svc,
        Req::new(
            "tools/call",
            json!({"name": "sleepy", "arguments": {"ms": 400}}),
        )
        .acting_for("alice"),
    )
    .await;
    let mine = body["result"]["taskId"].as_str().unwrap().to_owned();
    let (_, body) = send(
        &svc,
        Req::new(
            "tools/call",
            json!({"name": "sleepy", "arguments": {"ms": 60_000}}),
        )
        .acting_for("bob"),
    )
    .await;
    let theirs = body["result"]["taskId"].as_str().unwrap().to_owned();
    // Without the extension: -32021.
    let (status, body) = send(
        &svc,
        Req::new(
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [mine]}}),
        )
        .no_ext()
        .acting_for("alice"),
    )
    .await;
    error_of(status, &body, StatusCode::BAD_REQUEST, -32021);
    let caps = json!({"extensions": {EXTENSION_ID: {}}});
    let body = json!({"jsonrpc": "2.0", "id": "L1", "method": "subscriptions/listen", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": caps},
        "notifications": {"taskIds": [mine, theirs, "unknown"]}
    }});
    let mut request = Request::post("http://localhost/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", VERSION)
        .header("mcp-method", "subscriptions/listen")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    request
        .extensions_mut()
        .insert(Principal("alice".to_owned()));
    let response = svc.handle(request).await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while let Ok(Some(Ok(frame))) = tokio::time::timeout_at(deadline, body.frame()).await {
        let Ok(data) = frame.into_data() else {
            continue;
        };
        for line in String::from_utf8_lossy(&data).lines() {
            if let Some(json) = line.strip_prefix("data: ") {
                seen.push(serde_json::from_str::<Value>(json).unwrap());
            }
        }
        if seen.iter().any(|n| n["params"]["status"] == "completed") {
            break;
        }
    }
    assert_eq!(
        seen[0]["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(seen[0]["params"]["notifications"]["taskIds"], json!([mine]));
    let done = seen
        .iter()
        .find(|n| n["params"]["status"] == "completed")
        .expect("completion notified");
    assert_eq!(done["method"], "notifications/tasks");
    assert_eq!(done["params"]["taskId"], mine.as_str());
    assert_eq!(done["params"]["result"]["content"][0]["text"], "slept 400");
    assert_eq!(
        done["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "L1"
    );
    assert!(
        seen.iter()
            .all(|n| n["params"]["taskId"] != theirs.as_str())
    );
    assert!(seen.iter().all(|n| n["method"] != "notifications/progress"));
}
