//! [`Client`] and [`ClientBuilder`]: the request path shared by every method and by both
//! transports (Streamable HTTP and stdio).
//!
//! One logical call = one or more requests: a version renegotiation after −32022, a tool list
//! refresh after a −32020 caused by `Mcp-Param-*` headers (HTTP only: stdio has no headers),
//! and MRTR rounds each send a new request with a new id. A broken stream is never retried.
//!
//! | module | what |
//! |---|---|
//! | `builder` | [`ClientBuilder`]: the options, and `build` (the transport, the auth gate, the file transfer client) |
//! | `handle` | [`Client`] and its shared state; what it tells about the connection (URL, era, version, capabilities) |
//! | `request` | one request: `_meta`, headers, the send, the −32022 renegotiation and safe resends |
//! | `rounds` | one logical call: the cache, the MRTR rounds, the tool list refresh after −32020, a task reply |
//! | `round` | [`Client::round`]: one round whose `InputRequiredResult` is returned, not answered (for an intermediary) |
//! | `pages` | pagination (`nextCursor`) |
//! | `result` | reading a result: `resultType`, the typed decode, the call timeout |
//! | `cache_snapshot` | [`Client::cache_snapshot`] and [`Client::restore_cache`] |

mod builder;
mod cache_snapshot;
mod handle;
mod pages;
mod request;
mod result;
mod round;
mod rounds;

pub use builder::{ClientBuilder, DEFAULT_MAX_INPUT_ROUNDS, DEFAULT_TIMEOUT};
pub use handle::Client;
pub(crate) use result::{
    Reply, ResultKind, decode, decode_value, object_arg, result_kind, with_timeout, within,
};
pub use round::{Round, RoundOutcome};
