//! Black-box conformance suite for **SEP-2631 "File Objects and Transfer"** on MCP 2026-07-28.
//!
//! Two legs, shaped like the official `@modelcontextprotocol/conformance` suite:
//!
//! * [`server_leg`]: drives any server URL exposing the fixture tools (see the crate README) over
//!   raw HTTP and checks its SEP-2631 behaviour.
//! * [`client_leg`]: runs a mock server plus mock upload/download endpoints, starts the client
//!   under test with `SEP2631_SCENARIO` and the URL as last argument, and checks what the client
//!   did on the wire.
//!
//! Output: `DIR/<scenario>/checks.json`, `DIR/summary.json`, scored against an expected-failures
//! file ([`report`]). Every check cites the SEP sentence it tests ([`sep`]).
//!
//! # Layout
//!
//! | module | what |
//! |---|---|
//! | [`report`] | `checks.json` rows, summary, baseline, exit code |
//! | [`sep`] | the cited SEP sentences |
//! | [`files`] | digests, `data:` URIs, `accept`, multipart codec |
//! | [`wire`] | raw MCP requests and data-plane transfers |
//! | [`server_leg`] | the server scenarios |
//! | [`client_leg`] | the mock server and the client scenarios |

pub mod client_leg;
pub mod files;
pub mod report;
pub mod sep;
pub mod server_leg;
mod spec_reference;
pub mod wire;
