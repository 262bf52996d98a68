//! A POST of a legacy session: `initialize`, a request (JSON, or SSE with its events,
//! server-to-client requests and response), a notification or a response (202).

use std::sync::Arc;

use bytes::Bytes;
use futures_util::FutureExt as _;
use http::{Response, StatusCode};
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::{
    ErrorResponse, Incoming, Message, Notification, RequestId, ResultResponse,
};
use smcp_proto::messages::method;
use smcp_proto::meta;
use tokio::sync::mpsc;

use super::wire::{Head, SESSION_HEADER, accepted, refusal, session_value, sse_event};
use crate::core::legacy::{Exchange, Legacy, Live, Refusal, SessionRequest, StreamKind};
use crate::core::reply::{Era, Reply, era_finished_bytes};
use crate::core::server::Shared;
use crate::http::body::McpBody;
use crate::http::response::{json_response, sse_response};

/// Methods whose response streams (SSE) when the client accepts it: those a handler serves
/// and that may send progress, log messages or server-to-client requests first.
fn may_stream(shared: &Shared, name: &str) -> bool {
    matches!(
        name,
        method::TOOLS_CALL | method::RESOURCES_READ | method::PROMPTS_GET | method::COMPLETE
    ) || shared.extension_method(name).is_some()
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
    let message = match parse(&body) {
        Ok(message) => message,
        Err(response) => return *response,
    };
    let principal = head.principal.as_ref().map(|p| p.0.clone());
    let Some(session) = head.session.as_deref() else {
        return match message {
            Parsed::Request(request) if request.method == method::INITIALIZE => {
                initialize(&shared, &legacy, &head, request, principal).await
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
        Parsed::Notification(n) => {
            match legacy
                .notification(record, &live, &n.method, n.params.as_ref())
                .await
            {
                Ok(()) => accepted(),
                Err(r) => refusal(None, r),
            }
        }
        Parsed::Result(r) => match legacy.deliver(&live, &r.id, Ok(r.result)).await {
            Ok(()) => accepted(),
            Err(r) => refusal(None, r),
        },
        Parsed::Error(e) => match e.id {
            Some(id) => match legacy.deliver(&live, &id, Err(e.error)).await {
                Ok(()) => accepted(),
                Err(r) => refusal(None, r),
            },
            None => refusal(
                None,
                Refusal::bad(ErrorObject::invalid_request(
                    "Invalid request: an error response without an id answers no request",
                )),
            ),
        },
        Parsed::Request(request) => {
            let id = request.id.clone();
            if request.method == method::INITIALIZE {
                return refusal(
                    Some(id),
                    Refusal::bad(ErrorObject::invalid_request(
                        "Invalid request: the session is already initialized; initialize \
                         starts a new session without Mcp-Session-Id",
                    )),
                );
            }
            if !record.initialized && request.method != method::PING {
                return refusal(
                    Some(id),
                    Refusal::bad(ErrorObject::invalid_request(
                        "Invalid request: the session is not initialized yet; send \
                         notifications/initialized first",
                    )),
                );
            }
            if request.carries_2026_meta() {
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
            let own = legacy
                .own_method(
                    &shared,
                    &record,
                    &live,
                    &request.method,
                    request.other_params(),
                )
                .await;
            if let Some(result) = own {
                let bytes = era_finished_bytes(
                    Era::Session,
                    &shared.server_meta,
                    id,
                    result.map(Reply::Object),
                );
                return json_response(StatusCode::OK, bytes);
            }
            // Rate limits before the request is in flight: a refusal is the session's HTTP
            // response, 429 with Retry-After and the JSON-RPC error (whatever the limiter).
            if let Some(limits) = &shared.rate_limits
                && let Err(refused) = limits
                    .gate(head.principal.as_ref(), head.peer, request.tool_name())
                    .wait()
                    .await
            {
                let bytes = era_finished_bytes(
                    Era::Session,
                    &shared.server_meta,
                    id,
                    Err(refused.to_error_object()),
                );
                let mut response = json_response(StatusCode::TOO_MANY_REQUESTS, bytes);
                crate::http::response::retry_after(&mut response, refused.retry_after_secs());
                return response;
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
                log_level: record.log_level,
                request,
                principal: head.principal.clone(),
                access: head.access.clone(),
                cancel,
                may_stream: streams,
                stream: None,
                rate: crate::core::dispatch::RateCheck::Skip,
            };
            if !streams {
                let answer = exchange.run().await;
                live.end(&id);
                return match answer {
                    Some(bytes) => json_response(StatusCode::OK, bytes),
                    None => accepted(),
                };
            }
            // Most handlers finish on their first poll with nothing sent before their
            // response: answered here, with no stream opened and no task.
            let going = match exchange.start() {
                Ok(bytes) => {
                    live.end(&id);
                    return json_response(StatusCode::OK, bytes);
                }
                Err(going) => going,
            };
            let (tx, rx) = mpsc::channel(shared.limits.event_buffer.max(1));
            let stream = live.open_stream(tx, StreamKind::Request(id.clone()));
            // The priming event is written only when the response turns out to be SSE.
            let primes = super::wire::primes(&record.protocol_version);
            let priming_id = live.event_id(stream, 0);
            let primed = move || primes.then(|| super::wire::priming_event(&priming_id));
            exchange.stream = Some(stream);
            // The request runs on whether or not the client keeps reading: in the earlier
            // revisions a disconnect is not a cancellation, and the client may resume the
            // stream with Last-Event-ID.
            let mut run = Box::pin(exchange.finish(*going));
            // What ended on its first poll but sent something first (or asked for input that
            // turned out to need none) is answered here too.
            if let Some(answer) = run.as_mut().now_or_never() {
                return answered(&live, &id, stream, answer, rx, primed).await;
            }
            // Still running: SSE from now on (the priming event first), so that the client
            // can resume the stream if it is cut.
            tokio::spawn(async move {
                if let Some(bytes) = run.await {
                    live.emit(stream, &bytes).await;
                }
                live.end(&id);
                live.close_stream(stream);
            });
            sse_response(McpBody::stream(primed(), rx, None))
        }
    }
}

async fn initialize(
    shared: &Shared,
    legacy: &Legacy,
    head: &Head,
    request: SessionRequest,
    principal: Option<String>,
) -> Response<McpBody> {
    let started = legacy
        .initialize(shared, request.other_params(), principal)
        .await;
    let (record, result) = match started {
        Ok(started) => started,
        Err(r) => return refusal(Some(request.id), r),
    };
    let bytes = era_finished_bytes(
        Era::Session,
        &shared.server_meta,
        request.id,
        Ok(Reply::Object(result)),
    );
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

/// The response of a request that ended before its stream was returned: JSON when it sent
/// nothing first, else SSE with what it sent and its response.
async fn answered(
    live: &Live,
    id: &RequestId,
    stream: u64,
    answer: Option<Vec<u8>>,
    mut rx: mpsc::Receiver<Bytes>,
    primed: impl FnOnce() -> Option<Bytes>,
) -> Response<McpBody> {
    let mut early = Vec::new();
    while let Ok(frame) = rx.try_recv() {
        early.push(frame);
    }
    if early.is_empty() {
        live.end(id);
        live.close_stream(stream);
        return match answer {
            Some(bytes) => json_response(StatusCode::OK, bytes),
            None => accepted(),
        };
    }
    if let Some(bytes) = answer {
        live.emit(stream, &bytes).await;
    }
    live.end(id);
    live.close_stream(stream);
    sse_response(McpBody::stream(joined(primed(), early), rx, None))
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

fn id_of(message: &Parsed) -> Option<RequestId> {
    match message {
        Parsed::Request(request) => Some(request.id.clone()),
        _ => None,
    }
}

/// One message of a POST, read once.
enum Parsed {
    Request(SessionRequest),
    Notification(Notification),
    Result(ResultResponse),
    Error(ErrorResponse),
}

/// Reads the message with the one-pass parser (a response takes the precise one).
fn parse(body: &Bytes) -> Result<Parsed, Box<Response<McpBody>>> {
    let refused =
        |id: Option<RequestId>, error: ErrorObject| Box::new(refusal(id, Refusal::bad(error)));
    match Incoming::parse(body) {
        Ok(Incoming::Request(request)) => SessionRequest::read(request, body)
            .map(Parsed::Request)
            .map_err(|refusal| {
                let (id, error) = *refusal;
                refused(Some(id), error)
            }),
        Ok(Incoming::Notification(n)) => Ok(Parsed::Notification(n)),
        Ok(Incoming::Response(_)) => match Message::from_slice(body) {
            Ok(Message::Result(r)) => Ok(Parsed::Result(r)),
            Ok(Message::Error(e)) => Ok(Parsed::Error(e)),
            Ok(_) => Err(refused(
                None,
                ErrorObject::invalid_request("Invalid request"),
            )),
            Err(e) => Err(refused(e.id().cloned(), e.to_error_object())),
        },
        Err(e) => Err(refused(e.id().cloned(), e.to_error_object())),
    }
}
