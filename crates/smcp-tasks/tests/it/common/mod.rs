//! Shared helpers of the smcp-tasks tests: raw HTTP requests to the in-process tower service
//! (no sockets), with or without the extension declared and acting for a principal, and the
//! polls that wait for a task's status.

#![allow(dead_code, unreachable_pub, missing_docs)]
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::needless_pass_by_value
)]

use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use smcp_server::{McpService, Principal};
use smcp_tasks::EXTENSION_ID;

pub const VERSION: &str = "2026-07-28";

/// `content[key]` of an elicitation answer, as JSON.
pub fn field(answer: &smcp_proto::client::elicitation::ElicitResult, key: &str) -> Value {
    serde_json::to_value(answer).unwrap()["content"][key].clone()
}

/// An object schema with one property `key` of JSON type `kind`, required.
pub fn one_field(key: &str, kind: &str) -> Value {
    json!({"type": "object", "properties": {key: {"type": kind}}, "required": [key]})
}

/// An accepted form answer `{key: value}`.
pub fn accept(key: &str, value: Value) -> Value {
    json!({"action": "accept", "content": {key: value}})
}

/// The request `_meta` of the 2026-07-28 revision, declaring the tasks extension (or not).
pub fn meta(ext: bool) -> Value {
    let caps = if ext {
        json!({"extensions": {EXTENSION_ID: {}}, "elicitation": {}})
    } else {
        json!({"elicitation": {}})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

/// One JSON-RPC request as the in-process HTTP service receives it.
#[derive(Debug, Clone)]
pub struct Req<'a> {
    pub method: &'a str,
    pub params: Value,
    pub ext: bool,
    pub principal: Option<&'a str>,
}

impl<'a> Req<'a> {
    pub fn new(method: &'a str, params: Value) -> Self {
        Self {
            method,
            params,
            ext: true,
            principal: None,
        }
    }

    pub fn no_ext(mut self) -> Self {
        self.ext = false;
        self
    }

    pub fn acting_for(mut self, principal: &'a str) -> Self {
        self.principal = Some(principal);
        self
    }

    /// The HTTP request: `Mcp-Method`, and `Mcp-Name` from `params.name` or `params.taskId`.
    pub fn build(&self, id: Value) -> Request<Full<Bytes>> {
        let mut params = self.params.clone();
        params["_meta"] = meta(self.ext);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": self.method, "params": params});
        let mut builder = Request::post("http://localhost/mcp")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", VERSION)
            .header("mcp-method", self.method);
        let name = self
            .params
            .get("name")
            .or_else(|| self.params.get("taskId"))
            .and_then(Value::as_str);
        if let Some(name) = name {
            builder = builder.header("mcp-name", name);
        }
        let mut request = builder
            .body(Full::new(Bytes::from(body.to_string())))
            .unwrap();
        if let Some(p) = self.principal {
            request.extensions_mut().insert(Principal(p.to_owned()));
        }
        request
    }
}

/// Sends `req` and returns the status and the JSON-RPC response (the last SSE `data:` line of
/// a streamed answer).
pub async fn send(svc: &McpService, req: Req<'_>) -> (StatusCode, Value) {
    let response = svc.handle(req.build(json!(1))).await;
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

/// The `result` of a request that must succeed.
pub async fn ok(svc: &McpService, req: Req<'_>) -> Value {
    let (status, body) = send(svc, req).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.get("error").is_none(), "{body}");
    body["result"].clone()
}

/// A `tools/call` that must create a task; returns its id.
pub async fn start(svc: &McpService, req: Req<'_>) -> String {
    let created = ok(svc, req).await;
    assert_eq!(created["resultType"], "task", "{created}");
    created["taskId"].as_str().unwrap().to_owned()
}

/// `tasks/get` for the unnamed principal.
pub async fn get(svc: &McpService, id: &str) -> Value {
    ok(svc, Req::new("tasks/get", json!({"taskId": id}))).await
}

/// `tasks/update` that must be acknowledged.
pub async fn update(svc: &McpService, id: &str, responses: Value) {
    let ack = ok(
        svc,
        Req::new(
            "tasks/update",
            json!({"taskId": id, "inputResponses": responses}),
        ),
    )
    .await;
    assert_eq!(ack["resultType"], "complete", "{ack}");
}

/// Polls `tasks/get` until the task is in `status` or terminal (bounded: 10 s).
pub async fn until(svc: &McpService, id: &str, status: &str) -> Value {
    for _ in 0..500 {
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

/// The sorted keys of `inputRequests`.
pub fn keys(task: &Value) -> Vec<String> {
    let mut keys: Vec<String> = task["inputRequests"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

/// A `DetailedTask` as both `tasks/get` and `notifications/tasks` carry it: without the
/// envelope members (`resultType`, `_meta`).
pub fn detailed(value: &Value) -> Value {
    let mut value = value.clone();
    if let Some(map) = value.as_object_mut() {
        map.remove("resultType");
        map.remove("_meta");
    }
    value
}
