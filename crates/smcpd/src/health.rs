//! Readiness checks smcpd registers besides its own drain state: the file store (here) and
//! Redis (`cluster::RedisHealth`).

use std::sync::Arc;

use smcp_files::FileStore;
use smcp_server::core::health::{CheckFuture, HealthCheck, Unhealthy};

/// Readiness of the SEP-2631 file store: a record lookup (of an id no file has) answers.
#[derive(Debug, Clone)]
pub struct StoreHealth {
    store: Arc<dyn FileStore>,
}

impl StoreHealth {
    /// A check of `store`.
    pub fn new(store: Arc<dyn FileStore>) -> Self {
        Self { store }
    }
}

/// An id no record has: the lookup answers "none" from a healthy store.
const PROBE_ID: &str = "readiness-probe";

impl HealthCheck for StoreHealth {
    fn name(&self) -> &str {
        "files-store"
    }

    fn check(&self) -> CheckFuture<'_> {
        Box::pin(async move {
            self.store
                .meta(PROBE_ID)
                .await
                .map(|_| ())
                .map_err(|e| Unhealthy::new(e.to_string()))
        })
    }
}
