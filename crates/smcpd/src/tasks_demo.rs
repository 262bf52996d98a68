//! The SEP-2663 demo: `long_job`, a task-capable tool that works for a while, reports
//! progress, may stop half-way to ask the user whether to go on, and stops promptly when
//! cancelled.
//!
//! Whether a call becomes a task is the server's decision (`smcp_tasks`): a request that
//! declared the extension and is still running after the immediate window gets a task
//! handle; any other request runs `long_job` as a plain call (with progress notifications and
//! an ordinary multi round-trip question).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use smcp_proto::client::elicitation::{ElicitAction, ElicitValue};
use smcp_proto::server::tools::{CallToolResult, ToolAnnotations};
use smcp_server::{HandlerError, ServerBuilder, ToolCall, mrtr, tool};
use smcp_tasks::{TaskSupport, TaskToolExt, TasksExtension};

/// The name of the demo tool.
pub const LONG_JOB: &str = "long_job";
/// `long_job`'s longest run, in seconds.
pub const MAX_SECONDS: u64 = 3600;
/// `long_job`'s run when `seconds` is not given.
pub const DEFAULT_SECONDS: u64 = 30;
/// The input request key of `long_job`'s question.
pub const CONFIRM_KEY: &str = "continue";

/// Registers the tasks extension and the tool `long_job`.
pub fn with_tasks(builder: ServerBuilder, tasks: TasksExtension) -> ServerBuilder {
    builder.extension(tasks).tool(long_job())
}

/// `long_job`'s arguments, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Job {
    seconds: u64,
    confirm_at: Option<u64>,
}

impl Job {
    /// Checks the arguments; an error names the argument and its bounds.
    fn parse(arguments: &Map<String, Value>) -> Result<Self, HandlerError> {
        let seconds = match arguments.get("seconds") {
            None | Some(Value::Null) => DEFAULT_SECONDS,
            Some(v) => match v.as_u64() {
                Some(s) if (1..=MAX_SECONDS).contains(&s) => s,
                _ => {
                    return Err(HandlerError::failed(format!(
                        "invalid arguments: \"seconds\" must be an integer from 1 to {MAX_SECONDS}"
                    )));
                }
            },
        };
        let confirm_at = match arguments.get("confirm_at") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_u64() {
                Some(at) if at < seconds => Some(at),
                _ => {
                    return Err(HandlerError::failed(format!(
                        "invalid arguments: \"confirm_at\" must be an integer from 0 to {} \
                         (below \"seconds\")",
                        seconds - 1
                    )));
                }
            },
        };
        Ok(Self {
            seconds,
            confirm_at,
        })
    }
}

/// What `long_job` keeps across the question (the handler runs again from the top once it
/// is answered): when it started and how many seconds of work are done.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Progress {
    started_ms: u64,
    done: u64,
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or_default()
}

/// Works from second `from` to second `to`, one progress report per second. On
/// cancellation, stops at once: `Err` with the seconds of work done.
async fn work(call: &ToolCall, job: Job, from: u64, to: u64) -> Result<(), u64> {
    let base = tokio::time::Instant::now();
    for step in from + 1..=to {
        tokio::select! {
            () = call.ctx.cancelled() => {
                let done = step - 1;
                tracing::info!(done, seconds = job.seconds, "long_job cancelled after {done} of {} s", job.seconds);
                return Err(done);
            }
            () = tokio::time::sleep_until(base + Duration::from_secs(step - from)) => {}
        }
        // Sent for a plain call; inside a task, progress is silently dropped (SEP-2663).
        let message = format!("{step} of {} s", job.seconds);
        let _ = call
            .ctx
            .progress(
                seconds_f64(step),
                Some(seconds_f64(job.seconds)),
                Some(&message),
            )
            .await;
    }
    Ok(())
}

/// Seconds (at most [`MAX_SECONDS`]) as a progress value: exact.
fn seconds_f64(seconds: u64) -> f64 {
    f64::from(u32::try_from(seconds).unwrap_or(u32::MAX))
}

/// The end of a cancelled job: the tool error its (cancelled) task or call ends with.
fn cancelled(done: u64, seconds: u64) -> HandlerError {
    HandlerError::failed(format!("long_job cancelled after {done} of {seconds} s"))
}

/// The tool.
fn long_job() -> smcp_server::ToolBuilder {
    tool(LONG_JOB)
        .title("Long job")
        .description(
            "Works for `seconds` seconds (default 30, at most 3600), reporting progress every \
             second. With `confirm_at`, stops after that many seconds to ask whether to go on \
             (an elicitation form; needs a client that declares form elicitation). Runs as a \
             SEP-2663 task for a client that declares the tasks extension; stops promptly when \
             cancelled.",
        )
        .input_schema(json!({
            "type": "object",
            "properties": {
                "seconds": {
                    "type": "integer", "minimum": 1, "maximum": MAX_SECONDS,
                    "default": DEFAULT_SECONDS,
                    "description": "How long the job works"
                },
                "confirm_at": {
                    "type": "integer", "minimum": 0,
                    "description": "Seconds after the start at which to ask whether to go on (below `seconds`)"
                }
            },
            "additionalProperties": false
        }))
        .annotations(ToolAnnotations::new().read_only(true))
        .task_support(TaskSupport::optional())
        .handler(|call| async move {
            let job = Job::parse(&call.arguments)?;
            // A later round (after the answer) resumes where the first stopped: the work
            // before the question is not done twice.
            let prior: Option<Progress> = call.input.state()?;
            let progress = match prior {
                Some(progress) => progress,
                None => {
                    tracing::info!(seconds = job.seconds, "long_job started");
                    Progress {
                        started_ms: unix_ms(),
                        done: 0,
                    }
                }
            };
            let mut done = progress.done;
            let mut asked = None;
            if let Some(at) = job.confirm_at {
                if done < at {
                    work(&call, job, done, at)
                        .await
                        .map_err(|done| cancelled(done, job.seconds))?;
                    done = at;
                }
                call.input.set_state(&Progress {
                    started_ms: progress.started_ms,
                    done,
                })?;
                let answer = call.input.ask(mrtr::elicit_form(
                    CONFIRM_KEY,
                    "Continue?",
                    json!({
                        "type": "object",
                        "properties": {
                            "continue": {
                                "type": "boolean",
                                "title": "Continue",
                                "description": format!(
                                    "long_job has worked {at} of {} s; go on?",
                                    job.seconds
                                )
                            }
                        },
                        "required": ["continue"]
                    }),
                ))?;
                let go_on = answer.action == ElicitAction::Accept
                    && answer.content.as_ref().and_then(|c| c.get("continue"))
                        == Some(&ElicitValue::Bool(true));
                if !go_on {
                    tracing::info!(at, "long_job stopped at the user's request");
                    let mut result = CallToolResult::error_text(format!(
                        "long_job stopped at the user's request after {at} of {} s \
                         (answer: {:?})",
                        job.seconds, answer.action
                    ));
                    result.structured_content =
                        Some(json!({"stopped": true, "worked": at, "seconds": job.seconds}));
                    return Ok(result);
                }
                asked = Some(at);
            }
            work(&call, job, done, job.seconds)
                .await
                .map_err(|done| cancelled(done, job.seconds))?;
            let elapsed_ms = unix_ms().saturating_sub(progress.started_ms);
            let elapsed = Duration::from_millis(elapsed_ms).as_secs_f64();
            tracing::info!(seconds = job.seconds, elapsed_ms, "long_job finished");
            let confirmed = asked
                .map(|at| format!(", continued after the question at {at} s"))
                .unwrap_or_default();
            let mut result = CallToolResult::text(format!(
                "long_job finished: worked {} s in {elapsed:.1} s{confirmed}",
                job.seconds
            ));
            result.structured_content = Some(json!({
                "worked": job.seconds,
                "elapsedMs": elapsed_ms,
                "confirmedAt": asked,
            }));
            Ok::<_, HandlerError>(result)
        })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn args(v: Value) -> Result<Job, HandlerError> {
        let Value::Object(map) = v else { panic!() };
        Job::parse(&map)
    }

    #[test]
    fn arguments_are_bounded_and_named_in_errors() {
        assert_eq!(
            args(json!({})).unwrap(),
            Job {
                seconds: DEFAULT_SECONDS,
                confirm_at: None
            }
        );
        assert_eq!(
            args(json!({"seconds": 5, "confirm_at": 4})).unwrap(),
            Job {
                seconds: 5,
                confirm_at: Some(4)
            }
        );
        for bad in [
            json!({"seconds": 0}),
            json!({"seconds": 3601}),
            json!({"seconds": "5"}),
            json!({"seconds": 1.5}),
        ] {
            let e = args(bad.clone()).unwrap_err().to_string();
            assert!(
                e.contains("\"seconds\" must be an integer from 1 to 3600"),
                "{bad}: {e}"
            );
        }
        for bad in [
            json!({"seconds": 5, "confirm_at": 5}),
            json!({"seconds": 5, "confirm_at": -1}),
        ] {
            let e = args(bad.clone()).unwrap_err().to_string();
            assert!(
                e.contains("\"confirm_at\" must be an integer from 0 to 4"),
                "{bad}: {e}"
            );
        }
    }
}
