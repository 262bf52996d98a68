//! SEP-2663 tasks of a 2026-07-28 upstream through the gateway: the task's id names its
//! upstream, and `tasks/get`, `tasks/update` and `tasks/cancel` reach it.

use std::time::Duration;

use serde_json::{Value, json};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, Server, mrtr, tool};
use smcp_tasks::{TaskSupport, TaskToolExt, TasksExtension};

use crate::common;

/// An upstream whose `slow` always runs as a task and asks for a name first.
async fn tasks_upstream() -> (Server, common::Served) {
    let server = Server::builder("upstream", "1")
        .extension(
            TasksExtension::builder()
                .poll_interval(Duration::from_millis(20))
                .build(),
        )
        .tool(
            tool("slow")
                .input_schema(json!({"type": "object"}))
                .task_support(TaskSupport::optional().immediate_window(Duration::ZERO))
                .handler(|call| async move {
                    let answer = call.input.ask(mrtr::elicit_form(
                        "name",
                        "Your name?",
                        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
                    ))?;
                    let name = serde_json::to_value(&answer).unwrap()["content"]["name"].clone();
                    Ok::<_, HandlerError>(CallToolResult::text(format!("hello {}", name.as_str().unwrap_or("?"))))
                }),
        )
        .build()
        .unwrap();
    let served = common::serve_server(&server).await;
    (server, served)
}

fn declaring_tasks() -> Value {
    common::meta(json!({
        "elicitation": {},
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    }))
}

async fn task_state(svc: &smcp_server::McpService, id: &str) -> Value {
    let (status, body) = common::post(
        svc,
        "tasks/get",
        Some(id),
        json!({"taskId": id, "_meta": declaring_tasks()}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["result"].clone()
}

/// Answers the task's question (`name`) with Ada, through the gateway.
async fn answer_ada(svc: &smcp_server::McpService, id: &str) {
    let (_, body) = common::post(
        svc,
        "tasks/update",
        Some(id),
        json!({
            "taskId": id,
            "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
            "_meta": declaring_tasks()
        }),
    )
    .await;
    assert!(body["result"].is_object(), "{body}");
}

async fn until(svc: &smcp_server::McpService, id: &str, status: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let state = task_state(svc, id).await;
        if state["status"] == status {
            return state;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never {status}: {state}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_task_of_the_upstream_is_followed_answered_and_finished_through_the_gateway() {
    let (_upstream, served) = tasks_upstream().await;
    let (_gateway, server) = common::gateway(&format!(
        "[[upstream]]\nname = \"up\"\nurl = \"{}\"\n",
        served.url
    ))
    .await;
    let svc = server.service();
    let discovered = common::post(
        &svc,
        "server/discover",
        None,
        json!({"_meta": common::meta(json!({}))}),
    )
    .await
    .1;
    assert!(
        discovered["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"]
            .is_object(),
        "{discovered}"
    );

    let (status, body) = common::call(
        &svc,
        "up_slow",
        json!({"arguments": {}, "_meta": declaring_tasks()}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["resultType"], "task", "{body}");
    let id = body["result"]["taskId"].as_str().unwrap().to_owned();
    assert!(id.starts_with("up:"), "the id names its upstream: {id}");

    let asking = until(&svc, &id, "input_required").await;
    assert_eq!(asking["taskId"], id.as_str(), "{asking}");
    assert!(asking["inputRequests"]["name"].is_object(), "{asking}");
    answer_ada(&svc, &id).await;
    let done = until(&svc, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "hello Ada", "{done}");

    // A client that does not declare tasks gets the call inline (here: the question).
    let (_, body) = common::call(&svc, "up_slow", json!({"arguments": {}})).await;
    assert_eq!(body["result"]["resultType"], "input_required", "{body}");

    // A client that does not declare the extension is refused before any lookup.
    let (_, body) = common::post(
        &svc,
        "tasks/get",
        Some(&id),
        json!({"taskId": id, "_meta": common::meta(json!({}))}),
    )
    .await;
    assert_eq!(body["error"]["code"], -32021, "{body}");

    // An id no upstream has.
    for id in ["nobody:1", "no-separator"] {
        let (_, body) = common::post(
            &svc,
            "tasks/get",
            Some(id),
            json!({"taskId": id, "_meta": declaring_tasks()}),
        )
        .await;
        assert_eq!(body["error"]["code"], -32602, "{id}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_hears_the_upstream_tasks_states_under_the_gateways_id() {
    use futures_util::StreamExt as _;
    use smcp_client::{SubscriptionEvent, SubscriptionFilter};

    let (_upstream, served) = tasks_upstream().await;
    let (_gateway, server) = common::gateway(&format!(
        "[[upstream]]\nname = \"up\"\nurl = \"{}\"\n",
        served.url
    ))
    .await;
    let svc = server.service();
    let (_, body) = common::call(
        &svc,
        "up_slow",
        json!({"arguments": {}, "_meta": declaring_tasks()}),
    )
    .await;
    let id = body["result"]["taskId"].as_str().unwrap().to_owned();
    until(&svc, &id, "input_required").await;

    let front = common::serve_server(&server).await;
    let client = smcp_client::Client::builder(&front.url).build().unwrap();
    let mut states = client.listen(SubscriptionFilter {
        task_ids: Some(vec![id.clone(), "nobody:1".to_owned(), id.clone()]),
        ..SubscriptionFilter::default()
    });
    let mut next = async || {
        tokio::time::timeout(Duration::from_secs(10), states.next())
            .await
            .expect("an event in time")
            .expect("the stream is open")
            .expect("no error")
    };
    let SubscriptionEvent::Acknowledged(granted) = next().await else {
        panic!("the acknowledgement comes first");
    };
    // The id the upstream knows, once; not one no upstream has.
    assert_eq!(granted.task_ids.unwrap(), std::slice::from_ref(&id));

    answer_ada(&svc, &id).await;
    // Its states, under the gateway's id, up to the end with the result.
    loop {
        match next().await {
            SubscriptionEvent::Task(task) => {
                assert_eq!(task.task.task_id, id);
                if task.task.status.is_terminal() {
                    let result = serde_json::to_value(task.result.unwrap()).unwrap();
                    assert_eq!(result["content"][0]["text"], "hello Ada", "{result}");
                    break;
                }
            }
            SubscriptionEvent::Acknowledged(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}
