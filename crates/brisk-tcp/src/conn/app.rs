//! The application's calls on a connection: writes (plain, prioritised, shared),
//! reads (in order, in place, unordered), the per-connection switches, close,
//! half-close and abort. Bytes and FIN are the stream's (`stream.rs`); the calls that
//! need the subflow (window updates after a read, RST on abort) ask it.

use super::*;

impl Connection {
    /// Queues bytes for sending; returns how many fit in the send buffer.
    ///
    /// With prioritised send on this is a priority-0 write that may be taken in part
    /// (a plain stream write has no boundaries to keep).
    pub fn write(&mut self, data: &[u8]) -> usize {
        if self.mp.is_some() {
            return self.mp_write(data);
        }
        if self.inspace.is_some() && self.inspace_frames_tx() {
            return self.inspace_write(data);
        }
        if self.mech.whole_writes() {
            let n = data.len().min(self.stream.sendbuf.capacity());
            let taken = self.queue_write(&data[..n], 0);
            if taken < data.len() {
                self.stream.writable_wanted = true;
            }
            return taken;
        }
        self.queue_write(data, 0)
    }

    /// `write` with a scheduling priority (higher is more urgent). With prioritised send
    /// on ([`set_unordered_send`](Self::set_unordered_send)) the write is taken whole or
    /// not at all and goes ahead of unsent writes of lower priority (never ahead of sent
    /// or partly sent data; `docs/mechanisms/utcp.md`). Otherwise the priority is only
    /// recorded and bytes are sent in write order.
    pub fn write_with_priority(&mut self, data: &[u8], priority: u8) -> usize {
        if self.mp.is_some() {
            return self.mp_write(data);
        }
        if self.inspace.is_some() && self.inspace_frames_tx() {
            return self.inspace_write(data);
        }
        self.queue_write(data, priority)
    }

    /// `write(src.at(off, len))`, byte for byte and event for event, except that the
    /// send buffer may keep a reference to `src` instead of a copy (see
    /// [`SharedBytes`]). `len` is clamped to [`send::MAX_SHARED_SLICE`].
    pub fn write_shared(&mut self, src: &SharedBytes, off: u64, len: usize) -> usize {
        if self.mp.is_some() {
            let len = len.min(send::MAX_SHARED_SLICE);
            // By reference at the data level, a generated sequence too: the subflows
            // take it by reference (`DataSend::write_to`) and `mp_poll_transmit`
            // prepares each subflow segment's payload.
            return self.mp_write_shared(src, off, len);
        }
        if self.mech.whole_writes() || (self.inspace.is_some() && self.inspace_frames_tx()) {
            return self.write(&src.at(off, len));
        }
        let len = len.min(send::MAX_SHARED_SLICE);
        self.queue_with(len, |b| b.write_shared(src, off, len, 0))
    }

    /// An MPTCP subflow's `write_shared` (`DataSend::write_to`): as `write_shared`, but
    /// the send buffer keeps the bytes by reference also when they do not continue
    /// the previous write in `src` (the other subflows took the bytes between;
    /// `SendBuffer::write_shared_runs`). Byte for byte and event for event the same.
    pub(crate) fn write_shared_runs(&mut self, src: &SharedBytes, off: u64, len: usize) -> usize {
        if self.mp.is_some()
            || self.mech.whole_writes()
            || (self.inspace.is_some() && self.inspace_frames_tx())
        {
            return self.write_shared(src, off, len);
        }
        let len = len.min(send::MAX_SHARED_SLICE);
        self.queue_with(len, |b| b.write_shared_runs(src, off, len))
    }

    pub(super) fn queue_write(&mut self, data: &[u8], priority: u8) -> usize {
        let prioritised = self.mech.whole_writes();
        self.queue_with(data.len(), |b| {
            if prioritised {
                b.write_prioritised(data, priority)
            } else {
                b.write(data, priority)
            }
        })
    }

    /// A write of `want` bytes that `put` places in the send buffer.
    fn queue_with(&mut self, want: usize, put: impl FnOnce(&mut SendBuffer) -> usize) -> usize {
        if self.stream.fin_queued
            || !matches!(
                self.state,
                State::SynSent | State::SynReceived | State::Established | State::CloseWait
            )
        {
            return 0;
        }
        let offset = self.stream.sendbuf.end();
        let n = put(&mut self.stream.sendbuf);
        // The mechanisms count in the subflow's sequence space.
        let map = self.sub.map;
        self.mech.on_write_queued(
            map.stream_to_snd(offset),
            map.stream_to_snd(offset + n as u64),
        );
        if n < want {
            self.stream.writable_wanted = true;
        }
        n
    }

    /// Reads in-order bytes; returns how many were copied.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        if self.mp.is_some() {
            return self.mp_read(buf);
        }
        if self.inspace.is_some() && self.inspace_reads_framed() {
            return self.inspace_read(buf);
        }
        self.read_raw(buf)
    }

    /// In-order stream bytes as they arrived (Inner Space's framing included).
    pub(super) fn read_raw(&mut self, buf: &mut [u8]) -> usize {
        let before = self.rcv_window_now();
        let n = self.stream.recvbuf.read(buf);
        if n > 0 {
            self.window_update_after_read(before);
            self.ack_pushed_after_read();
        }
        n
    }

    /// [`read`](Self::read) that hands the bytes to `f` in place instead of copying
    /// them out (`buf` is used only when they wrap around the receive ring; at most
    /// `buf.len()` bytes, as `read`). Same window updates and ACK effects as `read`;
    /// `f` runs before them and cannot reach the connection.
    #[inline]
    pub fn read_in_place(&mut self, buf: &mut [u8], f: &mut dyn FnMut(&[u8])) -> usize {
        if self.mp.is_some() {
            return self.mp_read_in_place(buf, f);
        }
        if self.inspace.is_some() && self.inspace_reads_framed() {
            let n = self.inspace_read(buf);
            if n > 0 {
                f(&buf[..n]);
            }
            return n;
        }
        let before = self.rcv_window_now();
        let n = self.stream.recvbuf.read_in_place(buf, f);
        if n > 0 {
            self.window_update_after_read(before);
            self.ack_pushed_after_read();
        }
        n
    }

    /// [`read_in_place`](Self::read_in_place) until nothing is readable: the bytes
    /// handed to `f` in stream order, their count returned. A plain connection stops
    /// when its receive buffer is empty, where a caller's loop made one more call
    /// that found nothing; MPTCP and Inner Space read until a read returns 0, as
    /// such a loop does (their readable count is not what a read returns).
    pub fn read_all_in_place(&mut self, buf: &mut [u8], f: &mut dyn FnMut(&[u8])) -> u64 {
        let plain = self.mp.is_none() && self.inspace.is_none();
        let mut total = 0;
        loop {
            let n = self.read_in_place(buf, f);
            total += n as u64;
            if n == 0 || (plain && self.stream.recvbuf.readable() == 0) {
                return total;
            }
        }
    }

    /// Unordered receive on or off (uTCP `SO_UNORDERED`; `docs/mechanisms/utcp.md`).
    /// May be switched at any time; already-handed-out bytes stay handed out.
    pub fn set_unordered(&mut self, on: bool) {
        if self.config.unordered != on {
            Arc::make_mut(&mut self.config).unordered = on;
        }
        if on && self.stream.recvbuf.has_undelivered_ooo() {
            self.push_event(Event::Readable);
        }
    }

    pub fn unordered(&self) -> bool {
        self.config.unordered
    }

    /// Prioritised send on or off (uTCP `SO_UNORDEREDSEND`). Writes queued before the
    /// switch keep their place; later ones are placed by priority.
    pub fn set_unordered_send(&mut self, on: bool) {
        if self.config.unordered_send != on {
            Arc::make_mut(&mut self.config).unordered_send = on;
        }
        self.mech.set_prioritised(on);
    }

    pub fn unordered_send(&self) -> bool {
        self.config.unordered_send
    }

    /// Nagle on or off on an open connection (`TCP_NODELAY` set after `connect` or
    /// `accept`). Switching it off lets a held small segment go at the next transmit
    /// poll, as Linux's `tcp_push_pending_frames` in `do_tcp_setsockopt`.
    pub fn set_nagle(&mut self, on: bool) {
        if self.config.nagle != on {
            Arc::make_mut(&mut self.config).nagle = on;
        }
    }

    /// The send buffer limit on an open connection (`SO_SNDBUF`), bytes. Bytes already
    /// queued stay; writes are refused until the buffer drains below the new limit.
    pub fn set_send_buffer(&mut self, bytes: usize) {
        if self.config.send_buffer != bytes {
            Arc::make_mut(&mut self.config).send_buffer = bytes;
        }
        self.stream.sendbuf.set_limit(bytes);
    }

    /// Ends a record at the current end of the send buffer (Linux's `MSG_EOR`): no
    /// segment sent later carries bytes from both sides of this point, so the last
    /// bytes written so far leave in a segment of their own end (Linux marks the tail
    /// skb `eor`, and `tcp_skb_can_collapse_to` keeps later writes out of it).
    /// Returns false when there is nothing unsent to mark or 4096 marks are held (then the record may share a segment with what follows).
    pub fn end_record(&mut self) -> bool {
        let next = self.sub.snd.snd_nxt.saturating_sub(1);
        self.stream.end_record(next)
    }

    /// The send buffer limit, bytes.
    pub fn send_buffer(&self) -> usize {
        self.config.send_buffer
    }

    /// The user timeout on an open connection (`TCP_USER_TIMEOUT`, RFC 5482); `None`
    /// turns it off. Takes effect at the next retransmission or probe timer.
    pub fn set_user_timeout(&mut self, t: Option<Duration>) {
        Arc::make_mut(&mut self.config).timeouts.user_timeout = t;
    }

    /// Reads one contiguous run with its 0-based stream offset: in-order data first
    /// (exactly as `read`, including window updates); otherwise, with unordered receive
    /// on, the lowest-offset out-of-order run not yet handed out. Each byte is handed
    /// out of order at most once and always again in order once the hole before it
    /// fills (at-least-once). Out-of-order reads free no buffer space, so ACKs, SACKs
    /// and the window do not depend on them. `None`: nothing to read (or empty `buf`).
    pub fn read_unordered(&mut self, buf: &mut [u8]) -> Option<UnorderedRead> {
        if buf.is_empty() {
            return None;
        }
        if self.mp.is_some() {
            // At the data level (`mptcp/recv.rs`): offsets are data-stream offsets.
            return self.mp_read_unordered(buf);
        }
        if self.stream.recvbuf.readable() > 0 {
            let offset = self.stream.recvbuf.read_offset();
            let len = self.read(buf);
            return Some(UnorderedRead {
                offset,
                len,
                in_order: true,
            });
        }
        if !self.config.unordered || self.inspace_reads_framed() {
            // A framed stream is read in order only.
            return None;
        }
        let (offset, len) = self.stream.recvbuf.read_ooo(buf)?;
        Some(UnorderedRead {
            offset,
            len,
            in_order: false,
        })
    }

    /// Out-of-order reads declined because the handed-out bookkeeping was at its cap
    /// (a hostile peer's doing; the bytes still arrive in order).
    pub fn unordered_declined(&self) -> u64 {
        self.stream.recvbuf.unordered_declined()
    }

    /// Bytes ready to read.
    pub fn readable(&self) -> usize {
        if self.mp.is_some() {
            return self.mp_readable();
        }
        self.stream.recvbuf.readable()
    }

    /// Free space in the send buffer.
    pub fn send_capacity(&self) -> usize {
        if self.mp.is_some() {
            return self.mp_send_capacity();
        }
        self.stream.send_capacity()
    }

    /// Bytes written but not yet acknowledged.
    /// Stream bytes sent at least once (SND.NXT as a stream offset, without SYN and
    /// FIN).
    pub fn sent_offset(&self) -> u64 {
        if self.mp.is_some() {
            return self.mp_sent_offset();
        }
        let n = self.sub.map.snd_to_stream(self.sub.snd.snd_nxt);
        n.saturating_sub(u64::from(self.sub.snd.fin_seq.is_some()))
    }

    /// Stream bytes cumulatively acknowledged (SND.UNA as a stream offset, without
    /// SYN and FIN); on an MPTCP connection the Data ACK's offset (RFC 8684 §3.3.2),
    /// not any subflow's.
    pub fn acked_offset(&self) -> u64 {
        if self.mp.is_some() {
            return self.mp_acked_offset();
        }
        self.sub.stream_acked(self.sub.snd.snd_una)
    }

    /// Bytes written and not yet acknowledged (on an MPTCP connection: not yet
    /// Data-ACKed); `acked_offset() + send_buffered()` is every byte written.
    pub fn send_buffered(&self) -> usize {
        if self.mp.is_some() {
            return self.mp_send_buffered();
        }
        self.stream.sendbuf.len()
    }

    /// With prioritised send on, `write_with_priority` takes a write whole or not at
    /// all, and one longer than this (the send buffer) never fits: callers that wait
    /// for room report it as an error instead. `None`: writes may be taken in part.
    pub fn whole_write_limit(&self) -> Option<usize> {
        self.mech.whole_writes().then_some(self.config.send_buffer)
    }

    /// The error for a prioritised write longer than [`whole_write_limit`](Self::whole_write_limit).
    pub fn check_whole_write(&self, len: usize) -> std::io::Result<()> {
        match self.whole_write_limit() {
            Some(max) if len > max => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("a prioritised write of {len} bytes is larger than the send buffer ({max} bytes)"),
            )),
            _ => Ok(()),
        }
    }

    /// Whether the peer's FIN has been received (after all data before it).
    pub fn peer_closed(&self) -> bool {
        if self.mp.is_some() {
            return self.mp_peer_closed();
        }
        self.stream.fin_received
    }

    /// Graceful close of both directions (FIN after queued data). The application
    /// gives the connection up, as Linux's `close()` orphans the socket: FIN-WAIT-2
    /// then lasts at most `TimeoutConfig::fin_timeout` (`close.rs`), where after
    /// `shutdown_write` alone it lasts until the peer's FIN. Data that has arrived
    /// (or still arrives before the connection ends) can still be read.
    pub fn close(&mut self) {
        if self.mp.is_some() {
            return self.mp_shutdown_write(true);
        }
        match self.state {
            State::SynSent => self.terminate(Ok(())),
            _ => {
                self.orphaned = true;
                self.shutdown_write();
                // In FIN-WAIT-2 already (after `shutdown_write`), the timer is armed
                // at the next `poll_transmit`, which has the time (Linux `tcp_close`).
            }
        }
    }

    /// Half-close: no more writes, FIN after queued data; reading continues.
    pub fn shutdown_write(&mut self) {
        if self.mp.is_some() {
            return self.mp_shutdown_write(false);
        }
        if self.stream.fin_queued {
            return;
        }
        match self.state {
            State::SynSent => self.terminate(Ok(())),
            State::SynReceived => self.stream.fin_queued = true,
            State::Established => {
                self.stream.fin_queued = true;
                self.state = State::FinWait1;
            }
            State::CloseWait => {
                self.stream.fin_queued = true;
                self.state = State::LastAck;
            }
            _ => {}
        }
    }

    /// Abort: send RST (in synchronized states), drop everything (RFC 9293 §3.10.5).
    pub fn abort(&mut self) {
        if self.mp.is_some() {
            return self.mp_abort();
        }
        if self.state == State::Closed {
            return;
        }
        if self.state.synchronized() || self.state == State::SynReceived {
            self.queue_rst_ack();
        }
        self.terminate(Err(ConnError::Aborted));
    }
}
