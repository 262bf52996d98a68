//! The integration tests of the `smcp` CLI, one test binary: each former `tests/*.rs` is a
//! module here (cargo builds and links one binary per crate instead of one per file).
//! The helpers several modules use are shared modules, declared once below.

// Shared helpers.
#[path = "../../../smcpd/tests/it/support/oidc.rs"]
mod oidc;
mod support;
#[cfg(feature = "inspect")]
mod webdriver;

// The tests.
mod auth;
mod auth_oidc;
mod cli;
mod errors;
#[cfg(feature = "inspect")]
mod inspect;
mod tasks;
