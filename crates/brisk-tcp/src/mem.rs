//! Endpoint-wide memory accounting, after Linux's `tcp_mem` (`net.ipv4.tcp_mem`: the
//! low / pressure / high thresholds on `tcp_memory_allocated`), with the pressure
//! response of `tcp_prune_queue`: `tcp_collapse_ofo_queue` / `tcp_collapse` first,
//! then `tcp_prune_ofo_queue`, and at the hard limit the drop that
//! `tcp_try_rmem_schedule` failing causes in `tcp_data_queue` (`TCPRcvQDrop`,
//! `TCPOFODrop`).
//!
//! Each connection's window bounds what one peer can make us hold (6 MiB by default),
//! but not what many can: 64 peers sending far-ahead data with holes pinned 394 MB,
//! 65 536 could pin hundreds of GB. The endpoint owns the one counter (no global state:
//! two endpoints in one process are independent, and the same inputs give the same
//! drops). Connections report what they hold ([`MemUsage`], by allocated capacity)
//! and the endpoint keeps the sum, re-reading a connection after each input to it:
//!
//! - above `pressure`, it collapses the out-of-order store of the connection the
//!   segment arrived on and of the largest holders, then prunes out-of-order data
//!   from the top, **largest holder first**, until the total is back at `low`
//!   (hysteresis, as Linux leaves pressure only below `low`). Largest first because
//!   the biggest holder is the likeliest attacker and frees the most per step; Linux
//!   prunes the socket that is allocating, which in this attack is often a victim.
//!   Connections are kept ordered by what they hold, so finding one is O(log n).
//! - at `high`, a segment whose data would allocate beyond it is dropped and counted
//!   (`drop_mem`); the peer retransmits. Growth near the limit reserves exactly what
//!   it needs instead of doubling, so the total never passes `high`.
//!
//! In-order data waiting for the application has been cumulatively ACKed and is never
//! dropped; it is charged (an application that does not read holds memory), so when it
//! alone fills the budget, new data is refused until the application reads. The send
//! side is reported but not charged: the application bounds it with
//! `Config::send_buffer`, and charging it would let our own writes prune our peers.

use crate::conn::pressure::MemUsage;
use crate::conn::Connection;
use crate::stats::EndpointStats;
use std::collections::BTreeSet;

/// The three thresholds, in bytes (Linux's `tcp_mem`, which counts pages).
/// Invariant: `low <= pressure <= high`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemLimits {
    low: usize,
    pressure: usize,
    high: usize,
}

/// The thresholds given to [`MemLimits::new`] are out of order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "EndpointConfig::mem: need low <= pressure <= high, got low {low}, pressure {pressure}, high {high} (bytes)"
)]
pub struct MemLimitsError {
    pub low: usize,
    pub pressure: usize,
    pub high: usize,
}

impl MemLimits {
    /// What Linux computes for a 16 GiB host (`tcp_mem` = 188 k / 251 k / 377 k pages
    /// of 4 KiB): low 768 MiB, pressure 1 GiB, high 1.5 GiB. Large enough that no
    /// ordinary workload (a thousand connections with full windows) meets them, small
    /// enough that 65 536 hostile peers cannot take the host's memory.
    pub const DEFAULT: MemLimits = MemLimits {
        low: 768 << 20,
        pressure: 1 << 30,
        high: 3 << 29,
    };

    /// No limit (for tests that want the old behaviour).
    pub const UNLIMITED: MemLimits = MemLimits {
        low: usize::MAX,
        pressure: usize::MAX,
        high: usize::MAX,
    };

    /// Thresholds in bytes; errors unless `low <= pressure <= high`.
    pub fn new(low: usize, pressure: usize, high: usize) -> Result<Self, MemLimitsError> {
        if low <= pressure && pressure <= high {
            Ok(MemLimits {
                low,
                pressure,
                high,
            })
        } else {
            Err(MemLimitsError {
                low,
                pressure,
                high,
            })
        }
    }

    pub fn low(&self) -> usize {
        self.low
    }
    pub fn pressure(&self) -> usize {
        self.pressure
    }
    pub fn high(&self) -> usize {
        self.high
    }
}

impl Default for MemLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// How many of the largest holders a pressure episode collapses (besides the
/// connection the segment arrived on) before it prunes; bounds its cost.
const COLLAPSE_SCAN: usize = 16;

/// Access to the endpoint's connections by slot index.
pub(crate) trait Conns {
    fn conn_mut(&mut self, idx: u32) -> Option<&mut Connection>;
}

/// The endpoint's counter (see the module doc).
#[derive(Debug)]
pub(crate) struct MemAccount {
    limits: MemLimits,
    /// Sum of `charged` over connections.
    total: usize,
    /// Last usage read from each slot.
    charged: Vec<MemUsage>,
    /// (out-of-order charge, slot) for slots holding out-of-order data.
    by_ooo: BTreeSet<(usize, u32)>,
    send: usize,
}

impl MemAccount {
    pub(crate) fn new(limits: MemLimits) -> Self {
        MemAccount {
            limits,
            total: 0,
            charged: Vec::new(),
            by_ooo: BTreeSet::new(),
            send: 0,
        }
    }

    /// Bytes a connection may newly allocate for the next segment.
    pub(crate) fn allowance(&self) -> usize {
        self.limits.high.saturating_sub(self.total)
    }

    /// Records what slot `idx` holds now.
    #[inline]
    pub(crate) fn update(&mut self, idx: u32, now: MemUsage, stats: &mut EndpointStats) {
        // Most calls find the usage unchanged: decide that without a call.
        if self.charged.get(idx as usize) != Some(&now) {
            self.update_changed(idx, now, stats);
        }
    }

    #[inline(never)]
    fn update_changed(&mut self, idx: u32, now: MemUsage, stats: &mut EndpointStats) {
        let i = idx as usize;
        if i >= self.charged.len() {
            self.charged.resize(i + 1, MemUsage::default());
        }
        let old = std::mem::replace(&mut self.charged[i], now);
        if old == now {
            return;
        }
        if old.ooo != now.ooo {
            if old.ooo > 0 {
                self.by_ooo.remove(&(old.ooo, idx));
            }
            if now.ooo > 0 {
                self.by_ooo.insert((now.ooo, idx));
            }
        }
        self.total = self.total - old.charged() + now.charged();
        self.send = self.send - old.send + now.send;
        stats.mem_charged = self.total as u64;
        stats.mem_peak = stats.mem_peak.max(self.total as u64);
        stats.mem_send = self.send as u64;
    }

    /// Slot `idx` is gone.
    pub(crate) fn remove(&mut self, idx: u32, stats: &mut EndpointStats) {
        self.update(idx, MemUsage::default(), stats);
    }

    /// Above `pressure`: collapse, then prune largest first, down to `low`.
    ///
    /// Inline for its common answer, below pressure (every delivered segment asks);
    /// the relief out of line.
    #[inline]
    pub(crate) fn relieve(&mut self, conns: &mut impl Conns, trigger: u32, st: &mut EndpointStats) {
        if self.total <= self.limits.pressure {
            return;
        }
        self.relieve_pressure(conns, trigger, st);
    }

    #[inline(never)]
    fn relieve_pressure(&mut self, conns: &mut impl Conns, trigger: u32, st: &mut EndpointStats) {
        st.mem_pressure += 1;
        if self.by_ooo.is_empty() {
            // Only in-order data is held: nothing to collapse or prune.
            return;
        }
        // Collapse: the connection that allocated, then the largest holders.
        let mut visit = [trigger; COLLAPSE_SCAN + 1];
        let mut n = 1;
        for &(_, i) in self.by_ooo.iter().rev() {
            if n > COLLAPSE_SCAN {
                break;
            }
            if i != trigger {
                visit[n] = i;
                n += 1;
            }
        }
        for &idx in &visit[..n] {
            if self.total <= self.limits.low {
                return;
            }
            let Some(c) = conns.conn_mut(idx) else {
                continue;
            };
            // Only where it frees an eighth or more of what the store holds.
            let usage = c.mem_usage();
            if c.ooo_slack() == 0 || c.ooo_slack() < usage.ooo / 8 {
                continue;
            }
            let before = c.prune_stats();
            c.collapse_ooo();
            let after = c.prune_stats();
            let usage = c.mem_usage();
            st.mem_collapses += after.collapses - before.collapses;
            st.mem_collapsed_bytes += after.collapsed_bytes - before.collapsed_bytes;
            st.mem_collapse_freed += after.collapse_freed - before.collapse_freed;
            self.update(idx, usage, st);
        }
        // Prune, largest holder first.
        while self.total > self.limits.low {
            let Some(&(_, idx)) = self.by_ooo.last() else {
                break;
            };
            let need = self.total - self.limits.low;
            let Some(c) = conns.conn_mut(idx) else {
                // A slot without a connection holds nothing.
                self.update(idx, MemUsage::default(), st);
                continue;
            };
            let before = c.prune_stats();
            c.prune_ooo(need);
            let after = c.prune_stats();
            let usage = c.mem_usage();
            st.mem_prunes += after.prunes - before.prunes;
            st.mem_pruned_bytes += after.pruned_bytes - before.pruned_bytes;
            st.mem_pruned_ranges += after.pruned_ranges - before.pruned_ranges;
            st.mem_prune_freed += after.prune_freed - before.prune_freed;
            self.update(idx, usage, st);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_must_be_ordered() {
        assert!(MemLimits::new(1, 2, 3).is_ok());
        assert!(MemLimits::new(5, 5, 5).is_ok());
        let e = MemLimits::new(3, 2, 1).unwrap_err();
        assert!(e.to_string().contains("EndpointConfig::mem"), "{e}");
        let d = MemLimits::default();
        assert!(d.low() <= d.pressure() && d.pressure() <= d.high());
    }
}
