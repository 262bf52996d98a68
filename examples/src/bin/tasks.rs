//! A long-running tool as a SEP-2663 task, both sides in one program: the server answers the
//! call with a task handle instead of keeping the request open, and the client polls it to
//! the end (and cancels a second one).
//!
//! ```sh
//! cargo run -p smcp-examples --bin tasks
//! cargo run -p smcp-examples --bin tasks -- --seconds 5
//! ```
//!
//! Whether a call becomes a task is the server's decision, per request: the tool must be
//! task-capable, the request must declare the extension (smcp-client does by default), and
//! the handler must still be running after the immediate window. More: `docs/tasks/`.

use std::time::Duration;

use serde_json::json;
use smcp_client::{Client, ToolCallOutcome};
use smcp_server::proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, ServeOptions, Server, tool};
use smcp_tasks::{TaskSupport, TaskToolExt as _, TasksExtension};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    smcp_examples::init_logging();
    let seconds: u64 = smcp_examples::option("--seconds", "SMCP_EXAMPLE_SECONDS", "2").parse()?;

    // ---- The server -------------------------------------------------------------------
    // ANCHOR: server
    let tasks = TasksExtension::builder()
        .ttl(Some(Duration::from_secs(600))) // how long a task and its result are kept
        .poll_interval(Duration::from_millis(200)) // suggested to clients
        .immediate_window(Duration::from_millis(100)) // finish within this: a plain answer
        .max_tasks(100)
        .build();
    let server = Server::builder("tasks", "1.0.0")
        .extension(tasks)
        .tool(
            tool("crunch")
                .description("Works for `seconds` seconds")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"seconds": {"type": "integer", "minimum": 1, "maximum": 60}},
                    "required": ["seconds"]
                }))
                // May run as a task (`TaskSupport::required()` would insist on it).
                .task_support(TaskSupport::optional())
                // An ordinary handler: tasks/cancel fires `call.ctx.cancelled()`.
                .handler(|call| async move {
                    let seconds = call.arguments.get("seconds").and_then(serde_json::Value::as_u64).unwrap_or(1);
                    for _ in 0..seconds {
                        tokio::select! {
                            () = call.ctx.cancelled() => return Err(HandlerError::failed("cancelled")),
                            () = tokio::time::sleep(Duration::from_secs(1)) => {}
                        }
                    }
                    Ok(CallToolResult::text(format!("crunched for {seconds} s")))
                }),
        )
        .build()?;
    // ANCHOR_END: server
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(smcp_server::serve(
        listener,
        server.endpoint("/mcp"),
        ServeOptions::default(),
        async move {
            let _ = stopped.await;
        },
    ));

    // ---- The client -------------------------------------------------------------------
    // ANCHOR: client
    let client = Client::builder(url).build()?;
    // `call_tool` would follow a task silently; `start` shows what happened.
    match client
        .tool_call("crunch")
        .arguments(json!({"seconds": seconds}))
        .start()
        .await?
    {
        ToolCallOutcome::Complete(result) => println!("answered inline: {}", result.text_content()),
        ToolCallOutcome::Task(task) => {
            println!("task {} created", task.id());
            // Polls tasks/get at the interval the server suggests, until a terminal status.
            let mut last = None;
            let result = task
                .wait_with(|t| {
                    if last.as_ref() != Some(&t.task.status) {
                        println!("status: {}", t.task.status);
                        last = Some(t.task.status);
                    }
                })
                .await?;
            println!("result: {}", result.text_content());
        }
    }

    // A task can be cancelled through its handle (or by dropping a `send()` future).
    if let ToolCallOutcome::Task(task) = client
        .tool_call("crunch")
        .arguments(json!({"seconds": 60}))
        .start()
        .await?
    {
        task.cancel().await?;
        match task.wait().await {
            Err(e) if e.kind() == smcp_client::ErrorKind::TaskCancelled => {
                println!("second task cancelled");
            }
            other => anyhow::bail!("expected a cancelled task, got {other:?}"),
        }
    }
    // ANCHOR_END: client

    let _ = stop.send(());
    serving.await??;
    Ok(())
}
