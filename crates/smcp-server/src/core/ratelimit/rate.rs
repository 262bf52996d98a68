//! A rate: one token every interval, a burst of tokens at once; and its text form.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The shortest interval between tokens: a million a second.
const MIN_INTERVAL_MICROS: u64 = 1;
/// The longest interval between tokens: one a day.
const MAX_INTERVAL_MICROS: u64 = 86_400_000_000;
/// The largest burst.
pub const MAX_BURST: u32 = 1_000_000;

/// A token bucket: one token every interval, at most `burst` at once.
///
/// # Examples
///
/// ```
/// use smcp_server::ratelimit::Rate;
///
/// let rate = Rate::per_second(100).and_burst(200);
/// assert_eq!(rate.burst(), 200);
/// assert_eq!(rate.to_string(), "100/s,burst=200");
/// assert_eq!("600/m".parse::<Rate>()?.burst(), 600);
/// # Ok::<(), smcp_server::ratelimit::RuleError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rate {
    interval_micros: u64,
    burst: u32,
}

impl Rate {
    /// `n` tokens a second (at least 1), a burst of `n`.
    pub fn per_second(n: u32) -> Self {
        Self::n_per(n, 1_000_000)
    }

    /// `n` tokens a minute (at least 1), a burst of `n`.
    pub fn per_minute(n: u32) -> Self {
        Self::n_per(n, 60_000_000)
    }

    /// `n` tokens an hour (at least 1), a burst of `n`.
    pub fn per_hour(n: u32) -> Self {
        Self::n_per(n, 3_600_000_000)
    }

    fn n_per(n: u32, period_micros: u64) -> Self {
        let n = n.clamp(1, MAX_BURST);
        Self {
            interval_micros: (period_micros / u64::from(n)).max(MIN_INTERVAL_MICROS),
            burst: n,
        }
    }

    /// The same rate with a burst of `burst` tokens (1 to 1,000,000).
    #[must_use]
    pub fn and_burst(mut self, burst: u32) -> Self {
        self.burst = burst.clamp(1, MAX_BURST);
        self
    }

    /// Time between two tokens.
    pub fn interval(&self) -> Duration {
        Duration::from_micros(self.interval_micros)
    }

    /// Time between two tokens, in microseconds (at least 1).
    pub fn interval_micros(&self) -> u64 {
        self.interval_micros
    }

    /// Tokens available at once.
    pub fn burst(&self) -> u32 {
        self.burst
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let per_second = 1_000_000.0 / self.interval_micros as f64;
        if per_second >= 1.0 {
            write!(f, "{}/s,burst={}", trim(per_second), self.burst)
        } else {
            write!(f, "{}/h,burst={}", trim(per_second * 3600.0), self.burst)
        }
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A rule's text that does not parse: the part at fault and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{part:?}: {reason}")]
pub struct RuleError {
    /// The part of the text at fault.
    pub part: String,
    /// What is wrong with it, and what is expected.
    pub reason: String,
}

pub(super) fn bad(part: &str, reason: impl Into<String>) -> RuleError {
    RuleError {
        part: part.chars().take(80).collect(),
        reason: reason.into(),
    }
}

/// `N/s`, `N/m` or `N/h` (N a positive number, decimals allowed); the burst is N rounded up.
impl FromStr for Rate {
    type Err = RuleError;

    fn from_str(text: &str) -> Result<Self, RuleError> {
        let expected = "expected a rate N/s, N/m or N/h (N a positive number)";
        let (n, unit) = text.split_once('/').ok_or_else(|| bad(text, expected))?;
        let period: f64 = match unit {
            "s" => 1e6,
            "m" => 60e6,
            "h" => 3600e6,
            _ => return Err(bad(unit, "the unit of a rate is s, m or h")),
        };
        let valid = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit() || b == b'.');
        let count: f64 = match n.parse() {
            Ok(count) if valid && count > 0.0 => count,
            _ => return Err(bad(n, expected)),
        };
        let interval = period / count;
        if !(MIN_INTERVAL_MICROS as f64..=MAX_INTERVAL_MICROS as f64).contains(&interval) {
            return Err(bad(
                text,
                "a rate is at most 1000000/s and at least one token a day",
            ));
        }
        Ok(Self {
            interval_micros: interval.round() as u64,
            burst: (count.ceil() as u32).clamp(1, MAX_BURST),
        })
    }
}
