//! The integration tests of smcp-proto, one test binary: each former `tests/*.rs` is a
//! module here (cargo builds and links one binary per crate instead of one per file).
//! The helpers several modules use are shared modules, declared once below.

// The tests.
mod header_vectors;
mod incoming_examples;
mod schema_examples;
mod sse_codec;
