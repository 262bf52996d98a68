//! [`RedisRateLimiter`]: rate limit buckets every instance shares, one atomic script per
//! decision.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use smcp_server::ratelimit::{Bucket, Decision, LimitError, RateLimiter, Verdict};

use crate::{Redis, RedisError};

/// One decision on every bucket of a request: the GCRA step of each (`smcp_server::ratelimit::gcra`)
/// at Redis' own clock, all or nothing. KEYS: the buckets. ARGV: interval (µs) and burst of
/// each, in pairs. A bucket is its theoretical arrival time (µs since the epoch), and expires
/// when it is full again. Returns `{-1, 0}` when every bucket gave a token, else the index
/// (0-based) of the bucket with the longest wait and that wait (µs).
const DECIDE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local next = {}
local worst, wait = -1, 0
for i = 1, #KEYS do
  local interval = tonumber(ARGV[2 * i - 1])
  local burst = tonumber(ARGV[2 * i])
  local tat = tonumber(redis.call('GET', KEYS[i])) or now
  if tat < now then tat = now end
  local n = tat + interval
  local from = n - interval * burst
  if from > now then
    if from - now > wait then worst = i - 1; wait = from - now end
  else
    next[i] = n
  end
end
if worst >= 0 then return {worst, wait} end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], string.format('%.0f', next[i]),
    'PX', math.max(1, math.ceil((next[i] - now) / 1000)))
end
return {-1, 0}
";

/// Rate limit buckets in Redis, shared by every instance of a deployment: a principal's burst
/// is one burst across all of them, wherever the load balancer sends each request.
///
/// Each decision is one atomic script (`EVALSHA`, loaded on first use): every bucket of the
/// request is read, and either all of them give a token or none does, at Redis' clock (`TIME`),
/// so instances whose clocks differ agree. A bucket is one key,
/// `<prefix>rl:<rule>|<subject>` (`<prefix>rl:<rule>` for a rule for everyone), holding one
/// number, that expires when the bucket is full again: Redis holds only the buckets in use.
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
}

impl RedisRateLimiter {
    /// A limiter on `redis` (its key prefix and command timeout).
    pub fn new(redis: &Redis) -> Self {
        Self {
            redis: redis.clone(),
            script: Arc::new(redis::Script::new(DECIDE)),
        }
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
        let asked: Vec<(String, u64, u32)> = buckets
            .iter()
            .map(|b| (self.key(b), b.rate.interval_micros(), b.rate.burst()))
            .collect();
        let (redis, script) = (self.redis.clone(), self.script.clone());
        Verdict::Pending(Box::pin(async move {
            let mut call = script.prepare_invoke();
            for (key, interval, burst) in &asked {
                call.key(key).arg(*interval).arg(*burst);
            }
            let mut conn = redis.conn();
            let answer: Vec<i64> = redis.bounded(call.invoke_async(&mut conn)).await?;
            match answer.as_slice() {
                [-1, _] => Ok(Decision::Allowed),
                [bucket, wait] if *bucket >= 0 && *wait > 0 => Ok(Decision::Refused {
                    bucket: usize::try_from(*bucket).unwrap_or(0),
                    retry_after: Duration::from_micros(u64::try_from(*wait).unwrap_or(0)),
                }),
                other => Err(LimitError::Store(format!(
                    "unexpected answer of the rate limit script: {other:?}"
                ))),
            }
        }))
    }
}
