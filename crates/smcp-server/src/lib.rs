//! MCP **2026-07-28** server library for the Streamable HTTP transport.
//!
//! A tool is a name, a JSON Schema and an async function; a [`Server`] is built once from
//! tools, resources, prompts and a completion function, and served as a tower `Service`
//! ([`McpService`]) that mounts into any axum or hyper app at any path, or with [`serve`].
//!
//! ```no_run
//! use serde_json::json;
//! use smcp_proto::server::tools::CallToolResult;
//! use smcp_server::{HandlerError, Server, tool};
//!
//! # async fn run() -> anyhow::Result<()> {
//! let server = Server::builder("demo", "1.0.0")
//!     .tool(
//!         tool("echo")
//!             .description("Returns its input")
//!             .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
//!             .handler(|call| async move {
//!                 let text = call.str_arg("text").unwrap_or_default().to_owned();
//!                 Ok::<_, HandlerError>(CallToolResult::text(text))
//!             }),
//!     )
//!     .build()?;
//! let app = server.router("/mcp");
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! axum::serve(listener, app).await?;
//! # Ok(()) }
//! ```
//!
//! # Layout
//!
//! | module | responsibility |
//! |---|---|
//! | [`server`] | the builder, the catalog, the handler traits of tools/resources/prompts/completion |
//! | [`context`] | the per-request context: progress, logging, cancellation, client capabilities |
//! | [`transport`] | the HTTP endpoint: validation pipeline, JSON/SSE responses, listen streams, accept loop |
//! | `dispatch` | method routing and per-method rules |
//! | [`security`] | Host/Origin allow-lists |
//! | [`config`] | limits, listen streams and caching hints |
//!
//! Runtime changes ([`Server::add_tool`], [`Server::notify_resource_updated`], …) are published
//! on a [`ChangeBus`] (`smcp-bus`); every `subscriptions/listen` stream reads from the bus.
//!
//! Every request is served from the request alone plus the server's catalog: nothing is keyed
//! by connection, so any number of instances can serve any request.

pub mod config;
pub mod context;
mod dispatch;
mod error;
pub mod files;
pub mod mrtr;
mod pagination;
mod schema;
pub mod security;
pub mod server;
pub mod transport;

pub use config::{CacheConfig, CacheHint, CacheScope, Limits, ListenConfig};
pub use context::{LogLevel, NotifyError, RequestContext};
pub use error::BuildError;
pub use files::FileArgs;
pub use security::{Principal, SecurityPolicy};
pub use server::completion::{Completion, CompletionRef, CompletionRequest};
pub use server::handler::HandlerError;
pub use server::prompts::{PromptGet, prompt};
pub use server::resources::{ResourceRead, resource, resource_template};
pub use server::tools::{ToolCall, tool};
pub use server::{Server, ServerBuilder};
pub use smcp_bus::{Change, ChangeBus, InProcessBus};
pub use smcp_files::{self, FileHandle, Files};
pub use transport::{
    ConnectionInfo, Endpoint, EndpointBody, McpBody, McpService, SERVER_BUSY, ServeOptions, serve,
};
