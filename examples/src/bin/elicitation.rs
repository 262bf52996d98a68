//! Asking the user in the middle of a tool call (MRTR elicitation, `input.ask`), and
//! telling subscribers that something changed.
//!
//! ```sh
//! cargo run -p smcp-examples --bin elicitation -- --listen 127.0.0.1:3000
//! cargo run -p smcp-examples --bin client -- --url http://127.0.0.1:3000/mcp   # answers on the terminal
//! ```
//!
//! In 2026-07-28 a server never sends a request to the client. A handler that needs an answer
//! calls `call.input.ask(..)?`: the call ends with an `InputRequiredResult`, the client asks
//! its user and sends the same call again with the answers, and the handler runs again from
//! the top, this time getting the answers. So: ask first, act after the last question.

use std::sync::{Arc, Mutex};

use serde_json::json;
use smcp_server::ServeOptions;
use smcp_server::prelude::*;

/// The resource the tool changes.
const TITLE_URI: &str = "notes://title";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    smcp_examples::init_logging();
    let title = Arc::new(Mutex::new("Untitled".to_owned()));
    let read_title = title.clone();
    let server = Server::builder("elicitation", "1.0.0")
        // Listeners may subscribe to resource URIs (subscriptions/listen).
        .resources_subscribe(true)
        .resource(
            resource(TITLE_URI, "title")
                .mime_type("text/plain")
                .handler(move |read| {
                    let text = read_title.lock().map(|t| t.clone()).unwrap_or_default();
                    async move { Ok(vec![TextResourceContents::new(read.uri, text).into()]) }
                }),
        )
        .tool(
            tool("retitle")
                .description("Asks the user for a new title, then sets it")
                // A destructive tool gets single-use requestState: a retry cannot replay an
                // earlier confirmation.
                .annotations(ToolAnnotations::new().destructive(true))
                // ANCHOR: ask
                .handler(move |call| {
                    let title = title.clone();
                    async move {
                        // The form: a restricted JSON Schema (a flat object of primitives).
                        let answer = call.input.ask(mrtr::elicit_form(
                            "new_title",
                            "What should the new title be?",
                            json!({
                                "type": "object",
                                "properties": {
                                    "title": {"type": "string", "title": "Title", "maxLength": 80},
                                    "confirm": {"type": "boolean", "title": "Really change it?"}
                                },
                                "required": ["title", "confirm"]
                            }),
                        ))?;
                        // Only past the last `ask` does the tool change anything. `get` reads
                        // one answer as a Rust type (`None` when absent or of another type);
                        // `mrtr::elicit_typed` asks with a struct instead (see `typed_tool`).
                        let confirmed = answer.get::<bool>("confirm") == Some(true);
                        let new_title = answer.get::<String>("title");
                        let (true, true, Some(new_title)) =
                            (answer.is_accepted(), confirmed, new_title)
                        else {
                            return Ok(CallToolResult::text("title unchanged"));
                        };
                        if let Ok(mut t) = title.lock() {
                            t.clone_from(&new_title);
                        }
                        // Every listen stream subscribed to this URI gets
                        // notifications/resources/updated.
                        if let Some(server) = call.ctx.server() {
                            server.notify_resource_updated(TITLE_URI);
                        }
                        Ok(CallToolResult::text(format!("title is now {new_title:?}")))
                    }
                }),
            // ANCHOR_END: ask
        )
        .build()?;
    let listener = tokio::net::TcpListener::bind(smcp_examples::listen_addr()?).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    smcp_server::serve(
        listener,
        server.endpoint("/mcp"),
        ServeOptions::default(),
        smcp_examples::shutdown_signal(),
    )
    .await?;
    Ok(())
}
