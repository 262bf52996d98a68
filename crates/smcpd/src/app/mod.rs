//! smcpd's subsystems, one module each: its flags (a clap `Args` struct, flattened into the
//! command line in `main.rs`) and its wiring, with its `cfg(feature)` switches inside (without
//! the feature, the module keeps its names but has no flags and does nothing). [`App::build`]
//! assembles the server both modes run, [`http`] and [`stdio`].

pub(crate) mod auth;
pub(crate) mod cli;
pub(crate) mod files;
pub(crate) mod http;
pub(crate) mod legacy;
pub(crate) mod limits;
pub(crate) mod observe;
pub(crate) mod redis;
pub(crate) mod serve;
pub(crate) mod state;
pub(crate) mod stdio;
pub(crate) mod tasks;
pub(crate) mod tls;

use std::time::Duration;

use smcp_server::ServeOptions;

use cli::Cli;

/// What both modes start from, worked out from the flags before anything listens.
pub(crate) struct Base {
    /// The server's configuration so far: the Host/Origin policy, the listen limits, the
    /// `requestState` keys.
    demo: smcpd::DemoConfig,
    /// The options of an HTTP listener (the endpoint's, or the data plane's beside stdio),
    /// with TLS when configured.
    pub(crate) options: ServeOptions,
}

impl Base {
    /// From the flags (a development CA, if asked for, written now).
    pub(crate) fn new(cli: &Cli) -> anyhow::Result<Self> {
        let demo = smcpd::DemoConfig {
            security: cli.serve.security(),
            listen: cli.serve.listen_config(),
            mrtr: cli.state.mrtr()?,
            ..smcpd::DemoConfig::default()
        };
        let mut options = cli.serve.options();
        cli.tls.configure(&mut options)?;
        Ok(Self { demo, options })
    }

    /// Whether smcpd serves HTTPS.
    pub(crate) fn tls(&self) -> bool {
        self.options.tls.is_some()
    }
}

/// The demo server, running with the components that report to it.
pub(crate) struct App {
    /// The server.
    pub(crate) server: smcp_server::Server,
    /// The operations listener (`--metrics-listen`).
    ops: Option<observe::Ops>,
    /// The state shared with the other instances (`--redis`).
    pub(crate) shared: redis::Shared,
    /// `smcpd gateway`: the upstreams, closed when the server stops.
    #[cfg(feature = "gateway")]
    gateway: Option<smcp_gateway::Gateway>,
    /// Scopes the served items declare (the gateway's upstreams'), listed as supported in
    /// the resource metadata beside the `--auth-*scope` ones.
    pub(crate) scopes: Vec<String>,
    /// Whether handlers see the client's access token (a gateway that exchanges it).
    pub(crate) keep_token: bool,
}

impl App {
    /// The one place both modes build the server: the shared state of `--redis`, the file
    /// service `files` (each mode sets up its data plane), tasks and the earlier revisions
    /// from the flags, the readiness checks and the metrics; then the clock and the
    /// operations listener are started.
    pub(crate) async fn build(
        cli: &Cli,
        base: smcpd::DemoConfig,
        files: &files::FileService,
    ) -> anyhow::Result<Self> {
        let shared = cli.redis.connect()?;
        let mut health_checks = Vec::new();
        shared.health_checks(&mut health_checks);
        files.health_checks(&mut health_checks);
        let observed = observe::Observed::new(&cli.observe, health_checks);
        let mut config = smcpd::DemoConfig {
            metrics: observed.metrics(),
            health_checks: observed.health_checks.clone(),
            ..base
        };
        files.configure(&mut config);
        cli.tasks.configure(&mut config, &shared)?;
        cli.legacy.configure(&mut config);
        cli.limits
            .configure(&mut config, shared.rate_limiter(cli.limits.prefetch()));
        shared.configure(&mut config);
        #[cfg(feature = "tasks")]
        let tasks = config.tasks.clone();
        #[cfg(feature = "gateway")]
        let mut gateway = None;
        #[allow(unused_mut)]
        let mut scopes = Vec::new();
        #[allow(unused_mut)]
        let mut keep_token = false;
        let server = match &cli.gateway {
            #[cfg(feature = "gateway")]
            Some(path) => {
                let settings = smcp_gateway::GatewayConfig::load(path)?;
                scopes = settings.scopes();
                keep_token = settings.exchanges_tokens();
                if (!scopes.is_empty() || keep_token) && (cli.serve.stdio || !cli.auth.enabled()) {
                    // Served without authorization, the scopes would guard nothing and there
                    // would be no client token to exchange.
                    anyhow::bail!(
                        "{}: the upstreams' `scopes`, `tool_scopes` and `token_exchange` need the gateway served over HTTP with --auth-issuer",
                        path.display()
                    );
                }
                let started = match shared.gateway_peers() {
                    Some(peers) => smcp_gateway::Gateway::start_in_cluster(settings, peers).await?,
                    None => smcp_gateway::Gateway::start(settings).await?,
                };
                let server = smcpd::gateway::gateway_server_with(config, &started)?;
                gateway = Some(started);
                server
            }
            #[cfg(not(feature = "gateway"))]
            Some(_) => anyhow::bail!("this smcpd was built without the `gateway` feature"),
            None => smcpd::demo_server_with(config)?,
        };
        shared.attach(&server).await?;
        #[cfg(feature = "tasks")]
        tasks::attach(tasks.as_ref(), &server);
        if cli.serve.clock_secs > 0 && cli.gateway.is_none() {
            tokio::spawn(smcpd::run_clock(
                server.clone(),
                Duration::from_secs(cli.serve.clock_secs),
            ));
        }
        shared.observe(&server);
        files.observe(&server);
        let ops = observed.start(&cli.observe, &server).await?;
        Ok(Self {
            server,
            ops,
            shared,
            #[cfg(feature = "gateway")]
            gateway,
            scopes,
            keep_token,
        })
    }

    /// Whether the operations listener runs (then readiness turns 503 as soon as the drain
    /// starts).
    pub(crate) fn has_ops(&self) -> bool {
        self.ops.is_some()
    }

    /// Once served: shuts the server down and stops the operations listener.
    pub(crate) async fn stop(self) -> anyhow::Result<()> {
        self.server.shutdown();
        #[cfg(feature = "gateway")]
        if let Some(gateway) = &self.gateway {
            gateway.close().await;
        }
        if let Some(ops) = self.ops {
            ops.stop().await?;
        }
        Ok(())
    }
}

/// The process's end: an error (exit status 1) when the drain cut requests.
pub(crate) fn drained(drained: smcp_server::Drained) -> anyhow::Result<()> {
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
