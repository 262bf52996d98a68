//! An upstream that asks in the middle of a call, through the gateway.
//!
//! At 2026-07-28 the question passes through (its key as the upstream chose it, the upstream's
//! state sealed in the gateway's): any instance takes the retry. At 2025-11-25 the upstream
//! asks with a request in the middle of the call, which is held: the retry must come back to
//! the instance holding it; a retry elsewhere, a second retry, a client without the capability
//! each get a precise error.

use serde_json::{Value, json};
use smcp_proto::client::elicitation::{ElicitAction, ElicitValue};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, Server, mrtr, tool};

use crate::common::{self, Served};

/// An upstream whose `confirm` asks the user before it acts.
pub(crate) async fn asking_upstream() -> (Server, Served) {
    let server = Server::builder("upstream", "1")
        .tool(
            tool("confirm")
                .input_schema(json!({"type": "object", "properties": {"action": {"type": "string"}}}))
                .handler(|call| async move {
                    let action = call.str_arg("action").unwrap_or("it").to_owned();
                    let answer = call.input.ask(mrtr::elicit_form(
                        "ok",
                        format!("Really {action}?"),
                        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
                    ))?;
                    let yes = answer.action == ElicitAction::Accept
                        && answer.content.as_ref().and_then(|c| c.get("ok"))
                            == Some(&ElicitValue::Bool(true));
                    Ok::<_, HandlerError>(CallToolResult::text(if yes {
                        format!("done: {action}")
                    } else {
                        format!("not done: {action}")
                    }))
                }),
        )
        .build()
        .unwrap();
    let served = common::serve_server(&server).await;
    (server, served)
}

/// The upstream at 2025-11-25: its questions are requests in the middle of the call.
pub(crate) fn config(url: &str) -> String {
    format!("[[upstream]]\nname = \"up\"\nurl = \"{url}\"\nera = \"2025-11-25\"\n")
}

/// The upstream at 2026-07-28: its questions pass through.
fn config_2026(url: &str) -> String {
    format!("[[upstream]]\nname = \"up\"\nurl = \"{url}\"\n")
}

pub(crate) fn accept() -> Value {
    json!({"upstream": {"action": "accept", "content": {"ok": true}}})
}

/// The first round: an `InputRequiredResult` asking the upstream's question under `key`; its
/// state.
async fn first_round_keyed(svc: &smcp_server::McpService, key: &str) -> String {
    let (status, body) = common::call(
        svc,
        "up_confirm",
        json!({"arguments": {"action": "deploy"}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let result = &body["result"];
    assert_eq!(result["resultType"], "input_required", "{body}");
    let question = &result["inputRequests"][key];
    assert_eq!(question["method"], "elicitation/create", "{body}");
    assert_eq!(question["params"]["message"], "Really deploy?", "{body}");
    result["requestState"].as_str().unwrap().to_owned()
}

pub(crate) async fn first_round(svc: &smcp_server::McpService) -> String {
    first_round_keyed(svc, "upstream").await
}

#[tokio::test]
async fn a_2026_question_passes_through_and_any_instance_takes_the_retry() {
    let (_upstream, served) = asking_upstream().await;
    let (first_gw, first) = common::gateway(&config_2026(&served.url)).await;
    let (_second_gw, second) = common::gateway(&config_2026(&served.url)).await;
    // The upstream's own key, not one of the gateway's.
    let state = first_round_keyed(&first.service(), "ok").await;
    assert_eq!(first_gw.held_calls(), 0, "nothing held");
    let (status, body) = common::call(
        &second.service(),
        "up_confirm",
        json!({
            "arguments": {"action": "deploy"},
            "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}, "extra": 1},
            "requestState": state
        }),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"], "done: deploy",
        "{body}"
    );

    // A client that did not declare elicitation: the upstream sees its capabilities, not the
    // gateway's, and refuses as it would directly.
    let (_, body) = common::call(
        &first.service(),
        "up_confirm",
        json!({"arguments": {"action": "deploy"}, "_meta": common::meta(json!({}))}),
    )
    .await;
    assert_eq!(body["error"]["code"], -32021, "{body}");
}

#[tokio::test]
async fn the_retry_answers_the_held_upstream_request_and_the_call_goes_on() {
    let (_upstream, served) = asking_upstream().await;
    let (gateway, server) = common::gateway(&config(&served.url)).await;
    let svc = server.service();
    let state = first_round(&svc).await;
    assert_eq!(gateway.held_calls(), 1);
    let (status, body) = common::call(
        &svc,
        "up_confirm",
        json!({"arguments": {"action": "deploy"}, "inputResponses": accept(), "requestState": state}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"]["content"][0]["text"], "done: deploy",
        "{body}"
    );
    assert_eq!(gateway.held_calls(), 0);

    // A second retry with the same state finds nothing held.
    let (_, body) = common::call(
        &svc,
        "up_confirm",
        json!({"arguments": {"action": "deploy"}, "inputResponses": accept(), "requestState": state}),
    )
    .await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert_eq!(body["error"]["data"]["reason"], "held-call-gone", "{body}");
}

#[tokio::test]
async fn a_retry_on_another_instance_is_refused_with_a_reason_the_client_can_act_on() {
    let (_upstream, served) = asking_upstream().await;
    let (_a, first) = common::gateway(&config(&served.url)).await;
    let (_b, second) = common::gateway(&config(&served.url)).await;
    let state = first_round(&first.service()).await;
    // Both instances open the state (one key), but only the first holds the call.
    let (status, body) = common::call(
        &second.service(),
        "up_confirm",
        json!({"arguments": {"action": "deploy"}, "inputResponses": accept(), "requestState": state}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert_eq!(body["error"]["data"]["reason"], "held-elsewhere", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("another gateway instance"), "{message}");
}

#[tokio::test]
async fn an_answer_that_does_not_fit_the_question_is_refused_and_nothing_stays_held() {
    let (_upstream, served) = asking_upstream().await;
    let (gateway, server) = common::gateway(&config(&served.url)).await;
    let svc = server.service();
    let state = first_round(&svc).await;
    let (_, body) = common::call(
        &svc,
        "up_confirm",
        json!({
            "arguments": {"action": "deploy"},
            "inputResponses": {"upstream": {"action": "accept", "content": {"ok": "yes"}}},
            "requestState": state
        }),
    )
    .await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("inputResponses.upstream"), "{message}");
    assert_eq!(gateway.held_calls(), 0);
}

#[tokio::test]
async fn a_client_without_the_capability_is_not_asked() {
    let (_upstream, served) = asking_upstream().await;
    let (gateway, server) = common::gateway(&config(&served.url)).await;
    let (_, body) = common::call(
        &server.service(),
        "up_confirm",
        json!({"arguments": {"action": "deploy"}, "_meta": common::meta(json!({}))}),
    )
    .await;
    assert_eq!(body["error"]["code"], -32021, "{body}");
    assert_eq!(
        body["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}}),
        "{body}"
    );
    assert_eq!(gateway.held_calls(), 0);
}

#[tokio::test]
async fn a_held_call_waits_for_a_slow_answer_beyond_the_upstream_timeout() {
    let (_upstream, served) = asking_upstream().await;
    // One second for the upstream's own work; a person answers in one and a half.
    let (_gateway, server) = common::gateway(&format!(
        "[[upstream]]\nname = \"up\"\nurl = \"{}\"\nera = \"2025-11-25\"\ntimeout = \"1s\"\n",
        served.url
    ))
    .await;
    let svc = server.service();
    let state = first_round(&svc).await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let (_, body) = common::call(
        &svc,
        "up_confirm",
        json!({"arguments": {"action": "deploy"}, "inputResponses": accept(), "requestState": state}),
    )
    .await;
    assert_eq!(
        body["result"]["content"][0]["text"], "done: deploy",
        "{body}"
    );
}
