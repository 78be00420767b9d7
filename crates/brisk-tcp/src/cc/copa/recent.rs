//! The §2.2 detector's window: the least and the largest RTT sample of the last
//! 5 RTTs ("was the queue nearly empty at least once in the last five RTTs?"),
//! and the least ACK spacing per segment (one packet time at the bottleneck),
//! exact to one bucket of srtt/2. The authors' simulator keeps monotonic deques
//! (`rtt-window.cc`), which grow with the packets in the window; this keeps a fixed
//! ring of per-half-RTT minima and maxima instead: O(1) to add a sample, a scan of
//! [`BUCKETS`] to read, no allocation.
//!
//! Why not Kathleen Nichols' three-sample filter (`lib/win_minmax.c`, which Copa
//! uses for RTTmin and RTTstanding): it keeps a best sample and two later
//! candidates, and a candidate is replaced by the *current* sample when a quarter
//! window passes without a better one. A trough a little above an earlier, deeper
//! one inside the first quarter is dropped, so when the deeper one ages out the
//! filter reads a sample from the queue's peak side: the detector saw "not nearly
//! empty" although the queue had been near empty one RTT before. A per-ACK trace
//! alone at 10 Mbit/s, 40 ms (docs/mechanisms/copa.md) showed such reads.

/// Buckets of srtt/2 in the ring: 10 cover 5 RTTs, one is the current partial
/// bucket and one overlaps the window's old edge.
pub const BUCKETS: usize = 12;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bucket {
    /// When the bucket's first sample came, µs (wrapping).
    start: u32,
    lo: u32,
    hi: u32,
    /// The least ACK spacing per segment, µs (`u32::MAX`: none).
    gap: u32,
}

const EMPTY: Bucket = Bucket {
    start: 0,
    lo: u32::MAX,
    hi: 0,
    gap: u32::MAX,
};

/// Least and largest RTT over a time window, in buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecentRtt {
    ring: [Bucket; BUCKETS],
    head: usize,
    started: bool,
}

impl Default for RecentRtt {
    fn default() -> Self {
        RecentRtt {
            ring: [EMPTY; BUCKETS],
            head: 0,
            started: false,
        }
    }
}

impl RecentRtt {
    /// Takes `rtt` (µs) at `t` (µs) and the ACK's spacing per segment from the
    /// last ACK (`gap`, µs, if any); a new bucket begins `width` µs after the
    /// current one began.
    pub fn add(&mut self, t: u32, rtt: u32, gap: Option<u32>, width: u32) {
        let gap = gap.unwrap_or(u32::MAX);
        let cur = &mut self.ring[self.head];
        if self.started && t.wrapping_sub(cur.start) < width.max(1) {
            cur.lo = cur.lo.min(rtt);
            cur.hi = cur.hi.max(rtt);
            cur.gap = cur.gap.min(gap);
            return;
        }
        if self.started {
            self.head = (self.head + 1) % BUCKETS;
        }
        self.started = true;
        self.ring[self.head] = Bucket {
            start: t,
            lo: rtt,
            hi: rtt,
            gap,
        };
    }

    /// The least and largest RTT and the least ACK spacing per segment
    /// (`u32::MAX`: none) of the buckets that overlap `[t − win, t]` (`width` as
    /// in [`RecentRtt::add`]); `None` before any sample. A bucket that left the
    /// window is cleared: the window's length follows srtt, which moves on every
    /// ACK, and an old trough must not come back into it when srtt grows.
    pub fn range(&mut self, t: u32, win: u32, width: u32) -> Option<(u32, u32, u32)> {
        if !self.started {
            return None;
        }
        let reach = win.saturating_add(width);
        let (mut lo, mut hi, mut gap) = (u32::MAX, 0, u32::MAX);
        for b in &mut self.ring {
            if t.wrapping_sub(b.start) >= reach {
                *b = EMPTY;
            } else if b.lo <= b.hi {
                lo = lo.min(b.lo);
                hi = hi.max(b.hi);
                gap = gap.min(b.gap);
            }
        }
        // The current bucket always counts: it holds the newest sample.
        let cur = &self.ring[self.head];
        Some((lo.min(cur.lo), hi.max(cur.hi), gap.min(cur.gap)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples every 2.5 ms up to `end`: 41.2 ms at 0, 42.4 ms at 30 ms, 46 ms else.
    fn troughs(end: u32) -> RecentRtt {
        let mut r = RecentRtt::default();
        for t in (0..=end).step_by(2_500) {
            let rtt = match t {
                0 => 41_200,
                30_000 => 42_400,
                _ => 46_000,
            };
            r.add(t, rtt, Some(2_500), 20_000);
        }
        r
    }

    #[test]
    fn keeps_a_shallow_trough_after_a_deeper_one_ages_out() {
        // srtt 40 ms: buckets of 20 ms, a window of 200 ms. At 225 ms the 41.2 ms
        // sample is out of the window and the 42.4 ms one still in (Nichols'
        // filter has dropped it by then: it came within a quarter window of the
        // deeper one).
        let (w, win) = (20_000, 200_000);
        assert_eq!(
            troughs(225_000).range(225_000, win, w),
            Some((42_400, 46_000, 2_500))
        );
        assert_eq!(
            troughs(100_000).range(100_000, win, w),
            Some((41_200, 46_000, 2_500))
        );
        // 400 ms: both troughs are out.
        assert_eq!(
            troughs(400_000).range(400_000, win, w),
            Some((46_000, 46_000, 2_500))
        );
    }

    #[test]
    fn empty_until_a_sample_and_bounded() {
        let mut r = RecentRtt::default();
        assert_eq!(r.range(0, 100, 10), None);
        for i in 0..10_000u32 {
            r.add(i * 7, 1000 + i % 13, Some(7 + i % 3), 10);
        }
        let (lo, hi, gap) = r.range(69_993, 100, 10).unwrap();
        assert!(lo >= 1000 && hi <= 1012 && lo <= hi);
        assert_eq!(gap, 7);
    }
}
