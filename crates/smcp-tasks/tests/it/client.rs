//! The real `smcp-client` against a real `smcp-tasks` server over HTTP on 127.0.0.1: a call
//! followed through a task with a mid-task elicitation answered by the `InputHandler`, a failed
//! task as the client's typed error, dropping the call cancels the task on the server,
//! `resume_task` from a saved id, and `notifications/tasks` on a listen stream.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use smcp_client::proto::client::elicitation::{ElicitRequestParams, ElicitResult, ElicitValue};
use smcp_client::proto::ext::tasks::TaskStatus;
use smcp_client::proto::patterns::subscriptions::SubscriptionFilter;
use smcp_client::{
    BoxFuture, Client, InputHandler, InputKinds, SubscriptionEvent, TaskPolling, ToolCallOutcome,
};
use smcp_proto::error::ErrorObject;
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, ServeOptions, Server, mrtr, tool};
use smcp_tasks::{TaskSupport, TaskToolExt, TasksExtension};
use tokio::sync::{Notify, oneshot};

const WAIT: Duration = Duration::from_secs(10);

/// What the server's tools let a test observe and steer.
#[derive(Clone, Default)]
struct Probe {
    /// Opened by the test: the `gated` tool ends.
    gate: Arc<Notify>,
    /// The `forever` tool saw its cancellation.
    cancelled: Arc<AtomicBool>,
}

struct Fixture {
    url: String,
    probe: Probe,
    _stop: oneshot::Sender<()>,
}

fn always_a_task() -> TaskSupport {
    TaskSupport::optional().immediate_window(Duration::ZERO)
}

async fn start() -> Fixture {
    let probe = Probe::default();
    let (gate, cancelled) = (probe.gate.clone(), probe.cancelled.clone());
    let server = Server::builder("client-e2e", "1.0.0")
        .extension(
            TasksExtension::builder()
                .poll_interval(Duration::from_millis(20))
                .build(),
        )
        .tool(
            tool("greeter")
                .task_support(always_a_task())
                .handler(|call| async move {
                    let answer = call.input.ask(mrtr::elicit_form(
                        "name",
                        "Your name?",
                        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
                    ))?;
                    let name = serde_json::to_value(&answer).unwrap()["content"]["name"].clone();
                    let name = name.as_str().unwrap_or("nobody").to_owned();
                    Ok::<_, HandlerError>(CallToolResult::text(format!("Hello, {name}!")))
                }),
        )
        .tool(
            tool("doomed")
                .task_support(always_a_task())
                .handler(|_| async {
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    Err::<CallToolResult, _>(HandlerError::Rpc(ErrorObject::new(
                        -32050,
                        "backend refused",
                    )))
                }),
        )
        .tool(
            tool("forever")
                .task_support(always_a_task())
                .handler(move |call| {
                    let cancelled = cancelled.clone();
                    async move {
                        call.ctx.cancelled().await;
                        cancelled.store(true, Ordering::SeqCst);
                        Err::<CallToolResult, _>(HandlerError::failed("stopped"))
                    }
                }),
        )
        .tool(
            tool("gated")
                .task_support(always_a_task())
                .handler(move |_| {
                    let gate = gate.clone();
                    async move {
                        gate.notified().await;
                        Ok::<_, HandlerError>(CallToolResult::text("released"))
                    }
                }),
        )
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(smcp_server::serve(
        listener,
        server.endpoint("/mcp"),
        ServeOptions::default(),
        async move {
            let _ = stopped.await;
        },
    ));
    Fixture {
        url: format!("http://{addr}/mcp"),
        probe,
        _stop: stop,
    }
}

/// Answers every form with `name: "Ada"` and records the messages it was shown.
#[derive(Clone, Default)]
struct Ada(Arc<Mutex<Vec<String>>>);

impl InputHandler for Ada {
    fn kinds(&self) -> InputKinds {
        InputKinds {
            elicitation_form: true,
            ..InputKinds::default()
        }
    }

    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, smcp_client::InputHandlerError>> {
        if let ElicitRequestParams::Form(form) = &params {
            self.0.lock().unwrap().push(form.message.clone());
        }
        Box::pin(async {
            let mut content = BTreeMap::new();
            content.insert("name".to_owned(), ElicitValue::String("Ada".to_owned()));
            Ok(ElicitResult::accept(content))
        })
    }
}

fn new_client(url: &str) -> Client {
    client_with(url, Ada::default())
}

fn client_with(url: &str, input: Ada) -> Client {
    Client::builder(url)
        .input_handler(input)
        .task_polling(TaskPolling {
            min_interval: Duration::from_millis(10),
            ..TaskPolling::default()
        })
        .build()
        .unwrap()
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Polls `tasks/get` with `client` until the task is `status` (bounded).
async fn until(client: &Client, id: &str, status: TaskStatus) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let task = client.get_task(id).await.unwrap();
        if task.task.status == status {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task {id} is {:?}, never {status:?}",
            task.task.status
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn call_tool_follows_a_task_through_an_elicitation() {
    let fx = start().await;
    let asked = Ada::default();
    let client = client_with(&fx.url, asked.clone());
    let statuses = Arc::new(Mutex::new(Vec::new()));
    let seen = statuses.clone();
    let result = tokio::time::timeout(
        WAIT,
        client
            .tool_call("greeter")
            .on_task_status(move |t| seen.lock().unwrap().push(t.task.status))
            .send(),
    )
    .await
    .expect("the task ends")
    .unwrap();
    assert_eq!(text(&result), "Hello, Ada!");
    assert_ne!(result.is_error, Some(true));
    let statuses = statuses.lock().unwrap().clone();
    assert!(
        statuses.contains(&TaskStatus::InputRequired),
        "{statuses:?}"
    );
    assert_eq!(
        statuses.last(),
        Some(&TaskStatus::Completed),
        "{statuses:?}"
    );
    // The question was put to the handler once, though several polls may have shown it.
    assert_eq!(*asked.0.lock().unwrap(), ["Your name?"]);
}

#[tokio::test]
async fn a_failed_task_is_the_clients_typed_error_with_the_servers_code() {
    let fx = start().await;
    let client = new_client(&fx.url);
    let error = tokio::time::timeout(WAIT, client.call_tool("doomed", json!({})))
        .await
        .expect("the task ends")
        .unwrap_err();
    assert_eq!(error.kind(), smcp_client::ErrorKind::TaskFailed, "{error}");
    assert_eq!(error.jsonrpc_code(), Some(-32050), "{error}");
    assert_eq!(error.jsonrpc_error().unwrap().message, "backend refused");
    let id = error
        .task_id()
        .expect("the error names the task")
        .to_owned();
    let task = client.get_task(&id).await.unwrap();
    assert_eq!(task.task.status, TaskStatus::Failed);
    assert_eq!(task.error.unwrap().code, -32050);
}

#[tokio::test]
async fn dropping_the_call_cancels_the_task_on_the_server() {
    let fx = start().await;
    let client = new_client(&fx.url);
    let (tx, rx) = oneshot::channel();
    let tx = Mutex::new(Some(tx));
    let call = client
        .tool_call("forever")
        .on_task_status(move |t| {
            if let Some(tx) = tx.lock().unwrap().take() {
                let _ = tx.send(t.task.task_id.clone());
            }
        })
        .send();
    // Follow the task until it is seen, then drop the future.
    let id = tokio::select! {
        ended = call => panic!("the call ended on its own: {ended:?}"),
        id = rx => id.unwrap(),
    };
    let observer = new_client(&fx.url);
    tokio::time::timeout(WAIT, until(&observer, &id, TaskStatus::Cancelled))
        .await
        .expect("cancelled in time");
    assert!(fx.probe.cancelled.load(Ordering::SeqCst));
}

#[tokio::test]
async fn resume_task_from_a_saved_id() {
    let fx = start().await;
    let id = {
        let first = new_client(&fx.url);
        match first.call_tool_task("gated", json!({})).await.unwrap() {
            ToolCallOutcome::Task(handle) => handle.id().to_owned(),
            ToolCallOutcome::Complete(result) => panic!("not a task: {result:?}"),
        }
        // The first client and its handle are gone; the task is not.
    };
    let second = new_client(&fx.url);
    let task = second.get_task(&id).await.unwrap();
    assert_eq!(task.task.status, TaskStatus::Working);
    let handle = second.resume_task(&id).await.unwrap();
    assert_eq!(handle.id(), id);
    fx.probe.gate.notify_one();
    let result = tokio::time::timeout(WAIT, handle.wait())
        .await
        .expect("the task ends")
        .unwrap();
    assert_eq!(text(&result), "released");
}

#[tokio::test]
async fn listen_with_task_ids_receives_the_tasks_status() {
    let fx = start().await;
    let client = new_client(&fx.url);
    let ToolCallOutcome::Task(handle) = client.call_tool_task("gated", json!({})).await.unwrap()
    else {
        panic!("not a task");
    };
    let id = handle.id().to_owned();
    let mut events = client.listen(SubscriptionFilter {
        task_ids: Some(vec![
            id.clone(),
            "0123456789abcdef0123456789abcdef".to_owned(),
        ]),
        ..SubscriptionFilter::default()
    });
    let first = tokio::time::timeout(WAIT, events.next())
        .await
        .expect("an acknowledgement")
        .unwrap()
        .unwrap();
    assert_eq!(
        first,
        SubscriptionEvent::Acknowledged(SubscriptionFilter {
            task_ids: Some(vec![id.clone()]),
            ..SubscriptionFilter::default()
        })
    );
    fx.probe.gate.notify_one();
    let notified = loop {
        let event = tokio::time::timeout(WAIT, events.next())
            .await
            .expect("a task notification")
            .unwrap()
            .unwrap();
        match event {
            SubscriptionEvent::Task(task) if task.task.status == TaskStatus::Completed => {
                break task;
            }
            SubscriptionEvent::Task(task) => assert_eq!(task.task.task_id, id),
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(notified.task.task_id, id);
    let result = notified.result.clone().expect("the result inline");
    assert_eq!(
        Value::Object(result)["content"][0]["text"],
        json!("released")
    );
    assert_eq!(*notified, client.get_task(&id).await.unwrap());
}
