//! Where tasks live: the [`TaskStore`] trait (the multi-instance seam) and its in-memory
//! default, [`MemoryTaskStore`].
//!
//! The store holds a task's *state* ([`TaskRecord`]): status, outstanding input requests and
//! the answers collected for them, the result or error, the cancellation request, and what a
//! later round of the handler needs ([`HeldInput`]). The running handler itself is a future in
//! the instance that created the task (`runner.rs`); it reads and writes the record through
//! the store.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use smcp_proto::error::ErrorObject;
use smcp_proto::ext::tasks::{DetailedTask, Task, TaskStatus};
use smcp_proto::patterns::mrtr::InputRequests;
use smcp_server::mrtr::HeldInput;
use smcp_server::tools::BoxFuture;
use smcp_server::{Clock, keys};

/// One task's state, as a store keeps it. Serializable, so a shared store can keep it as a
/// document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRecord {
    /// The unguessable id (see [`new_task_id`]).
    pub task_id: String,
    /// The principal that created the task: only it may see the task.
    pub principal: Option<String>,
    /// The tool the task runs.
    pub tool: String,
    /// The current status.
    pub status: TaskStatus,
    /// A human-readable description of the current state.
    pub status_message: Option<String>,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// Last change, milliseconds since the Unix epoch.
    pub last_updated_at_ms: u64,
    /// How long after creation the task is kept, in milliseconds; `None` for unlimited.
    pub ttl_ms: Option<u64>,
    /// The suggested polling interval, in milliseconds.
    pub poll_interval_ms: u64,
    /// The input requests still waiting for an answer (`input_required` only).
    #[serde(default)]
    pub input_requests: InputRequests,
    /// Answers collected by `tasks/update` for this round's requests, by key.
    #[serde(default)]
    pub responses: Map<String, Value>,
    /// Every input key the task ever issued: keys are unique over its lifetime.
    #[serde(default)]
    pub issued_keys: Vec<String>,
    /// What the next round of the handler carries (answers so far, its state).
    #[serde(default)]
    pub held: Option<HeldInput>,
    /// The result (`completed` only).
    pub result: Option<Map<String, Value>>,
    /// The JSON-RPC error (`failed` only).
    pub error: Option<ErrorObject>,
    /// `tasks/cancel` was received.
    #[serde(default)]
    pub cancel_requested: bool,
    /// The lease the instance running the handler holds, in milliseconds, when the store
    /// keeps leases ([`TaskStore::keeps_leases`]); `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_ms: Option<u64>,
}

/// The message of the JSON-RPC error (−32603) a task fails with when the instance running its
/// handler was lost (its lease lapsed, see [`TaskStore::keeps_leases`]).
pub const WORKER_LOST: &str = "Worker lost: the server instance running this task stopped \
     renewing its lease (it crashed, was killed or lost its store); the task did not finish";

impl TaskRecord {
    /// When the task expires (milliseconds since the Unix epoch), if it does.
    pub fn expires_at_ms(&self) -> Option<u64> {
        self.ttl_ms
            .map(|ttl| self.created_at_ms.saturating_add(ttl))
    }

    /// The task as it ends when the instance running it was lost at `at_ms` (its lease
    /// lapsed): `failed` with −32603 [`WORKER_LOST`], or `cancelled` when `tasks/cancel` had
    /// been received. A terminal record is returned unchanged. Deterministic (the same
    /// record and time give the same ending), so every instance shows the same one.
    #[must_use]
    pub fn lapsed(&self, at_ms: u64) -> TaskRecord {
        let mut ended = self.clone();
        if self.status.is_terminal() {
            return ended;
        }
        if self.cancel_requested {
            ended.status = TaskStatus::Cancelled;
            ended.status_message = Some("The task was cancelled".to_owned());
        } else {
            let error = ErrorObject::internal(WORKER_LOST);
            ended.status = TaskStatus::Failed;
            ended.status_message = Some(format!("Tool execution failed: {}", error.message));
            ended.error = Some(error);
        }
        ended.result = None;
        ended.input_requests.clear();
        ended.responses = Map::new();
        ended.held = None;
        ended.last_updated_at_ms = at_ms.max(self.last_updated_at_ms);
        ended
    }

    /// The task's metadata as the wire shows it.
    pub fn task(&self) -> Task {
        let time = |ms: u64| smcp_proto::time::rfc3339(i64::try_from(ms / 1000).unwrap_or(0));
        Task {
            task_id: self.task_id.clone(),
            status: self.status,
            status_message: self.status_message.clone(),
            created_at: time(self.created_at_ms),
            last_updated_at: time(self.last_updated_at_ms),
            ttl_ms: self.ttl_ms,
            poll_interval_ms: Some(self.poll_interval_ms),
        }
    }

    /// The task with the payload its status carries, as `tasks/get` and `notifications/tasks`
    /// show it.
    pub fn detailed(&self) -> DetailedTask {
        let mut detailed = DetailedTask::bare(self.task());
        match self.status {
            TaskStatus::InputRequired => {
                detailed.input_requests = Some(self.input_requests.clone());
            }
            TaskStatus::Completed => {
                detailed.result = Some(self.result.clone().unwrap_or_default());
            }
            TaskStatus::Failed => {
                detailed.error = Some(
                    self.error
                        .clone()
                        .unwrap_or_else(|| ErrorObject::internal("the task failed")),
                );
            }
            TaskStatus::Working | TaskStatus::Cancelled => {}
        }
        detailed
    }
}

/// Why an operation of the task store ([`TaskStore`]) failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// No such task for this principal (also: another principal's task, so that existence
    /// never leaks).
    #[error("Task not found")]
    NotFound,
    /// The task's TTL elapsed; its state was discarded.
    #[error("Task has expired")]
    Expired,
    /// The store holds as many live tasks as it may.
    #[error("the server is busy: {limit} tasks are live, the most it keeps")]
    Full {
        /// The limit.
        limit: usize,
    },
    /// The store could not be reached (a shared store's backend).
    #[error("the task store is unavailable: {0}")]
    Unavailable(String),
}

/// The old name of [`TaskStoreError`].
#[deprecated(note = "renamed to `TaskStoreError` (smcp_files' is `FileStoreError`)")]
pub type StoreError = TaskStoreError;

/// A change applied to one record, atomically (see [`TaskStore::update`]). `FnMut`: a shared
/// store may apply it again after a concurrent write (compare-and-set).
pub type Mutation = Box<dyn FnMut(&mut TaskRecord) + Send>;

/// Where task state lives: the seam between instances.
///
/// **Contract** (what any implementation must keep, in memory or shared between instances):
///
/// * [`TaskStore::create`] is durable when it returns `Ok`: a [`TaskStore::get`] on any
///   instance finds the task (SEP-2663: a `CreateTaskResult` is never sent before `tasks/get`
///   resolves it). It refuses with [`TaskStoreError::Full`] rather than evict a live task.
/// * Task ids come from [`new_task_id`] (128 bits from the operating system's CSPRNG): they are
///   unguessable, and a store never lists them.
/// * Every read and write names the principal: a task created for one principal is
///   [`TaskStoreError::NotFound`] for every other, exactly as an unknown id is.
/// * A task past its TTL is [`TaskStoreError::Expired`] (or, once forgotten, `NotFound`); a
///   result is kept until then.
/// * A terminal status is final: every mutation the extension writes leaves a `completed`,
///   `failed` or `cancelled` record as it is.
///
/// **Leases** (optional: only a store that answers `true` to [`TaskStore::keeps_leases`]; a
/// single instance, like [`MemoryTaskStore`], has no lost workers). The handler of a task runs
/// on the instance that created it, so when that instance dies the task would stay `working`
/// until its TTL. With leases:
///
/// * [`TaskStore::create`] of a record with `lease_ms: Some(p)` starts a lease of `p` held by
///   the creating instance; that instance renews the leases of the tasks it runs every `p/3`
///   ([`TaskStore::renew_leases`]); a terminal status written by [`TaskStore::update`] ends
///   the lease.
/// * A lease not renewed for `p` has *lapsed*: the task is over. From that moment `get` and
///   `update` show it as [`TaskRecord::lapsed`] (`failed` with −32603 [`WORKER_LOST`], or
///   `cancelled` if a cancel was requested) and `update` applies no mutation to it.
/// * Every instance calls [`TaskStore::reap_lapsed`] periodically (the extension does, every
///   `p/3`): it writes that ending and hands each such task to exactly **one** caller across
///   all instances, which publishes its final `notifications/tasks`.
/// * A renewal that finds the lease gone (lapsed, or the record lost) says so, and the
///   instance stops that handler: its outcome could no longer be written.
///
/// Object safe: share it as `Arc<dyn TaskStore>`. For several instances, either route every
/// request for a task to the instance that created it (sticky routing on the `Mcp-Name`
/// header, which carries the task id on every task method), or give them one shared store:
/// then `tasks/get` is answered anywhere, and `tasks/update` / `tasks/cancel` written
/// anywhere reach the running handler within [`TaskStore::watch_interval`].
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task (durably, see the trait docs).
    fn create(&self, record: TaskRecord) -> BoxFuture<Result<(), TaskStoreError>>;

    /// The task `task_id` as `principal` may see it.
    fn get(
        &self,
        task_id: &str,
        principal: Option<&str>,
    ) -> BoxFuture<Result<TaskRecord, TaskStoreError>>;

    /// Applies `mutation` to the task `task_id` of `principal` atomically and returns the
    /// record as it is afterwards.
    fn update(
        &self,
        task_id: &str,
        principal: Option<&str>,
        mutation: Mutation,
    ) -> BoxFuture<Result<TaskRecord, TaskStoreError>>;

    /// How often a running task re-reads its record for writes made on other instances
    /// (answers, cancellation). `None` (the default) for a store only this instance writes:
    /// local writes wake the task at once.
    fn watch_interval(&self) -> Option<Duration> {
        None
    }

    /// Whether this store keeps leases (see the trait docs). Default `false`: no lease is
    /// taken, renewed or reaped.
    fn keeps_leases(&self) -> bool {
        false
    }

    /// Renews, for `period` from now, the leases of `task_ids`, the tasks whose handler runs
    /// on this instance; returns those whose lease is gone (lapsed, or the task is no longer
    /// stored), whose handlers should stop. The default (no leases) renews nothing.
    fn renew_leases(
        &self,
        task_ids: Vec<String>,
        period: Duration,
    ) -> BoxFuture<Result<Vec<String>, TaskStoreError>> {
        let _ = (task_ids, period);
        Box::pin(async { Ok(Vec::new()) })
    }

    /// Writes the ending ([`TaskRecord::lapsed`]) of the tasks whose lease lapsed and returns
    /// them, each to exactly one caller across all instances (the one that publishes it). At
    /// most a bounded number per call. The default (no leases) returns none.
    fn reap_lapsed(&self) -> BoxFuture<Result<Vec<TaskRecord>, TaskStoreError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}

impl fmt::Debug for dyn TaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TaskStore")
    }
}

/// A new task id: 128 bits from the operating system's CSPRNG, as 32 hex digits.
pub fn new_task_id() -> Result<String, TaskStoreError> {
    keys::random_hex::<16>().map_err(|e| TaskStoreError::Unavailable(e.to_string()))
}

/// The default store: one process, bounded.
///
/// At most `max_tasks` live tasks (creating one more is [`TaskStoreError::Full`]; finished tasks
/// count until their TTL, so results are never dropped early). Expired tasks are purged as the
/// store is used; their ids are remembered (without their state, at most `max_tasks` of them,
/// for as long as their TTL was) so a late `tasks/get` says "expired" rather than "not found".
#[derive(Clone)]
pub struct MemoryTaskStore {
    inner: Arc<Mutex<Inner>>,
    max_tasks: usize,
    clock: Clock,
}

impl fmt::Debug for MemoryTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryTaskStore")
            .field("max_tasks", &self.max_tasks)
            .field("live", &self.live())
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Inner {
    live: HashMap<String, TaskRecord>,
    /// Expired ids: principal and when to forget them, oldest first.
    expired: HashMap<String, (Option<String>, u64)>,
    expired_order: VecDeque<String>,
    next_sweep_ms: u64,
}

/// The default bound of [`MemoryTaskStore`].
pub const DEFAULT_MAX_TASKS: usize = 10_000;

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_TASKS)
    }
}

impl MemoryTaskStore {
    /// A store of at most `max_tasks` live tasks, on the wall clock.
    pub fn new(max_tasks: usize) -> Self {
        Self::with_clock(max_tasks, keys::system_clock())
    }

    /// The same, reading time from `clock` (for tests).
    pub fn with_clock(max_tasks: usize, clock: Clock) -> Self {
        Self {
            inner: Arc::default(),
            max_tasks: max_tasks.max(1),
            clock,
        }
    }

    /// The bound on live tasks.
    pub fn max_tasks(&self) -> usize {
        self.max_tasks
    }

    /// Live (unexpired, as of the last purge) tasks.
    pub fn live(&self) -> usize {
        self.lock().live.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn now(&self) -> u64 {
        keys::unix_millis(&self.clock)
    }

    /// Applies `f` to the live record, after expiring it if its TTL passed.
    fn with_record<T>(
        &self,
        task_id: &str,
        principal: Option<&str>,
        f: impl FnOnce(&mut TaskRecord) -> T,
    ) -> Result<T, TaskStoreError> {
        let now = self.now();
        let mut inner = self.lock();
        inner.sweep(now, self.max_tasks);
        if let Some(record) = inner.live.get(task_id)
            && record.expires_at_ms().is_some_and(|at| at <= now)
        {
            inner.expire(task_id, now, self.max_tasks);
        }
        if let Some(record) = inner.live.get_mut(task_id) {
            if record.principal.as_deref() != principal {
                return Err(TaskStoreError::NotFound);
            }
            return Ok(f(record));
        }
        match inner.expired.get(task_id) {
            Some((owner, _)) if owner.as_deref() == principal => Err(TaskStoreError::Expired),
            _ => Err(TaskStoreError::NotFound),
        }
    }
}

impl Inner {
    /// Moves a live record to the expired ids.
    fn expire(&mut self, task_id: &str, now: u64, max: usize) {
        let Some(record) = self.live.remove(task_id) else {
            return;
        };
        let keep_for = record.ttl_ms.unwrap_or(0).max(60_000);
        self.expired.insert(
            task_id.to_owned(),
            (record.principal, now.saturating_add(keep_for)),
        );
        self.expired_order.push_back(task_id.to_owned());
        while self.expired_order.len() > max {
            if let Some(old) = self.expired_order.pop_front() {
                self.expired.remove(&old);
            }
        }
    }

    /// Purges expired tasks and forgets old expired ids, at most once a second.
    fn sweep(&mut self, now: u64, max: usize) {
        if now < self.next_sweep_ms {
            return;
        }
        self.next_sweep_ms = now.saturating_add(1000);
        let due: Vec<String> = self
            .live
            .values()
            .filter(|r| r.expires_at_ms().is_some_and(|at| at <= now))
            .map(|r| r.task_id.clone())
            .collect();
        for id in due {
            self.expire(&id, now, max);
        }
        while let Some(front) = self.expired_order.front() {
            match self.expired.get(front) {
                Some((_, forget_at)) if *forget_at > now => break,
                _ => {
                    if let Some(old) = self.expired_order.pop_front() {
                        self.expired.remove(&old);
                    }
                }
            }
        }
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<Result<(), TaskStoreError>> {
        let now = self.now();
        let result = {
            let mut inner = self.lock();
            inner.sweep(now, self.max_tasks);
            if inner.live.len() >= self.max_tasks {
                // Something may have expired since the last sweep.
                inner.next_sweep_ms = 0;
                inner.sweep(now, self.max_tasks);
            }
            if inner.live.len() >= self.max_tasks {
                Err(TaskStoreError::Full {
                    limit: self.max_tasks,
                })
            } else if inner.live.contains_key(&record.task_id)
                || inner.expired.contains_key(&record.task_id)
            {
                Err(TaskStoreError::Unavailable("task id collision".to_owned()))
            } else {
                inner.live.insert(record.task_id.clone(), record);
                Ok(())
            }
        };
        Box::pin(async move { result })
    }

    fn get(
        &self,
        task_id: &str,
        principal: Option<&str>,
    ) -> BoxFuture<Result<TaskRecord, TaskStoreError>> {
        let result = self.with_record(task_id, principal, |r| r.clone());
        Box::pin(async move { result })
    }

    fn update(
        &self,
        task_id: &str,
        principal: Option<&str>,
        mut mutation: Mutation,
    ) -> BoxFuture<Result<TaskRecord, TaskStoreError>> {
        let result = self.with_record(task_id, principal, |r| {
            mutation(r);
            r.clone()
        });
        Box::pin(async move { result })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::UNIX_EPOCH;

    use super::*;

    fn clock() -> (Clock, Arc<AtomicU64>) {
        let now = Arc::new(AtomicU64::new(1_700_000_000_000));
        let n = now.clone();
        let clock: Clock =
            Arc::new(move || UNIX_EPOCH + Duration::from_millis(n.load(Ordering::SeqCst)));
        (clock, now)
    }

    fn record(id: &str, principal: Option<&str>, created: u64, ttl: Option<u64>) -> TaskRecord {
        TaskRecord {
            task_id: id.to_owned(),
            principal: principal.map(str::to_owned),
            tool: "t".to_owned(),
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: created,
            last_updated_at_ms: created,
            ttl_ms: ttl,
            poll_interval_ms: 1000,
            input_requests: InputRequests::new(),
            responses: Map::new(),
            issued_keys: Vec::new(),
            held: None,
            result: None,
            error: None,
            cancel_requested: false,
            lease_ms: None,
        }
    }

    #[test]
    fn a_lapsed_task_fails_with_the_worker_lost_error_or_ends_cancelled() {
        let mut running = record("a", None, 1000, None);
        running.status = TaskStatus::InputRequired;
        running.input_requests = serde_json::from_value(serde_json::json!({
            "k": {"method": "elicitation/create", "params": {"mode": "form", "message": "?",
                  "requestedSchema": {"type": "object", "properties": {}}}}
        }))
        .unwrap();
        let failed = running.lapsed(5000);
        assert_eq!(failed.status, TaskStatus::Failed);
        let error = failed.error.clone().unwrap();
        assert_eq!(error.code, -32603);
        assert!(error.message.starts_with("Worker lost"), "{error:?}");
        assert!(failed.input_requests.is_empty());
        assert_eq!(failed.last_updated_at_ms, 5000);
        assert_eq!(failed, running.lapsed(5000), "deterministic");
        assert!(failed.detailed().validate().is_ok());
        running.cancel_requested = true;
        let cancelled = running.lapsed(5000);
        assert_eq!(cancelled.status, TaskStatus::Cancelled);
        assert!(cancelled.error.is_none());
        assert_eq!(failed.lapsed(9000), failed, "a terminal record is final");
    }

    #[tokio::test]
    async fn tasks_are_bound_to_their_principal() {
        let store = MemoryTaskStore::new(10);
        store
            .create(record("a", Some("alice"), 0, None))
            .await
            .unwrap();
        assert_eq!(store.get("a", Some("alice")).await.unwrap().task_id, "a");
        assert_eq!(
            store.get("a", Some("bob")).await,
            Err(TaskStoreError::NotFound)
        );
        assert_eq!(store.get("a", None).await, Err(TaskStoreError::NotFound));
        assert_eq!(
            store.get("nope", Some("alice")).await,
            Err(TaskStoreError::NotFound)
        );
        let updated = store
            .update(
                "a",
                Some("bob"),
                Box::new(|r| r.status = TaskStatus::Cancelled),
            )
            .await;
        assert_eq!(updated, Err(TaskStoreError::NotFound));
        assert_eq!(
            store.get("a", Some("alice")).await.unwrap().status,
            TaskStatus::Working
        );
    }

    #[tokio::test]
    async fn a_full_store_refuses_and_never_evicts_a_live_task() {
        let (clock, now) = clock();
        let start = now.load(Ordering::SeqCst);
        let store = MemoryTaskStore::with_clock(2, clock);
        store
            .create(record("a", None, start, Some(1000)))
            .await
            .unwrap();
        store.create(record("b", None, start, None)).await.unwrap();
        assert_eq!(
            store.create(record("c", None, start, None)).await,
            Err(TaskStoreError::Full { limit: 2 })
        );
        assert!(store.get("a", None).await.is_ok());
        assert!(store.get("b", None).await.is_ok());
        // Once "a" expires, its place is free again.
        now.fetch_add(1000, Ordering::SeqCst);
        store
            .create(record("c", None, start + 1000, None))
            .await
            .unwrap();
        assert_eq!(store.get("a", None).await, Err(TaskStoreError::Expired));
        assert_eq!(store.live(), 2);
    }

    #[tokio::test]
    async fn expiry_is_told_apart_from_unknown_only_to_the_owner() {
        let (clock, now) = clock();
        let start = now.load(Ordering::SeqCst);
        let store = MemoryTaskStore::with_clock(10, clock);
        store
            .create(record("a", Some("alice"), start, Some(500)))
            .await
            .unwrap();
        now.fetch_add(499, Ordering::SeqCst);
        assert!(
            store.get("a", Some("alice")).await.is_ok(),
            "kept for its TTL"
        );
        now.fetch_add(1, Ordering::SeqCst);
        assert_eq!(
            store.get("a", Some("alice")).await,
            Err(TaskStoreError::Expired)
        );
        assert_eq!(
            store.get("a", Some("bob")).await,
            Err(TaskStoreError::NotFound)
        );
        // Expired ids are forgotten after a while.
        now.fetch_add(3_600_000, Ordering::SeqCst);
        assert_eq!(
            store.get("a", Some("alice")).await,
            Err(TaskStoreError::NotFound)
        );
        assert_eq!(store.live(), 0);
    }

    #[test]
    fn ids_are_128_random_bits() {
        let a = new_task_id().unwrap();
        let b = new_task_id().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn the_trait_is_object_safe() {
        let store: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::default());
        assert!(store.watch_interval().is_none());
        assert!(!store.keeps_leases());
    }
}
