//! BBR v3's STARTUP exits and DRAIN (google/bbr v3 `bbr_check_full_bw_reached`,
//! `bbr_check_loss_too_high_in_startup`, `bbr_handle_queue_too_high_in_startup`,
//! `bbr_check_drain`; draft-ietf-ccwg-bbr §5.3.1.2-5.3.2). STARTUP ends on the
//! first of: the bandwidth grew less than 25 % in 3 rounds; a recovery round had 6
//! or more loss events and its loss rate passed 2 %; CE marks passed 50 % for 2
//! rounds (`ecn.rs`). After a loss or ECN exit, inflight_hi starts at the BDP (or
//! the latest round's volume if larger).

use super::*;

impl Bbr3 {
    /// Linux `bbr_handle_queue_too_high_in_startup`.
    pub(super) fn handle_queue_too_high_in_startup(&mut self, cc: &CcState, why: StartupExit) {
        self.full_bw_reached = true;
        self.startup_exit.get_or_insert(why);
        let bdp = self.inflight(self.max_bw(), BBR_UNIT, cc.mss);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    /// Linux `bbr_check_loss_too_high_in_startup`: checked at the end of each round
    /// of a recovery episode, where the extent of the loss is known.
    pub(super) fn check_loss_too_high_in_startup(&mut self, cc: &CcState, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < 0xf {
            self.loss_events_in_round += 1;
        }
        if self.loss_round_start
            && self.ca_state == CaState::Recovery
            && self.loss_events_in_round >= FULL_LOSS_CNT
            && self.is_inflight_too_high(rs)
        {
            self.handle_queue_too_high_in_startup(cc, StartupExit::Loss);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// Linux v3 `bbr_check_full_bw_reached`: a plateau of 3 non-app-limited rounds
    /// under +25 % (also PROBE_UP's plateau test, through `full_bw_now`).
    pub(super) fn check_full_bw_reached(&mut self, rs: &RateSample, ctx: &Ctx) {
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        let bw_thresh = (u64::from(self.full_bw) * u64::from(FULL_BW_THRESH)) >> BBR_SCALE;
        if u64::from(ctx.sample_bw) >= bw_thresh {
            self.reset_full_bw();
            self.full_bw = ctx.sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= FULL_BW_CNT;
        if self.full_bw_now && !self.full_bw_reached {
            self.startup_exit.get_or_insert(StartupExit::FullBw);
        }
        self.full_bw_reached |= self.full_bw_now;
    }

    /// Linux v3 `bbr_check_drain`: STARTUP → DRAIN once the pipe is full, DRAIN →
    /// PROBE_BW (DOWN) once the queue is gone.
    pub(super) fn check_drain(&mut self, cc: &mut CcState, now: Instant) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            // For monitoring only, as Linux: ssthresh says STARTUP is over.
            cc.ssthresh = self.inflight(self.max_bw(), BBR_UNIT, cc.mss);
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(cc, now, cc.in_flight)
                <= self.inflight(self.max_bw(), BBR_UNIT, cc.mss)
        {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(cc, now);
        }
    }
}
