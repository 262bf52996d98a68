//! The fixture surface of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, scenarios for revision 2026-07-28).
//!
//! Names and payloads are fixed by the suite; see `conformance/README.md` and the suite's
//! scenario descriptions. This is a test fixture, not a demo: `smcpd` serves the demo tools.

/// The SEP-2631 `files_*` fixtures; they live in `smcpd`, which serves them too
/// (`smcpd --sep2631-fixtures`).
pub use smcpd::sep2631_fixtures as files;

use std::time::Duration;

use serde_json::{Value, json};
use smcp_proto::basic::Role;
use smcp_proto::client::sampling::{CreateMessageRequestParams, SamplingMessage};
use smcp_proto::content::{BlobResourceContents, ContentBlock, TextResourceContents};
use smcp_proto::server::prompts::{GetPromptResult, PromptMessage};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{
    BuildError, Change, Completion, HandlerError, LoggingLevel, Server, ServerBuilder, mrtr,
    prompt, resource, resource_template, tool,
};

/// A 1×1 PNG, as the suite's reference server uses.
pub const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A minimal WAV file.
pub const WAV_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

fn image() -> ContentBlock {
    ContentBlock::image(PNG_BASE64, "image/png")
}

fn text_resource(uri: &str, mime: &str, text: &str) -> TextResourceContents {
    let mut contents = TextResourceContents::new(uri, text);
    contents.mime_type = Some(mime.to_owned());
    contents
}

/// The schema of `json_schema_2020_12_tool`, which must be listed verbatim.
pub fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

fn ok(result: CallToolResult) -> Result<CallToolResult, HandlerError> {
    Ok(result)
}

/// The fixture tools, in the order the suite needs (`test_simple_text` first: the header
/// scenarios call the first listed tool with no arguments).
pub fn with_tools(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            tool("test_simple_text")
                .description("Returns a simple text response")
                .handler(|_call| async {
                    ok(CallToolResult::text(
                        "This is a simple text response for testing.",
                    ))
                }),
        )
        .tool(
            tool("test_image_content")
                .description("Returns an image")
                .handler(|_call| async { ok(CallToolResult::new(vec![image()])) }),
        )
        .tool(
            tool("test_audio_content")
                .description("Returns audio")
                .handler(|_call| async {
                    ok(CallToolResult::new(vec![ContentBlock::audio(
                        WAV_BASE64,
                        "audio/wav",
                    )]))
                }),
        )
        .tool(
            tool("test_embedded_resource")
                .description("Returns an embedded resource")
                .handler(|_call| async {
                    ok(CallToolResult::new(vec![ContentBlock::resource(
                        text_resource(
                            "test://embedded-resource",
                            "text/plain",
                            "This is an embedded resource content.",
                        ),
                    )]))
                }),
        )
        .tool(
            tool("test_multiple_content_types")
                .description("Returns text, an image and a resource")
                .handler(|_call| async {
                    ok(CallToolResult::new(vec![
                        ContentBlock::text("Multiple content types test:"),
                        image(),
                        ContentBlock::resource(text_resource(
                            "test://mixed-content-resource",
                            "application/json",
                            r#"{"test":"data","value":123}"#,
                        )),
                    ]))
                }),
        )
        .tool(
            tool("test_error_handling")
                .description("Always fails with a tool error")
                .handler(|_call| async {
                    Err::<CallToolResult, _>(HandlerError::failed(
                        "This tool intentionally returns an error for testing",
                    ))
                }),
        )
        .tool(
            tool("test_tool_with_progress")
                .description("Reports progress 0, 50, 100 before answering")
                .handler(|call| async move {
                    for (i, p) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                        if i > 0 {
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                        call.ctx
                            .progress(p, Some(100.0), Some("working"))
                            .await
                            .map_err(|e| HandlerError::failed(e.to_string()))?;
                    }
                    ok(CallToolResult::text("Progress complete"))
                }),
        )
        .tool(
            tool("test_missing_capability")
                .description("Needs the sampling capability")
                .requires_client_capability("sampling")
                .handler(|_call| async { ok(CallToolResult::text("sampling is available")) }),
        )
        .tool(
            tool("test_streaming_elicitation")
                .description("Never sends requests on its response stream")
                .handler(|_call| async {
                    ok(CallToolResult::text("No server-to-client request was sent"))
                }),
        )
        .tool(
            tool("test_logging_tool")
                .description("Logs only when the request asks for a log level")
                .handler(|call| async move {
                    call.ctx
                        .log(
                            LoggingLevel::Info,
                            Some("conformance"),
                            json!("test_logging_tool ran"),
                        )
                        .await
                        .map_err(|e| HandlerError::failed(e.to_string()))?;
                    ok(CallToolResult::text("Logging tool completed"))
                }),
        )
        .tool(
            tool("json_schema_2020_12_tool")
                .description("Tool with JSON Schema 2020-12 features")
                .input_schema(json_schema_2020_12())
                .handler(|_call| async { ok(CallToolResult::text("ok")) }),
        )
        .tool(
            tool("test_header_param")
                .description("Mirrors the region argument into the Mcp-Param-Region header")
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "region": {
                            "type": "string",
                            "description": "Region to run in",
                            "x-mcp-header": "Region"
                        },
                        "count": {"type": "integer", "x-mcp-header": "Count"}
                    },
                    "required": ["region"]
                }))
                .handler(|call| async move {
                    let region = call.str_arg("region").unwrap_or_default().to_owned();
                    ok(CallToolResult::text(format!("region={region}")))
                }),
        )
}

/// Publishes `change` through the server's runtime API, as a real change would.
fn trigger(call: &smcp_server::ToolCall, change: Change) -> Result<CallToolResult, HandlerError> {
    let server = call
        .ctx
        .server()
        .ok_or_else(|| HandlerError::failed("no server behind this request"))?;
    let method = change.method().to_owned();
    server.publish(change);
    ok(CallToolResult::text(format!("published {method}")))
}

/// The diagnostic hooks of the subscription checks: each fires a list-changed notification on
/// every open listen stream that asked for it.
pub fn with_triggers(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tools_list_changed(true)
        .prompts_list_changed(true)
        .tool(
            tool("test_trigger_tool_change")
                .description("Publishes notifications/tools/list_changed")
                .handler(|call| async move { trigger(&call, Change::ToolsListChanged) }),
        )
        .tool(
            tool("test_trigger_prompt_change")
                .description("Publishes notifications/prompts/list_changed")
                .handler(|call| async move { trigger(&call, Change::PromptsListChanged) }),
        )
}

/// The fixture resources and template.
pub fn with_resources(builder: ServerBuilder) -> ServerBuilder {
    builder
        .resource(
            resource("test://static-text", "static-text")
                .description("A static text resource")
                .mime_type("text/plain")
                .handler(|read| async move {
                    Ok(vec![
                        text_resource(
                            &read.uri,
                            "text/plain",
                            "This is the content of the static text resource.",
                        )
                        .into(),
                    ])
                }),
        )
        .resource(
            resource("test://static-binary", "static-binary")
                .description("A static binary resource (PNG)")
                .mime_type("image/png")
                .handler(|read| async move {
                    let mut blob = BlobResourceContents::from_bytes(&read.uri, &[]);
                    PNG_BASE64.clone_into(&mut blob.blob);
                    blob.mime_type = Some("image/png".to_owned());
                    Ok(vec![blob.into()])
                }),
        )
        .resource(
            resource_template("test://template/{id}/data", "template-data")
                .description("Data for an id")
                .mime_type("application/json")
                .handler(|read| async move {
                    let id = read.variables.get("id").cloned().unwrap_or_default();
                    let body = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                    Ok(vec![text_resource(&read.uri, "application/json", &body.to_string()).into()])
                }),
        )
}

/// The fixture prompts and completion.
pub fn with_prompts(builder: ServerBuilder) -> ServerBuilder {
    builder
        .prompt(
            prompt("test_simple_prompt")
                .description("A simple prompt")
                .handler(|_get| async {
                    Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                        "This is a simple prompt for testing.",
                    )]))
                }),
        )
        .prompt(
            prompt("test_prompt_with_arguments")
                .description("A prompt with two arguments")
                .argument("arg1", "First argument", true)
                .argument("arg2", "Second argument", true)
                .handler(|get| async move {
                    let text = format!(
                        "Prompt with arguments: arg1='{}', arg2='{}'",
                        get.arg("arg1").unwrap_or_default(),
                        get.arg("arg2").unwrap_or_default()
                    );
                    Ok(GetPromptResult::new(vec![PromptMessage::user_text(text)]))
                }),
        )
        .prompt(
            prompt("test_prompt_with_embedded_resource")
                .description("A prompt embedding a resource")
                .argument("resourceUri", "URI of the resource to embed", true)
                .handler(|get| async move {
                    let uri = get.arg("resourceUri").unwrap_or_default().to_owned();
                    Ok(GetPromptResult::new(vec![
                        PromptMessage {
                            role: Role::User,
                            content: ContentBlock::resource(text_resource(
                                &uri,
                                "text/plain",
                                "Embedded resource content for testing.",
                            )),
                        },
                        PromptMessage::user_text("Please process the embedded resource above."),
                    ]))
                }),
        )
        .prompt(
            prompt("test_prompt_with_image")
                .description("A prompt with an image")
                .handler(|_get| async {
                    Ok(GetPromptResult::new(vec![
                        PromptMessage {
                            role: Role::User,
                            content: image(),
                        },
                        PromptMessage::user_text("Please analyze the image above."),
                    ]))
                }),
        )
        .completion(|request: smcp_server::CompletionRequest| async move {
            let candidates = ["test", "testing", "tested", "paris", "london"];
            let values = candidates
                .iter()
                .filter(|c| c.starts_with(&request.value))
                .map(|c| (*c).to_owned())
                .collect();
            Ok(Completion::values(values))
        })
}

fn form(field: &str, kind: &str) -> Value {
    json!({"type": "object", "properties": {field: {"type": kind}}, "required": [field]})
}

fn capital_question() -> CreateMessageRequestParams {
    CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text("What is the capital of France?")],
        100,
    )
}

fn text_of(answer: &smcp_proto::client::elicitation::ElicitResult, field: &str) -> String {
    answer
        .content
        .as_ref()
        .and_then(|c| c.get(field))
        .map(|v| match v {
            smcp_proto::client::elicitation::ElicitValue::String(s) => s.clone(),
            other => serde_json::to_string(other).unwrap_or_default(),
        })
        .unwrap_or_default()
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

/// Waits `seconds`, or until the task is cancelled (`Err`: the task then settles to
/// `cancelled`).
async fn work(call: &smcp_server::ToolCall, seconds: f64) -> Result<(), HandlerError> {
    let seconds = if seconds.is_finite() {
        seconds.clamp(0.0, 3600.0)
    } else {
        0.0
    };
    tokio::select! {
        () = call.ctx.cancelled() => Err(HandlerError::failed("cancelled")),
        () = tokio::time::sleep(Duration::from_secs_f64(seconds)) => Ok(()),
    }
}

/// The SEP-2663 tasks extension and the fixtures of the suite's `tasks-*` scenarios. The
/// immediate window is the extension's default (250 ms): `slow_compute` with `seconds: 0`
/// answers inline, with 1 or more it becomes a task. Tools that must become a task before
/// they ask for input (`confirm_delete`, `multi_input`) or fail at once
/// (`protocol_error_job`) have a window of zero.
pub fn with_tasks(builder: ServerBuilder) -> ServerBuilder {
    use smcp_tasks::{TaskSupport, TaskToolExt, TasksExtension};
    let at_once = TaskSupport::optional().immediate_window(Duration::ZERO);
    let confirm_schema = json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean", "description": "Delete the file?"}},
        "required": ["confirm"]
    });
    let name_schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string", "description": "Your name"}},
        "required": ["name"]
    });
    let answer = |a: &smcp_proto::client::elicitation::ElicitResult, key: &str| {
        serde_json::to_value(a)
            .ok()
            .and_then(|v| v.get("content").and_then(|c| c.get(key)).cloned())
            .unwrap_or(Value::Null)
    };
    builder
        .extension(TasksExtension::new())
        .tool(
            tool("greet")
                .description("Greets by name (never a task)")
                .input_schema(json!({"type": "object", "properties": {"name": {"type": "string"}}}))
                .handler(|call| async move {
                    let name = call.str_arg("name").unwrap_or("World").to_owned();
                    ok(CallToolResult::text(format!("Hello, {name}!")))
                }),
        )
        .tool(
            tool("slow_compute")
                .description("Sleeps `seconds`, then answers (task-capable)")
                .task_support(TaskSupport::optional())
                .input_schema(json!({"type": "object", "properties": {
                    "seconds": {"type": "number", "minimum": 0},
                    "label": {"type": "string"}
                }}))
                .handler(|call| async move {
                    let seconds = call
                        .arguments
                        .get("seconds")
                        .and_then(Value::as_f64)
                        .unwrap_or(0.0);
                    let label = call.str_arg("label").unwrap_or("slow_compute").to_owned();
                    work(&call, seconds).await?;
                    ok(CallToolResult::text(format!(
                        "{label}: computed after {seconds} s"
                    )))
                }),
        )
        .tool(
            tool("failing_job")
                .description("Fails with a tool error after about a second (task-required)")
                .task_support(TaskSupport::required())
                .handler(|call| async move {
                    work(&call, 1.0).await?;
                    Err::<CallToolResult, _>(HandlerError::failed(
                        "failing_job failed, as it always does",
                    ))
                }),
        )
        .tool(
            tool("protocol_error_job")
                .description("Panics: a protocol-level failure (task-capable)")
                .task_support(at_once)
                .handler(|call| async move {
                    work(&call, 0.1).await?;
                    if call.tool().name == "protocol_error_job" {
                        panic!("protocol_error_job: deliberate internal failure");
                    }
                    ok(CallToolResult::text("unreachable"))
                }),
        )
        .tool({
            let confirm_schema = confirm_schema.clone();
            tool("confirm_delete")
                .description("Asks for confirmation inside its task, then deletes `filename`")
                .task_support(at_once)
                .input_schema(
                    json!({"type": "object", "properties": {"filename": {"type": "string"}}}),
                )
                .handler(move |call| {
                    let schema = confirm_schema.clone();
                    async move {
                        let file = call.str_arg("filename").unwrap_or("file").to_owned();
                        let a = call.input.ask(mrtr::elicit_form(
                            "confirm_delete",
                            format!("Delete {file}?"),
                            schema,
                        ))?;
                        let verdict = if answer(&a, "confirm") == Value::Bool(true) {
                            "Deleted"
                        } else {
                            "Kept"
                        };
                        ok(CallToolResult::text(format!("{verdict} {file}")))
                    }
                })
        })
        .tool({
            let name_schema = name_schema.clone();
            tool("multi_input")
                .description("Asks two questions at once inside its task")
                .task_support(at_once)
                .handler(move |call| {
                    let (confirm_schema, name_schema) =
                        (confirm_schema.clone(), name_schema.clone());
                    async move {
                        let (name, confirm) = call.input.ask((
                            mrtr::elicit_form("multi_name", "Your name?", name_schema),
                            mrtr::elicit_form("multi_confirm", "Proceed?", confirm_schema),
                        ))?;
                        ok(CallToolResult::text(format!(
                            "name={} confirm={}",
                            answer(&name, "name"),
                            answer(&confirm, "confirm")
                        )))
                    }
                })
        })
        .tool({
            tool("test_tool_with_task")
                .description("Asks for user_name (MRTR), then finishes as a task (task-required)")
                .task_support(TaskSupport::required())
                .handler(move |call| {
                    let schema = name_schema.clone();
                    async move {
                        let a = call.input.ask(mrtr::elicit_form(
                            "user_name",
                            "What is your name?",
                            schema,
                        ))?;
                        work(&call, 1.0).await?;
                        let name = answer(&a, "name");
                        let name = name.as_str().unwrap_or("stranger");
                        ok(CallToolResult::text(format!(
                            "Hello, {name}! (finished as a task)"
                        )))
                    }
                })
        })
}

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

/// The complete fixture server.
pub fn server() -> Result<Server, BuildError> {
    server_with_files(None)
}

/// The fixture server; with a file service it also advertises `files` and serves the
/// SEP-2631 `files_*` fixtures (see [`files`]).
pub fn server_with_files(file_service: Option<smcp_files::Files>) -> Result<Server, BuildError> {
    let mut builder = Server::builder("smcp-conformance-server", env!("CARGO_PKG_VERSION"))
        .instructions("Fixture server for the MCP conformance suite.")
        .logging(true);
    if let Some(f) = file_service {
        builder = files::with_files(builder.extension(smcp_files::FilesExtension::new(f)));
    }
    with_stateful(with_tasks(with_mrtr(with_triggers(with_prompts(
        with_resources(with_tools(builder)),
    )))))
    .build()
}
