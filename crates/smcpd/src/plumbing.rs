//! What every server smcpd builds shares, the demo's and the gateway's: the configuration
//! its flags make ([`DemoConfig`]), and the plumbing applied to either ([`Plumbing::finish`]):
//! Host/Origin policy, listen limits, `requestState` keys, the earlier revisions, the shared
//! state of `--redis`, metrics, readiness checks and rate limits.

use smcp_server::mrtr::MrtrConfig;
use smcp_server::{BuildError, ListenConfig, SecurityPolicy, Server, ServerBuilder};

/// Everything `smcpd`'s flags configure.
#[derive(Debug, Clone, Default)]
pub struct DemoConfig {
    /// Host and Origin allow-lists.
    pub security: SecurityPolicy,
    /// Listen-stream limits.
    pub listen: ListenConfig,
    /// Multi round-trip settings; `None` seals `requestState` with a random per-process key.
    pub mrtr: Option<MrtrConfig>,
    /// SEP-2631 file service; `Some` registers the files extension and adds the file tools and
    /// resource of [`crate::files_demo`].
    #[cfg(feature = "files")]
    pub files: Option<smcp_files::Files>,
    /// Also serve the SEP-2631 conformance suite's fixture tools (`files_inline_text`, …;
    /// `crates/smcp-conformance-files/README.md`), so the suite's server leg can run against
    /// `smcpd` itself. Needs `files`.
    #[cfg(feature = "files")]
    pub sep2631_fixtures: bool,
    /// Without `files`: SEP-2631 inline (`data:`) file arguments only, with the tool that
    /// takes them; for a server with no data plane (stdio without TLS).
    #[cfg(feature = "files")]
    pub files_inline: bool,
    /// SEP-2663 tasks: `Some` registers the extension and the task-capable tool `long_job`
    /// of [`crate::tasks_demo`]. `smcpd` turns it on unless `--no-tasks`.
    #[cfg(feature = "tasks")]
    pub tasks: Option<smcp_tasks::TasksExtension>,
    /// Sessions of the earlier revisions (2025-11-25 and before) on the same endpoint: on by
    /// default; `smcpd --no-legacy` turns them off.
    #[cfg(feature = "legacy")]
    pub legacy: smcp_server::legacy::LegacyConfig,
    /// Shared state in Redis for running several instances (`smcpd --redis`): the change
    /// bus, the replay guard, the legacy session store and relay, and `toggle_extra` through the shared
    /// catalog (attach it with [`crate::cluster::Cluster::attach_catalog`] once built).
    #[cfg(feature = "redis")]
    pub cluster: Option<crate::cluster::Cluster>,
    /// Where the server's measurements go (`smcpd --metrics-listen` passes a
    /// `smcp_server::metrics::Prometheus`); `None` records nothing.
    pub metrics: Option<std::sync::Arc<dyn smcp_server::core::metrics::Metrics>>,
    /// Health checks readiness asks (a shared store, a bus); empty = ready unless draining.
    pub health_checks: Vec<std::sync::Arc<dyn smcp_server::core::health::HealthCheck>>,
    /// Rate limits (`smcpd --rate-limit`); none by default.
    pub rate_limits: smcp_server::ratelimit::RateLimits,
}

/// The part of a [`DemoConfig`] any server gets.
pub(crate) struct Plumbing {
    security: SecurityPolicy,
    listen: ListenConfig,
    mrtr: Option<MrtrConfig>,
    #[cfg(feature = "legacy")]
    legacy: smcp_server::legacy::LegacyConfig,
    #[cfg(feature = "redis")]
    pub(crate) cluster: Option<crate::cluster::Cluster>,
    metrics: Option<std::sync::Arc<dyn smcp_server::core::metrics::Metrics>>,
    health_checks: Vec<std::sync::Arc<dyn smcp_server::core::health::HealthCheck>>,
    rate_limits: smcp_server::ratelimit::RateLimits,
}

/// The part of a [`DemoConfig`] only the demo tool set uses.
pub(crate) struct Content {
    #[cfg(feature = "files")]
    pub(crate) files: Option<smcp_files::Files>,
    #[cfg(feature = "files")]
    pub(crate) sep2631_fixtures: bool,
    #[cfg(feature = "files")]
    pub(crate) files_inline: bool,
    #[cfg(feature = "tasks")]
    pub(crate) tasks: Option<smcp_tasks::TasksExtension>,
}

impl Plumbing {
    /// Splits the flags' configuration into the plumbing and the demo's content.
    pub(crate) fn split(config: DemoConfig) -> (Self, Content) {
        let DemoConfig {
            security,
            listen,
            mrtr,
            #[cfg(feature = "files")]
            files,
            #[cfg(feature = "files")]
            sep2631_fixtures,
            #[cfg(feature = "files")]
            files_inline,
            #[cfg(feature = "tasks")]
            tasks,
            #[cfg(feature = "legacy")]
            legacy,
            #[cfg(feature = "redis")]
            cluster,
            metrics,
            health_checks,
            rate_limits,
        } = config;
        (
            Self {
                security,
                listen,
                mrtr,
                #[cfg(feature = "legacy")]
                legacy,
                #[cfg(feature = "redis")]
                cluster,
                metrics,
                health_checks,
                rate_limits,
            },
            Content {
                #[cfg(feature = "files")]
                files,
                #[cfg(feature = "files")]
                sep2631_fixtures,
                #[cfg(feature = "files")]
                files_inline,
                #[cfg(feature = "tasks")]
                tasks,
            },
        )
    }

    /// Applies the plumbing to `builder` and builds the server.
    pub(crate) fn finish(self, builder: ServerBuilder) -> Result<Server, BuildError> {
        let Self {
            security,
            listen,
            mrtr,
            #[cfg(feature = "legacy")]
            legacy,
            #[cfg(feature = "redis")]
            cluster,
            metrics,
            health_checks,
            rate_limits,
        } = self;
        let mut builder = builder.security(security).listen(listen);
        #[cfg(feature = "redis")]
        if let Some(cluster) = &cluster {
            builder = builder
                .change_bus(std::sync::Arc::new(cluster.bus.clone()))
                .replay_guard(smcp_redis::RedisReplayGuard::new(&cluster.redis));
            #[cfg(feature = "legacy")]
            {
                builder = builder
                    .session_store(smcp_redis::RedisSessionStore::new(
                        &cluster.redis,
                        legacy.max_sessions,
                        legacy.idle_timeout,
                    ))
                    .session_relay(
                        smcp_redis::RedisSessionRelay::builder(&cluster.bus)
                            .log_ttl(legacy.idle_timeout)
                            .build(),
                    );
            }
        }
        if let Some(metrics) = metrics {
            builder = builder.metrics(metrics);
        }
        for check in health_checks {
            builder = builder.health_check_arc(check);
        }
        builder = builder.rate_limits(rate_limits);
        #[cfg(feature = "legacy")]
        {
            builder = builder.legacy(legacy);
        }
        match mrtr {
            Some(config) => builder.mrtr(config).build(),
            None => builder.build(),
        }
    }
}
