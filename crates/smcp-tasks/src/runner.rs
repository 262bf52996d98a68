//! The instance side of tasks: the handler futures this instance runs, and the loop that
//! drives one task from its first round to a terminal status.
//!
//! A task's state is in the [`TaskStore`](crate::TaskStore); what lives here is only what
//! cannot be stored: the running future, its cancellation token, and a wake-up for answers
//! that `tasks/update` wrote.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::FutureExt as _;
use serde_json::{Map, Value};
use smcp_proto::error::ErrorObject;
use smcp_proto::ext::tasks::TaskStatus;
use smcp_proto::server::tools::CallToolResult;
use smcp_server::extension::ToolOutcome;
use smcp_server::mrtr::{Input, InputRequired};
use smcp_server::tools::BoxFuture;
use smcp_server::{CallTemplate, HandlerError, Next, RequestContext, ToolCall, ToolReply};
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::core::Core;
use crate::store::{TaskRecord, TaskStoreError};

/// A round's outcome, or the panic it ended with.
pub(crate) type Caught = Result<ToolOutcome, Box<dyn Any + Send>>;

/// Runs `call` through the rest of the chain, catching a panic.
pub(crate) fn round(next: Next, call: ToolCall) -> BoxFuture<Caught> {
    Box::pin(AssertUnwindSafe(next.run(call)).catch_unwind())
}

/// One task being driven.
pub(crate) struct Running {
    pub(crate) task_id: String,
    pub(crate) principal: Option<String>,
    /// The detached context every round runs with.
    pub(crate) ctx: RequestContext,
    pub(crate) cancel: CancellationToken,
    pub(crate) wake: Arc<Notify>,
    pub(crate) template: CallTemplate,
    pub(crate) next: Next,
    /// The input of the round running now.
    pub(crate) input: Input,
    /// The MRTR rounds before the task was created (SEP-2663 §Composition: they do not
    /// count against the task's own bound on rounds).
    pub(crate) rounds_before: u32,
    /// When the TTL elapses.
    pub(crate) expires: Option<Instant>,
}

/// How a task ends.
enum Ending {
    Completed(Map<String, Value>),
    Failed(ErrorObject),
    Cancelled,
    /// The record is gone (expired or purged): nothing to write.
    Gone,
}

/// How a finished tool call ends its task: completed with the result as the task's stored
/// object, or failed (−32603) when the result does not serialize to a JSON object, rather than
/// completed with an empty result that hides what was lost.
fn ending_for(result: &CallToolResult) -> Ending {
    match serde_json::to_value(result) {
        Ok(Value::Object(map)) => Ending::Completed(map),
        Ok(_) => Ending::Failed(ErrorObject::internal(
            "the tool result is not a JSON object",
        )),
        Err(e) => Ending::Failed(ErrorObject::internal(format!(
            "the tool result could not be serialized: {e}"
        ))),
    }
}

async fn until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

async fn tick(every: Option<Duration>) {
    match every {
        Some(every) => tokio::time::sleep(every).await,
        None => std::future::pending().await,
    }
}

/// Drives a task to its end, starting with `fut`, the first round (already running).
pub(crate) async fn drive(core: Arc<Core>, mut task: Running, mut fut: BoxFuture<Caught>) {
    let span =
        tracing::debug_span!("mcp.task", task_id = %task.task_id, tool = task.template.name());
    let ending = loop {
        let outcome = tokio::select! {
            biased;
            outcome = &mut fut => Some(outcome),
            () = async {
                task.cancel.cancelled().await;
                tokio::time::sleep(core.cancel_grace).await;
            } => None,
            () = until(task.expires) => break Ending::Gone,
            () = watch_cancel(&core, &task) => None,
        };
        if task.cancel.is_cancelled() {
            // A handler that ends after a cancel ends cancelled, whatever it returned.
            break Ending::Cancelled;
        }
        let ir = match outcome {
            None => break Ending::Cancelled,
            Some(Err(_panic)) => {
                span.in_scope(|| tracing::warn!("task handler panicked"));
                break Ending::Failed(ErrorObject::internal("the tool failed unexpectedly"));
            }
            Some(Ok(Ok(ToolReply::Complete(result)))) => {
                break ending_for(&result);
            }
            Some(Ok(Ok(ToolReply::Other(result)))) => break Ending::Completed(result),
            Some(Ok(Err(HandlerError::Failed(message)))) => {
                break ending_for(&CallToolResult::error_text(message));
            }
            Some(Ok(Err(HandlerError::Rpc(error)))) => break Ending::Failed(error),
            Some(Ok(Err(HandlerError::InputRequired(ir)))) => *ir,
            Some(Ok(Err(other))) => break Ending::Failed(ErrorObject::internal(other.to_string())),
        };
        match wait_for_input(&core, &task, ir).await {
            Ok(input) => {
                task.input = input.clone();
                let call = task.template.round(task.ctx.clone(), input);
                fut = round(task.next.clone(), call);
            }
            Err(ending) => break ending,
        }
    };
    // Stop the handler if it still runs (TTL), and whatever it spawned with its token.
    task.cancel.cancel();
    drop(fut);
    core.runner.remove(&task.task_id);
    finish(&core, &task, ending).await;
    span.in_scope(|| tracing::debug!("task ended"));
}

/// With a shared store, a `tasks/cancel` written on another instance: fires the token when
/// the record says so. Never completes: the handler then gets the same cancel grace as for a
/// local cancel (the arm that waits on the token), rather than being dropped mid-step.
async fn watch_cancel(core: &Core, task: &Running) {
    let every = core.store.watch_interval();
    loop {
        tick(every).await;
        if let Ok(record) = core
            .store
            .get(&task.task_id, task.principal.as_deref())
            .await
            && record.cancel_requested
        {
            task.cancel.cancel();
            return std::future::pending().await;
        }
    }
}

/// Puts the task in `input_required` with the requests of `ir` and waits until they are all
/// answered; returns the next round's input.
async fn wait_for_input(core: &Core, task: &Running, ir: InputRequired) -> Result<Input, Ending> {
    let held = task.input.hold(&ir);
    if held.round.saturating_sub(task.rounds_before) > core.max_rounds {
        return Err(Ending::Failed(ErrorObject::internal(format!(
            "the tool asked for input more than {} times",
            core.max_rounds
        ))));
    }
    if ir.requests().is_empty() {
        // State only: "try again later". Run the next round after a poll interval.
        tokio::select! {
            biased;
            () = task.cancel.cancelled() => return Err(Ending::Cancelled),
            () = tokio::time::sleep(core.poll_interval) => {}
        }
        return Ok(Input::resume(task.ctx.clone(), held, Map::new()));
    }
    let keys: Vec<String> = ir.requests().iter().map(|(k, _)| k.clone()).collect();
    let requests: smcp_proto::patterns::mrtr::InputRequests =
        ir.requests().iter().cloned().collect();
    let message = format!("Waiting for input: {}", keys.join(", "));
    let now = core.now_ms();
    let stored_held = held.clone();
    let reused = Arc::new(Mutex::new(None));
    let reused_in = reused.clone();
    let record = core
        .store
        .update(
            &task.task_id,
            task.principal.as_deref(),
            Box::new(move |r: &mut TaskRecord| {
                if r.status.is_terminal() {
                    return;
                }
                if let Some(key) = keys.iter().find(|k| r.issued_keys.contains(k)) {
                    *reused_in.lock().unwrap_or_else(PoisonError::into_inner) = Some(key.clone());
                    return;
                }
                r.issued_keys.extend(keys.iter().cloned());
                r.status = TaskStatus::InputRequired;
                r.status_message = Some(message.clone());
                r.input_requests = requests.clone();
                r.responses = Map::new();
                r.held = Some(stored_held.clone());
                r.last_updated_at_ms = now;
            }),
        )
        .await;
    let Ok(record) = record else {
        return Err(Ending::Gone);
    };
    if let Some(key) = reused.lock().unwrap_or_else(PoisonError::into_inner).take() {
        return Err(Ending::Failed(ErrorObject::internal(format!(
            "the tool asked again for input {key:?}, a key this task already used"
        ))));
    }
    if record.cancel_requested {
        return Err(Ending::Cancelled);
    }
    core.publish(&task.ctx, &record);
    let every = core.store.watch_interval();
    loop {
        tokio::select! {
            biased;
            () = task.cancel.cancelled() => return Err(Ending::Cancelled),
            () = until(task.expires) => return Err(Ending::Gone),
            () = task.wake.notified() => {}
            () = tick(every) => {}
        }
        let record = match core
            .store
            .get(&task.task_id, task.principal.as_deref())
            .await
        {
            Ok(record) => record,
            Err(TaskStoreError::Unavailable(_)) => continue,
            Err(_) => return Err(Ending::Gone),
        };
        if record.cancel_requested {
            return Err(Ending::Cancelled);
        }
        if record.input_requests.is_empty() {
            return Ok(Input::resume(task.ctx.clone(), held, record.responses));
        }
    }
}

/// Writes the task's terminal status and tells listeners.
async fn finish(core: &Core, task: &Running, ending: Ending) {
    let (status, message, result, error) = match ending {
        Ending::Gone => return,
        Ending::Completed(result) => (TaskStatus::Completed, None, Some(result), None),
        Ending::Failed(error) => (
            TaskStatus::Failed,
            Some(format!("Tool execution failed: {}", error.message)),
            None,
            Some(error),
        ),
        Ending::Cancelled => (
            TaskStatus::Cancelled,
            Some("The task was cancelled".to_owned()),
            None,
            None,
        ),
    };
    let now = core.now_ms();
    // Whether this write ended the task (not, e.g., another instance that found its lease
    // lapsed): only then is the ending published here.
    let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ended_in = ended.clone();
    let written = core
        .store
        .update(
            &task.task_id,
            task.principal.as_deref(),
            Box::new(move |r: &mut TaskRecord| {
                let terminal = r.status.is_terminal();
                ended_in.store(!terminal, std::sync::atomic::Ordering::SeqCst);
                if terminal {
                    return;
                }
                r.status = status;
                r.status_message = message.clone();
                r.result = result.clone();
                r.error = error.clone();
                r.input_requests.clear();
                r.responses = Map::new();
                r.held = None;
                r.last_updated_at_ms = now;
            }),
        )
        .await;
    match written {
        Ok(record) if ended.load(std::sync::atomic::Ordering::SeqCst) => {
            core.publish(&task.ctx, &record);
        }
        Ok(record) => tracing::debug!(status = ?record.status, "task already ended"),
        Err(e) => tracing::debug!(error = %e, "task ended after its record was gone"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_call_completes_its_task_with_the_result_object() {
        let Ending::Completed(map) = ending_for(&CallToolResult::text("done")) else {
            panic!("a serializable result completes the task");
        };
        assert_eq!(map["content"][0]["text"], "done");
    }
}
