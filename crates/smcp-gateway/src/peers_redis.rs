//! [`RedisPeers`] (feature `redis`): [`Peers`] over the Redis bus the instances share.
//!
//! Each message is JSON on the receiving instance's peer channel
//! ([`RedisBus::send_to_peer`]): `{"v":1,"t":"retry"|"event"|"outcome"|"cancel",…}`. A retry
//! names its sender and a correlation id; the call's events (progress, log lines) and then
//! its outcome go back to the sender under that id, in order; a cancel (the forwarding
//! client went away, or stopped waiting) cancels the call there. A
//! `PUBLISH` no subscriber received means the instance is gone. A message of another
//! version or shape is logged and skipped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use smcp_redis::RedisBus;
use smcp_server::tools::BoxFuture;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::peers::{
    EventSink, ForwardedEvent, ForwardedOutcome, ForwardedRetry, PeerError, PeerHandler, Peers,
};

/// Events of one served retry waiting to be sent back; past it they are dropped.
const EVENT_ROOM: usize = 64;

const VERSION: u8 = 1;

#[derive(Debug, Serialize, Deserialize)]
struct Envelope {
    v: u8,
    #[serde(flatten)]
    message: Message,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "lowercase")]
enum Message {
    Retry {
        from: String,
        corr: String,
        retry: ForwardedRetry,
    },
    Event {
        corr: String,
        event: ForwardedEvent,
    },
    Outcome {
        corr: String,
        outcome: ForwardedOutcome,
    },
    Cancel {
        from: String,
        corr: String,
    },
}

/// [`Peers`] over a [`RedisBus`]: every gateway instance on the same Redis and key prefix
/// reaches the others. Cheap to clone.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use smcp_gateway::{Gateway, GatewayConfig, RedisPeers};
/// use smcp_redis::{Redis, RedisBus};
///
/// let redis = Redis::builder("redis://127.0.0.1:6379/").build()?;
/// let bus = RedisBus::start(&redis);
/// let config = GatewayConfig::load("gateway.toml".as_ref())?;
/// let gateway = Gateway::start_in_cluster(config, Arc::new(RedisPeers::new(&bus))).await?;
/// # let _ = gateway;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisPeers {
    inner: Arc<Inner>,
}

struct Inner {
    bus: RedisBus,
    instance: String,
    handler: OnceLock<PeerHandler>,
    /// Retries sent from here, by correlation id: where their outcome and events go.
    waiting: Mutex<HashMap<String, (oneshot::Sender<ForwardedOutcome>, EventSink)>>,
    /// Retries served here, by sender and correlation id.
    running: Mutex<HashMap<(String, String), CancellationToken>>,
}

impl std::fmt::Debug for RedisPeers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisPeers")
            .field("instance", &self.inner.instance)
            .finish_non_exhaustive()
    }
}

impl RedisPeers {
    /// The peers on `bus`; takes the bus's peer messages ([`RedisBus::on_peer_message`]),
    /// which must not have a handler yet.
    pub fn new(bus: &RedisBus) -> Self {
        let inner = Arc::new(Inner {
            bus: bus.clone(),
            instance: bus.redis().instance().to_owned(),
            handler: OnceLock::new(),
            waiting: Mutex::new(HashMap::new()),
            running: Mutex::new(HashMap::new()),
        });
        let weak: Weak<Inner> = Arc::downgrade(&inner);
        let taken = bus.on_peer_message(move |payload| {
            if let Some(inner) = weak.upgrade() {
                inner.receive(payload);
            }
        });
        if !taken {
            tracing::error!(
                "the bus's peer messages already have a handler; retries forwarded to this instance will not be served"
            );
        }
        Self { inner }
    }
}

impl Inner {
    fn receive(self: &Arc<Self>, payload: &[u8]) {
        let envelope: Envelope = match serde_json::from_slice(payload) {
            Ok(envelope) => envelope,
            Err(e) => {
                tracing::warn!(error = %e, "gateway peer message skipped: not one this version reads");
                return;
            }
        };
        if envelope.v != VERSION {
            tracing::warn!(
                version = envelope.v,
                "gateway peer message of another version skipped"
            );
            return;
        }
        match envelope.message {
            Message::Retry { from, corr, retry } => {
                let Some(handler) = self.handler.get().cloned() else {
                    return;
                };
                let cancel = CancellationToken::new();
                lock(&self.running).insert((from.clone(), corr.clone()), cancel.clone());
                let inner = Arc::clone(self);
                tokio::spawn(async move {
                    // The events go back one at a time, all before the outcome.
                    let (events, mut produced) = tokio::sync::mpsc::channel(EVENT_ROOM);
                    let relay = {
                        let (inner, from, corr) = (Arc::clone(&inner), from.clone(), corr.clone());
                        tokio::spawn(async move {
                            while let Some(event) = produced.recv().await {
                                let corr = corr.clone();
                                let _ = inner.send(&from, Message::Event { corr, event }).await;
                            }
                        })
                    };
                    let outcome = handler(retry, cancel, events).await;
                    let _ = relay.await;
                    lock(&inner.running).remove(&(from.clone(), corr.clone()));
                    let sent = inner.send(&from, Message::Outcome { corr, outcome }).await;
                    if !matches!(sent, Ok(true)) {
                        tracing::warn!(instance = %from, "the outcome of a forwarded retry could not be sent back");
                    }
                });
            }
            Message::Event { corr, event } => {
                if let Some((_, events)) = lock(&self.waiting).get(&corr) {
                    let _ = events.try_send(event);
                }
            }
            Message::Outcome { corr, outcome } => {
                if let Some((waiting, _)) = lock(&self.waiting).remove(&corr) {
                    let _ = waiting.send(outcome);
                }
            }
            Message::Cancel { from, corr } => {
                if let Some(cancel) = lock(&self.running).get(&(from, corr)) {
                    cancel.cancel();
                }
            }
        }
    }

    /// Sends `message` to `instance`; whether it was there.
    async fn send(&self, instance: &str, message: Message) -> Result<bool, PeerError> {
        let payload = serde_json::to_vec(&Envelope {
            v: VERSION,
            message,
        })
        .map_err(|e| PeerError::Link(e.to_string()))?;
        self.bus
            .send_to_peer(instance, &payload)
            .await
            .map_err(|e| PeerError::Link(e.to_string()))
    }
}

impl Peers for RedisPeers {
    fn instance(&self) -> &str {
        &self.inner.instance
    }

    fn serve(&self, handler: PeerHandler) {
        if self.inner.handler.set(handler).is_err() {
            tracing::error!("RedisPeers::serve called twice; the first handler stays");
        }
    }

    fn forward(
        &self,
        instance: &str,
        retry: ForwardedRetry,
        within: Duration,
        cancel: CancellationToken,
        events: EventSink,
    ) -> BoxFuture<Result<ForwardedOutcome, PeerError>> {
        let inner = Arc::clone(&self.inner);
        let instance = instance.to_owned();
        Box::pin(async move {
            let corr = crate::held::random_id();
            let (tx, rx) = oneshot::channel();
            lock(&inner.waiting).insert(corr.clone(), (tx, events));
            let message = Message::Retry {
                from: inner.instance.clone(),
                corr: corr.clone(),
                retry,
            };
            match inner.send(&instance, message).await {
                Ok(true) => {}
                Ok(false) => {
                    lock(&inner.waiting).remove(&corr);
                    return Err(PeerError::Gone);
                }
                Err(e) => {
                    lock(&inner.waiting).remove(&corr);
                    return Err(e);
                }
            }
            let ended = tokio::select! {
                outcome = rx => return outcome.map_err(|_| PeerError::Gone),
                () = tokio::time::sleep(within) => PeerError::Timeout(within),
                () = cancel.cancelled() => PeerError::Cancelled,
            };
            lock(&inner.waiting).remove(&corr);
            let stop = Message::Cancel {
                from: inner.instance.clone(),
                corr,
            };
            let _ = inner.send(&instance, stop).await;
            Err(ended)
        })
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
