//! Input inside a task over several rounds: a handler that asks twice (the second question
//! depending on the first answer) and keeps state across rounds, partial and repeated answers,
//! answers that do not fit, keys never reused, and the bound on rounds.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{Req, accept, field, get, keys, one_field, send, start, until, update};
use http::StatusCode;
use serde_json::{Value, json};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, McpService, Server, mrtr, tool};
use smcp_tasks::{TaskSupport, TaskToolExt, TasksExtension};
use tokio::sync::Notify;

fn always_a_task() -> TaskSupport {
    TaskSupport::optional().immediate_window(Duration::ZERO)
}

fn server(tasks: TasksExtension) -> McpService {
    gated_server(tasks, &Arc::new(Notify::new()))
}

/// The server; `gate` is what `two_phases` waits for on the retry that becomes its task.
fn gated_server(tasks: TasksExtension, gate: &Arc<Notify>) -> McpService {
    let gate = gate.clone();
    Server::builder("rounds-test", "1.0.0")
        .extension(tasks)
        // Round 1 asks for a language; round 2 asks for that language's edition (its key is
        // named by the first answer) and a confirmation. The state counts the runs before.
        .tool(
            tool("wizard")
                .task_support(always_a_task())
                .handler(|call| async move {
                    let runs: u32 = call.input.state()?.unwrap_or(0);
                    call.input.set_state(&(runs + 1))?;
                    let lang = call.input.ask(mrtr::elicit_form(
                        "lang",
                        "Which language?",
                        one_field("lang", "string"),
                    ))?;
                    let lang = field(&lang, "lang").as_str().unwrap_or("none").to_owned();
                    let (edition, sure) = call.input.ask((
                        mrtr::elicit_form(
                            format!("edition_{lang}"),
                            format!("Which edition of {lang}?"),
                            one_field("edition", "integer"),
                        ),
                        mrtr::elicit_form("sure", "Sure?", one_field("sure", "boolean")),
                    ))?;
                    Ok::<_, HandlerError>(CallToolResult::text(format!(
                        "lang={lang} edition={} sure={} runs_before={runs}",
                        field(&edition, "edition"),
                        field(&sure, "sure"),
                    )))
                }),
        )
        // Asks `x` again on its second round with a form the first answer does not fit: the
        // key would be reused, which a task never does.
        .tool(
            tool("reasker")
                .task_support(always_a_task())
                .handler(|call| async move {
                    let kind = if call.input.round() == 0 {
                        "boolean"
                    } else {
                        "string"
                    };
                    call.input
                        .ask(mrtr::elicit_form("x", "x?", one_field("x", kind)))?;
                    Ok::<_, HandlerError>(CallToolResult::text("unreachable"))
                }),
        )
        // Never satisfied: a new question every round.
        .tool(
            tool("nagger")
                .task_support(always_a_task())
                .handler(|call| async move {
                    let key = format!("q{}", call.input.round());
                    call.input
                        .ask(mrtr::elicit_form(key, "Again?", one_field("ok", "boolean")))?;
                    Ok::<_, HandlerError>(CallToolResult::text("never done"))
                }),
        )
        // Asks once before the task (within the immediate window: an ordinary MRTR round),
        // then runs past the window, becomes a task and asks once more inside it.
        .tool(
            tool("two_phases")
                .task_support(TaskSupport::optional().immediate_window(Duration::from_millis(250)))
                .handler(move |call| {
                    let gate = gate.clone();
                    async move {
                        let before = call.input.ask(mrtr::elicit_form(
                            "before",
                            "Before the task?",
                            one_field("ok", "boolean"),
                        ))?;
                        if call.input.round() == 1 {
                            // Only on the retry, which outlives the window: it becomes the task.
                            gate.notified().await;
                        }
                        let inside = call.input.ask(mrtr::elicit_form(
                            "inside",
                            "Inside the task?",
                            one_field("ok", "boolean"),
                        ))?;
                        Ok::<_, HandlerError>(CallToolResult::text(format!(
                            "before={} inside={}",
                            field(&before, "ok"),
                            field(&inside, "ok")
                        )))
                    }
                }),
        )
        .build()
        .unwrap()
        .service()
}

fn tasks() -> TasksExtension {
    TasksExtension::builder()
        .poll_interval(Duration::from_millis(20))
        .build()
}

fn call(name: &str) -> Req<'_> {
    Req::new("tools/call", json!({"name": name, "arguments": {}}))
}

/// A `tasks/update` that must be refused with −32602; returns the message.
async fn refused(svc: &McpService, id: &str, responses: Value) -> String {
    let (status, body) = send(
        svc,
        Req::new(
            "tasks/update",
            json!({"taskId": id, "inputResponses": responses}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["error"]["code"], -32602, "{body}");
    body["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn two_rounds_with_state_partial_repeated_and_unfit_answers() {
    let svc = server(tasks());
    let id = start(&svc, call("wizard")).await;

    // Round 1: one key.
    let first = until(&svc, &id, "input_required").await;
    assert_eq!(first["status"], "input_required", "{first}");
    assert_eq!(keys(&first), ["lang"]);
    update(&svc, &id, json!({"lang": accept("lang", json!("rust"))})).await;

    // Round 2: new keys, the first named by the first answer; the round-1 key is not reused.
    let second = until(&svc, &id, "input_required").await;
    assert_eq!(second["status"], "input_required", "{second}");
    assert_eq!(keys(&second), ["edition_rust", "sure"]);
    assert_eq!(
        second["inputRequests"]["edition_rust"]["method"],
        "elicitation/create"
    );
    assert_eq!(
        second["inputRequests"]["edition_rust"]["params"]["message"],
        "Which edition of rust?"
    );

    // An answer that does not fit its form: −32602 naming the key, nothing stored.
    let message = refused(&svc, &id, json!({"sure": accept("sure", json!("yes"))})).await;
    assert!(message.contains("\"sure\""), "{message}");
    // One bad answer refuses the whole update, the good one alongside it included.
    let message = refused(
        &svc,
        &id,
        json!({"edition_rust": accept("edition", json!(2015)), "sure": accept("sure", json!(3))}),
    )
    .await;
    assert!(message.contains("\"sure\""), "{message}");
    assert_eq!(keys(&get(&svc, &id).await), ["edition_rust", "sure"]);

    // The round-1 key is no longer outstanding: an answer for it is ignored.
    update(&svc, &id, json!({"lang": accept("lang", json!("go"))})).await;
    let still = get(&svc, &id).await;
    assert_eq!(still["status"], "input_required");
    assert_eq!(keys(&still), ["edition_rust", "sure"]);

    // A partial update: the task stays input_required with only the other key.
    update(
        &svc,
        &id,
        json!({"edition_rust": accept("edition", json!(2021))}),
    )
    .await;
    let partial = get(&svc, &id).await;
    assert_eq!(partial["status"], "input_required", "{partial}");
    assert_eq!(keys(&partial), ["sure"]);

    // A key already answered is ignored (the first answer stands), even one that would not
    // fit its form.
    update(
        &svc,
        &id,
        json!({"edition_rust": accept("edition", json!(1999))}),
    )
    .await;
    update(
        &svc,
        &id,
        json!({"edition_rust": accept("edition", json!("not a number"))}),
    )
    .await;
    assert_eq!(keys(&get(&svc, &id).await), ["sure"]);

    update(&svc, &id, json!({"sure": accept("sure", json!(true))})).await;
    let done = until(&svc, &id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"], "lang=rust edition=2021 sure=true runs_before=2",
        "the first answers stand, and the state crossed both rounds"
    );
    assert!(done.get("inputRequests").is_none(), "{done}");
}

#[tokio::test]
async fn a_key_is_never_asked_twice_in_a_task() {
    let svc = server(tasks());
    let id = start(&svc, call("reasker")).await;
    let first = until(&svc, &id, "input_required").await;
    assert_eq!(keys(&first), ["x"]);
    update(&svc, &id, json!({"x": accept("x", json!(true))})).await;
    let failed = until(&svc, &id, "failed").await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603);
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("\"x\"") && message.contains("already used"),
        "{message}"
    );
}

#[tokio::test]
async fn a_handler_that_keeps_asking_fails_at_the_round_bound() {
    let svc = server(
        TasksExtension::builder()
            .poll_interval(Duration::from_millis(20))
            .max_rounds(2)
            .build(),
    );
    let id = start(&svc, call("nagger")).await;
    for round in 0..2 {
        let key = format!("q{round}");
        let waiting = until(&svc, &id, "input_required").await;
        assert_eq!(waiting["status"], "input_required", "{waiting}");
        assert_eq!(keys(&waiting), std::slice::from_ref(&key));
        update(&svc, &id, json!({key: accept("ok", json!(true))})).await;
    }
    let failed = until(&svc, &id, "failed").await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603);
    assert_eq!(
        failed["error"]["message"],
        "the tool asked for input more than 2 times"
    );
    assert_eq!(
        failed["statusMessage"],
        "Tool execution failed: the tool asked for input more than 2 times"
    );
    assert!(failed.get("inputRequests").is_none(), "{failed}");
}

#[tokio::test]
async fn the_round_bound_counts_only_the_rounds_inside_the_task() {
    // SEP-2663 §Composition: the task keeps its own input requests, apart from the MRTR phase
    // before it; a bound of one round inside the task must allow that one round.
    let gate = Arc::new(Notify::new());
    let svc = gated_server(
        TasksExtension::builder()
            .poll_interval(Duration::from_millis(20))
            .max_rounds(1)
            .build(),
        &gate,
    );
    let round1 = common::ok(&svc, call("two_phases")).await;
    assert_eq!(round1["resultType"], "input_required", "{round1}");
    assert_eq!(keys(&round1), ["before"]);
    let id = start(
        &svc,
        Req::new(
            "tools/call",
            json!({
                "name": "two_phases", "arguments": {},
                "requestState": round1["requestState"],
                "inputResponses": {"before": accept("ok", json!(true))},
            }),
        ),
    )
    .await;
    gate.notify_one();
    let waiting = until(&svc, &id, "input_required").await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    assert_eq!(keys(&waiting), ["inside"]);
    update(&svc, &id, json!({"inside": accept("ok", json!(false))})).await;
    let done = until(&svc, &id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "before=true inside=false"
    );
}
