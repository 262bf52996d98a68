//! An instance's local share of the shared buckets: when Redis gives a token it may give a few
//! more at once (a slice), which this instance then spends without asking again, for at most
//! [`LIFETIME`]; what it did not spend goes back to the bucket with its next request to Redis.
//!
//! Nothing is ever allowed beyond a bucket's rate and burst: a token is taken from Redis
//! before it is spent here. What a slice costs is the other way: while an instance holds
//! tokens it has not spent, another instance may be refused one. A bucket of burst `B` gives
//! at most `B / 16` (and at most the limiter's `max_prefetch`, and at most what refills in
//! [`LIFETIME`]) to one instance at a time; a bucket too small for that is asked about on
//! every request, exactly.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use smcp_server::ratelimit::{Bucket, LimitError};

use super::batch::{Answer, Want};

/// How long a slice's tokens may be spent before they go back.
pub(crate) const LIFETIME: Duration = Duration::from_secs(1);

/// A bucket gives one instance at most this fraction of its burst at once.
const SHARE_OF_BURST: u32 = 16;

/// At most this many buckets keep a slice in one process; past it, a new bucket is asked
/// about exactly on every request until stale slices make room.
const MAX_SLICES: usize = 65_536;

/// The tokens this instance holds of one bucket.
#[derive(Debug)]
struct Slice {
    /// Not spent yet.
    left: u32,
    /// When Redis gave them.
    taken_at: Instant,
    /// Since when a request is asking Redis for a slice of this bucket (the others ask for
    /// one token meanwhile); a request that gave up without an answer stops counting after
    /// [`LIFETIME`].
    fetching: Option<Instant>,
}

impl Slice {
    fn fresh(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.taken_at) < LIFETIME
    }

    fn fetching(&self, now: Instant) -> bool {
        self.fetching
            .is_some_and(|since| now.saturating_duration_since(since) < LIFETIME)
    }
}

/// Every bucket's slice in this process.
#[derive(Debug)]
pub(crate) struct Slices {
    max: u32,
    table: Mutex<HashMap<String, Slice>>,
    /// When the full table was last swept of spent and stale slices (at most once per
    /// [`LIFETIME`], so a flood of new buckets does not scan it on every request).
    swept: Mutex<Option<Instant>>,
}

/// What one request needs from Redis after its local slices.
#[derive(Debug)]
pub(crate) struct Plan {
    /// To ask Redis, one per bucket without a local token.
    pub(crate) wants: Vec<Want>,
    /// For each want: the bucket's index in the request, and whether it asked for a slice.
    asked: Vec<(usize, bool)>,
    /// The keys of the buckets whose token was taken here, given back if Redis refuses.
    reserved: Vec<String>,
}

impl Plan {
    /// The index in the request of the bucket the `i`-th want is about.
    pub(crate) fn bucket(&self, want: usize) -> usize {
        self.asked.get(want).map_or(0, |(i, _)| *i)
    }
}

impl Slices {
    /// Slices of at most `max` tokens (`max` ≤ 1: none, every request asks Redis).
    pub(crate) fn new(max: u32) -> Self {
        Self {
            max,
            table: Mutex::new(HashMap::new()),
            swept: Mutex::new(None),
        }
    }

    /// Drops the slices that hold nothing usable, unless that was done less than
    /// [`LIFETIME`] ago.
    fn sweep(&self, table: &mut HashMap<String, Slice>, now: Instant) {
        let Ok(mut swept) = self.swept.lock() else {
            return;
        };
        if swept.is_some_and(|at| now.saturating_duration_since(at) < LIFETIME) {
            return;
        }
        *swept = Some(now);
        table.retain(|_, s| s.fetching(now) || (s.left > 0 && s.fresh(now)));
    }

    /// How many tokens to ask of a bucket when it has none here.
    fn share(&self, bucket: &Bucket<'_>) -> u32 {
        let interval = bucket.rate.interval_micros().max(1);
        let refills =
            u32::try_from(LIFETIME.as_micros() / u128::from(interval)).unwrap_or(u32::MAX);
        (bucket.rate.burst() / SHARE_OF_BURST)
            .min(self.max)
            .min(refills)
            .max(1)
    }

    /// Takes one token of every bucket here if each has one (`None`: the request is allowed),
    /// else takes those there are and says what to ask Redis.
    pub(crate) fn plan(
        &self,
        keys: Vec<String>,
        buckets: &[Bucket<'_>],
        now: Instant,
    ) -> Option<Plan> {
        let exact = |key: String, b: &Bucket<'_>| Want {
            key,
            interval: b.rate.interval_micros(),
            burst: b.rate.burst(),
            want: 1,
            refund: 0,
        };
        let table = if self.max > 1 {
            self.table.lock().ok()
        } else {
            None
        };
        let Some(mut table) = table else {
            return Some(Plan {
                asked: (0..keys.len()).map(|i| (i, false)).collect(),
                wants: keys
                    .into_iter()
                    .zip(buckets)
                    .map(|(k, b)| exact(k, b))
                    .collect(),
                reserved: Vec::new(),
            });
        };
        let local = |t: &HashMap<String, Slice>, key: &String| {
            t.get(key).is_some_and(|s| s.left > 0 && s.fresh(now))
        };
        if keys.iter().all(|k| local(&table, k)) {
            for key in &keys {
                if let Some(slice) = table.get_mut(key) {
                    slice.left -= 1;
                }
            }
            return None;
        }
        let mut plan = Plan {
            wants: Vec::new(),
            asked: Vec::new(),
            reserved: Vec::new(),
        };
        for (i, (key, bucket)) in keys.into_iter().zip(buckets).enumerate() {
            if local(&table, &key) {
                if let Some(slice) = table.get_mut(&key) {
                    slice.left -= 1;
                }
                plan.reserved.push(key);
                continue;
            }
            let mut want = exact(key, bucket);
            let share = self.share(bucket);
            if share > 1 && !table.contains_key(&want.key) && table.len() >= MAX_SLICES {
                self.sweep(&mut table, now);
            }
            let room = table.len() < MAX_SLICES;
            match table.get_mut(&want.key) {
                Some(slice) => {
                    if !slice.fresh(now) {
                        want.refund = std::mem::take(&mut slice.left);
                    }
                    if share > 1 && !slice.fetching(now) {
                        slice.fetching = Some(now);
                        want.want = share;
                    }
                }
                None if share > 1 && room => {
                    table.insert(
                        want.key.clone(),
                        Slice {
                            left: 0,
                            taken_at: now,
                            fetching: Some(now),
                        },
                    );
                    want.want = share;
                }
                None => {}
            }
            plan.asked.push((i, want.want > 1));
            plan.wants.push(want);
        }
        Some(plan)
    }

    /// Keeps what Redis gave beyond this request's token, gives back the tokens taken here if
    /// it refused. A store that failed lets the request through: the local tokens stay spent.
    pub(crate) fn settle(
        &self,
        plan: &Plan,
        keys: &[String],
        answer: &Result<Answer, LimitError>,
        now: Instant,
    ) {
        if self.max <= 1 {
            return;
        }
        let Ok(mut table) = self.table.lock() else {
            return;
        };
        let granted = match answer {
            Ok(Answer::Granted(counts)) => Some(counts),
            _ => None,
        };
        for (n, (_, sliced)) in plan.asked.iter().enumerate() {
            let Some(key) = keys.get(n) else { continue };
            let count = granted.and_then(|c| c.get(n)).copied().unwrap_or(0);
            let room = table.len() < MAX_SLICES;
            match table.get_mut(key) {
                Some(slice) => {
                    if *sliced {
                        slice.fetching = None;
                    }
                    if count > 1 {
                        slice.left = slice.left.saturating_add(count - 1);
                        slice.taken_at = now;
                    }
                }
                None if count > 1 && room => {
                    table.insert(
                        key.clone(),
                        Slice {
                            left: count - 1,
                            taken_at: now,
                            fetching: None,
                        },
                    );
                }
                None => {}
            }
        }
        if matches!(answer, Ok(Answer::Refused { .. })) {
            for key in &plan.reserved {
                if let Some(slice) = table.get_mut(key) {
                    slice.left = slice.left.saturating_add(1);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use smcp_server::ratelimit::{BucketKey, Rate};

    use super::*;

    fn bucket(rule: &'static str, per_second: u32, burst: u32) -> Bucket<'static> {
        Bucket {
            key: BucketKey {
                rule,
                subject: Some("p:alice"),
            },
            rate: Rate::per_second(per_second).and_burst(burst),
        }
    }

    fn keys(buckets: &[Bucket<'_>]) -> Vec<String> {
        buckets.iter().map(|b| b.key.rule.to_owned()).collect()
    }

    fn granted(slices: &Slices, plan: &Plan, counts: Vec<u32>, now: Instant) {
        let keys: Vec<String> = plan.wants.iter().map(|w| w.key.clone()).collect();
        slices.settle(plan, &keys, &Ok(Answer::Granted(counts)), now);
    }

    #[test]
    fn a_slice_is_spent_locally_then_asked_for_again() {
        let slices = Slices::new(64);
        let b = [bucket("fast", 100, 160)]; // a sixteenth of the burst: 10
        let now = Instant::now();
        let plan = slices.plan(keys(&b), &b, now).unwrap();
        assert_eq!(plan.wants[0].want, 10);
        // A second request while the first is asking: one token, exactly.
        let meanwhile = slices.plan(keys(&b), &b, now).unwrap();
        assert_eq!(meanwhile.wants[0].want, 1);
        granted(&slices, &plan, vec![10], now);
        for _ in 0..9 {
            assert!(slices.plan(keys(&b), &b, now).is_none(), "spent here");
        }
        let plan = slices.plan(keys(&b), &b, now).unwrap();
        assert_eq!((plan.wants[0].want, plan.wants[0].refund), (10, 0));
    }

    #[test]
    fn small_or_slow_buckets_are_exact_and_so_is_max_one() {
        let now = Instant::now();
        let slices = Slices::new(64);
        for b in [bucket("small", 100, 31), bucket("slow", 1, 1000)] {
            let plan = slices.plan(keys(&[b]), &[b], now).unwrap();
            assert_eq!(plan.wants[0].want, 1, "{b:?}");
        }
        let exact = Slices::new(1);
        let b = [bucket("fast", 1000, 1000)];
        let plan = exact.plan(keys(&b), &b, now).unwrap();
        granted(&exact, &plan, vec![1], now);
        assert_eq!(exact.plan(keys(&b), &b, now).unwrap().wants[0].want, 1);
        // The slice is capped by the limiter's maximum.
        let capped = Slices::new(4);
        assert_eq!(capped.plan(keys(&b), &b, now).unwrap().wants[0].want, 4);
    }

    #[test]
    fn a_stale_slice_is_given_back_with_the_next_request() {
        let slices = Slices::new(64);
        let b = [bucket("fast", 100, 160)];
        let now = Instant::now();
        let plan = slices.plan(keys(&b), &b, now).unwrap();
        granted(&slices, &plan, vec![10], now);
        assert!(slices.plan(keys(&b), &b, now).is_none());
        let later = now + LIFETIME;
        let plan = slices.plan(keys(&b), &b, later).unwrap();
        assert_eq!((plan.wants[0].want, plan.wants[0].refund), (10, 8));
    }

    #[test]
    fn a_refusal_gives_back_the_tokens_taken_here() {
        let slices = Slices::new(64);
        let (fast, other) = (bucket("fast", 100, 160), bucket("tool", 1, 1));
        let now = Instant::now();
        let plan = slices.plan(keys(&[fast]), &[fast], now).unwrap();
        granted(&slices, &plan, vec![2], now); // Redis had only two: one left here
        // A request on both buckets: the local token is taken, the other bucket asked about.
        let both = [fast, other];
        let plan = slices.plan(keys(&both), &both, now).unwrap();
        assert_eq!(plan.wants.len(), 1);
        assert_eq!(plan.bucket(0), 1, "the want is about the second bucket");
        let refused = Ok(Answer::Refused {
            bucket: 0,
            retry_after: Duration::from_secs(1),
        });
        slices.settle(&plan, &["tool".to_owned()], &refused, now);
        // The token came back: the next request on the fast bucket alone is served here.
        assert!(slices.plan(keys(&[fast]), &[fast], now).is_none());
        assert!(slices.plan(keys(&[fast]), &[fast], now).is_some());
    }
}
