//! A link's event log in Mahimahi's `mm-link --downlink-log` format, so the
//! `mm-throughput-graph` and `mm-delay-graph` scripts (and anything written for them)
//! read brisk's links as they read Mahimahi's (`LinkQueue::record_arrival`,
//! `record_departure_opportunity`, `record_departure` in mahimahi's link_queue.cc).
//!
//! ```text
//! # base timestamp: 0
//! 12 + 1500          arrival at the link: ms, bytes (also for packets then dropped)
//! 13 # 1500          a delivery opportunity (the link's capacity)
//! 13 - 1500 1        departure from the link: ms, bytes, ms since its arrival
//! # drop 14 1500 queue_full
//! ```
//! Times are whole milliseconds from the start of the run (the base timestamp is 0).
//! A departure is when the link finished carrying the packet, before its propagation
//! delay, as in Mahimahi where `mm-delay` is a separate shell. Drops, which Mahimahi's
//! log does not show, are `#` comment lines that its scripts skip. For a fixed-rate
//! link the opportunities are synthesised, one per 1500 bytes of capacity; an
//! unlimited link has none.

use std::collections::HashMap;
use std::io::{self, Write};

use brisk_time::Instant;

use crate::mahimahi::{DeliveryTrace, OPPORTUNITY_BYTES};
use crate::trace::NetEvent;

/// Where a log's capacity lines come from.
#[derive(Clone, Debug)]
pub enum Capacity {
    None,
    /// A fixed rate in bit/s.
    Rate(u64),
    Trace(std::sync::Arc<DeliveryTrace>),
}

/// Most packets tracked between arrival and departure; a link holds at most its queue
/// plus its delay line, so this only bounds a misuse.
const MAX_TRACKED: usize = 1 << 22;

/// Writes a link's events as they are absorbed. The first I/O error stops writing and
/// is returned by [`MahimahiLog::finish`].
pub struct MahimahiLog<W: Write> {
    out: W,
    capacity: Capacity,
    /// The link's propagation delay: a `Depart` event minus this is the departure.
    delay_ns: u64,
    /// Index of the next capacity line to write.
    next_opp: u64,
    /// Arrival time (ns) of each packet still inside the link.
    arrivals: HashMap<u64, u64>,
    error: Option<io::Error>,
}

impl<W: Write> MahimahiLog<W> {
    /// Starts a log with its header; `name` and `source` go into the first comment.
    pub fn new(
        mut out: W,
        name: &str,
        source: &str,
        capacity: Capacity,
        delay_ns: u64,
    ) -> MahimahiLog<W> {
        let error = writeln!(
            out,
            "# brisk link log, mahimahi mm-link format ({name}) [{source}]\n# base timestamp: 0"
        )
        .err();
        MahimahiLog {
            out,
            capacity,
            delay_ns,
            next_opp: 0,
            arrivals: HashMap::new(),
            error,
        }
    }

    fn opportunity_ns(&self, k: u64) -> Option<u64> {
        match &self.capacity {
            Capacity::None => None,
            Capacity::Rate(bps) if *bps == 0 => None,
            Capacity::Rate(bps) => {
                let bits = u128::from(OPPORTUNITY_BYTES) * 8;
                let ns = (u128::from(k) + 1) * bits * 1_000_000_000 / u128::from(*bps);
                Some(u64::try_from(ns).unwrap_or(u64::MAX))
            }
            Capacity::Trace(t) => Some(t.time_of_index(k).as_nanos()),
        }
    }

    /// Writes the capacity lines due at or before `t_ns`.
    fn capacity_until(&mut self, t_ns: u64) -> io::Result<()> {
        while let Some(at) = self.opportunity_ns(self.next_opp) {
            if at > t_ns {
                break;
            }
            writeln!(self.out, "{} # {OPPORTUNITY_BYTES}", at / 1_000_000)?;
            self.next_opp += 1;
        }
        Ok(())
    }

    fn write_event(&mut self, ev: &NetEvent) -> io::Result<()> {
        let ms = |ns: u64| ns / 1_000_000;
        match *ev {
            NetEvent::Enqueue { at, id, bytes, .. } => {
                self.capacity_until(at.as_nanos())?;
                if self.arrivals.len() < MAX_TRACKED {
                    self.arrivals.insert(id, at.as_nanos());
                }
                writeln!(self.out, "{} + {bytes}", ms(at.as_nanos()))
            }
            NetEvent::Drop {
                at,
                id,
                bytes,
                reason,
                ..
            } => {
                self.capacity_until(at.as_nanos())?;
                // A packet refused on arrival was never logged as arriving.
                if self.arrivals.remove(&id).is_none() {
                    writeln!(self.out, "{} + {bytes}", ms(at.as_nanos()))?;
                }
                writeln!(
                    self.out,
                    "# drop {} {bytes} {}",
                    ms(at.as_nanos()),
                    reason.name()
                )
            }
            NetEvent::Depart { at, id, bytes, .. } => {
                let left = at.as_nanos().saturating_sub(self.delay_ns);
                self.capacity_until(left)?;
                let Some(arrived) = self.arrivals.remove(&id) else {
                    return Ok(());
                };
                let delay = ms(left).saturating_sub(ms(arrived));
                writeln!(self.out, "{} - {bytes} {delay}", ms(left))
            }
            NetEvent::Dequeue { .. } | NetEvent::Duplicate { .. } | NetEvent::Corrupt { .. } => {
                Ok(())
            }
        }
    }

    /// Logs `events` (a link's, in the order it logged them).
    pub fn absorb(&mut self, events: &[NetEvent]) {
        if self.error.is_some() {
            return;
        }
        for ev in events {
            if let Err(e) = self.write_event(ev) {
                self.error = Some(e);
                return;
            }
        }
    }

    /// Writes the capacity up to `end` and flushes; returns the writer or the first
    /// error.
    pub fn finish(mut self, end: Instant) -> io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        // Capacity strictly before the end, as the run saw it.
        self.capacity_until(end.as_nanos().saturating_sub(1))?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;
    use crate::link::{Link, LinkParams};
    use crate::loss::Loss;
    use crate::queue::{DropTail, QueueLimit};
    use crate::testutil::pkt;
    use brisk_time::Duration;

    #[test]
    fn logs_arrivals_capacity_departures_and_drops() {
        // 12 Mbit/s: one 1500-byte opportunity per ms; 10 ms propagation; queue of 1.
        let params = LinkParams {
            rate_bps: 12_000_000,
            delay: Duration::from_millis(10),
            ..LinkParams::default()
        };
        let q: crate::queue::AnyQueue = DropTail::new(QueueLimit::Packets(1)).unwrap().into();
        let mut link = Link::new(params, q, Loss::none()).unwrap();
        link.enable_event_log(64);
        let mut log = MahimahiLog::new(
            Vec::new(),
            "test",
            "12Mbit",
            Capacity::Rate(12_000_000),
            10_000_000,
        );
        let mut evs = Vec::new();
        for i in 0..3 {
            link.handle_packet(Instant::ZERO, pkt(i, 1500));
        }
        while let Some(t) = link.poll_timeout() {
            while link.poll_packet(t).is_some() {}
        }
        link.drain_events(&mut evs);
        log.absorb(&evs);
        let text = String::from_utf8(log.finish(Instant::from_millis(3)).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().skip(2).collect();
        assert_eq!(
            lines,
            vec![
                "0 + 1500",
                "0 + 1500",
                "0 + 1500",
                "# drop 0 1500 queue_full",
                "1 # 1500",
                "1 - 1500 1",
                "2 # 1500",
                "2 - 1500 2",
            ],
            "{text}"
        );
    }
}
