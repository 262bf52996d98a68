//! The stateful revisions (2025-11-25, 2025-06-18, 2025-03-26) over Streamable HTTP, on the
//! same endpoint as 2026-07-28 (feature `legacy`). The protocol is in `core/legacy/`; this
//! module is its HTTP: the `Mcp-Session-Id` header, which era a request belongs to, POST
//! routing, the standalone GET stream, DELETE, SSE event ids and `Last-Event-ID`.
//!
//! Which era a request belongs to, decided on its headers (and for `initialize` its method) by
//! `core/era.rs`:
//!
//! | request | era |
//! |---|---|
//! | `MCP-Protocol-Version: 2026-07-28` | 2026-07-28, exactly as without this module (an `Mcp-Session-Id` is ignored) |
//! | `initialize` without `MCP-Protocol-Version`, or with an earlier version | legacy: a new session |
//! | `Mcp-Session-Id`, no `MCP-Protocol-Version` or an earlier one | legacy: that session (404 when unknown or ended) |
//! | an earlier `MCP-Protocol-Version` without `Mcp-Session-Id` | legacy: 400, the session is required (with a 2026-07-28 `_meta`: a 2026-07-28 request, −32020) |
//! | GET or DELETE with `Mcp-Session-Id` | legacy: the standalone stream, the end of the session |
//! | GET or DELETE without it | 405, as before |
//!
//! Refusals: no session 400/−32600; unknown or ended session 404/−32600; `initialize` on a
//! session, a request other than `ping` before `notifications/initialized`, a header version
//! other than the session's, a JSON-RPC batch, a response for an id the server never sent:
//! 400/−32600; 2026-07-28 `_meta` on a session request 400/−32602; the session bound reached
//! 503/`SERVER_BUSY`; a second standalone stream 409/−32600.

mod post;
mod stream;
mod wire;

pub(crate) use post::post;
pub(crate) use stream::get_or_delete;
pub(crate) use wire::{claims, claims_other, head, legacy_request};
