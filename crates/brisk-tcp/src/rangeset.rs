//! A bounded set of disjoint half-open `u64` intervals, merged when they touch: the
//! bookkeeping of "which bytes of a stream have we seen" (out-of-order data, bytes
//! handed to the application early, SACK-like summaries).
//!
//! Kept in a `BTreeMap` from start to end, so lookups and inserts are O(log n) and
//! iteration is in order. The number of intervals is capped at construction: a peer
//! controls how fragmented the set gets, and an insert that would need one interval
//! more than the cap is refused (reported, set unchanged) rather than growing memory.

use std::collections::BTreeMap;
use std::ops::Range;

/// Disjoint, non-adjacent half-open intervals, at most `cap` of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeSet {
    /// start -> end; for consecutive entries, `end < next start` (gaps are never empty).
    map: BTreeMap<u64, u64>,
    cap: usize,
}

impl RangeSet {
    /// An empty set holding at most `cap` intervals (at least one).
    pub fn new(cap: usize) -> RangeSet {
        RangeSet {
            map: BTreeMap::new(),
            cap: cap.max(1),
        }
    }

    /// Adds `r`, merging it with every interval it overlaps or touches. Returns false,
    /// changing nothing, if that would leave more than `cap` intervals. An empty range
    /// is accepted and changes nothing.
    pub fn insert(&mut self, r: Range<u64>) -> bool {
        if r.start >= r.end {
            return true;
        }
        let (mut start, mut end) = (r.start, r.end);
        // An interval starting at or before `start` that reaches it.
        let left = self
            .map
            .range(..=start)
            .next_back()
            .filter(|&(_, &e)| e >= start)
            .map(|(&s, &e)| (s, e));
        // Intervals starting inside [start, end] (touching counts) are absorbed.
        let absorbs = self.map.range(start..=end).next().is_some();
        if left.is_none() && !absorbs && self.map.len() >= self.cap {
            return false;
        }
        if let Some((s, e)) = left {
            self.map.remove(&s);
            start = s;
            end = end.max(e);
        }
        // One removal per absorbed interval, no allocation (this runs per packet).
        while let Some((&s, &e)) = self.map.range(start..=end).next() {
            self.map.remove(&s);
            end = end.max(e);
        }
        self.map.insert(start, end);
        true
    }

    /// Forgets everything below `at` (an interval straddling it keeps `[at, end)`).
    /// Inline for an empty set (the receive path calls it on every in-order arrival,
    /// where the set is almost always empty); the loop out of line.
    #[inline]
    pub fn remove_below(&mut self, at: u64) {
        if self.map.is_empty() {
            return;
        }
        self.remove_below_nonempty(at);
    }

    #[inline(never)]
    fn remove_below_nonempty(&mut self, at: u64) {
        while let Some(entry) = self.map.first_entry() {
            let (s, e) = (*entry.key(), *entry.get());
            if s >= at {
                break;
            }
            entry.remove();
            if e > at {
                self.map.insert(at, e);
                break;
            }
        }
    }

    /// Whether `x` is in the set.
    pub fn contains(&self, x: u64) -> bool {
        self.map
            .range(..=x)
            .next_back()
            .is_some_and(|(_, &e)| x < e)
    }

    /// The end of the interval holding `x`, if any.
    pub fn end_of(&self, x: u64) -> Option<u64> {
        self.map
            .range(..=x)
            .next_back()
            .map(|(_, &e)| e)
            .filter(|&e| x < e)
    }

    /// The interval holding `x`, if any.
    pub fn range_of(&self, x: u64) -> Option<Range<u64>> {
        self.map
            .range(..=x)
            .next_back()
            .filter(|&(_, &e)| x < e)
            .map(|(&s, &e)| s..e)
    }

    /// The start of the first interval beginning after `x`.
    pub fn next_start_after(&self, x: u64) -> Option<u64> {
        self.map
            .range(x.saturating_add(1)..)
            .next()
            .map(|(&s, _)| s)
    }

    /// The intervals, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = Range<u64>> + '_ {
        self.map.iter().map(|(&s, &e)| s..e)
    }

    /// Number of intervals.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The most intervals the set holds.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Total length covered.
    pub fn covered(&self) -> u64 {
        self.map.iter().map(|(&s, &e)| e - s).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ranges(s: &RangeSet) -> Vec<Range<u64>> {
        s.iter().collect()
    }

    #[test]
    fn adjacent_and_overlapping_inserts_merge() {
        let mut s = RangeSet::new(8);
        assert!(s.insert(10..20));
        assert!(s.insert(30..40));
        assert!(s.insert(20..25), "touches the left one");
        assert_eq!(ranges(&s), vec![10..25, 30..40]);
        assert!(s.insert(25..30), "fills the gap exactly");
        assert_eq!(ranges(&s), vec![10..40]);
        assert!(s.insert(5..50));
        assert_eq!(ranges(&s), vec![5..50]);
        assert!(s.insert(7..7), "empty range");
        assert_eq!((s.len(), s.covered()), (1, 45));
    }

    #[test]
    fn contains_is_half_open() {
        let mut s = RangeSet::new(4);
        s.insert(10..20);
        assert!(!s.contains(9));
        assert!(s.contains(10) && s.contains(19));
        assert!(!s.contains(20));
        assert!(!RangeSet::new(1).contains(0));
    }

    #[test]
    fn remove_below_trims_a_straddling_interval() {
        let mut s = RangeSet::new(4);
        s.insert(0..10);
        s.insert(20..30);
        s.insert(40..50);
        s.remove_below(25);
        assert_eq!(ranges(&s), vec![25..30, 40..50]);
        s.remove_below(30);
        assert_eq!(ranges(&s), vec![40..50]);
        s.remove_below(u64::MAX);
        assert!(s.is_empty());
    }

    #[test]
    fn the_cap_refuses_new_intervals_but_not_merges() {
        let mut s = RangeSet::new(2);
        assert!(s.insert(0..1));
        assert!(s.insert(10..11));
        assert!(!s.insert(20..21), "a third interval");
        assert_eq!(ranges(&s), vec![0..1, 10..11]);
        assert!(s.insert(11..12), "merging needs no new interval");
        assert!(s.insert(1..10), "joining two frees one");
        assert_eq!(ranges(&s), vec![0..12]);
        assert!(s.insert(20..21));
        assert_eq!(RangeSet::new(0).cap(), 1);
    }

    #[test]
    fn extremes_do_not_overflow() {
        let mut s = RangeSet::new(2);
        assert!(s.insert(u64::MAX - 1..u64::MAX));
        assert!(s.insert(0..1));
        assert!(s.contains(u64::MAX - 1));
        assert!(!s.contains(u64::MAX));
        s.remove_below(u64::MAX);
        assert!(s.is_empty());
    }

    proptest! {
        /// Against a bitmap model: membership, disjointness and non-adjacency hold
        /// after any sequence of inserts and removals.
        #[test]
        fn matches_a_bitmap(ops in proptest::collection::vec(
            (0u64..200, 0u64..20, any::<bool>()), 0..60)
        ) {
            let mut s = RangeSet::new(usize::MAX);
            let mut model = [false; 220];
            for (start, len, remove) in ops {
                if remove {
                    s.remove_below(start);
                    model[..start as usize].iter_mut().for_each(|b| *b = false);
                } else {
                    prop_assert!(s.insert(start..start + len));
                    model[start as usize..(start + len) as usize]
                        .iter_mut()
                        .for_each(|b| *b = true);
                }
            }
            for (x, &b) in model.iter().enumerate() {
                prop_assert_eq!(s.contains(x as u64), b, "at {}", x);
            }
            let v = ranges(&s);
            prop_assert!(v.iter().all(|r| r.start < r.end));
            prop_assert!(v.windows(2).all(|w| w[0].end < w[1].start));
            prop_assert_eq!(s.covered(), model.iter().filter(|&&b| b).count() as u64);
        }

        /// A capped set never holds more than its cap, and a refused insert changes
        /// nothing.
        #[test]
        fn stays_within_its_cap(
            cap in 1usize..6,
            ops in proptest::collection::vec((0u64..100, 1u64..5), 0..40),
        ) {
            let mut s = RangeSet::new(cap);
            for (start, len) in ops {
                let before = s.clone();
                if !s.insert(start..start + len) {
                    prop_assert_eq!(&s, &before);
                }
                prop_assert!(s.len() <= cap);
            }
        }
    }
}
