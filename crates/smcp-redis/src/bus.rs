//! [`RedisBus`]: the change bus over Redis pub/sub.
//!
//! Each process subscribes to one channel (`<prefix>changes`) on its own connection and
//! fans what arrives out to its local listen streams through a [`Fanout`], exactly as the
//! in-process bus does. [`ChangeBus::publish`] delivers locally at once and queues the
//! change for a background task that `PUBLISH`es it; an instance skips its own messages
//! when they come back.
//!
//! The same subscriber connection carries the session relay's channels
//! (`<prefix>relay`, to every instance, and `<prefix>relay:<instance id>`, to this one): what
//! arrives on them goes to the [`crate::RedisSessionRelay`] attached, if any. An instance is
//! reachable there exactly while its subscriber connection is up. It carries a third,
//! `<prefix>peer:<instance id>`: messages another component sends this instance
//! ([`RedisBus::send_to_peer`], received by the handler of [`RedisBus::on_peer_message`]).
//!
//! # Delivery
//!
//! At most once. Redis pub/sub keeps nothing for a subscriber that is not connected, so a
//! change published while an instance's subscriber connection is down never reaches that
//! instance. Listen streams stay open through such a gap; when the subscriber is back, the
//! instance tells every local listener that changes may have been missed
//! ([`Fanout::deliver_missed`]: each list-changed kind it asked for and a
//! `resources/updated` for each URI it watches — notifications the spec defines as "read it
//! again", so a spurious one is harmless). A change this instance could not publish (its
//! queue of [`OUTBOX`] overflowed while Redis was away) is followed, once Redis is back, by a
//! message telling every instance to do the same.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use futures_util::StreamExt as _;
use smcp_bus::{BusError, Change, ChangeBus, Fanout, Interest, Subscription};
use tokio::sync::mpsc;

use crate::wire::{self, CatalogRevision, Envelope, WireChange};
use crate::{Redis, RedisError};

/// Changes queued for publishing at most; past it, changes are dropped and the instances
/// are told that some may have been missed.
pub const OUTBOX: usize = 4096;

/// [`smcp_bus::local_only`], re-exported here where it was first defined: the shared catalog
/// applies a revision inside it (each instance applies the revision itself and notifies its
/// own listeners, so nothing is published twice).
pub use smcp_bus::local_only;

/// What an observer of the bus sees: for a readiness check or metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BusStatus {
    /// The subscriber connection is up.
    pub connected: bool,
    /// Times the subscriber connection was (re)established.
    pub connections: u64,
    /// Changes dropped because the publish queue was full.
    pub dropped: u64,
    /// Messages received from other instances and delivered.
    pub received: u64,
}

/// Receives the shared catalog's revisions (the [`crate::SharedCatalog`] attached to this bus).
pub(crate) trait RevisionSink: Send + Sync + 'static {
    /// A revision arrived on the channel.
    fn revision(&self, rev: CatalogRevision);
    /// Reads the stored revision and applies it if it is newer (after a gap, and
    /// periodically).
    fn refresh(&self) -> futures_util::future::BoxFuture<'static, ()>;
}

/// Receives what arrives on the relay's channels (the [`crate::RedisSessionRelay`] attached).
pub(crate) trait RelaySink: Send + Sync + 'static {
    /// A message on the channel to every instance (`direct: false`) or to this one.
    fn message(&self, direct: bool, payload: &[u8]);
}

type LagObserver = Arc<dyn Fn(Duration) + Send + Sync>;

/// The receiver of messages sent to this instance ([`RedisBus::on_peer_message`]).
type PeerHandler = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// A [`ChangeBus`] shared by every instance connected to the same Redis and key prefix.
/// Cheap to clone; clones share the connection and the local subscribers.
#[derive(Clone)]
pub struct RedisBus {
    inner: Arc<Inner>,
}

struct Inner {
    redis: Redis,
    channel: String,
    fanout: Fanout,
    outbox: mpsc::Sender<String>,
    overflowed: AtomicBool,
    connected: AtomicBool,
    connections: AtomicU64,
    dropped: AtomicU64,
    received: AtomicU64,
    closed: AtomicBool,
    lag: Mutex<Option<LagObserver>>,
    catalog: OnceLock<Arc<dyn RevisionSink>>,
    relay: OnceLock<Arc<dyn RelaySink>>,
    /// The relay's channels: to every instance, to this one.
    relay_channels: (String, String),
    /// Messages to this instance ([`RedisBus::on_peer_message`]), and their channel.
    peer: OnceLock<PeerHandler>,
    peer_channel: String,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl fmt::Debug for RedisBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisBus")
            .field("channel", &self.inner.channel)
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

impl RedisBus {
    /// Starts the bus on `redis`: spawns the subscriber and the publisher tasks on the
    /// current Tokio runtime. Returns at once; the subscriber connects (and reconnects, with
    /// backoff) in the background.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime.
    pub fn start(redis: &Redis) -> Self {
        let (tx, rx) = mpsc::channel(OUTBOX);
        let bus = Self {
            inner: Arc::new(Inner {
                redis: redis.clone(),
                channel: redis.key("changes"),
                fanout: Fanout::new(),
                outbox: tx,
                overflowed: AtomicBool::new(false),
                connected: AtomicBool::new(false),
                connections: AtomicU64::new(0),
                dropped: AtomicU64::new(0),
                received: AtomicU64::new(0),
                closed: AtomicBool::new(false),
                lag: Mutex::new(None),
                catalog: OnceLock::new(),
                relay: OnceLock::new(),
                relay_channels: (redis.key("relay"), relay_channel(redis, redis.instance())),
                peer: OnceLock::new(),
                peer_channel: peer_channel(redis, redis.instance()),
                tasks: Mutex::new(Vec::new()),
            }),
        };
        let weak = Arc::downgrade(&bus.inner);
        let subscriber = tokio::spawn(subscribe_loop(weak.clone()));
        let publisher = tokio::spawn(publish_loop(weak, rx));
        bus.tasks().extend([subscriber, publisher]);
        bus
    }

    /// Calls `observe` with the lag of every message received from another instance (its
    /// publisher's clock to this one's: clocks must be synchronized for the figure to mean
    /// anything). For a metrics histogram.
    pub fn on_lag(&self, observe: impl Fn(Duration) + Send + Sync + 'static) {
        *self
            .inner
            .lag
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(observe));
    }

    /// The connection state and counters.
    pub fn status(&self) -> BusStatus {
        let i = &self.inner;
        BusStatus {
            connected: i.connected.load(Ordering::Acquire),
            connections: i.connections.load(Ordering::Relaxed),
            dropped: i.dropped.load(Ordering::Relaxed),
            received: i.received.load(Ordering::Relaxed),
        }
    }

    /// Local listen streams attached.
    pub fn subscribers(&self) -> usize {
        self.inner.fanout.subscribers()
    }

    /// The Redis handle the bus uses.
    pub fn redis(&self) -> &Redis {
        &self.inner.redis
    }

    /// Hands every message another instance sends this one ([`Self::send_to_peer`]) to
    /// `handler`, on the subscriber's task (so it must not block). Once: `false` when a
    /// handler is set already. At most once, like everything on the bus: a message sent
    /// while this instance's subscriber is reconnecting is lost.
    pub fn on_peer_message(&self, handler: impl Fn(&[u8]) + Send + Sync + 'static) -> bool {
        self.inner.peer.set(Arc::new(handler)).is_ok()
    }

    /// Sends `payload` to the instance whose id is `instance` ([`Redis::instance`]); whether
    /// it was there to receive it (its subscriber connection up).
    ///
    /// # Errors
    ///
    /// Redis failed, or did not answer within its timeout.
    pub async fn send_to_peer(&self, instance: &str, payload: &[u8]) -> Result<bool, RedisError> {
        let redis = &self.inner.redis;
        let mut conn = redis.conn();
        let received = redis
            .bounded(
                redis::cmd("PUBLISH")
                    .arg(peer_channel(redis, instance))
                    .arg(payload)
                    .query_async::<i64>(&mut conn),
            )
            .await?;
        Ok(received > 0)
    }

    /// Stops the background tasks and ends every local subscription.
    pub fn close(&self) {
        self.inner.closed.store(true, Ordering::Release);
        self.inner.fanout.close();
        for task in self.tasks().drain(..) {
            task.abort();
        }
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, Vec<tokio::task::JoinHandle<()>>> {
        self.inner
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Attaches the shared catalog (once).
    pub(crate) fn set_catalog(&self, sink: Arc<dyn RevisionSink>) -> bool {
        self.inner.catalog.set(sink).is_ok()
    }

    /// Attaches the session relay (once).
    #[cfg(feature = "legacy")]
    pub(crate) fn set_relay(&self, sink: Arc<dyn RelaySink>) -> bool {
        self.inner.relay.set(sink).is_ok()
    }

    /// The relay's channel to every instance.
    #[cfg(feature = "legacy")]
    pub(crate) fn relay_broadcast(&self) -> &str {
        &self.inner.relay_channels.0
    }

    /// Queues a catalog revision for every other instance.
    pub(crate) fn publish_revision(&self, rev: CatalogRevision) {
        self.inner.enqueue(&Envelope {
            v: wire::VERSION,
            from: self.inner.redis.instance().to_owned(),
            at: wire::now_ms(),
            change: None,
            missed: false,
            catalog: Some(rev),
        });
    }
}

impl Inner {
    fn enqueue(&self, envelope: &Envelope) {
        let text = match serde_json::to_string(envelope) {
            Ok(text) => text,
            Err(e) => {
                tracing::error!(error = %e, "change bus: could not encode a change");
                return;
            }
        };
        if self.outbox.try_send(text).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            if !self.overflowed.swap(true, Ordering::AcqRel) {
                tracing::warn!(
                    queued = OUTBOX,
                    "change bus: publish queue full (Redis unreachable?); changes are dropped \
                     and every instance will be told some may have been missed"
                );
            }
        }
    }

    fn handle(&self, payload: &[u8]) {
        let envelope: Envelope = match serde_json::from_slice(payload) {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!(error = %e, "change bus: skipped a message that is not a change");
                return;
            }
        };
        if envelope.v != wire::VERSION {
            tracing::warn!(
                version = envelope.v,
                "change bus: skipped a message of another version"
            );
            return;
        }
        if envelope.from == self.redis.instance() {
            return;
        }
        self.received.fetch_add(1, Ordering::Relaxed);
        if let Some(observe) = self
            .lag
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        {
            let lag = wire::now_ms().saturating_sub(envelope.at);
            observe(Duration::from_millis(lag));
        }
        if let Some(rev) = envelope.catalog {
            match self.catalog.get() {
                Some(sink) => sink.revision(rev),
                None => tracing::debug!("change bus: catalog revision with no shared catalog"),
            }
        }
        if envelope.missed {
            let told = self.fanout.deliver_missed();
            tracing::info!(
                listeners = told,
                "change bus: another instance dropped changes; listeners told to re-read"
            );
        }
        if let Some(change) = envelope.change.and_then(WireChange::into_change) {
            self.fanout.deliver(&change);
        }
    }
}

impl ChangeBus for RedisBus {
    fn publish(&self, change: Change) -> Result<(), BusError> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(BusError::Closed);
        }
        self.inner.fanout.deliver(&change);
        if smcp_bus::is_local_only() {
            return Ok(());
        }
        self.inner.enqueue(&Envelope {
            v: wire::VERSION,
            from: self.inner.redis.instance().to_owned(),
            at: wire::now_ms(),
            change: Some(WireChange::from(&change)),
            missed: false,
            catalog: None,
        });
        Ok(())
    }

    fn subscribe(&self, interest: Interest, capacity: usize) -> Result<Subscription, BusError> {
        self.inner.fanout.subscribe(interest, capacity)
    }
}

/// The channel of messages to instance `instance`.
fn peer_channel(redis: &Redis, instance: &str) -> String {
    redis.key(&format!("peer:{instance}"))
}

/// The relay's channel to instance `instance`.
pub(crate) fn relay_channel(redis: &Redis, instance: &str) -> String {
    redis.key(&format!("relay:{instance}"))
}

/// Delay before reconnection attempt `n` (0-based): doubling from the first, capped.
fn backoff(n: u32, (first, max): (Duration, Duration)) -> Duration {
    first.saturating_mul(1 << n.min(16)).min(max)
}

async fn subscribe_loop(weak: std::sync::Weak<Inner>) {
    let mut failures: u32 = 0;
    let mut gap = false;
    loop {
        let Some(inner) = weak.upgrade() else { return };
        if inner.closed.load(Ordering::Acquire) {
            return;
        }
        let redis = inner.redis.clone();
        let connected = redis
            .bounded(async {
                let mut pubsub = redis.inner.client.get_async_pubsub().await?;
                let (all, direct) = &inner.relay_channels;
                pubsub
                    .subscribe(&[&inner.channel, all, direct, &inner.peer_channel])
                    .await?;
                Ok(pubsub.split())
            })
            .await;
        let (mut sink, mut stream) = match connected {
            Ok(pair) => pair,
            Err(e) => {
                if failures == 0 {
                    tracing::warn!(error = %e, "change bus: cannot subscribe; retrying");
                }
                gap = true;
                let delay = backoff(failures, redis.inner.backoff);
                failures = failures.saturating_add(1);
                drop(inner);
                tokio::time::sleep(delay).await;
                continue;
            }
        };
        failures = 0;
        inner.connected.store(true, Ordering::Release);
        inner.connections.fetch_add(1, Ordering::Relaxed);
        if gap {
            // Changes may have gone by while we were away: the catalog first (so a listener
            // that re-reads sees the new one), then every local listener.
            if let Some(sink) = inner.catalog.get() {
                sink.refresh().await;
            }
            let told = inner.fanout.deliver_missed();
            tracing::info!(
                listeners = told,
                "change bus: subscribed again; listeners told changes may have been missed"
            );
        } else {
            tracing::info!(channel = %inner.channel, "change bus: subscribed");
        }
        drop(inner);
        let mut ping = tokio::time::interval(redis.inner.ping_every);
        ping.tick().await;
        loop {
            tokio::select! {
                msg = stream.next() => {
                    let Some(msg) = msg else { break };
                    let Some(inner) = weak.upgrade() else { return };
                    let channel = msg.get_channel_name();
                    if channel == inner.channel {
                        inner.handle(msg.get_payload_bytes());
                    } else if channel == inner.peer_channel {
                        if let Some(peer) = inner.peer.get() {
                            peer(msg.get_payload_bytes());
                        }
                    } else if let Some(relay) = inner.relay.get() {
                        relay.message(channel != inner.relay_channels.0, msg.get_payload_bytes());
                    }
                }
                _ = ping.tick() => {
                    // On a subscribed RESP2 connection PING is answered `["pong", ""]`, not
                    // `PONG`: any answer in time means the connection is alive.
                    let alive = tokio::time::timeout(
                        redis.inner.timeout,
                        sink.ping::<redis::Value>(),
                    )
                    .await;
                    if !matches!(alive, Ok(Ok(_))) {
                        break;
                    }
                    let Some(inner) = weak.upgrade() else { return };
                    if let Some(sink) = inner.catalog.get() {
                        sink.refresh().await;
                    }
                }
            }
        }
        let Some(inner) = weak.upgrade() else { return };
        inner.connected.store(false, Ordering::Release);
        tracing::warn!("change bus: subscriber connection lost; reconnecting");
        gap = true;
    }
}

async fn publish_loop(weak: std::sync::Weak<Inner>, mut rx: mpsc::Receiver<String>) {
    while let Some(text) = rx.recv().await {
        let mut failures: u32 = 0;
        loop {
            let Some(inner) = weak.upgrade() else { return };
            if inner.closed.load(Ordering::Acquire) {
                return;
            }
            let redis = inner.redis.clone();
            let missed = inner.overflowed.load(Ordering::Acquire).then(|| Envelope {
                v: wire::VERSION,
                from: redis.instance().to_owned(),
                at: wire::now_ms(),
                change: None,
                missed: true,
                catalog: None,
            });
            let channel = inner.channel.clone();
            drop(inner);
            let mut conn = redis.conn();
            let sent = redis
                .bounded(async {
                    let mut pipe = redis::pipe();
                    if let Some(missed) = &missed {
                        let text = serde_json::to_string(missed).unwrap_or_default();
                        pipe.cmd("PUBLISH").arg(&channel).arg(text).ignore();
                    }
                    pipe.cmd("PUBLISH").arg(&channel).arg(&text).ignore();
                    pipe.query_async::<()>(&mut conn).await
                })
                .await;
            match sent {
                Ok(()) => {
                    if missed.is_some()
                        && let Some(inner) = weak.upgrade()
                    {
                        inner.overflowed.store(false, Ordering::Release);
                    }
                    break;
                }
                Err(e) => {
                    if failures == 0 {
                        tracing::warn!(error = %e, "change bus: cannot publish; retrying");
                    }
                    let delay = backoff(failures, redis.inner.backoff);
                    failures = failures.saturating_add(1);
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let b = (Duration::from_millis(50), Duration::from_secs(2));
        assert_eq!(backoff(0, b), Duration::from_millis(50));
        assert_eq!(backoff(1, b), Duration::from_millis(100));
        assert_eq!(backoff(5, b), Duration::from_millis(1600));
        assert_eq!(backoff(6, b), Duration::from_secs(2));
        assert_eq!(backoff(60, b), Duration::from_secs(2));
    }
}
