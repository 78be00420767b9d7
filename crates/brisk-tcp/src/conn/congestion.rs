//! The connection's congestion part: the one path by which congestion signals reach
//! the controller and the one place where the connection writes cwnd.
//!
//! - [`Connection::congestion_response`] is the funnel for every window reduction
//!   (loss, tail-loss probe, ECN, RTO): ssthresh from the controller with its cause,
//!   then the window, then the controller's event. Linux spreads this over
//!   `tcp_enter_recovery`, `tcp_enter_cwr`, `tcp_process_tlp_ack` and `tcp_enter_loss`.
//! - [`Connection::set_cwnd`] is the only connection-side writer of cwnd (PRR, exits,
//!   undo, idle restart, the clamp); controllers write it only in `cong_avoid`.
//! - The CA-state transitions (Linux `tcp_set_ca_state`): recovery, CWR, their exit,
//!   and restart after idle (`tcp_cwnd_restart`).

use super::{CaState, Connection};
use crate::cc::{CcEvent, CongestionCause};
use crate::conn::timer::Timer;
use crate::event::TraceEvent;
use brisk_time::{Duration, Instant};

impl Connection {
    /// The window's response to a congestion signal. With `cut`, the controller is
    /// asked for the new ssthresh (never below 2) with `cause`; then the window moves
    /// as the cause demands and the controller hears the matching event:
    /// - `Loss`: fast recovery starts; PRR (the caller) will own cwnd.
    /// - `Ecn`, `BundleLoss`, `Delay`: CWR starts (RFC 3168 §6.1.2; the RDB patch's
    ///   `tcp_enter_cwr`; a controller's own request, as CDG's backoff); PRR owns
    ///   cwnd. (A layer's delay signal reaches its base inside the layer, not here.)
    /// - `ProbeLoss`: RFC 8985 §7.4.2, reduce at once to ssthresh.
    /// - `Rto`: cwnd collapses to one segment (RFC 5681 §3.1).
    ///
    /// A repeated RTO within one episode calls this with `cut == false`: the window
    /// still collapses and the controller still hears `Rto`. Returns ssthresh.
    pub(super) fn congestion_response(
        &mut self,
        now: Instant,
        cause: CongestionCause,
        cut: bool,
    ) -> u32 {
        self.refresh_cc_state();
        if cut {
            let ss = self
                .sub
                .cong
                .ctrl
                .ssthresh(&mut self.sub.cong.vars, now, cause)
                .max(2);
            self.sub.cong.vars.ssthresh = ss;
        }
        let ss = self.sub.cong.vars.ssthresh;
        match cause {
            CongestionCause::Loss => self.cc_event(now, CcEvent::EnterRecovery),
            CongestionCause::Ecn | CongestionCause::BundleLoss | CongestionCause::Delay => {
                self.cc_event(now, CcEvent::EnterCwr)
            }
            CongestionCause::ProbeLoss => {
                self.cc_event(now, CcEvent::EnterCwr);
                self.set_cwnd(ss);
            }
            CongestionCause::Rto => {
                self.set_cwnd(1);
                self.sub.cong.vars.cwnd_cnt = 0;
                self.cc_event(now, CcEvent::Rto);
            }
        }
        ss
    }

    /// The connection's only write of cwnd: clamped to [1, cwnd_clamp].
    pub(super) fn set_cwnd(&mut self, cwnd: u32) {
        self.sub.cong.vars.cwnd = cwnd.clamp(1, self.sub.cong.vars.cwnd_clamp.max(1));
    }

    /// An event for the controller (Linux `cwnd_event` / `set_state`).
    pub(super) fn cc_event(&mut self, now: Instant, ev: CcEvent) {
        self.sub
            .cong
            .ctrl
            .on_event(&mut self.sub.cong.vars, now, ev);
    }

    /// Refreshes the read-only variables the controller sees.
    pub(super) fn refresh_cc_state(&mut self) {
        self.sub.cong.vars.in_flight = self.sub.loss.board.in_flight();
        self.sub.cong.vars.srtt = self.sub.loss.rtt.srtt().unwrap_or(Duration::ZERO);
        self.sub.cong.vars.min_rtt = self.sub.loss.rtt.min_rtt().unwrap_or(Duration::ZERO);
        self.sub.cong.vars.cwnd_limited = if self.sub.cong.vars.in_slow_start() {
            self.sub.cong.vars.cwnd < 2 * self.sub.cong.max_packets_out
        } else {
            self.sub.cong.is_cwnd_limited
        };
        self.sub.cong.vars.cwnd_blocked = self.sub.cong.is_cwnd_limited;
        self.sub.cong.vars.snd_una = self.sub.snd.snd_una;
        self.sub.cong.vars.snd_nxt = self.sub.snd.snd_nxt;
        self.sub.cong.vars.sacked_out = self.sub.loss.board.sacked_out();
    }

    /// Linux `tcp_enter_recovery`: a new undo episode; the window is reduced unless a
    /// CWR reduction is already under way, which simply continues. The window before
    /// it is saved for an undo unless ECE came with the loss (`ece`).
    pub(super) fn enter_recovery(&mut self, now: Instant, prior_in_flight: u32, ece: bool) {
        self.refresh_cc_state();
        self.sub.loss.undo.forbid_restore();
        self.sub
            .loss
            .undo
            .start(self.sub.snd.snd_una, self.sub.loss.board.retrans_out());
        if self.sub.cong.ca_state != CaState::Cwr {
            let (cwnd, ssthresh) = (self.sub.cong.vars.cwnd, self.sub.cong.vars.ssthresh);
            self.sub.loss.undo.set_prior_cwnd(cwnd);
            if !ece {
                let prior = crate::recovery::undo::current_ssthresh(cwnd, ssthresh, false);
                self.sub.loss.undo.save(cwnd, Some(prior));
            }
            self.init_cwnd_reduction();
            let ss = self.congestion_response(now, CongestionCause::Loss, true);
            self.sub.loss.prr.enter(ss, prior_in_flight.max(1));
            self.sub.loss.high_seq = self.sub.snd.snd_nxt;
        }
        self.sub.cong.ca_state = CaState::Recovery;
        self.sub.timers.stop(Timer::Tlp);
        self.trace(TraceEvent::Recovery {
            at: now,
            enter: true,
        });
    }

    /// Linux `tcp_enter_cwr`: a reduction over one window by PRR, never undone. The
    /// cause is ECN (RFC 3168 §6.1.2) or a loss RDB's bundles hid (`crate::rdb`).
    pub(super) fn enter_cwr(&mut self, now: Instant, prior_in_flight: u32, cause: CongestionCause) {
        self.refresh_cc_state();
        self.sub.loss.undo.forbid_restore();
        self.sub.loss.undo.cancel();
        self.sub.loss.undo.set_prior_cwnd(self.sub.cong.vars.cwnd);
        self.init_cwnd_reduction();
        let ss = self.congestion_response(now, cause, true);
        self.sub.loss.prr.enter(ss, prior_in_flight.max(1));
        self.sub.loss.high_seq = self.sub.snd.snd_nxt;
        self.sub.cong.ca_state = CaState::Cwr;
        match cause {
            CongestionCause::Ecn => self.info.ecn_cwr += 1,
            CongestionCause::Delay => self.info.delay_cwr += 1,
            _ => {}
        }
        // The CWR flag answers ECE (RFC 3168 §6.1.2) and nothing else.
        self.sub.cong.cwr_pending = cause == CongestionCause::Ecn;
    }

    pub(super) fn exit_recovery(&mut self, now: Instant) {
        let was_recovery = self.sub.cong.ca_state == CaState::Recovery;
        if self.sub.cong.vars.ssthresh < u32::MAX {
            self.set_cwnd(self.sub.cong.vars.ssthresh.max(1));
        }
        self.sub.cong.ca_state = CaState::Open;
        self.sub
            .cong
            .ctrl
            .on_event(&mut self.sub.cong.vars, now, CcEvent::ExitRecovery);
        if was_recovery {
            self.trace(TraceEvent::Recovery {
                at: now,
                enter: false,
            });
        }
    }

    /// RFC 8985 §7.4.2: the probe repaired a loss; reduce as for a loss, at once
    /// (Linux `tcp_process_tlp_ack`).
    pub(super) fn tlp_loss_response(&mut self, now: Instant) {
        if self.sub.cong.ca_state >= CaState::Cwr {
            return;
        }
        self.refresh_cc_state();
        // Linux `tcp_init_cwnd_reduction` records the window it reduces.
        self.sub.loss.undo.set_prior_cwnd(self.sub.cong.vars.cwnd);
        self.init_cwnd_reduction();
        self.congestion_response(now, CongestionCause::ProbeLoss, true);
    }

    /// What Linux `tcp_init_cwnd_reduction` resets when a reduction starts (recovery,
    /// CWR, a TLP-detected loss): the additive-increase credit, so the credit earned at
    /// the old window does not buy an early increment after the reduction (without it,
    /// most recovery exits ended one segment above ssthresh).
    fn init_cwnd_reduction(&mut self) {
        self.sub.cong.vars.cwnd_cnt = 0;
    }

    /// Transmission restarts with nothing in flight (Linux `tcp_event_data_sent` raising
    /// CA_EVENT_TX_START, and `tcp_slow_start_after_idle_check`). CUBIC shifts its epoch
    /// by the idle time; after idling longer than the RTO, cwnd decays towards the
    /// initial window, halving once per RTO of idleness (RFC 5681 §4.1, RFC 2861 as Linux
    /// `tcp_cwnd_restart` implements it).
    pub(super) fn on_tx_start(&mut self, now: Instant) {
        let Some(last) = self.sub.cong.last_data_sent else {
            return;
        };
        let idle = now - last;
        self.sub
            .cong
            .ctrl
            .on_event(&mut self.sub.cong.vars, now, CcEvent::TxStart { idle });
        let rto = self.current_rto();
        // With new-CWV, idle time is governed by its NVP instead (RFC 7661 §4.4; spec C10).
        let new_cwv = self.config.congestion.controller.new_cwv().is_some();
        if !self.config.congestion.slow_start_after_idle
            || new_cwv
            || idle <= rto
            || self.in_reduction()
        {
            return;
        }
        let cwnd = self.sub.cong.vars.cwnd;
        // Linux `tcp_current_ssthresh`: remember 3/4 of the window we are leaving.
        self.sub.cong.vars.ssthresh = self.sub.cong.vars.ssthresh.max((cwnd >> 1) + (cwnd >> 2));
        let restart = self.config.congestion.initial_cwnd.min(cwnd).max(1);
        let mut w = cwnd;
        let mut left = idle;
        while left > rto && w > restart {
            left -= rto;
            w >>= 1;
        }
        self.set_cwnd(w.max(restart));
        self.sub.cong.vars.cwnd_cnt = 0;
        self.refresh_cc_state();
        self.cc_event(now, CcEvent::CwndRestart);
        self.trace_cwnd(now);
    }

    /// In fast recovery or CWR, where PRR owns cwnd.
    pub(super) fn in_reduction(&self) -> bool {
        matches!(self.sub.cong.ca_state, CaState::Recovery | CaState::Cwr)
    }
}
