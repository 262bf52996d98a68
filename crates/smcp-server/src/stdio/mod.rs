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
mod listen;
mod running;
mod writer;

use std::future::Future;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, BufReader};

use crate::core::context::{Framing, Principal};
use crate::core::server::Server;
pub use crate::drain::Drained;

/// Newline-delimited JSON: nothing before a message, a newline after it.
pub const NEWLINE: Framing = Framing {
    prefix: b"",
    suffix: b"\n",
};

/// Limits and settings of a stream connection.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use smcp_server::{Principal, StdioOptions};
///
/// let options = StdioOptions::default()
///     .max_in_flight(32)
///     .drain_timeout(Duration::from_secs(2))
///     .principal(Principal("local-user".into()));
/// # let _ = options;
/// ```
#[derive(Debug, Clone)]
pub struct StdioOptions {
    /// Longest line read, in bytes; a longer one is answered with −32600 and skipped.
    /// Default: the server's [`crate::Limits::max_body_bytes`].
    pub max_line_bytes: Option<usize>,
    /// Requests running at once; one more is answered with [`crate::SERVER_BUSY`] at once (the reader
    /// never stops, so that `notifications/cancelled` always gets through). Default 256.
    pub max_in_flight: usize,
    /// Open `subscriptions/listen` streams on this connection. Default 16.
    pub max_subscriptions: usize,
    /// Messages tasks may queue for writing; a full queue makes handlers wait. Default 1024.
    pub output_buffer: usize,
    /// How long requests in flight may take to finish once serving ends. Default 10 s.
    pub drain_timeout: Duration,
    /// The caller every request of this connection acts for (over stdio, typically the local
    /// user who launched the server); `None` by default.
    pub principal: Option<Principal>,
}

impl Default for StdioOptions {
    fn default() -> Self {
        Self {
            max_line_bytes: None,
            max_in_flight: 256,
            max_subscriptions: 16,
            output_buffer: 1024,
            drain_timeout: Duration::from_secs(10),
            principal: None,
        }
    }
}

impl StdioOptions {
    /// The longest line read.
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = Some(bytes);
        self
    }

    /// Requests running at once.
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.max_in_flight = requests;
        self
    }

    /// Open `subscriptions/listen` streams.
    pub fn max_subscriptions(mut self, subscriptions: usize) -> Self {
        self.max_subscriptions = subscriptions;
        self
    }

    /// How long requests in flight may take to finish once serving ends.
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// The caller every request acts for.
    pub fn principal(mut self, principal: Principal) -> Self {
        self.principal = Some(principal);
        self
    }
}

/// Serves `server` on standard input and output until input ends or `shutdown` completes.
/// Errors are I/O errors reading input (the end of input is not one).
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
    serve_stream(
        server,
        tokio::io::stdin(),
        tokio::io::stdout(),
        shutdown,
        options,
    )
    .await
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
