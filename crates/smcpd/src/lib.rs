//! `smcpd`, the smcp reference server: its demo tool set and its configuration.
//!
//! The binary (`src/main.rs`) parses flags and serves [`demo_server`] on loopback.

pub mod demo;
pub mod files_demo;
pub mod mrtr_demo;
pub mod sep2631_fixtures;

pub use demo::{DemoConfig, demo_server, demo_server_with, run_clock};

/// Where `smcpd` listens when not told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8931";

/// The multi round-trip settings for `--state-key` values (`ID:BASE64`; the first seals, all
/// open) and a state TTL. `None` when no key is given.
pub fn mrtr_config(
    keys: &[String],
    ttl: std::time::Duration,
) -> Result<Option<smcp_server::mrtr::MrtrConfig>, smcp_server::mrtr::KeyError> {
    use smcp_server::mrtr::{KeyRing, MrtrConfig, StateKey};
    let mut parsed = keys.iter().map(|k| StateKey::parse(k.trim()));
    let Some(active) = parsed.next().transpose()? else {
        return Ok(None);
    };
    let mut ring = KeyRing::new(active);
    for key in parsed {
        ring = ring.with_previous(key?);
    }
    let mut config = MrtrConfig::new(ring);
    config.state_ttl = ttl;
    Ok(Some(config))
}

/// A new random `--state-key` value, `ID:BASE64URL`.
pub fn generate_state_key() -> Result<String, smcp_server::mrtr::KeyError> {
    use base64::Engine;
    let bytes = smcp_server::mrtr::random_key()?;
    // The id travels in clear in every token, so it comes from separate randomness.
    let id_bytes = smcp_server::mrtr::random_key()?;
    let id = format!(
        "k{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&id_bytes[..6])
    );
    Ok(format!(
        "{id}:{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    ))
}
