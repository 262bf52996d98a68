//! The machine-readable line `smcp-load` prints, which `bench-driver` reads back.

use serde::{Deserialize, Serialize};

/// Result of one `smcp-load` run, printed as one JSON line on stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    /// The target URL.
    pub url: String,
    /// The tool called.
    pub tool: String,
    /// Whether each request carried a progress token.
    pub progress: bool,
    /// Number of keep-alive connections, each running requests back-to-back.
    pub connections: usize,
    /// Length of the measured window in seconds (warm-up excluded).
    pub duration_s: f64,
    /// Requests completed successfully in the measured window.
    pub requests: u64,
    /// Requests completed successfully in total, warm-up included (for CPU per request,
    /// since the driver samples server CPU around the whole run).
    pub requests_total: u64,
    /// Failed requests (bad status, bad body, I/O error, timeout), warm-up included.
    pub errors: u64,
    /// The first error seen, if any.
    pub first_error: Option<String>,
    /// Successful requests per second in the measured window.
    pub rps: f64,
    /// Median latency in microseconds.
    pub p50_us: f64,
    /// 90th percentile latency in microseconds.
    pub p90_us: f64,
    /// 99th percentile latency in microseconds.
    pub p99_us: f64,
    /// Slowest request in microseconds.
    pub max_us: f64,
    /// Mean latency in microseconds.
    pub mean_us: f64,
    /// CPU used by the load generator itself divided by wall time (1.0 = one full core).
    /// Near 1.0 with the load pinned to one core means the generator, not the server, may be
    /// the bottleneck.
    pub load_cpu_util: f64,
    /// CPU time used by the load generator during the run, in microseconds, the signing of
    /// its DPoP proof pool included (`load_cpu_util` leaves that out).
    pub load_cpu_us: u64,
    /// With DPoP proofs: how many were signed during the run because the pool signed ahead
    /// of it ran dry (0: every proof came from the pool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signed_inline: Option<u64>,
    /// `true` when the run had no errors and completed at least one request.
    pub valid: bool,
}
