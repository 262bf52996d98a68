//! The installed base: MCP 2025-11-25, 2025-06-18 and 2025-03-26 (stateful Streamable HTTP:
//! `initialize`, `Mcp-Session-Id`) and 2024-11-05 (HTTP+SSE), behind the same [`Client`] API.
//!
//! * [`adapter`]: the one translation between 2026-07-28 and a negotiated earlier version:
//!   the `initialize` handshake, each outgoing request, the method names of the earlier
//!   revisions;
//! * [`era`]: which revision a server speaks, the per-endpoint memory of it and the fallback
//!   decision (the 2026-07-28 Streamable HTTP page, "Backward Compatibility"; REQUIREMENTS A14);
//! * [`session`]: one stateful session: `initialize`, the session headers, the standalone GET
//!   stream, server-to-client requests answered by the [`InputHandler`](crate::InputHandler),
//!   `DELETE` on close;
//! * [`info`]: the [`Era`], the [`SessionInfo`] of `initialize`, the configuration every
//!   older-era connection is made with;
//! * [`shared`]: what a session's streams share (the session headers, POSTs, the GET);
//! * [`stream`]: one request's response (JSON or SSE, resumed with `Last-Event-ID`);
//! * [`listen`]: `subscriptions/listen` mapped onto a session's change notifications and
//!   `resources/subscribe` (HTTP or stdio);
//! * [`answer`]: server-to-client requests answered with the
//!   [`InputHandler`](crate::InputHandler);
//! * [`link`]: what a listen stream needs of the session under it (HTTP or stdio);
//! * [`sse`]: the 2024-11-05 HTTP+SSE transport (`endpoint` event, responses on the stream).
//!
//! [`Client`]: crate::Client

pub(crate) mod adapter;
mod answer;
pub(crate) mod era;
mod info;
pub(crate) mod link;
pub(crate) mod listen;
pub(crate) mod session;
mod shared;
pub(crate) mod sse;
pub(crate) mod stream;

pub(crate) use adapter::SUPPORTED_VERSIONS;
pub(crate) use answer::answer;
pub(crate) use info::LegacyConfig;
pub use info::{Era, SessionInfo};
