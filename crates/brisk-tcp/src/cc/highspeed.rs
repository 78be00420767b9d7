//! HighSpeed TCP (RFC 3649, Floyd 2003), as Linux 6.18's `net/ipv4/tcp_highspeed.c`:
//! `cc = "highspeed"`. Docs: `docs/mechanisms/highspeed.md`.
//!
//! RFC 3649 §5 makes the AIMD pair depend on the window: above `Low_Window` = 38
//! segments the increase a(w) grows and the decrease b(w) shrinks, so that a flow
//! reaches 83 000 segments at a loss rate of 10⁻⁷. Linux, and this module, use the
//! RFC's Appendix B table (72 rows, `cwnd` bound and b(w) as a fraction ·256), and
//! take a(w) as the row index plus one:
//!
//! - `cong_avoid` (`hstcp_cong_avoid`): while cwnd-limited; slow start as Reno's
//!   (`tcp_slow_start`, its left-over ACKs are dropped, as Linux drops them); else the
//!   row index `ai` is moved up or down until `TABLE[ai−1].cwnd < cwnd ≤ TABLE[ai].cwnd`
//!   and, below the clamp, `cwnd_cnt += ai + 1`, one segment added when it reaches
//!   cwnd: a(w) = ai + 1 segments per RTT. **Per ACK, not per ACKed segment**: Linux
//!   counts calls, so a delayed-ACK receiver halves the growth (kept).
//! - `ssthresh` (`hstcp_ssthresh`): `cwnd − (cwnd · md) >> 8`, at least 2.
//! - `init` (`hstcp_init`): `ai = 0`, clamp ≤ 2³²/128 so `cwnd · md` cannot overflow.
//! - Undo: `tcp_reno_undo_cwnd` (the trait's default).

use super::reno::slow_start;
use super::{AckSample, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::Instant;

/// RFC 3649 Appendix B as Linux keeps it (`hstcp_aimd_vals`): the upper cwnd bound of
/// each row, segments, and b(w) · 256.
pub const TABLE: [(u32, u32); 72] = [
    (38, 128),
    (118, 112),
    (221, 104),
    (347, 98),
    (495, 93),
    (663, 89),
    (851, 86),
    (1058, 83),
    (1284, 81),
    (1529, 78),
    (1793, 76),
    (2076, 74),
    (2378, 72),
    (2699, 71),
    (3039, 69),
    (3399, 68),
    (3778, 66),
    (4177, 65),
    (4596, 64),
    (5036, 62),
    (5497, 61),
    (5979, 60),
    (6483, 59),
    (7009, 58),
    (7558, 57),
    (8130, 56),
    (8726, 55),
    (9346, 54),
    (9991, 53),
    (10661, 52),
    (11358, 52),
    (12082, 51),
    (12834, 50),
    (13614, 49),
    (14424, 48),
    (15265, 48),
    (16137, 47),
    (17042, 46),
    (17981, 45),
    (18955, 45),
    (19965, 44),
    (21013, 43),
    (22101, 43),
    (23230, 42),
    (24402, 41),
    (25618, 41),
    (26881, 40),
    (28193, 39),
    (29557, 39),
    (30975, 38),
    (32450, 38),
    (33986, 37),
    (35586, 36),
    (37253, 36),
    (38992, 35),
    (40808, 35),
    (42707, 34),
    (44694, 33),
    (46776, 33),
    (48961, 32),
    (51258, 32),
    (53677, 31),
    (56230, 30),
    (58932, 30),
    (61799, 29),
    (64851, 28),
    (68113, 28),
    (71617, 27),
    (75401, 26),
    (79517, 26),
    (84035, 25),
    (89053, 24),
];

/// Linux's cap on `snd_cwnd_clamp` in `hstcp_init` (`0xffffffff/128`).
pub const CLAMP_CAP: u32 = u32::MAX / 128;

/// Moves `ai` as `hstcp_cong_avoid` does, to the row with
/// `TABLE[ai−1].0 < cwnd ≤ TABLE[ai].0` (the last row for any larger cwnd). Walks
/// from the current row: a window moves a row or two per RTT, so this is O(1) per ACK.
pub fn update_row(mut ai: usize, cwnd: u32) -> usize {
    if cwnd > TABLE[ai].0 {
        while cwnd > TABLE[ai].0 && ai < TABLE.len() - 1 {
            ai += 1;
        }
    } else {
        while ai > 0 && cwnd <= TABLE[ai - 1].0 {
            ai -= 1;
        }
    }
    ai
}

/// Linux `hstcp_ssthresh` for row `ai`: `max(cwnd − (cwnd · md) >> 8, 2)`.
pub fn hstcp_ssthresh(cwnd: u32, ai: usize) -> u32 {
    let cut = (u64::from(cwnd) * u64::from(TABLE[ai].1)) >> 8;
    (cwnd - cut as u32).max(2)
}

/// HighSpeed TCP: the row of RFC 3649's table the window is in (Linux `struct hstcp`).
#[derive(Debug, Default)]
pub struct HighSpeed {
    ai: usize,
}

impl HighSpeed {
    /// The current row index (a(w) − 1).
    pub fn row(&self) -> usize {
        self.ai
    }
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
    }

    /// Linux `hstcp_init`.
    fn init(&mut self, cc: &mut FlowCtx<'_>, _now: Instant) {
        self.ai = 0;
        cc.cwnd_clamp = cc.cwnd_clamp.min(CLAMP_CAP);
    }

    /// Linux `hstcp_cong_avoid`.
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        if !cc.cwnd_limited {
            return;
        }
        if cc.in_slow_start() {
            slow_start(cc, ack.acked_segs);
            return;
        }
        self.ai = update_row(self.ai, cc.cwnd);
        if cc.cwnd < cc.cwnd_clamp {
            // cwnd += a(w)/cwnd, a(w) = ai + 1, once per ACK as Linux counts it.
            cc.cwnd_cnt = cc.cwnd_cnt.saturating_add(self.ai as u32 + 1);
            if cc.cwnd_cnt >= cc.cwnd {
                cc.cwnd_cnt -= cc.cwnd;
                cc.cwnd += 1;
            }
        }
    }

    /// Linux `hstcp_ssthresh`: the row is the one the last `cong_avoid` found.
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, _cause: CongestionCause) -> u32 {
        hstcp_ssthresh(cc.cwnd, self.ai)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcState;

    fn ack(acked: u32) -> AckSample {
        AckSample {
            acked_segs: acked,
            ..Default::default()
        }
    }

    fn limited(cwnd: u32, ssthresh: u32) -> CcState {
        let mut cc = CcState::new(cwnd, 1448);
        cc.ssthresh = ssthresh;
        cc.cwnd_limited = true;
        cc
    }

    #[test]
    fn table_is_rfc_3649_appendix_b() {
        // Increasing bounds; b(w) from 0.5 down to 0.1 (RFC 3649 §5: High_Decrease 0.1).
        assert!(TABLE
            .windows(2)
            .all(|p| p[0].0 < p[1].0 && p[0].1 >= p[1].1));
        assert_eq!(TABLE[0], (38, 128));
        assert_eq!(TABLE[71], (89053, 24));
        // RFC 3649 Appendix B: w = 1058 has a(w) = 8, b(w) = 0.33 (·256 = 84.5 → 83 in Linux).
        assert_eq!(update_row(0, 1058), 7);
        assert_eq!(TABLE[7].1, 83);
    }

    #[test]
    fn row_lookup_walks_both_ways() {
        assert_eq!(update_row(0, 38), 0);
        assert_eq!(update_row(0, 39), 1);
        assert_eq!(update_row(0, 118), 1);
        assert_eq!(update_row(0, 119), 2);
        assert_eq!(update_row(0, 1_000_000), 71);
        assert_eq!(update_row(71, 500), 5); // 495 < 500 ≤ 663
        assert_eq!(update_row(5, 10), 0);
    }

    #[test]
    fn ssthresh_by_hand() {
        // Row 0: 100 − (100·128)>>8 = 50. Row 7 (cwnd 1000): 1000 − 83000>>8 = 1000 − 324.
        assert_eq!(hstcp_ssthresh(100, 0), 50);
        assert_eq!(hstcp_ssthresh(1000, 7), 676);
        // Row 71 (cwnd 90 000): 90000 − (90000·24)>>8 = 90000 − 8437.
        assert_eq!(hstcp_ssthresh(90_000, 71), 81_563);
        assert_eq!(hstcp_ssthresh(3, 0), 2);
        let mut h = HighSpeed::default();
        let mut cc = limited(1000, 500);
        h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(1));
        assert_eq!(h.row(), 7);
        let got = h.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Loss,
        );
        assert_eq!(got, 676);
    }

    #[test]
    fn increase_is_a_of_w_per_window_of_acks() {
        // cwnd 1000 is in row 7: a(w) = 8, so one window of 1000 ACKs adds 8 segments
        // (cwnd_cnt += 8 per ACK, −cwnd per +1).
        let mut h = HighSpeed::default();
        let mut cc = limited(1000, 500);
        for _ in 0..1000 {
            h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(1));
        }
        // By hand (the +8 steps against a growing cwnd): 1007 with 979 of credit.
        assert_eq!((cc.cwnd, cc.cwnd_cnt), (1007, 979));
        // Below Low_Window (38) it is Reno: +1 per cwnd ACKs.
        let mut cc = limited(30, 10);
        for _ in 0..30 {
            h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(1));
        }
        assert_eq!((cc.cwnd, cc.cwnd_cnt), (31, 0));
    }

    #[test]
    fn growth_counts_acks_not_segments_and_slow_start_drops_leftover() {
        let mut h = HighSpeed::default();
        let mut cc = limited(30, 10);
        // One ACK for 20 segments still adds only a(w) = 1 to cwnd_cnt.
        h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(20));
        assert_eq!((cc.cwnd, cc.cwnd_cnt), (30, 1));
        let mut cc = limited(10, 12);
        h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(5));
        assert_eq!((cc.cwnd, cc.cwnd_cnt), (12, 0));
    }

    #[test]
    fn init_caps_the_clamp_and_growth_stops_at_it() {
        let mut h = HighSpeed::default();
        let mut cc = limited(50, 10);
        cc.cwnd_clamp = u32::MAX;
        h.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        assert_eq!(cc.cwnd_clamp, 33_554_431);
        cc.cwnd_clamp = 50;
        for _ in 0..500 {
            h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(1));
        }
        assert_eq!(cc.cwnd, 50);
    }
}
