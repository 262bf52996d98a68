//! The JSON-RPC 2.0 envelope as MCP uses it (`basic/index.mdx` §Messages): one model for
//! every message, untyped or typed.
//!
//! MCP restricts JSON-RPC: ids are strings or integers (never `null`), there are no batches,
//! and every message is one of request, notification, result response or error response.
//!
//! - [`Message`] classifies a body into one of those four shapes and reports *why* it is not
//!   one, so a server can answer with the exact code: [`ParseError::Json`] maps to −32700 and
//!   [`ParseError::Invalid`] to −32600.
//! - [`Request<P>`], [`Notification<P>`] and [`ResultResponse<R>`] carry untyped JSON by
//!   default and typed params or results when given a type ([`crate::messages`] names them).
//! - [`Incoming`] is how a server reads a body: a request goes straight into a typed
//!   [`ClientRequest`], with `_meta` kept raw ([`incoming`]).
//!
//! Ids are kept exactly as sent: a string stays a string and a number keeps its JSON
//! representation (`serde_json::Number`), so echoing an id never changes its type.
//!
//! The envelope types live in leaves (`envelope`, `id`) that this module re-exports: the files
//! of the crate that need them import the leaves, never this module, which names [`incoming`]
//! and through it the typed requests.

pub(crate) mod envelope;
pub(crate) mod id;
pub mod incoming;
mod members;
mod screen;

pub use envelope::{
    ErrorResponse, Message, Notification, ParseError, RawResult, Request, ResultResponse,
    notification,
};
pub use id::RequestId;
pub use incoming::{ClientRequest, Incoming, IncomingRequest, InvalidParams};
pub(crate) use screen::screen;
