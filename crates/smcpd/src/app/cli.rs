//! The command line: every subsystem's flags, flattened in the order `--help` shows them.

use clap::{Args, Parser, Subcommand};

use super::{auth, files, legacy, limits, observe, redis, serve, state, tasks, tls};

/// The smcp reference MCP server (protocol 2026-07-28, Streamable HTTP or stdio).
#[derive(Debug, Parser)]
#[command(version, about, args_conflicts_with_subcommands = true)]
pub(crate) struct Invocation {
    /// What to run instead of the demo server.
    #[command(subcommand)]
    command: Option<Command>,
    /// The demo server's flags.
    #[command(flatten)]
    cli: Cli,
}

/// What smcpd runs besides the demo server. Deferred: the flags of `gateway` (every flag of
/// the server again) are built only when it is asked for, not on every start.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
enum Command {
    /// One MCP endpoint in front of the MCP servers a TOML file names (stdio programs and
    /// HTTP servers of any revision), with every flag of the demo server.
    Gateway(GatewayArgs),
}

/// `smcpd gateway`.
#[derive(Debug, Args)]
struct GatewayArgs {
    /// The gateway's configuration (TOML; see docs/gateway.md).
    #[arg(long, env = "SMCPD_GATEWAY_CONFIG", value_name = "FILE")]
    config: std::path::PathBuf,
    /// The server's flags.
    #[command(flatten)]
    cli: Cli,
}

impl Invocation {
    /// The flags, with the gateway's configuration when `smcpd gateway` was asked for.
    pub(crate) fn into_cli(self) -> Cli {
        match self.command {
            None => self.cli,
            Some(Command::Gateway(GatewayArgs { config, mut cli })) => {
                cli.gateway = Some(config);
                cli
            }
        }
    }
}

/// Every flag of the server.
#[derive(Debug, Args)]
pub(crate) struct Cli {
    /// The transport, its limits and deadlines.
    #[command(flatten)]
    pub(crate) serve: serve::ServeArgs,
    /// Metrics, traces and probes.
    #[command(flatten)]
    pub(crate) observe: observe::ObserveArgs,
    /// The multi round-trip `requestState` keys.
    #[command(flatten)]
    pub(crate) state: state::StateArgs,
    /// HTTPS.
    #[command(flatten)]
    pub(crate) tls: tls::TlsArgs,
    /// SEP-2631 file transfer.
    #[command(flatten)]
    pub(crate) files: files::FilesArgs,
    /// SEP-2663 tasks.
    #[command(flatten)]
    pub(crate) tasks: tasks::TasksArgs,
    /// Sessions of the earlier revisions (2025-11-25, 2025-06-18, 2025-03-26).
    #[command(flatten)]
    pub(crate) legacy: legacy::LegacyArgs,
    /// Rate limits per caller and per tool.
    #[command(flatten)]
    pub(crate) limits: limits::LimitArgs,
    /// OAuth 2.1 authorization.
    #[command(flatten)]
    pub(crate) auth: auth::AuthArgs,
    /// Several instances sharing state in Redis.
    #[command(flatten)]
    pub(crate) redis: redis::RedisArgs,
    /// Runtime worker threads; 0 = one per CPU this process may run on (1 → a
    /// single-threaded runtime).
    #[arg(long, env = "SMCPD_THREADS", default_value_t = 0)]
    pub(crate) threads: usize,
    /// Log filter (`RUST_LOG` syntax), e.g. `info` or `smcp_server=debug`.
    #[arg(long, env = "SMCPD_LOG", default_value = "info")]
    pub(crate) log: String,
    /// `smcpd gateway --config FILE`: the gateway's configuration.
    #[arg(skip)]
    pub(crate) gateway: Option<std::path::PathBuf>,
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::Invocation;

    /// clap's own checks of every flag, the deferred `gateway` subcommand's included.
    #[test]
    fn the_command_line_is_consistent() {
        Invocation::command().debug_assert();
    }

    #[test]
    fn gateway_takes_the_server_flags_and_the_demo_does_not_need_it() {
        let cli = Invocation::try_parse_from([
            "smcpd",
            "gateway",
            "--config",
            "g.toml",
            "--listen",
            "127.0.0.1:9",
            "--threads",
            "1",
        ])
        .map(Invocation::into_cli)
        .map_err(|e| e.to_string());
        let cli = cli.as_ref().map_err(String::as_str);
        assert_eq!(
            cli.map(|c| (c.gateway.clone(), c.serve.listen.to_string(), c.threads)),
            Ok((Some("g.toml".into()), "127.0.0.1:9".to_owned(), 1))
        );
        let demo = Invocation::try_parse_from(["smcpd", "--threads", "2"])
            .map(Invocation::into_cli)
            .map_err(|e| e.to_string());
        assert_eq!(
            demo.as_ref()
                .map(|c| (c.gateway.clone(), c.threads))
                .map_err(String::as_str),
            Ok((None, 2))
        );
        let missing = Invocation::try_parse_from(["smcpd", "gateway"]).map(|_| ());
        assert!(
            missing
                .as_ref()
                .is_err_and(|e| e.to_string().contains("--config")),
            "{missing:?}"
        );
    }
}
