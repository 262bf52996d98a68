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
//! | [`local_only`], [`is_local_only`] | publishing to this process's listeners only |
//!
//! # Writing another implementation
//!
//! A networked bus keeps one [`Fanout`] per process: [`ChangeBus::subscribe`] delegates to
//! [`Fanout::subscribe`], [`ChangeBus::publish`] hands the change to a background task that
//! sends it to the network (it must not block the caller), and the task that receives changes
//! from the network calls [`Fanout::deliver`]. Buffer bounds and slow-subscriber handling then
//! behave exactly as in-process.

mod bus;
mod change;
mod error;
mod fanout;
mod in_process;
mod local;

pub use bus::ChangeBus;
pub use change::{Change, Interest, TopicNotification, uri_covers};
pub use error::BusError;
pub use fanout::{Fanout, Subscription};
pub use in_process::InProcessBus;
pub use local::{is_local_only, local_only};
