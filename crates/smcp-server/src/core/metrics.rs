//! The metrics seam: what the server records, behind a plain trait.
//!
//! A server built without [`ServerBuilder::metrics`](crate::ServerBuilder::metrics) records
//! nothing: every recording point is one branch on an empty [`MetricsHandle`]. With a
//! [`Metrics`] registered (`smcp_server::metrics::Prometheus` with the feature `metrics`, or
//! an implementation of the application's own), the transports report each request, and
//! dispatch reports multi round-trip rounds. Other components report through a
//! [`MetricsHandle`] they are given: file bytes (the SEP-2631 data plane) and bus lag (a
//! `ChangeBus` across instances).
//!
//! Label values are bounded by construction: a method label is one of the core methods, a
//! method an extension registered, or `"other"`; an error code label is a JSON-RPC reserved
//! code or `"application"`. Nothing from the wire becomes a label as is.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use smcp_proto::messages::method;

/// One request as the transport answered it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestRecord {
    /// The method label (see [`method_label`]); `"none"` when the request was refused before
    /// its method was read, `"legacy"` for a request of the earlier revisions.
    pub method: &'static str,
    /// The HTTP status of the response (200 over stdio).
    pub status: u16,
    /// The JSON-RPC error code of the response, when the transport saw one.
    pub code: Option<i64>,
    /// From the request's arrival to its response head (over HTTP) or its response (stdio).
    pub elapsed: Duration,
}

/// A multi round-trip event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MrtrRound {
    /// The server answered `input_required`.
    InputRequired,
    /// A client retried with `inputResponses` or `requestState`.
    Retry,
}

impl MrtrRound {
    /// The label value: `input_required` or `retry`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InputRequired => "input_required",
            Self::Retry => "retry",
        }
    }
}

/// Which way file bytes moved through the SEP-2631 data plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileDirection {
    /// Uploaded by a client.
    In,
    /// Downloaded by a client.
    Out,
}

impl FileDirection {
    /// The label value: `in` or `out`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::In => "in",
            Self::Out => "out",
        }
    }
}

/// What a rate limiter decided about one bucket of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RateLimitOutcome {
    /// A token was taken.
    Allowed,
    /// The request was refused by this bucket.
    Refused,
    /// The limiter could not decide (its store failed); the request was let through.
    Error,
}

impl RateLimitOutcome {
    /// The label value: `allowed`, `refused` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allowed => "allowed",
            Self::Refused => "refused",
            Self::Error => "error",
        }
    }
}

/// How a request a gateway sent to one of its upstream servers ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UpstreamOutcome {
    /// It was answered with a result.
    Ok,
    /// It was answered with a JSON-RPC error.
    Error,
    /// No usable answer: the upstream was down, timed out, broke the protocol or went away.
    Failed,
}

impl UpstreamOutcome {
    /// The label value: `ok`, `error` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Error => "error",
            Self::Failed => "failed",
        }
    }
}

/// Where a server's measurements go. Every method has an empty default, so an implementation
/// records only what it wants. Implementations must be cheap: they run on the request path.
pub trait Metrics: Send + Sync + fmt::Debug + 'static {
    /// One request answered.
    fn request(&self, record: RequestRecord) {
        let _ = record;
    }
    /// One multi round-trip event.
    fn mrtr(&self, round: MrtrRound) {
        let _ = round;
    }
    /// File bytes moved through the data plane.
    fn file_bytes(&self, direction: FileDirection, bytes: u64) {
        let _ = (direction, bytes);
    }
    /// A change published on another instance (or this one) reached this instance's bus
    /// subscribers this long after it was published.
    fn bus_lag(&self, lag: Duration) {
        let _ = lag;
    }
    /// A rate limit decision on one bucket: `limit` is the rule's label (`principal`,
    /// `tool:NAME`, `global-tool:NAME`: configured rules only, so bounded).
    fn rate_limit(&self, limit: &str, outcome: RateLimitOutcome) {
        let _ = (limit, outcome);
    }
    /// A gateway's request to one of its upstream servers: `upstream` is its configured name
    /// (bounded), `elapsed` from the send to the answer (each round of a call on its own).
    fn upstream(&self, upstream: &str, outcome: UpstreamOutcome, elapsed: Duration) {
        let _ = (upstream, outcome, elapsed);
    }
}

/// A cheap, cloneable handle to the server's [`Metrics`], or to nothing. Every method is a
/// no-op on an empty handle ([`MetricsHandle::default`]).
///
/// # Examples
///
/// A component that reports bus lag, whether or not metrics are on:
///
/// ```
/// use std::time::Duration;
/// use smcp_server::core::metrics::MetricsHandle;
///
/// fn delivered(metrics: &MetricsHandle, lag: Duration) {
///     metrics.bus_lag(lag); // nothing happens when metrics are off
/// }
/// delivered(&MetricsHandle::default(), Duration::from_millis(3));
/// ```
#[derive(Clone, Default)]
pub struct MetricsHandle(Option<Arc<dyn Metrics>>);

impl fmt::Debug for MetricsHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("MetricsHandle")
            .field(&self.0.is_some())
            .finish()
    }
}

impl MetricsHandle {
    /// A handle recording into `metrics`.
    pub fn new(metrics: Arc<dyn Metrics>) -> Self {
        Self(Some(metrics))
    }

    /// Whether anything records.
    #[inline]
    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// The metrics, when on.
    #[inline]
    pub fn get(&self) -> Option<&Arc<dyn Metrics>> {
        self.0.as_ref()
    }

    /// Reports one request.
    #[inline]
    pub fn request(&self, record: RequestRecord) {
        if let Some(m) = &self.0 {
            m.request(record);
        }
    }

    /// Reports one multi round-trip event.
    #[inline]
    pub fn mrtr(&self, round: MrtrRound) {
        if let Some(m) = &self.0 {
            m.mrtr(round);
        }
    }

    /// Reports file bytes moved through the data plane.
    #[inline]
    pub fn file_bytes(&self, direction: FileDirection, bytes: u64) {
        if let Some(m) = &self.0
            && bytes > 0
        {
            m.file_bytes(direction, bytes);
        }
    }

    /// Reports the lag of one change delivered by the bus.
    #[inline]
    pub fn bus_lag(&self, lag: Duration) {
        if let Some(m) = &self.0 {
            m.bus_lag(lag);
        }
    }

    /// Reports a rate limit decision on one bucket.
    #[inline]
    pub fn rate_limit(&self, limit: &str, outcome: RateLimitOutcome) {
        if let Some(m) = &self.0 {
            m.rate_limit(limit, outcome);
        }
    }

    /// See [`Metrics::upstream`].
    pub fn upstream(&self, upstream: &str, outcome: UpstreamOutcome, elapsed: Duration) {
        if let Some(m) = &self.0 {
            m.upstream(upstream, outcome, elapsed);
        }
    }
}

/// The core methods of 2026-07-28, the only method names that become labels besides those
/// extensions register.
const CORE_METHODS: &[&str] = &[
    method::DISCOVER,
    method::TOOLS_LIST,
    method::TOOLS_CALL,
    method::RESOURCES_LIST,
    method::RESOURCES_TEMPLATES_LIST,
    method::RESOURCES_READ,
    method::PROMPTS_LIST,
    method::PROMPTS_GET,
    method::COMPLETE,
    method::SUBSCRIPTIONS_LISTEN,
    method::PING,
    method::INITIALIZE,
];

/// The label for `method`: the method itself when it is a core method or one of
/// `registered`, otherwise `"other"`.
pub fn method_label<'a>(
    method: &str,
    registered: impl IntoIterator<Item = &'a &'static str>,
) -> &'static str {
    if let Some(known) = CORE_METHODS.iter().find(|m| **m == method) {
        return known;
    }
    registered
        .into_iter()
        .find(|m| **m == method)
        .copied()
        .unwrap_or("other")
}

/// The label for a JSON-RPC error code: `"none"` without one, the number for a code in the
/// JSON-RPC reserved range (−32768..=−32000), `"application"` for any other.
pub fn code_label(code: Option<i64>) -> CodeLabel {
    match code {
        None => CodeLabel::None,
        Some(c) if (-32768..=-32000).contains(&c) => CodeLabel::Reserved(c),
        Some(_) => CodeLabel::Application,
    }
}

/// A bounded error-code label (see [`code_label`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeLabel {
    /// No JSON-RPC error.
    None,
    /// A code of the JSON-RPC reserved range.
    Reserved(i64),
    /// An application-defined code.
    Application,
}

impl fmt::Display for CodeLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("none"),
            Self::Reserved(c) => write!(f, "{c}"),
            Self::Application => f.write_str("application"),
        }
    }
}

/// The label for an HTTP status: its class, `"2xx"` … `"5xx"` (`"other"` outside them).
pub fn status_label(status: u16) -> &'static str {
    match status / 100 {
        1 => "1xx",
        2 => "2xx",
        3 => "3xx",
        4 => "4xx",
        5 => "5xx",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_labels_are_bounded() {
        let registered: &[&'static str] = &["files/authorizeUpload"];
        assert_eq!(method_label("tools/call", registered), "tools/call");
        assert_eq!(
            method_label("files/authorizeUpload", registered),
            "files/authorizeUpload"
        );
        assert_eq!(method_label("tools/evil-name-123", registered), "other");
    }

    #[test]
    fn code_and_status_labels() {
        assert_eq!(code_label(None).to_string(), "none");
        assert_eq!(code_label(Some(-32602)).to_string(), "-32602");
        assert_eq!(code_label(Some(-31999)).to_string(), "application");
        assert_eq!(code_label(Some(7)).to_string(), "application");
        assert_eq!(status_label(200), "2xx");
        assert_eq!(status_label(404), "4xx");
        assert_eq!(status_label(503), "5xx");
        assert_eq!(status_label(999), "other");
    }
}
