//! [`RedisTaskStore`]: SEP-2663 task records in Redis, shared by every instance, with leases
//! that let the others end the tasks of an instance that died.
//!
//! Keys (under the deployment's prefix):
//!
//! | key | type | what |
//! |---|---|---|
//! | `task:<id>` | string | the record, JSON ([`TaskRecord`]), expiring at the task's TTL |
//! | `tasks` | sorted set | task id → expiry (ms; `+inf` without TTL): the bound on live tasks |
//! | `task-leases` | sorted set | task id → lease expiry (ms, Redis's clock) of a running task |
//!
//! Lease times are read from Redis's own clock (`TIME` inside the scripts), so instances with
//! skewed clocks agree on when a lease lapsed.

use std::time::Duration;

use smcp_server::tools::BoxFuture;
use smcp_tasks::{Mutation, TaskRecord, TaskStore, TaskStoreError};

use crate::{Redis, RedisError};

/// Redis's clock in milliseconds, as a Lua expression's prelude.
const NOW: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
";

/// Creates a task if fewer than `max` are live. KEYS: index, record, leases. ARGV: now (ms),
/// index score, max, record, id, lease period ms ('' for none), PXAT ('' for none). Returns 1
/// (created), 0 (full), -1 (the id exists).
const CREATE: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
local ok
if ARGV[7] == '' then
  ok = redis.call('SET', KEYS[2], ARGV[4], 'NX')
else
  ok = redis.call('SET', KEYS[2], ARGV[4], 'NX', 'PXAT', ARGV[7])
end
if not ok then return -1 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[5])
if ARGV[6] ~= '' then
  redis.call('ZADD', KEYS[3], now + tonumber(ARGV[6]), ARGV[5])
end
return 1
";

/// Reads a record with its lease. KEYS: record, leases. ARGV: id. Returns [record or nil,
/// lease expiry or nil, now].
const READ: &str = r"
return {redis.call('GET', KEYS[1]), redis.call('ZSCORE', KEYS[2], ARGV[1]), tostring(now)}
";

/// Replaces a record if it is still `old` and its lease (if any) has not lapsed; a terminal
/// record ends the lease. KEYS: record, leases. ARGV: old, new, id, terminal ('1'/'0').
/// Returns 1 (written), 0 (gone), -1 (changed or lapsed meanwhile: read again).
const WRITE: &str = r"
local cur = redis.call('GET', KEYS[1])
if not cur then return 0 end
if cur ~= ARGV[1] then return -1 end
local lease = redis.call('ZSCORE', KEYS[2], ARGV[3])
if lease and tonumber(lease) <= now then return -1 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
if ARGV[4] == '1' then redis.call('ZREM', KEYS[2], ARGV[3]) end
return 1
";

/// Renews leases that have not lapsed. KEYS: leases. ARGV: period (ms), ids... Returns the
/// ids whose lease is gone or lapsed.
const RENEW: &str = r"
local lost = {}
local until_ms = now + tonumber(ARGV[1])
for i = 2, #ARGV do
  local s = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if s and tonumber(s) > now then
    redis.call('ZADD', KEYS[1], 'XX', until_ms, ARGV[i])
  else
    lost[#lost + 1] = ARGV[i]
  end
end
return lost
";

/// The lapsed leases, at most ARGV[1]. KEYS: leases. Returns [id, score, id, score, ...].
const LAPSED: &str = r"
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
";

/// Ends a task whose lease lapsed, once: only while its lease entry still has the score read
/// (lapsed) and its record is still `old`. KEYS: record, leases. ARGV: id, score, old, new.
/// Returns 1 (this call ended it), 0 (someone else did, or the record is gone), -1 (the record
/// changed: read again).
const CLAIM: &str = r"
local s = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not s or s ~= ARGV[2] or tonumber(s) > now then return 0 end
local cur = redis.call('GET', KEYS[1])
if not cur then redis.call('ZREM', KEYS[2], ARGV[1]) return 0 end
if cur ~= ARGV[3] then return -1 end
redis.call('SET', KEYS[1], ARGV[4], 'KEEPTTL')
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
";

/// How many times an update is tried against concurrent writers before it gives up. A write
/// fails only when another writer's succeeded, so this many attempts always succeed with up
/// to this many writers racing on one task (a task has three: its handler, `tasks/update`,
/// `tasks/cancel`).
const MAX_ATTEMPTS: usize = 128;
/// The most leases renewed by one script call.
const RENEW_CHUNK: usize = 500;
/// The most lapsed tasks one sweep ends.
const SWEEP_LIMIT: usize = 100;
/// Default [`RedisTaskStore::watch_every`].
pub const DEFAULT_TASK_WATCH: Duration = Duration::from_millis(250);

/// Task records in Redis, shared by every instance of a deployment (SEP-2663, the
/// [`TaskStore`] seam of `smcp-tasks`), with leases.
///
/// * Each record is a JSON value under `<prefix>task:<id>` that expires at the task's TTL; a
///   sorted set `<prefix>tasks` bounds the live tasks of all instances to `max` (creating one
///   more is [`TaskStoreError::Full`]; a live task is never evicted).
/// * `update` is a compare-and-set (the record is read, the mutation applied, and the result
///   written by a script only if the record is still the one read; otherwise it is read
///   again and the mutation re-applied), so concurrent writers on any instances lose nothing.
/// * Every read checks the principal: another principal's task, a malformed id and an id
///   of another deployment are [`TaskStoreError::NotFound`], exactly as an unknown id is.
/// * Leases ([`TaskStore::keeps_leases`]): the creating instance's lease is a score in
///   `<prefix>task-leases`; a lapsed one makes the task [`TaskRecord::lapsed`] on every read,
///   and [`TaskStore::reap_lapsed`] writes that ending with a script that claims the lease
///   entry, so of two instances sweeping at once exactly one ends (and publishes) each task.
/// * Redis unreachable: every call fails with [`TaskStoreError::Unavailable`] within the
///   handle's command timeout (a `tools/call` that would become a task, and `tasks/*`, get
///   −32603 naming the task store).
///
/// An expired task is `NotFound` once Redis dropped its record (a record read in the last
/// instant of its TTL is [`TaskStoreError::Expired`]).
///
/// # Examples
///
/// ```no_run
/// use std::sync::Arc;
/// use smcp_redis::{Redis, RedisTaskStore};
/// use smcp_tasks::TasksExtension;
///
/// # fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let redis = Redis::builder("redis://127.0.0.1:6379/").key_prefix("smcp:").build()?;
/// let tasks = TasksExtension::builder()
///     .store(Arc::new(RedisTaskStore::new(&redis, 10_000)))
///     .build();
/// # let _ = tasks;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct RedisTaskStore {
    redis: Redis,
    max: usize,
    watch: Duration,
}

/// Whether `id` is one [`smcp_tasks::new_task_id`] mints (32 lowercase hex digits): anything
/// else is unknown without asking Redis (and never becomes part of a key).
fn well_formed(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[allow(clippy::needless_pass_by_value, reason = "the shape `map_err` takes")]
fn unavailable(e: RedisError) -> TaskStoreError {
    TaskStoreError::Unavailable(e.to_string())
}

fn script(body: &str) -> redis::Script {
    redis::Script::new(&format!("{NOW}{body}"))
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A record as read: its text, the record, and its lease expiry.
struct Read {
    text: String,
    record: TaskRecord,
    lease: Option<u64>,
    now: u64,
}

impl Read {
    /// Whether the lease lapsed (the task is over: its instance was lost).
    fn lapsed_at(&self) -> Option<u64> {
        self.lease
            .filter(|at| *at <= self.now && !self.record.status.is_terminal())
    }
}

impl RedisTaskStore {
    /// A store on `redis` of at most `max` live tasks across all instances.
    pub fn new(redis: &Redis, max: usize) -> Self {
        Self {
            redis: redis.clone(),
            max: max.max(1),
            watch: DEFAULT_TASK_WATCH,
        }
    }

    /// How often a running task re-reads its record for answers and cancellations written
    /// through other instances (default [`DEFAULT_TASK_WATCH`], 250 ms: an answer or a cancel
    /// reaches the handler within a quarter second, for four reads a second per running task;
    /// at least 10 ms).
    #[must_use]
    pub fn watch_every(mut self, every: Duration) -> Self {
        self.watch = every.max(Duration::from_millis(10));
        self
    }

    /// The bound on live tasks.
    pub fn max_tasks(&self) -> usize {
        self.max
    }

    fn record_key(&self, id: &str) -> String {
        self.redis.key(&format!("task:{id}"))
    }

    fn leases_key(&self) -> String {
        self.redis.key("task-leases")
    }

    /// The record `id`, with its lease; `None` when there is none.
    async fn read(&self, id: &str) -> Result<Option<Read>, TaskStoreError> {
        let key = self.record_key(id);
        let mut conn = self.redis.conn();
        let script = script(READ);
        let mut call = script.key(&key);
        call.key(self.leases_key()).arg(id);
        let (text, lease, now): (Option<String>, Option<String>, String) = self
            .redis
            .bounded(call.invoke_async(&mut conn))
            .await
            .map_err(unavailable)?;
        let Some(text) = text else { return Ok(None) };
        let record: TaskRecord = serde_json::from_str(&text).map_err(|e| {
            unavailable(RedisError::Corrupt {
                key: key.clone(),
                reason: e.to_string(),
            })
        })?;
        let number = |s: &str| {
            millis_of(s).ok_or_else(|| {
                unavailable(RedisError::Corrupt {
                    key: key.clone(),
                    reason: format!("not a time: {s:?}"),
                })
            })
        };
        let lease = lease.as_deref().map(number).transpose()?;
        let now = number(&now)?;
        Ok(Some(Read {
            text,
            record,
            lease,
            now,
        }))
    }

    /// The record `id` of `principal`: `NotFound` for anyone else's, `Expired` past its TTL.
    async fn read_as(&self, id: &str, principal: Option<&str>) -> Result<Read, TaskStoreError> {
        if !well_formed(id) {
            return Err(TaskStoreError::NotFound);
        }
        let read = self.read(id).await?.ok_or(TaskStoreError::NotFound)?;
        if read.record.principal.as_deref() != principal {
            return Err(TaskStoreError::NotFound);
        }
        if read
            .record
            .expires_at_ms()
            .is_some_and(|at| at <= crate::wire::now_ms())
        {
            return Err(TaskStoreError::Expired);
        }
        Ok(read)
    }

    async fn create_record(&self, record: TaskRecord) -> Result<(), TaskStoreError> {
        if !well_formed(&record.task_id) {
            return Err(TaskStoreError::Unavailable(
                "task ids must be 32 lowercase hex digits (smcp_tasks::new_task_id)".to_owned(),
            ));
        }
        let text = encode(&record)?;
        let expires = record.expires_at_ms();
        let mut conn = self.redis.conn();
        let script = script(CREATE);
        let mut call = script.key(self.redis.key("tasks"));
        call.key(self.record_key(&record.task_id))
            .key(self.leases_key())
            .arg(crate::wire::now_ms())
            .arg(expires.map_or_else(|| "+inf".to_owned(), |at| at.to_string()))
            .arg(self.max)
            .arg(text)
            .arg(&record.task_id)
            .arg(record.lease_ms.map(|ms| ms.to_string()).unwrap_or_default())
            .arg(expires.map(|at| at.to_string()).unwrap_or_default());
        let created: i64 = self
            .redis
            .bounded(call.invoke_async(&mut conn))
            .await
            .map_err(unavailable)?;
        match created {
            1 => {
                tracing::debug!(task_id = %record.task_id, "task stored in Redis");
                Ok(())
            }
            0 => Err(TaskStoreError::Full { limit: self.max }),
            _ => Err(TaskStoreError::Unavailable("task id collision".to_owned())),
        }
    }

    async fn update_record(
        &self,
        id: &str,
        principal: Option<&str>,
        mut mutation: Mutation,
    ) -> Result<TaskRecord, TaskStoreError> {
        for _ in 0..MAX_ATTEMPTS {
            let read = self.read_as(id, principal).await?;
            if let Some(at) = read.lapsed_at() {
                // Over: its instance was lost; the sweep writes the ending.
                return Ok(read.record.lapsed(at));
            }
            let mut record = read.record.clone();
            mutation(&mut record);
            if record == read.record {
                return Ok(record);
            }
            let text = encode(&record)?;
            let mut conn = self.redis.conn();
            let script = script(WRITE);
            let mut call = script.key(self.record_key(id));
            call.key(self.leases_key())
                .arg(&read.text)
                .arg(text)
                .arg(id)
                .arg(if record.status.is_terminal() {
                    "1"
                } else {
                    "0"
                });
            let written: i64 = self
                .redis
                .bounded(call.invoke_async(&mut conn))
                .await
                .map_err(unavailable)?;
            match written {
                1 => return Ok(record),
                0 => return Err(TaskStoreError::NotFound),
                _ => tracing::trace!(task_id = %id, "task changed meanwhile; updating again"),
            }
        }
        Err(TaskStoreError::Unavailable(format!(
            "the task was changed concurrently {MAX_ATTEMPTS} times in a row"
        )))
    }

    async fn renew(
        &self,
        ids: Vec<String>,
        period: Duration,
    ) -> Result<Vec<String>, TaskStoreError> {
        let mut lost = Vec::new();
        let (ids, malformed): (Vec<String>, Vec<String>) =
            ids.into_iter().partition(|id| well_formed(id));
        lost.extend(malformed);
        for chunk in ids.chunks(RENEW_CHUNK) {
            let mut conn = self.redis.conn();
            let script = script(RENEW);
            let mut call = script.key(self.leases_key());
            call.arg(millis(period).max(1));
            for id in chunk {
                call.arg(id);
            }
            let gone: Vec<String> = self
                .redis
                .bounded(call.invoke_async(&mut conn))
                .await
                .map_err(unavailable)?;
            lost.extend(gone);
        }
        Ok(lost)
    }

    async fn reap(&self) -> Result<Vec<TaskRecord>, TaskStoreError> {
        let mut conn = self.redis.conn();
        let script = script(LAPSED);
        let mut call = script.key(self.leases_key());
        call.arg(SWEEP_LIMIT);
        let lapsed: Vec<(String, String)> = self
            .redis
            .bounded(call.invoke_async(&mut conn))
            .await
            .map_err(unavailable)?;
        let mut ended = Vec::new();
        for (id, score) in lapsed {
            if let Some(record) = self.claim(&id, &score).await? {
                ended.push(record);
            }
        }
        Ok(ended)
    }

    /// Ends the task `id` whose lease lapsed at `score`, if no one else did: the ended
    /// record when this call wrote it.
    async fn claim(&self, id: &str, score: &str) -> Result<Option<TaskRecord>, TaskStoreError> {
        let at = millis_of(score).unwrap_or(0);
        let key = self.record_key(id);
        for _ in 0..MAX_ATTEMPTS {
            let mut conn = self.redis.conn();
            let text: Option<String> = self
                .redis
                .bounded(redis::cmd("GET").arg(&key).query_async(&mut conn))
                .await
                .map_err(unavailable)?;
            let old = text.unwrap_or_default();
            // A running task ends; for one already ended (or unreadable, or gone) only the
            // lease entry goes.
            let (new, ended) = match serde_json::from_str::<TaskRecord>(&old) {
                Ok(record) if !record.status.is_terminal() => {
                    let ended = record.lapsed(at);
                    (encode(&ended)?, Some(ended))
                }
                _ => (old.clone(), None),
            };
            let script = script(CLAIM);
            let mut call = script.key(&key);
            call.key(self.leases_key())
                .arg(id)
                .arg(score)
                .arg(&old)
                .arg(new);
            let claimed: i64 = self
                .redis
                .bounded(call.invoke_async(&mut conn))
                .await
                .map_err(unavailable)?;
            match claimed {
                1 => return Ok(ended),
                0 => return Ok(None),
                _ => {
                    tracing::trace!(task_id = %id, "lapsed task changed meanwhile; claiming again");
                }
            }
        }
        Err(TaskStoreError::Unavailable(format!(
            "a lapsed task was changed concurrently {MAX_ATTEMPTS} times in a row"
        )))
    }
}

fn encode(record: &TaskRecord) -> Result<String, TaskStoreError> {
    serde_json::to_string(record)
        .map_err(|e| TaskStoreError::Unavailable(format!("encoding a task: {e}")))
}

/// A time Redis wrote (a sorted-set score or `TIME` in milliseconds) as an integer.
fn millis_of(text: &str) -> Option<u64> {
    if let Ok(ms) = text.parse::<u64>() {
        return Some(ms);
    }
    let f = text
        .parse::<f64>()
        .ok()
        .filter(|f| f.is_finite() && *f >= 0.0)?;
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "finite, non-negative, and far below 2^64 for any time in milliseconds"
    )]
    Some(f.min(1e18) as u64)
}

impl TaskStore for RedisTaskStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<Result<(), TaskStoreError>> {
        let this = self.clone();
        Box::pin(async move { this.create_record(record).await })
    }

    fn get(
        &self,
        task_id: &str,
        principal: Option<&str>,
    ) -> BoxFuture<Result<TaskRecord, TaskStoreError>> {
        let this = self.clone();
        let id = task_id.to_owned();
        let principal = principal.map(str::to_owned);
        Box::pin(async move {
            let read = this.read_as(&id, principal.as_deref()).await?;
            Ok(match read.lapsed_at() {
                Some(at) => read.record.lapsed(at),
                None => read.record,
            })
        })
    }

    fn update(
        &self,
        task_id: &str,
        principal: Option<&str>,
        mutation: Mutation,
    ) -> BoxFuture<Result<TaskRecord, TaskStoreError>> {
        let this = self.clone();
        let id = task_id.to_owned();
        let principal = principal.map(str::to_owned);
        Box::pin(async move {
            this.update_record(&id, principal.as_deref(), mutation)
                .await
        })
    }

    fn watch_interval(&self) -> Option<Duration> {
        Some(self.watch)
    }

    fn keeps_leases(&self) -> bool {
        true
    }

    fn renew_leases(
        &self,
        task_ids: Vec<String>,
        period: Duration,
    ) -> BoxFuture<Result<Vec<String>, TaskStoreError>> {
        let this = self.clone();
        Box::pin(async move { this.renew(task_ids, period).await })
    }

    fn reap_lapsed(&self) -> BoxFuture<Result<Vec<TaskRecord>, TaskStoreError>> {
        let this = self.clone();
        Box::pin(async move { this.reap().await })
    }
}
