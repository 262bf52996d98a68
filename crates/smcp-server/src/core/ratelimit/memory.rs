//! Buckets in this process: a map from bucket to its GCRA time, bounded in size, buckets that
//! are full again forgotten.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use super::limiter::{Bucket, BucketKey, Decision, RateLimiter, Verdict, gcra, unix_micros};

/// Buckets a [`MemoryRateLimiter`] holds by default.
pub const DEFAULT_MAX_BUCKETS: usize = 100_000;

/// How often full buckets are swept out.
const SWEEP_EVERY_MICROS: u64 = 1_000_000;
/// With the map full, how often it may be swept for a newcomer, at most: a sweep reads every
/// bucket, and a flood of newcomers must not make every request pay for one.
const FULL_SWEEP_EVERY_MICROS: u64 = 10_000;

/// The default limiter: buckets in this process, for one instance (instances behind a load
/// balancer each count on their own; share a store to count together).
///
/// Memory is bounded: a bucket that is full again (idle for `burst` intervals) is the same as
/// no bucket, and is dropped at the next sweep (once a second, and, while the map is full, when
/// a bucket may have become full again, at most every 10 ms). When `max_buckets` buckets are
/// all in use, a request that needs a new one is
/// refused until the soonest of them is full again: a flood of new callers cannot grow the
/// map, nor reset anyone's bucket.
///
/// # Examples
///
/// ```
/// use std::time::SystemTime;
/// use smcp_server::ratelimit::{Bucket, BucketKey, Decision, MemoryRateLimiter, Rate, RateLimiter, Verdict};
///
/// let limiter = MemoryRateLimiter::new(1000);
/// let bucket = Bucket {
///     key: BucketKey { rule: "principal", subject: Some("p:alice") },
///     rate: Rate::per_second(1).and_burst(2),
/// };
/// let now = SystemTime::now();
/// let decide = || match limiter.decide(&[bucket], now) {
///     Verdict::Ready(Ok(decision)) => decision,
///     other => panic!("{other:?}"),
/// };
/// assert_eq!(decide(), Decision::Allowed);
/// assert_eq!(decide(), Decision::Allowed);
/// assert!(matches!(decide(), Decision::Refused { bucket: 0, .. }));
/// ```
#[derive(Debug)]
pub struct MemoryRateLimiter {
    max_buckets: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Bucket key → the time (µs since the epoch) the bucket is full again.
    buckets: HashMap<String, u64>,
    /// No periodic sweep before this time.
    next_sweep: u64,
    /// When the last sweep ran.
    last_sweep: u64,
    /// The earliest time a bucket is full again, as of the last sweep and the buckets added
    /// since (a bucket taken from since may be later: then a sweep finds less than hoped).
    soonest_full: u64,
    /// Where keys are written to look them up.
    scratch: String,
}

fn write_key(out: &mut String, key: &BucketKey<'_>) {
    out.clear();
    out.push_str(key.rule);
    if let Some(subject) = key.subject {
        // Rule labels never hold U+001F, so the first one ends the rule.
        let _ = write!(out, "\u{1f}{subject}");
    }
}

impl MemoryRateLimiter {
    /// A limiter of at most `max_buckets` buckets (at least 1).
    pub fn new(max_buckets: usize) -> Self {
        Self {
            max_buckets: max_buckets.max(1),
            state: Mutex::new(State::default()),
        }
    }

    /// Buckets held now (full ones not yet swept included).
    pub fn len(&self) -> usize {
        self.lock().buckets.len()
    }

    /// Whether no bucket is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn decide_now(&self, buckets: &[Bucket<'_>], now: u64) -> Decision {
        let mut guard = self.lock();
        let state = &mut *guard;
        let full = state.buckets.len() >= self.max_buckets;
        if now >= state.next_sweep
            || (full
                && now >= state.soonest_full
                && now >= state.last_sweep.saturating_add(FULL_SWEEP_EVERY_MICROS))
        {
            sweep(state, now);
        }
        let mut refused: Option<(usize, u64)> = None;
        let mut new_keys = 0;
        for (i, bucket) in buckets.iter().enumerate() {
            write_key(&mut state.scratch, &bucket.key);
            let tat = state.buckets.get(state.scratch.as_str()).copied();
            if tat.is_none() {
                new_keys += 1;
            }
            if let Err(wait) = gcra(tat, now, bucket.rate)
                && refused.is_none_or(|(_, w)| wait > w)
            {
                refused = Some((i, wait));
            }
        }
        if refused.is_none() && state.buckets.len() + new_keys > self.max_buckets {
            // Full of buckets in use: refuse until the soonest is full again.
            let wait = state.soonest_full.saturating_sub(now).max(1);
            let newcomer = buckets.iter().position(|b| {
                write_key(&mut state.scratch, &b.key);
                !state.buckets.contains_key(state.scratch.as_str())
            });
            refused = Some((newcomer.unwrap_or(0), wait));
        }
        if let Some((bucket, wait)) = refused {
            return Decision::Refused {
                bucket,
                retry_after: Duration::from_micros(wait),
            };
        }
        // Every bucket has a token: take them (the same step again, now that it is known to
        // succeed for all).
        for bucket in buckets {
            write_key(&mut state.scratch, &bucket.key);
            match state.buckets.get_mut(state.scratch.as_str()) {
                Some(tat) => *tat = gcra(Some(*tat), now, bucket.rate).unwrap_or(*tat),
                None => {
                    let tat = gcra(None, now, bucket.rate).unwrap_or(now);
                    state.soonest_full = state.soonest_full.min(tat);
                    state.buckets.insert(state.scratch.clone(), tat);
                }
            }
        }
        Decision::Allowed
    }
}

/// Drops every bucket that is full again, and notes when the soonest of the others will be.
fn sweep(state: &mut State, now: u64) {
    let mut soonest = u64::MAX;
    state.buckets.retain(|_, tat| {
        let keep = *tat > now;
        if keep {
            soonest = soonest.min(*tat);
        }
        keep
    });
    state.soonest_full = soonest;
    state.last_sweep = now;
    state.next_sweep = now.saturating_add(SWEEP_EVERY_MICROS);
}

impl Default for MemoryRateLimiter {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_BUCKETS)
    }
}

impl RateLimiter for MemoryRateLimiter {
    fn decide(&self, buckets: &[Bucket<'_>], now: SystemTime) -> Verdict {
        Verdict::Ready(Ok(self.decide_now(buckets, unix_micros(now))))
    }
}

#[cfg(test)]
mod tests {
    use super::super::rate::Rate;
    use super::*;

    fn bucket<'a>(rule: &'a str, subject: Option<&'a str>, rate: Rate) -> Bucket<'a> {
        Bucket {
            key: BucketKey { rule, subject },
            rate,
        }
    }

    const T0: u64 = 1_700_000_000_000_000;

    #[test]
    fn buckets_are_all_or_nothing() {
        let limiter = MemoryRateLimiter::new(100);
        let principal = bucket("principal", Some("p:a"), Rate::per_second(1).and_burst(5));
        let tool = bucket("tool:x", Some("p:a"), Rate::per_second(1).and_burst(2));
        let both = [principal, tool];
        assert_eq!(limiter.decide_now(&both, T0), Decision::Allowed);
        assert_eq!(limiter.decide_now(&both, T0), Decision::Allowed);
        assert_eq!(
            limiter.decide_now(&both, T0),
            Decision::Refused {
                bucket: 1,
                retry_after: Duration::from_secs(1)
            }
        );
        // The refusal took nothing from the principal's bucket: three more are there.
        for _ in 0..3 {
            assert_eq!(limiter.decide_now(&[principal], T0), Decision::Allowed);
        }
        assert!(matches!(
            limiter.decide_now(&[principal], T0),
            Decision::Refused { bucket: 0, .. }
        ));
    }

    #[test]
    fn subjects_and_rules_have_their_own_buckets() {
        let limiter = MemoryRateLimiter::new(100);
        let rate = Rate::per_second(1).and_burst(1);
        assert_eq!(
            limiter.decide_now(&[bucket("principal", Some("p:a"), rate)], T0),
            Decision::Allowed
        );
        assert_eq!(
            limiter.decide_now(&[bucket("principal", Some("p:b"), rate)], T0),
            Decision::Allowed
        );
        assert_eq!(
            limiter.decide_now(&[bucket("tool:t", Some("p:a"), rate)], T0),
            Decision::Allowed
        );
        assert_eq!(
            limiter.decide_now(&[bucket("tool:t", None, rate)], T0),
            Decision::Allowed
        );
        assert_eq!(limiter.len(), 4);
    }

    #[test]
    fn idle_buckets_are_evicted_and_the_map_is_bounded() {
        let limiter = MemoryRateLimiter::new(3);
        let rate = Rate::per_second(10).and_burst(1); // full again 100 ms after use
        let subjects = ["p:a", "p:b", "p:c"];
        for s in subjects {
            assert_eq!(
                limiter.decide_now(&[bucket("principal", Some(s), rate)], T0),
                Decision::Allowed
            );
        }
        // A fourth caller while the three are in use: refused, until the soonest is full.
        let d = bucket("principal", Some("p:d"), rate);
        assert_eq!(
            limiter.decide_now(&[d], T0 + 40_000),
            Decision::Refused {
                bucket: 0,
                retry_after: Duration::from_millis(60)
            }
        );
        assert_eq!(limiter.len(), 3);
        // Once they are full again they are swept and the newcomer gets a bucket.
        assert_eq!(limiter.decide_now(&[d], T0 + 100_000), Decision::Allowed);
        assert_eq!(limiter.len(), 1);
        // And a sweep a second later drops it too.
        assert_eq!(
            limiter.decide_now(&[bucket("tool:t", None, rate)], T0 + 2_000_000),
            Decision::Allowed
        );
        assert_eq!(limiter.len(), 1);
    }

    #[test]
    fn many_buckets_in_one_decision() {
        let limiter = MemoryRateLimiter::new(100);
        let rate = Rate::per_second(1).and_burst(1);
        let names = ["a", "b", "c", "d", "e", "f"];
        let buckets: Vec<_> = names.iter().map(|n| bucket(n, None, rate)).collect();
        assert_eq!(limiter.decide_now(&buckets, T0), Decision::Allowed);
        assert!(matches!(
            limiter.decide_now(&buckets[5..], T0),
            Decision::Refused { bucket: 0, .. }
        ));
    }
}
