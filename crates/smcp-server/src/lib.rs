//! MCP **2026-07-28** server library: a protocol core and its Streamable HTTP transport.
//!
//! A tool is a name, a JSON Schema and an async function; a [`Server`] is built once from
//! tools, resources, prompts, a completion function and any protocol [`extension`]s, and
//! served over HTTP as a tower `Service` ([`McpService`]) that mounts into any axum or hyper
//! app at any path, or with [`serve`].
//!
//! ```no_run
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use smcp_server::prelude::*;
//!
//! /// Arguments of `weather`: the tool's inputSchema is derived from this type.
//! #[derive(Deserialize, JsonSchema)]
//! struct WeatherArgs {
//!     /// City name.
//!     city: String,
//!     /// Days ahead (0 = today).
//!     #[serde(default)]
//!     days: u8,
//! }
//!
//! /// Its result: the outputSchema is derived from this type, and every result is checked
//! /// against it before it leaves the server.
//! #[derive(Serialize, JsonSchema)]
//! struct Forecast {
//!     city: String,
//!     celsius: f64,
//! }
//!
//! # async fn run() -> anyhow::Result<()> {
//! let server = Server::builder("demo", "1.0.0")
//!     .tool(
//!         tool("weather")
//!             .description("The forecast for a city")
//!             .typed(|call, args: WeatherArgs| async move {
//!                 call.ctx.progress(0.5, Some(1.0), None).await?; // `?` on progress and logs
//!                 Ok(Json(Forecast { city: args.city, celsius: 21.5 }))
//!             }),
//!     )
//!     .tool(
//!         // A schema can still be written by hand.
//!         tool("echo")
//!             .input_schema(serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}}))
//!             .handler(|call| async move {
//!                 Ok(CallToolResult::text(call.str_arg("text").unwrap_or_default()))
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
//! Two layers, one direction: `http` depends on `core`, never the reverse.
//!
//! | module | responsibility |
//! |---|---|
//! | [`core`] | the protocol: catalog, dispatch, request context, MRTR, listen, extensions, keys; no HTTP |
//! | [`http`] | Streamable HTTP: validation pipeline, JSON/SSE responses, listen streams, accept loop, TLS |
//! | `apps` | MCP Apps views and the extension declaring them (feature `apps`) |
//! | `auth` | bearer tokens in front of the endpoint (feature `auth`): verifiers, metadata, challenges, scope policy |
//! | [`config`], [`security`] | plain settings both layers read: limits, listen caps, caching hints, Host/Origin allow-lists |
//!
//! # Features
//!
//! | feature | default | what |
//! |---|---|---|
//! | `tls` | yes | HTTPS in [`serve`] (rustls, aws-lc-rs) and [`http::tls`] |
//! | `stdio` | yes | [`serve_stdio`] and [`serve_stream`]: newline-delimited JSON-RPC |
//! | `schemars` | yes | typed tools, prompts and elicitation: schemas derived from Rust types (`typed`, [`ToolBuilder::typed`]) |
//! | `legacy` | yes | `legacy`: the stateful revisions 2025-11-25, 2025-06-18 and 2025-03-26 (`initialize`, `Mcp-Session-Id` sessions, server-to-client requests) and 2024-11-05 HTTP+SSE on the same endpoint and over stdio |
//! | `apps` | no | `apps`: MCP Apps (SEP-1865) views, linked from tools, and the extension declaring them |
//! | `auth` | no | [`auth`]: the endpoint as an OAuth 2.1 protected resource (JWT or introspection, Protected Resource Metadata, scopes) |
//! | `metrics` | no | `metrics::Prometheus`: requests by method and outcome, latency histograms, listen streams, MRTR rounds, legacy sessions, file bytes, bus lag (without it the recording points cost one branch each) |
//! | `otel` | no | a request's incoming trace context (`_meta` or `traceparent`) becomes the OpenTelemetry parent of its spans (`tracing-opentelemetry`; the application installs the exporter) |
//! | `dev-tls` | no | `http::tls::write_dev_certificates`: a throwaway CA for development and tests |
//! | `fuzzing` | no | thin entry points for the fuzz targets in `fuzz/`; not a stable API |
//!
//! SEP-2631 file transfer is the `smcp-files` crate, an [`extension`] registered with
//! [`ServerBuilder::extension`].
//!
//! Runtime changes ([`Server::add_tool`], [`Server::notify_resource_updated`], …) are published
//! on a [`ChangeBus`] (`smcp-bus`); every `subscriptions/listen` stream reads from the bus.
//! Every request is served from the request alone plus the server's catalog: nothing is keyed
//! by connection, so any number of instances can serve any request.

#[cfg(feature = "apps")]
pub mod apps;
#[cfg(feature = "auth")]
pub mod auth;
pub mod config;
pub mod core;
mod drain;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod http;
#[cfg(feature = "metrics")]
pub mod metrics;
pub mod security;
#[cfg(feature = "stdio")]
pub mod stdio;

pub use crate::core::{
    completion, context, extension, handler, keys, mrtr, prompts, ratelimit, reply, resources,
    tools,
};

pub use crate::core::builder::ServerBuilder;
pub use crate::core::completion::{CompletionHandler, CompletionRequest};
pub use crate::core::context::{Framing, NotifyError, Principal, RequestContext};
pub use crate::core::error::{BuildError, SERVER_BUSY};
pub use crate::core::extension::{
    Extension, Extensions, ListenGrant, MethodSpec, Next, ToolRefused, ToolReply,
};
pub use crate::core::handler::HandlerError;
pub use crate::core::keys::{Clock, Key, KeyError, KeyRing};
#[cfg(feature = "legacy")]
pub use crate::core::legacy;
pub use crate::core::prompts::{PromptBuilder, PromptGet, prompt};
pub use crate::core::resources::{ResourceBuilder, ResourceRead, resource, resource_template};
pub use crate::core::server::{SUPPORTED_VERSIONS, Server};
pub use crate::core::tools::{
    CallTemplate, IntoToolResult, ToolBuilder, ToolCall, ToolHandler, ToolResult, tool,
};
#[cfg(feature = "schemars")]
pub use crate::core::typed;
#[cfg(feature = "schemars")]
pub use crate::core::typed::Json;
pub use crate::core::uri_template::UriTemplate;
pub use config::{CacheConfig, CacheHint, CacheScope, Limits, ListenConfig};
pub use drain::{Drained, shutdown_signal};
pub use http::{
    BodyTimedOut, BodyTimeouts, ConnectionInfo, Endpoint, EndpointBody, McpBody, McpService,
    RequestBody, ServeOptions, serve,
};
pub use security::SecurityPolicy;
pub use smcp_bus::{Change, ChangeBus, InProcessBus, TopicNotification};
/// The wire types (`smcp-proto`), re-exported so a server needs one dependency.
pub use smcp_proto as proto;
pub use smcp_proto::basic::LoggingLevel;
pub use smcp_proto::patterns::subscriptions::SubscriptionFilter;
pub use smcp_proto::server::utilities::completion::Completion;
#[cfg(feature = "stdio")]
pub use stdio::{StdioInput, StdioOptions, StdioOutput, serve_stdio, serve_stream};

/// What most servers import: `use smcp_server::prelude::*;`.
///
/// The builders and their entry points, the handler types, the results handlers return, and
/// (feature `schemars`) the typed [`Json`] result.
pub mod prelude {
    pub use crate::core::context::{NotifyError, RequestContext};
    pub use crate::core::handler::HandlerError;
    pub use crate::core::mrtr;
    pub use crate::core::prompts::{PromptBuilder, PromptGet, prompt};
    pub use crate::core::resources::{ResourceBuilder, ResourceRead, resource, resource_template};
    pub use crate::core::server::Server;
    pub use crate::core::tools::{IntoToolResult, ToolBuilder, ToolCall, ToolResult, tool};
    #[cfg(feature = "schemars")]
    pub use crate::core::typed::Json;
    pub use smcp_proto::basic::LoggingLevel;
    pub use smcp_proto::content::{ContentBlock, ResourceContents, TextResourceContents};
    pub use smcp_proto::patterns::subscriptions::SubscriptionFilter;
    pub use smcp_proto::server::prompts::{GetPromptResult, PromptMessage};
    pub use smcp_proto::server::resources::ReadResourceResult;
    pub use smcp_proto::server::tools::{CallToolResult, ToolAnnotations};
}
