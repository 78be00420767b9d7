//! RFC 8382 §3.2.1's grouping (spec §5.4), run once per T over at most
//! `max_flows` flows, in buffers allocated once: no allocation per decision.
//!
//! 1. Only congested flows are grouped: `skew_est < c_s || (skew_est < c_h && PC) ||
//!    pkt_loss > p_l`.
//! 2. Sort by freq_est; split where adjacent values differ by ≥ p_f.
//! 3. Within each group sort by var_est, highest first; split where adjacent values
//!    differ by ≥ p_pdv (p_mad) × the higher of the two.
//! 4. Within each group: flows with pkt_loss < p_l by skew_est, split at ≥ p_s; the
//!    others by pkt_loss, split at ≥ p_d × the higher. A group holding both kinds is
//!    first split into the two (S4: the draft does not say; our choice).
//!
//! "Successively divided" is read as hierarchical single-linkage splitting on sorted
//! values (S4): a split at every adjacent gap at or above the threshold.

use super::stats::{Estimates, FlowStats};
use super::SbdConfig;
use std::cmp::Ordering;

/// Whether `x` and `y` differ by at least `p` × the higher of the two. Two equal
/// values never do, zero included (taken literally, `0 < p·0` fails and would split
/// flows with identical statistics).
fn relative_gap(x: f64, y: f64, p: f64) -> bool {
    let d = (x - y).abs();
    d > 0.0 && d >= p * x.max(y)
}

/// The grouping buffers and the last decision.
#[derive(Clone, Debug)]
pub struct Grouper {
    /// Congested flows' slots, grouped runs contiguous.
    order: Vec<usize>,
    /// Group boundaries in `order` (start of each group, then `order.len()`).
    bounds: Vec<usize>,
    next: Vec<usize>,
    /// Per slot: the group of the last decision.
    labels: Vec<Option<u32>>,
}

impl Grouper {
    pub fn new(max_flows: usize) -> Self {
        Grouper {
            order: Vec::with_capacity(max_flows),
            bounds: Vec::with_capacity(max_flows + 1),
            next: Vec::with_capacity(max_flows + 1),
            labels: vec![None; max_flows],
        }
    }

    /// Drops a removed flow from the last decision.
    pub fn forget(&mut self, slot: usize) {
        if let Some(l) = self.labels.get_mut(slot) {
            *l = None;
        }
    }

    pub fn group_of(&self, slot: usize) -> Option<u32> {
        self.labels.get(slot).copied().flatten()
    }

    /// One decision over the flows' current estimates.
    pub fn group(&mut self, cfg: &SbdConfig, flows: &[Option<FlowStats>]) {
        let est = |i: usize| -> Estimates {
            flows[i].as_ref().map(|f| f.estimates()).unwrap_or_default()
        };
        self.order.clear();
        for (i, f) in flows.iter().enumerate() {
            if f.as_ref().is_some_and(|f| f.congested(cfg)) {
                self.order.push(i);
            }
        }
        self.bounds.clear();
        self.bounds.push(0);
        self.bounds.push(self.order.len());

        // Step 2: freq_est, absolute threshold.
        self.split(
            |a, b| est(a).freq_est.total_cmp(&est(b).freq_est),
            |a, b| (est(b).freq_est - est(a).freq_est).abs() >= cfg.p_f,
        );
        // Step 3: var_est, highest first, relative to the higher value.
        let p_var = cfg.p_var();
        self.split(
            |a, b| est(b).var_est.total_cmp(&est(a).var_est),
            |a, b| {
                let (x, y) = (est(a).var_est, est(b).var_est);
                relative_gap(x, y, p_var)
            },
        );
        // Step 4: low-loss flows by skew_est, the others by pkt_loss.
        let high = |i: usize| est(i).pkt_loss >= cfg.p_l;
        self.split(
            |a, b| match (high(a), high(b)) {
                (false, false) => est(a).skew_est.total_cmp(&est(b).skew_est),
                (true, true) => est(a).pkt_loss.total_cmp(&est(b).pkt_loss),
                (x, y) => x.cmp(&y),
            },
            |a, b| match (high(a), high(b)) {
                (false, false) => (est(b).skew_est - est(a).skew_est).abs() >= cfg.p_s,
                (true, true) => {
                    let (x, y) = (est(a).pkt_loss, est(b).pkt_loss);
                    relative_gap(x, y, cfg.p_d)
                }
                _ => true,
            },
        );

        self.labels.fill(None);
        for (g, w) in self.bounds.windows(2).enumerate() {
            for &slot in &self.order[w[0]..w[1]] {
                self.labels[slot] = Some(g as u32);
            }
        }
    }

    /// Sorts each current group by `cmp` (ties by slot, so the result is
    /// deterministic) and splits it wherever `cut(previous, next)` holds.
    fn split(
        &mut self,
        cmp: impl Fn(usize, usize) -> Ordering,
        cut: impl Fn(usize, usize) -> bool,
    ) {
        self.next.clear();
        for w in 0..self.bounds.len().saturating_sub(1) {
            let (a, b) = (self.bounds[w], self.bounds[w + 1]);
            let run = &mut self.order[a..b];
            run.sort_unstable_by(|&x, &y| cmp(x, y).then(x.cmp(&y)));
            self.next.push(a);
            for i in a + 1..b {
                if cut(self.order[i - 1], self.order[i]) {
                    self.next.push(i);
                }
            }
        }
        self.next.push(self.order.len());
        std::mem::swap(&mut self.bounds, &mut self.next);
    }
}
