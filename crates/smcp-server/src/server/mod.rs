//! The server: what it offers (tools, resources, prompts, completion) and its settings.
//!
//! Built once with [`ServerBuilder`]; served by [`crate::McpService`]. The catalog sits behind
//! a lock holding an `Arc` snapshot, so a request reads one consistent view and runtime changes
//! never block a request in flight.

pub mod completion;
pub mod handler;
pub mod prompts;
pub mod resources;
pub mod tools;
mod uri_template;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use serde_json::{Map, Value, json};

use crate::config::{CacheConfig, Limits};
use crate::error::BuildError;
use crate::mrtr::{KeyRing, MrtrConfig, ReplayGuard};
use crate::security::SecurityPolicy;
use crate::transport::McpService;
use completion::CompletionHandler;
use prompts::{PromptBuilder, PromptEntry};
use resources::{ResourceBuilder, ResourceEntry};
use tools::{ToolBuilder, ToolEntry};

/// Protocol versions this server speaks, newest first.
pub const SUPPORTED_VERSIONS: &[&str] = &[smcp_proto::PROTOCOL_VERSION];

/// A configured MCP server. Cheap to clone; every clone serves the same catalog.
#[derive(Clone, Debug)]
pub struct Server {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    /// `{"io.modelcontextprotocol/serverInfo": Implementation}`, added to every result.
    pub(crate) result_meta: Value,
    pub(crate) instructions: Option<String>,
    pub(crate) capabilities: Value,
    pub(crate) security: SecurityPolicy,
    pub(crate) limits: Limits,
    pub(crate) cache: CacheConfig,
    pub(crate) catalog: RwLock<Arc<Catalog>>,
    pub(crate) completion: Option<Arc<dyn CompletionHandler>>,
    pub(crate) logging: bool,
    pub(crate) mrtr: MrtrConfig,
    pub(crate) replay: Option<Arc<dyn ReplayGuard>>,
}

impl std::fmt::Debug for dyn ReplayGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReplayGuard")
    }
}

impl std::fmt::Debug for dyn CompletionHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompletionHandler")
    }
}

/// What the server offers, in registration order (the order `*/list` returns).
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    pub(crate) tools: Vec<Arc<ToolEntry>>,
    tool_index: HashMap<String, usize>,
    pub(crate) resources: Vec<Arc<ResourceEntry>>,
    resource_index: HashMap<String, usize>,
    pub(crate) templates: Vec<Arc<ResourceEntry>>,
    pub(crate) prompts: Vec<Arc<PromptEntry>>,
    prompt_index: HashMap<String, usize>,
}

impl Catalog {
    pub(crate) fn tool(&self, name: &str) -> Option<&Arc<ToolEntry>> {
        self.tool_index.get(name).map(|&i| &self.tools[i])
    }

    pub(crate) fn prompt(&self, name: &str) -> Option<&Arc<PromptEntry>> {
        self.prompt_index.get(name).map(|&i| &self.prompts[i])
    }

    /// The resource for `uri`: an exact resource first, then the first matching template.
    pub(crate) fn resource(
        &self,
        uri: &str,
    ) -> Option<(
        &Arc<ResourceEntry>,
        std::collections::BTreeMap<String, String>,
    )> {
        if let Some(&i) = self.resource_index.get(uri) {
            return Some((&self.resources[i], Default::default()));
        }
        self.templates.iter().find_map(|t| {
            t.template
                .as_ref()
                .and_then(|tpl| tpl.matches(uri))
                .map(|vars| (t, vars))
        })
    }

    fn add_tool(&mut self, entry: ToolEntry) -> Result<(), BuildError> {
        insert(
            &mut self.tools,
            &mut self.tool_index,
            entry.name.clone(),
            entry,
            "tool",
        )
    }

    fn add_prompt(&mut self, entry: PromptEntry) -> Result<(), BuildError> {
        insert(
            &mut self.prompts,
            &mut self.prompt_index,
            entry.name.clone(),
            entry,
            "prompt",
        )
    }

    fn add_resource(&mut self, entry: ResourceEntry) -> Result<(), BuildError> {
        if entry.template.is_some() {
            if self.templates.iter().any(|t| t.key == entry.key) {
                return Err(BuildError::Duplicate {
                    kind: "resource template",
                    name: entry.key,
                });
            }
            self.templates.push(Arc::new(entry));
            Ok(())
        } else {
            let key = entry.key.clone();
            insert(
                &mut self.resources,
                &mut self.resource_index,
                key,
                entry,
                "resource",
            )
        }
    }
}

fn insert<T>(
    list: &mut Vec<Arc<T>>,
    index: &mut HashMap<String, usize>,
    key: String,
    entry: T,
    kind: &'static str,
) -> Result<(), BuildError> {
    if index.contains_key(&key) {
        return Err(BuildError::Duplicate { kind, name: key });
    }
    index.insert(key, list.len());
    list.push(Arc::new(entry));
    Ok(())
}

impl Server {
    /// Starts building a server that reports itself as `name` / `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(name, version)
    }

    /// The Streamable HTTP endpoint as a tower `Service`; mount it at any path.
    pub fn service(&self) -> McpService {
        McpService::new(self.inner.clone())
    }

    /// An axum `Router` serving the endpoint at `path` (e.g. `"/mcp"`), to merge into an app.
    pub fn router(&self, path: &str) -> axum::Router {
        axum::Router::new().route_service(path, self.service())
    }
}

impl Inner {
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// Builder for a [`Server`].
pub struct ServerBuilder {
    info: Map<String, Value>,
    instructions: Option<String>,
    tools: Vec<ToolBuilder>,
    resources: Vec<ResourceBuilder>,
    prompts: Vec<PromptBuilder>,
    completion: Option<Arc<dyn CompletionHandler>>,
    logging: bool,
    security: SecurityPolicy,
    limits: Limits,
    cache: CacheConfig,
    mrtr: Option<MrtrConfig>,
    replay: Option<Arc<dyn ReplayGuard>>,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// A server reporting itself as `name` / `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        let mut info = Map::new();
        info.insert("name".into(), Value::String(name.into()));
        info.insert("version".into(), Value::String(version.into()));
        Self {
            info,
            instructions: None,
            tools: Vec::new(),
            resources: Vec::new(),
            prompts: Vec::new(),
            completion: None,
            logging: false,
            security: SecurityPolicy::default(),
            limits: Limits::default(),
            cache: CacheConfig::default(),
            mrtr: None,
            replay: None,
        }
    }

    /// A human-readable title for the server.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info
            .insert("title".into(), Value::String(title.into()));
        self
    }

    /// A description of the server.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info
            .insert("description".into(), Value::String(description.into()));
        self
    }

    /// Instructions returned by `server/discover`.
    #[must_use]
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Adds a tool (see [`crate::tool`]).
    #[must_use]
    pub fn tool(mut self, tool: ToolBuilder) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds a resource or a resource template (see [`crate::resource`],
    /// [`crate::resource_template`]).
    #[must_use]
    pub fn resource(mut self, resource: ResourceBuilder) -> Self {
        self.resources.push(resource);
        self
    }

    /// Adds a prompt (see [`crate::prompt`]).
    #[must_use]
    pub fn prompt(mut self, prompt: PromptBuilder) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// Serves `completion/complete` with this function (and advertises `completions`).
    #[must_use]
    pub fn completion<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(completion::CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<completion::Completion, handler::HandlerError>>
            + Send
            + 'static,
    {
        self.completion = Some(Arc::new(handler));
        self
    }

    /// Advertises `logging`, so handlers' `ctx.log()` reaches requests that ask for logs.
    #[must_use]
    pub fn logging(mut self, enabled: bool) -> Self {
        self.logging = enabled;
        self
    }

    /// Host and Origin allow-lists (default: loopback only).
    #[must_use]
    pub fn security(mut self, policy: SecurityPolicy) -> Self {
        self.security = policy;
        self
    }

    /// Request limits.
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Caching hints for the cacheable methods.
    #[must_use]
    pub fn cache(mut self, cache: CacheConfig) -> Self {
        self.cache = cache;
        self
    }

    /// Multi round-trip settings: the `requestState` key ring, TTL and caps. Without it the
    /// server seals with a random key of its own, so retries only work on this instance.
    #[must_use]
    pub fn mrtr(mut self, config: MrtrConfig) -> Self {
        self.mrtr = Some(config);
        self
    }

    /// The guard that makes `requestState` single-use for tools that ask for it.
    #[must_use]
    pub fn replay_guard(mut self, guard: impl ReplayGuard) -> Self {
        self.replay = Some(Arc::new(guard));
        self
    }

    /// Validates every definition and builds the server.
    pub fn build(self) -> Result<Server, BuildError> {
        let mut catalog = Catalog::default();
        for t in self.tools {
            let entry = t.build()?;
            if entry.single_use_state && self.replay.is_none() {
                return Err(BuildError::MissingReplayGuard(entry.name));
            }
            catalog.add_tool(entry)?;
        }
        let mrtr = match self.mrtr {
            Some(config) => config,
            None => MrtrConfig::new(KeyRing::ephemeral()?),
        };
        for r in self.resources {
            catalog.add_resource(r.build()?)?;
        }
        for p in self.prompts {
            catalog.add_prompt(p.build()?)?;
        }
        let mut caps = Map::new();
        if !catalog.tools.is_empty() {
            caps.insert("tools".into(), json!({}));
        }
        if !catalog.resources.is_empty() || !catalog.templates.is_empty() {
            caps.insert("resources".into(), json!({}));
        }
        if !catalog.prompts.is_empty() {
            caps.insert("prompts".into(), json!({}));
        }
        if self.completion.is_some() {
            caps.insert("completions".into(), json!({}));
        }
        if self.logging {
            caps.insert("logging".into(), json!({}));
        }
        let mut result_meta = Map::new();
        result_meta.insert(
            smcp_proto::meta::SERVER_INFO.to_owned(),
            Value::Object(self.info),
        );
        Ok(Server {
            inner: Arc::new(Inner {
                result_meta: Value::Object(result_meta),
                instructions: self.instructions,
                capabilities: Value::Object(caps),
                security: self.security,
                limits: self.limits,
                cache: self.cache,
                catalog: RwLock::new(Arc::new(catalog)),
                completion: self.completion,
                logging: self.logging,
                mrtr,
                replay: self.replay,
            }),
        })
    }
}

impl Inner {
    /// Whether `method` is one this server serves (so its params rules apply).
    pub(crate) fn advertises_method(&self, method: &str) -> bool {
        match method {
            "server/discover" => true,
            "tools/list" => self.advertises("tools"),
            "resources/list" | "resources/templates/list" => self.advertises("resources"),
            "prompts/list" => self.advertises("prompts"),
            "completion/complete" => self.advertises("completions"),
            _ => false,
        }
    }

    /// Whether a capability was advertised, e.g. `"prompts"`.
    pub(crate) fn advertises(&self, capability: &str) -> bool {
        self.capabilities.get(capability).is_some()
    }
}
