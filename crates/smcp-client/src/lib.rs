//! MCP **2026-07-28** client, over Streamable HTTP or stdio, that also speaks the installed
//! base: an HTTP server of MCP 2025-11-25, 2025-06-18 or 2025-03-26 (stateful sessions) or
//! 2024-11-05 (HTTP+SSE) is detected and spoken to in its revision, behind the same API (see
//! [`Era`], [`ClientBuilder::protocol_version`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), smcp_client::Error> {
//! let client = smcp_client::Client::builder("http://127.0.0.1:8931/mcp").build()?;
//! let tools = client.list_tools().await?;
//! let result = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
//!
//! // The same calls against a server launched as a child process (stdio transport).
//! let server = smcp_client::StdioCommand::new("smcpd").arg("--stdio");
//! let client = smcp_client::Client::stdio(server).build()?;
//! let tools = client.list_tools().await?;
//! client.close().await;
//! # Ok(()) }
//! ```
//!
//! # Layout
//!
//! | module | what |
//! |---|---|
//! | `client` | [`Client`], [`ClientBuilder`], the request path: `_meta`, version negotiation, MRTR loop, pagination |
//! | `api` | typed methods (`discover`, `list_tools`, `call_tool`/[`ToolCall`] (tasks followed transparently, or [`ToolCallOutcome`]), resources, prompts, completion) |
//! | `connection` | the connection a client holds: an HTTP endpoint of any era, or a stdio child |
//! | `transport` | the seam below the transports (a response as a stream of messages); `http` (the reqwest POST, the incremental JSON/SSE reader) |
//! | `legacy` | the installed base: era detection and fallback ([`Era`]), stateful 2025-xx sessions ([`SessionInfo`]), 2024-11-05 HTTP+SSE |
//! | `stdio` | [`StdioCommand`]: the child process, the stdout demultiplexer, cancellation, shutdown |
//! | `headers` | `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`; the validated tool catalog |
//! | `mrtr` | [`InputHandler`] (elicitation, sampling, roots; [`FnInputHandler`] from closures, [`InputHandlerError`] when it cannot answer) and the declared capabilities |
//! | `listen` | `subscriptions/listen` as a [`Subscription`] stream (task status included) |
//! | `tasks` | SEP-2663: following a task ([`TaskHandle`], [`TaskPolling`]), `tasks/get`, `tasks/update`, `tasks/cancel` |
//! | `cache` | the optional [`Cache`] (CacheableResult rules) |
//! | `wire` | [`wire::WireTap`]: every HTTP request, response and SSE event, every stdio line, handed to the application (debugging tools) |
//! | `files` | SEP-2631: file arguments, uploads (path, bytes, any `AsyncRead`), verified downloads (to disk or any `AsyncWrite`), [`TransferError`] |
//! | `output` | `structuredContent` checked against the listed `outputSchema` (feature `output-schema`, default) |
//! | `auth` | OAuth 2.1 (feature `oauth`): discovery, registration, PKCE, the browser step ([`auth::Authorizer`]), token stores, step-up |
//! | `error` | the opaque [`Error`]: [`Error::kind`] (an [`ErrorKind`]), a few predicates, the accessors |
//!
//! # Features
//!
//! | feature | default | what |
//! |---|---|---|
//! | `oauth` | yes | `auth` and `ClientBuilder::oauth`: OAuth 2.1 discovery, registration, PKCE, refresh, step-up, token stores; without it only `bearer_token` exists |
//! | `output-schema` | yes | `structuredContent` checked against the tool's `outputSchema` (from `tools/list`) with `jsonschema`; without it results pass unchecked |
//! | `otel` | no | `ClientBuilder::propagate_otel`: trace context from the current `tracing` span's OpenTelemetry context; without it `ClientBuilder::trace_source` takes a plain function |
//! | `fuzzing` | no | thin entry points for the fuzz targets in `fuzz/`; not a stable API |

mod api;
#[cfg(feature = "oauth")]
pub mod auth;
mod cache;
mod client;
mod connection;
mod error;
mod error_kind;
pub mod files;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod headers;
mod legacy;
mod listen;
mod mrtr;
mod output;
mod page;
mod response;
mod retry;
mod stdio;
mod task_polling;
pub mod tasks;
pub mod trace;
mod transport;
pub mod wire;

pub use api::{ToolCall, ToolCallOutcome};
pub use cache::Cache;
pub use client::{
    Client, ClientBuilder, DEFAULT_MAX_INPUT_ROUNDS, DEFAULT_TIMEOUT, Round, RoundOutcome,
};
pub use error::{Error, Result};
pub use error_kind::ErrorKind;
pub use files::{FileTransfer, Progress, TransferError};
pub use futures_util::future::BoxFuture;
pub use legacy::{Era, SessionInfo};
pub use listen::{Subscription, SubscriptionEvent};
#[allow(deprecated)]
pub use mrtr::HandlerError;
pub use mrtr::{FnInputHandler, InputHandler, InputHandlerError, InputKinds};
pub use page::Page;
pub use retry::RetryPolicy;
pub use smcp_proto as proto;
pub use smcp_proto::patterns::subscriptions::SubscriptionFilter;
pub use stdio::{DEFAULT_MAX_LINE_BYTES, DEFAULT_SHUTDOWN_TIMEOUT, ServerStderr, StdioCommand};
pub use tasks::{TaskHandle, TaskPolling};
pub use tokio_util::sync::CancellationToken;
pub use transport::http_client::HttpVersion;

/// What most clients import: `use smcp_client::prelude::*;`.
pub mod prelude {
    pub use crate::api::{ToolCall, ToolCallOutcome};
    pub use crate::client::{Client, ClientBuilder};
    pub use crate::error::{Error, Result};
    pub use crate::error_kind::ErrorKind;
    pub use crate::listen::{Subscription, SubscriptionEvent};
    #[allow(deprecated)]
    pub use crate::mrtr::HandlerError;
    pub use crate::mrtr::{FnInputHandler, InputHandler, InputHandlerError, InputKinds};
    pub use crate::page::Page;
    pub use crate::stdio::StdioCommand;
    pub use smcp_proto::client::elicitation::{ElicitRequestParams, ElicitResult};
    pub use smcp_proto::content::{ContentBlock, ResourceContents};
    pub use smcp_proto::patterns::subscriptions::SubscriptionFilter;
    pub use smcp_proto::server::prompts::GetPromptResult;
    pub use smcp_proto::server::resources::ReadResourceResult;
    pub use smcp_proto::server::tools::{CallToolResult, Tool};
}
