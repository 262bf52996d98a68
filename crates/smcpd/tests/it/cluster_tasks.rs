//! SEP-2663 tasks on a cluster (`scripts/cluster`: Redis, three smcpd, nginx): the task store
//! is shared (`smcpd --redis` keeps tasks in Redis), so a task created through one instance is
//! read, answered and cancelled through the others; its status notifications reach listeners
//! on any instance; an instance killed mid-task has its task failed by the others ("worker
//! lost") within three lease periods; a Redis restart mid-task loses no task the server
//! acknowledged: the task is read again, runs on and completes.
//!
//! The cluster's Redis is durable (append-only file). Without persistence
//! (`SMCP_CLUSTER_REDIS_PERSIST=off`) a restart loses every task record; what that means
//! (documented in `docs/deploy.md`): tasks created before the restart are gone (`tasks/get`
//! answers −32602 "Task not found"; their handlers stop at their next lease renewal, their
//! clients get an error rather than waiting), tasks created after it are served normally.

#![cfg(all(
    feature = "redis",
    feature = "files",
    feature = "tasks",
    feature = "legacy"
))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult};
use smcp_client::proto::ext::tasks::{DetailedTask, TaskStatus};
use smcp_client::proto::patterns::mrtr::InputResponses;
use smcp_client::{
    BoxFuture, Client, InputHandler, InputHandlerError, InputKinds, SubscriptionEvent,
    SubscriptionFilter, TaskPolling, ToolCallOutcome,
};

use crate::cluster_support::Cluster;

/// The lease the fault tests run with (`--task-lease 1`): a lost task fails within 3 s.
const LEASE: Duration = Duration::from_secs(1);
const SHORT_LEASE: &[(&str, &str)] = &[("SMCP_CLUSTER_ARGS", "--task-lease 1")];
/// The same with a Redis that persists nothing.
const SHORT_LEASE_NO_PERSISTENCE: &[(&str, &str)] = &[
    ("SMCP_CLUSTER_ARGS", "--task-lease 1"),
    ("SMCP_CLUSTER_REDIS_PERSIST", "off"),
];

/// Declares form elicitation (so `long_job` may ask); the answers in these tests go through
/// `tasks/update` on another instance, never through this handler.
struct Forms;

impl InputHandler for Forms {
    fn kinds(&self) -> InputKinds {
        InputKinds {
            elicitation_form: true,
            ..InputKinds::default()
        }
    }

    fn elicit(
        &self,
        _: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, InputHandlerError>> {
        Box::pin(async {
            Err(InputHandlerError::new(
                "answered through tasks/update instead",
            ))
        })
    }
}

fn client(url: &str) -> Client {
    Client::builder(url)
        .input_handler(Forms)
        .timeout(Some(Duration::from_secs(10)))
        .task_polling(TaskPolling {
            min_interval: Duration::from_millis(100),
            ..TaskPolling::default()
        })
        .build()
        .unwrap()
}

/// Starts `long_job` with `arguments` as a task through `client`; its id.
async fn start_task(client: &Client, arguments: Value) -> String {
    match client.call_tool_task("long_job", arguments).await.unwrap() {
        ToolCallOutcome::Task(task) => task.id().to_owned(),
        ToolCallOutcome::Complete(result) => panic!("long_job answered without a task: {result:?}"),
    }
}

/// Polls `tasks/get` through `client` until the task's status is `status` (within `within`).
async fn until_status(
    client: &Client,
    task_id: &str,
    status: TaskStatus,
    within: Duration,
) -> DetailedTask {
    let deadline = Instant::now() + within;
    loop {
        let task = client.get_task(task_id).await.unwrap();
        if task.task.status == status {
            return task;
        }
        assert!(
            Instant::now() < deadline,
            "task {task_id} not {status:?} within {within:?}: {task:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A listen stream on `client` for the task `task_id`, acknowledged with that id.
async fn listen_to_task(client: &Client, task_id: &str) -> smcp_client::Subscription {
    let mut events = client.listen(SubscriptionFilter {
        task_ids: Some(vec![task_id.to_owned()]),
        ..SubscriptionFilter::default()
    });
    match tokio::time::timeout(Duration::from_secs(5), events.next()).await {
        Ok(Some(Ok(SubscriptionEvent::Acknowledged(filter)))) => {
            assert_eq!(filter.task_ids, Some(vec![task_id.to_owned()]));
        }
        other => panic!("listen not acknowledged: {other:?}"),
    }
    events
}

/// The next task notification on `events` with a status in `wanted` (within `within`).
async fn next_status(
    events: &mut smcp_client::Subscription,
    wanted: &[TaskStatus],
    within: Duration,
) -> DetailedTask {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, events.next()).await {
            Ok(Some(Ok(SubscriptionEvent::Task(task)))) if wanted.contains(&task.task.status) => {
                return *task;
            }
            Ok(Some(Ok(_))) => {}
            other => panic!("no {wanted:?} notification within {within:?}: {other:?}"),
        }
    }
}

/// Which instance logged the start of `long_job` (the one running the only task).
async fn runner_of(c: &Cluster) -> usize {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let running: Vec<usize> = (1..=3)
            .filter(|&i| c.log(i).contains("long_job started"))
            .collect();
        if let [i] = running[..] {
            return i;
        }
        assert!(running.len() <= 1, "several instances ran long_job");
        assert!(Instant::now() < deadline, "no instance started long_job");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_created_on_one_instance_is_read_answered_and_cancelled_through_the_others() {
    need_cluster!();
    let c = Cluster::up();
    let (one, two, three, lb) = (
        client(&c.instance(1)),
        client(&c.instance(2)),
        client(&c.instance(3)),
        client(&c.url),
    );

    // Created (and run) on instance 1, asking a question after 1 s.
    let id = start_task(&one, json!({"seconds": 3, "confirm_at": 1})).await;
    assert_eq!(
        two.get_task(&id).await.unwrap().task.status,
        TaskStatus::Working,
        "instance 2 reads the task instance 1 created"
    );
    // A listener on instance 3 hears the task's status changes, wherever they happen.
    let mut events = listen_to_task(&three, &id).await;
    let asking = until_status(&two, &id, TaskStatus::InputRequired, Duration::from_secs(5)).await;
    assert!(asking.input_requests.unwrap().contains_key("continue"));
    let heard = next_status(
        &mut events,
        &[TaskStatus::InputRequired],
        Duration::from_secs(2),
    )
    .await;
    assert_eq!(heard.task.task_id, id);

    // Answered through instance 3; the handler on instance 1 resumes and completes.
    let answer: InputResponses = serde_json::from_value(
        json!({"continue": {"action": "accept", "content": {"continue": true}}}),
    )
    .unwrap();
    three.update_task(&id, answer).await.unwrap();
    let done = next_status(
        &mut events,
        &[TaskStatus::Completed],
        Duration::from_secs(10),
    )
    .await;
    let text = done.result.as_ref().unwrap()["content"][0]["text"].clone();
    assert!(
        text.as_str()
            .unwrap()
            .ends_with("continued after the question at 1 s"),
        "{text}"
    );
    assert_eq!(
        lb.get_task(&id).await.unwrap(),
        done,
        "nginx serves the same task"
    );
    assert!(c.log(1).contains("long_job finished"), "{}", c.log(1));

    // Created on instance 2, cancelled through nginx: instance 2's handler stops.
    let id = start_task(&two, json!({"seconds": 30})).await;
    let mut events = listen_to_task(&one, &id).await;
    lb.cancel_task(&id).await.unwrap();
    let cancelled = until_status(&three, &id, TaskStatus::Cancelled, Duration::from_secs(5)).await;
    assert!(cancelled.error.is_none(), "{cancelled:?}");
    let heard = next_status(
        &mut events,
        &[TaskStatus::Cancelled],
        Duration::from_secs(2),
    )
    .await;
    assert_eq!(heard.task.task_id, id);
    assert!(
        c.log(2).contains("long_job cancelled after"),
        "{}",
        c.log(2)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_instance_killed_mid_task_has_its_task_failed_by_the_others_within_three_leases() {
    need_cluster!();
    let c = Cluster::up_env("local", SHORT_LEASE);
    let lb = client(&c.url);
    // The application's call, through nginx, followed to its end by smcp-client.
    let id_slot = Arc::new(Mutex::new(None::<String>));
    let slot = id_slot.clone();
    let call = tokio::spawn({
        let lb = lb.clone();
        async move {
            lb.tool_call("long_job")
                .arguments(json!({"seconds": 60}))
                .on_task_status(move |t| {
                    slot.lock().unwrap().get_or_insert(t.task.task_id.clone());
                })
                .send()
                .await
        }
    });
    let id = {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(id) = id_slot.lock().unwrap().clone() {
                break id;
            }
            assert!(Instant::now() < deadline, "the call never became a task");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let runner = runner_of(&c).await;
    let other = if runner == 1 { 2 } else { 1 };
    let survivor = client(&c.instance(other));
    let mut events = listen_to_task(&survivor, &id).await;
    // Running happily for a while: its lease is renewed.
    tokio::time::sleep(LEASE * 2).await;
    assert_eq!(
        survivor.get_task(&id).await.unwrap().task.status,
        TaskStatus::Working
    );

    c.script(&["kill", &runner.to_string()]);
    let killed = Instant::now();
    let failed = next_status(&mut events, &[TaskStatus::Failed], LEASE * 3).await;
    let noticed = killed.elapsed();
    let error = failed.error.clone().unwrap();
    assert_eq!(error.code, -32603, "{failed:?}");
    assert_eq!(error.message, smcp_tasks::WORKER_LOST);
    assert!(noticed <= LEASE * 3, "failed after {noticed:?}");
    eprintln!("task failed {noticed:?} after its instance was killed (lease {LEASE:?})");
    // Every surviving instance shows it so; the listener heard it once.
    for i in (1..=3).filter(|&i| i != runner) {
        assert_eq!(client(&c.instance(i)).get_task(&id).await.unwrap(), failed);
    }
    let again = tokio::time::timeout(LEASE * 2, events.next()).await;
    assert!(
        !matches!(again, Ok(Some(Ok(SubscriptionEvent::Task(_))))),
        "a second notification: {again:?}"
    );
    // The application's call_tool ends with that error.
    let outcome = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("call_tool returned")
        .unwrap();
    let err = outcome.expect_err("the task failed");
    assert_eq!(err.jsonrpc_code(), Some(-32603), "{err}");
    assert!(err.to_string().contains("Worker lost"), "{err}");
    let logs: String = (1..=3).filter(|&i| i != runner).map(|i| c.log(i)).collect();
    assert_eq!(
        logs.matches("task's worker lost").count(),
        1,
        "one instance ended it: {logs}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_durable_redis_restarted_mid_task_loses_no_acknowledged_task() {
    need_cluster!();
    // The default lease (5 s): Redis is away for well under one, so no lease lapses.
    let c = Cluster::up_env("local", &[]);
    let one = client(&c.instance(1));
    let two = client(&c.instance(2));
    let id = start_task(&one, json!({"seconds": 4})).await;
    // An application following a task through nginx when Redis goes.
    let lb = client(&c.url);
    let following = tokio::spawn({
        let lb = lb.clone();
        async move {
            lb.tool_call("long_job")
                .arguments(json!({"seconds": 4}))
                .send()
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(800)).await;

    c.script(&["redis-restart"]);
    // While the instances reconnect the store may be "unavailable"; then every instance reads
    // the task again, as it was: acknowledged before the restart, it was not lost.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match two.get_task(&id).await {
            Ok(task) => {
                assert!(
                    matches!(
                        task.task.status,
                        TaskStatus::Working | TaskStatus::Completed
                    ),
                    "{task:?}"
                );
                break;
            }
            Err(e) if e.to_string().contains("unavailable") => {}
            Err(e) => panic!("a task lost with a durable Redis: {e}"),
        }
        assert!(Instant::now() < deadline, "Redis never came back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Its handler on instance 1 ran on: the task completes, with its result, on every
    // instance.
    let done = until_status(&two, &id, TaskStatus::Completed, Duration::from_secs(15)).await;
    assert!(done.result.is_some(), "{done:?}");
    let same = until_status(
        &client(&c.instance(3)),
        &id,
        TaskStatus::Completed,
        Duration::from_secs(1),
    )
    .await;
    assert_eq!(same.result, done.result);
    assert!(!c.log(1).contains("task lease lost"), "{}", c.log(1));
    // The application following its own task either got its result or, if a poll met the
    // outage, a clear error naming it: never a hang, never a wrong result.
    let outcome = tokio::time::timeout(Duration::from_secs(20), following)
        .await
        .expect("the client was not left waiting")
        .unwrap();
    match outcome {
        Ok(result) => assert!(!result.is_error(), "{result:?}"),
        Err(e) => assert!(e.to_string().contains("unavailable"), "{e}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redis_without_persistence_restarted_mid_task_ends_the_task_with_an_error_and_new_tasks_work()
 {
    need_cluster!();
    let c = Cluster::up_env("local", SHORT_LEASE_NO_PERSISTENCE);
    let one = client(&c.instance(1));
    let two = client(&c.instance(2));
    let id = start_task(&one, json!({"seconds": 60})).await;
    // An application following a task through nginx when Redis goes.
    let lb = client(&c.url);
    let following = tokio::spawn({
        let lb = lb.clone();
        async move {
            lb.tool_call("long_job")
                .arguments(json!({"seconds": 60}))
                .send()
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(800)).await;

    c.script(&["redis-restart"]);
    let restarted = Instant::now();
    // The record did not survive (no persistence): once Redis answers again, every instance
    // says so; while it reconnects, the store is "unavailable".
    let deadline = Instant::now() + Duration::from_secs(10);
    let gone = loop {
        match two.get_task(&id).await {
            Err(e) if e.jsonrpc_code() == Some(-32602) => break e,
            Err(e) if e.to_string().contains("unavailable") => {}
            other => panic!("a task lost with Redis: {other:?}"),
        }
        assert!(Instant::now() < deadline, "Redis never came back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(gone.to_string().contains("Task not found"), "{gone}");
    // Its handler on instance 1 stops at its next lease renewal instead of running on.
    let deadline = Instant::now() + LEASE * 5;
    while !c.log(1).contains("long_job cancelled after") {
        assert!(
            Instant::now() < deadline,
            "handler still running: {}",
            c.log(1)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(c.log(1).contains("task lease lost"), "{}", c.log(1));
    // The application following a task is told, it does not hang.
    let outcome = tokio::time::timeout(Duration::from_secs(15), following)
        .await
        .expect("the client was not left waiting")
        .unwrap();
    let err = outcome.expect_err("the task's record was lost");
    assert!(matches!(err.jsonrpc_code(), Some(-32602 | -32603)), "{err}");
    eprintln!(
        "after the Redis restart ({:?} ago) the client got: {err}",
        restarted.elapsed()
    );
    // What is created after the restart is kept and served by every instance (once each
    // instance's connection is back: a call may meet one still reconnecting).
    let deadline = Instant::now() + Duration::from_secs(10);
    let result = loop {
        match lb.call_tool("long_job", json!({"seconds": 1})).await {
            Ok(result) => break result,
            Err(e) => assert!(Instant::now() < deadline, "no task after the restart: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(!result.is_error(), "{result:?}");
    let id = start_task(&two, json!({"seconds": 2})).await;
    let done = until_status(&one, &id, TaskStatus::Completed, Duration::from_secs(10)).await;
    assert!(done.result.is_some());
}
