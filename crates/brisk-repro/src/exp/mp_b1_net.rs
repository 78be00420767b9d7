//! The two-path network of seed 004 B.1 (Fig. 6) for the STTF and B.1 experiments
//! (`mp_sttf`, `mp_b1`): a client with one address per path, each path its own
//! access link (rate, one-way delay, drop-tail queue in packets, random loss; both
//! directions alike), joined at a router in front of the server. A packet's path is
//! the one of its client-side address. brisk endpoints on both ends, one clock,
//! deterministic per seed.
//!
//! Why a driver of its own rather than `brisk run`: the experiments need an MPTCP
//! connection whose subflows take the two paths, an application that writes
//! messages on a schedule and measures each message's delay at the reader, per-path
//! byte and loss counts of that one connection, and the time each data packet waits
//! in the data-level receive buffer. The scenario runner's multi-homed networks
//! carry only sized Poisson flows (`[workload]`), so this module drives two
//! `brisk_tcp::Endpoint`s itself, the way `brisk_tcp::testkit::Pair` does, with the
//! access links modelled as in brisk-sim's links (serialisation at the rate, then the
//! delay; tail drop when the queue holds its limit).
//!
//! Background (B.1 §1.3): per access link, one saturated TCP flow (CUBIC, from a second
//! server to a second client address on that path) and four Pareto on-off UDP flows
//! (shape 1.5, ON and OFF periods of mean 0.5 s, scale 1/6 s as the seed's
//! `0.166667`) that together offer 10 % of the link's rate on average. UDP packets
//! are 1000 bytes, occupy the queue and are discarded at the client.

// Paths, networks and traces are small fixed tables indexed together.
#![allow(clippy::needless_range_loop)]

use brisk_scenario::knobs::TcpKnobs;
use brisk_tcp::cc::CcAlgorithm;
use brisk_tcp::mptcp::pm::{Addr, Limits, LocalEndpoint, PmConfig, PmMode};
use brisk_tcp::mptcp::sched::SchedKind;
use brisk_tcp::mptcp::MptcpConfig;
use brisk_tcp::{Config, ConnHandle, Endpoint, EndpointConfig};
use brisk_time::{Duration, Instant};
use brisk_wire::mptcp::{DataSeq, MpCapableForm, MptcpOption};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// One access link (both directions alike).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathSpec {
    pub rate_bps: u64,
    /// One way.
    pub delay: Duration,
    /// Random loss probability per packet (Table III's WLAN 1-2 %).
    pub loss: f64,
    /// Drop-tail limit, packets (B.1: 100 on WLAN, 3750 on 3G).
    pub queue: usize,
}

/// Table III path kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Wlan,
    G3,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Wlan => "WLAN",
            Kind::G3 => "3G",
        }
    }

    /// One draw from Table III's ranges (capacity, one-way propagation delay, loss),
    /// uniform; the queue of B.1 §1.3.
    pub fn draw(self, rng: &mut ChaCha8Rng) -> PathSpec {
        match self {
            Kind::Wlan => PathSpec {
                rate_bps: (rng.gen_range(20.0..=30.0) * 1e6) as u64,
                delay: Duration::from_secs_f64(rng.gen_range(0.020..=0.025)),
                loss: rng.gen_range(0.01..=0.02),
                queue: 100,
            },
            Kind::G3 => PathSpec {
                rate_bps: (rng.gen_range(3.0..=5.0) * 1e6) as u64,
                delay: Duration::from_secs_f64(rng.gen_range(0.065..=0.075)),
                loss: 0.0,
                queue: 3750,
            },
        }
    }
}

/// The foreground transport.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Transport {
    /// Single-path TCP over path `0` or `1`.
    Tcp { path: usize, cc: CcAlgorithm },
    /// MPTCP, first subflow on path 0, a second from the client's path-1 address
    /// (fullmesh, as B.1's Table I).
    Mptcp { sched: SchedKind, cc: CcAlgorithm },
}

/// What the server's application writes, from the moment the connection is accepted.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// Messages: (offset from acceptance, bytes). Each message's delay is from its
    /// offset to the reader having read its last byte.
    Messages(Vec<(Duration, u32)>),
}

impl Workload {
    pub fn total(&self) -> u64 {
        match self {
            Workload::Messages(m) => m.iter().map(|&(_, b)| u64::from(b)).sum(),
        }
    }
}

/// One run's set-up.
#[derive(Clone, Debug)]
pub struct RunSpec {
    pub paths: [PathSpec; 2],
    pub transport: Transport,
    pub workload: Workload,
    pub send_buffer: u32,
    pub recv_buffer: u32,
    pub background: bool,
    /// The foreground connection opens at this time (background from time 0).
    pub start: Duration,
    /// Hard stop.
    pub limit: Duration,
    pub seed: u64,
}

/// What one run measured.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Per message, ms; messages not read by the end are left out (see `unread`).
    pub delays_ms: Vec<f64>,
    pub unread: usize,
    /// Foreground data packets (server to client, with payload) put on each path,
    /// their payload bytes, and how many of them the path lost (queue or random loss).
    pub data_pkts: [u64; 2],
    pub data_bytes: [u64; 2],
    pub data_lost: [u64; 2],
    /// Per foreground data packet that arrived (MPTCP only): from its arrival at the
    /// client to the reader having read its last byte, ms (the data-level
    /// receive-buffer wait, head-of-line blocking included).
    pub rbuf_wait_ms: Vec<f64>,
    /// From the connection's acceptance to the last byte read.
    pub completion: Option<Duration>,
    /// Subflows the connection had at the end (0 for TCP).
    pub subflows: usize,
    /// When the reader last read something, and how much it had read.
    pub last_read: Option<(Instant, u64)>,
    /// The server's (sender's) scheduler counts at the end (MPTCP only).
    pub sched: brisk_tcp::mptcp::sched::SchedStats,
    /// Foreground data packets marked CE on each path (`Extras::mark_over`).
    pub ce_marked: [u64; 2],
    /// Bytes the client read ahead of a hole (`Extras::unordered_reads`).
    pub unordered_bytes: u64,
    /// The server's packets that bundled earlier data (RDB), all subflows.
    pub rdb_packets: u64,
}

impl Outcome {
    /// Share of the foreground's data packets on path `p`, percent.
    pub fn share(&self, p: usize) -> f64 {
        let t = self.data_pkts[0] + self.data_pkts[1];
        if t == 0 {
            f64::NAN
        } else {
            100.0 * self.data_pkts[p] as f64 / t as f64
        }
    }
    pub fn loss(&self, p: usize) -> f64 {
        if self.data_pkts[p] == 0 {
            0.0
        } else {
            100.0 * self.data_lost[p] as f64 / self.data_pkts[p] as f64
        }
    }
    pub fn mean_delay(&self) -> f64 {
        crate::stats::mean(&self.delays_ms)
    }
}

pub(super) const PORT: u16 = 80;
/// The client's request, bytes.
const REQUEST: usize = 100;
/// The longest the server's application waits for the second subflow. It waits at
/// all because data written while the connection has one subflow is assigned on
/// `mp_fill_one`'s path, which does not record where the subflow's last mapping ends
/// (`SubflowCtx::dsn_end`); once a second subflow takes the next bytes, the first
/// subflow's next write does not end a record (`sub_dsn_break` sees no end), a
/// segment spans two mappings whose DSNs are not contiguous, and its DSS mapping
/// labels part of it with the wrong DSN: the receiver's Data ACK stops at the bytes
/// never labelled and the transfer stalls (found here; `conn/mp.rs` is another
/// helper's this session, reported for a fix there).
const JOIN_WAIT: Duration = Duration::from_secs(3);
pub(super) const BG_PORT: u16 = 81;
pub(super) const MSS_PACKET: usize = 1500;

fn ip(a: u8, b: u8, c: u8, d: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(a, b, c, d))
}
/// The client's address on each path.
pub(super) fn client_ip(p: usize) -> IpAddr {
    ip(198, 18 + p as u8, 0, 1)
}
/// The background receiver's address on each path.
pub(super) fn bg_ip(p: usize) -> IpAddr {
    ip(198, 18 + p as u8, 0, 2)
}
pub(super) const SERVER: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 18, 10, 1));
pub(super) const BG_SERVER: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 18, 10, 2));

/// Node indices.
pub(super) const N_CLIENT: usize = 0;
pub(super) const N_SERVER: usize = 1;
pub(super) const N_BG_SERVER: usize = 2;
pub(super) const N_BG: [usize; 2] = [3, 4];

/// The path of a packet between `src` and `dst`, and whether it goes towards the
/// client (downlink).
pub(super) fn route(src: IpAddr, dst: IpAddr) -> Option<(usize, bool, usize)> {
    for p in 0..2 {
        if dst == client_ip(p) {
            return Some((p, true, N_CLIENT));
        }
        if dst == bg_ip(p) {
            return Some((p, true, N_BG[p]));
        }
        if src == client_ip(p) || src == bg_ip(p) {
            let to = if dst == SERVER {
                N_SERVER
            } else if dst == BG_SERVER {
                N_BG_SERVER
            } else {
                return None;
            };
            return Some((p, false, to));
        }
    }
    None
}

/// A drop-tail link: serialisation at `rate`, then `delay`.
pub(super) struct Link {
    spec: PathSpec,
    /// Departure times of the packets queued or in service.
    queue: VecDeque<Instant>,
    busy_until: Instant,
}

impl Link {
    pub(super) fn new(spec: PathSpec) -> Self {
        Link {
            spec,
            queue: VecDeque::new(),
            busy_until: Instant::ZERO,
        }
    }

    /// Queueing ahead of a packet entering now.
    fn backlog(&self, now: Instant) -> Duration {
        self.busy_until.saturating_duration_since(now)
    }

    /// When a `len`-byte packet entering now arrives at the far end; None if dropped
    /// (queue full, or random loss, which happens on the link after serialisation).
    pub(super) fn send(
        &mut self,
        now: Instant,
        len: usize,
        rng: &mut ChaCha8Rng,
    ) -> Option<Instant> {
        while self.queue.front().is_some_and(|&t| t <= now) {
            self.queue.pop_front();
        }
        if self.queue.len() >= self.spec.queue.max(1) {
            return None;
        }
        let ser =
            Duration::from_nanos((len as u64 * 8 * 1_000_000_000) / self.spec.rate_bps.max(1));
        let start = self.busy_until.max(now);
        self.busy_until = start + ser;
        self.queue.push_back(self.busy_until);
        if self.spec.loss > 0.0 && rng.gen_bool(self.spec.loss.min(1.0)) {
            return None;
        }
        Some(self.busy_until + self.spec.delay)
    }
}

/// One Pareto on-off UDP source towards the client side of a path.
pub(super) struct OnOff {
    pub(super) path: usize,
    /// Packet gap while ON.
    gap: Duration,
    pub(super) next: Instant,
    on_until: Instant,
}

const PARETO_SHAPE: f64 = 1.5;
/// The seed's scale, seconds: mean period shape·scale/(shape−1) = 0.5 s.
const PARETO_SCALE: f64 = 0.166_667;
pub(super) const UDP_BYTES: usize = 1000;

fn pareto(rng: &mut ChaCha8Rng) -> Duration {
    let u: f64 = rng.gen_range(f64::EPSILON..1.0);
    // Capped at 60 s: the heavy tail's rare huge periods would otherwise dominate a
    // run (a 30-s run has about 60 periods).
    Duration::from_secs_f64((PARETO_SCALE / u.powf(1.0 / PARETO_SHAPE)).min(60.0))
}

impl OnOff {
    /// A source with mean rate `mean_bps` (ON half the time on average: twice that
    /// while ON).
    pub(super) fn new(path: usize, mean_bps: u64, rng: &mut ChaCha8Rng) -> Self {
        let on_bps = (2 * mean_bps).max(1);
        let gap = Duration::from_nanos(UDP_BYTES as u64 * 8 * 1_000_000_000 / on_bps);
        // Start in a random phase: OFF for a Pareto period.
        let next = Instant::ZERO + pareto(rng);
        OnOff {
            path,
            gap,
            next,
            on_until: next + pareto(rng),
        }
    }

    /// Advances past `now`, returning whether a packet is due at `self.next`.
    pub(super) fn fire(&mut self, rng: &mut ChaCha8Rng) {
        self.next += self.gap;
        if self.next >= self.on_until {
            self.next = self.on_until + pareto(rng);
            self.on_until = self.next + pareto(rng);
        }
    }
}

pub(super) fn tcp_config(cc: CcAlgorithm, send: u32, recv: u32) -> Config {
    tcp_config_with(&TcpKnobs::default(), cc, send, recv)
}

fn tcp_config_with(knobs: &TcpKnobs, cc: CcAlgorithm, send: u32, recv: u32) -> Config {
    let mut c = knobs.to_config(cc);
    c.send_buffer = send as usize;
    c.recv_buffer = recv as usize;
    // B.1 §1.2.1: Nagle off in every scenario.
    c.nagle = false;
    c
}

pub(super) fn mptcp_config(base: &Config, sched: SchedKind, client: bool) -> Config {
    let mut c = base.clone();
    let endpoints = if client {
        vec![LocalEndpoint {
            addr: Addr {
                id: 1,
                ip: client_ip(1),
                port: 0,
            },
            signal: false,
            subflow: true,
            backup: false,
        }]
    } else {
        Vec::new()
    };
    let mut m = MptcpConfig {
        pm: PmConfig {
            mode: PmMode::Fullmesh,
            limits: Limits {
                subflows: 2,
                add_addr_accepted: 0,
            },
            endpoints,
            ..PmConfig::default()
        },
        scheduler: sched,
        ..MptcpConfig::default()
    };
    m.recv.capacity = u32::try_from(base.recv_buffer).unwrap_or(u32::MAX);
    // uTCP at the data level (Config::unordered is the subflow's switch).
    m.recv.unordered = base.unordered;
    c.mptcp = Some(Box::new(m));
    c
}

pub(super) fn endpoint(addr: IpAddr, seed: u64, n: u64) -> Endpoint {
    let mut secret = [0u8; 16];
    secret[..8].copy_from_slice(&brisk_scenario::seed::derive_seed(seed, "mp-b1", n).to_le_bytes());
    Endpoint::new(
        addr,
        EndpointConfig::seeded(
            secret,
            brisk_scenario::seed::derive_seed(seed, "mp-b1-rng", n),
        ),
    )
}

/// What `mp_map` and `mp_compose` add to a run (the other experiments use the
/// defaults through [`run`]): the foreground's TCP knobs (LISA, RDB, ECN with ABE, as a
/// scenario's `[flow.tcp]`, validated by the caller), unordered reads at the client
/// (uTCP: a message counts as delivered once all its bytes were handed out, in order
/// or not), and a marking threshold on every link.
#[derive(Clone, Debug, Default)]
pub struct Extras {
    pub knobs: TcpKnobs,
    pub unordered_reads: bool,
    /// Step marking (RFC 8257 §3.1's threshold, in time rather than packets): an
    /// ECN-capable packet that finds at least this much queueing ahead of it is
    /// marked CE; others see the drop-tail alone.
    pub mark_over: Option<Duration>,
}

/// Runs one set-up. Errors name what failed (a connect refused, a run that never
/// established).
pub fn run(spec: &RunSpec) -> Result<Outcome, String> {
    run_with(spec, &Extras::default())
}

/// [`run`] with [`Extras`].
pub fn run_with(spec: &RunSpec, extras: &Extras) -> Result<Outcome, String> {
    let seed = spec.seed;
    let mut rng =
        ChaCha8Rng::seed_from_u64(brisk_scenario::seed::derive_seed(seed, "mp-b1-links", 0));
    let cc = match spec.transport {
        Transport::Tcp { cc, .. } | Transport::Mptcp { cc, .. } => cc,
    };
    let mptcp = matches!(spec.transport, Transport::Mptcp { .. });
    let fg_cfg = tcp_config_with(&extras.knobs, cc, spec.send_buffer, spec.recv_buffer);
    let mut client_fg = fg_cfg.clone();
    client_fg.unordered = extras.unordered_reads;
    let (client_cfg, server_cfg) = match spec.transport {
        Transport::Mptcp { sched, .. } => (
            mptcp_config(&client_fg, sched, true),
            mptcp_config(&fg_cfg, sched, false),
        ),
        Transport::Tcp { .. } => (client_fg, fg_cfg.clone()),
    };
    let mut nodes: Vec<Endpoint> = Vec::with_capacity(5);
    let mut client = endpoint(client_ip(0), seed, 0);
    client
        .add_address(client_ip(1))
        .map_err(|e| e.to_string())?;
    nodes.push(client);
    let mut server = endpoint(SERVER, seed, 1);
    server
        .listen(PORT, 16, server_cfg)
        .map_err(|e| format!("listen: {e:?}"))?;
    nodes.push(server);
    let bg_cfg = tcp_config(CcAlgorithm::Cubic, 1 << 20, 2 << 20);
    let mut bgs = endpoint(BG_SERVER, seed, 2);
    bgs.listen(BG_PORT, 16, bg_cfg.clone())
        .map_err(|e| format!("listen: {e:?}"))?;
    nodes.push(bgs);
    for p in 0..2 {
        nodes.push(endpoint(bg_ip(p), seed, 3 + p as u64));
    }
    let mut links = [
        [Link::new(spec.paths[0]), Link::new(spec.paths[0])],
        [Link::new(spec.paths[1]), Link::new(spec.paths[1])],
    ];
    let mut udp: Vec<OnOff> = Vec::new();
    let mut now = Instant::ZERO;
    let start = Instant::ZERO + spec.start;
    let end = Instant::ZERO + spec.limit;
    let mut bg_conns: Vec<(usize, ConnHandle)> = Vec::new();
    if spec.background {
        for p in 0..2 {
            let h = nodes[N_BG[p]]
                .connect_from(
                    now,
                    SocketAddr::new(bg_ip(p), 0),
                    SocketAddr::new(BG_SERVER, BG_PORT),
                    std::sync::Arc::new(bg_cfg.clone()),
                )
                .map_err(|e| format!("background connect: {e:?}"))?;
            bg_conns.push((N_BG[p], h));
            for _ in 0..4 {
                udp.push(OnOff::new(p, spec.paths[p].rate_bps / 40, &mut rng));
            }
        }
    }
    let mut bg_server_conns: Vec<ConnHandle> = Vec::new();
    let zeros = vec![0u8; 64 * 1024];
    let mut scratch = vec![0u8; 64 * 1024];

    // Foreground state.
    let mut fg_client: Option<ConnHandle> = None;
    let mut fg_server: Option<ConnHandle> = None;
    let mut accepted_at: Option<Instant> = None;
    let mut accepted: Option<Instant> = None;
    let mut requested = false;
    let Workload::Messages(msgs) = &spec.workload;
    let total = spec.workload.total();
    let mut next_msg = 0usize;
    let mut generated = 0u64;
    let mut written = 0u64;
    // (end offset, generation time) of messages generated, not yet read whole.
    let mut pending: VecDeque<(u64, Instant)> = VecDeque::new();
    // With unordered reads: the bytes handed out ahead of the in-order point, and the
    // messages (start, end, generation time) not yet handed out whole.
    let mut handed = brisk_tcp::rangeset::RangeSet::new(1 << 16);
    let mut pending_u: Vec<(u64, u64, Instant)> = Vec::new();
    let mut read = 0u64;
    let mut out = Outcome::default();
    // The server's IDSN (from its SYN/ACK key) and the arrived data packets not yet
    // read whole: (end offset, arrival), a min-heap on the end.
    let mut idsn: Option<u64> = None;
    let mut arrived: BinaryHeap<Reverse<(u64, Instant)>> = BinaryHeap::new();

    let mut wire: BinaryHeap<Reverse<(Instant, u64, usize)>> = BinaryHeap::new();
    #[allow(clippy::type_complexity)]
    let mut packets: std::collections::HashMap<u64, (Vec<u8>, Option<u64>)> =
        std::collections::HashMap::new();
    let mut next_id = 0u64;
    let mut buf = Vec::with_capacity(MSS_PACKET + 100);

    let mut steps = 0u64;
    // `MP_B1_DEBUG=1`: check the foreground's DSS labels on the wire (a segment sent
    // again with another mapping; DSN ranges never sent, overlapping ones), as used
    // to find the stall described at `JOIN_WAIT`.
    let debug = std::env::var_os("MP_B1_DEBUG").is_some();
    let mut seen_map: std::collections::HashMap<(usize, u32), (u64, usize)> = Default::default();
    let mut next_dump = Instant::ZERO;
    loop {
        steps += 1;
        if debug && now >= next_dump {
            // What the server's scheduler sees, once a second.
            next_dump = now + Duration::from_secs(1);
            if let Some(c) = fg_server.and_then(|h| nodes[N_SERVER].conn(h)) {
                for (i, v) in c.mptcp_subflow_views().iter().enumerate() {
                    eprintln!(
                        "{now:?} sub {i}: srtt {:?} min {:?} cwnd {} flight {} queued {} rate {} B/s room {}; read {read}",
                        v.srtt, v.min_rtt, v.cwnd, v.in_flight, v.queued, v.rate, v.usable
                    );
                }
            }
        }
        if steps > 200_000_000 {
            return Err("run did not settle".into());
        }
        // Foreground open.
        if fg_client.is_none() && now >= start {
            let local = match spec.transport {
                Transport::Tcp { path, .. } => client_ip(path),
                Transport::Mptcp { .. } => client_ip(0),
            };
            fg_client = Some(
                nodes[N_CLIENT]
                    .connect_from(
                        now,
                        SocketAddr::new(local, 0),
                        SocketAddr::new(SERVER, PORT),
                        std::sync::Arc::new(client_cfg.clone()),
                    )
                    .map_err(|e| format!("connect: {e:?}"))?,
            );
        }
        if let Some(h) = fg_client {
            // The client's request (as an HTTP GET): the server's Data ACK of it makes
            // the client's MPTCP connection fully established, which starts its path
            // manager (RFC 8684 §3.1), so the second subflow joins before the
            // server writes.
            if !requested {
                if let Some(c) = nodes[N_CLIENT].conn_mut(h) {
                    if c.write(&zeros[..REQUEST]) == REQUEST {
                        requested = true;
                    }
                }
            }
        }
        if fg_server.is_none() {
            if let Some(h) = nodes[N_SERVER].accept(PORT) {
                fg_server = Some(h);
                accepted = Some(now);
            }
        }
        if let (Some(h), Some(t_acc), None) = (fg_server, accepted, accepted_at) {
            if let Some(c) = nodes[N_SERVER].conn_mut(h) {
                while c.read(&mut scratch) > 0 {}
                // The application starts once every subflow is up (MPTCP), or at
                // once (TCP), or after JOIN_WAIT without the join. Writing before the
                // join also trips a bug in the connection (see `JOIN_WAIT`).
                let ready = !mptcp || {
                    let i = c.mptcp_subflow_info();
                    i.len() >= 2 && i.iter().all(|x| x.3)
                };
                if ready || now >= t_acc + JOIN_WAIT {
                    accepted_at = Some(now);
                }
            }
        }
        while let Some(h) = nodes[N_BG_SERVER].accept(BG_PORT) {
            bg_server_conns.push(h);
        }
        // Applications.
        if let (Some(h), Some(t0)) = (fg_server, accepted_at) {
            while next_msg < msgs.len() && t0 + msgs[next_msg].0 <= now {
                let from = generated;
                generated += u64::from(msgs[next_msg].1);
                if extras.unordered_reads {
                    pending_u.push((from, generated, t0 + msgs[next_msg].0));
                } else {
                    pending.push_back((generated, t0 + msgs[next_msg].0));
                }
                next_msg += 1;
            }
            if let Some(c) = nodes[N_SERVER].conn_mut(h) {
                while written < generated {
                    let n = ((generated - written) as usize).min(zeros.len());
                    let w = c.write(&zeros[..n]);
                    if w == 0 {
                        break;
                    }
                    written += w as u64;
                }
            }
        }
        for &h in &bg_server_conns {
            if let Some(c) = nodes[N_BG_SERVER].conn_mut(h) {
                while c.write(&zeros) > 0 {}
            }
        }
        if let Some(h) = fg_client {
            if let Some(c) = nodes[N_CLIENT].conn_mut(h) {
                if extras.unordered_reads {
                    let mut any = false;
                    while let Some(u) = c.read_unordered(&mut scratch) {
                        any = true;
                        if u.in_order {
                            read += u.len as u64;
                            out.last_read = Some((now, read));
                        } else {
                            out.unordered_bytes += u.len as u64;
                            handed.insert(u.offset..u.offset + u.len as u64);
                        }
                    }
                    if any {
                        handed.remove_below(read);
                        pending_u.retain(|&(from, end, t)| {
                            let whole = end <= read
                                || handed
                                    .range_of(from.max(read))
                                    .is_some_and(|r| r.start <= from.max(read) && r.end >= end);
                            if whole {
                                out.delays_ms
                                    .push(now.saturating_duration_since(t).as_secs_f64() * 1e3);
                            }
                            !whole
                        });
                    }
                } else {
                    loop {
                        let n = c.read(&mut scratch);
                        if n == 0 {
                            break;
                        }
                        read += n as u64;
                        out.last_read = Some((now, read));
                    }
                }
            }
            while pending.front().is_some_and(|&(e, _)| e <= read) {
                let (_, t) = pending.pop_front().unwrap_or_default();
                out.delays_ms
                    .push(now.saturating_duration_since(t).as_secs_f64() * 1e3);
            }
            while arrived.peek().is_some_and(|Reverse((e, _))| *e <= read) {
                if let Some(Reverse((_, t))) = arrived.pop() {
                    out.rbuf_wait_ms
                        .push(now.saturating_duration_since(t).as_secs_f64() * 1e3);
                }
            }
            if out.completion.is_none() && total > 0 && read >= total {
                out.completion = accepted_at.map(|t| now.saturating_duration_since(t));
            }
        }
        for (n, h) in &bg_conns {
            if let Some(c) = nodes[*n].conn_mut(*h) {
                while c.read(&mut scratch) > 0 {}
            }
        }
        for e in nodes.iter_mut() {
            while e.poll_event().is_some() {}
        }
        if out.completion.is_some() || now >= end {
            break;
        }
        // Output onto the links.
        for (ni, e) in nodes.iter_mut().enumerate() {
            while e.poll_transmit(now, &mut buf).is_some() {
                let Ok((iph, tcp)) = brisk_wire::parse_tcp_packet(&buf) else {
                    continue;
                };
                let Some((p, down, to)) = route(iph.src(), iph.dst()) else {
                    continue;
                };
                let fg_data = ni == N_SERVER && down && !tcp.payload.is_empty();
                if ni == N_SERVER && down && idsn.is_none() && mptcp {
                    for o in brisk_wire::mptcp::options(&tcp.extra).flatten() {
                        if let MptcpOption::MpCapable(m) = o {
                            if let MpCapableForm::SynAck { sender_key } = m.form {
                                idsn = Some(brisk_wire::mptcp::crypto::idsn(sender_key));
                            }
                        }
                    }
                }
                let mut dsn_end = None;
                if fg_data {
                    out.data_pkts[p] += 1;
                    out.data_bytes[p] += tcp.payload.len() as u64;
                    if let Some(base) = idsn {
                        for o in brisk_wire::mptcp::options(&tcp.extra).flatten() {
                            if let MptcpOption::Dss(d) = o {
                                if let Some(m) = d.mapping {
                                    let off = match m.dsn {
                                        DataSeq::Bits64(v) => v.wrapping_sub(base.wrapping_add(1)),
                                        DataSeq::Bits32(v) => {
                                            u64::from(v.wrapping_sub((base as u32).wrapping_add(1)))
                                        }
                                    };
                                    dsn_end = Some(off + tcp.payload.len() as u64);
                                    if debug {
                                        let k = (p, tcp.seq.0);
                                        if let Some(&(o2, l2)) = seen_map.get(&k) {
                                            if o2 != off || l2 != tcp.payload.len() {
                                                eprintln!("MISMATCH path {p} seq {} first off {o2} len {l2}, now off {off} len {} at {now:?}", tcp.seq.0, tcp.payload.len());
                                            }
                                        } else {
                                            seen_map.insert(k, (off, tcp.payload.len()));
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                let dir = usize::from(!down);
                if extras
                    .mark_over
                    .is_some_and(|th| links[p][dir].backlog(now) >= th)
                    && brisk_wire::packet::mark_ce(&mut buf)
                    && fg_data
                {
                    out.ce_marked[p] += 1;
                }
                let len = buf.len();
                match links[p][dir].send(now, len, &mut rng) {
                    Some(at) => {
                        let id = next_id;
                        next_id += 1;
                        packets.insert(id, (buf.clone(), dsn_end));
                        wire.push(Reverse((at, id, to)));
                    }
                    None => {
                        if fg_data {
                            out.data_lost[p] += 1;
                        }
                    }
                }
            }
        }
        // UDP background due now.
        for s in udp.iter_mut() {
            while s.next <= now {
                if links[s.path][0].send(now, UDP_BYTES, &mut rng).is_some() {
                    // Occupies the link; discarded on arrival.
                }
                s.fire(&mut rng);
            }
        }
        // Next event.
        let mut next = end;
        if let Some(Reverse((t, _, _))) = wire.peek() {
            next = next.min(*t);
        }
        for e in &nodes {
            if let Some(t) = e.poll_timeout() {
                next = next.min(t);
            }
        }
        if let Some(t0) = accepted_at {
            if next_msg < msgs.len() {
                next = next.min(t0 + msgs[next_msg].0);
            }
        }
        if fg_client.is_none() {
            next = next.min(start);
        }
        if let (Some(t), None) = (accepted, accepted_at) {
            next = next.min(t + JOIN_WAIT);
        }
        for s in &udp {
            next = next.min(s.next);
        }
        now = next.max(now);
        while wire.peek().is_some_and(|Reverse((t, _, _))| *t <= now) {
            let Some(Reverse((_, id, to))) = wire.pop() else {
                break;
            };
            let Some((bytes, dsn_end)) = packets.remove(&id) else {
                continue;
            };
            if let Some(e) = dsn_end {
                // A data packet's arrival, keyed to its end offset (a duplicate of
                // bytes already read counts as read at once).
                arrived.push(Reverse((e, now)));
            }
            nodes[to].handle_packet_trusted(now, &bytes);
        }
        for e in nodes.iter_mut() {
            e.handle_timeout(now);
        }
    }
    out.unread = pending.len() + pending_u.len();
    if debug {
        let mut v: Vec<(u64, usize, usize, u32)> = seen_map
            .iter()
            .map(|(&(p, q), &(o, l))| (o, l, p, q))
            .collect();
        v.sort();
        let mut end = 0u64;
        for (o, l, p, q) in &v {
            if *o > end {
                eprintln!("GAP {end}..{o} (next on path {p} seq {q})");
            }
            if *o < end {
                eprintln!("OVERLAP at {o} len {l} path {p} (end {end})");
            }
            end = end.max(o + *l as u64);
        }
        eprintln!(
            "covered to {end}; server mptcp counters {:?}",
            fg_server.and_then(|h| nodes[N_SERVER]
                .conn(h)
                .and_then(|c| c.mptcp_counters().cloned()))
        );
    }
    if let Some(h) = fg_server {
        if let Some(c) = nodes[N_SERVER].conn(h) {
            out.subflows = c.mptcp_subflows();
            out.sched = c.mptcp_sched_stats().unwrap_or_default();
            out.rdb_packets = if c.is_mptcp() {
                c.mptcp_subflow_infos().iter().map(|i| i.rdb_packets).sum()
            } else {
                c.info().rdb_packets
            };
        }
    }
    if accepted_at.is_none() {
        return Err("the connection was never established".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(total: u64) -> Workload {
        let m = 16 * 1024u64;
        Workload::Messages(
            (0..total.div_ceil(m))
                .map(|i| (Duration::ZERO, (total - i * m).min(m) as u32))
                .collect(),
        )
    }

    fn spec(transport: Transport, seed: u64) -> RunSpec {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        RunSpec {
            paths: [Kind::Wlan.draw(&mut rng), Kind::G3.draw(&mut rng)],
            transport,
            workload: bulk(2_000_000),
            send_buffer: 1 << 20,
            recv_buffer: 2 << 20,
            background: false,
            start: Duration::ZERO,
            limit: Duration::from_secs(60),
            seed,
        }
    }

    /// Every arm completes a 2-MB transfer; single-path TCP stays on its path, MPTCP
    /// opens its second subflow and (min-RTT, bulk) uses both paths.
    #[test]
    fn transfers_complete_on_the_expected_paths() {
        for seed in [1, 2, 3] {
            for tr in [
                Transport::Tcp {
                    path: 0,
                    cc: CcAlgorithm::Cubic,
                },
                Transport::Tcp {
                    path: 1,
                    cc: CcAlgorithm::Cubic,
                },
                Transport::Mptcp {
                    sched: SchedKind::MinRtt,
                    cc: CcAlgorithm::Olia,
                },
                Transport::Mptcp {
                    sched: SchedKind::Sttf,
                    cc: CcAlgorithm::Olia,
                },
            ] {
                let s = spec(tr, seed);
                let o = run(&s).unwrap();
                eprintln!(
                    "seed {seed} {tr:?}: paths {:?} done {:?} pkts {:?} lost {:?} subflows {} unread {} msgs {} rbuf mean {:.1} max {:.1}",
                    s.paths.map(|p| (p.rate_bps / 1000, p.delay.as_millis(), (p.loss * 1000.0) as u32)),
                    o.completion,
                    o.data_pkts,
                    o.data_lost,
                    o.subflows,
                    o.unread,
                    o.delays_ms.len(),
                    crate::stats::mean(&o.rbuf_wait_ms),
                    o.rbuf_wait_ms.iter().copied().fold(0.0, f64::max)
                );
                assert!(o.completion.is_some(), "{tr:?} seed {seed}");
                match tr {
                    Transport::Tcp { path, .. } => assert_eq!(o.data_pkts[1 - path], 0),
                    Transport::Mptcp { sched, .. } => {
                        assert_eq!(o.subflows, 2);
                        if sched == SchedKind::MinRtt {
                            assert!(o.data_pkts[1] > 0);
                        }
                    }
                }
            }
        }
    }

    /// `MP_B1_DEBUG=1 cargo test --release -p brisk-repro --lib sttf_download_trace
    /// -- --ignored --nocapture`: MP-7b's download with STTF and LowRTT+RP, the
    /// server's subflow views once a second.
    #[test]
    #[ignore]
    fn sttf_download_trace() {
        for sched in [SchedKind::Sttf, SchedKind::LowRttRp] {
            let mut s = spec(
                Transport::Mptcp {
                    sched,
                    cc: CcAlgorithm::Olia,
                },
                1,
            );
            s.workload = bulk(10_000_000);
            let o = run(&s).unwrap();
            eprintln!(
                "{sched:?}: {:?} pkts {:?} bytes {:?} lost {:?} share 3G {:.1} % {:?} rbuf mean {:.1} ms",
                o.completion,
                o.data_pkts,
                o.data_bytes,
                o.data_lost,
                o.share(1),
                o.sched,
                crate::stats::mean(&o.rbuf_wait_ms)
            );
        }
    }

    /// LowRTT+RP against plain min-RTT where the seed says RP matters: a WLAN/3G
    /// pair (Table III draws) whose receive buffer is small against the 3G path's
    /// bufferbloated window, so data in flight on 3G blocks the connection-level
    /// window. With retransmission and penalisation the 2-MB download finishes
    /// sooner in every seed, and the 3G path carries less.
    #[test]
    fn lowrtt_rp_beats_plain_min_rtt_with_a_small_receive_buffer() {
        let mut faster = 0;
        let seeds = [1u64, 2, 3, 4, 5];
        for seed in seeds {
            let mut out = Vec::new();
            for sched in [SchedKind::MinRtt, SchedKind::LowRttRp] {
                let mut s = spec(
                    Transport::Mptcp {
                        sched,
                        cc: CcAlgorithm::Olia,
                    },
                    seed,
                );
                s.send_buffer = 256 << 10;
                s.recv_buffer = 128 << 10;
                let o = run(&s).unwrap();
                let done = o.completion.expect("completes").as_secs_f64();
                eprintln!(
                    "seed {seed} {sched:?}: {done:.3} s, pkts {:?} share 3G {:.1} %, {:?}",
                    o.data_pkts,
                    o.share(1),
                    o.sched
                );
                out.push((done, o.share(1)));
            }
            if out[1].0 < out[0].0 {
                faster += 1;
            }
        }
        assert_eq!(
            faster,
            seeds.len(),
            "RP faster in {faster} of {} seeds",
            seeds.len()
        );
    }
}
