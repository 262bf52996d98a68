//! The fixture surface of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, scenarios for revision 2026-07-28).
//!
//! Names and payloads are fixed by the suite; see `conformance/README.md` and the suite's
//! scenario descriptions. This is a test fixture, not a demo: `smcpd` serves the demo tools.
//!
//! One file per group of fixtures, each a `with_*` step of the builder (`features`: tools,
//! triggers, resources, prompts; `mrtr`; `tasks`; `stateful`), and `common` for what they
//! share; [`server_with_files`] chains them all.

/// The SEP-2631 `files_*` fixtures; they live in `smcpd`, which serves them too
/// (`smcpd --sep2631-fixtures`).
pub use smcpd::sep2631_fixtures as files;

mod common;
mod features;
mod mrtr;
mod stateful;
mod tasks;

pub use common::{PNG_BASE64, WAV_BASE64};
pub use features::{json_schema_2020_12, with_prompts, with_resources, with_tools, with_triggers};
pub use mrtr::with_mrtr;
pub use stateful::with_stateful;
pub use tasks::{with_tasks, with_tasks_in};

use smcp_server::{BuildError, Server};

/// The complete fixture server.
pub fn server() -> Result<Server, BuildError> {
    server_with_files(None)
}

/// The fixture server; with a file service it also advertises `files` and serves the
/// SEP-2631 `files_*` fixtures (see [`files`]).
pub fn server_with_files(file_service: Option<smcp_files::Files>) -> Result<Server, BuildError> {
    server_with(Fixture {
        files: file_service,
        ..Fixture::default()
    })
}

/// What the fixture server is built with beyond its fixtures.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Fixture {
    /// A file service: `files` is advertised and the SEP-2631 `files_*` fixtures are served.
    pub files: Option<smcp_files::Files>,
    /// The keys sealing `requestState` (instances of one deployment share them); `None` for
    /// a random per-process key.
    pub mrtr: Option<smcp_server::mrtr::MrtrConfig>,
    /// State shared with the other instances of a deployment through Redis: the change bus,
    /// the single-use replay guard, the 2025-era session store and the relay of their live
    /// traffic, and the SEP-2663 task store with its leases, as `smcpd --redis` has them.
    pub cluster: Option<smcpd::cluster::Cluster>,
}

impl Fixture {
    /// Nothing beyond the fixtures: one process, random keys.
    pub fn new() -> Self {
        Self::default()
    }

    /// With a file service.
    #[must_use]
    pub fn files(mut self, files: Option<smcp_files::Files>) -> Self {
        self.files = files;
        self
    }

    /// With the keys that seal `requestState`.
    #[must_use]
    pub fn mrtr(mut self, mrtr: Option<smcp_server::mrtr::MrtrConfig>) -> Self {
        self.mrtr = mrtr;
        self
    }

    /// With state shared through Redis.
    #[must_use]
    pub fn cluster(mut self, cluster: Option<smcpd::cluster::Cluster>) -> Self {
        self.cluster = cluster;
        self
    }
}

/// The fixture server as `fixture` says.
pub fn server_with(fixture: Fixture) -> Result<Server, BuildError> {
    let mut builder = Server::builder("smcp-conformance-server", env!("CARGO_PKG_VERSION"))
        .instructions("Fixture server for the MCP conformance suite.")
        .logging(true);
    if let Some(f) = fixture.files {
        builder = files::with_files(builder.extension(smcp_files::FilesExtension::new(f)));
    }
    if let Some(mrtr) = fixture.mrtr {
        builder = builder.mrtr(mrtr);
    }
    let mut tasks = smcp_tasks::TasksExtension::builder();
    if let Some(cluster) = &fixture.cluster {
        tasks = tasks.store(std::sync::Arc::new(smcp_redis::RedisTaskStore::new(
            &cluster.redis,
            smcp_tasks::DEFAULT_MAX_TASKS,
        )));
        let legacy = smcp_server::legacy::LegacyConfig::default();
        builder = builder
            .change_bus(std::sync::Arc::new(cluster.bus.clone()))
            .replay_guard(smcp_redis::RedisReplayGuard::new(&cluster.redis))
            .session_store(smcp_redis::RedisSessionStore::new(
                &cluster.redis,
                legacy.max_sessions,
                legacy.idle_timeout,
            ))
            .session_relay(
                smcp_redis::RedisSessionRelay::builder(&cluster.bus)
                    .log_ttl(legacy.idle_timeout)
                    .build(),
            );
    }
    let tasks = tasks.build();
    let server = with_stateful(with_tasks_in(
        with_mrtr(with_triggers(with_prompts(with_resources(with_tools(
            builder,
        ))))),
        tasks.clone(),
    ))
    .build()?;
    // A shared store's lease keeper (tasks of a lost instance end failed) starts now.
    tasks.attach(&server);
    Ok(server)
}
