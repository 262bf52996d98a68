//! Building a [`Server`]: its identity, what it offers, its settings and its extensions.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use serde_json::{Map, Value};
use smcp_bus::{ChangeBus, InProcessBus};
use smcp_proto::basic::Implementation;

use super::catalog::{Catalog, Features};
use super::completion::CompletionHandler;
use super::error::BuildError;
use super::extension::Extension;
use super::listen::registry::ListenRegistry;
use super::mrtr::{DEFAULT_REPLAY_CAPACITY, KeyRing, MemoryReplayGuard, MrtrConfig, ReplayGuard};
use super::prompts::PromptBuilder;
use super::reply::ServerMeta;
use super::resources::ResourceBuilder;
use super::server::{Server, Shared};
use super::tools::ToolBuilder;
use crate::config::{CacheConfig, Limits, ListenConfig};
use crate::security::SecurityPolicy;

/// Builder for a [`Server`].
///
/// # Examples
///
/// See [`Server::builder`].
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    tools: Vec<ToolBuilder>,
    resources: Vec<ResourceBuilder>,
    prompts: Vec<PromptBuilder>,
    completion: Option<Arc<dyn CompletionHandler>>,
    features: Features,
    security: SecurityPolicy,
    limits: Limits,
    listen: ListenConfig,
    cache: CacheConfig,
    mrtr: Option<MrtrConfig>,
    replay: Option<Arc<dyn ReplayGuard>>,
    bus: Option<Arc<dyn ChangeBus>>,
    extensions: Vec<Arc<dyn Extension>>,
    metrics: super::metrics::MetricsHandle,
    rate_limits: super::ratelimit::RateLimits,
    health: Vec<Arc<dyn super::health::HealthCheck>>,
    #[cfg(feature = "legacy")]
    legacy: super::legacy::LegacyConfig,
    #[cfg(feature = "legacy")]
    session_store: Option<Arc<dyn super::legacy::SessionStore>>,
    #[cfg(feature = "legacy")]
    session_relay: Option<Arc<dyn super::legacy::SessionRelay>>,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .field("extensions", &self.extensions)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Starts building a server that reports itself as `name` / `version`.
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_server::prelude::*;
    ///
    /// let server = Server::builder("notes", "1.0.0")
    ///     .title("Notes")
    ///     .instructions("Search with `find` before reading a note.")
    ///     .tool(tool("ping").handler(|_call| async { Ok(CallToolResult::text("pong")) }))
    ///     .build()?;
    /// let app: axum::Router = server.router("/mcp"); // or `serve`, or `serve_stdio`
    /// # let _ = app;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(name, version)
    }
}

impl ServerBuilder {
    /// A server reporting itself as `name` / `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            info: Implementation::new(name, version),
            instructions: None,
            tools: Vec::new(),
            resources: Vec::new(),
            prompts: Vec::new(),
            completion: None,
            features: Features::default(),
            security: SecurityPolicy::default(),
            limits: Limits::default(),
            listen: ListenConfig::default(),
            cache: CacheConfig::default(),
            mrtr: None,
            replay: None,
            bus: None,
            metrics: super::metrics::MetricsHandle::default(),
            rate_limits: super::ratelimit::RateLimits::default(),
            health: Vec::new(),
            extensions: Vec::new(),
            #[cfg(feature = "legacy")]
            legacy: super::legacy::LegacyConfig::default(),
            #[cfg(feature = "legacy")]
            session_store: None,
            #[cfg(feature = "legacy")]
            session_relay: None,
        }
    }

    /// Settings of the earlier revisions' sessions (2025-11-25, 2025-06-18, 2025-03-26 on
    /// the same endpoint; feature `legacy`). Served by default; `enabled: false` answers a
    /// legacy `initialize` with −32022 as a 2026-07-28-only server does.
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_server::legacy::LegacyConfig;
    ///
    /// let modern_only = smcp_server::Server::builder("demo", "1.0.0")
    ///     .legacy(LegacyConfig { enabled: false, ..LegacyConfig::default() })
    ///     .build()?;
    /// # let _ = modern_only;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[cfg(feature = "legacy")]
    #[must_use]
    pub fn legacy(mut self, config: super::legacy::LegacyConfig) -> Self {
        self.legacy = config;
        self
    }

    /// Where legacy session records live (default: a [`MemorySessionStore`](super::legacy::MemorySessionStore)
    /// bounded by [`LegacyConfig`](super::legacy::LegacyConfig)). Share one store between
    /// instances, or route each `Mcp-Session-Id` to one instance (`docs/sessions.md`).
    #[cfg(feature = "legacy")]
    #[must_use]
    pub fn session_store(mut self, store: impl super::legacy::SessionStore) -> Self {
        self.session_store = Some(Arc::new(store));
        self
    }

    /// How a session's live traffic reaches the instance holding it when it lands on another
    /// (a response to a server-to-client request, `notifications/cancelled`, a resumption
    /// with `Last-Event-ID`). Default: a [`LocalRelay`](super::legacy::LocalRelay), which
    /// relays nothing (one instance, or a load balancer sticky on `Mcp-Session-Id`);
    /// `smcp_redis::RedisSessionRelay` relays through Redis (`docs/sessions.md`).
    #[cfg(feature = "legacy")]
    #[must_use]
    pub fn session_relay(mut self, relay: impl super::legacy::SessionRelay) -> Self {
        self.session_relay = Some(Arc::new(relay));
        self
    }

    /// A human-readable title for the server.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// A description of the server.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// The server's website.
    #[must_use]
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.info.website_url = Some(url.into());
        self
    }

    /// Instructions returned by `server/discover`.
    #[must_use]
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Adds a tool (see [`crate::tool`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_server::prelude::*;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Add {
    ///     a: i64,
    ///     b: i64,
    /// }
    ///
    /// let server = Server::builder("calc", "1.0.0")
    ///     .tool(
    ///         tool("add")
    ///             .description("Adds two integers")
    ///             .typed(|_call, args: Add| async move { Ok((args.a + args.b).to_string()) }),
    ///     )
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn tool(mut self, tool: ToolBuilder) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds a resource or a resource template (see [`crate::resource`],
    /// [`crate::resource_template`]).
    ///
    /// # Examples
    ///
    /// A concrete resource and a template whose variables the handler reads:
    ///
    /// ```
    /// use smcp_server::prelude::*;
    ///
    /// let server = Server::builder("docs", "1.0.0")
    ///     .resource(
    ///         resource("docs://readme", "README")
    ///             .mime_type("text/markdown")
    ///             .handler(|read| async move {
    ///                 Ok(vec![TextResourceContents::new(read.uri, "# Docs").into()])
    ///             }),
    ///     )
    ///     .resource(
    ///         resource_template("docs://pages/{name}", "page").handler(|read| async move {
    ///             let name = read.variables.get("name").cloned().unwrap_or_default();
    ///             Ok(vec![TextResourceContents::new(read.uri, format!("Page {name}")).into()])
    ///         }),
    ///     )
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn resource(mut self, resource: ResourceBuilder) -> Self {
        self.resources.push(resource);
        self
    }

    /// Adds a prompt (see [`crate::prompt`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_server::prelude::*;
    ///
    /// let server = Server::builder("prompts", "1.0.0")
    ///     .prompt(
    ///         prompt("greet")
    ///             .description("A friendly greeting")
    ///             .argument("name", "Who to greet", true)
    ///             .handler(|get| async move {
    ///                 let name = get.arg("name").unwrap_or("you");
    ///                 Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!(
    ///                     "Say hello to {name}."
    ///                 ))]))
    ///             }),
    ///     )
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn prompt(mut self, prompt: PromptBuilder) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// Serves `completion/complete` with this function (and advertises `completions`).
    ///
    /// # Examples
    ///
    /// Suggests values for the `city` argument of any prompt or template, from what was typed:
    ///
    /// ```
    /// use smcp_server::{Completion, Server};
    ///
    /// const CITIES: [&str; 4] = ["Lisbon", "London", "Lyon", "Oslo"];
    ///
    /// let server = Server::builder("travel", "1.0.0")
    ///     .completion(|request| async move {
    ///         if request.argument != "city" {
    ///             return Ok(Completion::values(Vec::new()));
    ///         }
    ///         let values = CITIES
    ///             .iter()
    ///             .filter(|c| c.to_lowercase().starts_with(&request.value.to_lowercase()))
    ///             .map(|c| c.to_string())
    ///             .collect();
    ///         Ok(Completion::values(values))
    ///     })
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn completion<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(super::completion::CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<
                Output = Result<
                    smcp_proto::server::utilities::completion::Completion,
                    super::handler::HandlerError,
                >,
            > + Send
            + 'static,
    {
        self.completion = Some(Arc::new(handler));
        self
    }

    /// Advertises `logging`, so handlers' `ctx.log()` reaches requests that ask for logs.
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_server::prelude::*;
    ///
    /// let server = Server::builder("demo", "1.0.0")
    ///     .logging(true)
    ///     .tool(tool("work").handler(|call| async move {
    ///         // Sent only to requests that asked for logs at `info` or below.
    ///         call.ctx.log(LoggingLevel::Info, Some("work"), serde_json::json!("started")).await?;
    ///         Ok(CallToolResult::text("done"))
    ///     }))
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn logging(mut self, enabled: bool) -> Self {
        self.features.logging = enabled;
        self
    }

    /// Advertises `tools.listChanged`: listeners may opt into
    /// `notifications/tools/list_changed`, sent when the tool set changes at runtime
    /// ([`Server::add_tool`] and friends, or [`Server::publish`]). Also advertises `tools`
    /// itself, even while the server has none yet.
    ///
    /// Runtime changes work without it (and are still published on the bus), but a client
    /// can only opt into notifications the server advertises, so set it when tools change.
    #[must_use]
    pub fn tools_list_changed(mut self, enabled: bool) -> Self {
        self.features.tools_list_changed = enabled;
        self
    }

    /// Advertises `prompts.listChanged` (see [`ServerBuilder::tools_list_changed`]).
    #[must_use]
    pub fn prompts_list_changed(mut self, enabled: bool) -> Self {
        self.features.prompts_list_changed = enabled;
        self
    }

    /// Advertises `resources.listChanged` (see [`ServerBuilder::tools_list_changed`]).
    #[must_use]
    pub fn resources_list_changed(mut self, enabled: bool) -> Self {
        self.features.resources_list_changed = enabled;
        self
    }

    /// Advertises all three `listChanged` flags.
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_server::prelude::*;
    ///
    /// let server = Server::builder("plugins", "1.0.0")
    ///     .list_changed(true)
    ///     .resources_subscribe(true)
    ///     .build()?;
    /// // Listeners that opted in hear `notifications/tools/list_changed`.
    /// server.add_tool(tool("late").handler(|_call| async { Ok(CallToolResult::text("hi")) }))?;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn list_changed(self, enabled: bool) -> Self {
        self.tools_list_changed(enabled)
            .prompts_list_changed(enabled)
            .resources_list_changed(enabled)
    }

    /// Advertises `resources.subscribe`: listeners may name URIs in `resourceSubscriptions`
    /// and receive `notifications/resources/updated` when the application calls
    /// [`Server::notify_resource_updated`] for one of them or a sub-resource.
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_server::prelude::*;
    ///
    /// let server = Server::builder("files", "1.0.0").resources_subscribe(true).build()?;
    /// // Later, when the file changes: listeners subscribed to it (or to `file:///logs/`) hear
    /// // `notifications/resources/updated`.
    /// server.notify_resource_updated("file:///logs/app.log");
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn resources_subscribe(mut self, enabled: bool) -> Self {
        self.features.resources_subscribe = enabled;
        self
    }

    /// Records requests, multi round-trip rounds and what other components report through
    /// [`Server::metrics`] into `metrics` (off by default: every recording point is then one
    /// branch). With the feature `metrics`, `smcp_server::metrics::Prometheus` is a
    /// ready-made implementation.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use smcp_server::core::metrics::{Metrics, RequestRecord};
    ///
    /// #[derive(Debug, Default)]
    /// struct Count(std::sync::atomic::AtomicU64);
    ///
    /// impl Metrics for Count {
    ///     fn request(&self, _record: RequestRecord) {
    ///         self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ///     }
    /// }
    ///
    /// let server = smcp_server::Server::builder("demo", "1.0.0")
    ///     .metrics(Arc::new(Count::default()))
    ///     .build()?;
    /// assert!(server.metrics().is_on());
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn metrics(mut self, metrics: Arc<dyn super::metrics::Metrics>) -> Self {
        self.metrics = super::metrics::MetricsHandle::new(metrics);
        self
    }

    /// Adds a health check to what [`Server::readiness`] asks (a shared store, a bus). The
    /// server is ready only when every check passes.
    #[must_use]
    pub fn health_check(mut self, check: impl super::health::HealthCheck) -> Self {
        self.health.push(Arc::new(check));
        self
    }

    /// Adds a health check already behind an `Arc` (one shared with the component it checks).
    #[must_use]
    pub fn health_check_arc(mut self, check: Arc<dyn super::health::HealthCheck>) -> Self {
        self.health.push(check);
        self
    }

    /// The bus changes are published to and listen streams subscribe to. Default: a new
    /// [`InProcessBus`] per server. Give several servers (or instances) one bus to share
    /// notifications between them.
    ///
    /// # Examples
    ///
    /// Two servers (say, two instances behind one load balancer, here in one process) whose
    /// listeners hear each other's changes:
    ///
    /// ```
    /// use std::sync::Arc;
    /// use smcp_server::{ChangeBus, InProcessBus, Server};
    ///
    /// let bus: Arc<dyn ChangeBus> = Arc::new(InProcessBus::new());
    /// let a = Server::builder("a", "1.0.0").change_bus(bus.clone()).build()?;
    /// let b = Server::builder("b", "1.0.0").change_bus(bus).build()?;
    /// a.notify_resource_updated("file:///shared.txt"); // b's listeners hear it too
    /// # let _ = b;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn change_bus(mut self, bus: Arc<dyn ChangeBus>) -> Self {
        self.bus = Some(bus);
        self
    }

    /// Limits and keep-alive of `subscriptions/listen` streams.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use smcp_server::{ListenConfig, Server};
    ///
    /// let server = Server::builder("demo", "1.0.0")
    ///     .list_changed(true)
    ///     .listen(ListenConfig {
    ///         keep_alive: Duration::from_secs(30),
    ///         max_streams_per_address: 50,
    ///         ..ListenConfig::default()
    ///     })
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn listen(mut self, config: ListenConfig) -> Self {
        self.listen = config;
        self
    }

    /// Host and Origin allow-lists (default: loopback only).
    ///
    /// # Examples
    ///
    /// A server reachable as `mcp.example.com` and called from one web app:
    ///
    /// ```
    /// use smcp_server::{SecurityPolicy, Server};
    ///
    /// let server = Server::builder("demo", "1.0.0")
    ///     .security(
    ///         SecurityPolicy::loopback()
    ///             .allow_host("mcp.example.com")
    ///             .allow_origin("https://app.example.com"),
    ///     )
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn security(mut self, policy: SecurityPolicy) -> Self {
        self.security = policy;
        self
    }

    /// Request limits.
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_server::{Limits, Server};
    ///
    /// let server = Server::builder("demo", "1.0.0")
    ///     .limits(Limits {
    ///         max_body_bytes: 512 * 1024,
    ///         page_size: 50,
    ///         ..Limits::default()
    ///     })
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Caching hints for the cacheable methods.
    ///
    /// # Examples
    ///
    /// Tool lists stay fresh for ten minutes and may be shared between users:
    ///
    /// ```
    /// use std::time::Duration;
    /// use smcp_server::{CacheConfig, CacheHint, CacheScope, Server};
    ///
    /// let server = Server::builder("demo", "1.0.0")
    ///     .cache(CacheConfig {
    ///         tools_list: CacheHint::new(Duration::from_secs(600), CacheScope::Public),
    ///         ..CacheConfig::default()
    ///     })
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn cache(mut self, cache: CacheConfig) -> Self {
        self.cache = cache;
        self
    }

    /// Multi round-trip settings: the `requestState` key ring, TTL and caps. Without it the
    /// server seals with a random key of its own, so retries only work on this instance.
    ///
    /// # Examples
    ///
    /// Every instance configured with the same key (e.g. from an environment variable), so a retry
    /// may land on any of them:
    ///
    /// ```
    /// use smcp_server::mrtr::{Key, KeyRing, MrtrConfig};
    /// use smcp_server::Server;
    ///
    /// # fn main() -> anyhow::Result<()> {
    /// # let spec = Key::generate("k1")?.to_spec();
    /// // `spec` is `ID:BASE64` (32 bytes), e.g. read from `SMCP_STATE_KEY`.
    /// let keys = KeyRing::new(Key::parse(&spec)?);
    /// let server = Server::builder("demo", "1.0.0")
    ///     .mrtr(MrtrConfig::new(keys))
    ///     .build()?;
    /// # let _ = server;
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn mrtr(mut self, config: MrtrConfig) -> Self {
        self.mrtr = Some(config);
        self
    }

    /// The guard that makes `requestState` single-use for the tools that need it (annotated
    /// destructive, or built with `single_use_state()`). Default: a
    /// [`MemoryReplayGuard`](crate::mrtr::MemoryReplayGuard) of
    /// [`DEFAULT_REPLAY_CAPACITY`](crate::mrtr::DEFAULT_REPLAY_CAPACITY) ids, which guards this instance only; instances that share
    /// state keys need a shared guard here.
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_server::mrtr::MemoryReplayGuard;
    /// use smcp_server::Server;
    ///
    /// let server = Server::builder("demo", "1.0.0")
    ///     .replay_guard(MemoryReplayGuard::new(100_000))
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn replay_guard(mut self, guard: impl ReplayGuard) -> Self {
        self.replay = Some(Arc::new(guard));
        self
    }

    /// Rate limits per principal and per tool (off by default): token buckets in this
    /// process, or in a store every instance shares (`smcp_redis::RedisRateLimiter`). A
    /// request over a limit is refused before dispatch with
    /// [`SERVER_BUSY`](crate::SERVER_BUSY), `data.limit` and `data.retryAfterMs`; over HTTP
    /// with `429` and `Retry-After`. See [`crate::ratelimit`].
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_server::ratelimit::{Rate, RateLimits};
    ///
    /// let server = smcp_server::Server::builder("demo", "1.0.0")
    ///     .rate_limits(RateLimits::new().principal(Rate::per_second(100).and_burst(200)))
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    #[must_use]
    pub fn rate_limits(mut self, limits: super::ratelimit::RateLimits) -> Self {
        self.rate_limits = limits;
        self
    }

    /// Registers a protocol extension (see [`crate::extension`]), e.g. SEP-2631 file
    /// transfer from `smcp-files`. Extensions wrap tool calls in registration order, the
    /// first outermost.
    ///
    /// # Examples
    ///
    /// An extension that only wraps tool calls (every hook has a default):
    ///
    /// ```
    /// use smcp_server::extension::ToolOutcome;
    /// use smcp_server::tools::BoxFuture;
    /// use smcp_server::{Extension, Next, Server, ToolCall};
    ///
    /// struct Audit;
    ///
    /// impl Extension for Audit {
    ///     fn name(&self) -> &'static str {
    ///         "example.com/audit"
    ///     }
    ///
    ///     fn tool_call(&self, call: ToolCall, next: Next) -> BoxFuture<ToolOutcome> {
    ///         tracing::info!(tool = %call.name, "tool called");
    ///         next.run(call)
    ///     }
    /// }
    ///
    /// let server = Server::builder("demo", "1.0.0").extension(Audit).build()?;
    /// # let _ = server;
    /// # Ok::<(), smcp_server::BuildError>(())
    /// ```
    ///
    /// SEP-2631 file transfer is registered the same way: `.extension(files)` with an
    /// `smcp_files::Files`.
    #[must_use]
    pub fn extension(mut self, extension: impl Extension) -> Self {
        self.extensions.push(Arc::new(extension));
        self
    }

    /// Validates every definition and builds the server.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] naming the definition at fault: an invalid tool name or schema, a missing
    /// handler, an invalid URI template, two items with one name, an extension that refuses a tool
    /// or claims a method twice.
    ///
    /// # Examples
    ///
    /// ```
    /// use smcp_server::prelude::*;
    ///
    /// let err = Server::builder("demo", "1.0.0")
    ///     .tool(tool("has space").handler(|_call| async { Ok(CallToolResult::text("")) }))
    ///     .build()
    ///     .unwrap_err();
    /// assert!(err.to_string().contains("has space"), "{err}");
    /// ```
    pub fn build(self) -> Result<Server, BuildError> {
        let extensions: Arc<[Arc<dyn Extension>]> = self.extensions.into();
        let mut extension_methods = HashMap::new();
        for extension in extensions.iter() {
            for spec in extension.methods() {
                if smcp_proto::jsonrpc::ClientRequest::models(spec.method)
                    || extension_methods
                        .insert(spec.method, (extension.clone(), spec))
                        .is_some()
                {
                    return Err(BuildError::DuplicateMethod {
                        method: spec.method,
                        extension: extension.name(),
                    });
                }
            }
        }
        let mut catalog = Catalog::default();
        for t in self.tools {
            let mut entry = t.build()?;
            super::extension::register_tool(&extensions, &mut entry)?;
            catalog.add_tool(entry)?;
        }
        for r in self.resources {
            catalog.add_resource(r.build()?)?;
        }
        for p in self.prompts {
            catalog.add_prompt(p.build()?)?;
        }
        let mrtr = match self.mrtr {
            Some(config) => config,
            None => MrtrConfig::new(KeyRing::ephemeral()?),
        };
        let mut features = self.features;
        features.completions = self.completion.is_some();
        catalog.seal(&features, &extensions);
        let mut server_meta = Map::new();
        server_meta.insert(
            smcp_proto::meta::SERVER_INFO.to_owned(),
            serde_json::to_value(&self.info).unwrap_or(Value::Null),
        );
        let rate_limits = super::ratelimit::Gatekeeper::new(
            self.rate_limits,
            mrtr.clock.clone(),
            self.metrics.clone(),
        );
        Ok(Server {
            shared: Arc::new(Shared {
                rate_limits,
                server_meta: ServerMeta::new(server_meta),
                instructions: self.instructions,
                features,
                security: self.security,
                limits: self.limits,
                listen: self.listen,
                cache: self.cache,
                catalog: RwLock::new(Arc::new(catalog)),
                completion: self.completion,
                replay: self.replay.unwrap_or_else(|| {
                    Arc::new(MemoryReplayGuard::with_clock(
                        DEFAULT_REPLAY_CAPACITY,
                        mrtr.clock.clone(),
                    )) as Arc<dyn ReplayGuard>
                }),
                mrtr,
                bus: self
                    .bus
                    .unwrap_or_else(|| Arc::new(InProcessBus::new()) as Arc<dyn ChangeBus>),
                listeners: Arc::new(ListenRegistry::default()),
                extensions,
                extension_methods,
                metrics: self.metrics,
                health: self.health.into(),
                #[cfg(feature = "legacy")]
                legacy: self.legacy.enabled.then(|| {
                    super::legacy::start(
                        self.legacy,
                        self.session_store,
                        self.session_relay
                            .unwrap_or_else(|| Arc::new(super::legacy::LocalRelay)),
                    )
                }),
            }),
        })
    }
}
