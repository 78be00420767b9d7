//! The simulator's node type: a host or a brisk-net element, as a closed enum so the
//! per-packet path has no vtable. A link may carry a [`LinkMeter`] (brisk-net's) that
//! drains the link's event log after every call and turns it into bottleneck metrics.

use std::fs::File;
use std::io::BufWriter;

use brisk_net::mmlog::MahimahiLog;
use brisk_net::{Element, Impairment, Link, NetEvent, Packet};
use brisk_time::Instant;
use brisk_wire::pcapng::PcapNgWriter;

use crate::engine::{Ctx, Node};
use crate::host::Host;
use crate::ingress::Ingress;
use crate::wl_host::{Router, WlHost};

// The meter is brisk-net's so the real-time emulator meters its links with the same
// code; these re-exports keep the simulator's old paths working.
pub use brisk_net::meter::{DropRecord, LinkMeter, QueueRow, MAX_DROP_RECORDS};

/// Event-log capacity between drains (drained after every call, so this is ample).
const LOG_CAPACITY: usize = 1 << 16;

/// A Mahimahi-format log of a link, written as the run goes.
pub type LinkLog = MahimahiLog<BufWriter<File>>;

/// A pcapng capture at a link, in two files: `departures` holds every packet as it
/// leaves the link, `drops` every dropped packet at its drop, with the reason as the
/// packet's comment (`drop: queue_full`). A packet dropped after it was queued (an AQM
/// or a full delay line) is recorded with its length but no bytes, since the link no
/// longer holds them.
///
/// Two files, not two interfaces of one: Wireshark's TCP analysis follows a connection
/// by addresses and ports across all interfaces of a file (4.0 has no per-interface
/// option; later ones have one, off by default). A drop is stamped when the packet
/// arrives at the full queue, before up to the queue's worth of departures with lower
/// sequence numbers, and mixed in, those made Wireshark count 993 "suspected
/// retransmissions" and 1272 out-of-order segments where the sender retransmitted 254.
/// Alone, the departures show each drop as a gap ("previous segment(s) not captured")
/// and its retransmission as the segment that fills it (tests/pcapng.rs).
pub struct LinkCapture {
    pub departures: PcapNgWriter<BufWriter<File>>,
    pub drops: PcapNgWriter<BufWriter<File>>,
    /// The arriving packet's first bytes, until the link decides on it.
    head: Vec<u8>,
    head_id: Option<u64>,
    snaplen: usize,
    pub error: Option<std::io::Error>,
}

impl LinkCapture {
    pub fn new(
        departures: PcapNgWriter<BufWriter<File>>,
        drops: PcapNgWriter<BufWriter<File>>,
        snaplen: usize,
    ) -> Self {
        LinkCapture {
            departures,
            drops,
            head: Vec::new(),
            head_id: None,
            snaplen,
            error: None,
        }
    }

    fn record(&mut self, at: Instant, data: &[u8], len: usize) {
        if self.error.is_some() {
            return;
        }
        let ts = std::time::Duration::from_nanos(at.as_nanos());
        if let Err(e) = self.departures.write(ts, data, len, None) {
            self.error = Some(e);
        }
    }

    fn record_drop(&mut self, at: Instant, data: &[u8], len: usize, comment: &str) {
        if self.error.is_some() {
            return;
        }
        let ts = std::time::Duration::from_nanos(at.as_nanos());
        if let Err(e) = self.drops.write(ts, data, len, Some(comment)) {
            self.error = Some(e);
        }
    }

    /// Flushes both files.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.departures.flush()?;
        self.drops.flush()
    }
}

/// A link with optional metering and an optional Mahimahi-format log.
pub struct LinkNode {
    pub link: Link,
    pub meter: Option<LinkMeter>,
    pub log: Option<LinkLog>,
    pub capture: Option<LinkCapture>,
    /// Packets on the pure delay lines folded into this link, not yet arrived.
    pub ingress: Ingress,
}

impl LinkNode {
    pub fn new(link: Link) -> Self {
        LinkNode {
            link,
            meter: None,
            log: None,
            capture: None,
            ingress: Ingress::default(),
        }
    }
    pub fn metered(mut link: Link, meter: LinkMeter) -> Self {
        link.enable_event_log(LOG_CAPACITY);
        LinkNode {
            meter: Some(meter),
            ..LinkNode::new(link)
        }
    }
    /// Also logs the link in Mahimahi's format.
    pub fn set_log(&mut self, log: LinkLog) {
        self.link.enable_event_log(LOG_CAPACITY);
        self.log = Some(log);
    }
    /// Also captures the link into a pcapng file.
    pub fn set_capture(&mut self, capture: LinkCapture) {
        self.link.enable_event_log(LOG_CAPACITY);
        self.capture = Some(capture);
    }
    /// After every link call: decided inline (most polls log nothing), so the common
    /// case pays no call.
    #[inline]
    fn absorb(&mut self) {
        if self.meter.is_none() && self.log.is_none() && self.capture.is_none() {
            return;
        }
        if self.link.events().is_empty() {
            // Most polls find nothing due. Nothing to record, and the lost count can
            // only have grown by a push that found the log full, so it is unchanged;
            // a capture's `head_id` was reset by the call that logged its packet.
            return;
        }
        self.absorb_events();
    }
    #[inline(never)]
    fn absorb_events(&mut self) {
        // Read in place: copying them out first cost about as much as metering them.
        let events = self.link.events();
        if let Some(m) = &mut self.meter {
            m.absorb_events(events, self.link.events_lost());
        }
        if let Some(l) = &mut self.log {
            l.absorb(events);
        }
        if let Some(c) = &mut self.capture {
            for ev in events {
                if let NetEvent::Drop {
                    at,
                    id,
                    bytes,
                    reason,
                    ..
                } = *ev
                {
                    let comment = format!("drop: {}", reason.name());
                    let head = std::mem::take(&mut c.head);
                    let data: &[u8] = if c.head_id == Some(id) { &head } else { &[] };
                    c.record_drop(at, data, bytes, &comment);
                    c.head = head;
                }
            }
            c.head_id = None;
        }
        self.link.clear_events();
    }
    /// Offers the link every folded line's packet that has arrived by `now`, each at
    /// its arrival time, in order: what the lines' own wake-ups did, in one call.
    /// Inline for the test; links without folded lines never get further.
    #[inline]
    fn arrive(&mut self, now: Instant) {
        if self.ingress.is_folded() {
            self.arrive_folded(now);
        }
    }

    fn arrive_folded(&mut self, now: Instant) {
        while let Some((at, pkt)) = self.ingress.pop_due(now) {
            self.offer(at, pkt);
        }
    }

    /// A packet handed at `now` to a folded line of `delay_ns`: it arrives
    /// `delay_ns` later. Nothing else moves, so there is nothing to poll.
    #[inline]
    fn handle_delayed(&mut self, now: Instant, pkt: Packet, delay_ns: u64) {
        let folded = self.ingress.push(now, delay_ns, pkt);
        debug_assert!(folded, "no line of {delay_ns} ns is folded here");
    }

    /// The next instant the link must be called: its own next departure or dequeue;
    /// with nothing in it, the first folded arrival's departure when that is known
    /// without offering it (`Link::lone_departure`: no packet of those arriving before
    /// it could leave earlier), else the arrival itself.
    ///
    /// The link's own answer inline, the folded arrivals' out of line: the engine
    /// asks after every hand-over and event (~970 000 times in `bench sim`), and
    /// with the folded part inline `SimNode::poll_timeout` stopped being inlined
    /// into the engine (a call each time).
    #[inline]
    fn poll_timeout(&self) -> Option<Instant> {
        let own = self.link.poll_timeout();
        if own.is_some() || !self.ingress.is_folded() {
            return own;
        }
        self.folded_timeout()
    }

    #[inline(never)]
    fn folded_timeout(&self) -> Option<Instant> {
        let (at, bytes) = self.ingress.front()?;
        Some(self.link.lone_departure(at, bytes).unwrap_or(at))
    }

    /// Takes every folded arrival up to `now` (a caller about to read or change the
    /// link's state between runs, `Engine::run_until`'s end).
    pub fn settle(&mut self, now: Instant) {
        self.arrive(now);
    }

    fn handle(&mut self, now: Instant, pkt: Packet) {
        self.arrive(now);
        self.offer(now, pkt);
    }

    fn offer(&mut self, now: Instant, pkt: Packet) {
        if let Some(c) = &mut self.capture {
            c.head.clear();
            c.head
                .extend_from_slice(&pkt.data[..pkt.data.len().min(c.snaplen)]);
            c.head_id = Some(pkt.id);
        }
        self.link.handle_packet(now, pkt);
        self.absorb();
    }
    #[inline]
    fn poll(&mut self, now: Instant) -> Option<Packet> {
        self.arrive(now);
        let p = self.link.poll_packet(now);
        self.absorb();
        if let (Some(c), Some(p)) = (&mut self.capture, &p) {
            // As it leaves the link (after the link's own `delay`, 0 for the dumbbell's
            // bottleneck).
            c.record(now, &p.data, p.len());
        }
        p
    }
}

pub enum SimNode {
    Host(Box<Host>),
    /// A long-lived host of a workload run (`crate::wl_host`).
    WlHost(Box<WlHost>),
    /// A router of a multi-hop topology (forwards at once; routing is the engine's).
    Router(Box<Router>),
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
    pub fn as_wl_host(&self) -> Option<&WlHost> {
        match self {
            SimNode::WlHost(h) => Some(h),
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

// `handle_packet` and `poll_timeout` are inline (as `poll_packet` is): the engine
// calls them for every hand-over and every reschedule (about 650 000 and 970 000
// times in `bench sim`'s 2 s run), and the dispatch alone cost a call and its
// register saves each time.
impl Node for SimNode {
    #[inline]
    fn handle_packet(&mut self, now: Instant, pkt: Packet, ctx: &mut Ctx) {
        match self {
            SimNode::Host(h) => h.handle_packet(now, pkt, ctx),
            SimNode::WlHost(h) => h.handle_packet(now, pkt, ctx),
            SimNode::Router(r) => r.handle_packet(pkt),
            SimNode::Link(l) => l.handle(now, pkt),
            SimNode::Impair(i) => i.handle_packet(now, pkt),
        }
    }

    #[inline]
    fn poll_packet(&mut self, now: Instant, ctx: &mut Ctx) -> Option<Packet> {
        match self {
            SimNode::Host(h) => h.poll_packet(now, ctx),
            SimNode::WlHost(h) => h.poll_packet(now, ctx),
            SimNode::Router(r) => r.poll_packet(),
            SimNode::Link(l) => l.poll(now),
            SimNode::Impair(i) => i.poll_packet(now),
        }
    }

    fn handle_timeout(&mut self, now: Instant, ctx: &mut Ctx) {
        match self {
            SimNode::Host(h) => h.handle_timeout(now, ctx),
            SimNode::WlHost(h) => h.handle_timeout(now, ctx),
            // Elements do their timed work inside `poll_packet`.
            SimNode::Link(_) | SimNode::Impair(_) | SimNode::Router(_) => {}
        }
    }

    fn fold_line(&mut self, delay_ns: u64, limit: usize) -> bool {
        match self {
            SimNode::Link(l) => l.ingress.add_line(delay_ns, limit),
            _ => false,
        }
    }

    #[inline]
    fn handle_delayed(&mut self, now: Instant, delay_ns: u64, pkt: Packet) {
        match self {
            SimNode::Link(l) => l.handle_delayed(now, pkt, delay_ns),
            // `fold_line` refused these, so the engine never folds a line into one.
            _ => debug_assert!(false, "a delay line folded into a node that is no link"),
        }
    }

    fn settle(&mut self, now: Instant) {
        if let SimNode::Link(l) = self {
            l.settle(now);
        }
    }

    #[inline]
    fn poll_timeout(&self) -> Option<Instant> {
        match self {
            SimNode::Host(h) => h.poll_timeout(),
            SimNode::WlHost(h) => h.poll_timeout(),
            SimNode::Router(_) => None,
            SimNode::Link(l) => l.poll_timeout(),
            SimNode::Impair(i) => i.poll_timeout(),
        }
    }
}
