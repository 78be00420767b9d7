//! Unordered receive: uTCP's `SO_UNORDERED` (Minion, NSDI 2012 §4.1 and §7; Nowlan's
//! thesis §4.2 and §5.2; spec `minion.md` §2.1 and ambiguities A1–A5).
//!
//! Out-of-order ranges are handed to the application as soon as they arrive, each byte
//! at most once out of order. They stay in the out-of-order store, exactly as the
//! paper's prototype leaves segments in Linux's OOO queue, so every byte is handed out
//! again in order once the hole before it fills (at-least-once). This module only
//! *reads* the store: the ACK number, SACK blocks and the window are computed from the
//! store and the in-order queue alone, so the wire is the same with the option on or
//! off.
//!
//! Bookkeeping (`Delivered`): the byte ranges already handed out out of order, as
//! disjoint, non-adjacent intervals inside the store, plus a cursor below which every
//! stored byte has been handed out. A read takes the lowest-offset run not yet handed
//! out (A2), searching from the cursor, so a greedy reader costs O(log n) per read.
//! Intervals are dropped when their bytes become in order. Their number is capped at
//! `limit`; at the cap, an out-of-order read that would need a new interval is declined
//! (counted), which costs only latency: the bytes still arrive in order.

use super::RecvBuffer;
use crate::rangeset::RangeSet;

/// One `Connection::read_unordered` result: `len` bytes at stream `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnorderedRead {
    /// 0-based offset of the first byte in the peer's stream (sequence - IRS - 1).
    pub offset: u64,
    /// Bytes copied into the caller's buffer (never 0).
    pub len: usize,
    /// In-order data (the stream up to here has been delivered in order) or an
    /// out-of-order range read ahead of a hole.
    pub in_order: bool,
}

/// What has been handed out out of order (see the module docs).
#[derive(Debug)]
pub(super) struct Delivered {
    /// The handed-out intervals, at most `limit` of them.
    ranges: RangeSet,
    /// Every stored out-of-order byte below this offset has been handed out.
    cursor: u64,
    /// Out-of-order reads declined because `limit` intervals were tracked.
    pub(super) declined: u64,
}

impl Delivered {
    pub(super) fn new(limit: usize) -> Self {
        Delivered {
            ranges: RangeSet::new(limit),
            cursor: 0,
            declined: 0,
        }
    }

    /// New bytes were stored out of order, none below `off`.
    pub(super) fn on_insert(&mut self, off: u64) {
        self.cursor = self.cursor.min(off);
    }

    /// RCV.NXT advanced to `nxt`: everything below it is in order now. Whole stored
    /// ranges move to the in-order queue, so an interval straddles `nxt` only when
    /// the top of its range was pruned under memory pressure (`prune`); its part above
    /// `nxt` stays handed out.
    pub(super) fn on_advance(&mut self, nxt: u64) {
        self.ranges.remove_below(nxt);
        self.cursor = self.cursor.max(nxt);
    }

    pub(super) fn intervals(&self) -> usize {
        self.ranges.len()
    }

    /// End of the handed-out interval holding `pos`, if any.
    fn covering(&self, pos: u64) -> Option<u64> {
        self.ranges.end_of(pos)
    }

    /// Start of the first handed-out interval beginning after `pos`.
    fn next_start(&self, pos: u64) -> Option<u64> {
        self.ranges.next_start_after(pos)
    }

    /// Records [s, e) as handed out, merging with neighbours. Returns false (and
    /// records nothing) if a new interval would exceed the limit.
    fn mark(&mut self, s: u64, e: u64) -> bool {
        self.ranges.insert(s..e)
    }
}

impl RecvBuffer {
    /// Offset of the next in-order byte `read` returns.
    pub fn read_offset(&self) -> u64 {
        self.read_off
    }

    /// Out-of-order reads declined at the interval limit.
    pub fn unordered_declined(&self) -> u64 {
        self.delivered.declined
    }

    /// Handed-out intervals tracked (bounded by twice `max_ooo_segments`).
    pub fn unordered_intervals(&self) -> usize {
        self.delivered.intervals()
    }

    /// The lowest stored out-of-order run not yet handed out: (start, end).
    fn next_undelivered(&mut self) -> Option<(u64, u64)> {
        let mut pos = self.delivered.cursor.max(self.nxt());
        loop {
            // The stored range holding `pos`, else the next one above it.
            let (rs, re) = self
                .ooo
                .range(..=pos)
                .next_back()
                .map(|(&s, v)| (s, s + v.len() as u64))
                .filter(|&(_, e)| e > pos)
                .or_else(|| {
                    self.ooo
                        .range(pos..)
                        .next()
                        .map(|(&s, v)| (s, s + v.len() as u64))
                })?;
            pos = pos.max(rs);
            if let Some(de) = self.delivered.covering(pos) {
                pos = de;
            }
            if pos < re {
                let end = self.delivered.next_start(pos).map_or(re, |s| s.min(re));
                return Some((pos, end));
            }
            // This range is fully handed out: nothing below its end is pending.
            self.delivered.cursor = re;
            pos = re;
        }
    }

    /// Whether some stored out-of-order byte has not been handed out yet.
    pub fn has_undelivered_ooo(&mut self) -> bool {
        self.next_undelivered().is_some()
    }

    /// Copies the lowest not-yet-handed-out out-of-order run (up to `buf.len()` bytes)
    /// and marks it handed out; returns (offset, len). The store, and so ACKs, SACKs
    /// and the window, are unchanged.
    pub fn read_ooo(&mut self, buf: &mut [u8]) -> Option<(u64, usize)> {
        if buf.is_empty() {
            return None;
        }
        let (s, e) = self.next_undelivered()?;
        let n = buf.len().min((e - s) as usize);
        let end = s + n as u64;
        if !self.delivered.mark(s, end) {
            self.delivered.declined += 1;
            return None;
        }
        // NOTE(unwrap): `next_undelivered` found [s, e) inside a stored range.
        let (&rs, data) = self.ooo.range(..=s).next_back().unwrap();
        let from = (s - rs) as usize;
        for (dst, src) in buf[..n].iter_mut().zip(data.range(from..from + n)) {
            *dst = *src;
        }
        self.delivered.cursor = end;
        Some((s, n))
    }
}

#[doc(hidden)]
pub mod checks;
#[cfg(test)]
mod tests;
