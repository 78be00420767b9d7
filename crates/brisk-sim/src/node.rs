//! The simulator's node type: a host or a brisk-net element, as a closed enum so the
//! per-packet path has no vtable. A link may carry a [`LinkMeter`] that drains the
//! link's event log after every call and turns it into bottleneck metrics.

use brisk_net::{DropReason, Element, Impairment, Link, NetEvent, Packet};
use brisk_time::{dur_nanos, Instant};

use crate::engine::{Ctx, Node};
use crate::host::Host;
use crate::metrics::{Samples, Series};

/// Most drop records kept (times and flows); counts stay exact beyond it.
pub const MAX_DROP_RECORDS: usize = 1_000_000;
/// Event-log capacity between drains (drained after every call, so this is ample).
const LOG_CAPACITY: usize = 1 << 16;

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
}

/// One drop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DropRecord {
    pub at: Instant,
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
    /// First drop per flow (indexed by flow id).
    pub first_drop: Vec<Option<Instant>>,
    /// Events the link could not log (should stay 0).
    pub events_lost: u64,
    buf: Vec<NetEvent>,
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
            first_drop: vec![None; flows],
            events_lost: 0,
            buf: Vec::new(),
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
        link.drain_events(&mut self.buf);
        let mut buf = std::mem::take(&mut self.buf);
        for ev in buf.drain(..) {
            self.roll(ev.at().as_nanos());
            match ev {
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
                    ..
                } => {
                    let d = dur_nanos(sojourn);
                    self.sojourn.push(d);
                    self.delay_sum += u128::from(d);
                    self.delay_n += 1;
                    self.cur.max_delay_ns = self.cur.max_delay_ns.max(d);
                    self.cur.packets = queue_packets;
                    self.cur.bytes = queue_bytes;
                }
                NetEvent::Drop {
                    at, flow, reason, ..
                } => {
                    self.drop_count += 1;
                    self.cur.drops += 1;
                    if self.drops.len() < MAX_DROP_RECORDS {
                        self.drops.push(DropRecord { at, flow, reason });
                    }
                    if let Some(slot) = self.first_drop.get_mut(flow as usize) {
                        slot.get_or_insert(at);
                    }
                }
                NetEvent::Duplicate { .. } | NetEvent::Corrupt { .. } | NetEvent::Depart { .. } => {
                }
            }
        }
        self.buf = buf;
        self.events_lost = link.events_lost();
    }

    /// Closes the intervals up to the end of the run.
    pub fn finish(&mut self, end: Instant) {
        self.roll(end.as_nanos());
    }
}

/// A link with optional metering.
pub struct LinkNode {
    pub link: Link,
    pub meter: Option<LinkMeter>,
}

impl LinkNode {
    pub fn new(link: Link) -> Self {
        LinkNode { link, meter: None }
    }
    pub fn metered(mut link: Link, meter: LinkMeter) -> Self {
        link.enable_event_log(LOG_CAPACITY);
        LinkNode {
            link,
            meter: Some(meter),
        }
    }
    fn absorb(&mut self) {
        if let Some(m) = &mut self.meter {
            m.absorb(&mut self.link);
        }
    }
}

pub enum SimNode {
    Host(Box<Host>),
    Link(Box<LinkNode>),
    Impair(Box<Impairment>),
}

impl SimNode {
    pub fn as_host(&self) -> Option<&Host> {
        match self {
            SimNode::Host(h) => Some(h),
            _ => None,
        }
    }
    pub fn as_host_mut(&mut self) -> Option<&mut Host> {
        match self {
            SimNode::Host(h) => Some(h),
            _ => None,
        }
    }
    pub fn as_link(&self) -> Option<&LinkNode> {
        match self {
            SimNode::Link(l) => Some(l),
            _ => None,
        }
    }
    pub fn as_link_mut(&mut self) -> Option<&mut LinkNode> {
        match self {
            SimNode::Link(l) => Some(l),
            _ => None,
        }
    }
    pub fn as_impair(&self) -> Option<&Impairment> {
        match self {
            SimNode::Impair(i) => Some(i),
            _ => None,
        }
    }
}

impl Node for SimNode {
    fn handle_packet(&mut self, now: Instant, pkt: Packet, ctx: &mut Ctx) {
        match self {
            SimNode::Host(h) => h.handle_packet(now, pkt, ctx),
            SimNode::Link(l) => {
                l.link.handle_packet(now, pkt);
                l.absorb();
            }
            SimNode::Impair(i) => i.handle_packet(now, pkt),
        }
    }

    fn poll_packet(&mut self, now: Instant, ctx: &mut Ctx) -> Option<Packet> {
        match self {
            SimNode::Host(h) => h.poll_packet(now, ctx),
            SimNode::Link(l) => {
                let p = l.link.poll_packet(now);
                l.absorb();
                p
            }
            SimNode::Impair(i) => i.poll_packet(now),
        }
    }

    fn handle_timeout(&mut self, now: Instant, ctx: &mut Ctx) {
        match self {
            SimNode::Host(h) => h.handle_timeout(now, ctx),
            // Elements do their timed work inside `poll_packet`.
            SimNode::Link(_) | SimNode::Impair(_) => {}
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match self {
            SimNode::Host(h) => h.poll_timeout(),
            SimNode::Link(l) => l.link.poll_timeout(),
            SimNode::Impair(i) => i.poll_timeout(),
        }
    }
}
