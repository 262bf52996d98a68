//! Errors: what building a server can fail with, and how a request is refused on the wire.

use http::StatusCode;
use smcp_proto::error::{self as codes, ErrorObject};
use smcp_proto::jsonrpc::RequestId;

/// A server could not be built from its configuration (bad tool definition, bad schema, …).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two items of the same kind share a name or URI.
    #[error("duplicate {kind} {name:?}")]
    Duplicate {
        /// "tool", "prompt", "resource" or "resource template".
        kind: &'static str,
        /// The clashing name or URI.
        name: String,
    },
    /// A tool's name does not follow the naming rule (1–128 chars of `[A-Za-z0-9_.-]`).
    #[error("invalid tool name {0:?}: use 1-128 characters of A-Z a-z 0-9 _ . -")]
    InvalidToolName(String),
    /// A tool's `inputSchema` is not a JSON object with `"type": "object"`.
    #[error("tool {tool:?}: {reason}")]
    InvalidInputSchema {
        /// The tool.
        tool: String,
        /// What is wrong.
        reason: String,
    },
    /// A tool's `x-mcp-header` annotations break the rules of the transport spec.
    #[error("tool {tool:?}: invalid x-mcp-header annotation: {reason}")]
    InvalidHeaderAnnotation {
        /// The tool.
        tool: String,
        /// The rule broken, naming the property.
        reason: String,
    },
    /// An item was declared without a handler.
    #[error("{kind} {name:?} has no handler")]
    MissingHandler {
        /// The kind of item.
        kind: &'static str,
        /// Its name.
        name: String,
    },
    /// The `requestState` key ring could not be set up.
    #[error("requestState keys: {0}")]
    Key(#[from] crate::mrtr::KeyError),
    /// A tool demands single-use state but the server has no replay guard.
    #[error("tool {0:?} uses single_use_state() but the server has no replay_guard()")]
    MissingReplayGuard(String),
    /// A URI template could not be parsed.
    #[error("invalid URI template {template:?}: {reason}")]
    InvalidUriTemplate {
        /// The template.
        template: String,
        /// What is wrong.
        reason: String,
    },
}

/// A refusal: the HTTP status, the JSON-RPC error and the id to echo.
///
/// Every validation stage produces one of these; [`Rejection::status`] follows the table in
/// REQUIREMENTS A1 item 17 so the mapping from code to status lives in one place.
#[derive(Debug, Clone)]
pub(crate) struct Rejection {
    pub(crate) status: StatusCode,
    pub(crate) id: Option<RequestId>,
    pub(crate) error: Box<ErrorObject>,
}

impl Rejection {
    pub(crate) fn new(status: StatusCode, id: Option<RequestId>, error: ErrorObject) -> Self {
        Self {
            status,
            id,
            error: Box::new(error),
        }
    }

    /// A refusal before dispatch: 400 for protocol errors, 404 for an unknown method.
    pub(crate) fn protocol(id: Option<RequestId>, error: ErrorObject) -> Self {
        let status = match error.code {
            codes::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
            codes::INTERNAL_ERROR => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::BAD_REQUEST,
        };
        Self::new(status, id, error)
    }

    pub(crate) fn header_mismatch(id: Option<RequestId>, message: impl Into<String>) -> Self {
        Self::protocol(id, ErrorObject::header_mismatch(message))
    }
}

/// Maps the code of an error produced *by a handler* (after dispatch) to its HTTP status:
/// the three MCP protocol codes keep their spec status, everything else is a JSON-RPC error
/// inside a 200 response (REQUIREMENTS A1 item 17).
pub(crate) fn status_for_handler_error(error: &ErrorObject) -> StatusCode {
    match error.code {
        codes::HEADER_MISMATCH
        | codes::MISSING_REQUIRED_CLIENT_CAPABILITY
        | codes::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        codes::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}
