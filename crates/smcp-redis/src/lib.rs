//! Redis-backed shared state for running many smcp server instances behind a load balancer.
//!
//! MCP 2026-07-28 is stateless so that any instance can serve any request. What the
//! instances still share goes through Redis here, each piece behind the server's own seam:
//!
//! | item | seam | what it shares |
//! |---|---|---|
//! | [`RedisBus`] | [`smcp_bus::ChangeBus`] | change notifications: every instance subscribes once and fans out to its own listen streams |
//! | [`RedisReplayGuard`] | [`smcp_server::mrtr::ReplayGuard`] | single-use `requestState` ids (`SET NX PXAT`): one instance wins |
//! | [`RedisRateLimiter`] | [`smcp_server::ratelimit::RateLimiter`] | rate limit buckets (each decision atomic in a script at Redis' clock, decisions batched, slices of fast buckets spent locally, never beyond a limit): a burst is shared by every instance |
//! | [`RedisSessionStore`] (feature `legacy`) | `smcp_server::legacy::SessionStore` | 2025-era session records, so a session's next request may land anywhere |
//! | [`RedisSessionRelay`] (feature `legacy`) | `smcp_server::legacy::SessionRelay` | a 2025-era session's live traffic: responses to server-to-client requests and cancellations relayed to the instance holding the request, every stream's events in a shared capped log for `Last-Event-ID` on any instance |
//! | [`SharedCatalog`] | [`RedisBus`] + the server's runtime catalog changes | the application's catalog state and its revision |
//! | [`RedisTaskStore`] (feature `tasks`) | `smcp_tasks::TaskStore` | SEP-2663 task records, so `tasks/*` is served by any instance, and the leases by which the others end the tasks of an instance that died |
//!
//! # Features
//!
//! | feature | default | what |
//! |---|---|---|
//! | `legacy` | yes | [`RedisSessionStore`] and [`RedisSessionRelay`], the session store and relay of the earlier protocol revisions (turns on `smcp-server/legacy`) |
//! | `tasks` | yes | [`RedisTaskStore`], the shared SEP-2663 task store (adds the `smcp-tasks` dependency) |
//!
//! All of them hold one [`Redis`] handle: one connection for commands (reconnected on
//! failure, every command bounded by a timeout) and, for the bus, one subscriber connection
//! per process. `docs/deploy.md` says what happens to each when Redis is away.
//!
//! # Examples
//!
//! ```no_run
//! use std::sync::Arc;
//! use smcp_redis::{Redis, RedisBus, RedisReplayGuard};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let redis = Redis::builder("redis://127.0.0.1:6379/").key_prefix("smcp:").build()?;
//! let bus = RedisBus::start(&redis);
//! let server = smcp_server::Server::builder("demo", "1.0.0")
//!     .change_bus(Arc::new(bus.clone()))
//!     .replay_guard(RedisReplayGuard::new(&redis))
//!     .build()?;
//! # let _ = server;
//! # Ok(())
//! # }
//! ```

mod bus;
mod catalog;
mod client;
mod ratelimit;
#[cfg(feature = "legacy")]
mod relay;
mod replay;
#[cfg(feature = "legacy")]
mod sessions;
#[cfg(feature = "tasks")]
mod tasks;
mod wire;

pub use bus::{BusStatus, OUTBOX, RedisBus, local_only};
pub use catalog::{CatalogError, SharedCatalog};
pub use client::{DEFAULT_PING_EVERY, DEFAULT_TIMEOUT, Redis, RedisBuilder, RedisError};
pub use ratelimit::{DEFAULT_MAX_PREFETCH, RedisRateLimiter};
#[cfg(feature = "legacy")]
pub use relay::{
    DEFAULT_ACK_TIMEOUT, DEFAULT_LOG_TTL, LOG_PAUSE, RedisSessionRelay, RedisSessionRelayBuilder,
};
pub use replay::RedisReplayGuard;
#[cfg(feature = "legacy")]
pub use sessions::RedisSessionStore;
#[cfg(feature = "tasks")]
pub use tasks::{DEFAULT_TASK_WATCH, RedisTaskStore};
