//! The few lines every example program shares: where to listen, which server to talk to,
//! and when to stop. Nothing MCP-specific hides here; each program in `src/bin/` shows its
//! whole topic.
//!
//! The guide's pages (`docs/guide/`) are checked against these programs by
//! `tests/guide.rs`: every Rust block in the guide is a marked region of one of them.

use std::net::SocketAddr;

use anyhow::Context as _;

/// The value after `flag` on the command line (`--listen 127.0.0.1:0`), else the environment
/// variable `env`, else `default`.
pub fn option(flag: &str, env: &str, default: &str) -> String {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == flag {
            if let Some(value) = args.next() {
                return value;
            }
        } else if let Some(value) = arg.strip_prefix(flag).and_then(|v| v.strip_prefix('=')) {
            return value.to_owned();
        }
    }
    std::env::var(env).unwrap_or_else(|_| default.to_owned())
}

/// Where a server example listens: `--listen ADDR`, else `SMCP_EXAMPLE_LISTEN`, else
/// `127.0.0.1:3000`. Port 0 picks a free port; the programs print the address they got.
pub fn listen_addr() -> anyhow::Result<SocketAddr> {
    let text = option("--listen", "SMCP_EXAMPLE_LISTEN", "127.0.0.1:3000");
    text.parse().with_context(|| {
        format!("--listen expects an address such as 127.0.0.1:3000, not {text:?}")
    })
}

/// The MCP endpoint a client example talks to: `--url URL`, else `SMCP_URL`, else
/// `http://127.0.0.1:3000/mcp`.
pub fn server_url() -> String {
    option("--url", "SMCP_URL", "http://127.0.0.1:3000/mcp")
}

/// Completes on Ctrl-C (and on SIGTERM on Unix), to stop serving gracefully.
pub use smcp_server::shutdown_signal;

/// Logs to stderr, filtered by `RUST_LOG` (default `info`).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .try_init();
}
