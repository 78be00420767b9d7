//! TCP Veno (Fu and Liew, "TCP Veno: TCP enhancement for transmission over wireless
//! access networks", IEEE JSAC 21(2), 2003), as Linux 6.18's `net/ipv4/tcp_veno.c`:
//! `cc = "veno"`. Docs: `docs/mechanisms/veno.md`.
//!
//! Veno estimates the backlog a flow keeps at the bottleneck as Vegas does,
//! `N = cwnd − cwnd · baseRTT / RTT` (×2 here: `V_PARAM_SHIFT` 1), and uses it twice:
//! - **Increase** (`tcp_veno_cong_avoid`): below β = 3 segments of backlog
//!   ("non-congestive") Reno's +1 per RTT; at or above it, +1 every *other* RTT.
//! - **Decrease** (`tcp_veno_ssthresh`): a loss with backlog below β is taken as
//!   random (a wireless error): ssthresh = cwnd·4/5; otherwise congestive: cwnd/2.
//!
//! RTT bookkeeping as Linux keeps it (a private copy of Vegas' pattern, not shared
//! with any Vegas module): `pkts_acked` (`tcp_veno_pkts_acked`) takes each ACK's RTT
//! sample + 1 µs into `basertt` (the minimum ever, reset only by init) and `minrtt`
//! (the minimum since the last `cong_avoid`, which resets it on every call) and counts
//! samples in a `u16` `cntrtt` that nothing but wrap-around resets (Linux has
//! `/* veno->cntrtt = 0; */` commented out). Until 3 samples, Reno.
//!
//! State (`tcp_veno_state`, `tcp_veno_cwnd_event`): Veno runs only in the Open state;
//! entering recovery, CWR or loss (RTO) turns it off (then `cong_avoid` is Reno's),
//! leaving them turns it on again with a fresh `minrtt`. A restart after idle
//! (`CA_EVENT_TX_START`, `CA_EVENT_CWND_RESTART`) re-runs `init` (fresh `basertt`).
//!
//! Linux's integer arithmetic is kept: `diff` is a `u32` computed with wrap-around, so
//! a `cong_avoid` call with no RTT sample since the last one (`minrtt` still
//! 0x7fffffff) finds `target ≈ 0` and `diff = 2·cwnd`: "congestive" (as in Linux).

use super::reno::{cong_avoid_ai, reno_ssthresh, slow_start};
use super::{AckSample, CcEvent, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::Instant;

/// Linux `V_PARAM_SHIFT`: `diff` and β carry one fractional bit.
pub const V_PARAM_SHIFT: u32 = 1;
/// Linux `beta`: 3 segments of backlog, `<< V_PARAM_SHIFT`.
pub const BETA: u32 = 3 << V_PARAM_SHIFT;
/// Linux's "no sample yet" value for `minrtt` and `basertt`.
const NO_RTT: u32 = 0x7fff_ffff;

/// Linux `struct veno`.
#[derive(Debug, Clone)]
pub struct Veno {
    doing_veno_now: bool,
    cntrtt: u16,
    /// µs, +1 as Linux adds it.
    minrtt: u32,
    basertt: u32,
    inc: bool,
    diff: u32,
}

impl Default for Veno {
    fn default() -> Self {
        let mut v = Veno {
            doing_veno_now: false,
            cntrtt: 0,
            minrtt: NO_RTT,
            basertt: NO_RTT,
            inc: true,
            diff: 0,
        };
        v.reinit();
        v
    }
}

/// Linux's Veno backlog: `(cwnd << 1) − (cwnd · basertt << 1) / rtt`, in `u32` with
/// wrap-around as `veno->diff` is stored.
pub fn veno_diff(cwnd: u32, basertt: u32, rtt: u32) -> u32 {
    let target = ((u64::from(cwnd) * u64::from(basertt)) << V_PARAM_SHIFT) / u64::from(rtt.max(1));
    (cwnd << V_PARAM_SHIFT).wrapping_sub(target as u32)
}

/// Linux `tcp_veno_ssthresh` for a given `diff`.
pub fn veno_ssthresh(cwnd: u32, diff: u32) -> u32 {
    if diff < BETA {
        // Non-congestive: a random loss, cut by 1/5.
        (cwnd.saturating_mul(4) / 5).max(2)
    } else {
        reno_ssthresh(cwnd)
    }
}

impl Veno {
    /// Linux `tcp_veno_init` (with `veno_enable`); `cntrtt` and `diff` survive it.
    fn reinit(&mut self) {
        self.basertt = NO_RTT;
        self.inc = true;
        self.enable();
    }

    /// Linux `veno_enable`.
    fn enable(&mut self) {
        self.doing_veno_now = true;
        self.minrtt = NO_RTT;
    }

    /// The backlog estimate the last Veno `cong_avoid` computed (×2).
    pub fn diff(&self) -> u32 {
        self.diff
    }

    /// Linux `tcp_reno_cong_avoid`.
    fn reno(cc: &mut FlowCtx<'_>, acked: u32) {
        if !cc.cwnd_limited {
            return;
        }
        let mut acked = acked;
        if cc.in_slow_start() {
            acked = slow_start(cc, acked);
            if acked == 0 {
                return;
            }
        }
        let w = cc.cwnd;
        cong_avoid_ai(cc, w, acked);
    }
}

impl CongestionControl for Veno {
    fn name(&self) -> &'static str {
        "veno"
    }

    fn init(&mut self, _cc: &mut FlowCtx<'_>, _now: Instant) {
        self.reinit();
    }

    /// Linux `tcp_veno_pkts_acked`.
    fn on_ack(&mut self, _cc: &mut FlowCtx<'_>, ack: &AckSample) {
        let Some(rtt) = ack.rtt else {
            return;
        };
        let vrtt = u32::try_from(rtt.as_micros())
            .unwrap_or(u32::MAX - 1)
            .saturating_add(1);
        self.basertt = self.basertt.min(vrtt);
        self.minrtt = self.minrtt.min(vrtt);
        self.cntrtt = self.cntrtt.wrapping_add(1);
    }

    /// Linux `tcp_veno_cong_avoid`.
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        if !self.doing_veno_now {
            Self::reno(cc, ack.acked_segs);
            return;
        }
        if !cc.cwnd_limited {
            return;
        }
        if self.cntrtt <= 2 {
            Self::reno(cc, ack.acked_segs);
        } else {
            self.diff = veno_diff(cc.cwnd, self.basertt, self.minrtt);
            let mut acked = ack.acked_segs;
            let mut grow = true;
            if cc.in_slow_start() {
                acked = slow_start(cc, acked);
                grow = acked > 0;
            }
            if grow {
                if self.diff < BETA {
                    // Non-congestive: +1 per RTT.
                    let w = cc.cwnd;
                    cong_avoid_ai(cc, w, acked);
                } else if cc.cwnd_cnt >= cc.cwnd {
                    // Congestive: +1 every other RTT.
                    if self.inc && cc.cwnd < cc.cwnd_clamp {
                        cc.cwnd += 1;
                        self.inc = false;
                    } else {
                        self.inc = true;
                    }
                    cc.cwnd_cnt = 0;
                } else {
                    cc.cwnd_cnt = cc.cwnd_cnt.saturating_add(acked);
                }
            }
            if cc.cwnd < 2 {
                cc.cwnd = 2;
            } else if cc.cwnd > cc.cwnd_clamp {
                cc.cwnd = cc.cwnd_clamp;
            }
        }
        // Linux wipes `minrtt` on every call (and leaves `cntrtt` alone).
        self.minrtt = NO_RTT;
    }

    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, _cause: CongestionCause) -> u32 {
        veno_ssthresh(cc.cwnd, self.diff)
    }

    /// Linux `tcp_veno_state` (Open or not) and `tcp_veno_cwnd_event`.
    fn on_event(&mut self, _cc: &mut FlowCtx<'_>, _now: Instant, ev: CcEvent) {
        match ev {
            CcEvent::ExitRecovery | CcEvent::ExitLoss => self.enable(),
            CcEvent::EnterRecovery | CcEvent::EnterCwr | CcEvent::Rto => {
                self.doing_veno_now = false
            }
            CcEvent::TxStart { .. } | CcEvent::CwndRestart => self.reinit(),
            CcEvent::AppLimited | CcEvent::Undo => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcState;
    use brisk_time::Duration;

    fn ack(acked: u32, rtt_us: Option<u64>) -> AckSample {
        AckSample {
            acked_segs: acked,
            rtt: rtt_us.map(Duration::from_micros),
            ..Default::default()
        }
    }

    fn limited(cwnd: u32, ssthresh: u32) -> CcState {
        let mut cc = CcState::new(cwnd, 1448);
        cc.ssthresh = ssthresh;
        cc.cwnd_limited = true;
        cc
    }

    /// An ACK as the connection delivers it: `pkts_acked`, then `cong_avoid`.
    fn deliver(v: &mut Veno, cc: &mut CcState, a: &AckSample) {
        v.on_ack(&mut FlowCtx::alone(cc), a);
        v.cong_avoid(&mut FlowCtx::alone(cc), a);
    }

    #[test]
    fn diff_by_hand() {
        // cwnd 50, base 100 ms, rtt 110 ms: target = 50·100000·2/110000 = 90 (90.9),
        // diff = 100 − 90 = 10 (5 segments of backlog).
        assert_eq!(veno_diff(50, 100_001, 110_001), 10);
        // No queue: diff 0.
        assert_eq!(veno_diff(50, 100_001, 100_001), 0);
        // No sample since the last call (rtt 0x7fffffff): target 0, diff = 2·cwnd.
        assert_eq!(veno_diff(50, 100_001, NO_RTT), 100);
    }

    #[test]
    fn ssthresh_random_versus_congestive_loss() {
        // Backlog < 3 segments (diff < 6): cwnd·4/5. Otherwise cwnd/2.
        assert_eq!(veno_ssthresh(100, 5), 80);
        assert_eq!(veno_ssthresh(100, 6), 50);
        assert_eq!(veno_ssthresh(3, 0), 2);
        assert_eq!(veno_ssthresh(7, 0), 5);
    }

    #[test]
    fn reno_until_three_samples_then_the_backlog_decides() {
        let mut v = Veno::default();
        let mut cc = limited(50, 10);
        // Two samples: Reno (cwnd_cnt counts).
        deliver(&mut v, &mut cc, &ack(1, Some(100_000)));
        deliver(&mut v, &mut cc, &ack(1, Some(100_000)));
        assert_eq!((cc.cwnd, cc.cwnd_cnt, v.diff()), (50, 2, 0));
        // Third at the base RTT: diff 0, non-congestive, Reno-like AI.
        deliver(&mut v, &mut cc, &ack(1, Some(100_000)));
        assert_eq!((cc.cwnd, cc.cwnd_cnt, v.diff()), (50, 3, 0));
        // At 110 ms: diff = 100 − 50·100001·2/110001 = 100 − 90 = 10 ≥ β: congestive.
        deliver(&mut v, &mut cc, &ack(1, Some(110_000)));
        assert_eq!(v.diff(), 10);
        let got = v.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Loss,
        );
        assert_eq!(got, 25);
    }

    #[test]
    fn congestive_state_grows_every_other_round() {
        let mut v = Veno::default();
        let mut cc = limited(20, 10);
        for _ in 0..3 {
            deliver(&mut v, &mut cc, &ack(1, Some(100_000)));
        }
        cc.cwnd_cnt = 0;
        // Four rounds at RTT 200 ms (diff = 40 − 20 = 20): cnt climbs to cwnd, then
        // one round adds 1, the next only flips `inc`.
        let mut seen = Vec::new();
        for _ in 0..4 {
            for _ in 0..=cc.cwnd {
                deliver(&mut v, &mut cc, &ack(1, Some(200_000)));
            }
            seen.push(cc.cwnd);
        }
        assert_eq!(seen, [21, 21, 22, 22]);
    }

    #[test]
    fn leaving_open_turns_veno_off_and_idle_restart_forgets_basertt() {
        let mut v = Veno::default();
        let mut cc = limited(20, 10);
        for _ in 0..3 {
            deliver(&mut v, &mut cc, &ack(1, Some(100_000)));
        }
        v.on_event(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CcEvent::EnterRecovery,
        );
        assert!(!v.doing_veno_now);
        v.on_event(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CcEvent::ExitRecovery,
        );
        assert!(v.doing_veno_now);
        assert_eq!(v.basertt, 100_001);
        let idle = CcEvent::TxStart {
            idle: Duration::from_secs(1),
        };
        v.on_event(&mut FlowCtx::alone(&mut cc), Instant::ZERO, idle);
        assert_eq!((v.basertt, v.cntrtt), (NO_RTT, 3));
    }

    #[test]
    fn cntrtt_wraps_as_a_u16() {
        let mut v = Veno::default();
        let mut cc = limited(20, 10);
        v.cntrtt = u16::MAX;
        v.on_ack(&mut FlowCtx::alone(&mut cc), &ack(1, Some(1)));
        assert_eq!(v.cntrtt, 0);
    }
}
