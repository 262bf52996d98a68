//! `smcpd gateway --config FILE`: the server in front of the upstreams the file names, with
//! the plumbing every smcpd server has (HTTPS, authorization, the earlier revisions, the
//! shared state of `--redis`, metrics, readiness, rate limits) and none of the demo tools.

use smcp_server::{BuildError, Server};

use crate::plumbing::{DemoConfig, Plumbing};

/// The gateway's server: `gateway`'s tools, kept current, behind the flags' plumbing.
///
/// The demo's own content (its tools, fixtures and tasks) is not served; a file store is the
/// gateway's own, for its clients' files (`docs/gateway.md`, "Files").
pub fn gateway_server_with(
    config: DemoConfig,
    gateway: &smcp_gateway::Gateway,
) -> Result<Server, BuildError> {
    let (plumbing, content) = Plumbing::split(config);
    // SEP-2631 through the gateway: its clients' files in its own store, moved to and from
    // the upstreams as each takes them.
    #[cfg(feature = "files")]
    {
        if let Some(files) = &content.files {
            gateway.serve_files(files.clone());
        }
        if content.sep2631_fixtures {
            tracing::warn!(
                "the gateway serves no fixture tools of its own; --sep2631-fixtures is unused"
            );
        }
    }
    let _ = content;
    let builder = gateway.configure(
        Server::builder("smcp-gateway", env!("CARGO_PKG_VERSION"))
            .title("smcp gateway")
            .description("One MCP 2026-07-28 endpoint in front of the configured upstream servers"),
    );
    let server = plumbing.finish(builder)?;
    gateway.attach(&server);
    Ok(server)
}
