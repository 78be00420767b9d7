//! A fixed-size log-linear histogram of nanosecond values (delivery-time errors):
//! exact below 64 ns, then 32 sub-buckets per power of two, so every recorded value is
//! known to within 1/32 (3 %). Recording is O(1) with no allocation; memory is fixed.

use serde::Serialize;

const SUB_BITS: u32 = 5;
const SUB: usize = 1 << SUB_BITS;
const LINEAR: usize = 2 * SUB;
/// Buckets: 64 exact ones, then 32 for each power of two from 2^6 to 2^63.
const BUCKETS: usize = LINEAR + (64 - 6) * SUB;

#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Box<[u64]>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; BUCKETS].into_boxed_slice(),
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

fn index(v: u64) -> usize {
    if v < LINEAR as u64 {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros(); // >= 6
    let sub = ((v >> (msb - SUB_BITS)) as usize) & (SUB - 1);
    LINEAR + (msb as usize - 6) * SUB + sub
}

/// The smallest value that lands in bucket `i`.
fn lower_bound(i: usize) -> u64 {
    if i < LINEAR {
        return i as u64;
    }
    let msb = ((i - LINEAR) / SUB) as u32 + 6;
    let sub = ((i - LINEAR) % SUB) as u64;
    ((SUB as u64) | sub) << (msb - SUB_BITS)
}

impl Histogram {
    pub fn record(&mut self, v: u64) {
        self.counts[index(v)] += 1;
        self.count += 1;
        self.sum += u128::from(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The `q`-quantile (`q` in [0, 1]), as its bucket's lower bound clamped to the
    /// exact min/max; 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let q = if q.is_finite() {
            q.clamp(0.0, 1.0)
        } else {
            1.0
        };
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return lower_bound(i).clamp(self.min, self.max);
            }
        }
        self.max
    }

    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            count: self.count,
            min_ns: if self.count == 0 { 0 } else { self.min },
            p50_ns: self.quantile(0.5),
            p99_ns: self.quantile(0.99),
            p999_ns: self.quantile(0.999),
            max_ns: self.max,
            mean_ns: if self.count == 0 {
                0
            } else {
                (self.sum / u128::from(self.count)) as u64
            },
        }
    }
}

/// Percentiles of a [`Histogram`], in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ns: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
    pub mean_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_cover_their_values() {
        for i in 1..BUCKETS {
            assert!(lower_bound(i) > lower_bound(i - 1), "bucket {i}");
            assert_eq!(index(lower_bound(i)), i);
            assert_eq!(index(lower_bound(i) - 1), i - 1);
        }
        assert_eq!(index(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn quantiles_are_within_three_percent() {
        let mut h = Histogram::default();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        let p50 = h.quantile(0.5) as f64;
        let p99 = h.quantile(0.99) as f64;
        assert!((p50 / 5_000_000.0 - 1.0).abs() < 0.035, "{p50}");
        assert!((p99 / 9_900_000.0 - 1.0).abs() < 0.035, "{p99}");
        assert_eq!(h.quantile(1.0), 10_000_000 - 10_000_000 % (1 << 18));
        assert_eq!(h.summary().max_ns, 10_000_000);
        assert_eq!(h.summary().min_ns, 1000);
    }

    #[test]
    fn empty_histogram_reports_zeros() {
        let s = Histogram::default().summary();
        assert_eq!(s, LatencySummary::default());
    }
}
