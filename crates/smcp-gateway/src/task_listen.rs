//! `notifications/tasks` through the gateway: a listener's `taskIds` (qualified by their
//! upstream, `upstream:id`) are followed at the upstream the id names, on a listen stream of
//! their own, and each state the upstream sends is published to this instance's listeners
//! under the qualified id. A task is followed once, however many listeners ask, until it
//! ends (a terminal status) or the gateway stops; the acknowledgement grants the ids the
//! upstream acknowledged (within its timeout).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::StreamExt as _;
use smcp_client::{SubscriptionEvent, SubscriptionFilter};
use smcp_proto::ext::tasks::{EXTENSION_ID, NOTIFICATION_TASKS, TaskStatusNotificationParams};
use smcp_server::{Change, Server};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::upstream::Upstream;

/// Most task ids one `subscriptions/listen` may name.
pub(crate) const MAX_LISTEN_TASK_IDS: usize = 64;

/// The topic of a task's notifications on the gateway's bus.
pub(crate) fn topic(qualified: &str) -> String {
    format!("{EXTENSION_ID}#gateway#{qualified}")
}

/// The tasks followed now, by qualified id.
#[derive(Debug, Default)]
pub(crate) struct Followed {
    ids: Mutex<HashSet<String>>,
}

impl Followed {
    /// Whether `qualified` is followed: already (`None`), or from now on, once `upstream`
    /// acknowledges it (the answer comes on the receiver).
    pub(crate) fn follow(
        self: &Arc<Self>,
        qualified: String,
        upstream: Arc<Upstream>,
        id: String,
        server: Server,
        stop: CancellationToken,
    ) -> Option<oneshot::Receiver<bool>> {
        if !self.lock().insert(qualified.clone()) {
            return None;
        }
        let (said, granted) = oneshot::channel();
        let followed = Arc::clone(self);
        tokio::spawn(async move {
            run(&upstream, &id, &qualified, said, &server, stop).await;
            followed.lock().remove(&qualified);
        });
        Some(granted)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.ids.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Follows the upstream's task `id` until it ends, the upstream stops sending, or `stop`.
async fn run(
    upstream: &Upstream,
    id: &str,
    qualified: &str,
    said: oneshot::Sender<bool>,
    server: &Server,
    stop: CancellationToken,
) {
    let mut said = Some(said);
    let mut states = upstream.client().listen(SubscriptionFilter {
        task_ids: Some(vec![id.to_owned()]),
        ..SubscriptionFilter::default()
    });
    loop {
        let event = tokio::select! {
            event = states.next() => event,
            () = stop.cancelled() => return,
        };
        match event {
            Some(Ok(SubscriptionEvent::Acknowledged(granted))) => {
                let yes = granted
                    .task_ids
                    .is_some_and(|ids| ids.iter().any(|i| i == id));
                if let Some(said) = said.take() {
                    let _ = said.send(yes);
                }
                if !yes {
                    return;
                }
            }
            Some(Ok(SubscriptionEvent::Task(task))) => {
                let mut task = *task;
                let ended = task.task.status.is_terminal();
                task.task.task_id = qualified.to_owned();
                let params = TaskStatusNotificationParams { meta: None, task };
                match serde_json::to_string(&params) {
                    Ok(params) => smcp_bus::local_only(|| {
                        server.publish(Change::topic(topic(qualified), NOTIFICATION_TASKS, params));
                    }),
                    Err(e) => tracing::warn!(error = %e, "a task state not serialized"),
                }
                if ended {
                    return;
                }
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => {
                tracing::debug!(upstream = %upstream.name(), error = %e, "task stream ended");
                return;
            }
            None => return,
        }
    }
}
