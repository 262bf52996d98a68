//! `smcpd`: the smcp reference MCP server.
//!
//! ```text
//! smcpd                         # serves http://127.0.0.1:8931/mcp
//! smcpd --listen 127.0.0.1:0    # any free port (printed on start)
//! ```

use std::net::SocketAddr;

use anyhow::Context as _;
use clap::Parser;
use smcp_server::{SecurityPolicy, ServeOptions};

/// The smcp reference MCP server (protocol 2026-07-28, Streamable HTTP).
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Address to listen on. Keep it on loopback unless a proxy in front checks access.
    #[arg(long, env = "SMCPD_LISTEN", default_value = smcpd::DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// Extra host names accepted in the Host header (loopback names always are).
    #[arg(long = "allow-host", value_name = "HOST")]
    allow_hosts: Vec<String>,
    /// Extra browser origins accepted in the Origin header (loopback origins always are).
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
    /// Log filter (`RUST_LOG` syntax), e.g. `info` or `smcp_server=debug`.
    #[arg(long, env = "SMCPD_LOG", default_value = "info")]
    log: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_new(&args.log)?)
        .with_writer(std::io::stderr)
        .init();
    let mut security = SecurityPolicy::loopback();
    for host in &args.allow_hosts {
        security = security.allow_host(host);
    }
    for origin in &args.allow_origins {
        security = security.allow_origin(origin);
    }
    let server = smcpd::demo_server(security)?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    #[allow(clippy::print_stdout)]
    {
        println!("listening on http://{addr}/mcp");
    }
    tracing::info!(%addr, "smcpd ready");
    smcp_server::serve(
        listener,
        server.service(),
        ServeOptions::default(),
        shutdown_signal(),
    )
    .await?;
    tracing::info!("smcpd stopped");
    Ok(())
}

/// Completes on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
