//! BIC TCP (Xu, Harfoush and Rhee, "Binary increase congestion control for fast,
//! long distance networks", INFOCOM 2004) as Linux 6.18 runs it,
//! `net/ipv4/tcp_bic.c`: `cc = "bic"`. Docs: `docs/mechanisms/bic.md`.
//!
//! After a loss at window W_max, BIC binary-searches back towards it: each RTT cwnd
//! moves a quarter (`BICTCP_B` = 4) of the way to W_max, at most `max_increment`
//! (16) segments, and within `BICTCP_B` of W_max only one segment per
//! `smooth_part`/4 RTTs. Past W_max it probes for a new maximum: slowly, then with
//! growing steps, then linearly at `max_increment` per RTT. Below `low_window` (14)
//! it is Reno. The decrease is β = 819/1024 (0.8) above `low_window`, with fast
//! convergence (W_max lowered further when a loss comes before the old one was
//! regained). The per-RTT step is turned into ACKs per segment (`cnt`), corrected
//! for delayed ACKs by a moving average of segments per ACK (`delayed_ack`).
//!
//! Function map: `init` = `bictcp_init` (+ `bictcp_reset`); `on_ack` =
//! `bictcp_acked`; `cong_avoid` = `bictcp_cong_avoid` (+ `bictcp_update`);
//! `ssthresh` = `bictcp_recalc_ssthresh`; `on_event` = `bictcp_state` (through
//! [`CaTracker`]); undo = `tcp_reno_undo_cwnd`. Windows in segments, β in 1/1024,
//! the update throttle in 1 ms jiffies; u32 arithmetic as in C.

use super::linux_ca::{jiffies32, CaChange, CaState, CaTracker, HZ};
use super::reno::{cong_avoid_ai, slow_start};
use super::{AckSample, CcEvent, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::Instant;

const BETA_SCALE: u32 = 1024;
/// The binary search goes to (max + min)/B.
const BICTCP_B: u32 = 4;
/// `delayed_ack` carries 4 fractional bits.
const ACK_RATIO_SHIFT: u32 = 4;

/// `tcp_bic`'s module parameters, Linux's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BicConfig {
    pub fast_convergence: bool,
    /// Largest increase per RTT, segments.
    pub max_increment: u32,
    /// Reno below this window.
    pub low_window: u32,
    /// β, /1024.
    pub beta: u32,
    /// 0: leave the connection's ssthresh (Linux's default).
    pub initial_ssthresh: u32,
    /// RTTs spent within B segments of W_max.
    pub smooth_part: u32,
}

impl BicConfig {
    /// Range checks (`[flow.tcp.bic]`): `max_increment` and `smooth_part` divide or
    /// multiply the window (Linux divides by zero at `max_increment = 0`), β is in
    /// 1024ths.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let max = super::vegas::MAX_PARAM_SEGMENTS;
        let checks = [
            (
                "max_increment",
                self.max_increment,
                1,
                max,
                "segments (Linux default 16)",
            ),
            (
                "low_window",
                self.low_window,
                0,
                max,
                "segments (Linux default 14)",
            ),
            ("beta", self.beta, 1, 1024, "(1024ths; Linux default 819)"),
            (
                "initial_ssthresh",
                self.initial_ssthresh,
                0,
                max,
                "segments (0: the connection's; Linux default 0)",
            ),
            (
                "smooth_part",
                self.smooth_part,
                1,
                1000,
                "RTTs (Linux default 20)",
            ),
        ];
        for (k, v, lo, hi, unit) in checks {
            if !(lo..=hi).contains(&v) {
                return Err((k, format!("must be between {lo} and {hi} {unit}")));
            }
        }
        Ok(())
    }
}

impl Default for BicConfig {
    fn default() -> Self {
        BicConfig {
            fast_convergence: true,
            max_increment: 16,
            low_window: 14,
            beta: 819,
            initial_ssthresh: 0,
            smooth_part: 20,
        }
    }
}

/// BIC's state (Linux `struct bictcp`).
#[derive(Clone, Debug)]
pub struct Bic {
    cfg: BicConfig,
    /// ACKs per +1 segment.
    cnt: u32,
    /// W_max, segments.
    last_max_cwnd: u32,
    last_cwnd: u32,
    /// Jiffy of the last `cnt` computation.
    last_time: u32,
    epoch_start: u32,
    /// Segments per ACK, ·16.
    delayed_ack: u32,
    ca: CaTracker,
}

impl Default for Bic {
    fn default() -> Self {
        Bic::new(BicConfig::default())
    }
}

impl Bic {
    pub fn new(cfg: BicConfig) -> Self {
        let cfg = BicConfig {
            max_increment: cfg.max_increment.max(1),
            beta: cfg.beta.min(BETA_SCALE),
            ..cfg
        };
        Bic {
            cfg,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            epoch_start: 0,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
            ca: CaTracker::default(),
        }
    }

    /// W_max, segments (0 before the first loss).
    pub fn last_max_cwnd(&self) -> u32 {
        self.last_max_cwnd
    }

    /// Linux `bictcp_reset`.
    fn reset(&mut self) {
        *self = Bic {
            ca: self.ca.clone(),
            ..Bic::new(self.cfg)
        };
    }

    /// Linux `bictcp_update`: `cnt` for this window, at most once per HZ/32 while
    /// cwnd is unchanged.
    fn update(&mut self, cwnd: u32, now_j: u32) {
        if self.last_cwnd == cwnd && (now_j.wrapping_sub(self.last_time) as i32) <= (HZ / 32) as i32
        {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = now_j;
        if self.epoch_start == 0 {
            self.epoch_start = now_j;
        }
        let c = &self.cfg;
        // Start off as Reno.
        if cwnd <= c.low_window {
            self.cnt = cwnd;
            return;
        }
        if cwnd < self.last_max_cwnd {
            // Binary search towards W_max.
            let dist = (self.last_max_cwnd - cwnd) / BICTCP_B;
            self.cnt = if dist > c.max_increment {
                cwnd / c.max_increment
            } else if dist <= 1 {
                cwnd.wrapping_mul(c.smooth_part) / BICTCP_B
            } else {
                cwnd / dist
            };
        } else {
            // Max probing past W_max: slow, then growing, then linear.
            self.cnt = if cwnd < self.last_max_cwnd.wrapping_add(BICTCP_B) {
                cwnd.wrapping_mul(c.smooth_part) / BICTCP_B
            } else if cwnd
                < self
                    .last_max_cwnd
                    .wrapping_add(c.max_increment.wrapping_mul(BICTCP_B - 1))
            {
                cwnd.wrapping_mul(BICTCP_B - 1) / (cwnd - self.last_max_cwnd)
            } else {
                cwnd / c.max_increment
            };
        }
        // No loss yet (slow start or a very underused link): at least 5 % per RTT.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
        self.cnt = (self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack.max(1);
        if self.cnt == 0 {
            self.cnt = 1;
        }
    }

    fn apply(&mut self, change: CaChange) {
        // Linux `bictcp_state`: entering Loss forgets everything.
        if change == CaChange::Enter(CaState::Loss) {
            self.reset();
        }
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }

    /// Linux `bictcp_init`.
    fn init(&mut self, cc: &mut FlowCtx<'_>, _now: Instant) {
        self.ca = CaTracker::default();
        self.reset();
        if self.cfg.initial_ssthresh != 0 {
            cc.ssthresh = self.cfg.initial_ssthresh;
        }
    }

    /// Linux `bictcp_acked`: the segments-per-ACK average, in TCP_CA_Open.
    fn on_ack(&mut self, _cc: &mut FlowCtx<'_>, ack: &AckSample) {
        if self.ca.is_open() {
            self.delayed_ack = self
                .delayed_ack
                .wrapping_add(ack.acked_segs)
                .wrapping_sub(self.delayed_ack >> ACK_RATIO_SHIFT);
        }
    }

    /// Linux `bictcp_cong_avoid`: one `cnt` step per ACK (not per ACKed segment).
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        if !cc.cwnd_limited {
            return;
        }
        if cc.in_slow_start() {
            slow_start(cc, ack.acked_segs);
        } else {
            self.update(cc.cwnd, jiffies32(ack.now));
            cong_avoid_ai(cc, self.cnt, 1);
        }
    }

    /// Linux `bictcp_recalc_ssthresh`.
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, _cause: CongestionCause) -> u32 {
        let cwnd = cc.cwnd;
        self.epoch_start = 0;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            // Release bandwidth to newer flows: W_max·(1 + β)/2.
            cwnd.wrapping_mul(BETA_SCALE + self.cfg.beta) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        if cwnd <= self.cfg.low_window {
            (cwnd >> 1).max(2)
        } else {
            (cwnd.wrapping_mul(self.cfg.beta) / BETA_SCALE).max(2)
        }
    }

    fn on_event(&mut self, _cc: &mut FlowCtx<'_>, _now: Instant, ev: CcEvent) {
        if let Some(change) = self.ca.on_event(ev) {
            self.apply(change);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcState;

    fn cnt_for(b: &mut Bic, cwnd: u32) -> u32 {
        b.last_cwnd = 0; // defeat the throttle
        b.update(cwnd, 1000);
        b.cnt
    }

    #[test]
    fn the_binary_search_steps_a_quarter_of_the_distance_up_to_max_increment() {
        // delayed_ack 32 (2 segments per ACK): cnt is halved.
        let mut b = Bic {
            last_max_cwnd: 1000,
            ..Bic::default()
        };
        // dist = (1000 − 500)/4 = 125 > 16: linear, cnt = 500/16 = 31 → ·16/32 = 15.
        assert_eq!(cnt_for(&mut b, 500), 15);
        // dist = (1000 − 960)/4 = 10: cnt = 960/10 = 96 → 48.
        assert_eq!(cnt_for(&mut b, 960), 48);
        // dist = 1: cnt = 996·20/4 = 4980 → 2490.
        assert_eq!(cnt_for(&mut b, 996), 2490);
        // At or below low_window: Reno, cnt = cwnd (returned before the
        // delayed-ACK correction, as Linux does).
        assert_eq!(cnt_for(&mut b, 14), 14);
    }

    #[test]
    fn past_w_max_it_probes_slowly_then_faster_then_linearly() {
        let mut b = Bic {
            delayed_ack: 16, // one segment per ACK
            last_max_cwnd: 1000,
            ..Bic::default()
        };
        // Within B: cnt = 1002·20/4 = 5010.
        assert_eq!(cnt_for(&mut b, 1002), 5010);
        // 1010 < 1000 + 48: cnt = 1010·3/10 = 303.
        assert_eq!(cnt_for(&mut b, 1010), 303);
        // 1100 ≥ 1048: linear, 1100/16 = 68.
        assert_eq!(cnt_for(&mut b, 1100), 68);
        // No loss yet: at most 20.
        b.last_max_cwnd = 0;
        assert_eq!(cnt_for(&mut b, 1100), 20);
    }

    #[test]
    fn ssthresh_is_beta_above_low_window_with_fast_convergence() {
        let mut b = Bic::default();
        let mut cc = CcState::new(1000, 1448);
        let ss = b.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Loss,
        );
        // 1000·819/1024 = 799.
        assert_eq!((ss, b.last_max_cwnd), (799, 1000));
        // A loss at 900 < W_max: W_max = 900·1843/2048 = 809.
        cc.cwnd = 900;
        b.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Loss,
        );
        assert_eq!(b.last_max_cwnd, 809);
        // At or below low_window: halve.
        cc.cwnd = 14;
        let ss = b.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Loss,
        );
        assert_eq!(ss, 7);
    }

    #[test]
    fn delayed_ack_is_a_moving_average_of_segments_per_ack() {
        let mut b = Bic::default();
        let mut cc = CcState::new(10, 1448);
        let a = AckSample {
            acked_segs: 1,
            ..Default::default()
        };
        // 32 + 1 − 2 = 31.
        b.on_ack(&mut FlowCtx::alone(&mut cc), &a);
        assert_eq!(b.delayed_ack, 31);
        for _ in 0..200 {
            b.on_ack(&mut FlowCtx::alone(&mut cc), &a);
        }
        // Settles where 1 = delayed_ack/16: 16..31 (integer shift).
        assert!((16..32).contains(&b.delayed_ack), "{}", b.delayed_ack);
        // Not outside Open.
        b.on_event(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CcEvent::EnterRecovery,
        );
        let d = b.delayed_ack;
        b.on_ack(&mut FlowCtx::alone(&mut cc), &a);
        assert_eq!(b.delayed_ack, d);
    }

    #[test]
    fn an_rto_forgets_w_max() {
        let mut b = Bic::default();
        let mut cc = CcState::new(100, 1448);
        b.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Rto,
        );
        assert_eq!(b.last_max_cwnd, 100);
        b.on_event(&mut FlowCtx::alone(&mut cc), Instant::ZERO, CcEvent::Rto);
        assert_eq!(b.last_max_cwnd, 0);
    }

    #[test]
    fn congestion_avoidance_steps_once_per_cnt_acks() {
        let mut b = Bic {
            delayed_ack: 16,
            last_max_cwnd: 1000,
            ..Bic::default()
        };
        let mut cc = CcState::new(960, 1448);
        cc.ssthresh = 900;
        cc.cwnd_limited = true;
        let a = AckSample {
            acked_segs: 2,
            now: Instant::from_millis(5),
            ..Default::default()
        };
        // cnt = 960/10 = 96 ACKs per segment, whatever each ACK covers.
        for _ in 0..96 {
            b.cong_avoid(&mut FlowCtx::alone(&mut cc), &a);
        }
        assert_eq!(cc.cwnd, 961);
    }
}
