//! Several instances sharing state in Redis (feature `redis`): `--redis URL` and
//! `--redis-prefix`, and the connection they make (`smcpd::cluster`). Without the feature,
//! no flags and everything stays in this process.

use std::sync::Arc;

use smcp_server::core::health::HealthCheck;

/// `--redis`: state shared by several instances.
#[cfg(feature = "redis")]
#[derive(Debug, clap::Args)]
pub(crate) struct RedisArgs {
    /// Share state with the other instances of this deployment through Redis
    /// (`redis://[user:password@]host:port/[db]`): change notifications reach every
    /// instance's listeners, single-use request states (and DPoP proofs' jti, with
    /// --auth-dpop) are redeemed once across instances,
    /// 2025-era sessions live there (their live traffic relayed to the instance holding it,
    /// so a session needs no stickiness), SEP-2663 tasks too (any instance serves tasks/*;
    /// see --task-lease), and `toggle_extra` changes every instance's catalog.
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

/// Without the feature: no flags.
#[cfg(not(feature = "redis"))]
#[derive(Debug, clap::Args)]
pub(crate) struct RedisArgs {}

/// The shared state of `--redis`, or none (everything in this process).
#[derive(Debug, Clone, Default)]
pub(crate) struct Shared(#[cfg(feature = "redis")] Option<smcpd::cluster::Cluster>);

#[cfg(feature = "redis")]
impl RedisArgs {
    /// Connects to `--redis`, if given.
    pub(crate) fn connect(&self) -> anyhow::Result<Shared> {
        use anyhow::Context as _;
        let Some(url) = &self.url else {
            return Ok(Shared(None));
        };
        let cluster =
            smcpd::cluster::Cluster::connect(url, &self.redis_prefix).context("--redis")?;
        tracing::info!(prefix = %self.redis_prefix, "sharing state through Redis");
        Ok(Shared(Some(cluster)))
    }
}

#[cfg(feature = "redis")]
impl Shared {
    /// Readiness fails while Redis does not answer.
    pub(crate) fn health_checks(&self, checks: &mut Vec<Arc<dyn HealthCheck>>) {
        if let Some(cluster) = &self.0 {
            checks.push(Arc::new(cluster.health()));
        }
    }

    /// The bus, the replay guard, the session store and relay, and the shared catalog in `config`.
    pub(crate) fn configure(&self, config: &mut smcpd::DemoConfig) {
        config.cluster.clone_from(&self.0);
    }

    /// Once the server is built: `toggle_extra` through the shared catalog.
    pub(crate) async fn attach(&self, server: &smcp_server::Server) -> anyhow::Result<()> {
        if let Some(cluster) = &self.0 {
            cluster.attach_catalog(server).await?;
        }
        Ok(())
    }

    /// Once the server is built: the bus lag in its metrics.
    pub(crate) fn observe(&self, server: &smcp_server::Server) {
        if let Some(cluster) = &self.0 {
            cluster.observe_bus_lag(server.metrics());
        }
    }

    /// The replay guard every instance shares (`SET NX` in Redis), for ids that must be
    /// used once across the deployment (DPoP proofs' `jti`); `None` without `--redis`.
    pub(crate) fn replay_guard(&self) -> Option<Arc<dyn smcp_server::mrtr::ReplayGuard>> {
        self.0
            .as_ref()
            .map(|cluster| Arc::new(smcp_redis::RedisReplayGuard::new(&cluster.redis)) as _)
    }

    /// The rate limit buckets every instance shares, each instance taking at most `prefetch`
    /// tokens of a bucket at once; `None` without `--redis`.
    pub(crate) fn rate_limiter(
        &self,
        prefetch: u32,
    ) -> Option<Arc<dyn smcp_server::ratelimit::RateLimiter>> {
        self.0.as_ref().map(|cluster| {
            Arc::new(smcp_redis::RedisRateLimiter::new(&cluster.redis).max_prefetch(prefetch)) as _
        })
    }
}

#[cfg(all(feature = "redis", feature = "gateway"))]
impl Shared {
    /// The other gateway instances on the bus, so that a retry reaching this one is
    /// forwarded to the instance holding its call; `None` without `--redis`.
    pub(crate) fn gateway_peers(&self) -> Option<Arc<dyn smcp_gateway::Peers>> {
        self.0
            .as_ref()
            .map(|cluster| Arc::new(smcp_gateway::RedisPeers::new(&cluster.bus)) as _)
    }
}

#[cfg(all(not(feature = "redis"), feature = "gateway"))]
impl Shared {
    /// No other instances.
    pub(crate) fn gateway_peers(&self) -> Option<Arc<dyn smcp_gateway::Peers>> {
        None
    }
}

#[cfg(all(feature = "redis", feature = "tasks"))]
impl Shared {
    /// The SEP-2663 task store every instance shares (at most `max` live tasks across them),
    /// with leases; `None` without `--redis`.
    pub(crate) fn task_store(&self, max: usize) -> Option<Arc<dyn smcp_tasks::TaskStore>> {
        self.0
            .as_ref()
            .map(|cluster| Arc::new(smcp_redis::RedisTaskStore::new(&cluster.redis, max)) as _)
    }
}

#[cfg(all(not(feature = "redis"), feature = "tasks"))]
impl Shared {
    /// No shared task store.
    pub(crate) fn task_store(&self, _max: usize) -> Option<Arc<dyn smcp_tasks::TaskStore>> {
        None
    }
}

#[cfg(not(feature = "redis"))]
impl RedisArgs {
    /// Nothing to connect to.
    pub(crate) fn connect(&self) -> anyhow::Result<Shared> {
        Ok(Shared())
    }
}

#[cfg(not(feature = "redis"))]
impl Shared {
    /// No checks.
    pub(crate) fn health_checks(&self, _checks: &mut Vec<Arc<dyn HealthCheck>>) {}

    /// Nothing to configure.
    pub(crate) fn configure(&self, _config: &mut smcpd::DemoConfig) {}

    /// Nothing to attach.
    pub(crate) async fn attach(&self, _server: &smcp_server::Server) -> anyhow::Result<()> {
        Ok(())
    }

    /// Nothing to observe.
    pub(crate) fn observe(&self, _server: &smcp_server::Server) {}

    /// No shared replay guard.
    pub(crate) fn replay_guard(&self) -> Option<Arc<dyn smcp_server::mrtr::ReplayGuard>> {
        None
    }

    /// No shared rate limit buckets.
    pub(crate) fn rate_limiter(
        &self,
        _prefetch: u32,
    ) -> Option<Arc<dyn smcp_server::ratelimit::RateLimiter>> {
        None
    }
}
