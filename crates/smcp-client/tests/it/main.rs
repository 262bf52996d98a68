//! The integration tests of smcp-client, one test binary: each former `tests/*.rs` is a
//! module here (cargo builds and links one binary per crate instead of one per file).
//! The helpers several modules use are shared modules, declared once below.

// Shared helpers.
mod common;

// The tests.
mod extensions;
mod fallback;
mod files;
mod files_address_policy;
mod future_sizes;
mod misbehaving;
mod oauth;
mod param_headers;
mod python_interop;
mod python_interop_2025;
mod retry;
mod round;
mod smcpd;
mod stdio;
mod tasks;
mod trace;
mod typed;
mod wire;
