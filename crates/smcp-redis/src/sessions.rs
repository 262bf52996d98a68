//! [`RedisSessionStore`]: 2025-era session records in Redis, so a session's next request may
//! land on any instance.

use std::sync::Arc;
use std::time::Duration;

use smcp_server::legacy::{SessionError, SessionRecord, SessionStore};
use smcp_server::tools::BoxFuture;

use crate::{Redis, RedisError};

/// Creates a session if the store is below its bound. KEYS: the index (a sorted set of
/// session keys by expiry), the session key. ARGV: now (ms), expiry (ms), max, record, idle
/// (ms). Returns 1 (created), 0 (full), -1 (the id exists).
const CREATE: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
if not redis.call('SET', KEYS[2], ARGV[4], 'NX', 'PX', ARGV[5]) then return -1 end
redis.call('ZADD', KEYS[1], ARGV[2], KEYS[2])
return 1
";

/// Reads a session and restarts its idle time. KEYS: index, session key. ARGV: expiry (ms),
/// idle (ms).
const GET: &str = r"
local v = redis.call('GET', KEYS[2])
if not v then redis.call('ZREM', KEYS[1], KEYS[2]) return false end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[1], KEYS[2])
return v
";

/// Replaces an existing session. KEYS: index, session key. ARGV: expiry, idle, record.
const PUT: &str = r"
if not redis.call('SET', KEYS[2], ARGV[3], 'XX', 'PX', ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], KEYS[2])
return 1
";

/// Sessions in Redis: each record a JSON value under `<prefix>session:<id>` that expires after
/// `idle` without use, and an index (`<prefix>sessions`, a sorted set by expiry) that bounds
/// their number to `max` across all instances. Every operation is one atomic script.
#[derive(Debug, Clone)]
pub struct RedisSessionStore {
    redis: Redis,
    max: usize,
    idle: Duration,
}

impl RedisSessionStore {
    /// A store on `redis` of at most `max` sessions, each ended after `idle` without a
    /// request.
    pub fn new(redis: &Redis, max: usize, idle: Duration) -> Self {
        Self {
            redis: redis.clone(),
            max,
            idle,
        }
    }

    fn keys(&self, id: &str) -> (String, String) {
        (
            self.redis.key("sessions"),
            self.redis.key(&format!("session:{id}")),
        )
    }

    fn idle_ms(&self) -> u64 {
        u64::try_from(self.idle.as_millis())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    fn expiry_ms(&self) -> u64 {
        crate::wire::now_ms().saturating_add(self.idle_ms())
    }
}

impl From<RedisError> for SessionError {
    fn from(e: RedisError) -> Self {
        Self::Store(e.to_string())
    }
}

fn encode(record: &SessionRecord) -> Result<String, SessionError> {
    serde_json::to_string(record).map_err(|e| SessionError::Store(format!("encoding: {e}")))
}

impl SessionStore for RedisSessionStore {
    fn create(&self, record: SessionRecord) -> BoxFuture<Result<(), SessionError>> {
        let this = self.clone();
        Box::pin(async move {
            let (index, key) = this.keys(&record.id);
            let text = encode(&record)?;
            let mut conn = this.redis.conn();
            let script = redis::Script::new(CREATE);
            let mut call = script.key(&index);
            call.key(&key)
                .arg(crate::wire::now_ms())
                .arg(this.expiry_ms())
                .arg(this.max)
                .arg(text)
                .arg(this.idle_ms());
            let created: i64 = this.redis.bounded(call.invoke_async(&mut conn)).await?;
            match created {
                1 => Ok(()),
                0 => Err(SessionError::Full { max: this.max }),
                _ => Err(SessionError::Store("session id already in use".to_owned())),
            }
        })
    }

    fn get(&self, id: &str) -> BoxFuture<Result<Option<Arc<SessionRecord>>, SessionError>> {
        let this = self.clone();
        let id = id.to_owned();
        Box::pin(async move {
            let (index, key) = this.keys(&id);
            let mut conn = this.redis.conn();
            let script = redis::Script::new(GET);
            let mut call = script.key(&index);
            call.key(&key).arg(this.expiry_ms()).arg(this.idle_ms());
            let text: Option<String> = this.redis.bounded(call.invoke_async(&mut conn)).await?;
            let Some(text) = text else { return Ok(None) };
            serde_json::from_str(&text)
                .map(|r| Some(Arc::new(r)))
                .map_err(|e| {
                    SessionError::from(RedisError::Corrupt {
                        key,
                        reason: e.to_string(),
                    })
                })
        })
    }

    fn put(&self, record: SessionRecord) -> BoxFuture<Result<(), SessionError>> {
        let this = self.clone();
        Box::pin(async move {
            let (index, key) = this.keys(&record.id);
            let text = encode(&record)?;
            let mut conn = this.redis.conn();
            let script = redis::Script::new(PUT);
            let mut call = script.key(&index);
            call.key(&key)
                .arg(this.expiry_ms())
                .arg(this.idle_ms())
                .arg(text);
            let replaced: i64 = this.redis.bounded(call.invoke_async(&mut conn)).await?;
            if replaced == 1 {
                Ok(())
            } else {
                Err(SessionError::NotFound)
            }
        })
    }

    fn remove(&self, id: &str) -> BoxFuture<Result<bool, SessionError>> {
        let this = self.clone();
        let id = id.to_owned();
        Box::pin(async move {
            let (index, key) = this.keys(&id);
            let mut conn = this.redis.conn();
            let (removed, _): (i64, i64) = this
                .redis
                .bounded(
                    redis::pipe()
                        .atomic()
                        .cmd("DEL")
                        .arg(&key)
                        .cmd("ZREM")
                        .arg(&index)
                        .arg(&key)
                        .query_async(&mut conn),
                )
                .await?;
            Ok(removed == 1)
        })
    }
}
