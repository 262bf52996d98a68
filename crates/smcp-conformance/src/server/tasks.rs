//! The SEP-2663 tasks extension's fixtures (the suite's `tasks-*` scenarios).

use std::time::Duration;

use serde_json::{Value, json};
use smcp_proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, ServerBuilder, mrtr, tool};

use super::common::ok;

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
    with_tasks_in(builder, smcp_tasks::TasksExtension::new())
}

/// [`with_tasks`] with the tasks extension `tasks` (for example one whose tasks live in a
/// store the instances of a cluster share).
pub fn with_tasks_in(builder: ServerBuilder, tasks: smcp_tasks::TasksExtension) -> ServerBuilder {
    use smcp_tasks::{TaskSupport, TaskToolExt};
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
        .extension(tasks)
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
