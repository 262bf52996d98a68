//! The protocol revisions the server speaks: a leaf that admission, `_meta` checks and the server
//! all read.

/// Protocol versions this server speaks, newest first.
pub const SUPPORTED_VERSIONS: &[&str] = &[smcp_proto::PROTOCOL_VERSION];
