//! The opt-in per-packet event log. The owner enables it with a capacity and drains it
//! (`drain_events`) as often as it likes; once full, further events are counted as lost
//! rather than stored, so memory stays bounded even if nobody drains.
//!
//! Events are stored in processing order and carry the virtual time they happened at.
//! When the driver polls exactly at `poll_timeout` (the simulator) that order is also
//! time order; a driver that polls late gets `Depart` events later in the log, still
//! stamped with their true times (sort by [`NetEvent::at`], a stable sort, to restore).
//!
//! From these the simulator derives queue length and sojourn over time (`Enqueue`,
//! `Dequeue`), drops with times and reasons (`Drop`), and per-packet one-way delay.

use brisk_time::{Duration, Instant};

use crate::stats::DropReason;

/// One thing that happened to one packet at an element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetEvent {
    /// Accepted into the queue; occupancy is after the enqueue.
    Enqueue {
        at: Instant,
        id: u64,
        flow: u32,
        bytes: usize,
        queue_packets: usize,
        queue_bytes: usize,
    },
    /// Left the queue to start serialisation; occupancy is after the dequeue.
    Dequeue {
        at: Instant,
        id: u64,
        flow: u32,
        bytes: usize,
        sojourn: Duration,
        queue_packets: usize,
        queue_bytes: usize,
        ce_marked: bool,
    },
    /// Dropped, with why.
    Drop {
        at: Instant,
        id: u64,
        flow: u32,
        bytes: usize,
        reason: DropReason,
    },
    /// An extra copy of packet `id` was made.
    Duplicate { at: Instant, id: u64, flow: u32 },
    /// Bit `bit` (counting from the first byte's MSB) of packet `id` was flipped.
    Corrupt {
        at: Instant,
        id: u64,
        flow: u32,
        bit: usize,
    },
    /// Handed out of the element by `poll_packet`.
    Depart {
        at: Instant,
        id: u64,
        flow: u32,
        bytes: usize,
    },
}

impl NetEvent {
    pub fn at(&self) -> Instant {
        match *self {
            NetEvent::Enqueue { at, .. }
            | NetEvent::Dequeue { at, .. }
            | NetEvent::Drop { at, .. }
            | NetEvent::Duplicate { at, .. }
            | NetEvent::Corrupt { at, .. }
            | NetEvent::Depart { at, .. } => at,
        }
    }
}

/// A bounded buffer of events, disabled (capacity 0) by default.
#[derive(Clone, Debug, Default)]
pub struct EventLog {
    events: Vec<NetEvent>,
    capacity: usize,
    lost: u64,
}

impl EventLog {
    /// Starts logging, keeping at most `capacity` undrained events (0 disables).
    pub fn enable(&mut self, capacity: usize) {
        self.capacity = capacity;
        // Reserve lazily: a large capacity is a limit, not a promise to fill it.
        self.events.reserve(capacity.min(4096));
    }

    pub fn is_enabled(&self) -> bool {
        self.capacity > 0
    }

    /// Events that arrived while the log was full.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    #[inline]
    pub(crate) fn push(&mut self, ev: impl FnOnce() -> NetEvent) {
        if self.capacity == 0 {
            return;
        }
        if self.events.len() < self.capacity {
            self.events.push(ev());
        } else {
            self.lost = self.lost.saturating_add(1);
        }
    }

    /// Moves every stored event, oldest first, to the end of `out`.
    pub fn drain_into(&mut self, out: &mut Vec<NetEvent>) {
        out.append(&mut self.events);
    }

    /// The events logged since the last [`clear`](Self::clear) or drain, in order:
    /// for an owner that reads them in place (the simulator does after every element
    /// call, and moving them to another vector first was a measurable share of a
    /// metered link's cost).
    pub fn events(&self) -> &[NetEvent] {
        &self.events
    }

    /// Forgets the logged events (the capacity stays).
    pub fn clear(&mut self) {
        self.events.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(i: u64) -> NetEvent {
        NetEvent::Duplicate {
            at: Instant::from_nanos(i),
            id: i,
            flow: 0,
        }
    }

    #[test]
    fn disabled_log_stores_nothing() {
        let mut log = EventLog::default();
        log.push(|| ev(1));
        let mut out = Vec::new();
        log.drain_into(&mut out);
        assert!(out.is_empty());
        assert_eq!(log.lost(), 0);
    }

    #[test]
    fn full_log_counts_lost_events_until_drained() {
        let mut log = EventLog::default();
        log.enable(2);
        for i in 0..5 {
            log.push(|| ev(i));
        }
        assert_eq!(log.lost(), 3);
        let mut out = Vec::new();
        log.drain_into(&mut out);
        assert_eq!(out, vec![ev(0), ev(1)]);
        log.push(|| ev(9));
        log.drain_into(&mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(out[2], ev(9));
    }
}
