//! The relay of a split-TCP Performance-Enhancing Proxy (RFC 3135 §2.4 "split
//! connections"; seed 004 App. D.1 §1.3: the satellite terminal and gateway each
//! terminate TCP, so one end-to-end connection becomes three).
//!
//! A PEP node is an ordinary brisk [`Endpoint`] that accepts the connection coming
//! towards it and opens the next leg itself; a [`Relay`] joins the two legs and copies
//! bytes between them, each direction through its own bounded pipe. Nothing but the
//! byte stream crosses: TCP options are negotiated per leg, so an option the PEP's own
//! stack does not offer (window scaling, which the seed saw the PEP drop) is simply
//! absent on the legs it terminates. A FIN crosses after the bytes before it; a reset
//! or failure of one leg aborts the other (what Linux-based PEPs such as PEPsal do
//! when one socket errors: close both).
//!
//! Bounded: a pipe never holds more than its capacity, and it reads from its source
//! leg only while it has room, so a fast sender is held back by the source leg's
//! receive window (flow control end to end through the proxy), not by memory.

use brisk_tcp::{ConnHandle, Endpoint, State};
use std::collections::VecDeque;

/// Smallest and largest pipe, bytes.
pub const MIN_PIPE: usize = 1024;
pub const MAX_PIPE: usize = 64 << 20;

/// One direction of a relay.
#[derive(Debug)]
struct Pipe {
    buf: VecDeque<u8>,
    cap: usize,
    /// The source leg's FIN was read (after all its data).
    fin_in: bool,
    /// The FIN was passed on.
    fin_out: bool,
    /// Bytes copied through.
    bytes: u64,
    /// Most bytes held at once.
    high_water: usize,
}

impl Pipe {
    fn new(cap: usize) -> Self {
        Pipe {
            buf: VecDeque::new(),
            cap,
            fin_in: false,
            fin_out: false,
            bytes: 0,
            high_water: 0,
        }
    }
}

/// A relay's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RelayCounters {
    /// Bytes from the accepted leg to the opened one, and back.
    pub forward_bytes: u64,
    pub backward_bytes: u64,
    /// Most bytes either pipe held at once.
    pub high_water: usize,
    /// Legs aborted because the other one failed.
    pub aborts: u64,
}

/// Two connections of one PEP endpoint joined back to back.
#[derive(Debug)]
pub struct Relay {
    /// The leg the PEP accepted (towards the connection's initiator).
    pub accepted: ConnHandle,
    /// The leg the PEP opened (towards the destination).
    pub opened: ConnHandle,
    fwd: Pipe,
    back: Pipe,
    aborted: bool,
}

/// Both legs may carry data (the handshake is over and the write side is open).
fn can_write(ep: &Endpoint, h: ConnHandle) -> bool {
    ep.conn(h)
        .is_some_and(|c| matches!(c.state(), State::Established | State::CloseWait))
}

impl Relay {
    /// Joins `accepted` and `opened`, each direction through a pipe of `pipe` bytes
    /// (clamped to [`MIN_PIPE`]..=[`MAX_PIPE`]).
    pub fn new(accepted: ConnHandle, opened: ConnHandle, pipe: usize) -> Self {
        let cap = pipe.clamp(MIN_PIPE, MAX_PIPE);
        Relay {
            accepted,
            opened,
            fwd: Pipe::new(cap),
            back: Pipe::new(cap),
            aborted: false,
        }
    }

    pub fn counters(&self) -> RelayCounters {
        RelayCounters {
            forward_bytes: self.fwd.bytes,
            backward_bytes: self.back.bytes,
            high_water: self.fwd.high_water.max(self.back.high_water),
            aborts: u64::from(self.aborted),
        }
    }

    /// Bytes held in the pipes now.
    pub fn buffered(&self) -> usize {
        self.fwd.buf.len() + self.back.buf.len()
    }

    /// Both directions are finished (FIN passed each way) or the relay aborted.
    pub fn done(&self) -> bool {
        self.aborted || (self.fwd.fin_out && self.back.fin_out)
    }

    /// Copies what can move in both directions; `scratch` is a read buffer. Returns
    /// whether anything moved.
    pub fn pump(&mut self, ep: &mut Endpoint, scratch: &mut [u8]) -> bool {
        if self.aborted {
            return false;
        }
        // A leg that is gone or failed takes the other down with it.
        let gone = |h| ep.conn(h).is_none_or(|c| c.state() == State::Closed);
        let (a_gone, b_gone) = (gone(self.accepted), gone(self.opened));
        // A leg may go only once both its directions are finished (its FIN read and
        // ours sent); otherwise it failed.
        let a_over = self.fwd.fin_in && self.back.fin_out;
        let b_over = self.back.fin_in && self.fwd.fin_out;
        if (a_gone && !a_over) || (b_gone && !b_over) {
            for h in [self.accepted, self.opened] {
                if let Some(c) = ep.conn_mut(h) {
                    c.abort();
                }
            }
            self.aborted = true;
            return true;
        }
        let a = Self::one_way(ep, self.accepted, self.opened, &mut self.fwd, scratch);
        let b = Self::one_way(ep, self.opened, self.accepted, &mut self.back, scratch);
        a || b
    }

    fn one_way(
        ep: &mut Endpoint,
        from: ConnHandle,
        to: ConnHandle,
        p: &mut Pipe,
        scratch: &mut [u8],
    ) -> bool {
        let mut moved = false;
        // In: only while the pipe has room (the source leg's window does the rest),
        // and never after the source's FIN (its handle may be gone and reused).
        if let Some(c) = ep.conn_mut(from).filter(|_| !p.fin_in) {
            while p.buf.len() < p.cap {
                let room = (p.cap - p.buf.len()).min(scratch.len());
                let n = c.read(&mut scratch[..room]);
                if n == 0 {
                    break;
                }
                p.buf.extend(&scratch[..n]);
                p.high_water = p.high_water.max(p.buf.len());
                moved = true;
            }
            if !p.fin_in && c.peer_closed() && c.readable() == 0 {
                p.fin_in = true;
                moved = true;
            }
        }
        // Out: once the destination leg is up.
        if !can_write(ep, to) {
            return moved;
        }
        if let Some(c) = ep.conn_mut(to) {
            while !p.buf.is_empty() {
                let (head, _) = p.buf.as_slices();
                let n = c.write(head);
                if n == 0 {
                    break;
                }
                p.buf.drain(..n);
                p.bytes += n as u64;
                moved = true;
            }
            if p.buf.is_empty() && p.fin_in && !p.fin_out {
                c.shutdown_write();
                p.fin_out = true;
                moved = true;
            }
        }
        moved
    }
}
