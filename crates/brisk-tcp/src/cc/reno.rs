//! Reno/NewReno congestion response (RFC 5681 §3.1, RFC 6582), as Linux's
//! `tcp_reno_cong_avoid` and `tcp_reno_ssthresh`. Loss recovery itself (NewReno partial
//! ACKs, SACK, RACK, PRR) lives in `recovery/`; this is only the window arithmetic.
//!
//! - Slow start (`slow_start`, Linux `tcp_slow_start`): cwnd grows by the number of
//!   segments ACKed, i.e. RFC 3465 appropriate byte counting with no per-ACK limit L,
//!   stopping exactly at ssthresh; whatever is left over feeds congestion avoidance.
//! - Congestion avoidance (`cong_avoid_ai`, Linux `tcp_cong_avoid_ai`): `cwnd_cnt`
//!   counts ACKed segments and cwnd grows by one per `w` of them (`w = cwnd` for Reno:
//!   one segment per RTT). Credit earned at a larger `w` is applied gently.
//! - Growth only while cwnd-limited (Linux `tcp_is_cwnd_limited`): a sender that does not
//!   fill its window has not shown the network can take a larger one, so raising cwnd
//!   would only license a later line-rate burst (the motivation of RFC 7661).
//! - On a congestion signal, ssthresh = max(cwnd/2, 2) (RFC 5681 eq. 4 with
//!   FlightSize replaced by cwnd, as Linux does).

use super::{AckSample, CcState, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::Instant;

/// Linux `tcp_slow_start`: grow cwnd by `acked` segments up to ssthresh (and the
/// clamp); returns the ACKed segments left over once ssthresh is reached.
pub fn slow_start(cc: &mut CcState, acked: u32) -> u32 {
    let grown = cc.cwnd.saturating_add(acked).min(cc.ssthresh);
    // If cwnd was already at/above ssthresh nothing is consumed.
    let used = grown.saturating_sub(cc.cwnd);
    cc.cwnd = grown.max(cc.cwnd).min(cc.cwnd_clamp.max(1));
    acked - used.min(acked)
}

/// Linux `tcp_cong_avoid_ai`: additive increase of one segment per `w` ACKed segments,
/// accumulated in `cwnd_cnt`.
pub fn cong_avoid_ai(cc: &mut CcState, w: u32, acked: u32) {
    let w = w.max(1);
    // Credit earned while w was larger (e.g. before a reduction): apply it, but only
    // one segment's worth, so a cut window does not jump back up.
    if cc.cwnd_cnt >= w {
        cc.cwnd_cnt = 0;
        cc.cwnd = cc.cwnd.saturating_add(1);
    }
    cc.cwnd_cnt = cc.cwnd_cnt.saturating_add(acked);
    if cc.cwnd_cnt >= w {
        let inc = cc.cwnd_cnt / w;
        cc.cwnd_cnt -= inc * w;
        cc.cwnd = cc.cwnd.saturating_add(inc);
    }
    cc.cwnd = cc.cwnd.min(cc.cwnd_clamp.max(1));
}

/// Linux `tcp_reno_ssthresh`: half the window, at least two segments.
pub fn reno_ssthresh(cwnd: u32) -> u32 {
    (cwnd >> 1).max(2)
}

/// Reno/NewReno: slow start, then one segment per RTT; halve on congestion.
#[derive(Debug, Default)]
pub struct Reno;

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

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
        let w = cc.cwnd;
        cong_avoid_ai(cc, w, acked);
    }

    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, _cause: CongestionCause) -> u32 {
        reno_ssthresh(cc.cwnd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_time::Duration;

    fn ack(acked: u32) -> AckSample {
        AckSample {
            acked_segs: acked,
            rtt: Some(Duration::from_millis(10)),
            ..Default::default()
        }
    }

    /// One round: every segment of the window is ACKed individually.
    fn round(r: &mut Reno, cc: &mut CcState) {
        let w = cc.cwnd;
        for _ in 0..w {
            r.cong_avoid(&mut FlowCtx::alone(cc), &ack(1));
        }
    }

    fn limited(cwnd: u32, ssthresh: u32) -> CcState {
        let mut cc = CcState::new(cwnd, 1448);
        cc.ssthresh = ssthresh;
        cc.cwnd_limited = true;
        cc
    }

    #[test]
    fn slow_start_doubles_per_round() {
        let mut r = Reno;
        let mut cc = limited(10, u32::MAX);
        for expect in [20, 40, 80, 160] {
            round(&mut r, &mut cc);
            assert_eq!(cc.cwnd, expect);
        }
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_carries_the_rest_into_avoidance() {
        let mut r = Reno;
        let mut cc = limited(10, 12);
        // A stretch ACK of 5 segments: 2 take cwnd to ssthresh, 3 count towards +1.
        r.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(5));
        assert_eq!(cc.cwnd, 12);
        assert_eq!(cc.cwnd_cnt, 3);
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_round() {
        let mut r = Reno;
        let mut cc = limited(20, 20);
        for expect in 21..=30 {
            round(&mut r, &mut cc);
            assert_eq!(cc.cwnd, expect, "after a round at cwnd {}", expect - 1);
            assert_eq!(cc.cwnd_cnt, 0);
        }
    }

    #[test]
    fn congestion_avoidance_counts_partial_credit_in_cwnd_cnt() {
        let mut r = Reno;
        let mut cc = limited(10, 5);
        for i in 1..10 {
            r.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(1));
            assert_eq!((cc.cwnd, cc.cwnd_cnt), (10, i));
        }
        r.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(1));
        assert_eq!((cc.cwnd, cc.cwnd_cnt), (11, 0));
        // A stretch ACK covering more than a window adds several segments at once.
        r.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(25));
        assert_eq!((cc.cwnd, cc.cwnd_cnt), (13, 3));
    }

    #[test]
    fn stale_credit_after_a_cut_adds_only_one_segment() {
        let mut r = Reno;
        let mut cc = limited(10, 5);
        cc.cwnd_cnt = 40; // earned at a much larger window
        r.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(1));
        assert_eq!((cc.cwnd, cc.cwnd_cnt), (11, 1));
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut r = Reno;
        for ssthresh in [u32::MAX, 5] {
            let mut cc = limited(10, ssthresh);
            cc.cwnd_limited = false;
            round(&mut r, &mut cc);
            assert_eq!((cc.cwnd, cc.cwnd_cnt), (10, 0));
        }
    }

    #[test]
    fn ssthresh_halves_with_a_floor_of_two() {
        let mut r = Reno;
        for (cwnd, expect) in [(100, 50), (21, 10), (5, 2), (3, 2), (1, 2), (0, 2)] {
            let mut cc = limited(cwnd, u32::MAX);
            assert_eq!(
                r.ssthresh(
                    &mut FlowCtx::alone(&mut cc),
                    Instant::ZERO,
                    CongestionCause::Loss
                ),
                expect,
                "cwnd {cwnd}"
            );
        }
    }

    #[test]
    fn aimd_sawtooth_halves_then_climbs_linearly() {
        let mut r = Reno;
        let mut cc = limited(64, 64);
        cc.ssthresh = r.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Loss,
        );
        cc.cwnd = cc.ssthresh;
        assert_eq!(cc.cwnd, 32);
        for _ in 0..32 {
            round(&mut r, &mut cc);
        }
        assert_eq!(cc.cwnd, 64);
    }

    #[test]
    fn growth_respects_the_clamp() {
        let mut r = Reno;
        let mut cc = limited(10, u32::MAX);
        cc.cwnd_clamp = 15;
        round(&mut r, &mut cc);
        assert_eq!(cc.cwnd, 15);
        cc.ssthresh = 10;
        round(&mut r, &mut cc);
        assert_eq!(cc.cwnd, 15);
    }
}
