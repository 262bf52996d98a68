//! SEP-2663 tasks, client side: `tasks/get`, `tasks/update`, `tasks/cancel`, and following a
//! task to its end.
//!
//! A server that negotiated the extension may answer a `tools/call` with a `CreateTaskResult`.
//! [`ToolCall::send`](crate::ToolCall::send) (and so [`Client::call_tool`]) follows it
//! transparently; [`ToolCall::start`](crate::ToolCall::start) hands out a [`TaskHandle`] for
//! applications that want the lifecycle; [`Client::get_task`], [`Client::cancel_task`] and
//! [`Client::resume_task`] work on a task id alone (e.g. one persisted across a restart).
//!
//! Following a task ([`TaskHandle::wait`]):
//! - polls `tasks/get` every `pollIntervalMs` (it may change per answer), kept between
//!   [`TaskPolling::min_interval`] and [`TaskPolling::max_interval`];
//! - retries a poll that failed transiently (a network error, a broken stream, a request
//!   timeout, HTTP 429 or 5xx) with exponential backoff, at most [`TaskPolling::max_retries`]
//!   times in a row;
//! - answers `inputRequests` through the installed [`InputHandler`](crate::InputHandler) and
//!   sends them with `tasks/update`, each key once: a key already answered is never presented
//!   again, however many polls still show it;
//! - gives up when the task's TTL (counted from when its `CreateTaskResult` arrived) or
//!   [`TaskPolling::max_wait`] has elapsed;
//! - sends `tasks/cancel` when it stops before the task ended: the future dropped (in a spawned
//!   task, bounded by [`TaskPolling::cancel_timeout`]), the caller's cancellation token, an
//!   expired bound or an error. `notifications/cancelled` is never used for a task.
//!
//! Every `tasks/get` answer is checked: its payload must fit its status
//! ([`DetailedTask::validate`]) and it must name the task asked about.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use smcp_proto::ext::tasks::{self, DetailedTask, GetTaskResult, Task, TaskStatus};
use smcp_proto::jsonrpc::{Notification, RawResult};
use smcp_proto::messages::method;
use smcp_proto::patterns::mrtr::{InputRequests, InputResponses};
use smcp_proto::server::tools::CallToolResult;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::client::{Client, ResultKind, decode, decode_value, result_kind, with_timeout};
use crate::error::{Error, Kind, Result};
use crate::error_kind::ErrorKind;
use crate::mrtr::{ElicitedFiles, fulfil};

pub use crate::task_polling::TaskPolling;

/// Whether a failed task request may be retried: the network, the stream, a timeout, or a
/// status that says "later" (429, 5xx). A JSON-RPC refusal with a 200 status is final.
fn transient(e: &Error) -> bool {
    e.is_connect()
        || e.is_stream_broken()
        || e.is_timeout()
        || e.status().is_some_and(|s| s == 429 || s >= 500)
}

fn task_params(task_id: &str) -> Map<String, Value> {
    let mut params = Map::new();
    params.insert(
        tasks::NAME_MEMBER.to_owned(),
        Value::String(task_id.to_owned()),
    );
    params
}

/// Checks a `tasks/get` answer: its `resultType`, its shape, its payload against its status,
/// and that it is about `task_id`.
fn parse_get(task_id: &str, value: &RawValue) -> Result<DetailedTask> {
    match result_kind(value)? {
        ResultKind::Complete => {}
        // The SEP's own examples show "task" on some tasks/get answers; the shape is the same.
        ResultKind::Task => tracing::debug!("tasks/get answered with resultType \"task\""),
        ResultKind::InputRequired => {
            return Err(Error::protocol(
                "tasks/get returned an InputRequiredResult; task input comes in inputRequests \
                 of an input_required task",
            ));
        }
    }
    let got: GetTaskResult = decode(tasks::METHOD_GET, value)?;
    got.task
        .validate()
        .map_err(|e| Error::protocol(format!("invalid tasks/get result: {e}")))?;
    if got.task.task.task_id != task_id {
        return Err(Error::protocol(
            "invalid tasks/get result: it describes another task than the one asked for \
             (taskId differs)",
        ));
    }
    Ok(got.task)
}

/// Checks the empty acknowledgement of `tasks/update` or `tasks/cancel`.
fn check_ack(method_name: &str, value: &RawValue) -> Result<()> {
    match result_kind(value)? {
        ResultKind::Complete => Ok(()),
        ResultKind::InputRequired | ResultKind::Task => Err(Error::protocol(format!(
            "{method_name} must answer an empty acknowledgement (resultType \"complete\")"
        ))),
    }
}

impl Client {
    /// One task request with its own timeout; notifications on its stream are logged.
    async fn task_request(
        &self,
        method_name: &str,
        mut params: Map<String, Value>,
        timeout: Option<Duration>,
    ) -> Result<RawResult> {
        let mut sink = |n: Notification| tracing::debug!(method = %n.method, "notification");
        with_timeout(
            timeout,
            self.exchange(method_name, &mut params, &[], &[], &mut sink),
        )
        .await
    }

    /// `tasks/get`: the task's current state, checked (its payload fits its status, it is the
    /// task asked for). Sent with `Mcp-Name: <taskId>`.
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// let task = client.get_task("786512e2-9e0d-44bd-8f29-789f320fe840").await?;
    /// println!("{}: {}", task.task.status, task.task.status_message.unwrap_or_default());
    /// # Ok(()) }
    /// ```
    pub async fn get_task(&self, task_id: &str) -> Result<DetailedTask> {
        self.get_task_within(task_id, self.inner.timeout).await
    }

    async fn get_task_within(
        &self,
        task_id: &str,
        timeout: Option<Duration>,
    ) -> Result<DetailedTask> {
        let v = self
            .task_request(tasks::METHOD_GET, task_params(task_id), timeout)
            .await?;
        parse_get(task_id, &v)
    }

    /// A [`TaskHandle`] on an existing task, from its id alone (e.g. one persisted before a
    /// restart, as SEP-2663 suggests): one `tasks/get` for its current state. Its TTL and
    /// [`TaskPolling::max_wait`] count from now.
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client, saved_id: &str) -> Result<(), smcp_client::Error> {
    /// let result = client.resume_task(saved_id).await?.wait().await?;
    /// # Ok(()) }
    /// ```
    pub async fn resume_task(&self, task_id: &str) -> Result<TaskHandle> {
        let state = self.get_task(task_id).await?;
        Ok(TaskHandle::new(
            self.clone(),
            state.task,
            self.inner.timeout,
        ))
    }

    /// `tasks/update`: answers some of a task's outstanding input requests. The server may
    /// apply them later (eventual consistency); poll to see the effect. Prefer
    /// [`TaskHandle::update`], which remembers the keys answered.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use smcp_client::proto::client::elicitation::ElicitResult;
    /// use smcp_client::proto::patterns::mrtr::InputResponses;
    ///
    /// # async fn demo(client: smcp_client::Client, task_id: &str) -> Result<(), smcp_client::Error> {
    /// let answers = InputResponses::new().with("confirm", ElicitResult::decline());
    /// client.update_task(task_id, answers).await?;
    /// # Ok(()) }
    /// ```
    pub async fn update_task(&self, task_id: &str, responses: InputResponses) -> Result<()> {
        self.update_task_within(task_id, responses, self.inner.timeout)
            .await
    }

    async fn update_task_within(
        &self,
        task_id: &str,
        responses: InputResponses,
        timeout: Option<Duration>,
    ) -> Result<()> {
        let mut params = task_params(task_id);
        params.insert(
            "inputResponses".to_owned(),
            Value::Object(responses.0.clone()),
        );
        let v = self
            .task_request(tasks::METHOD_UPDATE, params, timeout)
            .await?;
        check_ack(tasks::METHOD_UPDATE, &v)
    }

    /// `tasks/cancel`: asks the server to stop a task. The acknowledgement says the request
    /// was recorded, not that the task stopped: it may still end otherwise.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(client: smcp_client::Client, task_id: &str) -> Result<(), smcp_client::Error> {
    /// client.cancel_task(task_id).await?;
    /// let state = client.get_task(task_id).await?; // `cancelled`, or how it ended otherwise
    /// println!("{}", state.task.status);
    /// # Ok(()) }
    /// ```
    pub async fn cancel_task(&self, task_id: &str) -> Result<()> {
        self.cancel_task_within(task_id, self.inner.timeout).await
    }

    async fn cancel_task_within(&self, task_id: &str, timeout: Option<Duration>) -> Result<()> {
        let v = self
            .task_request(tasks::METHOD_CANCEL, task_params(task_id), timeout)
            .await?;
        check_ack(tasks::METHOD_CANCEL, &v)
    }
}

/// A task a server runs a `tools/call` as (SEP-2663), from [`ToolCall::start`](crate::ToolCall::start).
///
/// [`wait`](Self::wait) follows it to its end; [`get`](Self::get), [`update`](Self::update)
/// and [`cancel`](Self::cancel) are the single steps, for an application that drives the
/// lifecycle itself. Dropping the handle does nothing to the task (it runs on, and the id
/// can be used later with [`Client::get_task`]).
///
/// ```no_run
/// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
/// use smcp_client::ToolCallOutcome;
/// use smcp_client::proto::ext::tasks::TaskStatus;
/// let ToolCallOutcome::Task(mut task) = client.call_tool_task("long_job", serde_json::json!({})).await? else {
///     return Ok(());
/// };
/// let state = task.get().await?;
/// if state.task.status == TaskStatus::Working {
///     task.cancel().await?;
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct TaskHandle {
    client: Client,
    task: Task,
    /// When the `CreateTaskResult` arrived: the TTL and `max_wait` count from here (the
    /// server's `createdAt` is on another clock).
    created: Instant,
    /// Input request keys already answered (never presented or answered again).
    answered: HashSet<String>,
    /// Timeout of each request.
    timeout: Option<Duration>,
}

impl TaskHandle {
    pub(crate) fn new(client: Client, task: Task, timeout: Option<Duration>) -> Self {
        Self {
            client,
            task,
            created: Instant::now(),
            answered: HashSet::new(),
            timeout,
        }
    }

    /// The task id.
    pub fn id(&self) -> &str {
        &self.task.task_id
    }

    /// The task's metadata as last seen (the `CreateTaskResult`, then each [`get`](Self::get)).
    pub fn task(&self) -> &Task {
        &self.task
    }

    /// One `tasks/get`, checked; the handle remembers the state.
    pub async fn get(&mut self) -> Result<DetailedTask> {
        let task = self
            .client
            .get_task_within(&self.task.task_id, self.timeout)
            .await?;
        self.task = task.task.clone();
        Ok(task)
    }

    /// The input requests of `task` (an `input_required` state) not answered yet through
    /// this handle: what to present, each key once.
    ///
    /// # Examples
    ///
    /// Drives a task that asks for input, answering each question once:
    ///
    /// ```no_run
    /// use smcp_client::proto::client::elicitation::ElicitResult;
    /// use smcp_client::proto::ext::tasks::TaskStatus;
    /// use smcp_client::proto::patterns::mrtr::InputResponses;
    ///
    /// # async fn demo(mut task: smcp_client::TaskHandle) -> Result<(), smcp_client::Error> {
    /// loop {
    ///     let state = task.get().await?;
    ///     match state.task.status {
    ///         TaskStatus::InputRequired => {
    ///             let mut answers = InputResponses::new();
    ///             for (key, _request) in task.new_input_requests(&state) {
    ///                 answers.insert(key, ElicitResult::decline()); // a real host asks the user
    ///             }
    ///             task.update(answers).await?;
    ///         }
    ///         TaskStatus::Working => tokio::time::sleep(std::time::Duration::from_secs(1)).await,
    ///         _ => break,
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn new_input_requests(&self, task: &DetailedTask) -> InputRequests {
        task.input_requests
            .iter()
            .flatten()
            .filter(|(k, _)| !self.answered.contains(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// `tasks/update` with `responses`; their keys count as answered from now on. Keys
    /// already answered are left out (the server would ignore them).
    pub async fn update(&mut self, mut responses: InputResponses) -> Result<()> {
        responses.0.retain(|k, _| !self.answered.contains(k));
        if responses.0.is_empty() {
            return Ok(());
        }
        self.answered.extend(responses.0.keys().cloned());
        self.client
            .update_task_within(&self.task.task_id, responses, self.timeout)
            .await
    }

    /// `tasks/cancel`. Cancellation is cooperative: poll to see how the task ended.
    pub async fn cancel(&self) -> Result<()> {
        self.client
            .cancel_task_within(&self.task.task_id, self.timeout)
            .await
    }

    /// Follows the task to its end (see the [module docs](crate::tasks)) and returns its
    /// `CallToolResult`. A `failed` task is an `Err` with its JSON-RPC error, a `cancelled`
    /// one an `Err` of kind [`ErrorKind::TaskCancelled`]. Dropping the future
    /// before the task ended sends `tasks/cancel`.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use smcp_client::{ErrorKind, ToolCallOutcome};
    ///
    /// # async fn demo(client: smcp_client::Client) -> Result<(), smcp_client::Error> {
    /// if let ToolCallOutcome::Task(task) = client.call_tool_task("render", serde_json::json!({})).await? {
    ///     let id = task.id().to_owned(); // keep it to resume after a restart
    ///     match task.wait().await {
    ///         Ok(result) => println!("{}", result.text_content()),
    ///         Err(e) if e.kind() == ErrorKind::TaskFailed => println!("task {id} failed: {:?}", e.jsonrpc_error()),
    ///         Err(e) => return Err(e),
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn wait(self) -> Result<CallToolResult> {
        self.follow(&mut |_| {}, None).await
    }

    /// [`wait`](Self::wait), calling `on_status` with the seed state and then each `tasks/get`
    /// answer as polls return (for a live status display).
    ///
    /// ```no_run
    /// # async fn demo(task: smcp_client::TaskHandle) -> Result<(), smcp_client::Error> {
    /// let result = task
    ///     .wait_with(|t| eprintln!("{}: {}", t.task.status, t.task.status_message.as_deref().unwrap_or("")))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn wait_with(
        self,
        mut on_status: impl FnMut(&DetailedTask) + Send,
    ) -> Result<CallToolResult> {
        self.follow(&mut on_status, None).await
    }

    /// [`wait_with`](Self::wait_with) that stops when `token` is cancelled: `tasks/cancel` is
    /// sent (and its acknowledgement awaited, within [`TaskPolling::cancel_timeout`]) before
    /// this returns an error for which [`Error::is_cancelled`] is true.
    pub async fn wait_until_cancelled(
        self,
        mut on_status: impl FnMut(&DetailedTask) + Send,
        token: CancellationToken,
    ) -> Result<CallToolResult> {
        self.follow(&mut on_status, Some(token)).await
    }

    /// Follows the task; `tasks/cancel` unless it reached a terminal status.
    pub(crate) async fn follow(
        mut self,
        on_status: &mut (dyn FnMut(&DetailedTask) + Send),
        cancel: Option<CancellationToken>,
    ) -> Result<CallToolResult> {
        let client = self.client.clone();
        let task_id = self.task.task_id.clone();
        let cancel_timeout = client.inner.task_polling.cancel_timeout;
        let mut guard = CancelOnDrop {
            client: client.clone(),
            task_id: task_id.clone(),
            timeout: cancel_timeout,
            armed: true,
        };
        let result = match cancel {
            None => self.drive(on_status).await,
            Some(token) => tokio::select! {
                r = self.drive(on_status) => r,
                () = token.cancelled() => Err(Error::new(Kind::CancelledTask { task_id: task_id.clone() })),
            },
        };
        let ended = match &result {
            Ok(_) => true,
            Err(e) => matches!(e.kind(), ErrorKind::TaskFailed | ErrorKind::TaskCancelled),
        };
        guard.armed = false;
        if !ended {
            // Stopped early: ask the server to stop too, and wait for the ack (bounded) so a
            // process about to exit has sent it.
            match tokio::time::timeout(cancel_timeout, client.cancel_task(&task_id)).await {
                Ok(Ok(())) => tracing::info!("tasks/cancel acknowledged"),
                Ok(Err(e)) => tracing::warn!(error = %e, "tasks/cancel failed"),
                Err(_) => tracing::warn!(?cancel_timeout, "tasks/cancel timed out"),
            }
        }
        result
    }

    /// The polling loop. Returns at a terminal status or a non-transient error.
    async fn drive(
        &mut self,
        on_status: &mut (dyn FnMut(&DetailedTask) + Send),
    ) -> Result<CallToolResult> {
        let polling = self.client.inner.task_polling.clone();
        on_status(&DetailedTask::bare(self.task.clone()));
        // A seed that is not `working` has something to show (input requests, an end): ask now.
        let mut wait = if self.task.status == TaskStatus::Working {
            polling.interval(self.task.poll_interval_ms)
        } else {
            Duration::ZERO
        };
        let mut failures = 0u32;
        loop {
            // The TTL may change with every answer; `max_wait` does not.
            let bound = [
                self.task.ttl_ms.map(Duration::from_millis),
                polling.max_wait,
            ]
            .into_iter()
            .flatten()
            .min();
            if let Some(bound) = bound {
                let left = bound.saturating_sub(self.created.elapsed());
                if left.is_zero() {
                    return Err(Error::new(Kind::TaskExpired {
                        task_id: self.task.task_id.clone(),
                        after: bound,
                    }));
                }
                wait = wait.min(left);
            }
            tokio::time::sleep(wait).await;
            let state = match self.get().await {
                Ok(state) => {
                    failures = 0;
                    state
                }
                Err(e) if transient(&e) && failures < polling.max_retries => {
                    failures += 1;
                    wait = polling.backoff(polling.interval(self.task.poll_interval_ms), failures);
                    tracing::info!(error = %e, attempt = failures, ?wait, "tasks/get failed; retrying");
                    continue;
                }
                Err(e) => return Err(e),
            };
            tracing::debug!(status = %state.task.status, "task state");
            on_status(&state);
            wait = polling.interval(state.task.poll_interval_ms);
            match state.task.status {
                TaskStatus::Working => {}
                TaskStatus::InputRequired => self.answer(state, &polling).await?,
                TaskStatus::Completed => {
                    let result = state.result.unwrap_or_default();
                    return decode_value(method::TOOLS_CALL, Value::Object(result));
                }
                TaskStatus::Failed => {
                    return Err(Error::new(Kind::TaskFailed {
                        task_id: state.task.task_id,
                        // `validate` guarantees it; the fallback is never used.
                        error: state.error.unwrap_or_else(|| {
                            smcp_proto::error::ErrorObject::new(-32603, "task failed")
                        }),
                    }));
                }
                TaskStatus::Cancelled => {
                    return Err(Error::new(Kind::TaskCancelled {
                        task_id: state.task.task_id,
                        message: state.task.status_message,
                    }));
                }
            }
        }
    }

    /// Answers the input requests of `state` not answered yet, then sends them with
    /// `tasks/update` (retried like a poll when it fails transiently).
    async fn answer(&mut self, state: DetailedTask, polling: &TaskPolling) -> Result<()> {
        let fresh = self.new_input_requests(&state);
        if fresh.is_empty() {
            return Ok(());
        }
        if self.answered.len() + fresh.len() > polling.max_input_requests {
            return Err(Error::protocol(format!(
                "the task asked for more than {} inputs; giving up",
                polling.max_input_requests
            )));
        }
        let handler = self.client.inner_handler();
        let responses = fulfil(handler, fresh, Some(&self.client as &dyn ElicitedFiles)).await?;
        self.answered.extend(responses.keys().cloned());
        let responses = InputResponses(responses);
        let mut failures = 0u32;
        loop {
            match self
                .client
                .update_task_within(&self.task.task_id, responses.clone(), self.timeout)
                .await
            {
                Ok(()) => return Ok(()),
                Err(e) if transient(&e) && failures < polling.max_retries => {
                    failures += 1;
                    let wait =
                        polling.backoff(polling.interval(self.task.poll_interval_ms), failures);
                    tracing::info!(error = %e, attempt = failures, ?wait, "tasks/update failed; retrying");
                    tokio::time::sleep(wait).await;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// Sends `tasks/cancel` from a spawned task when a task's follower is dropped mid-way.
struct CancelOnDrop {
    client: Client,
    task_id: String,
    timeout: Duration,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("task follower dropped outside a Tokio runtime; tasks/cancel not sent");
            return;
        };
        let client = self.client.clone();
        let task_id = std::mem::take(&mut self.task_id);
        let timeout = self.timeout;
        runtime.spawn(async move {
            match tokio::time::timeout(timeout, client.cancel_task(&task_id)).await {
                Ok(Ok(())) => tracing::info!("task follower dropped; tasks/cancel acknowledged"),
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "task follower dropped; tasks/cancel failed");
                }
                Err(_) => tracing::warn!(?timeout, "task follower dropped; tasks/cancel timed out"),
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_have_a_floor_and_a_cap() {
        let p = TaskPolling::default();
        assert_eq!(p.interval(Some(0)), p.min_interval);
        assert_eq!(p.interval(Some(5000)), Duration::from_secs(5));
        assert_eq!(p.interval(Some(u64::MAX)), p.max_interval);
        assert_eq!(p.interval(None), p.default_interval);
        let base = Duration::from_millis(200);
        assert_eq!(p.backoff(base, 1), Duration::from_millis(400));
        assert_eq!(p.backoff(base, 3), Duration::from_millis(1600));
        assert_eq!(p.backoff(base, 30), p.max_interval);
    }

    #[test]
    fn tasks_get_answers_are_checked() {
        let ok = serde_json::json!({
            "resultType": "complete", "taskId": "t1", "status": "working",
            "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z",
            "ttlMs": null
        });
        let ok = serde_json::value::to_raw_value(&ok).unwrap();
        assert!(parse_get("t1", &ok).is_ok());
        let other = parse_get("t2", &ok).unwrap_err();
        assert!(other.is_protocol_violation() && other.to_string().contains("taskId"));
        let done = serde_json::json!({
            "resultType": "complete", "taskId": "t1", "status": "completed",
            "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z",
            "ttlMs": 1000
        });
        let e = parse_get("t1", &serde_json::value::to_raw_value(&done).unwrap()).unwrap_err();
        assert!(
            e.is_protocol_violation() && e.to_string().contains("`result`"),
            "{e}"
        );
    }
}
