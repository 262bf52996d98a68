//! What smcp puts under conformance test: the fixtures the conformance suites drive.
//!
//! | item | role |
//! |---|---|
//! | [`server`] | the fixture surface of the official MCP conformance suite (`test_*` tools, `test://` resources, `test_*` prompts), plus the SEP-2631 `files_*` fixtures from `smcpd` |
//! | `src/bin/smcp-conformance-server.rs` | serves [`server`] (`scripts/conformance server`; with `--broken-skip-digest-check`, the deliberately broken server of `scripts/conformance-files broken`) |
//! | `src/bin/smcp-conformance-client.rs` | the client under test of the official suite's client leg (`scripts/conformance client`), on `smcp-client` |
//! | `src/bin/smcp-conformance-files-client.rs` | the client under test of the SEP-2631 suite's client leg (`scripts/conformance-files client`), on `smcp-client`'s file API |
//!
//! The SEP-2631 suite itself is not here: `smcp-conformance-files` is a black-box suite that
//! must run against any implementation, so it depends on nothing of smcp but `smcp-proto`'s
//! wire types. This crate is the other side: smcp's own fixtures, built on the smcp crates.

pub mod server;
