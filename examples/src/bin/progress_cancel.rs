//! Progress notifications and cancellation: a tool that works in steps, reports each one,
//! and stops as soon as the client goes away.
//!
//! ```sh
//! cargo run -p smcp-examples --bin progress_cancel -- --listen 127.0.0.1:3000
//! cargo run -p smcp -- call countdown --arg from=5                  # a progress bar
//! ```
//!
//! Press Ctrl-C in the client while it runs: the server logs that the countdown stopped.
//! Over HTTP a client cancels by closing the response stream; over stdio by sending
//! `notifications/cancelled`. Either way the handler sees `call.ctx.cancelled()`.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use smcp_server::ServeOptions;
use smcp_server::prelude::*;

#[derive(Debug, Deserialize)]
struct CountdownArgs {
    from: u32,
    #[serde(default = "default_step_ms")]
    step_ms: u64,
}

fn default_step_ms() -> u64 {
    500
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    smcp_examples::init_logging();
    let server = Server::builder("progress", "1.0.0")
        // Advertise logging so `ctx.log` reaches requests that ask for logs.
        .logging(true)
        .tool(
            tool("countdown")
                .description("Counts down to zero, one step every step_ms milliseconds")
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "from": {"type": "integer", "minimum": 1, "maximum": 100},
                        "step_ms": {"type": "integer", "minimum": 0, "maximum": 5000}
                    },
                    "required": ["from"]
                }))
                // ANCHOR: handler
                .handler(|call| async move {
                    let args: CountdownArgs = call.args()?;
                    for done in 1..=args.from {
                        // Wait for the next step, or stop when the client cancels.
                        tokio::select! {
                            () = call.ctx.cancelled() => {
                                tracing::info!(done, "countdown cancelled by the client");
                                return Err(HandlerError::failed("cancelled"));
                            }
                            () = tokio::time::sleep(Duration::from_millis(args.step_ms)) => {}
                        }
                        // Sent only when the request carried a progressToken; the values must
                        // increase. The first notification switches the response to SSE. `?`
                        // ends the call when the client has gone away.
                        let left = args.from - done;
                        let message = format!("{left} left");
                        call.ctx
                            .progress(f64::from(done), Some(f64::from(args.from)), Some(&message))
                            .await?;
                        // Sent only to requests that asked for logs at this level or below.
                        let _ = call
                            .ctx
                            .log(LoggingLevel::Info, Some("countdown"), json!({"left": left}))
                            .await;
                    }
                    Ok(CallToolResult::text("liftoff"))
                }),
            // ANCHOR_END: handler
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
