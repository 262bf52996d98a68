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

    /// [`first_use`](Self::first_use), telling a replay from a guard that refuses because it
    /// cannot remember one more id ([`Redeem::Full`]). The default knows only the first two.
    fn redeem(&self, state_id: &str, expires_at: SystemTime) -> BoxFuture<Redeem> {
        let first = self.first_use(state_id, expires_at);
        Box::pin(async move {
            if first.await {
                Redeem::First
            } else {
                Redeem::Seen
            }
        })
    }
}

/// What [`ReplayGuard::redeem`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redeem {
    /// The first use: go on.
    First,
    /// Seen before: a replay.
    Seen,
    /// Not seen, but refused: the guard holds as many live ids as it may (fail closed).
    Full,
}

impl std::fmt::Debug for dyn ReplayGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReplayGuard")
    }
}

/// An in-memory guard for a single instance. Expired ids are purged as new ones arrive
/// (whenever the map has doubled since the last purge, so memory follows the ids still live
/// rather than the capacity); past `capacity` live ids, new ones are refused (fail closed)
/// rather than growing memory.
pub struct MemoryReplayGuard {
    seen: Mutex<Seen>,
    capacity: usize,
    clock: Clock,
}

/// The ids, and the size at which expired ones are purged next.
#[derive(Debug, Default)]
struct Seen {
    ids: HashMap<String, SystemTime>,
    purge_at: usize,
}

/// The smallest map a purge is worth it for.
const MIN_PURGE_AT: usize = 1024;

impl std::fmt::Debug for MemoryReplayGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryReplayGuard")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl MemoryReplayGuard {
    /// A guard remembering at most `capacity` unexpired ids.
    ///
    /// # Examples
    ///
    /// See [`ServerBuilder::replay_guard`](crate::ServerBuilder::replay_guard).
    pub fn new(capacity: usize) -> Self {
        Self::with_clock(capacity, system_clock())
    }

    /// A guard whose expiry reads `clock` (the one [`super::MrtrConfig::clock`] uses, in tests).
    pub fn with_clock(capacity: usize, clock: Clock) -> Self {
        Self {
            seen: Mutex::new(Seen::default()),
            capacity,
            clock,
        }
    }

    /// Ids remembered now, expired ones not yet purged included.
    pub fn remembered(&self) -> usize {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .ids
            .len()
    }
}

impl ReplayGuard for MemoryReplayGuard {
    fn first_use(&self, state_id: &str, expires_at: SystemTime) -> BoxFuture<bool> {
        let fresh = self.redeem_now(state_id, expires_at) == Redeem::First;
        Box::pin(async move { fresh })
    }

    fn redeem(&self, state_id: &str, expires_at: SystemTime) -> BoxFuture<Redeem> {
        let redeem = self.redeem_now(state_id, expires_at);
        Box::pin(async move { redeem })
    }
}

impl MemoryReplayGuard {
    fn redeem_now(&self, state_id: &str, expires_at: SystemTime) -> Redeem {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = (self.clock)();
        if seen.ids.len() >= seen.purge_at.max(MIN_PURGE_AT).min(self.capacity) {
            seen.ids.retain(|_, exp| *exp > now);
            let live = seen.ids.len();
            if seen.ids.capacity() > 4 * live.max(MIN_PURGE_AT) {
                seen.ids.shrink_to(2 * live);
            }
            seen.purge_at = 2 * live;
        }
        if seen.ids.contains_key(state_id) {
            Redeem::Seen
        } else if seen.ids.len() >= self.capacity {
            Redeem::Full
        } else {
            seen.ids.insert(state_id.to_owned(), expires_at);
            Redeem::First
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    #[tokio::test]
    async fn redeem_tells_a_replay_from_a_full_guard() {
        let guard = MemoryReplayGuard::new(1);
        let later = SystemTime::now() + Duration::from_secs(60);
        assert_eq!(guard.redeem("a", later).await, Redeem::First);
        assert_eq!(guard.redeem("a", later).await, Redeem::Seen);
        assert_eq!(guard.redeem("b", later).await, Redeem::Full);
        // The trait's default, for a guard that only answers first_use.
        struct Plain(MemoryReplayGuard);
        impl ReplayGuard for Plain {
            fn first_use(&self, id: &str, expires_at: SystemTime) -> BoxFuture<bool> {
                self.0.first_use(id, expires_at)
            }
        }
        let plain = Plain(MemoryReplayGuard::new(1));
        assert_eq!(plain.redeem("a", later).await, Redeem::First);
        assert_eq!(plain.redeem("a", later).await, Redeem::Seen);
    }

    #[tokio::test]
    async fn expired_ids_are_purged_long_before_the_capacity_is_reached() {
        let secs = Arc::new(AtomicU64::new(0));
        let clock_secs = secs.clone();
        let clock: Clock = Arc::new(move || {
            SystemTime::UNIX_EPOCH + Duration::from_secs(clock_secs.load(Ordering::Relaxed))
        });
        let guard = MemoryReplayGuard::with_clock(100_000, clock);
        // One round a second, each state valid for 60 s: never more than ~60 live ids.
        for i in 0..20_000u64 {
            secs.store(i, Ordering::Relaxed);
            let expires = SystemTime::UNIX_EPOCH + Duration::from_secs(i + 60);
            assert!(guard.first_use(&format!("s{i}"), expires).await);
            assert!(
                !guard.first_use(&format!("s{i}"), expires).await,
                "replay of s{i}"
            );
        }
        let remembered = guard.remembered();
        assert!(
            remembered <= MIN_PURGE_AT,
            "{remembered} ids remembered with about 60 live"
        );
    }
}
