//! The transmit path's order (RFC 9293 §3.8.6, RFC 5681/6675 transmission rules).
//! Each `poll_transmit` returns at most one segment, chosen in this order: pending
//! RST; owed ACKs of a receive batch; SYN / SYN-ACK; probe (zero-window or
//! keepalive); TLP probe; retransmission of the lowest lost segment (or, under F-RTO,
//! new data first); new data (and FIN); RC3's low-priority copies; a pure ACK. Which bytes go is decided in
//! `select`, how the segment is built in `segment`.

use super::{Connection, Segment, SegmentKind, State};
use brisk_time::Instant;
use brisk_wire::Flags;

/// What [`Connection::poll_before_new_data`] decided.
enum Early {
    /// The poll returns this.
    Return(Option<Segment>),
    /// On to new data; `retransmit`: the retransmission branches stay on (F-RTO
    /// turns them off once its new data went beyond the recovery point).
    Continue { retransmit: bool },
}

/// How the last [`Connection::poll_transmit`] ended, for
/// [`Connection::poll_exhausted`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PollEnd {
    /// Another poll may find something.
    Open,
    /// A pure ACK from the last branch: everything else was checked and found nothing.
    Ack,
    /// A new data segment after which [`Connection::poll_finds_nothing`] held.
    Data,
}

impl Connection {
    /// The next segment to send, if any. Before its [`Connection::payload`], the caller
    /// calls [`Connection::prepare_payload`] (bytes written by reference to a generated
    /// sequence are produced then).
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Segment> {
        if self.mp.is_some() {
            return self.mp_poll_transmit(now);
        }
        self.poll_end = PollEnd::Open;
        // `close` has no clock: an orphan already in FIN-WAIT-2 gets its timer here,
        // at the poll that follows every application call.
        self.arm_fin_wait2(now);
        let mut retransmit = true;
        if self.output_before_new_data() {
            match self.poll_before_new_data(now) {
                Early::Return(s) => return s,
                Early::Continue { retransmit: r } => retransmit = r,
            }
        }
        if let Some(s) = self.send_new_data(now, false) {
            // The usual end of a sender's poll: cwnd now full. Proved here rather
            // than found by one more poll (62 % of `bench sim`'s polls found
            // nothing, docs/performance.md, "Polls and cold code").
            if self.poll_finds_nothing() {
                self.poll_end = PollEnd::Data;
            }
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
            if !self.mech.sends_extras() {
                self.poll_end = PollEnd::Ack;
            }
            return Some(s);
        }
        None
    }

    /// Whether anything `poll_transmit` checks before new data is pending: a RST,
    /// owed ACKs, a handshake state, a zero-window or keepalive probe, a TLP probe,
    /// F-RTO's new-data-first step, a segment marked lost. Reads only; with none of
    /// them the poll goes straight to new data, and [`Connection::poll_finds_nothing`]
    /// needs none of them pending.
    #[inline]
    fn output_before_new_data(&self) -> bool {
        self.pending_rst.is_some()
            || !self.sub.rcv.owed_acks.is_empty()
            || !self.state.synchronized()
            || self.sub.probes.probe_pending
            || self.sub.loss.probe_pending()
            || self.sub.loss.frto_new_data_first()
            || !self.sub.loss.no_lost_pending()
    }

    /// `poll_transmit`'s branches before new data, in their order: pending RST;
    /// owed ACKs of a receive batch; SYN / SYN-ACK; probe (zero-window or
    /// keepalive); TLP probe; F-RTO's new data; retransmission of the lowest lost
    /// segment. Out of line and cold: a bulk flow in steady state takes none of
    /// them, and inline they were code its every poll ran past (the instruction
    /// cache, docs/performance.md, "The hot path as shipped").
    #[cold]
    #[inline(never)]
    fn poll_before_new_data(&mut self, now: Instant) -> Early {
        if let Some((seq, ack)) = self.pending_rst.take() {
            return Early::Return(Some(self.rst_segment(now, seq, ack)));
        }
        if let Some(s) = self.sub.rcv.owed_acks.pop_front() {
            return Early::Return(Some(s));
        }
        match self.state {
            State::Closed | State::Listen => return Early::Return(None),
            State::SynSent => {
                return Early::Return(if self.sub.hs.syn_pending {
                    Some(self.syn_segment(now))
                } else {
                    None
                });
            }
            State::SynReceived => {
                if self.sub.hs.syn_pending {
                    return Early::Return(Some(self.syn_segment(now)));
                }
                // A Fast Open child sends in SYN-RECEIVED once its SYN-ACK is out
                // (Linux lets a passive Fast Open socket write before the third ACK).
                if self.tfo.is_some() && self.tfo_passive_pending() {
                    if let Some(s) = self.send_new_data(now, false) {
                        return Early::Return(Some(s));
                    }
                }
                if self.sub.rcv.ack.immediate {
                    let s = self.header(now, self.sub.snd.snd_nxt, Flags::ACK, SegmentKind::Ack);
                    return Early::Return(Some(self.finish(now, s)));
                }
                return Early::Return(None);
            }
            _ => {}
        }
        if self.sub.probes.probe_pending {
            self.sub.probes.probe_pending = false;
            let seq = self.sub.snd.snd_una.saturating_sub(1);
            let s = self.header(now, seq, Flags::ACK, SegmentKind::Probe);
            return Early::Return(Some(self.finish(now, s)));
        }
        if self.sub.loss.probe_pending() {
            if let Some(s) = self.send_tlp_probe(now) {
                return Early::Return(Some(s));
            }
        }
        // F-RTO step 2b (RFC 5682 §3.1; Linux `tcp_xmit_recovery` with REXMIT_NEW):
        // new data instead of retransmissions; if none can go, recover as usual.
        let mut retransmit = true;
        if self.sub.loss.frto_new_data_first() {
            if let Some(s) = self.send_new_data(now, false) {
                return Early::Return(Some(s));
            }
            retransmit = self.sub.loss.frto_nothing_new(self.sub.snd.snd_nxt);
        }
        if retransmit {
            if let Some(s) = self.send_retransmit(now) {
                return Early::Return(Some(s));
            }
        }
        Early::Continue { retransmit }
    }

    /// Whether a [`poll_transmit`](Self::poll_transmit) now would return `None` and
    /// write nothing, at any later time until the next input (a segment, a timeout,
    /// an application call): nothing pending before new data
    /// (`output_before_new_data`, the same test the poll makes), no FIN-WAIT-2
    /// timer to arm, new data blocked with its side effects already taken
    /// (`new_data_settled`: out of data, or cwnd full), no forward retransmission
    /// (its own guard), no RC3 and no ACK due. Conservative: `false` for an MPTCP
    /// connection and wherever new data is held for a reason not listed (the
    /// peer's window, Nagle, sender SWS avoidance).
    ///
    /// The poll uses it after a data segment (so the endpoint skips the poll that
    /// would find cwnd full), the endpoint after a segment arrives (a data segment
    /// whose ACK is delayed needs no poll), and the endpoint before each poll.
    /// Out of line: three callers on the hot path, each would carry a copy.
    #[inline(never)]
    pub fn poll_finds_nothing(&self) -> bool {
        self.mp.is_none()
            && !self.output_before_new_data()
            && !self.fin_wait2_unarmed()
            && !self.mech.sends_extras()
            && self.new_data_settled()
            && self.forward_retransmit_ruled_out()
            && !self.ack_due()
    }

    /// Whether the last [`poll_transmit`](Self::poll_transmit) left nothing for
    /// another poll to find until the next input (a segment, a timeout, an
    /// application call); the endpoint skips that poll. Either it returned a pure
    /// ACK from its last branch, after every other kind of output (RST, owed ACKs,
    /// probes, retransmissions, new data) had been checked and found nothing
    /// (sending it clears what made it due and changes nothing those checks read,
    /// and each check that found nothing leaves the connection as a repeat of it
    /// would: flags such as `app_limited` or a persist timer set once); or it
    /// returned new data after which [`Connection::poll_finds_nothing`] held.
    pub fn poll_exhausted(&self) -> bool {
        self.poll_end != PollEnd::Open
    }

    /// `poll_exhausted` by a pure ACK alone. An MPTCP connection's poll asks this of
    /// its last subflow: its own poll refills and schedules the subflows first, so
    /// a subflow's data segment proves nothing for it.
    pub(super) fn ack_ended_poll(&self) -> bool {
        self.poll_end == PollEnd::Ack
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
