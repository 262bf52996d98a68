//! One stateless MCP **2026-07-28** endpoint in front of MCP servers of any era and transport:
//! stdio programs (spawned, started again with backoff when they exit), 2025-11-25,
//! 2025-06-18 and 2025-03-26 HTTP sessions, 2024-11-05 HTTP+SSE and 2026-07-28 HTTP, each
//! reached with `smcp-client`, which negotiates its revision.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use smcp_gateway::{Gateway, GatewayConfig};
//!
//! let config = GatewayConfig::parse(r#"
//!     [[upstream]]
//!     name = "everything"
//!     command = ["npx", "-y", "@modelcontextprotocol/server-everything"]
//! "#)?;
//! let gateway = Gateway::start(config).await?;
//! let server = gateway
//!     .configure(smcp_server::Server::builder("gateway", "1.0.0"))
//!     .build()?;
//! gateway.attach(&server);
//! // Serve `server` as any smcp server: over HTTP, on stdio, behind the auth layer.
//! # Ok(()) }
//! ```
//!
//! The catalog is every upstream's tools under its prefix (`everything_echo`). A 2026-07-28
//! upstream's `InputRequiredResult` passes through to the client, its `requestState` sealed
//! inside the gateway's, so any instance can take the retry. A call to an earlier revision runs
//! in a task of its own: when the upstream asks the user something in the middle of it
//! (`elicitation/create`, `sampling/createMessage`, `roots/list`), the client gets an
//! `InputRequiredResult` whose sealed `requestState` names this instance and the held call,
//! and its retry answers the upstream and the call goes on. Progress and log lines pass
//! through; a client that goes away cancels the upstream request. `docs/gateway.md` has the
//! configuration, the era translation table and the failure modes.
//!
//! # Features
//!
//! | feature | default | what |
//! |---|---|---|
//! | `redis` | no | `RedisPeers`: [`Peers`] over the Redis bus several instances share (adds `smcp-redis`) |
//! | `files` | no | SEP-2631 files through the gateway (`Gateway::serve_files`; adds `smcp-files`) |
//!
//! # Layout
//!
//! | module | what |
//! |---|---|
//! | `config` | [`GatewayConfig`]: the TOML file, checked before anything starts |
//! | `upstream` | one upstream: its client, health, concurrency limit, restarts; a call in its own task |
//! | `passthrough` | a 2026-07-28 upstream, one round at a time: its `InputRequiredResult` passed on, its state sealed in the gateway's, nothing held |
//! | `ours` | an upstream's result read from its text into the gateway's answer, the upstream's `serverInfo` skipped |
//! | `held` | a call to an earlier-revision upstream, held for the client's answer: the `InputRequiredResult` and the retry |
//! | `peers` | [`Peers`]: a retry that lands on another instance forwarded to the one holding its call; `RedisPeers` (feature `redis`) over the shared Redis bus |
//! | `bridge` | the upstream client's input handler: an upstream's question to the call it belongs to |
//! | `catalog` | what each upstream serves under the gateway's names, collisions, installing it in the server |
//! | `proxy` | the served tools, prompts, resources and templates that call through; completion routed by reference |
//! | `task_listen` | `notifications/tasks`: a listener's task ids followed at their upstreams |
//! | `tasks` | SEP-2663 tasks of 2026-07-28 upstreams passed through: a task's id names its upstream |
//! | `files` | SEP-2631 (feature `files`): a client's files to each upstream as it takes them, an upstream's file outputs stored by the gateway |
//! | `watch` | resource subscriptions: a listener's URIs watched at the upstream owning each, its updates published |
//! | `exchange` | RFC 8693: a client's access token exchanged for one of an upstream's audience |
//! | `error` | [`GatewayError`]; how an upstream's failure reaches the client |

mod bridge;
mod catalog;
pub mod config;
mod error;
mod exchange;
#[cfg(feature = "files")]
mod files;
mod held;
mod ours;
mod passthrough;
mod peers;
#[cfg(feature = "redis")]
mod peers_redis;
mod proxy;
mod task_listen;
mod tasks;
mod upstream;
mod watch;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::StreamExt;
use smcp_client::{SubscriptionEvent, SubscriptionFilter};
use smcp_server::core::health::{CheckFuture, HealthCheck, Unhealthy};
use smcp_server::{Server, ServerBuilder};

pub use config::{ConfigError, GatewayConfig};
pub use error::GatewayError;
pub use peers::{
    EventSink, ForwardedEvent, ForwardedOutcome, ForwardedRetry, PeerError, PeerHandler, Peers,
};
#[cfg(feature = "redis")]
pub use peers_redis::RedisPeers;

use crate::catalog::{Claims, Installed, Listing};
use crate::held::HeldCalls;
use crate::upstream::{Health, Upstream};

/// The gateway: its upstreams, their tools, the calls it holds. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    upstreams: Vec<Arc<Upstream>>,
    held: Arc<HeldCalls>,
    /// Which upstream serves each name and URI.
    claims: Mutex<Claims>,
    /// What each upstream said it can do, when it was first listed (by upstream).
    capabilities: HashMap<String, smcp_proto::capabilities::ServerCapabilities>,
    /// Ends the watchers.
    stop: tokio_util::sync::CancellationToken,
    /// What was listed at start, installed by [`Gateway::attach`].
    first: Mutex<HashMap<String, Listing>>,
    /// The resources watched at the upstreams for the gateway's listeners.
    watches: Arc<watch::Watches>,
    /// The gateway's own file service ([`Gateway::serve_files`]).
    #[cfg(feature = "files")]
    files: std::sync::OnceLock<smcp_files::Files>,
}

impl Gateway {
    /// Starts every upstream and lists its tools, all at once, each within its timeout.
    ///
    /// An upstream that does not answer is marked down (a stdio one is started again with
    /// backoff) and its tools join the catalog when it comes up; two upstreams offering the
    /// same tool name after their prefixes stop the start, naming both.
    pub async fn start(config: GatewayConfig) -> Result<Self, GatewayError> {
        Self::start_with(config, None).await
    }

    /// [`Gateway::start`], for one of several instances behind a balancer: a retry that
    /// lands here but answers a call another instance holds is forwarded to it through
    /// `peers`, and retries forwarded here are served (see [`Peers`]).
    pub async fn start_in_cluster(
        config: GatewayConfig,
        peers: Arc<dyn Peers>,
    ) -> Result<Self, GatewayError> {
        Self::start_with(config, Some(peers)).await
    }

    async fn start_with(
        config: GatewayConfig,
        peers: Option<Arc<dyn Peers>>,
    ) -> Result<Self, GatewayError> {
        config.check()?;
        let settings = config.gateway;
        // A forwarded retry waits at most as long as the call it resumes may run.
        let longest = config.upstreams.iter().map(|u| u.timeout).max();
        let within = settings.held_call_ttl + longest.unwrap_or_default();
        let held = Arc::new(HeldCalls::new(
            settings.held_call_ttl,
            settings.max_held_calls,
            peers.map(|p| (p, within)),
        ));
        if let Some(peers) = held.peers() {
            let serving = Arc::downgrade(&held);
            peers.serve(Arc::new(move |retry, cancel, events| {
                let serving = serving.clone();
                Box::pin(async move {
                    match serving.upgrade() {
                        Some(held) => held.serve_forwarded(retry, cancel, events).await,
                        None => ForwardedOutcome::Failed {
                            error: smcp_proto::error::ErrorObject::internal(
                                "this gateway instance is stopping",
                            ),
                        },
                    }
                })
            }));
        }
        let upstreams = config
            .upstreams
            .into_iter()
            .map(|c| Upstream::new(c, &settings.separator, settings.held_call_ttl))
            .collect::<Result<Vec<_>, _>>()?;
        let listed = futures_util::future::join_all(upstreams.iter().map(|u| async move {
            (
                u,
                tokio::time::timeout(u.config.timeout, catalog::list(u)).await,
            )
        }))
        .await;
        let mut claims = Claims::default();
        let mut first = HashMap::new();
        let mut capabilities = HashMap::new();
        for (upstream, listing) in listed {
            match listing {
                Ok(Ok(listing)) => {
                    claims.claim(upstream.name(), &listing)?;
                    tracing::info!(
                        upstream = %upstream.name(),
                        tools = listing.tools.len(),
                        prompts = listing.prompts.len(),
                        resources = listing.resources.len(),
                        templates = listing.templates.len(),
                        era = ?upstream.client().era(),
                        "upstream listed"
                    );
                    capabilities.insert(upstream.name().to_owned(), listing.capabilities.clone());
                    first.insert(upstream.name().to_owned(), listing);
                }
                Ok(Err(e)) => {
                    tracing::warn!(upstream = %upstream.name(), error = %e, "upstream not listed");
                    upstream.mark_down(e.to_string());
                }
                Err(_) => {
                    tracing::warn!(upstream = %upstream.name(), "upstream did not list in time");
                    upstream.mark_down("no answer in time".to_owned());
                }
            }
        }
        Ok(Self {
            inner: Arc::new(Inner {
                upstreams,
                held,
                claims: Mutex::new(claims),
                capabilities,
                stop: tokio_util::sync::CancellationToken::new(),
                first: Mutex::new(first),
                watches: Arc::new(watch::Watches::new()),
                #[cfg(feature = "files")]
                files: std::sync::OnceLock::new(),
            }),
        })
    }

    /// What the server needs from the gateway before it is built: a capability only where an
    /// upstream listed at start has it (tools always: upstreams come and go, and the tool list
    /// with them), completion routed to the upstream owning the reference, and the readiness
    /// check naming an upstream that is down.
    pub fn configure(&self, builder: ServerBuilder) -> ServerBuilder {
        let any = |f: fn(&smcp_proto::capabilities::ServerCapabilities) -> bool| {
            self.inner.capabilities.values().any(f)
        };
        let mut builder = builder
            .tools_list_changed(true)
            .prompts_list_changed(any(|c| c.prompts.is_some()))
            .resources_list_changed(any(|c| c.resources.is_some()))
            .logging(any(|c| c.logging.is_some()))
            .health_check(Readiness {
                inner: Arc::clone(&self.inner),
            });
        // SEP-2631: file arguments checked and resolved before a call (first, so the tasks
        // path sees them too), `files/*` served.
        #[cfg(feature = "files")]
        if let Some(files) = self.inner.files.get() {
            builder = builder.extension(smcp_files::FilesExtension::new(files.clone()));
        }
        // Tasks pass through to 2026-07-28 upstreams only (a 2025 session has no tasks).
        let tasks_upstream = self.inner.upstreams.iter().any(|u| {
            u.stateless()
                && self.inner.capabilities.get(u.name()).is_some_and(|c| {
                    c.extensions
                        .as_ref()
                        .is_some_and(|e| e.contains_key(smcp_proto::ext::tasks::EXTENSION_ID))
                })
        });
        if tasks_upstream {
            builder = builder.extension(tasks::TasksThrough::new(
                self.inner.upstreams.clone(),
                self.inner.stop.clone(),
            ));
        }
        // Resource subscriptions where an upstream can watch a resource.
        if self
            .inner
            .upstreams
            .iter()
            .any(|u| self.inner.subscribes(u))
        {
            builder = builder
                .resources_subscribe(true)
                .extension(watch::ResourceWatch {
                    owner: Arc::new({
                        let inner = Arc::clone(&self.inner);
                        move |uri: &str| {
                            inner
                                .resource_owner(uri)
                                .filter(|upstream| inner.subscribes(upstream))
                        }
                    }),
                    watches: Arc::clone(&self.inner.watches),
                });
        }
        if any(|c| c.completions.is_some()) {
            let inner = Arc::clone(&self.inner);
            builder = builder.completion(move |request: smcp_server::CompletionRequest| {
                let inner = Arc::clone(&inner);
                async move { proxy::complete(request, |reference| inner.route(reference)).await }
            });
        }
        builder
    }

    /// Installs what was listed at start in `server` and keeps it current: each upstream's
    /// `list_changed` notifications and each restart list it again.
    pub fn attach(&self, server: &Server) {
        let first = std::mem::take(
            &mut *self
                .inner
                .first
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for upstream in &self.inner.upstreams {
            let listing = first.get(upstream.name()).cloned().unwrap_or_default();
            let installed = catalog::install(
                server,
                upstream,
                &self.inner.held,
                &Installed::default(),
                listing,
            );
            tokio::spawn(watch(
                Arc::clone(&self.inner),
                Arc::clone(upstream),
                server.clone(),
                installed,
            ));
        }
        if let Some(added) = self.inner.watches.take_receiver() {
            tokio::spawn(watch::run(
                Arc::clone(&self.inner.watches),
                server.clone(),
                self.inner.stop.clone(),
                added,
            ));
        }
    }

    /// Serves SEP-2631 files through `files` (the gateway's own store and data plane, which
    /// the caller mounts beside the endpoint with `files.router()`): call before
    /// [`Gateway::configure`]. A file argument goes to each upstream as it takes it (uploaded
    /// again, or inline as `data:`), and an upstream's file outputs are stored here.
    #[cfg(feature = "files")]
    pub fn serve_files(&self, files: smcp_files::Files) {
        for upstream in &self.inner.upstreams {
            upstream
                .files
                .gateway
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let _ = self.inner.files.set(files);
    }

    /// How many calls wait for a client's answer now.
    pub fn held_calls(&self) -> usize {
        self.inner.held.len()
    }

    /// Names of the upstreams that are down, with the reason.
    pub fn down(&self) -> Vec<(String, String)> {
        self.inner.down()
    }

    /// Closes every upstream (stdio programs are asked to exit, then stopped).
    pub async fn close(&self) {
        self.inner.stop.cancel();
        for upstream in &self.inner.upstreams {
            upstream.client().close().await;
        }
    }
}

impl Inner {
    fn down(&self) -> Vec<(String, String)> {
        self.upstreams
            .iter()
            .filter_map(|u| match u.health() {
                Health::Up => None,
                Health::Down(reason) => Some((u.name().to_owned(), reason)),
            })
            .collect()
    }

    /// Lists what `upstream` serves again and puts it in the server in place of `had`;
    /// whether it could be listed.
    async fn refresh(
        &self,
        upstream: &Arc<Upstream>,
        server: &Server,
        had: &mut Installed,
    ) -> bool {
        let listed = tokio::time::timeout(upstream.config.timeout, catalog::list(upstream)).await;
        let listing = match listed {
            Ok(Ok(listing)) => listing,
            Ok(Err(e)) => {
                tracing::warn!(upstream = %upstream.name(), error = %e, "upstream not listed");
                upstream.failed(&e);
                return false;
            }
            Err(_) => {
                tracing::warn!(upstream = %upstream.name(), "upstream did not list in time");
                upstream.mark_down("no answer in time".to_owned());
                return false;
            }
        };
        upstream.succeeded();
        let claimed = self
            .claims
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .claim(upstream.name(), &listing);
        if let Err(e) = claimed {
            tracing::error!(error = %e, "upstream items refused");
            upstream.set_health(Health::Down(e.to_string()));
            return false;
        }
        *had = catalog::install(server, upstream, &self.held, had, listing);
        true
    }

    /// Whether `upstream` said at start that it can watch a resource (`resources.subscribe`).
    fn subscribes(&self, upstream: &Upstream) -> bool {
        self.capabilities
            .get(upstream.name())
            .and_then(|c| c.resources.as_ref())
            .and_then(|r| r.subscribe)
            == Some(true)
    }

    /// The upstream serving `uri`: the one listing it, else the one whose template matches
    /// it.
    fn resource_owner(&self, uri: &str) -> Option<Arc<Upstream>> {
        let claims = self.claims.lock().unwrap_or_else(PoisonError::into_inner);
        let owner = match claims.resources.get(uri) {
            Some((owner, _)) => owner.clone(),
            None => claims
                .templates
                .iter()
                .find(|(template, _)| {
                    smcp_server::UriTemplate::parse(template)
                        .is_ok_and(|t| t.matches(uri).is_some())
                })
                .map(|(_, (owner, _))| owner.clone())?,
        };
        drop(claims);
        self.upstreams.iter().find(|u| u.name() == owner).cloned()
    }

    /// The upstream owning a completion's reference, with the reference as it knows it.
    fn route(
        &self,
        reference: &smcp_proto::server::utilities::completion::CompletionReference,
    ) -> proxy::Route {
        use smcp_proto::server::utilities::completion::CompletionReference;
        let claims = self.claims.lock().unwrap_or_else(PoisonError::into_inner);
        let (owner, upstream_reference) = match reference {
            CompletionReference::Prompt(p) => {
                let (owner, original) = claims.prompts.get(&p.name)?;
                (owner.clone(), proxy::prompt_reference(original))
            }
            CompletionReference::ResourceTemplate(t) => {
                let (owner, original) = claims.templates.get(&t.uri)?;
                (owner.clone(), proxy::template_reference(original))
            }
        };
        drop(claims);
        let upstream = self.upstreams.iter().find(|u| u.name() == owner)?;
        Some((Arc::clone(upstream), upstream_reference))
    }
}

/// Keeps what `upstream` serves current in `server` until the gateway is closed or the
/// server drains.
async fn watch(inner: Arc<Inner>, upstream: Arc<Upstream>, server: Server, mut had: Installed) {
    let stop = inner.stop.clone();
    let mut pause = upstream.config.restart.initial_backoff;
    let mut listed_up = upstream.health() == Health::Up;
    while !stop.is_cancelled() && !server.is_draining() {
        if !listed_up {
            // A stdio program is up again when its restart says so; an HTTP upstream when it
            // answers a list: tried again after a pause that grows.
            let back = async {
                if upstream.config.transport() == config::Transport::Stdio {
                    upstream.wait_up().await;
                } else {
                    tokio::time::sleep(pause).await;
                }
            };
            tokio::select! {
                () = back => {}
                () = stop.cancelled() => return,
            }
            if !inner.refresh(&upstream, &server, &mut had).await {
                // Not listed (a stdio program may be up and still not list): try again after
                // the pause, which grows.
                tokio::select! {
                    () = tokio::time::sleep(pause) => {}
                    () = stop.cancelled() => return,
                }
                pause = (pause * 2).min(upstream.config.restart.max_backoff);
                continue;
            }
            pause = upstream.config.restart.initial_backoff;
        }
        let mut changes = upstream.client().listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(true),
            resources_list_changed: Some(true),
            ..SubscriptionFilter::default()
        });
        loop {
            let event = tokio::select! {
                event = changes.next() => event,
                () = stop.cancelled() => return,
            };
            match event {
                Some(Ok(
                    SubscriptionEvent::ToolsListChanged
                    | SubscriptionEvent::PromptsListChanged
                    | SubscriptionEvent::ResourcesListChanged,
                )) => {
                    pause = upstream.config.restart.initial_backoff;
                    inner.refresh(&upstream, &server, &mut had).await;
                }
                Some(Ok(_)) => pause = upstream.config.restart.initial_backoff,
                Some(Err(e)) => {
                    tracing::debug!(upstream = %upstream.name(), error = %e, "listen ended");
                    upstream.failed(&e);
                    break;
                }
                None => break,
            }
        }
        // The stream ended: the upstream went away (then it is down, and its tools are
        // listed again when it is back) or it does not keep listen streams open; listen again
        // after a pause that grows while nothing comes.
        listed_up = upstream.health() == Health::Up;
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = stop.cancelled() => return,
        }
        pause = (pause * 2).min(upstream.config.restart.max_backoff);
    }
}

/// `/readyz`: every upstream up, or the ones down named.
#[derive(Debug)]
struct Readiness {
    inner: Arc<Inner>,
}

impl HealthCheck for Readiness {
    fn name(&self) -> &str {
        "upstreams"
    }

    fn check(&self) -> CheckFuture<'_> {
        Box::pin(async move {
            let down = self.inner.down();
            if down.is_empty() {
                return Ok(());
            }
            let names: Vec<String> = down
                .iter()
                .map(|(name, reason)| format!("{name}: {reason}"))
                .collect();
            Err(Unhealthy::new(format!(
                "upstream down: {}",
                names.join("; ")
            )))
        })
    }
}
