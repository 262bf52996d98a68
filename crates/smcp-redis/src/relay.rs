//! [`RedisSessionRelay`]: a 2025-era session's live traffic relayed between instances, so that
//! a session needs no stickiness.
//!
//! * **Directed messages** ride the bus's subscriber connection (`bus.rs`): a client's
//!   response to a server-to-client request is `PUBLISH`ed to `<prefix>relay:<owner>` (the
//!   owner's instance id is its tag in the request id); the owner hands it to the waiting
//!   round and answers on the sender's channel whether it took it. `PUBLISH` counts the
//!   subscribers: 0 means the owner is gone (its subscriber connection closed), which the
//!   sender reports at once. `notifications/cancelled` for a request not running here goes to
//!   `<prefix>relay`, which every instance reads.
//! * **The shared stream log**: every event of a session's streams is appended, before it is
//!   sent, to a capped Redis stream `<prefix>sse:<session>:<owner>:<stream>` (`XADD MAXLEN ~`,
//!   entry id `0-<n+1>` for event `n`), next to a hash `…:meta` (what the stream carries, and
//!   `end` once a request stream's response is written). Both expire after the log TTL
//!   without a new event. Another instance reads them back for `Last-Event-ID`.
//!
//! Messages are JSON with a version, `{"v":1,"t":"answer"|"ack"|"cancel",…}`; one of another
//! version or shape is logged and skipped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use smcp_server::legacy::{
    LoggedEvent, RelayError, RelayInbox, RelayedAnswer, SessionRelay, StreamKey, StreamKind, Tail,
};
use smcp_server::proto::jsonrpc::RequestId;
use smcp_server::tools::BoxFuture;
use tokio::sync::oneshot;

use crate::bus::{RelaySink, relay_channel};
use crate::{Redis, RedisBus, RedisError};

const VERSION: u8 = 1;

/// How long a relayed response waits for its owner's acknowledgement, unless
/// [`RedisSessionRelayBuilder::ack_timeout`] says otherwise.
pub const DEFAULT_ACK_TIMEOUT: Duration = Duration::from_secs(5);

/// After a failed append to the shared log, appends are skipped (failing at once) for this
/// long, so that a Redis that hangs does not hold up every event by the command timeout.
pub const LOG_PAUSE: Duration = Duration::from_secs(1);

/// How long a stream's shared log outlives its last event, unless
/// [`RedisSessionRelayBuilder::log_ttl`] says otherwise.
pub const DEFAULT_LOG_TTL: Duration = Duration::from_secs(30 * 60);

#[derive(Debug, Serialize, Deserialize)]
struct Envelope {
    v: u8,
    #[serde(flatten)]
    message: Message,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "lowercase")]
enum Message {
    /// A client's response, for the instance that sent the request.
    Answer {
        from: String,
        corr: String,
        answer: RelayedAnswer,
    },
    /// Whether the owner took the response `corr`.
    Ack { corr: String, taken: bool },
    /// `notifications/cancelled`, for every instance.
    Cancel {
        from: String,
        session: String,
        id: RequestId,
    },
}

/// The [`SessionRelay`] over Redis: directed messages on the bus's subscriber connection and
/// a shared, capped log of every stream. Cheap to clone.
///
/// # Examples
///
/// ```no_run
/// use std::sync::Arc;
/// use smcp_redis::{Redis, RedisBus, RedisSessionRelay, RedisSessionStore};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let redis = Redis::builder("redis://127.0.0.1:6379/").build()?;
/// let bus = RedisBus::start(&redis);
/// let server = smcp_server::Server::builder("demo", "1.0.0")
///     .change_bus(Arc::new(bus.clone()))
///     .session_store(RedisSessionStore::new(&redis, 1000, std::time::Duration::from_secs(1800)))
///     .session_relay(RedisSessionRelay::new(&bus))
///     .build()?;
/// # let _ = server;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RedisSessionRelay {
    inner: Arc<Inner>,
}

struct Inner {
    bus: RedisBus,
    redis: Redis,
    ack_timeout: Duration,
    log_ttl: Duration,
    inbox: OnceLock<Arc<dyn RelayInbox>>,
    waiting: Mutex<HashMap<String, oneshot::Sender<bool>>>,
    /// Appends to the shared log are skipped until then (after a failure).
    log_paused: Mutex<Option<tokio::time::Instant>>,
}

impl std::fmt::Debug for RedisSessionRelay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSessionRelay")
            .field("instance", &self.inner.redis.instance())
            .field("ack_timeout", &self.inner.ack_timeout)
            .field("log_ttl", &self.inner.log_ttl)
            .finish_non_exhaustive()
    }
}

/// Builds a [`RedisSessionRelay`].
#[derive(Debug)]
pub struct RedisSessionRelayBuilder {
    bus: RedisBus,
    ack_timeout: Duration,
    log_ttl: Duration,
}

impl RedisSessionRelayBuilder {
    /// How long a relayed response waits for the owner's acknowledgement before the POST
    /// that carried it fails with 503 (default 5 s).
    #[must_use]
    pub fn ack_timeout(mut self, timeout: Duration) -> Self {
        self.ack_timeout = timeout;
        self
    }

    /// How long a stream's shared log is kept after its last event (default 30 minutes, the
    /// default session idle timeout).
    #[must_use]
    pub fn log_ttl(mut self, ttl: Duration) -> Self {
        self.log_ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// The relay, attached to the bus's subscriber connection. Attach one relay per bus: a
    /// second gets no messages.
    pub fn build(self) -> RedisSessionRelay {
        let relay = RedisSessionRelay {
            inner: Arc::new(Inner {
                redis: self.bus.redis().clone(),
                bus: self.bus,
                ack_timeout: self.ack_timeout,
                log_ttl: self.log_ttl,
                inbox: OnceLock::new(),
                waiting: Mutex::new(HashMap::new()),
                log_paused: Mutex::new(None),
            }),
        };
        if !relay
            .inner
            .bus
            .set_relay(Arc::new(Sink(Arc::downgrade(&relay.inner))))
        {
            tracing::warn!("session relay: the bus has a relay already; this one gets no messages");
        }
        relay
    }
}

impl RedisSessionRelay {
    /// A relay on `bus` with the default timeouts.
    pub fn new(bus: &RedisBus) -> Self {
        Self::builder(bus).build()
    }

    /// A builder on `bus`.
    pub fn builder(bus: &RedisBus) -> RedisSessionRelayBuilder {
        RedisSessionRelayBuilder {
            bus: bus.clone(),
            ack_timeout: DEFAULT_ACK_TIMEOUT,
            log_ttl: DEFAULT_LOG_TTL,
        }
    }
}

fn unavailable(e: &RedisError) -> RelayError {
    RelayError::Unavailable(e.to_string())
}

impl Inner {
    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<bool>>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `PUBLISH`es `message` on `channel`; the number of subscribers that got it.
    async fn publish(&self, channel: &str, message: Message) -> Result<i64, RedisError> {
        let text = serde_json::to_string(&Envelope {
            v: VERSION,
            message,
        })
        .map_err(|e| RedisError::Command(format!("encoding a relay message: {e}")))?;
        let mut conn = self.redis.conn();
        self.redis
            .bounded(
                redis::cmd("PUBLISH")
                    .arg(channel)
                    .arg(text)
                    .query_async::<i64>(&mut conn),
            )
            .await
    }

    /// Whether appends are paused after a recent failure.
    fn log_paused(&self) -> bool {
        let mut paused = self
            .log_paused
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match *paused {
            Some(until) if tokio::time::Instant::now() < until => true,
            Some(_) => {
                *paused = None;
                false
            }
            None => false,
        }
    }

    /// An append failed: skip appends for [`LOG_PAUSE`] (warned once per pause).
    fn pause_log(&self, error: &RedisError) {
        let mut paused = self
            .log_paused
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if paused.is_none() {
            tracing::warn!(%error, pause = ?LOG_PAUSE, "session relay: cannot append to the shared stream log; events are not replayable on other instances meanwhile");
        }
        *paused = Some(tokio::time::Instant::now() + LOG_PAUSE);
    }

    /// Subscribers of `channel` (`PUBSUB NUMSUB`): an instance's own channel has one while
    /// its subscriber connection is up.
    async fn subscribers(&self, channel: &str) -> Result<i64, RedisError> {
        let mut conn = self.redis.conn();
        let (_, subscribers): (String, i64) = self
            .redis
            .bounded(
                redis::cmd("PUBSUB")
                    .arg("NUMSUB")
                    .arg(channel)
                    .query_async(&mut conn),
            )
            .await?;
        Ok(subscribers)
    }

    fn stream_key(&self, key: &StreamKey) -> String {
        self.redis
            .key(&format!("sse:{}:{}:{}", key.session, key.owner, key.stream))
    }

    fn ttl_ms(&self) -> u64 {
        u64::try_from(self.log_ttl.as_millis())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    fn handle(self: Arc<Self>, direct: bool, payload: &[u8]) {
        let envelope: Envelope = match serde_json::from_slice(payload) {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!(error = %e, "session relay: skipped a message of an unknown shape");
                return;
            }
        };
        if envelope.v != VERSION {
            tracing::warn!(
                version = envelope.v,
                "session relay: skipped a message of another version"
            );
            return;
        }
        let me = self.redis.instance();
        match envelope.message {
            Message::Answer { from, corr, answer } if direct => {
                let taken = self.inbox.get().is_some_and(|inbox| inbox.answer(answer));
                // The acknowledgement goes out from its own task: the subscriber connection
                // reads on.
                tokio::spawn(async move {
                    let channel = relay_channel(&self.redis, &from);
                    if let Err(e) = self.publish(&channel, Message::Ack { corr, taken }).await {
                        tracing::warn!(error = %e, "session relay: could not acknowledge a relayed response");
                    }
                });
            }
            Message::Ack { corr, taken } if direct => {
                if let Some(tx) = self.waiting().remove(&corr) {
                    let _ = tx.send(taken);
                }
            }
            Message::Cancel { from, session, id } if !direct && from != me => {
                if let Some(inbox) = self.inbox.get() {
                    inbox.cancel(&session, &id);
                }
            }
            Message::Cancel { .. } if !direct => {}
            _ => tracing::warn!("session relay: skipped a message on the wrong channel"),
        }
    }
}

/// The bus's way into the relay (weak: the relay may be dropped first).
struct Sink(Weak<Inner>);

impl RelaySink for Sink {
    fn message(&self, direct: bool, payload: &[u8]) {
        if let Some(inner) = self.0.upgrade() {
            inner.handle(direct, payload);
        }
    }
}

/// Takes the waiting slot of `corr` out again when the forward ends, however it ends.
struct Slot<'a> {
    inner: &'a Inner,
    corr: &'a str,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.inner.waiting().remove(self.corr);
    }
}

impl SessionRelay for RedisSessionRelay {
    fn instance(&self) -> &str {
        self.inner.redis.instance()
    }

    fn attach(&self, inbox: Arc<dyn RelayInbox>) {
        if self.inner.inbox.set(inbox).is_err() {
            tracing::warn!("session relay: attached to a second server; it serves the first");
        }
    }

    fn forward(&self, owner: &str, answer: RelayedAnswer) -> BoxFuture<Result<bool, RelayError>> {
        let inner = Arc::clone(&self.inner);
        let channel = relay_channel(&inner.redis, owner);
        Box::pin(async move {
            let corr = crate::client::random_id().map_err(|e| unavailable(&e))?;
            let (tx, rx) = oneshot::channel();
            inner.waiting().insert(corr.clone(), tx);
            let _slot = Slot {
                inner: &inner,
                corr: &corr,
            };
            let message = Message::Answer {
                from: inner.redis.instance().to_owned(),
                corr: corr.clone(),
                answer,
            };
            let receivers = inner
                .publish(&channel, message)
                .await
                .map_err(|e| unavailable(&e))?;
            if receivers == 0 {
                return Err(RelayError::Gone);
            }
            match tokio::time::timeout(inner.ack_timeout, rx).await {
                Ok(Ok(taken)) => Ok(taken),
                // No answer: an owner that stopped meanwhile is gone; else it may be slow.
                Ok(Err(_)) | Err(_) => match inner.subscribers(&channel).await {
                    Ok(0) => Err(RelayError::Gone),
                    _ => Err(RelayError::Unavailable(format!(
                        "no acknowledgement within {:?}",
                        inner.ack_timeout
                    ))),
                },
            }
        })
    }

    fn cancel(&self, session: &str, id: &RequestId) -> BoxFuture<Result<(), RelayError>> {
        let inner = Arc::clone(&self.inner);
        let message = Message::Cancel {
            from: inner.redis.instance().to_owned(),
            session: session.to_owned(),
            id: id.clone(),
        };
        Box::pin(async move {
            let channel = inner.bus.relay_broadcast().to_owned();
            inner
                .publish(&channel, message)
                .await
                .map(drop)
                .map_err(|e| unavailable(&e))
        })
    }

    fn shares_log(&self) -> bool {
        true
    }

    fn record(&self, event: LoggedEvent) -> BoxFuture<Result<(), RelayError>> {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            if inner.log_paused() {
                return Err(RelayError::Unavailable(
                    "the shared log is paused after a failure".to_owned(),
                ));
            }
            let key = inner.stream_key(&event.key);
            let meta = format!("{key}:meta");
            let ttl = inner.ttl_ms();
            let mut pipe = redis::pipe();
            pipe.cmd("XADD")
                .arg(&key)
                .arg("MAXLEN")
                .arg("~")
                .arg(event.keep)
                .arg(format!("0-{}", event.seq.saturating_add(1)))
                .arg("f")
                .arg(event.frame)
                .ignore();
            pipe.cmd("PEXPIRE").arg(&key).arg(ttl).ignore();
            match &event.opens {
                Some(StreamKind::Standalone) => {
                    pipe.cmd("HSET").arg(&meta).arg("kind").arg("s").ignore();
                }
                Some(StreamKind::Request(id)) => {
                    let id = serde_json::to_string(id).unwrap_or_default();
                    pipe.cmd("HSET")
                        .arg(&meta)
                        .arg("kind")
                        .arg("r")
                        .arg("rid")
                        .arg(id)
                        .ignore();
                }
                None => {}
            }
            pipe.cmd("PEXPIRE").arg(&meta).arg(ttl).ignore();
            let mut conn = inner.redis.conn();
            let appended = inner.redis.bounded(pipe.query_async::<()>(&mut conn)).await;
            appended.map_err(|e| {
                inner.pause_log(&e);
                unavailable(&e)
            })
        })
    }

    fn close(&self, key: StreamKey) -> BoxFuture<Result<(), RelayError>> {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            let meta = format!("{}:meta", inner.stream_key(&key));
            let mut pipe = redis::pipe();
            pipe.cmd("HSET").arg(&meta).arg("end").arg("1").ignore();
            pipe.cmd("PEXPIRE").arg(&meta).arg(inner.ttl_ms()).ignore();
            let mut conn = inner.redis.conn();
            inner
                .redis
                .bounded(pipe.query_async::<()>(&mut conn))
                .await
                .map_err(|e| unavailable(&e))
        })
    }

    fn read(
        &self,
        key: StreamKey,
        after: u64,
        max: usize,
    ) -> BoxFuture<Result<Option<Tail>, RelayError>> {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            let stream = inner.stream_key(&key);
            let meta = format!("{stream}:meta");
            let mut pipe = redis::pipe();
            pipe.cmd("HGETALL").arg(&meta);
            pipe.cmd("XRANGE")
                .arg(&stream)
                .arg(format!("0-{}", after.saturating_add(2)))
                .arg("+")
                .arg("COUNT")
                .arg(max.max(1));
            pipe.cmd("XRANGE")
                .arg(&stream)
                .arg("-")
                .arg("+")
                .arg("COUNT")
                .arg(1);
            type Entries = Vec<(String, HashMap<String, Vec<u8>>)>;
            let mut conn = inner.redis.conn();
            let (fields, entries, first): (HashMap<String, String>, Entries, Entries) = inner
                .redis
                .bounded(pipe.query_async(&mut conn))
                .await
                .map_err(|e| unavailable(&e))?;
            let corrupt = |reason: &str| {
                tracing::warn!(key = %stream, reason, "session relay: unexpected stream log");
                Ok(None)
            };
            let kind = match (fields.get("kind").map(String::as_str), fields.get("rid")) {
                (None, _) => return Ok(None),
                (Some("s"), _) => StreamKind::Standalone,
                (Some("r"), Some(rid)) => match serde_json::from_str::<RequestId>(rid) {
                    Ok(id) => StreamKind::Request(id),
                    Err(_) => return corrupt("request id"),
                },
                _ => return corrupt("kind"),
            };
            let seq_of = |id: &str| {
                id.strip_prefix("0-")
                    .and_then(|n| n.parse::<u64>().ok())
                    .and_then(|n| n.checked_sub(1))
            };
            // The log reaches back far enough when its oldest event is at most the one after
            // `after` (or it holds none).
            if let Some((id, _)) = first.first() {
                match seq_of(id) {
                    Some(oldest) if oldest <= after.saturating_add(1) => {}
                    Some(_) => return Ok(None),
                    None => return corrupt("entry id"),
                }
            }
            let mut events = Vec::with_capacity(entries.len());
            for (id, mut fields) in entries {
                match (seq_of(&id), fields.remove("f")) {
                    (Some(seq), Some(frame)) => events.push((seq, frame)),
                    _ => return corrupt("entry"),
                }
            }
            Ok(Some(Tail {
                kind,
                events,
                ended: fields.contains_key("end"),
            }))
        })
    }

    fn alive(&self, owner: &str) -> BoxFuture<Result<bool, RelayError>> {
        let inner = Arc::clone(&self.inner);
        let channel = relay_channel(&inner.redis, owner);
        Box::pin(async move {
            let subscribers = inner
                .subscribers(&channel)
                .await
                .map_err(|e| unavailable(&e))?;
            Ok(subscribers > 0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_have_a_version_and_a_type() {
        let text = serde_json::to_string(&Envelope {
            v: VERSION,
            message: Message::Ack {
                corr: "c".into(),
                taken: true,
            },
        })
        .unwrap();
        assert_eq!(text, r#"{"v":1,"t":"ack","corr":"c","taken":true}"#);
        let cancel: Envelope =
            serde_json::from_str(r#"{"v":1,"t":"cancel","from":"a","session":"s","id":7}"#)
                .unwrap();
        assert!(matches!(
            cancel.message,
            Message::Cancel { ref id, .. } if *id == RequestId::from(7)
        ));
        assert!(serde_json::from_str::<Envelope>(r#"{"v":1,"t":"other"}"#).is_err());
    }
}
