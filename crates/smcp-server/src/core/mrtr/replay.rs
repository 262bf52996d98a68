//! Single-use `requestState`, for handlers whose effect must happen at most once.
//!
//! Sealing bounds *where* and *until when* a state is valid, not *how often*: a client can
//! send the same retry twice. A tool built with `.single_use_state()` has every state it
//! receives checked against a [`ReplayGuard`] before the handler runs.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

use crate::core::keys::{Clock, system_clock};
use crate::core::tools::BoxFuture;

/// State ids the server's default guard remembers (each until its state expires); past that,
/// single-use retries are refused (fail closed) until older ids expire.
pub const DEFAULT_REPLAY_CAPACITY: usize = 100_000;

/// Remembers which state ids were used. Shared by every instance that may see a retry, so
/// a multi-instance deployment needs a shared store behind this trait (e.g. Redis `SET NX`).
pub trait ReplayGuard: Send + Sync + 'static {
    /// `true` the first time `state_id` is presented, `false` afterwards. `expires_at` says
    /// how long the id must be remembered.
    fn first_use(&self, state_id: &str, expires_at: SystemTime) -> BoxFuture<bool>;
}

impl std::fmt::Debug for dyn ReplayGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReplayGuard")
    }
}

/// An in-memory guard for a single instance. Expired ids are purged as new ones arrive;
/// past `capacity` live ids, new ones are refused (fail closed) rather than growing memory.
pub struct MemoryReplayGuard {
    seen: Mutex<HashMap<String, SystemTime>>,
    capacity: usize,
    clock: Clock,
}

impl std::fmt::Debug for MemoryReplayGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryReplayGuard")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl MemoryReplayGuard {
    /// A guard remembering at most `capacity` unexpired ids.
    pub fn new(capacity: usize) -> Self {
        Self::with_clock(capacity, system_clock())
    }

    /// A guard whose expiry reads `clock` (the one [`super::MrtrConfig::clock`] uses, in tests).
    pub fn with_clock(capacity: usize, clock: Clock) -> Self {
        Self {
            seen: Mutex::new(HashMap::new()),
            capacity,
            clock,
        }
    }
}

impl ReplayGuard for MemoryReplayGuard {
    fn first_use(&self, state_id: &str, expires_at: SystemTime) -> BoxFuture<bool> {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = (self.clock)();
        if seen.len() >= self.capacity {
            seen.retain(|_, exp| *exp > now);
        }
        let fresh = if seen.contains_key(state_id) || seen.len() >= self.capacity {
            false
        } else {
            seen.insert(state_id.to_owned(), expires_at);
            true
        };
        Box::pin(async move { fresh })
    }
}
