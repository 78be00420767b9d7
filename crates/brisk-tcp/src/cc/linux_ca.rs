//! What Linux's congestion modules read from the kernel that brisk's contract gives
//! differently, in one place for the ports of `tcp_vegas.c`, `tcp_westwood.c`,
//! `tcp_hybla.c`, `tcp_illinois.c`, `tcp_htcp.c` and `tcp_bic.c`:
//!
//! - the jiffy clock (`tcp_jiffies32`, HZ = 1000) and `usecs_to_jiffies`;
//! - Linux's `tcp_reno_cong_avoid`, which several modules fall back to;
//! - [`CaTracker`]: the congestion-avoidance state (`icsk_ca_state`) that Linux hands
//!   to a module's `set_state` hook, rebuilt from brisk's events. brisk tells a
//!   controller when a reduction starts (`EnterRecovery`, `EnterCwr`, `Rto`) and
//!   ends (`ExitRecovery`, `Undo`), not every `tcp_set_ca_state` call; the tracker
//!   turns those into the transitions Linux makes (see its methods for each case;
//!   each controller's page under `docs/mechanisms/` says what it cannot see:
//!   TCP_CA_Disorder).

use super::reno::{cong_avoid_ai, slow_start};
use super::{CcEvent, CcState, CongestionCause};
use brisk_time::Instant;

/// Linux jiffies per second (HZ = 1000, as CUBIC's port assumes).
pub(crate) const HZ: u32 = 1000;

/// Linux `tcp_jiffies32` at `t`: milliseconds, wrapping as a u32 does.
pub(crate) fn jiffies32(t: Instant) -> u32 {
    (t.as_nanos() / 1_000_000) as u32
}

/// Linux `usecs_to_jiffies` (HZ = 1000): rounds up.
pub(crate) fn usecs_to_jiffies(us: u64) -> u32 {
    u32::try_from(us.div_ceil(1_000)).unwrap_or(u32::MAX)
}

/// Linux `after(a, b)` on brisk's absolute (never wrapping) sequence offsets.
pub(crate) fn after(a: u64, b: u64) -> bool {
    a > b
}

/// Linux `tcp_reno_cong_avoid`: nothing unless cwnd-limited; slow start, then
/// one segment per window of ACKed segments.
pub(crate) fn reno_cong_avoid(cc: &mut CcState, acked: u32) {
    if !cc.cwnd_limited {
        return;
    }
    let mut acked = acked;
    if cc.in_slow_start() {
        acked = slow_start(cc, acked);
        if acked == 0 {
            return;
        }
    }
    let w = cc.cwnd;
    cong_avoid_ai(cc, w, acked);
}

/// Linux `tcp_current_ssthresh` outside a reduction (the only place the modules call
/// it): ssthresh, or 3/4 of cwnd if that is larger.
pub(crate) fn current_ssthresh(cc: &CcState) -> u32 {
    cc.ssthresh.max((cc.cwnd >> 1) + (cc.cwnd >> 2))
}

/// Linux's congestion-avoidance states as a module's `set_state` sees them. brisk
/// has no event for TCP_CA_Disorder (SACKed or duplicate-ACKed data outside a
/// reduction), so the tracker stays in `Open` there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CaState {
    Open,
    Cwr,
    Recovery,
    Loss,
}

/// What an event meant for the module, in Linux's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CaChange {
    /// `set_state(state)`.
    Enter(CaState),
    /// `tcp_end_cwnd_reduction` at the end of fast recovery or CWR (also after an
    /// undone recovery, as Linux's `tcp_try_undo_recovery` returns to it):
    /// `cwnd_event(CA_EVENT_COMPLETE_CWR)`, then `set_state(Open)`.
    CompleteCwr,
    /// A tail-loss probe's repaired loss (Linux `tcp_process_tlp_ack`):
    /// `set_state(CWR)`, `CA_EVENT_COMPLETE_CWR`, `set_state(Open)` at once.
    ProbeCwr,
}

/// Rebuilds Linux's `icsk_ca_state` from brisk's events (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct CaTracker {
    state: CaState,
    /// SND.NXT when the RTO fired (Linux `high_seq` in TCP_CA_Loss): the Loss state
    /// ends once SND.UNA reaches it (`tcp_process_loss`, `recovered`).
    loss_high: u64,
    /// The last `ssthresh` call was for a tail-loss probe: the `EnterCwr` that follows
    /// is Linux's one-step TLP reduction, not a CWR episode.
    probe: bool,
}

impl Default for CaTracker {
    fn default() -> Self {
        CaTracker {
            state: CaState::Open,
            loss_high: 0,
            probe: false,
        }
    }
}

impl CaTracker {
    pub fn state(&self) -> CaState {
        self.state
    }

    pub fn is_open(&self) -> bool {
        self.state == CaState::Open
    }

    /// Called from the module's `ssthresh`: remembers whether this reduction is a
    /// tail-loss probe's.
    pub fn note_cause(&mut self, cause: CongestionCause) {
        self.probe = cause == CongestionCause::ProbeLoss;
    }

    /// The transition `ev` makes, if any.
    pub fn on_event(&mut self, cc: &CcState, ev: CcEvent) -> Option<CaChange> {
        match ev {
            CcEvent::EnterRecovery => {
                self.probe = false;
                self.state = CaState::Recovery;
                Some(CaChange::Enter(CaState::Recovery))
            }
            CcEvent::EnterCwr if std::mem::take(&mut self.probe) => {
                self.state = CaState::Open;
                Some(CaChange::ProbeCwr)
            }
            CcEvent::EnterCwr => {
                self.state = CaState::Cwr;
                Some(CaChange::Enter(CaState::Cwr))
            }
            CcEvent::Rto => {
                self.probe = false;
                self.state = CaState::Loss;
                self.loss_high = cc.snd_nxt;
                Some(CaChange::Enter(CaState::Loss))
            }
            CcEvent::ExitRecovery => {
                self.state = CaState::Open;
                Some(CaChange::CompleteCwr)
            }
            // A spurious RTO undone (Linux `tcp_try_undo_loss`) returns to Open; an
            // undone recovery is followed by `ExitRecovery`, and an undo while Open
            // changes no state.
            CcEvent::Undo if self.state == CaState::Loss => {
                self.state = CaState::Open;
                Some(CaChange::Enter(CaState::Open))
            }
            _ => None,
        }
    }

    /// Linux `tcp_process_loss`: the Loss state ends (`set_state(Open)`) once SND.UNA
    /// reaches the RTO's SND.NXT. brisk sends no event for it, so the module asks on
    /// each `cong_avoid`, which Linux runs after the state change on the same ACK.
    pub fn poll_loss_exit(&mut self, cc: &CcState) -> Option<CaChange> {
        if self.state == CaState::Loss && cc.snd_una >= self.loss_high {
            self.state = CaState::Open;
            return Some(CaChange::Enter(CaState::Open));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jiffies_and_usecs_round_as_linux() {
        assert_eq!(jiffies32(Instant::from_micros(2_999)), 2);
        assert_eq!(usecs_to_jiffies(1), 1);
        assert_eq!(usecs_to_jiffies(1_000), 1);
        assert_eq!(usecs_to_jiffies(1_001), 2);
        assert_eq!(usecs_to_jiffies(0), 0);
    }

    #[test]
    fn the_tracker_follows_recovery_rto_and_tlp() {
        let mut t = CaTracker::default();
        let mut cc = CcState::new(10, 1448);
        cc.snd_nxt = 100;
        assert_eq!(
            t.on_event(&cc, CcEvent::EnterRecovery),
            Some(CaChange::Enter(CaState::Recovery))
        );
        assert_eq!(
            t.on_event(&cc, CcEvent::ExitRecovery),
            Some(CaChange::CompleteCwr)
        );
        assert!(t.is_open());
        // A TLP's reduction is CWR and its end at once.
        t.note_cause(CongestionCause::ProbeLoss);
        assert_eq!(t.on_event(&cc, CcEvent::EnterCwr), Some(CaChange::ProbeCwr));
        assert!(t.is_open());
        // An ECN reduction is a CWR episode.
        t.note_cause(CongestionCause::Ecn);
        assert_eq!(
            t.on_event(&cc, CcEvent::EnterCwr),
            Some(CaChange::Enter(CaState::Cwr))
        );
        t.on_event(&cc, CcEvent::ExitRecovery);
        // RTO: Loss until SND.UNA reaches the SND.NXT of the timeout.
        assert_eq!(
            t.on_event(&cc, CcEvent::Rto),
            Some(CaChange::Enter(CaState::Loss))
        );
        cc.snd_una = 99;
        assert_eq!(t.poll_loss_exit(&cc), None);
        cc.snd_una = 100;
        assert_eq!(t.poll_loss_exit(&cc), Some(CaChange::Enter(CaState::Open)));
        assert_eq!(t.poll_loss_exit(&cc), None);
        // An undone RTO returns to Open; an undo while Open changes nothing.
        t.on_event(&cc, CcEvent::Rto);
        assert_eq!(
            t.on_event(&cc, CcEvent::Undo),
            Some(CaChange::Enter(CaState::Open))
        );
        assert_eq!(t.on_event(&cc, CcEvent::Undo), None);
    }
}
