//! Mean and two-sided 95 % confidence interval (Student's t) across seeds: the one
//! statistic `brisk run --seeds`, `brisk sweep` and the Python package report.

/// Two-sided 95 % Student-t quantile for `df` degrees of freedom (tabulated to 30, then
/// the usual 40/60/120/∞ steps rounded down to the next tabulated row, so a CI is
/// never narrower than the exact one).
pub fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => T[df - 1],
        31..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
    }
}

/// Mean, 95 % CI half-width and count of the finite values (NaN mean when there are
/// none; NaN half-width from a single value, which has no spread to estimate).
pub fn mean_ci(xs: &[f64]) -> (f64, f64, usize) {
    let mut n = 0usize;
    let mut sum = 0.0;
    for x in xs.iter().filter(|x| x.is_finite()) {
        n += 1;
        sum += x;
    }
    if n == 0 {
        return (f64::NAN, f64::NAN, 0);
    }
    let mean = sum / n as f64;
    if n == 1 {
        return (mean, f64::NAN, 1);
    }
    let var = xs
        .iter()
        .filter(|x| x.is_finite())
        .map(|x| (x - mean).powi(2))
        .sum::<f64>()
        / (n - 1) as f64;
    (mean, t95(n - 1) * (var / n as f64).sqrt(), n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_ci_match_a_hand_computation() {
        // mean 2, sample sd 1, n 3: half-width t(2) * 1/sqrt(3) = 4.303 * 0.57735.
        let (m, ci, n) = mean_ci(&[1.0, 2.0, 3.0]);
        assert_eq!((m, n), (2.0, 3));
        assert!((ci - 4.303 / 3f64.sqrt()).abs() < 1e-9);
        let (m, ci, n) = mean_ci(&[5.0, f64::NAN]);
        assert_eq!((m, n), (5.0, 1));
        assert!(ci.is_nan());
        assert_eq!(mean_ci(&[]).2, 0);
        assert_eq!(t95(1000), 1.960);
    }
}
