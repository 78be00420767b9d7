//! One direction of the emulated dumbbell, as the simulator builds it
//! (brisk-sim `topology.rs`, docs/ARCHITECTURE.md): each flow's own access delay, then
//! the shared bottleneck chain, or for the reverse direction the shared chain first and
//! then each flow's own access delay.
//!
//! ```text
//!  forward:  flow i ─ access_i (rtt_i/2) ─┐
//!                                         ├─ bottleneck: Link [→ Impairment] ─▶
//!            flow j ─ access_j (rtt_j/2) ─┘
//!  reverse:  ─▶ [reverse: Link [→ Impairment]] ─┬─ back_i (rtt_i/2) ─▶ flow i
//!                                               └─ back_j (rtt_j/2) ─▶ flow j
//! ```
//! Packets are classified by address ([`Classify`]): a flow's receiver is
//! `brisk_sim::topology::receiver_ip(i)` (198.19.x.y with x.y = i + 1) or, over IPv6,
//! `receiver_ip6(i)` (2001:db8:19::n with n = i + 1), so the forward direction reads
//! the destination and the reverse one the source; only TCP packets belong to a flow
//! (a stray ICMPv6 or UDP packet to a receiver's address is `NO_FLOW`); the flow id also
//! labels the packet for the bottleneck's event log (per-flow drops). The access
//! stages are pure delays (unlimited rate, lossless, per-flow FIFO) like the
//! simulator's access links, kept in one time-ordered heap ([`FlowDelays`]).
//!
//! A [`LinkMeter`] (brisk-net's, the simulator's too) can watch the shared link: it drains the
//! link's event log after every call and keeps drops, first drop per flow, sojourn
//! (queueing delay) samples and the queue time series.

use std::cmp::{Ordering as CmpOrdering, Reverse};
use std::collections::BinaryHeap;

use std::fs::File;
use std::io::BufWriter;

use brisk_net::meter::{DropRecord, LinkMeter, QueueRow};
use brisk_net::metrics::Summary;
use brisk_net::mmlog::MahimahiLog;
use brisk_net::{Element, NetEvent, Packet};
use brisk_time::{Duration, Instant};
use brisk_wire::{peek, IPPROTO_TCP};
use std::net::{IpAddr, Ipv6Addr};

use crate::emu::path::PathChain;

/// Most packets the access stages of one direction hold at once (a 10 Gbit/s,
/// 50 ms access delay holds ~42k 1500-byte packets); beyond it packets are dropped.
pub const MAX_ACCESS_PACKETS: usize = 1 << 17;
/// Event-log capacity of a metered link between drains (drained after every call).
const METER_LOG: usize = 1 << 16;
/// Unclassified packets carry this flow id.
pub const NO_FLOW: u32 = u32::MAX;

/// How a direction finds a packet's flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Classify {
    /// Every packet is flow 0 (a single-flow path).
    None,
    /// By the destination being a receiver address (forward direction).
    ByDestination,
    /// By the source being a receiver address (reverse direction).
    BySource,
}

/// The flow whose receiver owns `addr` (198.19.x.y, x.y = flow + 1), if any.
pub fn receiver_flow(addr: [u8; 4]) -> Option<u32> {
    let [a, b, x, y] = addr;
    let n = u32::from(x) << 8 | u32::from(y);
    (a == 198 && b == 19 && n > 0).then(|| n - 1)
}

/// The flow whose IPv6 receiver owns `addr` (2001:db8:19::n, n = flow + 1, n < 2³²).
pub fn receiver_flow6(addr: Ipv6Addr) -> Option<u32> {
    let s = addr.segments();
    let n = u32::from(s[6]) << 16 | u32::from(s[7]);
    (s[..6] == [0x2001, 0xdb8, 0x19, 0, 0, 0] && n > 0).then(|| n - 1)
}

/// The flow whose receiver owns `addr`, of either family.
pub fn receiver_flow_ip(addr: IpAddr) -> Option<u32> {
    match addr {
        IpAddr::V4(a) => receiver_flow(a.octets()),
        IpAddr::V6(a) => receiver_flow6(a),
    }
}

impl Classify {
    pub fn flow_of(self, pkt: &[u8]) -> Option<u32> {
        let key = match self {
            Classify::None => return Some(0),
            Classify::ByDestination | Classify::BySource => peek::flow_key(pkt)?,
        };
        if key.protocol != IPPROTO_TCP {
            return None;
        }
        match self {
            Classify::ByDestination => receiver_flow_ip(key.dst),
            _ => receiver_flow_ip(key.src),
        }
    }
}

/// A packet waiting in an access stage; ordered by (due time, arrival order).
struct Held {
    due: Instant,
    seq: u64,
    pkt: Packet,
}

impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        (self.due, self.seq) == (o.due, o.seq)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Self) -> CmpOrdering {
        (self.due, self.seq).cmp(&(o.due, o.seq))
    }
}

/// Per-flow constant delays in one heap: a packet of flow `i` leaves `delays[i]` after
/// it arrived. Each flow's delay is constant, so per-flow order is kept (ties by
/// arrival order); packets of unknown flows pass with no delay.
pub struct FlowDelays {
    delays: Vec<Duration>,
    heap: BinaryHeap<Reverse<Held>>,
    seq: u64,
    /// Packets refused because [`MAX_ACCESS_PACKETS`] were held.
    pub overflow: u64,
}

impl FlowDelays {
    pub fn new(delays: Vec<Duration>) -> FlowDelays {
        FlowDelays {
            delays,
            heap: BinaryHeap::new(),
            seq: 0,
            overflow: 0,
        }
    }

    fn push(&mut self, now: Instant, pkt: Packet) -> bool {
        if self.heap.len() >= MAX_ACCESS_PACKETS {
            self.overflow += 1;
            return false;
        }
        let d = self
            .delays
            .get(pkt.flow as usize)
            .copied()
            .unwrap_or(Duration::ZERO);
        self.seq += 1;
        self.heap.push(Reverse(Held {
            due: now.saturating_add(d),
            seq: self.seq,
            pkt,
        }));
        true
    }

    fn next_due(&self) -> Option<Instant> {
        self.heap.peek().map(|h| h.0.due)
    }

    fn pop_due(&mut self, now: Instant) -> Option<(Instant, Packet)> {
        if self.next_due()? > now {
            return None;
        }
        self.heap.pop().map(|Reverse(h)| (h.due, h.pkt))
    }
}

/// What a [`LinkMeter`] measured on a direction's shared link, for reports.
#[derive(Clone, Debug, Default)]
pub struct MeterReport {
    pub drops: u64,
    /// Packets the queue CE-marked.
    pub ce_marked: u64,
    /// Every drop (bounded by the meter), time-ordered.
    pub drop_records: Vec<DropRecord>,
    /// First drop per flow id.
    pub first_drop: Vec<Option<Instant>>,
    /// Queueing delay (sojourn in the queue) of every dequeued packet.
    pub queue_delay: Option<Summary>,
    pub queue_series: Vec<(u64, QueueRow)>,
    /// Serialisation time of every packet the link sent (utilisation = busy / elapsed).
    pub busy_ns: u64,
    pub events_lost: u64,
}

/// One direction: optional per-flow stage, the shared chain, optional per-flow stage.
pub struct Route {
    classify: Classify,
    pre: Option<FlowDelays>,
    chain: PathChain,
    post: Option<FlowDelays>,
    meter: Option<LinkMeter>,
    /// The meter records events up to this time only (the scenario's end), like the
    /// simulator, which stops there; later events are drained and discarded.
    meter_end: Instant,
    /// The link's busy time as of the last event inside the metered window.
    busy_at_end: u64,
    discard: Vec<NetEvent>,
    /// A Mahimahi-format log of the shared link (`brisk lab --link-log`), with the
    /// path it is written to.
    log: Option<(MahimahiLog<BufWriter<File>>, String)>,
}

impl Route {
    /// Just the chain (the two-host paths).
    pub fn plain(chain: PathChain) -> Route {
        Route {
            classify: Classify::None,
            pre: None,
            chain,
            post: None,
            meter: None,
            meter_end: Instant::MAX,
            busy_at_end: 0,
            discard: Vec::new(),
            log: None,
        }
    }

    /// A forward direction: per-flow `access` delays, then `chain`.
    pub fn forward(access: Vec<Duration>, chain: PathChain) -> Route {
        Route {
            classify: Classify::ByDestination,
            pre: Some(FlowDelays::new(access)),
            chain,
            post: None,
            meter: None,
            meter_end: Instant::MAX,
            busy_at_end: 0,
            discard: Vec::new(),
            log: None,
        }
    }

    /// A reverse direction: `chain`, then per-flow `back` delays.
    pub fn reverse(chain: PathChain, back: Vec<Duration>) -> Route {
        Route {
            classify: Classify::BySource,
            pre: None,
            chain,
            post: Some(FlowDelays::new(back)),
            meter: None,
            meter_end: Instant::MAX,
            busy_at_end: 0,
            discard: Vec::new(),
            log: None,
        }
    }

    /// Logs the shared link in Mahimahi's `mm-link` format into `path` (named `name`
    /// in the log's header).
    pub fn with_link_log(mut self, path: &std::path::Path, name: &str) -> std::io::Result<Route> {
        let f = File::create(path)?;
        let link = self.chain.link();
        let source = match link.trace() {
            Some(_) => "trace".to_string(),
            None if link.rate_bps() > 0 => format!("{} bit/s", link.rate_bps()),
            None => "unlimited".to_string(),
        };
        let log = MahimahiLog::new(
            BufWriter::new(f),
            name,
            &source,
            &link.queue().describe(),
            link.capacity(),
            brisk_time::dur_nanos(link.delay()),
        );
        self.chain.link_mut().enable_event_log(METER_LOG);
        self.log = Some((log, path.display().to_string()));
        Ok(self)
    }

    /// Writes the log's capacity up to `end` and closes it.
    pub fn finish_log(&mut self, end: Instant) -> std::io::Result<()> {
        self.absorb(end);
        match self.log.take() {
            Some((log, path)) => log
                .finish(end)
                .map(drop)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{path}: {e}"))),
            None => Ok(()),
        }
    }

    /// Meters the shared link with the simulator's [`LinkMeter`] until `end`:
    /// `interval_ns` rows (at most `rows`) for `flows` flows.
    pub fn with_meter(
        mut self,
        interval_ns: u64,
        rows: usize,
        flows: usize,
        end: Instant,
    ) -> Route {
        self.chain.link_mut().enable_event_log(METER_LOG);
        self.meter = Some(LinkMeter::new(interval_ns, rows, flows));
        self.meter_end = end;
        self
    }

    pub fn chain(&self) -> &PathChain {
        &self.chain
    }

    pub fn chain_mut(&mut self) -> &mut PathChain {
        &mut self.chain
    }

    /// Packets the access stages refused (full).
    pub fn access_overflow(&self) -> u64 {
        self.pre.as_ref().map_or(0, |p| p.overflow) + self.post.as_ref().map_or(0, |p| p.overflow)
    }

    /// Closes the meter's series at its end (or `now`, if earlier) and hands out its
    /// measurements.
    pub fn finish_meter(&mut self, now: Instant) -> Option<MeterReport> {
        self.absorb(now);
        let end = self.meter_end.min(now);
        let m = self.meter.as_mut()?;
        m.finish(end);
        Some(MeterReport {
            drops: m.drop_count,
            ce_marked: m.ce_marked,
            drop_records: std::mem::take(&mut m.drops),
            first_drop: m.first_drop.clone(),
            queue_delay: m.sojourn.summary(),
            queue_series: std::mem::take(&mut m.series.rows),
            busy_ns: self.busy_at_end,
            events_lost: m.events_lost,
        })
    }

    /// Moves the chain's logged events to `out` (a metered link's events go to the
    /// meter instead).
    pub fn drain_events(&mut self, out: &mut Vec<NetEvent>) {
        self.chain.drain_events(out);
    }

    fn absorb(&mut self, now: Instant) {
        if self.meter.is_none() && self.log.is_none() {
            return;
        }
        let link = self.chain.link_mut();
        self.discard.clear();
        link.drain_events(&mut self.discard);
        if let Some((log, _)) = &mut self.log {
            log.absorb(&self.discard);
        }
        if let Some(m) = &mut self.meter {
            // The meter stops at the scenario's end, as the simulator does.
            if now <= self.meter_end {
                m.absorb_events(&self.discard, link.events_lost());
                self.busy_at_end = link.counters().busy_ns;
            }
        }
    }

    fn chain_in(&mut self, now: Instant, pkt: Packet) {
        self.chain.handle_packet(now, pkt);
        self.absorb(now);
    }
}

fn min_opt(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

impl Element for Route {
    fn handle_packet(&mut self, now: Instant, mut pkt: Packet) {
        if self.classify != Classify::None {
            pkt.flow = self.classify.flow_of(&pkt.data).unwrap_or(NO_FLOW);
        }
        match &mut self.pre {
            Some(pre) => {
                pre.push(now, pkt);
            }
            None => self.chain_in(now, pkt),
        }
    }

    fn poll_packet(&mut self, now: Instant) -> Option<Packet> {
        // Each step advances the earliest stage due by `now`, at that stage's own
        // deadline, so every element sees exact times whatever `now` is. Bounded: a
        // step either moves a packet on or changes the chain's state.
        for _ in 0..4 * MAX_ACCESS_PACKETS {
            let tp = self.pre.as_ref().and_then(FlowDelays::next_due);
            let tc = self.chain.poll_timeout();
            let tq = self.post.as_ref().and_then(FlowDelays::next_due);
            let t = min_opt(min_opt(tp, tc), tq).filter(|t| *t <= now)?;
            if tp == Some(t) {
                if let Some((at, pkt)) = self.pre.as_mut().and_then(|p| p.pop_due(t)) {
                    self.chain_in(at, pkt);
                }
            } else if tc == Some(t) {
                let out = self.chain.poll_packet(t);
                self.absorb(t);
                match (out, &mut self.post) {
                    (Some(pkt), Some(post)) => {
                        post.push(t, pkt);
                    }
                    (Some(pkt), None) => return Some(pkt),
                    (None, _) if self.chain.poll_timeout() == Some(t) => {
                        debug_assert!(
                            false,
                            "chain asked to be polled at {t} but made no progress"
                        );
                        return None;
                    }
                    (None, _) => {}
                }
            } else {
                return self.post.as_mut().and_then(|p| p.pop_due(t)).map(|x| x.1);
            }
        }
        None
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let tp = self.pre.as_ref().and_then(FlowDelays::next_due);
        let tq = self.post.as_ref().and_then(FlowDelays::next_due);
        min_opt(min_opt(tp, self.chain.poll_timeout()), tq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emu::path::{EmuConfig, PathSpec, Rate};

    fn pkt(id: u64, src: [u8; 4], dst: [u8; 4]) -> Packet {
        let mut data = vec![0u8; 100];
        data[0] = 0x45;
        data[9] = IPPROTO_TCP;
        data[12..16].copy_from_slice(&src);
        data[16..20].copy_from_slice(&dst);
        Packet {
            data,
            id,
            flow: 0,
            sent_at: Instant::ZERO,
            l4_csum_valid: false,
        }
    }

    fn drain(r: &mut Route) -> Vec<(Instant, u64, u32)> {
        let mut out = Vec::new();
        while let Some(t) = r.poll_timeout() {
            if let Some(p) = r.poll_packet(t) {
                out.push((t, p.id, p.flow));
            }
        }
        out
    }

    fn chain(rate: u64) -> PathChain {
        let cfg = EmuConfig {
            bottleneck: PathSpec {
                rate: (rate > 0).then_some(Rate(rate)),
                ..PathSpec::default()
            },
            ..EmuConfig::default()
        };
        cfg.build().unwrap().0
    }

    #[test]
    fn receiver_addresses_map_to_flows() {
        assert_eq!(receiver_flow([198, 19, 0, 1]), Some(0));
        assert_eq!(receiver_flow([198, 19, 1, 0]), Some(255));
        assert_eq!(receiver_flow([198, 19, 0, 0]), None);
        assert_eq!(receiver_flow([198, 18, 0, 1]), None);
        for i in [0u32, 7, 300] {
            let std::net::IpAddr::V4(a) = brisk_sim::topology::receiver_ip(i) else {
                panic!("v4")
            };
            assert_eq!(receiver_flow(a.octets()), Some(i));
        }
    }

    /// A bare IPv6 header (no extension headers) with 4 port bytes after it.
    fn pkt6(next_header: u8, src: Ipv6Addr, dst: Ipv6Addr) -> Vec<u8> {
        let mut data = vec![0u8; 60];
        data[0] = 0x60;
        data[5] = 20;
        data[6] = next_header;
        data[8..24].copy_from_slice(&src.octets());
        data[24..40].copy_from_slice(&dst.octets());
        data
    }

    #[test]
    fn ipv6_receivers_map_to_flows_and_only_tcp_is_classified() {
        for i in [0u32, 7, 300, 70_000] {
            let IpAddr::V6(a) = brisk_sim::topology::receiver_ip6(i) else {
                panic!("v6")
            };
            assert_eq!(receiver_flow6(a), Some(i));
        }
        let sender = Ipv6Addr::new(0x2001, 0xdb8, 0x18, 0, 0, 0, 0, 1);
        let r2 = Ipv6Addr::new(0x2001, 0xdb8, 0x19, 0, 0, 0, 0, 3);
        assert_eq!(receiver_flow6(sender), None);
        assert_eq!(
            receiver_flow6(Ipv6Addr::new(0x2001, 0xdb8, 0x19, 0, 0, 0, 0, 0)),
            None
        );
        let tcp = pkt6(IPPROTO_TCP, sender, r2);
        assert_eq!(Classify::ByDestination.flow_of(&tcp), Some(2));
        assert_eq!(
            Classify::BySource.flow_of(&pkt6(IPPROTO_TCP, r2, sender)),
            Some(2)
        );
        // ICMPv6 (58), e.g. a neighbour solicitation or an MLD report, is no flow's.
        assert_eq!(Classify::ByDestination.flow_of(&pkt6(58, sender, r2)), None);
        // Nor is an IPv4 packet that is not TCP.
        let mut udp = pkt(0, [198, 18, 0, 1], [198, 19, 0, 1]).data;
        udp[9] = 17;
        assert_eq!(Classify::ByDestination.flow_of(&udp), None);
    }

    #[test]
    fn each_flow_gets_its_own_access_delay_before_the_shared_link() {
        let ms = Duration::from_millis;
        let mut r = Route::forward(vec![ms(5), ms(25)], chain(0));
        let (s, r0, r1) = ([198, 18, 0, 1], [198, 19, 0, 1], [198, 19, 0, 2]);
        r.handle_packet(Instant::ZERO, pkt(1, s, r1));
        r.handle_packet(Instant::ZERO, pkt(2, s, r0));
        r.handle_packet(Instant::ZERO, pkt(3, s, [198, 18, 9, 9]));
        let out = drain(&mut r);
        assert_eq!(
            out,
            vec![
                (Instant::ZERO, 3, NO_FLOW),
                (Instant::ZERO + ms(5), 2, 0),
                (Instant::ZERO + ms(25), 1, 1)
            ]
        );
    }

    #[test]
    fn reverse_direction_delays_after_the_shared_link_by_source() {
        let ms = Duration::from_millis;
        // 12 Mbit/s: a 100-byte packet serialises in 66.666 us.
        let mut r = Route::reverse(chain(12_000_000), vec![ms(1), ms(3)]);
        let d = [198, 18, 0, 1];
        r.handle_packet(Instant::ZERO, pkt(1, [198, 19, 0, 2], d));
        r.handle_packet(Instant::ZERO, pkt(2, [198, 19, 0, 1], d));
        let out = drain(&mut r);
        let ser = Duration::from_nanos(66_666);
        assert_eq!(out[0].1, 2);
        assert_eq!(out[1].1, 1);
        assert!(out[0].0 >= Instant::ZERO + ser * 2 + ms(1));
        assert!(out[1].0 >= Instant::ZERO + ser + ms(3));
        assert!(out[1].0 < Instant::ZERO + ser * 2 + ms(3));
    }

    #[test]
    fn per_flow_order_is_kept_and_meter_sees_flows_drops() {
        let ms = Duration::from_millis;
        let cfg = EmuConfig {
            bottleneck: PathSpec {
                rate: Some(Rate(1_000_000)),
                queue: Some(crate::emu::path::QueueSpec::droptail_packets(2)),
                ..PathSpec::default()
            },
            ..EmuConfig::default()
        };
        let mut r = Route::forward(vec![ms(1), ms(2)], cfg.build().unwrap().0).with_meter(
            100_000_000,
            100,
            2,
            Instant::MAX,
        );
        let (s, r0, r1) = ([198, 18, 0, 1], [198, 19, 0, 1], [198, 19, 0, 2]);
        for i in 0..6 {
            r.handle_packet(Instant::ZERO, pkt(i, s, if i < 3 { r0 } else { r1 }));
        }
        let out = drain(&mut r);
        let ids: Vec<u64> = out.iter().map(|x| x.1).collect();
        // Flow 0's three arrive first: one on the wire, two queued; flow 1's arrive
        // 1 ms later into a queue still full (800 us per packet at 1 Mbit/s).
        assert_eq!(&ids[..3], &[0, 1, 2]);
        let m = r.finish_meter(Instant::ZERO + ms(100)).unwrap();
        assert_eq!(m.drops as usize, 6 - out.len());
        assert!(m.drops > 0);
        assert_eq!(m.first_drop[0], None);
        assert_eq!(m.first_drop[1], Some(Instant::ZERO + ms(2)));
        assert!(m.queue_delay.is_some());
        assert!(m.busy_ns > 0);
    }
}
