//! Mahimahi packet-delivery traces (Netravali et al., "Mahimahi: Accurate
//! Record-and-Replay for HTTP", USENIX ATC 2015; `mm-link`'s `.up`/`.down` files).
//!
//! A trace is one millisecond timestamp per line, non-decreasing; each line is one
//! *delivery opportunity* of [`OPPORTUNITY_BYTES`]. The trace repeats with a period of
//! its last timestamp (which must be > 0), exactly as `mm-link` does
//! (`LinkQueue::use_a_delivery_opportunity` adds `schedule_.back()` at wrap-around).
//!
//! [`TraceServer`] is the service discipline of a trace-driven link, mirroring
//! `LinkQueue::rationalize`: an opportunity serves up to 1500 bytes; a packet bigger
//! than what is left of it keeps its remaining bytes for the next opportunity; the
//! surplus of an opportunity serves the next queued packet, if one is waiting, and is
//! lost otherwise. Mahimahi counts 1504 bytes per opportunity because its TUN frames
//! carry a 4-byte packet-information header; brisk's packets are bare IP, so 1500 IP
//! bytes is the same capacity.
//!
//! One departure from `mm-link`, recorded in docs/scenarios.md: Mahimahi burns the
//! opportunities due at `now` before it enqueues a packet arriving at `now`, so such a
//! packet misses an opportunity at its own millisecond; brisk works in nanoseconds and
//! lets a packet use an opportunity at its own arrival instant.
//!
//! [`generate`] writes the synthetic traces brisk ships in `traces/`.

use std::sync::Arc;

use brisk_time::Instant;
use thiserror::Error;

/// Bytes one delivery opportunity carries (a full-size IP packet).
pub const OPPORTUNITY_BYTES: u32 = 1500;
/// Most lines a trace may have (40 MB of timestamps; Mahimahi's longest shipped
/// cellular traces have under 200k lines).
pub const MAX_TRACE_LINES: usize = 5_000_000;
/// Largest timestamp accepted: 24 hours in milliseconds.
pub const MAX_TRACE_MS: u64 = 24 * 3600 * 1000;

const NS_PER_MS: u64 = 1_000_000;

/// A parse failure, with the 1-based line it is on (0 for the file as a whole).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("line {line}: {message}")]
pub struct TraceError {
    pub line: usize,
    pub message: String,
}

/// A parsed trace: delivery opportunities within one period, in nanoseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryTrace {
    /// Opportunity offsets within a period, non-decreasing, in ns.
    at_ns: Vec<u64>,
    /// The period: the last timestamp, in ns (> 0).
    period_ns: u64,
}

impl DeliveryTrace {
    /// Parses Mahimahi's format. Blank lines at the end of the file are allowed (an
    /// editor's final newline); elsewhere every line must be one integer.
    pub fn parse(text: &str) -> Result<DeliveryTrace, TraceError> {
        let mut at_ns = Vec::new();
        let lines: Vec<&str> = text.lines().collect();
        let last_content = lines.iter().rposition(|l| !l.trim().is_empty());
        let Some(last_content) = last_content else {
            return Err(TraceError {
                line: 0,
                message: "no timestamps: a trace has one millisecond timestamp per line".into(),
            });
        };
        if last_content >= MAX_TRACE_LINES {
            return Err(TraceError {
                line: MAX_TRACE_LINES + 1,
                message: format!("too long: at most {MAX_TRACE_LINES} lines"),
            });
        }
        at_ns.reserve(last_content + 1);
        let mut prev = 0u64;
        for (i, raw) in lines[..=last_content].iter().enumerate() {
            let line = i + 1;
            let s = raw.trim();
            let ms: u64 = s.parse().map_err(|_| TraceError {
                line,
                message: format!(
                    "expected a whole number of milliseconds between 0 and {MAX_TRACE_MS}, got {s:?}"
                ),
            })?;
            if ms > MAX_TRACE_MS {
                return Err(TraceError {
                    line,
                    message: format!("{ms} ms is beyond the limit of {MAX_TRACE_MS} ms (24h)"),
                });
            }
            if ms < prev {
                return Err(TraceError {
                    line,
                    message: format!("timestamps must not decrease ({ms} after {prev})"),
                });
            }
            prev = ms;
            at_ns.push(ms * NS_PER_MS);
        }
        if prev == 0 {
            return Err(TraceError {
                line: last_content + 1,
                message: "the last timestamp is the period and must be > 0".into(),
            });
        }
        Ok(DeliveryTrace {
            at_ns,
            period_ns: prev * NS_PER_MS,
        })
    }

    /// Opportunities per period.
    pub fn len(&self) -> usize {
        self.at_ns.len()
    }

    /// Never true for a parsed trace; here for the `len` convention.
    pub fn is_empty(&self) -> bool {
        self.at_ns.is_empty()
    }

    /// The period (the last timestamp) in ms.
    pub fn period_ms(&self) -> u64 {
        self.period_ns / NS_PER_MS
    }

    /// Mean capacity over one period in bit/s.
    pub fn mean_rate_bps(&self) -> f64 {
        self.len() as f64 * f64::from(OPPORTUNITY_BYTES) * 8.0 / (self.period_ns as f64 / 1e9)
    }

    /// The time of opportunity `k` (counted from time zero across periods).
    pub fn time_of_index(&self, k: u64) -> Instant {
        let n = self.at_ns.len() as u64;
        let ns = (k / n)
            .saturating_mul(self.period_ns)
            .saturating_add(self.at_ns[(k % n) as usize]);
        Instant::from_nanos(ns)
    }

    /// The index (across periods) of the first opportunity at or after `t`.
    fn first_at_or_after(&self, t: Instant) -> u64 {
        let n = self.at_ns.len() as u64;
        let cycle = t.as_nanos() / self.period_ns;
        let off = t.as_nanos() % self.period_ns;
        if off == 0 && cycle > 0 {
            // Lines equal to the period fall at the start of the next cycle.
            let i = self.at_ns.partition_point(|&a| a < self.period_ns) as u64;
            if i < n {
                return (cycle - 1).saturating_mul(n).saturating_add(i);
            }
        }
        let i = self.at_ns.partition_point(|&a| a < off) as u64;
        cycle.saturating_mul(n).saturating_add(i)
    }

    /// Opportunity times in `[from, to)`, for logs (Mahimahi's `#` lines).
    pub fn opportunities(&self, from: Instant, to: Instant) -> impl Iterator<Item = Instant> + '_ {
        let first = self.first_at_or_after(from);
        (first..)
            .map(|k| self.time_of_index(k))
            .take_while(move |t| *t < to)
    }

    /// Renders the trace in Mahimahi's format.
    pub fn to_text(&self) -> String {
        let mut s = String::with_capacity(self.at_ns.len() * 6);
        for a in &self.at_ns {
            s.push_str(&(a / NS_PER_MS).to_string());
            s.push('\n');
        }
        s
    }
}

/// A trace-driven link's service: when does a packet that reaches the head of the
/// queue at `start` leave? O(1) amortised per packet (one opportunity per 1500 bytes,
/// a binary search after an idle period).
#[derive(Clone, Debug)]
pub struct TraceServer {
    trace: Arc<DeliveryTrace>,
    /// Index (across periods) of the next unused opportunity.
    next: u64,
    /// The last opportunity used and the bytes it still had after its last packet.
    leftover: Option<(Instant, u32)>,
}

impl TraceServer {
    pub fn new(trace: Arc<DeliveryTrace>) -> TraceServer {
        TraceServer {
            trace,
            next: 0,
            leftover: None,
        }
    }

    pub fn trace(&self) -> &DeliveryTrace {
        &self.trace
    }

    pub fn trace_arc(&self) -> Arc<DeliveryTrace> {
        Arc::clone(&self.trace)
    }

    /// When a packet of `bytes` that starts service at `start` has been carried.
    /// `back_to_back` says it was queued when the previous packet left, so it may use
    /// the rest of that packet's last opportunity.
    pub fn finish(&mut self, start: Instant, bytes: usize, back_to_back: bool) -> Instant {
        let mut left = u64::try_from(bytes).unwrap_or(u64::MAX);
        if let Some((t, spare)) = self.leftover.take() {
            if back_to_back && t == start && spare > 0 {
                let used = left.min(u64::from(spare));
                left -= used;
                if left == 0 {
                    self.leftover = Some((t, spare - used as u32));
                    return t;
                }
            }
        }
        if self.trace.time_of_index(self.next) < start {
            self.next = self.trace.first_at_or_after(start);
        }
        loop {
            let t = self.trace.time_of_index(self.next);
            self.next = self.next.saturating_add(1);
            let used = left.min(u64::from(OPPORTUNITY_BYTES));
            left -= used;
            if left == 0 {
                self.leftover = Some((t, OPPORTUNITY_BYTES - used as u32));
                return t;
            }
        }
    }
}

/// The synthetic traces brisk ships (`brisk trace generate`), deterministic functions
/// of their parameters.
pub mod generate {
    use super::{DeliveryTrace, NS_PER_MS, OPPORTUNITY_BYTES};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Evenly spaced opportunities for `rate_bps` over `period_ms`, placed at the
    /// millisecond in which each 1500 bytes of capacity completes (as Mahimahi's
    /// `--cbr` traces are built), so the long-run rate is exact.
    pub fn constant(rate_bps: u64, period_ms: u64) -> DeliveryTrace {
        stepped(&[(rate_bps, period_ms)])
    }

    /// Piecewise-constant rate: each `(rate_bps, ms)` step in turn.
    pub fn stepped(steps: &[(u64, u64)]) -> DeliveryTrace {
        let bits = u128::from(OPPORTUNITY_BYTES) * 8;
        let mut at_ns = Vec::new();
        let mut t0 = 0u64;
        for &(rate, ms) in steps {
            // Opportunity k of this step completes at k·bits/rate seconds.
            let n = u128::from(rate) * u128::from(ms) / 1000 / bits;
            for k in 1..=n {
                let ms_in = (k * bits * 1000).div_ceil(u128::from(rate.max(1)));
                at_ns.push((t0 + ms_in as u64) * NS_PER_MS);
            }
            t0 += ms;
        }
        finish(at_ns, t0)
    }

    /// An LTE-like synthetic trace: capacity follows a bounded random walk in log
    /// space between `min_bps` and `max_bps` (one step per 100 ms), with Poisson
    /// opportunities inside each millisecond and occasional 50–300 ms outages (the
    /// shape of the Verizon/T-Mobile traces in the Mahimahi and Sprout papers, not a
    /// recording of any network). Deterministic in `seed`.
    pub fn lte_like(min_bps: u64, max_bps: u64, period_ms: u64, seed: u64) -> DeliveryTrace {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (lo, hi) = ((min_bps.max(1) as f64).ln(), (max_bps.max(2) as f64).ln());
        let mut level = (lo + hi) / 2.0;
        let mut outage_until = 0u64;
        let mut at_ns = Vec::new();
        let per_ms_bytes = |bps: f64| bps / 8.0 / 1000.0 / f64::from(OPPORTUNITY_BYTES);
        let mut credit = 0.0f64;
        for ms in 1..=period_ms {
            if ms % 100 == 0 {
                level = (level + rng.gen_range(-0.35..0.35)).clamp(lo, hi);
                if ms >= outage_until && rng.gen_bool(0.01) {
                    outage_until = ms + rng.gen_range(50..300);
                }
            }
            if ms < outage_until {
                continue;
            }
            // Opportunities this millisecond: the mean carried as credit, dithered so
            // bursts of several per millisecond happen as on a cellular scheduler.
            credit += per_ms_bytes(level.exp());
            let whole = credit.floor();
            let extra = if rng.gen_bool((credit - whole).clamp(0.0, 1.0)) {
                1.0
            } else {
                0.0
            };
            let n = whole + extra;
            credit -= n;
            for _ in 0..n as u64 {
                at_ns.push(ms * NS_PER_MS);
            }
        }
        finish(at_ns, period_ms)
    }

    /// Ends the period at `period_ms`: Mahimahi's period is the last line, so a line
    /// at the period is added when the last opportunity falls earlier.
    fn finish(mut at_ns: Vec<u64>, period_ms: u64) -> DeliveryTrace {
        let period_ns = period_ms.max(1) * NS_PER_MS;
        if at_ns.last() != Some(&period_ns) {
            at_ns.push(period_ns);
        }
        DeliveryTrace { at_ns, period_ns }
    }
}

#[cfg(test)]
#[path = "mahimahi_tests.rs"]
mod tests;
