//! Drop-tail FIFO with a packet or byte limit, and optional step ECN marking: CE-mark
//! an ECN-capable packet when, after it is enqueued, the queue is above a threshold
//! (DCTCP's switch marking, RFC 8257 §3.1, and the "K" of the RITE ABE experiments).
//! Not-ECT packets are never dropped for the threshold; only the limit drops.

use brisk_time::Instant;

use super::fifo::Fifo;
use super::{mark_if_ect, Dequeued, Queue, QueueLimit};
use crate::element::Packet;
use crate::error::NetError;

#[derive(Clone, Debug)]
pub struct DropTail {
    limit: QueueLimit,
    mark_above: Option<QueueLimit>,
    q: Fifo,
}

impl DropTail {
    pub fn new(limit: QueueLimit) -> Result<Self, NetError> {
        let limit = limit.validate("queue.limit")?;
        // No slots reserved: the queue grows to its backlog. Every access link of a
        // dumbbell has a drop-tail queue that rarely holds a packet, and 1024 reserved
        // slots were 65 KB per link.
        Ok(DropTail {
            limit,
            mark_above: None,
            q: Fifo::default(),
        })
    }

    /// Enables step ECN marking above `threshold` (in packets or bytes).
    pub fn with_ecn_threshold(mut self, threshold: QueueLimit) -> Self {
        self.mark_above = Some(threshold);
        self
    }

    pub fn limit(&self) -> QueueLimit {
        self.limit
    }
}

impl Queue for DropTail {
    fn enqueue(&mut self, now: Instant, mut pkt: Packet) -> Result<(), Packet> {
        if !self.limit.fits(self.q.len(), self.q.bytes(), pkt.len()) {
            return Err(pkt);
        }
        let ce_marked = match self.mark_above {
            // Only ECT packets count as marked here; CE ones already carry the signal.
            Some(k) if k.exceeded_by(self.q.len() + 1, self.q.bytes() + pkt.len()) => {
                mark_if_ect(&mut pkt)
            }
            _ => false,
        };
        self.q.push(pkt, now, ce_marked);
        Ok(())
    }

    fn dequeue(&mut self, _now: Instant) -> Option<Dequeued> {
        self.q.pop().map(Dequeued::from)
    }

    /// Drops only the packet offered (the default `poll_drop`).
    fn drops_pending(&self) -> bool {
        false
    }

    /// Empty, no marking threshold and room for it: `enqueue` would take it unmarked
    /// and `dequeue` give it straight back with a zero sojourn.
    #[inline]
    fn passes_straight(&self, len: usize) -> bool {
        self.q.len() == 0 && self.mark_above.is_none() && self.limit.fits(0, 0, len)
    }

    fn len_packets(&self) -> usize {
        self.q.len()
    }

    fn len_bytes(&self) -> usize {
        self.q.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(id: u64, len: usize) -> Packet {
        Packet {
            data: vec![0; len],
            id,
            flow: 0,
            sent_at: Instant::ZERO,
            l4_csum_valid: false,
        }
    }

    #[test]
    fn packet_limit_rejects_the_packet_beyond_it() {
        let mut q = DropTail::new(QueueLimit::Packets(3)).unwrap();
        for i in 0..3 {
            assert!(q.enqueue(Instant::ZERO, pkt(i, 1000)).is_ok());
        }
        let back = q.enqueue(Instant::ZERO, pkt(3, 10)).unwrap_err();
        assert_eq!(back.id, 3, "the rejected packet is handed back");
        assert_eq!(q.len_packets(), 3);
        assert_eq!(q.len_bytes(), 3000);
        q.dequeue(Instant::ZERO).unwrap();
        assert!(q.enqueue(Instant::ZERO, pkt(4, 10)).is_ok());
    }

    #[test]
    fn byte_limit_admits_exactly_what_fits() {
        let mut q = DropTail::new(QueueLimit::Bytes(3000)).unwrap();
        assert!(q.enqueue(Instant::ZERO, pkt(0, 1500)).is_ok());
        assert!(q.enqueue(Instant::ZERO, pkt(1, 1499)).is_ok());
        assert!(q.enqueue(Instant::ZERO, pkt(2, 2)).is_err(), "3001 > 3000");
        assert!(q.enqueue(Instant::ZERO, pkt(3, 1)).is_ok(), "3000 fits");
        assert_eq!(q.len_bytes(), 3000);
        assert!(q.enqueue(Instant::ZERO, pkt(4, 0)).is_ok());
    }

    #[test]
    fn packet_larger_than_byte_limit_is_dropped() {
        let mut q = DropTail::new(QueueLimit::Bytes(100)).unwrap();
        assert!(q.enqueue(Instant::ZERO, pkt(0, 101)).is_err());
        assert!(q.is_empty());
    }

    #[test]
    fn fifo_order_and_sojourn_from_enqueue_time() {
        let mut q = DropTail::new(QueueLimit::Packets(10)).unwrap();
        q.enqueue(Instant::from_micros(5), pkt(7, 10)).unwrap();
        q.enqueue(Instant::from_micros(9), pkt(8, 10)).unwrap();
        let d = q.dequeue(Instant::from_micros(20)).unwrap();
        assert_eq!(d.pkt.id, 7);
        assert_eq!(d.sojourn(Instant::from_micros(20)).as_micros(), 15);
        assert_eq!(q.dequeue(Instant::from_micros(20)).unwrap().pkt.id, 8);
        assert!(q.dequeue(Instant::from_micros(20)).is_none());
        assert_eq!(q.len_bytes(), 0);
    }

    #[test]
    fn zero_limit_is_a_config_error_naming_the_field() {
        let e = DropTail::new(QueueLimit::Bytes(0)).unwrap_err();
        assert!(e.to_string().contains("queue.limit"), "{e}");
    }

    use crate::queue::test_packets::{fold, ipv4};
    use brisk_wire::{peek_ecn, Ecn};

    #[test]
    fn ecn_threshold_marks_ect_packets_above_it_and_keeps_the_checksum_valid() {
        let mut q = DropTail::new(QueueLimit::Packets(10))
            .unwrap()
            .with_ecn_threshold(QueueLimit::Packets(2));
        let kinds = [
            Ecn::Ect0,
            Ecn::Ect0,
            Ecn::Ect0,
            Ecn::NotEct,
            Ecn::Ect1,
            Ecn::Ce,
        ];
        for (i, e) in kinds.into_iter().enumerate() {
            let mut p = ipv4(i as u64, e);
            p.l4_csum_valid = true;
            q.enqueue(Instant::ZERO, p).unwrap();
        }
        let out: Vec<Dequeued> = std::iter::from_fn(|| q.dequeue(Instant::ZERO)).collect();
        let marked: Vec<bool> = out.iter().map(|d| d.ce_marked).collect();
        // The third packet makes the queue 3 > 2; Not-ECT is left alone, not dropped; an
        // already-CE packet is not counted as marked here.
        assert_eq!(marked, vec![false, false, true, false, true, false]);
        let ecn: Vec<Option<Ecn>> = out.iter().map(|d| peek_ecn(&d.pkt.data)).collect();
        let (e0, ce, ne) = (Some(Ecn::Ect0), Some(Ecn::Ce), Some(Ecn::NotEct));
        assert_eq!(ecn, vec![e0, e0, ce, ne, ce, ce]);
        for d in &out {
            assert_eq!(fold(&d.pkt.data), 0xffff, "header checksum still verifies");
            // The TOS byte is not in the TCP pseudo-header: a vouched-for transport
            // checksum stays vouched for.
            assert!(d.pkt.l4_csum_valid);
        }
    }
}
