//! Latency summaries and medians.

use serde::{Deserialize, Serialize};

/// Percentiles of a set of latencies, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Median latency.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Slowest request.
    pub max_us: f64,
    /// Arithmetic mean.
    pub mean_us: f64,
}

impl LatencySummary {
    /// Summarises latencies given in nanoseconds (sorts the slice in place).
    /// Returns `None` for an empty set.
    pub fn from_nanos(samples: &mut [u64]) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        let us = |ns: u64| ns as f64 / 1_000.0;
        let sum: u128 = samples.iter().map(|&s| u128::from(s)).sum();
        Some(Self {
            p50_us: us(percentile(samples, 50.0)),
            p90_us: us(percentile(samples, 90.0)),
            p99_us: us(percentile(samples, 99.0)),
            max_us: us(samples[samples.len() - 1]),
            mean_us: sum as f64 / samples.len() as f64 / 1_000.0,
        })
    }
}

/// Nearest-rank percentile of a sorted, non-empty slice.
pub fn percentile(sorted: &[u64], pct: f64) -> u64 {
    let n = sorted.len();
    let rank = ((pct / 100.0) * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

/// Median of the values (the mean of the two middle ones for an even count).
/// Returns `None` for an empty set.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        f64::midpoint(v[mid - 1], v[mid])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_nearest_rank() {
        let mut v: Vec<u64> = (1..=100).rev().map(|x| x * 1_000).collect();
        let s = LatencySummary::from_nanos(&mut v).unwrap();
        assert_eq!(s.p50_us, 50.0);
        assert_eq!(s.p99_us, 99.0);
        assert_eq!(s.max_us, 100.0);
        assert_eq!(s.mean_us, 50.5);
        assert!(LatencySummary::from_nanos(&mut []).is_none());
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
