//! ABE, Alternative Backoff with ECN (RFC 8511; Khademi et al. 2015, RITE D1.3
//! App. E.1 and body §6.1), as a layer around any base controller.
//!
//! An ECN mark says an AQM with a short queue saw congestion, so the sender backs off
//! less: on an ECN-triggered reduction `ssthresh = max(β_ecn·cwnd, 2)`. Loss keeps the
//! base controller's β. The same β_ecn applies in slow start (the first mark ends it)
//! and in congestion avoidance. "At most once per RTT" is the connection's CWR state,
//! which ignores ECE until the window in flight at the mark is ACKed (RFC 3168 §6.1.2).
//!
//! Defaults: β_ecn = 0.8 for Reno (RFC 8511 §3) and 0.85 for CUBIC (the paper's §6
//! recommendation). There is no mainline Linux function: the paper's authors patched
//! FreeBSD's NewReno and Linux's CUBIC with separate sysctls for β and β_ecn, and
//! `beta_loss` is the first of those: it replaces the base controller's β for every
//! reduction other than ECN's (losses, probes, RTOs), for experiments such as the
//! paper's model check (abe-model) that need an AIMD flow with another loss β.
//!
//! Where the paper is silent (spec [AMB-E-1]): the base controller still runs its own
//! reduction bookkeeping (CUBIC resets its epoch and sets W_max, with fast convergence
//! at `(1 + β)/2` of its own β); only the new ssthresh is β_ecn's. CUBIC's K then
//! follows from the smaller drop (K = ∛((W_max − cwnd)/C) at the next epoch), so the
//! curve starts from the ABE window. docs/mechanisms/abe.md records the choice.

use super::{CcAlgorithm, CcLayer, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::Instant;

/// The layer's tag in labels: "cubic+abe".
pub const TAG: &str = "abe";

/// Tunables. `beta_ecn = None` takes the base controller's recommended value.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct AbeConfig {
    pub beta_ecn: Option<f64>,
    /// The decrease for every other cause; None keeps the base controller's.
    pub beta_loss: Option<f64>,
}

/// RFC 8511's and the paper's recommended β_ecn for a base controller.
pub fn default_beta_ecn(base: CcAlgorithm) -> f64 {
    match base {
        CcAlgorithm::Reno => 0.8,
        _ => 0.85,
    }
}

#[derive(Debug)]
pub struct Abe {
    inner: Box<dyn CongestionControl>,
    beta_ecn: f64,
    beta_loss: Option<f64>,
}

impl Abe {
    /// `beta_ecn` in (0, 1]; the factory clamps a configured value into that range.
    pub fn new(inner: Box<dyn CongestionControl>, beta_ecn: f64) -> Self {
        Abe {
            inner,
            beta_ecn: beta_ecn.clamp(f64::MIN_POSITIVE, 1.0),
            beta_loss: None,
        }
    }

    /// Replaces the base controller's β for every reduction other than ECN's.
    pub fn with_beta_loss(mut self, beta_loss: Option<f64>) -> Self {
        self.beta_loss = beta_loss.map(|b| b.clamp(f64::MIN_POSITIVE, 1.0));
        self
    }
}

impl CcLayer for Abe {
    fn tag(&self) -> &'static str {
        TAG
    }
    fn inner(&self) -> &dyn CongestionControl {
        self.inner.as_ref()
    }
    fn inner_mut(&mut self) -> &mut dyn CongestionControl {
        self.inner.as_mut()
    }
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, now: Instant, cause: CongestionCause) -> u32 {
        // The base controller updates its own state for the reduction in any case.
        let base = self.inner.ssthresh(cc, now, cause);
        let beta = if cause == CongestionCause::Ecn {
            self.beta_ecn
        } else {
            match self.beta_loss {
                Some(b) => b,
                None => return base,
            }
        };
        ((f64::from(cc.cwnd) * beta) as u32).max(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{cubic::Cubic, reno::Reno, CcState};

    fn state(cwnd: u32) -> CcState {
        CcState {
            cwnd,
            ssthresh: u32::MAX,
            ..CcState::default()
        }
    }

    #[test]
    fn ecn_reductions_use_beta_ecn_and_losses_the_base_beta() {
        let mut reno = Abe::new(Box::new(Reno), default_beta_ecn(CcAlgorithm::Reno));
        let mut cc = state(100);
        assert_eq!(
            CongestionControl::ssthresh(
                &mut reno,
                &mut FlowCtx::alone(&mut cc),
                Instant::ZERO,
                CongestionCause::Ecn
            ),
            80
        );
        assert_eq!(
            CongestionControl::ssthresh(
                &mut reno,
                &mut FlowCtx::alone(&mut cc),
                Instant::ZERO,
                CongestionCause::Loss
            ),
            50
        );
        let mut cubic = Abe::new(
            Box::new(Cubic::default()),
            default_beta_ecn(CcAlgorithm::Cubic),
        );
        assert_eq!(
            CongestionControl::ssthresh(
                &mut cubic,
                &mut FlowCtx::alone(&mut cc),
                Instant::ZERO,
                CongestionCause::Ecn
            ),
            85
        );
        assert_eq!(
            CongestionControl::ssthresh(
                &mut cubic,
                &mut FlowCtx::alone(&mut cc),
                Instant::ZERO,
                CongestionCause::Loss
            ),
            70
        );
        assert_eq!(CongestionControl::label(&cubic), "cubic+abe");
    }

    #[test]
    fn a_loss_beta_replaces_the_base_one_for_every_other_cause() {
        let mut a = Abe::new(Box::new(Reno), 0.8).with_beta_loss(Some(0.7));
        let mut cc = state(100);
        for cause in [
            CongestionCause::Loss,
            CongestionCause::ProbeLoss,
            CongestionCause::Rto,
        ] {
            assert_eq!(
                CongestionControl::ssthresh(
                    &mut a,
                    &mut FlowCtx::alone(&mut cc),
                    Instant::ZERO,
                    cause
                ),
                70
            );
        }
        assert_eq!(
            CongestionControl::ssthresh(
                &mut a,
                &mut FlowCtx::alone(&mut cc),
                Instant::ZERO,
                CongestionCause::Ecn
            ),
            80
        );
    }

    #[test]
    fn the_floor_is_two_segments() {
        let mut a = Abe::new(Box::new(Reno), 0.5);
        let mut cc = state(3);
        assert_eq!(
            CongestionControl::ssthresh(
                &mut a,
                &mut FlowCtx::alone(&mut cc),
                Instant::ZERO,
                CongestionCause::Ecn
            ),
            2
        );
    }

    #[test]
    fn any_beta_ecn_in_range_is_exact() {
        for (b, want) in [(0.5, 50), (0.7, 70), (0.95, 95), (1.0, 100)] {
            let mut a = Abe::new(Box::new(Reno), b);
            assert_eq!(
                CongestionControl::ssthresh(
                    &mut a,
                    &mut FlowCtx::alone(&mut state(100)),
                    Instant::ZERO,
                    CongestionCause::Ecn
                ),
                want
            );
        }
    }
}
