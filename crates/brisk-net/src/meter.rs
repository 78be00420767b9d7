//! Bottleneck metering: turns a [`Link`]'s event log into queue-length and
//! queueing-delay series, per-packet sojourn samples and drop records. It lives here,
//! beside the link, so the simulator and the real-time emulator measure a bottleneck
//! with the same code; each calls [`LinkMeter::absorb`] after every call into the link.

use brisk_time::{dur_nanos, Instant};

use crate::link::Link;
use crate::metrics::{Samples, Series};
use crate::stats::DropReason;
use crate::trace::NetEvent;

/// Most drop records kept (times and flows); counts stay exact beyond it.
pub const MAX_DROP_RECORDS: usize = 1_000_000;

/// One row of the bottleneck's queue time series.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueueRow {
    /// Queue length (packets) at the end of the interval.
    pub packets: usize,
    pub bytes: usize,
    /// Largest queue length seen in the interval.
    pub max_packets: usize,
    /// Mean and max sojourn of packets dequeued in the interval, ns (0 if none).
    pub mean_delay_ns: u64,
    pub max_delay_ns: u64,
    pub drops: u64,
    /// Packets dequeued in the interval, and how many of them carried a CE mark the
    /// queue set (with `drops`, the AQM's realised drop/mark rate).
    pub dequeued: u64,
    pub marks: u64,
}

/// One drop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DropRecord {
    pub at: Instant,
    /// The dropped packet's id (`Packet::id`), to find what it carried.
    pub id: u64,
    pub flow: u32,
    pub reason: DropReason,
}

/// Bottleneck measurements from the link's event log.
#[derive(Debug)]
pub struct LinkMeter {
    interval_ns: u64,
    /// End of the current interval.
    next_row_ns: u64,
    cur: QueueRow,
    delay_sum: u128,
    delay_n: u64,
    pub series: Series<QueueRow>,
    /// Queuing delay (sojourn) of every dequeued packet.
    pub sojourn: Samples,
    pub drops: Vec<DropRecord>,
    pub drop_count: u64,
    /// Packets the queue CE-marked (counted as they leave it).
    pub ce_marked: u64,
    /// First drop per flow (indexed by flow id).
    pub first_drop: Vec<Option<Instant>>,
    /// Events the link could not log (should stay 0).
    pub events_lost: u64,
}

impl LinkMeter {
    pub fn new(interval_ns: u64, rows: usize, flows: usize) -> Self {
        LinkMeter {
            interval_ns: interval_ns.max(1),
            next_row_ns: interval_ns.max(1),
            cur: QueueRow::default(),
            delay_sum: 0,
            delay_n: 0,
            series: Series::with_cap(rows),
            sojourn: Samples::default(),
            drops: Vec::new(),
            drop_count: 0,
            ce_marked: 0,
            first_drop: vec![None; flows],
            events_lost: 0,
        }
    }

    /// Closes every interval that ended at or before `t_ns`.
    fn roll(&mut self, t_ns: u64) {
        while t_ns >= self.next_row_ns {
            let mut row = self.cur;
            row.mean_delay_ns = if self.delay_n > 0 {
                (self.delay_sum / u128::from(self.delay_n)) as u64
            } else {
                0
            };
            self.series.push(self.next_row_ns, row);
            self.cur = QueueRow {
                packets: row.packets,
                bytes: row.bytes,
                max_packets: row.packets,
                ..QueueRow::default()
            };
            self.delay_sum = 0;
            self.delay_n = 0;
            self.next_row_ns = self.next_row_ns.saturating_add(self.interval_ns);
        }
    }

    /// Turns the events `link` logged since the last call into measurements (the
    /// simulator calls it after every element call; so does the real-time emulator).
    pub fn absorb(&mut self, link: &mut Link) {
        self.absorb_events(link.events(), link.events_lost());
        link.clear_events();
    }

    /// [`absorb`](Self::absorb) for an owner that drains the link itself (to hand the
    /// same events to a [`crate::mmlog::MahimahiLog`] too); `events_lost` is the
    /// link's count.
    pub fn absorb_events(&mut self, events: &[NetEvent], events_lost: u64) {
        for ev in events {
            self.roll(ev.at().as_nanos());
            match *ev {
                NetEvent::Enqueue {
                    queue_packets,
                    queue_bytes,
                    ..
                } => {
                    self.cur.packets = queue_packets;
                    self.cur.bytes = queue_bytes;
                    self.cur.max_packets = self.cur.max_packets.max(queue_packets);
                }
                NetEvent::Dequeue {
                    sojourn,
                    queue_packets,
                    queue_bytes,
                    ce_marked,
                    ..
                } => {
                    self.ce_marked += u64::from(ce_marked);
                    self.cur.marks += u64::from(ce_marked);
                    self.cur.dequeued += 1;
                    let d = dur_nanos(sojourn);
                    self.sojourn.push(d);
                    self.delay_sum += u128::from(d);
                    self.delay_n += 1;
                    self.cur.max_delay_ns = self.cur.max_delay_ns.max(d);
                    self.cur.packets = queue_packets;
                    self.cur.bytes = queue_bytes;
                }
                NetEvent::Drop {
                    at,
                    id,
                    flow,
                    reason,
                    ..
                } => {
                    self.drop_count += 1;
                    self.cur.drops += 1;
                    if self.drops.len() < MAX_DROP_RECORDS {
                        self.drops.push(DropRecord {
                            at,
                            id,
                            flow,
                            reason,
                        });
                    }
                    if let Some(slot) = self.first_drop.get_mut(flow as usize) {
                        slot.get_or_insert(at);
                    }
                }
                NetEvent::Duplicate { .. } | NetEvent::Corrupt { .. } | NetEvent::Depart { .. } => {
                }
            }
        }
        self.events_lost = events_lost;
    }

    /// Closes the intervals up to the end of the run.
    pub fn finish(&mut self, end: Instant) {
        self.roll(end.as_nanos());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;
    use crate::link::LinkParams;
    use crate::loss::Loss;
    use crate::queue::{DropTail, QueueLimit};
    use crate::testutil::pkt;

    #[test]
    fn meters_a_burst_into_drops_sojourns_and_rows() {
        // 1 Mbit/s: a 1250-byte packet serialises in 10 ms; two fit in the queue.
        let params = LinkParams {
            rate_bps: 1_000_000,
            ..LinkParams::default()
        };
        let q = DropTail::new(QueueLimit::Packets(2)).unwrap().into();
        let mut link = Link::new(params, q, Loss::none()).unwrap();
        link.enable_event_log(64);
        let mut m = LinkMeter::new(5_000_000, 100, 2);
        for i in 0..5 {
            let mut p = pkt(i, 1250);
            p.flow = (i % 2) as u32;
            link.handle_packet(Instant::ZERO, p);
            m.absorb(&mut link);
        }
        // One on the wire, two queued, two dropped (flows 1 and 0, in that order).
        assert_eq!(m.drop_count, 2);
        assert_eq!(m.first_drop, vec![Some(Instant::ZERO), Some(Instant::ZERO)]);
        assert_eq!(m.drops[0].reason, DropReason::QueueFull);
        let mut t = Instant::ZERO;
        while let Some(w) = link.poll_timeout() {
            t = w;
            while link.poll_packet(t).is_some() {}
            m.absorb(&mut link);
        }
        m.finish(t);
        assert_eq!(m.sojourn.len(), 3);
        assert_eq!(m.sojourn.summary().unwrap().max, 20_000_000);
        assert_eq!(m.series.rows.first().map(|r| r.1.drops), Some(2));
        assert_eq!(m.events_lost, 0);
    }
}
