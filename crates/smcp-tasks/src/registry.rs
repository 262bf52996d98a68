//! [`Runner`]: the tasks this instance runs, by id, with what cannot be stored (their
//! cancellation token and their wake-up).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The tasks this instance runs: their cancellation and their wake-up.
#[derive(Debug, Default)]
pub(crate) struct Runner {
    running: Mutex<HashMap<String, Local>>,
}

#[derive(Debug, Clone)]
struct Local {
    cancel: CancellationToken,
    wake: Arc<Notify>,
}

impl Runner {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Local>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a task about to run here; returns its wake-up.
    pub(crate) fn insert(&self, task_id: &str, cancel: CancellationToken) -> Arc<Notify> {
        let wake = Arc::new(Notify::new());
        self.lock().insert(
            task_id.to_owned(),
            Local {
                cancel,
                wake: wake.clone(),
            },
        );
        wake
    }

    /// Forgets a task that reached its end.
    pub(crate) fn remove(&self, task_id: &str) {
        self.lock().remove(task_id);
    }

    /// Fires the task's cancellation, if it runs here.
    pub(crate) fn cancel(&self, task_id: &str) {
        if let Some(local) = self.lock().get(task_id) {
            local.cancel.cancel();
        }
    }

    /// Tells the task that its record changed (answers arrived).
    pub(crate) fn wake(&self, task_id: &str) {
        if let Some(local) = self.lock().get(task_id) {
            local.wake.notify_one();
        }
    }

    /// The ids of the tasks running on this instance.
    pub(crate) fn ids(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    /// Tasks running on this instance.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}
