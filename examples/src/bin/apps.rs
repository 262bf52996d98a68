//! An MCP App (SEP-1865): a counter whose view a host renders in a sandboxed frame.
//!
//! ```sh
//! cargo run -p smcp-examples --bin apps -- --listen 127.0.0.1:3000
//! ```
//!
//! `count` adds to the counter and is linked to the view `ui://counter/view`: a host that
//! declared `io.modelcontextprotocol/ui` reads the view, renders it, and hands it the call's
//! result; the view's buttons call `count` and `reset` back through the host. `reset` is
//! for the view only (`visibility: ["app"]`): a host keeps it out of the model's tool list.
//! A host without MCP Apps gets the same tools with text results.
//!
//! The counter lives in this process: an example, not a pattern for several instances
//! (keep such state where every instance sees it).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::json;
use smcp_server::apps::{Apps, ToolUi, view};
use smcp_server::proto::ext::ui::{UiToolMeta, Visibility};
use smcp_server::proto::server::tools::CallToolResult;
use smcp_server::{HandlerError, ServeOptions, Server, tool};

/// The view's URI.
const VIEW: &str = "ui://counter/view";

/// A result with the value as text (for the model and text-only hosts) and as structured
/// content (for the view).
fn value(n: i64) -> CallToolResult {
    let mut result = CallToolResult::text(format!("the counter is {n}"));
    result.structured_content = Some(json!({ "value": n }));
    result
}

fn server() -> anyhow::Result<Server> {
    let counter = Arc::new(AtomicI64::new(0));
    let add = Arc::clone(&counter);
    // ANCHOR: server
    let server = Server::builder("counter", "1.0.0")
        .extension(Apps)
        .resource(
            view(VIEW, "Counter")
                .description("The counter, with buttons to add one and to reset it")
                .html(include_str!("../../data/counter.html"))
                .prefers_border(true)
                .build()?,
        )
        .tool(
            tool("count")
                .description("Adds `by` (default 1) to the counter and shows it")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"by": {"type": "integer", "minimum": 1, "maximum": 1000}}
                }))
                .output_schema(json!({
                    "type": "object",
                    "properties": {"value": {"type": "integer"}},
                    "required": ["value"]
                }))
                .ui(UiToolMeta::new(VIEW))
                .handler(move |call| {
                    let add = Arc::clone(&add);
                    async move {
                        let by = call
                            .arguments
                            .get("by")
                            .and_then(|v| v.as_i64())
                            .unwrap_or(1);
                        Ok::<_, HandlerError>(value(add.fetch_add(by, Ordering::SeqCst) + by))
                    }
                }),
        )
        .tool(
            tool("reset")
                .description("Sets the counter back to zero")
                .output_schema(json!({
                    "type": "object",
                    "properties": {"value": {"type": "integer"}},
                    "required": ["value"]
                }))
                .ui(UiToolMeta::new(VIEW).visibility([Visibility::App]))
                .handler(move |_call| {
                    let counter = Arc::clone(&counter);
                    async move {
                        counter.store(0, Ordering::SeqCst);
                        Ok::<_, HandlerError>(value(0))
                    }
                }),
        )
        .build()?;
    // ANCHOR_END: server
    Ok(server)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(smcp_examples::listen_addr()?).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    smcp_server::serve(
        listener,
        server()?.endpoint("/mcp"),
        ServeOptions::default(),
        smcp_examples::shutdown_signal(),
    )
    .await?;
    Ok(())
}
