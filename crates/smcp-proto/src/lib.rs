//! Sans-IO protocol core for MCP revision **2026-07-28** over Streamable HTTP.
//!
//! No tokio, no HTTP: only wire types, the JSON-RPC envelope, error codes and the small codecs
//! every client and server needs. Everything here is deterministic and testable without sockets.
//!
//! # Layout
//!
//! | module | spec page | what |
//! |---|---|---|
//! | [`jsonrpc`] | `basic/index.mdx` §Messages | the JSON-RPC 2.0 envelope, untyped or typed; a server's typed [`jsonrpc::ClientRequest`] with `_meta` kept raw |
//! | [`messages`] | `schema.ts` | named messages (`CallToolRequest`, …) and method names |
//! | [`error`] | `basic/index.mdx` §Error Codes | the error codes and their `data` shapes |
//! | [`meta`] | `basic/index.mdx` §_meta | reserved `_meta` keys; [`meta::MetaView`] reads a raw `_meta` |
//! | [`header`] | `basic/transports/streamable-http.mdx` §Value Encoding | `Mcp-Name` / `Mcp-Param-*` value codec |
//! | [`x_mcp_header`] | `basic/transports/streamable-http.mdx` §Schema Extension | `x-mcp-header` annotation rules |
//! | [`time`] | RFC 3339 | timestamps (`expiresAt`) to and from Unix seconds |
//! | [`sse`] | `basic/transports/streamable-http.mdx` §Receiving Messages | SSE event encoder and incremental decoder |
//! | [`basic`] | `basic/index.mdx` | `_meta` objects, `ResultType`, `Implementation`, `Icon`, … |
//! | [`capabilities`] | `server/discover.mdx` | `ClientCapabilities`, `ServerCapabilities` |
//! | [`content`] | `server/tools.mdx`, `server/resources.mdx` | `ContentBlock`, `ResourceContents` |
//! | [`server::discover`] | `server/discover.mdx` | `DiscoverResult` |
//! | [`server::tools`] | `server/tools.mdx` | `Tool`, `CallToolRequestParams`, `CallToolResult` |
//! | [`server::resources`] | `server/resources.mdx` | `Resource`, `ReadResourceResult`, … |
//! | [`server::prompts`] | `server/prompts.mdx` | `Prompt`, `GetPromptResult`, … |
//! | [`server::utilities`] | `server/utilities/*.mdx` | caching, completion, logging, pagination |
//! | [`client::elicitation`] | `client/elicitation.mdx` | `ElicitRequestParams`, `ElicitResult` |
//! | [`client::sampling`] | `client/sampling.mdx` | `CreateMessageRequestParams`, … |
//! | [`client::roots`] | `client/roots.mdx` | `Root`, `ListRootsResult` |
//! | [`patterns::mrtr`] | `patterns/mrtr.mdx` | `InputRequiredResult`, `InputRequest`, … |
//! | [`patterns::progress`] | `patterns/progress.mdx` | `ProgressNotificationParams` |
//! | [`patterns::subscriptions`] | `patterns/subscriptions.mdx` | `SubscriptionFilter`, listen |
//! | [`patterns::cancellation`] | `patterns/cancellation.mdx` | `CancelledNotificationParams` |
//!
//! # Features
//!
//! | feature | default | what |
//! |---|---|---|
//! | `fuzzing` | no | thin entry points for the fuzz targets in `fuzz/` (`smcp_proto::fuzzing`); not a stable API |

pub mod basic;
pub mod capabilities;
pub mod client;
pub mod content;
pub mod error;
pub mod ext;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod header;
mod json;
pub mod jsonrpc;
pub mod messages;
pub mod meta;
pub mod patterns;
pub mod server;
pub mod sse;
pub mod time;
pub mod x_mcp_header;

/// The protocol revision this crate implements.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// The JSON-RPC version string carried by every message.
pub const JSONRPC_VERSION: &str = "2.0";
