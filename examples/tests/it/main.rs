//! The integration tests of the examples and the guide, one test binary: each former `tests/*.rs` is a
//! module here (cargo builds and links one binary per crate instead of one per file).
//! The helpers several modules use are shared modules, declared once below.

// The tests.
mod examples;
mod guide;
mod guide_commands;
