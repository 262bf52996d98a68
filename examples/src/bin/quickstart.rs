//! The README's quick start, the whole program: one tool over Streamable HTTP.
//!
//! `cargo run -p smcp-examples --bin quickstart` listens on 127.0.0.1:3000 (`LISTEN=ADDR` for
//! another address); `cargo run -p smcp -- --url http://127.0.0.1:3000/mcp call greet --arg name=Ada`.

// ANCHOR: readme
use smcp_server::prelude::*;
use smcp_server::{serve, shutdown_signal};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let server = Server::builder("hello", "1.0.0")
        .tool(
            tool("greet")
                .description("Says hello to someone")
                .input_schema(serde_json::json!({
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"]
                }))
                .handler(|call| async move {
                    let name = call.str_arg("name").unwrap_or_default();
                    Ok(CallToolResult::text(format!("Hello, {name}!")))
                }),
        )
        .build()?;
    let addr = std::env::var("LISTEN").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    let endpoint = server.endpoint("/mcp");
    serve(listener, endpoint, Default::default(), shutdown_signal()).await?;
    Ok(())
}
// ANCHOR_END: readme
