//! `smcpd`: the smcp reference MCP server.
//!
//! ```text
//! smcpd                         # serves http://127.0.0.1:8931/mcp
//! smcpd --listen 127.0.0.1:0    # any free port (printed on start)
//! smcpd --stdio                 # MCP on stdin/stdout, for a host that launches it
//! ```

#[cfg(feature = "auth")]
mod auth;

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Parser;
use std::time::Duration;

use smcp_server::{ListenConfig, SecurityPolicy, ServeOptions};

/// The smcp reference MCP server (protocol 2026-07-28, Streamable HTTP or stdio).
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Serve MCP on standard input and output (the stdio transport) instead of HTTP; logs go
    /// to stderr. With TLS (or --insecure-http-files) the SEP-2631 data plane is also served
    /// over HTTP on --listen; without, file arguments are inline (`data:`) only.
    #[arg(long)]
    stdio: bool,
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
    /// Deadlines for slow or stalled clients.
    #[command(flatten)]
    deadlines: Deadlines,
    /// Serve Prometheus metrics at `GET /metrics`, and the readiness and liveness probes, on a
    /// listener of its own at this address (off by default). No Host check and no
    /// authentication there: keep it on a network only the operator reaches. With it, SIGTERM
    /// makes readiness answer 503 while requests drain.
    #[cfg(feature = "metrics")]
    #[arg(long, env = "SMCPD_METRICS_LISTEN", value_name = "ADDR")]
    metrics_listen: Option<SocketAddr>,
    /// Export traces (OTLP over HTTP, protobuf) to the collector at this base URL: spans go to
    /// `URL/v1/traces`. Without it, the standard `OTEL_EXPORTER_OTLP_ENDPOINT` (or
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) turns the exporter on. A request's trace context
    /// (`traceparent` in `params._meta`, else the header) is the parent of its spans.
    #[cfg(feature = "otel")]
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,
    /// Path of the readiness probe (200 when every health check passes, 503 with the failing
    /// ones or while draining), on --listen and on --metrics-listen.
    #[arg(long, value_name = "PATH", default_value = "/readyz", value_parser = smcpd::probe_path)]
    readyz_path: String,
    /// Path of the liveness probe (200 while the process answers), on --listen and on
    /// --metrics-listen.
    #[arg(long, value_name = "PATH", default_value = "/livez", value_parser = smcpd::probe_path)]
    livez_path: String,
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
    /// Print a freshly generated key (for --state-key or --files-key) and exit.
    #[arg(long, alias = "generate-state-key")]
    generate_key: bool,
    /// PEM certificate chain: serve HTTPS (and issue https:// file descriptors).
    #[arg(long, requires = "tls_key", env = "SMCPD_TLS_CERT")]
    tls_cert: Option<PathBuf>,
    /// PEM private key for --tls-cert.
    #[arg(long, requires = "tls_cert", env = "SMCPD_TLS_KEY")]
    tls_key: Option<PathBuf>,
    /// Development: generate a throwaway CA and a certificate for 127.0.0.1/localhost into
    /// DIR (ca.pem, cert.pem, key.pem) and serve HTTPS with it. Clients trust DIR/ca.pem.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["tls_cert", "tls_key"])]
    tls_self_signed: Option<PathBuf>,
    /// SEP-2631 file transfer.
    #[cfg(feature = "files")]
    #[command(flatten)]
    files: FilesFlags,
    /// SEP-2663 tasks.
    #[cfg(feature = "tasks")]
    #[command(flatten)]
    tasks: TasksFlags,
    /// Sessions of the earlier revisions (2025-11-25, 2025-06-18, 2025-03-26).
    #[cfg(feature = "legacy")]
    #[command(flatten)]
    legacy: LegacyFlags,
    /// OAuth 2.1 authorization.
    #[cfg(feature = "auth")]
    #[command(flatten)]
    auth: auth::AuthFlags,
    /// Several instances sharing state in Redis.
    #[cfg(feature = "redis")]
    #[command(flatten)]
    redis: RedisFlags,
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
    if args.generate_key {
        #[allow(clippy::print_stdout)]
        {
            println!("{}", smcpd::generate_key()?);
        }
        return Ok(());
    }
    // Colour only when stderr is a terminal (never in a redirected log), and never with
    // NO_COLOR set (https://no-color.org).
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    #[cfg(feature = "otel")]
    let otel = if smcpd::otel::configured(args.otlp_endpoint.as_deref()) {
        Some(smcpd::otel::provider(args.otlp_endpoint.as_deref())?)
    } else {
        None
    };
    #[cfg(feature = "otel")]
    if let Some(provider) = &otel {
        use tracing_subscriber::Layer as _;
        use tracing_subscriber::layer::SubscriberExt as _;
        use tracing_subscriber::util::SubscriberInitExt as _;
        tracing_subscriber::registry()
            .with(
                tracing_subscriber::fmt::layer()
                    .with_ansi(ansi)
                    .with_writer(std::io::stderr)
                    .with_filter(tracing_subscriber::EnvFilter::try_new(&args.log)?),
            )
            .with(smcpd::otel::layer(provider))
            .init();
    }
    #[cfg(feature = "otel")]
    let plain_logs = otel.is_none();
    #[cfg(not(feature = "otel"))]
    let plain_logs = true;
    if plain_logs {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::try_new(&args.log)?)
            .with_ansi(ansi)
            .with_writer(std::io::stderr)
            .init();
    }
    let outcome = serve_until_stopped(args).await;
    #[cfg(feature = "otel")]
    if let Some(provider) = otel {
        // Flushes what is batched; exports run on this runtime, so not on a worker thread.
        match tokio::task::spawn_blocking(move || provider.shutdown()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "trace export at exit failed"),
            Err(e) => tracing::warn!(error = %e, "trace export at exit failed"),
        }
    }
    outcome
}

/// Serves until Ctrl-C or SIGTERM and the drain.
async fn serve_until_stopped(args: Args) -> anyhow::Result<()> {
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
    let tls_config = match (&args.tls_self_signed, &args.tls_cert, &args.tls_key) {
        (Some(dir), _, _) => {
            let certs = smcp_server::http::tls::write_dev_certificates(
                dir,
                &["127.0.0.1", "localhost", "::1"],
            )?;
            tracing::info!(ca = %certs.ca_cert.display(), "generated a development CA");
            Some(smcp_server::http::tls::config_from_files(
                &certs.cert,
                &certs.key,
            )?)
        }
        (None, Some(cert), Some(key)) => {
            Some(smcp_server::http::tls::config_from_files(cert, key)?)
        }
        _ => None,
    };
    if args.stdio {
        let serve_options = ServeOptions {
            tls: tls_config,
            ..args.deadlines.serve_options(args.max_connections)
        };
        return run_stdio(&args, security, listen, mrtr, serve_options).await;
    }
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    let scheme = if tls_config.is_some() {
        "https"
    } else {
        "http"
    };
    #[cfg(feature = "auth")]
    let auth_on = args.auth.enabled();
    #[cfg(not(feature = "auth"))]
    let auth_on = false;
    smcpd::warn_if_exposed(addr, auth_on);
    #[cfg(feature = "files")]
    let files = file_service(
        &args.files,
        tls_config.is_some(),
        &format!("{scheme}://{addr}"),
    )
    .await?;
    #[cfg(feature = "redis")]
    let cluster = args.redis.cluster()?;
    let observed = Observed::new(
        &args,
        #[cfg(feature = "redis")]
        cluster.as_ref(),
        #[cfg(feature = "files")]
        files.as_ref(),
    );
    let server = smcpd::demo_server_with(smcpd::DemoConfig {
        security,
        listen,
        mrtr,
        #[cfg(feature = "files")]
        files: files.clone(),
        #[cfg(feature = "files")]
        sep2631_fixtures: args.files.sep2631_fixtures,
        #[cfg(feature = "files")]
        files_inline: false,
        #[cfg(feature = "tasks")]
        tasks: args.tasks.extension()?,
        #[cfg(feature = "legacy")]
        legacy: args.legacy.config(),
        #[cfg(feature = "redis")]
        cluster: cluster.clone(),
        metrics: observed.metrics(),
        health_checks: observed.health_checks.clone(),
    })?;
    #[cfg(feature = "redis")]
    if let Some(cluster) = &cluster {
        cluster.attach_catalog(&server).await?;
    }
    if args.clock_secs > 0 {
        tokio::spawn(smcpd::run_clock(
            server.clone(),
            Duration::from_secs(args.clock_secs),
        ));
    }
    let ops = observed.start(&args, &server).await?;
    // With an operations listener, readiness turns 503 as soon as the drain starts.
    let draining = ops.as_ref().map(|_| server.clone());
    let shutdown = async move {
        smcp_server::shutdown_signal().await;
        if let Some(server) = draining {
            server.shutdown();
        }
    };
    let url = format!("{scheme}://{addr}/mcp");
    #[cfg(feature = "auth")]
    let auth = {
        let resource = args.auth.public_url.clone().unwrap_or_else(|| url.clone());
        args.auth.layer(&resource).await?
    };
    #[allow(clippy::print_stdout)]
    {
        println!("listening on {url}");
    }
    // The ready line: where it listens and what to run next.
    let ca = match &args.tls_self_signed {
        Some(dir) => format!(" --ca-cert {}", dir.join("ca.pem").display()),
        None if tls_config.is_some() => " --ca-cert CA.pem".to_owned(),
        None => String::new(),
    };
    tracing::info!("smcpd ready on {url}; try: smcp --url {url}{ca} tools");
    #[cfg(feature = "files")]
    if files.is_none() && !args.files.no_files {
        tracing::info!(
            "file transfer (SEP-2631) is off without TLS: serve TLS (--tls-cert/--tls-key or \
             --tls-self-signed DIR) or pass --insecure-http-files on loopback"
        );
    }
    let endpoint = server
        .endpoint("/mcp")
        .readiness(&args.readyz_path)
        .liveness(&args.livez_path);
    // The SEP-2631 data plane (uploads and downloads) on the other paths.
    #[cfg(feature = "files")]
    let endpoint = match &files {
        Some(files) => endpoint.fallback(files.router()),
        None => endpoint,
    };
    let options = ServeOptions {
        tls: tls_config,
        ..args.deadlines.serve_options(args.max_connections)
    };
    // With --auth-issuer, the endpoint behind the layer, which also answers the metadata
    // document; the data plane, whose URLs are signed capabilities of their own, passes
    // through.
    #[cfg(feature = "auth")]
    let outcome = match auth {
        Some(auth) => {
            let app = tower::Layer::layer(&auth, endpoint);
            smcp_server::serve(listener, app, options, shutdown).await?
        }
        None => smcp_server::serve(listener, endpoint, options, shutdown).await?,
    };
    #[cfg(not(feature = "auth"))]
    let outcome = smcp_server::serve(listener, endpoint, options, shutdown).await?;
    server.shutdown();
    if let Some(ops) = ops {
        let _ = ops.stop.send(());
        ops.task.await??;
    }
    drained(outcome)
}

/// What an operator reads, the same over HTTP and stdio: the readiness checks of the shared
/// components and, with `--metrics-listen`, the metrics registry.
struct Observed {
    /// Readiness (`/readyz`) fails while one of these does not answer.
    health_checks: Vec<std::sync::Arc<dyn smcp_server::core::health::HealthCheck>>,
    #[cfg(feature = "metrics")]
    prometheus: Option<smcp_server::metrics::Prometheus>,
    /// The components that report to the server's metrics once it is built.
    #[cfg(feature = "redis")]
    cluster: Option<smcpd::cluster::Cluster>,
    #[cfg(feature = "files")]
    files: Option<smcp_files::Files>,
}

impl Observed {
    fn new(
        args: &Args,
        #[cfg(feature = "redis")] cluster: Option<&smcpd::cluster::Cluster>,
        #[cfg(feature = "files")] files: Option<&smcp_files::Files>,
    ) -> Self {
        #[allow(unused_mut, reason = "filled only with the files or redis feature")]
        let mut health_checks: Vec<
            std::sync::Arc<dyn smcp_server::core::health::HealthCheck>,
        > = Vec::new();
        #[cfg(feature = "redis")]
        if let Some(cluster) = cluster {
            health_checks.push(std::sync::Arc::new(cluster.health()));
        }
        #[cfg(feature = "files")]
        if let Some(files) = files {
            health_checks.push(std::sync::Arc::new(smcpd::health::StoreHealth::new(
                files.store().clone(),
            )));
        }
        #[cfg(not(feature = "metrics"))]
        let _ = args;
        Self {
            health_checks,
            #[cfg(feature = "metrics")]
            prometheus: args
                .metrics_listen
                .map(|_| smcp_server::metrics::Prometheus::new()),
            #[cfg(feature = "redis")]
            cluster: cluster.cloned(),
            #[cfg(feature = "files")]
            files: files.cloned(),
        }
    }

    /// Where the server's measurements go (`None`: nowhere).
    fn metrics(&self) -> Option<std::sync::Arc<dyn smcp_server::core::metrics::Metrics>> {
        #[cfg(feature = "metrics")]
        if let Some(p) = &self.prometheus {
            return Some(std::sync::Arc::new(p.clone()));
        }
        None
    }

    /// Once the server is built: the components that report to it, and the operations
    /// listener with `--metrics-listen`.
    async fn start(self, args: &Args, server: &smcp_server::Server) -> anyhow::Result<Option<Ops>> {
        #[cfg(feature = "redis")]
        if let Some(cluster) = &self.cluster {
            cluster.observe_bus_lag(server.metrics());
        }
        #[cfg(feature = "files")]
        if let Some(files) = &self.files {
            files.set_metrics(server.metrics());
        }
        #[cfg(feature = "metrics")]
        if let (Some(addr), Some(prometheus)) = (args.metrics_listen, self.prometheus) {
            let ops = start_ops(
                addr,
                server,
                prometheus,
                &args.readyz_path,
                &args.livez_path,
            )
            .await?;
            return Ok(Some(ops));
        }
        #[cfg(not(feature = "metrics"))]
        let _ = (args, server);
        Ok(None)
    }
}

/// The operations listener (`--metrics-listen`): its task and how to stop it.
struct Ops {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<smcp_server::Drained>>,
}

/// Binds `--metrics-listen` and serves the metrics and the probes there until stopped.
#[cfg(feature = "metrics")]
async fn start_ops(
    addr: SocketAddr,
    server: &smcp_server::Server,
    prometheus: smcp_server::metrics::Prometheus,
    readyz: &str,
    livez: &str,
) -> anyhow::Result<Ops> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr} (--metrics-listen)"))?;
    let local = listener.local_addr()?;
    let router = smcp_server::http::OpsRouter::new(server)
        .readiness(readyz)
        .liveness(livez)
        .metrics("/metrics", prometheus)
        .build();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = ServeOptions {
        max_connections: 64,
        shutdown_timeout: Duration::from_secs(1),
        ..ServeOptions::default()
    };
    let task = tokio::spawn(smcp_server::serve(listener, router, options, async move {
        let _ = stopped.await;
    }));
    tracing::info!("metrics on http://{local}/metrics, readiness on http://{local}{readyz}");
    Ok(Ops { stop, task })
}

/// `--stdio`: the demo server on standard input and output. The SEP-2631 data plane, when
/// file transfer is on, is served over HTTP on `--listen` beside it.
async fn run_stdio(
    args: &Args,
    security: SecurityPolicy,
    listen: ListenConfig,
    mrtr: Option<smcp_server::mrtr::MrtrConfig>,
    serve_options: ServeOptions,
) -> anyhow::Result<()> {
    let tls = serve_options.tls.is_some();
    #[cfg(feature = "files")]
    let (files, data_plane) = if !args.files.no_files && (tls || args.files.insecure_http_files) {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let scheme = if tls { "https" } else { "http" };
        let base = format!("{scheme}://{}", listener.local_addr()?);
        let files = file_service(&args.files, tls, &base).await?;
        tracing::info!(%base, "SEP-2631 data plane over HTTP");
        (files, Some(listener))
    } else {
        (None, None)
    };
    #[cfg(not(feature = "files"))]
    let _ = (tls, serve_options);
    #[cfg(feature = "redis")]
    let cluster = args.redis.cluster()?;
    // --metrics-listen counts the requests read from stdin as it counts HTTP ones.
    let observed = Observed::new(
        args,
        #[cfg(feature = "redis")]
        cluster.as_ref(),
        #[cfg(feature = "files")]
        files.as_ref(),
    );
    let server = smcpd::demo_server_with(smcpd::DemoConfig {
        security,
        listen,
        mrtr,
        #[cfg(feature = "files")]
        files_inline: files.is_none() && !args.files.no_files,
        #[cfg(feature = "files")]
        files: files.clone(),
        #[cfg(feature = "files")]
        sep2631_fixtures: args.files.sep2631_fixtures,
        #[cfg(feature = "tasks")]
        tasks: args.tasks.extension()?,
        #[cfg(feature = "legacy")]
        legacy: args.legacy.config(),
        #[cfg(feature = "redis")]
        cluster: cluster.clone(),
        metrics: observed.metrics(),
        health_checks: observed.health_checks.clone(),
    })?;
    #[cfg(feature = "redis")]
    if let Some(cluster) = &cluster {
        cluster.attach_catalog(&server).await?;
    }
    if args.clock_secs > 0 {
        tokio::spawn(smcpd::run_clock(
            server.clone(),
            Duration::from_secs(args.clock_secs),
        ));
    }
    let ops = observed.start(args, &server).await?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    #[cfg(feature = "files")]
    let data_plane = match (files, data_plane) {
        (Some(files), Some(listener)) => Some(tokio::spawn(smcp_server::serve(
            listener,
            files.router(),
            serve_options,
            async move {
                let _ = stopped.await;
            },
        ))),
        _ => None,
    };
    #[cfg(not(feature = "files"))]
    drop(stopped);
    tracing::info!("smcpd serving MCP on stdio");
    let options = smcp_server::StdioOptions::default().drain_timeout(args.deadlines.drain_timeout);
    let outcome =
        smcp_server::serve_stdio(&server, smcp_server::shutdown_signal(), options).await?;
    server.shutdown();
    if let Some(ops) = ops {
        let _ = ops.stop.send(());
        ops.task.await??;
    }
    let _ = stop.send(());
    #[cfg(feature = "files")]
    if let Some(task) = data_plane {
        task.await??;
    }
    drained(outcome)
}

/// `--redis`: state shared by several instances.
#[cfg(feature = "redis")]
#[derive(Debug, clap::Args)]
struct RedisFlags {
    /// Share state with the other instances of this deployment through Redis
    /// (`redis://[user:password@]host:port/[db]`): change notifications reach every
    /// instance's listeners, single-use request states are redeemed once across instances,
    /// 2025-era sessions live there, and `toggle_extra` changes every instance's catalog.
    /// Without it, everything stays in this process.
    #[arg(long = "redis", value_name = "URL", env = "SMCPD_REDIS_URL")]
    url: Option<String>,
    /// Prefix of every Redis key and of the bus channel: instances of one deployment share
    /// it; deployments sharing a Redis differ.
    #[arg(
        long,
        value_name = "PREFIX",
        env = "SMCPD_REDIS_PREFIX",
        default_value = "smcp:"
    )]
    redis_prefix: String,
}

#[cfg(feature = "redis")]
impl RedisFlags {
    fn cluster(&self) -> anyhow::Result<Option<smcpd::cluster::Cluster>> {
        let Some(url) = &self.url else {
            return Ok(None);
        };
        let cluster =
            smcpd::cluster::Cluster::connect(url, &self.redis_prefix).context("--redis")?;
        tracing::info!(prefix = %self.redis_prefix, "sharing state through Redis");
        Ok(Some(cluster))
    }
}

/// How long a client may take, and how long shutdown waits.
#[derive(Debug, clap::Args)]
struct Deadlines {
    /// Longest TLS handshake (a client that connects and says nothing is closed then).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = smcpd::parse_duration)]
    handshake_timeout: Duration,
    /// Longest wait for a complete request head, on a new connection or between requests.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = smcpd::parse_duration)]
    header_timeout: Duration,
    /// Longest wait for the next byte of a request body (uploads included).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = smcpd::parse_duration)]
    body_idle_timeout: Duration,
    /// Lowest average rate of a request body, in bytes per second, once --body-grace has
    /// passed (0 = none).
    #[arg(long, value_name = "BYTES", default_value_t = 1024)]
    body_min_rate: u64,
    /// How long a request body may take before its average rate counts.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = smcpd::parse_duration)]
    body_grace: Duration,
    /// On SIGTERM or Ctrl-C, how long requests in flight get to finish; those still running
    /// then are cancelled and answered with an error, and smcpd exits with status 1.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = smcpd::parse_duration)]
    drain_timeout: Duration,
}

impl Deadlines {
    fn serve_options(&self, max_connections: usize) -> ServeOptions {
        ServeOptions {
            max_connections,
            handshake_timeout: self.handshake_timeout,
            header_read_timeout: self.header_timeout,
            body: smcp_server::BodyTimeouts {
                idle: self.body_idle_timeout,
                min_rate: self.body_min_rate,
                grace: self.body_grace,
            },
            shutdown_timeout: self.drain_timeout,
            ..ServeOptions::default()
        }
    }
}

/// The process's end: an error (exit status 1) when the drain cut requests.
fn drained(drained: smcp_server::Drained) -> anyhow::Result<()> {
    match drained {
        smcp_server::Drained::Complete => {
            tracing::info!("smcpd stopped");
            Ok(())
        }
        smcp_server::Drained::TimedOut(cut) => anyhow::bail!(
            "stopped without a complete drain: {cut} requests were still running at the drain \
             timeout; each was cancelled and got an error"
        ),
    }
}

/// The SEP-2631 flags.
#[cfg(feature = "files")]
#[derive(Debug, clap::Args)]
struct FilesFlags {
    /// Where uploaded and generated files are stored (default: a temp directory).
    #[arg(long, value_name = "DIR", env = "SMCPD_FILES_DIR")]
    files_dir: Option<PathBuf>,
    /// A key signing file transfer tokens, as `ID:BASE64` (32 bytes; see --generate-key).
    /// Repeat to rotate: the first signs, all verify. Instances sharing keys and a store
    /// serve each other's descriptors. Without one, a random per-process key is used.
    #[arg(
        long = "files-key",
        env = "SMCPD_FILES_KEYS",
        value_delimiter = ',',
        value_name = "ID:BASE64"
    )]
    files_keys: Vec<String>,
    /// The data plane's base URL as clients reach it, when that is not this instance's own
    /// address: the load balancer's URL when several instances serve behind one
    /// (`docs/deploy.md`). An https:// URL turns file transfer on without TLS here (a proxy
    /// in front terminates it). Default: this instance's listen address.
    #[arg(long, value_name = "URL", env = "SMCPD_FILES_BASE_URL")]
    files_base_url: Option<String>,
    /// Issue multipart/form-data POST upload descriptors instead of raw PUT.
    #[arg(long)]
    files_multipart: bool,
    /// Development only: enable file transfer without TLS, issuing http:// descriptors
    /// (refused unless listening on loopback).
    #[arg(long)]
    insecure_http_files: bool,
    /// Disable SEP-2631 file transfer.
    #[arg(long)]
    no_files: bool,
    /// Also serve the SEP-2631 conformance suite's fixture tools (`files_*`), for
    /// `scripts/conformance-files`. Needs file transfer (TLS).
    #[arg(long, conflicts_with = "no_files")]
    sep2631_fixtures: bool,
    /// How long an upload or download descriptor can be redeemed, in seconds (its
    /// `expiresAt`). Descriptors are bearer capabilities: keep this to minutes.
    #[arg(long, value_name = "SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    files_descriptor_ttl: u64,
    /// Largest uploaded or generated file, in bytes (inline `data:` values stop at 8 MiB).
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30)]
    files_max_size: u64,
    /// Most file values one tools/call may carry (every item of every file field; the same
    /// file named twice counts twice). More is refused (`tooManyFiles`) before any is read.
    #[arg(long, value_name = "N", default_value_t = smcp_files::DEFAULT_MAX_CALL_FILES)]
    files_max_call_files: usize,
    /// Most bytes the file arguments of one tools/call may add up to (a file named twice
    /// counts twice). More is refused (`maxSizeExceeded`) before the tool runs.
    #[arg(long, value_name = "BYTES", default_value_t = smcp_files::DEFAULT_MAX_CALL_BYTES)]
    files_max_call_bytes: u64,
    /// Most bytes the file store may hold (stored files plus uploads in progress); beyond
    /// it uploads are refused with 507 `storeFull`, as on a full disk. Default: no quota
    /// (the disk is the limit).
    #[arg(long, value_name = "BYTES")]
    files_store_quota: Option<u64>,
    /// Store files in an S3 bucket instead of on local disk: `s3://BUCKET[/PREFIX]`. The
    /// endpoint, region and credentials come from the environment (`AWS_ENDPOINT_URL`,
    /// `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_ALLOW_HTTP=true` for a
    /// plain-http endpoint). Instances sharing the bucket, the prefix and --files-key serve
    /// each other's uploads and downloads. The bucket is probed at start (it must exist and
    /// honour conditional puts).
    #[cfg(feature = "s3")]
    #[arg(
        long,
        value_name = "s3://BUCKET[/PREFIX]",
        env = "SMCPD_FILES_STORE",
        conflicts_with_all = ["files_dir", "files_store_quota"],
        value_parser = parse_files_store
    )]
    files_store: Option<smcp_files::S3Location>,
}

/// `--files-store`: an `s3://` URL, with the reason when malformed.
#[cfg(feature = "s3")]
fn parse_files_store(text: &str) -> Result<smcp_files::S3Location, String> {
    smcp_files::S3Location::parse(text).map_err(|e| e.to_string())
}

/// The SEP-2663 flags.
#[cfg(feature = "tasks")]
#[derive(Debug, clap::Args)]
struct TasksFlags {
    /// Do not serve SEP-2663 tasks: neither the extension nor the tool `long_job`.
    #[arg(long, conflicts_with_all = ["tasks_ttl", "tasks_max", "tasks_poll_interval", "tasks_immediate_window"])]
    no_tasks: bool,
    /// How long a task, and then its result, is kept from its creation (`ttlMs`); a task
    /// still running then is stopped. From 1s to 7 days (10080m).
    #[arg(long, value_name = "DURATION", default_value = "60m", value_parser = tasks_ttl)]
    tasks_ttl: Duration,
    /// Most tasks kept at once (running or finished within their TTL); beyond it a call that
    /// would become a task is refused (−32603, "the server is busy"). From 1 to 1000000.
    #[arg(
        long,
        value_name = "N",
        default_value_t = smcp_tasks::DEFAULT_MAX_TASKS as u64,
        value_parser = clap::value_parser!(u64).range(1..=1_000_000)
    )]
    tasks_max: u64,
    /// The polling interval suggested to clients (`pollIntervalMs`). From 10ms to 5m, and
    /// not above --tasks-ttl.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = tasks_poll_interval)]
    tasks_poll_interval: Duration,
    /// How long a task-capable call runs inline before it becomes a task: one that finishes
    /// (or asks for input) within it is answered as a plain call. 0 makes every such call a
    /// task at once. From 0 to 60s.
    #[arg(long, value_name = "DURATION", default_value = "250ms", value_parser = tasks_immediate_window)]
    tasks_immediate_window: Duration,
}

#[cfg(feature = "tasks")]
fn tasks_ttl(text: &str) -> Result<Duration, String> {
    smcpd::parse_duration_within(
        text,
        Duration::from_secs(1),
        Duration::from_secs(7 * 86_400),
    )
}

#[cfg(feature = "tasks")]
fn tasks_poll_interval(text: &str) -> Result<Duration, String> {
    smcpd::parse_duration_within(text, Duration::from_millis(10), Duration::from_secs(300))
}

#[cfg(feature = "tasks")]
fn tasks_immediate_window(text: &str) -> Result<Duration, String> {
    smcpd::parse_duration_within(text, Duration::ZERO, Duration::from_secs(60))
}

#[cfg(feature = "tasks")]
impl TasksFlags {
    /// The tasks extension, unless `--no-tasks`.
    fn extension(&self) -> anyhow::Result<Option<smcp_tasks::TasksExtension>> {
        if self.no_tasks {
            return Ok(None);
        }
        if self.tasks_poll_interval > self.tasks_ttl {
            anyhow::bail!(
                "--tasks-poll-interval ({}) must not exceed --tasks-ttl ({}): a task would \
                 expire before its first poll",
                smcpd::show_duration(self.tasks_poll_interval),
                smcpd::show_duration(self.tasks_ttl)
            );
        }
        let max_tasks = usize::try_from(self.tasks_max)
            .map_err(|_| anyhow::anyhow!("--tasks-max {} is too large here", self.tasks_max))?;
        Ok(Some(
            smcp_tasks::TasksExtension::builder()
                .ttl(Some(self.tasks_ttl))
                .max_tasks(max_tasks)
                .poll_interval(self.tasks_poll_interval)
                .immediate_window(self.tasks_immediate_window)
                .build(),
        ))
    }
}

/// The SEP-2631 file service from the flags: on with TLS, or with `--insecure-http-files`
/// on loopback; off otherwise.
#[cfg(feature = "files")]
async fn file_service(
    args: &FilesFlags,
    tls: bool,
    base_url: &str,
) -> anyhow::Result<Option<smcp_files::Files>> {
    use smcp_files::{Files, FilesConfig, UploadStyle};
    if args.no_files {
        return Ok(None);
    }
    // Behind a proxy that terminates TLS, the descriptors' https:// base URL is the proxy's.
    let behind_tls = args
        .files_base_url
        .as_deref()
        .is_some_and(|url| url.starts_with("https://"));
    if !tls && !args.insecure_http_files && !behind_tls {
        if args.files_base_url.is_some() {
            anyhow::bail!(
                "--files-base-url: file transfer needs an https:// URL here (or \
                 --insecure-http-files for http:// on loopback)"
            );
        }
        // Said after the ready line (an optional feature, not a problem).
        return Ok(None);
    }
    let (store, described) = file_store(args).await?;
    let keys = match smcp_server::KeyRing::parse_all(&args.files_keys)
        .context("--files-key expects ID:BASE64 (32 bytes)")?
    {
        Some(ring) => ring,
        None => smcp_server::KeyRing::ephemeral()?,
    };
    let config = FilesConfig {
        authority: "smcpd".into(),
        upload_style: if args.files_multipart {
            UploadStyle::Multipart
        } else {
            UploadStyle::Put
        },
        allow_insecure_loopback: !tls && args.insecure_http_files,
        upload_ttl: args.files_descriptor_ttl,
        download_ttl: args.files_descriptor_ttl,
        max_size: args.files_max_size,
        max_call_files: args.files_max_call_files,
        max_call_bytes: args.files_max_call_bytes,
        ..FilesConfig::default()
    };
    let files = Files::new(store, keys, config)?;
    files
        .set_base_url(args.files_base_url.as_deref().unwrap_or(base_url))
        .context("--files-base-url")?;
    files.spawn_gc(Duration::from_secs(600));
    tracing::info!(store = %described, "file transfer (SEP-2631) on");
    Ok(Some(files))
}

/// The file store from the flags, and how to name it in the log: the S3 bucket of
/// `--files-store` (probed), else the local directory of `--files-dir`.
#[cfg(feature = "files")]
async fn file_store(
    args: &FilesFlags,
) -> anyhow::Result<(std::sync::Arc<dyn smcp_files::FileStore>, String)> {
    #[cfg(feature = "s3")]
    if let Some(location) = &args.files_store {
        let store = smcp_files::S3StoreBuilder::from_env(&location.to_string())
            .map_err(|e| anyhow::anyhow!("--files-store {location}: {e}"))?
            .build()
            .await
            .map_err(|e| anyhow::anyhow!("--files-store {location}: {e}"))?;
        return Ok((std::sync::Arc::new(store), location.to_string()));
    }
    let dir = args
        .files_dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("smcpd-files"));
    let mut store = smcp_files::LocalFileStore::open(&dir)
        .map_err(|e| anyhow::anyhow!("file store {}: {e}", dir.display()))?;
    if let Some(quota) = args.files_store_quota {
        store = store
            .with_quota(quota)
            .map_err(|e| anyhow::anyhow!("file store {}: {e}", dir.display()))?;
    }
    Ok((std::sync::Arc::new(store), dir.display().to_string()))
}

/// The earlier revisions' sessions on the same endpoint (`docs/sessions.md`).
#[cfg(feature = "legacy")]
#[derive(Debug, clap::Args)]
struct LegacyFlags {
    /// Serve only MCP 2026-07-28: answer a 2025-11-25 (or earlier) `initialize` with -32022
    /// instead of starting a session.
    #[arg(long)]
    no_legacy: bool,
    /// Most sessions of the earlier revisions held at once; past it `initialize` gets 503.
    #[arg(long, value_name = "N", default_value_t = smcp_server::legacy::LegacyConfig::default().max_sessions,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_sessions: usize,
    /// A session without a request for this long ends (its id then gets 404).
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = smcpd::parse_duration)]
    session_idle_timeout: Duration,
}

#[cfg(feature = "legacy")]
impl LegacyFlags {
    fn config(&self) -> smcp_server::legacy::LegacyConfig {
        smcp_server::legacy::LegacyConfig {
            enabled: !self.no_legacy,
            max_sessions: self.max_sessions,
            idle_timeout: self.session_idle_timeout,
            ..smcp_server::legacy::LegacyConfig::default()
        }
    }
}
