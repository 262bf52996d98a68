//! The smallest useful MCP server: one tool over Streamable HTTP.
//!
//! ```sh
//! cargo run -p smcp-examples --bin hello_tool                          # http://127.0.0.1:3000/mcp
//! cargo run -p smcp-examples --bin hello_tool -- --listen 127.0.0.1:0  # any free port
//! cargo run -p smcp-examples --bin hello_tool -- --stdio                # MCP on stdin/stdout
//! ```
//!
//! Then, in another terminal: `cargo run -p smcp -- --url http://127.0.0.1:3000/mcp call greet --arg name=Ada`,
//! or over stdio: `cargo run -p smcp -- --stdio call greet --arg name=Ada -- target/debug/hello_tool --stdio`.

use serde::Deserialize;
use serde_json::json;
use smcp_server::proto::server::tools::{CallToolResult, ToolAnnotations};
use smcp_server::{HandlerError, ServeOptions, Server, tool};

// ANCHOR: args
/// The tool's arguments, as the handler reads them.
#[derive(Debug, Deserialize)]
struct GreetArgs {
    name: String,
}
// ANCHOR_END: args

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    smcp_examples::init_logging();
    // ANCHOR: server
    let server = Server::builder("hello", "1.0.0")
        .tool(
            tool("greet")
                .description("Says hello to someone")
                // The JSON Schema clients see in tools/list; every call is validated against
                // it before the handler runs, so the handler only sees well-formed arguments.
                .input_schema(json!({
                    "type": "object",
                    "properties": {"name": {"type": "string", "description": "Who to greet"}},
                    "required": ["name"]
                }))
                .annotations(ToolAnnotations::new().read_only(true))
                .handler(|call| async move {
                    let args: GreetArgs = call.args()?;
                    Ok::<_, HandlerError>(CallToolResult::text(format!("Hello, {}!", args.name)))
                }),
        )
        .build()?;
    // ANCHOR_END: server

    // ANCHOR: stdio
    if std::env::args().any(|arg| arg == "--stdio") {
        // For a host that launches the server as a child process: one JSON-RPC message per
        // line on stdin and stdout (logs go to stderr). Serving ends when stdin closes.
        server.serve_stdio(smcp_examples::shutdown_signal()).await?;
        return Ok(());
    }
    // ANCHOR_END: stdio

    // ANCHOR: serve
    let listener = tokio::net::TcpListener::bind(smcp_examples::listen_addr()?).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    // `endpoint("/mcp")` is the MCP endpoint alone (other paths get 404); `serve` is the
    // accept loop with bounded heads, deadlines and a drain on shutdown.
    smcp_server::serve(
        listener,
        server.endpoint("/mcp"),
        ServeOptions::default(),
        smcp_examples::shutdown_signal(),
    )
    .await?;
    // ANCHOR_END: serve
    Ok(())
}
