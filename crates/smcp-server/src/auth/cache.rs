//! Validated tokens, cached until they expire (or a shorter cap), so that a request with a
//! token already seen costs one map lookup.

use std::collections::HashMap;
use std::collections::hash_map::{DefaultHasher, RandomState};
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// Hashes only the length and the last 32 bytes of each write: a token's tail is its
/// signature (or, for an opaque token, random), so this spreads as well as hashing it all at a
/// fraction of the cost. Equality still compares the whole token.
#[derive(Debug, Clone, Default)]
struct TailState(RandomState);

impl BuildHasher for TailState {
    type Hasher = TailHasher;

    fn build_hasher(&self) -> TailHasher {
        TailHasher(self.0.build_hasher())
    }
}

struct TailHasher(DefaultHasher);

impl Hasher for TailHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.write_usize(bytes.len());
        self.0.write(&bytes[bytes.len().saturating_sub(32)..]);
    }

    fn finish(&self) -> u64 {
        self.0.finish()
    }
}

/// A cached value and when it stops being valid.
type Entry<V> = (Instant, Arc<V>);

/// A bounded map from token to what it was validated as.
#[derive(Debug)]
pub(crate) struct TokenCache<V> {
    map: RwLock<HashMap<Box<str>, Entry<V>, TailState>>,
    max_entries: usize,
    max_ttl: Duration,
}

impl<V> TokenCache<V> {
    pub(crate) fn new(max_entries: usize, max_ttl: Duration) -> Self {
        Self {
            map: RwLock::new(HashMap::default()),
            max_entries,
            max_ttl,
        }
    }

    /// The cached value for `token`, unless it has expired.
    pub(crate) fn get(&self, token: &str, now: Instant) -> Option<Arc<V>> {
        let map = self.map.read().ok()?;
        let (until, value) = map.get(token)?;
        (now < *until).then(|| value.clone())
    }

    /// Caches `value` for `token` until `expires` (capped at the cache's TTL). When the
    /// cache is full, expired entries are dropped first, then everything.
    pub(crate) fn insert(
        &self,
        token: &str,
        value: Arc<V>,
        expires: Option<Instant>,
        now: Instant,
    ) {
        if self.max_entries == 0 || self.max_ttl.is_zero() {
            return;
        }
        let cap = now + self.max_ttl;
        let until = expires.map_or(cap, |e| e.min(cap));
        if until <= now {
            return;
        }
        let Ok(mut map) = self.map.write() else {
            return;
        };
        if map.len() >= self.max_entries {
            map.retain(|_, (until, _)| *until > now);
            if map.len() >= self.max_entries {
                map.clear();
            }
        }
        map.insert(token.into(), (until, value));
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.read().map_or(0, |m| m.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_live_until_their_expiry_or_the_cap() {
        let cache = TokenCache::new(10, Duration::from_secs(60));
        let now = Instant::now();
        cache.insert("a", Arc::new(1), Some(now + Duration::from_secs(5)), now);
        cache.insert("b", Arc::new(2), None, now);
        assert_eq!(cache.get("a", now).as_deref(), Some(&1));
        assert_eq!(cache.get("a", now + Duration::from_secs(5)), None);
        assert_eq!(
            cache.get("b", now + Duration::from_secs(59)).as_deref(),
            Some(&2)
        );
        assert_eq!(cache.get("b", now + Duration::from_secs(60)), None);
        assert_eq!(cache.get("c", now), None);
    }

    #[test]
    fn a_full_cache_stays_bounded() {
        let cache = TokenCache::new(3, Duration::from_secs(60));
        let now = Instant::now();
        for i in 0..10 {
            cache.insert(&format!("t{i}"), Arc::new(i), None, now);
            assert!(cache.len() <= 3);
        }
        assert_eq!(cache.get("t9", now).as_deref(), Some(&9));
    }

    #[test]
    fn tokens_sharing_a_tail_are_still_told_apart() {
        let cache = TokenCache::new(10, Duration::from_secs(60));
        let now = Instant::now();
        let tail = "x".repeat(40);
        cache.insert(&format!("a{tail}"), Arc::new(1), None, now);
        cache.insert(&format!("b{tail}"), Arc::new(2), None, now);
        assert_eq!(cache.get(&format!("a{tail}"), now).as_deref(), Some(&1));
        assert_eq!(cache.get(&format!("b{tail}"), now).as_deref(), Some(&2));
        assert_eq!(cache.get(&format!("c{tail}"), now), None);
    }

    #[test]
    fn already_expired_tokens_are_not_cached() {
        let cache = TokenCache::new(3, Duration::from_secs(60));
        let now = Instant::now();
        cache.insert("old", Arc::new(0), Some(now), now);
        assert_eq!(cache.get("old", now), None);
    }
}
