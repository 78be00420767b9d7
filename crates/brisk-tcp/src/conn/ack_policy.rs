//! The receiver's ACK policy, in one place: when to ACK (Linux `__tcp_ack_snd_check`,
//! delayed ACK with quick-ACK credits, RFC 1122 §4.2.3.2 and RFC 5681 §4.2), when an
//! ACK must be built at once inside a receive batch (out-of-order and D-SACK news,
//! RFC 2018 §4 / RFC 2883), when a read opens the window enough to announce it
//! (`tcp_cleanup_rbuf`), and what window to advertise (RFC 7323 §2.4, receiver SWS
//! avoidance, RFC 9293 §3.8.6.2.2).

use super::{Connection, SegmentKind};
use crate::conn::timer::Timer;
use brisk_time::Instant;
use brisk_wire::Flags;

/// Delayed-ACK state, after Linux's `icsk_ack` (RFC 1122 §4.2.3.2, RFC 5681 §4.2).
#[derive(Clone, Debug)]
pub struct AckState {
    /// An ACK must go out with the next transmission opportunity.
    pub immediate: bool,
    /// Data arrived that is not yet ACKed (the delayed-ACK timer is pending).
    pub pending: bool,
    /// Quick-ACK credits: ACK every segment while positive (Linux TCP_MAX_QUICKACKS).
    pub quick: u32,
    /// Bytes received since the last ACK we sent.
    pub unacked_bytes: u64,
    /// In-order data that arrived with PSH and less than a full segment waits for
    /// its (delayed) ACK: Linux's `ICSK_ACK_PUSHED`, which makes the read that drains
    /// the receive queue send the ACK at once (`tcp_cleanup_rbuf`).
    pub pushed: bool,
}

/// Linux `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;

impl Default for AckState {
    fn default() -> Self {
        AckState::new(MAX_QUICKACKS)
    }
}

impl AckState {
    /// No ACK owed, with `quick` quick-ACK credits (`AckConfig::quick_acks`).
    pub fn new(quick: u32) -> Self {
        AckState {
            immediate: false,
            pending: false,
            quick,
            unacked_bytes: 0,
            pushed: false,
        }
    }

    /// An ACK was sent: everything is acknowledged.
    pub fn on_ack_sent(&mut self) {
        if self.pending || self.immediate {
            self.quick = self.quick.saturating_sub(1);
        }
        self.immediate = false;
        self.pending = false;
        self.unacked_bytes = 0;
        self.pushed = false;
    }
}

impl Connection {
    /// An ACK must go out at the next transmission opportunity.
    pub(super) fn ack_now(&mut self) {
        self.sub.rcv.ack.immediate = true;
    }

    /// Whether a pure ACK is due now: one was asked for, or a CE mark must be echoed
    /// on data not yet acknowledged.
    pub(super) fn ack_due(&self) -> bool {
        self.sub.rcv.ack.immediate
            || self.sub.rcv.ece_pending && self.sub.rcv.ack.pending && !self.accurate_ce_echo()
    }

    /// Whether this receiver echoes each CE mark on the ACK of the marked segment
    /// (RFC 8257 §3.2; Linux lets the receiver's controller decide, and DCTCP does)
    /// instead of latching ECE until CWR (RFC 3168 §6.1.3).
    pub(super) fn accurate_ce_echo(&self) -> bool {
        self.config.congestion.controller.base.accurate_ce_echo()
    }

    /// The ECN field of an arriving data segment (ECN negotiated).
    ///
    /// - RFC 3168 §6.1.3: CE latches ECE until the peer's CWR, and is ACKed at once.
    /// - RFC 8257 §3.2 (DCTCP's two-state receiver, Linux `dctcp_ece_ack_update`):
    ///   ECE follows the CE state of the latest segment. When the state changes while
    ///   an ACK is held back, that ACK goes out first with the old state, so each ACK's
    ///   ECE describes exactly the segments it acknowledges.
    pub(super) fn note_ecn(&mut self, now: Instant, ecn: brisk_wire::Ecn) {
        let ce = ecn == brisk_wire::Ecn::Ce;
        if !self.accurate_ce_echo() {
            if ce {
                self.sub.rcv.ece_pending = true;
                self.ack_now();
            }
            return;
        }
        if ce == self.sub.rcv.ece_pending {
            return;
        }
        // Data not yet acknowledged, whether its ACK is delayed or owed at once (in
        // a receive batch the owed ACK has not gone out yet).
        let unacked = self.rcv_nxt() > self.sub.rcv.last_ack_sent;
        if unacked && self.sub.rcv.owed_acks.len() < super::MAX_OWED_ACKS {
            let s = self.header(now, self.sub.snd.snd_nxt, Flags::ACK, SegmentKind::Ack);
            let s = self.finish(now, s);
            self.sub.rcv.owed_acks.push_back(s);
        }
        self.sub.rcv.ece_pending = ce;
    }

    /// The delayed-ACK timer fired: send the ACK it held back.
    pub(super) fn on_delayed_ack_timer(&mut self) {
        if self.sub.rcv.ack.pending {
            self.ack_now();
        }
    }

    /// A small pushed segment arrived in order (Linux `tcp_measure_rcv_mss` setting
    /// `ICSK_ACK_PUSHED`): unless the connection is interactive (it sent data within
    /// the delayed-ACK timeout, Linux's pingpong mode), the read that drains the receive
    /// queue will ACK at once. This is why a Linux receiver ACKs every write of a thin
    /// stream promptly instead of delaying it (seen on Linux 6.18 in the RDB real run).
    ///
    /// Inline, and the interactivity test (a `Duration` from an `Instant` difference)
    /// only for a small pushed segment, the only case it decides: it has no effect.
    #[inline]
    pub(super) fn note_pushed(&mut self, now: Instant, len: usize, psh: bool) {
        let small = (len as u64) < u64::from(self.sub.opts.rcv_mss);
        if !(psh && small) {
            return;
        }
        let ato = self.config.ack.ato.min(self.config.ack.max_delay);
        let interactive = self.sub.cong.last_data_sent.is_some_and(|t| now - t < ato);
        if !interactive {
            self.sub.rcv.ack.pushed = true;
        }
    }

    /// After a read: a delayed ACK for pushed data goes out now that the application
    /// has taken everything (Linux `tcp_cleanup_rbuf`: `ICSK_ACK_PUSHED`, not
    /// pingpong, receive memory empty).
    pub(super) fn ack_pushed_after_read(&mut self) {
        if self.sub.rcv.ack.pending
            && self.sub.rcv.ack.pushed
            && self.stream.recvbuf.readable() == 0
        {
            self.ack_now();
        }
    }

    /// After the application read: a window update (RFC 9293 §3.8.6.2.2, Linux
    /// `tcp_cleanup_rbuf`) when the window we could offer is at least twice what the
    /// peer sees (`before`) and grew by a segment or more.
    pub(super) fn window_update_after_read(&mut self, before: u64) {
        if !self.state.synchronized() || self.sub.rcv.fin_received {
            return;
        }
        let new = self.window_to_offer();
        if new >= 2 * before.max(1) && new - before >= u64::from(self.sub.opts.rcv_mss) {
            self.ack_now();
        }
    }

    /// Delayed-ACK policy for in-order data (Linux `__tcp_ack_snd_check`).
    /// Inline: asked for every in-order data segment.
    #[inline]
    pub(super) fn schedule_ack(&mut self, now: Instant) {
        if !self.config.ack.delayed || self.sub.rcv.ack.quick > 0 {
            self.ack_now();
        } else if self.sub.rcv.ack.unacked_bytes > u64::from(self.sub.opts.rcv_mss) {
            // More than one full segment unacknowledged: ACK every second segment.
            self.ack_now();
        } else {
            self.sub.rcv.ack.pending = true;
            if !self.sub.timers.is_set(Timer::DelayedAck) {
                let ato = self.config.ack.ato.min(self.config.ack.max_delay);
                self.sub.timers.set(Timer::DelayedAck, now + ato);
            }
        }
    }

    /// Data `[off, end)` (stream offsets) is arriving while an immediate ACK for
    /// earlier segments is still owed — the caller handed over several segments
    /// before polling, as a receive batch does. Linux ACKs each out-of-order or
    /// duplicate segment as it processes it (RFC 5681 §4.2, RFC 2018 §4, RFC 2883);
    /// merged into one ACK per batch, the SACK blocks pushed out of the three or four
    /// option slots and all D-SACKs but the last never reach the sender, which then
    /// marks received data lost and retransmits it. So the owed ACK is built now, as
    /// it stands, whenever this arrival would hide something it reports:
    /// - it carries a D-SACK (a later duplicate would replace it);
    /// - the arrival is out of order and does not extend the most recent SACK block,
    ///   so it reorders the blocks and may push the last reported one out;
    /// - without SACK, every out-of-order arrival is a duplicate ACK the sender counts.
    ///
    /// In-order data only moves the cumulative ACK (blocks it reaches are then covered
    /// by it) and growing the most recent block only extends what the owed ACK says,
    /// so those arrivals share one ACK, as a plain cumulative ACK is subsumed by the
    /// next one. That keeps the owed ACKs to one per SACK-relevant event of a batch.
    ///
    /// Inline for its common answer, no immediate ACK pending (every data segment
    /// asks); the rest out of line. Testing `immediate` before reading `has_dsack`
    /// changes nothing: the read has no effect.
    #[inline]
    pub(super) fn owe_ack_before_arrival(&mut self, now: Instant, off: u64, end: u64) {
        if !self.sub.rcv.ack.immediate {
            return;
        }
        self.owe_ack_before_arrival_immediate(now, off, end);
    }

    /// `owe_ack_before_arrival` once an immediate ACK is pending.
    #[inline(never)]
    fn owe_ack_before_arrival_immediate(&mut self, now: Instant, off: u64, end: u64) {
        let dsack = self.sub.opts.sack_ok && self.stream.recvbuf.has_dsack();
        if !(self.stream.recvbuf.has_ooo() || dsack) {
            return;
        }
        let out_of_order = off > self.stream.recvbuf.nxt();
        let hides = dsack
            || (out_of_order
                && (!self.sub.opts.sack_ok || !self.stream.recvbuf.extends_latest_block(off, end)));
        if !hides || self.sub.rcv.owed_acks.len() >= super::MAX_OWED_ACKS {
            return;
        }
        let s = self.header(now, self.sub.snd.snd_nxt, Flags::ACK, SegmentKind::Ack);
        let s = self.finish(now, s);
        self.sub.rcv.owed_acks.push_back(s);
    }

    /// The 16-bit window field: free space, never shrinking the right edge (RFC 7323
    /// §2.4) and growing it only in steps of min(buffer/2, MSS) (receiver SWS
    /// avoidance, RFC 9293 §3.8.6.2.2).
    pub(super) fn advertise_window(&mut self) -> u16 {
        let nxt = self.rcv_nxt();
        let cur = self.sub.rcv.rcv_adv.saturating_sub(nxt);
        let offer = self.window_to_offer();
        let step =
            (self.stream.recvbuf.capacity() as u64 / 2).min(u64::from(self.sub.opts.rcv_mss));
        let wnd = if offer <= cur || offer - cur < step {
            cur
        } else {
            offer
        };
        let ws = self.sub.opts.rcv_wscale;
        let field = wnd.div_ceil(1u64 << ws).min(65_535);
        self.sub.rcv.rcv_adv = self.sub.rcv.rcv_adv.max(nxt + (field << ws));
        field as u16
    }

    /// The window we would advertise now, in bytes, before scaling.
    pub(super) fn window_to_offer(&self) -> u64 {
        let free = self.stream.recvbuf.free() as u64;
        let max = 65_535u64 << self.sub.opts.rcv_wscale;
        // Round down to the scale granularity so the right edge is exact.
        (free.min(max) >> self.sub.opts.rcv_wscale) << self.sub.opts.rcv_wscale
    }

    /// What the peer currently sees as our window.
    pub(super) fn rcv_window_now(&self) -> u64 {
        self.sub.rcv.rcv_wnd()
    }
}
