//! `smcpd`: the smcp reference MCP server.
//!
//! ```text
//! smcpd                         # serves http://127.0.0.1:8931/mcp
//! smcpd --listen 127.0.0.1:0    # any free port (printed on start)
//! smcpd --stdio                 # MCP on stdin/stdout, for a host that launches it
//! ```
//!
//! This file parses the flags, builds the runtime and picks the mode; `app` has one module
//! per subsystem (its flags and its wiring) and the server both modes build.

mod app;

use clap::Parser;

use crate::app::{auth, files, legacy, observe, redis, serve, state, tasks, tls};

/// The smcp reference MCP server (protocol 2026-07-28, Streamable HTTP or stdio).
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    /// The transport, its limits and deadlines.
    #[command(flatten)]
    serve: serve::ServeArgs,
    /// Metrics, traces and probes.
    #[command(flatten)]
    observe: observe::ObserveArgs,
    /// The multi round-trip `requestState` keys.
    #[command(flatten)]
    state: state::StateArgs,
    /// HTTPS.
    #[command(flatten)]
    tls: tls::TlsArgs,
    /// SEP-2631 file transfer.
    #[command(flatten)]
    files: files::FilesArgs,
    /// SEP-2663 tasks.
    #[command(flatten)]
    tasks: tasks::TasksArgs,
    /// Sessions of the earlier revisions (2025-11-25, 2025-06-18, 2025-03-26).
    #[command(flatten)]
    legacy: legacy::LegacyArgs,
    /// OAuth 2.1 authorization.
    #[command(flatten)]
    auth: auth::AuthArgs,
    /// Several instances sharing state in Redis.
    #[command(flatten)]
    redis: redis::RedisArgs,
    /// Runtime worker threads; 0 = one per CPU this process may run on (1 → a
    /// single-threaded runtime).
    #[arg(long, env = "SMCPD_THREADS", default_value_t = 0)]
    threads: usize,
    /// Log filter (`RUST_LOG` syntax), e.g. `info` or `smcp_server=debug`.
    #[arg(long, env = "SMCPD_LOG", default_value = "info")]
    log: String,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // One core: a current-thread runtime avoids the work-stealing scheduler's overhead.
    let threads = match cli.threads {
        0 => std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        n => n,
    };
    let runtime = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()?
    };
    runtime.block_on(run(cli))
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    if cli.state.generate_key {
        #[allow(clippy::print_stdout)]
        {
            println!("{}", smcpd::generate_key()?);
        }
        return Ok(());
    }
    let telemetry = cli.observe.init_logging(&cli.log)?;
    let outcome = serve_until_stopped(&cli).await;
    telemetry.shutdown().await;
    outcome
}

/// Serves until Ctrl-C or SIGTERM and the drain, over HTTP or on stdio.
async fn serve_until_stopped(cli: &Cli) -> anyhow::Result<()> {
    let base = app::Base::new(cli)?;
    if cli.serve.stdio {
        app::stdio::serve(cli, base).await
    } else {
        app::http::serve(cli, base).await
    }
}
