//! The out-of-order window that uCOBS's scanner and uTLS's record receiver share:
//! bytes read ahead of a hole (uTCP's unordered receive, Minion NSDI 2012 §4.1),
//! addressed by stream offset, with the held ranges in brisk's [`RangeSet`].
//!
//! Bounded by the caller's byte limit (measured from the in-order point) and by the
//! range set's run limit; bytes beyond either are refused, and uTCP hands them out
//! again in order. Walked bytes are compacted away lazily, once they are half the
//! buffer, so each held byte moves O(1) times on average and the buffer stays under
//! twice the limit.

use std::ops::Range;

use brisk_tcp::rangeset::RangeSet;

/// What [`OooWindow::keep`] did with an arrival.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Entirely at or below the in-order point: nothing to keep.
    Below,
    /// Kept as `[a, end)` (the part beyond the in-order point).
    Kept(Range<u64>),
    /// Refused by a bound: this many bytes.
    Refused(u64),
}

#[derive(Debug)]
pub(crate) struct OooWindow {
    /// `bytes[i]` is stream offset `base + i`, meaningful where `held` says so.
    bytes: Vec<u8>,
    base: u64,
    held: RangeSet,
}

impl OooWindow {
    /// An empty window whose in-order point is `at`, holding at most `max_runs` runs.
    pub fn new(max_runs: usize, at: u64) -> Self {
        OooWindow {
            bytes: Vec::new(),
            base: at,
            held: RangeSet::new(max_runs),
        }
    }

    /// Keeps `data` (at stream `offset`) beyond the in-order point `pos`, unless that
    /// would reach more than `max_bytes` past `pos` or need one run too many.
    pub fn keep(&mut self, pos: u64, offset: u64, data: &[u8], max_bytes: usize) -> Keep {
        let end = offset.saturating_add(data.len() as u64);
        if end <= pos {
            return Keep::Below;
        }
        let (a, data) = if offset < pos {
            (pos, &data[(pos - offset) as usize..])
        } else {
            (offset, data)
        };
        if (end - pos) as usize > max_bytes || !self.held.insert(a..end) {
            return Keep::Refused(data.len() as u64);
        }
        let rel = (a - self.base) as usize;
        if self.bytes.len() < rel + data.len() {
            self.bytes.resize(rel + data.len(), 0);
        }
        self.bytes[rel..rel + data.len()].copy_from_slice(data);
        Keep::Kept(a..end)
    }

    /// The in-order point moved to `to`: drops what is below it.
    pub fn advance(&mut self, to: u64) {
        self.held.remove_below(to);
        let dead = (to - self.base) as usize;
        if self.held.is_empty() {
            self.bytes.clear();
            self.base = to;
        } else if dead >= 4096 && dead * 2 >= self.bytes.len() {
            self.bytes.drain(..dead.min(self.bytes.len()));
            self.base = to;
        }
    }

    /// The held run containing stream offset `x`.
    pub fn run_of(&self, x: u64) -> Option<Range<u64>> {
        self.held.range_of(x)
    }

    /// The held bytes `[from, to)` (stream offsets inside one held run).
    pub fn at(&self, from: u64, to: u64) -> &[u8] {
        &self.bytes[(from - self.base) as usize..(to - self.base) as usize]
    }

    /// Bytes held.
    pub fn held(&self) -> u64 {
        self.held.covered()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_trims_refuses_and_compacts() {
        let mut w = OooWindow::new(2, 0);
        assert_eq!(w.keep(0, 10, b"abc", 100), Keep::Kept(10..13));
        assert_eq!(w.at(10, 13), b"abc");
        // Partly below the in-order point: trimmed.
        assert_eq!(w.keep(20, 18, b"xyzw", 100), Keep::Kept(20..22));
        assert_eq!(w.at(20, 22), b"zw");
        // A third run is one too many; beyond the byte bound is refused.
        assert_eq!(w.keep(0, 30, b"q", 100), Keep::Refused(1));
        assert_eq!(w.keep(0, 200, b"q", 100), Keep::Refused(1));
        assert_eq!(w.keep(50, 40, b"old", 100), Keep::Below);
        assert_eq!(w.run_of(11), Some(10..13));
        w.advance(12);
        assert_eq!(w.held(), 1 + 2);
        w.advance(100);
        assert_eq!(w.held(), 0);
        assert_eq!(w.keep(100, 105, b"n", 100), Keep::Kept(105..106));
        assert_eq!(w.at(105, 106), b"n");
    }
}
