//! The integration tests of smcp-files, one test binary: each former `tests/*.rs` is a
//! module here (cargo builds and links one binary per crate instead of one per file).
//! The helpers several modules use are shared modules, declared once below.

// Shared helpers.
#[path = "../../../smcp-server/tests/it/auth_support/mod.rs"]
mod auth_support;
#[path = "../../../smcp-server/tests/it/common/mod.rs"]
mod common;

// The tests.
mod auth;
mod data_plane;
mod extension;
mod hardening;
mod metrics;
mod presign;
