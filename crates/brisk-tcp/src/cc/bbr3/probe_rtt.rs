//! BBR v3's min-RTT filters and PROBE_RTT (google/bbr v3 `bbr_update_min_rtt`,
//! `bbr_check_probe_rtt_done`, `bbr_exit_probe_rtt`; draft-ietf-ccwg-bbr §5.3.4):
//! a 5 s filter (`probe_rtt_min_us`) schedules PROBE_RTT, whose cwnd is half the
//! BDP for max(200 ms, one round); the 10 s filter (`min_rtt_us`) takes the 5 s
//! one's value when lower or expired. Exit goes to PROBE_BW's CRUISE (lower bounds
//! reset, a new probe wait) or back to STARTUP.

use super::*;

impl Bbr3 {
    /// Linux v3 `bbr_update_min_rtt`.
    pub(super) fn update_min_rtt(&mut self, cc: &mut CcState, now: Instant, rs: &RateSample) {
        let probe_rtt_expired = now > self.probe_rtt_min_stamp + PROBE_RTT_WIN;
        if rs.rtt_us >= 0
            && (rs.rtt_us < i64::from(self.probe_rtt_min_us)
                || (probe_rtt_expired && !rs.is_ack_delayed))
        {
            self.probe_rtt_min_us = clamp_u32(rs.rtt_us as u64);
            self.probe_rtt_min_stamp = now;
        }
        let min_rtt_expired = now > self.min_rtt_stamp + MIN_RTT_WIN;
        if self.probe_rtt_min_us <= self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        if probe_rtt_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(cc.cwnd);
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = cc.delivered;
            self.probe_rtt_count += 1;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore the low rate samples this mode makes.
            cc.rate.app_limited = (cc.delivered + u64::from(cc.in_flight)).max(1);
            if self.probe_rtt_done_stamp.is_none() && cc.in_flight <= self.probe_rtt_cwnd() {
                self.probe_rtt_done_stamp = Some(now + PROBE_RTT_MODE);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = cc.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(cc, now);
                }
            }
        }
        // An idle restart ends with the first ACK of new data.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// Linux v3 `bbr_check_probe_rtt_done`.
    pub(super) fn check_probe_rtt_done(&mut self, cc: &mut CcState, now: Instant) {
        match self.probe_rtt_done_stamp {
            Some(done) if now > done => {}
            _ => return,
        }
        self.probe_rtt_min_stamp = now;
        cc.cwnd = cc.cwnd.max(self.prior_cwnd).min(cc.cwnd_clamp);
        self.exit_probe_rtt(cc, now);
    }

    /// Linux `bbr_exit_probe_rtt`.
    fn exit_probe_rtt(&mut self, cc: &CcState, now: Instant) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            // A new, random wait before the next probe; inflight is below the BDP,
            // so cruise.
            self.start_bw_probe_down(cc, now);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }
}
