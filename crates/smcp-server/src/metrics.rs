//! Prometheus metrics (feature `metrics`): [`Prometheus`], a [`Metrics`] that keeps counters
//! and histograms in a `prometheus-client` registry and renders them in the text format.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `smcp_requests_total` | counter | `method`, `status` (HTTP class), `code` (JSON-RPC error code) |
//! | `smcp_request_duration_seconds` | histogram | `method` |
//! | `smcp_mrtr_rounds_total` | counter | `round` (`input_required`, `retry`) |
//! | `smcp_file_bytes_total` | counter | `direction` (`in`, `out`) |
//! | `smcp_bus_lag_seconds` | histogram | – |
//! | `smcp_listen_streams` | gauge | – (read at scrape time) |
//! | `smcp_legacy_sessions` | gauge | – (read at scrape time) |
//! | `smcp_rate_limit_decisions_total` | counter | `limit` (a configured rule: `principal`, `tool:NAME`, `global-tool:NAME`), `outcome` (`allowed`, `refused`, `error`) |
//! | `smcp_upstream_requests_total` | counter | `upstream` (a gateway's configured upstream), `outcome` (`ok`, `error`, `failed`) |
//! | `smcp_upstream_request_duration_seconds` | histogram | `upstream` |
//!
//! Every label value comes from a bounded set (`crate::core::metrics`), so the number of
//! series is bounded whatever clients send.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use prometheus_client::encoding::{EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::core::metrics::{
    CodeLabel, FileDirection, Metrics, MrtrRound, RateLimitOutcome, RequestRecord, UpstreamOutcome,
    code_label, status_label,
};
use crate::core::server::Server;

/// The `Content-Type` of [`Prometheus::render`]'s text (OpenMetrics, which Prometheus reads).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Request latency buckets, in seconds: 50 µs to 10 s.
const LATENCY_BUCKETS: &[f64] = &[
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0,
];

/// Bus lag buckets, in seconds: 100 µs to 5 s.
const LAG_BUCKETS: &[f64] = &[
    0.000_1, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// One label value: a bounded string or an error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Value {
    Str(&'static str),
    Code(CodeLabel),
}

impl EncodeLabelValue for Value {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> Result<(), fmt::Error> {
        match self {
            Self::Str(s) => fmt::Write::write_str(encoder, s),
            Self::Code(c) => fmt::Write::write_fmt(encoder, format_args!("{c}")),
        }
    }
}

type Labels<const N: usize> = [(&'static str, Value); N];

/// A label value of the rate limit and upstream counters: a rule's label or an upstream's name
/// (configured, so bounded) or an outcome.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum RateValue {
    Rule(String),
    Outcome(&'static str),
}

impl EncodeLabelValue for RateValue {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> Result<(), fmt::Error> {
        match self {
            Self::Rule(s) => fmt::Write::write_str(encoder, s),
            Self::Outcome(s) => fmt::Write::write_str(encoder, s),
        }
    }
}
type HistogramFamily = Family<Labels<1>, Histogram, fn() -> Histogram>;

/// Latency histograms by a configured name (an upstream's).
type NamedHistogramFamily = Family<[(&'static str, RateValue); 1], Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS.iter().copied())
}

struct Inner {
    registry: Registry,
    requests: Family<Labels<3>, Counter>,
    latency: HistogramFamily,
    mrtr: Family<Labels<1>, Counter>,
    file_bytes: Family<Labels<1>, Counter>,
    bus_lag: Histogram,
    listen_streams: Gauge,
    legacy_sessions: Gauge,
    rate_limits: Family<[(&'static str, RateValue); 2], Counter>,
    upstream_requests: Family<[(&'static str, RateValue); 2], Counter>,
    upstream_latency: NamedHistogramFamily,
    /// Serializes renders (the gauges are set, then the registry encoded).
    render: Mutex<()>,
}

/// Prometheus metrics for one server instance. Cheap to clone; every clone records into the
/// same registry. Give it to [`ServerBuilder::metrics`](crate::ServerBuilder::metrics) and
/// serve [`Prometheus::render`] (e.g. with [`OpsRouter::metrics`](crate::http::OpsRouter::metrics)).
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use smcp_server::metrics::Prometheus;
///
/// let prometheus = Prometheus::new();
/// let server = smcp_server::Server::builder("demo", "1.0.0")
///     .metrics(Arc::new(prometheus.clone()))
///     .build()?;
/// let text = prometheus.render(&server);
/// assert!(text.contains("smcp_listen_streams 0"));
/// # Ok::<(), smcp_server::BuildError>(())
/// ```
#[derive(Clone)]
pub struct Prometheus(Arc<Inner>);

impl fmt::Debug for Prometheus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prometheus").finish_non_exhaustive()
    }
}

impl Default for Prometheus {
    fn default() -> Self {
        Self::new()
    }
}

impl Prometheus {
    /// An empty registry with every smcp metric in it.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<Labels<3>, Counter>::default();
        registry.register(
            "smcp_requests",
            "Requests answered, by method, HTTP status class and JSON-RPC error code",
            requests.clone(),
        );
        let latency: HistogramFamily = Family::new_with_constructor(latency_histogram);
        registry.register(
            "smcp_request_duration_seconds",
            "Time from a request's arrival to its response head, by method",
            latency.clone(),
        );
        let mrtr = Family::<Labels<1>, Counter>::default();
        registry.register(
            "smcp_mrtr_rounds",
            "Multi round-trip events: input_required answers and retries",
            mrtr.clone(),
        );
        let file_bytes = Family::<Labels<1>, Counter>::default();
        registry.register(
            "smcp_file_bytes",
            "File bytes through the SEP-2631 data plane, by direction",
            file_bytes.clone(),
        );
        let bus_lag = Histogram::new(LAG_BUCKETS.iter().copied());
        registry.register(
            "smcp_bus_lag_seconds",
            "Time from a change's publication to its delivery on this instance",
            bus_lag.clone(),
        );
        let listen_streams = Gauge::default();
        registry.register(
            "smcp_listen_streams",
            "Open subscriptions/listen streams on this instance",
            listen_streams.clone(),
        );
        let legacy_sessions = Gauge::default();
        registry.register(
            "smcp_legacy_sessions",
            "Sessions of the earlier revisions live on this instance",
            legacy_sessions.clone(),
        );
        let rate_limits = Family::<[(&'static str, RateValue); 2], Counter>::default();
        registry.register(
            "smcp_rate_limit_decisions",
            "Rate limit decisions per bucket, by rule and outcome (allowed, refused, error)",
            rate_limits.clone(),
        );
        let upstream_requests = Family::<[(&'static str, RateValue); 2], Counter>::default();
        registry.register(
            "smcp_upstream_requests",
            "A gateway's requests to its upstream servers, by upstream and outcome (ok, error, failed)",
            upstream_requests.clone(),
        );
        let upstream_latency: NamedHistogramFamily =
            Family::new_with_constructor(latency_histogram);
        registry.register(
            "smcp_upstream_request_duration_seconds",
            "Time from a gateway's request to an upstream server to its answer, by upstream",
            upstream_latency.clone(),
        );
        Self(Arc::new(Inner {
            registry,
            rate_limits,
            upstream_requests,
            upstream_latency,
            requests,
            latency,
            mrtr,
            file_bytes,
            bus_lag,
            listen_streams,
            legacy_sessions,
            render: Mutex::new(()),
        }))
    }

    /// The metrics in the text format, with the gauges read from `server` now.
    pub fn render(&self, server: &Server) -> String {
        let _one = self.0.render.lock().unwrap_or_else(PoisonError::into_inner);
        self.0
            .listen_streams
            .set(i64::try_from(server.open_listen_streams()).unwrap_or(i64::MAX));
        self.0
            .legacy_sessions
            .set(i64::try_from(server.legacy_sessions()).unwrap_or(i64::MAX));
        let mut text = String::with_capacity(4096);
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.0.registry);
        text
    }
}

impl Metrics for Prometheus {
    fn request(&self, record: RequestRecord) {
        let method = ("method", Value::Str(record.method));
        self.0
            .requests
            .get_or_create(&[
                method,
                ("status", Value::Str(status_label(record.status))),
                ("code", Value::Code(code_label(record.code))),
            ])
            .inc();
        self.0
            .latency
            .get_or_create(&[method])
            .observe(record.elapsed.as_secs_f64());
    }

    fn mrtr(&self, round: MrtrRound) {
        self.0
            .mrtr
            .get_or_create(&[("round", Value::Str(round.as_str()))])
            .inc();
    }

    fn file_bytes(&self, direction: FileDirection, bytes: u64) {
        self.0
            .file_bytes
            .get_or_create(&[("direction", Value::Str(direction.as_str()))])
            .inc_by(bytes);
    }

    fn bus_lag(&self, lag: Duration) {
        self.0.bus_lag.observe(lag.as_secs_f64());
    }

    fn rate_limit(&self, limit: &str, outcome: RateLimitOutcome) {
        self.0
            .rate_limits
            .get_or_create(&[
                ("limit", RateValue::Rule(limit.to_owned())),
                ("outcome", RateValue::Outcome(outcome.as_str())),
            ])
            .inc();
    }

    fn upstream(&self, upstream: &str, outcome: UpstreamOutcome, elapsed: Duration) {
        let name = ("upstream", RateValue::Rule(upstream.to_owned()));
        self.0
            .upstream_requests
            .get_or_create(&[
                name.clone(),
                ("outcome", RateValue::Outcome(outcome.as_str())),
            ])
            .inc();
        self.0
            .upstream_latency
            .get_or_create(&[name])
            .observe(elapsed.as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn records_render_with_bounded_labels() {
        let prometheus = Prometheus::new();
        let server = crate::Server::builder("t", "1").build().unwrap();
        prometheus.request(RequestRecord {
            method: "tools/call",
            status: 400,
            code: Some(-32602),
            elapsed: Duration::from_millis(2),
        });
        prometheus.mrtr(MrtrRound::Retry);
        prometheus.file_bytes(FileDirection::In, 1234);
        prometheus.bus_lag(Duration::from_millis(3));
        prometheus.rate_limit("tool:echo", RateLimitOutcome::Refused);
        prometheus.rate_limit("tool:echo", RateLimitOutcome::Refused);
        prometheus.upstream("files", UpstreamOutcome::Ok, Duration::from_micros(300));
        prometheus.upstream("files", UpstreamOutcome::Failed, Duration::from_millis(2));
        let text = prometheus.render(&server);
        assert!(
            text.contains(
                r#"smcp_rate_limit_decisions_total{limit="tool:echo",outcome="refused"} 2"#
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"smcp_requests_total{method="tools/call",status="4xx",code="-32602"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"smcp_mrtr_rounds_total{round="retry"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"smcp_file_bytes_total{direction="in"} 1234"#),
            "{text}"
        );
        assert!(text.contains("smcp_bus_lag_seconds_count 1"), "{text}");
        for series in [
            r#"smcp_upstream_requests_total{upstream="files",outcome="ok"} 1"#,
            r#"smcp_upstream_requests_total{upstream="files",outcome="failed"} 1"#,
            r#"smcp_upstream_request_duration_seconds_count{upstream="files"} 2"#,
        ] {
            assert!(text.contains(series), "{series} in {text}");
        }
        assert!(
            text.contains(
                r#"smcp_request_duration_seconds_bucket{le="0.0025",method="tools/call"} 1"#
            ) || text.contains(
                r#"smcp_request_duration_seconds_bucket{method="tools/call",le="0.0025"} 1"#
            ),
            "{text}"
        );
    }
}
