//! Latency summaries, medians and line fits.

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

/// The Theil–Sen slope of the points `(x, y)`: the median of the slopes between every pair
/// of points with distinct `x`. Unlike least squares it ignores a minority of outliers (a
/// sample that caught a burst), so a trend is only reported when most of the data has it.
/// Returns `None` with fewer than two distinct `x`. Quadratic in the number of points: meant
/// for a few thousand at most.
pub fn theil_sen_slope(points: &[(f64, f64)]) -> Option<f64> {
    let mut slopes = Vec::with_capacity(points.len() * points.len().saturating_sub(1) / 2);
    for (i, &(x0, y0)) in points.iter().enumerate() {
        for &(x1, y1) in &points[i + 1..] {
            if x1 != x0 {
                slopes.push((y1 - y0) / (x1 - x0));
            }
        }
    }
    median(&slopes)
}

/// The least-squares slope of the points `(x, y)`; `None` with fewer than two distinct `x`.
pub fn least_squares_slope(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
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

    #[test]
    fn line_fits() {
        let line: Vec<(f64, f64)> = (0..10)
            .map(|i| (f64::from(i), 3.0f64.mul_add(f64::from(i), 1.0)))
            .collect();
        assert_eq!(theil_sen_slope(&line), Some(3.0));
        assert!((least_squares_slope(&line).unwrap() - 3.0).abs() < 1e-9);
        // One wild point moves least squares but not Theil–Sen.
        let mut spiked = line;
        spiked[5].1 += 1000.0;
        assert_eq!(theil_sen_slope(&spiked), Some(3.0));
        assert!((least_squares_slope(&spiked).unwrap() - 3.0).abs() > 1.0);
        let flat: Vec<(f64, f64)> = (0..10).map(|i| (f64::from(i), 7.0)).collect();
        assert_eq!(theil_sen_slope(&flat), Some(0.0));
        assert_eq!(theil_sen_slope(&[(1.0, 2.0)]), None);
        assert_eq!(theil_sen_slope(&[(1.0, 2.0), (1.0, 3.0)]), None);
        assert_eq!(least_squares_slope(&[(1.0, 2.0), (1.0, 3.0)]), None);
    }
}
