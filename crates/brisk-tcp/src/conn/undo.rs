//! Undo of spurious congestion responses, on loss recovery's part: the state exits and undo
//! checks of Linux `tcp_fastretrans_alert` (§§ A, D, E), with `tcp_try_undo_recovery`,
//! `tcp_try_undo_partial`, `tcp_try_undo_dsack`, `tcp_try_undo_loss`,
//! `tcp_process_loss` (F-RTO, RFC 5682) and `tcp_undo_cwnd_reduction`. The evidence is
//! kept in `recovery::undo` (D-SACK, RFC 2883/3708; timestamps, RFC 3522 Eifel) and
//! `recovery::frto`. The part decides and returns what congestion control must do
//! ([`CcStep`]s, applied in order by `Connection::apply_steps`). Loss *marking* is
//! `detect.rs` (RACK); after an undo that clears lost marks, RACK looks again, as
//! Linux's `rack.advanced = 1` makes it.

use super::loss::LossView;
use super::parts::LossRecovery;
use super::CaState;
use crate::event::UndoKind;
use crate::recovery::frto::{FrtoAck, FrtoVerdict};
use crate::recovery::undo::Prior as SavedWindow;

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

/// The send side's edges as the undo decisions read them (values from the
/// connection: loss recovery does not read the send space).
#[derive(Clone, Copy, Debug)]
pub(super) struct SendEdges {
    /// SND.UNA.
    pub una: u64,
    /// SND.NXT.
    pub nxt: u64,
    /// The peer takes SACK.
    pub sack_ok: bool,
    /// Unsent data (or our FIN) waits and the peer's window lets it go (F-RTO's
    /// "new data can be sent").
    pub can_send_new: bool,
}

/// A conclusion of the recovery state machine for congestion control; the
/// connection applies them in order (`Connection::apply_steps`).
#[derive(Clone, Copy, Debug)]
pub(super) enum CcStep {
    /// The reduction ended at its recovery point (Linux `tcp_end_cwnd_reduction`):
    /// cwnd = ssthresh and the controller hears `ExitRecovery`; traced when fast
    /// recovery ended (`was_recovery`).
    Exit { was_recovery: bool },
    /// Fast recovery ended with its reduction undone: cwnd stays as restored (Linux
    /// `tcp_end_cwnd_reduction` skips the reset without `undo_marker`); the
    /// controller hears `ExitRecovery`, traced.
    LeaveUndone,
    /// A spurious reduction undone (Linux `tcp_undo_cwnd_reduction`): the saved
    /// window restored unless ECN forbade it (`saved` is `None`), counted by `kind`,
    /// traced. `view` is loss recovery as the undo found it.
    Undo {
        saved: Option<SavedWindow>,
        kind: UndoKind,
        view: LossView,
    },
    /// The Loss state (an RTO episode) returned to Open (Linux `tcp_set_ca_state`
    /// from `tcp_process_loss` or `tcp_try_undo_loss`): the controller hears
    /// `ExitLoss`. No cwnd change: slow start goes on from where the timeout left it.
    ExitLoss,
}

/// The conclusions of one ACK's undo checks, in order. Bounded: one ACK yields at
/// most three (fast recovery's end undone and left, then a late D-SACK's undo in
/// Open; in Loss at most an undo and the exit), so four never fill.
#[derive(Clone, Copy, Debug)]
pub(super) struct CcSteps {
    steps: [CcStep; 4],
    len: usize,
}

impl CcSteps {
    pub fn new() -> Self {
        CcSteps {
            steps: [CcStep::LeaveUndone; 4],
            len: 0,
        }
    }

    fn push(&mut self, s: CcStep) {
        self.steps[self.len] = s;
        self.len += 1;
    }

    pub fn as_slice(&self) -> &[CcStep] {
        &self.steps[..self.len]
    }
}

impl LossRecovery {
    /// Linux `tcp_any_retrans_done`.
    pub fn any_retrans_done(&self) -> bool {
        self.board.retrans_out() > 0 || self.board.first().is_some_and(|s| s.ever_retrans)
    }

    /// Linux `tcp_packet_delayed`'s non-SACK exception: once SND.UNA reached the
    /// recovery point, a missing retransmission stamp proves nothing.
    fn no_stamp_unreliable(&self, e: &SendEdges) -> bool {
        !e.sack_ok && e.una >= self.high_seq
    }

    /// A D-SACK for `[l, r)` arrived on an ACK that found SND.UNA at `prior_una`; called
    /// before the scoreboard moves. Counts the episode's retransmissions it covers
    /// (Linux `tcp_check_dsack`, `tcp_dsack_seen`, `tcp_sacktag_one`). Returns false for
    /// a dubious D-SACK, which must be ignored altogether: larger than `max_len` (any
    /// window we were offered), or more duplicates reported than the `retransmits` we
    /// ever sent (the network duplicated the packet).
    pub fn account_dsack(
        &mut self,
        (l, r): (u64, u64),
        prior_una: u64,
        max_len: u64,
        mss: u32,
        retransmits: u64,
    ) -> bool {
        let len = r - l;
        if len > max_len {
            return false;
        }
        let mss = u64::from(mss.max(1));
        let segs = len.div_ceil(mss).clamp(1, u64::from(u32::MAX)) as u32;
        if !self.undo.dsack_plausible(segs, retransmits) {
            return false;
        }
        // Data below SND.UNA is forgotten: count it by size ("dumb counting").
        let dup = if r <= prior_una {
            segs
        } else {
            self.board.count_retransmitted(l, r, segs)
        };
        self.undo.on_dsack(r, dup);
        true
    }

    /// Whether an ACK needs the undo and exit checks (Linux's `tcp_ack_is_dubious`
    /// for them): not a current ACK without ECE in Open with no D-SACK undo due, the
    /// common ACK of a loss-free transfer. For such an ACK the checks, which Open
    /// does not have, are skipped exactly: there `undo_and_exit` runs no exit (those
    /// are for CWR and Recovery) and no undo (excluded here), and returns false.
    /// `quiet`: [`quiet`](Self::quiet) held for this ACK (Open, no D-SACK undo due).
    #[inline]
    pub fn needs_undo_checks(&self, quiet: bool, current: bool, ece: bool) -> bool {
        let open_no_dsack_undo =
            quiet || (self.ca_state == CaState::Open && !self.undo.all_retrans_dsacked());
        !(open_no_dsack_undo && current && !ece)
    }

    /// What `undo_and_exit` still does for an ACK that needs no undo checks: clear the
    /// retransmission stamp when nothing retransmitted is outstanding (`quiet`:
    /// nothing is outstanding).
    #[inline]
    pub fn on_plain_ack(&mut self, quiet: bool) {
        if quiet || !self.any_retrans_done() {
            self.undo.clear_stamp();
        }
    }

    /// Linux `tcp_fastretrans_alert` §§ A, D, E without loss marking: ends reductions
    /// whose recovery point was reached, undoing them when they proved spurious, and
    /// runs F-RTO in the Loss state. What congestion control must do goes to `out`.
    /// Returns whether lost marks were cleared.
    pub fn undo_and_exit(&mut self, f: &AckFlags, e: &SendEdges, out: &mut CcSteps) -> bool {
        if f.ece {
            // A. ECN proves congestion: the reduction must stand.
            self.undo.forbid_restore();
        }
        // D. Exits at the recovery point. CWR holds until something *above* high_seq
        // is ACKed (Linux `tcp_fastretrans_alert`): the CWR flag rides on the first
        // segment at high_seq, and until the receiver has seen it, its ACKs keep ECE;
        // leaving at high_seq itself would take that echo as new congestion and cut
        // the window twice for one mark.
        if e.una >= self.high_seq {
            match self.ca_state {
                CaState::Cwr if e.una > self.high_seq => self.exit_reduction(out),
                CaState::Cwr => {}
                CaState::Recovery => {
                    if self.try_undo_recovery(f.tsecr, e, out) {
                        self.leave_recovery_undone(out);
                    } else {
                        self.exit_reduction(out);
                    }
                }
                _ => {}
            }
        }
        // E. Per-state checks.
        let mut unmarked = false;
        match self.ca_state {
            CaState::Recovery => {
                if f.una_advanced {
                    unmarked = self.try_undo_partial(f.tsecr, e, out);
                }
                if self.ca_state == CaState::Recovery && self.try_undo_dsack(out) {
                    self.try_keep_open(e, out);
                }
            }
            CaState::Loss => unmarked = self.process_loss(f, e, out),
            CaState::Open | CaState::Disorder => {
                // Late D-SACKs may still undo an episode that ended (Linux keeps
                // `undo_marker` until an undo or a CWR).
                self.try_undo_dsack(out);
            }
            CaState::Cwr => {}
        }
        if self.ca_state <= CaState::Disorder && !self.any_retrans_done() {
            self.undo.clear_stamp();
        }
        unmarked
    }

    /// CWR or fast recovery ends at its recovery point.
    fn exit_reduction(&mut self, out: &mut CcSteps) {
        let was_recovery = self.ca_state == CaState::Recovery;
        self.ca_state = CaState::Open;
        out.push(CcStep::Exit { was_recovery });
    }

    /// Linux `tcp_undo_cwnd_reduction`, loss recovery's half: optionally clears lost
    /// marks; the episode's saved window goes to congestion control.
    fn undo_cwnd_reduction(&mut self, unmark_loss: bool, kind: UndoKind, out: &mut CcSteps) {
        if unmark_loss {
            self.board.unmark_all_lost();
        }
        let saved = self.undo.take();
        out.push(CcStep::Undo {
            saved,
            kind,
            view: self.view(),
        });
    }

    /// Linux `tcp_try_undo_recovery`: SND.UNA reached the recovery point of a fast
    /// recovery or RTO; undo if nothing was retransmitted, everything retransmitted
    /// was D-SACKed, or the ACK echoes a timestamp from before the first
    /// retransmission. The caller changes the state.
    fn try_undo_recovery(&mut self, tsecr: Option<u32>, e: &SendEdges, out: &mut CcSteps) -> bool {
        if self.undo.may_undo(tsecr, self.no_stamp_unreliable(e)) {
            let kind = if self.ca_state == CaState::Loss {
                UndoKind::Loss
            } else {
                UndoKind::Recovery
            };
            self.undo_cwnd_reduction(false, kind, out);
            true
        } else {
            self.rack.on_recovery_exit();
            false
        }
    }

    /// Recovery ends with its reduction undone.
    fn leave_recovery_undone(&mut self, out: &mut CcSteps) {
        self.ca_state = CaState::Open;
        out.push(CcStep::LeaveUndone);
    }

    /// Linux `tcp_try_undo_partial`: a partial ACK during recovery for an original
    /// transmission (per timestamps) shows reordering, not loss. Undone once no
    /// retransmission is in flight. Returns whether lost marks were cleared.
    fn try_undo_partial(&mut self, tsecr: Option<u32>, e: &SendEdges, out: &mut CcSteps) -> bool {
        if !self.undo.is_pending() || !self.undo.packet_delayed(tsecr, self.no_stamp_unreliable(e))
        {
            return false;
        }
        // Linux `tcp_check_sack_reordering`: the hole was filled by a delayed original.
        self.rack.on_reordering();
        if self.board.retrans_out() > 0 {
            return false;
        }
        if !self.any_retrans_done() {
            self.undo.clear_stamp();
        }
        self.undo_cwnd_reduction(true, UndoKind::Partial, out);
        self.try_keep_open(e, out);
        true
    }

    /// Linux `tcp_try_undo_dsack`: every retransmission of the episode was D-SACKed.
    fn try_undo_dsack(&mut self, out: &mut CcSteps) -> bool {
        if !self.undo.all_retrans_dsacked() {
            return false;
        }
        self.undo_cwnd_reduction(false, UndoKind::Dsack, out);
        true
    }

    /// Linux `tcp_try_keep_open`: back to Open, or Disorder while SACKed, lost or
    /// retransmitted segments remain; a new recovery point if the state changed.
    fn try_keep_open(&mut self, e: &SendEdges, out: &mut CcSteps) {
        let left_out = self.board.sacked_out() + self.board.lost_out() > 0;
        let state = if left_out || self.any_retrans_done() {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.ca_state != state {
            if self.ca_state == CaState::Recovery {
                self.leave_recovery_undone(out);
            }
            self.ca_state = state;
            self.high_seq = e.nxt;
        }
    }

    /// Linux `tcp_try_undo_loss`: the RTO was spurious, by timestamps or D-SACK
    /// (`may_undo`) or by F-RTO (`frto`). Lost marks are cleared, the backoff is reset
    /// and the connection leaves Loss (a non-SACK peer stays in Loss unless F-RTO
    /// decided, as in Linux: its duplicate ACKs cannot tell reordering from loss).
    fn try_undo_loss(
        &mut self,
        frto: bool,
        tsecr: Option<u32>,
        e: &SendEdges,
        out: &mut CcSteps,
    ) -> bool {
        if !frto && !self.undo.may_undo(tsecr, self.no_stamp_unreliable(e)) {
            return false;
        }
        let kind = if frto { UndoKind::Frto } else { UndoKind::Loss };
        self.undo_cwnd_reduction(true, kind, out);
        self.backoff = 0;
        if frto || e.sack_ok {
            self.leave_loss(out);
        }
        true
    }

    /// Linux `tcp_process_loss`: an ACK in the Loss state. Undo by timestamps/D-SACK
    /// when SND.UNA advances; F-RTO (RFC 5682 §3.1); the end of the episode at the
    /// recovery point. Returns whether lost marks were cleared.
    fn process_loss(&mut self, f: &AckFlags, e: &SendEdges, out: &mut CcSteps) -> bool {
        let recovered = e.una >= self.high_seq;
        if f.una_advanced && self.try_undo_loss(false, f.tsecr, e, out) {
            return true;
        }
        let a = FrtoAck {
            una_advanced: f.una_advanced,
            orig_acked: f.orig_acked,
            data_sacked: f.data_sacked,
            dupack: f.dupack,
            recovered,
            new_data_sent: e.nxt > self.high_seq,
            can_send_new: e.can_send_new,
        };
        match self.frto.on_ack(&a) {
            FrtoVerdict::Spurious => return self.try_undo_loss(true, f.tsecr, e, out),
            FrtoVerdict::SendNewData => {
                self.high_seq = e.nxt;
                return false;
            }
            FrtoVerdict::FallBack => self.high_seq = e.nxt,
            FrtoVerdict::Continue => {}
        }
        if recovered {
            // RFC 5682 step 2a: all was lost indeed, or the retransmissions were
            // delivered as late originals; the usual end-of-recovery undo check.
            self.try_undo_recovery(f.tsecr, e, out);
            self.leave_loss(out);
        }
        false
    }

    /// The RTO episode ends: Loss returns to Open (Linux `tcp_set_ca_state`), and
    /// congestion control hears it.
    fn leave_loss(&mut self, out: &mut CcSteps) {
        self.ca_state = CaState::Open;
        self.frto.stop();
        out.push(CcStep::ExitLoss);
    }
}

#[cfg(test)]
mod tests {
    //! The part alone: facts in, conclusions out, no connection.
    use super::*;
    use crate::recovery::RttEstimator;
    use brisk_time::{Duration, Instant};

    fn part() -> LossRecovery {
        let rtt = RttEstimator::new(
            Duration::from_secs(1),
            Duration::from_millis(200),
            Duration::from_secs(60),
        );
        LossRecovery::new(rtt, Instant::from_millis(0))
    }

    fn edges(una: u64) -> SendEdges {
        SendEdges {
            una,
            nxt: 100,
            sack_ok: true,
            can_send_new: false,
        }
    }

    #[test]
    fn cwr_ends_only_above_its_recovery_point_with_an_untraced_exit() {
        let mut l = part();
        l.begin_cwr(10);
        l.reduce_from(5, 10, 100);
        let mut out = CcSteps::new();
        assert!(!l.undo_and_exit(&AckFlags::default(), &edges(100), &mut out));
        assert!(out.as_slice().is_empty());
        assert_eq!(l.ca_state, CaState::Cwr);
        l.undo_and_exit(&AckFlags::default(), &edges(101), &mut out);
        assert!(matches!(
            out.as_slice(),
            [CcStep::Exit {
                was_recovery: false
            }]
        ));
        assert_eq!(l.ca_state, CaState::Open);
    }

    #[test]
    fn a_recovery_without_retransmissions_is_undone_with_the_saved_window() {
        for ece in [false, true] {
            let mut l = part();
            assert!(l.begin_recovery(0, 20, 40, false));
            l.reduce_from(10, 20, 100);
            let f = AckFlags {
                una_advanced: true,
                ece,
                ..AckFlags::default()
            };
            let mut out = CcSteps::new();
            l.undo_and_exit(&f, &edges(100), &mut out);
            match out.as_slice() {
                [CcStep::Undo {
                    saved,
                    kind: UndoKind::Recovery,
                    ..
                }, CcStep::LeaveUndone] => {
                    // ECN proves congestion: the window is not restored.
                    assert_eq!(saved.map(|w| w.cwnd), (!ece).then_some(20), "ece {ece}");
                }
                other => panic!("ece {ece}: {other:?}"),
            }
            assert_eq!(l.ca_state, CaState::Open);
        }
    }
}
