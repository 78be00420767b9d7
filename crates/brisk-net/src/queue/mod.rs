//! Queues: what a link holds while its serialiser is busy.
//!
//! The [`Queue`] trait is shaped for the AQMs to come: RED and step-ECN decide at
//! enqueue (reject, or CE-mark in place), CoDel (RFC 8289) and PIE (RFC 8033) may also
//! drop at dequeue. Drops made inside `dequeue` are reported through
//! [`Queue::poll_drop`], which the owner drains after every `dequeue` so they are
//! counted and logged with their time and sojourn. Every queue stamps packets with their
//! enqueue time so the sojourn is known at dequeue (CoDel's input).

pub mod droptail;

pub use droptail::DropTail;

use brisk_time::{Duration, Instant};

use crate::element::Packet;
use crate::error::NetError;

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

/// A packet a queue dropped on its own while dequeuing.
#[derive(Clone, Debug)]
pub struct QueueDrop {
    pub pkt: Packet,
    pub at: Instant,
    pub enqueued_at: Instant,
}

/// A packet queue. Times passed in never decrease.
pub trait Queue {
    /// Offers a packet at `now`. `Err` gives a rejected packet back to the caller, who
    /// counts it as a queue drop. The queue may CE-mark the packet in place.
    fn enqueue(&mut self, now: Instant, pkt: Packet) -> Result<(), Packet>;

    /// Takes the next packet to send at `now`. An AQM may drop packets on the way; they
    /// are then available from [`Queue::poll_drop`].
    fn dequeue(&mut self, now: Instant) -> Option<Dequeued>;

    /// Packets the last `dequeue` dropped, oldest first. Queues that never drop at
    /// dequeue keep the default.
    fn poll_drop(&mut self) -> Option<QueueDrop> {
        None
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
}

impl From<DropTail> for AnyQueue {
    fn from(q: DropTail) -> Self {
        AnyQueue::DropTail(q)
    }
}

impl Queue for AnyQueue {
    fn enqueue(&mut self, now: Instant, pkt: Packet) -> Result<(), Packet> {
        match self {
            AnyQueue::DropTail(q) => q.enqueue(now, pkt),
        }
    }
    fn dequeue(&mut self, now: Instant) -> Option<Dequeued> {
        match self {
            AnyQueue::DropTail(q) => q.dequeue(now),
        }
    }
    fn poll_drop(&mut self) -> Option<QueueDrop> {
        match self {
            AnyQueue::DropTail(q) => q.poll_drop(),
        }
    }
    fn len_packets(&self) -> usize {
        match self {
            AnyQueue::DropTail(q) => q.len_packets(),
        }
    }
    fn len_bytes(&self) -> usize {
        match self {
            AnyQueue::DropTail(q) => q.len_bytes(),
        }
    }
}
