//! SEP-2663 tasks, client side, against scripted servers that answer as the SEP's examples do:
//! following a task to its end, polling intervals, input requests, failures, cancellation,
//! malformed answers and the headers of the task methods.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Seen, event, id_of, json, result, scripted, sse};
use futures_util::StreamExt;
use serde_json::{Value, json};
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult, ElicitValue};
use smcp_client::proto::ext::tasks::TaskStatus;
use smcp_client::proto::patterns::mrtr::InputResponses;
use smcp_client::proto::patterns::subscriptions::SubscriptionFilter;
use smcp_client::{
    BoxFuture, CancellationToken, Client, InputHandler, InputHandlerError, InputKinds,
    SubscriptionEvent, TaskPolling, ToolCallOutcome,
};

const ID: &str = "786512e2-9e0d-44bd-8f29-789f320fe840";
const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
const EXT: &str = "io.modelcontextprotocol/tasks";

/// A task in `status`, with `extra` members (payload, `pollIntervalMs`, …) merged in.
fn task(status: &str, extra: Value) -> Value {
    let mut t = json!({
        "taskId": ID,
        "status": status,
        "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:40:00Z",
        "ttlMs": 60000,
        "pollIntervalMs": 10
    });
    let Value::Object(extra) = extra else {
        panic!("extra members must be an object")
    };
    for (k, v) in extra {
        t[k] = v;
    }
    t
}

/// A `CreateTaskResult` (the SEP's example, with a short interval).
fn created(extra: Value) -> Value {
    let mut t = task("working", extra);
    t["resultType"] = json!("task");
    t["statusMessage"] = json!("The operation is now in progress.");
    t
}

/// A `tasks/get` answer.
fn get(status: &str, extra: Value) -> Value {
    let mut t = task(status, extra);
    t["resultType"] = json!("complete");
    t
}

fn hello() -> Value {
    json!({"content": [{"type": "text", "text": "Hello, Luca!"}], "isError": false})
}

fn ack() -> Value {
    json!({"resultType": "complete"})
}

fn method(r: &Value) -> &str {
    r["method"].as_str().unwrap_or("")
}

/// Polling fast enough for tests; `TaskPolling`'s other bounds as shipped.
fn fast() -> TaskPolling {
    TaskPolling {
        min_interval: Duration::from_millis(5),
        default_interval: Duration::from_millis(10),
        ..TaskPolling::default()
    }
}

fn client(url: &str) -> Client {
    Client::builder(url)
        .timeout(Some(Duration::from_secs(10)))
        .task_polling(fast())
        .build()
        .unwrap()
}

fn methods(seen: &[Seen]) -> Vec<String> {
    seen.iter().map(|s| method(&s.body).to_owned()).collect()
}

/// Waits (bounded) until the server has seen a request of `m`.
async fn until_seen(seen: impl Fn() -> Vec<Seen>, m: &str) -> Seen {
    for _ in 0..500 {
        if let Some(s) = seen().into_iter().find(|s| method(&s.body) == m) {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the server never saw {m}");
}

/// Answers form elicitations with `{"name": "Luca"}` and counts the prompts by message.
#[derive(Default, Clone)]
struct Prompts(Arc<Mutex<Vec<String>>>);

impl InputHandler for Prompts {
    fn kinds(&self) -> InputKinds {
        InputKinds {
            elicitation_form: true,
            ..InputKinds::default()
        }
    }
    fn elicit(
        &self,
        p: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, InputHandlerError>> {
        let message = match &p {
            ElicitRequestParams::Form(f) => f.message.clone(),
            ElicitRequestParams::Url(u) => u.message.clone(),
        };
        self.0.lock().unwrap().push(message);
        Box::pin(async {
            let mut content = std::collections::BTreeMap::new();
            content.insert("name".to_owned(), ElicitValue::String("Luca".to_owned()));
            Ok(ElicitResult::accept(content))
        })
    }
}

fn elicit(message: &str) -> Value {
    json!({"method": "elicitation/create", "params": {
        "mode": "form", "message": message,
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                            "required": ["name"]}}})
}

#[tokio::test]
async fn an_inline_result_is_returned_and_tools_call_declares_the_extension() {
    let s = scripted(|_, r| match method(r) {
        "tools/list" => result(r, json!({"tools": []})),
        _ => result(r, hello()),
    })
    .await;
    let c = client(&s.url);
    c.list_tools().await.unwrap();
    let r = c.call_tool("hello_world", json!({})).await.unwrap();
    assert_eq!(r.content.len(), 1);
    let seen = s.seen();
    assert_eq!(methods(&seen), ["tools/list", "tools/call"]);
    assert!(
        seen[0].body["params"]["_meta"][CAPS]
            .get("extensions")
            .is_none()
    );
    assert_eq!(
        seen[1].body["params"]["_meta"][CAPS]["extensions"],
        json!({EXT: {}})
    );
    // The low-level API says the same.
    match c.call_tool_task("hello_world", json!({})).await.unwrap() {
        ToolCallOutcome::Complete(r) => assert_eq!(r.content.len(), 1),
        ToolCallOutcome::Task(t) => panic!("no task was created: {t:?}"),
    }
}

#[tokio::test]
async fn the_opt_out_declares_nothing() {
    let s = scripted(|_, r| result(r, hello())).await;
    let c = Client::builder(&s.url).tasks(false).build().unwrap();
    c.call_tool("t", json!({})).await.unwrap();
    let meta = &s.seen()[0].body["params"]["_meta"][CAPS];
    assert_eq!(meta, &json!({}));
    assert!(c.capabilities_for("tools/call").extensions.is_none());
}

#[tokio::test]
async fn a_task_is_followed_through_working_to_completed() {
    let gets = Arc::new(AtomicUsize::new(0));
    let g = gets.clone();
    let s = scripted(move |_, r| match method(r) {
        "tools/call" => result(r, created(json!({}))),
        "tasks/get" => match g.fetch_add(1, Ordering::SeqCst) {
            0 | 1 => result(r, get("working", json!({"statusMessage": "step 1"}))),
            _ => result(r, get("completed", json!({"result": hello()}))),
        },
        _ => json(400, json!(null)),
    })
    .await;
    let statuses = Arc::new(Mutex::new(Vec::new()));
    let st = statuses.clone();
    let r = client(&s.url)
        .tool_call("hello_world")
        .on_task_status(move |t| st.lock().unwrap().push(t.task.status))
        .send()
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&r.content).unwrap()[0]["text"],
        "Hello, Luca!"
    );
    let seen = s.seen();
    assert_eq!(
        methods(&seen),
        ["tools/call", "tasks/get", "tasks/get", "tasks/get"]
    );
    for poll in &seen[1..] {
        assert_eq!(poll.headers["mcp-method"], "tasks/get");
        assert_eq!(poll.headers["mcp-name"], ID);
        assert_eq!(poll.body["params"]["taskId"], ID);
        assert_eq!(
            poll.body["params"]["_meta"][CAPS]["extensions"],
            json!({EXT: {}})
        );
    }
    assert_ne!(seen[1].body["id"], seen[2].body["id"]);
    use TaskStatus::{Completed, Working};
    assert_eq!(
        *statuses.lock().unwrap(),
        [Working, Working, Working, Completed],
        "the seed, then each poll"
    );
}

#[tokio::test]
async fn mrtr_rounds_may_come_before_the_task() {
    let s = scripted(
        |_, r| match (method(r), r["params"].get("inputResponses")) {
            ("tools/call", None) => result(
                r,
                json!({"resultType": "input_required", "inputRequests": {"who": elicit("Who?")}}),
            ),
            ("tools/call", Some(_)) => result(r, created(json!({}))),
            _ => result(r, get("completed", json!({"result": hello()}))),
        },
    )
    .await;
    let prompts = Prompts::default();
    let c = Client::builder(&s.url)
        .task_polling(fast())
        .input_handler(prompts.clone())
        .build()
        .unwrap();
    c.call_tool("t", json!({})).await.unwrap();
    assert_eq!(
        methods(&s.seen()),
        ["tools/call", "tools/call", "tasks/get"]
    );
    assert_eq!(*prompts.0.lock().unwrap(), ["Who?"]);
}

#[tokio::test]
async fn poll_intervals_follow_the_server_with_a_floor_and_a_cap() {
    // The seed asks for 150 ms, the first poll for 300 ms, the second for 0 (raised to the
    // floor), the third for an hour (lowered to the cap). Sleeps are never shorter than asked,
    // so the lower bounds below hold however loaded the machine is.
    let gets = Arc::new(AtomicUsize::new(0));
    let g = gets.clone();
    let s = scripted(move |_, r| match method(r) {
        "tools/call" => result(r, created(json!({"pollIntervalMs": 150}))),
        _ => match g.fetch_add(1, Ordering::SeqCst) {
            0 => result(r, get("working", json!({"pollIntervalMs": 300}))),
            1 => result(r, get("working", json!({"pollIntervalMs": 0}))),
            2 => result(r, get("working", json!({"pollIntervalMs": 3_600_000}))),
            _ => result(r, get("completed", json!({"result": hello()}))),
        },
    })
    .await;
    let c = Client::builder(&s.url)
        .task_polling(TaskPolling {
            min_interval: Duration::from_millis(50),
            max_interval: Duration::from_millis(400),
            ..TaskPolling::default()
        })
        .build()
        .unwrap();
    tokio::time::timeout(Duration::from_secs(20), c.call_tool("t", json!({})))
        .await
        .expect("the hour-long interval is capped")
        .unwrap();
    let seen = s.seen();
    assert_eq!(seen.len(), 5);
    let gap = |i: usize| seen[i].at - seen[i - 1].at;
    assert!(gap(1) >= Duration::from_millis(150), "{:?}", gap(1));
    assert!(gap(2) >= Duration::from_millis(300), "{:?}", gap(2));
    assert!(gap(3) >= Duration::from_millis(50), "{:?}", gap(3));
    assert!(gap(4) >= Duration::from_millis(400), "{:?}", gap(4));
}

#[tokio::test]
async fn input_requests_are_answered_once_per_key_through_tasks_update() {
    // Polls: `name` asked; `name` still shown (the update is not applied yet); `name` and
    // `confirm` shown; completed.
    let gets = Arc::new(AtomicUsize::new(0));
    let g = gets.clone();
    let s = scripted(move |_, r| match method(r) {
        "tools/call" => result(r, created(json!({}))),
        "tasks/update" => result(r, ack()),
        _ => match g.fetch_add(1, Ordering::SeqCst) {
            0 | 1 => result(
                r,
                get(
                    "input_required",
                    json!({"inputRequests": {"name": elicit("Please enter your name.")}}),
                ),
            ),
            2 => result(
                r,
                get(
                    "input_required",
                    json!({"inputRequests": {"name": elicit("Please enter your name."),
                                             "confirm": elicit("Sure?")}}),
                ),
            ),
            _ => result(r, get("completed", json!({"result": hello()}))),
        },
    })
    .await;
    let prompts = Prompts::default();
    let c = Client::builder(&s.url)
        .task_polling(fast())
        .input_handler(prompts.clone())
        .build()
        .unwrap();
    c.call_tool("hello_world", json!({})).await.unwrap();
    assert_eq!(
        *prompts.0.lock().unwrap(),
        ["Please enter your name.", "Sure?"],
        "each key presented once"
    );
    let seen = s.seen();
    assert_eq!(
        methods(&seen),
        [
            "tools/call",
            "tasks/get",
            "tasks/update",
            "tasks/get",
            "tasks/get",
            "tasks/update",
            "tasks/get"
        ]
    );
    let updates: Vec<&Seen> = seen
        .iter()
        .filter(|s| method(&s.body) == "tasks/update")
        .collect();
    assert_eq!(
        updates[0].body["params"]["inputResponses"],
        json!({"name": {"action": "accept", "content": {"name": "Luca"}}})
    );
    assert_eq!(
        updates[1].body["params"]["inputResponses"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["confirm"],
        "never answer a key twice"
    );
    for u in updates {
        assert_eq!(u.body["params"]["taskId"], ID);
        assert_eq!(u.headers["mcp-method"], "tasks/update");
        assert_eq!(u.headers["mcp-name"], ID);
    }
}

#[tokio::test]
async fn a_failed_task_is_its_json_rpc_error_and_a_cancelled_one_its_own_error() {
    let s = scripted(|_, r| match method(r) {
        "tools/call" => result(r, created(json!({}))),
        _ => result(
            r,
            get(
                "failed",
                json!({"statusMessage": "Tool execution failed: API rate limit exceeded",
                       "error": {"code": -32603, "message": "API rate limit exceeded"}}),
            ),
        ),
    })
    .await;
    let err = client(&s.url).call_tool("t", json!({})).await.unwrap_err();
    assert_eq!(err.kind(), smcp_client::ErrorKind::TaskFailed, "{err}");
    assert_eq!(err.jsonrpc_code(), Some(-32603));
    assert_eq!(
        err.jsonrpc_error().unwrap().message,
        "API rate limit exceeded"
    );
    assert_eq!(err.task_id(), Some(ID));
    assert!(!methods(&s.seen()).contains(&"tasks/cancel".to_owned()));

    let s = scripted(|_, r| match method(r) {
        "tools/call" => result(r, created(json!({}))),
        _ => result(
            r,
            get(
                "cancelled",
                json!({"statusMessage": "stopped by an operator"}),
            ),
        ),
    })
    .await;
    let err = client(&s.url).call_tool("t", json!({})).await.unwrap_err();
    assert!(
        err.kind() == smcp_client::ErrorKind::TaskCancelled && !err.is_cancelled(),
        "{err}"
    );
    assert!(err.to_string().contains("stopped by an operator"), "{err}");
    assert_eq!(err.task_id(), Some(ID));
    assert!(err.jsonrpc_code().is_none());
    assert!(!methods(&s.seen()).contains(&"tasks/cancel".to_owned()));
}

/// A task that never ends; `tasks/cancel` is acknowledged.
async fn endless() -> common::Scripted {
    scripted(|_, r| match method(r) {
        "tools/call" => result(r, created(json!({}))),
        "tasks/cancel" => result(r, ack()),
        _ => result(r, get("working", json!({}))),
    })
    .await
}

#[tokio::test]
async fn dropping_the_call_sends_tasks_cancel() {
    let s = endless().await;
    let c = client(&s.url);
    let call = c.call_tool("t", json!({}));
    // Dropped once it is polling.
    let seen = s.seen.clone();
    tokio::select! {
        r = call => panic!("the task never ends: {r:?}"),
        _ = until_seen(move || seen.lock().unwrap().clone(), "tasks/get") => {}
    }
    let cancel = until_seen(|| s.seen(), "tasks/cancel").await;
    assert_eq!(cancel.body["params"]["taskId"], ID);
    assert_eq!(cancel.headers["mcp-method"], "tasks/cancel");
    assert_eq!(cancel.headers["mcp-name"], ID);
    assert_eq!(
        cancel.body["params"]["_meta"][CAPS]["extensions"],
        json!({EXT: {}})
    );
    assert!(
        !methods(&s.seen()).contains(&"notifications/cancelled".to_owned()),
        "tasks are never cancelled with notifications/cancelled"
    );
}

#[tokio::test]
async fn cancelling_the_token_sends_tasks_cancel_before_returning() {
    let s = endless().await;
    let token = CancellationToken::new();
    let t = token.clone();
    let seen = s.seen.clone();
    tokio::spawn(async move {
        until_seen(move || seen.lock().unwrap().clone(), "tasks/get").await;
        t.cancel();
    });
    let err = client(&s.url)
        .tool_call("t")
        .cancellation(token)
        .send()
        .await
        .unwrap_err();
    assert!(
        err.is_cancelled() && err.kind() != smcp_client::ErrorKind::TaskCancelled,
        "{err}"
    );
    assert_eq!(err.task_id(), Some(ID));
    assert_eq!(
        methods(&s.seen()).last().map(String::as_str),
        Some("tasks/cancel"),
        "sent before send() returned"
    );
}

#[tokio::test]
async fn the_ttl_is_a_backstop() {
    let s = scripted(|_, r| match method(r) {
        "tools/call" => result(r, created(json!({"ttlMs": 200, "pollIntervalMs": 20}))),
        "tasks/cancel" => result(r, ack()),
        _ => result(
            r,
            get("working", json!({"ttlMs": 200, "pollIntervalMs": 20})),
        ),
    })
    .await;
    let err = tokio::time::timeout(
        Duration::from_secs(20),
        client(&s.url).call_tool("t", json!({})),
    )
    .await
    .expect("bounded by the TTL")
    .unwrap_err();
    assert!(err.is_timeout() && err.task_id() == Some(ID), "{err}");
    assert_eq!(
        methods(&s.seen()).last().map(String::as_str),
        Some("tasks/cancel")
    );
}

#[tokio::test]
async fn transient_poll_failures_are_retried_a_bounded_number_of_times() {
    let gets = Arc::new(AtomicUsize::new(0));
    let g = gets.clone();
    let s = scripted(move |_, r| match method(r) {
        "tools/call" => result(r, created(json!({}))),
        _ => match g.fetch_add(1, Ordering::SeqCst) {
            0 | 1 => json(503, json!("busy")),
            _ => result(r, get("completed", json!({"result": hello()}))),
        },
    })
    .await;
    client(&s.url).call_tool("t", json!({})).await.unwrap();
    assert_eq!(gets.load(Ordering::SeqCst), 3);

    let s = scripted(|_, r| match method(r) {
        "tools/call" => result(r, created(json!({}))),
        "tasks/cancel" => result(r, ack()),
        _ => json(503, json!("busy")),
    })
    .await;
    let c = Client::builder(&s.url)
        .task_polling(TaskPolling {
            max_retries: 2,
            ..fast()
        })
        .build()
        .unwrap();
    let err = c.call_tool("t", json!({})).await.unwrap_err();
    assert_eq!(err.status(), Some(503), "{err}");
    let m = methods(&s.seen());
    assert_eq!(
        m.iter().filter(|m| *m == "tasks/get").count(),
        3,
        "one poll and two retries: {m:?}"
    );
    assert_eq!(m.last().map(String::as_str), Some("tasks/cancel"));

    // A JSON-RPC refusal is final (e.g. the task is unknown).
    let s = scripted(|_, r| match method(r) {
        "tools/call" => result(r, created(json!({}))),
        "tasks/cancel" => result(r, ack()),
        _ => json(
            200,
            json!({"jsonrpc": "2.0", "id": id_of(r),
                   "error": {"code": -32602, "message": "Failed to retrieve task: Task not found"}}),
        ),
    })
    .await;
    let err = client(&s.url).call_tool("t", json!({})).await.unwrap_err();
    assert_eq!(err.jsonrpc_code(), Some(-32602));
    assert_eq!(
        methods(&s.seen())
            .iter()
            .filter(|m| *m == "tasks/get")
            .count(),
        1
    );
}

#[tokio::test]
async fn malformed_tasks_get_answers_are_named() {
    for (answer, names) in [
        (get("completed", json!({})), "`result`"),
        (get("failed", json!({})), "`error`"),
        (get("input_required", json!({})), "`inputRequests`"),
        (
            get("working", json!({"result": hello()})),
            "must not carry `result`",
        ),
        (
            get("completed", json!({"taskId": "another", "result": hello()})),
            "taskId",
        ),
        (get("finished", json!({})), "unknown variant `finished`"),
        (
            json!({"resultType": "complete", "taskId": ID, "status": "working"}),
            "createdAt",
        ),
    ] {
        let a = answer.clone();
        let s = scripted(move |_, r| match method(r) {
            "tools/call" => result(r, created(json!({}))),
            "tasks/cancel" => result(r, ack()),
            _ => result(r, a.clone()),
        })
        .await;
        let err = client(&s.url).call_tool("t", json!({})).await.unwrap_err();
        assert!(
            err.is_protocol_violation() && err.to_string().contains(names),
            "{answer}: {err}"
        );
        // The client gives the task up, and tells the server.
        assert_eq!(
            methods(&s.seen()).last().map(String::as_str),
            Some("tasks/cancel")
        );
    }
}

#[tokio::test]
async fn a_task_from_a_method_without_task_support_is_an_invalid_response() {
    let s = scripted(|_, r| result(r, created(json!({})))).await;
    let c = client(&s.url);
    for err in [
        c.list_tools().await.unwrap_err(),
        c.read_resource("file:///x").await.unwrap_err(),
        c.get_prompt("p", Default::default()).await.unwrap_err(),
        c.discover().await.unwrap_err(),
    ] {
        assert!(
            err.is_protocol_violation() && err.to_string().contains("invalid response"),
            "{err}"
        );
    }
    assert!(
        methods(&s.seen()).iter().all(|m| !m.starts_with("tasks/")),
        "nothing is polled"
    );
    // A malformed CreateTaskResult is named too.
    let s = scripted(|_, r| result(r, json!({"resultType": "task", "status": "working"}))).await;
    let err = client(&s.url).call_tool("t", json!({})).await.unwrap_err();
    assert!(
        err.is_protocol_violation() && err.to_string().contains("CreateTaskResult"),
        "{err}"
    );
}

#[tokio::test]
async fn the_lifecycle_api_get_update_cancel_and_by_id() {
    let s = scripted(|_, r| match method(r) {
        "tools/call" => result(r, created(json!({}))),
        "tasks/get" => result(
            r,
            get(
                "input_required",
                json!({"inputRequests": {"name": elicit("Please enter your name.")}}),
            ),
        ),
        _ => result(r, ack()),
    })
    .await;
    let c = client(&s.url);
    let ToolCallOutcome::Task(mut task) = c.call_tool_task("t", json!({})).await.unwrap() else {
        panic!("a task was created");
    };
    assert_eq!(task.id(), ID);
    assert_eq!(task.task().status, TaskStatus::Working);
    let state = task.get().await.unwrap();
    assert_eq!(state.task.status, TaskStatus::InputRequired);
    assert_eq!(task.task().status, TaskStatus::InputRequired);
    assert_eq!(task.new_input_requests(&state).len(), 1);
    let answer = InputResponses::new().with("name", ElicitResult::decline());
    task.update(answer.clone()).await.unwrap();
    assert!(task.new_input_requests(&state).is_empty());
    // A key already answered is not sent again.
    task.update(answer).await.unwrap();
    task.cancel().await.unwrap();
    // By id alone.
    assert_eq!(
        c.get_task(ID).await.unwrap().task.status,
        TaskStatus::InputRequired
    );
    c.cancel_task(ID).await.unwrap();
    let resumed = c.resume_task(ID).await.unwrap();
    assert_eq!(resumed.id(), ID);
    assert_eq!(resumed.task().status, TaskStatus::InputRequired);
    assert_eq!(
        methods(&s.seen()),
        [
            "tools/call",
            "tasks/get",
            "tasks/update",
            "tasks/cancel",
            "tasks/get",
            "tasks/cancel",
            "tasks/get"
        ]
    );
    for post in &s.seen()[1..] {
        assert_eq!(post.headers["mcp-name"], ID);
        assert_eq!(post.headers["mcp-method"], method(&post.body));
    }
}

#[tokio::test]
async fn task_method_acks_are_checked() {
    let s = scripted(|_, r| result(r, json!({"resultType": "input_required"}))).await;
    let err = client(&s.url).cancel_task(ID).await.unwrap_err();
    assert!(
        err.is_protocol_violation() && err.to_string().contains("acknowledgement"),
        "{err}"
    );
    let s = scripted(|_, r| {
        json(
            200,
            json!({"jsonrpc": "2.0", "id": id_of(r),
                   "error": {"code": -32602, "message": "Failed to retrieve task: Task has expired"}}),
        )
    })
    .await;
    let err = client(&s.url).get_task(ID).await.unwrap_err();
    assert_eq!(err.jsonrpc_code(), Some(-32602));
}

#[tokio::test]
async fn listen_surfaces_task_notifications() {
    let s = scripted(|_, r| {
        let id = id_of(r);
        let tag = json!({"io.modelcontextprotocol/subscriptionId": id});
        let mut done = get("completed", json!({"result": hello()}));
        done.as_object_mut().unwrap().remove("resultType");
        done["_meta"] = tag.clone();
        let mut body = event(&json!({"jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"notifications": {"taskIds": [ID]}, "_meta": tag}}));
        body += &event(&json!({"jsonrpc": "2.0", "method": "notifications/tasks", "params": done}));
        body += &event(&json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete"}}));
        sse(body)
    })
    .await;
    let filter = SubscriptionFilter {
        task_ids: Some(vec![ID.to_owned()]),
        ..SubscriptionFilter::default()
    };
    let events: Vec<_> = tokio::time::timeout(
        Duration::from_secs(10),
        client(&s.url).listen(filter).collect::<Vec<_>>(),
    )
    .await
    .unwrap();
    assert_eq!(events.len(), 2, "{events:?}");
    match events[1].as_ref().unwrap() {
        SubscriptionEvent::Task(t) => {
            assert_eq!(t.task.task_id, ID);
            assert_eq!(t.task.status, TaskStatus::Completed);
            assert!(t.result.is_some());
        }
        other => panic!("not a task event: {other:?}"),
    }
    let listen = &s.seen()[0];
    assert_eq!(
        listen.body["params"]["_meta"][CAPS]["extensions"],
        json!({EXT: {}}),
        "asking for task notifications declares the extension"
    );
}
