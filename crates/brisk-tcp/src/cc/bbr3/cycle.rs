//! BBR v3's PROBE_BW state machine (google/bbr v3 `bbr_update_cycle_phase` and
//! the `bbr_start_bw_probe_*` functions; draft-ietf-ccwg-bbr §5.3.3):
//! DOWN (pacing gain 0.91) until inflight is at the BDP and below inflight_hi's
//! headroom, CRUISE (1.0) until it is time to probe, REFILL (1.0) for one round
//! with the lower bounds reset, UP (1.25, cwnd gain 2.25) until inflight_hi
//! stops it, loss/ECN says too high, or bandwidth plateaus; then DOWN again.
//! The time to probe is a random 2-3 s of wall clock or, for Reno coexistence,
//! min(63, BDP) rounds less a random 0-1 round, whichever comes first.

use super::*;

impl Bbr3 {
    /// Linux `bbr_pick_probe_wait`: the random round and wall-clock bounds on the
    /// wait, drawn from the connection's seed.
    pub(super) fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.rand_below(BW_PROBE_RAND_ROUNDS);
        self.probe_wait_us = BW_PROBE_BASE_US + self.rand_below(BW_PROBE_RAND_US);
    }

    /// Linux `bbr_set_cycle_idx`.
    fn set_cycle_idx(&mut self, phase: Phase) {
        self.cycle_idx = phase;
        self.try_fast_path = false;
    }

    /// Linux `bbr_start_bw_probe_refill`: send at the estimate for a round, lower
    /// bounds forgotten, before probing above it.
    pub(super) fn start_bw_probe_refill(&mut self, cc: &CcState, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = bw_probe_up_rounds.min(30);
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = cc.delivered;
        self.bw_probe_count += 1;
        self.set_cycle_idx(Phase::Refill);
    }

    /// Linux `bbr_start_bw_probe_up`.
    fn start_bw_probe_up(&mut self, cc: &CcState, now: Instant, ctx: &Ctx) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = cc.delivered;
        self.cycle_mstamp = now;
        self.reset_full_bw();
        self.full_bw = ctx.sample_bw;
        self.set_cycle_idx(Phase::Up);
        self.raise_inflight_hi_slope(cc);
    }

    /// Linux `bbr_start_bw_probe_down`: a new cycle; its wall clock starts now.
    pub(super) fn start_bw_probe_down(&mut self, cc: &CcState, now: Instant) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = UNSET;
        self.pick_probe_wait();
        self.cycle_mstamp = now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = cc.delivered;
        self.set_cycle_idx(Phase::Down);
    }

    /// Linux `bbr_start_bw_probe_cruise`.
    pub(super) fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != UNSET {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.set_cycle_idx(Phase::Cruise);
    }

    /// Linux `bbr_is_reno_coexistence_probe_time`.
    fn is_reno_coexistence_probe_time(&self, cc: &CcState) -> bool {
        let rounds = BW_PROBE_MAX_ROUNDS.min(self.target_inflight(cc));
        self.rounds_since_probe >= rounds
    }

    /// Linux `bbr_has_elapsed_in_phase`.
    fn has_elapsed_in_phase(&self, now: Instant, interval_us: u32) -> bool {
        now.as_micros() > self.cycle_mstamp.as_micros() + u64::from(interval_us)
    }

    /// Linux `bbr_check_time_to_probe_bw`: re-probe soon after CE marks without
    /// loss stop; else after the probe wait or the Reno-coexistence rounds.
    fn check_time_to_probe_bw(&mut self, cc: &CcState, now: Instant) -> bool {
        if self.ecn_eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && self.ca_state == CaState::Open
        {
            // 2^n is about inflight_hi · ecn_reprobe_gain.
            let vol = (u64::from(self.inflight_hi) * u64::from(ECN_REPROBE_GAIN)) >> BBR_SCALE;
            let n = if vol == 0 { 0 } else { vol.ilog2() };
            self.start_bw_probe_refill(cc, n);
            return true;
        }
        if self.has_elapsed_in_phase(now, self.probe_wait_us)
            || self.is_reno_coexistence_probe_time(cc)
        {
            self.start_bw_probe_refill(cc, 0);
            return true;
        }
        false
    }

    /// Linux `bbr_check_time_to_cruise`: the queue is drained once inflight is
    /// below inflight_hi's headroom and at most the BDP.
    fn check_time_to_cruise(&self, inflight: u32, bw: u32, mss: u32) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(bw, BBR_UNIT, mss)
    }

    /// Linux `bbr_update_cycle_phase`.
    pub(super) fn update_cycle_phase(
        &mut self,
        cc: &CcState,
        now: Instant,
        rs: &RateSample,
        ctx: &Ctx,
    ) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(cc, now, rs) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = self.packets_in_net_at_edt(cc, now, rs.prior_in_flight);
        let bw = self.max_bw();
        match self.cycle_idx {
            Phase::Cruise => {
                self.check_time_to_probe_bw(cc, now);
            }
            Phase::Refill => {
                // A round of REFILL: the samples now reflect it.
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(cc, now, ctx);
                }
            }
            Phase::Up => {
                let mut done = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    done = true;
                } else if cc.cwnd_blocked && cc.cwnd >= self.inflight_hi {
                    // inflight_hi limits the growth: not a plateau.
                    self.reset_full_bw();
                    self.full_bw = ctx.sample_bw;
                } else if self.full_bw_now {
                    done = true;
                }
                if done {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down(cc, now);
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(cc, now) {
                    return;
                }
                if self.check_time_to_cruise(inflight, bw, cc.mss) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }
}
