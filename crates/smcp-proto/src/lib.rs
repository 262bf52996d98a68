//! Sans-IO protocol core for MCP revision **2026-07-28** over Streamable HTTP.
//!
//! No tokio, no HTTP: only wire types, the JSON-RPC envelope, error codes and the small codecs
//! every client and server needs. Everything here is deterministic and testable without sockets.
//!
//! # Layout
//!
//! | module | spec page | what |
//! |---|---|---|
//! | [`jsonrpc`] | `basic/index.mdx` | JSON-RPC 2.0 envelope, request ids, error objects |
//! | [`error`] | `basic/index.mdx` §Error Codes | the error codes and their `data` shapes |
//! | [`meta`] | `basic/index.mdx` §_meta | reserved `_meta` keys |
//! | [`header`] | `basic/transports/streamable-http.mdx` §Value Encoding | `Mcp-Name` / `Mcp-Param-*` value codec |
//! | [`x_mcp_header`] | `basic/transports/streamable-http.mdx` §Schema Extension | `x-mcp-header` annotation rules |
//! | [`sse`] | `basic/transports/streamable-http.mdx` §Receiving Messages | SSE event encoder and incremental decoder |

pub mod error;
pub mod header;
pub mod jsonrpc;
pub mod meta;
pub mod sse;
pub mod x_mcp_header;

/// The protocol revision this crate implements.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// The JSON-RPC version string carried by every message.
pub const JSONRPC_VERSION: &str = "2.0";
