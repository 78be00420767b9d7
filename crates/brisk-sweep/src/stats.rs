//! Mean and two-sided 95 % confidence interval (Student's t) across seeds: the one
//! statistic `brisk run --seeds`, `brisk sweep` and the Python package report.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Two-sided 95 % Student-t quantile for `df` degrees of freedom, t(0.975, df), exact
/// to 1e-9 (NaN for 0 degrees of freedom). A table with steps would give the quantile
/// of the step's end (2.000 for 31 to 60 degrees of freedom is t at 60), narrower than
/// the exact one below it.
///
/// Up to [`T95_SERIES_FROM`] degrees of freedom: statrs's inverse CDF (the incomplete
/// beta function's inverse). Above, where that inverse loses digits (at 10⁶ it falls
/// below the normal quantile, 1.95985 < 1.95996), the Cornish-Fisher expansion of t
/// around the normal quantile z (Abramowitz and Stegun 26.7.5) to 1/ν³, whose next
/// term is below 1e-11 there; the two agree to 1e-9 at the switch.
pub fn t95(df: usize) -> f64 {
    if df == 0 {
        return f64::NAN;
    }
    if df > T95_SERIES_FROM {
        let z: f64 = 1.959_963_984_540_054; // Φ⁻¹(0.975)
        let v = df as f64;
        let g1 = (z.powi(3) + z) / 4.0;
        let g2 = (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0;
        let g3 = (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / 384.0;
        return z + g1 / v + g2 / (v * v) + g3 / (v * v * v);
    }
    StudentsT::new(0.0, 1.0, df as f64).map_or(f64::NAN, |t| t.inverse_cdf(0.975))
}

/// Degrees of freedom above which [`t95`] uses the series.
pub const T95_SERIES_FROM: usize = 1000;

/// Mean, 95 % CI half-width and count of the finite values (NaN mean when there are
/// none; NaN half-width from a single value, which has no spread to estimate). Values
/// that are all equal (a deterministic scenario repeated under several seeds) give that
/// value as the mean and a half-width of exactly 0, not the rounding noise of summing
/// and dividing them (5.4e-15).
pub fn mean_ci(xs: &[f64]) -> (f64, f64, usize) {
    let mut n = 0usize;
    let mut sum = 0.0;
    let mut first: Option<f64> = None;
    let mut all_equal = true;
    for &x in xs.iter().filter(|x| x.is_finite()) {
        n += 1;
        sum += x;
        match first {
            None => first = Some(x),
            Some(f) => all_equal &= f == x,
        }
    }
    let Some(first) = first else {
        return (f64::NAN, f64::NAN, 0);
    };
    if n == 1 {
        return (first, f64::NAN, 1);
    }
    if all_equal {
        return (first, 0.0, n);
    }
    let mean = sum / n as f64;
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
    fn t95_matches_the_published_table() {
        // Two-sided 95 % critical values as printed (3 decimals) in t tables.
        for (df, t) in [
            (1, 12.706),
            (2, 4.303),
            (5, 2.571),
            (10, 2.228),
            (30, 2.042),
            (31, 2.040),
            (40, 2.021),
            (60, 2.000),
            (120, 1.980),
            (1000, 1.962),
        ] {
            assert!((t95(df) - t).abs() < 5e-4, "df {df}: {} vs {t}", t95(df));
        }
        // More digits (R: qt(0.975, df)).
        for (df, t) in [
            (1, 12.706_204_736),
            (4, 2.776_445_105),
            (31, 2.039_513_446),
            (99, 1.984_216_952),
        ] {
            assert!((t95(df) - t).abs() < 1e-6, "df {df}: {} vs {t}", t95(df));
        }
        assert!(t95(0).is_nan());
        // The two methods meet at the switch.
        let series_at = |v: f64| {
            let z: f64 = 1.959_963_984_540_054;
            z + (z.powi(3) + z) / 4.0 / v
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0 / (v * v)
                + (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z)
                    / 384.0
                    / (v * v * v)
        };
        let n = T95_SERIES_FROM;
        assert!((t95(n) - series_at(n as f64)).abs() < 1e-9, "{}", t95(n));
        assert!((t95(n + 1) - t95(n)).abs() < 1e-5);
        // Never below the normal quantile, and falling with the degrees of freedom: a
        // CI from more seeds is never wider for the same spread.
        let mut last = f64::INFINITY;
        for df in (1..200).chain([500, 10_000, 1_000_000]) {
            let t = t95(df);
            assert!(t > 1.959_963 && t < last, "df {df}: {t}");
            last = t;
        }
    }

    #[test]
    fn mean_and_ci_match_a_hand_computation() {
        // mean 2, sample sd 1, n 3: half-width t(2) * 1/sqrt(3).
        let (m, ci, n) = mean_ci(&[1.0, 2.0, 3.0]);
        assert_eq!((m, n), (2.0, 3));
        assert!((ci - 4.302_652_73 / 3f64.sqrt()).abs() < 1e-8);
        let (m, ci, n) = mean_ci(&[5.0, f64::NAN]);
        assert_eq!((m, n), (5.0, 1));
        assert!(ci.is_nan());
        assert_eq!(mean_ci(&[]).2, 0);
    }

    #[test]
    fn equal_values_have_their_value_as_mean_and_no_spread() {
        // 0.1 three times sums to 0.30000000000000004: the mean would not be 0.1, and
        // the deviations from it would give a CI of float noise.
        let (m, ci, n) = mean_ci(&[0.1, 0.1, 0.1, f64::NAN]);
        assert_eq!((m, ci, n), (0.1, 0.0, 3));
        let x = 1_234_567.891_011;
        assert_eq!(mean_ci(&[x; 40]), (x, 0.0, 40));
    }
}
