//! The integration tests of smcp-server, one test binary: each former `tests/*.rs` is a
//! module here (cargo builds and links one binary per crate instead of one per file).
//! The helpers several modules use are shared modules, declared once below.

// Shared helpers.
mod auth_support;
mod common;

// The tests.
mod apps;
mod auth;
mod auth_declared;
mod auth_dpop;
mod auth_introspection;
mod catalog;
mod extension;
mod legacy;
mod listen;
mod listen_socket;
mod meta_errors;
mod mrtr;
#[cfg(feature = "metrics")]
mod observability;
mod param_headers;
mod parser_agreement;
mod ratelimit;
mod serve_protocols;
mod stdio;
mod stdio_legacy;
mod streaming;
mod trace_context;
mod transport_rejections;
mod typed;
