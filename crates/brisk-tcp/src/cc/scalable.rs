//! Scalable TCP (Kelly, "Scalable TCP: improving performance in highspeed wide area
//! networks", CCR 2003), as Linux 6.18's `net/ipv4/tcp_scalable.c`: `cc = "scalable"`.
//! Docs: `docs/mechanisms/scalable.md`.
//!
//! - Slow start: Reno's (`tcp_slow_start`), left-over ACKed segments carry on into
//!   congestion avoidance as Linux's `tcp_scalable_cong_avoid` does.
//! - Congestion avoidance (`tcp_scalable_cong_avoid`): `tcp_cong_avoid_ai` with
//!   `w = min(cwnd, TCP_SCALABLE_AI_CNT)`: one segment per 100 ACKed segments once
//!   cwnd ≥ 100, i.e. cwnd grows by 1 % per RTT (the paper's a = 0.01), and like Reno
//!   below 100. Growth only while cwnd-limited (`tcp_is_cwnd_limited`).
//! - On a congestion signal (`tcp_scalable_ssthresh`): `cwnd − cwnd >> 3`, at least 2:
//!   the paper's b = 1/8.
//! - Undo: `tcp_reno_undo_cwnd` (the trait's default, max(cwnd, prior cwnd)).
//!
//! Linux has no module parameters here; the two `#define`s are the constants below.
//! An older Linux (before 4.x) used `TCP_SCALABLE_AI_CNT` 50 "to account for delayed
//! ACK"; 6.18 uses 100, the paper's value.

use super::reno::{cong_avoid_ai, slow_start};
use super::{AckSample, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::Instant;

/// Linux `TCP_SCALABLE_AI_CNT`: ACKed segments per +1 once cwnd exceeds it.
pub const AI_CNT: u32 = 100;
/// Linux `TCP_SCALABLE_MD_SCALE`: a congestion signal removes `cwnd >> 3`.
pub const MD_SCALE: u32 = 3;

/// Linux `tcp_scalable_ssthresh`: `max(cwnd − (cwnd >> 3), 2)`.
pub fn scalable_ssthresh(cwnd: u32) -> u32 {
    (cwnd - (cwnd >> MD_SCALE)).max(2)
}

/// Scalable TCP: MIMD above 100 segments, Reno below.
#[derive(Debug, Default)]
pub struct Scalable;

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }

    /// Linux `tcp_scalable_cong_avoid`.
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        if !cc.cwnd_limited {
            return;
        }
        let mut acked = ack.acked_segs;
        if cc.in_slow_start() {
            acked = slow_start(cc, acked);
            if acked == 0 {
                return;
            }
        }
        let w = cc.cwnd.min(AI_CNT);
        cong_avoid_ai(cc, w, acked);
    }

    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, _cause: CongestionCause) -> u32 {
        scalable_ssthresh(cc.cwnd)
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

    fn round(s: &mut Scalable, cc: &mut CcState) {
        for _ in 0..cc.cwnd {
            s.cong_avoid(&mut FlowCtx::alone(cc), &ack(1));
        }
    }

    #[test]
    fn ssthresh_removes_an_eighth() {
        // cwnd − cwnd>>3, by hand: 1000 − 125, 100 − 12, 17 − 2, 9 − 1, floor 2.
        let mut s = Scalable;
        for (cwnd, want) in [(1000, 875), (100, 88), (17, 15), (9, 8), (2, 2), (1, 2)] {
            let mut cc = limited(cwnd, u32::MAX);
            let got = s.ssthresh(
                &mut FlowCtx::alone(&mut cc),
                Instant::ZERO,
                CongestionCause::Loss,
            );
            assert_eq!(got, want, "cwnd {cwnd}");
        }
    }

    #[test]
    fn above_100_segments_one_segment_per_100_acked() {
        let mut s = Scalable;
        let mut cc = limited(1000, 10);
        // One round of 1000 single-segment ACKs: +1 per 100, so +10 (w stays 100).
        round(&mut s, &mut cc);
        assert_eq!((cc.cwnd, cc.cwnd_cnt), (1010, 0));
        // A stretch ACK of 250 segments: +2, 50 left as credit.
        s.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(250));
        assert_eq!((cc.cwnd, cc.cwnd_cnt), (1012, 50));
    }

    #[test]
    fn below_100_segments_it_is_reno() {
        let mut s = Scalable;
        let mut cc = limited(40, 10);
        round(&mut s, &mut cc);
        assert_eq!((cc.cwnd, cc.cwnd_cnt), (41, 0));
    }

    #[test]
    fn growth_per_round_is_about_one_percent_at_large_windows() {
        // 20 rounds from 2000: each adds cwnd/100 (integer, with carried credit).
        let mut s = Scalable;
        let mut cc = limited(2000, 10);
        for _ in 0..20 {
            round(&mut s, &mut cc);
        }
        // 2000 · 1.01^20 = 2440.4; stepping the integer arithmetic by hand gives 2440
        // with 31 of credit.
        assert_eq!((cc.cwnd, cc.cwnd_cnt), (2440, 31));
    }

    #[test]
    fn slow_start_leftover_feeds_avoidance_and_no_growth_unless_limited() {
        let mut s = Scalable;
        let mut cc = limited(98, 100);
        s.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(5));
        // +2 to ssthresh 100, 3 left: cwnd_cnt 3 towards w = 100.
        assert_eq!((cc.cwnd, cc.cwnd_cnt), (100, 3));
        cc.cwnd_limited = false;
        s.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(500));
        assert_eq!((cc.cwnd, cc.cwnd_cnt), (100, 3));
    }
}
