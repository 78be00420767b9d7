//! A TCP-carried IP tunnel, OpenVPN-style, with nested brisk TCP stacks (Minion NSDI
//! 2012 §8.4, Figs 11–12; claim MN-9).
//!
//! Two hosts sit behind the two ends of one tunnel. Their TCP flows (the *inner*
//! flows: brisk `Endpoint`s at 198.19.0.1 and 198.19.0.2) emit real IP packets; each
//! tunnel end takes them into a bounded FIFO (the TUN device's transmit queue, where
//! excess packets are dropped and counted), writes each as one record on the *outer*
//! connection (brisk TCP between 198.18.0.1 and 198.18.0.2, through a 3 / 0.5 Mbit/s
//! asymmetric bottleneck with drop-tail queues), and the far end hands every record it
//! reads back to its inner host as an IP packet. Nothing in between looks at the inner
//! packets except the pure-ACK test of the priACK option.
//!
//! The four tunnel variants of Fig. 12 are two independent switches:
//! - **unordered receive** (the paper's "uCOBS"): records are uCOBS datagrams
//!   (`brisk-minion`) and the outer connection's receiver reads them with
//!   `read_unordered` (uTCP `SO_UNORDERED`, §4.1), so a lost outer segment no longer
//!   holds back the inner packets behind it;
//! - **priACKs**: a tunnelled pure TCP ACK (IPv4, TCP, ACK set, SYN/FIN/RST clear, no
//!   payload; the spec's test, `minion.md` §6.4) is written with a higher priority
//!   through uTCP's prioritised send (`unordered_send`, §4.2), so it overtakes the
//!   unsent data in the outer send buffer.
//!
//! OpenVPN's own TCP mode frames each packet with a 2-byte length ([`Framing::LengthPrefix`]).
//! PriACKs work over it unchanged: a prioritised write is taken whole and only ever
//! placed at a write boundary, and the tunnel writes whole records only, so the
//! in-order receiver still sees a sequence of whole records. Unordered receive needs a
//! self-synchronising framing, so it requires [`Framing::Ucobs`].
//!
//! Everything is driven by virtual time in integer nanoseconds; same config, same
//! bytes. Every queue is bounded: the TUN queues by `tun_queue`, the outer streams by
//! their buffers, the links by their queues and delay lines.

use brisk_app::payload::{Pattern, RxStream, TxStream};
use brisk_minion::{Limits, UcobsReceiver, UcobsSender};
use brisk_net::{DropTail, Element, Link, LinkParams, Loss, Packet, QueueLimit};
use brisk_tcp::{Config, ConnHandle, Connection, Endpoint, EndpointConfig, Event, State};
use brisk_time::{Duration, Instant};
use brisk_wire::{parse_tcp_packet, IpRepr};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::rc::Rc;

/// The tunnel's outer addresses (198.18.0.0/15, the benchmarking range).
pub const OUTER_CLIENT: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
pub const OUTER_SERVER: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
/// The inner hosts' addresses (the tunnel's subnet).
pub const INNER_CLIENT: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 1);
pub const INNER_SERVER: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 2);
/// OpenVPN's port.
const TUNNEL_PORT: u16 = 1194;
/// Inner flow `i` listens on `FLOW_PORT_BASE + i`.
const FLOW_PORT_BASE: u16 = 5001;
/// Priorities of tunnelled packets: pure ACKs (with priACKs) and everything else.
pub const ACK_PRIORITY: u8 = 2;
pub const DATA_PRIORITY: u8 = 1;
/// Largest inner packet a 2-byte length can frame.
const MAX_INNER_PACKET: usize = u16::MAX as usize;
/// Most inner flows a run may have.
pub const MAX_FLOWS: usize = 64;
/// Virtual-time steps at one instant before the driver reports a livelock (a bug).
const MAX_STEPS_PER_INSTANT: u32 = 100_000;
/// Bytes read from an outer stream per call.
const READ_CHUNK: usize = 64 * 1024;

/// How tunnelled packets are framed on the outer byte stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// A 2-byte big-endian length, then the packet (OpenVPN's TCP mode).
    LengthPrefix,
    /// One uCOBS record per packet (Minion §5).
    Ucobs,
}

/// One run of the tunnel.
#[derive(Clone, Debug)]
pub struct VpnConfig {
    pub framing: Framing,
    /// Unordered receive on the outer connection (needs [`Framing::Ucobs`]).
    pub unordered: bool,
    /// Tunnelled pure ACKs written at [`ACK_PRIORITY`] with prioritised send.
    pub pri_acks: bool,
    /// Bottleneck rates, bit/s: server → client and client → server.
    pub down_bps: u64,
    pub up_bps: u64,
    /// Round-trip propagation delay of the outer path (split evenly).
    pub rtt: Duration,
    /// Drop-tail queue of each bottleneck direction, packets.
    pub queue_packets: usize,
    /// Each tunnel end's TUN transmit queue, packets (OpenVPN's `--txqueuelen`).
    pub tun_queue: usize,
    /// The outer connection's send and receive buffers, bytes (OpenVPN's
    /// `--sndbuf` / `--rcvbuf`).
    pub outer_buffer: usize,
    /// Inner bulk flows from the client host to the server host, and back.
    pub uploads: usize,
    pub downloads: usize,
    /// Bytes per inner flow (None: as many as the run allows).
    pub flow_bytes: Option<u64>,
    /// Run length, and the start of the throughput window.
    pub duration: Duration,
    pub warmup: Duration,
    /// Each inner flow opens at a seeded random instant in `[0, start_spread)`, so
    /// seeds differ in more than their payload bytes.
    pub start_spread: Duration,
    pub seed: u64,
}

impl Default for VpnConfig {
    /// The paper's link (3 Mbit/s down, 0.5 Mbit/s up) with the spec's assumed RTT and
    /// queues (`minion.md` §6.4), and OpenVPN 2.1's socket buffers and TUN queue.
    fn default() -> Self {
        VpnConfig {
            framing: Framing::LengthPrefix,
            unordered: false,
            pri_acks: false,
            down_bps: 3_000_000,
            up_bps: 500_000,
            rtt: Duration::from_millis(60),
            queue_packets: 50,
            tun_queue: 100,
            outer_buffer: 64 * 1024,
            uploads: 0,
            downloads: 1,
            flow_bytes: None,
            duration: Duration::from_secs(60),
            warmup: Duration::from_secs(10),
            start_spread: Duration::from_secs(1),
            seed: 1,
        }
    }
}

/// A config field out of range.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VpnError {
    #[error("vpn: {field} = {value} is out of range ({range})")]
    Range {
        field: &'static str,
        value: String,
        range: &'static str,
    },
    #[error(
        "vpn: unordered receive needs uCOBS framing (a length prefix cannot be found out of order)"
    )]
    UnorderedNeedsUcobs,
    #[error("vpn: no progress after {MAX_STEPS_PER_INSTANT} steps at t = {0} ns (driver bug)")]
    Livelock(u64),
}

fn range<T: std::fmt::Display>(field: &'static str, value: T, range: &'static str) -> VpnError {
    VpnError::Range {
        field,
        value: value.to_string(),
        range,
    }
}

impl VpnConfig {
    pub fn validate(&self) -> Result<(), VpnError> {
        if self.unordered && self.framing != Framing::Ucobs {
            return Err(VpnError::UnorderedNeedsUcobs);
        }
        if !(10_000..=100_000_000_000).contains(&self.down_bps) {
            return Err(range("down_bps", self.down_bps, "10 kbit/s to 100 Gbit/s"));
        }
        if !(10_000..=100_000_000_000).contains(&self.up_bps) {
            return Err(range("up_bps", self.up_bps, "10 kbit/s to 100 Gbit/s"));
        }
        if self.rtt > Duration::from_secs(10) {
            return Err(range("rtt", format!("{:?}", self.rtt), "0 to 10 s"));
        }
        if !(1..=100_000).contains(&self.queue_packets) {
            return Err(range("queue_packets", self.queue_packets, "1 to 100000"));
        }
        if !(1..=100_000).contains(&self.tun_queue) {
            return Err(range("tun_queue", self.tun_queue, "1 to 100000"));
        }
        // A whole record (largest inner packet 1500 B plus framing) must fit.
        if !(4096..=(64 << 20)).contains(&self.outer_buffer) {
            return Err(range("outer_buffer", self.outer_buffer, "4 KiB to 64 MiB"));
        }
        let flows = self.uploads + self.downloads;
        if !(1..=MAX_FLOWS).contains(&flows) {
            return Err(range("uploads + downloads", flows, "1 to 64"));
        }
        if self.flow_bytes == Some(0) {
            return Err(range("flow_bytes", 0, "at least 1, or unset"));
        }
        if self.duration.is_zero() || self.duration > Duration::from_secs(24 * 3600) {
            return Err(range(
                "duration",
                format!("{:?}", self.duration),
                "above 0, at most 24 h",
            ));
        }
        if self.start_spread > Duration::from_secs(3600) {
            return Err(range(
                "start_spread",
                format!("{:?}", self.start_spread),
                "0 to 1 h",
            ));
        }
        if self.warmup >= self.duration {
            return Err(range(
                "warmup",
                format!("{:?}", self.warmup),
                "below the duration",
            ));
        }
        Ok(())
    }
}

/// One tunnel end's counters. Every inner packet that enters is either queued,
/// dropped (`tun_drops`, `too_big`) or written (`records_sent`); every record read at
/// the far end is delivered once (`delivered`) or counted `bad_records`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TunnelCounters {
    /// Inner packets the inner host handed to this end.
    pub packets_in: u64,
    /// Dropped because the TUN queue was full.
    pub tun_drops: u64,
    /// Dropped because a 2-byte length cannot frame them.
    pub too_big: u64,
    /// Written to the outer stream (each whole).
    pub records_sent: u64,
    /// Of those, pure ACKs written at [`ACK_PRIORITY`].
    pub acks_prioritised: u64,
    /// Record bytes written, framing included.
    pub record_bytes: u64,
    /// Inner packets this end read from the outer stream and handed to its host.
    pub delivered: u64,
    /// Of those, read ahead of a hole in the outer stream.
    pub delivered_out_of_order: u64,
    /// Records read that did not parse as an IPv4 TCP packet (handed over anyway, the
    /// inner stack drops them).
    pub bad_records: u64,
    /// Inner packets still in the TUN queue at the end.
    pub queued_at_end: u64,
}

/// One inner bulk flow's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InnerFlow {
    /// Client → server (else server → client).
    pub upload: bool,
    /// Bytes the sender's TCP took.
    pub sent: u64,
    /// Bytes the receiver read, in all and within the throughput window.
    pub received: u64,
    pub window_bytes: u64,
    /// Received bytes that broke the sender's pattern.
    pub bad_bytes: u64,
    /// SHA-256 of what was written and of what was read.
    pub tx_sha256: Option<[u8; 32]>,
    pub rx_sha256: Option<[u8; 32]>,
    /// When the receiver had all `flow_bytes` (finite flows).
    pub done_at: Option<Instant>,
}

/// A run's outcome.
#[derive(Clone, Debug)]
pub struct VpnResult {
    pub flows: Vec<InnerFlow>,
    pub client: TunnelCounters,
    pub server: TunnelCounters,
    /// Outer packets dropped at the bottleneck queues.
    pub up_drops: u64,
    pub down_drops: u64,
    /// Length of the throughput window, seconds.
    pub window_s: f64,
    /// When the run stopped.
    pub end: Instant,
}

impl VpnResult {
    fn mbps(&self, upload: bool) -> f64 {
        let bytes: u64 = self
            .flows
            .iter()
            .filter(|f| f.upload == upload)
            .map(|f| f.window_bytes)
            .sum();
        bytes as f64 * 8.0 / self.window_s / 1e6
    }
    /// Inner download goodput over the window, Mbit/s (all download flows).
    pub fn download_mbps(&self) -> f64 {
        self.mbps(false)
    }
    /// Inner upload goodput over the window, Mbit/s (all upload flows).
    pub fn upload_mbps(&self) -> f64 {
        self.mbps(true)
    }
    /// Every inner byte read matched what was written.
    pub fn intact(&self) -> bool {
        self.flows
            .iter()
            .all(|f| f.bad_bytes == 0 && f.received <= f.sent)
            && self.client.bad_records == 0
            && self.server.bad_records == 0
    }
}

/// A pure TCP ACK: IPv4, TCP, ACK set, SYN/FIN/RST clear, no payload (`minion.md` §6.4).
pub fn is_pure_ack(pkt: &[u8]) -> bool {
    match parse_tcp_packet(pkt) {
        Ok((IpRepr::V4(_), tcp)) => {
            let f = tcp.flags;
            f.ack() && !f.syn() && !f.fin() && !f.rst() && tcp.payload.is_empty()
        }
        _ => false,
    }
}

/// Reassembles length-prefixed records from an in-order stream. Holds at most one
/// partial record plus one read.
#[derive(Debug, Default)]
struct LengthPrefixReader {
    buf: Vec<u8>,
    start: usize,
}

impl LengthPrefixReader {
    fn push(&mut self, data: &[u8], deliver: &mut dyn FnMut(&[u8])) {
        self.buf.extend_from_slice(data);
        loop {
            let rest = &self.buf[self.start..];
            if rest.len() < 2 {
                break;
            }
            let len = u16::from_be_bytes([rest[0], rest[1]]) as usize;
            if rest.len() < 2 + len {
                break;
            }
            deliver(&rest[2..2 + len]);
            self.start += 2 + len;
        }
        // Keep only the partial record (bounded by 2 + 64 KiB plus one read).
        self.buf.drain(..self.start);
        self.start = 0;
    }
}

/// One end of the tunnel.
struct TunEnd {
    conn: Option<ConnHandle>,
    framing: Framing,
    pri_acks: bool,
    /// The TUN transmit queue (FIFO, bounded); freed buffers are reused.
    queue: VecDeque<Vec<u8>>,
    limit: usize,
    spare: Vec<Vec<u8>>,
    ucobs_tx: UcobsSender,
    /// A uCOBS record is partly written (plain TCP took part of it): finish it even
    /// when the TUN queue is empty.
    partial: bool,
    ucobs_rx: UcobsReceiver,
    lp_rx: LengthPrefixReader,
    record: Vec<u8>,
    read_buf: Vec<u8>,
    c: TunnelCounters,
}

impl TunEnd {
    fn new(cfg: &VpnConfig) -> Self {
        let limits = Limits {
            max_datagram: MAX_INNER_PACKET,
            // Out-of-order bytes are bounded by the receive window anyway.
            max_ooo_bytes: cfg.outer_buffer.max(1 << 16),
            ..Limits::default()
        };
        TunEnd {
            conn: None,
            framing: cfg.framing,
            pri_acks: cfg.pri_acks,
            queue: VecDeque::with_capacity(cfg.tun_queue.min(1024)),
            limit: cfg.tun_queue,
            spare: Vec::new(),
            ucobs_tx: UcobsSender::new(),
            partial: false,
            // NOTE(unwrap-free): READ_CHUNK is within the receiver's 1 B–1 MiB range and
            // the limits above are valid, so construction cannot fail.
            ucobs_rx: UcobsReceiver::new(limits, READ_CHUNK)
                .unwrap_or_else(|e| unreachable!("valid uCOBS limits: {e}")),
            lp_rx: LengthPrefixReader::default(),
            record: Vec::with_capacity(MAX_INNER_PACKET + 2),
            read_buf: vec![0; READ_CHUNK],
            c: TunnelCounters::default(),
        }
    }

    /// The inner host sends `pkt` into the TUN device.
    fn ingress(&mut self, pkt: &[u8]) {
        self.c.packets_in += 1;
        if self.framing == Framing::LengthPrefix && pkt.len() > MAX_INNER_PACKET {
            self.c.too_big += 1;
            return;
        }
        if self.queue.len() >= self.limit {
            self.c.tun_drops += 1;
            return;
        }
        let mut b = self.spare.pop().unwrap_or_default();
        b.clear();
        b.extend_from_slice(pkt);
        self.queue.push_back(b);
    }

    /// Moves queued packets into the outer stream while it takes whole records, in
    /// FIFO order (OpenVPN reads the TUN device only when its socket has taken the
    /// previous packet). Returns whether anything moved.
    fn pump(&mut self, conn: &mut Connection) -> bool {
        let mut moved = false;
        // A uCOBS record taken in part (plain TCP) is finished first.
        let flushed = self.ucobs_tx.flush(conn).unwrap_or(false);
        if self.partial && flushed {
            moved = true;
        }
        self.partial = !flushed;
        if !flushed {
            return moved;
        }
        while let Some(pkt) = self.queue.front() {
            let ack = self.pri_acks && is_pure_ack(pkt);
            let prio = if ack { ACK_PRIORITY } else { DATA_PRIORITY };
            let taken = match self.framing {
                Framing::LengthPrefix => {
                    self.record.clear();
                    self.record
                        .extend_from_slice(&(pkt.len() as u16).to_be_bytes());
                    self.record.extend_from_slice(pkt);
                    // Whole records only, so every write boundary is a record boundary
                    // (where a prioritised write may be placed).
                    if conn.send_capacity() < self.record.len() {
                        false
                    } else {
                        let n = conn.write_with_priority(&self.record, prio);
                        debug_assert!(n == 0 || n == self.record.len());
                        n == self.record.len()
                    }
                }
                Framing::Ucobs => {
                    // The record's length, partly written or whole, is counted below.
                    let ok = self.ucobs_tx.send(conn, pkt, prio).unwrap_or(false);
                    if ok {
                        self.record.clear();
                    }
                    ok
                }
            };
            if !taken {
                break;
            }
            moved = true;
            self.c.records_sent += 1;
            if self.framing == Framing::LengthPrefix {
                self.c.record_bytes += self.record.len() as u64;
            }
            if ack {
                self.c.acks_prioritised += 1;
            }
            if let Some(b) = self.queue.pop_front() {
                if self.spare.len() < self.limit {
                    self.spare.push(b);
                }
            }
            if self.framing == Framing::Ucobs && !self.ucobs_tx.flush(conn).unwrap_or(false) {
                self.partial = true;
                break;
            }
        }
        moved
    }

    /// Reads records from the outer stream and hands each packet to `inner`.
    fn egress(&mut self, conn: &mut Connection, inner: &mut Endpoint, now: Instant) -> bool {
        let c = &mut self.c;
        let mut deliver = |d: &[u8], in_order: bool| {
            c.delivered += 1;
            if !in_order {
                c.delivered_out_of_order += 1;
            }
            if parse_tcp_packet(d).is_err() {
                c.bad_records += 1;
            }
            inner.handle_packet(now, d);
        };
        match self.framing {
            Framing::Ucobs => {
                let r = self
                    .ucobs_rx
                    .poll(conn, &mut |d| deliver(d.data, d.in_order));
                match r {
                    Ok(reads) => reads > 0,
                    // An in-order gap cannot happen over TCP; count it, never panic.
                    Err(_) => {
                        self.c.bad_records += 1;
                        false
                    }
                }
            }
            Framing::LengthPrefix => {
                let mut any = false;
                loop {
                    let n = conn.read(&mut self.read_buf);
                    if n == 0 {
                        break;
                    }
                    any = true;
                    self.lp_rx
                        .push(&self.read_buf[..n], &mut |d| deliver(d, true));
                }
                any
            }
        }
    }
}

/// An inner flow's two connections and its byte streams.
struct Flow {
    upload: bool,
    port: u16,
    /// When the client opens the connection (None once it has).
    start: Option<Instant>,
    client: Option<ConnHandle>,
    server: Option<ConnHandle>,
    tx: TxStream,
    rx: RxStream,
    window_bytes: u64,
    closed: bool,
    done_at: Option<Instant>,
}

/// The four hosts, two links, two tunnel ends and the inner flows.
struct World {
    cfg: VpnConfig,
    inner_c: Endpoint,
    inner_s: Endpoint,
    outer_c: Endpoint,
    outer_s: Endpoint,
    up: Link<DropTail>,
    down: Link<DropTail>,
    tun_c: TunEnd,
    tun_s: TunEnd,
    flows: Vec<Flow>,
    buf: Vec<u8>,
    read_buf: Vec<u8>,
    next_id: u64,
}

fn endpoint(addr: Ipv4Addr, seed: u64) -> Endpoint {
    // Fixed, not from the OS, so a seed replays exactly; the secret is the value the
    // library default used to be, which keeps existing traces.
    Endpoint::new(IpAddr::V4(addr), EndpointConfig::seeded([0x5a; 16], seed))
}

fn link(bps: u64, delay: Duration, queue: usize) -> Link<DropTail> {
    // NOTE(unreachable): rate, delay and queue were range-checked by `validate`.
    let q = DropTail::new(QueueLimit::Packets(queue))
        .unwrap_or_else(|e| unreachable!("validated queue: {e}"));
    Link::new(
        LinkParams {
            rate_bps: bps,
            delay,
            ..LinkParams::default()
        },
        q,
        Loss::none(),
    )
    .unwrap_or_else(|e| unreachable!("validated link: {e}"))
}

impl World {
    fn new(cfg: &VpnConfig) -> Self {
        let outer = Config {
            send_buffer: cfg.outer_buffer,
            recv_buffer: cfg.outer_buffer,
            unordered: cfg.unordered,
            unordered_send: cfg.pri_acks,
            ..Config::default()
        };
        let inner = Config::default();
        let s = cfg.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut outer_c = endpoint(OUTER_CLIENT, s ^ 1);
        let mut outer_s = endpoint(OUTER_SERVER, s ^ 2);
        let inner_c = endpoint(INNER_CLIENT, s ^ 3);
        let mut inner_s = endpoint(INNER_SERVER, s ^ 4);
        let now = Instant::ZERO;
        let mut tun_c = TunEnd::new(cfg);
        let tun_s = TunEnd::new(cfg);
        // NOTE(unreachable): fresh endpoints with IPv4 addresses and free ports.
        outer_s
            .listen(TUNNEL_PORT, 16, outer.clone())
            .unwrap_or_else(|e| unreachable!("listen: {e:?}"));
        tun_c.conn = Some(
            outer_c
                .connect(
                    now,
                    0,
                    SocketAddr::new(IpAddr::V4(OUTER_SERVER), TUNNEL_PORT),
                    outer,
                )
                .unwrap_or_else(|e| unreachable!("connect: {e:?}")),
        );
        let n = cfg.uploads + cfg.downloads;
        let mut flows = Vec::with_capacity(n);
        let mut rng = ChaCha8Rng::seed_from_u64(s ^ 5);
        let spread = brisk_time::dur_nanos(cfg.start_spread);
        for i in 0..n {
            let port = FLOW_PORT_BASE + i as u16;
            inner_s
                .listen(port, 16, inner.clone())
                .unwrap_or_else(|e| unreachable!("listen: {e:?}"));
            let at = if spread == 0 {
                0
            } else {
                rng.gen_range(0..spread)
            };
            let pat = Pattern::new(cfg.seed.wrapping_add(1000 + i as u64));
            flows.push(Flow {
                upload: i < cfg.uploads,
                port,
                start: Some(Instant::from_nanos(at)),
                client: None,
                server: None,
                tx: TxStream::new(Rc::clone(&pat)),
                rx: RxStream::new(pat),
                window_bytes: 0,
                closed: false,
                done_at: None,
            });
        }
        let half = Duration::from_nanos(brisk_time::dur_nanos(cfg.rtt) / 2);
        World {
            cfg: cfg.clone(),
            inner_c,
            inner_s,
            outer_c,
            outer_s,
            up: link(cfg.up_bps, half, cfg.queue_packets),
            down: link(cfg.down_bps, half, cfg.queue_packets),
            tun_c,
            tun_s,
            flows,
            buf: Vec::with_capacity(2048),
            read_buf: vec![0; READ_CHUNK],
            next_id: 0,
        }
    }

    /// Applications: clients open their connections when due, bulk writers write,
    /// readers read and check. Returns progress.
    fn apps(&mut self, now: Instant) -> bool {
        let mut moved = false;
        for f in &mut self.flows {
            if f.start.is_some_and(|t| t <= now) {
                f.start = None;
                let remote = SocketAddr::new(IpAddr::V4(INNER_SERVER), f.port);
                // NOTE(unreachable): IPv4 to IPv4 with at most 64 flows, far below
                // the table and ephemeral-port limits.
                f.client = Some(
                    self.inner_c
                        .connect(now, 0, remote, Config::default())
                        .unwrap_or_else(|e| unreachable!("connect: {e:?}")),
                );
                moved = true;
            }
        }
        let warm = now >= Instant::ZERO + self.cfg.warmup;
        for f in &mut self.flows {
            let (w_ep, w_h, r_ep, r_h) = if f.upload {
                (&mut self.inner_c, f.client, &mut self.inner_s, f.server)
            } else {
                (&mut self.inner_s, f.server, &mut self.inner_c, f.client)
            };
            if let Some(h) = w_h {
                let left = self
                    .cfg
                    .flow_bytes
                    .map_or(u64::MAX, |b| b.saturating_sub(f.tx.bytes));
                let room = w_ep.conn(h).map_or(0, |c| c.send_capacity());
                if left > 0 && room > 0 {
                    if let Some(c) = w_ep.conn_mut(h) {
                        moved |= f.tx.write_pattern(c, left.min(room as u64)) > 0;
                    }
                } else if left == 0
                    && !f.closed
                    // Closing in SYN-SENT would delete the connection (RFC 9293
                    // §3.10.4), queued data and all: half-close once established.
                    && w_ep
                        .conn(h)
                        .is_some_and(|c| matches!(c.state(), State::Established | State::CloseWait))
                {
                    if let Some(c) = w_ep.conn_mut(h) {
                        c.shutdown_write();
                        f.closed = true;
                        moved = true;
                    }
                }
            }
            if let Some(h) = r_h {
                while r_ep.conn(h).is_some_and(|c| c.readable() > 0) {
                    let Some(c) = r_ep.conn_mut(h) else { break };
                    let n = c.read(&mut self.read_buf);
                    if n == 0 {
                        break;
                    }
                    let data = &self.read_buf[..n];
                    f.rx.check_pattern(f.rx.bytes, data);
                    f.rx.account(data);
                    if warm {
                        f.window_bytes += n as u64;
                    }
                    moved = true;
                }
                if f.done_at.is_none() && self.cfg.flow_bytes.is_some_and(|b| f.rx.bytes >= b) {
                    f.done_at = Some(now);
                }
            }
        }
        moved
    }

    fn packet(&mut self, now: Instant) -> Packet {
        self.next_id += 1;
        Packet {
            data: self.buf.clone(),
            id: self.next_id,
            flow: 0,
            sent_at: now,
            // Called right after an outer endpoint's `poll_transmit` wrote `buf`.
            l4_csum_valid: true,
        }
    }

    /// One pass over every component; returns whether anything happened.
    fn step(&mut self, now: Instant) -> bool {
        let mut moved = self.apps(now);
        // Inner hosts → their tunnel ends.
        while self.inner_c.poll_transmit(now, &mut self.buf).is_some() {
            self.tun_c.ingress(&self.buf);
            moved = true;
        }
        while self.inner_s.poll_transmit(now, &mut self.buf).is_some() {
            self.tun_s.ingress(&self.buf);
            moved = true;
        }
        // Tunnel ends → outer streams.
        for (tun, ep) in [
            (&mut self.tun_c, &mut self.outer_c),
            (&mut self.tun_s, &mut self.outer_s),
        ] {
            if tun.queue.is_empty() && !tun.partial {
                continue;
            }
            if let Some(c) = tun.conn.and_then(|h| ep.conn_mut(h)) {
                moved |= tun.pump(c);
            }
        }
        // Outer hosts → the bottleneck.
        while self.outer_c.poll_transmit(now, &mut self.buf).is_some() {
            let p = self.packet(now);
            self.up.handle_packet(now, p);
            moved = true;
        }
        while self.outer_s.poll_transmit(now, &mut self.buf).is_some() {
            let p = self.packet(now);
            self.down.handle_packet(now, p);
            moved = true;
        }
        // The bottleneck → outer hosts.
        while let Some(p) = self.up.poll_packet(now) {
            crate::host::receive(&mut self.outer_s, now, &p);
            moved = true;
        }
        while let Some(p) = self.down.poll_packet(now) {
            crate::host::receive(&mut self.outer_c, now, &p);
            moved = true;
        }
        // Outer streams → inner hosts.
        for (tun, ep, inner) in [
            (&mut self.tun_c, &mut self.outer_c, &mut self.inner_c),
            (&mut self.tun_s, &mut self.outer_s, &mut self.inner_s),
        ] {
            let readable = tun
                .conn
                .and_then(|h| ep.conn(h))
                .is_some_and(|c| c.readable() > 0 || c.unordered());
            if !readable {
                continue;
            }
            if let Some(c) = tun.conn.and_then(|h| ep.conn_mut(h)) {
                moved |= tun.egress(c, inner, now);
            }
        }
        moved |= self.events();
        moved
    }

    /// Drains every endpoint's events; accepts connections. Returns progress.
    fn events(&mut self) -> bool {
        let mut moved = false;
        while let Some((_, ev)) = self.outer_c.poll_event() {
            let _ = ev;
        }
        while let Some((_, ev)) = self.outer_s.poll_event() {
            if let Event::Incoming { port } = ev {
                if let Some(h) = self.outer_s.accept(port) {
                    self.tun_s.conn = Some(h);
                    moved = true;
                }
            }
        }
        while let Some((_, ev)) = self.inner_c.poll_event() {
            let _ = ev;
        }
        while let Some((_, ev)) = self.inner_s.poll_event() {
            if let Event::Incoming { port } = ev {
                if let Some(h) = self.inner_s.accept(port) {
                    if let Some(f) = self.flows.iter_mut().find(|f| f.port == port) {
                        f.server = Some(h);
                        moved = true;
                    }
                }
            }
        }
        moved
    }

    fn next_wake(&self) -> Option<Instant> {
        [
            self.inner_c.poll_timeout(),
            self.inner_s.poll_timeout(),
            self.outer_c.poll_timeout(),
            self.outer_s.poll_timeout(),
            self.up.poll_timeout(),
            self.down.poll_timeout(),
            self.flows.iter().filter_map(|f| f.start).min(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Nothing queued in a tunnel end, an outer send buffer or a link.
    fn idle(&self) -> bool {
        let unsent = |t: &TunEnd, ep: &Endpoint| {
            t.conn
                .and_then(|h| ep.conn(h))
                .is_some_and(|c| c.send_buffered() > 0)
        };
        self.tun_c.queue.is_empty()
            && self.tun_s.queue.is_empty()
            && !unsent(&self.tun_c, &self.outer_c)
            && !unsent(&self.tun_s, &self.outer_s)
            && self.up.poll_timeout().is_none()
            && self.down.poll_timeout().is_none()
    }

    fn all_done(&self) -> bool {
        self.cfg.flow_bytes.is_some() && self.flows.iter().all(|f| f.done_at.is_some())
    }
}

/// Runs the tunnel for `cfg.duration` (or until every finite flow is complete and the
/// network is idle).
pub fn run(cfg: &VpnConfig) -> Result<VpnResult, VpnError> {
    cfg.validate()?;
    let mut w = World::new(cfg);
    let end = Instant::ZERO + cfg.duration;
    let mut now = Instant::ZERO;
    loop {
        for ep in [
            &mut w.inner_c,
            &mut w.inner_s,
            &mut w.outer_c,
            &mut w.outer_s,
        ] {
            if ep.poll_timeout().is_some_and(|t| t <= now) {
                ep.handle_timeout(now);
            }
        }
        let mut steps = 0u32;
        while w.step(now) {
            steps += 1;
            if steps > MAX_STEPS_PER_INSTANT {
                return Err(VpnError::Livelock(now.as_nanos()));
            }
        }
        if w.all_done() && w.idle() {
            break;
        }
        match w.next_wake() {
            Some(t) if t < end => now = t.max(now),
            _ => {
                now = end;
                break;
            }
        }
    }
    let window = cfg.duration.saturating_sub(cfg.warmup);
    w.tun_c.c.record_bytes += if cfg.framing == Framing::Ucobs {
        w.tun_c.ucobs_tx.bytes
    } else {
        0
    };
    w.tun_s.c.record_bytes += if cfg.framing == Framing::Ucobs {
        w.tun_s.ucobs_tx.bytes
    } else {
        0
    };
    let mut client = w.tun_c.c.clone();
    client.queued_at_end = w.tun_c.queue.len() as u64;
    let mut server = w.tun_s.c.clone();
    server.queued_at_end = w.tun_s.queue.len() as u64;
    Ok(VpnResult {
        flows: w
            .flows
            .iter()
            .map(|f| InnerFlow {
                upload: f.upload,
                sent: f.tx.bytes,
                received: f.rx.bytes,
                window_bytes: f.window_bytes,
                bad_bytes: f.rx.bad_bytes,
                tx_sha256: f.tx.sha256(),
                rx_sha256: f.rx.sha256(),
                done_at: f.done_at,
            })
            .collect(),
        client,
        server,
        up_drops: w.up.counters().dropped_total().packets,
        down_drops: w.down.counters().dropped_total().packets,
        window_s: brisk_time::dur_nanos(window) as f64 / 1e9,
        end: now,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_prefix_records_survive_any_split() {
        let recs: Vec<Vec<u8>> = vec![vec![1; 3], vec![], vec![7; 1500], vec![9; 1]];
        let mut stream = Vec::new();
        for r in &recs {
            stream.extend_from_slice(&(r.len() as u16).to_be_bytes());
            stream.extend_from_slice(r);
        }
        for chunk in [1, 2, 5, 1000, stream.len()] {
            let mut rd = LengthPrefixReader::default();
            let mut got = Vec::new();
            for c in stream.chunks(chunk) {
                rd.push(c, &mut |d| got.push(d.to_vec()));
            }
            assert_eq!(got, recs, "chunk {chunk}");
            assert!(rd.buf.is_empty());
        }
    }

    #[test]
    fn garbage_is_not_a_pure_ack() {
        assert!(!is_pure_ack(&[]));
        assert!(!is_pure_ack(&[0x45; 40]));
    }
}
