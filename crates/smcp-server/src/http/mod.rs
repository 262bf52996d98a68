//! The Streamable HTTP layer (`basic/transports/streamable-http.mdx`): the endpoint as a
//! tower `Service`, its request checks and validation pipeline, JSON and SSE responses,
//! `subscriptions/listen` streams, and an accept loop. It depends on the protocol core
//! ([`crate::core`]); the core never depends on it.
//!
//! | module | responsibility |
//! |---|---|
//! | `service` | [`McpService`]: one request from head to response |
//! | `request` | the head (Host/Origin, method, media types) and the body limit |
//! | `pipeline` | the header and `_meta` checks, in the spec's order |
//! | `mirror` | `Mcp-Param-*` headers against a tool's arguments |
//! | `response`, `rejection` | JSON and SSE responses; the HTTP status of every refusal |
//! | `streaming` | JSON until the handler emits, then SSE; cancellation on close |
//! | `listen` | `subscriptions/listen` as an SSE body polled in place |
//! | `legacy` | the earlier revisions' sessions: era per request, POST, GET stream, DELETE, event ids (feature `legacy`) |
//! | `body` | [`McpBody`], the response body |
//! | `endpoint` | [`Endpoint`]: the endpoint at one path, with an optional fallback and probe paths |
//! | `observe` | request measurements (with metrics on), readiness and liveness, [`OpsRouter`] |
//! | `serve` | [`serve`]: the accept loop, its deadlines and the drain |
//! | `idle` | HTTP/2 connections with no request in flight for the header read timeout are closed |
//! | `deadline` | [`RequestBody`]: request bodies under an idle timeout and a minimum rate |
//! | [`tls`] | HTTPS from PEM files (feature `tls`) |

mod body;
mod deadline;
mod endpoint;
mod framing;
mod idle;
#[cfg(feature = "legacy")]
mod legacy;
pub(crate) mod listen;
mod listen_stream;
pub(crate) mod mirror;
mod observe;
mod pipeline;
mod probe;
mod rejection;
mod request;
mod response;
mod serve;
mod service;
mod streaming;
#[cfg(feature = "tls")]
pub mod tls;

pub use body::McpBody;
pub use deadline::{BodyTimedOut, BodyTimeouts, RequestBody};
pub use endpoint::{Endpoint, EndpointBody};
pub use observe::OpsRouter;
pub use serve::{ConnectionInfo, ServeOptions, serve};
pub use service::McpService;

use crate::core::server::Server;

impl Server {
    /// The Streamable HTTP endpoint as a tower `Service`; mount it at any path.
    ///
    /// # Examples
    ///
    /// ```
    /// # let server = smcp_server::Server::builder("demo", "1.0.0").build()?;
    /// let app: axum::Router = axum::Router::new()
    ///     .route("/health", axum::routing::get(|| async { "ok" }))
    ///     .route_service("/mcp", server.service());
    /// # let _ = app;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    pub fn service(&self) -> McpService {
        McpService::new(self.shared.clone())
    }

    /// An axum `Router` serving the endpoint at `path` (e.g. `"/mcp"`), to merge into an app
    /// (and, for SEP-2631, with the file data plane's router).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn run() -> anyhow::Result<()> {
    /// # let server = smcp_server::Server::builder("demo", "1.0.0").build()?;
    /// let app = axum::Router::new()
    ///     .route("/", axum::routing::get(|| async { "my app" }))
    ///     .merge(server.router("/mcp"));
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8931").await?;
    /// axum::serve(listener, app).await?;
    /// # Ok(()) }
    /// ```
    pub fn router(&self, path: &str) -> axum::Router {
        axum::Router::new().route_service(path, self.service())
    }

    /// The endpoint at exactly `path` with no router in front of it, for a server that is
    /// only an MCP server (hand it to [`serve`]): other paths get 404, or go to the router
    /// given with [`Endpoint::fallback`] (e.g. the SEP-2631 data plane). Same behaviour as
    /// [`Server::router`], minus the routing work on every request.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use smcp_server::{ServeOptions, serve};
    ///
    /// # async fn run() -> anyhow::Result<()> {
    /// # let server = smcp_server::Server::builder("demo", "1.0.0").build()?;
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8931").await?;
    /// serve(listener, server.endpoint("/mcp"), ServeOptions::default(), std::future::pending()).await?;
    /// # Ok(()) }
    /// ```
    pub fn endpoint(&self, path: &str) -> Endpoint {
        Endpoint::new(path, self.service())
    }
}
