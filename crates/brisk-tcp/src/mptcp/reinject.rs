//! The retransmission policy of the seed's Table I (B.1 §1.2.1, Linux MPTCP v0.89):
//! a loss found by **fast retransmit** is repaired on its own subflow only; a loss found
//! by **RTO** is retransmitted on the same subflow *and* its data is re-injected on
//! another subflow chosen by the scheduler.
//!
//! The subflow's own retransmission is its TCP machinery's (same sequence numbers, same
//! mappings: `dsn::SendMap::lookup`). This module keeps the data-level side: the DSN
//! ranges waiting for re-injection, bounded ([`RangeSet`] with a count limit, refusals
//! counted), pruned by the Data ACK, handed out through the scheduler with the subflows
//! that timed out excluded (Linux 6.x does the same from its data-level timer:
//! `__mptcp_retrans` takes the msk's `rtx_queue` head to `mptcp_subflow_get_retrans`,
//! which skips subflows still holding unacknowledged data; v0.89's
//! `mptcp_reinject_data` on a subflow RTO is the seed's version).
//!
//! Positions are offsets from the first DSN, so a DSN space wrapping at 2^64 does not
//! disturb the ordering.

use super::dsn::Mapping;
use super::sched::{Pick, Scheduler, SubflowView};
use super::SubflowMask;
use crate::rangeset::RangeSet;

/// How a loss was detected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossKind {
    FastRetransmit,
    Rto,
}

/// Counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReinjectStats {
    /// RTOs that queued data for re-injection.
    pub rto_events: u64,
    /// Bytes queued for re-injection.
    pub bytes_queued: u64,
    /// Ranges refused at the range limit (they stay on their subflow only).
    pub refused: u64,
    /// Re-injections handed out.
    pub reinjected: u64,
}

/// One re-injection to carry out: map `len` bytes at data sequence `dsn` onto the
/// subflow(s) picked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reinjection {
    pub dsn: u64,
    pub len: u64,
    pub on: Pick,
}

/// The data-level re-injection queue of one connection.
#[derive(Clone, Debug)]
pub struct Reinjector {
    first_dsn: u64,
    queue: RangeSet,
    /// Offset of the Data ACK received (everything below is delivered).
    data_una: u64,
    /// Subflows that timed out while their data waits here.
    exclude: SubflowMask,
    pub stats: ReinjectStats,
}

impl Reinjector {
    /// A queue for a connection whose first DSN is `first_dsn` (IDSN + 1), holding at
    /// most `max_ranges` (at least 1) disjoint ranges.
    pub fn new(first_dsn: u64, max_ranges: usize) -> Reinjector {
        Reinjector {
            first_dsn,
            queue: RangeSet::new(max_ranges),
            data_una: 0,
            exclude: SubflowMask::EMPTY,
            stats: ReinjectStats::default(),
        }
    }

    fn off(&self, dsn: u64) -> u64 {
        dsn.wrapping_sub(self.first_dsn)
    }

    /// A loss on subflow `sub`, detected by `kind`. `outstanding` are the subflow's
    /// mappings not yet acknowledged on it (`SendMap::outstanding`). Returns whether
    /// anything was queued for re-injection (only an RTO queues).
    pub fn on_loss<'a>(
        &mut self,
        kind: LossKind,
        sub: usize,
        outstanding: impl IntoIterator<Item = &'a Mapping>,
    ) -> bool {
        if kind == LossKind::FastRetransmit {
            return false;
        }
        self.stats.rto_events += 1;
        let mut queued = false;
        for m in outstanding {
            let at = self.off(m.dsn);
            // A mapping before the first DSN (a wrapped offset) is not ours to re-inject.
            if (at as i64) < 0 {
                continue;
            }
            let start = at.max(self.data_una);
            let end = at + m.payload();
            if start >= end {
                continue;
            }
            if self.queue.insert(start..end) {
                self.stats.bytes_queued += end - start;
                queued = true;
            } else {
                self.stats.refused += 1;
            }
        }
        if queued {
            self.exclude = self.exclude.with(sub);
        }
        queued
    }

    /// The Data ACK reached `data_ack`: what is below needs no re-injection.
    pub fn on_data_ack(&mut self, data_ack: u64) {
        let off = self.off(data_ack);
        if off > self.data_una && (off as i64) >= 0 {
            self.data_una = off;
            self.queue.remove_below(off);
        }
        if self.queue.is_empty() {
            self.exclude = SubflowMask::EMPTY;
        }
    }

    /// The next range to re-inject, at most `max_len` bytes, and where: the scheduler
    /// picks among the subflows that did not time out. `None` when nothing waits or no
    /// subflow can take it now (it stays queued).
    pub fn next(
        &mut self,
        sched: &mut Scheduler,
        views: &[SubflowView],
        max_len: u64,
    ) -> Option<Reinjection> {
        let r = self.queue.iter().next()?;
        let len = (r.end - r.start).min(max_len.max(1));
        let on = sched.pick(views, len.min(u64::from(u32::MAX)) as u32, self.exclude);
        if on == Pick::None {
            return None;
        }
        self.queue.remove_below(r.start + len);
        if self.queue.is_empty() {
            self.exclude = SubflowMask::EMPTY;
        }
        self.stats.reinjected += 1;
        Some(Reinjection {
            dsn: self.first_dsn.wrapping_add(r.start),
            len,
            on,
        })
    }

    /// Bytes waiting for re-injection.
    pub fn pending(&self) -> u64 {
        self.queue.covered()
    }

    /// Ranges waiting.
    pub fn ranges(&self) -> usize {
        self.queue.len()
    }

    /// Subflows excluded from re-injection now.
    pub fn excluded(&self) -> SubflowMask {
        self.exclude
    }
}

#[cfg(test)]
mod tests;
