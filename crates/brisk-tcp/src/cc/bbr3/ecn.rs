//! BBR v3's ECN signal (google/bbr v3 `bbr_update_ecn_alpha`,
//! `bbr_check_ecn_too_high_in_startup`; draft-ietf-ccwg-bbr §5.5.10.3 is silent on
//! ECN beyond "may", so the v3 source is the reference). Used only when ECN was
//! negotiated and the min RTT is at most 5 ms (Linux also needs the route's
//! `ecn_low` feature; brisk takes negotiation as the sign, see bbr3.md). Once per
//! round, the CE ratio of the round's deliveries moves `ecn_alpha` by 1/16; in
//! STARTUP two rounds above 50 % end it.

use super::*;

impl Bbr3 {
    /// Linux `bbr_update_ecn_alpha` (without PLB): returns the round's CE ratio
    /// (<< 8), `None` when ECN is not in use or nothing was delivered.
    pub(super) fn update_ecn_alpha(&mut self, cc: &CcState) -> Option<u32> {
        if !self.ecn_eligible && cc.ecn_ok && self.min_rtt_us <= ECN_MAX_RTT_US {
            self.ecn_eligible = true;
        }
        if !self.ecn_eligible {
            return None;
        }
        let delivered = cc.delivered.saturating_sub(self.alpha_last_delivered);
        let delivered_ce = cc
            .rate
            .delivered_ce
            .saturating_sub(self.alpha_last_delivered_ce);
        if delivered == 0 {
            return None;
        }
        let ce_ratio = ((delivered_ce << BBR_SCALE) / delivered).min(u64::from(BBR_UNIT)) as u32;
        let alpha = (((BBR_UNIT - ECN_ALPHA_GAIN) * self.ecn_alpha) >> BBR_SCALE)
            + ((ECN_ALPHA_GAIN * ce_ratio) >> BBR_SCALE);
        self.ecn_alpha = alpha.min(BBR_UNIT);
        self.alpha_last_delivered = cc.delivered;
        self.alpha_last_delivered_ce = cc.rate.delivered_ce;
        self.check_ecn_too_high_in_startup(cc, ce_ratio);
        Some(ce_ratio)
    }

    /// Linux `bbr_check_ecn_too_high_in_startup`.
    fn check_ecn_too_high_in_startup(&mut self, cc: &CcState, ce_ratio: u32) {
        if self.full_bw_reached || !self.ecn_eligible {
            return;
        }
        if ce_ratio >= ECN_THRESH {
            self.startup_ecn_rounds += 1;
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= FULL_ECN_CNT {
            self.handle_queue_too_high_in_startup(cc, StartupExit::Ecn);
        }
    }
}
