//! The protocol revisions the server speaks: a leaf that admission, `_meta` checks and the server
//! all read.

/// Protocol versions this server speaks, newest first.
pub const SUPPORTED_VERSIONS: &[&str] = &[smcp_proto::PROTOCOL_VERSION];

/// The earlier revisions this server serves, newest first (feature `legacy`; also
/// `smcp_server::legacy::LEGACY_VERSIONS`).
#[cfg(feature = "legacy")]
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];

/// Whether `version` is one of the earlier revisions served here.
#[cfg(feature = "legacy")]
pub(crate) fn is_legacy(version: &str) -> bool {
    LEGACY_VERSIONS.contains(&version)
}
