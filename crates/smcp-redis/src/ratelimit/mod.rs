//! [`RedisRateLimiter`]: rate limit buckets every instance shares, each decision atomic in a
//! script, the decisions asked at once carried by one script call.

mod batch;
mod script;
mod slices;

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use smcp_server::ratelimit::{Bucket, Decision, LimitError, RateLimiter, Verdict};

use batch::Answer;
use script::DECIDE;
use slices::Slices;

use crate::{Redis, RedisError};

/// Rate limit buckets in Redis, shared by every instance of a deployment: a principal's burst
/// is one burst across all of them, wherever the load balancer sends each request.
///
/// Each decision is atomic, in a script (`EVALSHA`, loaded on first use): every bucket of the
/// request is read, and either all of them give a token or none does, at Redis' clock (`TIME`),
/// so instances whose clocks differ agree. A process sends one script call at a time: the
/// decisions asked while it is on its way are carried by the next one (up to 128, each still
/// all or nothing, in the order asked), so a request waits one round trip at most beside its
/// own, and a busy instance pays a round trip per batch rather than per request. A bucket is one key,
/// `<prefix>rl:<rule>|<subject>` (`<prefix>rl:<rule>` for a rule for everyone), holding one
/// number, that expires when the bucket is full again: Redis holds only the buckets in use.
///
/// An instance may take a few tokens of a fast bucket at once (a slice: at most
/// [`max_prefetch`](Self::max_prefetch), a sixteenth of the burst, and what the bucket refills
/// in a second) and spend them on the next requests without asking Redis, for up to a second;
/// what it did not spend goes back with its next request. Nothing beyond a limit is ever
/// allowed (a token is taken from Redis before it is spent); while an instance holds tokens,
/// another may be refused them. Small and slow buckets are decided in Redis on every request.
///
/// Fails open: when Redis cannot be reached within the command timeout, the request is let
/// through (and counted as `error` in the metrics), so that an outage of Redis does not stop
/// the service; the limits are back with Redis.
///
/// # Examples
///
/// ```no_run
/// use smcp_redis::{Redis, RedisRateLimiter};
/// use smcp_server::ratelimit::{Rate, RateLimits};
///
/// # fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let redis = Redis::builder("redis://127.0.0.1:6379/").key_prefix("smcp:").build()?;
/// let limits = RateLimits::new()
///     .principal(Rate::per_second(100).and_burst(200))
///     .limiter(RedisRateLimiter::new(&redis));
/// let server = smcp_server::Server::builder("demo", "1.0.0").rate_limits(limits).build()?;
/// # let _ = server;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct RedisRateLimiter {
    redis: Redis,
    script: Arc<redis::Script>,
    batcher: Arc<batch::Batcher>,
    slices: Arc<Slices>,
}

/// The largest slice a bucket gives one instance at once unless
/// [`RedisRateLimiter::max_prefetch`] says otherwise.
pub const DEFAULT_MAX_PREFETCH: u32 = 64;

impl RedisRateLimiter {
    /// A limiter on `redis` (its key prefix and command timeout).
    pub fn new(redis: &Redis) -> Self {
        Self {
            redis: redis.clone(),
            script: Arc::new(redis::Script::new(DECIDE)),
            batcher: Arc::default(),
            slices: Arc::new(Slices::new(DEFAULT_MAX_PREFETCH)),
        }
    }

    /// At most `max` tokens of a bucket taken at once for this instance to spend locally
    /// (default [`DEFAULT_MAX_PREFETCH`]; and at most a sixteenth of the bucket's burst, and
    /// what it refills in a second). `1`: every request is decided by Redis, exactly.
    #[must_use]
    pub fn max_prefetch(mut self, max: u32) -> Self {
        self.slices = Arc::new(Slices::new(max.max(1)));
        self
    }

    /// The Redis key of `bucket`.
    fn key(&self, bucket: &Bucket<'_>) -> String {
        match bucket.key.subject {
            Some(subject) => self.redis.key(&format!("rl:{}|{subject}", bucket.key.rule)),
            None => self.redis.key(&format!("rl:{}", bucket.key.rule)),
        }
    }
}

impl From<RedisError> for LimitError {
    fn from(e: RedisError) -> Self {
        match e {
            RedisError::Timeout(t) => Self::Timeout(t),
            other => Self::Store(other.to_string()),
        }
    }
}

impl RateLimiter for RedisRateLimiter {
    fn decide(&self, buckets: &[Bucket<'_>], _now: SystemTime) -> Verdict {
        let keys: Vec<String> = buckets.iter().map(|b| self.key(b)).collect();
        let Some(mut plan) = self.slices.plan(keys, buckets, Instant::now()) else {
            return Verdict::Ready(Ok(Decision::Allowed));
        };
        let this = self.clone();
        Verdict::Pending(Box::pin(async move {
            let keys: Vec<String> = plan.wants.iter().map(|w| w.key.clone()).collect();
            let wants = std::mem::take(&mut plan.wants);
            let answer = this.batcher.decide(&this.redis, &this.script, wants).await;
            this.slices.settle(&plan, &keys, &answer, Instant::now());
            match answer? {
                Answer::Granted(_) => Ok(Decision::Allowed),
                Answer::Refused {
                    bucket,
                    retry_after,
                } => Ok(Decision::Refused {
                    bucket: plan.bucket(bucket),
                    retry_after,
                }),
            }
        }))
    }
}
