//! Multi round-trip `requestState` (MRTR): the keys that seal it and how long it stays valid;
//! `--generate-key` makes a key for them or for the file transfer tokens.

use std::time::Duration;

/// The `requestState` keys.
#[derive(Debug, clap::Args)]
pub(crate) struct StateArgs {
    /// A key sealing multi round-trip `requestState`, as `ID:BASE64` (32 bytes). Repeat to
    /// rotate: the first seals, all open. Instances that share keys accept each other's
    /// retries. Without one, a random per-process key is used.
    #[arg(
        long = "state-key",
        env = "SMCPD_STATE_KEYS",
        value_delimiter = ',',
        value_name = "ID:BASE64"
    )]
    state_keys: Vec<String>,
    /// How long a `requestState` stays valid, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    state_ttl_secs: u64,
    /// Print a freshly generated key (for --state-key or --files-key) and exit.
    #[arg(long, alias = "generate-state-key")]
    pub(crate) generate_key: bool,
}

impl StateArgs {
    /// The multi round-trip settings; `None` without `--state-key`.
    pub(crate) fn mrtr(&self) -> anyhow::Result<Option<smcp_server::mrtr::MrtrConfig>> {
        Ok(smcpd::mrtr_config(
            &self.state_keys,
            Duration::from_secs(self.state_ttl_secs),
        )?)
    }
}
