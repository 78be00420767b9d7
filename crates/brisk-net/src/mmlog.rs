//! A link's event log in Mahimahi's `mm-link --downlink-log` format, so the
//! `mm-throughput-graph` and `mm-delay-graph` scripts (and anything written for them)
//! read brisk's links as they read Mahimahi's (`LinkQueue::record_arrival`,
//! `record_departure_opportunity`, `record_departure` in mahimahi's
//! src/frontend/link_queue.cc).
//!
//! ```text
//! # mahimahi mm-link (downlink) [12000000 bit/s] (written by brisk)
//! # command line: brisk
//! # queue: droptail [packets=1000]
//! # init timestamp: 0
//! # base timestamp: 0
//! 12 + 1500          arrival at the link: ms, bytes (also for packets then dropped)
//! 13 # 1500          a delivery opportunity (the link's capacity)
//! 13 - 1500 1        departure from the link: ms, bytes, ms since its arrival
//! # drop 14 1500 queue_full
//! ```
//! Times are whole milliseconds from the start of the run (the base timestamp is 0)
//! and, as in mm-link's logs, never decrease from one line to the next: a departure
//! (when the link finished carrying the packet, before its propagation delay, as in
//! Mahimahi where `mm-delay` is a separate shell) is only known when the packet
//! leaves the delay line, later than arrivals logged in between, so lines wait in a
//! bounded reorder buffer until no later event can come before them. Drops, which
//! mm-throughput-graph does not parse (mm-link's own `d` lines make it die), are `#`
//! comment lines that it skips.
//!
//! Capacity: for a fixed-rate link the opportunities are synthesised, one per 1500
//! bytes of capacity; a trace-driven link logs its trace's. An unlimited link has no
//! schedule, and mm-link has no unlimited link (its nearest, an infinitely fast one,
//! would deliver each packet at an opportunity of its own on arrival), so each
//! departure is preceded by one opportunity of the packet's size at the same
//! millisecond: capacity equals throughput, and mm-throughput-graph, which divides
//! by the capacity, works.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
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

/// Most lines held back for ordering. Beyond it the oldest are written at once (and
/// the oldest tracked packet forgotten, in case its events were lost), which keeps
/// memory bounded at the price of order only in that pathological case.
const MAX_PENDING: usize = 1 << 20;

/// One line waiting in the reorder buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Line {
    /// An unlimited link's opportunity for one departure (sorts before it).
    Opportunity {
        bytes: usize,
    },
    Arrival {
        bytes: usize,
    },
    Departure {
        bytes: usize,
        delay_ms: u64,
    },
    Drop {
        bytes: usize,
        reason: &'static str,
    },
}

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
    /// The same packets in arrival order (arrivals are logged in time order), with
    /// entries of packets already gone skipped lazily: its live front is the earliest
    /// time a future departure or drop can carry.
    arrival_order: VecDeque<(u64, u64)>,
    /// Latest event time seen: no future arrival is earlier.
    latest_ns: u64,
    /// Lines not yet written, earliest first (time, sequence number, line).
    pending: BinaryHeap<Reverse<(u64, u64, Line)>>,
    seq: u64,
    /// Time of the last line written (for the order check in tests).
    written_ns: u64,
    error: Option<io::Error>,
}

impl<W: Write> MahimahiLog<W> {
    /// Starts a log with mm-link's header; `name`, `source` (the trace or rate) and
    /// `queue` (as [`crate::queue::AnyQueue::describe`]) go into its comments.
    pub fn new(
        mut out: W,
        name: &str,
        source: &str,
        queue: &str,
        capacity: Capacity,
        delay_ns: u64,
    ) -> MahimahiLog<W> {
        let error = write!(
            out,
            "# mahimahi mm-link ({name}) [{source}] (written by brisk)\n\
             # command line: brisk\n\
             # queue: {queue}\n\
             # init timestamp: 0\n\
             # base timestamp: 0\n"
        )
        .err();
        MahimahiLog {
            out,
            capacity,
            delay_ns,
            next_opp: 0,
            arrivals: HashMap::new(),
            arrival_order: VecDeque::new(),
            latest_ns: 0,
            pending: BinaryHeap::new(),
            seq: 0,
            written_ns: 0,
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
            self.written_ns = self.written_ns.max(at);
            self.next_opp += 1;
        }
        Ok(())
    }

    fn push(&mut self, t_ns: u64, line: Line) {
        self.seq += 1;
        self.pending.push(Reverse((t_ns, self.seq, line)));
    }

    fn write_line(&mut self, t_ns: u64, line: Line) -> io::Result<()> {
        self.capacity_until(t_ns)?;
        let ms = t_ns / 1_000_000;
        match line {
            Line::Opportunity { bytes } => writeln!(self.out, "{ms} # {bytes}")?,
            Line::Arrival { bytes } => writeln!(self.out, "{ms} + {bytes}")?,
            Line::Departure { bytes, delay_ms } => writeln!(self.out, "{ms} - {bytes} {delay_ms}")?,
            Line::Drop { bytes, reason } => writeln!(self.out, "# drop {ms} {bytes} {reason}")?,
        }
        self.written_ns = self.written_ns.max(t_ns);
        Ok(())
    }

    /// The earliest time a line not yet pushed can carry: arrivals come no earlier
    /// than the latest event, departures and drops of packets inside the link no
    /// earlier than their arrival.
    fn watermark(&mut self) -> u64 {
        while let Some(&(_, id)) = self.arrival_order.front() {
            if self.arrivals.contains_key(&id) {
                break;
            }
            self.arrival_order.pop_front();
        }
        let inside = self.arrival_order.front().map_or(u64::MAX, |&(t, _)| t);
        self.latest_ns.min(inside)
    }

    /// Writes the pending lines (and capacity) up to `until`.
    fn flush_until(&mut self, until: u64) -> io::Result<()> {
        while let Some(Reverse((t, _, _))) = self.pending.peek() {
            if *t > until {
                break;
            }
            // NOTE(unwrap): peeked just above.
            let Reverse((t, _, line)) = self.pending.pop().unwrap();
            self.write_line(t, line)?;
        }
        self.capacity_until(until)
    }

    fn track(&mut self, id: u64, at: u64) {
        if self.arrivals.len() < MAX_TRACKED && self.arrivals.insert(id, at).is_none() {
            self.arrival_order.push_back((at, id));
        }
    }

    fn take_event(&mut self, ev: &NetEvent) {
        let ms = |ns: u64| ns / 1_000_000;
        self.latest_ns = self.latest_ns.max(ev.at().as_nanos());
        match *ev {
            NetEvent::Enqueue { at, id, bytes, .. } => {
                self.track(id, at.as_nanos());
                self.push(at.as_nanos(), Line::Arrival { bytes });
            }
            NetEvent::Drop {
                at,
                id,
                bytes,
                reason,
                ..
            } => {
                // A packet refused on arrival was never logged as arriving.
                if self.arrivals.remove(&id).is_none() {
                    self.push(at.as_nanos(), Line::Arrival { bytes });
                }
                let reason = reason.name();
                self.push(at.as_nanos(), Line::Drop { bytes, reason });
            }
            NetEvent::Depart { at, id, bytes, .. } => {
                let left = at.as_nanos().saturating_sub(self.delay_ns);
                let Some(arrived) = self.arrivals.remove(&id) else {
                    return;
                };
                // Never before its arrival, whatever the rounding.
                let left = left.max(arrived);
                if matches!(self.capacity, Capacity::None)
                    || matches!(self.capacity, Capacity::Rate(0))
                {
                    self.push(left, Line::Opportunity { bytes });
                }
                let delay_ms = ms(left).saturating_sub(ms(arrived));
                self.push(left, Line::Departure { bytes, delay_ms });
            }
            NetEvent::Dequeue { .. } | NetEvent::Duplicate { .. } | NetEvent::Corrupt { .. } => {}
        }
    }

    /// Logs `events` (a link's, in the order it logged them), writing what can no
    /// longer be preceded by a later event.
    pub fn absorb(&mut self, events: &[NetEvent]) {
        if self.error.is_some() {
            return;
        }
        for ev in events {
            self.take_event(ev);
        }
        let w = self.watermark();
        if let Err(e) = self.flush_until(w).and_then(|()| self.shed()) {
            self.error = Some(e);
        }
    }

    /// Keeps the buffers bounded should a packet's departure never come (its events
    /// lost): forgets the oldest packets beyond [`MAX_TRACKED`], writes the oldest
    /// lines beyond [`MAX_PENDING`].
    fn shed(&mut self) -> io::Result<()> {
        while self.arrival_order.len() > MAX_TRACKED {
            if let Some((_, id)) = self.arrival_order.pop_front() {
                self.arrivals.remove(&id);
            }
        }
        while self.pending.len() > MAX_PENDING {
            // NOTE(unwrap): longer than MAX_PENDING, so not empty.
            let Reverse((t, _, line)) = self.pending.pop().unwrap();
            self.write_line(t, line)?;
        }
        Ok(())
    }

    /// Time of the latest line written so far (ns).
    pub fn written_until_ns(&self) -> u64 {
        self.written_ns
    }

    /// Writes every pending line and the capacity up to `end`, and flushes; returns
    /// the writer or the first error.
    pub fn finish(mut self, end: Instant) -> io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        while let Some(Reverse((t, _, line))) = self.pending.pop() {
            self.write_line(t, line)?;
        }
        // Capacity strictly before the end, as the run saw it.
        self.capacity_until(end.as_nanos().saturating_sub(1))?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// What [`check_log`] found in a log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogSummary {
    pub arrival_bytes: u64,
    pub capacity_bytes: u64,
    pub departure_bytes: u64,
    pub departures: u64,
    /// First and last event times (ms after the base timestamp).
    pub first_ms: u64,
    pub last_ms: u64,
}

/// Checks a log by the rules of Mahimahi's `mm-throughput-graph` (which dies on a
/// violation), plus mm-link's time order: exactly one `# base timestamp:` before the
/// first event; every other `#`-first line a comment; events `TIME TYPE BYTES
/// [DELAY]` with decimal time and bytes, TYPE one of `+ # -`, a departure with a
/// delay not reaching back before the base; times never decreasing; at least one
/// departure and some capacity (the script divides by it). `--link-log` files and
/// the tests use it.
pub fn check_log(text: &str) -> Result<LogSummary, String> {
    let mut base: Option<u64> = None;
    let mut sum = LogSummary::default();
    let mut last: Option<u64> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if let Some(v) = line.strip_prefix("# base timestamp: ") {
            if base.is_some() {
                return Err(format!("line {n}: base timestamp multiply defined"));
            }
            base = Some(
                v.trim()
                    .parse()
                    .map_err(|_| format!("line {n}: bad base timestamp"))?,
            );
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 3 {
            return Err(format!(
                "line {n}: format: timestamp event_type num_bytes [delay]: {line:?}"
            ));
        }
        let num = |s: &str, what: &str| {
            s.parse::<u64>()
                .map_err(|_| format!("line {n}: invalid {what}: {s:?}"))
        };
        let ts = num(f[0], "timestamp")?;
        let bytes = num(f[2], "byte count")?;
        let Some(b) = base else {
            return Err(format!("line {n}: logfile is missing base timestamp"));
        };
        let ts = ts
            .checked_sub(b)
            .ok_or_else(|| format!("line {n}: event before the base timestamp"))?;
        if last.is_some_and(|l| ts < l) {
            return Err(format!(
                "line {n}: time runs backwards ({ts} ms after {} ms)",
                last.unwrap_or(0)
            ));
        }
        if last.is_none() {
            sum.first_ms = ts;
        }
        last = Some(ts);
        sum.last_ms = ts;
        match f[1] {
            "+" => sum.arrival_bytes += bytes,
            "#" => sum.capacity_bytes += bytes,
            "-" => {
                let d = f
                    .get(3)
                    .ok_or_else(|| format!("line {n}: departure without delay"))?;
                let d = num(d, "delay")?;
                if d > ts {
                    return Err(format!(
                        "line {n}: invalid timestamp and delay: ts={ts}, delay={d}"
                    ));
                }
                sum.departure_bytes += bytes;
                sum.departures += 1;
            }
            other => return Err(format!("line {n}: unknown event type {other:?}")),
        }
    }
    if last.is_none() {
        return Err("must have at least one event".into());
    }
    if sum.departures == 0 {
        return Err("must have at least one departure event".into());
    }
    if sum.capacity_bytes == 0 {
        return Err("no capacity (`#`) lines: mm-throughput-graph divides by the capacity".into());
    }
    Ok(sum)
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
            "droptail [packets=1]",
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
        // The last departure left the delay line at 12 ms: capacity runs to there.
        let text = String::from_utf8(log.finish(Instant::from_millis(13)).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().skip(5).collect();
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
                "3 # 1500",
                "4 # 1500",
                "5 # 1500",
                "6 # 1500",
                "7 # 1500",
                "8 # 1500",
                "9 # 1500",
                "10 # 1500",
                "11 # 1500",
                "12 # 1500",
            ],
            "{text}"
        );
    }

    /// Random traffic through a link with a propagation delay, absorbed after every
    /// call as the emulator does: departures (known only when they leave the delay
    /// line) used to be written after later arrivals.
    fn run_link(rate_bps: u64, trace: Option<&str>, seed: u64) -> (String, u64, u64) {
        use crate::mahimahi::DeliveryTrace;
        let delay = Duration::from_millis(25);
        let q: crate::queue::AnyQueue = DropTail::new(QueueLimit::Packets(50)).unwrap().into();
        let (mut link, capacity, source) = match trace {
            Some(t) => {
                let tr = std::sync::Arc::new(DeliveryTrace::parse(t).unwrap());
                let params = LinkParams {
                    delay,
                    trace: Some(std::sync::Arc::clone(&tr)),
                    ..LinkParams::default()
                };
                let l = Link::new(params, q, Loss::none()).unwrap();
                (l, Capacity::Trace(tr), "trace")
            }
            None => {
                let params = LinkParams {
                    rate_bps,
                    delay,
                    ..LinkParams::default()
                };
                let l = Link::new(params, q, Loss::none()).unwrap();
                (l, link_capacity(rate_bps), "rate")
            }
        };
        link.enable_event_log(1 << 16);
        let mut log = MahimahiLog::new(
            Vec::new(),
            "t",
            source,
            "droptail [packets=50]",
            capacity,
            25_000_000,
        );
        let mut rng = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let (mut t, mut sent, mut got) = (0u64, 0u64, 0u64);
        let mut evs = Vec::new();
        for i in 0..3000u64 {
            // Bursts and gaps: 0 to 2 ms between packets.
            t += next() % 2_000_000;
            let now = Instant::from_nanos(t);
            while let Some(due) = link.poll_timeout().filter(|d| *d <= now) {
                while let Some(p) = link.poll_packet(due) {
                    got += p.len() as u64;
                }
                evs.clear();
                link.drain_events(&mut evs);
                log.absorb(&evs);
            }
            let len = 100 + (next() % 1400) as usize;
            link.handle_packet(now, pkt(i, len));
            sent += len as u64;
            evs.clear();
            link.drain_events(&mut evs);
            log.absorb(&evs);
        }
        while let Some(due) = link.poll_timeout() {
            while let Some(p) = link.poll_packet(due) {
                got += p.len() as u64;
            }
            evs.clear();
            link.drain_events(&mut evs);
            log.absorb(&evs);
            t = t.max(due.as_nanos());
        }
        let text = String::from_utf8(log.finish(Instant::from_nanos(t + 1)).unwrap()).unwrap();
        (text, sent, got)
    }

    fn link_capacity(rate_bps: u64) -> Capacity {
        if rate_bps == 0 {
            Capacity::None
        } else {
            Capacity::Rate(rate_bps)
        }
    }

    #[test]
    fn logs_pass_mm_throughput_graph_rules_on_every_kind_of_link() {
        // 3 opportunities per 10 ms: 3.6 Mbit/s, below the 6.4 Mbit/s offered.
        let trace = "2\n5\n5\n10\n";
        for seed in 1..=4 {
            for (rate, tr) in [
                (4_000_000, None),
                (50_000_000, None),
                (0, None),
                (0, Some(trace)),
            ] {
                let (text, sent, got) = run_link(rate, tr, seed);
                let sum = check_log(&text)
                    .unwrap_or_else(|e| panic!("rate {rate} trace {tr:?} seed {seed}: {e}"));
                assert!(text.contains("# queue: droptail [packets=50]"));
                assert!(text.contains("# init timestamp: 0"));
                assert_eq!(sum.arrival_bytes, sent, "every arrival is logged");
                assert_eq!(sum.departure_bytes, got, "every departure is logged");
                if rate == 0 && tr.is_none() {
                    // Unlimited: capacity is exactly what departed, nothing dropped.
                    assert_eq!(sum.capacity_bytes, got);
                    assert_eq!(got, sent);
                } else {
                    assert!(sum.capacity_bytes >= got, "{sum:?}");
                }
                if rate == 4_000_000 || tr.is_some() {
                    // Offered 6.4 Mbit/s on average: the 50-packet queue overflows.
                    assert!(got < sent, "{sum:?}");
                }
            }
        }
    }

    #[test]
    fn the_checker_refuses_what_mm_throughput_graph_refuses() {
        let ok = "# base timestamp: 0\n1 + 100\n2 # 1500\n2 - 100 1\n";
        assert!(check_log(ok).is_ok());
        for (bad, why) in [
            ("1 + 100\n2 # 1500\n2 - 100 1\n", "missing base"),
            (
                "# base timestamp: 0\n# base timestamp: 0\n2 # 1500\n2 - 1 0\n",
                "multiply",
            ),
            (
                "# base timestamp: 0\n3 + 100\n2 # 1500\n2 - 100 0\n",
                "backwards",
            ),
            ("# base timestamp: 0\n1 + 100\n2 - 100 1\n", "capacity"),
            ("# base timestamp: 0\n1 # 100\n2 - 100\n", "delay"),
            ("# base timestamp: 0\n1 # 100\n2 - 100 3\n", "delay=3"),
            ("# base timestamp: 0\n1 d 1 100\n2 - 100 1\n", "unknown"),
        ] {
            let e = check_log(bad).unwrap_err();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }
}
