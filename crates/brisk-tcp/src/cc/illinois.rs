//! TCP-Illinois (Liu, Başar and Srikant, "TCP-Illinois: a loss- and delay-based
//! congestion control algorithm for high-speed networks", Performance Evaluation
//! 65(6-7), 2008) as Linux 6.18 runs it, `net/ipv4/tcp_illinois.c`: `cc =
//! "illinois"`. Docs: `docs/mechanisms/illinois.md`.
//!
//! AIMD whose increase α and decrease β follow the average queueing delay `da`
//! (mean RTT of the last round − base RTT) against the largest seen, `dm` (max RTT
//! − base RTT), once per RTT: α = 10 segments per RTT while `da ≤ dm/100`, falling
//! as `dm·αmax / (dm + da·(αmax − αmin)/αmin)` towards 0.3 as delay grows (and back
//! to 10 only after `theta` = 5 low-delay rounds); β = 1/8 while `da ≤ dm/10`,
//! 1/2 from `da ≥ 8dm/10`, linear between. Below `win_thresh` = 15 segments it is
//! Reno (α = 1, β = 1/2). Needs an RTT sample on ACKs (`pkts_acked`'s).
//!
//! Function map: `init` = `tcp_illinois_init` (+ `rtt_reset`); `on_ack` =
//! `tcp_illinois_acked`; `cong_avoid` = `tcp_illinois_cong_avoid` (+
//! `update_params`, `alpha`, `beta`, `max_delay`, `avg_delay`); `ssthresh` =
//! `tcp_illinois_ssthresh`; `on_event` = `tcp_illinois_state` (through
//! [`CaTracker`]); undo = `tcp_reno_undo_cwnd`. α in 1/128 (`ALPHA_SHIFT` 7), β in
//! 1/64 (`BETA_SHIFT` 6), RTTs in µs, u32 arithmetic as in C.

use super::linux_ca::{after, CaChange, CaState, CaTracker};
use super::reno::slow_start;
use super::{AckSample, CcEvent, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::Instant;

const ALPHA_SHIFT: u32 = 7;
const ALPHA_SCALE: u32 = 1 << ALPHA_SHIFT;
/// 0.3
const ALPHA_MIN: u32 = (3 * ALPHA_SCALE) / 10;
/// 10.0
const ALPHA_MAX: u32 = 10 * ALPHA_SCALE;
/// 1.0
const ALPHA_BASE: u32 = ALPHA_SCALE;
/// Largest RTT (µs) kept, so that `dm·ALPHA_MAX` fits a u32.
const RTT_MAX: u32 = u32::MAX / ALPHA_MAX;

const BETA_SHIFT: u32 = 6;
const BETA_SCALE: u32 = 1 << BETA_SHIFT;
/// 0.125
const BETA_MIN: u32 = BETA_SCALE / 8;
/// 0.5
const BETA_MAX: u32 = BETA_SCALE / 2;
const BETA_BASE: u32 = BETA_MAX;

/// `tcp_illinois`'s module parameters, Linux's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IllinoisConfig {
    /// Below this cwnd, Reno's α and β.
    pub win_thresh: u32,
    /// Low-delay rounds before α returns to its maximum.
    pub theta: u32,
}

impl Default for IllinoisConfig {
    fn default() -> Self {
        IllinoisConfig {
            win_thresh: 15,
            theta: 5,
        }
    }
}

impl IllinoisConfig {
    /// Range checks (`[flow.tcp.illinois]`). α's and β's bounds are constants in
    /// Linux (`ALPHA_MIN` … `BETA_MAX`), not module parameters, so they are not knobs.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let max = super::vegas::MAX_PARAM_SEGMENTS;
        if self.win_thresh > max {
            return Err((
                "win_thresh",
                format!("must be between 0 and {max} segments (Linux default 15)"),
            ));
        }
        if self.theta > 65_535 {
            return Err((
                "theta",
                "must be between 0 and 65535 rounds (Linux default 5)".into(),
            ));
        }
        Ok(())
    }
}

/// Illinois's state (Linux `struct illinois`).
#[derive(Clone, Debug)]
pub struct Illinois {
    cfg: IllinoisConfig,
    /// Sum of this round's RTTs, µs.
    sum_rtt: u64,
    /// Samples this round (u16 in Linux).
    cnt_rtt: u16,
    /// Smallest RTT seen, µs.
    base_rtt: u32,
    /// Largest RTT seen, µs.
    max_rtt: u32,
    /// SND.NXT at the start of the round.
    end_seq: u64,
    /// α, 1/128 segments per RTT.
    alpha: u32,
    /// β, 1/64.
    beta: u32,
    /// Segments the last ACK acknowledged (u16 in Linux).
    acked: u16,
    rtt_above: bool,
    rtt_low: u32,
    ca: CaTracker,
}

impl Default for Illinois {
    fn default() -> Self {
        Illinois::new(IllinoisConfig::default())
    }
}

impl Illinois {
    pub fn new(cfg: IllinoisConfig) -> Self {
        Illinois {
            cfg,
            sum_rtt: 0,
            cnt_rtt: 0,
            base_rtt: 0x7fff_ffff,
            max_rtt: 0,
            end_seq: 0,
            alpha: ALPHA_MAX,
            beta: BETA_BASE,
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
            ca: CaTracker::default(),
        }
    }

    /// (α, β) as fractions: α in segments per RTT, β the share of cwnd a loss removes.
    pub fn alpha_beta(&self) -> (f64, f64) {
        (
            f64::from(self.alpha) / f64::from(ALPHA_SCALE),
            f64::from(self.beta) / f64::from(BETA_SCALE),
        )
    }

    /// Linux `rtt_reset`: a new round from SND.NXT.
    fn rtt_reset(&mut self, snd_nxt: u64) {
        self.end_seq = snd_nxt;
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
    }

    /// Linux `max_delay`.
    fn max_delay(&self) -> u32 {
        self.max_rtt.wrapping_sub(self.base_rtt)
    }

    /// Linux `avg_delay` (only called with samples).
    fn avg_delay(&self) -> u32 {
        let t = self.sum_rtt / u64::from(self.cnt_rtt.max(1));
        (t as u32).wrapping_sub(self.base_rtt)
    }

    /// Linux `alpha`: the increase for average delay `da` of maximum `dm`.
    fn alpha_for(&mut self, da: u32, dm: u32) -> u32 {
        let d1 = dm / 100;
        if da <= d1 {
            // No delay ever seen: full speed.
            if !self.rtt_above {
                return ALPHA_MAX;
            }
            // Delay dropped: wait `theta` rounds before going back to full speed.
            self.rtt_low += 1;
            if self.rtt_low < self.cfg.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return ALPHA_MAX;
        }
        self.rtt_above = true;
        // κ1 / (κ2 + da) with the curve through (d1, ALPHA_MAX) and (dm, ALPHA_MIN).
        let dm = dm - d1;
        let da = da - d1;
        let den = dm.wrapping_add(da.wrapping_mul(ALPHA_MAX - ALPHA_MIN) / ALPHA_MIN);
        // `da > d1` makes `den` positive (da ≤ dm, so dm − d1 > 0); the guard only
        // keeps a broken invariant from dividing by zero.
        dm.wrapping_mul(ALPHA_MAX) / den.max(1)
    }

    /// Linux `update_params`, at the end of each round.
    fn update_params(&mut self, cwnd: u32, snd_nxt: u64) {
        if cwnd < self.cfg.win_thresh {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
        } else if self.cnt_rtt > 0 {
            let dm = self.max_delay();
            let da = self.avg_delay();
            self.alpha = self.alpha_for(da, dm);
            self.beta = beta_for(da, dm);
        }
        self.rtt_reset(snd_nxt);
    }

    fn apply(&mut self, change: CaChange, snd_nxt: u64) {
        // Linux `tcp_illinois_state`: only entering Loss matters.
        if change == CaChange::Enter(CaState::Loss) {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rtt_reset(snd_nxt);
        }
    }
}

/// Linux `beta`: the decrease for average delay `da` of maximum `dm`.
fn beta_for(da: u32, dm: u32) -> u32 {
    let d2 = dm / 10;
    if da <= d2 {
        return BETA_MIN;
    }
    let d3 = (8 * dm) / 10;
    if da >= d3 || d3 <= d2 {
        return BETA_MAX;
    }
    // Linear between (d2, BETA_MIN) and (d3, BETA_MAX).
    (BETA_MIN * d3 - BETA_MAX * d2 + (BETA_MAX - BETA_MIN) * da) / (d3 - d2)
}

impl CongestionControl for Illinois {
    fn name(&self) -> &'static str {
        "illinois"
    }

    fn init(&mut self, cc: &mut FlowCtx<'_>, _now: Instant) {
        *self = Illinois::new(self.cfg);
        self.rtt_reset(cc.snd_nxt);
    }

    /// Linux `tcp_illinois_acked`: count the ACK and the RTT sample.
    fn on_ack(&mut self, _cc: &mut FlowCtx<'_>, ack: &AckSample) {
        self.acked = ack.acked_segs.min(u32::from(u16::MAX)) as u16;
        let Some(rtt) = ack.rtt else { return };
        let rtt_us = u32::try_from(rtt.as_micros())
            .unwrap_or(u32::MAX)
            .min(RTT_MAX);
        self.base_rtt = self.base_rtt.min(rtt_us);
        self.max_rtt = self.max_rtt.max(rtt_us);
        self.cnt_rtt = self.cnt_rtt.wrapping_add(1);
        self.sum_rtt += u64::from(rtt_us);
    }

    /// Linux `tcp_illinois_cong_avoid`.
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        if after(cc.snd_una, self.end_seq) {
            self.update_params(cc.cwnd, cc.snd_nxt);
        }
        if !cc.cwnd_limited {
            return;
        }
        if cc.in_slow_start() {
            slow_start(cc, ack.acked_segs);
        } else {
            // cwnd += α/cwnd per ACKed segment, counted in cwnd_cnt.
            cc.cwnd_cnt = cc.cwnd_cnt.wrapping_add(u32::from(self.acked));
            self.acked = 1;
            let delta = cc.cwnd_cnt.wrapping_mul(self.alpha) >> ALPHA_SHIFT;
            if delta >= cc.cwnd {
                cc.cwnd = cc
                    .cwnd
                    .saturating_add(delta / cc.cwnd.max(1))
                    .min(cc.cwnd_clamp);
                cc.cwnd_cnt = 0;
            }
        }
    }

    /// Linux `tcp_illinois_ssthresh`: cwnd − β·cwnd, at least 2.
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, _cause: CongestionCause) -> u32 {
        let decr = cc.cwnd.wrapping_mul(self.beta) >> BETA_SHIFT;
        cc.cwnd.wrapping_sub(decr).max(2)
    }

    fn on_event(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, ev: CcEvent) {
        if let Some(change) = self.ca.on_event(ev) {
            self.apply(change, cc.snd_nxt);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcState;
    use brisk_time::Duration;

    fn ack(rtt_us: u64, acked: u32) -> AckSample {
        AckSample {
            acked_segs: acked,
            rtt: Some(Duration::from_micros(rtt_us)),
            ..Default::default()
        }
    }

    #[test]
    fn alpha_is_max_without_delay_and_falls_with_it() {
        let mut i = Illinois::default();
        // dm = 10 000 µs, d1 = 100.
        assert_eq!(i.alpha_for(100, 10_000), ALPHA_MAX);
        assert!(!i.rtt_above);
        // da = 1 100: dm' = 9 900, da' = 1 000: 9 900·1280 / (9 900 + 1 000·1242/38)
        // = 12 672 000 / (9 900 + 32 684) = 12 672 000 / 42 584 = 297.
        assert_eq!(i.alpha_for(1_100, 10_000), 297);
        assert!(i.rtt_above);
        // da = dm: α = 9 900·1280/(9 900 + 9 900·1242/38) = 12 672 000/333 473 = 38
        // (0.3 · 128 = 38.4 is ALPHA_MIN's 38).
        assert_eq!(i.alpha_for(10_000, 10_000), ALPHA_MIN);
    }

    #[test]
    fn alpha_returns_to_max_only_after_theta_low_delay_rounds() {
        let mut i = Illinois::default();
        i.alpha = i.alpha_for(5_000, 10_000);
        let low = i.alpha;
        for _ in 0..4 {
            assert_eq!(i.alpha_for(0, 10_000), low);
        }
        assert_eq!(i.alpha_for(0, 10_000), ALPHA_MAX);
        assert!(!i.rtt_above);
    }

    #[test]
    fn beta_is_an_eighth_at_low_delay_a_half_at_high_and_linear_between() {
        // dm = 10 000: d2 = 1 000, d3 = 8 000.
        assert_eq!(beta_for(1_000, 10_000), BETA_MIN);
        assert_eq!(beta_for(8_000, 10_000), BETA_MAX);
        // da = 4 500: (8·8000 − 32·1000 + 24·4500)/7000 = 140 000/7000 = 20.
        assert_eq!(beta_for(4_500, 10_000), 20);
    }

    #[test]
    fn ssthresh_removes_beta_of_cwnd() {
        let mut i = Illinois::default();
        let mut cc = CcState::new(100, 1448);
        i.beta = BETA_MIN;
        let ss = i.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Loss,
        );
        assert_eq!(ss, 100 - 12);
        i.beta = 20;
        let ss = i.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Loss,
        );
        // 100·20/64 = 31.
        assert_eq!(ss, 69);
    }

    #[test]
    fn a_round_sets_alpha_and_beta_from_its_average_delay() {
        let mut i = Illinois::default();
        let mut cc = CcState::new(50, 1448);
        cc.ssthresh = 20;
        cc.cwnd_limited = true;
        i.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        // History: base 20 ms, max 30 ms (dm = 10 000 µs).
        for r in [20_000, 30_000] {
            i.on_ack(&mut FlowCtx::alone(&mut cc), &ack(r, 1));
        }
        i.rtt_reset(0);
        // This round: 24 ms and 25 ms, avg 24 500, da = 4 500.
        for r in [24_000, 25_000] {
            i.on_ack(&mut FlowCtx::alone(&mut cc), &ack(r, 1));
        }
        cc.snd_una = 1;
        cc.snd_nxt = 60;
        i.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(25_000, 1));
        assert_eq!(i.beta, 20);
        // α: dm' 9 900, da' 4 400: 12 672 000/(9 900 + 143 810) = 82.
        assert_eq!(i.alpha, 82);
        assert_eq!(i.end_seq, 60);
        // Below win_thresh: Reno's α and β.
        cc.cwnd = 10;
        cc.snd_una = 61;
        i.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(25_000, 1));
        assert_eq!((i.alpha, i.beta), (ALPHA_BASE, BETA_BASE));
    }

    #[test]
    fn congestion_avoidance_adds_alpha_per_rtt() {
        // α = 10 (ALPHA_MAX): +1 once cwnd_cnt·1280/128 ≥ cwnd, i.e. after 10 ACKs
        // at cwnd 100, then 11 ACKs each at cwnd 101..110: 10 + 8·11 = 98 ACKs
        // give 9 segments, and the last 2 ACKs of 100 none.
        let mut i = Illinois::default();
        let mut cc = CcState::new(100, 1448);
        cc.ssthresh = 50;
        cc.cwnd_limited = true;
        i.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        i.end_seq = u64::MAX; // no round end here
        let mut grown = 0;
        for _ in 0..100 {
            i.on_ack(&mut FlowCtx::alone(&mut cc), &ack(20_000, 1));
            let before = cc.cwnd;
            i.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack(20_000, 1));
            grown += cc.cwnd - before;
        }
        assert_eq!(grown, 9);
    }

    #[test]
    fn an_rto_resets_to_renos_alpha_and_beta() {
        let mut i = Illinois::default();
        let mut cc = CcState::new(100, 1448);
        i.alpha = 300;
        i.beta = 10;
        i.on_event(&mut FlowCtx::alone(&mut cc), Instant::ZERO, CcEvent::Rto);
        assert_eq!((i.alpha, i.beta), (ALPHA_BASE, BETA_BASE));
    }
}
