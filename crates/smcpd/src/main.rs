//! `smcpd`: the smcp reference MCP server.
//!
//! ```text
//! smcpd                         # serves http://127.0.0.1:8931/mcp
//! smcpd --listen 127.0.0.1:0    # any free port (printed on start)
//! smcpd --stdio                 # MCP on stdin/stdout, for a host that launches it
//! smcpd gateway --config gw.toml  # one endpoint in front of the servers gw.toml names
//! ```
//!
//! This file parses the flags, builds the runtime and picks the mode; `app` has one module
//! per subsystem (its flags and its wiring) and the server both modes build.

mod app;

use clap::Parser;

use crate::app::cli::{Cli, Invocation};

/// With feature `mimalloc`, every allocation of the server goes through mimalloc.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    let cli = Invocation::parse().into_cli();
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
