//! One stateless MCP **2026-07-28** endpoint in front of MCP servers of any era and transport:
//! stdio programs (spawned, started again with backoff when they exit), 2025-11-25,
//! 2025-06-18 and 2025-03-26 HTTP sessions, 2024-11-05 HTTP+SSE and 2026-07-28 HTTP, each
//! reached with `smcp-client`, which negotiates its revision.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
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
//! The catalog is every upstream's tools under its prefix (`everything_echo`). A call runs in
//! a task of its own: when a 2025 upstream asks the user something in the middle of it
//! (`elicitation/create`, `sampling/createMessage`, `roots/list`), the client gets an
//! `InputRequiredResult` whose sealed `requestState` names this instance and the held call,
//! and its retry answers the upstream and the call goes on. Progress and log lines pass
//! through; a client that goes away cancels the upstream request. `docs/gateway.md` has the
//! configuration, the era translation table and the failure modes.
//!
//! # Layout
//!
//! | module | what |
//! |---|---|
//! | `config` | [`GatewayConfig`]: the TOML file, checked before anything starts |
//! | `upstream` | one upstream: its client, health, concurrency limit, restarts; a call in its own task |
//! | `held` | calls held for the client's answer: the `InputRequiredResult` and the retry |
//! | `bridge` | the upstream client's input handler: an upstream's question to the call it belongs to |
//! | `catalog` | the namespaced tools, collisions, the tool that calls through |
//! | `error` | [`GatewayError`]; how an upstream's failure reaches the client |

mod bridge;
mod catalog;
pub mod config;
mod error;
mod held;
mod upstream;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::StreamExt;
use smcp_client::{SubscriptionEvent, SubscriptionFilter};
use smcp_server::core::health::{CheckFuture, HealthCheck, Unhealthy};
use smcp_server::{Server, ServerBuilder};

pub use config::{ConfigError, GatewayConfig};
pub use error::GatewayError;

use crate::catalog::Owners;
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
    /// Which upstream serves each tool name.
    owners: Mutex<Owners>,
    /// Ends the watchers.
    stop: tokio_util::sync::CancellationToken,
    /// The tools listed at start, installed by [`Gateway::attach`].
    first: Mutex<HashMap<String, Vec<(String, smcp_proto::server::tools::Tool)>>>,
}

impl Gateway {
    /// Starts every upstream and lists its tools, all at once, each within its timeout.
    ///
    /// An upstream that does not answer is marked down (a stdio one is started again with
    /// backoff) and its tools join the catalog when it comes up; two upstreams offering the
    /// same tool name after their prefixes stop the start, naming both.
    pub async fn start(config: GatewayConfig) -> Result<Self, GatewayError> {
        config.check()?;
        let settings = config.gateway;
        let held = Arc::new(HeldCalls::new(
            settings.held_call_ttl,
            settings.max_held_calls,
        ));
        let upstreams = config
            .upstreams
            .into_iter()
            .map(|c| Upstream::new(c, &settings.separator, settings.held_call_ttl))
            .collect::<Result<Vec<_>, _>>()?;
        let listed = futures_util::future::join_all(upstreams.iter().map(|u| async move {
            let tools = tokio::time::timeout(u.config.timeout, u.client().list_tools()).await;
            (u, tools)
        }))
        .await;
        let mut owners = Owners::new();
        let mut first = HashMap::new();
        for (upstream, tools) in listed {
            match tools {
                Ok(Ok(tools)) => {
                    let served = catalog::served(upstream, tools);
                    catalog::claim(&mut owners, upstream.name(), &served)?;
                    tracing::info!(
                        upstream = %upstream.name(),
                        tools = served.len(),
                        era = ?upstream.client().era(),
                        "upstream listed"
                    );
                    first.insert(upstream.name().to_owned(), served);
                }
                Ok(Err(e)) => {
                    tracing::warn!(upstream = %upstream.name(), error = %e, "upstream not listed");
                    upstream.set_health(Health::Down(e.to_string()));
                    upstream.failed(&e);
                }
                Err(_) => {
                    tracing::warn!(upstream = %upstream.name(), "upstream did not list its tools in time");
                    upstream.set_health(Health::Down("no answer in time".to_owned()));
                }
            }
        }
        Ok(Self {
            inner: Arc::new(Inner {
                upstreams,
                held,
                owners: Mutex::new(owners),
                stop: tokio_util::sync::CancellationToken::new(),
                first: Mutex::new(first),
            }),
        })
    }

    /// What the server needs from the gateway before it is built: tool list changes
    /// announced (upstreams come and go), logging (upstream log lines pass through), and the
    /// readiness check naming an upstream that is down.
    pub fn configure(&self, builder: ServerBuilder) -> ServerBuilder {
        builder
            .tools_list_changed(true)
            .logging(true)
            .health_check(Readiness {
                inner: Arc::clone(&self.inner),
            })
    }

    /// Installs the tools listed at start in `server` and keeps them current: each upstream's
    /// `tools/list_changed` and each restart lists its tools again.
    pub fn attach(&self, server: &Server) {
        let first = std::mem::take(
            &mut *self
                .inner
                .first
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for upstream in &self.inner.upstreams {
            let tools = first.get(upstream.name()).cloned().unwrap_or_default();
            let served = catalog::install(server, upstream, &self.inner.held, &[], tools);
            tokio::spawn(watch(
                Arc::clone(&self.inner),
                Arc::clone(upstream),
                server.clone(),
                served,
            ));
        }
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

    /// Lists `upstream`'s tools again and puts them in the server in place of `had`.
    async fn refresh(&self, upstream: &Arc<Upstream>, server: &Server, had: &mut Vec<String>) {
        let tools = match upstream.client().list_tools().await {
            Ok(tools) => tools,
            Err(e) => {
                tracing::warn!(upstream = %upstream.name(), error = %e, "upstream tools not listed");
                upstream.failed(&e);
                return;
            }
        };
        let served = catalog::served(upstream, tools);
        let claimed = catalog::claim(
            &mut self.owners.lock().unwrap_or_else(PoisonError::into_inner),
            upstream.name(),
            &served,
        );
        if let Err(e) = claimed {
            tracing::error!(error = %e, "upstream tools refused");
            upstream.set_health(Health::Down(e.to_string()));
            return;
        }
        *had = catalog::install(server, upstream, &self.held, had, served);
    }
}

/// Keeps `upstream`'s tools current in `server` until the gateway is closed or the server
/// drains.
async fn watch(inner: Arc<Inner>, upstream: Arc<Upstream>, server: Server, mut had: Vec<String>) {
    let stop = inner.stop.clone();
    let mut pause = upstream.config.restart.initial_backoff;
    let mut listed_up = upstream.health() == Health::Up;
    while !stop.is_cancelled() && !server.is_draining() {
        if !listed_up {
            tokio::select! {
                () = upstream.wait_up() => {}
                () = stop.cancelled() => return,
            }
            inner.refresh(&upstream, &server, &mut had).await;
        }
        let mut changes = upstream.client().listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..SubscriptionFilter::default()
        });
        loop {
            let event = tokio::select! {
                event = changes.next() => event,
                () = stop.cancelled() => return,
            };
            match event {
                Some(Ok(SubscriptionEvent::ToolsListChanged)) => {
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
