//! Receiver-side accounting for unordered receive (uTCP, `[flow.tcp] unordered = true`;
//! docs/mechanisms/utcp.md): which bytes reach the application for the first time, and
//! when each record has had all its bytes delivered, in any order.
//!
//! brisk-tcp hands each out-of-order byte to the app at most once out of order and
//! always once more in order (at-least-once, Minion §4.1). "First delivery" is the
//! earlier of the two; goodput and `bytes_delivered` count bytes only there (the thesis
//! Fig. 2.3 curve "counts first delivery of each byte and ignores redelivery").
//!
//! Both structures are bounded: brisk-tcp keeps at most 2 x `max_ooo_segments` handed-out
//! intervals and a greedy reader drains every read, so the caps below are never reached
//! in practice; past them, pieces go untracked and are counted (never double-counted
//! bytes: an untracked out-of-order piece is simply counted at its in-order delivery).

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

use brisk_tcp::rangeset::RangeSet;

use crate::app::RECORD_HEADER_LEN;
use brisk_app::records::RecordHeader;

/// Most out-of-order intervals remembered above the in-order read point.
pub const MAX_AHEAD_INTERVALS: usize = 1 << 16;
/// Most records with some but not all bytes delivered.
pub const MAX_PARTIAL_RECORDS: usize = 1 << 16;

/// Bytes delivered for the first time.
#[derive(Debug)]
pub struct FirstDelivery {
    /// Out-of-order-delivered intervals at or above the in-order read point, at most
    /// [`MAX_AHEAD_INTERVALS`] of them.
    ahead: RangeSet,
    /// Bytes delivered at least once.
    pub bytes: u64,
    /// Out-of-order pieces not remembered because `ahead` was full; their bytes are
    /// counted at their in-order delivery instead.
    pub untracked: u64,
}

impl Default for FirstDelivery {
    fn default() -> Self {
        FirstDelivery {
            ahead: RangeSet::new(MAX_AHEAD_INTERVALS),
            bytes: 0,
            untracked: 0,
        }
    }
}

impl FirstDelivery {
    /// An out-of-order read of [off, off + len). Returns whether it is a first delivery
    /// (false only when it could not be tracked; it then counts when read in order).
    /// brisk-tcp hands each byte out of order at most once, so pieces never overlap.
    pub fn on_ooo(&mut self, off: u64, len: u64) -> bool {
        if !self.ahead.insert(off..off + len) {
            self.untracked += 1;
            return false;
        }
        self.bytes += len;
        true
    }

    /// An in-order read of [off, off + len): calls `first(start, end)` for each part not
    /// delivered out of order before, and forgets the out-of-order intervals it passes.
    pub fn on_in_order(&mut self, off: u64, len: u64, mut first: impl FnMut(u64, u64)) {
        let end = off + len;
        let mut pos = off;
        for r in self.ahead.iter().take_while(|r| r.start < end) {
            if r.start > pos {
                first(pos, r.start);
                self.bytes += r.start - pos;
            }
            pos = pos.max(r.end.min(end));
        }
        // An interval reaching past `end` is not expected (in-order reads cover whole
        // handed-out runs), but its remainder is kept so the count stays exact.
        self.ahead.remove_below(end);
        if pos < end {
            first(pos, end);
            self.bytes += end - pos;
        }
    }
}

/// Per-record byte accounting for `records` when pieces arrive in any order. Records
/// are `size` bytes at offsets `k * size`, each starting with its header (app.rs).
#[derive(Debug)]
pub struct RecordAssembly {
    size: u64,
    /// Record index -> bytes delivered and the header bytes seen so far.
    partial: BTreeMap<u64, Partial>,
    /// Records all of whose bytes have been delivered.
    pub completed: u64,
    /// Pieces not tracked because `partial` was full.
    pub untracked: u64,
}

#[derive(Debug, Default)]
struct Partial {
    got: u64,
    header: [u8; RECORD_HEADER_LEN],
}

/// The send time, ns, of the record starting with `header` (at least a header long,
/// as records are: their size is at least [`RECORD_HEADER_LEN`]).
fn sent_at(header: &[u8]) -> u64 {
    header
        .first_chunk::<RECORD_HEADER_LEN>()
        .map_or(0, |h| RecordHeader::decode(h).0.sent_at_ns)
}

impl RecordAssembly {
    pub fn new(size: u64) -> Self {
        RecordAssembly {
            size: size.max(RECORD_HEADER_LEN as u64),
            partial: BTreeMap::new(),
            completed: 0,
            untracked: 0,
        }
    }

    /// Records in progress.
    pub fn partial_records(&self) -> usize {
        self.partial.len()
    }

    /// `data`, first delivered at stream offset `off`; calls `done(sent_at_ns)` for each
    /// record whose last missing byte this is. Every byte must be passed exactly once.
    pub fn add(&mut self, off: u64, data: &[u8], mut done: impl FnMut(u64)) {
        let mut i = 0;
        while i < data.len() {
            let o = off + i as u64;
            let (idx, pos) = (o / self.size, o % self.size);
            let n = (self.size - pos).min((data.len() - i) as u64) as usize;
            let piece = &data[i..i + n];
            i += n;
            if pos == 0 && n as u64 == self.size {
                self.completed += 1;
                done(sent_at(piece));
                continue;
            }
            let full = self.partial.len() >= MAX_PARTIAL_RECORDS;
            let p = match self.partial.entry(idx) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(_) if full => {
                    self.untracked += 1;
                    continue;
                }
                Entry::Vacant(v) => v.insert(Partial::default()),
            };
            let hdr = RECORD_HEADER_LEN as u64;
            if pos < hdr {
                let k = (hdr - pos).min(n as u64) as usize;
                p.header[pos as usize..pos as usize + k].copy_from_slice(&piece[..k]);
            }
            p.got += n as u64;
            if p.got >= self.size {
                let header = p.header;
                self.partial.remove(&idx);
                self.completed += 1;
                done(sent_at(&header));
            }
        }
    }
}

/// The unordered receiver's state, created when a flow's connection reads unordered.
#[derive(Debug)]
pub struct UnorderedRx {
    pub first: FirstDelivery,
    /// For `records` flows.
    pub records: Option<RecordAssembly>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(f: &mut FirstDelivery, off: u64, len: u64) -> Vec<(u64, u64)> {
        let mut v = vec![];
        f.on_in_order(off, len, |s, e| v.push((s, e)));
        v
    }

    #[test]
    fn bytes_count_once_at_their_first_delivery() {
        let mut f = FirstDelivery::default();
        assert_eq!(collect(&mut f, 0, 100), vec![(0, 100)]);
        assert!(f.on_ooo(200, 100));
        assert!(f.on_ooo(400, 50));
        assert!(f.on_ooo(300, 50)); // extends [200, 300) to [200, 350)
        assert_eq!(f.bytes, 300);
        // The hole fills: only the bytes never seen count again.
        assert_eq!(
            collect(&mut f, 100, 400),
            vec![(100, 200), (350, 400), (450, 500)]
        );
        assert_eq!(f.bytes, 500);
        assert!(f.ahead.is_empty());
    }

    #[test]
    fn adjacent_out_of_order_reads_merge() {
        let mut f = FirstDelivery::default();
        f.on_ooo(100, 10);
        f.on_ooo(120, 10);
        f.on_ooo(110, 10);
        assert_eq!(f.ahead.len(), 1);
        assert_eq!(collect(&mut f, 0, 130), vec![(0, 100)]);
    }

    fn record(idx: u64, sent_ns: u64, size: usize) -> Vec<u8> {
        let mut r = vec![0xAB; size];
        r[4..12].copy_from_slice(&idx.to_be_bytes());
        r[12..20].copy_from_slice(&sent_ns.to_be_bytes());
        r
    }

    #[test]
    fn a_record_completes_when_its_last_piece_arrives_in_any_order() {
        let size = 100usize;
        let stream: Vec<u8> = (0..4u64).flat_map(|k| record(k, 1000 + k, size)).collect();
        let mut a = RecordAssembly::new(size as u64);
        let mut done = vec![];
        // Pieces: record 1's tail, record 2 whole, record 0 whole + record 1's head
        // (split inside the header), then record 3 in two pieces.
        for (s, e) in [
            (130, 200),
            (200, 300),
            (0, 110),
            (110, 130),
            (350, 400),
            (300, 350),
        ] {
            a.add(s as u64, &stream[s..e], |t| done.push(t));
        }
        assert_eq!(done, vec![1002, 1000, 1001, 1003]);
        assert_eq!(a.completed, 4);
        assert_eq!(a.partial_records(), 0);
    }
}
