//! [`SharedCatalog`]: one catalog across every instance.
//!
//! A runtime catalog change (`Server::add_tool`, …) runs application code on the instance
//! that makes it, so it cannot be shipped to the others as such. What can be shared is the
//! *state* the catalog derives from: the application describes its catalog state as a JSON
//! value and gives every instance the same function applying such a state to its own
//! `Server`. The mechanism:
//!
//! 1. [`SharedCatalog::update`] stores the new state in Redis and increments the revision in
//!    one atomic script (`<prefix>catalog`, a hash of `rev` and `state`);
//! 2. it applies the state on this instance, then publishes `{rev, state}` on the bus;
//! 3. every instance applies a revision newer than the one it has (an older one is
//!    ignored: the newest state wins), and each instance's own listeners are told of the
//!    change by the apply itself, *after* that instance's catalog changed. Applying runs in
//!    [`crate::local_only`], so the list-changed notifications it causes are not published
//!    again.
//!
//! An instance that was away from the bus reads the stored revision when it is back (and
//! every few seconds anyway) before telling its listeners that changes may have been missed,
//! and a starting instance applies the stored state before it serves.
//!
//! Once a client has seen `list_changed` from any instance, the revision is in Redis and
//! already on its way to every instance: another instance serves the new list as soon as the
//! message has reached it, which is the same moment it reached the instance that notified
//! the client (Redis writes a message to every subscriber in one pass), well before that
//! client's next request can arrive.

use std::sync::{Arc, Mutex, PoisonError};

use futures_util::FutureExt as _;
use serde_json::Value;

use crate::bus::{RevisionSink, local_only};
use crate::wire::CatalogRevision;
use crate::{Redis, RedisBus, RedisError};

/// Stores a state and returns its revision. KEYS: the hash. ARGV: the state.
const UPDATE: &str = r"
redis.call('HSET', KEYS[1], 'state', ARGV[1])
return redis.call('HINCRBY', KEYS[1], 'rev', 1)
";

/// Why the shared catalog could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// Redis failed; nothing was changed on any instance.
    #[error(transparent)]
    Redis(#[from] RedisError),
    /// The bus already has a shared catalog attached.
    #[error("a shared catalog is already attached to this bus")]
    AlreadyAttached,
}

type Apply = Box<dyn Fn(&Value) + Send + Sync>;

/// The revision and state applied on this instance, and the function applying them.
struct Applied {
    rev: u64,
    state: Value,
    apply: Apply,
}

/// The catalog state shared by every instance on the bus. Cheap to clone.
#[derive(Clone)]
pub struct SharedCatalog {
    inner: Arc<Inner>,
}

struct Inner {
    redis: Redis,
    bus: RedisBus,
    key: String,
    /// What is applied here, under one lock so that two revisions never apply at once or
    /// out of order.
    applied: Mutex<Applied>,
}

impl std::fmt::Debug for SharedCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedCatalog")
            .field("key", &self.inner.key)
            .field("revision", &self.revision())
            .finish_non_exhaustive()
    }
}

impl SharedCatalog {
    /// Attaches a shared catalog to `bus`. `apply` makes this instance's catalog match a
    /// state (it is called with every newer revision, on whichever thread receives it, and
    /// must not block). The stored state, if any, is applied before this returns; a Redis
    /// that cannot be reached now is not an error (the state is applied when the bus
    /// connects).
    pub async fn attach(
        bus: &RedisBus,
        apply: impl Fn(&Value) + Send + Sync + 'static,
    ) -> Result<Self, CatalogError> {
        let catalog = Self {
            inner: Arc::new(Inner {
                redis: bus.redis().clone(),
                bus: bus.clone(),
                key: bus.redis().key("catalog"),
                applied: Mutex::new(Applied {
                    rev: 0,
                    state: Value::Null,
                    apply: Box::new(apply),
                }),
            }),
        };
        if !bus.set_catalog(Arc::new(catalog.clone())) {
            return Err(CatalogError::AlreadyAttached);
        }
        if let Err(e) = catalog.refresh().await {
            tracing::warn!(error = %e, "shared catalog: stored state not read yet; will retry");
        }
        Ok(catalog)
    }

    /// Makes `state` the catalog of every instance; returns its revision. Fails, changing
    /// nothing anywhere, when Redis cannot store it.
    pub async fn update(&self, state: Value) -> Result<u64, CatalogError> {
        let redis = &self.inner.redis;
        let mut conn = redis.conn();
        let script = redis::Script::new(UPDATE);
        let mut call = script.key(&self.inner.key);
        call.arg(state.to_string());
        let rev: u64 = redis.bounded(call.invoke_async(&mut conn)).await?;
        let revision = CatalogRevision { rev, state };
        self.apply(&revision);
        self.inner.bus.publish_revision(revision);
        Ok(rev)
    }

    /// Reads the stored revision and applies it if it is newer than this instance's; `true`
    /// when it applied one.
    pub async fn refresh(&self) -> Result<bool, CatalogError> {
        let redis = &self.inner.redis;
        let mut conn = redis.conn();
        let (rev, state): (Option<u64>, Option<String>) = redis
            .bounded(
                redis::cmd("HMGET")
                    .arg(&self.inner.key)
                    .arg("rev")
                    .arg("state")
                    .query_async(&mut conn),
            )
            .await?;
        let (Some(rev), Some(state)) = (rev, state) else {
            return Ok(false);
        };
        let state: Value = serde_json::from_str(&state).map_err(|e| RedisError::Corrupt {
            key: self.inner.key.clone(),
            reason: e.to_string(),
        })?;
        Ok(self.apply(&CatalogRevision { rev, state }))
    }

    /// The revision applied on this instance (0: none yet).
    pub fn revision(&self) -> u64 {
        self.lock().rev
    }

    /// The state applied on this instance (`null` before the first revision).
    pub fn state(&self) -> Value {
        self.lock().state.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Applied> {
        self.inner
            .applied
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Applies `revision` if it is newer; `true` when it did.
    fn apply(&self, revision: &CatalogRevision) -> bool {
        let mut applied = self.lock();
        if revision.rev <= applied.rev {
            return false;
        }
        local_only(|| (applied.apply)(&revision.state));
        applied.rev = revision.rev;
        applied.state = revision.state.clone();
        tracing::info!(revision = revision.rev, "shared catalog: applied");
        true
    }
}

impl RevisionSink for SharedCatalog {
    fn revision(&self, rev: CatalogRevision) {
        self.apply(&rev);
    }

    fn refresh(&self) -> futures_util::future::BoxFuture<'static, ()> {
        let this = self.clone();
        async move {
            if let Err(e) = SharedCatalog::refresh(&this).await {
                tracing::warn!(error = %e, "shared catalog: cannot read the stored revision");
            }
        }
        .boxed()
    }
}
