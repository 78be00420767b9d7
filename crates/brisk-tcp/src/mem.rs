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
//! alone fills the budget, new data is refused until the application reads.
//!
//! Send buffers are charged too, by allocated capacity, to the same budget (Linux's
//! `tcp_memory_allocated` counts `sk_wmem_queued` with the receive queues). Before it
//! was not, 400 peers that sent to `brisk lab up --echo` and never read took 3.16 GB
//! against a 1.5 GiB limit: the receive data was charged, the 4 MiB send buffers that
//! the echo filled were not (issue 29). Sent data cannot be dropped, so the policy is
//! on the write side, after Linux's `__sk_mem_raise_allocated` for `SK_MEM_SEND` and
//! `sk_stream_memory_free`. Before lending a connection to the application the
//! endpoint gives it an allowance ([`MemAccount::send_allowance`]), what its writes
//! may newly allocate:
//!
//! - out of pressure: up to `high` (the total never passes it);
//! - under pressure (entered above `pressure`, left at or below `low`): only while
//!   the connection holds less than `SEND_MIN` of send buffer (Linux's `wmem[0]`
//!   guarantee) or less than its fair share, `high` / connections (Linux's
//!   `sk_prot_mem_limits(sk, 2) > sockets × sk_mem_pages(..)` test), and never past
//!   `high`.
//!
//! A write beyond the allowance is taken in part or refused, as one beyond a full
//! send buffer: the application sees a short write and waits for `Event::Writable`
//! (Linux: the socket is not writable, `sk_stream_wait_memory`). It comes when the
//! connection's own data is ACKed, or, for connections refused with nothing in
//! flight, when the total leaves pressure. A drained send buffer larger than 64 KiB
//! gives its allocation back, so idle connections do not hold it. Refused writes are
//! counted (`mem_send_limited`). Because send data counts, writes can raise the total
//! above `pressure` and so cause out-of-order data to be pruned, as in Linux; under
//! pressure writes stop growing, so received data is what takes it to `high`.

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

/// What a connection's send buffer may hold under pressure regardless of its share
/// (Linux `sysctl_tcp_wmem[0]`, one page; here 16 KiB, about ten segments).
pub(crate) const SEND_MIN: usize = 16 << 10;

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
    /// Linux `tcp_memory_pressure`: set above `pressure`, cleared at or below `low`.
    under_pressure: bool,
}

impl MemAccount {
    pub(crate) fn new(limits: MemLimits) -> Self {
        MemAccount {
            limits,
            total: 0,
            charged: Vec::new(),
            by_ooo: BTreeSet::new(),
            send: 0,
            under_pressure: false,
        }
    }

    /// Bytes charged now.
    pub(crate) fn total(&self) -> usize {
        self.total
    }

    /// The hard limit.
    pub(crate) fn high(&self) -> usize {
        self.limits.high
    }

    /// Whether the total is under pressure (see the module doc).
    pub(crate) fn under_pressure(&self) -> bool {
        self.under_pressure
    }

    /// Bytes slot `idx`'s writes may newly allocate, of `conns` connections (module
    /// doc; Linux `__sk_mem_raise_allocated` for `SK_MEM_SEND`). Inline for its
    /// common answer, out of pressure (every `conn_mut` asks).
    #[inline]
    pub(crate) fn send_allowance(&self, idx: u32, conns: usize) -> usize {
        if !self.under_pressure {
            return self.limits.high.saturating_sub(self.total);
        }
        self.send_allowance_under_pressure(idx, conns)
    }

    #[cold]
    #[inline(never)]
    fn send_allowance_under_pressure(&self, idx: u32, conns: usize) -> usize {
        let room = self.limits.high.saturating_sub(self.total);
        let held = self.charged.get(idx as usize).copied().unwrap_or_default();
        let share = (self.limits.high / conns.max(1)).saturating_sub(held.charged());
        let min = SEND_MIN.saturating_sub(held.send);
        room.min(share.max(min))
    }

    /// Bytes a connection may newly allocate for the next segment.
    pub(crate) fn allowance(&self) -> usize {
        self.limits.high.saturating_sub(self.total)
    }

    /// Records what slot `idx` holds now; returns whether it changed.
    #[inline]
    pub(crate) fn update(&mut self, idx: u32, now: MemUsage, stats: &mut EndpointStats) -> bool {
        // Most calls find the usage unchanged: decide that without a call.
        if self.charged.get(idx as usize) != Some(&now) {
            self.update_changed(idx, now, stats);
            return true;
        }
        false
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
        if self.total > self.limits.pressure {
            self.under_pressure = true;
        } else if self.total <= self.limits.low {
            self.under_pressure = false;
        }
        stats.mem_charged = self.total as u64;
        stats.mem_peak = stats.mem_peak.max(self.total as u64);
        stats.mem_send = self.send as u64;
    }

    /// Slot `idx` is gone.
    pub(crate) fn remove(&mut self, idx: u32, stats: &mut EndpointStats) {
        let _ = self.update(idx, MemUsage::default(), stats);
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
            let _ = self.update(idx, usage, st);
        }
        // Prune, largest holder first.
        while self.total > self.limits.low {
            let Some(&(_, idx)) = self.by_ooo.last() else {
                break;
            };
            let need = self.total - self.limits.low;
            let Some(c) = conns.conn_mut(idx) else {
                // A slot without a connection holds nothing.
                let _ = self.update(idx, MemUsage::default(), st);
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
            let _ = self.update(idx, usage, st);
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
