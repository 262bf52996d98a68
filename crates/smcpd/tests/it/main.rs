//! The integration tests of smcpd (the real binary), one test binary: each former `tests/*.rs` is a
//! module here (cargo builds and links one binary per crate instead of one per file).
//! The helpers several modules use are shared modules, declared once below.

// Shared helpers.
#[cfg(all(feature = "gateway", feature = "legacy"))]
#[path = "support/gateway.rs"]
mod gateway_support;
#[path = "support/oidc.rs"]
mod oidc;
#[path = "support/seaweedfs.rs"]
mod seaweedfs;
mod support;
#[cfg(all(
    feature = "redis",
    feature = "files",
    feature = "tasks",
    feature = "legacy"
))]
#[macro_use]
#[path = "support/cluster.rs"]
mod cluster_support;

// The tests.
#[cfg(feature = "auth")]
mod auth;
mod auth_oidc;
mod auth_oidc_client;
mod auth_oidc_extensions;
mod binary;
mod cluster;
mod cluster_legacy;
mod cluster_quota;
mod cluster_tasks;
mod fault_deadlines;
mod fault_disconnect;
mod fault_fds;
#[cfg(feature = "files")]
mod fault_files;
#[cfg(feature = "s3")]
mod files_presign;
#[cfg(feature = "s3")]
mod files_s3;
#[cfg(all(feature = "gateway", feature = "legacy"))]
mod gateway;
#[cfg(all(feature = "gateway", feature = "legacy", feature = "auth"))]
mod gateway_auth;
#[cfg(all(feature = "gateway", feature = "legacy", feature = "redis"))]
mod gateway_cluster;
#[cfg(all(feature = "gateway", feature = "legacy", feature = "files"))]
mod gateway_files;
#[cfg(all(feature = "gateway", feature = "legacy"))]
mod gateway_npm;
#[cfg(all(feature = "gateway", feature = "legacy"))]
mod gateway_python;
mod legacy_flags;
mod legacy_python;
mod legacy_self;
#[cfg(feature = "metrics")]
mod observability;
#[cfg(feature = "otel")]
mod otel;
mod quota_flags;
#[cfg(feature = "files")]
mod sep2631_fixtures;
mod stdio;
mod stdio_client;
#[cfg(unix)]
mod stdio_fds;
#[cfg(feature = "tasks")]
mod tasks;
#[cfg(feature = "tasks")]
mod tasks_e2e;
