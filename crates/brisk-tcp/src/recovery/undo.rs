//! Undo bookkeeping for spurious congestion responses, after Linux `tcp_input.c`
//! (`tcp_init_undo`, `tcp_may_undo`, `tcp_packet_delayed`, `tcp_check_dsack`,
//! `tcp_undo_cwnd_reduction`).
//!
//! A fast recovery or an RTO (an *episode*) saves the window it reduces (Linux
//! `prior_cwnd`, `prior_ssthresh`) and SND.UNA at its start (`undo_marker`). The
//! reduction is found spurious, and undone, when
//! - every retransmission of the episode has been D-SACKed: the receiver already had
//!   each original (RFC 2883 §4, RFC 3708; Linux `undo_retrans` reaching 0), or
//! - an ACK echoes a timestamp older than the episode's first retransmission, so the
//!   original, not the retransmission, was delivered (Eifel detection, RFC 3522;
//!   Linux `tcp_packet_delayed`).
//!
//! F-RTO (RFC 5682) is a third detector, for RTOs only (`frto`). ECN-signalled
//! congestion is real, so an ECE forbids restoring the window (Linux clears
//! `prior_ssthresh`), and CWR entry cancels any pending undo.

/// See the module doc. Timestamps are the sender's TSval clock (milliseconds).
#[derive(Clone, Debug, Default)]
pub struct Undo {
    /// Linux `undo_marker`: SND.UNA when the episode began; `None`: nothing to undo.
    marker: Option<u64>,
    /// Linux `undo_retrans`: retransmissions of the episode not yet D-SACKed. `None`
    /// is Linux's −1: none sent, so D-SACKs alone cannot prove anything.
    retrans: Option<u32>,
    /// Linux `prior_cwnd`: cwnd before the reduction.
    prior_cwnd: u32,
    /// Linux `prior_ssthresh` (`tcp_current_ssthresh` at entry); `None` is Linux's 0:
    /// the reduction must stand (ECN, or recovery entered during CWR).
    prior_ssthresh: Option<u32>,
    /// Linux `retrans_stamp`: TSval of the first retransmission since the connection
    /// was last open with nothing retransmitted.
    retrans_stamp: Option<u32>,
    /// Linux `dsack_dups`: segments reported by D-SACK so far.
    dsack_segs: u64,
}

/// The window an undo restores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prior {
    pub cwnd: u32,
    pub ssthresh: u32,
}

/// Linux `tcp_current_ssthresh`: outside a reduction, 3/4 of cwnd counts as well.
pub fn current_ssthresh(cwnd: u32, ssthresh: u32, in_reduction: bool) -> u32 {
    if in_reduction {
        ssthresh
    } else {
        ssthresh.max((cwnd >> 1) + (cwnd >> 2))
    }
}

impl Undo {
    /// Linux `tcp_init_undo`: an episode starts at `snd_una`. Retransmissions still in
    /// flight (`retrans_out`) may yet be D-SACKed, so they count as the episode's.
    pub fn start(&mut self, snd_una: u64, retrans_out: u32) {
        self.marker = Some(snd_una);
        self.retrans = (retrans_out > 0).then_some(retrans_out);
    }

    /// Saves the window about to be reduced; `ssthresh: None` forbids restoring it.
    pub fn save(&mut self, cwnd: u32, ssthresh: Option<u32>) {
        self.prior_cwnd = cwnd;
        self.prior_ssthresh = ssthresh;
    }

    /// Linux `tcp_init_cwnd_reduction` records `prior_cwnd` on every reduction.
    pub fn set_prior_cwnd(&mut self, cwnd: u32) {
        self.prior_cwnd = cwnd;
    }

    /// Congestion is proven (ECE): an undo may end the episode but not restore the
    /// window (Linux `prior_ssthresh = 0`).
    pub fn forbid_restore(&mut self) {
        self.prior_ssthresh = None;
    }

    /// Linux `tcp_enter_cwr`: no undo of an ECN reduction.
    pub fn cancel(&mut self) {
        self.marker = None;
    }

    /// An episode is open to undo.
    pub fn is_pending(&self) -> bool {
        self.marker.is_some()
    }

    /// A retransmission left at sender time `tsval` (Linux `tcp_retransmit_skb`).
    pub fn on_retransmit(&mut self, tsval: u32) {
        self.retrans = Some(self.retrans.unwrap_or(0).saturating_add(1));
        self.retrans_stamp.get_or_insert(tsval);
    }

    /// Nothing retransmitted is outstanding any more (Linux clears `retrans_stamp` when
    /// `!tcp_any_retrans_done`).
    pub fn clear_stamp(&mut self) {
        self.retrans_stamp = None;
    }

    /// Linux `tcp_dsack_seen`'s filter: a D-SACK of `segs` segments counts only while
    /// D-SACKed segments do not outnumber all retransmissions ever sent; beyond that
    /// the network duplicated packets and the D-SACK says nothing about us.
    pub fn dsack_plausible(&mut self, segs: u32, total_retrans: u64) -> bool {
        self.dsack_segs = self.dsack_segs.saturating_add(u64::from(segs));
        self.dsack_segs <= total_retrans
    }

    /// `segs` retransmissions ending at `end` were D-SACKed (Linux `tcp_check_dsack`
    /// and `tcp_sacktag_one`): they count for the episode if they lie above its start.
    pub fn on_dsack(&mut self, end: u64, segs: u32) {
        if let (Some(marker), Some(left)) = (self.marker, self.retrans) {
            if left > 0 && end > marker {
                self.retrans = Some(left.saturating_sub(segs));
            }
        }
    }

    /// Every retransmission of the episode was D-SACKed (Linux `tcp_try_undo_dsack`).
    pub fn all_retrans_dsacked(&self) -> bool {
        self.marker.is_some() && self.retrans == Some(0)
    }

    /// Linux `tcp_packet_delayed`: the ACK echoes `tsecr` (0 or absent: no echo) from
    /// before the first retransmission, or nothing has been retransmitted yet. Without
    /// SACK, "nothing retransmitted" cannot be trusted once SND.UNA reaches the
    /// recovery point (`unreliable_no_stamp`, Linux's non-SACK exception).
    pub fn packet_delayed(&self, tsecr: Option<u32>, unreliable_no_stamp: bool) -> bool {
        match self.retrans_stamp {
            Some(stamp) => tsecr.is_some_and(|e| e != 0 && (e.wrapping_sub(stamp) as i32) < 0),
            None => !unreliable_no_stamp,
        }
    }

    /// Linux `tcp_may_undo`.
    pub fn may_undo(&self, tsecr: Option<u32>, unreliable_no_stamp: bool) -> bool {
        self.marker.is_some()
            && (self.retrans == Some(0) || self.packet_delayed(tsecr, unreliable_no_stamp))
    }

    /// The undo: the episode ends; returns the window to restore unless that was
    /// forbidden. The saved window is used up, so no later undo restores it again.
    pub fn take(&mut self) -> Option<Prior> {
        self.marker = None;
        self.prior_ssthresh.take().map(|ssthresh| Prior {
            cwnd: self.prior_cwnd,
            ssthresh,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn episode(retrans_out: u32) -> Undo {
        let mut u = Undo::default();
        u.save(20, Some(u32::MAX));
        u.start(1000, retrans_out);
        u
    }

    #[test]
    fn dsack_of_every_retransmission_allows_undo() {
        let mut u = episode(0);
        assert!(!u.all_retrans_dsacked(), "nothing retransmitted yet");
        u.on_retransmit(100);
        u.on_retransmit(101);
        u.on_dsack(2000, 1);
        assert!(!u.all_retrans_dsacked());
        u.on_dsack(3000, 1);
        assert!(u.all_retrans_dsacked());
        assert_eq!(
            u.take(),
            Some(Prior {
                cwnd: 20,
                ssthresh: u32::MAX
            })
        );
        assert!(!u.is_pending());
        assert_eq!(u.take(), None, "restored once only");
    }

    #[test]
    fn dsack_below_the_episode_start_does_not_count() {
        let mut u = episode(0);
        u.on_retransmit(100);
        u.on_dsack(1000, 1);
        assert!(!u.all_retrans_dsacked());
    }

    #[test]
    fn timestamp_echo_before_first_retransmission_means_delayed() {
        let mut u = episode(0);
        assert!(u.packet_delayed(None, false), "no retransmission yet");
        assert!(!u.packet_delayed(None, true), "non-SACK exception");
        u.on_retransmit(500);
        u.on_retransmit(600);
        assert!(u.packet_delayed(Some(499), false));
        assert!(
            !u.packet_delayed(Some(500), false),
            "echo of the retransmission"
        );
        assert!(!u.packet_delayed(Some(550), false));
        assert!(!u.packet_delayed(None, false), "no timestamps: no Eifel");
        assert!(u.may_undo(Some(10), false));
        assert!(!u.may_undo(Some(700), false));
    }

    #[test]
    fn timestamp_comparison_survives_wraparound() {
        let mut u = episode(0);
        u.on_retransmit(5);
        assert!(u.packet_delayed(Some(u32::MAX - 3), false));
    }

    #[test]
    fn ecn_forbids_restoring_the_window() {
        let mut u = episode(1);
        u.forbid_restore();
        u.on_dsack(2000, 1);
        assert!(u.all_retrans_dsacked());
        assert_eq!(u.take(), None);
    }

    #[test]
    fn implausible_dsacks_are_rejected() {
        let mut u = Undo::default();
        assert!(u.dsack_plausible(1, 1));
        assert!(
            !u.dsack_plausible(1, 1),
            "more D-SACKed than ever retransmitted"
        );
    }

    #[test]
    fn current_ssthresh_keeps_three_quarters_outside_reduction() {
        assert_eq!(current_ssthresh(40, 10, false), 30);
        assert_eq!(current_ssthresh(40, 10, true), 10);
        assert_eq!(current_ssthresh(40, u32::MAX, false), u32::MAX);
    }
}
