//! The demo tool set: small, honest tools that show each part of the protocol.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use smcp_proto::content::TextResourceContents;
use smcp_proto::server::prompts::{GetPromptResult, PromptMessage};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{
    BuildError, Completion, HandlerError, LogLevel, SecurityPolicy, Server, prompt, resource, tool,
};

fn text_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {"text": {"type": "string", "description": "Text to echo"}},
        "required": ["text"],
        "additionalProperties": false
    })
}

#[derive(Debug, Deserialize)]
struct TextArgs {
    text: String,
}

#[derive(Debug, Deserialize)]
struct AddArgs {
    a: f64,
    b: f64,
}

#[derive(Debug, Deserialize)]
struct CountArgs {
    to: u32,
    #[serde(default = "default_delay")]
    delay_ms: u64,
}

fn default_delay() -> u64 {
    100
}

const README: &str = "smcpd is the smcp reference server. Call `tools/list` to see its tools.";

/// The demo server, with the given Host/Origin policy.
pub fn demo_server(security: SecurityPolicy) -> Result<Server, BuildError> {
    Server::builder("smcpd", env!("CARGO_PKG_VERSION"))
        .title("smcp reference server")
        .instructions(
            "Demo tools: echo, progress_echo, add, count (progress + cancellation). \
             Resource smcp://readme. Prompt greet.",
        )
        .security(security)
        .logging(true)
        .tool(
            tool("echo")
                .title("Echo")
                .description("Returns the text it is given.")
                .input_schema(text_schema())
                .annotations(json!({"readOnlyHint": true, "idempotentHint": true}))
                .handler(|call| async move {
                    let args: TextArgs = call.args()?;
                    Ok(CallToolResult::text(args.text))
                }),
        )
        .tool(
            tool("progress_echo")
                .title("Echo with progress")
                .description(
                    "Sends 10 progress notifications (when the request has a progressToken), \
                     then returns the text.",
                )
                .input_schema(text_schema())
                .handler(|call| async move {
                    let args: TextArgs = call.args()?;
                    for i in 1..=10 {
                        call.ctx
                            .progress(f64::from(i), Some(10.0), None)
                            .await
                            .map_err(|e| HandlerError::failed(e.to_string()))?;
                    }
                    Ok(CallToolResult::text(args.text))
                }),
        )
        .tool(
            tool("add")
                .title("Add")
                .description("Adds two numbers.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"]
                }))
                .annotations(json!({"readOnlyHint": true}))
                .handler(|call| async move {
                    let args: AddArgs = call.args()?;
                    let sum = args.a + args.b;
                    let mut result = CallToolResult::text(sum.to_string());
                    result.structured_content = Some(json!({"sum": sum}));
                    Ok(result)
                }),
        )
        .tool(
            tool("count")
                .title("Count slowly")
                .description(
                    "Counts to `to`, one step every `delay_ms` milliseconds, reporting progress \
                     and logging each step; stops as soon as the client goes away.",
                )
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "to": {"type": "integer", "minimum": 1, "maximum": 1000},
                        "delay_ms": {"type": "integer", "minimum": 0, "maximum": 10000}
                    },
                    "required": ["to"]
                }))
                .handler(|call| async move {
                    let args: CountArgs = call.args()?;
                    for i in 1..=args.to {
                        tokio::select! {
                            () = call.ctx.cancelled() => {
                                tracing::info!(step = i, "count cancelled by the client");
                                return Err(HandlerError::failed("cancelled"));
                            }
                            () = tokio::time::sleep(Duration::from_millis(args.delay_ms)) => {}
                        }
                        let _ = call
                            .ctx
                            .log(LogLevel::Debug, Some("count"), json!({"step": i}))
                            .await;
                        call.ctx
                            .progress(f64::from(i), Some(f64::from(args.to)), None)
                            .await
                            .map_err(|e| HandlerError::failed(e.to_string()))?;
                    }
                    Ok(CallToolResult::text(format!("counted to {}", args.to)))
                }),
        )
        .resource(
            resource("smcp://readme", "readme")
                .title("About smcpd")
                .mime_type("text/plain")
                .handler(|read| async move {
                    let mut contents = TextResourceContents::new(read.uri, README);
                    contents.mime_type = Some("text/plain".to_owned());
                    Ok(vec![contents.into()])
                }),
        )
        .prompt(
            prompt("greet")
                .title("Greeting")
                .description("A greeting for someone.")
                .argument("name", "Who to greet", true)
                .handler(|get| async move {
                    let name = get.arg("name").unwrap_or_default();
                    Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                        format!("Write a warm, one-line greeting for {name}."),
                    )]))
                }),
        )
        .completion(|request: smcp_server::CompletionRequest| async move {
            let names = ["Ada", "Alan", "Barbara", "Grace", "Linus"];
            let prefix = request.value.to_lowercase();
            Ok(Completion::values(
                names
                    .iter()
                    .filter(|n| n.to_lowercase().starts_with(&prefix))
                    .map(|n| (*n).to_owned())
                    .collect(),
            ))
        })
        .build()
}
