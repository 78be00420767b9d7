//! TCP Hybla (Caini and Firrincieli, "TCP Hybla: a TCP enhancement for
//! heterogeneous networks", Int. J. Satellite Communications 22(5), 2004) as Linux
//! 6.18 runs it, `net/ipv4/tcp_hybla.c`: `cc = "hybla"`. Docs:
//! `docs/mechanisms/hybla.md`.
//!
//! Hybla makes a long-RTT flow grow, per unit of time, as a flow with the reference
//! RTT `rtt0` (25 ms) would: with `rho = max(srtt/rtt0, 1)`, slow start adds
//! `2^rho − 1` segments per ACK and congestion avoidance `rho²/cwnd`, so per second
//! both match the reference flow's growth. The increments carry 7 fractional bits
//! (`snd_cwnd_cents`), and `rho` 3 fractional bits, whose power of two comes from an
//! 8-entry table. `rho` is recomputed whenever srtt reaches a new minimum. The
//! initial window is `rho` segments and the window clamp 65535 (both set by Linux's
//! `hybla_init`). Losses are Reno's.
//!
//! Function map: `init` = `hybla_init` (+ `hybla_recalc_param`); `cong_avoid` =
//! `hybla_cong_avoid` (+ `hybla_fraction`); `on_event` = `hybla_state` (through
//! [`CaTracker`]); `tcp_reno_ssthresh`, `tcp_reno_undo_cwnd`.

use super::linux_ca::{reno_cong_avoid, CaChange, CaState, CaTracker};
use super::reno::reno_ssthresh;
use super::{AckSample, CcEvent, CcState, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::Instant;

/// `tcp_hybla`'s module parameter, Linux's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HyblaConfig {
    /// Reference RTT, ms.
    pub rtt0_ms: u32,
}

impl Default for HyblaConfig {
    fn default() -> Self {
        HyblaConfig { rtt0_ms: 25 }
    }
}

impl HyblaConfig {
    /// Range check (`[flow.tcp.hybla]`): `rtt0` divides the RTT (Linux would divide
    /// by zero at 0), so 1 ms to 10 s.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(1..=10_000).contains(&self.rtt0_ms) {
            return Err((
                "rtt0",
                "must be between 1 and 10000 ms (Linux default 25)".into(),
            ));
        }
        Ok(())
    }
}

/// Linux `hybla_fraction`: 2^(odds/8) in 1/128ths, for odds 0..7.
fn fraction(odds: u32) -> u32 {
    const FRACTIONS: [u32; 8] = [128, 139, 152, 165, 181, 197, 215, 234];
    FRACTIONS.get(odds as usize).copied().unwrap_or(128)
}

/// Linux's `srtt_us`: the smoothed RTT in µs, times 8.
fn srtt_us8(cc: &CcState) -> u32 {
    u32::try_from(cc.srtt.as_micros().saturating_mul(8)).unwrap_or(u32::MAX)
}

/// Hybla's state (Linux `struct hybla`).
#[derive(Clone, Debug)]
pub struct Hybla {
    cfg: HyblaConfig,
    hybla_en: bool,
    /// Fractional increments, 1/128 segments.
    snd_cwnd_cents: u32,
    rho: u32,
    rho2: u32,
    /// rho · 8.
    rho_3ls: u32,
    /// rho² · 128.
    rho2_7ls: u32,
    /// Smallest srtt seen, Linux's srtt_us (µs · 8); `u32::MAX` until the first.
    minrtt_us: u32,
    ca: CaTracker,
}

impl Default for Hybla {
    fn default() -> Self {
        Hybla::new(HyblaConfig::default())
    }
}

impl Hybla {
    pub fn new(cfg: HyblaConfig) -> Self {
        Hybla {
            cfg: HyblaConfig {
                rtt0_ms: cfg.rtt0_ms.max(1),
            },
            hybla_en: true,
            snd_cwnd_cents: 0,
            rho: 0,
            rho2: 0,
            rho_3ls: 0,
            rho2_7ls: 0,
            minrtt_us: u32::MAX,
            ca: CaTracker::default(),
        }
    }

    /// rho (integer part) and rho² (integer part).
    pub fn rho(&self) -> (u32, u32) {
        (self.rho, self.rho2)
    }

    /// Linux `hybla_recalc_param`.
    fn recalc_param(&mut self, cc: &CcState) {
        self.rho_3ls = (srtt_us8(cc) / (self.cfg.rtt0_ms.saturating_mul(1000))).max(8);
        self.rho = self.rho_3ls >> 3;
        self.rho2_7ls = self.rho_3ls.wrapping_mul(self.rho_3ls) << 1;
        self.rho2 = self.rho2_7ls >> 7;
    }

    fn apply(&mut self, change: CaChange) {
        self.hybla_en = matches!(
            change,
            CaChange::Enter(CaState::Open) | CaChange::CompleteCwr
        );
    }
}

impl CongestionControl for Hybla {
    fn name(&self) -> &'static str {
        "hybla"
    }

    /// Linux `hybla_init`: rho from the handshake's srtt; cwnd = rho; clamp 65535.
    /// Without an srtt yet (no RTT sample in the handshake), brisk keeps the
    /// connection's initial window and computes rho at the first `cong_avoid` with
    /// one (Linux would compute rho = 1 from srtt 0 and never update it).
    fn init(&mut self, cc: &mut FlowCtx<'_>, _now: Instant) {
        *self = Hybla::new(self.cfg);
        cc.cwnd_clamp = 65_535;
        if cc.srtt.is_zero() {
            return;
        }
        self.recalc_param(cc);
        self.minrtt_us = srtt_us8(cc);
        cc.cwnd = self.rho.clamp(1, cc.cwnd_clamp);
    }

    /// Linux `hybla_cong_avoid`. Increments are per ACK, not per ACKed segment
    /// (Linux ignores `acked` outside its Reno fallback).
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        // A new minimum srtt: recompute rho.
        let srtt = srtt_us8(cc);
        if srtt != 0 && srtt < self.minrtt_us {
            self.recalc_param(cc);
            self.minrtt_us = srtt;
        }
        if !cc.cwnd_limited {
            return;
        }
        if !self.hybla_en {
            reno_cong_avoid(cc, ack.acked_segs);
            return;
        }
        if self.rho == 0 {
            self.recalc_param(cc);
        }
        let rho_fractions = self.rho_3ls - (self.rho << 3);
        let slow_start = cc.in_slow_start();
        let increment = if slow_start {
            // 2^rho − 1, in 1/128 segments: 2^int · 2^frac.
            (1u32 << self.rho.min(16))
                .wrapping_mul(fraction(rho_fractions))
                .wrapping_sub(128)
        } else {
            // rho²/cwnd, in 1/128 segments.
            let inc = self.rho2_7ls / cc.cwnd.max(1);
            if inc < 128 {
                cc.cwnd_cnt = cc.cwnd_cnt.wrapping_add(1);
            }
            inc
        };
        let odd = increment % 128;
        cc.cwnd = cc.cwnd.saturating_add(increment >> 7);
        self.snd_cwnd_cents += odd;
        // Whole segments out of the fractions.
        while self.snd_cwnd_cents >= 128 {
            cc.cwnd = cc.cwnd.saturating_add(1);
            self.snd_cwnd_cents -= 128;
            cc.cwnd_cnt = 0;
        }
        // An increment too small to register: one segment per window of ACKs.
        if increment == 0 && odd == 0 && cc.cwnd_cnt >= cc.cwnd {
            cc.cwnd = cc.cwnd.saturating_add(1);
            cc.cwnd_cnt = 0;
        }
        if slow_start {
            cc.cwnd = cc.cwnd.min(cc.ssthresh);
        }
        cc.cwnd = cc.cwnd.min(cc.cwnd_clamp);
    }

    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, _cause: CongestionCause) -> u32 {
        reno_ssthresh(cc.cwnd)
    }

    /// Linux `hybla_state`: Hybla's rules only in TCP_CA_Open.
    fn on_event(&mut self, _cc: &mut FlowCtx<'_>, _now: Instant, ev: CcEvent) {
        if let Some(change) = self.ca.on_event(ev) {
            self.apply(change);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_time::Duration;

    fn cc_with(srtt_ms: u64, cwnd: u32, ssthresh: u32) -> CcState {
        let mut cc = CcState::new(cwnd, 1448);
        cc.srtt = Duration::from_millis(srtt_ms);
        cc.ssthresh = ssthresh;
        cc.cwnd_limited = true;
        cc
    }

    fn ack() -> AckSample {
        AckSample {
            acked_segs: 1,
            ..Default::default()
        }
    }

    #[test]
    fn rho_is_srtt_over_25_ms_with_three_fractional_bits() {
        // 600 ms: srtt_us = 4 800 000; /25 000 = 192 = rho 24.0; rho² = 576.
        let mut cc = cc_with(600, 10, u32::MAX);
        let mut h = Hybla::default();
        h.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        assert_eq!(
            (h.rho, h.rho_3ls, h.rho2_7ls, h.rho2),
            (24, 192, 73_728, 576)
        );
        // The initial window is rho, the clamp 65535.
        assert_eq!((cc.cwnd, cc.cwnd_clamp), (24, 65_535));
        // 20 ms: srtt_us/25 000 = 6 < 8 → rho 1.
        let mut cc = cc_with(20, 10, u32::MAX);
        h.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        assert_eq!((h.rho, h.rho_3ls, h.rho2_7ls), (1, 8, 128));
        assert_eq!(cc.cwnd, 1);
        // 60 ms: 480 000/25 000 = 19 → rho 2, fraction 3/8.
        let mut cc = cc_with(60, 10, u32::MAX);
        h.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        assert_eq!((h.rho, h.rho_3ls, h.rho2_7ls, h.rho2), (2, 19, 722, 5));
    }

    #[test]
    fn slow_start_adds_two_to_the_rho_minus_one_per_ack() {
        // rho_3ls 19: increment = 4·fraction(3) − 128 = 4·165 − 128 = 532
        // = 4 segments + 20/128.
        let mut cc = cc_with(60, 10, u32::MAX);
        let mut h = Hybla::default();
        h.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        assert_eq!(cc.cwnd, 2);
        h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack());
        assert_eq!((cc.cwnd, h.snd_cwnd_cents), (6, 20));
        // Six more ACKs: +24 segments and 120 cents, 140 in all: one more segment.
        for _ in 0..6 {
            h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack());
        }
        assert_eq!((cc.cwnd, h.snd_cwnd_cents), (31, 12));
        // Slow start stops at ssthresh.
        cc.ssthresh = 32;
        h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack());
        assert_eq!(cc.cwnd, 32);
    }

    #[test]
    fn congestion_avoidance_adds_rho_squared_over_cwnd() {
        // rho 24 (600 ms), cwnd 100: increment = 73 728/100 = 737 = 5 + 97/128.
        let mut cc = cc_with(600, 100, 50);
        let mut h = Hybla::default();
        h.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        cc.cwnd = 100;
        h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack());
        assert_eq!((cc.cwnd, h.snd_cwnd_cents), (105, 97));
        // rho 1 (20 ms), cwnd 64: increment = 128/64 = 2/128 per ACK: 64 ACKs
        // give one segment, as Reno's one per window.
        let mut cc = cc_with(20, 64, 10);
        h.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        cc.cwnd = 64;
        for _ in 0..63 {
            h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack());
        }
        assert_eq!((cc.cwnd, h.snd_cwnd_cents), (64, 126));
        h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack());
        assert_eq!((cc.cwnd, h.snd_cwnd_cents), (65, 0));
    }

    #[test]
    fn outside_open_it_is_reno() {
        // rho 24 (600 ms). After an RTO, until the Loss state ends, slow start is
        // Reno's: +1 per ACK.
        let mut cc = cc_with(600, 10, u32::MAX);
        let mut h = Hybla::default();
        h.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        cc.snd_nxt = 100;
        h.on_event(&mut FlowCtx::alone(&mut cc), Instant::ZERO, CcEvent::Rto);
        (cc.cwnd, cc.ssthresh, cc.snd_una) = (1, 12, 50);
        h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack());
        assert_eq!(cc.cwnd, 2);
        // Open again: 2^24 − 1 segments per ACK, capped at ssthresh.
        cc.snd_una = 100;
        h.on_event(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CcEvent::ExitLoss,
        );
        h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack());
        assert_eq!(cc.cwnd, 12);
    }

    #[test]
    fn a_new_minimum_srtt_recomputes_rho() {
        let mut cc = cc_with(600, 10, 5);
        let mut h = Hybla::default();
        h.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        cc.srtt = Duration::from_millis(100);
        cc.cwnd = 100;
        h.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack());
        assert_eq!(h.rho(), (4, 16));
    }
}
