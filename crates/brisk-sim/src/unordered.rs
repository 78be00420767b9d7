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

use brisk_tcp::rangeset::RangeSet;

// Per-record accounting in any order is brisk-app's (with the rest of the records
// framing); re-exported so the simulator's paths hold.
pub use brisk_app::records::{RecordAssembly, MAX_PARTIAL_RECORDS};

/// Most out-of-order intervals remembered above the in-order read point.
pub const MAX_AHEAD_INTERVALS: usize = 1 << 16;

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
}
