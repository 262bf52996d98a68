//! [`Core`]: what every request of the tasks extension and every running task reads (the
//! store, the local runner, the settings), and how a task's change is published.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use smcp_proto::ext::tasks::{EXTENSION_ID, NOTIFICATION_TASKS, TaskStatusNotificationParams};
use smcp_server::{Change, ChangeBus, Clock, RequestContext, keys};

use crate::registry::Runner;
use crate::store::{TaskRecord, TaskStore};

/// What every request of the extension reads.
pub(crate) struct Core {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) runner: Runner,
    pub(crate) ttl: Option<Duration>,
    pub(crate) poll_interval: Duration,
    pub(crate) immediate_window: Duration,
    pub(crate) cancel_grace: Duration,
    pub(crate) max_rounds: u32,
    /// The lease period of the tasks this instance runs (with a store that keeps leases).
    pub(crate) lease: Duration,
    /// Whether the lease keeper (`lease.rs`) runs.
    pub(crate) keeper: AtomicBool,
    /// Where the keeper publishes the endings of lost tasks: the server's change bus, once
    /// known.
    pub(crate) bus: OnceLock<Arc<dyn ChangeBus>>,
    pub(crate) clock: Clock,
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("ttl", &self.ttl)
            .field("poll_interval", &self.poll_interval)
            .field("immediate_window", &self.immediate_window)
            .field("running", &self.runner.len())
            .finish_non_exhaustive()
    }
}

impl Core {
    pub(crate) fn now_ms(&self) -> u64 {
        keys::unix_millis(&self.clock)
    }

    /// Sends `notifications/tasks` with the task as `tasks/get` shows it now, to the listen
    /// streams that were granted its id.
    pub(crate) fn publish(&self, ctx: &RequestContext, record: &TaskRecord) {
        let Some(server) = ctx.server() else {
            return;
        };
        if let Some(change) = notification(record) {
            server.publish(change);
        }
    }
}

/// `notifications/tasks` for the task as `tasks/get` shows it now, on the task's topic.
pub(crate) fn notification(record: &TaskRecord) -> Option<Change> {
    let params = TaskStatusNotificationParams {
        meta: None,
        task: record.detailed(),
    };
    match serde_json::to_string(&params) {
        Ok(params) => Some(Change::topic(
            topic(&record.task_id),
            NOTIFICATION_TASKS,
            params,
        )),
        Err(e) => {
            tracing::warn!(error = %e, "task notification not serialized");
            None
        }
    }
}

/// The notification topic of a task on the change bus.
pub(crate) fn topic(task_id: &str) -> String {
    format!("{EXTENSION_ID}#{task_id}")
}
