//! SEP-2663 tasks on the real `smcpd` binary, over raw HTTP/1.1: the demo tool `long_job`
//! as a task (created, polled, asked, answered with `tasks/update`, completed), a task
//! cancelled mid-run, a task past its TTL, the same tool without the extension, `--no-tasks`,
//! and the bounds of the `--tasks-*` flags.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Smcpd, mcp, request_bytes, roundtrip};

const EXT: &str = "io.modelcontextprotocol/tasks";

/// Client capabilities declaring the tasks extension and form elicitation.
fn task_caps() -> Value {
    json!({"extensions": {EXT: {}}, "elicitation": {"form": {}}})
}

fn with_caps(mut body: Value, caps: &Value) -> Value {
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = caps.clone();
    body
}

/// The status code and the JSON body of a response.
fn parse(resp: &str) -> (u16, Value) {
    let status = resp
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {resp}"));
    let start = resp.find("\r\n\r\n").expect("a head") + 4;
    let body = serde_json::from_str(resp[start..].trim())
        .unwrap_or_else(|e| panic!("not a JSON body ({e}): {resp}"));
    (status, body)
}

async fn send(addr: SocketAddr, body: &Value, headers: &[(&str, &str)]) -> (u16, Value) {
    parse(&roundtrip(addr, &request_bytes(body, headers)).await)
}

/// `tools/call long_job` with `arguments`, declaring `caps`.
async fn long_job(addr: SocketAddr, arguments: Value, caps: &Value) -> Value {
    let call = mcp(
        json!("call"),
        "tools/call",
        json!({"name": "long_job", "arguments": arguments}),
    );
    let (status, body) = send(addr, &with_caps(call, caps), &[]).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// A task method (`tasks/get`, …) for `task_id`, with `Mcp-Name: <taskId>`, declaring `caps`.
async fn task_method(
    addr: SocketAddr,
    method: &str,
    task_id: &str,
    extra: Value,
    caps: &Value,
) -> (u16, Value) {
    let mut params = json!({"taskId": task_id});
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    let body = with_caps(mcp(json!(method), method, params), caps);
    send(addr, &body, &[("Mcp-Name", task_id)]).await
}

async fn get(addr: SocketAddr, task_id: &str) -> Value {
    let (status, body) = task_method(addr, "tasks/get", task_id, json!({}), &task_caps()).await;
    assert_eq!(status, 200, "{body}");
    let result = body["result"].clone();
    assert_eq!(result["resultType"], "complete", "{body}");
    assert_eq!(result["taskId"], task_id, "{body}");
    result
}

/// Polls `tasks/get` until the status is not `status` (at most `within`); returns every
/// status seen and the first answer with another status.
async fn poll_past(
    addr: SocketAddr,
    task_id: &str,
    status: &str,
    within: Duration,
) -> (Vec<String>, Value) {
    let deadline = Instant::now() + within;
    let mut seen = Vec::new();
    loop {
        let task = get(addr, task_id).await;
        let now = task["status"].as_str().unwrap().to_owned();
        if seen.last() != Some(&now) {
            seen.push(now.clone());
        }
        if now != status {
            return (seen, task);
        }
        assert!(
            Instant::now() < deadline,
            "task {task_id} still {status} after {within:?}: {task}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The `result` of the JSON-RPC response in an SSE response.
fn sse_result(resp: &str) -> Value {
    resp.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .find(|v| v.get("result").is_some())
        .unwrap_or_else(|| panic!("no result event: {resp}"))["result"]
        .clone()
}

/// An empty acknowledgement (`tasks/update`, `tasks/cancel`): `resultType` and `_meta` only.
fn assert_empty_ack(body: &Value) {
    let mut result = body["result"].clone();
    assert!(result.is_object(), "{body}");
    result.as_object_mut().unwrap().remove("_meta");
    assert_eq!(result, json!({"resultType": "complete"}), "{body}");
}

/// Checks a `CreateTaskResult` and returns its task id.
fn created(body: &Value, ttl_ms: u64, poll_ms: u64) -> String {
    let r = &body["result"];
    assert_eq!(r["resultType"], "task", "{body}");
    assert_eq!(r["status"], "working", "{body}");
    assert_eq!(r["ttlMs"].as_u64(), Some(ttl_ms), "{body}");
    assert_eq!(r["pollIntervalMs"].as_u64(), Some(poll_ms), "{body}");
    assert!(
        r["createdAt"].is_string() && r["lastUpdatedAt"].is_string(),
        "{body}"
    );
    let id = r["taskId"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 32, "128 random bits in hex: {id}");
    id
}

#[tokio::test(flavor = "multi_thread")]
async fn long_job_runs_as_a_task_that_asks_and_completes() {
    let mut server = Smcpd::start_with(&["--tasks-poll-interval", "100ms"]);
    let log = server.follow_log();
    let addr = server.addr;

    // The extension is advertised, and long_job listed.
    let (_, discover) = send(addr, &mcp(json!(1), "server/discover", json!({})), &[]).await;
    assert_eq!(
        discover["result"]["capabilities"]["extensions"][EXT],
        json!({}),
        "{discover}"
    );
    let (_, tools) = send(addr, &mcp(json!(2), "tools/list", json!({})), &[]).await;
    assert!(
        tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "long_job"),
        "{tools}"
    );

    let body = long_job(addr, json!({"seconds": 3, "confirm_at": 1}), &task_caps()).await;
    let id = created(&body, 3_600_000, 100);

    // Working first, then waiting for the answer to its question.
    let (seen, task) = poll_past(addr, &id, "working", Duration::from_secs(10)).await;
    assert_eq!(seen, ["working", "input_required"], "{task}");
    let request = &task["inputRequests"]["continue"];
    assert_eq!(request["method"], "elicitation/create", "{task}");
    assert_eq!(request["params"]["message"], "Continue?", "{task}");
    assert_eq!(
        request["params"]["requestedSchema"]["properties"]["continue"]["type"], "boolean",
        "{task}"
    );
    assert_eq!(
        request["params"]["requestedSchema"]["required"],
        json!(["continue"]),
        "{task}"
    );
    // It stays there until answered.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(get(addr, &id).await["status"], "input_required");

    let answer = json!({"inputResponses": {
        "continue": {"action": "accept", "content": {"continue": true}}
    }});
    let (status, ack) = task_method(addr, "tasks/update", &id, answer, &task_caps()).await;
    assert_eq!(status, 200, "{ack}");
    assert_empty_ack(&ack);

    // The answers are taken at once: the task is working again before the ack.
    let task = get(addr, &id).await;
    assert_eq!(task["status"], "working", "{task}");
    assert_eq!(task["statusMessage"], "Input received; resuming", "{task}");
    assert!(task["inputRequests"].is_null(), "{task}");
    let (_, task) = poll_past(addr, &id, "working", Duration::from_secs(10)).await;
    assert_eq!(task["status"], "completed", "{task}");
    let result = &task["result"];
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("long_job finished: worked 3 s in ")
            && text.ends_with(", continued after the question at 1 s"),
        "{text}"
    );
    assert_eq!(result["structuredContent"]["worked"], 3, "{task}");
    assert_eq!(result["structuredContent"]["confirmedAt"], 1, "{task}");
    assert!(
        result["isError"].is_null() || result["isError"] == false,
        "{task}"
    );
    let elapsed = result["structuredContent"]["elapsedMs"].as_u64().unwrap();
    assert!(elapsed >= 3000, "{task}");
    // The round after the answer resumed from the state the first kept: the job started once.
    let count = |needle: &str| log.lines().iter().filter(|l| l.contains(needle)).count();
    assert_eq!(count("long_job started"), 1, "{:?}", log.lines());

    // Declining stops the job: completed, with an isError result saying so.
    let body = long_job(addr, json!({"seconds": 3, "confirm_at": 1}), &task_caps()).await;
    let id = created(&body, 3_600_000, 100);
    let (_, task) = poll_past(addr, &id, "working", Duration::from_secs(10)).await;
    assert_eq!(task["status"], "input_required", "{task}");
    let decline = json!({"inputResponses": {"continue": {"action": "decline"}}});
    let (status, ack) = task_method(addr, "tasks/update", &id, decline, &task_caps()).await;
    assert_eq!(status, 200, "{ack}");
    let (_, task) = poll_past(addr, &id, "working", Duration::from_secs(5)).await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["result"]["isError"], true, "{task}");
    assert_eq!(
        task["result"]["content"][0]["text"],
        "long_job stopped at the user's request after 1 of 3 s (answer: Decline)",
        "{task}"
    );
    assert_eq!(count("long_job started"), 2, "{:?}", log.lines());
    assert_eq!(count("long_job finished"), 1, "{:?}", log.lines());
    assert!(server.terminate().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_cancelled_mid_run_ends_cancelled_and_its_handler_stops() {
    let mut server = Smcpd::start_with(&["--tasks-poll-interval", "100ms"]);
    let log = server.follow_log();
    let addr = server.addr;
    let body = long_job(addr, json!({"seconds": 3}), &task_caps()).await;
    let id = created(&body, 3_600_000, 100);
    assert!(
        log.wait_for("long_job started", Duration::from_secs(5))
            .is_some()
    );
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(get(addr, &id).await["status"], "working");

    let (status, ack) = task_method(addr, "tasks/cancel", &id, json!({}), &task_caps()).await;
    assert_eq!(status, 200, "{ack}");
    assert_empty_ack(&ack);
    let (_, task) = poll_past(addr, &id, "working", Duration::from_secs(5)).await;
    assert_eq!(task["status"], "cancelled", "{task}");
    assert!(
        task["result"].is_null() && task["error"].is_null(),
        "{task}"
    );
    // The handler saw the cancellation after one full second of work (and not all three).
    let line = log
        .wait_for("long_job cancelled after", Duration::from_secs(5))
        .expect("the handler logs its cancellation");
    assert!(line.contains(" of 3 s"), "{line}");
    assert!(!line.contains("after 3 of 3 s"), "{line}");
    assert!(
        !log.lines().iter().any(|l| l.contains("long_job finished")),
        "{:?}",
        log.lines()
    );
    // Cancelling a cancelled task is acknowledged again (idempotent).
    let (status, again) = task_method(addr, "tasks/cancel", &id, json!({}), &task_caps()).await;
    assert_eq!(status, 200, "{again}");
    assert_empty_ack(&again);
    assert_eq!(get(addr, &id).await["status"], "cancelled");
    assert!(server.terminate().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_past_its_ttl_is_expired() {
    let server = Smcpd::start_with(&["--tasks-ttl", "1s", "--tasks-poll-interval", "100ms"]);
    let addr = server.addr;
    let body = long_job(addr, json!({"seconds": 2}), &task_caps()).await;
    let id = created(&body, 1000, 100);
    let deadline = Instant::now() + Duration::from_secs(5);
    let error = loop {
        let (status, body) = task_method(addr, "tasks/get", &id, json!({}), &task_caps()).await;
        if !body["error"].is_null() {
            assert_eq!(status, 200, "{body}");
            break body["error"].clone();
        }
        assert_eq!(body["result"]["status"], "working", "{body}");
        assert!(Instant::now() < deadline, "not expired: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(error["code"], -32602, "{error}");
    assert_eq!(
        error["message"], "Failed to retrieve task: Task has expired",
        "{error}"
    );
    let (_, body) = task_method(addr, "tasks/cancel", &id, json!({}), &task_caps()).await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert_eq!(
        body["error"]["message"], "Failed to cancel task: Task has expired",
        "{body}"
    );
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_extension_long_job_answers_inline() {
    let server = Smcpd::start();
    let addr = server.addr;
    let plain = json!({"elicitation": {"form": {}}});
    let body = long_job(addr, json!({"seconds": 1}), &plain).await;
    let r = &body["result"];
    assert_ne!(r["resultType"], "task", "{body}");
    assert!(r["taskId"].is_null(), "{body}");
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("long_job finished: worked 1 s in "),
        "{body}"
    );

    // Inline, progress is reported every second on the call's stream.
    let mut call = with_caps(
        mcp(
            json!(7),
            "tools/call",
            json!({"name": "long_job", "arguments": {"seconds": 2}}),
        ),
        &plain,
    );
    call["params"]["_meta"]["progressToken"] = json!("p");
    let resp = roundtrip(addr, &request_bytes(&call, &[])).await;
    assert!(resp.contains("text/event-stream"), "{resp}");
    for step in ["\"progress\":1", "\"progress\":2"] {
        assert!(resp.contains(step), "{step} in {resp}");
    }
    assert!(resp.contains("long_job finished: worked 2 s"), "{resp}");

    // Inline, the question is an ordinary multi round-trip one; the retry carrying the answer
    // resumes after the work already done: progress 1 before the question, 2 after, never 1
    // again.
    let mut first = with_caps(
        mcp(
            json!(8),
            "tools/call",
            json!({"name": "long_job", "arguments": {"seconds": 2, "confirm_at": 1}}),
        ),
        &plain,
    );
    first["params"]["_meta"]["progressToken"] = json!("q");
    let resp = roundtrip(addr, &request_bytes(&first, &[])).await;
    assert!(resp.contains("\"progress\":1,"), "{resp}");
    let ir = sse_result(&resp);
    assert_eq!(ir["resultType"], "input_required", "{resp}");
    assert_eq!(
        ir["inputRequests"]["continue"]["params"]["message"], "Continue?",
        "{resp}"
    );
    let mut retry = first.clone();
    retry["id"] = json!(9);
    retry["params"]["inputResponses"] =
        json!({"continue": {"action": "accept", "content": {"continue": true}}});
    retry["params"]["requestState"] = ir["requestState"].clone();
    let resp = roundtrip(addr, &request_bytes(&retry, &[])).await;
    assert!(resp.contains("\"progress\":2,"), "{resp}");
    assert!(!resp.contains("\"progress\":1,"), "{resp}");
    let done = sse_result(&resp);
    assert_eq!(done["structuredContent"]["worked"], 2, "{resp}");
    assert_eq!(done["structuredContent"]["confirmedAt"], 1, "{resp}");

    // Bad arguments, before any task: a tool error naming the argument and its bounds
    // (the input schema's, and the tool's own check that `confirm_at` is below `seconds`).
    let body = long_job(addr, json!({"seconds": 0}), &task_caps()).await;
    assert_eq!(body["result"]["isError"], true, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"],
        "Invalid arguments for tool \"long_job\": /seconds: the value is less than the minimum of 1",
        "{body}"
    );
    let body = long_job(addr, json!({"seconds": 2, "confirm_at": 2}), &task_caps()).await;
    assert_eq!(
        body["result"]["content"][0]["text"],
        "invalid arguments: \"confirm_at\" must be an integer from 0 to 1 (below \"seconds\")",
        "{body}"
    );

    // The task methods need the extension on the request: -32021, HTTP 400.
    let id = "0123456789abcdef0123456789abcdef";
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let extra = if method == "tasks/update" {
            json!({"inputResponses": {}})
        } else {
            json!({})
        };
        let (status, body) = task_method(addr, method, id, extra, &plain).await;
        assert_eq!(status, 400, "{method}: {body}");
        assert_eq!(body["error"]["code"], -32021, "{method}: {body}");
        assert_eq!(
            body["error"]["data"]["requiredCapabilities"]["extensions"][EXT],
            json!({}),
            "{method}: {body}"
        );
    }
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn no_tasks_serves_neither_the_extension_nor_long_job() {
    let server = Smcpd::start_with(&["--no-tasks"]);
    let addr = server.addr;
    let (_, discover) = send(addr, &mcp(json!(1), "server/discover", json!({})), &[]).await;
    assert!(
        discover["result"]["capabilities"]["extensions"][EXT].is_null(),
        "{discover}"
    );
    let (_, tools) = send(addr, &mcp(json!(2), "tools/list", json!({})), &[]).await;
    assert!(
        !tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "long_job"),
        "{tools}"
    );
    let id = "0123456789abcdef0123456789abcdef";
    let (_, body) = task_method(addr, "tasks/get", id, json!({}), &task_caps()).await;
    assert_eq!(body["error"]["code"], -32601, "{body}");
    server.stop();
}

/// `smcpd` with `args` (and a free port); it must refuse to start.
fn refused(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_smcpd"))
        .args(["--listen", "127.0.0.1:0", "--clock-secs", "0"])
        .args(args)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{args:?} accepted");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("listening on"),
        "{args:?}"
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn task_flags_are_bounded_with_precise_errors() {
    let e = refused(&["--tasks-ttl", "500ms"]);
    assert!(
        e.contains("--tasks-ttl") && e.contains("must be from 1s to 10080m, got 500ms"),
        "{e}"
    );
    let e = refused(&["--tasks-poll-interval", "5ms"]);
    assert!(
        e.contains("--tasks-poll-interval") && e.contains("must be from 10ms to 5m, got 5ms"),
        "{e}"
    );
    let e = refused(&["--tasks-immediate-window", "61s"]);
    assert!(
        e.contains("--tasks-immediate-window") && e.contains("must be from 0s to 1m, got 61s"),
        "{e}"
    );
    let e = refused(&["--tasks-max", "0"]);
    assert!(
        e.contains("--tasks-max") && e.contains("1..=1000000"),
        "{e}"
    );
    let e = refused(&["--tasks-ttl", "2s", "--tasks-poll-interval", "3s"]);
    assert!(
        e.contains("--tasks-poll-interval (3s) must not exceed --tasks-ttl (2s)"),
        "{e}"
    );
    let e = refused(&["--no-tasks", "--tasks-max", "5"]);
    assert!(e.contains("--no-tasks") && e.contains("--tasks-max"), "{e}");
}
