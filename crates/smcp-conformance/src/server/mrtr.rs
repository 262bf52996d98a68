//! The multi round-trip (SEP-2322) fixtures: tools and prompts that ask for input.

use smcp_proto::client::sampling::{CreateMessageRequestParams, SamplingMessage};
use smcp_proto::server::prompts::{GetPromptResult, PromptMessage};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{ServerBuilder, mrtr, prompt, tool};

use super::common::{form, ok, text_of};

fn capital_question() -> CreateMessageRequestParams {
    CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text("What is the capital of France?")],
        100,
    )
}

/// The multi round-trip (SEP-2322) fixtures.
pub fn with_mrtr(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            tool("test_input_required_result_elicitation")
                .description("Asks for the user's name, then greets them")
                .handler(|call| async move {
                    let answer = call.input.ask(mrtr::elicit_form(
                        "user_name",
                        "What is your name?",
                        form("name", "string"),
                    ))?;
                    ok(CallToolResult::text(format!(
                        "Hello, {}!",
                        text_of(&answer, "name")
                    )))
                }),
        )
        .tool(
            tool("test_input_required_result_sampling")
                .description("Asks the client's model a question")
                .handler(|call| async move {
                    let answer = call
                        .input
                        .ask(mrtr::sample("sample_request", capital_question()))?;
                    let text = answer
                        .content
                        .blocks()
                        .iter()
                        .find_map(|b| b.as_text())
                        .unwrap_or_default()
                        .to_owned();
                    ok(CallToolResult::text(format!("The model said: {text}")))
                }),
        )
        .tool(
            tool("test_input_required_result_list_roots")
                .description("Asks for the client's roots")
                .handler(|call| async move {
                    let roots = call.input.ask(mrtr::list_roots("roots_request"))?;
                    let uris: Vec<_> = roots.roots.iter().map(|r| r.uri.clone()).collect();
                    ok(CallToolResult::text(format!("Roots: {}", uris.join(", "))))
                }),
        )
        .tool(
            tool("test_input_required_result_request_state")
                .description("Asks for confirmation and carries state between rounds")
                .handler(|call| async move {
                    let started = call.input.state::<String>()?;
                    if started.is_none() {
                        call.input.set_state(&"started")?;
                    }
                    let answer = call.input.ask(mrtr::elicit_form(
                        "confirm",
                        "Proceed?",
                        form("ok", "boolean"),
                    ))?;
                    ok(CallToolResult::text(format!(
                        "state-ok: {} (confirmed: {})",
                        started.unwrap_or_default(),
                        text_of(&answer, "ok")
                    )))
                }),
        )
        .tool(
            tool("test_input_required_result_multiple_inputs")
                .description("Asks for a form answer, a completion and the roots in one round")
                .handler(|call| async move {
                    let (name, sample, roots) = call.input.ask((
                        mrtr::elicit_form(
                            "user_name",
                            "What is your name?",
                            form("name", "string"),
                        ),
                        mrtr::sample("sample_request", capital_question()),
                        mrtr::list_roots("roots_request"),
                    ))?;
                    ok(CallToolResult::text(format!(
                        "name={}, model={}, roots={}",
                        text_of(&name, "name"),
                        sample.model,
                        roots.roots.len()
                    )))
                }),
        )
        .tool(
            tool("test_input_required_result_multi_round")
                .description("Asks two questions in two rounds")
                .handler(|call| async move {
                    let name = call.input.ask(mrtr::elicit_form(
                        "step1",
                        "What is your name?",
                        form("name", "string"),
                    ))?;
                    let color = call.input.ask(mrtr::elicit_form(
                        "step2",
                        "What is your favourite colour?",
                        form("color", "string"),
                    ))?;
                    ok(CallToolResult::text(format!(
                        "{} likes {}",
                        text_of(&name, "name"),
                        text_of(&color, "color")
                    )))
                }),
        )
        .tool(
            tool("test_input_required_result_tampered_state")
                .description("Issues integrity-protected state; tampering is refused")
                .handler(|call| async move {
                    let answer = call.input.ask(mrtr::elicit_form(
                        "confirm",
                        "Proceed?",
                        form("ok", "boolean"),
                    ))?;
                    ok(CallToolResult::text(format!(
                        "confirmed: {}",
                        text_of(&answer, "ok")
                    )))
                }),
        )
        .tool(
            tool("test_input_required_result_capabilities")
                .description("Asks only for inputs the client declared it can give")
                .handler(|call| async move {
                    if call.ctx.has_capability(&["elicitation"]) {
                        let answer = call.input.ask(mrtr::elicit_form(
                            "user_name",
                            "What is your name?",
                            form("name", "string"),
                        ))?;
                        return ok(CallToolResult::text(format!(
                            "Hello, {}!",
                            text_of(&answer, "name")
                        )));
                    }
                    let answer = call
                        .input
                        .ask(mrtr::sample("sample_request", capital_question()))?;
                    ok(CallToolResult::text(format!(
                        "The model {} answered",
                        answer.model
                    )))
                }),
        )
        .prompt(
            prompt("test_input_required_result_prompt")
                .description("A prompt that asks the user for context first")
                .handler(|get| async move {
                    let answer = get.input.ask(mrtr::elicit_form(
                        "user_context",
                        "What context should the prompt use?",
                        form("context", "string"),
                    ))?;
                    Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                        format!("Context: {}", text_of(&answer, "context")),
                    )]))
                }),
        )
}
