//! The integration tests of smcp-conformance, one test binary: each former `tests/*.rs` is a
//! module here (cargo builds and links one binary per crate instead of one per file).
//! The helpers several modules use are shared modules, declared once below.

// The tests.
mod files_client_leg;
