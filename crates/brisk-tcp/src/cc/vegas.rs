//! TCP Vegas (Brakmo and Peterson, IEEE JSAC 13(8), 1995) as Linux 6.18 runs it,
//! `net/ipv4/tcp_vegas.c`: `cc = "vegas"`. Docs: `docs/mechanisms/vegas.md`.
//!
//! Once per RTT (when SND.UNA passes the SND.NXT recorded at the last decision,
//! Linux `beg_snd_nxt`), Vegas compares the window with what the path carries at the
//! minimum RTT: `diff = cwnd·(rtt − baseRTT)/baseRTT` segments are queued, where
//! `rtt` is the smallest RTT sample of the last round (it filters delayed ACKs) and
//! `baseRTT` the smallest ever. In congestion avoidance cwnd grows by one if
//! `diff < alpha` (2), shrinks by one if `diff > beta` (4); in slow start, `diff >
//! gamma` (1) ends slow start with cwnd set to the rate actually achieved
//! (`cwnd·baseRTT/rtt + 1`). Between decisions, slow start grows as Reno's. With
//! fewer than three RTT samples in the round (delayed ACKs) or outside TCP_CA_Open,
//! the round is Reno's. Losses are Reno's (`tcp_reno_ssthresh`, `tcp_reno_undo_cwnd`).
//!
//! Function map: `init` = `tcp_vegas_init` (+ `vegas_enable`); `on_ack` =
//! `tcp_vegas_pkts_acked`; `cong_avoid` = `tcp_vegas_cong_avoid`; `on_event` =
//! `tcp_vegas_state` (through [`CaTracker`]) and `tcp_vegas_cwnd_event`.
//! Integer arithmetic as Linux's: RTTs in µs + 1, u32 products wrapping as in C.

use super::linux_ca::{after, current_ssthresh, reno_cong_avoid, CaChange, CaState, CaTracker};
use super::reno::{reno_ssthresh, slow_start};
use super::{AckSample, CcEvent, CcState, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::Instant;

/// Linux's "no sample yet" value of `baseRTT` and `minRTT`.
const NO_RTT: u32 = 0x7fff_ffff;

/// `tcp_vegas`'s module parameters, Linux's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VegasConfig {
    /// Fewer queued segments than this: grow by one per RTT.
    pub alpha: u32,
    /// More queued segments than this: shrink by one per RTT.
    pub beta: u32,
    /// More queued segments than this in slow start: leave slow start.
    pub gamma: u32,
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig {
            alpha: 2,
            beta: 4,
            gamma: 1,
        }
    }
}

impl VegasConfig {
    /// Range checks (`[flow.tcp.vegas]`): the failing key and why. Linux takes any
    /// int; brisk bounds them by the largest window and keeps alpha ≤ beta, without
    /// which the grow and shrink bands overlap.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        for (k, v, d) in [
            ("alpha", self.alpha, 2),
            ("beta", self.beta, 4),
            ("gamma", self.gamma, 1),
        ] {
            if v > MAX_PARAM_SEGMENTS {
                return Err((
                    k,
                    format!(
                        "must be between 0 and {MAX_PARAM_SEGMENTS} segments (Linux default {d})"
                    ),
                ));
            }
        }
        if self.alpha > self.beta {
            return Err((
                "alpha",
                format!("must not exceed beta ({}; Linux 2 and 4)", self.beta),
            ));
        }
        Ok(())
    }
}

/// The largest window a module parameter in segments may name (brisk's cwnd clamp).
pub(crate) const MAX_PARAM_SEGMENTS: u32 = 1 << 20;

/// Vegas's state (Linux `struct vegas`).
#[derive(Clone, Debug)]
pub struct Vegas {
    cfg: VegasConfig,
    /// SND.NXT at the last decision: the round ends when SND.UNA passes it.
    beg_snd_nxt: u64,
    /// Vegas decides only in TCP_CA_Open (`doing_vegas_now`).
    doing_vegas_now: bool,
    /// RTT samples this round.
    cnt_rtt: u32,
    /// Smallest RTT this round, µs + 1.
    min_rtt: u32,
    /// Smallest RTT since init or the last restart from idle, µs + 1.
    base_rtt: u32,
    ca: CaTracker,
}

impl Default for Vegas {
    fn default() -> Self {
        Vegas::new(VegasConfig::default())
    }
}

impl Vegas {
    pub fn new(cfg: VegasConfig) -> Self {
        Vegas {
            cfg,
            beg_snd_nxt: 0,
            doing_vegas_now: true,
            cnt_rtt: 0,
            min_rtt: NO_RTT,
            base_rtt: NO_RTT,
            ca: CaTracker::default(),
        }
    }

    /// The propagation-delay estimate, µs + 1 (`NO_RTT` before a sample).
    pub fn base_rtt_us(&self) -> u32 {
        self.base_rtt
    }

    /// Whether Vegas's once-per-RTT rule is running (TCP_CA_Open).
    pub fn enabled(&self) -> bool {
        self.doing_vegas_now
    }

    /// Linux `vegas_enable`: decisions resume after a full round of fresh samples.
    fn enable(&mut self, cc: &CcState) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = cc.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = NO_RTT;
    }

    /// Linux `tcp_vegas_init`: forget baseRTT too.
    fn restart(&mut self, cc: &CcState) {
        self.base_rtt = NO_RTT;
        self.enable(cc);
    }

    /// Linux `tcp_vegas_state`.
    fn set_state(&mut self, cc: &CcState, state: CaState) {
        if state == CaState::Open {
            self.enable(cc);
        } else {
            self.doing_vegas_now = false;
        }
    }

    fn apply(&mut self, cc: &CcState, change: CaChange) {
        match change {
            CaChange::Enter(s) => self.set_state(cc, s),
            CaChange::CompleteCwr => self.set_state(cc, CaState::Open),
        }
    }

    /// The Vegas decision at the end of a round with enough samples (the body of
    /// `tcp_vegas_cong_avoid`'s once-per-RTT branch).
    fn decide(&mut self, cc: &mut CcState, acked: u32) {
        let rtt = self.min_rtt;
        let base = self.base_rtt;
        // The window the path would carry at baseRTT: (actual rate) · baseRTT.
        let target_cwnd = u64::from(cc.cwnd) * u64::from(base) / u64::from(rtt);
        // Segments queued ("Diff"), u32 as in C.
        let diff = cc.cwnd.wrapping_mul(rtt.wrapping_sub(base)) / base;
        if diff > self.cfg.gamma && cc.in_slow_start() {
            // Too fast: leave slow start at the achieved rate (+1 for the
            // truncation).
            cc.cwnd = cc.cwnd.min((target_cwnd as u32).wrapping_add(1));
            cc.ssthresh = cc.ssthresh.min(cc.cwnd);
        } else if cc.in_slow_start() {
            slow_start(cc, acked);
        } else if diff > self.cfg.beta {
            cc.cwnd = cc.cwnd.saturating_sub(1);
            cc.ssthresh = cc.ssthresh.min(cc.cwnd);
        } else if diff < self.cfg.alpha {
            cc.cwnd = cc.cwnd.saturating_add(1);
        }
        if cc.cwnd < 2 {
            cc.cwnd = 2;
        } else if cc.cwnd > cc.cwnd_clamp {
            cc.cwnd = cc.cwnd_clamp;
        }
        cc.ssthresh = current_ssthresh(cc);
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn init(&mut self, cc: &mut FlowCtx<'_>, _now: Instant) {
        self.ca = CaTracker::default();
        self.restart(cc);
    }

    /// Linux `tcp_vegas_pkts_acked`: min-filter the round's samples and baseRTT.
    fn on_ack(&mut self, _cc: &mut FlowCtx<'_>, ack: &AckSample) {
        let Some(rtt) = ack.rtt else { return };
        // Never a zero RTT or baseRTT.
        let vrtt = u32::try_from(rtt.as_micros())
            .unwrap_or(u32::MAX)
            .saturating_add(1);
        self.base_rtt = self.base_rtt.min(vrtt);
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt = self.cnt_rtt.wrapping_add(1);
    }

    /// Linux `tcp_vegas_cong_avoid`. Unlike Reno's, its Vegas branches do not ask
    /// whether the sender is cwnd-limited (Linux's don't).
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        let acked = ack.acked_segs;
        if !self.doing_vegas_now {
            reno_cong_avoid(cc, acked);
            return;
        }
        if after(cc.snd_una, self.beg_snd_nxt) {
            self.beg_snd_nxt = cc.snd_nxt;
            // With two samples or fewer in a round, ACKs are almost certainly
            // delayed: behave as Reno this round.
            if self.cnt_rtt <= 2 {
                reno_cong_avoid(cc, acked);
            } else {
                self.decide(cc, acked);
            }
            self.cnt_rtt = 0;
            self.min_rtt = NO_RTT;
        } else if cc.in_slow_start() {
            slow_start(cc, acked);
        }
    }

    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, _cause: CongestionCause) -> u32 {
        reno_ssthresh(cc.cwnd)
    }

    fn on_event(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, ev: CcEvent) {
        match ev {
            // Linux `tcp_vegas_cwnd_event`: restarting from idle, the old samples
            // and baseRTT are stale.
            CcEvent::TxStart { .. } | CcEvent::CwndRestart => self.restart(cc),
            _ => {
                if let Some(change) = self.ca.on_event(ev) {
                    self.apply(cc, change);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_time::Duration;

    fn state(cwnd: u32, ssthresh: u32) -> CcState {
        let mut cc = CcState::new(cwnd, 1448);
        cc.ssthresh = ssthresh;
        cc.cwnd_limited = true;
        cc
    }

    fn ack(rtt_us: u64, acked: u32) -> AckSample {
        AckSample {
            acked_segs: acked,
            rtt: Some(Duration::from_micros(rtt_us)),
            ..Default::default()
        }
    }

    /// A round: `n` ACKs with the given RTT samples, the last one passing beg_snd_nxt.
    fn round(v: &mut Vegas, cc: &mut CcState, rtts: &[u64]) {
        for (i, &r) in rtts.iter().enumerate() {
            let a = ack(r, 1);
            v.on_ack(&mut FlowCtx::alone(cc), &a);
            if i + 1 == rtts.len() {
                cc.snd_una = v.beg_snd_nxt + 1;
                cc.snd_nxt = cc.snd_una + u64::from(cc.cwnd);
            }
            v.cong_avoid(&mut FlowCtx::alone(cc), &a);
        }
    }

    fn vegas_at(cc: &mut CcState, base_us: u64) -> Vegas {
        let mut v = Vegas::default();
        v.init(&mut FlowCtx::alone(cc), Instant::ZERO);
        // One sample sets baseRTT (base + 1 µs, as Linux adds one).
        v.on_ack(&mut FlowCtx::alone(cc), &ack(base_us, 0));
        v.cnt_rtt = 0;
        v.min_rtt = NO_RTT;
        v
    }

    #[test]
    fn samples_are_min_filtered_plus_one() {
        let mut cc = state(10, u32::MAX);
        let mut v = Vegas::default();
        v.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        for r in [30_000, 20_000, 25_000] {
            v.on_ack(&mut FlowCtx::alone(&mut cc), &ack(r, 1));
        }
        assert_eq!((v.base_rtt, v.min_rtt, v.cnt_rtt), (20_001, 20_001, 3));
        // No sample: nothing counted.
        let none = AckSample {
            acked_segs: 1,
            ..Default::default()
        };
        v.on_ack(&mut FlowCtx::alone(&mut cc), &none);
        assert_eq!(v.cnt_rtt, 3);
    }

    #[test]
    fn congestion_avoidance_adds_one_below_alpha_and_removes_one_above_beta() {
        // cwnd 20, base 20 ms. rtt 21 ms: diff = 20·1000/20001 = 0 < 2 → +1.
        let mut cc = state(20, 10);
        let mut v = vegas_at(&mut cc, 20_000);
        round(&mut v, &mut cc, &[21_000, 21_500, 22_000]);
        assert_eq!(cc.cwnd, 21);
        // rtt 24 ms at cwnd 21: diff = 21·4000/20001 = 4, within [2, 4]: hold.
        round(&mut v, &mut cc, &[24_000, 24_000, 24_000]);
        assert_eq!(cc.cwnd, 21);
        // rtt 25 ms: diff = 21·5000/20001 = 5 > 4 → −1, ssthresh follows.
        round(&mut v, &mut cc, &[25_000, 26_000, 25_500]);
        assert_eq!(cc.cwnd, 20);
        // ssthresh = min(10, 20) = 10, then tcp_current_ssthresh: max(10, 10+5) = 15.
        assert_eq!(cc.ssthresh, 15);
    }

    #[test]
    fn slow_start_ends_at_the_achieved_rate_once_diff_exceeds_gamma() {
        // cwnd 40, base 10 ms: the round's first two ACKs grow slow start to 42;
        // at the third, min 12 ms: diff = 42·2000/10001 = 8 > 1, target =
        // 42·10001/12001 = 35 → cwnd 36, ssthresh min(∞, 36) = 36.
        let mut cc = state(40, u32::MAX);
        let mut v = vegas_at(&mut cc, 10_000);
        round(&mut v, &mut cc, &[12_000, 12_500, 13_000]);
        assert_eq!(cc.cwnd, 36);
        assert_eq!(cc.ssthresh, 36);
        assert!(!cc.in_slow_start());
    }

    #[test]
    fn slow_start_continues_while_the_queue_is_within_gamma() {
        // cwnd 10, base 10 ms, min 10.5 ms: diff = 10·500/10001 = 0. The deciding
        // ACK grows cwnd by one as Reno's slow start; the others did too.
        let mut cc = state(10, u32::MAX);
        let mut v = vegas_at(&mut cc, 10_000);
        round(&mut v, &mut cc, &[10_500, 10_600, 10_700]);
        assert_eq!(cc.cwnd, 13);
        assert_eq!(cc.ssthresh, u32::MAX);
    }

    #[test]
    fn a_round_with_two_samples_is_renos() {
        let mut cc = state(20, 10);
        let mut v = vegas_at(&mut cc, 20_000);
        // Two samples far above base would cut cwnd if Vegas decided; Reno's
        // congestion avoidance just counts the ACK.
        round(&mut v, &mut cc, &[40_000, 40_000]);
        assert_eq!((cc.cwnd, cc.cwnd_cnt), (20, 1));
    }

    #[test]
    fn outside_open_vegas_is_off_and_comes_back_after_recovery() {
        let mut cc = state(20, 10);
        let mut v = vegas_at(&mut cc, 20_000);
        v.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Loss,
        );
        v.on_event(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CcEvent::EnterRecovery,
        );
        assert!(!v.enabled());
        cc.snd_nxt = 500;
        v.on_event(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CcEvent::ExitRecovery,
        );
        assert!(v.enabled());
        assert_eq!(v.beg_snd_nxt, 500);
        // After an RTO: Reno until the connection ends the Loss state.
        cc.snd_nxt = 800;
        v.on_event(&mut FlowCtx::alone(&mut cc), Instant::ZERO, CcEvent::Rto);
        assert!(!v.enabled());
        cc.snd_una = 800;
        v.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(20_000, 1));
        assert!(!v.enabled());
        v.on_event(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CcEvent::ExitLoss,
        );
        assert!(v.enabled());
    }

    #[test]
    fn restart_from_idle_forgets_base_rtt() {
        let mut cc = state(20, 10);
        let mut v = vegas_at(&mut cc, 20_000);
        assert_eq!(v.base_rtt_us(), 20_001);
        v.on_event(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CcEvent::TxStart {
                idle: Duration::from_secs(1),
            },
        );
        assert_eq!(v.base_rtt_us(), NO_RTT);
    }

    #[test]
    fn the_window_never_drops_below_two() {
        let mut cc = state(2, 2);
        let mut v = vegas_at(&mut cc, 10_000);
        round(&mut v, &mut cc, &[100_000, 100_000, 100_000]);
        assert_eq!(cc.cwnd, 2);
    }

    /// On the shared path model, Vegas settles with alpha..beta segments queued.
    #[test]
    fn on_a_bottleneck_vegas_keeps_alpha_to_beta_segments_queued() {
        use crate::cc::testmodel::PathSender;
        // BDP = 20 ms / 1 ms = 20 segments.
        let mut s = PathSender::new(
            Vegas::default(),
            10,
            u32::MAX,
            Duration::from_millis(20),
            Duration::from_millis(1),
        );
        // snd_una / snd_nxt in segments, as the model has no sequence space. Slow
        // start overshoots to ~80 (the round's minimum RTT lags a doubling window);
        // then one segment per RTT comes off.
        for _ in 0..6000 {
            s.cc.snd_una = s.cc.delivered;
            s.cc.snd_nxt = s.cc.delivered + s.flight.len() as u64;
            s.step();
        }
        let queued = s.cc.cwnd as i64 - 20;
        assert!(
            (1..=5).contains(&queued),
            "cwnd {} queues {queued}",
            s.cc.cwnd
        );
        // Mean RTT: base + queue·τ, so a few ms above 20.
        let mean = s.mean_rtt_us(200);
        assert!((20_500..26_000).contains(&mean), "mean rtt {mean} µs");
    }
}
