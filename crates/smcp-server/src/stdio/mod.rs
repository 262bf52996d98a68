//! The stdio transport (`basic/transports/stdio.mdx`), and the same framing over any byte
//! stream: newline-delimited JSON-RPC, one message per line, on the protocol core.
//!
//! [`serve_stdio`] serves a [`Server`] on the process's standard input and output;
//! [`serve_stream`] on any reader and writer (a Unix socket, a TCP stream, a pipe), as the
//! spec's custom-transport note suggests. Requests run concurrently; their progress and log
//! notifications go out on the one channel before their response; `subscriptions/listen`
//! notifications carry their subscription id; `notifications/cancelled` stops a request (and
//! ends a subscription) without a response; multi round-trip requests work exactly as over
//! HTTP. There is no header layer: everything the HTTP pipeline reads from headers is in
//! `_meta`.
//!
//! With feature `legacy`, a connection whose first request is an `initialize` (no 2026-07-28
//! `_meta`) is served as a session of the earlier revisions for its life (`legacy.rs`,
//! `docs/sessions.md`); any other first request makes it a 2026-07-28 connection.
//!
//! Nothing but MCP messages is written to the output: log with `tracing` to stderr. Serving
//! ends at the end of input, when the output is closed, or on the `shutdown` future; then
//! listen subscriptions get their closing result and requests in flight have
//! [`StdioOptions::drain_timeout`] to finish, after which each gets an error response.

mod connection;
#[cfg(feature = "legacy")]
mod legacy;
mod lines;
mod link;
mod listen;
mod options;
mod process_io;
mod running;
mod writer;

use std::future::Future;

use tokio::io::{AsyncRead, AsyncWrite, BufReader};

use crate::core::server::Server;
pub use crate::drain::Drained;
pub use options::{NEWLINE, StdioOptions};
pub use process_io::{StdioInput, StdioOutput};

/// Serves `server` on standard input and output until input ends or `shutdown` completes.
/// Errors are I/O errors reading input (the end of input is not one).
///
/// On Unix, a standard stream that is a pipe or a Unix socket (what a host that spawns the
/// server gives it) is read and written through the runtime's reactor; a terminal or a file
/// goes through tokio's blocking pool ([`StdioInput`], [`StdioOutput`];
/// [`StdioOptions::blocking_io`] to always use the pool).
///
/// # Examples
///
/// A server launched by its client as a child process; log to stderr, never stdout:
///
/// ```no_run
/// use smcp_server::prelude::*;
/// use smcp_server::{StdioOptions, serve_stdio};
///
/// #[tokio::main]
/// async fn main() -> anyhow::Result<()> {
///     let server = Server::builder("demo", "1.0.0")
///         .tool(tool("ping").handler(|_call| async { Ok(CallToolResult::text("pong")) }))
///         .build()?;
///     let shutdown = async {
///         let _ = tokio::signal::ctrl_c().await;
///     };
///     serve_stdio(&server, shutdown, StdioOptions::default()).await?;
///     Ok(())
/// }
/// ```
pub async fn serve_stdio(
    server: &Server,
    shutdown: impl Future<Output = ()>,
    options: StdioOptions,
) -> std::io::Result<Drained> {
    let (input, output) = if options.blocking_io {
        (StdioInput::blocking(), StdioOutput::blocking())
    } else {
        (StdioInput::open(), StdioOutput::open())
    };
    tracing::debug!(
        nonblocking_input = input.is_nonblocking(),
        nonblocking_output = output.is_nonblocking(),
        "serving on stdio"
    );
    serve_stream(server, input, output, shutdown, options).await
}

/// Serves `server` on any byte stream with the stdio framing: messages read from `input`,
/// written to `output`.
///
/// # Examples
///
/// Over an in-memory pipe: one request in, its response out, then the end of input ends
/// serving.
///
/// ```
/// use smcp_server::prelude::*;
/// use smcp_server::{StdioOptions, serve_stream};
/// use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> anyhow::Result<()> {
/// let server = Server::builder("demo", "1.0.0")
///     .tool(tool("ping").handler(|_call| async { Ok(CallToolResult::text("pong")) }))
///     .build()?;
/// let (mut to_server, server_in) = tokio::io::duplex(64 * 1024);
/// let (server_out, from_server) = tokio::io::duplex(64 * 1024);
/// let serving = tokio::spawn(async move {
///     serve_stream(&server, server_in, server_out, std::future::pending(), StdioOptions::default()).await
/// });
///
/// let request = serde_json::json!({
///     "jsonrpc": "2.0", "id": 1, "method": "tools/call",
///     "params": {"name": "ping", "_meta": {
///         "io.modelcontextprotocol/protocolVersion": "2026-07-28",
///         "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
///         "io.modelcontextprotocol/clientCapabilities": {}
///     }}
/// });
/// to_server.write_all(format!("{request}\n").as_bytes()).await?;
/// drop(to_server); // end of input: serving drains and returns
///
/// let mut lines = BufReader::new(from_server).lines();
/// let reply: serde_json::Value = serde_json::from_str(&lines.next_line().await?.unwrap_or_default())?;
/// assert_eq!(reply["result"]["content"][0]["text"], "pong");
/// assert!(serving.await??.is_complete());
/// # Ok(()) }
/// ```
pub async fn serve_stream<R, W>(
    server: &Server,
    input: R,
    output: W,
    shutdown: impl Future<Output = ()>,
    options: StdioOptions,
) -> std::io::Result<Drained>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let max_line = options
        .max_line_bytes
        .unwrap_or(server.shared.limits.max_body_bytes);
    let input = lines::LineReader::new(BufReader::with_capacity(64 * 1024, input), max_line);
    connection::Connection::new(server.shared.clone(), options, max_line)
        .run(input, output, shutdown)
        .await
}

impl Server {
    /// Serves this server on standard input and output (see [`serve_stdio`]), until input
    /// ends or `shutdown` completes.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn run(server: smcp_server::Server) -> std::io::Result<()> {
    /// server.serve_stdio(std::future::pending()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn serve_stdio(
        &self,
        shutdown: impl Future<Output = ()>,
    ) -> std::io::Result<Drained> {
        serve_stdio(self, shutdown, StdioOptions::default()).await
    }
}
