//! A POST of a legacy session: `initialize`, a request (JSON, or SSE with its events,
//! server-to-client requests and response), a notification or a response (202).

use std::sync::Arc;

use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::{Map, Value};
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::{Message, Request};
use smcp_proto::meta;
use tokio::sync::{mpsc, oneshot};

use super::{Head, SESSION_HEADER, accepted, refusal, session_value, sse_event};
use crate::core::legacy::{Exchange, Legacy, Refusal, legacy_bytes, result_bytes};
use crate::core::server::Shared;
use crate::http::body::McpBody;
use crate::http::response::{json_response, sse_response};

/// Methods whose response streams (SSE) when the client accepts it: those a handler serves
/// and that may send progress, log messages or server-to-client requests first.
fn may_stream(shared: &Shared, method: &str) -> bool {
    matches!(
        method,
        "tools/call" | "resources/read" | "prompts/get" | "completion/complete"
    ) || shared.extension_method(method).is_some()
}

/// Serves one POST of the earlier revisions.
pub(crate) async fn post(
    shared: Arc<Shared>,
    legacy: Arc<Legacy>,
    head: Head,
    body: Bytes,
) -> Response<McpBody> {
    if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        return refusal(
            None,
            Refusal::bad(ErrorObject::invalid_request(
                "Invalid request: JSON-RPC batches are not supported; send one message per POST",
            )),
        );
    }
    let message = match Message::from_slice(&body) {
        Ok(message) => message,
        Err(e) => return refusal(e.id().cloned(), Refusal::bad(e.to_error_object())),
    };
    let principal = head.principal.as_ref().map(|p| p.0.clone());
    let Some(session) = head.session.as_deref() else {
        return match message {
            Message::Request(r) if r.method == "initialize" => {
                initialize(&shared, &legacy, &head, r, principal).await
            }
            other => refusal(
                id_of(&other),
                Refusal::bad(ErrorObject::invalid_request(
                    "Bad Request: the Mcp-Session-Id header is required (send initialize to \
                     start a session)",
                )),
            ),
        };
    };
    let record = match legacy.session(session, principal.as_deref()).await {
        Ok(record) => record,
        Err(r) => return refusal(id_of(&message), r),
    };
    if let Some(version) = &head.version
        && *version != record.protocol_version
    {
        return refusal(
            id_of(&message),
            Refusal::bad(ErrorObject::invalid_request(format!(
                "Bad Request: MCP-Protocol-Version {version:?} is not the session's negotiated \
                 version {:?}",
                record.protocol_version
            ))),
        );
    }
    let live = legacy.live(&record, sse_event);
    match message {
        Message::Notification(n) => {
            match legacy
                .notification(record, &live, &n.method, n.params.as_ref())
                .await
            {
                Ok(()) => accepted(),
                Err(r) => refusal(None, r),
            }
        }
        Message::Result(r) => {
            if live.answer(&r.id, Ok(r.result)) {
                accepted()
            } else {
                refusal(None, unknown_response(&r.id))
            }
        }
        Message::Error(e) => match e.id {
            Some(id) if live.answer(&id, Err(e.error)) => accepted(),
            Some(id) => refusal(None, unknown_response(&id)),
            None => refusal(
                None,
                Refusal::bad(ErrorObject::invalid_request(
                    "Invalid request: an error response without an id answers no request",
                )),
            ),
        },
        Message::Request(request) => {
            let id = request.id.clone();
            if request.method == "initialize" {
                return refusal(
                    Some(id),
                    Refusal::bad(ErrorObject::invalid_request(
                        "Invalid request: the session is already initialized; initialize \
                         starts a new session without Mcp-Session-Id",
                    )),
                );
            }
            if !record.initialized && request.method != "ping" {
                return refusal(
                    Some(id),
                    Refusal::bad(ErrorObject::invalid_request(
                        "Invalid request: the session is not initialized yet; send \
                         notifications/initialized first",
                    )),
                );
            }
            let (params, meta) = match split_params(request.params) {
                Ok(split) => split,
                Err(error) => return refusal(Some(id), Refusal::bad(error)),
            };
            if meta.contains_key(meta::PROTOCOL_VERSION)
                || meta.contains_key(meta::CLIENT_CAPABILITIES)
            {
                return refusal(
                    Some(id),
                    Refusal::bad(ErrorObject::invalid_params(format!(
                        "\"params._meta\" carries 2026-07-28 members ({:?}, {:?}) on a session \
                         of {}: a 2026-07-28 request carries MCP-Protocol-Version: 2026-07-28 \
                         and no session",
                        meta::PROTOCOL_VERSION,
                        meta::CLIENT_CAPABILITIES,
                        record.protocol_version
                    ))),
                );
            }
            let value = Value::Object(params.clone());
            if let Some(result) = legacy
                .own_method(&shared, &record, &live, &request.method, Some(&value))
                .await
            {
                let bytes = match result {
                    Ok(map) => result_bytes(id, map),
                    Err(error) => legacy_bytes(&shared, &id, Err(error)),
                };
                return json_response(StatusCode::OK, bytes);
            }
            let Some(cancel) = live.begin(&id) else {
                return refusal(
                    Some(id),
                    Refusal::bad(ErrorObject::invalid_request(
                        "Invalid request: a request with this id is already in flight on the \
                         session",
                    )),
                );
            };
            let streams = head.accepts_sse && may_stream(&shared, &request.method);
            let mut exchange = Exchange {
                shared: shared.clone(),
                legacy: legacy.clone(),
                live: live.clone(),
                record,
                id: id.clone(),
                method: request.method,
                params,
                meta,
                principal: head.principal.clone(),
                cancel,
                stream: None,
            };
            if !streams {
                let answer = exchange.run().await;
                live.end(&id);
                return match answer {
                    Some(bytes) => json_response(StatusCode::OK, bytes),
                    None => accepted(),
                };
            }
            let (tx, mut rx) = mpsc::channel(shared.limits.event_buffer.max(1));
            let stream = live.open_stream(tx);
            let primed = super::priming(&exchange.record.protocol_version, stream);
            exchange.stream = Some(stream);
            // The request runs on whether or not the client keeps reading: in the earlier
            // revisions a disconnect is not a cancellation, and the client may resume the
            // stream with Last-Event-ID.
            let (done_tx, mut done_rx) = oneshot::channel();
            tokio::spawn(async move {
                let _ = done_tx.send(exchange.run().await);
            });
            // JSON when the handler answers before it sends anything, else SSE.
            tokio::select! {
                biased;
                done = &mut done_rx => {
                    let mut early = Vec::new();
                    while let Ok(frame) = rx.try_recv() {
                        early.push(frame);
                    }
                    let answer = done.ok().flatten();
                    if early.is_empty() {
                        live.end(&id);
                        live.close_stream(stream);
                        return match answer {
                            Some(bytes) => json_response(StatusCode::OK, bytes),
                            None => accepted(),
                        };
                    }
                    if let Some(bytes) = answer {
                        live.emit(stream, &bytes).await;
                    }
                    live.end(&id);
                    live.close_stream(stream);
                    sse_response(McpBody::stream(joined(primed, early), rx, None))
                }
                Some(frame) = rx.recv() => {
                    tokio::spawn(async move {
                        if let Ok(Some(bytes)) = done_rx.await {
                            live.emit(stream, &bytes).await;
                        }
                        live.end(&id);
                        live.close_stream(stream);
                    });
                    sse_response(McpBody::stream(joined(primed, vec![frame]), rx, None))
                }
            }
        }
    }
}

async fn initialize(
    shared: &Shared,
    legacy: &Legacy,
    head: &Head,
    request: Request,
    principal: Option<String>,
) -> Response<McpBody> {
    let id = request.id;
    let (record, result) = match legacy
        .initialize(shared, request.params.as_ref(), principal)
        .await
    {
        Ok(started) => started,
        Err(r) => return refusal(Some(id), r),
    };
    let bytes = result_bytes(id, result);
    let mut response = if head.accepts_json || !head.accepts_sse {
        json_response(StatusCode::OK, bytes)
    } else {
        let (tx, rx) = mpsc::channel(1);
        let _ = tx.try_send(sse_event("0-1", &bytes));
        drop(tx);
        sse_response(McpBody::stream(None, rx, None))
    };
    if let Some(value) = session_value(&record.id) {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

/// The first bytes of an SSE body: the priming event, if any, then `frames`.
fn joined(primed: Option<Bytes>, frames: Vec<Bytes>) -> Option<Bytes> {
    let mut out = bytes::BytesMut::new();
    if let Some(primed) = primed {
        out.extend_from_slice(&primed);
    }
    for frame in frames {
        out.extend_from_slice(&frame);
    }
    Some(out.freeze())
}

fn id_of(message: &Message) -> Option<smcp_proto::jsonrpc::RequestId> {
    match message {
        Message::Request(r) => Some(r.id.clone()),
        _ => None,
    }
}

fn unknown_response(id: &smcp_proto::jsonrpc::RequestId) -> Refusal {
    let shown = match id {
        smcp_proto::jsonrpc::RequestId::Number(n) => n.to_string(),
        smcp_proto::jsonrpc::RequestId::String(s) if s.len() <= 64 => format!("{s:?}"),
        smcp_proto::jsonrpc::RequestId::String(_) => "(a long string)".to_owned(),
    };
    Refusal::bad(ErrorObject::invalid_request(format!(
        "Invalid request: the server sent no request with id {shown} on this session, or no \
         longer waits for its response"
    )))
}

type JsonObject = Map<String, Value>;

/// `params` without `_meta`, and `_meta`.
fn split_params(params: Option<Value>) -> Result<(JsonObject, JsonObject), ErrorObject> {
    let mut params = match params {
        None => Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => return Err(ErrorObject::invalid_params("\"params\" must be an object")),
    };
    let meta = match params.remove("_meta") {
        None => Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "\"params._meta\" must be an object",
            ));
        }
    };
    Ok((params, meta))
}
