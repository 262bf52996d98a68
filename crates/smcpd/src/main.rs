//! `smcpd`: the smcp reference MCP server.
//!
//! ```text
//! smcpd                         # serves http://127.0.0.1:8931/mcp
//! smcpd --listen 127.0.0.1:0    # any free port (printed on start)
//! ```

use std::net::SocketAddr;

use anyhow::Context as _;
use clap::Parser;
use std::time::Duration;

use smcp_server::{ListenConfig, SecurityPolicy, ServeOptions};

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
    /// Seconds of silence on a `subscriptions/listen` stream before a keep-alive comment.
    #[arg(long, value_name = "SECS", default_value_t = 15)]
    keep_alive_secs: u64,
    /// Most `subscriptions/listen` streams open at once.
    #[arg(long, value_name = "N", default_value_t = ListenConfig::default().max_streams)]
    max_listen_streams: usize,
    /// Most `subscriptions/listen` streams open at once from one client IP address.
    #[arg(long, value_name = "N", default_value_t = ListenConfig::default().max_streams_per_address)]
    max_listen_per_address: usize,
    /// Seconds between updates of the `smcp://clock` resource (0 = never).
    #[arg(long, value_name = "SECS", default_value_t = 1)]
    clock_secs: u64,
    /// Most connections served at once.
    #[arg(long, value_name = "N", default_value_t = ServeOptions::default().max_connections)]
    max_connections: usize,
    /// A key sealing multi round-trip `requestState`, as `ID:BASE64` (32 bytes). Repeat to
    /// rotate: the first seals, all open. Instances that share keys accept each other's
    /// retries. Without one, a random per-process key is used.
    #[arg(
        long = "state-key",
        env = "SMCPD_STATE_KEYS",
        value_delimiter = ',',
        value_name = "ID:BASE64"
    )]
    state_keys: Vec<String>,
    /// How long a `requestState` stays valid, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    state_ttl_secs: u64,
    /// Print a freshly generated `--state-key` value and exit.
    #[arg(long)]
    generate_state_key: bool,
    /// Runtime worker threads; 0 = one per CPU this process may run on (1 → a
    /// single-threaded runtime).
    #[arg(long, env = "SMCPD_THREADS", default_value_t = 0)]
    threads: usize,
    /// Log filter (`RUST_LOG` syntax), e.g. `info` or `smcp_server=debug`.
    #[arg(long, env = "SMCPD_LOG", default_value = "info")]
    log: String,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // One core: a current-thread runtime avoids the work-stealing scheduler's overhead.
    let threads = match args.threads {
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
    runtime.block_on(run(args))
}

async fn run(args: Args) -> anyhow::Result<()> {
    if args.generate_state_key {
        #[allow(clippy::print_stdout)]
        {
            println!("{}", smcpd::generate_state_key()?);
        }
        return Ok(());
    }
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
    let listen = ListenConfig {
        keep_alive: Duration::from_secs(args.keep_alive_secs.max(1)),
        max_streams: args.max_listen_streams,
        max_streams_per_address: args.max_listen_per_address,
        ..ListenConfig::default()
    };
    let mrtr = smcpd::mrtr_config(&args.state_keys, Duration::from_secs(args.state_ttl_secs))?;
    let server = smcpd::demo_server_with(smcpd::DemoConfig {
        security,
        listen,
        mrtr,
    })?;
    if args.clock_secs > 0 {
        tokio::spawn(smcpd::run_clock(
            server.clone(),
            Duration::from_secs(args.clock_secs),
        ));
    }
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
        ServeOptions {
            max_connections: args.max_connections,
            ..ServeOptions::default()
        },
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
