//! Queues: what a link holds while its serialiser is busy.
//!
//! The [`Queue`] trait is shaped for the AQMs to come: RED and step-ECN decide at
//! enqueue (reject, or CE-mark in place), CoDel (RFC 8289) and PIE (RFC 8033) may also
//! drop at dequeue. Drops made inside `dequeue` are reported through
//! [`Queue::poll_drop`], which the owner drains after every `dequeue` so they are
//! counted and logged with their time and sojourn. Every queue stamps packets with their
//! enqueue time so the sojourn is known at dequeue (CoDel's input).

pub mod codel;
pub mod droptail;
mod fifo;
pub mod fq_codel;
pub mod pie;
pub mod prio;
pub mod red;

pub use codel::{CoDel, CoDelParams};
pub use droptail::DropTail;
pub use fq_codel::{FqCoDel, FqCoDelParams};
pub use pie::{Pie, PieParams};
pub use prio::{BandCounters, Prio, PrioParams};
pub use red::{Red, RedParams};

use brisk_time::{Duration, Instant};

use crate::element::Packet;
use crate::error::NetError;

/// CE-marks an ECN-capable (ECT(0) or ECT(1)) packet in place; returns whether it did.
/// Not-ECT packets are left alone (an AQM drops them instead) and CE ones already
/// carry the signal.
///
/// Writes `pkt.data` directly and keeps `l4_csum_valid`: CE marking changes only the
/// ECN bits of the IPv4 TOS / IPv6 traffic class (and the IPv4 header checksum, updated
/// incrementally), none of which is in the TCP/UDP pseudo-header, so a transport
/// checksum that verified before still does.
pub(crate) fn mark_if_ect(pkt: &mut Packet) -> bool {
    use brisk_wire::{mark_ce, peek_ecn, Ecn};
    matches!(peek_ecn(&pkt.data), Some(Ecn::Ect0 | Ecn::Ect1)) && mark_ce(&mut pkt.data)
}

/// A packet leaving a queue.
#[derive(Clone, Debug)]
pub struct Dequeued {
    pub pkt: Packet,
    pub enqueued_at: Instant,
    /// Whether the queue CE-marked this packet (at enqueue or dequeue).
    pub ce_marked: bool,
}

impl Dequeued {
    /// Time spent in the queue, if dequeued at `now`.
    pub fn sojourn(&self, now: Instant) -> Duration {
        now - self.enqueued_at
    }
}

/// A packet a queue dropped on its own: an AQM's drop while dequeuing, or (`overflow`)
/// a packet pushed out to make room (FQ-CoDel drops from its fattest flow when full).
#[derive(Clone, Debug)]
pub struct QueueDrop {
    pub pkt: Packet,
    pub at: Instant,
    pub enqueued_at: Instant,
    pub overflow: bool,
}

/// A packet queue. Times passed in never decrease.
pub trait Queue {
    /// Offers a packet at `now`. `Err` gives a rejected packet back to the caller, who
    /// counts it as a queue drop. The queue may CE-mark the packet in place.
    fn enqueue(&mut self, now: Instant, pkt: Packet) -> Result<(), Packet>;

    /// Takes the next packet to send at `now`. An AQM may drop packets on the way; they
    /// are then available from [`Queue::poll_drop`].
    fn dequeue(&mut self, now: Instant) -> Option<Dequeued>;

    /// Packets the last `enqueue` or `dequeue` dropped, oldest first; the owner drains
    /// them after each call. Queues that drop only the packet offered keep the default.
    fn poll_drop(&mut self) -> Option<QueueDrop> {
        None
    }

    /// Whether [`Queue::poll_drop`] may return a packet now; false lets the owner
    /// skip the call. The default, true, is always correct; queues that keep the
    /// default `poll_drop` (never a drop) answer false.
    fn drops_pending(&self) -> bool {
        true
    }

    /// Whether a packet of `len` bytes offered now would be taken, left unmarked, and
    /// be the next and only packet `dequeue` gives, with nothing dropped on the way:
    /// then a link whose serialiser is free may put it on the wire without the round
    /// trip through the queue (`Link::pass_straight`), with the same counters and log.
    /// The default, false, is always correct; a plain drop-tail FIFO that is empty
    /// answers true for a packet within its limit.
    fn passes_straight(&self, _len: usize) -> bool {
        false
    }

    fn len_packets(&self) -> usize;
    fn len_bytes(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }
}

/// A queue size limit, in packets or in bytes of IP packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(usize),
    Bytes(usize),
}

impl QueueLimit {
    pub(crate) fn validate(self, field: &'static str) -> Result<Self, NetError> {
        let v = match self {
            QueueLimit::Packets(n) | QueueLimit::Bytes(n) => n,
        };
        if v == 0 {
            return Err(NetError::invalid(field, 0, "must be at least 1"));
        }
        Ok(self)
    }

    /// Whether a queue of `packets`/`bytes` has room for `len` more bytes.
    pub(crate) fn fits(self, packets: usize, bytes: usize, len: usize) -> bool {
        match self {
            QueueLimit::Packets(n) => packets < n,
            // The packet count is capped too, so empty packets cannot pile up unbounded.
            QueueLimit::Bytes(n) => packets < n && bytes.saturating_add(len) <= n,
        }
    }

    /// Whether occupancy `packets`/`bytes` is strictly above this threshold.
    pub(crate) fn exceeded_by(self, packets: usize, bytes: usize) -> bool {
        match self {
            QueueLimit::Packets(n) => packets > n,
            QueueLimit::Bytes(n) => bytes > n,
        }
    }
}

/// Every queue brisk has, as a closed enum (no vtable on the per-packet path).
#[derive(Clone, Debug)]
pub enum AnyQueue {
    DropTail(DropTail),
    CoDel(CoDel),
    /// Boxed: its random stream makes it several times the others' size.
    Red(Box<Red>),
    /// Boxed for the same reason.
    Pie(Box<Pie>),
    FqCoDel(Box<FqCoDel>),
    /// Strict priority by DSCP (RC3's network).
    Prio(Prio),
}

impl AnyQueue {
    /// The queue in the words of Mahimahi's `# queue:` log header
    /// (`droptail [packets=100]`, `droptail [bytes=64000]`); other disciplines by name.
    pub fn describe(&self) -> String {
        match self {
            AnyQueue::DropTail(q) => match q.limit() {
                QueueLimit::Packets(n) => format!("droptail [packets={n}]"),
                QueueLimit::Bytes(n) => format!("droptail [bytes={n}]"),
            },
            AnyQueue::CoDel(_) => "codel".into(),
            AnyQueue::Red(_) => "red".into(),
            AnyQueue::Pie(_) => "pie".into(),
            AnyQueue::FqCoDel(_) => "fq_codel".into(),
            AnyQueue::Prio(_) => "prio".into(),
        }
    }

    /// The strict-priority queue, for its per-band counters.
    pub fn as_prio(&self) -> Option<&Prio> {
        match self {
            AnyQueue::Prio(q) => Some(q),
            _ => None,
        }
    }
}

impl From<Prio> for AnyQueue {
    fn from(q: Prio) -> Self {
        AnyQueue::Prio(q)
    }
}

impl From<FqCoDel> for AnyQueue {
    fn from(q: FqCoDel) -> Self {
        AnyQueue::FqCoDel(Box::new(q))
    }
}

impl From<Pie> for AnyQueue {
    fn from(q: Pie) -> Self {
        AnyQueue::Pie(Box::new(q))
    }
}

impl From<Red> for AnyQueue {
    fn from(q: Red) -> Self {
        AnyQueue::Red(Box::new(q))
    }
}

impl From<DropTail> for AnyQueue {
    fn from(q: DropTail) -> Self {
        AnyQueue::DropTail(q)
    }
}

impl From<CoDel> for AnyQueue {
    fn from(q: CoDel) -> Self {
        AnyQueue::CoDel(q)
    }
}

/// Calls `$body` with `$q` bound to the concrete queue.
macro_rules! each_queue {
    ($self:expr, $q:ident => $body:expr) => {
        match $self {
            AnyQueue::DropTail($q) => $body,
            AnyQueue::CoDel($q) => $body,
            AnyQueue::Red($q) => $body,
            AnyQueue::Pie($q) => $body,
            AnyQueue::FqCoDel($q) => $body,
            AnyQueue::Prio($q) => $body,
        }
    };
}

// The dispatch is inline: links call it for every packet from the simulator's crate,
// where an out-of-line `enqueue` moved the packet (and its `Result`) through one more
// call each way.
impl Queue for AnyQueue {
    #[inline]
    fn enqueue(&mut self, now: Instant, pkt: Packet) -> Result<(), Packet> {
        each_queue!(self, q => q.enqueue(now, pkt))
    }
    #[inline]
    fn dequeue(&mut self, now: Instant) -> Option<Dequeued> {
        each_queue!(self, q => q.dequeue(now))
    }
    fn poll_drop(&mut self) -> Option<QueueDrop> {
        each_queue!(self, q => q.poll_drop())
    }
    #[inline]
    fn drops_pending(&self) -> bool {
        each_queue!(self, q => q.drops_pending())
    }
    /// Drop-tail only: the other disciplines keep state that an arrival or a
    /// dequeue moves (averages, drop schedules, flow tables, bands), so their packets
    /// always take the queue.
    #[inline]
    fn passes_straight(&self, len: usize) -> bool {
        match self {
            AnyQueue::DropTail(q) => q.passes_straight(len),
            _ => false,
        }
    }
    #[inline]
    fn len_packets(&self) -> usize {
        each_queue!(self, q => q.len_packets())
    }
    #[inline]
    fn len_bytes(&self) -> usize {
        each_queue!(self, q => q.len_bytes())
    }
}

/// IPv4 packets for the queues' tests (and brisk-scenario's link tests).
#[doc(hidden)]
pub mod test_packets {
    use super::Packet;
    use brisk_time::Instant;
    use brisk_wire::Ecn;

    /// A 20-byte IPv4 header with the given ECN bits and a valid checksum, padded to
    /// `len` bytes.
    pub fn ip(id: u64, len: usize, ecn: Ecn) -> Packet {
        ip_tos(id, len, ecn as u8)
    }

    /// As [`ip`], with the whole TOS byte given (DSCP << 2 | ECN).
    pub fn ip_tos(id: u64, len: usize, tos: u8) -> Packet {
        let mut h = vec![
            0x45, tos, 0, 20, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        let c = !fold(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h.resize(len.max(20), 0);
        Packet {
            data: h,
            id,
            flow: 0,
            sent_at: Instant::ZERO,
            l4_csum_valid: false,
        }
    }

    /// A 40-byte IPv6 header with traffic class `tclass`, padded to `len` bytes.
    pub fn ip6(id: u64, len: usize, tclass: u8) -> Packet {
        let mut h = vec![0u8; 40];
        h[0] = 0x60 | (tclass >> 4);
        h[1] = tclass << 4;
        h[6] = 6; // next header: TCP
        h[7] = 64;
        h.resize(len.max(40), 0);
        Packet {
            data: h,
            id,
            flow: 0,
            sent_at: Instant::ZERO,
            l4_csum_valid: false,
        }
    }

    /// A bare header (20 bytes).
    pub fn ipv4(id: u64, ecn: Ecn) -> Packet {
        ip(id, 20, ecn)
    }

    /// The ones'-complement sum of the first 20 bytes (0xffff for a valid header).
    pub fn fold(b: &[u8]) -> u16 {
        let mut s: u32 = b[..20]
            .chunks(2)
            .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
            .sum();
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        s as u16
    }
}
