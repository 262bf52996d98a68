//! Two instances over one shared task store, as a deployment without sticky routing has them:
//! a task created on instance A is read, answered and cancelled through instance B, and A's
//! running handler sees the answers and the cancellation through the store (within the
//! store's `watch_interval`), not through any in-process shortcut.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{Req, accept, get, ok, one_field, start, until, update};
use serde_json::json;
use smcp_proto::server::tools::CallToolResult;
use smcp_server::tools::BoxFuture;
use smcp_server::{HandlerError, McpService, Server, mrtr, tool};
use smcp_tasks::{
    MemoryTaskStore, Mutation, TaskRecord, TaskStore, TaskStoreError, TaskSupport, TaskToolExt,
    TasksExtension,
};

/// A store shared by several instances: the in-memory store behind an `Arc`, declaring a
/// watch interval as a networked store (Redis, a database) would.
struct Shared(Arc<MemoryTaskStore>);

impl TaskStore for Shared {
    fn create(&self, record: TaskRecord) -> BoxFuture<Result<(), TaskStoreError>> {
        self.0.create(record)
    }

    fn get(
        &self,
        task_id: &str,
        principal: Option<&str>,
    ) -> BoxFuture<Result<TaskRecord, TaskStoreError>> {
        self.0.get(task_id, principal)
    }

    fn update(
        &self,
        task_id: &str,
        principal: Option<&str>,
        mutation: Mutation,
    ) -> BoxFuture<Result<TaskRecord, TaskStoreError>> {
        self.0.update(task_id, principal, mutation)
    }

    fn watch_interval(&self) -> Option<Duration> {
        Some(Duration::from_millis(25))
    }
}

/// One instance: its own server, extension and runner, over the shared `store`. `runs`
/// counts the handler rounds this instance ran; `stopped` the handlers it saw cancelled.
fn instance(
    store: &Arc<MemoryTaskStore>,
    runs: Arc<AtomicUsize>,
    stopped: Arc<AtomicUsize>,
) -> McpService {
    let tasks = TasksExtension::builder()
        .immediate_window(Duration::ZERO)
        .poll_interval(Duration::from_millis(20))
        .store(Arc::new(Shared(store.clone())))
        .build();
    Server::builder("instance", "1.0.0")
        .extension(tasks)
        .tool(
            tool("ask_then_wait")
                .task_support(TaskSupport::optional())
                .handler(move |call| {
                    let (runs, stopped) = (runs.clone(), stopped.clone());
                    async move {
                        runs.fetch_add(1, Ordering::SeqCst);
                        let answer = call.input.ask(mrtr::elicit_form(
                            "name",
                            "Name?",
                            one_field("name", "string"),
                        ))?;
                        let name = common::field(&answer, "name");
                        if name == "wait" {
                            call.ctx.cancelled().await;
                            stopped.fetch_add(1, Ordering::SeqCst);
                            return Err(HandlerError::failed("stopped"));
                        }
                        Ok::<_, HandlerError>(CallToolResult::text(format!("hello {name}")))
                    }
                }),
        )
        .build()
        .unwrap()
        .service()
}

#[tokio::test]
async fn a_task_created_on_one_instance_is_served_by_another_through_the_shared_store() {
    let store = Arc::new(MemoryTaskStore::new(100));
    let (runs_a, stopped_a) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (runs_b, stopped_b) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let a = instance(&store, runs_a.clone(), stopped_a.clone());
    let b = instance(&store, runs_b.clone(), stopped_b.clone());

    // Created on A; B resolves it at once (creation is durable before the answer).
    let id = start(
        &a,
        Req::new(
            "tools/call",
            json!({"name": "ask_then_wait", "arguments": {}}),
        ),
    )
    .await;
    let seen = get(&b, &id).await;
    assert_eq!(seen["taskId"], id.as_str(), "{seen}");

    // A's handler asks; B shows the question and takes the answer; A's handler runs again
    // (woken through the store, since B's update never touches A's runner) and completes.
    let asked = until(&b, &id, "input_required").await;
    assert_eq!(common::keys(&asked), ["name"], "{asked}");
    update(&b, &id, json!({"name": accept("name", json!("ada"))})).await;
    let done = until(&b, &id, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"], "hello \"ada\"",
        "{done}"
    );
    assert_eq!(runs_a.load(Ordering::SeqCst), 2, "both rounds ran on A");
    assert_eq!(runs_b.load(Ordering::SeqCst), 0, "B ran no handler");
    assert_eq!(get(&a, &id).await["status"], "completed");

    // A second task, cancelled through B while A's handler waits: A's handler is stopped.
    let id = start(
        &a,
        Req::new(
            "tools/call",
            json!({"name": "ask_then_wait", "arguments": {}}),
        ),
    )
    .await;
    until(&b, &id, "input_required").await;
    update(&b, &id, json!({"name": accept("name", json!("wait"))})).await;
    // Wait until A runs the second round (A picks the answers up from the store): cancelling
    // before that would end the task without running the handler again, which is right but
    // not what this checks.
    for _ in 0..200 {
        if runs_a.load(Ordering::SeqCst) == 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        runs_a.load(Ordering::SeqCst),
        4,
        "the second round runs on A"
    );
    let ack = ok(&b, Req::new("tasks/cancel", json!({"taskId": id}))).await;
    assert_eq!(ack["resultType"], "complete", "{ack}");
    assert!(
        ack.get("status").is_none(),
        "an acknowledgement, not a task: {ack}"
    );
    let end = until(&a, &id, "cancelled").await;
    assert_eq!(end["status"], "cancelled", "{end}");
    for _ in 0..200 {
        if stopped_a.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The handler saw its cancellation and ended on its own, within the cancel grace, as for
    // a cancel made on its own instance (not dropped mid-step).
    assert_eq!(
        stopped_a.load(Ordering::SeqCst),
        1,
        "A's handler saw the cancel"
    );
    assert_eq!(stopped_b.load(Ordering::SeqCst), 0);
}
