//! The command line: every subsystem's flags, flattened in the order `--help` shows them.

use clap::Parser;

use super::{auth, files, legacy, limits, observe, redis, serve, state, tasks, tls};

/// The smcp reference MCP server (protocol 2026-07-28, Streamable HTTP or stdio).
#[derive(Debug, Parser)]
#[command(version, about)]
pub(crate) struct Cli {
    /// The transport, its limits and deadlines.
    #[command(flatten)]
    pub(crate) serve: serve::ServeArgs,
    /// Metrics, traces and probes.
    #[command(flatten)]
    pub(crate) observe: observe::ObserveArgs,
    /// The multi round-trip `requestState` keys.
    #[command(flatten)]
    pub(crate) state: state::StateArgs,
    /// HTTPS.
    #[command(flatten)]
    pub(crate) tls: tls::TlsArgs,
    /// SEP-2631 file transfer.
    #[command(flatten)]
    pub(crate) files: files::FilesArgs,
    /// SEP-2663 tasks.
    #[command(flatten)]
    pub(crate) tasks: tasks::TasksArgs,
    /// Sessions of the earlier revisions (2025-11-25, 2025-06-18, 2025-03-26).
    #[command(flatten)]
    pub(crate) legacy: legacy::LegacyArgs,
    /// Rate limits per caller and per tool.
    #[command(flatten)]
    pub(crate) limits: limits::LimitArgs,
    /// OAuth 2.1 authorization.
    #[command(flatten)]
    pub(crate) auth: auth::AuthArgs,
    /// Several instances sharing state in Redis.
    #[command(flatten)]
    pub(crate) redis: redis::RedisArgs,
    /// Runtime worker threads; 0 = one per CPU this process may run on (1 → a
    /// single-threaded runtime).
    #[arg(long, env = "SMCPD_THREADS", default_value_t = 0)]
    pub(crate) threads: usize,
    /// Log filter (`RUST_LOG` syntax), e.g. `info` or `smcp_server=debug`.
    #[arg(long, env = "SMCPD_LOG", default_value = "info")]
    pub(crate) log: String,
}
