//! Measurement containers: bounded sample sets with exact percentiles, and per-interval
//! time series.
//!
//! `Samples` stores every value up to `MAX_SAMPLES`; past that it keeps a uniform
//! reservoir (Vitter's algorithm R) drawn from a fixed-seed ChaCha stream, so results
//! stay deterministic. Count, sum, min and max are always exact; percentiles are exact
//! until the cap is reached and estimates after (the output notes which).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Cap on stored samples per set (~80 MB of `u64` at most per set).
pub const MAX_SAMPLES: usize = 10_000_000;

/// A bounded multiset of `u64` samples (nanoseconds, typically).
#[derive(Debug, Clone)]
pub struct Samples {
    vals: Vec<u64>,
    cap: usize,
    seen: u64,
    sum: u128,
    min: u64,
    max: u64,
    rng: Option<ChaCha8Rng>,
}

impl Default for Samples {
    fn default() -> Self {
        Self::with_cap(MAX_SAMPLES)
    }
}

/// Summary statistics of a sample set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub count: u64,
    pub min: u64,
    pub mean: f64,
    pub p50: u64,
    pub p95: u64,
    pub p99: u64,
    pub max: u64,
    /// False once the reservoir cap was hit (percentiles are then estimates).
    pub exact: bool,
}

impl Summary {
    /// The exact summary of all of `samples` (nearest-rank percentiles, as
    /// [`Samples::summary`]); `None` when there are none.
    pub fn of(samples: &[u64]) -> Option<Summary> {
        let mut v = samples.to_vec();
        v.sort_unstable();
        let (&min, &max) = (v.first()?, v.last()?);
        let sum: u128 = v.iter().map(|&x| u128::from(x)).sum();
        Some(Summary {
            count: v.len() as u64,
            min,
            mean: sum as f64 / v.len() as f64,
            p50: Samples::rank(&v, 50.0),
            p95: Samples::rank(&v, 95.0),
            p99: Samples::rank(&v, 99.0),
            max,
            exact: true,
        })
    }
}

impl Samples {
    pub fn with_cap(cap: usize) -> Self {
        Samples {
            vals: Vec::new(),
            cap: cap.max(1),
            seen: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
            rng: None,
        }
    }

    /// Inline while the reservoir fills (every RTT sample and every dequeue of a
    /// metered link adds one); the replacement draw out of line.
    #[inline]
    pub fn push(&mut self, v: u64) {
        self.seen += 1;
        self.sum += u128::from(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        if self.vals.len() < self.cap {
            self.vals.push(v);
        } else {
            self.replace(v);
        }
    }

    /// Reservoir sampling past the cap: `v` replaces a stored sample with
    /// probability `cap / seen`.
    #[inline(never)]
    fn replace(&mut self, v: u64) {
        let rng = self
            .rng
            .get_or_insert_with(|| ChaCha8Rng::seed_from_u64(RESERVOIR_SEED));
        let j = rng.gen_range(0..self.seen);
        if let Ok(j) = usize::try_from(j) {
            if j < self.cap {
                self.vals[j] = v;
            }
        }
    }

    /// Samples seen (not only stored).
    pub fn len(&self) -> u64 {
        self.seen
    }
    pub fn is_empty(&self) -> bool {
        self.seen == 0
    }

    /// The stored samples, sorted.
    pub fn sorted(&self) -> Vec<u64> {
        let mut v = self.vals.clone();
        v.sort_unstable();
        v
    }

    /// Nearest-rank percentile of sorted values (`q` in [0, 100]).
    fn rank(sorted: &[u64], q: f64) -> u64 {
        if sorted.is_empty() {
            return 0;
        }
        sorted[Self::rank_index(sorted.len(), q)]
    }

    /// The index [`rank`](Self::rank) reads in `n` sorted values (`n > 0`).
    fn rank_index(n: usize, q: f64) -> usize {
        let r = ((q / 100.0) * n as f64).ceil() as usize;
        r.clamp(1, n) - 1
    }

    /// The nearest-rank p50, p95 and p99 of `v` (reordered), by selection rather than
    /// a full sort: each is the value a sort would put at its index, so the result is
    /// the same, in O(n) instead of O(n log n) (the sort was 2 % of `bench sim`).
    fn p50_95_99(v: &mut [u64]) -> (u64, u64, u64) {
        if v.is_empty() {
            return (0, 0, 0);
        }
        let n = v.len();
        let (i50, i95, i99) = (
            Self::rank_index(n, 50.0),
            Self::rank_index(n, 95.0),
            Self::rank_index(n, 99.0),
        );
        // Ranks are non-decreasing in q; each later selection works on the part at
        // and above the previous index, which holds exactly the values a sort puts
        // there.
        let (_, &mut p50, _) = v.select_nth_unstable(i50);
        let (_, &mut p95, _) = v[i50..].select_nth_unstable(i95 - i50);
        let (_, &mut p99, _) = v[i95..].select_nth_unstable(i99 - i95);
        (p50, p95, p99)
    }

    /// `points` evenly spaced nearest-rank quantiles from 0 to 100 % of the stored
    /// samples (an empirical CDF for plots and threshold fractions); empty when there
    /// are no samples or `points < 2`.
    pub fn quantiles(&self, points: usize) -> Vec<u64> {
        if self.vals.is_empty() || points < 2 {
            return Vec::new();
        }
        let v = self.sorted();
        (0..points)
            .map(|i| Self::rank(&v, 100.0 * i as f64 / (points - 1) as f64))
            .collect()
    }

    pub fn summary(&self) -> Option<Summary> {
        if self.seen == 0 {
            return None;
        }
        let mut v = self.vals.clone();
        let (p50, p95, p99) = Self::p50_95_99(&mut v);
        Some(Summary {
            count: self.seen,
            min: self.min,
            mean: self.sum as f64 / self.seen as f64,
            p50,
            p95,
            p99,
            max: self.max,
            exact: self.seen as usize <= self.cap,
        })
    }
}

/// The reservoir's fixed seed (any constant works).
const RESERVOIR_SEED: u64 = 0x5eed_5a3f;

/// One row per sampling interval, up to a cap.
#[derive(Debug, Clone, Default)]
pub struct Series<T> {
    pub rows: Vec<(u64, T)>,
    cap: usize,
}

impl<T> Series<T> {
    /// A series of at most `cap` rows. Nothing is reserved: rows grow on demand, as a
    /// flow that samples little (or a diagnostics series that most controllers never
    /// fill) must not cost its cap; reserving up to 2^16 rows per series made a
    /// 100-flow run reserve 3.5 MB per flow.
    pub fn with_cap(cap: usize) -> Self {
        Series {
            rows: Vec::new(),
            cap,
        }
    }
    /// Appends a row at time `t_ns`; ignored beyond the cap (which the scenario bounds).
    pub fn push(&mut self, t_ns: u64, v: T) {
        if self.rows.len() < self.cap {
            self.rows.push((t_ns, v));
        }
    }
    /// Appends a row of a series that gets one at every sample from now to the end of
    /// the run, `left` rows in all with this one: the first row reserves them (within
    /// the cap), so the series is allocated once instead of growing through 4, 8,
    /// 16, ... rows and copying each time (issue 36 §2: with 10^5 flows that growth was
    /// ~0.3 G instructions of a 7.7 G process). `left` only sizes the allocation: a
    /// run that stops early leaves the rest unused, one that is longer grows as `push`.
    pub fn push_every(&mut self, t_ns: u64, v: T, left: usize) {
        if self.rows.capacity() == 0 {
            self.rows.reserve_exact(left.min(self.cap));
        }
        self.push(t_ns, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_exact_nearest_rank() {
        let mut s = Samples::default();
        for v in (1..=100).rev() {
            s.push(v);
        }
        let m = s.summary().unwrap();
        assert_eq!((m.min, m.p50, m.p95, m.p99, m.max), (1, 50, 95, 99, 100));
        assert!((m.mean - 50.5).abs() < 1e-9);
        assert!(m.exact);
    }

    #[test]
    fn reservoir_keeps_memory_bounded_and_stats_exact() {
        let mut s = Samples::with_cap(1000);
        for v in 0..100_000u64 {
            s.push(v);
        }
        assert_eq!(s.sorted().len(), 1000);
        let m = s.summary().unwrap();
        assert_eq!((m.count, m.min, m.max), (100_000, 0, 99_999));
        assert!(!m.exact);
        // A uniform reservoir's median is near the true one.
        assert!((40_000..60_000).contains(&m.p50), "{}", m.p50);
    }

    #[test]
    fn selected_percentiles_equal_those_of_a_sort() {
        // Sizes around the rank boundaries, values with many repeats.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for n in (1..300).chain([999, 1000, 1001, 4096]) {
            let v: Vec<u64> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % 97
                })
                .collect();
            let mut sorted = v.clone();
            sorted.sort_unstable();
            let want = (
                Samples::rank(&sorted, 50.0),
                Samples::rank(&sorted, 95.0),
                Samples::rank(&sorted, 99.0),
            );
            assert_eq!(Samples::p50_95_99(&mut v.clone()), want, "n = {n}");
        }
    }

    #[test]
    fn empty_set_has_no_summary() {
        assert!(Samples::default().summary().is_none());
    }

    #[test]
    fn series_stop_growing_at_their_cap() {
        let mut s = Series::with_cap(3);
        for i in 0..10 {
            s.push(i, i);
        }
        assert_eq!(s.rows.len(), 3);
    }
}
