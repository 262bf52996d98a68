//! `smcpd`, the smcp reference server: its demo tool set and its configuration.
//!
//! The binary (`src/main.rs`) parses flags and serves [`demo_server`] on loopback.

pub mod demo;
#[cfg(feature = "files")]
pub mod files_demo;
pub mod mrtr_demo;
#[cfg(feature = "files")]
pub mod sep2631_fixtures;

pub use demo::{DemoConfig, demo_server, demo_server_with, run_clock};

/// Where `smcpd` listens when not told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8931";

/// The multi round-trip settings for `--state-key` values (`ID:BASE64`; the first seals, all
/// open) and a state TTL. `None` when no key is given.
pub fn mrtr_config(
    keys: &[String],
    ttl: std::time::Duration,
) -> Result<Option<smcp_server::mrtr::MrtrConfig>, smcp_server::KeyError> {
    let Some(ring) = smcp_server::KeyRing::parse_all(keys)? else {
        return Ok(None);
    };
    let mut config = smcp_server::mrtr::MrtrConfig::new(ring);
    config.state_ttl = ttl;
    Ok(Some(config))
}

/// A new random key, `ID:BASE64URL`, for `--state-key` or `--files-key`.
pub fn generate_key() -> Result<String, smcp_server::KeyError> {
    // The id travels in clear in every token, so it comes from separate randomness.
    let id = format!("k{}", smcp_server::keys::random_hex::<4>()?);
    Ok(smcp_server::Key::generate(id)?.to_spec())
}
