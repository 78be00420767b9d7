//! The FIFO every queue keeps its packets in: entries stamped with their enqueue time,
//! and a byte count kept in step.

use std::collections::VecDeque;

use brisk_time::Instant;

use super::Dequeued;
use crate::element::Packet;

#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub pkt: Packet,
    pub enqueued_at: Instant,
    pub ce_marked: bool,
}

impl From<Entry> for Dequeued {
    fn from(e: Entry) -> Self {
        Dequeued {
            pkt: e.pkt,
            enqueued_at: e.enqueued_at,
            ce_marked: e.ce_marked,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Fifo {
    q: VecDeque<Entry>,
    bytes: usize,
}

impl Fifo {
    pub fn with_capacity(n: usize) -> Self {
        Fifo {
            q: VecDeque::with_capacity(n),
            bytes: 0,
        }
    }

    pub fn push(&mut self, pkt: Packet, now: Instant, ce_marked: bool) {
        self.bytes = self.bytes.saturating_add(pkt.len());
        self.q.push_back(Entry {
            pkt,
            enqueued_at: now,
            ce_marked,
        });
    }

    pub fn pop(&mut self) -> Option<Entry> {
        let e = self.q.pop_front()?;
        debug_assert!(self.bytes >= e.pkt.len());
        self.bytes = self.bytes.saturating_sub(e.pkt.len());
        Some(e)
    }

    /// Takes the most recently pushed entry (a push-out drop).
    pub fn pop_back(&mut self) -> Option<Entry> {
        let e = self.q.pop_back()?;
        debug_assert!(self.bytes >= e.pkt.len());
        self.bytes = self.bytes.saturating_sub(e.pkt.len());
        Some(e)
    }

    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }
}
