//! The earlier revisions (2025-11-25, 2025-06-18, 2025-03-26) over a stream connection
//! (feature `legacy`). Over stdio the connection is the session: no session id, no store
//! entry; the record lives as long as the connection.
//!
//! The first request of a connection decides its era: an `initialize` without a 2026-07-28
//! `_meta` makes it a legacy session (when the server serves the earlier revisions); any
//! other request makes it a 2026-07-28 connection for good, where a later `initialize` is
//! answered −32022 as before. On a legacy connection: `initialize` again, and a request other
//! than `ping` before `notifications/initialized`, are −32600; a request with 2026-07-28
//! `_meta` members is −32602 (the same codes as over HTTP). A handler's `input.ask(..)`
//! becomes a server-to-client request on the output, with a server-issued id (`smcp-<n>`):
//! the client's response to it, read from the input, is routed to the waiting round; a
//! response to an id the server is not waiting for is logged and dropped (JSON-RPC answers
//! no response). Change notifications start once the client sent
//! `notifications/initialized`.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Map, Value};
use smcp_bus::Subscription;
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::{ClientRequest, Incoming, IncomingRequest, Message, ParseError};
use smcp_proto::messages::method;
use smcp_proto::meta;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::link::Link;
use super::options::NEWLINE;
use crate::core::era::{self, Declared};
use crate::core::legacy::{
    Exchange, Legacy, Live, SessionMeta, SessionRecord, SessionRequest, StreamKind, follow,
    initialize_result, new_record, session_method, subscribe,
};
use crate::core::reply::{self, Reply, era_finished_bytes, error_bytes};
use crate::core::server::Shared;

/// Which era a connection speaks.
pub(super) enum Era {
    /// No request read yet.
    Undecided,
    /// 2026-07-28, for the rest of the connection.
    Modern,
    /// A legacy session.
    Legacy(Box<Session>),
}

/// The legacy session a connection is.
pub(super) struct Session {
    legacy: Arc<Legacy>,
    record: SessionRecord,
    live: Arc<Live>,
}

/// Events on a stream connection are lines.
fn line_frame(_id: &str, json: &[u8]) -> Bytes {
    NEWLINE.frame(json)
}

/// Takes the line when it belongs to the earlier revisions (answering it); otherwise hands
/// the parsed message back for the 2026-07-28 path.
pub(super) fn route<'a>(
    link: &mut Link,
    era: &mut Era,
    parsed: Result<Incoming<'a>, ParseError>,
    line: &Bytes,
    tasks: &mut JoinSet<()>,
) -> Option<Result<Incoming<'a>, ParseError>> {
    match era {
        Era::Modern => return Some(parsed),
        Era::Legacy(session) => {
            serve(link, session, parsed, line, tasks);
            return None;
        }
        Era::Undecided => {}
    }
    let Ok(Incoming::Request(request)) = &parsed else {
        return Some(parsed);
    };
    let legacy = match &link.shared.legacy {
        Some(legacy) if era::asks_for_session(Declared::on_stream(request), request) => {
            legacy.clone()
        }
        _ => {
            *era = Era::Modern;
            return Some(parsed);
        }
    };
    let Ok(Incoming::Request(request)) = parsed else {
        return None;
    };
    let principal = link.options.principal.as_ref().map(|p| p.0.clone());
    match new_record(other_params(&request), principal) {
        Ok(record) => {
            let live = Arc::new(Live::new(
                record.id.clone(),
                SessionMeta::new(&record),
                line_frame,
                0,
                legacy.config.max_pending,
                Vec::new(),
            ));
            tracing::debug!(version = %record.protocol_version, "stdio connection: legacy session");
            let result = initialize_result(&link.shared, &record.protocol_version);
            *era = Era::Legacy(Box::new(Session {
                legacy,
                record,
                live,
            }));
            let bytes = era_finished_bytes(
                reply::Era::Session,
                &link.shared.server_meta,
                request.id,
                Ok(Reply::Object(result)),
            );
            link.send(bytes);
        }
        // A refused initialize decides nothing: the client may send a correct one.
        Err(refusal) => link.send(error_bytes(Some(request.id), refusal.error)),
    }
    None
}

/// `params` of a method the core does not model.
fn other_params<'r>(request: &'r IncomingRequest<'_>) -> Option<&'r Map<String, Value>> {
    match &request.params {
        Ok(ClientRequest::Other(map)) => Some(map),
        _ => None,
    }
}

/// One message on a legacy connection.
fn serve(
    link: &mut Link,
    session: &mut Session,
    parsed: Result<Incoming<'_>, ParseError>,
    line: &Bytes,
    tasks: &mut JoinSet<()>,
) {
    match parsed {
        Err(e) => {
            tracing::debug!(error = %e, "unreadable message");
            link.send(error_bytes(e.id().cloned(), e.to_error_object()));
        }
        Ok(Incoming::Notification(n)) => {
            notification(link, session, &n.method, n.params.as_ref(), tasks);
        }
        Ok(Incoming::Response(_)) => response(session, line),
        Ok(Incoming::Request(request)) => session_request(link, session, request, line, tasks),
    }
}

fn notification(
    link: &Link,
    session: &mut Session,
    name: &str,
    params: Option<&Value>,
    tasks: &mut JoinSet<()>,
) {
    match name {
        method::INITIALIZED => {
            if session.record.initialized {
                return;
            }
            session.record.initialized = true;
            let live = session.live.clone();
            let uris = live.subscriptions();
            // Subscribed now: a change published from here on is sent.
            let first = subscribe(&link.shared, &uris.borrow());
            let (shared, out, closing) =
                (link.shared.clone(), link.out.clone(), link.closing.clone());
            tasks.spawn(changes(shared, live, out, closing, uris, first));
        }
        method::CANCELLED => {
            let id = params
                .and_then(|p| p.get("requestId"))
                .and_then(smcp_proto::jsonrpc::RequestId::from_value);
            match id {
                Some(id) => {
                    let found = link.running.cancel(&id);
                    tracing::debug!(%id, found, "cancellation");
                }
                None => tracing::debug!("notifications/cancelled without a valid requestId"),
            }
        }
        other => tracing::debug!(method = %other, "notification ignored"),
    }
}

/// The client's response to a server-to-client request: to the round waiting for it, or
/// logged and dropped.
fn response(session: &Session, line: &Bytes) {
    let (id, answer) = match Message::from_slice(line) {
        Ok(Message::Result(r)) => (Some(r.id), Ok(r.result)),
        Ok(Message::Error(e)) => (e.id, Err(e.error)),
        _ => (None, Ok(Value::Null)),
    };
    match id {
        Some(id) if session.live.answer(&id, answer) => {}
        Some(id) => tracing::debug!(%id, "response to no request waiting; dropped"),
        None => tracing::debug!("response without an id; dropped"),
    }
}

fn session_request(
    link: &mut Link,
    session: &mut Session,
    request: IncomingRequest<'_>,
    line: &Bytes,
    tasks: &mut JoinSet<()>,
) {
    let span = tracing::debug_span!("mcp.request", method = %request.method, id = %request.id);
    let id = request.id.clone();
    let refuse = |link: &mut Link, error: ErrorObject| {
        span.in_scope(|| tracing::debug!(code = error.code, "refused"));
        link.send(error_bytes(Some(id.clone()), error));
    };
    let shared = link.shared.clone();
    if request.method == method::INITIALIZE {
        return refuse(
            link,
            ErrorObject::invalid_request(
                "Invalid request: the connection is already initialized; initialize once per \
                 connection",
            ),
        );
    }
    if !session.record.initialized && request.method != method::PING {
        return refuse(
            link,
            ErrorObject::invalid_request(
                "Invalid request: the session is not initialized yet; send \
                 notifications/initialized first",
            ),
        );
    }
    let request = match SessionRequest::read(request, line) {
        Ok(request) => request,
        Err(refusal) => return refuse(link, refusal.1),
    };
    if request.carries_2026_meta() {
        let version = session.record.protocol_version.clone();
        return refuse(
            link,
            ErrorObject::invalid_params(format!(
                "\"params._meta\" carries 2026-07-28 members ({:?}, {:?}) on a connection of \
                 {version}: a connection speaks one revision",
                meta::PROTOCOL_VERSION,
                meta::CLIENT_CAPABILITIES,
            )),
        );
    }
    let max_subscriptions = session.legacy.config.max_subscriptions;
    let own = session_method(
        &shared,
        max_subscriptions,
        &mut session.record,
        &session.live,
        &request.method,
        request.other_params(),
    );
    if let Some(result) = own {
        let bytes = era_finished_bytes(
            reply::Era::Session,
            &shared.server_meta,
            id,
            result.map(Reply::Object),
        );
        return link.send(bytes);
    }
    if let Err(error) = link.running.admit(&id, false, &link.options) {
        return refuse(link, error);
    }
    let live = session.live.clone();
    let cancel = CancellationToken::new();
    let registration = link.running.register(id.clone(), cancel.clone(), false);
    let stream = live.open_stream(link.out.clone(), StreamKind::Request(id.clone()));
    let exchange = Exchange {
        shared: shared.clone(),
        legacy: session.legacy.clone(),
        live: live.clone(),
        log_level: session.record.log_level,
        request,
        principal: link.options.principal.clone(),
        access: None,
        cancel,
        may_stream: true,
        stream: Some(stream),
        // In-band: a refusal is the request's JSON-RPC error.
        rate: crate::core::dispatch::RateCheck::Apply { peer: None },
    };
    let out = link.out.clone();
    tasks.spawn(
        async move {
            let answer = exchange.run().await;
            live.close_stream(stream);
            // Out of the table before the response is written: the client may reuse the id
            // as soon as it has read it.
            drop(registration);
            match answer {
                Some(bytes) => {
                    let _ = out.send(NEWLINE.frame(&bytes)).await;
                }
                None => tracing::debug!("cancelled request; no response"),
            }
        }
        .instrument(span.clone()),
    );
}

/// The session's change notifications, from the change bus, until the connection closes.
async fn changes(
    shared: Arc<Shared>,
    live: Arc<Live>,
    out: mpsc::Sender<Bytes>,
    closing: CancellationToken,
    uris: watch::Receiver<Vec<String>>,
    first: Option<Subscription>,
) {
    let emit = |json: Vec<u8>| {
        let out = out.clone();
        async move { out.send(NEWLINE.frame(&json)).await.is_ok() }
    };
    follow(&shared, &live, uris, first, closing.cancelled(), emit).await;
    tracing::debug!("legacy change notifications ended");
}
