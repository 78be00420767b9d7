//! What Linux's congestion modules read from the kernel that brisk's contract gives
//! differently, in one place for the ports of `tcp_vegas.c`, `tcp_westwood.c`,
//! `tcp_hybla.c`, `tcp_illinois.c`, `tcp_htcp.c` and `tcp_bic.c`:
//!
//! - the jiffy clock (`tcp_jiffies32`, HZ = 1000) and `usecs_to_jiffies`;
//! - Linux's `tcp_reno_cong_avoid`, which several modules fall back to;
//! - [`CaTracker`]: the congestion-avoidance state (`icsk_ca_state`) that Linux hands
//!   to a module's `set_state` hook, read from brisk's events. The connection sends
//!   one event per `tcp_set_ca_state` Linux makes between Open, CWR, Recovery and
//!   Loss: a reduction starts (`EnterRecovery`, `EnterCwr`, `Rto`) and ends
//!   (`ExitRecovery` for fast recovery and CWR, the tail-loss probe's one-step CWR
//!   included; `ExitLoss` for an RTO episode); the tracker maps them to the calls
//!   Linux makes. Each controller's page under `docs/mechanisms/` says what it
//!   cannot see: TCP_CA_Disorder.

use super::reno::{cong_avoid_ai, slow_start};
use super::{CcEvent, CcState};
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
    /// undone recovery, as Linux's `tcp_try_undo_recovery` returns to it, and right
    /// after the CWR of a tail-loss probe's repaired loss, `tcp_process_tlp_ack`):
    /// `cwnd_event(CA_EVENT_COMPLETE_CWR)`, then `set_state(Open)`.
    CompleteCwr,
}

/// Linux's `icsk_ca_state` as brisk's events move it (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct CaTracker {
    state: CaState,
}

impl Default for CaTracker {
    fn default() -> Self {
        CaTracker {
            state: CaState::Open,
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

    /// The transition `ev` makes, if any. An `Undo` changes no state: the
    /// `ExitRecovery` or `ExitLoss` that ends an undone episode follows it.
    pub fn on_event(&mut self, ev: CcEvent) -> Option<CaChange> {
        let change = match ev {
            CcEvent::EnterRecovery => CaChange::Enter(CaState::Recovery),
            CcEvent::EnterCwr => CaChange::Enter(CaState::Cwr),
            CcEvent::Rto => CaChange::Enter(CaState::Loss),
            CcEvent::ExitRecovery => CaChange::CompleteCwr,
            CcEvent::ExitLoss => CaChange::Enter(CaState::Open),
            _ => return None,
        };
        self.state = match change {
            CaChange::Enter(s) => s,
            CaChange::CompleteCwr => CaState::Open,
        };
        Some(change)
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
    fn the_tracker_maps_each_event_to_linuxs_transition() {
        let mut t = CaTracker::default();
        assert_eq!(
            t.on_event(CcEvent::EnterRecovery),
            Some(CaChange::Enter(CaState::Recovery))
        );
        assert_eq!(t.state(), CaState::Recovery);
        assert_eq!(
            t.on_event(CcEvent::ExitRecovery),
            Some(CaChange::CompleteCwr)
        );
        assert!(t.is_open());
        // A CWR episode (ECN, or a tail-loss probe's, which ends at once).
        assert_eq!(
            t.on_event(CcEvent::EnterCwr),
            Some(CaChange::Enter(CaState::Cwr))
        );
        assert_eq!(
            t.on_event(CcEvent::ExitRecovery),
            Some(CaChange::CompleteCwr)
        );
        // RTO: Loss until the connection says the episode ended; an undo alone
        // changes nothing.
        assert_eq!(
            t.on_event(CcEvent::Rto),
            Some(CaChange::Enter(CaState::Loss))
        );
        assert_eq!(t.on_event(CcEvent::Undo), None);
        assert_eq!(t.state(), CaState::Loss);
        assert_eq!(
            t.on_event(CcEvent::ExitLoss),
            Some(CaChange::Enter(CaState::Open))
        );
        assert!(t.is_open());
        assert_eq!(t.on_event(CcEvent::AppLimited), None);
    }
}
