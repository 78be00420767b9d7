//! The transmit path's order (RFC 9293 §3.8.6, RFC 5681/6675 transmission rules).
//! Each `poll_transmit` returns at most one segment, chosen in this order: pending
//! RST; owed ACKs of a receive batch; SYN / SYN-ACK; probe (zero-window or
//! keepalive); TLP probe; retransmission of the lowest lost segment (or, under F-RTO,
//! new data first); new data (and FIN); RC3's low-priority copies; a pure ACK. Which bytes go is decided in
//! `select`, how the segment is built in `segment`.

use super::{Connection, Segment, SegmentKind, State};
use brisk_time::Instant;
use brisk_wire::Flags;

impl Connection {
    /// The next segment to send, if any. Before its [`Connection::payload`], the caller
    /// calls [`Connection::prepare_payload`] (bytes written by reference to a generated
    /// sequence are produced then).
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Segment> {
        if self.mp.is_some() {
            return self.mp_poll_transmit(now);
        }
        self.ack_ended_poll = false;
        // `close` has no clock: an orphan already in FIN-WAIT-2 gets its timer here,
        // at the poll that follows every application call.
        self.arm_fin_wait2(now);
        if let Some((seq, ack)) = self.pending_rst.take() {
            return Some(self.rst_segment(now, seq, ack));
        }
        if let Some(s) = self.sub.rcv.owed_acks.pop_front() {
            return Some(s);
        }
        match self.state {
            State::Closed | State::Listen => return None,
            State::SynSent => {
                return if self.sub.hs.syn_pending {
                    Some(self.syn_segment(now))
                } else {
                    None
                };
            }
            State::SynReceived => {
                if self.sub.hs.syn_pending {
                    return Some(self.syn_segment(now));
                }
                // A Fast Open child sends in SYN-RECEIVED once its SYN-ACK is out
                // (Linux lets a passive Fast Open socket write before the third ACK).
                if self.tfo.is_some() && self.tfo_passive_pending() {
                    if let Some(s) = self.send_new_data(now, false) {
                        return Some(s);
                    }
                }
                if self.sub.rcv.ack.immediate {
                    let s = self.header(now, self.sub.snd.snd_nxt, Flags::ACK, SegmentKind::Ack);
                    return Some(self.finish(now, s));
                }
                return None;
            }
            _ => {}
        }
        if self.sub.probes.probe_pending {
            self.sub.probes.probe_pending = false;
            let seq = self.sub.snd.snd_una.saturating_sub(1);
            let s = self.header(now, seq, Flags::ACK, SegmentKind::Probe);
            return Some(self.finish(now, s));
        }
        if self.sub.loss.probe_pending() {
            if let Some(s) = self.send_tlp_probe(now) {
                return Some(s);
            }
        }
        // F-RTO step 2b (RFC 5682 §3.1; Linux `tcp_xmit_recovery` with REXMIT_NEW):
        // new data instead of retransmissions; if none can go, recover as usual.
        let mut retransmit = true;
        if self.sub.loss.frto_new_data_first() {
            if let Some(s) = self.send_new_data(now, false) {
                return Some(s);
            }
            retransmit = self.sub.loss.frto_nothing_new(self.sub.snd.snd_nxt);
        }
        if retransmit {
            if let Some(s) = self.send_retransmit(now) {
                return Some(s);
            }
        }
        if let Some(s) = self.send_new_data(now, false) {
            return Some(s);
        }
        if retransmit {
            if let Some(s) = self.send_forward_retransmit(now) {
                return Some(s);
            }
        }
        // RC3's low-priority copies, once the primary loop has sent what it may.
        if let Some(s) = self.send_rlp_copy(now) {
            return Some(s);
        }
        if self.ack_due() {
            let s = self.header(now, self.sub.snd.snd_nxt, Flags::ACK, SegmentKind::Ack);
            // `finish` without passing the segment through it (a copy of it per ACK):
            // a `header` segment has no payload.
            self.finish_sent(now, 0);
            // Everything above found nothing, and building the ACK changed none of
            // what they read; `finish` cleared `ack_due`'s reasons. RC3's copies are
            // left out of the argument.
            self.ack_ended_poll = !self.mech.sends_extras();
            return Some(s);
        }
        None
    }

    /// Whether the last [`poll_transmit`](Self::poll_transmit) returned a pure ACK
    /// from its last branch, after every other kind of output (RST, owed ACKs,
    /// probes, retransmissions, new data) had been checked and found nothing. Sending
    /// it clears what made it due and changes nothing those checks read, so until
    /// the next input (a segment, a timeout, an application call) another poll
    /// returns `None`; the endpoint skips that poll. Each such check that finds
    /// nothing leaves the connection as a repeat of it would (flags such as
    /// `app_limited` or a persist timer set once), so the skipped poll changes nothing.
    pub fn poll_exhausted(&self) -> bool {
        self.ack_ended_poll
    }

    /// Produces `seg`'s payload if the send buffer holds it by reference to a generated
    /// sequence ([`crate::SharedBytes::generated`]) or across a jump of bytes held by
    /// reference in pieces (an MPTCP subflow's, `SendBuffer::write_shared_runs`), for
    /// [`Connection::payload`] to lend; nothing otherwise. Called by the endpoint for
    /// every segment it emits, between `poll_transmit` and `payload` (here rather
    /// than in `poll_transmit`, whose
    /// wrapping cost a copy of every polled segment: +1.4 % instructions for plain TCP).
    #[inline]
    pub fn prepare_payload(&mut self, seg: &Segment) {
        if seg.payload_len > 0 && self.stream.sendbuf.needs_materialize() {
            self.stream
                .sendbuf
                .materialize(seg.payload_offset, seg.payload_len as usize);
        }
    }

    /// The payload bytes of a segment returned by `poll_transmit` (after
    /// [`Connection::prepare_payload`]).
    /// Inline: the endpoint asks for it for every segment it emits.
    #[inline]
    pub fn payload(&self, seg: &Segment) -> &[u8] {
        if seg.payload_len == 0 {
            return &[];
        }
        if self.mp.is_some() {
            return self.mp_payload(seg);
        }
        self.stream
            .sendbuf
            .slice(seg.payload_offset, seg.payload_len as usize)
    }
}
