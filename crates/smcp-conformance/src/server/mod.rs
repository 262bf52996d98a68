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
pub use tasks::with_tasks;

use smcp_server::{BuildError, Server};

/// The complete fixture server.
pub fn server() -> Result<Server, BuildError> {
    server_with_files(None)
}

/// The fixture server; with a file service it also advertises `files` and serves the
/// SEP-2631 `files_*` fixtures (see [`files`]).
pub fn server_with_files(file_service: Option<smcp_files::Files>) -> Result<Server, BuildError> {
    let mut builder = Server::builder("smcp-conformance-server", env!("CARGO_PKG_VERSION"))
        .instructions("Fixture server for the MCP conformance suite.")
        .logging(true);
    if let Some(f) = file_service {
        builder = files::with_files(builder.extension(smcp_files::FilesExtension::new(f)));
    }
    with_stateful(with_tasks(with_mrtr(with_triggers(with_prompts(
        with_resources(with_tools(builder)),
    )))))
    .build()
}
