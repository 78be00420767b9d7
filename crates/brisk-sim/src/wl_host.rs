//! Workload-mode nodes: long-lived hosts that open one short connection per flow, and
//! routers (issue 11 §1; RC3, NSDI 2014, §5.1: Poisson flows between hosts).
//!
//! A [`WlHost`] has one `Endpoint` for all its connections, a listener on [`WL_PORT`],
//! and the queue of its own flow arrivals. At a flow's arrival it connects to the
//! destination host; once connected it writes the flow's bytes (a slice of the shared
//! pattern, so the receiver checks every byte) and closes. The receiving host reads,
//! checks, and closes when the peer's FIN arrives. In download mode
//! (`workload.direction`) the roles of opener and writer part: the flow's receiver
//! opens the connection and the sender, accepting it, writes (a server's response).
//!
//! Per-flow state is a small entry per open connection, dropped when the connection
//! reports `Closed`; the results live in one [`FlowRecord`] per flow in the run's shared
//! [`FlowBook`] (no time series). The per-packet work is one hash lookup: a packet from
//! a server port belongs to one of this host's client connections, found by (local
//! port, remote address), whose cumulative ACK is then compared with the flow size.
//!
//! Flow classes (`[[workload.class]]` with `flows`): each host also listens on
//! [`WL_PORT`] + c with class c's TCP, and a flow of such a class is opened towards
//! that port with the same TCP, so both ends of the flow run the class's TCP whichever
//! side opens (in download mode the accepting side is the sender).
//!
//! A paced flow (`[workload.paced]`, RC3-9's video) writes `first` bytes when
//! established, then `chunk` bytes every `interval` ([`PacedRecord::allowed`]); the
//! host wakes for each write. The times its first `first` bytes were ACKed and read
//! are recorded.
//!
//! FCT (spec A12): from the first data byte handed to the connection (when the
//! handshake completes) until the whole flow is cumulatively ACKed at the sender. The
//! SYN time and the time the receiver read the last byte are recorded too.

use brisk_net::Packet;
use brisk_tcp::{ConnError, ConnHandle, Endpoint, Event};
use brisk_time::{Duration, Instant};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;

use crate::engine::Ctx;
use brisk_app::payload::{Pattern, PATTERN_LEN};

/// The port every workload host listens on.
pub const WL_PORT: u16 = 5001;
/// Bytes read per call, into the run's scratch buffer (`Ctx::scratch`).
const SCRATCH: usize = 64 * 1024;
/// Most bytes offered to TCP per write call.
const CHUNK: usize = 16 * 1024;

/// One flow's results, filled in by its two hosts.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRecord {
    pub id: u32,
    /// Host ordinals.
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    /// Workload class of the sending host.
    pub class: u16,
    /// Links on the routed path (host to host), and its core (router-router) links.
    pub hops: u16,
    pub core_hops: u16,
    /// Round-trip propagation delay of the routed paths (both directions).
    pub base_rtt: Duration,
    /// Arrival: the SYN is sent.
    pub start: Instant,
    /// The handshake completed and the first byte was handed to TCP.
    pub first_byte: Option<Instant>,
    /// Every byte cumulatively ACKed at the sender.
    pub acked: Option<Instant>,
    /// The receiver read the last byte.
    pub last_rx: Option<Instant>,
    /// Bytes the receiver read, and how many of them broke the pattern.
    pub received: u64,
    pub bad_bytes: u64,
    /// The sender's smoothed RTT and retransmitted segments when the flow completed.
    pub srtt: Option<Duration>,
    pub retransmits: u64,
    /// The sender's CWR reductions on ECE and its packets that carried an RDB bundle,
    /// when the flow completed (rc3-compose's evidence).
    pub ecn_cwr: u64,
    pub rdb_packets: u64,
    pub error: Option<ConnError>,
    /// The schedule and marks of a paced flow (`[workload.paced]`).
    pub paced: Option<PacedRecord>,
    /// An MPTCP flow's subflows when it completed, in the order the sender opened
    /// them (empty for plain TCP, or a connection that fell back).
    pub subflows: Vec<SubflowRecord>,
    /// An MPTCP flow's compound cwnd and retransmissions when its last subflow left
    /// slow start (seed 004 B.2's R_ss), from the sender at completion; None when a
    /// subflow was still in slow start then (or plain TCP).
    pub ss_exit: Option<brisk_tcp::mptcp::ss_exit::SsExitSum>,
    /// Offset of the flow's first byte in the pattern.
    pat_base: u32,
}

/// One MPTCP subflow of a flow, from the sender's `TcpInfo` of it at completion.
#[derive(Clone, Debug, PartialEq)]
pub struct SubflowRecord {
    /// Bytes the subflow sent and had ACKed (subflow level, retransmissions
    /// counted in `sent`).
    pub bytes_sent: u64,
    pub bytes_acked: u64,
    pub retransmits: u64,
    pub srtt: Duration,
    /// cwnd and ssthresh at completion, segments.
    pub cwnd: u32,
    pub ssthresh: u32,
    /// When it left slow start, its cwnd then and its retransmissions by then (None:
    /// still in slow start at completion). Filled from
    /// `Connection::mptcp_ss_exits`, not from `TcpInfo`.
    pub ss_exit: Option<brisk_tcp::mptcp::ss_exit::SsExit>,
}

impl From<&brisk_tcp::TcpInfo> for SubflowRecord {
    fn from(i: &brisk_tcp::TcpInfo) -> Self {
        SubflowRecord {
            bytes_sent: i.bytes_sent,
            bytes_acked: i.bytes_acked,
            retransmits: i.retransmits,
            srtt: i.srtt,
            cwnd: i.cwnd,
            ssthresh: i.ssthresh,
            ss_exit: None,
        }
    }
}

/// A paced flow's application schedule and what it measured.
#[derive(Clone, Debug, PartialEq)]
pub struct PacedRecord {
    /// Bytes written at once when the connection is established.
    pub first: u64,
    /// Bytes written every `interval` after that, until the flow's size.
    pub chunk: u64,
    pub interval: Duration,
    /// The first `first` bytes were cumulatively ACKed at the sender.
    pub first_acked: Option<Instant>,
    /// The receiver had read the first `first` bytes.
    pub first_read: Option<Instant>,
}

impl PacedRecord {
    pub fn new(first: u64, chunk: u64, interval: Duration) -> Self {
        PacedRecord {
            first,
            chunk: chunk.max(1),
            interval: interval.max(Duration::from_nanos(1)),
            first_acked: None,
            first_read: None,
        }
    }

    /// Bytes of a `size`-byte flow the application has handed over `elapsed` after the
    /// connection was established: `first`, then one `chunk` at every whole `interval`.
    pub fn allowed(&self, size: u64, elapsed: Duration) -> u64 {
        let k = brisk_time::dur_nanos(elapsed) / brisk_time::dur_nanos(self.interval);
        self.first
            .saturating_add(k.saturating_mul(self.chunk))
            .min(size)
    }

    /// Time after establishment of the next write once `elapsed` has passed, or None
    /// when everything is already allowed.
    pub fn next_write(&self, size: u64, elapsed: Duration) -> Option<Duration> {
        if self.allowed(size, elapsed) >= size {
            return None;
        }
        let k = brisk_time::dur_nanos(elapsed) / brisk_time::dur_nanos(self.interval);
        Some(
            self.interval
                .saturating_mul(u32::try_from(k + 1).unwrap_or(u32::MAX)),
        )
    }
}

impl FlowRecord {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: u32,
        src: u32,
        dst: u32,
        size: u64,
        class: u16,
        start: Instant,
        pat_seed: u64,
    ) -> Self {
        FlowRecord {
            id,
            src,
            dst,
            size,
            class,
            hops: 0,
            core_hops: 0,
            base_rtt: Duration::ZERO,
            start,
            first_byte: None,
            acked: None,
            last_rx: None,
            received: 0,
            bad_bytes: 0,
            srtt: None,
            retransmits: 0,
            ecn_cwr: 0,
            rdb_packets: 0,
            error: None,
            paced: None,
            subflows: Vec::new(),
            ss_exit: None,
            pat_base: (pat_seed % PATTERN_LEN as u64) as u32,
        }
    }

    /// Spec A12's FCT.
    pub fn fct(&self) -> Option<Duration> {
        Some(self.acked? - self.first_byte?)
    }

    /// Completed with every byte read intact.
    pub fn intact(&self) -> bool {
        self.acked.is_some()
            && self.received == self.size
            && self.bad_bytes == 0
            && self.error.is_none()
    }
}

/// Every flow of a run, shared by the hosts (the simulator is single-threaded).
#[derive(Debug)]
pub struct FlowBook {
    pub flows: Vec<FlowRecord>,
    /// (client address, server address) → flow, from connect until the server
    /// accepts. The server's address is part of the key: a client port is unique only
    /// per remote, so one port may be connecting to two servers at once.
    connecting: HashMap<(SocketAddr, IpAddr), u32>,
    /// Accepted connections no flow claimed (never expected; counted, not hidden).
    pub unknown_accepts: u64,
    /// Flows whose sender saw every byte ACKed, and whose receiver read every byte.
    pub completed: u32,
    pub received_all: u32,
    pat: Rc<Pattern>,
}

pub type SharedBook = Rc<RefCell<FlowBook>>;

impl FlowBook {
    pub fn new(flows: Vec<FlowRecord>, pattern_seed: u64) -> Self {
        FlowBook {
            flows,
            connecting: HashMap::new(),
            unknown_accepts: 0,
            completed: 0,
            received_all: 0,
            pat: Pattern::with_hashing(pattern_seed, false),
        }
    }
}

/// A connection of this host that writes a flow (the opener in upload mode, the
/// accepting side in download mode).
#[derive(Debug)]
struct Client {
    flow: u32,
    /// Its `by_port` key.
    key: PortKey,
    size: u64,
    written: u64,
    closed: bool,
    /// A paced flow: when it was established, and its schedule.
    pace: Option<(Instant, PacedRecord)>,
}

/// (local port, remote address, remote port) of a writing connection.
type PortKey = (u16, IpAddr, u16);

/// A connection of this host that reads a flow (the accepting side in upload mode,
/// the opener in download mode).
#[derive(Debug)]
struct Server {
    flow: Option<u32>,
    read: u64,
}

#[derive(Debug)]
enum Side {
    Client(Client),
    Server(Server),
}

/// A host in workload mode.
pub struct WlHost {
    pub ip: IpAddr,
    pub ep: Endpoint,
    book: SharedBook,
    pat: Rc<Pattern>,
    /// TCP configuration of each workload class (a flow's class picks its sender's),
    /// shared by this host's connections of the class.
    configs: Vec<std::sync::Arc<brisk_tcp::Config>>,
    /// This host's flows, in arrival order: (start, flow, destination).
    arrivals: VecDeque<(Instant, u32, IpAddr)>,
    conns: HashMap<ConnHandle, Side>,
    /// Writing connections by (local port, remote address, remote port), for the
    /// per-packet check.
    by_port: HashMap<PortKey, ConnHandle>,
    /// Download mode: this host opens the flows it receives and writes the ones it
    /// accepts.
    download: bool,
    /// Workload classes whose flows (not hosts) use them: opened towards
    /// [`WL_PORT`] + class, where this host listens with the class's TCP.
    flow_classes: Vec<u16>,
    /// Paced writing connections with writes still to come (at most a few).
    paced: Vec<ConnHandle>,
    /// The address flows are opened from when not the first (`WlHost::source`).
    source: Option<IpAddr>,
    /// Writing connections that run MPTCP: their ACKs may come on any subflow's
    /// 4-tuple, which `by_port` does not hold, so each packet checks these (a few
    /// at a time; empty without MPTCP, so plain TCP pays one length test).
    mp_writers: Vec<ConnHandle>,
}

/// Whether `port` is one of the workload listeners' ([`WL_PORT`] and the class ports).
fn is_wl_port(port: u16) -> bool {
    (WL_PORT..=WL_PORT + brisk_scenario::network::MAX_CLASSES as u16).contains(&port)
}

impl WlHost {
    /// A host at `ip` listening on [`WL_PORT`] with `listen_config`, opening each of
    /// its own flows with its class's entry of `configs`.
    pub fn new(
        ip: IpAddr,
        ep: Endpoint,
        book: SharedBook,
        configs: Rc<Vec<brisk_tcp::Config>>,
        listen_config: brisk_tcp::Config,
        arrivals: VecDeque<(Instant, u32, IpAddr)>,
    ) -> Result<Self, ConnError> {
        let mut ep = ep;
        ep.listen(WL_PORT, 1024, listen_config)?;
        let pat = book.borrow().pat.clone();
        Ok(WlHost {
            ip,
            ep,
            book,
            pat,
            configs: configs.iter().cloned().map(std::sync::Arc::new).collect(),
            arrivals,
            conns: HashMap::new(),
            by_port: HashMap::new(),
            download: false,
            flow_classes: Vec::new(),
            paced: Vec::new(),
            source: None,
            mp_writers: Vec::new(),
        })
    }

    /// Classes (indices into the configs, at most `MAX_CLASSES`) chosen per flow: this
    /// host listens on [`WL_PORT`] + class with each one's TCP, and opens their flows
    /// there with it, so both ends of such a flow run the class's TCP.
    pub fn flow_classes(mut self, classes: &[u16]) -> Result<Self, ConnError> {
        for &c in classes {
            let cfg = self.configs[usize::from(c).min(self.configs.len() - 1)].clone();
            self.ep.listen_shared(WL_PORT + c, 1024, cfg)?;
        }
        self.flow_classes = classes.to_vec();
        Ok(self)
    }

    /// The local address this host opens its flows from (a multi-homed host's chosen
    /// path; by default its first address).
    pub fn source(mut self, ip: IpAddr) -> Self {
        self.source = (ip != self.ip).then_some(ip);
        self
    }

    /// Download mode (`workload.direction = "download"`): the flows in `arrivals` are
    /// ones this host receives; it opens them, and writes the flows it accepts.
    pub fn downloads(mut self, on: bool) -> Self {
        self.download = on;
        self
    }

    /// Connections this host has open (for boundedness checks).
    pub fn open_connections(&self) -> usize {
        self.conns.len()
    }

    pub fn handle_packet(&mut self, now: Instant, pkt: Packet, ctx: &mut Ctx) {
        crate::host::receive(&mut self.ep, now, &pkt);
        // An ACK (or data) for one of our writing connections.
        if let Some(k) = brisk_wire::peek::flow_key(&pkt.data) {
            if is_wl_port(k.src_port) != self.download {
                if let Some(&h) = self.by_port.get(&(k.dst_port, k.src, k.src_port)) {
                    self.check_acked(now, h);
                }
            }
        }
        let mut i = 0;
        while i < self.mp_writers.len() {
            self.check_acked(now, self.mp_writers[i]);
            i += 1;
        }
        ctx.pool.give(pkt.data);
    }

    /// Records the flow's completion once its last byte is cumulatively ACKed.
    fn check_acked(&mut self, now: Instant, h: ConnHandle) {
        let Some(Side::Client(c)) = self.conns.get(&h) else {
            return;
        };
        let Some(conn) = self.ep.conn(h) else { return };
        if let Some((_, p)) = &c.pace {
            if p.first_acked.is_none() && conn.acked_offset() >= p.first.min(c.size) {
                let mut book = self.book.borrow_mut();
                if let Some(rp) = book.flows[c.flow as usize].paced.as_mut() {
                    rp.first_acked.get_or_insert(now);
                }
                if let Some(Side::Client(c)) = self.conns.get_mut(&h) {
                    if let Some((_, p)) = c.pace.as_mut() {
                        p.first_acked = Some(now);
                    }
                }
            }
        }
        let Some(Side::Client(c)) = self.conns.get(&h) else {
            return;
        };
        let Some(conn) = self.ep.conn(h) else { return };
        if c.written < c.size || conn.acked_offset() < c.size {
            return;
        }
        let mut book = self.book.borrow_mut();
        let r = &mut book.flows[c.flow as usize];
        if r.acked.is_none() {
            let info = conn.info();
            r.acked = Some(now);
            r.srtt = Some(info.srtt);
            r.retransmits = info.retransmits;
            r.ecn_cwr = info.ecn_cwr;
            r.rdb_packets = info.rdb_packets;
            if conn.is_mptcp() {
                let exits = conn.mptcp_ss_exits();
                r.subflows = conn
                    .mptcp_subflow_infos()
                    .iter()
                    .zip(exits)
                    .map(|(i, e)| SubflowRecord {
                        ss_exit: e,
                        ..SubflowRecord::from(i)
                    })
                    .collect();
                r.ss_exit = conn.mptcp_ss_exit_sum();
            }
            book.completed += 1;
        }
    }

    pub fn poll_packet(&mut self, now: Instant, ctx: &mut Ctx) -> Option<Packet> {
        let mut buf = ctx.pool.take();
        loop {
            if let Some(tx) = self.ep.poll_transmit(now, &mut buf) {
                let flow = match tx.conn.and_then(|h| self.conns.get(&h)) {
                    Some(Side::Client(c)) => c.flow,
                    Some(Side::Server(s)) => s.flow.unwrap_or(u32::MAX),
                    None => u32::MAX,
                };
                return Some(Packet {
                    data: ctx.pool.fit(buf),
                    id: ctx.next_packet_id(),
                    flow,
                    sent_at: now,
                    // Written by `emit_tcp_packet`, checksums computed.
                    l4_csum_valid: true,
                });
            }
            if !self.process(now, ctx.scratch(SCRATCH)) {
                ctx.pool.give(buf);
                return None;
            }
        }
    }

    pub fn handle_timeout(&mut self, now: Instant, _ctx: &mut Ctx) {
        if self.ep.poll_timeout().is_some_and(|t| t <= now) {
            self.ep.handle_timeout(now);
        }
        let due: Vec<ConnHandle> = self
            .paced
            .iter()
            .copied()
            .filter(|&h| self.next_paced_write(h).is_some_and(|t| t <= now))
            .collect();
        for h in due {
            self.write(now, h);
        }
        while self.arrivals.front().is_some_and(|a| a.0 <= now) {
            // NOTE(unwrap): checked just above.
            let (_, flow, dst) = self.arrivals.pop_front().expect("front exists");
            self.open(now, flow, dst);
        }
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        let next = self.arrivals.front().map(|a| a.0);
        let paced = self
            .paced
            .iter()
            .filter_map(|&h| self.next_paced_write(h))
            .min();
        [self.ep.poll_timeout(), next, paced]
            .into_iter()
            .flatten()
            .min()
    }

    /// When a paced connection's next write falls due.
    fn next_paced_write(&self, h: ConnHandle) -> Option<Instant> {
        let Some(Side::Client(c)) = self.conns.get(&h) else {
            return None;
        };
        let (from, p) = c.pace.as_ref()?;
        if c.written < p.allowed(c.size, Duration::ZERO) {
            // Held back by the send buffer: `Writable` resumes it.
            return None;
        }
        // The schedule is relative to establishment; find the write after `written`.
        let k = c.written.saturating_sub(p.first) / p.chunk;
        let at = p
            .interval
            .saturating_mul(u32::try_from(k + 1).unwrap_or(u32::MAX));
        (c.written < c.size).then(|| *from + at)
    }

    /// Opens flow `flow`'s connection.
    fn open(&mut self, now: Instant, flow: u32, dst: IpAddr) {
        let mut book = self.book.borrow_mut();
        let class16 = book.flows[flow as usize].class;
        let port = if self.flow_classes.contains(&class16) {
            WL_PORT + class16
        } else {
            WL_PORT
        };
        let remote = SocketAddr::new(dst, port);
        let class = usize::from(class16);
        let config = self.configs[class.min(self.configs.len() - 1)].clone();
        let mptcp = config.mptcp.is_some();
        let opened = match self.source {
            None => self.ep.connect_shared(now, 0, remote, config),
            Some(ip) => self
                .ep
                .connect_from(now, SocketAddr::new(ip, 0), remote, config),
        };
        match opened {
            Ok(h) if self.download => {
                // NOTE(unwrap): a connection just created exists.
                let local = self.ep.conn(h).expect("new connection").local();
                book.connecting.insert((local, dst), flow);
                self.conns.insert(
                    h,
                    Side::Server(Server {
                        flow: Some(flow),
                        read: 0,
                    }),
                );
            }
            Ok(h) => {
                // NOTE(unwrap): a connection just created exists.
                let local = self.ep.conn(h).expect("new connection").local();
                book.connecting.insert((local, dst), flow);
                let key = (local.port(), dst, port);
                self.by_port.insert(key, h);
                if mptcp {
                    self.mp_writers.push(h);
                }
                let size = book.flows[flow as usize].size;
                let pace = book.flows[flow as usize].paced.clone();
                self.conns.insert(
                    h,
                    Side::Client(Client {
                        flow,
                        key,
                        size,
                        written: 0,
                        closed: false,
                        // The schedule starts when the connection is established.
                        pace: pace.map(|p| (now, p)),
                    }),
                );
            }
            Err(e) => book.flows[flow as usize].error = Some(e),
        }
    }

    /// Dispatches endpoint events. Returns whether there were any.
    /// `scratch` is the run's read buffer (`Ctx::scratch`): one per run, not per host.
    fn process(&mut self, now: Instant, scratch: &mut [u8]) -> bool {
        let mut any = false;
        while let Some((h, ev)) = self.ep.poll_event() {
            any = true;
            match ev {
                Event::Incoming { port } => {
                    while let Some(c) = self.ep.accept(port) {
                        self.accept(now, c, scratch);
                    }
                }
                Event::Connected => {
                    if let Some(Side::Client(c)) = self.conns.get_mut(&h) {
                        let r = &mut self.book.borrow_mut().flows[c.flow as usize];
                        r.first_byte = Some(now);
                        if let Some((from, _)) = c.pace.as_mut() {
                            *from = now;
                        }
                    }
                    self.write(now, h);
                }
                Event::Writable => self.write(now, h),
                Event::Readable => self.read(now, h, scratch),
                Event::PeerClosed => {
                    self.read(now, h, scratch);
                    if let Some(conn) = self.ep.conn_mut(h) {
                        conn.close();
                    }
                }
                Event::Closed(res) => self.closed(h, res),
            }
        }
        any
    }

    fn accept(&mut self, now: Instant, h: ConnHandle, scratch: &mut [u8]) {
        let Some(conn) = self.ep.conn(h) else { return };
        let remote = conn.remote();
        let mut book = self.book.borrow_mut();
        let flow = book.connecting.remove(&(remote, self.ip));
        if flow.is_none() {
            book.unknown_accepts += 1;
        }
        if let (true, Some(flow)) = (self.download, flow) {
            // A download: this host is the flow's sender; the first byte goes now.
            let r = &mut book.flows[flow as usize];
            r.first_byte = Some(now);
            let size = r.size;
            let pace = r.paced.clone().map(|p| (now, p));
            drop(book);
            let key = (conn.local().port(), remote.ip(), remote.port());
            self.by_port.insert(key, h);
            if conn.is_mptcp() {
                self.mp_writers.push(h);
            }
            self.conns.insert(
                h,
                Side::Client(Client {
                    flow,
                    key,
                    size,
                    written: 0,
                    closed: false,
                    pace,
                }),
            );
            self.write(now, h);
            return;
        }
        drop(book);
        self.conns.insert(h, Side::Server(Server { flow, read: 0 }));
        // Data (or a FIN) may have arrived before the accept.
        self.read(now, h, scratch);
    }

    /// Writes what TCP takes of the flow (of a paced flow, what its schedule allows by
    /// `now`); closes after the last byte.
    fn write(&mut self, now: Instant, h: ConnHandle) {
        let Some(Side::Client(c)) = self.conns.get_mut(&h) else {
            return;
        };
        let Some(conn) = self.ep.conn_mut(h) else {
            return;
        };
        let base = self.book.borrow().flows[c.flow as usize].pat_base;
        let limit = match &c.pace {
            Some((from, p)) => p.allowed(c.size, now.saturating_duration_since(*from)),
            None => c.size,
        };
        if c.pace.is_some() {
            let pending = limit < c.size;
            let listed = self.paced.contains(&h);
            if pending && !listed {
                self.paced.push(h);
            } else if !pending && listed {
                self.paced.retain(|&x| x != h);
            }
        }
        while c.written < limit {
            let want = (limit - c.written).min(CHUNK as u64) as usize;
            // The pattern's bytes, by reference (`write(pat.at(..))` byte for byte).
            let n = conn
                .write_shared(self.pat.shared(), u64::from(base) + c.written, want)
                .min(want);
            c.written += n as u64;
            if n < want {
                break;
            }
        }
        if c.written == c.size && !c.closed {
            c.closed = true;
            conn.close();
        }
    }

    /// Reads and checks a server connection's data.
    fn read(&mut self, now: Instant, h: ConnHandle, scratch: &mut [u8]) {
        let Some(Side::Server(s)) = self.conns.get_mut(&h) else {
            return;
        };
        let Some(conn) = self.ep.conn_mut(h) else {
            return;
        };
        let mut book = self.book.borrow_mut();
        let book = &mut *book;
        loop {
            let n = conn.read(scratch);
            if n == 0 {
                break;
            }
            let Some(r) = s.flow.map(|f| &mut book.flows[f as usize]) else {
                s.read += n as u64;
                continue;
            };
            let want = self.pat.at(u64::from(r.pat_base) + s.read, n);
            if want != &scratch[..n] {
                r.bad_bytes += want
                    .iter()
                    .zip(&scratch[..n])
                    .filter(|(a, b)| a != b)
                    .count() as u64;
            }
            s.read += n as u64;
            r.received = s.read;
            if let Some(p) = r.paced.as_mut() {
                if p.first_read.is_none() && s.read >= p.first.min(r.size) {
                    p.first_read = Some(now);
                }
            }
            if s.read >= r.size && r.last_rx.is_none() {
                r.last_rx = Some(now);
                book.received_all += 1;
            }
        }
    }

    fn closed(&mut self, h: ConnHandle, res: Result<(), ConnError>) {
        let Some(side) = self.conns.remove(&h) else {
            return;
        };
        let flow = match &side {
            Side::Client(c) => Some(c.flow),
            Side::Server(s) => s.flow,
        };
        if let Side::Client(c) = &side {
            self.by_port.remove(&c.key);
            self.paced.retain(|&x| x != h);
            self.mp_writers.retain(|&x| x != h);
        }
        if let (Some(f), Err(e)) = (flow, res) {
            let r = &mut self.book.borrow_mut().flows[f as usize];
            r.error.get_or_insert(e);
        }
    }
}

/// A router: forwards every packet at once; the engine routes it by destination from
/// this node's table onto the right out-link.
#[derive(Debug, Default)]
pub struct Router {
    held: VecDeque<Packet>,
}

impl Router {
    pub fn handle_packet(&mut self, pkt: Packet) {
        self.held.push_back(pkt);
    }
    pub fn poll_packet(&mut self) -> Option<Packet> {
        self.held.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paced_schedule_hands_over_first_then_a_chunk_per_interval() {
        let ms = Duration::from_millis;
        let p = PacedRecord::new(1_500_000, 65_536, ms(100));
        let size = 1_690_000;
        assert_eq!(p.allowed(size, ms(0)), 1_500_000);
        assert_eq!(p.allowed(size, ms(99)), 1_500_000);
        assert_eq!(p.allowed(size, ms(100)), 1_565_536);
        assert_eq!(p.allowed(size, ms(250)), 1_631_072);
        // The last chunk is short: capped at the size.
        assert_eq!(p.allowed(size, ms(300)), size);
        assert_eq!(p.allowed(size, Duration::from_secs(3600)), size);
        assert_eq!(p.next_write(size, ms(0)), Some(ms(100)));
        assert_eq!(p.next_write(size, ms(150)), Some(ms(200)));
        assert_eq!(p.next_write(size, ms(300)), None);
        // A flow no larger than `first` goes at once.
        assert_eq!(p.allowed(1000, ms(0)), 1000);
        assert_eq!(p.next_write(1000, ms(0)), None);
        // Zero chunk or interval cannot stall or divide by zero (validation refuses
        // them; the record clamps anyway).
        let z = PacedRecord::new(10, 0, Duration::ZERO);
        assert_eq!(z.allowed(100, ms(1)), 100);
    }

    #[test]
    fn workload_ports_are_the_listener_and_the_class_ports() {
        assert!(is_wl_port(WL_PORT));
        assert!(is_wl_port(WL_PORT + 16));
        assert!(!is_wl_port(WL_PORT + 17));
        assert!(!is_wl_port(32768));
    }
}
