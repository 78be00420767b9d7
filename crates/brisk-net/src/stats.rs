//! Streaming counters kept by every element: constant memory, always on. The event log
//! (`trace`) is the opt-in, per-packet complement.

/// Why an element dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// The queue was at its limit (drop-tail).
    QueueFull,
    /// An active queue manager chose to drop (RED, CoDel, PIE).
    Aqm,
    /// The loss model chose to drop.
    LossModel,
    /// The link was down (a configured outage).
    Outage,
    /// A bounded internal buffer other than the queue (delay line, jitter buffer) was full.
    Overflow,
}

impl DropReason {
    pub const ALL: [DropReason; 5] = [
        DropReason::QueueFull,
        DropReason::Aqm,
        DropReason::LossModel,
        DropReason::Outage,
        DropReason::Overflow,
    ];

    const fn index(self) -> usize {
        self as usize
    }

    pub const fn name(self) -> &'static str {
        match self {
            DropReason::QueueFull => "queue_full",
            DropReason::Aqm => "aqm",
            DropReason::LossModel => "loss_model",
            DropReason::Outage => "outage",
            DropReason::Overflow => "overflow",
        }
    }
}

/// Packets and bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PktBytes {
    pub packets: u64,
    pub bytes: u64,
}

impl PktBytes {
    pub(crate) fn add(&mut self, bytes: usize) {
        self.packets = self.packets.saturating_add(1);
        self.bytes = self.bytes.saturating_add(bytes as u64);
    }
}

/// Cumulative counters of one element. Utilisation over `[t0, t1]` is
/// `busy_ns / (t1 - t0)` for a link whose counters were zero at `t0`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Offered to the element (`handle_packet`).
    pub input: PktBytes,
    /// Handed out by `poll_packet` (includes duplicates).
    pub output: PktBytes,
    drops: [PktBytes; DropReason::ALL.len()],
    /// Extra copies made by duplication.
    pub duplicated: u64,
    /// Packets that had a bit flipped.
    pub corrupted: u64,
    /// Packets CE-marked by the queue.
    pub ce_marked: u64,
    /// Total serialisation time of every packet the link started sending, in ns.
    pub busy_ns: u64,
    /// Largest queue occupancy seen, after an enqueue.
    pub max_queue_packets: usize,
    pub max_queue_bytes: usize,
}

impl Counters {
    /// Drops for one reason.
    pub fn dropped(&self, reason: DropReason) -> PktBytes {
        self.drops[reason.index()]
    }

    /// Drops for all reasons together.
    pub fn dropped_total(&self) -> PktBytes {
        self.drops
            .iter()
            .fold(PktBytes::default(), |acc, d| PktBytes {
                packets: acc.packets.saturating_add(d.packets),
                bytes: acc.bytes.saturating_add(d.bytes),
            })
    }

    pub(crate) fn count_drop(&mut self, reason: DropReason, bytes: usize) {
        self.drops[reason.index()].add(bytes);
    }

    #[inline] // every enqueue
    pub(crate) fn note_queue(&mut self, packets: usize, bytes: usize) {
        self.max_queue_packets = self.max_queue_packets.max(packets);
        self.max_queue_bytes = self.max_queue_bytes.max(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_reasons_index_their_own_slot() {
        let mut c = Counters::default();
        for (i, r) in DropReason::ALL.iter().enumerate() {
            for _ in 0..=i {
                c.count_drop(*r, 10);
            }
        }
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(c.dropped(*r).packets, i as u64 + 1, "{}", r.name());
        }
        assert_eq!(c.dropped_total().packets, 15);
        assert_eq!(c.dropped_total().bytes, 150);
    }
}
