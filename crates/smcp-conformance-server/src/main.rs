//! `smcp-conformance-server --listen 127.0.0.1:PORT`: serves the fixture surface at `/mcp`.

use std::net::SocketAddr;

use anyhow::Context as _;
use clap::Parser;
use smcp_server::ServeOptions;

/// Serves the conformance fixtures.
#[derive(Debug, Parser)]
struct Args {
    /// Address to listen on (loopback by default; port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let server = smcp_conformance_server::server()?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    let addr = listener.local_addr()?;
    #[allow(clippy::print_stdout)]
    {
        println!("listening on http://{addr}/mcp");
    }
    let app = server.router("/mcp");
    smcp_server::serve(listener, app, ServeOptions::default(), async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    Ok(())
}
