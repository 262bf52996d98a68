//! What a legacy session has on this instance only: its streams and their events (numbered,
//! with a bounded replay log), the server-to-client requests waiting for their response, the
//! client's requests in flight (for `notifications/cancelled`), and the URIs it subscribed to
//! (to re-aim the standalone stream's change subscription).
//!
//! None of this is in the [`SessionStore`](super::SessionStore): a stream or a waiting
//! request cannot move to another instance. The ids minted here carry the instance's tag
//! (`relay.rs`), so that what arrives on another instance can be relayed here; with a relay
//! that shares the log, every event is also appended to the shared log before it is sent.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use serde_json::Value;
use smcp_proto::error::ErrorObject;
use smcp_proto::jsonrpc::RequestId;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::relay::{LoggedEvent, SessionRelay, StreamKey, StreamKind, valid_tag};
use super::request::SessionMeta;

/// How a transport frames one event with its id (SSE: `id:` and `data:` lines).
pub(crate) type FrameFn = fn(&str, &[u8]) -> Bytes;

/// A client's answer to a server-to-client request: its result, or its error.
pub(crate) type Answer = Result<Value, ErrorObject>;

/// One logged event.
#[derive(Debug)]
struct Event {
    stream: u64,
    seq: u64,
    frame: Bytes,
}

#[derive(Debug, Default)]
struct Streams {
    next_stream: u64,
    /// The last events of every stream, oldest first, at most `replay` of them.
    log: VecDeque<Event>,
    /// The sequence number of the next event, per open stream.
    next_seq: HashMap<u64, u64>,
    /// Where a stream's events go while a client reads it.
    sinks: HashMap<u64, mpsc::Sender<Bytes>>,
    /// Open standalone (GET) streams.
    standalone: usize,
    /// What each open stream carries.
    kinds: HashMap<u64, StreamKind>,
}

/// The session's instance-local state.
#[derive(Debug)]
pub(crate) struct Live {
    pub(crate) id: String,
    /// The `_meta` members the session gives each of its requests.
    pub(crate) meta: SessionMeta,
    frame: FrameFn,
    replay: usize,
    max_pending: usize,
    /// This instance's tag in the ids minted here (empty: no relay).
    tag: Arc<str>,
    /// The relay whose shared log every event is appended to, if it shares one.
    shared_log: Option<Arc<dyn SessionRelay>>,
    streams: Mutex<Streams>,
    next_request: AtomicU64,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Answer>>>,
    in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
    subscriptions: watch::Sender<Vec<String>>,
    /// Fires when the session ends (DELETE, expiry): its requests and streams stop.
    pub(crate) ended: CancellationToken,
    used: Mutex<Instant>,
}

/// Why a server-to-client request could not be sent.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooManyPending(pub(crate) usize);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An event id: the instance that wrote the stream, the stream and the event's place in it
/// (`<tag>_<stream>-<n>`, or `<stream>-<n>` without a tag).
pub(crate) fn event_id(tag: &str, stream: u64, seq: u64) -> String {
    if tag.is_empty() {
        format!("{stream}-{seq}")
    } else {
        format!("{tag}_{stream}-{seq}")
    }
}

/// An event id read back: who wrote the stream (`""`: an instance without a tag), which
/// stream and which event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EventRef<'a> {
    pub(crate) owner: &'a str,
    pub(crate) stream: u64,
    pub(crate) seq: u64,
}

/// The parts of an event id some instance wrote; `None` for any other text.
pub(crate) fn parse_event_id(id: &str) -> Option<EventRef<'_>> {
    let id = id.trim();
    let (owner, rest) = match id.split_once('_') {
        Some((tag, rest)) if valid_tag(tag) => (tag, rest),
        Some(_) => return None,
        None => ("", id),
    };
    let (stream, seq) = rest.split_once('-')?;
    let number = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    Some(EventRef {
        owner,
        stream: number(stream)?,
        seq: number(seq)?,
    })
}

impl Live {
    pub(crate) fn new(
        id: String,
        meta: SessionMeta,
        frame: FrameFn,
        replay: usize,
        max_pending: usize,
        subscriptions: Vec<String>,
    ) -> Self {
        Self {
            id,
            meta,
            frame,
            replay,
            max_pending,
            tag: Arc::from(""),
            shared_log: None,
            streams: Mutex::new(Streams::default()),
            next_request: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            in_flight: Mutex::new(HashMap::new()),
            subscriptions: watch::Sender::new(subscriptions),
            ended: CancellationToken::new(),
            used: Mutex::new(Instant::now()),
        }
    }

    /// The same, minting ids with `relay`'s tag, and appending every event to its shared
    /// log when it has one.
    pub(crate) fn relayed(mut self, relay: &Arc<dyn SessionRelay>) -> Self {
        self.tag = Arc::from(relay.instance());
        self.shared_log = relay.shares_log().then(|| Arc::clone(relay));
        self
    }

    /// This instance's tag in the ids minted here.
    pub(crate) fn tag(&self) -> &str {
        &self.tag
    }

    /// The id of event `seq` of `stream`.
    pub(crate) fn event_id(&self, stream: u64, seq: u64) -> String {
        event_id(&self.tag, stream, seq)
    }

    /// Frames `json` as an event with id `id`, as this session's transport does.
    pub(crate) fn framed(&self, id: &str, json: &[u8]) -> Bytes {
        (self.frame)(id, json)
    }

    /// Marks the session as used now.
    pub(crate) fn touch(&self) {
        *lock(&self.used) = Instant::now();
    }

    /// When the session was last used on this instance.
    pub(crate) fn last_used(&self) -> Instant {
        *lock(&self.used)
    }

    /// Opens a stream carrying `kind` whose events go to `sink`; returns its number.
    pub(crate) fn open_stream(&self, sink: mpsc::Sender<Bytes>, kind: StreamKind) -> u64 {
        let mut streams = lock(&self.streams);
        streams.next_stream += 1;
        let n = streams.next_stream;
        streams.next_seq.insert(n, 1);
        streams.sinks.insert(n, sink);
        if self.shared_log.is_some() {
            streams.kinds.insert(n, kind);
        }
        n
    }

    /// Opens a standalone stream, unless `max` are open already.
    pub(crate) fn open_standalone(&self, sink: mpsc::Sender<Bytes>, max: usize) -> Option<u64> {
        {
            let mut streams = lock(&self.streams);
            if streams.standalone >= max {
                return None;
            }
            streams.standalone += 1;
        }
        Some(self.open_stream(sink, StreamKind::Standalone))
    }

    /// Closes a standalone stream's slot (its sink is dropped).
    pub(crate) fn close_standalone(&self, stream: u64) {
        let mut streams = lock(&self.streams);
        streams.standalone = streams.standalone.saturating_sub(1);
        streams.sinks.remove(&stream);
    }

    /// Ends a stream: no more events are written to it. A request stream is marked ended in
    /// the shared log, if any (its response was its last event).
    pub(crate) fn close_stream(&self, stream: u64) {
        let kind = {
            let mut streams = lock(&self.streams);
            streams.sinks.remove(&stream);
            streams.next_seq.remove(&stream);
            streams.kinds.remove(&stream)
        };
        if let (Some(relay), Some(StreamKind::Request(_))) = (&self.shared_log, kind) {
            let closed = relay.close(self.stream_key(stream));
            tokio::spawn(async move {
                if let Err(e) = closed.await {
                    tracing::warn!(error = %e, "legacy stream: could not mark it ended in the shared log");
                }
            });
        }
    }

    fn stream_key(&self, stream: u64) -> StreamKey {
        StreamKey {
            session: self.id.clone(),
            owner: self.tag.to_string(),
            stream,
        }
    }

    /// Logs `json` as the next event of `stream` and sends it to the stream's reader, if one
    /// reads it (waiting while the reader is slow). Returns whether a reader took it.
    pub(crate) async fn emit(&self, stream: u64, json: &[u8]) -> bool {
        let (frame, sink, opens, this) = {
            let mut streams = lock(&self.streams);
            let Some(seq) = streams.next_seq.get_mut(&stream) else {
                return false;
            };
            let this = *seq;
            *seq += 1;
            let frame = (self.frame)(&self.event_id(stream, this), json);
            let opens = if this == 1 {
                streams.kinds.get(&stream).cloned()
            } else {
                None
            };
            if self.replay > 0 {
                if streams.log.len() >= self.replay {
                    streams.log.pop_front();
                }
                streams.log.push_back(Event {
                    stream,
                    seq: this,
                    frame: frame.clone(),
                });
            }
            (frame, streams.sinks.get(&stream).cloned(), opens, this)
        };
        // In the shared log before the client can have it: whatever a client saw, another
        // instance can replay.
        if let Some(relay) = &self.shared_log {
            let event = LoggedEvent {
                key: self.stream_key(stream),
                seq: this,
                opens,
                frame: frame.to_vec(),
                keep: self.replay.max(1),
            };
            // The relay warns of its own failures; each event left out is a debug line.
            if let Err(e) = relay.record(event).await {
                tracing::debug!(session = %self.id, stream, error = %e, "legacy stream: event not in the shared log (it cannot be replayed on another instance)");
            }
        }
        match sink {
            Some(sink) => sink.send(frame).await.is_ok(),
            None => false,
        }
    }

    /// The logged events of `stream` after `seq`, oldest first; `None` when the log no longer
    /// reaches back that far (or never held that stream).
    pub(crate) fn replay_after(&self, stream: u64, seq: u64) -> Option<Vec<Bytes>> {
        let streams = lock(&self.streams);
        let mut of_stream = streams.log.iter().filter(|e| e.stream == stream).peekable();
        // The log reaches back far enough when it still holds the event after `seq`, or the
        // stream never wrote one since.
        let first = of_stream.peek().map(|e| e.seq);
        let next = streams.next_seq.get(&stream).copied();
        let covered = match (first, next) {
            (Some(first), _) => first <= seq + 1,
            (None, Some(next)) => next <= seq + 1,
            (None, None) => false,
        };
        if !covered {
            return None;
        }
        Some(
            of_stream
                .filter(|e| e.seq > seq)
                .map(|e| e.frame.clone())
                .collect(),
        )
    }

    /// Points an open stream at a new reader (resumption), keeping its numbering.
    pub(crate) fn reattach(&self, stream: u64, sink: mpsc::Sender<Bytes>) -> bool {
        let mut streams = lock(&self.streams);
        if !streams.next_seq.contains_key(&stream) {
            return false;
        }
        streams.sinks.insert(stream, sink);
        true
    }

    /// A new server-to-client request: its id and where its answer arrives.
    pub(crate) fn request(&self) -> Result<(RequestId, oneshot::Receiver<Answer>), TooManyPending> {
        let mut pending = lock(&self.pending);
        if pending.len() >= self.max_pending {
            return Err(TooManyPending(self.max_pending));
        }
        let n = self.next_request.fetch_add(1, Ordering::Relaxed);
        let id = if self.tag.is_empty() {
            RequestId::from(format!("smcp-{n}"))
        } else {
            RequestId::from(format!("smcp-{}-{n}", self.tag))
        };
        let (tx, rx) = oneshot::channel();
        pending.insert(id.clone(), tx);
        Ok((id, rx))
    }

    /// Forgets a server-to-client request (answered elsewhere, timed out, or abandoned).
    pub(crate) fn forget(&self, id: &RequestId) {
        lock(&self.pending).remove(id);
    }

    /// Delivers the client's answer; `false` when the server sent no request with that id
    /// (or no longer waits for it).
    pub(crate) fn answer(&self, id: &RequestId, answer: Answer) -> bool {
        match lock(&self.pending).remove(id) {
            Some(tx) => {
                let _ = tx.send(answer);
                true
            }
            None => false,
        }
    }

    /// Registers a client request in flight; `None` when one with the same id is.
    pub(crate) fn begin(&self, id: &RequestId) -> Option<CancellationToken> {
        let mut in_flight = lock(&self.in_flight);
        if in_flight.contains_key(id) {
            return None;
        }
        let token = self.ended.child_token();
        in_flight.insert(id.clone(), token.clone());
        Some(token)
    }

    /// The request is answered.
    pub(crate) fn end(&self, id: &RequestId) {
        lock(&self.in_flight).remove(id);
    }

    /// `notifications/cancelled`: cancels the request in flight with that id, if any.
    pub(crate) fn cancel(&self, id: &RequestId) -> bool {
        match lock(&self.in_flight).remove(id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// The URIs subscribed to, as the standalone stream watches them.
    pub(crate) fn subscriptions(&self) -> watch::Receiver<Vec<String>> {
        self.subscriptions.subscribe()
    }

    /// Replaces the URIs subscribed to.
    pub(crate) fn set_subscriptions(&self, uris: Vec<String>) {
        self.subscriptions.send_replace(uris);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> SessionMeta {
        SessionMeta::new(&super::super::SessionRecord {
            id: "s".into(),
            protocol_version: "2025-11-25".into(),
            client_capabilities: serde_json::Map::new(),
            client_info: None,
            initialized: true,
            log_level: None,
            subscriptions: std::collections::BTreeSet::new(),
            principal: None,
        })
    }

    fn frame(id: &str, json: &[u8]) -> Bytes {
        let mut v = format!("{id}:").into_bytes();
        v.extend_from_slice(json);
        Bytes::from(v)
    }

    #[tokio::test]
    async fn events_are_numbered_logged_and_replayed() {
        let live = Live::new("s".into(), meta(), frame, 3, 2, Vec::new());
        let (tx, mut rx) = mpsc::channel(8);
        let s = live.open_stream(tx, StreamKind::Standalone);
        for j in [b"a", b"b", b"c", b"d"] {
            assert!(live.emit(s, j).await);
        }
        assert_eq!(rx.recv().await.unwrap(), Bytes::from_static(b"1-1:a"));
        // The log holds the last three: after 1 it can replay 2..4, after 0 it cannot.
        let replay = live.replay_after(s, 1).unwrap();
        assert_eq!(
            replay,
            vec![
                Bytes::from_static(b"1-2:b"),
                Bytes::from_static(b"1-3:c"),
                Bytes::from_static(b"1-4:d")
            ]
        );
        assert!(live.replay_after(s, 0).is_none());
        assert_eq!(live.replay_after(s, 4).unwrap(), Vec::<Bytes>::new());
        assert!(live.replay_after(9, 0).is_none());
        let at = |owner, stream, seq| Some(EventRef { owner, stream, seq });
        assert_eq!(parse_event_id("1-4"), at("", 1, 4));
        assert_eq!(parse_event_id(" ab12_3-0 "), at("ab12", 3, 0));
        for bad in [
            "x", "1-", "-4", "1-4-5", "AB_1-2", "_1-2", "ab_1-+2", "ab-1-2", "a_b_1-2",
        ] {
            assert_eq!(parse_event_id(bad), None, "{bad}");
        }
        assert_eq!(event_id("", 2, 5), "2-5");
        assert_eq!(event_id("ab12", 2, 5), "ab12_2-5");
    }

    #[tokio::test]
    async fn pending_requests_are_bounded_and_answered_once() {
        let live = Live::new("s".into(), meta(), frame, 0, 2, Vec::new());
        let (a, rx_a) = live.request().unwrap();
        let (_b, _rx_b) = live.request().unwrap();
        assert_eq!(live.request().unwrap_err(), TooManyPending(2));
        assert!(live.answer(&a, Ok(Value::Null)));
        assert!(!live.answer(&a, Ok(Value::Null)));
        assert_eq!(rx_a.await.unwrap(), Ok(Value::Null));
        assert!(!live.answer(&RequestId::from(7), Ok(Value::Null)));
    }

    #[test]
    fn cancel_reaches_the_request_in_flight() {
        let live = Live::new("s".into(), meta(), frame, 0, 1, Vec::new());
        let id = RequestId::from(1);
        let token = live.begin(&id).unwrap();
        assert!(live.begin(&id).is_none());
        assert!(live.cancel(&id));
        assert!(token.is_cancelled());
        assert!(!live.cancel(&id));
        let other = live.begin(&RequestId::from(2)).unwrap();
        live.ended.cancel();
        assert!(other.is_cancelled());
    }
}
