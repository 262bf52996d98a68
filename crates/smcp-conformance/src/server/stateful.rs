//! The fixtures the scenarios of the stateful revisions (2025-11-25 and before) name.

use std::time::Duration;

use serde_json::json;
use smcp_proto::client::sampling::{CreateMessageRequestParams, SamplingMessage};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, LoggingLevel, ServerBuilder, mrtr, tool};

use super::common::ok;

/// The fixtures the scenarios of the stateful revisions (2025-11-25 and before) name. The
/// handlers are era-agnostic: they ask for input with `call.input.ask(..)`, which a 2026-07-28
/// client answers with a retry and a 2025-11-25 session with responses to server-to-client
/// requests; logging and progress go through the request context either way.
pub fn with_stateful(builder: ServerBuilder) -> ServerBuilder {
    builder
        .resources_subscribe(true)
        .tool(
            tool("test_reconnection")
                .description("Takes a moment, so its response streams (SSE polling checks)")
                .handler(|_call| async {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    ok(CallToolResult::text("Reconnection test complete"))
                }),
        )
        .tool(
            tool("test_tool_with_logging")
                .description("Sends three info log messages while it runs")
                .handler(|call| async move {
                    for (i, text) in [
                        "Tool execution started",
                        "Tool processing data",
                        "Tool execution completed",
                    ]
                    .into_iter()
                    .enumerate()
                    {
                        if i > 0 {
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                        call.ctx
                            .log(LoggingLevel::Info, Some("conformance"), json!(text))
                            .await
                            .map_err(|e| HandlerError::failed(e.to_string()))?;
                    }
                    ok(CallToolResult::text("Logging complete"))
                }),
        )
        .tool(
            tool("test_sampling")
                .description("Asks the client's model the prompt it is given")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"prompt": {"type": "string"}},
                    "required": ["prompt"]
                }))
                .requires_client_capability("sampling")
                .handler(|call| async move {
                    let prompt = call.str_arg("prompt").unwrap_or_default().to_owned();
                    let answer = call.input.ask(mrtr::sample(
                        "sample",
                        CreateMessageRequestParams::new(vec![SamplingMessage::user_text(prompt)], 100),
                    ))?;
                    let text = answer
                        .content
                        .blocks()
                        .iter()
                        .find_map(|b| b.as_text())
                        .unwrap_or_default()
                        .to_owned();
                    ok(CallToolResult::text(format!("LLM response: {text}")))
                }),
        )
        .tool(
            tool("test_elicitation")
                .description("Asks the user for a username and an email address")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"message": {"type": "string"}},
                    "required": ["message"]
                }))
                .handler(|call| async move {
                    let message = call.str_arg("message").unwrap_or_default().to_owned();
                    let answer = call.input.ask(mrtr::elicit_form(
                        "user",
                        message,
                        json!({
                            "type": "object",
                            "properties": {
                                "username": {"type": "string", "description": "User's response"},
                                "email": {"type": "string", "description": "User's email address"}
                            },
                            "required": ["username", "email"]
                        }),
                    ))?;
                    ok(CallToolResult::text(format!(
                        "User response: {}",
                        elicit_summary(&answer)
                    )))
                }),
        )
        .tool(
            tool("test_elicitation_sep1034_defaults")
                .description("Asks for a form whose fields all have defaults")
                .handler(|call| async move {
                    let answer = call.input.ask(mrtr::elicit_form(
                        "defaults",
                        "Please review the defaults",
                        json!({
                            "type": "object",
                            "properties": {
                                "name": {"type": "string", "default": "John Doe"},
                                "age": {"type": "integer", "default": 30},
                                "score": {"type": "number", "default": 95.5},
                                "status": {
                                    "type": "string",
                                    "enum": ["active", "inactive", "pending"],
                                    "default": "active"
                                },
                                "verified": {"type": "boolean", "default": true}
                            }
                        }),
                    ))?;
                    ok(CallToolResult::text(format!(
                        "Elicitation completed: {}",
                        elicit_summary(&answer)
                    )))
                }),
        )
        .tool(
            tool("test_elicitation_sep1330_enums")
                .description("Asks for a form with every enum variant")
                .handler(|call| async move {
                    let answer = call.input.ask(mrtr::elicit_form(
                        "enums",
                        "Pick some options",
                        json!({
                            "type": "object",
                            "properties": {
                                "untitledSingle": {
                                    "type": "string",
                                    "enum": ["option1", "option2", "option3"]
                                },
                                "titledSingle": {
                                    "type": "string",
                                    "oneOf": [
                                        {"const": "value1", "title": "First Option"},
                                        {"const": "value2", "title": "Second Option"},
                                        {"const": "value3", "title": "Third Option"}
                                    ]
                                },
                                "legacyEnum": {
                                    "type": "string",
                                    "enum": ["opt1", "opt2", "opt3"],
                                    "enumNames": ["Option One", "Option Two", "Option Three"]
                                },
                                "untitledMulti": {
                                    "type": "array",
                                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
                                },
                                "titledMulti": {
                                    "type": "array",
                                    "items": {"anyOf": [
                                        {"const": "value1", "title": "First Choice"},
                                        {"const": "value2", "title": "Second Choice"},
                                        {"const": "value3", "title": "Third Choice"}
                                    ]}
                                }
                            }
                        }),
                    ))?;
                    ok(CallToolResult::text(format!(
                        "Elicitation completed: {}",
                        elicit_summary(&answer)
                    )))
                }),
        )
}

/// `action=<action>, content=<json>` of an elicitation answer.
fn elicit_summary(answer: &smcp_proto::client::elicitation::ElicitResult) -> String {
    let action = serde_json::to_value(answer.action)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let content = serde_json::to_string(&answer.content).unwrap_or_default();
    format!("action={action}, content={content}")
}
