//! The fixtures of the 2026-07-28 features: tools, the list-changed triggers of the
//! subscription checks, resources and their template, prompts and completion.

use std::time::Duration;

use serde_json::{Value, json};
use smcp_proto::basic::Role;
use smcp_proto::content::{BlobResourceContents, ContentBlock};
use smcp_proto::server::prompts::{GetPromptResult, PromptMessage};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{
    Change, Completion, HandlerError, LoggingLevel, ServerBuilder, prompt, resource,
    resource_template, tool,
};

use super::common::{PNG_BASE64, WAV_BASE64, image, ok, text_resource};

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
