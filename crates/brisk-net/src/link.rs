//! A link: loss model → queue → serialiser at `rate_bps` (or a Mahimahi delivery
//! trace, [`crate::mahimahi`]) → propagation delay line.
//!
//! On arrival a packet is dropped if the link is down (an outage), then offered to the
//! loss model, then to the queue. The serialiser takes the queue's head whenever it is
//! free: a packet of `b` bytes (plus `overhead_bytes` of framing) occupies it for
//! exactly `(b + overhead) * 8 / rate_bps` (see `rate`), then arrives at the far end
//! `delay` later. This is the bottleneck model of ns-2/ns-3 point-to-point links and of
//! neqo's `TailDrop` (style.md §3.2).
//!
//! Work is done lazily: every entry point first catches the serialiser up to `now`,
//! dequeuing each packet at the exact virtual instant the previous one finished, so a
//! late poll changes nothing (AQMs see true dequeue times). `poll_timeout` therefore
//! only needs to wake the driver for departures, or for the first dequeue when nothing
//! is on the wire.

use std::collections::VecDeque;
use std::sync::Arc;

use brisk_time::{dur_nanos, Duration, Instant};

use crate::element::{Element, Packet};
use crate::error::NetError;
use crate::loss::Loss;
use crate::mahimahi::{DeliveryTrace, TraceServer};
use crate::outage::{Outage, OutageSchedule};
use crate::queue::{AnyQueue, Queue};
use crate::rate::Serializer;
use crate::stats::{Counters, DropReason};
use crate::trace::{EventLog, NetEvent};

/// Default bound on packets in propagation: a 10 Gbit/s, 1 s delay line of 1500-byte
/// packets holds 833k.
pub const DEFAULT_DELAY_LINE_LIMIT: usize = 1 << 20;

/// A link's fixed parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkParams {
    /// Serialisation rate in bit/s; 0 means unlimited (no serialisation delay).
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Framing bytes added to every packet's serialisation time (e.g. 38 for Ethernet's
    /// header, FCS, preamble and gap); not added to the packet.
    pub overhead_bytes: usize,
    /// Intervals during which arriving packets are dropped.
    pub outages: Vec<Outage>,
    /// Most packets in propagation at once; beyond it packets drop as `Overflow`.
    pub delay_line_limit: usize,
    /// Serve by this delivery trace instead of at `rate_bps` (which must then be 0).
    pub trace: Option<Arc<DeliveryTrace>>,
}

impl Default for LinkParams {
    fn default() -> Self {
        LinkParams {
            rate_bps: 0,
            delay: Duration::ZERO,
            overhead_bytes: 0,
            outages: Vec::new(),
            delay_line_limit: DEFAULT_DELAY_LINE_LIMIT,
            trace: None,
        }
    }
}

/// How the head of the queue is carried: at a fixed rate, or by trace opportunities.
#[derive(Clone, Debug)]
enum Service {
    Rate(Serializer),
    Trace(TraceServer),
}

impl Service {
    /// When a packet of `bytes` that starts service at `t` has been carried.
    fn finish(&mut self, t: Instant, bytes: usize, back_to_back: bool) -> Instant {
        match self {
            Service::Rate(s) => {
                let tx_ns = s.tx_time_ns(bytes, back_to_back);
                t.saturating_add_nanos(tx_ns)
            }
            Service::Trace(s) => s.finish(t, bytes, back_to_back),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Link<Q = AnyQueue> {
    queue: Q,
    service: Service,
    delay_ns: u64,
    overhead_bytes: usize,
    loss: Loss,
    outages: OutageSchedule,
    /// When the serialiser finishes its current packet (or finished its last one).
    busy_until: Instant,
    /// Packets in propagation with their arrival time at the far end, which never
    /// decreases along the line (FIFO serialiser, fixed delay).
    line: VecDeque<(Instant, Packet)>,
    line_limit: usize,
    /// Latest time seen; earlier `now`s are treated as this (time never runs back).
    last_now: Instant,
    counters: Counters,
    log: EventLog,
}

impl<Q: Queue> Link<Q> {
    pub fn new(params: LinkParams, queue: Q, loss: Loss) -> Result<Self, NetError> {
        if params.delay_line_limit == 0 {
            return Err(NetError::invalid(
                "delay_line_limit",
                0,
                "must be at least 1",
            ));
        }
        let service = match params.trace {
            Some(_) if params.rate_bps != 0 => {
                return Err(NetError::invalid(
                    "rate_bps",
                    params.rate_bps,
                    "must be 0 (unset) on a trace-driven link",
                ))
            }
            Some(t) => Service::Trace(TraceServer::new(t)),
            None => Service::Rate(Serializer::new(params.rate_bps)),
        };
        Ok(Link {
            queue,
            service,
            delay_ns: dur_nanos(params.delay),
            overhead_bytes: params.overhead_bytes,
            loss,
            outages: OutageSchedule::new(params.outages)?,
            busy_until: Instant::ZERO,
            // Grown on demand: a run with 10^5 flows has 4 links per flow, most
            // carrying a few packets at a time, and 1024 reserved slots each were
            // 57 KB per link.
            line: VecDeque::new(),
            line_limit: params.delay_line_limit,
            last_now: Instant::ZERO,
            counters: Counters::default(),
            log: EventLog::default(),
        })
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    pub fn queue(&self) -> &Q {
        &self.queue
    }

    /// The fixed rate; 0 for an unlimited or a trace-driven link.
    pub fn rate_bps(&self) -> u64 {
        match &self.service {
            Service::Rate(s) => s.rate_bps(),
            Service::Trace(_) => 0,
        }
    }

    /// Changes a fixed-rate link's rate (> 0) from the next packet it starts to
    /// serialise on (the packet on the wire finishes at the old rate): a capacity
    /// change at a set time, as the SBD experiment's bottlenecks (ns-2's link
    /// bandwidth changes). False, and nothing changes, for a trace-driven link or 0.
    pub fn set_rate_bps(&mut self, rate_bps: u64) -> bool {
        match &mut self.service {
            Service::Rate(s) if rate_bps > 0 => {
                *s = Serializer::new(rate_bps);
                true
            }
            _ => false,
        }
    }

    /// The propagation delay.
    pub fn delay(&self) -> Duration {
        Duration::from_nanos(self.delay_ns)
    }

    /// What carries the link's packets, for logs.
    pub fn capacity(&self) -> crate::mmlog::Capacity {
        match &self.service {
            Service::Rate(s) if s.rate_bps() == 0 => crate::mmlog::Capacity::None,
            Service::Rate(s) => crate::mmlog::Capacity::Rate(s.rate_bps()),
            Service::Trace(s) => crate::mmlog::Capacity::Trace(s.trace_arc()),
        }
    }

    /// The delivery trace of a trace-driven link.
    pub fn trace(&self) -> Option<&DeliveryTrace> {
        match &self.service {
            Service::Rate(_) => None,
            Service::Trace(s) => Some(s.trace()),
        }
    }

    /// Packets in propagation.
    pub fn in_flight_packets(&self) -> usize {
        self.line.len()
    }

    /// Most packets in propagation at once (`LinkParams::delay_line_limit`).
    pub fn delay_line_limit(&self) -> usize {
        self.line_limit
    }

    /// The delay of a pure delay line: a link with no rate limit, no loss model, no
    /// outage to come and a queue every packet passes straight through, which
    /// therefore hands every packet on exactly `delay` after it took it (up to its
    /// `delay_line_limit`). `None` for any other link. The simulator folds such a
    /// line into the link after it (brisk-sim's `Engine::fold_delay_line`).
    pub fn pure_delay(&self) -> Option<Duration> {
        let Service::Rate(s) = &self.service else {
            return None;
        };
        let pure = s.rate_bps() == 0
            && self.loss.is_none()
            && self.outages.none_left()
            && self.queue.is_empty()
            && self.queue.passes_straight(0);
        pure.then(|| self.delay())
    }

    /// When a packet of `bytes` that arrives at `at` (not before the link's last call)
    /// would leave the link, if nothing arrives before it: known when the link holds
    /// nothing (empty queue and delay line, serialiser free by `at`), serves at a fixed
    /// rate, and cannot drop the packet on arrival (no loss model, no outage to come,
    /// a queue it passes straight through). `None` otherwise: the caller then has to
    /// offer the packet at `at` to learn its fate. The serialiser's carry is read, not
    /// moved, so the answer is the departure `handle_packet(at, ..)` then sets.
    pub fn lone_departure(&self, at: Instant, bytes: usize) -> Option<Instant> {
        let Service::Rate(s) = &self.service else {
            return None;
        };
        let at = at.max(self.last_now);
        let alone = self.line.is_empty()
            && self.busy_until <= at
            && self.loss.is_none()
            && self.outages.none_left()
            && self.queue.passes_straight(bytes);
        if !alone {
            return None;
        }
        let back_to_back = self.busy_until == at;
        let wire_bytes = bytes.saturating_add(self.overhead_bytes);
        let finish = at.saturating_add_nanos(s.peek_tx_time_ns(wire_bytes, back_to_back));
        Some(finish.saturating_add_nanos(self.delay_ns))
    }

    /// Starts the per-packet event log, keeping at most `capacity` undrained events.
    pub fn enable_event_log(&mut self, capacity: usize) {
        self.log.enable(capacity);
    }

    /// Moves the logged events, oldest first, to the end of `out`.
    pub fn drain_events(&mut self, out: &mut Vec<NetEvent>) {
        self.log.drain_into(out);
    }

    /// Events not logged because the log was full.
    /// The logged events in place (see [`EventLog::events`]); [`clear_events`]
    /// (Self::clear_events) forgets them.
    pub fn events(&self) -> &[NetEvent] {
        self.log.events()
    }

    pub fn clear_events(&mut self) {
        self.log.clear();
    }

    pub fn events_lost(&self) -> u64 {
        self.log.lost()
    }

    fn clamp(&mut self, now: Instant) -> Instant {
        debug_assert!(now >= self.last_now, "time ran backwards");
        self.last_now = self.last_now.max(now);
        self.last_now
    }

    fn drop_pkt(&mut self, at: Instant, pkt: &Packet, reason: DropReason) {
        self.counters.count_drop(reason, pkt.len());
        self.log.push(|| NetEvent::Drop {
            at,
            id: pkt.id,
            flow: pkt.flow,
            bytes: pkt.len(),
            reason,
        });
    }

    /// Counts and logs the packets the queue dropped on its own in the last call.
    #[inline]
    fn drain_queue_drops(&mut self, t: Instant) {
        // Twice per packet, and a drop-tail queue never has any: skip the call.
        if self.queue.drops_pending() {
            self.take_queue_drops(t);
        }
    }

    #[inline(never)]
    fn take_queue_drops(&mut self, t: Instant) {
        while let Some(d) = self.queue.poll_drop() {
            let reason = if d.overflow {
                DropReason::QueueFull
            } else {
                DropReason::Aqm
            };
            self.drop_pkt(t, &d.pkt, reason);
        }
    }

    /// Takes the line's front off the wire (it is due).
    #[inline(never)]
    fn depart(&mut self) -> Packet {
        // NOTE(unwrap): the caller checked that the line has a front.
        let (at, pkt) = self.line.pop_front().unwrap();
        self.counters.output.add(pkt.len());
        self.log.push(|| NetEvent::Depart {
            at,
            id: pkt.id,
            flow: pkt.flow,
            bytes: pkt.len(),
        });
        pkt
    }

    /// Serves the queue for every instant up to `now` at which the serialiser was free.
    fn catch_up(&mut self, now: Instant) {
        while self.busy_until <= now && !self.queue.is_empty() {
            if !self.start_next(self.busy_until, true) {
                break;
            }
        }
    }

    /// Moves the queue's head onto the wire at `t`. Returns false if the queue gave
    /// nothing.
    fn start_next(&mut self, t: Instant, back_to_back: bool) -> bool {
        let next = self.queue.dequeue(t);
        self.drain_queue_drops(t);
        let Some(d) = next else {
            return false;
        };
        let sojourn = d.sojourn(t);
        if d.ce_marked {
            self.counters.ce_marked = self.counters.ce_marked.saturating_add(1);
        }
        let (qp, qb) = (self.queue.len_packets(), self.queue.len_bytes());
        self.log.push(|| NetEvent::Dequeue {
            at: t,
            id: d.pkt.id,
            flow: d.pkt.flow,
            bytes: d.pkt.len(),
            sojourn,
            queue_packets: qp,
            queue_bytes: qb,
            ce_marked: d.ce_marked,
        });
        self.put_on_wire(t, d.pkt, back_to_back);
        true
    }

    /// Serialises `pkt` from `t` and puts it into the delay line (or drops it if the
    /// line is full).
    #[inline]
    fn put_on_wire(&mut self, t: Instant, pkt: Packet, back_to_back: bool) {
        let wire_bytes = pkt.len().saturating_add(self.overhead_bytes);
        let finish = self.service.finish(t, wire_bytes, back_to_back);
        // On a trace-driven link this is the time the packet waited for and used
        // opportunities, so utilisation there means "backlogged".
        let tx_ns = finish.as_nanos().saturating_sub(t.as_nanos());
        self.counters.busy_ns = self.counters.busy_ns.saturating_add(tx_ns);
        self.busy_until = finish;
        if self.line.len() >= self.line_limit {
            self.drop_pkt(t, &pkt, DropReason::Overflow);
        } else {
            let arrive = finish.saturating_add_nanos(self.delay_ns);
            self.line.push_back((arrive, pkt));
        }
    }

    /// A packet that arrives at an empty drop-tail queue with the serialiser free
    /// (`Queue::passes_straight`): what `enqueue` and then `start_next` would do, with
    /// the same counters and the same two log events, without the packet's trip into
    /// the queue's FIFO and out again. Every packet on a dumbbell's access links (pure
    /// delay lines) comes here; the queue's round trip was about a third of
    /// `handle_packet`'s instructions in `bench sim` (docs/performance.md, "The
    /// simulator's event and packet path (§1, helper perfengine)").
    #[inline]
    fn pass_straight(&mut self, now: Instant, pkt: Packet) {
        let (id, flow, bytes) = (pkt.id, pkt.flow, pkt.len());
        self.counters.note_queue(1, bytes);
        self.log.push(|| NetEvent::Enqueue {
            at: now,
            id,
            flow,
            bytes,
            queue_packets: 1,
            queue_bytes: bytes,
        });
        self.log.push(|| NetEvent::Dequeue {
            at: now,
            id,
            flow,
            bytes,
            sojourn: Duration::ZERO,
            queue_packets: 0,
            queue_bytes: 0,
            ce_marked: false,
        });
        let back_to_back = self.busy_until == now;
        self.put_on_wire(now, pkt, back_to_back);
    }
}

impl<Q: Queue> Element for Link<Q> {
    fn handle_packet(&mut self, now: Instant, pkt: Packet) {
        let now = self.clamp(now);
        self.catch_up(now);
        self.counters.input.add(pkt.len());
        if self.outages.is_down(now) {
            return self.drop_pkt(now, &pkt, DropReason::Outage);
        }
        if self.loss.should_drop_packet(&pkt.data) {
            return self.drop_pkt(now, &pkt, DropReason::LossModel);
        }
        if self.busy_until <= now && self.queue.passes_straight(pkt.len()) {
            return self.pass_straight(now, pkt);
        }
        let (id, flow, bytes) = (pkt.id, pkt.flow, pkt.len());
        if let Err(pkt) = self.queue.enqueue(now, pkt) {
            return self.drop_pkt(now, &pkt, DropReason::QueueFull);
        }
        self.drain_queue_drops(now);
        let (qp, qb) = (self.queue.len_packets(), self.queue.len_bytes());
        self.counters.note_queue(qp, qb);
        self.log.push(|| NetEvent::Enqueue {
            at: now,
            id,
            flow,
            bytes,
            queue_packets: qp,
            queue_bytes: qb,
        });
        // After catch_up a non-empty queue means a busy serialiser; if it is free, the
        // queue holds just this packet and it starts now.
        if self.busy_until <= now {
            let back_to_back = self.busy_until == now;
            self.start_next(now, back_to_back);
        }
    }

    /// Inline: most polls find nothing due, and decide that without a call.
    #[inline]
    fn poll_packet(&mut self, now: Instant) -> Option<Packet> {
        let now = self.clamp(now);
        if self.busy_until <= now && !self.queue.is_empty() {
            self.catch_up(now);
        }
        if self.line.front().is_some_and(|(at, _)| *at <= now) {
            return Some(self.depart());
        }
        None
    }

    /// The next departure; or, with nothing in propagation, the next dequeue (a poll
    /// then may return `None` but moves a packet onto the wire). Inline: the simulator
    /// asks after every packet a link takes or sends, from another crate.
    #[inline]
    fn poll_timeout(&self) -> Option<Instant> {
        match self.line.front() {
            Some((at, _)) => Some(*at),
            None if !self.queue.is_empty() => Some(self.busy_until),
            None => None,
        }
    }
}

#[cfg(test)]
#[path = "link_tests.rs"]
mod tests;
