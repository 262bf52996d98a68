//! The integration tests of smcp-tasks, one test binary: each former `tests/*.rs` is a
//! module here (cargo builds and links one binary per crate instead of one per file).
//! The helpers several modules use are shared modules, declared once below.

// Shared helpers.
mod common;

// The tests.
mod client;
mod instances;
mod notifications;
mod rounds;
mod tasks;
