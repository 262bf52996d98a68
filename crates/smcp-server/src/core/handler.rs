//! What every handler returns when it cannot produce its normal result.

use serde::Serialize;
use serde_json::{Map, Value};
use smcp_proto::error::ErrorObject;
use smcp_proto::patterns::mrtr::InputRequest;

/// The error half of every handler's return type.
///
/// `Failed` is an ordinary execution failure: for a tool it becomes a `CallToolResult` with
/// `isError: true` (so the model can read it and correct itself, `server/tools.mdx`
/// §Error Handling); for resources, prompts and completion it becomes a −32603 error.
/// `Rpc` is sent as the JSON-RPC error it carries.
///
/// # Examples
///
/// ```
/// # use smcp_server::prelude::*;
/// let divide = tool("divide").handler(|call| async move {
///     let a = call.arguments.get("a").and_then(|v| v.as_f64());
///     let b = call.arguments.get("b").and_then(|v| v.as_f64());
///     let (Some(a), Some(b)) = (a, b) else {
///         // −32602: the request itself is wrong.
///         return Err(HandlerError::invalid_params("a and b must be numbers"));
///     };
///     if b == 0.0 {
///         // An `isError` result the model reads and can correct.
///         return Err(HandlerError::failed("cannot divide by zero"));
///     }
///     Ok(CallToolResult::text((a / b).to_string()))
/// });
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum HandlerError {
    /// Execution failed; the message is shown to the caller.
    #[error("{0}")]
    Failed(String),
    /// A JSON-RPC error response.
    #[error("{0}")]
    Rpc(ErrorObject),
    /// The handler needs input from the client first: answered with `InputRequiredResult`
    /// (only for `tools/call`, `resources/read` and `prompts/get`). Built by
    /// [`crate::mrtr::Input::ask`].
    #[error("input required")]
    InputRequired(Box<InputRequired>),
}

impl HandlerError {
    /// An execution failure with this message.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }

    /// −32602 Invalid params.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::Rpc(ErrorObject::invalid_params(message))
    }

    /// −32603 Internal error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::Rpc(ErrorObject::internal(message))
    }

    /// −32021: the request needs a client capability it did not declare. `capability` is
    /// the top-level member name, e.g. `"sampling"`.
    pub fn missing_capability(capability: &str) -> Self {
        let mut caps = Map::new();
        caps.insert(capability.to_owned(), Value::Object(Map::new()));
        Self::Rpc(ErrorObject::missing_required_client_capability(
            format!("This request requires the client capability {capability:?}"),
            caps,
        ))
    }

    /// The error object sent when this error is not turned into a tool result.
    pub(crate) fn into_error_object(self) -> ErrorObject {
        match self {
            Self::Failed(message) => ErrorObject::internal(message),
            Self::Rpc(error) => error,
            Self::InputRequired(_) => ErrorObject::internal(
                "this method cannot ask for input: only tools/call, resources/read and \
                 prompts/get may return input_required",
            ),
        }
    }
}

impl From<ErrorObject> for HandlerError {
    fn from(error: ErrorObject) -> Self {
        Self::Rpc(error)
    }
}

/// A progress or log message that could not be sent ends the handler with `?`: the request
/// was cancelled (an execution failure nobody reads, since the client has gone), or the
/// handler sent a progress value that does not increase (a bug in the handler: −32603).
impl From<crate::core::context::NotifyError> for HandlerError {
    fn from(error: crate::core::context::NotifyError) -> Self {
        use crate::core::context::NotifyError;
        match error {
            NotifyError::Cancelled => Self::Failed(error.to_string()),
            NotifyError::ProgressNotIncreasing { .. } => Self::internal(error.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::context::NotifyError;

    #[test]
    fn notify_errors_convert_for_question_mark() {
        let cancelled = HandlerError::from(NotifyError::Cancelled);
        assert_eq!(cancelled, HandlerError::failed("the request was cancelled"));
        let bug = HandlerError::from(NotifyError::ProgressNotIncreasing {
            last: 2.0,
            next: 1.0,
        });
        let HandlerError::Rpc(error) = bug else {
            panic!("a non-increasing progress is a handler bug: {bug:?}");
        };
        assert_eq!(error.code, -32603);
        assert!(error.message.contains("progress must increase"), "{error}");
    }
}

/// "I need input before I can finish": what a handler returns (as
/// `HandlerError::InputRequired`) to make the framework answer `InputRequiredResult`.
///
/// [`Input::ask`](crate::mrtr::Input::ask) builds it for you; build it by hand for full control, e.g. a state-only
/// result that asks the client to retry later (load shedding).
///
/// # Examples
///
/// A load-shedding answer: no question, only state, so the client retries later:
///
/// ```
/// # use smcp_server::prelude::*;
/// use smcp_server::mrtr::InputRequired;
///
/// let busy = tool("report").handler(|call| async move {
///     if call.input.round() == 0 {
///         return Err(HandlerError::from(InputRequired::new().state(&"queued")?));
///     }
///     Ok(CallToolResult::text("report ready"))
/// });
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputRequired {
    pub(crate) requests: Vec<(String, InputRequest)>,
    pub(crate) state: Option<Value>,
}

impl InputRequired {
    /// Nothing requested yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a request under `key`.
    #[must_use]
    pub fn request(mut self, key: impl Into<String>, request: impl Into<InputRequest>) -> Self {
        let key = key.into();
        self.requests.retain(|(k, _)| *k != key);
        self.requests.push((key, request.into()));
        self
    }

    /// The requests, by key, in the order they were added.
    pub fn requests(&self) -> &[(String, InputRequest)] {
        &self.requests
    }

    /// Carries `state` to the retry (sealed).
    pub fn state<T: Serialize>(mut self, state: &T) -> Result<Self, HandlerError> {
        self.state = Some(
            serde_json::to_value(state)
                .map_err(|e| HandlerError::internal(format!("requestState content: {e}")))?,
        );
        Ok(self)
    }
}

impl From<InputRequired> for HandlerError {
    fn from(ir: InputRequired) -> Self {
        Self::InputRequired(Box::new(ir))
    }
}
