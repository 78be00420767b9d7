//! The receive side: in-order buffer, bounded out-of-order reassembly, SACK and D-SACK
//! block generation (RFC 2018 §4, RFC 2883 §4). When to ACK is `ack_policy`'s.
//!
//! Everything here works in stream offsets (data byte 0 = IRS + 1). The connection
//! converts to sequence numbers at the wire.
//!
//! Out-of-order data is kept per stream offset in a `BTreeMap` of disjoint, non-adjacent
//! ranges, each a `VecDeque` so that data arriving just *before* a range (RC3's copies
//! arrive tail first) is prepended in O(segment), not by copying the range; bounded by
//! the advertised window (bytes) and `max_ooo_segments` (ranges);
//! anything beyond is dropped and counted. (It maps each range to its bytes, so it is
//! not a `RangeSet`, which holds intervals only; one beside it would only repeat its
//! keys.) Unordered receive (uTCP, `unordered`) hands out OOO ranges with their offsets
//! as they arrive, tracking what it handed out in a `RangeSet` beside the store. ACK, SACK and window are computed from this store alone, never from what
//! the application has looked at, so they stay exactly standard.

pub mod prune;
pub mod unordered;

use std::collections::{BTreeMap, VecDeque};

/// What happened to an arriving payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// In order: `advanced` new bytes became readable; `filled_hole` if queued
    /// out-of-order data was joined.
    InOrder {
        advanced: u64,
        filled_hole: bool,
    },
    OutOfOrder,
    /// Entirely old or already held.
    Duplicate,
    /// Out-of-order but dropped (range limit).
    Dropped,
}

#[derive(Debug)]
pub struct RecvBuffer {
    ready: VecDeque<u8>,
    /// Offset of `ready[0]`.
    read_off: u64,
    ooo: BTreeMap<u64, VecDeque<u8>>,
    ooo_bytes: usize,
    /// What the out-of-order store has allocated: each range's buffer capacity plus
    /// `prune::RANGE_OVERHEAD` (kept in step with `ooo`, like `ooo_bytes`).
    ooo_charge: usize,
    /// Bytes this buffer may newly allocate (the endpoint's memory budget, see
    /// `crate::mem`; unlimited by default). Growth beyond it is refused: counted in
    /// `mem_dropped`, the peer retransmits.
    mem_allow: usize,
    pub mem_dropped: u64,
    /// Collapse and prune counters (`prune`).
    pub prune_stats: prune::PruneStats,
    capacity: usize,
    max_ranges: usize,
    /// SACK blocks in report order (most recent first), RFC 2018 §4.
    sack_recent: Vec<(u64, u64)>,
    /// A duplicate range to report once as the first block (RFC 2883).
    dsack: Option<(u64, u64)>,
    pub ooo_dropped: u64,
    /// What unordered reads have handed out (never consulted for ACK/SACK/window).
    delivered: unordered::Delivered,
}

impl RecvBuffer {
    pub fn new(capacity: usize, max_ranges: usize) -> Self {
        RecvBuffer {
            ready: VecDeque::new(),
            read_off: 0,
            ooo: BTreeMap::new(),
            ooo_bytes: 0,
            ooo_charge: 0,
            mem_allow: usize::MAX,
            mem_dropped: 0,
            prune_stats: prune::PruneStats::default(),
            capacity,
            max_ranges: max_ranges.max(1),
            sack_recent: Vec::with_capacity(4),
            dsack: None,
            ooo_dropped: 0,
            delivered: unordered::Delivered::new(max_ranges.max(1).saturating_mul(2)),
        }
    }

    /// Next expected offset (RCV.NXT in stream offsets).
    pub fn nxt(&self) -> u64 {
        self.read_off + self.ready.len() as u64
    }
    pub fn readable(&self) -> usize {
        self.ready.len()
    }
    pub fn capacity(&self) -> usize {
        self.capacity
    }
    /// Free space after RCV.NXT (out-of-order data sits inside this space).
    pub fn free(&self) -> usize {
        self.capacity.saturating_sub(self.ready.len())
    }
    pub fn ooo_ranges(&self) -> usize {
        self.ooo.len()
    }
    pub fn ooo_bytes(&self) -> usize {
        self.ooo_bytes
    }
    pub fn has_ooo(&self) -> bool {
        !self.ooo.is_empty()
    }

    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len().min(self.ready.len());
        self.copy_out(&mut buf[..n]);
        self.consume(n)
    }

    /// Copies the first `out.len()` readable bytes (at most `readable()`) into `out`.
    fn copy_out(&self, out: &mut [u8]) {
        let n = out.len();
        let (a, b) = self.ready.as_slices();
        let na = n.min(a.len());
        out[..na].copy_from_slice(&a[..na]);
        out[na..].copy_from_slice(&b[..n - na]);
    }

    /// [`read`](Self::read) without the copy where it can: the same bytes (up to
    /// `buf.len()`) are handed to `f` as one slice, straight from the buffer when they
    /// lie in one piece of it, else copied into `buf` first (the ring wraps inside
    /// them). `f` is not called when nothing is readable.
    pub fn read_in_place(&mut self, buf: &mut [u8], f: &mut dyn FnMut(&[u8])) -> usize {
        let n = buf.len().min(self.ready.len());
        if n == 0 {
            return 0;
        }
        let a = self.ready.as_slices().0;
        if n <= a.len() {
            f(&a[..n]);
        } else {
            self.copy_out(&mut buf[..n]);
            f(&buf[..n]);
        }
        self.consume(n)
    }

    /// Removes the first `n` readable bytes (`n` at most `readable()`); returns `n`.
    fn consume(&mut self, n: usize) -> usize {
        if n == self.ready.len() {
            // All of it (a reader keeping up, nearly every read): no `Drain` to build
            // and drop, and the ring restarts at its front, so the next appends are
            // less likely to wrap.
            self.ready.clear();
        } else {
            self.ready.drain(..n);
        }
        self.read_off += n as u64;
        if self.ready.is_empty() && self.ready.capacity() > prune::READY_KEEP {
            // A burst is drained: give back what it grew (accounted by capacity).
            self.ready.shrink_to(prune::READY_KEEP);
        }
        n
    }

    /// Accepts `data` at stream offset `off`; bytes at or beyond `limit` (the advertised
    /// right edge) must already have been trimmed by the caller.
    pub fn insert(&mut self, off: u64, data: &[u8]) -> Arrival {
        let nxt = self.nxt();
        let end = off + data.len() as u64;
        if data.is_empty() {
            return Arrival::Duplicate;
        }
        if end <= nxt {
            self.dsack = Some((off, end));
            return Arrival::Duplicate;
        }
        if off <= nxt {
            if off < nxt {
                self.dsack = Some((off, nxt));
            }
            let skip = (nxt - off) as usize;
            let Some(exact) = grow_policy(&self.ready, data.len() - skip, 0, self.mem_allow) else {
                self.mem_dropped += 1;
                return Arrival::Dropped;
            };
            let cap0 = self.ready.capacity();
            reserve(&mut self.ready, data.len() - skip, exact);
            self.ready.extend(&data[skip..]);
            // Nothing queued to join (every in-order segment of a path without loss):
            // the search and the pull-in would find no range, reserve nothing and fill
            // no hole, so they are skipped.
            let filled = !self.ooo.is_empty() && self.pull_in_queued(cap0);
            let cur = self.nxt();
            // Blocks are remembered only after out-of-order data: none on a clean path.
            if !self.sack_recent.is_empty() {
                self.sack_recent.retain(|b| b.0 > cur);
            }
            self.delivered.on_advance(cur);
            return Arrival::InOrder {
                advanced: cur - nxt,
                filled_hole: filled,
            };
        }
        self.insert_ooo(off, data)
    }

    /// After an in-order append: copies in the queued ranges that now connect, and
    /// says whether any did (a hole was filled). `cap0` is the ready queue's capacity
    /// before the append, for the memory budget. Only after a loss, so out of line:
    /// the in-order append stays small.
    #[inline(never)]
    fn pull_in_queued(&mut self, cap0: usize) -> bool {
        // The queued ranges this joins are copied in and freed: reserve for them
        // once, within what is left of the budget plus what they free (so near the
        // limit the queue grows exactly and the total cannot pass it).
        let left = self.mem_allow - (self.ready.capacity() - cap0);
        let (mut join_end, mut join_charge) = (self.nxt(), 0);
        for (&s, v) in self.ooo.range(..=join_end) {
            if s > join_end {
                break;
            }
            join_end = join_end.max(s + v.len() as u64);
            join_charge += prune::charge(v);
        }
        let extra = (join_end - self.nxt()) as usize;
        if extra > 0 {
            // NOTE: exact growth needs at most `extra` <= `join_charge` bytes.
            let exact = grow_policy(&self.ready, extra, 0, left.saturating_add(join_charge))
                .unwrap_or(true);
            reserve(&mut self.ready, extra, exact);
        }
        let mut filled = false;
        // Pull in queued ranges that now connect.
        while let Some(entry) = self.ooo.first_entry() {
            let start = *entry.key();
            let cur = self.read_off + self.ready.len() as u64;
            if start > cur {
                break;
            }
            let bytes = entry.remove();
            self.ooo_bytes -= bytes.len();
            self.ooo_charge -= prune::charge(&bytes);
            let rend = start + bytes.len() as u64;
            if rend > cur {
                extend_from(&mut self.ready, &bytes, (cur - start) as usize);
            }
            filled = true;
        }
        filled
    }

    /// `insert` of data beyond RCV.NXT (only after a loss or reordering): out of
    /// line, so the in-order append stays small.
    #[inline(never)]
    fn insert_ooo(&mut self, off: u64, data: &[u8]) -> Arrival {
        let end = off + data.len() as u64;
        // Range starting at or before `off` that touches it.
        let prev = self
            .ooo
            .range(..=off)
            .next_back()
            .map(|(&s, v)| (s, s + v.len() as u64))
            .filter(|&(_, e)| e >= off);
        if let Some((ps, pe)) = prev {
            if pe >= end {
                self.dsack = Some((off, end));
                self.report_first(ps, pe);
                return Arrival::Duplicate;
            }
        }
        // The later ranges: those fully or partly covered by / adjacent to [off, end]
        // other than `prev` (which can only be the first, starting at `off`). Walked
        // in the map rather than collected, so an arrival allocates no list; they are
        // at most a handful, those the new segment touches.
        let prev_key = prev.map(|p| p.0);
        let (mut first_later, mut last_later_end) = (None, None);
        for (&s, v) in self.ooo.range(off..=end) {
            if Some(s) != prev_key {
                first_later.get_or_insert(s);
                last_later_end = Some(s + v.len() as u64);
            }
        }
        if prev.is_none() && first_later.is_none() && self.ooo.len() >= self.max_ranges {
            self.ooo_dropped += 1;
            return Arrival::Dropped;
        }
        // The merged range's final length, and the buffer that grows to hold it (the
        // range before, else the first one after, else a new one): its growth is
        // reserved once, within the memory budget.
        let base = prev_key.or(first_later);
        let fin_start = base.map_or(off, |b| b.min(off));
        let fin_end = last_later_end
            .into_iter()
            .chain(prev.map(|p| p.1))
            .fold(end, u64::max);
        let fin_len = (fin_end - fin_start) as usize;
        let Some((grow, exact)) = self.ooo_growth(base, fin_len) else {
            self.mem_dropped += 1;
            return Arrival::Dropped;
        };
        let mut dup: Option<(u64, u64)> = None;
        let (start, mut buf) = match (prev, first_later) {
            (Some((ps, _)), _) => {
                // NOTE(unwrap): `prev` was found in the map just above.
                let mut v = self.ooo.remove(&ps).unwrap();
                self.ooo_bytes -= v.len();
                self.ooo_charge -= prune::charge(&v);
                reserve(&mut v, grow, exact);
                let have = ps + v.len() as u64;
                if have < end {
                    v.extend(&data[(have - off) as usize..]);
                }
                (ps, v)
            }
            (None, Some(s0)) => {
                // Just before a stored range: prepend to it (tail-first arrivals).
                // NOTE(unwrap): `s0` was found in the map just above.
                let mut v = self.ooo.remove(&s0).unwrap();
                self.ooo_bytes -= v.len();
                self.ooo_charge -= prune::charge(&v);
                reserve(&mut v, grow, exact);
                let e0 = s0 + v.len() as u64;
                let ov_end = e0.min(end);
                if ov_end > s0 {
                    dup = Some((s0, ov_end));
                }
                for &b in data[..(s0 - off) as usize].iter().rev() {
                    v.push_front(b);
                }
                if end > e0 {
                    v.extend(&data[(e0 - off) as usize..]);
                }
                (off, v)
            }
            (None, None) => {
                let mut v = VecDeque::new();
                reserve(&mut v, grow, exact);
                v.extend(data);
                (off, v)
            }
        };
        // The base range is out of the map: what is left in `off..=end` are the later
        // ranges still to merge.
        self.absorb_ranges(off, start, &mut buf, end, &mut dup);
        if dup.is_some() {
            self.dsack = dup;
        }
        let rend = start + buf.len() as u64;
        self.ooo_bytes += buf.len();
        self.ooo_charge += prune::charge(&buf);
        self.ooo.insert(start, buf);
        self.delivered.on_insert(off);
        self.report_first(start, rend);
        Arrival::OutOfOrder
    }

    /// How much the buffer that will hold a merged out-of-order range of `fin_len`
    /// bytes grows (the range at `base`, else a new one), and whether to reserve
    /// exactly: `None` when the memory budget does not allow it.
    fn ooo_growth(&self, base: Option<u64>, fin_len: usize) -> Option<(usize, bool)> {
        match base.and_then(|b| self.ooo.get(&b)) {
            Some(v) => {
                let extra = fin_len - v.len();
                grow_policy(v, extra, 0, self.mem_allow).map(|exact| (extra, exact))
            }
            None => (fin_len + prune::RANGE_OVERHEAD <= self.mem_allow).then_some((fin_len, true)),
        }
    }

    /// Moves the stored ranges starting in `off..=end` (each touched by the new
    /// segment `[off, end)`), in order, into `buf`, the merged range starting at
    /// `start`; the first overlap with the new segment becomes the D-SACK candidate
    /// `dup`.
    fn absorb_ranges(
        &mut self,
        off: u64,
        start: u64,
        buf: &mut VecDeque<u8>,
        end: u64,
        dup: &mut Option<(u64, u64)>,
    ) {
        while let Some(s) = self.ooo.range(off..=end).next().map(|(&s, _)| s) {
            // NOTE(unwrap): the key was found in the map just above.
            let v = self.ooo.remove(&s).unwrap();
            self.ooo_bytes -= v.len();
            self.ooo_charge -= prune::charge(&v);
            let e = s + v.len() as u64;
            let cur = start + buf.len() as u64;
            let ov_end = e.min(end);
            if ov_end > s {
                dup.get_or_insert((s, ov_end));
            }
            if e > cur {
                extend_from(buf, &v, (cur - s) as usize);
            }
        }
    }

    /// RFC 2018 §4: the block holding the latest segment goes first; other blocks keep
    /// their recency order; blocks it absorbed disappear.
    fn report_first(&mut self, s: u64, e: u64) {
        self.sack_recent.retain(|b| b.1 < s || b.0 > e);
        self.sack_recent.insert(0, (s, e));
        self.sack_recent.truncate(4);
    }

    /// Up to `max` blocks for the next ACK: the D-SACK block first (RFC 2883), then
    /// current out-of-order ranges, most recent first. Consumes the D-SACK.
    pub fn sack_blocks(&mut self, max: usize, out: &mut Vec<(u64, u64)>) {
        out.clear();
        if let Some(d) = self.dsack.take() {
            out.push(d);
        }
        let ooo = &self.ooo;
        self.sack_recent
            .retain(|&(s, e)| ooo.get(&s).is_some_and(|v| s + v.len() as u64 == e));
        for &b in &self.sack_recent {
            if out.len() >= max {
                break;
            }
            out.push(b);
        }
        // Ranges not yet reported (e.g. after more than four were created).
        if out.len() < max && self.sack_recent.len() < self.ooo.len() {
            for (&s, v) in self.ooo.iter().rev() {
                if out.len() >= max {
                    break;
                }
                let b = (s, s + v.len() as u64);
                if !out.contains(&b) {
                    out.push(b);
                }
            }
        }
    }

    /// Whether [`sack_blocks`](Self::sack_blocks) would return no block and change
    /// nothing: no D-SACK, no out-of-order data, no remembered block. Inline: the
    /// segment builder asks on every ACK-bearing segment.
    #[inline]
    pub fn sack_blocks_idle(&self) -> bool {
        self.dsack.is_none() && self.ooo.is_empty() && self.sack_recent.is_empty()
    }

    pub fn has_dsack(&self) -> bool {
        self.dsack.is_some()
    }

    /// Whether `[off, end)` touches the block reported first (the most recent one),
    /// so that inserting it only grows that block.
    pub fn extends_latest_block(&self, off: u64, end: u64) -> bool {
        self.sack_recent
            .first()
            .is_some_and(|&(s, e)| off <= e && end >= s)
    }

    pub fn clear_dsack(&mut self) {
        self.dsack = None;
    }
}

/// How a buffer holding `v` grows by `extra` bytes within `allow` newly allocated
/// bytes (`overhead` included): `Some(false)` the usual amortised doubling,
/// `Some(true)` an exact reservation (only near the budget, where doubling would not
/// fit), `None` not at all.
fn grow_policy(v: &VecDeque<u8>, extra: usize, overhead: usize, allow: usize) -> Option<bool> {
    let need = v.len() + extra;
    let cap = v.capacity();
    if need <= cap {
        return Some(false);
    }
    if need.max(cap.saturating_mul(2)) - cap + overhead <= allow {
        Some(false)
    } else if need - cap + overhead <= allow {
        Some(true)
    } else {
        None
    }
}

/// Reserves room for `extra` more bytes, exactly or amortised (see `grow_policy`).
fn reserve(v: &mut VecDeque<u8>, extra: usize, exact: bool) {
    if exact {
        v.reserve_exact(extra);
    } else {
        v.reserve(extra);
    }
}

/// Appends `src[from..]` to `dst`, slice by slice.
fn extend_from(dst: &mut VecDeque<u8>, src: &VecDeque<u8>, from: usize) {
    let (a, b) = src.as_slices();
    if from < a.len() {
        dst.extend(&a[from..]);
        dst.extend(b);
    } else {
        dst.extend(&b[from - a.len()..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_first_arrivals_are_prepended_and_reassemble() {
        // RC3's copies arrive from the tail backwards.
        let mut r = RecvBuffer::new(1 << 20, 8);
        let data: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        for k in (1..10).rev() {
            let off = k * 100;
            assert_eq!(
                r.insert(off as u64, &data[off..off + 100]),
                Arrival::OutOfOrder
            );
            assert_eq!(r.ooo_ranges(), 1);
        }
        // An overlapping prepend keeps one copy of each byte and reports the overlap.
        assert_eq!(r.insert(850, &data[850..950]), Arrival::Duplicate);
        assert_eq!(r.insert(50, &data[50..150]), Arrival::OutOfOrder);
        assert_eq!(r.ooo_bytes(), 950);
        assert_eq!(
            r.insert(0, &data[..50]),
            Arrival::InOrder {
                advanced: 1000,
                filled_hole: true
            }
        );
        let mut buf = vec![0u8; 2000];
        assert_eq!(r.read(&mut buf), 1000);
        assert_eq!(&buf[..1000], &data[..]);
    }

    /// `read_in_place` hands over exactly what `read` copies out, in one slice, in
    /// place or (when the ring wraps inside it) through `buf`, and consumes the same.
    #[test]
    fn read_in_place_matches_read_across_the_wrap() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7) as u8).collect();
        let (mut a, mut b) = (RecvBuffer::new(1 << 20, 8), RecvBuffer::new(1 << 20, 8));
        let (mut off, mut got, mut wrapped) = (0usize, Vec::new(), 0);
        let mut step = |a: &mut RecvBuffer, b: &mut RecvBuffer, len: usize, got: &mut Vec<u8>| {
            let first = b.ready.as_slices().0.len();
            wrapped += usize::from(len.min(b.readable()) > first);
            let (mut buf_a, mut buf_b) = (vec![0u8; len], vec![0u8; len]);
            let n = a.read(&mut buf_a);
            let mut calls = 0;
            let m = b.read_in_place(&mut buf_b, &mut |d| {
                calls += 1;
                got.extend_from_slice(d);
            });
            assert_eq!((n, calls), (m, usize::from(n > 0)));
            assert_eq!(&got[got.len() - n..], &buf_a[..n]);
            assert_eq!((a.nxt(), a.readable()), (b.nxt(), b.readable()));
            n
        };
        // Uneven writes and partial reads move the ring's head around, so some wrap.
        for k in 0..150usize {
            let w = [700usize, 1448, 300, 2896, 50][k % 5].min(data.len() - off);
            let piece = &data[off..off + w];
            assert_eq!(a.insert(off as u64, piece), b.insert(off as u64, piece));
            off += w;
            step(&mut a, &mut b, 500 + 37 * (k % 60), &mut got);
        }
        while step(&mut a, &mut b, 1000, &mut got) > 0 {}
        assert_eq!(got, &data[..off]);
        assert!(wrapped > 0, "no read crossed the ring's end");
    }

    fn blocks(r: &mut RecvBuffer) -> Vec<(u64, u64)> {
        let mut v = vec![];
        r.sack_blocks(4, &mut v);
        v
    }

    #[test]
    fn reassembles_and_reports_hole_filled() {
        let mut r = RecvBuffer::new(1000, 8);
        assert_eq!(r.insert(10, b"bbbbb"), Arrival::OutOfOrder);
        assert_eq!(
            r.insert(0, b"aaaaaaaaaa"),
            Arrival::InOrder {
                advanced: 15,
                filled_hole: true
            }
        );
        let mut buf = [0u8; 32];
        assert_eq!(r.read(&mut buf), 15);
        assert_eq!(&buf[..15], b"aaaaaaaaaabbbbb");
        assert!(blocks(&mut r).is_empty());
    }

    #[test]
    fn sack_blocks_most_recent_first() {
        let mut r = RecvBuffer::new(10_000, 8);
        r.insert(100, &[1; 10]);
        r.insert(300, &[1; 10]);
        r.insert(200, &[1; 10]);
        assert_eq!(blocks(&mut r), vec![(200, 210), (300, 310), (100, 110)]);
        // Extending the oldest block moves it to the front.
        r.insert(110, &[1; 10]);
        assert_eq!(blocks(&mut r), vec![(100, 120), (200, 210), (300, 310)]);
        // Merging two blocks reports the union once.
        r.insert(210, &[1; 90]);
        assert_eq!(blocks(&mut r), vec![(200, 310), (100, 120)]);
    }

    #[test]
    fn duplicate_segment_is_reported_as_dsack_first() {
        let mut r = RecvBuffer::new(10_000, 8);
        r.insert(0, &[1; 100]);
        r.insert(200, &[1; 100]);
        assert_eq!(r.insert(0, &[1; 50]), Arrival::Duplicate);
        assert_eq!(blocks(&mut r), vec![(0, 50), (200, 300)]);
        // Reported once only.
        assert_eq!(blocks(&mut r), vec![(200, 300)]);
        // Duplicate of out-of-order data: D-SACK, then the containing block.
        assert_eq!(r.insert(220, &[1; 10]), Arrival::Duplicate);
        assert_eq!(blocks(&mut r), vec![(220, 230), (200, 300)]);
    }

    /// Random arrivals against a byte map: the out-of-order store always holds the
    /// maximal runs of received bytes beyond the in-order end (merged, never
    /// adjacent), byte counts agree, and every byte reads back in order.
    #[test]
    fn random_arrivals_keep_maximal_disjoint_ranges() {
        use rand::{Rng, SeedableRng};
        for seed in 0..20u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            const N: usize = 4_000;
            let data: Vec<u8> = (0..N).map(|i| (i * 31 + seed as usize) as u8).collect();
            let mut r = RecvBuffer::new(1 << 20, 1_000);
            let mut have = vec![false; N];
            let mut out = Vec::new();
            let mut buf = vec![0u8; N];
            while out.len() < N {
                let off = rng.gen_range(0..N);
                let len = rng.gen_range(1..=120).min(N - off);
                r.insert(off as u64, &data[off..off + len]);
                have[off..off + len].iter_mut().for_each(|h| *h = true);
                let prefix = have.iter().position(|h| !h).unwrap_or(N);
                assert_eq!(r.nxt(), prefix as u64, "seed {seed}");
                let runs = (prefix..N)
                    .filter(|&i| have[i] && (i == prefix || !have[i - 1]))
                    .count();
                let held = have[prefix..].iter().filter(|&&h| h).count();
                assert_eq!((r.ooo_ranges(), r.ooo_bytes()), (runs, held), "seed {seed}");
                let n = r.read(&mut buf);
                out.extend_from_slice(&buf[..n]);
            }
            assert_eq!(out, data, "seed {seed}");
        }
    }

    #[test]
    fn out_of_order_ranges_are_bounded() {
        let mut r = RecvBuffer::new(1 << 20, 4);
        for i in 0..100u64 {
            r.insert(10 + i * 10, &[0; 2]);
        }
        assert_eq!(r.ooo_ranges(), 4);
        assert_eq!(r.ooo_dropped, 96);
        // Data that merges with an existing range is still accepted.
        assert_eq!(r.insert(12, &[0; 2]), Arrival::OutOfOrder);
    }
}
