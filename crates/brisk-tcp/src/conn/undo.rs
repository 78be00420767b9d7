//! Undo of spurious congestion responses on the connection: the state exits and undo
//! checks of Linux `tcp_fastretrans_alert` (§§ A, D, E), with `tcp_try_undo_recovery`,
//! `tcp_try_undo_partial`, `tcp_try_undo_dsack`, `tcp_try_undo_loss`,
//! `tcp_process_loss` (F-RTO, RFC 5682) and `tcp_undo_cwnd_reduction`. The evidence is
//! kept in `recovery::undo` (D-SACK, RFC 2883/3708; timestamps, RFC 3522 Eifel) and
//! `recovery::frto`. Loss *marking* stays in `ack.rs` (RACK); after an undo that clears
//! lost marks, RACK looks again, as Linux's `rack.advanced = 1` makes it.

use super::{CaState, Connection};
use crate::cc::CcEvent;
use crate::event::{TraceEvent, UndoKind};
use crate::recovery::frto::{FrtoAck, FrtoVerdict};
use brisk_time::Instant;

/// What one ACK showed, for the undo decisions (Linux's `FLAG_*` bits).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct AckFlags {
    /// SND.UNA advanced.
    pub una_advanced: bool,
    /// Newly SACKed data.
    pub data_sacked: bool,
    /// A never-retransmitted segment at or below `high_seq` was (S)ACKed
    /// (`FLAG_ORIG_SACK_ACKED`).
    pub orig_acked: bool,
    /// A pure duplicate ACK without D-SACK.
    pub dupack: bool,
    pub ece: bool,
    /// The echoed timestamp, when timestamps are on and the ACK echoes one.
    pub tsecr: Option<u32>,
}

impl Connection {
    /// Linux `tcp_any_retrans_done`.
    pub(super) fn any_retrans_done(&self) -> bool {
        self.sub.loss.board.retrans_out() > 0
            || self.sub.loss.board.first().is_some_and(|s| s.ever_retrans)
    }

    /// Linux `tcp_packet_delayed`'s non-SACK exception: once SND.UNA reached the
    /// recovery point, a missing retransmission stamp proves nothing.
    fn no_stamp_unreliable(&self) -> bool {
        !self.sub.opts.sack_ok && self.sub.snd.snd_una >= self.sub.loss.high_seq
    }

    /// A D-SACK for `[l, r)` arrived on an ACK that found SND.UNA at `prior_una`; called
    /// before the scoreboard moves. Counts the episode's retransmissions it covers
    /// (Linux `tcp_check_dsack`, `tcp_dsack_seen`, `tcp_sacktag_one`). Returns false for
    /// a dubious D-SACK, which must be ignored altogether: larger than any window we
    /// were offered, or more duplicates reported than we ever retransmitted (the
    /// network duplicated the packet).
    pub(super) fn account_dsack(&mut self, l: u64, r: u64, prior_una: u64) -> bool {
        let len = r - l;
        if len > self.sub.snd.max_snd_wnd.max(u64::from(self.sub.opts.mss)) {
            return false;
        }
        let mss = u64::from(self.sub.opts.mss.max(1));
        let segs = len.div_ceil(mss).clamp(1, u64::from(u32::MAX)) as u32;
        if !self
            .sub
            .loss
            .undo
            .dsack_plausible(segs, self.info.retransmits)
        {
            return false;
        }
        // Data below SND.UNA is forgotten: count it by size ("dumb counting").
        let dup = if r <= prior_una {
            segs
        } else {
            self.sub.loss.board.count_retransmitted(l, r, segs)
        };
        self.sub.loss.undo.on_dsack(r, dup);
        true
    }

    /// Linux `tcp_fastretrans_alert` §§ A, D, E without loss marking: ends reductions
    /// whose recovery point was reached, undoing them when they proved spurious, and
    /// runs F-RTO in the Loss state. Returns whether lost marks were cleared.
    pub(super) fn undo_and_exit(&mut self, now: Instant, f: &AckFlags) -> bool {
        if f.ece {
            // A. ECN proves congestion: the reduction must stand.
            self.sub.loss.undo.forbid_restore();
        }
        // D. Exits at the recovery point. CWR holds until something *above* high_seq
        // is ACKed (Linux `tcp_fastretrans_alert`): the CWR flag rides on the first
        // segment at high_seq, and until the receiver has seen it, its ACKs keep ECE;
        // leaving at high_seq itself would take that echo as new congestion and cut
        // the window twice for one mark.
        if self.sub.snd.snd_una >= self.sub.loss.high_seq {
            match self.sub.cong.ca_state {
                CaState::Cwr if self.sub.snd.snd_una > self.sub.loss.high_seq => {
                    self.exit_recovery(now)
                }
                CaState::Cwr => {}
                CaState::Recovery => {
                    if self.try_undo_recovery(now, f.tsecr) {
                        self.leave_recovery_undone(now);
                    } else {
                        self.exit_recovery(now);
                    }
                }
                _ => {}
            }
        }
        // E. Per-state checks.
        let mut unmarked = false;
        match self.sub.cong.ca_state {
            CaState::Recovery => {
                if f.una_advanced {
                    unmarked = self.try_undo_partial(now, f.tsecr);
                }
                if self.sub.cong.ca_state == CaState::Recovery && self.try_undo_dsack(now) {
                    self.try_keep_open(now);
                }
            }
            CaState::Loss => unmarked = self.process_loss(now, f),
            CaState::Open | CaState::Disorder => {
                // Late D-SACKs may still undo an episode that ended (Linux keeps
                // `undo_marker` until an undo or a CWR).
                self.try_undo_dsack(now);
            }
            CaState::Cwr => {}
        }
        if self.sub.cong.ca_state <= CaState::Disorder && !self.any_retrans_done() {
            self.sub.loss.undo.clear_stamp();
        }
        unmarked
    }

    /// Linux `tcp_undo_cwnd_reduction`: restores cwnd (`undo_cwnd`) and ssthresh
    /// unless ECN forbade it, optionally clearing lost marks; counts and traces.
    fn undo_cwnd_reduction(&mut self, now: Instant, unmark_loss: bool, kind: UndoKind) {
        if unmark_loss {
            self.sub.loss.board.unmark_all_lost();
        }
        if let Some(prior) = self.sub.loss.undo.take() {
            self.refresh_cc_state();
            let cwnd = self
                .sub
                .cong
                .ctrl
                .undo_cwnd(&mut self.sub.cong.vars, prior.cwnd);
            self.set_cwnd(cwnd);
            if prior.ssthresh > self.sub.cong.vars.ssthresh {
                self.sub.cong.vars.ssthresh = prior.ssthresh;
                // Linux `tcp_ecn_withdraw_cwr`: no CWR for a reduction taken back.
                self.sub.cong.cwr_pending = false;
            }
            self.sub
                .cong
                .ctrl
                .on_event(&mut self.sub.cong.vars, now, CcEvent::Undo);
        }
        self.info.undo_count += 1;
        match kind {
            UndoKind::Dsack => self.info.dsack_undo += 1,
            UndoKind::Loss | UndoKind::Frto => self.info.spurious_rto += 1,
            UndoKind::Recovery | UndoKind::Partial => {}
        }
        self.trace(TraceEvent::Undo {
            at: now,
            kind,
            cwnd: self.sub.cong.vars.cwnd,
            ssthresh: self.sub.cong.vars.ssthresh,
        });
        self.trace_cwnd(now);
    }

    /// Linux `tcp_try_undo_recovery`: SND.UNA reached the recovery point of a fast
    /// recovery or RTO; undo if nothing was retransmitted, everything retransmitted
    /// was D-SACKed, or the ACK echoes a timestamp from before the first
    /// retransmission. The caller changes the state.
    fn try_undo_recovery(&mut self, now: Instant, tsecr: Option<u32>) -> bool {
        if self
            .sub
            .loss
            .undo
            .may_undo(tsecr, self.no_stamp_unreliable())
        {
            let kind = if self.sub.cong.ca_state == CaState::Loss {
                UndoKind::Loss
            } else {
                UndoKind::Recovery
            };
            self.undo_cwnd_reduction(now, false, kind);
            true
        } else {
            self.sub.loss.rack.on_recovery_exit();
            false
        }
    }

    /// Recovery ends with its reduction undone: cwnd stays as restored (Linux
    /// `tcp_end_cwnd_reduction` skips the reset without `undo_marker`).
    fn leave_recovery_undone(&mut self, now: Instant) {
        self.sub.cong.ca_state = CaState::Open;
        self.sub
            .cong
            .ctrl
            .on_event(&mut self.sub.cong.vars, now, CcEvent::ExitRecovery);
        self.trace(TraceEvent::Recovery {
            at: now,
            enter: false,
        });
    }

    /// Linux `tcp_try_undo_partial`: a partial ACK during recovery for an original
    /// transmission (per timestamps) shows reordering, not loss. Undone once no
    /// retransmission is in flight. Returns whether lost marks were cleared.
    fn try_undo_partial(&mut self, now: Instant, tsecr: Option<u32>) -> bool {
        if !self.sub.loss.undo.is_pending()
            || !self
                .sub
                .loss
                .undo
                .packet_delayed(tsecr, self.no_stamp_unreliable())
        {
            return false;
        }
        // Linux `tcp_check_sack_reordering`: the hole was filled by a delayed original.
        self.sub.loss.rack.on_reordering();
        if self.sub.loss.board.retrans_out() > 0 {
            return false;
        }
        if !self.any_retrans_done() {
            self.sub.loss.undo.clear_stamp();
        }
        self.undo_cwnd_reduction(now, true, UndoKind::Partial);
        self.try_keep_open(now);
        true
    }

    /// Linux `tcp_try_undo_dsack`: every retransmission of the episode was D-SACKed.
    fn try_undo_dsack(&mut self, now: Instant) -> bool {
        if !self.sub.loss.undo.all_retrans_dsacked() {
            return false;
        }
        self.undo_cwnd_reduction(now, false, UndoKind::Dsack);
        true
    }

    /// Linux `tcp_try_keep_open`: back to Open, or Disorder while SACKed, lost or
    /// retransmitted segments remain; a new recovery point if the state changed.
    fn try_keep_open(&mut self, now: Instant) {
        let left_out = self.sub.loss.board.sacked_out() + self.sub.loss.board.lost_out() > 0;
        let state = if left_out || self.any_retrans_done() {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.sub.cong.ca_state != state {
            if self.sub.cong.ca_state == CaState::Recovery {
                self.leave_recovery_undone(now);
            }
            self.sub.cong.ca_state = state;
            self.sub.loss.high_seq = self.sub.snd.snd_nxt;
        }
    }

    /// Linux `tcp_try_undo_loss`: the RTO was spurious, by timestamps or D-SACK
    /// (`may_undo`) or by F-RTO (`frto`). Lost marks are cleared, the backoff is reset
    /// and the connection leaves Loss (a non-SACK peer stays in Loss unless F-RTO
    /// decided, as in Linux: its duplicate ACKs cannot tell reordering from loss).
    fn try_undo_loss(&mut self, now: Instant, frto: bool, tsecr: Option<u32>) -> bool {
        if !frto
            && !self
                .sub
                .loss
                .undo
                .may_undo(tsecr, self.no_stamp_unreliable())
        {
            return false;
        }
        let kind = if frto { UndoKind::Frto } else { UndoKind::Loss };
        self.undo_cwnd_reduction(now, true, kind);
        self.sub.loss.backoff = 0;
        if frto || self.sub.opts.sack_ok {
            self.sub.cong.ca_state = CaState::Open;
            self.sub.loss.frto.stop();
        }
        true
    }

    /// Linux `tcp_process_loss`: an ACK in the Loss state. Undo by timestamps/D-SACK
    /// when SND.UNA advances; F-RTO (RFC 5682 §3.1); the end of the episode at the
    /// recovery point. Returns whether lost marks were cleared.
    fn process_loss(&mut self, now: Instant, f: &AckFlags) -> bool {
        let recovered = self.sub.snd.snd_una >= self.sub.loss.high_seq;
        if f.una_advanced && self.try_undo_loss(now, false, f.tsecr) {
            return true;
        }
        let unsent =
            self.has_unsent_data() || (self.stream.fin_queued && self.sub.snd.fin_seq.is_none());
        let a = FrtoAck {
            una_advanced: f.una_advanced,
            orig_acked: f.orig_acked,
            data_sacked: f.data_sacked,
            dupack: f.dupack,
            recovered,
            new_data_sent: self.sub.snd.snd_nxt > self.sub.loss.high_seq,
            can_send_new: unsent
                && self.sub.snd.snd_una + self.sub.snd.snd_wnd > self.sub.snd.snd_nxt,
        };
        match self.sub.loss.frto.on_ack(&a) {
            FrtoVerdict::Spurious => return self.try_undo_loss(now, true, f.tsecr),
            FrtoVerdict::SendNewData => {
                self.sub.loss.high_seq = self.sub.snd.snd_nxt;
                return false;
            }
            FrtoVerdict::FallBack => self.sub.loss.high_seq = self.sub.snd.snd_nxt,
            FrtoVerdict::Continue => {}
        }
        if recovered {
            // RFC 5682 step 2a: all was lost indeed, or the retransmissions were
            // delivered as late originals; the usual end-of-recovery undo check.
            self.try_undo_recovery(now, f.tsecr);
            self.sub.cong.ca_state = CaState::Open;
            self.sub.loss.frto.stop();
        }
        false
    }
}
