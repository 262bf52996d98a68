//! `smcpd gateway --config FILE`: the server in front of the upstreams the file names, with
//! the plumbing every smcpd server has (HTTPS, authorization, the earlier revisions, the
//! shared state of `--redis`, metrics, readiness, rate limits) and none of the demo tools.

use smcp_server::{BuildError, Server};

use crate::plumbing::{DemoConfig, Plumbing};

/// The gateway's server: `gateway`'s tools, kept current, behind the flags' plumbing.
///
/// The demo's own content (its files and tasks) is not served; a file store configured for
/// the demo is reported and left unused.
pub fn gateway_server_with(
    config: DemoConfig,
    gateway: &smcp_gateway::Gateway,
) -> Result<Server, BuildError> {
    let (plumbing, content) = Plumbing::split(config);
    #[cfg(feature = "files")]
    if content.files.is_some() || content.sep2631_fixtures {
        tracing::warn!("the gateway serves no files of its own; the file store flags are unused");
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
