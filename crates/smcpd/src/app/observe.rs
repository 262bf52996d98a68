//! What an operator reads: the logs (with OTLP trace export, feature `otel`), the readiness
//! and liveness probes, and Prometheus metrics on a listener of their own (feature
//! `metrics`). The same over HTTP and stdio.

use std::sync::Arc;
#[cfg(feature = "metrics")]
use std::{net::SocketAddr, time::Duration};

#[cfg(feature = "metrics")]
use anyhow::Context as _;
use smcp_server::core::health::HealthCheck;

/// The operations flags.
#[derive(Debug, clap::Args)]
pub(crate) struct ObserveArgs {
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
    pub(crate) readyz_path: String,
    /// Path of the liveness probe (200 while the process answers), on --listen and on
    /// --metrics-listen.
    #[arg(long, value_name = "PATH", default_value = "/livez", value_parser = smcpd::probe_path)]
    pub(crate) livez_path: String,
}

/// The trace exporter, while it runs (flushed by [`Telemetry::shutdown`]).
#[derive(Debug)]
pub(crate) struct Telemetry {
    #[cfg(feature = "otel")]
    provider: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
}

impl ObserveArgs {
    /// Logs on stderr with the filter `log`, and traces to the collector when configured.
    pub(crate) fn init_logging(&self, log: &str) -> anyhow::Result<Telemetry> {
        // Colour only when stderr is a terminal (never in a redirected log), and never with
        // NO_COLOR set (https://no-color.org).
        let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr())
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        #[cfg(feature = "otel")]
        let provider = if smcpd::otel::configured(self.otlp_endpoint.as_deref()) {
            Some(smcpd::otel::provider(self.otlp_endpoint.as_deref())?)
        } else {
            None
        };
        #[cfg(feature = "otel")]
        if let Some(exporter) = &provider {
            use tracing_subscriber::Layer as _;
            use tracing_subscriber::layer::SubscriberExt as _;
            use tracing_subscriber::util::SubscriberInitExt as _;
            tracing_subscriber::registry()
                .with(
                    tracing_subscriber::fmt::layer()
                        .with_ansi(ansi)
                        .with_writer(std::io::stderr)
                        .with_filter(tracing_subscriber::EnvFilter::try_new(log)?),
                )
                .with(smcpd::otel::layer(exporter))
                .init();
            return Ok(Telemetry { provider });
        }
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::try_new(log)?)
            .with_ansi(ansi)
            .with_writer(std::io::stderr)
            .init();
        Ok(Telemetry {
            #[cfg(feature = "otel")]
            provider,
        })
    }
}

impl Telemetry {
    /// At exit: flushes the traces still batched.
    pub(crate) async fn shutdown(self) {
        #[cfg(feature = "otel")]
        if let Some(provider) = self.provider {
            // Exports run on this runtime, so not on a worker thread.
            match tokio::task::spawn_blocking(move || provider.shutdown()).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(error = %e, "trace export at exit failed"),
                Err(e) => tracing::warn!(error = %e, "trace export at exit failed"),
            }
        }
    }
}

/// The readiness checks of the shared components and, with `--metrics-listen`, the metrics
/// registry.
pub(crate) struct Observed {
    /// Readiness (`/readyz`) fails while one of these does not answer.
    pub(crate) health_checks: Vec<Arc<dyn HealthCheck>>,
    #[cfg(feature = "metrics")]
    prometheus: Option<smcp_server::metrics::Prometheus>,
}

impl Observed {
    /// The registry `args` ask for, and these checks.
    pub(crate) fn new(args: &ObserveArgs, health_checks: Vec<Arc<dyn HealthCheck>>) -> Self {
        #[cfg(not(feature = "metrics"))]
        let _ = args;
        Self {
            health_checks,
            #[cfg(feature = "metrics")]
            prometheus: args
                .metrics_listen
                .map(|_| smcp_server::metrics::Prometheus::new()),
        }
    }

    /// Where the server's measurements go (`None`: nowhere).
    pub(crate) fn metrics(&self) -> Option<Arc<dyn smcp_server::core::metrics::Metrics>> {
        #[cfg(feature = "metrics")]
        if let Some(p) = &self.prometheus {
            return Some(Arc::new(p.clone()));
        }
        None
    }

    /// Once the server is built: the operations listener with `--metrics-listen`.
    pub(crate) async fn start(
        self,
        args: &ObserveArgs,
        server: &smcp_server::Server,
    ) -> anyhow::Result<Option<Ops>> {
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
pub(crate) struct Ops {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<smcp_server::Drained>>,
}

impl Ops {
    /// Stops the listener and waits for it.
    pub(crate) async fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.task.await??;
        Ok(())
    }
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
    let options = smcp_server::ServeOptions {
        max_connections: 64,
        shutdown_timeout: Duration::from_secs(1),
        ..smcp_server::ServeOptions::default()
    };
    let task = tokio::spawn(smcp_server::serve(listener, router, options, async move {
        let _ = stopped.await;
    }));
    tracing::info!("metrics on http://{local}/metrics, readiness on http://{local}{readyz}");
    Ok(Ops { stop, task })
}
