//! The gateway in process: upstreams served on loopback ports (smcp-server, or an axum fake
//! that misbehaves), the gateway's endpoint called with raw 2026-07-28 requests.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::needless_pass_by_value,
    missing_docs
)]

mod common;
mod exchange;
mod faults;
#[cfg(feature = "files")]
mod files;
mod http2;
mod peers;
#[cfg(feature = "redis")]
mod peers_redis;
mod rounds;
mod subscriptions;
mod tasks;
