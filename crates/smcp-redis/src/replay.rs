//! [`RedisReplayGuard`]: single-use `requestState` ids remembered in Redis.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use smcp_server::mrtr::ReplayGuard;
use smcp_server::tools::BoxFuture;

use crate::Redis;

/// Remembers used state ids with `SET <prefix>mrtr:<id> 1 NX PXAT <expiry>`: of two
/// instances presented the same single-use state, exactly one sees its `SET` succeed. An id is
/// kept until its state expires (the state is worthless afterwards), so Redis holds at most
/// the ids of the states still valid.
///
/// Fails closed: when Redis cannot be reached within the command timeout, the retry is
/// refused (as used), never run a second time.
#[derive(Debug, Clone)]
pub struct RedisReplayGuard {
    redis: Redis,
}

impl RedisReplayGuard {
    /// A guard on `redis`.
    pub fn new(redis: &Redis) -> Self {
        Self {
            redis: redis.clone(),
        }
    }
}

/// The expiry as milliseconds since the Unix epoch, at least one second from now (an id
/// whose state already expired is still remembered briefly, so a racing pair is decided).
fn expiry_ms(expires_at: SystemTime) -> u64 {
    let floor = SystemTime::now() + Duration::from_secs(1);
    let at = expires_at.max(floor);
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl ReplayGuard for RedisReplayGuard {
    fn first_use(&self, state_id: &str, expires_at: SystemTime) -> BoxFuture<bool> {
        let redis = self.redis.clone();
        let key = redis.key(&format!("mrtr:{state_id}"));
        let at = expiry_ms(expires_at);
        Box::pin(async move {
            let mut conn = redis.conn();
            let set = redis
                .bounded(
                    redis::cmd("SET")
                        .arg(&key)
                        .arg(1)
                        .arg("NX")
                        .arg("PXAT")
                        .arg(at)
                        .query_async::<Option<String>>(&mut conn),
                )
                .await;
            match set {
                Ok(Some(_)) => true,
                Ok(None) => false,
                Err(e) => {
                    tracing::warn!(error = %e, "replay guard: Redis unreachable; single-use state refused");
                    false
                }
            }
        })
    }
}
