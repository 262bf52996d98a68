//! The server: what it offers and its settings, shared by every request.
//!
//! Built once with [`ServerBuilder`](super::builder::ServerBuilder); served by a transport
//! (the HTTP layer's `McpService`). The catalog sits behind a lock holding an `Arc` snapshot,
//! so a request reads one consistent view and runtime changes (`runtime.rs`:
//! [`Server::add_tool`] and friends) swap in a new snapshot without blocking a request in
//! flight.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use smcp_bus::ChangeBus;

use super::catalog::{Catalog, Features};
use super::completion::CompletionHandler;
use super::context::RequestContext;
use super::extension::{Extension, MethodSpec};
use super::listen::registry::ListenRegistry;
use super::mrtr::{MrtrConfig, ReplayGuard};
use super::reply::ServerMeta;
use crate::config::{CacheConfig, Limits, ListenConfig};
use crate::security::SecurityPolicy;

pub use super::versions::SUPPORTED_VERSIONS;

/// A configured MCP server. Cheap to clone; every clone serves the same catalog.
///
/// # Examples
///
/// Built once, served any number of ways, changed at runtime through any clone:
///
/// ```
/// use smcp_server::prelude::*;
///
/// let server = Server::builder("demo", "1.0.0")
///     .tools_list_changed(true)
///     .tool(tool("ping").handler(|_call| async { Ok(CallToolResult::text("pong")) }))
///     .build()?;
/// let app: axum::Router = server.router("/mcp");
/// let admin = server.clone();
/// admin.add_tool(tool("pong").handler(|_call| async { Ok(CallToolResult::text("ping")) }))?;
/// # let _ = app;
/// # Ok::<(), smcp_server::BuildError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Server {
    pub(crate) shared: Arc<Shared>,
}

/// Everything a request may read, and the state runtime changes write.
#[derive(Debug)]
pub(crate) struct Shared {
    /// `{"io.modelcontextprotocol/serverInfo": Implementation}`, added to every result.
    pub(crate) server_meta: ServerMeta,
    pub(crate) instructions: Option<String>,
    pub(crate) features: Features,
    pub(crate) security: SecurityPolicy,
    pub(crate) limits: Limits,
    pub(crate) listen: ListenConfig,
    pub(crate) cache: CacheConfig,
    pub(crate) catalog: RwLock<Arc<Catalog>>,
    pub(crate) completion: Option<Arc<dyn CompletionHandler>>,
    pub(crate) mrtr: MrtrConfig,
    pub(crate) replay: Arc<dyn ReplayGuard>,
    /// Where runtime changes are published and where listen streams subscribe.
    pub(crate) bus: Arc<dyn ChangeBus>,
    /// Open listen streams of this instance: caps and shutdown.
    pub(crate) listeners: Arc<ListenRegistry>,
    /// Registered extensions, outermost first.
    pub(crate) extensions: Arc<[Arc<dyn Extension>]>,
    /// The methods extensions serve.
    pub(crate) extension_methods: HashMap<&'static str, (Arc<dyn Extension>, MethodSpec)>,
    /// Where measurements go (nowhere by default).
    pub(crate) metrics: super::metrics::MetricsHandle,
    /// What readiness asks.
    pub(crate) health: Arc<[Arc<dyn super::health::HealthCheck>]>,
    /// The rate limits, when there is any rule.
    pub(crate) rate_limits: Option<super::ratelimit::Gatekeeper>,
    /// The earlier revisions' sessions, when served.
    #[cfg(feature = "legacy")]
    pub(crate) legacy: Option<Arc<super::legacy::Legacy>>,
}

impl Shared {
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The extension method `method`, if one is registered.
    pub(crate) fn extension_method(
        &self,
        method: &str,
    ) -> Option<&(Arc<dyn Extension>, MethodSpec)> {
        if self.extension_methods.is_empty() {
            return None;
        }
        self.extension_methods.get(method)
    }

    /// The bounded metrics label of `method` (see [`super::metrics::method_label`]).
    pub(crate) fn method_label(&self, method: &str) -> &'static str {
        super::metrics::method_label(method, self.extension_methods.keys())
    }
}

// Defined here rather than in `context.rs`: the context every handler receives sits below the
// server and holds it only as an opaque handle.
impl RequestContext {
    /// The server serving this request (`None` for a [`RequestContext::detached`] one), a cheap
    /// handle (one reference count) so a
    /// handler can change it at runtime, e.g. [`crate::Server::add_tool`] or
    /// [`crate::Server::notify_resource_updated`].
    ///
    /// # Examples
    ///
    /// ```
    /// # use smcp_server::prelude::*;
    /// let enable = tool("enable_admin").handler(|call| async move {
    ///     if let Some(server) = call.ctx.server() {
    ///         let admin = tool("admin").handler(|_call| async { Ok(CallToolResult::text("ok")) });
    ///         server.replace_tool(admin).map_err(|e| HandlerError::internal(e.to_string()))?;
    ///     }
    ///     Ok(CallToolResult::text("admin tool enabled"))
    /// });
    /// ```
    pub fn server(&self) -> Option<Server> {
        let shared = self.server_ref().0.clone()?.downcast::<Shared>().ok()?;
        Some(Server { shared })
    }
}

impl Server {
    /// The member of params the `Mcp-Name` header mirrors for `method`, when an extension
    /// serves it and declared one.
    pub fn extension_name_member(&self, method: &str) -> Option<&'static str> {
        self.shared
            .extension_method(method)
            .and_then(|(_, spec)| spec.name_member)
    }
}

impl Server {
    /// The server's metrics handle: give it to components that report file bytes or bus lag.
    /// Empty (every call a no-op) unless the builder was given
    /// [`metrics`](super::builder::ServerBuilder::metrics).
    pub fn metrics(&self) -> super::metrics::MetricsHandle {
        self.shared.metrics.clone()
    }

    /// Whether [`Server::shutdown`] was called: the instance is draining.
    pub fn is_draining(&self) -> bool {
        self.shared.listeners.shutdown.is_cancelled()
    }

    /// Runs every registered health check (at once, each within its timeout) and says whether
    /// this instance should get requests: not while draining, nor while a check fails.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> anyhow::Result<()> {
    /// let server = smcp_server::Server::builder("demo", "1.0.0").build()?;
    /// assert!(server.readiness().await.is_ready());
    /// server.shutdown();
    /// assert_eq!(server.readiness().await, smcp_server::core::health::Readiness::Draining);
    /// # Ok(()) }
    /// ```
    pub async fn readiness(&self) -> super::health::Readiness {
        if self.is_draining() {
            return super::health::Readiness::Draining;
        }
        super::health::run_checks(&self.shared.health).await
    }

    /// Sessions of the earlier revisions live on this instance (0 when they are not served).
    pub fn legacy_sessions(&self) -> usize {
        #[cfg(feature = "legacy")]
        if let Some(legacy) = &self.shared.legacy {
            return legacy.live_sessions();
        }
        0
    }
}
