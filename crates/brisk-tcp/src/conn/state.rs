//! Segment arrival, RFC 9293 §3.10.7, with RFC 5961 blind-attack checks (§3 RST, §4 SYN,
//! §5 ACK), RFC 7323 PAWS and timestamp echo, and data/FIN acceptance.

use super::{Connection, State};
use crate::conn::recv::Arrival;
use crate::event::{ConnError, Event};
use brisk_time::{Duration, Instant};
use brisk_wire::{Ecn, Flags, TcpRepr};

impl Connection {
    /// One segment for this connection (the endpoint has demultiplexed and checksummed
    /// it). `ecn` is the ECN field of the carrying IP packet.
    pub fn handle_segment(&mut self, now: Instant, ecn: Ecn, seg: &TcpRepr<'_>) {
        self.handle_segment_dscp(now, ecn, 0, seg);
    }

    /// `handle_segment` with the IP header's DSCP, which RC3 reads: low-priority data
    /// is ACKed at its priority, and low-priority ACKs only update the scoreboard.
    pub fn handle_segment_dscp(&mut self, now: Instant, ecn: Ecn, dscp: u8, seg: &TcpRepr<'_>) {
        if self.mp.is_some() {
            return self.mp_handle_segment(now, ecn, dscp, seg);
        }
        self.rx_dscp = dscp;
        self.info.segs_in += 1;
        match self.state {
            State::Closed | State::Listen => {}
            State::SynSent => self.on_segment_syn_sent(now, seg),
            State::TimeWait => self.on_segment_time_wait(now, seg),
            _ => self.on_segment_synchronized(now, ecn, seg),
        }
    }

    /// RFC 9293 §3.10.7.4 for synchronized states (and SYN-RECEIVED), in three steps:
    /// screening (PAWS, acceptability, RST and SYN checks), the ACK, then FIN
    /// transitions and data.
    fn on_segment_synchronized(&mut self, now: Instant, ecn: Ecn, seg: &TcpRepr<'_>) {
        let seq = self.unwrap_rcv(seg.seq);
        if !self.screen_segment(now, seg, seq) || !self.accept_ack(now, seg, seq) {
            return;
        }
        self.after_ack(now, ecn, seg, seq);
    }

    /// The checks before the ACK field is looked at. Returns false when the segment
    /// ends here (answered, dropped or handled as a handshake retransmission).
    ///
    /// The segment of an in-order transfer (past the handshake, at RCV.NXT, ACK set,
    /// no SYN or RST, PAWS passing) passes every check below without acting on any:
    /// it is answered here, and the rest sits out of line (`screen_segment_full`), so
    /// the per-segment path's code stays small (Linux's header prediction, which
    /// `tcp_rcv_established` tests before `tcp_validate_incoming`, has the same aim).
    #[inline]
    fn screen_segment(&mut self, now: Instant, seg: &TcpRepr<'_>, seq: i64) -> bool {
        let f = seg.flags;
        if self.state != State::SynReceived
            && f.ack()
            && !f.syn()
            && !f.rst()
            && seq == self.rcv_nxt() as i64
            && !self.paws_rejects(seg, seq)
        {
            return true;
        }
        self.screen_segment_full(now, seg, seq)
    }

    /// `screen_segment` for every other segment: RFC 9293 §3.10.7.4's checks in order.
    #[cold]
    #[inline(never)]
    fn screen_segment_full(&mut self, now: Instant, seg: &TcpRepr<'_>, seq: i64) -> bool {
        let f = seg.flags;
        let rcv_nxt = self.rcv_nxt() as i64;

        // A retransmitted SYN while in SYN-RECEIVED: our SYN-ACK was lost, resend it
        // (Linux `tcp_check_req`), before the window check would only ACK it.
        if self.state == State::SynReceived && f.syn() && !f.ack() && !f.rst() && seq == 0 {
            self.sub.hs.syn_pending = true;
            return false;
        }

        // Simultaneous open: the peer's SYN-ACK in SYN-RECEIVED, exactly matching,
        // completes the handshake (Linux `tcp_validate_incoming`).
        let simopen_synack = self.state == State::SynReceived
            && f.syn()
            && f.ack()
            && !f.rst()
            && seq == 0
            && seg.seg_len() == 1
            && self.unwrap_ack(seg.ack) == self.sub.snd.snd_nxt as i64;

        // PAWS (RFC 7323 §5.3, `paws`): an old TSval marks a stale duplicate; ACK and
        // drop — except a reordered duplicate ACK, as Linux.
        if self.paws_rejects(seg, seq) {
            self.counters.paws_drops += 1;
            // Linux `tcp_validate_incoming`: a SYN failing PAWS is challenged (RFC 5961
            // §4.2); other replies share the out-of-window ACK limit, which data is
            // exempt from (`tcp_oow_rate_limited`).
            if f.syn() {
                self.challenge_ack(now);
                return false;
            }
            if self.oow_rate_limited(now, seg) {
                return false;
            }
            // Linux `tcp_send_dupack`: old data below RCV.NXT is D-SACKed (RFC 2883),
            // so a sender whose originals were only delayed learns it and can undo.
            // Nothing at or above RCV.NXT is taken from a segment PAWS rejected.
            // (Below the stream's in-order end, which a FIN taken does not move.)
            let nxt = self.stream.recvbuf.nxt();
            if !seg.payload.is_empty() && seq >= 1 && self.sub.map.rcv_to_stream(seq as u64) < nxt {
                let off = self.sub.map.rcv_to_stream(seq as u64);
                let keep = (nxt - off).min(seg.payload.len() as u64) as usize;
                self.owe_ack_before_arrival(now, off, off + keep as u64);
                let _ = self.land(seq as u64, &seg.payload[..keep]);
            }
            self.ack_now();
            return false;
        }

        if !self.acceptable(now, seg, seq, rcv_nxt, simopen_synack) {
            return false;
        }

        // RST (RFC 5961 §3.2): exact match resets, otherwise challenge.
        if f.rst() {
            if seq == rcv_nxt {
                let result = self.reset_result();
                self.terminate(result);
            } else {
                self.challenge_ack(now);
            }
            return false;
        }

        // SYN in a synchronized state (RFC 5961 §4): challenge ACK. In SYN-RECEIVED a
        // retransmitted SYN means our SYN-ACK was lost: send it again.
        if f.syn() && !simopen_synack {
            if self.state == State::SynReceived && seq == 0 {
                self.sub.hs.syn_pending = true;
            } else {
                self.challenge_ack(now);
            }
            return false;
        }
        f.ack()
    }

    /// What an accepted RST tells the application. RFC 9293 §3.10.7.4 (second
    /// check): in ESTABLISHED, FIN-WAIT-1/2 and CLOSE-WAIT the user gets a
    /// "connection reset" signal; in CLOSING and LAST-ACK the connection just enters
    /// CLOSED ("delete the TCB, and return"): the peer's FIN is already in, so
    /// nothing can be missing from our receive direction. Linux `tcp_reset` sets
    /// ECONNRESET there too, but reports it only to a socket the application still
    /// holds (`!SOCK_DEAD`), never to one it closed. brisk reports `Closed` to every
    /// handle, so it says `Ok(())` when all we sent before our FIN was ACKed (the RST
    /// cancels only the ACK of the FIN, and the application lost nothing) and
    /// `Err(Reset)` when data of ours may be lost.
    ///
    /// The common case: a peer whose TIME-WAIT ended before our retransmitted FIN
    /// arrived (its ACK of our first FIN was lost) answers it with RST, as Linux does
    /// for a segment to no socket. The simulator's workloads keep TIME-WAIT at 1 s
    /// (`tcp.time_wait`), shorter than a passive closer's RTO after a lost
    /// SYN-ACK or a backed-off FIN, and counted such completed flows as reset.
    fn reset_result(&self) -> Result<(), ConnError> {
        let snd = &self.sub.snd;
        let all_acked = snd.fin_seq.is_some_and(|fin| snd.snd_una >= fin);
        if matches!(self.state, State::LastAck | State::Closing) && all_acked {
            Ok(())
        } else {
            Err(ConnError::Reset)
        }
    }

    /// RFC 9293 §3.10.7.4's first check: the segment overlaps the receive window. An
    /// unacceptable one is ACKed (and old data D-SACKed) and counted.
    fn acceptable(
        &mut self,
        now: Instant,
        seg: &TcpRepr<'_>,
        seq: i64,
        rcv_nxt: i64,
        simopen_synack: bool,
    ) -> bool {
        let f = seg.flags;
        // The in-sequence segment, every segment of an in-order transfer: acceptable
        // whatever the window (the last rule below), so nothing else need be computed.
        // Linux's header prediction likewise tests `seq == rcv_nxt` first.
        if seq == rcv_nxt && !f.syn() {
            return true;
        }
        let len = i64::from(seg.seg_len());
        let wnd = self.rcv_window_now() as i64;
        let in_wnd = |s: i64| s >= rcv_nxt && s < rcv_nxt + wnd;
        let acceptable = match (len, wnd) {
            (0, 0) => seq == rcv_nxt,
            (0, _) => in_wnd(seq),
            (_, 0) => false,
            _ => in_wnd(seq) || in_wnd(seq + len - 1),
        } || (seq == rcv_nxt && !f.syn())
            || simopen_synack;
        if !acceptable {
            self.counters.out_of_window += 1;
            if f.rst() {
                return false;
            }
            // RFC 5961 §4.2: a SYN, whatever its sequence number, gets a challenge ACK
            // (Linux `tcp_validate_incoming`, `syn_challenge`), rate-limited as such.
            if f.syn() {
                self.challenge_ack(now);
                return false;
            }
            // Linux `tcp_validate_incoming` step 1: a duplicate ACK, unless
            // `tcp_oow_rate_limited` says one went out too recently. Only segments
            // occupying no sequence space (pure ACKs) are limited: a blind
            // attacker's or a looping peer's ACKs draw at most one reply per
            // `invalid_ratelimit`, while a spurious retransmission of data still gets
            // its D-SACK at once, so a real sender's loss recovery is unchanged.
            if !self.oow_rate_limited(now, seg) {
                // A retransmission of data we already have: D-SACK it (RFC 2883).
                // Only bytes below the stream's in-order end: once the peer's FIN is
                // taken RCV.NXT is one past it, and a byte on the FIN's number is
                // not data (taking it put a byte after the end of the stream).
                if !seg.payload.is_empty() && seq + len <= rcv_nxt && seq >= 1 {
                    let off = self.sub.map.rcv_to_stream(seq as u64);
                    let below = self.stream.recvbuf.nxt().saturating_sub(off);
                    let keep = below.min(seg.payload.len() as u64) as usize;
                    if keep > 0 {
                        self.owe_ack_before_arrival(now, off, off + keep as u64);
                        let _ = self.land(seq as u64, &seg.payload[..keep]);
                    }
                }
                self.ack_now();
            }
        }
        acceptable
    }

    /// The ACK field: timestamps to echo, liveness, the end of the handshake in
    /// SYN-RECEIVED, RFC 5961 §5.2 checks, then the sender's ACK processing. Returns
    /// false when the segment ends here.
    fn accept_ack(&mut self, now: Instant, seg: &TcpRepr<'_>, seq: i64) -> bool {
        // An ACK still owed for earlier segments echoes their TSval, not this one's.
        if !seg.payload.is_empty() {
            let off = self.sub.map.rcv_to_stream(seq.max(1) as u64);
            self.owe_ack_before_arrival(now, off, off + seg.payload.len() as u64);
        }
        self.sub.probes.last_recv = now;
        self.sub.probes.keepalive_probes = 0;

        let ack = self.unwrap_ack(seg.ack);
        if self.state == State::SynReceived && !self.ack_in_syn_received(now, seg, seq, ack) {
            return false;
        }

        // RFC 5961 §5.2: ACKs for unsent data or older than the largest window we saw.
        if ack > self.snd_max() as i64
            || ack < self.sub.snd.snd_una as i64 - self.sub.snd.max_snd_wnd as i64
        {
            self.bad_ack(now);
            return false;
        }
        // RFC 7323 §4.3: remember TSval for echoing; only from a segment whose ACK
        // passed the checks above, as Linux's `tcp_ack` calls `tcp_replace_ts_recent`
        // only after them. A segment ACKing unsent data (a blind or confused sender) must
        // not move TS.Recent: with a high TSval it would make PAWS drop the peer's real
        // segments afterwards (packetdrill's ts_recent/invalid_ack.pkt).
        if self.sub.opts.ts_ok {
            if let Some(ts) = seg.timestamps {
                if seq <= self.sub.rcv.last_ack_sent as i64
                    && (!self.sub.opts.ts_recent_valid
                        || ts.tsval.wrapping_sub(self.sub.opts.ts_recent) as i32 >= 0)
                {
                    self.sub.opts.ts_recent = ts.tsval;
                    self.sub.opts.ts_recent_valid = true;
                }
            }
        }
        self.process_ack(now, seg, ack, seq);
        self.state != State::Closed
    }

    /// The ACK that ends the handshake in SYN-RECEIVED (RFC 9293 §3.10.7.4, fifth
    /// check): an acceptable one establishes the connection; any other is answered
    /// with RST (returns false). Once per connection, so out of line.
    #[cold]
    #[inline(never)]
    fn ack_in_syn_received(&mut self, now: Instant, seg: &TcpRepr<'_>, seq: i64, ack: i64) -> bool {
        if ack > 0 && ack <= self.sub.snd.snd_nxt as i64 {
            self.sub.snd.snd_una = 1;
            self.sub.snd.snd_wnd = u64::from(seg.window) << self.sub.opts.snd_wscale;
            self.sub.snd.max_snd_wnd = self.sub.snd.snd_wnd;
            self.sub.snd.snd_wl1 = seq;
            if !self.sub.hs.syn_retransmitted {
                if let Some(t) = self.sub.hs.syn_sent_at {
                    self.rtt_sample(now, now - t);
                }
            }
            // A Fast Open child was handed to the application at its SYN
            // (`fastopen.rs`): it has nothing more to report here.
            let reported = self.tfo_passive_pending();
            self.established(now);
            if !reported {
                self.push_event(Event::Connected);
            }
            true
        } else {
            self.pending_rst = Some((seg.ack, None));
            false
        }
    }

    /// RFC 5961 §5.2: an ACK of unsent data or older than the largest window seen is
    /// counted and challenged.
    #[cold]
    #[inline(never)]
    fn bad_ack(&mut self, now: Instant) {
        self.counters.bad_acks += 1;
        self.challenge_ack(now);
    }

    /// After the ACK: our FIN's acknowledgement moves the state; then payload, FIN and
    /// CWR.
    fn after_ack(&mut self, now: Instant, ecn: Ecn, seg: &TcpRepr<'_>, seq: i64) {
        let f = seg.flags;
        // Our FIN (the subflow's) acknowledged? (Checked first: no FIN sent, no move.)
        if self.sub.snd.fin_acked() && self.on_fin_acked(now) {
            return;
        }

        if matches!(
            self.state,
            State::Established | State::FinWait1 | State::FinWait2
        ) && (!seg.payload.is_empty() || f.fin())
        {
            self.process_data(now, ecn, seq, seg);
        }
        if f.contains(brisk_wire::Flags::CWR) && !self.accurate_ce_echo() {
            // RFC 3168 §6.1.3: the sender reacted; stop echoing ECE.
            self.sub.rcv.ece_pending = false;
        }
    }

    /// Our FIN is acknowledged: FIN-WAIT-1 moves to FIN-WAIT-2, CLOSING to
    /// TIME-WAIT, LAST-ACK to CLOSED. Returns true when the segment ends here.
    #[cold]
    #[inline(never)]
    fn on_fin_acked(&mut self, now: Instant) -> bool {
        match self.state {
            State::FinWait1 => {
                self.state = State::FinWait2;
                self.arm_fin_wait2(now);
                false
            }
            State::Closing => {
                self.enter_time_wait(now);
                true
            }
            State::LastAck => {
                self.terminate(Ok(()));
                true
            }
            _ => false,
        }
    }

    /// Payload and FIN (RFC 9293 §3.10.7.4, seventh and eighth steps).
    fn process_data(&mut self, now: Instant, ecn: Ecn, seq: i64, seg: &TcpRepr<'_>) {
        let mut data = seg.payload;
        let mut fin = seg.flags.fin();
        let mut seq = seq;
        if seq < 1 {
            // Cannot happen for a well-formed peer (data before IRS+1); trim it.
            let cut = ((1 - seq) as usize).min(data.len());
            data = &data[cut..];
            seq = 1;
        }
        // Trim to the advertised window (never beyond the right edge), and to the
        // buffer: the right edge may pass the buffer's end by up to 2^wscale - 1
        // bytes, because the scaled window field is rounded up so as not to shrink it
        // (`advertise_window`, as Linux's `tcp_select_window` aligns up). Bytes in that
        // slack are dropped; the sender retransmits them once the window opens.
        let buffer_end = self.sub.map.stream_to_rcv(
            self.stream.recvbuf.read_offset() + self.stream.recvbuf.capacity() as u64,
        );
        let right = self.sub.rcv.rcv_adv.min(buffer_end).max(self.rcv_nxt()) as i64;
        if seq + data.len() as i64 > right {
            let keep = (right - seq).max(0) as usize;
            data = &data[..keep.min(data.len())];
            fin = false;
        }
        // The stream ends at the first FIN seen, even one ahead of a hole: nothing
        // past it is data, and a FIN at another number is not taken. (Linux takes the
        // FIN that comes in order first and `tcp_fin` purges the out-of-order queue
        // beyond it; only a broken or hostile peer sends either. Before, bytes past an
        // early FIN joined the stream and carried RCV.NXT past the FIN, which was then
        // never taken.)
        if let Some(end) = self.sub.rcv.fin_seq {
            let end = end as i64;
            if seq + data.len() as i64 > end {
                data = &data[..(end - seq).max(0) as usize];
            }
            fin &= seq + data.len() as i64 == end;
        }
        let seq = seq as u64;
        if self.sub.opts.ecn_ok && !seg.payload.is_empty() {
            self.note_ecn(now, ecn);
        }
        // RC3's receiver (§4.1.2): low-priority data is ACKed at once at its own
        // priority and stays out of the priority-0 ACK clock.
        let low = !data.is_empty() && self.rc3_low_data();
        if low {
            self.land_low(now, seq, data);
        } else if !data.is_empty() {
            let ooo_before = self.stream.recvbuf.ooo_dropped;
            let mem_before = self.stream.recvbuf.mem_dropped;
            match self.land(seq, data) {
                Arrival::InOrder {
                    advanced,
                    filled_hole,
                } => {
                    self.info.bytes_received += advanced;
                    self.push_event(Event::Readable);
                    self.sub.rcv.ack.unacked_bytes += advanced;
                    if filled_hole
                        || self.stream.recvbuf.has_ooo()
                        || self.stream.recvbuf.has_dsack()
                    {
                        self.ack_now();
                    } else {
                        self.note_pushed(now, data.len(), seg.flags.contains(Flags::PSH));
                        self.schedule_ack(now);
                    }
                }
                Arrival::OutOfOrder => {
                    if self.config.unordered {
                        // uTCP: out-of-order data is readable on arrival.
                        self.push_event(Event::Readable);
                    }
                    self.ack_now();
                }
                Arrival::Duplicate | Arrival::Dropped => {
                    self.ack_now();
                }
            }
            self.counters.ooo_dropped += self.stream.recvbuf.ooo_dropped - ooo_before;
            self.counters.mem_dropped += self.stream.recvbuf.mem_dropped - mem_before;
        }
        if fin {
            self.note_peer_fin(seq + data.len() as u64);
        }
        if self.sub.rcv.fin_due() {
            self.on_peer_fin(now);
        }
    }

    /// RC3's low-priority data (§4.1.2): landed, then ACKed at once at its priority.
    #[cold]
    #[inline(never)]
    fn land_low(&mut self, now: Instant, seq: u64, data: &[u8]) {
        let ooo_before = self.stream.recvbuf.ooo_dropped;
        let mem_before = self.stream.recvbuf.mem_dropped;
        let arrival = self.land(seq, data);
        if let Arrival::InOrder { advanced, .. } = arrival {
            self.info.bytes_received += advanced;
            self.push_event(Event::Readable);
        } else if arrival == Arrival::OutOfOrder && self.config.unordered {
            self.push_event(Event::Readable);
        }
        self.counters.ooo_dropped += self.stream.recvbuf.ooo_dropped - ooo_before;
        self.counters.mem_dropped += self.stream.recvbuf.mem_dropped - mem_before;
        self.queue_low_ack(now);
    }

    /// The subflow's FIN at receive offset `fin_seq`; in plain TCP also the stream's
    /// end (under MPTCP the stream's end is the DATA_FIN, RFC 8684 §3.3.3, and the two
    /// differ). Once per connection, so out of line.
    #[cold]
    #[inline(never)]
    fn note_peer_fin(&mut self, fin_seq: u64) {
        self.sub.rcv.fin_seq = Some(fin_seq);
        self.stream.peer_fin = Some(self.sub.map.rcv_to_stream(fin_seq));
    }

    /// Lands `data`, which starts at receive-sequence offset `seq` (at least 1), in the
    /// stream's receive buffer at the offset the subflow's map gives, and moves the
    /// subflow's RCV.NXT over the bytes that came in order. Plain TCP: the subflow's
    /// in-order bytes are the stream's, so the stream's advance is the subflow's.
    #[inline]
    pub(super) fn land(&mut self, seq: u64, data: &[u8]) -> Arrival {
        let off = self.sub.map.rcv_to_stream(seq);
        let arrival = self.stream.recvbuf.insert(off, data);
        if let Arrival::InOrder { advanced, .. } = arrival {
            self.sub.rcv.advance(advanced);
        }
        arrival
    }

    /// The peer's FIN came in order: the subflow takes it (RCV.NXT, the ACK, the
    /// closing states and TIME-WAIT are the subflow's) and, in plain TCP, the stream
    /// ends with it (the application sees `PeerClosed`). Once per connection, so out
    /// of line.
    #[cold]
    #[inline(never)]
    pub(super) fn on_peer_fin(&mut self, now: Instant) {
        debug_assert_eq!(self.stream.peer_fin, Some(self.stream.recvbuf.nxt()));
        self.stream.fin_received = true;
        self.sub.rcv.on_fin();
        self.ack_now();
        self.push_event(Event::PeerClosed);
        match self.state {
            State::SynReceived | State::Established => self.state = State::CloseWait,
            State::FinWait1 => {
                if self.sub.snd.fin_acked() {
                    self.enter_time_wait(now);
                } else {
                    self.state = State::Closing;
                }
            }
            State::FinWait2 => self.enter_time_wait(now),
            _ => {}
        }
    }

    /// Linux `tcp_oow_rate_limited`: true if the ACK answering `seg` must not be sent
    /// because another out-of-window reply went out less than `invalid_ratelimit` ago.
    /// Segments occupying sequence space (data or FIN) without SYN are exempt: they are
    /// unlikely to be part of an ACK loop, and their duplicate ACKs carry loss recovery.
    fn oow_rate_limited(&mut self, now: Instant, seg: &TcpRepr<'_>) -> bool {
        if seg.seg_len() != 0 && !seg.flags.syn() {
            return false;
        }
        self.oow_rate_limited_any(now)
    }

    /// Linux `__tcp_oow_rate_limited`, per connection (`tp->last_oow_ack_time`): at
    /// most one reply per `invalid_ratelimit`; a reply that may go records `now`.
    pub(super) fn oow_rate_limited_any(&mut self, now: Instant) -> bool {
        if let Some(last) = self.last_oow_ack_time {
            if now.saturating_duration_since(last) < self.config.invalid_ratelimit {
                self.counters.oow_acks_suppressed += 1;
                return true;
            }
        }
        self.last_oow_ack_time = Some(now);
        false
    }

    /// RFC 5961 §7 rate-limited challenge ACK. As Linux `tcp_send_challenge_ack`,
    /// first the per-connection out-of-window limit, then the RFC 5961 §7 count per
    /// second. Both stay per connection (Linux keeps the count per network namespace,
    /// randomised since the fix): a counter shared between connections is the side
    /// channel of CVE-2016-5696, through which an off-path attacker learns whether a
    /// guessed 4-tuple and sequence number hit another connection.
    pub(super) fn challenge_ack(&mut self, now: Instant) {
        if self.oow_rate_limited_any(now) {
            return;
        }
        let (start, count) = self.challenge_window;
        let (start, count) = if now - start >= Duration::from_secs(1) {
            (now, 0)
        } else {
            (start, count)
        };
        if count < self.config.challenge_ack_limit {
            self.challenge_window = (start, count + 1);
            self.counters.challenge_acks += 1;
            self.ack_now();
        } else {
            self.challenge_window = (start, count);
            self.counters.challenge_acks_suppressed += 1;
        }
    }
}
