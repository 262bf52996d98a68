//! The options every command takes (clap's global flags), apart from the command itself: a
//! leaf, so the commands, the connection and the error report read them without naming the
//! command line (`cli`) that holds the commands.

use std::ffi::OsString;
use std::path::PathBuf;

/// Where `smcpd` listens by default.
pub(crate) const DEFAULT_URL: &str = "http://127.0.0.1:8931/mcp";

// Flattened into `Cli`; no doc comment, which would become help text. `group(skip)`: these
// flags form no argument group (the derive would add one named after the struct).
#[derive(Debug, clap::Args)]
#[group(skip)]
pub(crate) struct Globals {
    /// The server's MCP endpoint (ignored with --stdio).
    #[arg(long, env = "SMCP_URL", default_value = DEFAULT_URL, global = true)]
    pub(crate) url: String,
    /// Launch the server as a child process and speak MCP over its stdin/stdout; the server's
    /// command line goes last, after `--`.
    #[arg(long, global = true)]
    pub(crate) stdio: bool,
    /// An environment variable for the stdio server, `NAME=VALUE` (repeatable).
    #[arg(long = "env", value_name = "K=V", global = true)]
    pub(crate) envs: Vec<String>,
    /// Discard the stdio server's stderr (by default it goes to smcp's stderr).
    #[arg(long, global = true)]
    pub(crate) quiet_server: bool,
    /// The stdio server's command line (everything after `--`; not parsed by clap).
    #[arg(skip)]
    pub(crate) server_command: Vec<OsString>,
    /// Extra HTTP header for every request, `Name: value` (repeatable).
    #[arg(long = "header", short = 'H', value_name = "K:V", global = true)]
    pub(crate) headers: Vec<String>,
    /// Print machine-readable JSON instead of tables and text.
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// Never prompt; a server that needs input then fails with a clear error.
    #[arg(long, global = true)]
    pub(crate) non_interactive: bool,
    /// Timeout of each call, in seconds (0 = none). For a call the server runs as a task, it
    /// bounds each request (the call, each poll); the task itself is bounded by its TTL.
    #[arg(long, default_value_t = 60, global = true)]
    pub(crate) timeout: u64,
    /// Timeout for establishing the connection (TCP and TLS), in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..), global = true)]
    pub(crate) connect_timeout: u64,
    /// Resend a request that failed in transit up to N times, where that is safe: one that
    /// never reached the server, or one without side effects (lists, reads, a call of a tool
    /// listed read-only or idempotent). For a server behind a load balancer.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=10), global = true)]
    pub(crate) retries: u32,
    /// Do not keep the server's cacheable lists between runs (by default `smcp call` reuses
    /// the tool list for as long as the server's `ttlMs` allows; see SMCP_CACHE_DIR).
    #[arg(long, global = true)]
    pub(crate) no_cache: bool,
    /// Answer the server's sampling requests (sampling/createMessage) with this shell
    /// command: the request's params as JSON on its stdin, its stdout the model's answer
    /// (plain text, or a CreateMessageResult object). Bounded by --timeout and 1 MiB.
    #[arg(long, value_name = "CMD", env = "SMCP_SAMPLING_CMD", global = true)]
    pub(crate) sampling_cmd: Option<String>,
    /// Write images, audio and blobs to this directory instead of summarising them.
    #[arg(long, value_name = "DIR", global = true)]
    pub(crate) save: Option<PathBuf>,
    /// HTTP version for the server and its file descriptors: `auto` (HTTP/2 over https when
    /// the server offers it, else HTTP/1.1), `1.1`, or `2` (h2c with prior knowledge on http).
    #[arg(
        long,
        value_name = "auto|1.1|2",
        default_value = "auto",
        env = "SMCP_HTTP_VERSION",
        global = true
    )]
    pub(crate) http_version: smcp_client::HttpVersion,
    /// Trust this CA certificate (PEM) for the server and its file descriptors.
    #[arg(long, value_name = "PEM", env = "SMCP_CA_CERT", global = true)]
    pub(crate) ca_cert: Option<PathBuf>,
    /// Files up to this many bytes go inline as data: URIs when the field allows it.
    #[arg(long, default_value_t = 256 * 1024, global = true)]
    pub(crate) inline_threshold: u64,
    /// Development only: accept plain-http file descriptors on 127.0.0.1/[::1]/localhost.
    #[arg(long, global = true)]
    pub(crate) insecure_loopback_files: bool,
    /// Do not declare the tasks extension (SEP-2663): the server must answer calls inline.
    #[arg(long, global = true)]
    pub(crate) no_tasks: bool,
    /// Speak this MCP version instead of negotiating: 2026-07-28 (no fallback), or an older
    /// one (2025-11-25, 2025-06-18, 2025-03-26: a stateful session; 2024-11-05: HTTP+SSE).
    /// By default 2026-07-28 is tried first and an older server is detected.
    #[arg(
        long,
        value_name = "VERSION",
        env = "SMCP_PROTOCOL_VERSION",
        global = true
    )]
    pub(crate) protocol_version: Option<String>,
    /// Log filter for smcp's own diagnostics on stderr (e.g. `debug`; `RUST_LOG` syntax).
    /// Coloured only on a terminal, and never with NO_COLOR set.
    #[arg(long, env = "SMCP_LOG", default_value = "warn", global = true)]
    pub(crate) log: String,
    /// A bearer token you already have, sent as `Authorization: Bearer …` (instead of the
    /// tokens `smcp login` stored).
    #[arg(long, env = "SMCP_TOKEN", hide_env_values = true, global = true)]
    pub(crate) token: Option<String>,
    /// OAuth: the client's registration, grant and keys.
    #[command(flatten)]
    pub(crate) auth: crate::auth_flags::AuthFlags,
}
