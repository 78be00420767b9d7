//! Several seeds in one figure: the mean line and the min–max band across seeds, for
//! time series sampled on the same bins and for empirical CDFs.

use std::collections::BTreeMap;

/// (x, y) points: the mean line.
pub type Line = Vec<(f64, f64)>;
/// (x, low, high) points: the band.
pub type Band = Vec<(f64, f64, f64)>;

/// Mean and (x, min, max) across `runs`, aligned on equal x (bins are the same in every
/// run of a scenario). An x present in only some runs uses those runs.
pub fn across(runs: &[Line]) -> (Line, Band) {
    // Keyed on the x value's bits so equal bin times meet exactly; non-finite samples
    // are left out of the statistics (the chart breaks its line there).
    let mut by_x: BTreeMap<i64, (f64, Vec<f64>)> = BTreeMap::new();
    for run in runs {
        for &(x, y) in run {
            if x.is_finite() && y.is_finite() {
                by_x.entry((x * 1e9).round() as i64)
                    .or_insert_with(|| (x, Vec::new()))
                    .1
                    .push(y);
            }
        }
    }
    let mut mean = Vec::with_capacity(by_x.len());
    let mut band = Vec::with_capacity(by_x.len());
    for (x, ys) in by_x.into_values() {
        let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        mean.push((x, crate::stats::mean(&ys)));
        band.push((x, lo, hi));
    }
    (mean, band)
}

/// Empirical CDFs of several runs on the union of their values: the mean CDF and the
/// min–max band of the runs' CDFs. Each run is a set of evenly spaced quantiles from
/// 0 to 100 % (as the simulator reports them), so its k-th smallest of n values sits
/// at (k − 1) / (n − 1), as in `exp::cdf_ms`: 0 at the minimum, 1 at the maximum.
pub fn cdf_across(runs: &[Vec<f64>]) -> (Line, Band) {
    let sorted: Vec<Vec<f64>> = runs
        .iter()
        .map(|r| {
            let mut v: Vec<f64> = r.iter().copied().filter(|x| x.is_finite()).collect();
            v.sort_by(|a, b| a.total_cmp(b));
            v
        })
        .filter(|v| !v.is_empty())
        .collect();
    let mut grid: Vec<f64> = sorted.iter().flatten().copied().collect();
    grid.sort_by(|a, b| a.total_cmp(b));
    grid.dedup();
    let mut mean = Vec::with_capacity(grid.len());
    let mut band = Vec::with_capacity(grid.len());
    for x in grid {
        let fs: Vec<f64> = sorted
            .iter()
            .map(|v| {
                let k = v.partition_point(|s| *s <= x);
                k.saturating_sub(1) as f64 / v.len().saturating_sub(1).max(1) as f64
            })
            .collect();
        let lo = fs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = fs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        mean.push((x, crate::stats::mean(&fs)));
        band.push((x, lo, hi));
    }
    (mean, band)
}

/// The caption sentence saying what a figure's lines and bands are.
pub fn caption(seeds: usize) -> String {
    if seeds > 1 {
        format!("Lines: mean of {seeds} seeds; shaded band: min–max across the seeds.")
    } else {
        "One seed (no band).".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn across_aligns_bins_and_spans_min_to_max() {
        let (m, b) = across(&[
            vec![(0.5, 1.0), (1.0, 3.0)],
            vec![(0.5, 3.0), (1.0, f64::NAN)],
        ]);
        assert_eq!(m, vec![(0.5, 2.0), (1.0, 3.0)]);
        assert_eq!(b, vec![(0.5, 1.0, 3.0), (1.0, 3.0, 3.0)]);
    }

    #[test]
    fn cdf_across_reaches_one_at_the_largest_value() {
        let (m, b) = cdf_across(&[vec![1.0, 2.0], vec![2.0, 4.0], vec![]]);
        assert_eq!(m.last(), Some(&(4.0, 1.0)));
        assert_eq!(b[0], (1.0, 0.0, 0.0));
        assert_eq!(b[1], (2.0, 0.0, 1.0));
    }
}
