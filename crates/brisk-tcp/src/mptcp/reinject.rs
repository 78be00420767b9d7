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
use brisk_time::{Duration, Instant};

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
    /// Re-injections handed out (whole or in part).
    pub reinjected: u64,
    /// Bytes handed out.
    pub bytes_reinjected: u64,
    /// Re-injections a subflow took only in part (the rest stayed queued).
    pub partial: u64,
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
    /// subflow can take it now (it stays queued). The range stays queued until
    /// [`Reinjector::consume`] says how much of it a subflow took.
    pub fn peek(
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
        Some(Reinjection {
            dsn: self.first_dsn.wrapping_add(r.start),
            len,
            on,
        })
    }

    /// A subflow took the first `taken` bytes of `r`, the range [`Reinjector::peek`]
    /// handed out (partial re-injection: the subflow's window, its send buffer or the
    /// send ring's wrap cut the write short). Only those leave the queue; the rest
    /// waits for the next subflow with room, neither lost nor sent twice.
    pub fn consume(&mut self, r: &Reinjection, taken: u64) {
        let taken = taken.min(r.len);
        if taken == 0 {
            return;
        }
        let at = self.off(r.dsn);
        self.queue.remove_below(at.saturating_add(taken));
        if self.queue.is_empty() {
            self.exclude = SubflowMask::EMPTY;
        }
        self.stats.reinjected += 1;
        self.stats.bytes_reinjected += taken;
        if taken < r.len {
            self.stats.partial += 1;
        }
    }

    /// [`Reinjector::peek`] and [`Reinjector::consume`] of the whole range at once.
    pub fn next(
        &mut self,
        sched: &mut Scheduler,
        views: &[SubflowView],
        max_len: u64,
    ) -> Option<Reinjection> {
        let r = self.peek(sched, views, max_len)?;
        self.consume(&r, r.len);
        Some(r)
    }

    /// Bytes waiting for re-injection.
    pub fn pending(&self) -> u64 {
        self.queue.covered()
    }

    /// Whether nothing waits: `pending() == 0` in O(1) (the queue holds no empty
    /// range), for the fill's test on every poll and input.
    pub fn is_idle(&self) -> bool {
        self.queue.is_empty()
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

/// Floor of the data-level retransmission interval (Linux `TCP_RTO_MIN`, the msk's
/// `timer_ival` when no subflow timer is pending).
pub const DATA_RTX_MIN: Duration = Duration::from_millis(200);
/// Ceiling of the backed-off interval (Linux `TCP_RTO_MAX`).
pub const DATA_RTX_MAX: Duration = Duration::from_secs(120);
/// Most doublings of the interval (Linux's DATA_FIN timer caps its shift at
/// `ilog2(TCP_RTO_MAX / TCP_RTO_MIN)` = 9; 6 reaches the ceiling from a 2 s base).
pub const DATA_RTX_BACKOFF_MAX: u32 = 6;

/// The data-level retransmission timer (Linux `mptcp_retransmit_timer`,
/// `mptcp_reset_rtx_timer`, `__mptcp_clean_una`): armed while data-level bytes sent
/// to a subflow wait for a Data ACK, restarted when the Data ACK advances, stopped
/// when everything is acknowledged. When it expires the connection re-sends the
/// oldest unacknowledged bytes on an idle subflow (`__mptcp_retrans` →
/// `mptcp_subflow_get_retrans`) and the interval doubles, bounded by
/// [`DATA_RTX_BACKOFF_MAX`] and [`DATA_RTX_MAX`]; progress of the Data ACK resets it.
///
/// It covers what no subflow retransmits: a Data ACK lost after its subflow
/// acknowledged the bytes (the DSS stripped or rewritten on the last pure ACK), and
/// the data of a subflow that died after its bytes were acknowledged at the TCP level
/// but not at the data level. Lazy as TCP's keepalive: a Data ACK only records when
/// progress happened; the deadline moves when the timer is looked at, so no timer
/// is re-armed per ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataRtxTimer {
    /// The deadline; `None` while nothing is outstanding at the data level.
    pub at: Option<Instant>,
    /// The Data ACK (send offset) when last looked at.
    una_seen: u64,
    /// When the Data ACK last advanced, or the timer was armed or fired.
    since: Option<Instant>,
    /// Doublings since the Data ACK last advanced.
    pub backoff: u32,
    /// Expiries that re-sent data.
    pub fired: u64,
    /// Expiries that found no idle subflow (re-armed only).
    pub idle_none: u64,
}

impl DataRtxTimer {
    /// The interval for a base (the largest subflow RTO, at least [`DATA_RTX_MIN`])
    /// after `backoff` doublings.
    pub fn interval(base: Duration, backoff: u32) -> Duration {
        let base = base.max(DATA_RTX_MIN);
        (base * (1u32 << backoff.min(DATA_RTX_BACKOFF_MAX))).min(DATA_RTX_MAX)
    }

    /// After any input or output: `una` and `nxt` are the data-level send offsets
    /// (Data ACK, first byte no subflow took). Arms the timer when data is
    /// outstanding, stops it when none is, and notes Data ACK progress.
    pub fn update(&mut self, now: Instant, una: u64, nxt: u64, base: impl FnOnce() -> Duration) {
        if una != self.una_seen {
            self.una_seen = una;
            self.backoff = 0;
            self.since = Some(now);
        }
        if una >= nxt {
            self.at = None;
            self.since = None;
            self.backoff = 0;
            return;
        }
        if self.at.is_none() {
            let since = *self.since.get_or_insert(now);
            self.at = Some(since + Self::interval(base(), self.backoff));
        }
    }

    /// The deadline passed: whether to re-send now. A Data ACK that advanced since
    /// the deadline was set moves it instead (`false`); otherwise the interval
    /// doubles and the caller re-sends.
    pub fn on_expiry(&mut self, now: Instant, una: u64, nxt: u64, base: Duration) -> bool {
        if una >= nxt {
            self.at = None;
            self.since = None;
            return false;
        }
        let since = self.since.unwrap_or(now);
        let due = since + Self::interval(base, self.backoff);
        if now < due {
            self.at = Some(due);
            return false;
        }
        self.backoff = (self.backoff + 1).min(DATA_RTX_BACKOFF_MAX);
        self.since = Some(now);
        self.at = Some(now + Self::interval(base, self.backoff));
        true
    }
}
