//! The protocol core: what a server offers and how a request is served, with no HTTP in it.
//!
//! A transport (the Streamable HTTP layer in [`crate::http`], or stdio and any other byte
//! stream in `stdio/`, feature `stdio`) reads a request, checks what only it can check
//! (headers, media types), builds a
//! [`RequestContext`](context::RequestContext) and hands the typed request to dispatch; it
//! gets back a typed [`Reply`](reply::Reply), an error, a running handler, or a listen stream
//! to open, and writes the answer in its own framing with the one response writer
//! (`reply.rs`). Nothing here imports the HTTP layer.
//!
//! | module | responsibility |
//! |---|---|
//! | `builder`, `server`, `catalog`, `runtime` | building the server, its catalog snapshot, runtime changes |
//! | [`tools`], `typed` (feature `schemars`), [`resources`], [`prompts`], [`completion`], [`handler`] | what an application registers, and what its handlers receive and return |
//! | `dispatch` | routing every method, and the per-method rules |
//! | `era` | which revisions a request belongs to (2026-07-28, or a session of the earlier ones), for every transport |
//! | [`access`] | what a request's credentials allow (scopes), checked before any handler |
//! | [`ratelimit`] | rate limits per principal and per tool: token buckets behind the `RateLimiter` trait, decided before dispatch |
//! | [`context`] | the per-request context: progress, logging, cancellation, capabilities, principal |
//! | [`mrtr`] | multi round-trip requests: `ask`, sealed `requestState`, replay guard |
//! | [`extension`] | the seam extensions plug into (SEP-2631 files is one) |
//! | [`keys`] | the one key ring and the one clock |
//! | `listen` | `subscriptions/listen`, the protocol side |
//! | [`legacy`] | the stateful revisions (2025-11-25 and before): sessions, `initialize`, server-to-client requests (feature `legacy`) |
//! | [`reply`] | typed replies and the response writer, for 2026-07-28 and for the earlier revisions (`omit`: a result without the 2026-only members) |
//! | [`trace`] | W3C trace context from `_meta` or the transport's headers |
//! | [`metrics`], [`health`] | the metrics seam (a plain trait, a no-op when off) and readiness checks |

pub mod access;
pub(crate) mod builder;
pub(crate) mod catalog;
pub mod completion;
pub mod context;
pub(crate) mod dispatch;
pub(crate) mod era;
pub mod error;
pub mod extension;
mod future;
pub mod handler;
pub mod health;
pub mod keys;
#[cfg(feature = "legacy")]
pub mod legacy;
pub(crate) mod listen;
pub(crate) mod meta;
pub mod metrics;
pub mod mrtr;
pub(crate) mod notification;
#[cfg(feature = "legacy")]
mod omit;
pub(crate) mod pagination;
pub mod prompts;
pub mod ratelimit;
pub mod reply;
pub mod resources;
mod runtime;
pub(crate) mod schema;
pub(crate) mod server;
pub mod tools;
pub mod trace;
#[cfg(feature = "schemars")]
pub mod typed;
mod typemap;
pub(crate) mod uri_template;
mod versions;
