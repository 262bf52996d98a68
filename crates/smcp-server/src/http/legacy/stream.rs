//! GET (the standalone stream, or the resumption of a stream with `Last-Event-ID`) and
//! DELETE (the end of a session).
//!
//! The standalone stream carries the change notifications the session may receive: tools,
//! prompts and resources `list_changed` (as advertised), and `notifications/resources/updated`
//! for the URIs it subscribed to, from the same `ChangeBus` that `subscriptions/listen` reads.
//! Every event has an id (`<stream>-<n>`, `<tag>_<stream>-<n>` with a relay); the session
//! keeps its last events, and a GET with `Last-Event-ID` gets the missed events of that stream
//! first, then that stream's further events while it is open (a request still running), or a
//! new standalone stream. A stream another instance wrote is resumed from the relay's shared
//! log (`core/legacy/resume.rs`).

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use http::{Method, Response, StatusCode};
use smcp_bus::Subscription;
use smcp_proto::error::ErrorObject;
use tokio::sync::{mpsc, watch};

use super::wire::{Head, refusal, sse_event};
use crate::core::legacy::{
    Legacy, Live, Refusal, RefusalKind, Resumption, follow, follow_elsewhere, parse_event_id,
    resume_elsewhere, subscribe,
};
use crate::core::server::Shared;
use crate::http::body::McpBody;
use crate::http::response::sse_response;

/// DELETE: ends the session (204), or 404.
pub(crate) async fn delete(legacy: Arc<Legacy>, head: Head) -> Response<McpBody> {
    let Some(session) = head.session.as_deref() else {
        return refusal(None, Refusal::not_found());
    };
    let principal = head.principal.as_ref().map(|p| p.0.as_str());
    if let Err(r) = legacy.session(session, principal).await {
        return refusal(None, r);
    }
    match legacy.end(session).await {
        Ok(()) => {
            let mut response = Response::new(McpBody::empty());
            *response.status_mut() = StatusCode::NO_CONTENT;
            response
        }
        Err(r) => refusal(None, r),
    }
}

/// GET: the standalone stream, or a resumed one.
pub(crate) async fn get(shared: Arc<Shared>, legacy: Arc<Legacy>, head: Head) -> Response<McpBody> {
    if !head.accepts_sse {
        let mut response = refusal(
            None,
            Refusal {
                kind: RefusalKind::BadRequest,
                error: ErrorObject::invalid_request(
                    "Not Acceptable: a GET stream needs Accept: text/event-stream",
                ),
            },
        );
        *response.status_mut() = StatusCode::NOT_ACCEPTABLE;
        return response;
    }
    let Some(session) = head.session.as_deref() else {
        return refusal(None, Refusal::not_found());
    };
    let principal = head.principal.as_ref().map(|p| p.0.as_str());
    let record = match legacy.session(session, principal).await {
        Ok(record) => record,
        Err(r) => return refusal(None, r),
    };
    if let Some(version) = &head.version
        && *version != record.protocol_version
    {
        return refusal(
            None,
            Refusal::bad(ErrorObject::invalid_request(format!(
                "Bad Request: MCP-Protocol-Version {version:?} is not the session's negotiated \
                 version {:?}",
                record.protocol_version
            ))),
        );
    }
    let live = legacy.live(&record, sse_event);
    let (tx, rx) = mpsc::channel(shared.limits.event_buffer.max(1));
    let mut first = None;
    match head.last_event_id.as_deref().and_then(parse_event_id) {
        Some(at) if at.owner == live.tag() => {
            if let Some(missed) = live.replay_after(at.stream, at.seq) {
                first = joined(missed);
                if live.reattach(at.stream, tx.clone()) {
                    tracing::debug!(session = %live.id, stream = at.stream, "legacy stream resumed");
                    return sse_response(McpBody::stream(first, rx, None));
                }
            }
        }
        Some(at) => match resume_elsewhere(&legacy, &live, at).await {
            Resumption::Unknown => {}
            Resumption::Standalone(missed) => first = joined(missed),
            Resumption::Request(missed, rest) => {
                let follower = follow_elsewhere(shared, legacy, live, rest, tx);
                tokio::spawn(follower);
                return sse_response(McpBody::stream(joined(missed), rx, None));
            }
        },
        None => {}
    }
    let Some(stream) = live.open_standalone(tx.clone(), legacy.config.standalone_streams) else {
        let mut response = refusal(
            None,
            Refusal::bad(ErrorObject::invalid_request(format!(
                "Conflict: the session already has its {} standalone stream(s) open",
                legacy.config.standalone_streams
            ))),
        );
        *response.status_mut() = StatusCode::CONFLICT;
        return response;
    };
    let primed = super::wire::priming(&record.protocol_version, &live.event_id(stream, 0));
    let first = match (first, primed) {
        (Some(missed), Some(primed)) => {
            let mut joined = BytesMut::from(&missed[..]);
            joined.extend_from_slice(&primed);
            Some(joined.freeze())
        }
        (missed, primed) => missed.or(primed),
    };
    // Subscribed before the response is returned: a change published from then on reaches
    // the stream.
    let uris = live.subscriptions();
    let changes = subscribe(&shared, &uris.borrow());
    tokio::spawn(pump(shared, live, stream, tx, uris, changes));
    sse_response(McpBody::stream(first, rx, None))
}

/// `frames` as one chunk; `None` when there are none.
fn joined(frames: Vec<Bytes>) -> Option<Bytes> {
    let mut out = BytesMut::new();
    for frame in frames {
        out.extend_from_slice(&frame);
    }
    (!out.is_empty()).then(|| out.freeze())
}

/// Feeds the standalone stream from the change bus until the client goes or the session
/// ends.
async fn pump(
    shared: Arc<Shared>,
    live: Arc<Live>,
    stream: u64,
    tx: mpsc::Sender<Bytes>,
    uris: watch::Receiver<Vec<String>>,
    first: Option<Subscription>,
) {
    let emit = |json: Vec<u8>| {
        let live = Arc::clone(&live);
        async move {
            live.emit(stream, &json).await;
            true
        }
    };
    follow(&shared, &live, uris, first, tx.closed(), emit).await;
    live.close_standalone(stream);
    live.close_stream(stream);
}

/// GET or DELETE of a legacy session.
pub(crate) async fn get_or_delete(
    shared: Arc<Shared>,
    legacy: Arc<Legacy>,
    method: Method,
    head: Head,
) -> Response<McpBody> {
    if method == Method::DELETE {
        delete(legacy, head).await
    } else {
        get(shared, legacy, head).await
    }
}
