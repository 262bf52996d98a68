//! SEP-2663 "Tasks Extension" (`io.modelcontextprotocol/tasks`): wire types.
//!
//! A server that negotiated the extension on a request may answer a `tools/call` with a
//! [`CreateTaskResult`] (`resultType: "task"`) instead of its `CallToolResult`. The client then
//! polls `tasks/get` ([`GetTaskResult`], a [`DetailedTask`]), answers the task's input requests
//! with `tasks/update` and stops it with `tasks/cancel` (both answer an empty acknowledgement,
//! [`crate::basic::EmptyResult`]). `notifications/tasks` carries the same [`DetailedTask`] on a
//! `subscriptions/listen` stream that asked for `taskIds`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::basic::{Meta, RequestMeta, ResultType};
use crate::error::ErrorObject;
use crate::patterns::mrtr::{InputRequests, InputResponses};

/// The extension identifier, the key under `capabilities.extensions` on both sides.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/tasks";
/// `tasks/get`: poll a task.
pub const METHOD_GET: &str = "tasks/get";
/// `tasks/update`: answer a task's input requests.
pub const METHOD_UPDATE: &str = "tasks/update";
/// `tasks/cancel`: ask for a task to stop.
pub const METHOD_CANCEL: &str = "tasks/cancel";
/// `notifications/tasks`: a task's state, pushed on a listen stream.
pub const NOTIFICATION_TASKS: &str = "notifications/tasks";
/// The `resultType` of a [`CreateTaskResult`].
pub const RESULT_TYPE_TASK: &str = "task";
/// The `Mcp-Name` header of the task methods mirrors this params member.
pub const NAME_MEMBER: &str = "taskId";

/// The `resultType` of a [`CreateTaskResult`] (`"task"`).
pub fn result_type_task() -> ResultType {
    ResultType::from(RESULT_TYPE_TASK)
}

/// Whether a result object is a [`CreateTaskResult`] (its `resultType` is `"task"`).
pub fn is_create_task_result(result: &Map<String, Value>) -> bool {
    result.get("resultType").and_then(Value::as_str) == Some(RESULT_TYPE_TASK)
}

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The request is being processed.
    Working,
    /// The server needs the client's answers to `inputRequests` before it can go on.
    InputRequired,
    /// Finished with a result (a tool result with `isError: true` included).
    Completed,
    /// Stopped by `tasks/cancel` before it finished.
    Cancelled,
    /// Ended with a JSON-RPC error.
    Failed,
}

impl TaskStatus {
    /// `completed`, `cancelled` and `failed` are final: the task never changes again.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Cancelled | Self::Failed)
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Cancelled => "cancelled",
            Self::Failed => "failed",
        }
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task's metadata (SEP-2663 `Task`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The server-generated, unguessable identifier.
    pub task_id: String,
    /// The current status.
    pub status: TaskStatus,
    /// A human-readable description of the current state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When the task was created (RFC 3339).
    pub created_at: String,
    /// When the task last changed (RFC 3339).
    pub last_updated_at: String,
    /// How long after creation the server keeps the task, in milliseconds; `null` (`None`)
    /// for unlimited. Always on the wire.
    pub ttl_ms: Option<u64>,
    /// How often the client should poll, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
}

/// A task with the payload its status carries (SEP-2663 `DetailedTask`): `inputRequests` when
/// `input_required`, `result` when `completed`, `error` when `failed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// The task's metadata.
    #[serde(flatten)]
    pub task: Task,
    /// The outstanding requests to the client (`input_required` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// The original request's result (`completed` only), e.g. a `CallToolResult`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Map<String, Value>>,
    /// The JSON-RPC error the request ended with (`failed` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

/// What is wrong with a [`DetailedTask`] whose payload does not fit its status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DetailedTaskError {
    /// A `completed` task without `result`.
    #[error("a completed task must carry `result`")]
    MissingResult,
    /// A `failed` task without `error`.
    #[error("a failed task must carry `error`")]
    MissingError,
    /// An `input_required` task without `inputRequests`.
    #[error("an input_required task must carry `inputRequests`")]
    MissingInputRequests,
    /// A payload member on a status that does not carry it.
    #[error("a {status} task must not carry `{member}`")]
    Unexpected {
        /// The task's status.
        status: TaskStatus,
        /// The member that does not belong.
        member: &'static str,
    },
}

impl DetailedTask {
    /// A task with no payload (for `working` and `cancelled`).
    pub fn bare(task: Task) -> Self {
        Self {
            task,
            input_requests: None,
            result: None,
            error: None,
        }
    }

    /// Checks that the payload fits the status, as SEP-2663 §Task Status requires.
    pub fn validate(&self) -> Result<(), DetailedTaskError> {
        let status = self.task.status;
        let unexpected = |member| Err(DetailedTaskError::Unexpected { status, member });
        match status {
            TaskStatus::Completed if self.result.is_none() => Err(DetailedTaskError::MissingResult),
            TaskStatus::Failed if self.error.is_none() => Err(DetailedTaskError::MissingError),
            TaskStatus::InputRequired if self.input_requests.is_none() => {
                Err(DetailedTaskError::MissingInputRequests)
            }
            _ if status != TaskStatus::Completed && self.result.is_some() => unexpected("result"),
            _ if status != TaskStatus::Failed && self.error.is_some() => unexpected("error"),
            _ if status != TaskStatus::InputRequired && self.input_requests.is_some() => {
                unexpected("inputRequests")
            }
            _ => Ok(()),
        }
    }
}

/// The answer to a request the server runs as a task (`resultType: "task"`): a flat
/// `Result & Task`, no payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTaskResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `"task"`.
    pub result_type: ResultType,
    /// The task's seed state.
    #[serde(flatten)]
    pub task: Task,
}

impl CreateTaskResult {
    /// The result announcing `task`.
    pub fn new(task: Task) -> Self {
        Self {
            meta: None,
            result_type: result_type_task(),
            task,
        }
    }
}

/// The result of `tasks/get` (`resultType: "complete"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `"complete"`.
    #[serde(default)]
    pub result_type: ResultType,
    /// The task and its payload.
    #[serde(flatten)]
    pub task: DetailedTask,
}

impl GetTaskResult {
    /// The result carrying `task`.
    pub fn new(task: DetailedTask) -> Self {
        Self {
            meta: None,
            result_type: ResultType::Complete,
            task,
        }
    }
}

/// Params of `tasks/get` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
    /// The task.
    pub task_id: String,
}

/// Params of `tasks/get`.
pub type GetTaskRequestParams = TaskIdParams;
/// Params of `tasks/cancel`.
pub type CancelTaskRequestParams = TaskIdParams;

/// Params of `tasks/update`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<RequestMeta>>,
    /// The task.
    pub task_id: String,
    /// Answers to outstanding `inputRequests`, by key.
    pub input_responses: InputResponses,
}

/// Params of `notifications/tasks`: the task as `tasks/get` would show it now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusNotificationParams {
    /// Notification metadata (the subscription id on a listen stream).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The task and its payload.
    #[serde(flatten)]
    pub task: DetailedTask,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn task(status: TaskStatus) -> Task {
        Task {
            task_id: "786512e2-9e0d-44bd-8f29-789f320fe840".into(),
            status,
            status_message: None,
            created_at: "2025-11-25T10:30:00Z".into(),
            last_updated_at: "2025-11-25T10:50:00Z".into(),
            ttl_ms: Some(3_600_000),
            poll_interval_ms: Some(5000),
        }
    }

    #[test]
    fn create_task_result_is_flat_with_result_type_task() {
        let v = serde_json::to_value(CreateTaskResult::new(task(TaskStatus::Working))).unwrap();
        assert_eq!(
            v,
            json!({
                "resultType": "task",
                "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
                "status": "working",
                "createdAt": "2025-11-25T10:30:00Z",
                "lastUpdatedAt": "2025-11-25T10:50:00Z",
                "ttlMs": 3_600_000,
                "pollIntervalMs": 5000
            })
        );
        assert!(is_create_task_result(v.as_object().unwrap()));
    }

    #[test]
    fn unlimited_ttl_is_an_explicit_null() {
        let mut t = task(TaskStatus::Working);
        t.ttl_ms = None;
        let v = serde_json::to_value(&t).unwrap();
        assert_eq!(v["ttlMs"], Value::Null);
        let back: Task = serde_json::from_value(v).unwrap();
        assert_eq!(back.ttl_ms, None);
    }

    #[test]
    fn the_seps_input_required_example_parses_and_validates() {
        let v = json!({
            "resultType": "complete",
            "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
            "status": "input_required",
            "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:50:00Z",
            "ttlMs": 3_600_000,
            "pollIntervalMs": 5000,
            "inputRequests": {
                "name": {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "Please enter your name.",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"name": {"type": "string"}},
                            "required": ["name"]
                        }
                    }
                }
            }
        });
        let r: GetTaskResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(r.result_type, ResultType::Complete);
        assert_eq!(r.task.task.status, TaskStatus::InputRequired);
        assert_eq!(r.task.input_requests.as_ref().unwrap().len(), 1);
        r.task.validate().unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
    }

    #[test]
    fn payloads_must_fit_the_status() {
        let mut d = DetailedTask::bare(task(TaskStatus::Completed));
        assert_eq!(d.validate(), Err(DetailedTaskError::MissingResult));
        d.result = Some(Map::new());
        assert_eq!(d.validate(), Ok(()));
        d.error = Some(ErrorObject::new(-32603, "boom"));
        assert_eq!(
            d.validate(),
            Err(DetailedTaskError::Unexpected {
                status: TaskStatus::Completed,
                member: "error"
            })
        );
        let mut f = DetailedTask::bare(task(TaskStatus::Failed));
        assert_eq!(f.validate(), Err(DetailedTaskError::MissingError));
        f.error = Some(ErrorObject::new(-32603, "boom"));
        assert_eq!(f.validate(), Ok(()));
        let w = DetailedTask {
            result: Some(Map::new()),
            ..DetailedTask::bare(task(TaskStatus::Working))
        };
        assert!(w.validate().is_err());
        assert_eq!(
            DetailedTask::bare(task(TaskStatus::InputRequired)).validate(),
            Err(DetailedTaskError::MissingInputRequests)
        );
    }

    #[test]
    fn update_params_carry_raw_responses() {
        let p: UpdateTaskRequestParams = serde_json::from_value(json!({
            "taskId": "t1",
            "inputResponses": {"name": {"action": "accept", "content": {"input": "Luca"}}}
        }))
        .unwrap();
        assert_eq!(p.task_id, "t1");
        assert_eq!(p.input_responses.0["name"]["action"], "accept");
    }

    #[test]
    fn statuses_use_the_wire_names() {
        for s in [
            TaskStatus::Working,
            TaskStatus::InputRequired,
            TaskStatus::Completed,
            TaskStatus::Cancelled,
            TaskStatus::Failed,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), json!(s.as_str()));
        }
        assert!(TaskStatus::Cancelled.is_terminal());
        assert!(!TaskStatus::InputRequired.is_terminal());
    }
}
