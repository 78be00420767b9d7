//! LISA, the Linked Slow-start Algorithm for MPTCP (Barik, Welzl, Ferlin, Alay,
//! 2015; seed 004 Appendix B.2, Algorithm 1): a subflow that joins while a sibling is
//! in slow start takes its initial window as a "packet credit" from that sibling,
//! and the sibling ignores the slow-start increase of the ACKs for packets it sent
//! under its old, larger window. There is no Linux function to mirror: the paper's
//! prototype (Linux MPTCP v0.89.3) was not published.
//!
//! Algorithm 1 ("called before a new subflow sends its IW"), with cwnd in segments:
//!
//! | donor's cwnd (old) | new subflow's IW | donor keeps     | ACKs ignored            |
//! |--------------------|------------------|-----------------|-------------------------|
//! | ≥ 20               | 10               | old − 10        | inflight − kept, if ≥ 0 |
//! | 6 – 19             | old / 2          | old − old/2     | inflight − kept, if ≥ 0 |
//! | < 6                | 3                | old (unchanged) | none                    |
//! | no donor           | its own IW (10)  | —               | —                       |
//!
//! How the spec's ambiguities (`rite-multipath-coupled-cc-sbd-cdg.md` §2.5, §9
//! L1–L5) are resolved here:
//! - **L1 donor.** The member with the largest sending rate **among members in slow
//!   start**, the rate being cwnd/srtt (a slow-starting, cwnd-limited subflow sends
//!   its window once per RTT, so this is "the rate measured over the last RTT"); with
//!   equal RTTs it is the main body's "highest cwnd". A member without an RTT sample
//!   is not a candidate. Ties: the member that joined first.
//! - **L2 inflight.** The donor's own segments in flight at its last hook: line 21
//!   asks whether the donor's ACK clock will grow it, which only its own flight does.
//! - **L3 halving.** Integer division: 7 → new 3, donor 4 (Linux's cwnd is an integer).
//! - **L4 < 6.** As written: the new subflow gets 3 and nothing is taken, so the
//!   compound grows by 3 (the paper's minimum IW); tested.
//! - **L5** (a) The donor applies the credit at its next ACK (it cannot be reached
//!   earlier: a hook only holds its own flow's variables; the host room carries the
//!   debit, [`CoupledStats::lisa_debit`]). A cwnd-limited donor sends nothing between
//!   the join and that ACK, so nothing is sent under the old window meanwhile.
//!   (b) If the donor starts a reduction (loss, ECN, RTO) or leaves slow start with
//!   ACKs still to ignore, the rest are dropped: the reduction, or congestion
//!   avoidance's slower growth, already holds it back. A debit not yet applied at a
//!   reduction is dropped too: the reduction cuts deeper than the credit.
//!   (c) Ignored ACKs still clock out data and count for everything else (RTT,
//!   delivery, loss detection); only the slow-start increase is withheld.
//!   (d) Counting is in segments ACKed, as brisk's slow start grows (RFC 3465 byte
//!   counting, Linux `tcp_slow_start`): a delayed ACK of 2 segments uses 2 of the
//!   count. There is no HyStart in brisk's Reno-based coupled slow start.
//! - **The first subflow's IW is never changed** (a flow with no sibling keeps its
//!   IW), and the "no donor" IW is the flow's configured IW (10 by default, RFC 6928;
//!   the paper's literal 10).
//!
//! L6 and L7 concern the paper's experiments, not the algorithm (see
//! docs/mechanisms/coupled-cc.md).
//!
//! [`CoupledStats::lisa_debit`]: crate::cc::host::CoupledStats::lisa_debit

/// A donor as the joining subflow sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Donor {
    /// The donor's cwnd, segments.
    pub cwnd: u32,
    /// The donor's segments in flight.
    pub in_flight: u32,
}

/// Algorithm 1's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Credit {
    /// The new subflow's initial window, segments.
    pub new_cwnd: u32,
    /// Segments taken from the donor's cwnd.
    pub take: u32,
    /// Slow-start ACKs (segments) the donor ignores.
    pub ignore: u32,
}

/// The credit cap (IW10, RFC 6928) and the donor threshold it applies above.
pub const CREDIT_MAX: u32 = 10;
pub const FULL_CREDIT_FROM: u32 = 20;
/// Below this the donor gives nothing and the new subflow starts at [`MIN_IW`].
pub const HALVE_FROM: u32 = 6;
/// "Our defined min IW" (RFC 3390's 3 segments).
pub const MIN_IW: u32 = 3;

/// Algorithm 1, lines 1–24. `iw` is the new subflow's own IW (line 19).
pub fn credit(donor: Option<Donor>, iw: u32) -> Credit {
    let Some(d) = donor else {
        return Credit {
            new_cwnd: iw,
            take: 0,
            ignore: 0,
        };
    };
    let (new_cwnd, take, ignore_acks) = if d.cwnd >= FULL_CREDIT_FROM {
        (CREDIT_MAX, CREDIT_MAX, true)
    } else if d.cwnd >= HALVE_FROM {
        let half = d.cwnd / 2;
        (half, half, true)
    } else {
        (MIN_IW, 0, false)
    };
    let kept = d.cwnd - take;
    let ignore = if ignore_acks && d.in_flight >= kept {
        d.in_flight - kept
    } else {
        0
    };
    Credit {
        new_cwnd,
        take,
        ignore,
    }
}

/// A candidate donor: one member as published.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    pub cwnd: u32,
    pub srtt_us: u64,
    pub slow_start: bool,
    pub in_flight: u32,
}

/// L1: the slow-starting member with the largest cwnd/srtt; the first on a tie.
/// Returns its index.
pub fn select_donor(cands: &[Candidate]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, c) in cands.iter().enumerate() {
        if !c.slow_start || c.srtt_us == 0 {
            continue;
        }
        let better = match best {
            None => true,
            Some(b) => {
                let o = &cands[b];
                u128::from(c.cwnd) * u128::from(o.srtt_us)
                    > u128::from(o.cwnd) * u128::from(c.srtt_us)
            }
        };
        if better {
            best = Some(i);
        }
    }
    best
}

/// The donor's side: ACKs whose slow-start increase it still withholds.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ignore {
    left: u32,
}

impl Ignore {
    pub fn add(&mut self, n: u32) {
        self.left = self.left.saturating_add(n);
    }
    /// Of `acked` segments in slow start, those that may still grow cwnd.
    pub fn filter(&mut self, acked: u32) -> u32 {
        let skip = acked.min(self.left);
        self.left -= skip;
        acked - skip
    }
    /// L5 (b): a reduction or the end of slow start drops the rest.
    pub fn clear(&mut self) {
        self.left = 0;
    }
    pub fn left(&self) -> u32 {
        self.left
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MP-1's credit table (`mp1::CREDIT_TABLE`), every branch and boundary of
    /// Algorithm 1.
    #[test]
    fn mp1_credit_table() {
        for (donor, want) in super::super::mp1::CREDIT_TABLE {
            assert_eq!(credit(donor, 10), want, "donor {donor:?}");
            if let Some(dn) = donor {
                // The compound window is conserved except in the < 6 branch (L4).
                let compound = dn.cwnd - want.take + want.new_cwnd;
                let grow = if dn.cwnd < HALVE_FROM { MIN_IW } else { 0 };
                assert_eq!(compound, dn.cwnd + grow);
            }
        }
        assert_eq!(credit(None, 4).new_cwnd, 4, "a configured IW is kept");
    }

    #[test]
    fn the_donor_is_the_fastest_member_in_slow_start() {
        let cand = |cwnd, rtt_ms: u64, slow_start| Candidate {
            cwnd,
            srtt_us: rtt_ms * 1000,
            slow_start,
            in_flight: cwnd,
        };
        // 40 segments per 100 ms < 30 per 50 ms; the largest cwnd is in CA.
        let cs = [cand(40, 100, true), cand(30, 50, true), cand(90, 10, false)];
        assert_eq!(select_donor(&cs), Some(1));
        // Equal RTTs: the highest cwnd (the main body's wording); a tie: first.
        let cs = [cand(20, 40, true), cand(25, 40, true), cand(25, 40, true)];
        assert_eq!(select_donor(&cs), Some(1));
        // Nobody in slow start, or no RTT yet: no donor.
        let mut none = cand(50, 40, true);
        none.srtt_us = 0;
        assert_eq!(select_donor(&[cand(50, 40, false), none]), None);
    }

    #[test]
    fn ignored_acks_are_counted_in_segments_and_can_be_dropped() {
        let mut ig = Ignore::default();
        ig.add(10);
        assert_eq!(ig.filter(1), 0);
        assert_eq!(ig.filter(2), 0); // a delayed ACK of two uses two
        assert_eq!(ig.left(), 7);
        assert_eq!(ig.filter(9), 2);
        assert_eq!(ig.filter(3), 3);
        ig.add(5);
        ig.clear();
        assert_eq!(ig.filter(4), 4);
    }
}
