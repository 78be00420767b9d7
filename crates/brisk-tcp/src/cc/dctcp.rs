//! DCTCP, Data Center TCP (RFC 8257; Alizadeh et al. 2010; RITE D1.3 body §6.2), as
//! Linux's `net/ipv4/tcp_dctcp.c` runs it.
//!
//! The sender keeps α, a moving estimate of the fraction of its segments the network
//! CE-marked: once per window of data (when SND.UNA passes the SND.NXT of the window's
//! start, `dctcp_update_alpha`), α ← (1 − g)·α + g·F, where F is the fraction of
//! segments delivered in that window whose ACK carried ECE (RFC 8257 §3.3). On the
//! first ECE of a window the connection enters CWR, and the new ssthresh is
//! cwnd·(1 − α/2) (§3.3, Linux `dctcp_ssthresh`): light marking costs little, marking
//! of every segment halves the window. A loss halves the window as Reno does (§3.5,
//! Linux `dctcp_react_to_loss`); growth is Reno's.
//!
//! The receiver side (§3.2) is the connection's: a receiver whose controller is DCTCP
//! echoes ECE on exactly the ACKs of CE-marked segments
//! ([`super::CcAlgorithm::accurate_ce_echo`]), sending an immediate ACK for the
//! earlier segments whenever the CE state changes with an ACK held back.
//!
//! Fixed point as Linux: α in 1024ths (`DCTCP_MAX_ALPHA`), g = 2^−shift_g. α starts at
//! `alpha_on_init` (Linux default 1024, so the first mark halves the window, which
//! RFC 8257 §3.4 leaves to the implementation). The marking queue is brisk-net's
//! drop-tail step threshold (`mark_threshold`), as RFC 8257 §3.1 asks: mark at once
//! above K, no averaging.

use super::reno::{reno_ssthresh, Reno};
use super::{AckSample, CcDiagnostics, CcState, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::Instant;

/// `DCTCP_MAX_ALPHA`: α = 1.
pub const MAX_ALPHA: u32 = 1024;

/// Linux's module parameters, with its defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct DctcpConfig {
    /// g = 2^−shift_g (default 4: g = 1/16, RFC 8257 §3.3's recommendation).
    pub shift_g: u32,
    /// α at the start, in 1024ths (default 1024).
    pub alpha_on_init: u32,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig {
            shift_g: 4,
            alpha_on_init: MAX_ALPHA,
        }
    }
}

impl DctcpConfig {
    /// Linux's parameter ranges, naming the parameter.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.shift_g > 10 {
            return Err((
                "shift_g",
                "must be between 0 and 10 (g = 2^-shift_g; Linux default 4)".into(),
            ));
        }
        if self.alpha_on_init > MAX_ALPHA {
            return Err((
                "alpha_on_init",
                "must be between 0 and 1024 (1024ths; Linux default 1024)".into(),
            ));
        }
        Ok(())
    }
}

/// α and its inputs, for traces and results.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct DctcpDiagnostics {
    /// α as a fraction in [0, 1].
    pub alpha: f64,
    /// Windows of data observed (α updates).
    pub windows: u64,
    /// Segments delivered with and without ECE, over the connection.
    pub delivered_ce: u64,
    pub delivered: u64,
}

#[derive(Debug)]
pub struct Dctcp {
    cfg: DctcpConfig,
    alpha: u32,
    /// End of the current observation window (SND.NXT at its start).
    next_seq: u64,
    delivered: u64,
    delivered_ce: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    /// cwnd before the last reduction (Linux `ca->loss_cwnd`), for undo.
    loss_cwnd: u32,
    windows: u64,
}

impl Dctcp {
    pub fn new(mut cfg: DctcpConfig) -> Self {
        cfg.shift_g = cfg.shift_g.min(10);
        let alpha = cfg.alpha_on_init.min(MAX_ALPHA);
        Dctcp {
            cfg,
            alpha,
            next_seq: 0,
            delivered: 0,
            delivered_ce: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            loss_cwnd: 0,
            windows: 0,
        }
    }

    /// α as a fraction.
    pub fn alpha(&self) -> f64 {
        f64::from(self.alpha) / f64::from(MAX_ALPHA)
    }

    /// Linux `dctcp_update_alpha`, once per window of data.
    fn update_alpha(&mut self, cc: &CcState) {
        if cc.snd_una < self.next_seq {
            return;
        }
        let delivered = self.delivered - self.old_delivered;
        let delivered_ce = self.delivered_ce - self.old_delivered_ce;
        let mut alpha = self.alpha;
        // α ← α − α·g; Linux's `min_not_zero(alpha, alpha >> g)` drops an α too
        // small to decay (below 2^g/1024) straight to zero.
        let decay = alpha >> self.cfg.shift_g;
        alpha -= if decay == 0 { alpha } else { decay };
        if delivered_ce > 0 {
            // + g·F with F = delivered_ce / delivered, in 1024ths.
            let add = (delivered_ce << (10 - self.cfg.shift_g)) / delivered.max(1);
            alpha = (u64::from(alpha) + add).min(u64::from(MAX_ALPHA)) as u32;
        }
        self.alpha = alpha;
        self.windows += 1;
        self.next_seq = cc.snd_nxt;
        self.old_delivered = self.delivered;
        self.old_delivered_ce = self.delivered_ce;
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn init(&mut self, cc: &mut FlowCtx<'_>, _now: Instant) {
        self.next_seq = cc.snd_nxt;
    }

    /// Every ACK, in CWR and recovery too (Linux `dctcp_update_alpha` runs from
    /// `in_ack_event`, whatever the CA state).
    fn on_ack(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        let n = u64::from(ack.acked_segs);
        self.delivered += n;
        if ack.ece {
            self.delivered_ce += n;
        }
        self.update_alpha(cc);
    }

    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        Reno.cong_avoid(cc, ack);
    }

    /// RFC 8257 §3.3 for ECN: cwnd·(1 − α/2); §3.5 for everything else: half.
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, cause: CongestionCause) -> u32 {
        self.loss_cwnd = cc.cwnd;
        match cause {
            CongestionCause::Ecn => {
                let cut = (u64::from(cc.cwnd) * u64::from(self.alpha)) >> 11;
                (cc.cwnd - cut as u32).max(2)
            }
            _ => reno_ssthresh(cc.cwnd),
        }
    }

    fn undo_cwnd(&mut self, cc: &mut FlowCtx<'_>, _prior_cwnd: u32) -> u32 {
        cc.cwnd.max(self.loss_cwnd)
    }

    fn diagnostics(&self) -> Option<CcDiagnostics> {
        Some(CcDiagnostics::Dctcp(DctcpDiagnostics {
            alpha: self.alpha(),
            windows: self.windows,
            delivered_ce: self.delivered_ce,
            delivered: self.delivered,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One window of `segs` ACKs of one segment each, `marked` of them with ECE; the
    /// ACK clock keeps `segs` segments in flight (the test starts with SND.NXT one
    /// window ahead).
    fn window(d: &mut Dctcp, cc: &mut CcState, segs: u32, marked: u32) {
        for i in 0..segs {
            cc.snd_una += 1000;
            cc.snd_nxt += 1000;
            let ack = AckSample {
                acked_segs: 1,
                ece: i < marked,
                ..AckSample::default()
            };
            d.on_ack(&mut FlowCtx::alone(cc), &ack);
        }
    }

    #[test]
    fn alpha_tracks_the_marked_fraction() {
        let mut d = Dctcp::new(DctcpConfig::default());
        let mut cc = CcState::new(10, 1000);
        d.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        cc.snd_nxt = 10_000;
        // Without marks α decays from 1 by g = 1/16 a window.
        for _ in 0..10 {
            window(&mut d, &mut cc, 10, 0);
        }
        let expected = (15.0f64 / 16.0).powi(10);
        assert!((d.alpha() - expected).abs() < 0.02, "{}", d.alpha());
        // With a steady fraction F = 0.3 marked, α converges to F (Linux's integer
        // arithmetic settles within 2 % of it).
        for _ in 0..200 {
            window(&mut d, &mut cc, 10, 3);
        }
        assert!((d.alpha() - 0.3).abs() < 0.02, "{}", d.alpha());
        // And without marks it reaches zero in integer arithmetic.
        for _ in 0..400 {
            window(&mut d, &mut cc, 10, 0);
        }
        assert_eq!(d.alpha(), 0.0);
    }

    #[test]
    fn ecn_cuts_by_half_alpha_and_losses_by_half() {
        let mut d = Dctcp::new(DctcpConfig {
            alpha_on_init: 256,
            ..DctcpConfig::default()
        });
        let mut cc = CcState::new(100, 1000);
        // α = 1/4: cwnd · (1 − 1/8).
        assert_eq!(
            d.ssthresh(
                &mut FlowCtx::alone(&mut cc),
                Instant::ZERO,
                CongestionCause::Ecn
            ),
            88
        );
        assert_eq!(
            d.ssthresh(
                &mut FlowCtx::alone(&mut cc),
                Instant::ZERO,
                CongestionCause::Loss
            ),
            50
        );
        // α = 1 (the initial value): the first mark halves.
        let mut d = Dctcp::new(DctcpConfig::default());
        assert_eq!(
            d.ssthresh(
                &mut FlowCtx::alone(&mut cc),
                Instant::ZERO,
                CongestionCause::Ecn
            ),
            50
        );
        assert_eq!(d.undo_cwnd(&mut FlowCtx::alone(&mut cc), 0), 100);
    }

    #[test]
    fn config_errors_name_the_parameter() {
        let bad = DctcpConfig {
            shift_g: 11,
            ..DctcpConfig::default()
        };
        assert_eq!(bad.validate().unwrap_err().0, "shift_g");
        let bad = DctcpConfig {
            alpha_on_init: 1025,
            ..DctcpConfig::default()
        };
        assert_eq!(bad.validate().unwrap_err().0, "alpha_on_init");
    }
}
