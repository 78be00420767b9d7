//! BBR v3's loss/ECN bounds on its model (google/bbr v3 `tcp_bbr.c`; draft-ietf-
//! ccwg-bbr §5.5.10 "Updating the Model Parameters When Congestion Is Observed"):
//! - the latest round's delivery rate and volume (`bw_latest`, `inflight_latest`),
//!   the floor every cut respects;
//! - short-term lower bounds `bw_lo`/`inflight_lo`, cut once per round with loss
//!   (by β = 30 %) or CE marks (by `ecn_alpha · 1/3`) while not probing;
//! - long-term upper bound `inflight_hi`: cut to the in-flight volume where a
//!   probe's loss passed 2 % (or CE 50 %), raised as probes get through clean;
//! - the max-bandwidth filter `bw_hi`, kept over the last 1-2 PROBE_BW cycles.

use super::*;

impl Bbr3 {
    /// Linux `bbr_take_max_bw_sample`.
    pub(super) fn take_max_bw_sample(&mut self, bw: u32) {
        self.bw_hi[1] = self.bw_hi[1].max(bw);
    }

    /// Linux `bbr_advance_max_bw_filter`: once per cycle the newer half becomes
    /// the older (unless it saw nothing).
    pub(super) fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] == 0 {
            return;
        }
        self.bw_hi[0] = self.bw_hi[1];
        self.bw_hi[1] = 0;
    }

    /// Linux `bbr_note_loss`: the first loss of a round starts a loss round that
    /// covers the whole flight (so `*_latest` see the full capacity).
    pub(super) fn note_loss(&mut self, cc: &CcState) {
        if !self.loss_in_round {
            self.loss_round_delivered = cc.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }

    /// Linux `bbr_update_latest_delivery_signals`.
    pub(super) fn update_latest_delivery_signals(
        &mut self,
        cc: &CcState,
        rs: &RateSample,
        ctx: &Ctx,
    ) {
        self.loss_round_start = false;
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(ctx.sample_bw);
        self.inflight_latest = self
            .inflight_latest
            .max(clamp_u32(rs.delivered.max(0) as u64));
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = cc.delivered;
            self.loss_round_start = true;
        }
    }

    /// Linux `bbr_advance_latest_delivery_signals`: once per loss round, the latest
    /// filters restart from this sample. (Linux keeps them when the ACK covers a
    /// TLP retransmission; brisk's sample does not say, so they always restart.)
    pub(super) fn advance_latest_delivery_signals(&mut self, rs: &RateSample, ctx: &Ctx) {
        if self.loss_round_start {
            self.bw_latest = ctx.sample_bw;
            self.inflight_latest = clamp_u32(rs.delivered.max(0) as u64);
        }
    }

    /// Linux `bbr_update_congestion_signals`: the max filter, loss in the round,
    /// and once per loss round the lower bounds.
    pub(super) fn update_congestion_signals(&mut self, cc: &CcState, rs: &RateSample, ctx: &Ctx) {
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        let bw = ctx.sample_bw;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.take_max_bw_sample(bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(cc);
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// Linux `bbr_init_lower_bounds`.
    fn init_lower_bounds(&mut self, cc: &CcState, init_bw: bool) {
        if init_bw && self.bw_lo == UNSET {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == UNSET {
            self.inflight_lo = cc.cwnd;
        }
    }

    /// Linux `bbr_ecn_cut`: 1 − ecn_alpha · ecn_factor.
    pub(super) fn ecn_cut(&self) -> u32 {
        BBR_UNIT - ((self.ecn_alpha * ECN_FACTOR) >> BBR_SCALE)
    }

    /// Linux `bbr_adapt_lower_bounds`: outside probing, a round with CE marks cuts
    /// inflight_lo by the ECN factor, a round with loss cuts bw_lo and inflight_lo
    /// by β, never below the latest round's delivery.
    pub(super) fn adapt_lower_bounds(&mut self, cc: &CcState) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = UNSET;
        if self.ecn_in_round {
            self.init_lower_bounds(cc, false);
            ecn_inflight_lo =
                clamp_u32((u64::from(self.inflight_lo) * u64::from(self.ecn_cut())) >> BBR_SCALE);
        }
        if self.loss_in_round {
            self.init_lower_bounds(cc, true);
            let loss_cut = u64::from(BBR_UNIT - BETA);
            self.bw_lo = self
                .bw_latest
                .max(clamp_u32((u64::from(self.bw_lo) * loss_cut) >> BBR_SCALE));
            self.inflight_lo = self.inflight_latest.max(clamp_u32(
                (u64::from(self.inflight_lo) * loss_cut) >> BBR_SCALE,
            ));
        }
        if self.ecn_in_round || self.loss_in_round {
            self.lower_bound_cuts += 1;
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.max(1);
    }

    /// Linux `bbr_reset_lower_bounds`.
    pub(super) fn reset_lower_bounds(&mut self) {
        self.bw_lo = UNSET;
        self.inflight_lo = UNSET;
    }

    /// Linux `bbr_reset_congestion_signals`.
    pub(super) fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// Linux `bbr_is_inflight_too_high`: this sample's loss rate above 2 % of what
    /// was in flight at its send, or (ECN in use) its CE ratio above 50 %.
    pub(super) fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        if rs.lost > 0 && rs.tx_in_flight > 0 {
            let loss_thresh = (u64::from(rs.tx_in_flight) * u64::from(LOSS_THRESH)) >> BBR_SCALE;
            if u64::from(rs.lost) > loss_thresh {
                return true;
            }
        }
        if rs.delivered_ce > 0 && rs.delivered > 0 && self.ecn_eligible {
            let ecn_thresh = (rs.delivered as u64 * u64::from(ECN_THRESH)) >> BBR_SCALE;
            if u64::from(rs.delivered_ce) > ecn_thresh {
                return true;
            }
        }
        false
    }

    /// Linux `bbr_handle_inflight_too_high`: once per probe, inflight_hi comes down
    /// to what was in flight (at least 70 % of the target), and PROBE_UP ends.
    pub(super) fn handle_inflight_too_high(&mut self, cc: &CcState, now: Instant, rs: &RateSample) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        self.inflight_too_high_count += 1;
        if !rs.is_app_limited {
            let floor =
                (u64::from(self.target_inflight(cc)) * u64::from(BBR_UNIT - BETA)) >> BBR_SCALE;
            self.inflight_hi = rs.tx_in_flight.max(clamp_u32(floor));
        }
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            self.start_bw_probe_down(cc, now);
        }
    }

    /// Linux `bbr_inflight_with_headroom`: 85 % of inflight_hi, at least 4.
    pub(super) fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == UNSET {
            return UNSET;
        }
        let headroom =
            ((u64::from(self.inflight_hi) * u64::from(INFLIGHT_HEADROOM)) >> BBR_SCALE).max(1);
        (self.inflight_hi - headroom as u32).max(CWND_MIN_TARGET)
    }

    /// Linux `bbr_bound_cwnd_for_inflight_model`: inflight_hi while probing
    /// (headroom below it while cruising or in PROBE_RTT), and inflight_lo always.
    pub(super) fn bound_cwnd_for_inflight_model(&mut self, cc: &mut CcState) {
        let mut cap = UNSET;
        if self.mode == Mode::ProbeBw && self.cycle_idx != Phase::Cruise {
            cap = self.inflight_hi;
        } else if self.mode == Mode::ProbeRtt
            || (self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Cruise)
        {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo).max(CWND_MIN_TARGET);
        cc.cwnd = cc.cwnd.min(cap);
    }

    /// Linux `bbr_raise_inflight_hi_slope`: each PROBE_UP round doubles the
    /// growth of inflight_hi.
    pub(super) fn raise_inflight_hi_slope(&mut self, cc: &CcState) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (cc.cwnd / growth_this_round).max(1);
    }

    /// Linux `bbr_probe_inflight_hi_upward`: cwnd-limited at inflight_hi without
    /// too much loss/ECN, so raise it by one per `bw_probe_up_cnt` packets ACKed.
    fn probe_inflight_hi_upward(&mut self, cc: &CcState, rs: &RateSample) {
        if !cc.cwnd_blocked || cc.cwnd < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks += rs.acked_sacked;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
            self.try_fast_path = false;
        }
        if self.round_start {
            self.raise_inflight_hi_slope(cc);
        }
    }

    /// Linux `bbr_adapt_upper_bounds`: follows the probe's feedback; too much
    /// loss/ECN cuts inflight_hi, clean samples raise it. Returns whether it
    /// decided a state transition.
    pub(super) fn adapt_upper_bounds(
        &mut self,
        cc: &CcState,
        now: Instant,
        rs: &RateSample,
    ) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // The probe's samples are over: the best moment to forget the previous
            // cycle's bandwidth.
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
            // Stopped at inflight_hi without trouble: probe again, holding
            // inflight_hi for a round first.
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(cc, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(cc, now, rs);
            }
        } else {
            if self.inflight_hi == UNSET {
                return false;
            }
            // Resilience to random loss: any phase that safely carried more raises
            // the bound.
            if rs.tx_in_flight > self.inflight_hi {
                self.inflight_hi = rs.tx_in_flight;
            }
            if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
                self.probe_inflight_hi_upward(cc, rs);
            }
        }
        false
    }

    /// Linux `bbr_run_loss_probe_recovery`: a tail-loss probe repaired one loss;
    /// if that was too much while probing, react as for any too-high probe.
    pub(super) fn run_loss_probe_recovery(&mut self, cc: &CcState, now: Instant) {
        self.note_loss(cc);
        if !self.bw_probe_samples {
            return;
        }
        let rs = RateSample {
            lost: 1,
            tx_in_flight: self.inflight_latest.saturating_add(1),
            // Linux uses the probed segment's app-limited mark; the connection's
            // is the nearest brisk has here.
            is_app_limited: cc.rate.app_limited != 0,
            ..RateSample::default()
        };
        if self.is_inflight_too_high(&rs) {
            self.handle_inflight_too_high(cc, now, &rs);
        }
    }
}
