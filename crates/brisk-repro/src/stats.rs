//! Small descriptive statistics over `f64` samples: mean, interpolated quantiles,
//! IQR, Tukey's 1.5×IQR outlier fence (the thesis' Fig. 6.3–6.5 "after removing
//! outliers"), and fractions read off an empirical CDF.

/// Arithmetic mean; `NaN` for no samples.
pub fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.iter().sum::<f64>() / v.len() as f64
}

/// Sorted copy (NaNs last).
pub fn sorted(v: &[f64]) -> Vec<f64> {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s
}

/// Quantile `q` in [0, 1] with linear interpolation between order statistics
/// (Hyndman–Fan type 7, the default of R and NumPy); `NaN` for no samples.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    let s = sorted(v);
    quantile_sorted(&s, q)
}

fn quantile_sorted(s: &[f64], q: f64) -> f64 {
    if s.is_empty() {
        return f64::NAN;
    }
    let h = (s.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    s[lo] + (s[hi] - s[lo]) * (h - lo as f64)
}

pub fn median(v: &[f64]) -> f64 {
    quantile(v, 0.5)
}

/// The five numbers of a box plot plus the mean and the points beyond the whiskers.
#[derive(Clone, Debug, PartialEq)]
pub struct BoxStats {
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    /// Whiskers: the most extreme samples inside the Tukey fences.
    pub lo: f64,
    pub hi: f64,
    /// Mean after removing the outliers (the thesis' "average").
    pub mean_trimmed: f64,
    /// Mean of every sample.
    pub mean_all: f64,
    pub outliers: Vec<f64>,
    pub n: usize,
}

impl BoxStats {
    pub fn iqr(&self) -> f64 {
        self.q3 - self.q1
    }
}

/// Box-plot statistics with Tukey fences at 1.5×IQR; `None` for no samples.
pub fn box_stats(v: &[f64]) -> Option<BoxStats> {
    if v.is_empty() {
        return None;
    }
    let s = sorted(v);
    let q1 = quantile_sorted(&s, 0.25);
    let q3 = quantile_sorted(&s, 0.75);
    let (flo, fhi) = (q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1));
    let inside: Vec<f64> = s
        .iter()
        .copied()
        .filter(|x| *x >= flo && *x <= fhi)
        .collect();
    let outliers = s.iter().copied().filter(|x| *x < flo || *x > fhi).collect();
    Some(BoxStats {
        q1,
        median: quantile_sorted(&s, 0.5),
        q3,
        lo: inside.first().copied().unwrap_or(q1),
        hi: inside.last().copied().unwrap_or(q3),
        mean_trimmed: mean(&inside),
        mean_all: mean(&s),
        outliers,
        n: s.len(),
    })
}

/// Fraction of samples ≥ `threshold`, read off evenly spaced nearest-rank quantiles
/// (`brisk_sim::run::QUANTILE_POINTS` of them): resolution 1/points.
pub fn frac_at_least(quantiles: &[u64], threshold: u64) -> f64 {
    if quantiles.is_empty() {
        return f64::NAN;
    }
    let below = quantiles.partition_point(|&q| q < threshold);
    (quantiles.len() - below) as f64 / quantiles.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_between_order_statistics() {
        let v = [4.0, 1.0, 3.0, 2.0, 5.0];
        assert_eq!(median(&v), 3.0);
        assert_eq!(quantile(&v, 0.25), 2.0);
        assert_eq!(quantile(&[1.0, 2.0], 0.5), 1.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn tukey_fences_separate_outliers_from_the_trimmed_mean() {
        let mut v: Vec<f64> = (1..=20).map(f64::from).collect();
        v.push(1000.0);
        let b = box_stats(&v).unwrap();
        assert_eq!(b.outliers, vec![1000.0]);
        assert_eq!(b.hi, 20.0);
        assert!((b.mean_trimmed - 10.5).abs() < 1e-9);
        assert!(b.mean_all > 50.0);
    }

    #[test]
    fn threshold_fraction_reads_the_empirical_cdf() {
        let q: Vec<u64> = (0..=100).collect();
        assert!((frac_at_least(&q, 90) - 11.0 / 101.0).abs() < 1e-12);
        assert_eq!(frac_at_least(&q, 0), 1.0);
        assert_eq!(frac_at_least(&q, 1000), 0.0);
    }
}
