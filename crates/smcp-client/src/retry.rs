//! Resending a request that failed in transit, where that is safe.
//!
//! 2026-07-28 is stateless, so any instance behind a load balancer may take a resent request.
//! Whether resending is *safe* depends on whether the first attempt may have run:
//!
//! * it never reached a server (the connection could not be made): any method may be
//!   resent;
//! * it may have run (the connection broke after the request was sent, the response timed
//!   out, or a proxy answered 502, 503 or 504 for an instance that went away): only a request
//!   without side effects is resent — `server/discover`, the list methods, `resources/read`,
//!   `prompts/get`, `completion/complete`, `tasks/get` — and a `tools/call` only when the
//!   last `tools/list` annotated the tool `readOnlyHint` or `idempotentHint`. Anything else
//!   is the caller's decision, and fails with the error it met.
//!
//! Off by default ([`RetryPolicy::none`]); see [`crate::ClientBuilder::retry`].

use std::time::Duration;

use smcp_proto::messages::method;

use crate::error::Error;

/// How often, and after how long, a failed request is resent (only where safe; see the
/// module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Resends after the first attempt, at most.
    pub max_retries: u32,
    /// The wait before the first resend; it doubles with each further one.
    pub backoff: Duration,
    /// The longest wait between two attempts.
    pub max_backoff: Duration,
}

impl RetryPolicy {
    /// Never resend (the default).
    pub const fn none() -> Self {
        Self {
            max_retries: 0,
            backoff: Duration::ZERO,
            max_backoff: Duration::ZERO,
        }
    }

    /// Up to `max_retries` resends, 100 ms apart at first, doubling to at most 2 s.
    pub const fn retries(max_retries: u32) -> Self {
        Self {
            max_retries,
            backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
        }
    }

    /// The wait before resend number `n` (1-based).
    pub(crate) fn delay(&self, n: u32) -> Duration {
        self.backoff
            .saturating_mul(1 << n.saturating_sub(1).min(16))
            .min(self.max_backoff)
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self::none()
    }
}

/// Whether the request never reached a server.
pub(crate) fn never_sent(e: &Error) -> bool {
    e.is_connect_failure()
}

/// Whether the request may have reached a server and failed on the way back.
pub(crate) fn lost_in_transit(e: &Error) -> bool {
    e.is_stream_broken()
        || e.is_timeout() && !e.is_cancelled()
        || e.status().is_some_and(|s| matches!(s, 502..=504))
}

/// Methods whose request has no side effect, so running it twice is harmless.
pub(crate) fn side_effect_free(method_name: &str) -> bool {
    matches!(
        method_name,
        method::DISCOVER
            | method::TOOLS_LIST
            | method::RESOURCES_LIST
            | method::RESOURCES_TEMPLATES_LIST
            | method::RESOURCES_READ
            | method::PROMPTS_LIST
            | method::PROMPTS_GET
            | method::COMPLETE
    ) || method_name == "tasks/get"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_doubles_up_to_the_cap() {
        let p = RetryPolicy::retries(5);
        assert_eq!(p.delay(1), Duration::from_millis(100));
        assert_eq!(p.delay(2), Duration::from_millis(200));
        assert_eq!(p.delay(5), Duration::from_millis(1600));
        assert_eq!(p.delay(6), Duration::from_secs(2));
    }

    #[test]
    fn only_requests_without_side_effects_are_side_effect_free() {
        for m in [
            "tools/list",
            "resources/read",
            "prompts/get",
            "server/discover",
            "tasks/get",
        ] {
            assert!(side_effect_free(m), "{m}");
        }
        for m in [
            "tools/call",
            "tasks/cancel",
            "subscriptions/listen",
            "logging/setLevel",
        ] {
            assert!(!side_effect_free(m), "{m}");
        }
    }
}
