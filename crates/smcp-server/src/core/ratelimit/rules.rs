//! The rules: what a rate applies to, and the set a server is built with. Rules parse from a
//! compact text form (smcpd's `--rate-limit`), strictly.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use super::limiter::RateLimiter;
use super::rate::{MAX_BURST, Rate, RuleError, bad};

/// What a rule counts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Every request of one caller (`principal`).
    Principal,
    /// One tool's calls, per caller (`tool:NAME`).
    Tool(String),
    /// One tool's calls, all callers together (`global-tool:NAME`).
    GlobalTool(String),
}

impl Scope {
    /// The label of the rule: `data.limit` of its refusals, and its metrics label.
    pub fn label(&self) -> String {
        match self {
            Self::Principal => "principal".to_owned(),
            Self::Tool(name) => format!("tool:{name}"),
            Self::GlobalTool(name) => format!("global-tool:{name}"),
        }
    }
}

impl FromStr for Scope {
    type Err = RuleError;

    fn from_str(text: &str) -> Result<Self, RuleError> {
        let tool = |name: &str| {
            let ok = (1..=128).contains(&name.len())
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
            if ok {
                Ok(name.to_owned())
            } else {
                Err(bad(
                    name,
                    "a tool name is 1-128 characters of A-Z a-z 0-9 _ . -",
                ))
            }
        };
        if text == "principal" {
            Ok(Self::Principal)
        } else if let Some(name) = text.strip_prefix("tool:") {
            tool(name).map(Self::Tool)
        } else if let Some(name) = text.strip_prefix("global-tool:") {
            tool(name).map(Self::GlobalTool)
        } else {
            Err(bad(
                text,
                "expected principal, tool:NAME or global-tool:NAME",
            ))
        }
    }
}

/// One rule: what it counts and at what rate.
///
/// Its text form is `SCOPE=RATE[,burst=N]`: `principal=100/s,burst=200` (every request of a
/// caller), `tool:search=10/s` (a tool's calls per caller), `global-tool:export=1/m` (a
/// tool's calls from everyone together). RATE is `N/s`, `N/m` or `N/h`; the burst defaults
/// to N (rounded up).
///
/// # Examples
///
/// ```
/// use smcp_server::ratelimit::{RateRule, Scope};
///
/// let rule: RateRule = "tool:search=10/s,burst=20".parse()?;
/// assert_eq!(rule.scope, Scope::Tool("search".into()));
/// assert_eq!(rule.rate.burst(), 20);
/// let err = "principal=10/d".parse::<RateRule>().unwrap_err();
/// assert_eq!(err.part, "d");
/// # Ok::<(), smcp_server::ratelimit::RuleError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateRule {
    /// What it counts.
    pub scope: Scope,
    /// Its rate and burst.
    pub rate: Rate,
}

impl FromStr for RateRule {
    type Err = RuleError;

    fn from_str(text: &str) -> Result<Self, RuleError> {
        let (scope, rest) = text.split_once('=').ok_or_else(|| {
            bad(
                text,
                "expected SCOPE=RATE[,burst=N], e.g. principal=100/s,burst=200",
            )
        })?;
        let scope: Scope = scope.parse()?;
        let mut parts = rest.split(',');
        let mut rate: Rate = parts.next().unwrap_or_default().parse()?;
        let mut burst_seen = false;
        for option in parts {
            match option.split_once('=') {
                Some(("burst", n)) if !burst_seen => {
                    let burst = n
                        .parse::<u32>()
                        .ok()
                        .filter(|b| (1..=MAX_BURST).contains(b))
                        .ok_or_else(|| bad(n, "a burst is a whole number from 1 to 1000000"))?;
                    rate = rate.and_burst(burst);
                    burst_seen = true;
                }
                Some(("burst", _)) => return Err(bad(option, "burst is given twice")),
                _ => return Err(bad(option, "the only option of a rule is burst=N")),
            }
        }
        Ok(Self { scope, rate })
    }
}

impl fmt::Display for RateRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.scope.label(), self.rate)
    }
}

/// Whose bucket an unauthenticated request (no [`crate::Principal`]) draws from, for the
/// rules per caller (`principal`, `tool:NAME`). Rules for everyone (`global-tool:NAME`)
/// apply either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Anonymous {
    /// None: rules per caller do not apply to it (the default; `none`).
    #[default]
    Unlimited,
    /// Its peer's IP address, when the transport knows it (`peer`): over HTTP, the TCP peer,
    /// which behind a proxy or load balancer is the proxy; over stdio there is none.
    PeerAddress,
    /// One bucket for every unauthenticated request (`shared`).
    Shared,
}

impl FromStr for Anonymous {
    type Err = RuleError;

    fn from_str(text: &str) -> Result<Self, RuleError> {
        match text {
            "none" => Ok(Self::Unlimited),
            "peer" => Ok(Self::PeerAddress),
            "shared" => Ok(Self::Shared),
            _ => Err(bad(text, "expected none, peer or shared")),
        }
    }
}

/// The rate limits of a server (off when empty): rules, how unauthenticated requests are
/// keyed, and where buckets live.
///
/// # Examples
///
/// ```
/// use smcp_server::ratelimit::{Anonymous, Rate, RateLimits};
/// use smcp_server::Server;
///
/// let limits = RateLimits::new()
///     .principal(Rate::per_second(100).and_burst(200))
///     .tool("search", Rate::per_second(10))
///     .global_tool("export", Rate::per_minute(6))
///     .anonymous(Anonymous::PeerAddress);
/// let server = Server::builder("demo", "1.0.0").rate_limits(limits).build()?;
/// # let _ = server;
/// # Ok::<(), smcp_server::BuildError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct RateLimits {
    pub(crate) principal: Option<Rate>,
    pub(crate) tools: Vec<(String, Rate)>,
    pub(crate) global_tools: Vec<(String, Rate)>,
    pub(crate) anonymous: Anonymous,
    pub(crate) limiter: Option<Arc<dyn RateLimiter>>,
}

impl RateLimits {
    /// No rules (off), unauthenticated requests unlimited, buckets in this process.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `rule`, replacing a rule of the same scope.
    #[must_use]
    pub fn rule(self, rule: RateRule) -> Self {
        match rule.scope {
            Scope::Principal => self.principal(rule.rate),
            Scope::Tool(name) => self.tool(name, rule.rate),
            Scope::GlobalTool(name) => self.global_tool(name, rule.rate),
        }
    }

    /// Every request of one caller (`principal`).
    #[must_use]
    pub fn principal(mut self, rate: Rate) -> Self {
        self.principal = Some(rate);
        self
    }

    /// Calls of the tool `name`, per caller (`tool:NAME`).
    #[must_use]
    pub fn tool(mut self, name: impl Into<String>, rate: Rate) -> Self {
        put(&mut self.tools, name.into(), rate);
        self
    }

    /// Calls of the tool `name` from every caller together (`global-tool:NAME`).
    #[must_use]
    pub fn global_tool(mut self, name: impl Into<String>, rate: Rate) -> Self {
        put(&mut self.global_tools, name.into(), rate);
        self
    }

    /// Whose bucket an unauthenticated request draws from (default: none).
    #[must_use]
    pub fn anonymous(mut self, anonymous: Anonymous) -> Self {
        self.anonymous = anonymous;
        self
    }

    /// Where buckets live (default: a [`MemoryRateLimiter`](crate::ratelimit::MemoryRateLimiter) of
    /// [`DEFAULT_MAX_BUCKETS`](crate::ratelimit::DEFAULT_MAX_BUCKETS)).
    #[must_use]
    pub fn limiter(self, limiter: impl RateLimiter) -> Self {
        self.limiter_arc(Arc::new(limiter))
    }

    /// [`RateLimits::limiter`] with a shared limiter.
    #[must_use]
    pub fn limiter_arc(mut self, limiter: Arc<dyn RateLimiter>) -> Self {
        self.limiter = Some(limiter);
        self
    }

    /// Whether there is no rule (the server asks nothing).
    pub fn is_empty(&self) -> bool {
        self.principal.is_none() && self.tools.is_empty() && self.global_tools.is_empty()
    }

    /// Every rule, in the order a request draws from them.
    pub fn rules(&self) -> Vec<RateRule> {
        let principal = self.principal.map(|rate| RateRule {
            scope: Scope::Principal,
            rate,
        });
        let tools = self.tools.iter().map(|(n, rate)| RateRule {
            scope: Scope::Tool(n.clone()),
            rate: *rate,
        });
        let global = self.global_tools.iter().map(|(n, rate)| RateRule {
            scope: Scope::GlobalTool(n.clone()),
            rate: *rate,
        });
        principal.into_iter().chain(tools).chain(global).collect()
    }
}

fn put(rules: &mut Vec<(String, Rate)>, name: String, rate: Rate) {
    match rules.iter_mut().find(|(n, _)| *n == name) {
        Some(existing) => existing.1 = rate,
        None => rules.push((name, rate)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn parse(text: &str) -> Result<RateRule, RuleError> {
        text.parse()
    }

    #[test]
    fn rules_parse() {
        let rule = parse("principal=100/s,burst=200").unwrap();
        assert_eq!(rule.scope, Scope::Principal);
        assert_eq!(rule.rate.interval_micros(), 10_000);
        assert_eq!(rule.rate.burst(), 200);
        let rule = parse("tool:echo=10/s").unwrap();
        assert_eq!(rule.scope, Scope::Tool("echo".into()));
        assert_eq!(rule.rate.burst(), 10, "the burst defaults to N");
        let rule = parse("global-tool:a.b-c_d=6/m").unwrap();
        assert_eq!(rule.scope, Scope::GlobalTool("a.b-c_d".into()));
        assert_eq!(rule.rate.interval(), Duration::from_secs(10));
        let rule = parse("principal=0.5/s").unwrap();
        assert_eq!(rule.rate.interval(), Duration::from_secs(2));
        assert_eq!(rule.rate.burst(), 1, "rounded up");
        assert_eq!(parse("principal=2/h").unwrap().rate.burst(), 2);
        assert_eq!(
            parse("principal=100/s,burst=200").unwrap().to_string(),
            "principal=100/s,burst=200"
        );
    }

    #[test]
    fn errors_name_the_part_at_fault() {
        let part = |text: &str| parse(text).unwrap_err().part;
        assert_eq!(part("principal"), "principal");
        assert_eq!(part("user=1/s"), "user");
        assert_eq!(part("tool:=1/s"), "");
        assert_eq!(part("tool:no space=1/s"), "no space");
        assert_eq!(part("principal=10"), "10");
        assert_eq!(part("principal=10/d"), "d");
        assert_eq!(part("principal=0/s"), "0");
        assert_eq!(part("principal=-1/s"), "-1");
        assert_eq!(part("principal=1e3/s"), "1e3");
        assert_eq!(part("principal=nan/s"), "nan");
        assert_eq!(part("principal=2000000/s"), "2000000/s");
        assert_eq!(part("principal=0.001/h"), "0.001/h");
        assert_eq!(part("principal=1/s,burst=0"), "0");
        assert_eq!(part("principal=1/s,burst=x"), "x");
        assert_eq!(part("principal=1/s,burst=2000000"), "2000000");
        assert_eq!(part("principal=1/s,burst=2,burst=3"), "burst=3");
        assert_eq!(part("principal=1/s,brust=2"), "brust=2");
        assert_eq!(part("principal=1/s,"), "");
        let err = parse("principal=10/d").unwrap_err();
        assert_eq!(err.to_string(), "\"d\": the unit of a rate is s, m or h");
    }

    #[test]
    fn anonymous_parses() {
        assert_eq!("none".parse(), Ok(Anonymous::Unlimited));
        assert_eq!("peer".parse(), Ok(Anonymous::PeerAddress));
        assert_eq!("shared".parse(), Ok(Anonymous::Shared));
        assert_eq!("ip".parse::<Anonymous>().unwrap_err().part, "ip");
    }

    #[test]
    fn a_rule_replaces_the_one_of_its_scope() {
        let limits = RateLimits::new()
            .rule(parse("tool:a=1/s").unwrap())
            .rule(parse("tool:a=2/s").unwrap())
            .rule(parse("global-tool:a=3/s").unwrap());
        let rules: Vec<String> = limits.rules().iter().map(ToString::to_string).collect();
        assert_eq!(rules, ["tool:a=2/s,burst=2", "global-tool:a=3/s,burst=3"]);
        assert!(RateLimits::new().is_empty());
        assert!(!limits.is_empty());
    }
}
