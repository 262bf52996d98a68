//! Sessions of the earlier revisions (2025-11-25, 2025-06-18, 2025-03-26) on the same
//! endpoint (feature `legacy`): `--no-legacy`, `--max-sessions`, `--session-idle-timeout`.
//! Without the feature, no flags and nothing to configure.

#[cfg(feature = "legacy")]
use std::time::Duration;

/// The earlier revisions' sessions on the same endpoint (`docs/sessions.md`).
#[cfg(feature = "legacy")]
#[derive(Debug, clap::Args)]
pub(crate) struct LegacyArgs {
    /// Serve only MCP 2026-07-28: answer a 2025-11-25 (or earlier) `initialize` with -32022
    /// instead of starting a session.
    #[arg(long)]
    no_legacy: bool,
    /// Most sessions of the earlier revisions held at once; past it `initialize` gets 503.
    #[arg(long, value_name = "N", default_value_t = smcp_server::legacy::LegacyConfig::default().max_sessions,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_sessions: usize,
    /// A session without a request for this long ends (its id then gets 404).
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = smcpd::parse_duration)]
    session_idle_timeout: Duration,
}

#[cfg(feature = "legacy")]
impl LegacyArgs {
    /// Sets the sessions' settings in `config`.
    pub(crate) fn configure(&self, config: &mut smcpd::DemoConfig) {
        config.legacy = smcp_server::legacy::LegacyConfig {
            enabled: !self.no_legacy,
            max_sessions: self.max_sessions,
            idle_timeout: self.session_idle_timeout,
            ..smcp_server::legacy::LegacyConfig::default()
        };
    }
}

/// Without the feature: no flags.
#[cfg(not(feature = "legacy"))]
#[derive(Debug, clap::Args)]
pub(crate) struct LegacyArgs {}

#[cfg(not(feature = "legacy"))]
impl LegacyArgs {
    /// Nothing to configure.
    pub(crate) fn configure(&self, _config: &mut smcpd::DemoConfig) {}
}
