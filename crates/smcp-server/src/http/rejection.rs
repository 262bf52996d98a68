//! How a request is refused on the wire: the HTTP status, the JSON-RPC error and the id.

use http::StatusCode;
use smcp_proto::error::{self as codes, ErrorObject};
use smcp_proto::jsonrpc::RequestId;

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

/// Maps the code of an error produced *by dispatch or a handler* to its HTTP status:
/// the three MCP protocol codes keep their spec status, everything else is a JSON-RPC error
/// inside a 200 response (REQUIREMENTS A1 item 17); a rate limit refusal is a 429.
pub(crate) fn status_for_handler_error(error: &ErrorObject) -> StatusCode {
    match error.code {
        codes::HEADER_MISMATCH
        | codes::MISSING_REQUIRED_CLIENT_CAPABILITY
        | codes::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        codes::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        crate::core::access::INSUFFICIENT_SCOPE => StatusCode::FORBIDDEN,
        crate::core::error::SERVER_BUSY
            if crate::core::ratelimit::RateLimited::from_error_object(error).is_some() =>
        {
            StatusCode::TOO_MANY_REQUESTS
        }
        _ => StatusCode::OK,
    }
}
