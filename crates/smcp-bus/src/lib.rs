//! The change bus: how a change made on one server instance reaches every
//! `subscriptions/listen` stream (`basic/patterns/subscriptions.mdx`).
//!
//! A change (a tool added, a resource updated) is *published* to a [`ChangeBus`]; each open
//! listen stream holds a [`Subscription`] to the bus and renders what it receives. The server
//! never writes to listen streams from the code path that made the change, so replacing the
//! in-process bus by a networked one (Redis pub/sub, a later issue) changes which instances a
//! change reaches, and nothing else.
//!
//! # Layout
//!
//! | item | responsibility |
//! |---|---|
//! | [`Change`], [`Interest`], [`TopicNotification`], [`uri_covers`] | what changed, and who wants it |
//! | [`ChangeBus`] | the trait: publish, subscribe |
//! | [`Fanout`], [`Subscription`] | local delivery with bounded per-subscriber buffers, shared by every implementation |
//! | [`InProcessBus`] | the default bus: one process, one [`Fanout`] |
//!
//! # Writing another implementation
//!
//! A networked bus keeps one [`Fanout`] per process: [`ChangeBus::subscribe`] delegates to
//! [`Fanout::subscribe`], [`ChangeBus::publish`] hands the change to a background task that
//! sends it to the network (it must not block the caller), and the task that receives changes
//! from the network calls [`Fanout::deliver`]. Buffer bounds and slow-subscriber handling then
//! behave exactly as in-process.

mod change;
mod fanout;

use std::fmt;

pub use change::{Change, Interest, TopicNotification, uri_covers};
pub use fanout::{Fanout, Subscription};

/// Why the bus refused an operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BusError {
    /// The bus was closed; nothing more is delivered.
    #[error("the change bus is closed")]
    Closed,
    /// A networked bus could not reach its backend.
    #[error("the change bus is unavailable: {0}")]
    Unavailable(String),
}

/// Carries change events from whoever makes a change to every listen stream of every server
/// instance sharing the bus.
///
/// Object safe and cheap to share (`Arc<dyn ChangeBus>`). `publish` is synchronous and must
/// never block or wait for subscribers: a slow listener must not slow down the request that
/// changed something. Delivery is at most once per subscriber; a subscriber whose buffer
/// overflows is closed (see [`Subscription::is_overflowed`]).
pub trait ChangeBus: Send + Sync + fmt::Debug + 'static {
    /// Publishes `change` to every current subscriber that is interested in it.
    fn publish(&self, change: Change) -> Result<(), BusError>;

    /// A new subscriber receiving the changes `interest` selects, buffering at most
    /// `capacity` undelivered `resources/updated` URIs (list-changed events coalesce and never
    /// count against it).
    fn subscribe(&self, interest: Interest, capacity: usize) -> Result<Subscription, BusError>;
}

/// The default bus: delivers within this process only.
#[derive(Debug, Default, Clone)]
pub struct InProcessBus {
    fanout: Fanout,
}

impl InProcessBus {
    /// A bus with no subscribers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Subscribers currently attached.
    pub fn subscribers(&self) -> usize {
        self.fanout.subscribers()
    }

    /// Ends every subscription (each sees the end of its stream, not an overflow) and
    /// refuses new ones.
    pub fn close(&self) {
        self.fanout.close();
    }
}

impl ChangeBus for InProcessBus {
    fn publish(&self, change: Change) -> Result<(), BusError> {
        if self.fanout.is_closed() {
            return Err(BusError::Closed);
        }
        self.fanout.deliver(&change);
        Ok(())
    }

    fn subscribe(&self, interest: Interest, capacity: usize) -> Result<Subscription, BusError> {
        self.fanout.subscribe(interest, capacity)
    }
}
