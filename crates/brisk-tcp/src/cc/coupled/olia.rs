//! OLIA, the Opportunistic Linked Increases Algorithm (Khalili, Gast, Popovic,
//! Le Boudec, "MPTCP is not Pareto-optimal", CoNEXT 2012 / IEEE/ACM ToN 2013, §IV;
//! draft-khalili-mptcp-congestion-control), as the out-of-tree Linux
//! `mptcp_olia.c` (`mptcp_get_epsilon`, `mptcp_get_rate`, `mptcp_olia_cong_avoid`,
//! `mptcp_olia_set_state`).
//!
//! For each ACK on path r (w in segments, rtt the smoothed RTT):
//!
//! ```text
//! w_r += (w_r / rtt_r²) / (Σ_p w_p / rtt_p)²  +  α_r / w_r
//! ```
//!
//! and on a loss w_r halves (Reno). α_r moves window from the paths with the largest
//! window (set M) to the presumed best paths that do not have it (B \ M): with
//! l_r = max(l1r, l2r) the bytes delivered between the last two losses and since the
//! last loss, B is the set of paths maximising l_r / rtt_r² (∝ the square of a TCP's
//! rate on r), and with n paths:
//! α_r = 1/(n·|B\M|) for r ∈ B\M, −1/(n·|M|) for r ∈ M when B\M ≠ ∅, else 0.
//!
//! Where the paper and Linux's code differ, and which is followed here:
//! - **Per ACK vs per segment.** The paper's fluid model increases per ACK of one
//!   packet; Linux adds the increment once per `cong_avoid` call whatever `acked` is.
//!   We multiply by the segments ACKed (byte counting, as RFC 6356 and brisk's Reno),
//!   which equals both with one ACK per segment and does not under-grow with delayed
//!   or stretch ACKs.
//! - **Rounding.** Linux accumulates in units of 2⁻¹⁰ segment, steps cwnd by one at
//!   ±(2¹⁰ − 1) and discards the remainder. We accumulate in 2⁻¹⁶ and keep the
//!   remainder (the paper's increase, less rounding).
//! - **n.** Linux divides by `cnt_established` (every established subflow) but sums
//!   only those with an RTT sample; we use the members taking part (the paper's R).
//! - **Recovery window.** Linux reads ssthresh for a sibling in fast recovery, to
//!   undo NewReno's window inflation (RFC 5681). brisk's recovery is PRR, which does
//!   not inflate cwnd, so the published cwnd is used as is.
//! - **One path.** With a single member OLIA is Reno exactly (the paper's α is 0 and
//!   the first term is 1/w; we call Reno's increase so the rounding matches too).
//! - The loss distances are kept in bytes from SND.UNA, as Linux's `mptcp_loss1..3`;
//!   the shift happens when a reduction starts (Recovery, CWR or an RTO) and the
//!   distance since the last loss is not zero (Linux also skips it while RTO
//!   retransmissions are outstanding; a repeated RTO here delivers nothing between
//!   the two, so the same guard applies).

use super::Member;

/// Fixed point of the increment: 2⁻¹⁶ segment.
pub const SCALE: u32 = 16;

/// OLIA's per-flow loss bookkeeping (Linux `mptcp_loss1..3`), in SND.UNA bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct LossMarks {
    loss1: u64,
    loss2: u64,
    loss3: u64,
}

impl LossMarks {
    /// At start: all three marks at SND.UNA (Linux `mptcp_olia_init`).
    pub fn new(snd_una: u64) -> Self {
        LossMarks {
            loss1: snd_una,
            loss2: snd_una,
            loss3: snd_una,
        }
    }
    /// Every ACK: the newest delivered byte.
    pub fn ack(&mut self, snd_una: u64) {
        self.loss3 = self.loss3.max(snd_una);
    }
    /// A loss (a reduction starts): the distances shift (Linux `mptcp_olia_set_state`).
    pub fn loss(&mut self) {
        if self.loss3 != self.loss2 {
            self.loss1 = self.loss2;
            self.loss2 = self.loss3;
        }
    }
    /// l1r: bytes between the last two losses.
    pub fn inter_loss(&self) -> u64 {
        self.loss2 - self.loss1
    }
    /// l2r: bytes since the last loss.
    pub fn since_loss(&self) -> u64 {
        self.loss3 - self.loss2
    }
}

/// α_r as a fraction (numerator −1, 0 or 1; denominator ≥ 1).
pub fn alpha(members: &[Member], me: usize) -> (i64, u64) {
    let n = members.len() as u64;
    let max_w = members.iter().map(|m| m.cwnd).max().unwrap_or(0);
    let l = |m: &Member| u128::from(m.inter_loss.max(m.since_loss));
    let rtt2 = |m: &Member| u128::from(m.srtt_us) * u128::from(m.srtt_us);
    // The best value of l/rtt², compared by cross-multiplication (exact).
    let mut best = 0;
    for (i, m) in members.iter().enumerate().skip(1) {
        if l(m) * rtt2(&members[best]) > l(&members[best]) * rtt2(m) {
            best = i;
        }
    }
    let is_best = |m: &Member| l(m) * rtt2(&members[best]) == l(&members[best]) * rtt2(m);
    let in_m = members.iter().filter(|m| m.cwnd == max_w).count() as u64;
    let b_not_m = members
        .iter()
        .filter(|m| m.cwnd < max_w && is_best(m))
        .count() as u64;
    let me = &members[me];
    if b_not_m == 0 {
        (0, 1)
    } else if me.cwnd < max_w && is_best(me) {
        (1, n * b_not_m)
    } else if me.cwnd == max_w {
        (-1, n * in_m)
    } else {
        (0, 1)
    }
}

/// The increase per ACKed segment for member `me`, in 2⁻¹⁶ segments (may be
/// negative when α_r < 0).
pub fn increment(members: &[Member], me: usize) -> i64 {
    let r = &members[me];
    let wr = u128::from(r.cwnd.max(1));
    let rr = u128::from(r.srtt_us);
    // S = 2^16 · Σ w_p·rtt_r/rtt_p, so (w_r/rtt_r²)/(Σ w_p/rtt_p)² = 2^32·w_r / S².
    let mut s: u128 = 0;
    for m in members {
        s = s.saturating_add(
            (u128::from(m.cwnd) << SCALE).saturating_mul(rr) / u128::from(m.srtt_us),
        );
    }
    let s2 = s.saturating_mul(s).max(1);
    let first = ((wr << (3 * SCALE)) / s2).min(i64::MAX as u128) as i64;
    let (num, den) = alpha(members, me);
    let second = (num << SCALE) / (den as i64 * wr as i64);
    first + second
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(cwnd: u32, rtt_ms: u64, l: u64) -> Member {
        Member {
            cwnd,
            srtt_us: rtt_ms * 1000,
            inter_loss: l,
            since_loss: 0,
        }
    }

    #[test]
    fn alpha_moves_window_from_the_largest_to_the_best_paths() {
        // Path 0 has the largest window; path 1 delivers more between losses at the
        // same RTT, so it is the best path outside M: +1/(2·1) and −1/(2·1).
        let ms = [m(30, 50, 10_000), m(10, 50, 90_000)];
        assert_eq!(alpha(&ms, 0), (-1, 2));
        assert_eq!(alpha(&ms, 1), (1, 2));
        // When the largest window is also the best path, B\M is empty: α = 0.
        let ms = [m(30, 50, 90_000), m(10, 50, 10_000)];
        assert_eq!((alpha(&ms, 0), alpha(&ms, 1)), ((0, 1), (0, 1)));
        // Three paths, two best outside M: each +1/(3·2); M = {0}: −1/(3·1).
        let ms = [m(30, 50, 1), m(10, 50, 8), m(20, 100, 32)];
        assert_eq!(alpha(&ms, 0), (-1, 3));
        assert_eq!(alpha(&ms, 1), (1, 6));
        assert_eq!(alpha(&ms, 2), (1, 6));
    }

    #[test]
    fn the_first_term_is_the_papers_and_one_equal_pair_grows_like_one_tcp() {
        // Two equal paths, equal windows, α = 0: each gets w/(2w)² = 1/(4w) per ACK;
        // 2w ACKs per RTT over both → 2w·1/(4w)·2 = +1 segment per RTT in total.
        let ms = [m(20, 40, 5), m(20, 40, 5)];
        assert_eq!(alpha(&ms, 0), (0, 1));
        assert_eq!(increment(&ms, 0), (1 << SCALE) / 80);
        // A single path: 1/w, Reno's.
        assert_eq!(increment(&[m(25, 40, 5)], 0), (1 << SCALE) / 25);
    }

    #[test]
    fn loss_marks_shift_only_when_bytes_were_delivered() {
        let mut l = LossMarks::new(1000);
        l.ack(5000);
        assert_eq!((l.inter_loss(), l.since_loss()), (0, 4000));
        l.loss();
        l.ack(6000);
        assert_eq!((l.inter_loss(), l.since_loss()), (4000, 1000));
        l.loss();
        l.loss(); // nothing delivered since: no shift
        assert_eq!((l.inter_loss(), l.since_loss()), (1000, 0));
    }
}
