//! A stream resumed with `Last-Event-ID` on an instance that did not write it, from the
//! relay's shared log: the missed events, then, for a request stream, the rest of it as its
//! owner writes it (read from the log until the owner marks it ended); a standalone stream
//! goes on as a new standalone stream of this instance (change notifications come from the
//! shared bus, so any instance can produce them). When the owner of a request stream stops
//! before the response, the stream ends with an error response for the request.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::RequestId;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::config::Legacy;
use super::live::{EventRef, Live, event_id};
use super::relay::{StreamKey, StreamKind, Tail};
use crate::core::reply::{Era, era_finished_bytes};
use crate::core::server::Shared;

/// How often a follower reads the shared log for new events.
const POLL: Duration = Duration::from_millis(100);

/// How often a follower with nothing new asks whether the owner is still there.
const ALIVE_EVERY: Duration = Duration::from_secs(1);

/// What a resumption from the shared log found.
#[derive(Debug)]
pub(crate) enum Resumption {
    /// The log does not hold the stream (or not back that far): treated as an unknown id.
    Unknown,
    /// A standalone stream's missed events; a new standalone stream goes on after them.
    Standalone(Vec<Bytes>),
    /// A request stream's missed events, and where to follow it from.
    Request(Vec<Bytes>, Follow),
}

/// The rest of a request stream of another instance, to follow.
#[derive(Debug)]
pub(crate) struct Follow {
    key: StreamKey,
    after: u64,
    request: RequestId,
    ended: bool,
}

fn frames(tail: Tail) -> (Vec<Bytes>, Option<u64>) {
    let last = tail.events.last().map(|(seq, _)| *seq);
    let frames = tail
        .events
        .into_iter()
        .map(|(_, f)| Bytes::from(f))
        .collect();
    (frames, last)
}

/// The events after `at` of a stream another instance wrote, from the shared log.
pub(crate) async fn resume_elsewhere(legacy: &Legacy, live: &Live, at: EventRef<'_>) -> Resumption {
    if at.owner.is_empty() || !legacy.relay.shares_log() {
        return Resumption::Unknown;
    }
    let key = StreamKey {
        session: live.id.clone(),
        owner: at.owner.to_owned(),
        stream: at.stream,
    };
    let max = legacy.config.replay_events.max(1);
    let tail = match legacy.relay.read(key.clone(), at.seq, max).await {
        Ok(Some(tail)) => tail,
        Ok(None) => return Resumption::Unknown,
        Err(e) => {
            tracing::warn!(session = %live.id, error = %e, "legacy resumption: the shared log could not be read");
            return Resumption::Unknown;
        }
    };
    let kind = tail.kind.clone();
    let ended = tail.ended;
    let (missed, last) = frames(tail);
    tracing::debug!(session = %live.id, owner = at.owner, stream = at.stream, missed = missed.len(), "legacy stream resumed from the shared log");
    match kind {
        StreamKind::Standalone => Resumption::Standalone(missed),
        StreamKind::Request(request) => Resumption::Request(
            missed,
            Follow {
                key,
                after: last.unwrap_or(at.seq),
                request,
                ended,
            },
        ),
    }
}

/// Sends the rest of a followed request stream to `tx` as its owner writes it, until the
/// owner marks it ended, the client goes, the session ends or nothing arrives for the
/// response timeout. An owner that stops before the response ends the stream with an error
/// response for the request.
pub(crate) async fn follow_elsewhere(
    shared: Arc<Shared>,
    legacy: Arc<Legacy>,
    live: Arc<Live>,
    follow: Follow,
    tx: mpsc::Sender<Bytes>,
) {
    let Follow {
        key,
        mut after,
        request,
        mut ended,
    } = follow;
    let max = legacy.config.replay_events.max(1);
    let mut last_news = Instant::now();
    let mut last_check = Instant::now();
    while !ended {
        tokio::select! {
            () = tx.closed() => return,
            () = live.ended.cancelled() => return,
            () = tokio::time::sleep(POLL) => {}
        }
        let mut news = false;
        match legacy.relay.read(key.clone(), after, max).await {
            Ok(Some(tail)) => {
                ended = tail.ended && tail.events.len() < max;
                let (missed, last) = frames(tail);
                news = !missed.is_empty();
                for frame in missed {
                    if tx.send(frame).await.is_err() {
                        return;
                    }
                }
                after = last.unwrap_or(after);
            }
            Ok(None) => return,
            Err(e) => tracing::debug!(error = %e, "legacy resumption: shared log read failed"),
        }
        if news {
            last_news = Instant::now();
            continue;
        }
        if last_news.elapsed() >= legacy.config.response_timeout {
            return;
        }
        if !ended && last_check.elapsed() >= ALIVE_EVERY {
            last_check = Instant::now();
            if let Ok(false) = legacy.relay.alive(&key.owner).await {
                // One last read: what the owner wrote just before it stopped.
                if let Ok(Some(tail)) = legacy.relay.read(key.clone(), after, max).await {
                    if tail.ended {
                        ended = true;
                    }
                    let (missed, last) = frames(tail);
                    for frame in missed {
                        if tx.send(frame).await.is_err() {
                            return;
                        }
                    }
                    after = last.unwrap_or(after);
                }
                if !ended {
                    tracing::info!(session = %live.id, owner = %key.owner, "legacy resumption: the instance running the request stopped");
                    let error = ErrorObject::internal(
                        "the server instance running this request stopped before it answered; \
                         the request failed and may be sent again",
                    );
                    let bytes = era_finished_bytes(
                        Era::Session,
                        &shared.server_meta,
                        request.clone(),
                        Err(error),
                    );
                    let id = event_id(&key.owner, key.stream, after + 1);
                    let _ = tx.send(live.framed(&id, &bytes)).await;
                }
                return;
            }
        }
    }
}
