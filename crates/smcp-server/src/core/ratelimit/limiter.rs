//! The seam: the buckets of a request, a limiter's decision, and the refusal a request gets.

use std::fmt;
use std::time::{Duration, SystemTime};

use serde_json::json;
use smcp_proto::error::ErrorObject;

use super::rate::Rate;
use crate::core::error::SERVER_BUSY;
use crate::core::future::BoxFuture;

/// Which bucket: the rule it belongs to and, for a rule per caller, whose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BucketKey<'a> {
    /// The rule's label: `"principal"`, `"tool:NAME"` or `"global-tool:NAME"`.
    pub rule: &'a str,
    /// The caller the bucket counts for (`p:` and the principal, `ip:` and the peer address,
    /// or `anonymous`), or `None` for a bucket every caller shares.
    pub subject: Option<&'a str>,
}

/// One bucket a request draws a token from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket<'a> {
    /// Which bucket.
    pub key: BucketKey<'a>,
    /// Its rate and burst.
    pub rate: Rate,
}

/// What a limiter decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// A token was taken from every bucket.
    Allowed,
    /// No token was taken: bucket `bucket` (an index into the buckets asked about) is empty
    /// for `retry_after` more (the longest wait among the empty ones).
    Refused {
        /// The index of the bucket that refused.
        bucket: usize,
        /// How long until that bucket has a token again.
        retry_after: Duration,
    },
}

/// A limiter that could not decide (its store is unreachable, or too slow). The request is
/// let through (the limiter fails open) and the failure logged and counted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LimitError {
    /// The store failed; the message names the operation, never a key's subject.
    #[error("rate limit store: {0}")]
    Store(String),
    /// The store did not answer in time.
    #[error("rate limit store: no answer within {0:?}")]
    Timeout(Duration),
}

/// A limiter's answer: now (an in-process limiter), or later (a networked store).
pub enum Verdict {
    /// Decided without waiting.
    Ready(Result<Decision, LimitError>),
    /// Decided by a future (a round trip to a shared store).
    Pending(BoxFuture<Result<Decision, LimitError>>),
}

impl fmt::Debug for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ready(r) => f.debug_tuple("Ready").field(r).finish(),
            Self::Pending(_) => f.write_str("Pending(..)"),
        }
    }
}

/// Where buckets live: this process ([`MemoryRateLimiter`], the default) or a store every
/// instance shares (`smcp_redis::RedisRateLimiter`).
///
/// One decision is one call: take one token from each of `buckets`, or, if any of them is
/// empty, from none. `now` is the server's clock; a shared store may use its own clock
/// instead, so that instances whose clocks differ agree.
pub trait RateLimiter: Send + Sync + fmt::Debug + 'static {
    /// Takes a token from every bucket, or none.
    fn decide(&self, buckets: &[Bucket<'_>], now: SystemTime) -> Verdict;
}

/// A request refused by a rate limit: the rule and how long to wait.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Too Many Requests: the rate limit {limit:?} is reached; retry after {} ms", retry_after_ms(*.retry_after))]
pub struct RateLimited {
    /// The rule's label (`"principal"`, `"tool:NAME"`, `"global-tool:NAME"`).
    pub limit: String,
    /// How long until the request would be allowed.
    pub retry_after: Duration,
}

/// Milliseconds, rounded up, at least 1.
fn retry_after_ms(wait: Duration) -> u64 {
    let ms = wait.as_nanos().div_ceil(1_000_000);
    u64::try_from(ms).unwrap_or(u64::MAX).max(1)
}

impl RateLimited {
    /// `data.retryAfterMs`: the wait in milliseconds, rounded up (at least 1).
    pub fn retry_after_ms(&self) -> u64 {
        retry_after_ms(self.retry_after)
    }

    /// The `Retry-After` header's value: whole seconds, rounded up (at least 1).
    pub fn retry_after_secs(&self) -> u64 {
        self.retry_after_ms().div_ceil(1000)
    }

    /// The JSON-RPC error: code [`SERVER_BUSY`], `data.limit` and `data.retryAfterMs`.
    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject::new(SERVER_BUSY, self.to_string()).with_data(json!({
            "limit": self.limit,
            "retryAfterMs": self.retry_after_ms(),
        }))
    }

    /// The refusal an error made by [`RateLimited::to_error_object`] carries (a transport
    /// maps it to its own form: over HTTP, 429 with `Retry-After`).
    pub fn from_error_object(error: &ErrorObject) -> Option<Self> {
        if error.code != SERVER_BUSY {
            return None;
        }
        let data = error.data.as_ref()?;
        let limit = data.get("limit")?.as_str()?;
        let ms = data.get("retryAfterMs")?.as_u64()?;
        Some(Self {
            limit: limit.to_owned(),
            retry_after: Duration::from_millis(ms),
        })
    }
}

/// The GCRA step of one bucket, in microseconds since the Unix epoch: from its theoretical
/// arrival time `tat` (`None`: a full bucket), `Ok` with the new one when a token is taken,
/// or `Err` with how long until one is there. The bucket is full again at the returned time
/// (a store may forget it then).
///
/// A bucket of `burst` tokens refilling one token per `interval` allows `burst` requests at
/// once, then one per `interval`.
pub fn gcra(tat: Option<u64>, now: u64, rate: Rate) -> Result<u64, u64> {
    let interval = rate.interval_micros();
    let tat = tat.map_or(now, |t| t.max(now));
    let next = tat.saturating_add(interval);
    let allowed_from = next.saturating_sub(interval.saturating_mul(u64::from(rate.burst())));
    if allowed_from > now {
        Err(allowed_from - now)
    } else {
        Ok(next)
    }
}

/// Microseconds since the Unix epoch (0 before it).
pub fn unix_micros(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(per_second: u32, burst: u32) -> Rate {
        Rate::per_second(per_second).and_burst(burst)
    }

    #[test]
    fn a_burst_then_one_per_interval() {
        let r = rate(10, 3); // 100 ms per token, 3 at once
        let now = 1_000_000_000;
        let mut tat = None;
        for _ in 0..3 {
            tat = Some(gcra(tat, now, r).unwrap());
        }
        assert_eq!(
            gcra(tat, now, r),
            Err(100_000),
            "empty: one interval to wait"
        );
        // 40 ms later: still 60 ms to go.
        assert_eq!(gcra(tat, now + 40_000, r), Err(60_000));
        // one interval later: exactly one token.
        let t = gcra(tat, now + 100_000, r).unwrap();
        assert_eq!(gcra(Some(t), now + 100_000, r), Err(100_000));
        // idle long enough: full again, the burst is back.
        let mut tat = Some(t);
        for _ in 0..3 {
            tat = Some(gcra(tat, now + 10_000_000, r).unwrap());
        }
        assert!(gcra(tat, now + 10_000_000, r).is_err());
    }

    #[test]
    fn refill_never_exceeds_the_burst() {
        let r = rate(1, 2);
        let now = 5_000_000;
        // A bucket last used long ago holds `burst` tokens, not more.
        let tat = Some(gcra(Some(1), now, r).unwrap());
        let tat = Some(gcra(tat, now, r).unwrap());
        assert_eq!(gcra(tat, now, r), Err(1_000_000));
    }

    #[test]
    fn the_returned_time_is_when_the_bucket_is_full_again() {
        let r = rate(2, 4); // 500 ms per token
        let now = 7_000_000;
        let tat = gcra(None, now, r).unwrap();
        assert_eq!(tat, now + 500_000);
        let tat = gcra(Some(tat), now, r).unwrap();
        assert_eq!(tat, now + 1_000_000);
    }

    #[test]
    fn retry_after_rounds_up() {
        let refused = |us| RateLimited {
            limit: "principal".into(),
            retry_after: Duration::from_micros(us),
        };
        assert_eq!(refused(1).retry_after_ms(), 1);
        assert_eq!(refused(1).retry_after_secs(), 1);
        assert_eq!(refused(1_000).retry_after_ms(), 1);
        assert_eq!(refused(1_001).retry_after_ms(), 2);
        assert_eq!(refused(999_999).retry_after_secs(), 1);
        assert_eq!(refused(1_000_000).retry_after_secs(), 1);
        assert_eq!(refused(1_000_001).retry_after_secs(), 2);
        assert_eq!(
            refused(0).retry_after_ms(),
            1,
            "never 0: the client must wait"
        );
    }

    #[test]
    fn the_refusal_round_trips_through_its_error_object() {
        let refusal = RateLimited {
            limit: "tool:echo".into(),
            retry_after: Duration::from_millis(1500),
        };
        let error = refusal.to_error_object();
        assert_eq!(error.code, SERVER_BUSY);
        assert_eq!(
            error.data,
            Some(json!({"limit": "tool:echo", "retryAfterMs": 1500}))
        );
        assert_eq!(RateLimited::from_error_object(&error), Some(refusal));
        let busy = ErrorObject::new(SERVER_BUSY, "busy").with_data(json!({"limit": "sessions"}));
        assert_eq!(RateLimited::from_error_object(&busy), None);
    }
}
