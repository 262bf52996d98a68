//! The stateful revisions (2025-11-25, 2025-06-18, 2025-03-26) on the same core, without any
//! transport in it: version negotiation, the `InitializeResult` (built from what
//! `server/discover` advertises), the session record and its store, the session's log level
//! and resource subscriptions, and a request of a session served through the same dispatch as
//! a 2026-07-28 one; a handler that asks for input gets its answers from server-to-client
//! requests (`rounds.rs`). Feature `legacy`.
//!
//! | module | responsibility |
//! |---|---|
//! | [`store`](SessionStore) | the serializable [`SessionRecord`], [`SessionStore`], [`MemorySessionStore`] |
//! | `config` | the revisions served, [`LegacyConfig`], and `Legacy`: a server's sessions (store and live state) |
//! | `live` | what only this instance has of a session: streams, event log, pending requests |
//! | [`relay`](SessionRelay) | the seam for live traffic that must reach the instance holding it: [`SessionRelay`], [`LocalRelay`] |
//! | `inbox` | what a relay brings to this instance, handed to the sessions it holds |
//! | `resume` | a stream resumed with `Last-Event-ID` on an instance that did not write it, from the shared log |
//! | `session` | `initialize`, the session's own methods, notifications and responses |
//! | `changes` | the change notifications a session receives, from the change bus |
//! | `request` | a session's request read once: its typed params, and the `_meta` the session gives it |
//! | `rounds` | one request served, its `input_required` rounds turned into server-to-client requests |

mod changes;
mod config;
mod inbox;
mod live;
mod relay;
mod request;
mod resume;
mod rounds;
mod session;
mod store;

pub(crate) use changes::{follow, subscribe};
pub use config::{LEGACY_VERSIONS, LegacyConfig};
pub(crate) use config::{Legacy, negotiate};
pub(crate) use inbox::start;
pub(crate) use live::{Live, parse_event_id};
pub use relay::{
    LocalRelay, LoggedEvent, MAX_TAG, RelayError, RelayInbox, RelayedAnswer, SessionRelay,
    StreamKey, StreamKind, Tail, valid_tag,
};
#[cfg(feature = "stdio")]
pub(crate) use request::SessionMeta;
pub(crate) use request::SessionRequest;
pub(crate) use resume::{Resumption, follow_elsewhere, resume_elsewhere};
pub(crate) use rounds::Exchange;
pub(crate) use session::{Refusal, RefusalKind};
#[cfg(feature = "stdio")]
pub(crate) use session::{initialize_result, new_record, session_method};
pub use store::{MemorySessionStore, SessionError, SessionRecord, SessionStore};
