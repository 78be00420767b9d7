//! RC3 in the connection (NSDI 2014 §2, §4.1; spec `rc3.md` §1.4-1.7, A4, A5, A20,
//! A21): the glue between the RLP's state (`crate::rc3::rlp`) and the TCP machine.
//! The Linux patch's counterparts are named at each piece.
//!
//! - Sending copies (`tcp_sendmsg`'s RLP pass): after the primary loop has nothing to
//!   send, `poll_transmit` hands out the RLP's copies, tail first, each at its
//!   priority as DSCP. A copy carries the current ACK but does not count as one sent
//!   (the receiver's priority-0 ACK clock must not depend on a low-priority packet),
//!   is not ECN-capable (a CE mark on a copy must not cut the primary loop's window),
//!   never enters the scoreboard and is never retransmitted.
//! - Skipping delivered data (spec A5): the primary loop's next new segment jumps
//!   over what SACKs showed delivered beyond SND.NXT, so once it reaches the RLP's
//!   copies it sends only the holes, as ordinary new data.
//! - Classifying ACKs (`tcp_ack_rc3`; spec A4(a), A21): an ACK is low priority when
//!   its DSCP is not 0 (an RC3 receiver), or, from a standard receiver whose ACKs
//!   all come back at DSCP 0, when it neither advances SND.UNA nor SACKs anything the
//!   primary loop sent. Low ACKs update the scoreboard and the cumulative ACK (spec
//!   A4(e): otherwise a copy that fills the last hole leaves the sender stalled), but
//!   give no RTT sample, no duplicate-ACK or loss-detection input, and no window
//!   growth from SACKed data.
//! - The ACK bump (§4.1.1): a cumulative ACK beyond SND.NXT moves SND.NXT up to it.
//! - The receiver (`tcp_send_ack_rc3`, §4.1.2): data that arrives with a non-zero
//!   DSCP is ACKed at once at that DSCP, without touching the priority-0 delayed-ACK
//!   state.
//! - Timestamps: a connection with RC3 on does not offer the timestamp option (see
//!   `Connection::from_setup`): copies built at write time and queued behind
//!   priority-0 traffic would reach the peer with TSvals older than its TS.Recent,
//!   and PAWS would drop them.

use super::{Connection, Segment, SegmentKind};
use brisk_time::Instant;
use brisk_wire::Flags;

impl Connection {
    /// The RLP's next copy, if RC3 is on and one is due (`poll_transmit` calls this
    /// after the primary loop, before a pure ACK).
    ///
    /// Inline for a connection without RC3 (no RLP: `None` either way, and both tests
    /// only read), the rest out of line.
    #[inline]
    pub(super) fn send_rlp_copy(&mut self, now: Instant) -> Option<Segment> {
        if !self.mech.sends_extras() {
            return None;
        }
        self.send_rlp_copy_due(now)
    }

    #[inline(never)]
    fn send_rlp_copy_due(&mut self, now: Instant) -> Option<Segment> {
        if !self.data_state_open() {
            return None;
        }
        let wnd_end = self.sub.snd.snd_una + self.sub.snd.snd_wnd;
        let (snd_nxt, mss) = (self.sub.snd.snd_nxt, self.sub.opts.mss);
        let mut copy = self.mech.extra_segment(snd_nxt, wnd_end, mss)?;
        // A copy never spans a record end (`end_record`'s contract, as RDB's bundles
        // do not, `select.rs`): the RLP's chunk joins consecutive writes, and on an
        // MPTCP subflow a record end is where one DSS mapping stops and a
        // non-contiguous one starts (`sub_dsn_break`), so a copy across it would carry
        // the second write's bytes under the first one's data sequence numbers. The
        // rest of the slice is not copied (the primary loop sends it).
        let from = self.sub.map.snd_to_stream(copy.start);
        let acked = self.sub.map.snd_to_stream(self.sub.snd.snd_una);
        let to_end = self.stream.bytes_to_record_end(from, acked);
        if to_end < copy.end - copy.start {
            copy.end = copy.start + to_end;
        }
        let len = (copy.end - copy.start) as u32;
        let mut flags = Flags::ACK;
        if self.sub.map.snd_to_stream(copy.end) == self.stream.sendbuf.end() {
            flags.insert(Flags::PSH);
        }
        let mut s = self.header(now, copy.start, flags, SegmentKind::Redundant);
        s.payload_offset = self.sub.map.snd_to_stream(copy.start);
        s.payload_len = len;
        s.meta.dscp = copy.priority;
        s.meta.priority = copy.priority;
        self.record_tx(now, &s);
        Some(s)
    }

    /// The receiver's half (§4.1.2): whether data just handled arrived at low priority
    /// on a connection running RC3, so its ACK goes at once at the data's DSCP.
    pub(super) fn rc3_low_data(&self) -> bool {
        self.rx_dscp != 0 && self.mech.runs_rc3()
    }

    /// An ACK at the arriving data's DSCP, queued to go now. It leaves the priority-0
    /// ACK state alone: a pending delayed ACK stays pending and goes at priority 0.
    pub(super) fn queue_low_ack(&mut self, now: Instant) {
        if self.sub.rcv.owed_acks.len() >= super::MAX_OWED_ACKS {
            self.ack_now();
            return;
        }
        let dscp = self.rx_dscp;
        let mut s = self.header(now, self.sub.snd.snd_nxt, Flags::ACK, SegmentKind::Ack);
        s.meta.dscp = dscp;
        s.meta.priority = dscp;
        self.record_tx(now, &s);
        self.sub.rcv.owed_acks.push_back(s);
        self.mech.on_low_ack_sent();
    }
}
