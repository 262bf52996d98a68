//! Several `smcpd` instances serving one deployment: what they share in Redis (`--redis`).
//!
//! With a Redis URL, the demo server takes its change bus, its single-use replay guard, its
//! legacy session store and its legacy session relay from [`smcp_redis`], and `toggle_extra` changes the catalog of
//! every instance through a [`SharedCatalog`] (the state `{"extra": bool}`). `docs/deploy.md`
//! is the operator's side.

use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};
use smcp_redis::{CatalogError, Redis, RedisBus, RedisError, SharedCatalog};
use smcp_server::Server;
use smcp_server::core::health::{CheckFuture, HealthCheck, Unhealthy};

/// The shared state of a cluster of instances.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// The Redis handle (command connection, key prefix).
    pub redis: Redis,
    /// The change bus every instance subscribes to.
    pub bus: RedisBus,
    catalog: CatalogSlot,
}

/// Where the shared catalog goes once the server it applies to is built.
#[derive(Debug, Clone, Default)]
pub struct CatalogSlot(Arc<OnceLock<SharedCatalog>>);

impl CatalogSlot {
    /// The shared catalog, once attached.
    pub fn get(&self) -> Option<&SharedCatalog> {
        self.0.get()
    }
}

impl Cluster {
    /// Connects (lazily: Redis may come up later) and starts the bus. Needs a Tokio runtime.
    pub fn connect(url: &str, prefix: &str) -> Result<Self, RedisError> {
        let redis = Redis::builder(url).key_prefix(prefix).build()?;
        let bus = RedisBus::start(&redis);
        Ok(Self {
            redis,
            bus,
            catalog: CatalogSlot::default(),
        })
    }

    /// The slot the demo's `toggle_extra` reads.
    pub fn catalog_slot(&self) -> CatalogSlot {
        self.catalog.clone()
    }

    /// Attaches the shared catalog to `server`: applies the stored state now and every newer
    /// revision from any instance.
    pub async fn attach_catalog(&self, server: &Server) -> Result<(), CatalogError> {
        let target = server.clone();
        let catalog =
            SharedCatalog::attach(&self.bus, move |state| apply_demo_state(&target, state)).await?;
        // Set once per cluster; a second attach would have failed above.
        let _ = self.catalog.0.set(catalog);
        Ok(())
    }
}

/// Makes the demo catalog match `state`: `{"extra": true}` has the tool `extra`.
fn apply_demo_state(server: &Server, state: &Value) {
    let extra = state.get("extra").and_then(Value::as_bool).unwrap_or(false);
    if extra {
        if let Err(e) = server.replace_tool(crate::extra_tool::extra_tool()) {
            tracing::error!(error = %e, "shared catalog: cannot add the extra tool");
        }
    } else {
        server.remove_tool(crate::extra_tool::EXTRA_TOOL);
    }
}

/// `toggle_extra` on a cluster: the new state for every instance; returns whether the tool
/// is now present.
pub async fn toggle_shared(catalog: &SharedCatalog) -> Result<bool, CatalogError> {
    let present = catalog.state().get("extra").and_then(Value::as_bool) == Some(true);
    catalog.update(json!({ "extra": !present })).await?;
    Ok(!present)
}

/// Readiness of the Redis link: `PING` answers and the bus's subscriber is connected.
#[derive(Debug, Clone)]
pub struct RedisHealth {
    redis: Redis,
    bus: RedisBus,
}

impl Cluster {
    /// The readiness check of this cluster's Redis.
    pub fn health(&self) -> RedisHealth {
        RedisHealth {
            redis: self.redis.clone(),
            bus: self.bus.clone(),
        }
    }

    /// Feeds the bus's lag (publish to local delivery, across instances) to `metrics`.
    pub fn observe_bus_lag(&self, metrics: smcp_server::core::metrics::MetricsHandle) {
        self.bus.on_lag(move |lag| metrics.bus_lag(lag));
    }
}

impl HealthCheck for RedisHealth {
    fn name(&self) -> &str {
        "redis"
    }

    fn check(&self) -> CheckFuture<'_> {
        Box::pin(async move {
            self.redis
                .ping()
                .await
                .map_err(|e| Unhealthy::new(e.to_string()))?;
            if self.bus.status().connected {
                Ok(())
            } else {
                Err(Unhealthy::new(
                    "the change bus is not subscribed (reconnecting)",
                ))
            }
        })
    }
}
