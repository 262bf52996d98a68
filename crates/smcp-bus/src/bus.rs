//! [`ChangeBus`]: the trait every bus implements (publish, subscribe).

use std::fmt;

use crate::change::{Change, Interest};
use crate::error::BusError;
use crate::fanout::Subscription;

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
