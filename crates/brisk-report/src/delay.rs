//! Per-flow one-way delay and jitter, as ns-3's FlowMonitor reports them.
//!
//! One delay per data packet received, from the sender's hand-off to the network to
//! its arrival at the receiver. Jitter follows FlowMonitor (`FlowMonitor::ReportLastRx`
//! in ns-3's `flow-monitor.cc`): `jitterSum` adds |delay_i − delay_{i−1}| over
//! consecutive received packets, and the mean jitter is `jitterSum / (rxPackets − 1)`.
//!
//! Memory is bounded: percentiles come from an HDR histogram (three significant digits,
//! so within 0.1 %), while count, sum, min, max and the jitter sum are exact. Since
//! every flow of a 10^4-flow run has one, its counts are kept sparsely
//! ([`SparseHdr`]: 256-B chunks where delays land; a dense histogram up to 20 ms was
//! about 130 KB per flow) and made into the dense histogram only to answer the
//! quantiles, with the same count in every bucket, so the same answers. Recording is
//! O(1) while delays stay near the last one; it allocates only on a chunk's first
//! value.

use crate::sparse_hdr::SparseHdr;
use hdrhistogram::Histogram;
use serde_json::{json, Value};

use crate::json::{ms, ms_f, num};

/// The largest delay the histogram resolves (longer ones count as this): 1 hour.
const HIGHEST_NS: u64 = 3_600_000_000_000;

/// A flow's one-way delay and jitter recorder.
#[derive(Clone, Debug)]
pub struct OneWayDelay {
    hist: SparseHdr,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
    last: u64,
    jitter_sum: u128,
}

/// The largest value a histogram over 1..=`HIGHEST_NS` has a bucket for (its last
/// bucket reaches past `HIGHEST_NS`): larger delays are counted as `HIGHEST_NS`, and
/// the rest in their own buckets, exactly as `saturating_record` into such a
/// histogram did. Found once by bisection on a probe, as the crate does not expose it.
fn highest_trackable() -> u64 {
    static TOP: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TOP.get_or_init(|| {
        // NOTE(unwrap): constant, valid bounds (1 ≤ low, 2·low ≤ high, 3 digits).
        let mut probe = Histogram::<u64>::new_with_bounds(1, HIGHEST_NS, 3).expect("valid bounds");
        let (mut ok, mut bad) = (HIGHEST_NS, u64::MAX / 4);
        while bad - ok > 1 {
            let mid = ok + (bad - ok) / 2;
            if probe.record(mid).is_ok() {
                ok = mid;
            } else {
                bad = mid;
            }
        }
        ok
    })
}

impl Default for OneWayDelay {
    fn default() -> Self {
        // Bucket positions depend on the lowest value and the digits only, never on the
        // highest, so sparse counts rebuilt into a growing histogram put every delay in
        // the same bucket as the full-range one and answer every quantile the same.
        OneWayDelay {
            hist: SparseHdr::default(),
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
            last: 0,
            jitter_sum: 0,
        }
    }
}

/// The summary of a flow's one-way delays and their jitter, nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DelaySummary {
    /// Data packets received (FlowMonitor's `rxPackets`).
    pub packets: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p95_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    /// Mean jitter, `jitterSum / (packets − 1)`; `None` below two packets.
    pub jitter_ns: Option<f64>,
}

impl OneWayDelay {
    /// Records one received packet's delay.
    pub fn record(&mut self, delay_ns: u64) {
        let v = delay_ns.max(1);
        let v = if v > highest_trackable() {
            HIGHEST_NS
        } else {
            v
        };
        self.hist.record(v);
        if self.count > 0 {
            self.jitter_sum += u128::from(self.last.abs_diff(delay_ns));
        }
        self.last = delay_ns;
        self.count += 1;
        self.sum += u128::from(delay_ns);
        self.min = self.min.min(delay_ns);
        self.max = self.max.max(delay_ns);
    }

    /// Packets recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// `None` when no packet was recorded.
    pub fn summary(&self) -> Option<DelaySummary> {
        if self.count == 0 {
            return None;
        }
        // The histogram answers with its bucket's highest equivalent value; clamping to
        // the exact extremes keeps p50 ≤ max when every sample is equal.
        let hist = self.hist.to_histogram();
        let q = |p: f64| hist.value_at_quantile(p).clamp(self.min, self.max);
        Some(DelaySummary {
            packets: self.count,
            min_ns: self.min,
            mean_ns: self.sum as f64 / self.count as f64,
            p50_ns: q(0.50),
            p95_ns: q(0.95),
            p99_ns: q(0.99),
            max_ns: self.max,
            jitter_ns: (self.count > 1).then(|| self.jitter_sum as f64 / (self.count - 1) as f64),
        })
    }
}

impl DelaySummary {
    /// The `one_way_delay` object of a flow's JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "packets": self.packets,
            "mean_ms": num(ms_f(self.mean_ns)),
            "p50_ms": num(ms(self.p50_ns)),
            "p95_ms": num(ms(self.p95_ns)),
            "p99_ms": num(ms(self.p99_ns)),
            "max_ms": num(ms(self.max_ns)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growing_histogram_answers_like_the_full_range_one() {
        // The old recorder: the full one-hour range allocated up front.
        let mut full = Histogram::<u64>::new_with_bounds(1, HIGHEST_NS, 3).unwrap();
        let mut d = OneWayDelay::default();
        let mut x: u64 = 7;
        for i in 0..20_000u64 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            // Mostly 5–40 ms, some sub-µs and some beyond the range (clamped alike).
            let v = match i % 100 {
                0 => x % 1000,
                1 => HIGHEST_NS + x % HIGHEST_NS,
                _ => 5_000_000 + x % 35_000_000,
            };
            full.saturating_record(v.max(1));
            d.record(v);
        }
        for q in [0.0, 0.01, 0.5, 0.95, 0.99, 0.999, 1.0] {
            assert_eq!(
                d.hist.to_histogram().value_at_quantile(q),
                full.value_at_quantile(q),
                "q {q}"
            );
        }
        assert!(d.hist.to_histogram().len() == full.len());
    }

    #[test]
    fn jitter_is_flow_monitors_mean_absolute_delay_difference() {
        let mut d = OneWayDelay::default();
        for ms in [10u64, 12, 11, 15] {
            d.record(ms * 1_000_000);
        }
        let s = d.summary().unwrap();
        // |12−10| + |11−12| + |15−11| = 7 ms over 3 pairs.
        assert!((s.jitter_ns.unwrap() - 7e6 / 3.0).abs() < 1e-6);
        assert_eq!((s.packets, s.min_ns, s.max_ns), (4, 10_000_000, 15_000_000));
        assert!((s.mean_ns - 12e6).abs() < 1e-6);
        assert_eq!(s.to_json()["max_ms"], json!(15.0));
    }

    #[test]
    fn percentiles_are_within_a_tenth_of_a_percent() {
        let mut d = OneWayDelay::default();
        for v in 1..=100_000u64 {
            d.record(v * 1000);
        }
        let s = d.summary().unwrap();
        for (got, want) in [(s.p50_ns, 50e6), (s.p95_ns, 95e6), (s.p99_ns, 99e6)] {
            assert!((got as f64 / want - 1.0).abs() < 1e-3, "{got} vs {want}");
        }
    }

    #[test]
    fn one_packet_has_no_jitter_and_none_has_no_summary() {
        let mut d = OneWayDelay::default();
        assert!(d.summary().is_none());
        d.record(5);
        let s = d.summary().unwrap();
        assert_eq!((s.p50_ns, s.p99_ns, s.jitter_ns), (5, 5, None));
    }
}
