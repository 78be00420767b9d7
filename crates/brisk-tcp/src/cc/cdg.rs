//! CDG, CAIA Delay-Gradient congestion control (Hayes and Armitage, "Revisiting TCP
//! congestion control using delay gradients", IFIP Networking 2011; RITE D1.3 App. C.4
//! and body §4.3), as Linux's `net/ipv4/tcp_cdg.c` runs it.
//!
//! Once per round (an ACK beyond `rtt_seq`, the SND.NXT at the round's start) the
//! minimum and maximum RTT of the round are compared with the previous round's. The
//! differences go into a ring of `window` rounds whose sums are the smoothed gradients
//! g_min and g_max (Linux drops the paper's division by the window). A positive
//! gradient g (g_min if positive, else g_max, in µs) makes the sender back off with
//! probability 1 − e^(−g·backoff_factor/10⁶) (`tcp_cdg_backoff`): cwnd ×
//! backoff_beta/1024 through CWR and PRR, as Linux's `tcp_enter_cwr`.
//!
//! The coexistence heuristics, each a Linux module parameter:
//! - **Ineffectual backoff** (`use_ineff`): after that many backoffs in a row that did
//!   not make either gradient fall by at least 32 µs, stop backing off on delay: a
//!   loss-based competitor keeps the queue full whatever CDG does.
//! - **Shadow window** (`use_shadow`): a loss-based window that grows as Reno would and
//!   is what CDG falls back to on a loss (`max(shadow/2, cwnd/2)`), so delay backoffs
//!   do not compound with loss backoffs against loss-based flows.
//! - **Loss tolerance** (`use_tolerance`, off by default): a loss while the queue does
//!   not look full is not taken as congestion.
//! - **Hybrid slow start** (`hystart_detect`): ACK-train and delay-increase exits, as
//!   CUBIC's HyStart but at any cwnd and with Hayes' delayed-ACK filter.
//!
//! Growth between backoffs is Reno's (`tcp_reno_cong_avoid`). Linux's `nexp_u32`
//! approximates e^(−x) with a table; this uses `f64::exp`, which both are meant to
//! compute. The random draw comes from a ChaCha stream seeded by the factory with the
//! connection's seed, so runs are reproducible. docs/mechanisms/cdg.md has the choices.

use super::reno::Reno;
use super::{
    AckSample, CcDiagnostics, CcEvent, CcState, CongestionCause, CongestionControl, FlowCtx,
};
use brisk_time::Instant;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Linux's module parameters (`/sys/module/tcp_cdg/parameters/`), with its defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct CdgConfig {
    /// Gradient window in rounds: a power of two in 1..=256 (default 8).
    pub window: u32,
    /// Multiplicative decrease on a delay backoff, in 1024ths (default 724 ≈ √½).
    pub backoff_beta: u32,
    /// Backoff probability scale: P = 1 − e^(−g·factor/10⁶), g in µs (default 42,
    /// the paper's G = 3 at window 8: factor = 1000/(G·window)).
    pub backoff_factor: u32,
    /// Hybrid slow start: 0 off, 1 ACK train, 2 delay threshold, 3 both (default 3).
    pub hystart_detect: u32,
    /// Ineffectual-backoff threshold in backoffs; 0 switches it off (default 5).
    pub use_ineff: u32,
    /// The shadow window (default on).
    pub use_shadow: bool,
    /// The non-congestion loss tolerance (default off).
    pub use_tolerance: bool,
}

impl Default for CdgConfig {
    fn default() -> Self {
        CdgConfig {
            window: 8,
            backoff_beta: 724,
            backoff_factor: 42,
            hystart_detect: 3,
            use_ineff: 5,
            use_shadow: true,
            use_tolerance: false,
        }
    }
}

impl CdgConfig {
    /// Linux's `tcp_cdg_register` checks, naming the parameter.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(1..=256).contains(&self.window) || !self.window.is_power_of_two() {
            return Err((
                "window",
                "must be a power of two from 1 to 256 rounds (Linux default 8)".into(),
            ));
        }
        if self.backoff_beta > 1024 {
            return Err((
                "backoff_beta",
                "must be between 0 and 1024 (1024ths; Linux default 724)".into(),
            ));
        }
        if self.backoff_factor > 1_000_000 {
            return Err((
                "backoff_factor",
                "must be between 0 and 1000000 (Linux default 42)".into(),
            ));
        }
        if self.hystart_detect > 3 {
            return Err((
                "hystart_detect",
                "must be 0 (off), 1 (ACK train), 2 (delay) or 3 (both)".into(),
            ));
        }
        if self.use_ineff > 65_535 {
            return Err((
                "use_ineff",
                "must be between 0 and 65535 backoffs (Linux default 5)".into(),
            ));
        }
        Ok(())
    }
}

/// Linux `enum cdg_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CdgState {
    #[default]
    Unknown,
    /// The queue looks not full (loss tolerance only).
    NonFull,
    /// The queue looks full (loss tolerance only).
    Full,
    /// A delay backoff is under way.
    Backoff,
}

/// The smallest and largest RTT of one round, µs; (0, 0) is "no sample" (Linux `v64 == 0`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MinMax {
    min: i64,
    max: i64,
}

impl MinMax {
    fn is_set(&self) -> bool {
        self.min != 0 || self.max != 0
    }
}

/// What CDG decided so far, for traces and results.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct CdgDiagnostics {
    pub state: CdgState,
    /// The shadow window, segments.
    pub shadow_wnd: u32,
    /// Delay backoffs taken (each a CWR).
    pub backoffs: u64,
    /// Backoffs the ineffectual-backoff rule suppressed.
    pub ineffectual: u64,
    /// Slow-start exits by the hybrid slow start.
    pub hystart_exits: u64,
    /// The last smoothed gradient, µs (window sum, as Linux keeps it).
    pub gradient_us: i64,
}

#[derive(Debug)]
pub struct Cdg {
    cfg: CdgConfig,
    rng: ChaCha8Rng,
    rtt: MinMax,
    rtt_prev: MinMax,
    /// The ring of per-round gradients, `window` entries, allocated once.
    gradients: Box<[MinMax]>,
    gsum: MinMax,
    gfilled: bool,
    tail: usize,
    state: CdgState,
    delack: u32,
    rtt_seq: u64,
    undo_cwnd: u32,
    shadow_wnd: u32,
    backoff_cnt: u32,
    sample_cnt: u32,
    delay_min: i64,
    /// Hybrid slow start's ACK train: last ACK and the train's start, µs.
    last_ack: Option<u64>,
    round_start: u64,
    stats: CdgDiagnostics,
}

impl Cdg {
    /// `cfg` as validated by [`CdgConfig::validate`]; out-of-range values are clamped.
    pub fn new(mut cfg: CdgConfig, seed: u64) -> Self {
        cfg.window = cfg.window.clamp(1, 256).next_power_of_two();
        cfg.backoff_beta = cfg.backoff_beta.min(1024);
        let window = cfg.window as usize;
        Cdg {
            cfg,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0xcd90_cd90_cd90_cd90),
            rtt: MinMax::default(),
            rtt_prev: MinMax::default(),
            gradients: vec![MinMax::default(); window].into_boxed_slice(),
            gsum: MinMax::default(),
            gfilled: false,
            tail: 0,
            state: CdgState::Unknown,
            delack: 0,
            rtt_seq: 0,
            undo_cwnd: 0,
            shadow_wnd: 0,
            backoff_cnt: 0,
            sample_cnt: 0,
            delay_min: 0,
            last_ack: None,
            round_start: 0,
            stats: CdgDiagnostics {
                state: CdgState::Unknown,
                shadow_wnd: 0,
                backoffs: 0,
                ineffectual: 0,
                hystart_exits: 0,
                gradient_us: 0,
            },
        }
    }

    /// Linux `tcp_cdg_hystart_update`.
    fn hystart_update(&mut self, cc: &mut CcState, now: Instant) {
        self.delay_min = min_not_zero(self.delay_min, self.rtt.min);
        if self.delay_min == 0 {
            return;
        }
        if self.cfg.hystart_detect & 1 != 0 {
            let now_us = now.as_micros();
            match self.last_ack {
                Some(last) if cc.cwnd_limited => {
                    if now_us < last + 3000 {
                        let base_owd = (self.delay_min / 2).max(125) as u64;
                        self.last_ack = Some(now_us);
                        if now_us > self.round_start + base_owd {
                            self.exit_slow_start(cc);
                            return;
                        }
                    }
                }
                _ => {
                    self.last_ack = Some(now_us);
                    self.round_start = now_us;
                }
            }
        }
        if self.cfg.hystart_detect & 2 != 0 {
            if self.sample_cnt < 8 {
                self.sample_cnt += 1;
            } else {
                let thresh = (self.delay_min + self.delay_min / 8).max(125);
                if self.rtt.min > thresh {
                    self.exit_slow_start(cc);
                }
            }
        }
    }

    fn exit_slow_start(&mut self, cc: &mut CcState) {
        if cc.ssthresh != cc.cwnd {
            self.stats.hystart_exits += 1;
        }
        cc.ssthresh = cc.cwnd;
    }

    /// Linux `tcp_cdg_grad`: this round's gradients into the ring; the smoothed
    /// gradient, extrapolated while the ring is filling.
    fn grad(&mut self) -> i64 {
        let gmin = self.rtt.min - self.rtt_prev.min;
        let gmax = self.rtt.max - self.rtt_prev.max;
        let old = self.gradients[self.tail];
        self.gsum.min += gmin - old.min;
        self.gsum.max += gmax - old.max;
        self.gradients[self.tail] = MinMax {
            min: gmin,
            max: gmax,
        };
        self.tail = (self.tail + 1) & (self.gradients.len() - 1);
        let (gmin, gmax) = (self.gsum.min, self.gsum.max);
        let mut grad = if gmin > 0 { gmin } else { gmax };
        if !self.gfilled {
            if self.tail == 0 {
                self.gfilled = true;
            } else {
                grad = grad * self.gradients.len() as i64 / self.tail as i64;
            }
        }
        // Backoff was effectual: the queue is draining.
        if gmin <= -32 || gmax <= -32 {
            self.backoff_cnt = 0;
        }
        if self.cfg.use_tolerance {
            let (gmin, gmax) = (div_round_closest(gmin, 64), div_round_closest(gmax, 64));
            if gmin > 0 && gmax <= 0 {
                self.state = CdgState::Full;
            } else if (gmin > 0 && gmax > 0) || gmax < 0 {
                self.state = CdgState::NonFull;
            }
        }
        self.stats.gradient_us = grad;
        grad
    }

    /// Linux `tcp_cdg_backoff`: back off with probability 1 − e^(−g·factor/10⁶).
    fn backoff(&mut self, cc: &mut CcState, grad: i64) -> bool {
        let x = grad.saturating_mul(i64::from(self.cfg.backoff_factor));
        if self.rng.next_u32() <= nexp_u32(x) {
            return false;
        }
        if self.cfg.use_ineff > 0 {
            self.backoff_cnt = self.backoff_cnt.saturating_add(1);
            if self.backoff_cnt > self.cfg.use_ineff {
                self.stats.ineffectual += 1;
                return false;
            }
        }
        self.shadow_wnd = self.shadow_wnd.max(cc.cwnd);
        self.state = CdgState::Backoff;
        self.stats.backoffs += 1;
        cc.request_cwr = true;
        true
    }

    fn reset(&mut self, cc: &CcState) {
        let window = self.gradients.len();
        let rng = self.rng.clone();
        let stats = self.stats;
        *self = Cdg::new(self.cfg.clone(), 0);
        debug_assert_eq!(self.gradients.len(), window);
        self.rng = rng;
        self.stats = stats;
        self.rtt_seq = cc.snd_nxt;
        self.shadow_wnd = cc.cwnd;
    }
}

/// Linux `nexp_u32`: e^(−x·10⁻⁶) scaled to u32::MAX; 0 from x ≥ 2²⁴ as Linux cuts off.
fn nexp_u32(x: i64) -> u32 {
    if x <= 0 {
        return u32::MAX;
    }
    if x >= 1 << 24 {
        return 0;
    }
    ((-(x as f64) * 1e-6).exp() * f64::from(u32::MAX)) as u32
}

fn min_not_zero(a: i64, b: i64) -> i64 {
    match (a, b) {
        (0, b) => b,
        (a, 0) => a,
        (a, b) => a.min(b),
    }
}

fn div_round_closest(x: i64, d: i64) -> i64 {
    if x >= 0 {
        (x + d / 2) / d
    } else {
        (x - d / 2) / d
    }
}

impl CongestionControl for Cdg {
    fn name(&self) -> &'static str {
        "cdg"
    }

    fn init(&mut self, cc: &mut FlowCtx<'_>, _now: Instant) {
        self.rtt_seq = cc.snd_nxt;
        self.shadow_wnd = cc.cwnd;
    }

    /// Linux `tcp_cdg_acked`, with Hayes' delayed-ACK filter: while nothing is
    /// SACKed, an ACK of one segment after ACKs of several is probably a delayed
    /// ACK, whose RTT includes the receiver's timer; it may only lower the minimum.
    ///
    /// The RTT is Linux's `ca_rtt_us`: measured from the newest segment this ACK
    /// covers (`last_ackt`), not the estimator's sample (the oldest, or the echoed
    /// timestamp), so an ACK held back for a second segment does not add the wait
    /// for that segment; none when that segment was retransmitted.
    fn on_ack(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        let Some(newest) = ack.newest_acked.filter(|n| !n.retransmit) else {
            return;
        };
        let rtt = ack.now.saturating_duration_since(newest.sent_at);
        let rtt_us = i64::try_from(rtt.as_micros()).unwrap_or(i64::MAX);
        if rtt_us <= 0 {
            return;
        }
        if cc.sacked_out == 0 {
            if ack.acked_segs == 1 && self.delack > 0 {
                self.rtt.min = self.rtt.min.min(rtt_us);
                self.delack -= 1;
                return;
            } else if ack.acked_segs > 1 && self.delack < 5 {
                self.delack += 1;
            }
        }
        self.rtt.min = min_not_zero(self.rtt.min, rtt_us);
        self.rtt.max = self.rtt.max.max(rtt_us);
    }

    /// Linux `tcp_cdg_cong_avoid`; the connection calls it outside CWR and recovery.
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        if cc.in_slow_start() && self.cfg.hystart_detect != 0 {
            self.hystart_update(cc, ack.now);
        }
        if cc.snd_una > self.rtt_seq && self.rtt.is_set() {
            let grad = if self.rtt_prev.is_set() {
                self.grad()
            } else {
                0
            };
            self.rtt_seq = cc.snd_nxt;
            self.rtt_prev = self.rtt;
            self.rtt = MinMax::default();
            self.last_ack = None;
            self.sample_cnt = 0;
            if grad > 0 && self.backoff(cc, grad) {
                return;
            }
        }
        if !cc.cwnd_limited {
            self.shadow_wnd = self.shadow_wnd.min(cc.cwnd);
            return;
        }
        let prior = cc.cwnd;
        Reno.cong_avoid(cc, ack);
        let incr = cc.cwnd.saturating_sub(prior);
        self.shadow_wnd = self.shadow_wnd.saturating_add(incr);
    }

    /// Linux `tcp_cdg_ssthresh`: the backoff's β for CDG's own reduction; for a loss
    /// or ECN, half the window, or half the shadow window when that is larger.
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, cause: CongestionCause) -> u32 {
        self.undo_cwnd = cc.cwnd;
        if self.state == CdgState::Backoff && cause == CongestionCause::Delay {
            let beta = self.cfg.backoff_beta.min(1024);
            return ((u64::from(cc.cwnd) * u64::from(beta)) >> 10).max(2) as u32;
        }
        if self.state == CdgState::NonFull && self.cfg.use_tolerance {
            return cc.cwnd;
        }
        self.shadow_wnd = (self.shadow_wnd >> 1).min(cc.cwnd);
        if self.cfg.use_shadow {
            return self.shadow_wnd.max(cc.cwnd >> 1).max(2);
        }
        (cc.cwnd >> 1).max(2)
    }

    fn undo_cwnd(&mut self, cc: &mut FlowCtx<'_>, _prior_cwnd: u32) -> u32 {
        cc.cwnd.max(self.undo_cwnd)
    }

    /// Linux `tcp_cdg_cwnd_event`: a restart after idle forgets the delay history; the
    /// end of a reduction (`CA_EVENT_COMPLETE_CWR`, brisk's `ExitRecovery` for both
    /// CWR and recovery) starts a fresh round so the reduction's own RTTs are skipped.
    fn on_event(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, ev: CcEvent) {
        match ev {
            CcEvent::CwndRestart => self.reset(cc),
            CcEvent::ExitRecovery => {
                self.state = CdgState::Unknown;
                self.rtt_seq = cc.snd_nxt;
                self.rtt_prev = self.rtt;
                self.rtt = MinMax::default();
            }
            _ => {}
        }
    }

    fn diagnostics(&self) -> Option<CcDiagnostics> {
        let mut d = self.stats;
        d.state = self.state;
        d.shadow_wnd = self.shadow_wnd;
        Some(CcDiagnostics::Cdg(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_time::Duration;

    fn state(cwnd: u32) -> CcState {
        CcState {
            cwnd,
            ssthresh: 20,
            cwnd_clamp: 1 << 20,
            mss: 1000,
            cwnd_limited: true,
            ..CcState::default()
        }
    }

    /// Drives one round per call: `n` ACKs each with RTT `rtt_us`, then the ACK that
    /// passes `rtt_seq`. Returns whether CDG asked for a backoff.
    fn round(cdg: &mut Cdg, cc: &mut CcState, t: &mut u64, rtt_us: u64, n: u32) -> bool {
        for _ in 0..n {
            *t += 100_000;
            cc.snd_una += 1000;
            cc.snd_nxt += 1000;
            let now = Instant::from_micros(*t);
            let ack = AckSample {
                now,
                acked_segs: 2,
                newest_acked: Some(crate::sent::SentInfo {
                    sent_at: now.checked_sub(Duration::from_micros(rtt_us)).unwrap(),
                    bytes: 1000,
                    in_flight_at_send: cc.cwnd,
                    delivered_at_send: 0,
                    app_limited: false,
                    retransmit: false,
                    ..Default::default()
                }),
                ..AckSample::default()
            };
            cdg.on_ack(&mut FlowCtx::alone(cc), &ack);
            cdg.cong_avoid(&mut FlowCtx::alone(cc), &ack);
            if std::mem::take(&mut cc.request_cwr) {
                return true;
            }
        }
        false
    }

    #[test]
    fn nexp_matches_the_exponential_and_linux_cut_off() {
        assert_eq!(nexp_u32(0), u32::MAX);
        let half = nexp_u32(693_147);
        assert!((f64::from(half) / f64::from(u32::MAX) - 0.5).abs() < 1e-6);
        assert_eq!(nexp_u32(1 << 24), 0);
        assert_eq!(nexp_u32(-5), u32::MAX);
    }

    #[test]
    fn flat_delay_never_backs_off_and_rising_delay_does() {
        let mut cdg = Cdg::new(CdgConfig::default(), 1);
        let mut cc = state(40);
        let mut t = 0;
        for _ in 0..50 {
            assert!(!round(&mut cdg, &mut cc, &mut t, 50_000, 4));
        }
        // Delay grows 5 ms per round: g = 5000 µs per round, summed over the window
        // gives P(backoff) = 1 − e^(−0.21·k): a backoff within a few rounds.
        let mut backed_off = false;
        for k in 1..20 {
            if round(&mut cdg, &mut cc, &mut t, 50_000 + 5_000 * k, 4) {
                backed_off = true;
                break;
            }
        }
        assert!(backed_off);
        assert_eq!(cdg.state, CdgState::Backoff);
        // The reduction is the backoff β (724/1024), not Reno's half.
        let ss = cdg.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Delay,
        );
        assert_eq!(ss, cc.cwnd * 724 / 1024);
    }

    #[test]
    fn backoffs_that_do_not_drain_the_queue_stop_after_use_ineff() {
        let mut cdg = Cdg::new(CdgConfig::default(), 3);
        let mut cc = state(40);
        let mut t = 0;
        let mut rtt = 50_000;
        let mut taken = 0;
        for _ in 0..400 {
            rtt += 2_000; // a competitor keeps filling the queue, whatever CDG does
            if round(&mut cdg, &mut cc, &mut t, rtt, 3) {
                taken += 1;
                cdg.on_event(
                    &mut FlowCtx::alone(&mut cc),
                    Instant::ZERO,
                    CcEvent::ExitRecovery,
                );
            }
        }
        assert_eq!(taken, 5, "use_ineff = 5 backoffs, then none");
        assert!(cdg.stats.ineffectual > 0);
    }

    #[test]
    fn losses_fall_back_on_the_shadow_window() {
        let mut cdg = Cdg::new(CdgConfig::default(), 0);
        let mut cc = state(20);
        cdg.shadow_wnd = 100;
        // Half the shadow window (50) beats half of cwnd (10), but the shadow is
        // never taken above cwnd itself.
        assert_eq!(
            cdg.ssthresh(
                &mut FlowCtx::alone(&mut cc),
                Instant::ZERO,
                CongestionCause::Loss
            ),
            20
        );
        cdg.shadow_wnd = 100;
        cc.cwnd = 80;
        assert_eq!(
            cdg.ssthresh(
                &mut FlowCtx::alone(&mut cc),
                Instant::ZERO,
                CongestionCause::Loss
            ),
            50
        );
        let mut plain = Cdg::new(
            CdgConfig {
                use_shadow: false,
                ..CdgConfig::default()
            },
            0,
        );
        plain.shadow_wnd = 100;
        assert_eq!(
            plain.ssthresh(
                &mut FlowCtx::alone(&mut cc),
                Instant::ZERO,
                CongestionCause::Loss
            ),
            40
        );
    }

    #[test]
    fn the_same_seed_gives_the_same_backoffs() {
        let run = |seed| {
            let mut cdg = Cdg::new(CdgConfig::default(), seed);
            let mut cc = state(40);
            let mut t = 0;
            (0..200)
                .map(|k| round(&mut cdg, &mut cc, &mut t, 50_000 + (k % 7) * 900, 3))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(9), run(9));
    }

    #[test]
    fn config_errors_name_the_parameter() {
        for (cfg, field) in [
            (
                CdgConfig {
                    window: 6,
                    ..CdgConfig::default()
                },
                "window",
            ),
            (
                CdgConfig {
                    backoff_beta: 2000,
                    ..CdgConfig::default()
                },
                "backoff_beta",
            ),
            (
                CdgConfig {
                    hystart_detect: 4,
                    ..CdgConfig::default()
                },
                "hystart_detect",
            ),
        ] {
            assert_eq!(cfg.validate().unwrap_err().0, field);
        }
        assert!(CdgConfig::default().validate().is_ok());
    }
}
