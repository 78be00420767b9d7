//! H-TCP (Leith and Shorten, "H-TCP: TCP for high-speed and long-distance
//! networks", PFLDnet 2004) as Linux 6.18 runs it, `net/ipv4/tcp_htcp.c`: `cc =
//! "htcp"`. Docs: `docs/mechanisms/htcp.md`.
//!
//! The additive increase α grows with the time Δ since the last congestion event:
//! 1 segment per RTT for the first second, then `1 + 10(Δ−1) + ((Δ−1)/2)²` (Δ in
//! s), scaled by RTT/100 ms (clamped to [0.5, 10]) so flows of different RTTs grow
//! alike per second (`use_rtt_scaling`), and by `2(1 − β)` so the average rate
//! matches Reno's. The decrease β is `minRTT/maxRTT` (clamped to [0.5, 0.8]), i.e.
//! just enough to drain the queue, unless the achieved throughput changed by more
//! than 20 % across the last congestion epoch (`use_bandwidth_switch`): then 0.5.
//!
//! Function map: `init` = `htcp_init`; `on_ack` = `measure_achieved_throughput`
//! (+ `measure_rtt`); `cong_avoid` = `htcp_cong_avoid` (+ `htcp_alpha_update`);
//! `ssthresh` = `htcp_recalc_ssthresh` (+ `htcp_param_update`,
//! `htcp_beta_update`); `on_event` = `htcp_state` (+ `htcp_reset`) through
//! [`CaTracker`]; `undo_cwnd` = `htcp_cwnd_undo`. α and β in 1/128; times in 1 ms
//! jiffies (HZ = 1000); u32 arithmetic as in C.

use super::linux_ca::{jiffies32, usecs_to_jiffies, CaChange, CaState, CaTracker, HZ};
use super::reno::slow_start;
use super::{AckSample, CcEvent, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::Instant;

/// 1.0 in 1/128.
const ALPHA_BASE: u32 = 1 << 7;
/// 0.5 in 1/128.
const BETA_MIN: u32 = 1 << 6;
/// 0.8 in 1/128.
const BETA_MAX: u32 = 102;

/// `tcp_htcp`'s module parameters, Linux's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HtcpConfig {
    pub use_rtt_scaling: bool,
    pub use_bandwidth_switch: bool,
}

impl Default for HtcpConfig {
    fn default() -> Self {
        HtcpConfig {
            use_rtt_scaling: true,
            use_bandwidth_switch: true,
        }
    }
}

/// H-TCP's state (Linux `struct htcp`).
#[derive(Clone, Debug)]
pub struct Htcp {
    cfg: HtcpConfig,
    /// α, 1/128 segments per RTT.
    alpha: u32,
    /// β, 1/128 (u8 in Linux).
    beta: u32,
    /// β follows minRTT/maxRTT only from the second congestion event on.
    modeswitch: bool,
    /// Segments the last ACK acknowledged (u16 in Linux).
    pkts_acked: u32,
    packetcount: u32,
    /// RTTs in jiffies.
    min_rtt: u32,
    max_rtt: u32,
    /// When the last congestion event ended (or began), jiffies.
    last_cong: u32,
    /// What an undo restores (`None`: nothing to undo; Linux tests for 0).
    undo_last_cong: Option<u32>,
    undo_max_rtt: u32,
    undo_old_max_b: u32,
    /// Achieved throughput, segments per second.
    min_b: u32,
    max_b: u32,
    old_max_b: u32,
    bi: u32,
    lasttime: u32,
    ca: CaTracker,
}

impl Default for Htcp {
    fn default() -> Self {
        Htcp::new(HtcpConfig::default())
    }
}

impl Htcp {
    pub fn new(cfg: HtcpConfig) -> Self {
        Htcp {
            cfg,
            alpha: ALPHA_BASE,
            beta: BETA_MIN,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: 0,
            undo_last_cong: None,
            undo_max_rtt: 0,
            undo_old_max_b: 0,
            min_b: 0,
            max_b: 0,
            old_max_b: 0,
            bi: 0,
            lasttime: 0,
            ca: CaTracker::default(),
        }
    }

    /// (α in segments per RTT, β).
    pub fn alpha_beta(&self) -> (f64, f64) {
        (f64::from(self.alpha) / 128.0, f64::from(self.beta) / 128.0)
    }

    /// Linux `htcp_cong_time`: jiffies since the last congestion event.
    fn cong_time(&self, now_j: u32) -> u32 {
        now_j.wrapping_sub(self.last_cong)
    }

    /// Linux `htcp_ccount`: RTTs since the last congestion event.
    fn ccount(&self, now_j: u32) -> u32 {
        self.cong_time(now_j) / self.min_rtt.max(1)
    }

    /// Linux `htcp_reset`: a congestion event starts; keep what an undo restores.
    fn reset(&mut self, now_j: u32) {
        self.undo_last_cong = Some(self.last_cong);
        self.undo_max_rtt = self.max_rtt;
        self.undo_old_max_b = self.old_max_b;
        self.last_cong = now_j;
    }

    /// Linux `measure_rtt`, `srtt` in jiffies.
    fn measure_rtt(&mut self, srtt: u32) {
        if self.min_rtt > srtt || self.min_rtt == 0 {
            self.min_rtt = srtt;
        }
        if self.ca.state() == CaState::Open {
            if self.max_rtt < self.min_rtt {
                self.max_rtt = self.min_rtt;
            }
            // Grow maxRTT by at most 20 ms per sample: a spike is not the queue.
            if self.max_rtt < srtt && srtt <= self.max_rtt.wrapping_add(20) {
                self.max_rtt = srtt;
            }
        }
    }

    /// Linux `htcp_beta_update`.
    fn beta_update(&mut self, min_rtt: u32, max_rtt: u32) {
        if self.cfg.use_bandwidth_switch {
            let max_b = self.max_b;
            let old_max_b = self.old_max_b;
            self.old_max_b = self.max_b;
            // Linux `between(5·maxB, 4·oldMaxB, 6·oldMaxB)`: throughput within ±20 %.
            let (s1, s2, s3) = (
                max_b.wrapping_mul(5),
                old_max_b.wrapping_mul(4),
                old_max_b.wrapping_mul(6),
            );
            if s3.wrapping_sub(s2) < s1.wrapping_sub(s2) {
                self.beta = BETA_MIN;
                self.modeswitch = false;
                return;
            }
        }
        if self.modeswitch && min_rtt > 10 && max_rtt != 0 {
            self.beta = ((min_rtt << 7) / max_rtt).clamp(BETA_MIN, BETA_MAX);
        } else {
            self.beta = BETA_MIN;
            self.modeswitch = true;
        }
    }

    /// Linux `htcp_alpha_update`.
    fn alpha_update(&mut self, now_j: u32) {
        let min_rtt = self.min_rtt;
        let mut factor: u32 = 1;
        let mut diff = self.cong_time(now_j);
        if diff > HZ {
            diff -= HZ;
            let half = diff / 2;
            factor = 1u32.wrapping_add(
                10u32
                    .wrapping_mul(diff)
                    .wrapping_add(half.wrapping_mul(half) / HZ)
                    / HZ,
            );
        }
        if self.cfg.use_rtt_scaling && min_rtt != 0 {
            // RTT/100 ms in 1/8, clamped to [0.5, 10].
            // (Linux's u32 product wraps for a minRTT over 4.9 days; a wrapped 0
            // would divide by zero there, here it is taken as 1.)
            let scale = ((HZ << 3) / 10u32.wrapping_mul(min_rtt).max(1)).clamp(1 << 2, 10 << 3);
            factor = (factor << 3) / scale;
            if factor == 0 {
                factor = 1;
            }
        }
        self.alpha = 2u32.wrapping_mul(factor).wrapping_mul((1 << 7) - self.beta);
        if self.alpha == 0 {
            self.alpha = ALPHA_BASE;
        }
    }

    /// Linux `htcp_param_update`, at a congestion event.
    fn param_update(&mut self, now_j: u32) {
        let (min_rtt, max_rtt) = (self.min_rtt, self.max_rtt);
        self.beta_update(min_rtt, max_rtt);
        self.alpha_update(now_j);
        // Slowly fading memory of maxRTT, for route changes.
        if min_rtt > 0 && max_rtt > min_rtt {
            self.max_rtt = min_rtt + (max_rtt - min_rtt).wrapping_mul(95) / 100;
        }
    }

    /// Linux `htcp_state`.
    fn set_state(&mut self, state: CaState, now_j: u32) {
        match state {
            CaState::Open => {
                if self.undo_last_cong.take().is_some() {
                    self.last_cong = now_j;
                }
            }
            CaState::Cwr | CaState::Recovery | CaState::Loss => self.reset(now_j),
        }
    }

    fn apply(&mut self, change: CaChange, now_j: u32) {
        match change {
            CaChange::Enter(s) => self.set_state(s, now_j),
            CaChange::CompleteCwr => self.set_state(CaState::Open, now_j),
        }
    }
}

impl CongestionControl for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    /// Linux `htcp_init`.
    fn init(&mut self, _cc: &mut FlowCtx<'_>, now: Instant) {
        *self = Htcp {
            last_cong: jiffies32(now),
            ..Htcp::new(self.cfg)
        };
    }

    /// Linux `measure_achieved_throughput`.
    fn on_ack(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        let now = jiffies32(ack.now);
        let open = self.ca.state() == CaState::Open;
        if open {
            self.pkts_acked = ack.acked_segs.min(u32::from(u16::MAX));
        }
        if let Some(rtt) = ack.rtt {
            let us = u64::try_from(rtt.as_micros()).unwrap_or(u64::MAX);
            if us > 0 {
                self.measure_rtt(usecs_to_jiffies(us));
            }
        }
        if !self.cfg.use_bandwidth_switch {
            return;
        }
        // Linux also counts in TCP_CA_Disorder, which brisk's tracker reads as Open.
        if !open {
            self.packetcount = 0;
            self.lasttime = now;
            return;
        }
        self.packetcount = self.packetcount.wrapping_add(ack.acked_segs);
        let slack = match self.alpha >> 7 {
            0 => 1,
            a => a,
        };
        let elapsed = now.wrapping_sub(self.lasttime);
        if self.packetcount >= cc.cwnd.wrapping_sub(slack)
            && elapsed >= self.min_rtt
            && self.min_rtt > 0
        {
            // Segments per second over the last window.
            let cur_bi = self.packetcount.wrapping_mul(HZ) / elapsed.max(1);
            if self.ccount(now) <= 3 {
                // Just after a backoff.
                self.min_b = cur_bi;
                self.max_b = cur_bi;
                self.bi = cur_bi;
            } else {
                self.bi = (3u32.wrapping_mul(self.bi).wrapping_add(cur_bi)) / 4;
                if self.bi > self.max_b {
                    self.max_b = self.bi;
                }
                if self.min_b > self.max_b {
                    self.min_b = self.max_b;
                }
            }
            self.packetcount = 0;
            self.lasttime = now;
        }
    }

    /// Linux `htcp_cong_avoid`.
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        let now = jiffies32(ack.now);
        if !cc.cwnd_limited {
            return;
        }
        if cc.in_slow_start() {
            slow_start(cc, ack.acked_segs);
            return;
        }
        // cwnd += α/cwnd per ACKed segment.
        if cc.cwnd_cnt.wrapping_mul(self.alpha) >> 7 >= cc.cwnd {
            if cc.cwnd < cc.cwnd_clamp {
                cc.cwnd += 1;
            }
            cc.cwnd_cnt = 0;
            self.alpha_update(now);
        } else {
            cc.cwnd_cnt = cc.cwnd_cnt.wrapping_add(self.pkts_acked);
        }
        self.pkts_acked = 1;
    }

    /// Linux `htcp_recalc_ssthresh`: β·cwnd, at least 2.
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, now: Instant, _cause: CongestionCause) -> u32 {
        self.param_update(jiffies32(now));
        (cc.cwnd.wrapping_mul(self.beta) >> 7).max(2)
    }

    fn on_event(&mut self, _cc: &mut FlowCtx<'_>, now: Instant, ev: CcEvent) {
        if let Some(change) = self.ca.on_event(ev) {
            self.apply(change, jiffies32(now));
        }
    }

    /// Linux `htcp_cwnd_undo`: the congestion epoch, maxRTT and old maxB come back.
    fn undo_cwnd(&mut self, cc: &mut FlowCtx<'_>, prior_cwnd: u32) -> u32 {
        if let Some(last) = self.undo_last_cong.take() {
            self.last_cong = last;
            self.max_rtt = self.undo_max_rtt;
            self.old_max_b = self.undo_old_max_b;
        }
        cc.cwnd.max(prior_cwnd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcState;

    #[test]
    fn alpha_is_one_for_a_second_then_grows_quadratically() {
        let mut h = Htcp::new(HtcpConfig {
            use_rtt_scaling: false,
            use_bandwidth_switch: true,
        });
        // β 0.5: α = 2·factor·64.
        h.alpha_update(500);
        assert_eq!(h.alpha, 128);
        // Δ = 3 s: diff 2000: factor = 1 + (20 000 + 1000²/1000)/1000 = 1 + 21 = 22.
        h.alpha_update(3000);
        assert_eq!(h.alpha, 2 * 22 * 64);
        // β 0.8 (102): α = 2·22·26.
        h.beta = BETA_MAX;
        h.alpha_update(3000);
        assert_eq!(h.alpha, 2 * 22 * 26);
    }

    #[test]
    fn rtt_scaling_divides_by_rtt_over_100_ms() {
        // minRTT 200 ms: scale = 8000/2000 = 4 (0.5 in 1/8): factor·8/4 = 2·factor.
        let mut h = Htcp {
            min_rtt: 200,
            ..Htcp::default()
        };
        h.alpha_update(3000);
        assert_eq!(h.alpha, 2 * 44 * 64);
        // minRTT 10 ms: scale = 8000/100 = 80 (10): factor 22·8/80 = 2.
        h.min_rtt = 10;
        h.alpha_update(3000);
        assert_eq!(h.alpha, 2 * 2 * 64);
        // minRTT 1 ms: scale clamped at 80 too.
        h.min_rtt = 1;
        h.alpha_update(1500);
        // factor = 1 + (5000 + 250²/1000)/1000 = 1 + 5 = 6 → 6·8/80 = 0 → 1.
        assert_eq!(h.alpha, 2 * 64);
    }

    #[test]
    fn beta_is_min_over_max_rtt_from_the_second_event_within_bounds() {
        let mut h = Htcp::new(HtcpConfig {
            use_rtt_scaling: true,
            use_bandwidth_switch: false,
        });
        // First event: modeswitch off → 0.5, and on.
        h.beta_update(80, 100);
        assert_eq!((h.beta, h.modeswitch), (BETA_MIN, true));
        // 80/100 · 128 = 102.
        h.beta_update(80, 100);
        assert_eq!(h.beta, 102);
        // 70/100 → 89.
        h.beta_update(70, 100);
        assert_eq!(h.beta, 89);
        // 30/100 → 38 → clamped to 64.
        h.beta_update(30, 100);
        assert_eq!(h.beta, BETA_MIN);
        // minRTT ≤ 10 ms: 0.5.
        h.beta_update(10, 11);
        assert_eq!(h.beta, BETA_MIN);
    }

    #[test]
    fn a_throughput_change_over_20_percent_resets_beta() {
        // +10 %: 5·1100 = 5500 within [4000, 6000].
        let mut h = Htcp {
            modeswitch: true,
            old_max_b: 1000,
            max_b: 1100,
            ..Htcp::default()
        };
        h.beta_update(80, 100);
        assert_eq!(h.beta, 102);
        h.max_b = 1300; // 5·1300 = 6500 within [4·1100, 6·1100] = [4400, 6600]
        h.beta_update(80, 100);
        assert_eq!(h.beta, 102);
        h.max_b = 2000; // 10 000 > 6·1300 = 7800
        h.beta_update(80, 100);
        assert_eq!((h.beta, h.modeswitch), (BETA_MIN, false));
    }

    #[test]
    fn max_rtt_grows_by_at_most_20_ms_per_sample() {
        let mut h = Htcp::default();
        h.measure_rtt(100);
        assert_eq!((h.min_rtt, h.max_rtt), (100, 100));
        h.measure_rtt(150);
        assert_eq!(h.max_rtt, 100);
        h.measure_rtt(115);
        assert_eq!(h.max_rtt, 115);
    }

    #[test]
    fn ssthresh_is_beta_times_cwnd_and_congestion_time_restarts_at_recovery_end() {
        let mut h = Htcp::default();
        let mut cc = CcState::new(100, 1448);
        h.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        h.min_rtt = 80;
        h.max_rtt = 100;
        h.modeswitch = true;
        h.old_max_b = 0;
        let t = Instant::from_millis(5000);
        let ss = h.ssthresh(&mut FlowCtx::alone(&mut cc), t, CongestionCause::Loss);
        // Bandwidth switch: 5·0 between 0 and 0 → within; β = 102 → 100·102/128 = 79.
        assert_eq!(ss, 79);
        // maxRTT fades: 80 + 20·95/100 = 99.
        assert_eq!(h.max_rtt, 99);
        h.on_event(&mut FlowCtx::alone(&mut cc), t, CcEvent::EnterRecovery);
        assert_eq!(h.last_cong, 5000);
        let end = Instant::from_millis(5300);
        h.on_event(&mut FlowCtx::alone(&mut cc), end, CcEvent::ExitRecovery);
        assert_eq!(h.last_cong, 5300);
        assert_eq!(h.undo_last_cong, None);
    }

    #[test]
    fn undo_restores_the_congestion_epoch() {
        let mut h = Htcp::default();
        let mut cc = CcState::new(50, 1448);
        h.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        h.last_cong = 1000;
        h.max_rtt = 90;
        let t = Instant::from_millis(4000);
        h.on_event(&mut FlowCtx::alone(&mut cc), t, CcEvent::EnterRecovery);
        h.max_rtt = 70;
        assert_eq!(h.undo_cwnd(&mut FlowCtx::alone(&mut cc), 80), 80);
        assert_eq!((h.last_cong, h.max_rtt), (1000, 90));
    }

    #[test]
    fn congestion_avoidance_adds_alpha_per_window() {
        // α = 2 (256): +1 once cwnd_cnt·2 ≥ cwnd; cwnd_cnt counts ACKed segments.
        let mut h = Htcp {
            alpha: 256,
            ..Htcp::default()
        };
        let mut cc = CcState::new(20, 1448);
        cc.ssthresh = 10;
        cc.cwnd_limited = true;
        let ack = AckSample {
            acked_segs: 1,
            now: Instant::ZERO,
            ..Default::default()
        };
        // cwnd_cnt reaches 10 after 10 ACKs; the 11th adds one segment.
        for _ in 0..10 {
            h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack);
        }
        assert_eq!((cc.cwnd, cc.cwnd_cnt), (20, 10));
        h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack);
        assert_eq!((cc.cwnd, cc.cwnd_cnt), (21, 0));
    }
}
