//! The sender's record of outstanding segments: an RFC 6675 SACK scoreboard with
//! Linux's per-segment marks (`TCPCB_SACKED_ACKED`, `TCPCB_LOST`, `TCPCB_SACKED_RETRANS`).
//!
//! Segments sit in a `VecDeque` in sequence order. Each gets a unique, increasing `id`
//! at first transmission; segments only leave from the front, so the ids in the queue
//! are consecutive and a lookup by id is an index computation. Beside it, two ordered
//! indexes keep per-ACK work logarithmic in the number of outstanding segments (issue
//! 13: a peer that forces a tiny MSS makes that number 80 660 with a 4-MiB send buffer):
//! - `unsacked`: the ids of segments not SACKed. A SACK block finds its first segment
//!   by binary search and then visits only un-SACKed segments, each of which it either
//!   SACKs (once per segment, ever) or stops at (at most one per block end). Linux gets
//!   the same effect from its rbtree (`tcp_sacktag_skip`) and from merging SACKed skbs
//!   (`tcp_shift_skb_data`), so `tcp_sacktag_walk` steps over a SACKed range in a few
//!   skbs; its `recv_sack_cache` only helps when blocks repeat, and a peer that moves
//!   its blocks between earlier-SACKed ranges defeats it (brisk used such a cache alone
//!   before, and paid a step per SACKed segment on every such ACK).
//! - `time_order`: the segments RACK may still have to judge (neither SACKed nor marked
//!   lost and waiting for retransmission), keyed by (time of latest transmission, a
//!   transmission counter), i.e. in transmission order as Linux's
//!   `tsorted_sent_queue` (RFC 8985 §6.2). Like Linux, which unlinks a skb from that
//!   list when it is marked lost, a segment leaves it when SACKed, marked lost or
//!   ACKed, and re-enters on retransmission; so RACK's walk never steps over
//!   segments it has nothing to say about.
//! - `lost_pending`: ids marked lost and not yet retransmitted, in sequence order, so the
//!   next retransmission is found in O(log n).
//!
//! - the fresh tail: segments from `fresh_from` on were sent once and nothing has
//!   happened to them since (not SACKed, lost or retransmitted). They are in neither
//!   `unsacked` nor `time_order`, though both would hold them: they are un-SACKed, and
//!   their time keys grow with their ids and exceed every key in `time_order` (checked
//!   at `push`). So a segment that is sent and then cumulatively ACKed, the common
//!   case, costs no B-tree work at all (the two B-trees were 9 % of the simulator's
//!   bench), and queries treat the tail as the last stretch of both orders (a binary
//!   search over it by time key). A segment leaves the tail, with every one below it
//!   (so the tail stays a suffix of ids), when it is SACKed or marked lost; the whole
//!   tail leaves before a retransmission, whose new key is later than the tail's, and
//!   before the rare O(n) operations. Each segment leaves the tail at most once per
//!   first transmission, so the worst case stays O(log n) amortised per segment.
//!
//! The counters give RFC 6675's pipe as Linux computes it:
//! `in_flight = packets_out - sacked_out - lost_out + retrans_out`.
//! Bounded: one entry per sent segment in each index, and segments are bounded by the
//! send buffer.

use crate::sent::SentInfo;
use brisk_time::Instant;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// One transmitted segment, `[start, end)` in the connection's 64-bit sequence space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentSegment {
    pub id: u64,
    pub start: u64,
    pub end: u64,
    /// The segment carries FIN (its last sequence number).
    pub fin: bool,
    /// Time of the latest (re)transmission.
    pub xmit_ts: Instant,
    /// Send-time state of the latest transmission, for CC and delivery-rate sampling.
    pub info: SentInfo,
    pub sacked: bool,
    pub lost: bool,
    /// A retransmission is in flight (Linux `TCPCB_SACKED_RETRANS`).
    pub retrans: bool,
    /// Retransmitted at least once (Karn's rule, RACK's spurious-ACK filter).
    pub ever_retrans: bool,
    /// Transmission count minus one.
    pub gen: u32,
    /// First sequence number the latest transmission carried: below `start` when RDB
    /// bundled earlier segments in front of this one (the patch's `rdb_start_seq`).
    pub tx_start: u64,
    /// The scoreboard's transmission counter at the latest (re)transmission: with
    /// `xmit_ts`, the segment's key in the time order.
    pub tx_order: u64,
}

impl SentSegment {
    /// Payload bytes (sequence length minus the FIN).
    pub fn payload_len(&self) -> u32 {
        ((self.end - self.start) as u32).saturating_sub(u32::from(self.fin))
    }
    fn time_key(&self) -> (Instant, u64) {
        (self.xmit_ts, self.tx_order)
    }
    /// RACK may still have to judge it: neither SACKed nor lost awaiting retransmission.
    fn rack_pending(&self) -> bool {
        !self.sacked && (!self.lost || self.retrans)
    }
}

#[derive(Debug, Default)]
pub struct Scoreboard {
    segs: VecDeque<SentSegment>,
    unsacked: BTreeSet<u64>,
    time_order: BTreeMap<(Instant, u64), u64>,
    lost_pending: BTreeSet<u64>,
    /// First id of the fresh tail (see the module comment); may lie below the front.
    fresh_from: u64,
    /// Latest send time of any transmission: a new segment joins the fresh tail only if
    /// it was sent no earlier, so that its time key is the greatest.
    max_ts: Instant,
    next_id: u64,
    next_tx: u64,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    highest_sacked: u64,
}

impl Scoreboard {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    /// Linux `packets_out`: segments sent and not cumulatively acknowledged.
    pub fn packets_out(&self) -> u32 {
        self.segs.len() as u32
    }
    pub fn sacked_out(&self) -> u32 {
        self.sacked_out
    }
    pub fn lost_out(&self) -> u32 {
        self.lost_out
    }
    pub fn retrans_out(&self) -> u32 {
        self.retrans_out
    }
    /// RFC 6675 pipe, Linux `tcp_packets_in_flight`.
    pub fn in_flight(&self) -> u32 {
        (self.packets_out() + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }
    /// End of the highest SACKed segment, 0 if none.
    pub fn highest_sacked(&self) -> u64 {
        self.highest_sacked
    }
    pub fn first(&self) -> Option<&SentSegment> {
        self.segs.front()
    }
    pub fn last(&self) -> Option<&SentSegment> {
        self.segs.back()
    }
    pub fn get(&self, id: u64) -> Option<&SentSegment> {
        self.index_of(id).map(|i| &self.segs[i])
    }
    pub fn iter(&self) -> impl Iterator<Item = &SentSegment> {
        self.segs.iter()
    }
    /// Newest first.
    pub fn iter_rev(&self) -> impl Iterator<Item = &SentSegment> {
        self.segs.iter().rev()
    }

    /// The newest segment was sent in a packet that began at `tx_start` (an RDB
    /// bundle).
    pub fn set_last_tx_start(&mut self, tx_start: u64) {
        if let Some(s) = self.segs.back_mut() {
            debug_assert!(tx_start <= s.start);
            s.tx_start = tx_start;
        }
    }

    /// RDB's loss inference (the patch's `rdb_check_rtx_queue_loss`), run before a
    /// cumulative ACK up to `una` is applied: if the segment ending exactly at `una`
    /// was last sent in a bundle, the earlier segments whose bytes that bundle carried
    /// and that are still neither ACKed nor SACKed reached the receiver only through
    /// it, so their own transmissions were presumably lost. Returns how many.
    /// A segment inside `received` (a D-SACK block: the receiver had it already) is
    /// not counted. O(log n) to find the segment, then one step per bundled segment.
    pub fn hidden_by_bundle(&self, una: u64, received: Option<(u64, u64)>) -> u32 {
        let i = self.segs.partition_point(|s| s.end < una);
        let Some(s) = self.segs.get(i).filter(|s| s.end == una) else {
            return 0;
        };
        if i == 0 || s.tx_start >= s.start {
            return 0;
        }
        let from = self.segs.partition_point(|p| p.start < s.tx_start);
        self.segs
            .range(from..i)
            .filter(|p| !p.sacked)
            .filter(|p| !received.is_some_and(|(l, r)| l <= p.start && p.end <= r))
            .count() as u32
    }

    /// Ids in the queue are consecutive from the front's: O(1).
    fn index_of(&self, id: u64) -> Option<usize> {
        let first = self.segs.front()?.id;
        let i = usize::try_from(id.checked_sub(first)?).ok()?;
        debug_assert!(self.segs.get(i).is_none_or(|s| s.id == id));
        (i < self.segs.len()).then_some(i)
    }

    /// Index in `segs` of the first fresh segment (`segs.len()` if none).
    fn fresh_idx(&self) -> usize {
        self.segs.front().map_or(0, |f| {
            usize::try_from(self.fresh_from.saturating_sub(f.id))
                .unwrap_or(usize::MAX)
                .min(self.segs.len())
        })
    }

    /// Enters the fresh segments with ids below `to` into `unsacked` and `time_order`
    /// (they come off the front of the tail, in key order).
    fn settle_below(&mut self, to: u64) {
        if to <= self.fresh_from {
            return;
        }
        let from = self.fresh_idx();
        let end = self.segs.front().map_or(0, |f| {
            usize::try_from(to.saturating_sub(f.id))
                .unwrap_or(usize::MAX)
                .min(self.segs.len())
        });
        let run = self.segs.range(from..end.max(from));
        let held = self.unsacked.len().max(self.time_order.len());
        if run.len() > 64 && run.len() >= held / 4 {
            // Many at once (the first SACK of a large flight settles all of it): build
            // trees from the sorted run and merge, O(run + held) and several times
            // cheaper per entry than inserting one by one; the condition keeps the
            // merge's O(held) within a constant factor of the run.
            let mut ids: BTreeSet<u64> = run.clone().map(|s| s.id).collect();
            let mut keys: BTreeMap<(Instant, u64), u64> =
                run.map(|s| (s.time_key(), s.id)).collect();
            self.unsacked.append(&mut ids);
            self.time_order.append(&mut keys);
        } else {
            for s in run {
                self.unsacked.insert(s.id);
                self.time_order.insert(s.time_key(), s.id);
            }
        }
        self.fresh_from = to.min(self.next_id);
    }

    /// Empties the fresh tail into the indexes.
    fn settle_all(&mut self) {
        self.settle_below(self.next_id);
    }

    /// Takes segment `id` out of the fresh tail without entering it in the indexes
    /// (it is about to leave both), settling the ones below it. Returns false if it
    /// was not fresh, i.e. it is in the indexes as their rules say.
    fn detach_fresh(&mut self, id: u64) -> bool {
        if id < self.fresh_from {
            return false;
        }
        self.settle_below(id);
        self.fresh_from = id + 1;
        true
    }

    /// The first fresh segment whose time key is at least `key` (fresh keys grow with
    /// the index, so a binary search; the front is tried first, as a walk from the
    /// start asks for it).
    fn fresh_at_or_after(&self, key: (Instant, u64)) -> Option<((Instant, u64), u64)> {
        let lo = self.fresh_idx();
        let first = self.segs.get(lo)?;
        if first.time_key() >= key {
            return Some((first.time_key(), first.id));
        }
        let i = self.fresh_partition(lo, key);
        self.segs.get(i).map(|s| (s.time_key(), s.id))
    }

    /// The last fresh segment whose time key is below `key`.
    fn fresh_before(&self, key: (Instant, u64)) -> Option<((Instant, u64), u64)> {
        let lo = self.fresh_idx();
        let i = self.fresh_partition(lo, key);
        (i > lo).then(|| {
            let s = &self.segs[i - 1];
            (s.time_key(), s.id)
        })
    }

    /// The index of the first fresh segment (from `lo`) with time key at least `key`.
    fn fresh_partition(&self, lo: usize, key: (Instant, u64)) -> usize {
        let (mut a, mut b) = (lo, self.segs.len());
        while a < b {
            let m = a + (b - a) / 2;
            if self.segs[m].time_key() < key {
                a = m + 1;
            } else {
                b = m;
            }
        }
        a
    }

    /// Records a first transmission `[start, end)`; returns its id.
    pub fn push(&mut self, start: u64, end: u64, fin: bool, info: SentInfo) -> u64 {
        debug_assert!(!matches!(self.segs.back(), Some(s) if s.end > start));
        debug_assert!(end > start);
        let id = self.next_id;
        self.next_id += 1;
        let tx_order = self.next_tx;
        self.next_tx += 1;
        let seg = SentSegment {
            id,
            start,
            end,
            fin,
            xmit_ts: info.sent_at,
            info,
            sacked: false,
            lost: false,
            retrans: false,
            ever_retrans: false,
            gen: 0,
            tx_start: start,
            tx_order,
        };
        self.segs.push_back(seg);
        // `tx_order` is the greatest yet; with a send time no earlier than any other,
        // so is the key, and the segment may stay in the fresh tail (where ids at or
        // above `fresh_from` already are). Otherwise (a clock that went back, only in
        // tests) everything goes into the indexes, which order by key.
        if info.sent_at < self.max_ts {
            self.settle_all();
        }
        self.max_ts = self.max_ts.max(info.sent_at);
        id
    }

    /// Records a retransmission of segment `id`.
    pub fn on_retransmit(&mut self, id: u64, info: SentInfo) {
        let Some(i) = self.index_of(id) else {
            debug_assert!(false, "retransmit of unknown segment");
            return;
        };
        // Its new key is later than the fresh tail's: the tail goes into the indexes.
        self.settle_all();
        self.max_ts = self.max_ts.max(info.sent_at);
        let tx_order = self.next_tx;
        self.next_tx += 1;
        let s = &mut self.segs[i];
        if s.rack_pending() {
            self.time_order.remove(&s.time_key());
        }
        if !s.retrans {
            s.retrans = true;
            self.retrans_out += 1;
        }
        s.ever_retrans = true;
        s.tx_start = s.start;
        s.gen = s.gen.wrapping_add(1);
        s.xmit_ts = info.sent_at;
        s.info = info;
        s.tx_order = tx_order;
        if s.rack_pending() {
            self.time_order.insert(s.time_key(), id);
        }
        self.lost_pending.remove(&id);
    }

    /// Marks a segment lost (RACK, dupthresh or RTO). Returns true if newly marked: a
    /// lost segment whose retransmission is in flight can be marked lost again.
    pub fn mark_lost(&mut self, id: u64) -> bool {
        let Some(i) = self.index_of(id) else {
            return false;
        };
        if self.segs[i].sacked || (self.segs[i].lost && !self.segs[i].retrans) {
            return false;
        }
        // It was RACK-pending (not SACKed, not lost awaiting retransmission); now it
        // waits for retransmission, un-SACKed still.
        if self.detach_fresh(id) {
            self.unsacked.insert(id);
        } else {
            self.time_order.remove(&self.segs[i].time_key());
        }
        let s = &mut self.segs[i];
        if s.retrans {
            s.retrans = false;
            self.retrans_out -= 1;
        }
        if !s.lost {
            s.lost = true;
            self.lost_out += 1;
        }
        self.lost_pending.insert(id);
        true
    }

    /// RTO (RFC 6298 §5.4, Linux `tcp_enter_loss`): everything not SACKed is lost.
    /// Returns the number newly marked. O(outstanding), once per RTO.
    pub fn mark_all_lost(&mut self) -> u32 {
        self.settle_all();
        let ids: Vec<u64> = self.unsacked.iter().copied().collect();
        let mut n = 0;
        for id in ids {
            n += u32::from(self.mark_lost(id));
        }
        n
    }

    /// Clears every lost mark (Linux `tcp_undo_cwnd_reduction` with `unmark_loss`): a
    /// loss proved spurious, so the segments count as in flight again, and RACK judges
    /// them again from their latest transmission. O(outstanding), but only on an undo,
    /// which is rare.
    pub fn unmark_all_lost(&mut self) {
        self.settle_all();
        for s in self.segs.iter_mut() {
            if s.lost && !s.retrans && !s.sacked {
                self.time_order.insert(s.time_key(), s.id);
            }
            s.lost = false;
        }
        self.lost_out = 0;
        self.lost_pending.clear();
    }

    /// SACK reneging (RFC 2018 §8; Linux `tcp_timeout_mark_lost` with `is_reneg`):
    /// the receiver discarded data it had SACKed, so every SACK mark is forgotten and
    /// the next SACK blocks are processed afresh. O(outstanding), on a timeout only.
    pub fn clear_sacked(&mut self) {
        self.settle_all();
        for s in self.segs.iter_mut() {
            if !s.sacked {
                continue;
            }
            s.sacked = false;
            // Back into both indexes: SACK blocks may mark it again, and RACK judges
            // it again (the timeout that follows marks the flight lost anyway).
            self.unsacked.insert(s.id);
            if s.rack_pending() {
                self.time_order.insert(s.time_key(), s.id);
            }
        }
        self.sacked_out = 0;
        self.highest_sacked = 0;
    }

    /// The receiver reneged: the cumulative ACK stopped at a segment we hold as SACKed
    /// (Linux `tcp_check_sack_reneging`; a receiver that keeps SACKed data would have
    /// ACKed past it).
    pub fn head_sacked(&self) -> bool {
        self.segs.front().is_some_and(|s| s.sacked)
    }

    /// How many of the segments overlapping `[start, end)` were ever retransmitted,
    /// looking at no more than `max` segments (a D-SACK block covers at most that many).
    pub fn count_retransmitted(&self, start: u64, end: u64, max: u32) -> u32 {
        let first = self.segs.partition_point(|s| s.end <= start);
        self.segs
            .range(first..)
            .take(max as usize)
            .take_while(|s| s.start < end)
            .filter(|s| s.ever_retrans)
            .count() as u32
    }

    /// Whether no segment is marked lost and waiting (then `next_lost` is `None` and
    /// changes nothing). Inline: the transmit path asks on every poll.
    #[inline]
    pub fn no_lost_pending(&self) -> bool {
        self.lost_pending.is_empty()
    }

    /// The lowest segment waiting for retransmission.
    pub fn next_lost(&mut self) -> Option<SentSegment> {
        while let Some(&id) = self.lost_pending.first() {
            match self.index_of(id).map(|i| self.segs[i]) {
                Some(s) if s.lost && !s.retrans && !s.sacked => return Some(s),
                _ => {
                    self.lost_pending.remove(&id);
                }
            }
        }
        None
    }
    pub fn has_lost_pending(&mut self) -> bool {
        self.next_lost().is_some()
    }

    /// Cumulative ACK up to `una` (exclusive sequence bound): removes covered segments,
    /// trims a partially covered head, and calls `f` for each segment newly delivered
    /// (not previously SACKed). Returns the number of segments removed.
    pub fn ack_cumulative(&mut self, una: u64, mut f: impl FnMut(&SentSegment)) -> u32 {
        let mut removed = 0;
        while let Some(s) = self.segs.front() {
            if s.end > una {
                if s.start < una {
                    // Partial ACK of the head segment (Linux `tcp_trim_head`).
                    let s = &mut self.segs[0];
                    s.start = una;
                }
                break;
            }
            removed += 1;
            if s.id >= self.fresh_from {
                // Fresh: in no index. Reported in place, then dropped (no copy out).
                f(s);
                self.segs.pop_front();
                continue;
            }
            // NOTE(unwrap): front() was Some just above.
            let s = self.segs.pop_front().unwrap();
            if s.rack_pending() {
                self.time_order.remove(&s.time_key());
            }
            if s.sacked {
                self.sacked_out -= 1;
            } else {
                self.unsacked.remove(&s.id);
                f(&s);
            }
            if s.lost {
                self.lost_out -= 1;
            }
            if s.retrans {
                self.retrans_out -= 1;
            }
        }
        if self.segs.is_empty() {
            self.highest_sacked = 0;
            self.lost_pending.clear();
            debug_assert!(self.unsacked.is_empty() && self.time_order.is_empty());
        }
        removed
    }

    /// Applies SACK blocks (already validated to lie within `[snd_una, snd_nxt]`):
    /// marks each segment that lies wholly inside a block. Calls `f` for each newly
    /// SACKed segment, block by block and in sequence order within a block; returns
    /// how many. Per block: a binary search, then one step per newly SACKed segment
    /// plus at most one more (the segment the block ends inside, or the first beyond).
    pub fn sack(&mut self, blocks: &[(u64, u64)], mut f: impl FnMut(&SentSegment)) -> u32 {
        let mut newly = 0;
        for &(l, r) in blocks {
            // The first segment starting at or after `l`; the one `l` falls inside
            // (if any) is not wholly covered.
            let first = self.segs.partition_point(|s| s.start < l);
            let Some(first_id) = self.segs.get(first).map(|s| s.id) else {
                continue;
            };
            let mut from = first_id;
            loop {
                // The next un-SACKed id: `unsacked` holds those below the fresh tail,
                // and every fresh segment is un-SACKed.
                let id = match self.unsacked.range(from..).next() {
                    Some(&id) => id,
                    None => from.max(self.fresh_from),
                };
                let Some(i) = self.index_of(id) else {
                    break;
                };
                if self.segs[i].end > r {
                    break;
                }
                if !self.detach_fresh(id) {
                    self.unsacked.remove(&id);
                    let seg = &self.segs[i];
                    if seg.rack_pending() {
                        self.time_order.remove(&seg.time_key());
                    }
                }
                let seg = &mut self.segs[i];
                seg.sacked = true;
                self.sacked_out += 1;
                if seg.lost {
                    seg.lost = false;
                    self.lost_out -= 1;
                }
                if seg.retrans {
                    seg.retrans = false;
                    self.retrans_out -= 1;
                }
                self.highest_sacked = self.highest_sacked.max(seg.end);
                newly += 1;
                f(&self.segs[i]);
                from = id + 1;
            }
        }
        newly
    }

    /// Calls `f` on the segments RACK may still have to judge (neither SACKed nor lost
    /// and awaiting retransmission) in transmission order, oldest first, until `f`
    /// returns `Walk::Stop`. `f` may ask to mark the segment lost by returning
    /// `Walk::MarkLost`; returns how many were newly marked.
    pub fn walk_time_order(&mut self, mut f: impl FnMut(&SentSegment) -> Walk) -> u32 {
        let mut marked = 0;
        let mut from = (Instant::ZERO, 0);
        loop {
            // Every key in `time_order` is below the fresh tail's.
            let next = self.time_order.range(from..).next();
            let Some((key, id)) = next
                .map(|(&k, &id)| (k, id))
                .or_else(|| self.fresh_at_or_after(from))
            else {
                break;
            };
            from = (key.0, key.1 + 1);
            // NOTE(unwrap): `time_order` and the fresh tail hold only ids in the queue.
            let s = self.segs[self.index_of(id).unwrap()];
            match f(&s) {
                Walk::Skip => {}
                Walk::MarkLost => marked += u32::from(self.mark_lost(id)),
                Walk::Stop => break,
            }
        }
        marked
    }

    /// The first segment `walk_time_order` would visit: the oldest transmission RACK
    /// may still judge (every key in `time_order` is below the fresh tail's).
    pub fn oldest_in_time_order(&self) -> Option<&SentSegment> {
        match self.time_order.first_key_value() {
            Some((_, &id)) => self.index_of(id).map(|i| &self.segs[i]),
            None => self.segs.get(self.fresh_idx()),
        }
    }

    /// The send time of the latest-sent segment RACK may still judge that went out
    /// before (`xmit_ts`, `end_seq`) in RFC 8985's `RACK_sent_after` order, looking no
    /// further than the first one that did not (Linux stops its walk of
    /// `tsorted_sent_queue` there too). O(log n): of the segments sent at exactly
    /// `xmit_ts`, only the first in transmission order needs checking, since any
    /// before the stop share its send time.
    pub fn latest_send_before(&self, xmit_ts: Instant, end_seq: u64) -> Option<Instant> {
        let seg = |id: u64| self.index_of(id).map(|i| &self.segs[i]);
        // The fresh tail follows every key in `time_order`.
        let at = self
            .time_order
            .range((xmit_ts, 0)..)
            .next()
            .map(|(_, &id)| id)
            .or_else(|| self.fresh_at_or_after((xmit_ts, 0)).map(|(_, id)| id));
        if let Some(id) = at {
            if seg(id).is_some_and(|s| s.xmit_ts == xmit_ts && s.end < end_seq) {
                return Some(xmit_ts);
            }
        }
        let id = match self.fresh_before((xmit_ts, 0)) {
            Some((_, id)) => id,
            None => *self.time_order.range(..(xmit_ts, 0)).next_back()?.1,
        };
        seg(id).map(|s| s.xmit_ts)
    }
}

/// What a time-ordered walk does with a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    Skip,
    MarkLost,
    Stop,
}

#[cfg(test)]
mod model;

#[cfg(test)]
mod tests {
    use super::*;

    fn info(ms: u64) -> SentInfo {
        SentInfo {
            sent_at: Instant::from_millis(ms),
            bytes: 100,
            ..Default::default()
        }
    }

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::new();
        for i in 0..n {
            b.push(1 + i * 100, 101 + i * 100, false, info(i));
        }
        b
    }

    #[test]
    fn sack_marks_only_fully_covered_segments_and_updates_pipe() {
        let mut b = board(5);
        let mut seen = vec![];
        let n = b.sack(&[(150, 401)], |s| seen.push(s.start));
        assert_eq!(n, 2);
        assert_eq!(seen, vec![201, 301]);
        assert_eq!(b.sacked_out(), 2);
        assert_eq!(b.in_flight(), 3);
        assert_eq!(b.highest_sacked(), 401);
    }

    #[test]
    fn repeated_sack_blocks_do_not_report_segments_twice() {
        let mut b = board(6);
        assert_eq!(b.sack(&[(201, 401)], |_| {}), 2);
        let mut seen = vec![];
        assert_eq!(b.sack(&[(201, 501)], |s| seen.push(s.start)), 1);
        assert_eq!(seen, vec![401]);
    }

    #[test]
    fn cumulative_ack_removes_and_trims_head() {
        let mut b = board(3);
        b.sack(&[(101, 201)], |_| {});
        let mut delivered = vec![];
        let removed = b.ack_cumulative(250, |s| delivered.push(s.start));
        assert_eq!(removed, 2);
        // The SACKed one was already delivered.
        assert_eq!(delivered, vec![1]);
        assert_eq!(b.first().map(|s| (s.start, s.end)), Some((250, 301)));
        assert_eq!(b.sacked_out(), 0);
    }

    #[test]
    fn lost_segments_leave_pipe_until_retransmitted() {
        let mut b = board(4);
        let id = b.first().map(|s| s.id).unwrap();
        assert!(b.mark_lost(id));
        assert!(!b.mark_lost(id));
        assert_eq!(b.in_flight(), 3);
        assert_eq!(b.next_lost().map(|s| s.id), Some(id));
        b.on_retransmit(id, info(10));
        assert_eq!(b.in_flight(), 4);
        assert!(b.next_lost().is_none());
        // RACK may declare the retransmission lost as well.
        assert!(b.mark_lost(id));
        assert_eq!(b.in_flight(), 3);
    }

    #[test]
    fn time_order_walk_follows_retransmissions() {
        let mut b = board(3);
        let first = b.first().unwrap().id;
        b.mark_lost(first);
        b.on_retransmit(first, info(50));
        let mut order = vec![];
        b.walk_time_order(|s| {
            order.push(s.start);
            Walk::Skip
        });
        assert_eq!(order, vec![101, 201, 1]);
    }

    #[test]
    fn unmarking_losses_puts_segments_back_in_flight() {
        let mut b = board(4);
        assert_eq!(b.mark_all_lost(), 4);
        let first = b.first().unwrap().id;
        b.on_retransmit(first, info(50));
        assert_eq!(b.in_flight(), 1);
        b.unmark_all_lost();
        assert_eq!(b.lost_out(), 0);
        // The original and the retransmission of the head are both in flight.
        assert_eq!(b.in_flight(), 5);
        assert!(b.next_lost().is_none());
    }

    #[test]
    fn retransmitted_segments_in_a_range_are_counted() {
        let mut b = board(5);
        for id in [1, 3] {
            b.mark_lost(id);
            b.on_retransmit(id, info(60));
        }
        assert_eq!(b.count_retransmitted(101, 501, 10), 2);
        assert_eq!(b.count_retransmitted(101, 201, 10), 1);
        assert_eq!(b.count_retransmitted(201, 301, 10), 0);
        assert_eq!(b.count_retransmitted(1, 501, 2), 1, "bounded by max");
    }

    #[test]
    fn rto_marks_everything_unsacked_lost() {
        let mut b = board(4);
        b.sack(&[(201, 301)], |_| {});
        assert_eq!(b.mark_all_lost(), 3);
        assert_eq!(b.in_flight(), 0);
        assert_eq!(b.next_lost().map(|s| s.start), Some(1));
    }
}
