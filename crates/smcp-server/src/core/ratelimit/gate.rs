//! The decision on one request: which buckets it draws from, the limiter's answer, the
//! metrics and the log line.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use super::limiter::{Bucket, BucketKey, Decision, LimitError, RateLimited, RateLimiter, Verdict};
use super::memory::MemoryRateLimiter;
use super::rate::Rate;
use super::rules::{Anonymous, RateLimits};
use crate::core::context::Principal;
use crate::core::future::BoxFuture;
use crate::core::keys::Clock;
use crate::core::metrics::{MetricsHandle, RateLimitOutcome};

const PRINCIPAL: &str = "principal";

/// A request's fate: let through, refused now, or decided by a future.
pub(crate) enum Gate {
    /// No bucket applies, or every one had a token.
    Open,
    /// Refused.
    Closed(RateLimited),
    /// The limiter answers later (a shared store): `Err` when refused.
    Pending(BoxFuture<Result<(), RateLimited>>),
}

impl Gate {
    /// The decision, waited for (the sessions of the earlier revisions decide first).
    #[cfg_attr(not(feature = "legacy"), allow(dead_code))]
    pub(crate) async fn wait(self) -> Result<(), RateLimited> {
        match self {
            Self::Open => Ok(()),
            Self::Closed(refused) => Err(refused),
            Self::Pending(fut) => fut.await,
        }
    }
}

/// A rule's rate and its label, shared with pending decisions.
type Rule = (Arc<str>, Rate);

/// The server's rate limits, ready to decide.
pub(crate) struct Gatekeeper {
    principal: Option<Rate>,
    tools: HashMap<String, Rule>,
    global_tools: HashMap<String, Rule>,
    anonymous: Anonymous,
    limiter: Arc<dyn RateLimiter>,
    clock: Clock,
    metrics: MetricsHandle,
}

impl std::fmt::Debug for Gatekeeper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gatekeeper")
            .field("principal", &self.principal)
            .field("tools", &self.tools.len())
            .field("global_tools", &self.global_tools.len())
            .field("limiter", &self.limiter)
            .finish_non_exhaustive()
    }
}

fn labelled(rules: Vec<(String, Rate)>, prefix: &str) -> HashMap<String, Rule> {
    rules
        .into_iter()
        .map(|(name, rate)| {
            let label: Arc<str> = format!("{prefix}{name}").into();
            (name, (label, rate))
        })
        .collect()
}

impl Gatekeeper {
    /// The gatekeeper of `limits`, or `None` when it has no rule (nothing is asked then).
    pub(crate) fn new(limits: RateLimits, clock: Clock, metrics: MetricsHandle) -> Option<Self> {
        if limits.is_empty() {
            return None;
        }
        Some(Self {
            principal: limits.principal,
            tools: labelled(limits.tools, "tool:"),
            global_tools: labelled(limits.global_tools, "global-tool:"),
            anonymous: limits.anonymous,
            limiter: limits
                .limiter
                .unwrap_or_else(|| Arc::new(MemoryRateLimiter::default())),
            clock,
            metrics,
        })
    }

    /// Whose buckets a request counts in: the principal, else what [`Anonymous`] says.
    fn subject(&self, principal: Option<&Principal>, peer: Option<IpAddr>) -> Option<String> {
        match (principal, self.anonymous, peer) {
            (Some(p), ..) => Some(format!("p:{}", p.0)),
            (None, Anonymous::PeerAddress, Some(ip)) => Some(format!("ip:{ip}")),
            (None, Anonymous::Shared, _) => Some("anonymous".to_owned()),
            _ => None,
        }
    }

    /// Decides on one request of `principal` (or from `peer`), calling `tool` if it is a
    /// `tools/call`: one token from every bucket that applies, or none.
    pub(crate) fn gate(
        &self,
        principal: Option<&Principal>,
        peer: Option<IpAddr>,
        tool: Option<&str>,
    ) -> Gate {
        let subject = self.subject(principal, peer);
        let mut asking = Asking::default();
        if let (Some(rate), Some(s)) = (self.principal, subject.as_deref()) {
            asking.push(None, PRINCIPAL, Some(s), rate);
        }
        if let Some(tool) = tool {
            if let (Some((label, rate)), Some(s)) = (self.tools.get(tool), subject.as_deref()) {
                asking.push(Some(label), label, Some(s), *rate);
            }
            if let Some((label, rate)) = self.global_tools.get(tool) {
                asking.push(Some(label), label, None, *rate);
            }
        }
        let Asking { buckets, labels, n } = asking;
        if n == 0 {
            return Gate::Open;
        }
        let asked: Vec<Bucket<'_>> = buckets.iter().take(n).flatten().copied().collect();
        match self.limiter.decide(&asked, (self.clock)()) {
            Verdict::Ready(result) => match conclude(&self.metrics, &labels, n, result) {
                Ok(()) => Gate::Open,
                Err(refused) => Gate::Closed(refused),
            },
            Verdict::Pending(fut) => {
                let owned: Labels<Arc<str>> = labels.map(|l| l.cloned());
                let metrics = self.metrics.clone();
                Gate::Pending(Box::pin(async move {
                    let result = fut.await;
                    conclude(&metrics, &owned.each_ref().map(Option::as_ref), n, result)
                }))
            }
        }
    }
}

/// The labels of the buckets asked about; `None` is the principal rule.
type Labels<L> = [Option<L>; 3];

/// The buckets of one request (at most three: the caller's, the tool's for the caller, the
/// tool's for everyone) and their labels.
#[derive(Default)]
struct Asking<'a> {
    buckets: [Option<Bucket<'a>>; 3],
    labels: Labels<&'a Arc<str>>,
    n: usize,
}

impl<'a> Asking<'a> {
    fn push(
        &mut self,
        label: Option<&'a Arc<str>>,
        rule: &'a str,
        subject: Option<&'a str>,
        rate: Rate,
    ) {
        if let (Some(slot), Some(l)) = (self.buckets.get_mut(self.n), self.labels.get_mut(self.n)) {
            *slot = Some(Bucket {
                key: BucketKey { rule, subject },
                rate,
            });
            *l = label;
            self.n += 1;
        }
    }
}

fn label<'a>(labels: &'a Labels<&Arc<str>>, i: usize) -> &'a str {
    match labels.get(i) {
        Some(Some(label)) => label,
        _ => PRINCIPAL,
    }
}

/// The limiter's answer, counted and logged: `Err` with the refusal. A limiter that could
/// not decide lets the request through.
fn conclude(
    metrics: &MetricsHandle,
    labels: &Labels<&Arc<str>>,
    n: usize,
    result: Result<Decision, LimitError>,
) -> Result<(), RateLimited> {
    match result {
        Ok(Decision::Allowed) => {
            for i in 0..n {
                metrics.rate_limit(label(labels, i), RateLimitOutcome::Allowed);
            }
            Ok(())
        }
        Ok(Decision::Refused {
            bucket,
            retry_after,
        }) => {
            let limit = label(labels, bucket);
            metrics.rate_limit(limit, RateLimitOutcome::Refused);
            let refused = RateLimited {
                limit: limit.to_owned(),
                retry_after: retry_after.max(Duration::from_micros(1)),
            };
            tracing::debug!(
                limit,
                retry_after_ms = refused.retry_after_ms(),
                "request refused by a rate limit"
            );
            Err(refused)
        }
        Err(error) => {
            for i in 0..n {
                metrics.rate_limit(label(labels, i), RateLimitOutcome::Error);
            }
            tracing::warn!(%error, "rate limiter failed; the request is let through");
            Ok(())
        }
    }
}
