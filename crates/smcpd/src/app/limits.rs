//! Rate limits per caller and per tool: `--rate-limit RULE` (repeatable),
//! `--rate-limit-anonymous`, `--rate-limit-buckets`, `--rate-limit-prefetch`; the buckets in this process, or in Redis
//! with `--redis` (shared by every instance). See `docs/limits.md`.

use std::sync::Arc;

use smcp_server::ratelimit::{
    Anonymous, DEFAULT_MAX_BUCKETS, MemoryRateLimiter, RateLimiter, RateLimits, RateRule,
};

/// The rate limit flags.
#[derive(Debug, clap::Args)]
pub(crate) struct LimitArgs {
    /// A rate limit, repeatable: SCOPE=RATE[,burst=N]. SCOPE is `principal` (every request
    /// of one caller), `tool:NAME` (calls of a tool, per caller) or `global-tool:NAME` (calls
    /// of a tool, all callers together); RATE is N/s, N/m or N/h (N may have decimals); the
    /// burst (requests at once) defaults to N. A request over a limit is refused before it
    /// runs: HTTP 429 with Retry-After, JSON-RPC error -31000 with data.limit (the SCOPE) and
    /// data.retryAfterMs. With --redis, every instance shares the buckets. Example:
    /// --rate-limit principal=100/s,burst=200 --rate-limit tool:echo=10/s
    #[arg(long = "rate-limit", value_name = "RULE", value_parser = rule)]
    rules: Vec<RateRule>,
    /// Whose bucket a request without a principal (no --auth-issuer, or no token) draws from
    /// for the per-caller rules: `none` (the per-caller rules do not apply to it), `peer` (its
    /// TCP peer's IP address; behind a proxy or load balancer, the proxy's), or `shared` (one
    /// bucket for all of them). `global-tool:` rules apply either way.
    #[arg(
        long,
        value_name = "KEY",
        default_value = "none",
        value_parser = anonymous,
        requires = "rules"
    )]
    rate_limit_anonymous: Anonymous,
    /// Buckets kept in this process (without --redis): a bucket idle until full again is
    /// dropped; with this many in use, a new caller is refused until one is.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_BUCKETS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000_000))]
    rate_limit_buckets: usize,
    /// With --redis: the most tokens of a bucket one instance takes from Redis at once, to
    /// spend without asking again for up to a second (what it did not spend goes back). A
    /// bucket gives at most a sixteenth of its burst, and what it refills in a second, so a
    /// small or slow bucket is asked about on every request. Never more than a limit allows;
    /// the cost is that a token one instance holds is not there for another. 1: every request
    /// is one decision in Redis.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_PREFETCH, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    rate_limit_prefetch: u32,
}

/// `--rate-limit-prefetch`'s default (the shared limiter's own).
#[cfg(feature = "redis")]
const DEFAULT_PREFETCH: u32 = smcp_redis::DEFAULT_MAX_PREFETCH;
#[cfg(not(feature = "redis"))]
const DEFAULT_PREFETCH: u32 = 64;

fn rule(text: &str) -> Result<RateRule, String> {
    text.parse()
        .map_err(|e: smcp_server::ratelimit::RuleError| e.to_string())
}

fn anonymous(text: &str) -> Result<Anonymous, String> {
    text.parse()
        .map_err(|e: smcp_server::ratelimit::RuleError| e.to_string())
}

impl LimitArgs {
    /// `--rate-limit-prefetch`.
    pub(crate) fn prefetch(&self) -> u32 {
        self.rate_limit_prefetch
    }

    /// The rate limits of the flags, on `shared` (Redis) when given.
    pub(crate) fn configure(
        &self,
        config: &mut smcpd::DemoConfig,
        shared: Option<Arc<dyn RateLimiter>>,
    ) {
        if self.rules.is_empty() {
            return;
        }
        let limiter =
            shared.unwrap_or_else(|| Arc::new(MemoryRateLimiter::new(self.rate_limit_buckets)));
        let limits = self
            .rules
            .iter()
            .cloned()
            .fold(RateLimits::new(), RateLimits::rule)
            .anonymous(self.rate_limit_anonymous)
            .limiter_arc(limiter);
        let rules: Vec<String> = limits.rules().iter().map(ToString::to_string).collect();
        tracing::info!(rules = %rules.join(" "), "rate limits on");
        config.rate_limits = limits;
    }
}
