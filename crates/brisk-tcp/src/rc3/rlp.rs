//! RC3's recursive-low-priority (RLP) loop, the sender's state (NSDI 2014 §2.1, §4.1.1,
//! §4.2.1; spec `rc3.md` §1.4, §1.7 and ambiguities A3, A5, A11).
//!
//! Each application write is a *chunk*. The RLP sends every segment of a chunk once,
//! from the chunk's tail backwards, at a priority counted from that tail
//! ([`Rc3Levels::priority`]), and stops where it meets the primary loop's send point
//! (SND.NXT): the paper's "RLP's last byte sent crosses the primary loop's". Copies
//! are never retransmitted and are not in the scoreboard; only the primary loop's
//! ordinary TCP is.
//!
//! Mode: *push* (spec A3, the Linux patch's `tcp_sendmsg` hook, and the default there):
//! the connection hands out every copy as soon as the chunk is written, and the host's
//! priority queue (an enlarged Tx queue, §4.2.2) lets priority-0 packets overtake them.
//! A pull mode that asks the NIC when it is idle needs an egress feedback the sans-IO
//! core does not have; it is not built.
//!
//! Segmentation is head-aligned (spec A11): segment `i` of a chunk is
//! `[start + i·mss, min(start + (i+1)·mss, end))`, so the last one may be short and is
//! `d = 0` from the tail. Copies beyond the peer's window (SND.UNA + SND.WND) are
//! skipped, not delayed: the primary loop sends those bytes in its turn (A11).
//!
//! Beside the chunks the RLP keeps two bounded range sets in sequence space:
//! - `sent`: what it has copied (so the connection takes no RTT or RACK sample from a
//!   segment whose delivery may have been its copy's, spec A4(d));
//! - `delivered`: what SACK blocks reported at or beyond the primary loop's send point,
//!   which the primary loop skips ("it sends only the holes", §2.2; spec A5).
//!
//! Bounded: at most [`MAX_CHUNKS`] chunks (a further write merges into the newest, so
//! its priorities count from the merged tail) and [`MAX_RANGES`] ranges per set; a
//! range that does not fit is forgotten, which only costs a redundant send.

use super::Rc3Levels;
use crate::rangeset::RangeSet;
use std::collections::VecDeque;

/// Most chunks with RLP work left.
pub const MAX_CHUNKS: usize = 1024;
/// Most disjoint ranges in `sent` and in `delivered`.
pub const MAX_RANGES: usize = 1024;

/// One application write, in sequence space, and the RLP's progress over it.
///
/// Segments are indexed from the chunk's head (`0..n`). The RLP works in *passes*,
/// each from the highest segment the peer's window allows down to the segments an
/// earlier pass covered: the first pass starts at the tail if the window reaches it;
/// if not, it starts at the window's edge, and a later pass sends the rest once the
/// window opens (the handshake's window is unscaled, RFC 7323 §2.2, so a chunk
/// larger than 64 KB needs the peer's first ACK for its tail). Each segment is
/// handed out at most once; priorities always count from the chunk's tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Chunk {
    start: u64,
    end: u64,
    /// Segments `[top, n)` have not been reached by any pass yet.
    top: u64,
    /// The running pass: next index to send (going down) and where it stops.
    pass: Option<(u64, u64)>,
}

impl Chunk {
    fn segments(&self, mss: u64) -> u64 {
        (self.end - self.start).div_ceil(mss)
    }
}

/// A copy for the RLP to send: `[start, end)` at `priority` (1 = just below normal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Copy {
    pub start: u64,
    pub end: u64,
    pub priority: u8,
}

/// What the RLP did, for `TcpInfo`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Rc3Info {
    /// Copies sent by the RLP, and their payload bytes.
    pub rlp_packets: u64,
    pub rlp_bytes: u64,
    /// Copies per priority level (index 0 is level 1; levels beyond 4 count in 3).
    pub rlp_by_level: [u64; 4],
    /// ACKs classified as low priority (by DSCP, or by content from a standard
    /// receiver): scoreboard update only.
    pub low_acks: u64,
    /// Bytes the primary loop skipped because SACKs showed them delivered.
    pub skipped_bytes: u64,
    /// Cumulative ACKs beyond SND.NXT ("ACK bumps").
    pub ack_bumps: u64,
    /// D-SACK blocks ignored (duplicates are expected when copies and the primary
    /// loop overlap; the paper turns D-SACK off).
    pub dsacks_ignored: u64,
    /// Low-priority ACKs sent as a receiver, at the data's priority.
    pub low_acks_sent: u64,
}

/// The RLP's state on one connection.
#[derive(Clone, Debug)]
pub struct Rlp {
    levels: Rc3Levels,
    chunks: VecDeque<Chunk>,
    sent: RangeSet,
    delivered: RangeSet,
    /// End of the highest copy sent (0 before the first): part of SND.MAX.
    high: u64,
    pub info: Rc3Info,
}

impl Rlp {
    pub fn new(levels: Rc3Levels) -> Self {
        Rlp {
            levels,
            chunks: VecDeque::new(),
            sent: RangeSet::new(MAX_RANGES),
            delivered: RangeSet::new(MAX_RANGES),
            high: 0,
            info: Rc3Info::default(),
        }
    }

    /// A write of `[start, end)` (sequence space) becomes a chunk of its own.
    pub fn on_write(&mut self, start: u64, end: u64) {
        if end <= start {
            return;
        }
        if let Some(last) = self
            .chunks
            .back_mut()
            .filter(|c| c.end == start && c.top == 0 && c.pass.is_none())
        {
            // The RLP has not started on the previous write: this one joins it, so a
            // message the application wrote in pieces (a buffer at a time) is one
            // chunk, as one `send()` of it would be in Linux.
            last.end = end;
            return;
        }
        if self.chunks.len() >= MAX_CHUNKS {
            // Merged into the newest chunk: priorities now count from the new tail.
            // Its walk restarts; copies already sent are in `sent` and are skipped.
            if let Some(last) = self.chunks.back_mut().filter(|c| c.end == start) {
                last.end = end;
                last.top = 0;
                last.pass = None;
            }
            return;
        }
        self.chunks.push_back(Chunk {
            start,
            end,
            top: 0,
            pass: None,
        });
    }

    /// The next copy to send, with the primary loop at `snd_nxt` and the peer's window
    /// ending at `wnd_end`. A chunk the primary loop has passed is finished; copies the
    /// window does not allow yet wait for it. Amortised O(1) per copy: passes only
    /// move down, `top` only up, and finished chunks leave the queue.
    pub fn next_copy(&mut self, snd_nxt: u64, wnd_end: u64, mss: u32) -> Option<Copy> {
        let mss = u64::from(mss.max(1));
        while let Some(c) = self.chunks.front_mut() {
            let n = c.segments(mss);
            if c.end <= snd_nxt || (c.top >= n && c.pass.is_none()) {
                self.chunks.pop_front();
                continue;
            }
            let (i, floor) = match c.pass {
                Some(p) => p,
                None => {
                    // Highest segment inside the window (the short last one needs its
                    // own end inside).
                    let fit = if c.end <= wnd_end {
                        n
                    } else {
                        wnd_end.saturating_sub(c.start) / mss
                    };
                    if fit <= c.top {
                        return None; // wait for the window
                    }
                    let p = (fit - 1, c.top);
                    c.top = fit;
                    p
                }
            };
            let seg_start = c.start + i * mss;
            let seg_end = (seg_start + mss).min(c.end);
            // Next step of this pass (None once it reaches its floor).
            c.pass = (i > floor).then(|| (i - 1, floor));
            if seg_start < snd_nxt {
                // The RLP met the primary loop (§2.1): nothing below is copied.
                c.pass = None;
                continue;
            }
            if self.delivered_covers(seg_start, seg_end) || self.sent_covers(seg_start, seg_end) {
                continue;
            }
            let d = n - 1 - i;
            let priority = self.levels.priority(d);
            if !self.sent.insert(seg_start..seg_end) {
                // Out of bookkeeping room: stop copying rather than lose track.
                self.chunks.clear();
                return None;
            }
            self.high = self.high.max(seg_end);
            self.info.rlp_packets += 1;
            self.info.rlp_bytes += seg_end - seg_start;
            self.info.rlp_by_level[usize::from(priority.clamp(1, 4)) - 1] += 1;
            return Some(Copy {
                start: seg_start,
                end: seg_end,
                priority,
            });
        }
        None
    }

    fn sent_covers(&self, start: u64, end: u64) -> bool {
        self.sent.end_of(start).is_some_and(|e| e >= end)
    }

    fn delivered_covers(&self, start: u64, end: u64) -> bool {
        self.delivered.end_of(start).is_some_and(|e| e >= end)
    }

    /// End of the highest copy sent, for SND.MAX (ACK and SACK acceptability).
    pub fn high(&self) -> u64 {
        self.high
    }

    /// Whether any byte of `[start, end)` was also sent as a copy.
    pub fn overlaps_sent(&self, start: u64, end: u64) -> bool {
        self.sent.end_of(start).is_some()
            || self.sent.next_start_after(start).is_some_and(|s| s < end)
    }

    /// A SACK block `[l, r)` reported by the peer.
    pub fn on_sacked(&mut self, l: u64, r: u64) {
        // A set at its cap refuses the range; forgetting it costs a redundant send.
        let _ = self.delivered.insert(l..r);
    }

    /// If `at` lies in a range the peer reported delivered, that range's end.
    pub fn delivered_end(&self, at: u64) -> Option<u64> {
        self.delivered.end_of(at)
    }

    /// The start of the next delivered range after `at`.
    pub fn next_delivered_after(&self, at: u64) -> Option<u64> {
        self.delivered.next_start_after(at)
    }

    /// SND.UNA moved to `una`: everything below is settled.
    pub fn on_cumulative(&mut self, una: u64) {
        self.sent.remove_below(una);
        self.delivered.remove_below(una);
    }

    /// Chunks still being copied.
    pub fn pending_chunks(&self) -> usize {
        self.chunks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;

    fn drain(r: &mut Rlp, snd_nxt: u64, wnd_end: u64) -> Vec<Copy> {
        std::iter::from_fn(|| r.next_copy(snd_nxt, wnd_end, MSS)).collect()
    }

    #[test]
    fn the_66_packet_example_goes_tail_first_at_40_and_22() {
        // Paper §2.2: 66 segments, IW 4 sent by the primary loop (SND.NXT after 4).
        let mut r = Rlp::new(Rc3Levels::default());
        r.on_write(1, 1 + 66 * 1000);
        let c = drain(&mut r, 1 + 4 * 1000, u64::MAX);
        assert_eq!(c.len(), 62);
        // Packet k (1-based) starts at 1 + (k-1)·1000.
        let pkt = |c: &Copy| (c.start - 1) / 1000 + 1;
        let order: Vec<u64> = c.iter().map(pkt).collect();
        assert_eq!(order, (5..=66).rev().collect::<Vec<_>>());
        assert!(c[..40].iter().all(|c| c.priority == 1));
        assert!(c[40..].iter().all(|c| c.priority == 2));
        assert_eq!(r.info.rlp_by_level, [40, 22, 0, 0]);
        assert_eq!(r.high(), 1 + 66 * 1000);
        assert_eq!(r.pending_chunks(), 0);
    }

    #[test]
    fn a_short_last_segment_is_d_zero_and_copies_stop_at_snd_nxt() {
        let mut r = Rlp::new(Rc3Levels::default());
        r.on_write(1, 2501); // segments [1,1001) [1001,2001) [2001,2501)
        let c = drain(&mut r, 1001, u64::MAX);
        assert_eq!(
            c.iter().map(|c| (c.start, c.end)).collect::<Vec<_>>(),
            [(2001, 2501), (1001, 2001)]
        );
    }

    #[test]
    fn each_write_counts_priorities_from_its_own_tail() {
        let levels = Rc3Levels::new(vec![1, 10], super::super::LevelRule::Design).unwrap();
        let mut r = Rlp::new(levels);
        r.on_write(1, 3001);
        assert!(r.next_copy(1, u64::MAX, MSS).is_some());
        r.on_write(3001, 5001);
        let c = drain(&mut r, 1, u64::MAX);
        let prios: Vec<(u64, u8)> = c.iter().map(|c| (c.start, c.priority)).collect();
        assert_eq!(prios, [(1001, 2), (1, 2), (4001, 1), (3001, 2)]);
    }

    #[test]
    fn writes_before_the_rlp_starts_join_one_chunk() {
        let levels = Rc3Levels::new(vec![1, 10], super::super::LevelRule::Design).unwrap();
        let mut r = Rlp::new(levels);
        r.on_write(1, 3001);
        r.on_write(3001, 5001);
        assert_eq!(r.pending_chunks(), 1);
        let c = drain(&mut r, 1, u64::MAX);
        let prios: Vec<(u64, u8)> = c.iter().map(|c| (c.start, c.priority)).collect();
        assert_eq!(prios, [(4001, 1), (3001, 2), (2001, 2), (1001, 2), (1, 2)]);
    }

    #[test]
    fn copies_beyond_the_window_wait_for_it_and_delivered_ranges_are_not_copied() {
        let levels = Rc3Levels::new(vec![2, 10], super::super::LevelRule::Design).unwrap();
        let mut r = Rlp::new(levels);
        r.on_write(1, 10_001);
        r.on_sacked(6001, 7001);
        let c = drain(&mut r, 1, 8001);
        let got: Vec<(u64, u8)> = c.iter().map(|c| (c.start, c.priority)).collect();
        // Segment 8 is d = 2 from the tail: level 2 already.
        assert_eq!(
            got,
            [
                (7001, 2),
                (5001, 2),
                (4001, 2),
                (3001, 2),
                (2001, 2),
                (1001, 2),
                (1, 2)
            ]
        );
        // The window opens: the tail goes, at its own priority, and nothing twice.
        let c = drain(&mut r, 1, 20_001);
        let got: Vec<(u64, u8)> = c.iter().map(|c| (c.start, c.priority)).collect();
        assert_eq!(got, [(9001, 1), (8001, 1)]);
        assert_eq!(r.pending_chunks(), 0);
        assert!(drain(&mut r, 1, 20_001).is_empty());
    }

    #[test]
    fn a_window_pass_stops_where_the_primary_loop_is() {
        let mut r = Rlp::new(Rc3Levels::default());
        r.on_write(1, 10_001);
        let first = drain(&mut r, 3001, 6001);
        assert_eq!(
            first.iter().map(|c| c.start).collect::<Vec<_>>(),
            [5001, 4001, 3001]
        );
        // The primary loop moved on to 7001 meanwhile: the second pass stops there.
        let second = drain(&mut r, 7001, 20_001);
        assert_eq!(
            second.iter().map(|c| c.start).collect::<Vec<_>>(),
            [9001, 8001, 7001]
        );
    }

    #[test]
    fn delivered_ranges_are_found_and_forgotten_below_una() {
        let mut r = Rlp::new(Rc3Levels::default());
        r.on_sacked(5000, 6000);
        r.on_sacked(7000, 8000);
        assert_eq!(r.delivered_end(5500), Some(6000));
        assert_eq!(r.delivered_end(6000), None);
        assert_eq!(r.next_delivered_after(6000), Some(7000));
        r.on_cumulative(7500);
        assert_eq!(r.delivered_end(5500), None);
        assert_eq!(r.delivered_end(7600), Some(8000));
    }

    #[test]
    fn chunks_are_bounded() {
        let mut r = Rlp::new(Rc3Levels::default());
        for k in 0..(MAX_CHUNKS as u64 + 100) {
            r.on_write(1 + k * 10, 1 + (k + 1) * 10);
            // Start each chunk, so the next write makes a chunk of its own.
            let _ = r.next_copy(1 + k * 10, u64::MAX, MSS);
        }
        assert!(r.pending_chunks() <= MAX_CHUNKS);
        let _ = drain(&mut r, 1, u64::MAX);
        // Every byte was copied exactly once.
        assert_eq!(r.info.rlp_bytes, (MAX_CHUNKS as u64 + 100) * 10);
    }

    #[test]
    fn overlap_with_sent_copies() {
        let mut r = Rlp::new(Rc3Levels::default());
        r.on_write(1, 3001);
        let _ = drain(&mut r, 1001, u64::MAX);
        assert!(r.overlaps_sent(1500, 2500));
        assert!(r.overlaps_sent(500, 1500));
        assert!(!r.overlaps_sent(1, 1001));
    }
}
