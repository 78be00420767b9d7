//! Congestion control's part ([`Congestion`]) and the connection's orchestration of
//! the window's responses.
//!
//! - [`Congestion::on_cause`] is the one funnel for every window reduction (loss,
//!   tail-loss probe, ECN, RDB's hidden loss, a controller's delay signal, RTO):
//!   ssthresh from the controller with its cause, then the window, then the
//!   controller's event. Linux spreads this over `tcp_enter_recovery`,
//!   `tcp_enter_cwr`, `tcp_process_tlp_ack` and `tcp_enter_loss`.
//! - [`Congestion::set_cwnd`] is the only connection-side writer of cwnd (PRR, exits,
//!   undo, idle restart, the clamp); controllers write it only in `cong_avoid`.
//! - The part reads nothing of loss recovery's fields: what it needs comes as a
//!   [`LossView`] or as a cause. The CA-state transitions (Linux `tcp_set_ca_state`)
//!   are loss recovery's (`loss.rs`, `undo.rs`); the connection joins the two halves
//!   here: recovery, CWR, the steps an undo concluded, restart after idle.

use super::loss::LossView;
use super::pacing;
use super::parts::Congestion;
use super::undo::{CcStep, CcSteps};
use super::Connection;
use crate::cc::{AckSample, CcEvent, CongestionCause, SentInfo};
use crate::event::{TraceEvent, UndoKind};
use crate::rate;
use crate::recovery::undo::Prior as SavedWindow;
use brisk_time::{Duration, Instant};

impl Congestion {
    /// Refreshes the read-only variables the controller sees.
    #[inline]
    pub fn refresh(&mut self, v: &LossView, snd_una: u64, snd_nxt: u64) {
        self.vars.in_flight = v.in_flight;
        self.vars.srtt = v.srtt;
        self.vars.min_rtt = v.min_rtt;
        self.vars.cwnd_limited = if self.vars.in_slow_start() {
            self.vars.cwnd < 2 * self.max_packets_out
        } else {
            self.is_cwnd_limited
        };
        self.vars.cwnd_blocked = self.is_cwnd_limited;
        self.vars.snd_una = snd_una;
        self.vars.snd_nxt = snd_nxt;
        self.vars.sacked_out = v.sacked_out;
    }

    /// The connection's only write of cwnd: clamped to [1, cwnd_clamp].
    #[inline]
    pub fn set_cwnd(&mut self, cwnd: u32) {
        self.vars.cwnd = cwnd.clamp(1, self.vars.cwnd_clamp.max(1));
    }

    /// (cwnd, ssthresh).
    #[inline]
    pub fn window(&self) -> (u32, u32) {
        (self.vars.cwnd, self.vars.ssthresh)
    }

    /// Whether cwnd lets one more packet go with `in_flight` out.
    #[inline]
    pub fn has_room(&self, in_flight: u32) -> bool {
        in_flight < self.vars.cwnd
    }

    /// An event for the controller (Linux `cwnd_event` / `set_state`).
    #[inline]
    pub fn event(&mut self, now: Instant, ev: CcEvent) {
        self.ctrl.on_event(&mut self.vars, now, ev);
    }

    /// The window's response to a congestion signal. With `cut`, the controller is
    /// asked for the new ssthresh (never below 2) with `cause`; then the window moves
    /// as the cause demands and the controller hears the matching event:
    /// - `Loss`: fast recovery starts; PRR (loss recovery) will own cwnd.
    /// - `Ecn`, `BundleLoss`, `Delay`: CWR starts (RFC 3168 §6.1.2; the RDB patch's
    ///   `tcp_enter_cwr`; a controller's own request, as CDG's backoff); PRR owns
    ///   cwnd. The CWR flag answers ECE (RFC 3168 §6.1.2) and nothing else. (A
    ///   layer's delay signal reaches its base inside the layer, not here.)
    /// - `ProbeLoss`: RFC 8985 §7.4.2, reduce at once to ssthresh: the controller
    ///   hears `EnterCwr` and, at once, `ExitRecovery` (Linux `tcp_process_tlp_ack`).
    /// - `Rto`: cwnd collapses to one segment (RFC 5681 §3.1).
    ///
    /// Every reduction but the RTO's first resets what Linux
    /// `tcp_init_cwnd_reduction` resets, the additive-increase credit, so the credit
    /// earned at the old window does not buy an early increment after it (without
    /// it, most recovery exits ended one segment above ssthresh).
    ///
    /// A repeated RTO within one episode calls this with `cut == false`: the window
    /// still collapses and the controller still hears `Rto`. Returns ssthresh.
    pub fn on_cause(&mut self, now: Instant, cause: CongestionCause, cut: bool) -> u32 {
        if cause != CongestionCause::Rto {
            self.vars.cwnd_cnt = 0;
        }
        if cut {
            let ss = self.ctrl.ssthresh(&mut self.vars, now, cause).max(2);
            self.vars.ssthresh = ss;
        }
        let ss = self.vars.ssthresh;
        match cause {
            CongestionCause::Loss => self.event(now, CcEvent::EnterRecovery),
            CongestionCause::Ecn | CongestionCause::BundleLoss | CongestionCause::Delay => {
                self.event(now, CcEvent::EnterCwr);
                self.cwr_pending = cause == CongestionCause::Ecn;
            }
            CongestionCause::ProbeLoss => {
                // Linux `tcp_process_tlp_ack`: CWR (`tcp_set_ca_state`), then
                // `tcp_end_cwnd_reduction` at once and back to Open.
                self.event(now, CcEvent::EnterCwr);
                self.exit_reduction(now);
            }
            CongestionCause::Rto => {
                self.set_cwnd(1);
                self.vars.cwnd_cnt = 0;
                self.event(now, CcEvent::Rto);
            }
        }
        ss
    }

    /// A reduction ended at its recovery point (Linux `tcp_end_cwnd_reduction`):
    /// cwnd = ssthresh, and the controller hears it.
    pub fn exit_reduction(&mut self, now: Instant) {
        // Linux `tcp_end_cwnd_reduction` returns at once for a `cong_control` module.
        if self.vars.ssthresh < u32::MAX && !self.needs.cong_control {
            self.set_cwnd(self.vars.ssthresh.max(1));
        }
        self.event(now, CcEvent::ExitRecovery);
    }

    /// Linux `tcp_undo_cwnd_reduction`, congestion's half: the controller's
    /// `undo_cwnd` from the saved window, and ssthresh back if it was higher (then no
    /// CWR for a reduction taken back: Linux `tcp_ecn_withdraw_cwr`).
    pub fn undo(&mut self, now: Instant, saved: SavedWindow) {
        let cwnd = self.ctrl.undo_cwnd(&mut self.vars, saved.cwnd);
        self.set_cwnd(cwnd);
        if saved.ssthresh > self.vars.ssthresh {
            self.vars.ssthresh = saved.ssthresh;
            self.cwr_pending = false;
        }
        self.event(now, CcEvent::Undo);
    }

    /// `segs` segments were delivered (the delivery count rate samples read).
    #[inline]
    pub fn on_delivered(&mut self, segs: u32) {
        self.vars.delivered += u64::from(segs);
    }

    /// How long no data was sent, if any ever was (Linux `lsndtime`).
    #[inline]
    pub fn idle_for(&self, now: Instant) -> Option<Duration> {
        self.last_data_sent.map(|last| now - last)
    }

    /// The controller's view of an ACK that delivered something (`pkts_acked`).
    #[inline]
    pub fn on_ack(&mut self, s: &AckSample) {
        self.ctrl.on_ack(&mut self.vars, s);
    }

    /// Window growth outside a reduction (Linux `tcp_cong_control`'s `cong_avoid`).
    /// Returns whether the controller asked for a reduction of its own (Linux:
    /// `tcp_enter_cwr` from its `cong_avoid`); growth and reduction never both
    /// happen on one ACK.
    #[inline]
    pub fn grow(&mut self, s: &AckSample, cwnd_limited_slack: Option<u32>) -> bool {
        if let Some(slack) = cwnd_limited_slack {
            // Linux before 3.16 (`tcp_is_cwnd_limited(sk, prior_in_flight)`): also
            // cwnd-limited when in flight came within `slack` segments of cwnd
            // (`tcp_max_tso_deferred_mss` = 3), in slow start too. The RDB paper's
            // thin-stream senders ran with this rule (RDB §IV-B).
            let (cwnd, pif) = (self.vars.cwnd, s.prior_in_flight);
            self.vars.cwnd_limited = pif >= cwnd || cwnd - pif <= slack;
        }
        self.ctrl.cong_avoid(&mut self.vars, s);
        std::mem::take(&mut self.vars.request_cwr)
    }

    /// A new round for cwnd-limited tracking once SND.UNA passes the round's end.
    #[inline]
    pub fn end_round(&mut self, snd_una: u64, snd_nxt: u64, packets_out: u32) {
        if snd_una >= self.round_end {
            self.round_end = snd_nxt;
            self.max_packets_out = packets_out;
            self.is_cwnd_limited = false;
        }
    }

    /// The send-time state a new send record carries (`in_flight` before it).
    #[inline]
    pub fn sent_info(
        &self,
        now: Instant,
        bytes: u32,
        retransmit: bool,
        in_flight: u32,
    ) -> SentInfo {
        SentInfo {
            sent_at: now,
            bytes,
            in_flight_at_send: in_flight + 1,
            delivered_at_send: self.vars.delivered,
            app_limited: self.vars.app_limited,
            retransmit,
            first_tx_us: 0,
            delivered_us: 0,
            rate_app_limited: false,
            lost_at_send: 0,
            delivered_ce_at_send: 0,
        }
    }

    /// The delivery-rate snapshot a send record carries (`crate::rate::on_send`),
    /// `packets_out` outstanding before it, `lost` segments ever marked lost.
    #[inline(never)]
    pub fn rate_snapshot(
        &mut self,
        now: Instant,
        packets_out: u32,
        lost: u64,
        info: &mut SentInfo,
    ) {
        self.vars.rate.lost = lost;
        let snap = rate::on_send(&mut self.vars.rate, now, packets_out);
        info.first_tx_us = snap.first_tx_us;
        info.delivered_us = snap.delivered_us;
        info.rate_app_limited = snap.app_limited;
        info.lost_at_send = snap.lost;
        info.delivered_ce_at_send = snap.delivered_ce;
    }

    /// Linux `tcp_rate_check_app_limited`, for a sender out of data with no lost
    /// segment waiting: application-limited unless cwnd is full.
    #[inline(never)]
    pub fn mark_rate_app_limited(&mut self, in_flight: u32) {
        if in_flight < self.vars.cwnd {
            let delivered = self.vars.delivered;
            rate::mark_app_limited(&mut self.vars.rate, delivered, in_flight);
        }
    }

    /// A paced data segment of `len` bytes left (`Pacer::on_sent`).
    #[inline]
    fn pace_sent(&mut self, now: Instant, len: u32) {
        if let Some(p) = self.pacer.as_mut() {
            p.on_sent(now, len);
        }
    }

    /// The pacing rate after an ACK or at init (Linux: `bbr_set_pacing_rate` or
    /// `tcp_update_pacing_rate` at the end of `tcp_cong_control`), and the burst size
    /// at it. Out of line: only pacing connections reach it.
    #[inline(never)]
    pub fn update_pacing(&mut self, packets_out: u32) {
        let v = &self.vars;
        let rate = self.ctrl.pacing_rate(v).unwrap_or_else(|| {
            pacing::default_rate(v.mss, v.cwnd, v.ssthresh, packets_out, v.srtt)
        });
        let min_tso = self.ctrl.min_tso_segs(rate);
        let (mss, min_rtt) = (v.mss, v.min_rtt);
        if let Some(p) = self.pacer.as_mut() {
            p.set_rate(rate, mss, min_rtt, min_tso);
            self.vars.pacing_edt = p.edt();
        }
    }

    /// Linux `cong_control` (see [`CcNeeds::cong_control`](crate::cc::CcNeeds)).
    #[inline(never)]
    pub fn control(&mut self, s: &AckSample) {
        if let Some(p) = self.pacer.as_ref() {
            self.vars.pacing_edt = p.edt();
        }
        self.ctrl.cong_control(&mut self.vars, s);
    }

    /// Whether cwnd blocks a (re)transmission with `in_flight` out; a blocked send
    /// marks the window cwnd-limited.
    #[inline]
    pub fn blocks(&mut self, in_flight: u32) -> bool {
        let blocked = in_flight >= self.vars.cwnd;
        if blocked {
            self.is_cwnd_limited = true;
        }
        blocked
    }

    /// `blocks` for new data, which also ends an application-limited period.
    #[inline]
    pub fn blocks_new_data(&mut self, in_flight: u32) -> bool {
        let blocked = self.blocks(in_flight);
        if blocked {
            self.vars.app_limited = false;
        }
        blocked
    }

    /// Whether `blocks_new_data(in_flight)` would block and write nothing: cwnd is
    /// full, the window already marked cwnd-limited and no application-limited
    /// period open (`Connection::poll_finds_nothing`).
    #[inline]
    pub fn new_data_blocked_settled(&self, in_flight: u32) -> bool {
        in_flight >= self.vars.cwnd && self.is_cwnd_limited && !self.vars.app_limited
    }

    /// Whether a sender out of data would write nothing in `note_app_limited` and
    /// (with `rate_mark`: rate samples on, nothing lost pending) in
    /// `mark_rate_app_limited`: cwnd is full, or the period is already noted and the
    /// rate sampler already marked at this delivered count and flight.
    #[inline]
    pub fn app_limited_settled(&self, in_flight: u32, rate_mark: bool) -> bool {
        if in_flight >= self.vars.cwnd {
            return true;
        }
        let rate_marked = !(rate_mark && self.needs.rate_samples)
            || rate::app_limited_marked(&self.vars.rate, self.vars.delivered, in_flight);
        self.vars.app_limited && rate_marked
    }

    /// Out of data with room to send more: application-limited (RFC 7661); the
    /// controller hears it once per period.
    #[inline]
    pub fn note_app_limited(&mut self, now: Instant, in_flight: u32) {
        if in_flight < self.vars.cwnd && !self.vars.app_limited {
            self.vars.app_limited = true;
            self.event(now, CcEvent::AppLimited);
        }
    }

    /// A retransmission went out (the controller's `on_sent`).
    #[inline]
    pub fn on_sent(&mut self, info: &SentInfo) {
        self.pace_sent(info.sent_at, info.bytes);
        self.ctrl.on_sent(&mut self.vars, info);
    }

    /// New data went out, leaving `packets_out` / `in_flight`: the round's peak, the
    /// cwnd-limited mark (Linux `tcp_write_xmit`: a send that fills cwnd marks the
    /// window cwnd-limited, not only a send that cwnd blocks), the idle clock, the
    /// controller's `on_sent`.
    #[inline]
    pub fn on_data_sent(
        &mut self,
        now: Instant,
        info: &SentInfo,
        packets_out: u32,
        in_flight: u32,
    ) {
        self.max_packets_out = self.max_packets_out.max(packets_out);
        if in_flight >= self.vars.cwnd {
            self.is_cwnd_limited = true;
        }
        self.last_data_sent = Some(now);
        self.pace_sent(now, info.bytes);
        self.ctrl.on_sent(&mut self.vars, info);
    }

    /// RFC 2861 as Linux `tcp_cwnd_restart` implements it: after `idle` longer than
    /// `rto`, cwnd decays towards the initial window (`initial`), halving once per
    /// RTO of idleness; 3/4 of the window left is remembered in ssthresh (Linux
    /// `tcp_current_ssthresh`).
    pub fn restart_window(&mut self, idle: Duration, rto: Duration, initial: u32) {
        let cwnd = self.vars.cwnd;
        self.vars.ssthresh = self.vars.ssthresh.max((cwnd >> 1) + (cwnd >> 2));
        let restart = initial.min(cwnd).max(1);
        let mut w = cwnd;
        let mut left = idle;
        while left > rto && w > restart {
            left -= rto;
            w >>= 1;
        }
        self.set_cwnd(w.max(restart));
        self.vars.cwnd_cnt = 0;
    }
}

impl Connection {
    /// Congestion control responds to `cause` (see [`Congestion::on_cause`]) with
    /// its view of loss recovery refreshed first. Returns ssthresh.
    pub(super) fn congestion_response(
        &mut self,
        now: Instant,
        cause: CongestionCause,
        cut: bool,
    ) -> u32 {
        self.refresh_cc_state();
        self.sub.cong.on_cause(now, cause, cut)
    }

    /// The connection's only write of cwnd (see [`Congestion::set_cwnd`]).
    pub(super) fn set_cwnd(&mut self, cwnd: u32) {
        self.sub.cong.set_cwnd(cwnd);
    }

    /// Refreshes the read-only variables the controller sees, from loss recovery's
    /// view and the send space's edges.
    #[inline]
    pub(super) fn refresh_cc_state(&mut self) {
        let v = self.sub.loss.view();
        self.sub
            .cong
            .refresh(&v, self.sub.snd.snd_una, self.sub.snd.snd_nxt);
    }

    /// Linux `tcp_enter_recovery`: loss recovery starts an undo episode and says
    /// whether the window is cut (not while a CWR reduction continues); congestion
    /// control responds to the loss; PRR takes the new ssthresh.
    #[cold]
    #[inline(never)]
    pub(super) fn enter_recovery(&mut self, now: Instant, prior_in_flight: u32, ece: bool) {
        self.refresh_cc_state();
        let (cwnd, ssthresh) = self.sub.cong.window();
        let una = self.sub.snd.snd_una;
        if self.sub.loss.begin_recovery(una, cwnd, ssthresh, ece) {
            let ss = self.congestion_response(now, CongestionCause::Loss, true);
            let nxt = self.sub.snd.snd_nxt;
            self.sub.loss.reduce_from(ss, prior_in_flight, nxt);
        }
        self.sub.timers.stop(super::timer::Timer::Tlp);
        self.trace(TraceEvent::Recovery {
            at: now,
            enter: true,
        });
    }

    /// Linux `tcp_enter_cwr`: a reduction over one window by PRR, never undone. The
    /// cause is ECN (RFC 3168 §6.1.2), a loss RDB's bundles hid (`crate::rdb`), or
    /// the controller's own request.
    #[cold]
    #[inline(never)]
    pub(super) fn enter_cwr(&mut self, now: Instant, prior_in_flight: u32, cause: CongestionCause) {
        self.refresh_cc_state();
        self.sub.loss.begin_cwr(self.sub.cong.window().0);
        let ss = self.congestion_response(now, cause, true);
        let nxt = self.sub.snd.snd_nxt;
        self.sub.loss.reduce_from(ss, prior_in_flight, nxt);
        match cause {
            CongestionCause::Ecn => self.info.ecn_cwr += 1,
            CongestionCause::Delay => self.info.delay_cwr += 1,
            _ => {}
        }
    }

    /// RFC 8985 §7.4.2: the probe repaired a loss; reduce as for a loss, at once
    /// (Linux `tcp_process_tlp_ack`), unless a reduction is under way.
    #[cold]
    #[inline(never)]
    pub(super) fn tlp_loss_response(&mut self, now: Instant) {
        if self
            .sub
            .loss
            .begin_probe_reduction(self.sub.cong.window().0)
        {
            self.congestion_response(now, CongestionCause::ProbeLoss, true);
        }
    }

    /// Applies, in order, what loss recovery's undo checks concluded for congestion
    /// control, with the counters and traces each carries.
    #[cold]
    #[inline(never)]
    pub(super) fn apply_steps(&mut self, now: Instant, steps: &CcSteps) {
        for &step in steps.as_slice() {
            match step {
                CcStep::Exit { was_recovery } => {
                    self.sub.cong.exit_reduction(now);
                    if was_recovery {
                        self.trace_recovery_exit(now);
                    }
                }
                CcStep::LeaveUndone => {
                    self.sub.cong.event(now, CcEvent::ExitRecovery);
                    self.trace_recovery_exit(now);
                }
                CcStep::Undo { saved, kind, view } => self.apply_undo(now, saved, kind, &view),
                CcStep::ExitLoss => self.sub.cong.event(now, CcEvent::ExitLoss),
            }
        }
    }

    /// An undo: the saved window back through the controller (unless ECN forbade
    /// it), counted and traced.
    fn apply_undo(
        &mut self,
        now: Instant,
        saved: Option<SavedWindow>,
        kind: UndoKind,
        view: &LossView,
    ) {
        if let Some(saved) = saved {
            let (una, nxt) = (self.sub.snd.snd_una, self.sub.snd.snd_nxt);
            self.sub.cong.refresh(view, una, nxt);
            self.sub.cong.undo(now, saved);
        }
        self.info.undo_count += 1;
        match kind {
            UndoKind::Dsack => self.info.dsack_undo += 1,
            UndoKind::Loss | UndoKind::Frto => self.info.spurious_rto += 1,
            UndoKind::Recovery | UndoKind::Partial => {}
        }
        let (cwnd, ssthresh) = self.sub.cong.window();
        self.trace(TraceEvent::Undo {
            at: now,
            kind,
            cwnd,
            ssthresh,
        });
        self.trace_cwnd(now);
    }

    fn trace_recovery_exit(&mut self, now: Instant) {
        self.trace(TraceEvent::Recovery {
            at: now,
            enter: false,
        });
    }

    /// Transmission restarts with nothing in flight (Linux `tcp_event_data_sent` raising
    /// CA_EVENT_TX_START, and `tcp_slow_start_after_idle_check`). CUBIC shifts its epoch
    /// by the idle time; after idling longer than the RTO, cwnd decays towards the
    /// initial window (RFC 5681 §4.1, [`Congestion::restart_window`]).
    #[inline(never)]
    pub(super) fn on_tx_start(&mut self, now: Instant) {
        let Some(idle) = self.sub.cong.idle_for(now) else {
            return;
        };
        self.sub.cong.event(now, CcEvent::TxStart { idle });
        let rto = self.current_rto();
        // With new-CWV, idle time is governed by its NVP instead (RFC 7661 §4.4; spec C10).
        let new_cwv = self.config.congestion.controller.new_cwv().is_some();
        // Linux `tcp_slow_start_after_idle_check` skips `cong_control` modules.
        if !self.config.congestion.slow_start_after_idle
            || self.sub.cong.needs.cong_control
            || new_cwv
            || idle <= rto
            || self.in_reduction()
        {
            return;
        }
        let initial = self.config.congestion.initial_cwnd;
        self.sub.cong.restart_window(idle, rto, initial);
        self.refresh_cc_state();
        self.sub.cong.event(now, CcEvent::CwndRestart);
        self.trace_cwnd(now);
    }

    /// In fast recovery or CWR, where PRR owns cwnd.
    #[inline]
    pub(super) fn in_reduction(&self) -> bool {
        self.sub.loss.in_reduction()
    }
}
