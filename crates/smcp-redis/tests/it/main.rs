//! The integration tests of smcp-redis, one test binary: each former `tests/*.rs` is a
//! module here (cargo builds and links one binary per crate instead of one per file).
//! The helpers several modules use are shared modules, declared once below.

// Shared helpers.
mod support;

// The tests.
mod ratelimit;
mod redis;
mod relay;
#[cfg(feature = "tasks")]
mod tasks;
