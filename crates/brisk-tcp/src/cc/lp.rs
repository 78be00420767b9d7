//! TCP-LP, TCP Low Priority (Kuzmanovic and Knightly, "TCP-LP: low-priority service
//! via end-point congestion control", IEEE/ACM ToN 14(4), 2006), as Linux 6.18's
//! `net/ipv4/tcp_lp.c`: `cc = "lp"`. Docs: `docs/mechanisms/lp.md`.
//!
//! TCP-LP yields to best-effort flows by reacting to *early* congestion: a one-way
//! delay (OWD) that rises above `owd_min + 15 % · (owd_max − owd_min)` (the paper's
//! δ = 0.15), smoothed as `sowd` (7/8 old + 1/8 new). On such an early indication it
//! halves cwnd and starts an **inference period** of 3 RTTs; a second indication
//! within it drops cwnd to 1 (the paper's "within-inference-period" rule), and while
//! inside it the window does not grow. Loss is Reno's (`tcp_reno_ssthresh`,
//! `tcp_reno_undo_cwnd`), and outside inference growth is Reno's (`tcp_lp_cong_avoid`).
//!
//! The OWD comes from TCP timestamps, as Linux takes it, through
//! [`AckSample::ts`] (the controller asks with [`CcNeeds::timestamps`]; the connection
//! fills it in `conn/ack.rs`, TSecr with the local offset removed, as Linux's
//! `rcv_tsecr -= tsoffset`):
//! - `tcp_lp_remote_hz_estimator`: the peer's clock rate
//!   `1000 · ΔTSval / ΔTSecr` between consecutive ACKs, averaged 63/64 old;
//! - `tcp_lp_owd_calculator`: `TSval · (1000 / remote_hz) − TSecr · (1000 / 1000)`, a
//!   *relative* OWD (the two clocks' offsets stay in it);
//! - `tcp_lp_rtt_sample`: `owd_min`, `owd_max` (with the "reserved" max one below the
//!   largest), `sowd << 3`;
//! - `tcp_lp_pkts_acked` (every ACK that acknowledges data): inference = 3·(now −
//!   TSecr), the inference and threshold tests, and the reaction, which sets cwnd
//!   here in `on_ack` as Linux does in `pkts_acked`.
//!
//! **Linux's integer arithmetic is kept, with its consequences** (see the doc): the
//! OWD is a `u32` difference of two clocks with random offsets, `sowd` keeps it
//! `<< 3` in a `u32`, so an OWD of 2²⁹ or more loses its top bits in `sowd` and the
//! threshold test always holds (TCP-LP then runs as Reno); and `1000 / remote_hz` is an
//! integer division that is 0 once the estimate exceeds 1000 Hz. Without timestamps
//! (`ts` is `None`) nothing is sampled and TCP-LP is Reno, as in Linux, where the
//! threshold test then always holds.

use super::reno::{cong_avoid_ai, slow_start};
use super::{AckSample, AckTimestamps, CcNeeds, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::Instant;

/// Linux `LP_RESOL` (= `TCP_TS_HZ`): OWD resolution, per second.
pub const LP_RESOL: u32 = 1000;
/// Linux `TCP_TS_HZ`: the local timestamp clock's rate (brisk's `ts_clock`: 1 ms).
pub const TS_HZ: u32 = 1000;

/// Linux `enum tcp_lp_state`.
pub const LP_VALID_RHZ: u32 = 1 << 0;
pub const LP_VALID_OWD: u32 = 1 << 1;
pub const LP_WITHIN_THR: u32 = 1 << 3;
pub const LP_WITHIN_INF: u32 = 1 << 4;

/// Linux `struct lp`: every field a `u32`, as there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lp {
    pub flag: u32,
    /// Smoothed OWD << 3.
    pub sowd: u32,
    pub owd_min: u32,
    pub owd_max: u32,
    pub owd_max_rsv: u32,
    pub remote_hz: u32,
    pub remote_ref_time: u32,
    pub local_ref_time: u32,
    pub last_drop: u32,
    pub inference: u32,
}

impl Default for Lp {
    /// Linux `tcp_lp_init`.
    fn default() -> Self {
        Lp {
            flag: 0,
            sowd: 0,
            owd_min: 0xffff_ffff,
            owd_max: 0,
            owd_max_rsv: 0,
            remote_hz: 0,
            remote_ref_time: 0,
            local_ref_time: 0,
            last_drop: 0,
            inference: 0,
        }
    }
}

impl Lp {
    fn set(&mut self, bit: u32, on: bool) {
        if on {
            self.flag |= bit;
        } else {
            self.flag &= !bit;
        }
    }

    /// Linux `tcp_lp_remote_hz_estimator`: the peer's timestamp rate, 63/64 old.
    pub fn remote_hz_estimator(&mut self, ts: &AckTimestamps) -> u32 {
        // `lp->remote_hz << 6` is a u32 shift in Linux, then widened.
        let mut rhz = i64::from(self.remote_hz << 6);
        if self.remote_ref_time != 0
            && self.local_ref_time != 0
            && ts.tsval != self.remote_ref_time
            && ts.tsecr != self.local_ref_time
        {
            // `TCP_TS_HZ * (u32 − u32) / (u32 − u32)`: all u32, wrapping.
            let num = TS_HZ.wrapping_mul(ts.tsval.wrapping_sub(self.remote_ref_time));
            let m = i64::from(num / ts.tsecr.wrapping_sub(self.local_ref_time));
            if rhz > 0 {
                rhz += m - (rhz >> 6);
            } else {
                rhz = m << 6;
            }
        }
        self.set(LP_VALID_RHZ, (rhz >> 6) > 0);
        self.remote_ref_time = ts.tsval;
        self.local_ref_time = ts.tsecr;
        (rhz >> 6) as u32
    }

    /// Linux `tcp_lp_owd_calculator`: a relative OWD, in u32 arithmetic (so never
    /// negative: Linux's `if (owd < 0)` cannot fire).
    pub fn owd_calculator(&mut self, ts: &AckTimestamps) -> u32 {
        self.remote_hz = self.remote_hz_estimator(ts);
        let mut owd = 0u32;
        if self.flag & LP_VALID_RHZ != 0 {
            // remote_hz > 0 whenever LP_VALID_RHZ is set; checked anyway (no panic).
            let factor = LP_RESOL.checked_div(self.remote_hz).unwrap_or(0);
            owd = ts
                .tsval
                .wrapping_mul(factor)
                .wrapping_sub(ts.tsecr.wrapping_mul(LP_RESOL / TS_HZ));
        }
        self.set(LP_VALID_OWD, owd > 0);
        owd
    }

    /// Linux `tcp_lp_rtt_sample`: min/max OWD and the smoothed OWD.
    pub fn rtt_sample(&mut self, ts: &AckTimestamps) {
        let mut mowd = i64::from(self.owd_calculator(ts));
        if self.flag & LP_VALID_RHZ == 0 || self.flag & LP_VALID_OWD == 0 {
            return;
        }
        if mowd < i64::from(self.owd_min) {
            self.owd_min = mowd as u32;
        }
        // "Always forget the max of the max": owd_max is one below the largest.
        if mowd > i64::from(self.owd_max) {
            if mowd > i64::from(self.owd_max_rsv) {
                self.owd_max = if self.owd_max_rsv == 0 {
                    mowd as u32
                } else {
                    self.owd_max_rsv
                };
                self.owd_max_rsv = mowd as u32;
            } else {
                self.owd_max = mowd as u32;
            }
        }
        if self.sowd != 0 {
            mowd -= i64::from(self.sowd >> 3);
            self.sowd = (i64::from(self.sowd) + mowd) as u32;
        } else {
            // `lp->sowd = mowd << 3`: an s64 stored in a u32 (top bits lost).
            self.sowd = (mowd << 3) as u32;
        }
    }

    /// Linux `tcp_lp_pkts_acked`; returns the new cwnd when TCP-LP reacts.
    pub fn pkts_acked(&mut self, ts: &AckTimestamps, rtt_sampled: bool, cwnd: u32) -> Option<u32> {
        let now = ts.now;
        if rtt_sampled {
            self.rtt_sample(ts);
        }
        let delta = now.wrapping_sub(ts.tsecr);
        if (delta as i32) > 0 {
            self.inference = delta.wrapping_mul(3);
        }
        let within_inf = self.last_drop != 0 && now.wrapping_sub(self.last_drop) < self.inference;
        self.set(LP_WITHIN_INF, within_inf);
        let spread = self.owd_max.wrapping_sub(self.owd_min).wrapping_mul(15) / 100;
        let within_thr = (self.sowd >> 3) < self.owd_min.wrapping_add(spread);
        self.set(LP_WITHIN_THR, within_thr);
        if within_thr {
            return None;
        }
        // Linux's FIXME: restart min/max around the smoothed OWD.
        self.owd_min = self.sowd >> 3;
        self.owd_max = self.sowd >> 2;
        self.owd_max_rsv = self.sowd >> 2;
        let cwnd = if within_inf { 1 } else { (cwnd >> 1).max(1) };
        self.last_drop = now;
        Some(cwnd)
    }
}

impl CongestionControl for Lp {
    fn name(&self) -> &'static str {
        "lp"
    }

    fn needs(&self) -> CcNeeds {
        CcNeeds {
            timestamps: true,
            ..CcNeeds::default()
        }
    }

    fn init(&mut self, _cc: &mut FlowCtx<'_>, _now: Instant) {
        *self = Lp::default();
    }

    /// Linux `tcp_lp_pkts_acked`: the one place besides `cong_avoid` where a
    /// controller here sets cwnd (Linux sets `snd_cwnd` in `pkts_acked` too).
    fn on_ack(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        let Some(ts) = ack.ts else {
            return;
        };
        let sampled = ack.rtt.is_some_and(|r| r.as_micros() > 0);
        if let Some(cwnd) = self.pkts_acked(&ts, sampled, cc.cwnd) {
            cc.cwnd = cwnd;
        }
    }

    /// Linux `tcp_lp_cong_avoid`: Reno's, except inside an inference period.
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        if self.flag & LP_WITHIN_INF != 0 || !cc.cwnd_limited {
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
        super::reno::reno_ssthresh(cc.cwnd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(tsval: u32, tsecr: u32, now: u32) -> AckTimestamps {
        AckTimestamps { tsval, tsecr, now }
    }

    #[test]
    fn remote_hz_by_hand() {
        let mut lp = Lp::default();
        // First call only records the references.
        assert_eq!(lp.remote_hz_estimator(&ts(5000, 1000, 1020)), 0);
        assert_eq!(lp.flag & LP_VALID_RHZ, 0);
        // ΔTSval 20, ΔTSecr 10: m = 1000·20/10 = 2000; first estimate = m.
        assert_eq!(lp.remote_hz_estimator(&ts(5020, 1010, 1030)), 2000);
        assert_ne!(lp.flag & LP_VALID_RHZ, 0);
        lp.remote_hz = 2000;
        // Next m = 1000·10/10 = 1000: rhz<<6 = 128000 + (1000 − 2000) = 127000 → 1984.
        assert_eq!(lp.remote_hz_estimator(&ts(5030, 1020, 1040)), 1984);
        // ΔTSecr 0: no update, references move.
        lp.remote_hz = 1984;
        assert_eq!(lp.remote_hz_estimator(&ts(5040, 1020, 1050)), 1984);
        assert_eq!((lp.remote_ref_time, lp.local_ref_time), (5040, 1020));
    }

    #[test]
    fn owd_is_relative_and_zero_factor_above_1000_hz() {
        let mut lp = Lp::default();
        lp.remote_hz_estimator(&ts(5000, 1000, 1000));
        // Equal clock rates: rhz 1000, 1000/1000 = 1: owd = 5010 − 1010 = 4000.
        assert_eq!(lp.owd_calculator(&ts(5010, 1010, 1030)), 4000);
        assert_ne!(lp.flag & LP_VALID_OWD, 0);
        // The estimate above 1000 Hz: 1000/rhz = 0, so owd = 0 − TSecr (u32).
        let mut lp = Lp::default();
        lp.remote_hz_estimator(&ts(5000, 1000, 1000));
        assert_eq!(
            lp.owd_calculator(&ts(5020, 1010, 1030)),
            0u32.wrapping_sub(1010)
        );
    }

    #[test]
    fn smoothed_owd_and_the_reserved_max() {
        // Equal 10 ms steps on both clocks hold the estimate at 1000 Hz, so the OWD is
        // TSval − TSecr.
        let mut lp = Lp {
            flag: LP_VALID_RHZ | LP_VALID_OWD,
            remote_hz: 1000,
            remote_ref_time: 1090,
            local_ref_time: 990,
            ..Lp::default()
        };
        lp.rtt_sample(&ts(1100, 1000, 1050)); // owd 100
        assert_eq!(
            (lp.owd_min, lp.owd_max, lp.owd_max_rsv, lp.sowd),
            (100, 100, 100, 800)
        );
        lp.rtt_sample(&ts(1110, 1010, 1060)); // owd 100 again
        assert_eq!(lp.sowd, 800);
        lp.remote_ref_time = 1150; // keep ΔTSval = ΔTSecr = 10 for a 140 sample
        lp.rtt_sample(&ts(1160, 1020, 1070));
        // m = 1000·10/10 = 1000: rhz stays 1000; owd 140 > rsv 100: max ← rsv, rsv ← 140.
        assert_eq!((lp.owd_min, lp.owd_max, lp.owd_max_rsv), (100, 100, 140));
        // sowd: 800 + (140 − 100) = 840 (7/8·100 + 1/8·140 = 105, ·8).
        assert_eq!(lp.sowd, 840);
    }

    #[test]
    fn early_indication_halves_then_within_inference_drops_to_one() {
        let mut lp = Lp {
            owd_min: 100,
            owd_max: 200,
            sowd: 120 << 3,
            ..Lp::default()
        };
        // Threshold 100 + 15·100/100 = 115 < sowd 120: early congestion. RTT 40 ms
        // (now − TSecr) gives inference 120 ms.
        let a = ts(0, 960, 1000);
        assert_eq!(lp.pkts_acked(&a, false, 80), Some(40));
        assert_eq!((lp.last_drop, lp.inference), (1000, 120));
        // min/max restart around sowd: 120, 240, 240.
        assert_eq!((lp.owd_min, lp.owd_max, lp.owd_max_rsv), (120, 240, 240));
        // 50 ms later, sowd 160 > 120 + 15·120/100 = 138: inside the inference
        // period (50 < 120): cwnd 1, and growth stops while inside.
        lp.sowd = 160 << 3;
        assert_eq!(lp.pkts_acked(&ts(0, 1010, 1050), false, 40), Some(1));
        assert_ne!(lp.flag & LP_WITHIN_INF, 0);
        // Below the threshold: no reaction, flag cleared after the period.
        lp.sowd = 160 << 3;
        assert_eq!(lp.pkts_acked(&ts(0, 1300, 1340), false, 10), None);
        assert_eq!(lp.flag & LP_WITHIN_INF, 0);
    }

    #[test]
    fn an_owd_of_2_pow_29_or_more_never_triggers() {
        // Linux's `sowd = mowd << 3` in a u32: the smoothed value wraps below owd_min.
        let mut lp = Lp {
            flag: LP_VALID_RHZ,
            remote_hz: 1000,
            remote_ref_time: 0x4000_0000 + 990,
            local_ref_time: 990,
            ..Lp::default()
        };
        lp.rtt_sample(&ts(0x4000_0000 + 1000, 1000, 1040));
        assert_eq!(lp.owd_min, 0x4000_0000);
        assert_eq!(lp.sowd >> 3, 0);
        assert_eq!(
            lp.pkts_acked(&ts(0x4000_0000 + 1010, 1010, 1050), false, 50),
            None
        );
    }

    #[test]
    fn without_timestamps_it_is_reno() {
        let mut lp = Lp::default();
        let mut cc = crate::cc::CcState::new(20, 1448);
        cc.ssthresh = 10;
        cc.cwnd_limited = true;
        let a = AckSample {
            acked_segs: 1,
            ..Default::default()
        };
        for _ in 0..20 {
            lp.on_ack(&mut FlowCtx::alone(&mut cc), &a);
            lp.cong_avoid(&mut FlowCtx::alone(&mut cc), &a);
        }
        assert_eq!(cc.cwnd, 21);
        assert!(lp.needs().timestamps);
    }
}
