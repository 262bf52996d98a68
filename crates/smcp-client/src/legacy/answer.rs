//! Server-to-client requests of an older-era session (`ping`, `elicitation/create`,
//! `sampling/createMessage`, `roots/list`), answered with the client's
//! [`InputHandler`](crate::InputHandler): the same over a stateful HTTP session, HTTP+SSE and
//! a stdio session.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use smcp_proto::error::{ErrorObject, INTERNAL_ERROR, METHOD_NOT_FOUND};
use smcp_proto::jsonrpc::{ErrorResponse, Message, Request, RequestId, ResultResponse};
use smcp_proto::messages::method;
use smcp_proto::patterns::mrtr::{InputRequest, InputRequests};

use super::adapter;
use super::info::LegacyConfig;

/// Answers a server-to-client request (`ping`, `elicitation/create`, `sampling/createMessage`,
/// `roots/list`) with the client's [`InputHandler`](crate::InputHandler), returning the
/// response the caller sends back. A kind the handler does not declare is refused with −32601.
///
/// Boxed: the handler path reaches the client's own request path, which reads this stream.
pub(crate) fn answer(config: &LegacyConfig, request: Request) -> BoxFuture<'_, Message> {
    Box::pin(answer_inner(config, request))
}

async fn answer_inner(config: &LegacyConfig, request: Request) -> Message {
    let id = request.id.clone();
    let outcome = match request.method.as_str() {
        adapter::method::PING => Ok(json!({})),
        method::ELICITATION_CREATE | method::SAMPLING_CREATE_MESSAGE | method::ROOTS_LIST => {
            fulfil_one(config, request).await
        }
        other => Err(ErrorObject {
            code: METHOD_NOT_FOUND,
            message: format!("method not found: {other}"),
            data: None,
        }),
    };
    match outcome {
        Ok(result) => result_message(id, result),
        Err(error) => Message::Error(ErrorResponse {
            id: Some(id),
            error,
        }),
    }
}

async fn fulfil_one(
    config: &LegacyConfig,
    request: Request,
) -> std::result::Result<Value, ErrorObject> {
    let method_name = request.method.clone();
    let parsed: InputRequest = serde_json::from_value(json!({
        "method": request.method,
        "params": request.params.unwrap_or_else(|| json!({})),
    }))
    .map_err(|e| ErrorObject {
        code: smcp_proto::error::INVALID_PARAMS,
        message: format!("invalid {method_name} params: {e}"),
        data: None,
    })?;
    let handler = config.handler.as_ref().map(|h| &*h.0);
    let mut requests = InputRequests::new();
    requests.insert("0".to_owned(), parsed);
    match crate::mrtr::fulfil(handler, requests, None).await {
        Ok(mut responses) => Ok(responses.remove("0").unwrap_or_else(|| json!({}))),
        Err(e) if e.is_protocol_violation() => Err(ErrorObject {
            code: METHOD_NOT_FOUND,
            message: format!("this client does not support {method_name}"),
            data: None,
        }),
        Err(e) => Err(ErrorObject {
            code: INTERNAL_ERROR,
            message: e.to_string(),
            data: None,
        }),
    }
}

/// A JSON-RPC result message.
fn result_message(id: RequestId, result: Value) -> Message {
    Message::Result(ResultResponse { id, result })
}
