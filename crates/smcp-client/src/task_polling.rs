//! [`TaskPolling`]: how tasks are polled (SEP-2663 §Task Polling). Plain configuration, a
//! leaf: the builder stores it, `tasks.rs` follows tasks with it.

use std::time::Duration;

/// How a client polls tasks (SEP-2663 §Task Polling). Plain data: start from
/// `TaskPolling::default()` and change what you need.
///
/// ```
/// use std::time::Duration;
/// let polling = smcp_client::TaskPolling {
///     min_interval: Duration::from_millis(250),
///     max_wait: Some(Duration::from_secs(3600)),
///     ..smcp_client::TaskPolling::default()
/// };
/// let client = smcp_client::Client::builder("http://127.0.0.1:8931/mcp")
///     .task_polling(polling)
///     .build();
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskPolling {
    /// The interval when the server gives no `pollIntervalMs`. Default 1 s.
    pub default_interval: Duration,
    /// The floor: a smaller `pollIntervalMs` (even 0) is raised to this. Default 100 ms.
    pub min_interval: Duration,
    /// The cap: a larger `pollIntervalMs` is lowered to this, and so is the backoff after
    /// transient failures. Default 30 s.
    pub max_interval: Duration,
    /// Transient failures in a row (network, broken stream, request timeout, HTTP 429/5xx)
    /// tolerated before following the task fails with the last one. Default 5.
    pub max_retries: u32,
    /// How long to follow one task at most, from its creation; `None`: only its TTL bounds it
    /// (and nothing does when the TTL is unlimited). Default 24 h.
    pub max_wait: Option<Duration>,
    /// Distinct input requests answered for one task before it is given up. Default 1,000.
    pub max_input_requests: usize,
    /// Bound on the `tasks/cancel` sent when following stops early. Default 5 s.
    pub cancel_timeout: Duration,
}

impl Default for TaskPolling {
    fn default() -> Self {
        Self {
            default_interval: Duration::from_secs(1),
            min_interval: Duration::from_millis(100),
            max_interval: Duration::from_secs(30),
            max_retries: 5,
            max_wait: Some(Duration::from_secs(24 * 3600)),
            max_input_requests: 1000,
            cancel_timeout: Duration::from_secs(5),
        }
    }
}

impl TaskPolling {
    /// The wait before the next poll for a task that asks for `hint` milliseconds.
    pub(crate) fn interval(&self, hint: Option<u64>) -> Duration {
        let max = self.max_interval.max(self.min_interval);
        hint.map_or(self.default_interval, Duration::from_millis)
            .clamp(self.min_interval, max)
    }

    /// The wait after `failures` transient failures in a row (1-based).
    pub(crate) fn backoff(&self, base: Duration, failures: u32) -> Duration {
        let max = self.max_interval.max(self.min_interval);
        base.saturating_mul(1 << failures.min(16)).min(max)
    }
}
