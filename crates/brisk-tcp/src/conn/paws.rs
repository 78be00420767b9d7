//! PAWS, RFC 7323 §5.3, with Linux's exemption for reordered duplicate ACKs
//! (`tcp_disordered_ack_check` in net/ipv4/tcp_input.c).
//!
//! A segment whose TSval is older than TS.Recent is a stale duplicate and is dropped.
//! On a path that reorders, though, pure duplicate ACKs overtake one another: the
//! peer's TSval on a dup ACK that was sent earlier is older than the one that arrived
//! first, yet it carries SACK information the sender needs. Linux accepts such an ACK
//! when it cannot change any state a replayed old segment could corrupt: it carries
//! no data, sits exactly at RCV.NXT, acknowledges exactly SND.UNA, would not update the
//! send window, and its TSval is within a replay window of about one RTO.
//!
//! Like Linux (`TCP_PAWS_WINDOW`), a TSval one tick behind is not old: segments the
//! peer sent within the same clock tick or across one tick boundary reorder on any
//! path with jitter, and RFC 7323 §5.3 exists to reject wrapped duplicates from far
//! in the past, not those.

use super::Connection;
use brisk_wire::TcpRepr;

/// Linux `TCP_PAWS_WINDOW`: TSval ticks a segment may trail TS.Recent and still pass.
const PAWS_WINDOW: i32 = 1;

impl Connection {
    /// Whether PAWS rejects `seg` (`seq`: its sequence number as a receive offset).
    pub(super) fn paws_rejects(&self, seg: &TcpRepr<'_>, seq: i64) -> bool {
        if !self.sub.opts.ts_ok || !self.sub.opts.ts_recent_valid || seg.flags.rst() {
            return false;
        }
        let Some(ts) = seg.timestamps else {
            return false;
        };
        let behind = self.sub.opts.ts_recent.wrapping_sub(ts.tsval) as i32;
        behind > PAWS_WINDOW && !self.disordered_ack(seg, seq, behind)
    }

    /// Linux `tcp_disordered_ack_check`: a reordered pure duplicate ACK (`behind`:
    /// how far its TSval trails TS.Recent, > 0). Only for a segment PAWS would
    /// reject, so out of line.
    #[cold]
    #[inline(never)]
    fn disordered_ack(&self, seg: &TcpRepr<'_>, seq: i64, behind: i32) -> bool {
        let pure_at_rcv_nxt = seg.flags.ack() && seg.seg_len() == 0 && seq == self.rcv_nxt() as i64;
        let duplicate = self.unwrap_ack(seg.ack) == self.sub.snd.snd_una as i64;
        let wnd = u64::from(seg.window) << self.sub.opts.snd_wscale;
        // Linux `tcp_may_update_window` with ACK == SND.UNA.
        let window_update = seq > self.sub.snd.snd_wl1
            || (seq == self.sub.snd.snd_wl1 && wnd > self.sub.snd.snd_wnd);
        pure_at_rcv_nxt && duplicate && !window_update && behind <= self.tsval_replay_window()
    }

    /// How far back (in the peer's TSval ticks) a disordered ACK may be: one RTO,
    /// allowing for peers whose timestamp clock runs at up to 1200 Hz (Linux
    /// `tcp_tsval_replay`; RFC 7323 §5.4 allows 1 ms to 1 s per tick).
    fn tsval_replay_window(&self) -> i32 {
        let ms = self.current_rto().as_millis().min(i32::MAX as u128 / 2) as i64;
        (ms * 6 / 5).min(i64::from(i32::MAX)) as i32
    }
}
