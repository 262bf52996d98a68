//! Multi round-trip demo tools: a tool that asks the user before acting, and one that asks
//! the client's model. Both follow the pattern of `smcp_server::mrtr`: ask first, act after.

use serde::Deserialize;
use serde_json::json;
use smcp_proto::client::elicitation::{ElicitAction, ElicitValue};
use smcp_proto::client::sampling::{CreateMessageRequestParams, SamplingMessage};
use smcp_proto::server::tools::{CallToolResult, ToolAnnotations};
use smcp_server::{HandlerError, ServerBuilder, mrtr, tool};

#[derive(Debug, Deserialize)]
struct ActionArgs {
    action: String,
}

#[derive(Debug, Deserialize)]
struct TextArgs {
    text: String,
}

/// Adds `confirm_action` and `confirm_once` (elicitation; the second single-use) and `ask_llm`
/// (sampling).
pub fn with_tools(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            tool("confirm_action")
                .title("Confirm, then act")
                .description(
                    "Asks the user to confirm `action` (an elicitation form) and only then \
                     performs it. Needs a client that declares the elicitation capability.",
                )
                .input_schema(json!({
                    "type": "object",
                    "properties": {"action": {"type": "string", "description": "What to do"}},
                    "required": ["action"]
                }))
                .annotations(ToolAnnotations::new().destructive(true))
                .handler(confirm),
        )
        .tool(
            tool("confirm_once")
                .title("Confirm, then act, once")
                .description(
                    "As confirm_action, but its confirmation is single-use: a retry that \
                     presents the same requestState again is refused, on any instance that \
                     shares the replay guard (smcpd --redis).",
                )
                .input_schema(json!({
                    "type": "object",
                    "properties": {"action": {"type": "string", "description": "What to do"}},
                    "required": ["action"]
                }))
                .annotations(ToolAnnotations::new().destructive(true))
                .single_use_state()
                .handler(confirm),
        )
        .tool(
            tool("ask_llm")
                .title("Summarize with the client's model")
                .description(
                    "Asks the client's model (sampling) for a one-sentence summary of `text`. \
                     Needs a client that declares the sampling capability.",
                )
                .input_schema(json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"]
                }))
                .annotations(ToolAnnotations::new().read_only(true))
                .handler(|call| async move {
                    let args: TextArgs = call.args()?;
                    let mut params = CreateMessageRequestParams::new(
                        vec![SamplingMessage::user_text(format!(
                            "Summarize in one sentence:\n\n{}",
                            args.text
                        ))],
                        200,
                    );
                    params.system_prompt = Some("You write terse, accurate summaries.".to_owned());
                    let reply = call.input.ask(mrtr::sample("summary", params))?;
                    let text = reply
                        .content
                        .blocks()
                        .iter()
                        .find_map(|b| b.as_text())
                        .unwrap_or_default()
                        .to_owned();
                    Ok::<_, HandlerError>(CallToolResult::text(format!(
                        "{text} (model: {})",
                        reply.model
                    )))
                }),
        )
}

/// `confirm_action` and `confirm_once`: ask the user to confirm, then act.
async fn confirm(call: smcp_server::ToolCall) -> Result<CallToolResult, HandlerError> {
    let args: ActionArgs = call.args()?;
    let answer = call.input.ask(mrtr::elicit_form(
        "confirm",
        format!("Really {}?", args.action),
        json!({
            "type": "object",
            "properties": {
                "confirm": {"type": "boolean", "title": "Go ahead", "default": false},
                "note": {"type": "string", "title": "Note for the log", "maxLength": 200}
            },
            "required": ["confirm"]
        }),
    ))?;
    // Everything above runs on every round; the effect happens only here.
    let confirmed = answer.action == ElicitAction::Accept
        && answer.content.as_ref().and_then(|c| c.get("confirm")) == Some(&ElicitValue::Bool(true));
    if confirmed {
        tracing::info!(action = %args.action, "confirmed action performed");
        Ok(CallToolResult::text(format!("done: {}", args.action)))
    } else {
        Ok(CallToolResult::text(format!(
            "not done: {} ({:?})",
            args.action, answer.action
        )))
    }
}
