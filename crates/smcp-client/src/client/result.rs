//! Reading a result: its `resultType`, what a call that may need input ended with, the typed
//! decode, the call timeout, and the JSON object arguments of the typed methods.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use smcp_proto::ext::tasks::{self, CreateTaskResult};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Kind, Result};

/// How a result ended, from its `resultType` (A5 item 54; `"task"` from SEP-2663).
pub(crate) enum ResultKind {
    Complete,
    InputRequired,
    Task,
}

pub(crate) fn result_kind(result: &Value) -> Result<ResultKind> {
    if !result.is_object() {
        return Err(Error::protocol("the result is not a JSON object"));
    }
    match result.get("resultType") {
        None => Ok(ResultKind::Complete),
        Some(Value::String(s)) if s == "complete" => Ok(ResultKind::Complete),
        Some(Value::String(s)) if s == "input_required" => Ok(ResultKind::InputRequired),
        Some(Value::String(s)) if s == tasks::RESULT_TYPE_TASK => Ok(ResultKind::Task),
        Some(other) => Err(Error::protocol(format!(
            "unknown resultType {other} (this client understands \"complete\", \"input_required\" \
             and \"task\")"
        ))),
    }
}

/// The error for a `CreateTaskResult` where none may come (SEP-2663 §Capability Negotiation:
/// an invalid response).
pub(super) fn unexpected_task(method_name: &str, declared: bool) -> Error {
    if declared {
        Error::protocol(format!(
            "{method_name} returned a CreateTaskResult (resultType \"task\"), but only tools/call \
             supports tasks: invalid response"
        ))
    } else {
        Error::protocol(format!(
            "{method_name} returned a CreateTaskResult (resultType \"task\") although this request \
             did not declare the {} extension: invalid response",
            tasks::EXTENSION_ID
        ))
    }
}

/// What a request that may need input ended with.
pub(crate) enum Reply {
    /// The method's own result.
    Complete(Value),
    /// A task to follow (`tools/call` with the tasks extension declared).
    Task(CreateTaskResult),
}

impl Reply {
    /// The result of a method that cannot return a task (already refused upstream).
    pub(crate) fn complete(self, method_name: &str) -> Result<Value> {
        match self {
            Self::Complete(v) => Ok(v),
            Self::Task(_) => Err(unexpected_task(method_name, true)),
        }
    }
}

/// Decodes a result into its typed form; a mismatch is the server's fault.
pub(crate) fn decode<T: DeserializeOwned>(method_name: &str, value: Value) -> Result<T> {
    serde_json::from_value(value)
        .map_err(|e| Error::protocol(format!("malformed {method_name} result: {e}")))
}

/// Runs `fut` under the call's timeout.
///
/// `fut` goes into a box first, so the future returned stays small however large `fut` is: a
/// request's future holds a transport's, and each caller that held it inline would carry (and
/// copy on every move) all of it again. Callers pass the request's future straight in, not
/// through a local, which would keep its own slot for it across the `await`.
pub(crate) fn with_timeout<T>(
    timeout: Option<Duration>,
    fut: impl Future<Output = Result<T>>,
) -> impl Future<Output = Result<T>> {
    let fut = Box::pin(fut);
    async move {
        match timeout {
            None => fut.await,
            Some(d) => tokio::time::timeout(d, fut)
                .await
                .unwrap_or_else(|_| Err(Error::new(Kind::Timeout(d)))),
        }
    }
}

/// [`with_timeout`], ended early with [`Kind::Cancelled`] when `cancel` fires.
pub(crate) fn within<T>(
    timeout: Option<Duration>,
    cancel: Option<CancellationToken>,
    fut: impl Future<Output = Result<T>>,
) -> impl Future<Output = Result<T>> {
    let bounded = with_timeout(timeout, fut);
    async move {
        match cancel {
            None => bounded.await,
            Some(token) => tokio::select! {
                r = bounded => r,
                () = token.cancelled() => Err(Error::new(Kind::Cancelled)),
            },
        }
    }
}

/// Makes a JSON object of `value`: an object as is, `null` as empty, anything else an error.
pub(crate) fn object_arg(what: &str, value: Value) -> Result<Map<String, Value>> {
    match value {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(Map::new()),
        other => Err(Error::config(format!(
            "{what} must be a JSON object, got {other}"
        ))),
    }
}
