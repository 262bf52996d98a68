//! `smcpd`, the smcp reference server: its demo tool set and its configuration.
//!
//! The binary (`src/main.rs`) parses flags and serves [`demo_server`] on loopback.
//!
//! # Features
//!
//! Every feature but `mimalloc` is on by default; each one off removes its flags and its code.
//!
//! | feature | default | what |
//! |---|---|---|
//! | `files` | yes | SEP-2631 file transfer: the file tools and resource, the fixture tools (`--sep2631-fixtures`), the data plane |
//! | `s3` | yes | `--files-store s3://bucket/prefix`: SEP-2631 files in an S3 bucket shared by instances; `--files-presign`: descriptors presigned to the bucket |
//! | `tasks` | yes | SEP-2663 tasks: the tasks extension and the task-capable demo tool `long_job` (`--no-tasks`) |
//! | `legacy` | yes | the stateful revisions 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05 on the same endpoint (`--no-legacy` turns them off at run time) |
//! | `auth` | yes | OAuth 2.1 protected resource: `--auth-issuer` and the other `--auth-*` flags |
//! | `redis` | yes | several instances sharing state in Redis: `--redis URL` (change bus, replay guard, legacy session store and relay, shared catalog) |
//! | `metrics` | yes | Prometheus metrics on a listener of their own: `--metrics-listen ADDR` |
//! | `otel` | yes | OpenTelemetry traces over OTLP/HTTP: `--otlp-endpoint URL` or `OTEL_EXPORTER_OTLP_ENDPOINT` |
//! | `gateway` | yes | `smcpd gateway --config FILE`: one endpoint in front of MCP servers of any era and transport ([`gateway`], `smcp-gateway`, `docs/gateway.md`) |
//! | `mimalloc` | no | mimalloc as the global allocator instead of the C library's `malloc` (see `docs/performance.md`) |

#[cfg(feature = "redis")]
pub mod cluster;
pub mod demo;
mod extra_tool;
#[cfg(feature = "files")]
pub mod files_demo;
#[cfg(feature = "gateway")]
pub mod gateway;
#[cfg(feature = "files")]
pub mod health;
pub mod mrtr_demo;
#[cfg(feature = "otel")]
pub mod otel;
mod plumbing;
#[cfg(feature = "files")]
pub mod sep2631_fixtures;
#[cfg(feature = "tasks")]
pub mod tasks_demo;

pub use demo::{demo_server, demo_server_with, run_clock};
pub use plumbing::DemoConfig;

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

/// A duration flag: a whole number of seconds (`10`), or with a unit: `ms`, `s`, `m`
/// (`500ms`, `30s`, `2m`).
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("expected a duration such as 30s or 500ms, got {text:?}"))?;
    let duration = match unit {
        "" | "s" => std::time::Duration::from_secs(number),
        "ms" => std::time::Duration::from_millis(number),
        "m" => std::time::Duration::from_secs(number.saturating_mul(60)),
        _ => return Err(format!("unknown unit {unit:?} in {text:?}: use ms, s or m")),
    };
    Ok(duration)
}

/// A duration flag within `min..=max` (see [`parse_duration`]); the error names both bounds.
pub fn parse_duration_within(
    text: &str,
    min: std::time::Duration,
    max: std::time::Duration,
) -> Result<std::time::Duration, String> {
    let duration = parse_duration(text)?;
    if duration < min || duration > max {
        return Err(format!(
            "must be from {} to {}, got {}",
            show_duration(min),
            show_duration(max),
            show_duration(duration)
        ));
    }
    Ok(duration)
}

/// A duration as a flag would take it: `250ms`, `30s`, `60m`.
pub fn show_duration(duration: std::time::Duration) -> String {
    let ms = duration.as_millis();
    if ms >= 60_000 && ms.is_multiple_of(60_000) {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// Warns, loudly, when the endpoint listens beyond loopback with nobody checking tokens.
pub fn warn_if_exposed(addr: std::net::SocketAddr, auth: bool) {
    if !auth && !addr.ip().is_loopback() {
        tracing::warn!(
            "WARNING: smcpd listens on {addr}, a non-loopback address, with NO AUTHORIZATION: \
             anyone who can reach it can call every tool. Pass --auth-issuer URL (see \
             docs/auth.md), or listen on 127.0.0.1 behind a proxy that checks access."
        );
    }
}

/// Parses a probe path (`--readyz-path`, `--livez-path`): absolute, at most 256 bytes of
/// visible ASCII, and not the MCP endpoint's `/mcp`.
pub fn probe_path(text: &str) -> Result<String, String> {
    if !text.starts_with('/') {
        return Err("a probe path starts with '/'".to_owned());
    }
    if text.len() > 256 || !text.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("a probe path is at most 256 visible ASCII characters".to_owned());
    }
    if text == "/mcp" {
        return Err("/mcp is the MCP endpoint".to_owned());
    }
    Ok(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::{parse_duration, parse_duration_within, probe_path, show_duration};
    use std::time::Duration;

    #[test]
    fn durations_take_seconds_or_a_unit() {
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("5h").unwrap_err().contains("unknown unit"));
    }

    #[test]
    fn bounded_durations_name_their_bounds() {
        let (min, max) = (Duration::from_millis(10), Duration::from_secs(300));
        assert_eq!(
            parse_duration_within("10ms", min, max),
            Ok(Duration::from_millis(10))
        );
        assert_eq!(
            parse_duration_within("5m", min, max),
            Ok(Duration::from_secs(300))
        );
        assert_eq!(
            parse_duration_within("9ms", min, max),
            Err("must be from 10ms to 5m, got 9ms".to_owned())
        );
        assert_eq!(
            parse_duration_within("301", min, max),
            Err("must be from 10ms to 5m, got 301s".to_owned())
        );
        assert!(
            parse_duration_within("x", min, max)
                .unwrap_err()
                .contains("expected a duration")
        );
        assert_eq!(show_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(show_duration(Duration::ZERO), "0s");
    }

    #[test]
    fn probe_paths() {
        assert_eq!(probe_path("/readyz").as_deref(), Ok("/readyz"));
        assert!(probe_path("readyz").is_err());
        assert!(probe_path("/mcp").is_err());
        assert!(probe_path("/a b").is_err());
    }
}
