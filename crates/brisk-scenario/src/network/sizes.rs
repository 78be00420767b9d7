//! Flow-size distributions of a workload (`workload.sizes`): a piecewise-linear CDF
//! over flow sizes in bytes, points (size, cumulative probability), sizes
//! non-decreasing, probabilities non-decreasing and ending at 1. Two points at the same
//! size make a point mass (a jump of the CDF), as the RC3 workload's 7.3 KB and 1.7 MB
//! flows need. [`SizeCdf::quantile`] is the inverse transform (interpolating linearly in
//! size between points); the simulator draws `u` from its own seeded stream
//! (`brisk_sim::workload`), so nothing here holds randomness.

/// Most points in a CDF.
pub const MAX_POINTS: usize = 1024;
/// Most flows one workload may generate (a bound on what a scenario can ask for).
pub const MAX_FLOWS: usize = 200_000;

/// Why a CDF is refused; the index is the offending point's.
#[derive(Clone, Debug, PartialEq)]
pub enum CdfError {
    Empty,
    TooMany(usize),
    /// Size 0, a size below the previous one, or more than 1 GiB.
    Size(usize),
    /// A probability outside [0, 1] or below the previous one.
    Probability(usize),
    /// The last probability is not 1.
    NotComplete,
}

impl std::fmt::Display for CdfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CdfError::Empty => write!(f, "needs at least one [size, probability] point"),
            CdfError::TooMany(n) => write!(f, "{n} points: at most {MAX_POINTS}"),
            CdfError::Size(i) => write!(
                f,
                "point {i}: sizes must be between 1 byte and 1GiB and never decrease"
            ),
            CdfError::Probability(i) => write!(
                f,
                "point {i}: probabilities must be between 0 and 1 and never decrease"
            ),
            CdfError::NotComplete => write!(f, "the last point's probability must be 1"),
        }
    }
}

impl std::error::Error for CdfError {}

/// A piecewise-linear CDF of flow sizes (bytes).
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    points: Vec<(u64, f64)>,
}

/// RC3's segment size, for the built-in CDFs written in packets.
const PKT: u64 = 1460;

impl SizeCdf {
    pub fn new(points: Vec<(u64, f64)>) -> Result<Self, CdfError> {
        if points.is_empty() {
            return Err(CdfError::Empty);
        }
        if points.len() > MAX_POINTS {
            return Err(CdfError::TooMany(points.len()));
        }
        for (i, &(s, p)) in points.iter().enumerate() {
            let prev = i.checked_sub(1).map(|j| points[j]);
            if s == 0 || s > 1 << 30 || prev.is_some_and(|(ps, _)| s < ps) {
                return Err(CdfError::Size(i));
            }
            if !(0.0..=1.0).contains(&p) || prev.is_some_and(|(_, pp)| p < pp) {
                return Err(CdfError::Probability(i));
            }
        }
        if points.last().map(|x| x.1) != Some(1.0) {
            return Err(CdfError::NotComplete);
        }
        Ok(SizeCdf { points })
    }

    /// A built-in CDF by name: "rc3-synthetic" or "rc3-2000".
    pub fn builtin(name: &str) -> Option<Self> {
        let pts: &[(u64, f64)] = match name {
            "rc3-synthetic" => RC3_SYNTHETIC,
            "rc3-2000" => RC3_2000,
            _ => return None,
        };
        let points = pts.iter().map(|&(n, p)| (n * PKT, p)).collect();
        // NOTE(unwrap): the tables below are valid (tested).
        Some(SizeCdf::new(points).expect("built-in CDF"))
    }

    /// Names of the built-in CDFs, for error messages.
    pub const BUILTINS: [&'static str; 2] = ["rc3-synthetic", "rc3-2000"];

    pub fn points(&self) -> &[(u64, f64)] {
        &self.points
    }

    /// The size at cumulative probability `u` in [0, 1].
    pub fn quantile(&self, u: f64) -> u64 {
        let i = self.points.partition_point(|&(_, p)| p < u);
        let Some(&(s, p)) = self.points.get(i) else {
            return self.points[self.points.len() - 1].0;
        };
        let Some(&(s0, p0)) = i.checked_sub(1).map(|j| &self.points[j]) else {
            return s;
        };
        if p <= p0 || s == s0 {
            return s;
        }
        let f = (u - p0) / (p - p0);
        (s0 as f64 + f * (s - s0) as f64).round().max(1.0) as u64
    }

    /// E[size] in bytes (the first point's mass sits at its size).
    pub fn mean(&self) -> f64 {
        let (s0, p0) = self.points[0];
        let mut m = s0 as f64 * p0;
        for w in self.points.windows(2) {
            let ((a, pa), (b, pb)) = (w[0], w[1]);
            m += (pb - pa) * (a + b) as f64 / 2.0;
        }
        m
    }
}

/// The RC3 workload substitute (spec A9; version 1), in 1460-byte packets: most flows
/// a few packets, point masses at 5 packets (7.3 KB) and 1164 packets (1.7 MB), a tail
/// to 4000 packets (5.8 MB, within the three RLP levels' 4440). Allman's 2013 CDF,
/// which the paper used, is not published with it.
const RC3_SYNTHETIC: &[(u64, f64)] = &[
    (1, 0.30),
    (2, 0.45),
    (4, 0.55),
    (5, 0.55),
    (5, 0.62),
    (10, 0.70),
    (40, 0.80),
    (100, 0.87),
    (440, 0.93),
    (1000, 0.955),
    (1164, 0.955),
    (1164, 0.97),
    (2000, 0.985),
    (4000, 1.0),
];

/// The "2000 workload" substitute (spec A9): lighter-tailed, few flows above 100 KB.
const RC3_2000: &[(u64, f64)] = &[
    (1, 0.35),
    (2, 0.55),
    (5, 0.75),
    (10, 0.85),
    (40, 0.95),
    (100, 0.985),
    (700, 1.0),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_are_valid() {
        for name in SizeCdf::BUILTINS {
            assert!(SizeCdf::builtin(name).is_some(), "{name}");
        }
        let c = SizeCdf::builtin("rc3-synthetic").unwrap();
        assert!(SizeCdf::builtin("rc3-2000").unwrap().mean() < c.mean() / 3.0);
    }

    #[test]
    fn quantiles_interpolate_and_jump_at_point_masses() {
        let c = SizeCdf::new(vec![(100, 0.5), (100, 0.7), (300, 1.0)]).unwrap();
        assert_eq!(c.quantile(0.0), 100);
        assert_eq!(c.quantile(0.6), 100);
        assert_eq!(c.quantile(0.85), 200);
        assert_eq!(c.quantile(1.0), 300);
        assert!((c.mean() - (100.0 * 0.7 + 200.0 * 0.3)).abs() < 1e-9);
    }

    #[test]
    fn bad_cdfs_name_the_point() {
        assert_eq!(SizeCdf::new(vec![]), Err(CdfError::Empty));
        assert_eq!(
            SizeCdf::new(vec![(10, 0.5), (5, 1.0)]),
            Err(CdfError::Size(1))
        );
        assert_eq!(
            SizeCdf::new(vec![(10, 0.5), (20, 0.4), (30, 1.0)]),
            Err(CdfError::Probability(1))
        );
        assert_eq!(SizeCdf::new(vec![(10, 0.5)]), Err(CdfError::NotComplete));
        assert_eq!(SizeCdf::new(vec![(0, 1.0)]), Err(CdfError::Size(0)));
    }
}
