//! Executes a parsed script against one brisk [`Endpoint`] in virtual time.
//!
//! The semantics follow packetdrill's `run.c` / `run_packet.c` / `run_system_call.c`:
//! - Times: a relative time (`+t`) counts from when the previous event finished, except
//!   that two inbound packets in a row are anchored on the previous one's script time
//!   (`adjust_relative_event_times`). Inbound packets and calls happen exactly at their
//!   time (the clock is virtual, so there is no scheduling slop).
//! - An outbound line takes the next packet the endpoint emitted (waiting in virtual
//!   time up to 2 s past its expected time, `sniff_outbound_live_packet`), compares it
//!   field by field in script space, then checks its time against the expected time ±
//!   the tolerance (`verify_time`; default 4 ms, packetdrill's `--tolerance_usecs`).
//! - Sequence and SACK numbers are relative to each side's ISN; the remote's is chosen
//!   by the runner, the local one is learned from the endpoint's SYN or SYN-ACK.
//! - TCP options must match in kind and order unless the script says `<...>`; the TS
//!   value is not compared (packetdrill's default `tcp_ts_tick_usecs` is 0), but each
//!   script value is mapped to the endpoint's so that later inbound `ecr`s echo it.
//! - Data the endpoint sends as several MSS-sized segments at one instant may match one
//!   larger script segment, as Linux's TSO/GSO super-packets on packetdrill's tun device
//!   do (packetdrill's `verify_packet_fragments` aggregates the same way).
//!
//! A script's first unsupported step (a system call or option brisk has no counterpart
//! for, an IP-level annotation) ends the run with [`Outcome::Unsupported`]; Python
//! blocks and shell commands the runner cannot apply are skipped and counted.

use crate::mp_run::MpState;
use crate::mptcp::AddrRef;
use crate::script::{
    flag, flags_str, parse, Event, EventKind, Options, Packet, ParseError, Syscall, TcpOpt, Time,
};
use brisk_tcp::mptcp::MptcpConfig;
use brisk_tcp::{
    Config, ConnError, ConnHandle, Endpoint, EndpointConfig, Event as TcpEvent, Instant,
};
use brisk_wire::mptcp::MptcpOption;
use brisk_wire::parse_tcp_packet;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// The local (brisk) address, as packetdrill's default `--local_ip`.
pub const LOCAL_IP: Ipv4Addr = Ipv4Addr::new(192, 168, 0, 1);
/// The remote (script) address, as packetdrill's default `--remote_ip`.
pub const REMOTE_IP: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
/// The port `bind(..., ..., ...)` binds and `connect` connects to (packetdrill's 8080).
pub const SCRIPT_PORT: u16 = 8080;
/// The remote side's port for passive opens.
pub const REMOTE_PORT: u16 = 47_000;
/// Added to every inbound sequence number: the remote ISN the script's 0 stands for.
/// Not zero, so that a number used unmapped shows up as a mismatch.
pub const REMOTE_ISN: u32 = 0x4000_0000;
/// The script side's Nth address (0 is [`REMOTE_IP`]).
pub fn script_addr(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1 + n))
}

/// brisk's Nth address (0 is [`LOCAL_IP`], the endpoint's only address: a packet to
/// another is not brisk's).
pub fn brisk_addr(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(192, 168, 0, 1 + n))
}

/// An `addr[...]` name as an address; `brisk_client`: brisk connected.
pub(crate) fn resolve_addr(a: AddrRef, brisk_client: bool) -> IpAddr {
    match a {
        AddrRef::Ip(ip) => ip,
        AddrRef::Client(n) if brisk_client => brisk_addr(n),
        AddrRef::Client(n) => script_addr(n),
        AddrRef::Server(n) if brisk_client => script_addr(n),
        AddrRef::Server(n) => brisk_addr(n),
    }
}

/// One subflow's sequence spaces (the MPTCP fork's `addr[...]` packets switch
/// between them); the runner's fields hold the current one's.
#[derive(Clone, Copy)]
struct FlowSeq {
    ports: (u16, u16),
    local_isn: u32,
    local_script_isn: u32,
    remote_script_isn: u32,
    remote_isn_set: bool,
}

/// Virtual time of the script's 0 (brisk's clock must not start at 0: TS values).
const BASE_US: u64 = 1_000_000;
/// packetdrill's `sniff_outbound_live_packet` gives up this long after the expected time.
const SNIFF_SLACK_US: i64 = 2_000_000;
/// How far `*` (any time) waits for an outbound packet.
const ANY_WAIT_US: i64 = 600_000_000;
/// First file descriptor `socket()` returns.
const FIRST_FD: i64 = 3;
/// Bound on the trace log, lines.
const MAX_LOG: usize = 100_000;

/// Settings for a run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// packetdrill's `--tolerance_usecs` (default 4000).
    pub tolerance_us: i64,
    /// The per-connection configuration sockets start from (see [`linux_defaults`]).
    pub tcp: Config,
    /// Keep a log of every packet and call in [`Report::log`].
    pub trace: bool,
    /// Whether several segments sent at one instant may match one larger script
    /// segment (Linux's TSO/GSO on packetdrill's tun device; `ethtool -K tun0 tso off
    /// gso off` in a script turns it off).
    pub tso: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            tolerance_us: 4_000,
            tcp: linux_defaults(),
            trace: false,
            tso: true,
        }
    }
}

/// brisk's `Config` set to what packetdrill's `defaults.sh` gives Linux, where brisk
/// has the knob. `Config::default()` already is a stock Linux 6.x host (IW10, minRTO
/// 200 ms, initial RTO 1 s, 40 ms delayed ACK with 16 quick ACKs, CUBIC, SACK,
/// timestamps, window scaling, RACK-TLP, F-RTO, ECN off, Nagle on); on top of it:
/// - `recv_buffer` 15 MiB: `tcp_rmem`'s max (15 MiB), from which Linux sizes the
///   window scale it offers (8), as brisk does from `recv_buffer`;
/// - `slow_start_after_idle` off (`tcp_slow_start_after_idle=0`);
/// - `syn_retries` 5 (`tcp_syn_retries=5`).
///
/// `tcp_wmem` (256 KiB default, autotuned to 4 MiB) has no direct counterpart: brisk's
/// send buffer is fixed at its 4 MiB default, which only matters to scripts that fill it.
pub fn linux_defaults() -> Config {
    let mut c = Config {
        recv_buffer: 15 << 20,
        ..Config::default()
    };
    c.congestion.slow_start_after_idle = false;
    c.timeouts.syn_retries = 5;
    c
}

/// How a script ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    /// The first mismatch: the script line, and what differed.
    Fail {
        line: usize,
        msg: String,
    },
    /// The first step the runner cannot execute against brisk.
    Unsupported {
        line: usize,
        feature: String,
    },
    /// The script is not valid packetdrill (line, column, message).
    Parse(ParseError),
}

/// The result of one script.
#[derive(Clone, Debug)]
pub struct Report {
    pub outcome: Outcome,
    /// Steps skipped without failing: Python blocks, shell commands (line, what).
    pub skipped: Vec<(usize, String)>,
    /// Events executed before the run ended.
    pub events_run: usize,
    /// With `RunConfig::trace`: every packet (script space) and call, in order.
    pub log: Vec<String>,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.outcome == Outcome::Pass
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.outcome {
            Outcome::Pass => write!(f, "pass")?,
            Outcome::Fail { line, msg } => write!(f, "fail: line {line}: {msg}")?,
            Outcome::Unsupported { line, feature } => {
                write!(f, "unsupported: line {line}: {feature}")?
            }
            Outcome::Parse(e) => write!(f, "parse error: {e}")?,
        }
        if !self.skipped.is_empty() {
            write!(f, " ({} skipped:", self.skipped.len())?;
            for (l, w) in self.skipped.iter().take(3) {
                write!(f, " line {l} {w};")?;
            }
            if self.skipped.len() > 3 {
                write!(f, " ...")?;
            }
            write!(f, ")")?;
        }
        Ok(())
    }
}

/// Parses and runs one script.
pub fn run_script(src: &str, cfg: &RunConfig) -> Report {
    let script = match parse(src) {
        Ok(s) => s,
        Err(e) => {
            return Report {
                outcome: Outcome::Parse(e),
                skipped: Vec::new(),
                events_run: 0,
                log: Vec::new(),
            }
        }
    };
    let mut cfg = cfg.clone();
    for (k, v) in &script.options {
        if k == "tolerance_usecs" {
            if let Ok(t) = v.parse() {
                cfg.tolerance_us = t;
            }
        }
    }
    let mut r = Runner::new(cfg);
    let outcome = r.run(&script.events);
    if r.cfg.trace {
        let stats = format!("endpoint: {:?}", r.ep.stats());
        r.log(stats);
        if let Some(c) = r.cur.and_then(|h| r.ep.conn(h)) {
            let line = format!("connection {}: {:?}", c.state().name(), c.counters());
            r.log(line);
        }
    }
    Report {
        outcome,
        skipped: r.skipped,
        events_run: r.events_run,
        log: r.log,
    }
}

/// A step that ends the run early.
enum Stop {
    Fail(String),
    /// A failure that belongs to another line (a blocking call's).
    FailAt(usize, String),
    Unsupported(String),
}

type Step = Result<(), Stop>;

fn fail<T>(msg: impl Into<String>) -> Result<T, Stop> {
    Err(Stop::Fail(msg.into()))
}
fn unsupported<T>(msg: impl Into<String>) -> Result<T, Stop> {
    Err(Stop::Unsupported(msg.into()))
}

enum Sock {
    /// `socket()` done, not yet listening or connected.
    Fresh {
        cfg: Box<Config>,
        nonblock: bool,
    },
    Listen {
        port: u16,
        nonblock: bool,
    },
    Conn {
        h: ConnHandle,
        nonblock: bool,
        /// `shutdown(SHUT_RD)` done: reads return 0 at once (Linux).
        rd_shut: bool,
    },
    /// An epoll instance: the descriptors it watches, in the order added.
    Epoll(Vec<Interest>),
    Closed,
}

/// One `epoll_ctl` registration.
struct Interest {
    fd: i64,
    /// EPOLLIN/OUT/... bits asked for (EPOLLERR and EPOLLHUP are always reported).
    events: u32,
    edge: bool,
    oneshot: bool,
    /// A one-shot registration that has reported, until `EPOLL_CTL_MOD` re-arms it.
    disarmed: bool,
}

/// Linux's epoll event bits.
mod ev {
    pub const IN: u32 = 0x001;
    pub const OUT: u32 = 0x004;
    pub const ERR: u32 = 0x008;
    pub const HUP: u32 = 0x010;
    pub const RDHUP: u32 = 0x2000;
    pub const EXCLUSIVE: u32 = 1 << 28;
    pub const ONESHOT: u32 = 1 << 30;
    pub const ET: u32 = 1 << 31;
}

/// `EPOLLIN|EPOLLOUT`-style masks: the bits, or `None` for a name the runner lacks.
fn epoll_mask(s: &str) -> Option<u32> {
    let mut m = 0;
    for w in s.split('|').map(str::trim) {
        m |= match w {
            "0" => 0,
            "EPOLLIN" => ev::IN,
            "EPOLLOUT" => ev::OUT,
            "EPOLLERR" => ev::ERR,
            "EPOLLHUP" => ev::HUP,
            "EPOLLRDHUP" => ev::RDHUP,
            "EPOLLEXCLUSIVE" => ev::EXCLUSIVE,
            "EPOLLONESHOT" => ev::ONESHOT,
            "EPOLLET" => ev::ET,
            _ => return None,
        };
    }
    Some(m)
}

/// The `events=...` of an `{events=..., fd=N}` argument.
fn events_arg(s: &str) -> Option<&str> {
    let at = s.find("events=")? + "events=".len();
    let rest = &s[at..];
    Some(rest[..rest.find([',', '}']).unwrap_or(rest.len())].trim())
}

/// What an application sees of a connection, from the endpoint's events.
#[derive(Default, Clone, Copy)]
struct ConnStatus {
    connected: bool,
    peer_closed: bool,
    closed: Option<Result<(), ConnError>>,
    /// The error was already returned once by a call (Linux reports `sk_err` once).
    error_reported: bool,
}

/// A call the script expects to block: re-checked after every step.
struct Pending {
    line: usize,
    call: Syscall,
    /// Return by this time (µs); `None`: "at once".
    end: i64,
}

/// One packet the endpoint sent, with its virtual send time (µs from the start).
struct Sent {
    at: i64,
    bytes: Vec<u8>,
}

struct Runner {
    cfg: RunConfig,
    ep: Endpoint,
    /// Virtual now, µs since the script's 0.
    now: i64,
    out: VecDeque<Sent>,
    fds: HashMap<i64, Sock>,
    next_fd: i64,
    status: HashMap<ConnHandle, ConnStatus>,
    /// The connection packets refer to (packetdrill scripts drive one at a time).
    cur: Option<ConnHandle>,
    /// Ports of the flow packets use: (local, remote).
    ports: (u16, u16),
    /// The endpoint's ISN on the wire, and the number the script's SYN gives it.
    /// packetdrill writes SYN and SYN-ACK numbers as absolute script values and all
    /// others relative to the ISNs (`local_seq_live_to_script_offset`).
    local_isn: u32,
    local_script_isn: u32,
    /// The script's ISN for the remote side (its SYN's sequence number); on the wire
    /// it is `REMOTE_ISN` + this.
    remote_script_isn: u32,
    remote_isn_set: bool,
    /// Script TS val → endpoint TS val, and the first such pair.
    ts_map: HashMap<u32, u32>,
    ts_first: Option<(u32, u32)>,
    last_ts_val: Option<u32>,
    pending: Vec<Pending>,
    log: Vec<String>,
    skipped: Vec<(usize, String)>,
    events_run: usize,
    /// Script time of the previous event and whether it was an inbound packet.
    last_time: i64,
    last_inbound: bool,
    /// `tcp_ecn=2`: listeners accept ECN, active opens do not ask for it.
    ecn_passive: bool,
    /// A blocking write still copying: its connection, length and bytes left.
    blocked_write: Option<(ConnHandle, usize, usize)>,
    /// Per-descriptor state of Linux socket APIs brisk's endpoint has no part in.
    extra: HashMap<i64, SockExtra>,
    /// MPTCP keys, nonces and script variables.
    mp: MpState,
    /// The current flow's addresses (local, remote), and the others' sequence
    /// spaces (at most 10 × 10 address pairs, what `addr[...]` can name).
    addrs: (IpAddr, IpAddr),
    flows: HashMap<(IpAddr, IpAddr), FlowSeq>,
    /// brisk connected (it is the client of `addr[caddrN]`).
    brisk_client: bool,
    /// What an `IPPROTO_MPTCP` socket gets as `Config::mptcp` (Linux's defaults,
    /// changed by `net.mptcp.*` sysctls and `ip mptcp limits`).
    mptcp_cfg: MptcpConfig,
    /// `net.mptcp.enabled`: off, `socket(..., IPPROTO_MPTCP)` fails as Linux's does.
    mptcp_enabled: bool,
    /// `net.ipv4.tcp_fastopen` (Linux's default 1: client only; 0x2 server, 0x400
    /// every listener without the socket option, its queue the listen backlog).
    tfo_bits: u32,
    /// `net.ipv4.tcp_fastopen_key` (primary, backup), Linux's four 32-bit words each
    /// stored little-endian (`proc_tcp_fastopen_key`'s `cpu_to_le32`).
    tfo_keys: Option<([u8; 16], Option<[u8; 16]>)>,
}

/// What the runner keeps per descriptor for `SO_ZEROCOPY`, `TCP_INQ` and epoll.
#[derive(Default, Clone)]
struct SockExtra {
    zerocopy: bool,
    inq: bool,
    /// The next zerocopy notification ID (Linux's `sk_zckey`).
    zc_next: u32,
    /// Zerocopy sends not yet acknowledged: (ID, stream offset of their end).
    zc_pending: VecDeque<(u32, u64)>,
    /// Completed zerocopy ranges, as `recvmsg(MSG_ERRQUEUE)` returns them.
    errq: VecDeque<(u32, u32)>,
    /// Something happened on the socket since an edge-triggered epoll reported it.
    woken: bool,
    /// `TCP_FASTOPEN_CONNECT` set: `connect` defers the SYN to the first write when
    /// a cookie is cached.
    fo_connect: bool,
    /// The deferred SYN's data room: a non-blocking first write returns at most this
    /// (what Linux's `tcp_sendmsg_fastopen` puts on the SYN).
    fo_room: Option<u32>,
    /// A blocking `sendto(MSG_FASTOPEN)` waiting for the handshake: what it returns.
    fo_blocked: Option<usize>,
    /// Bytes a reset (or otherwise ended) connection had not handed out when the
    /// endpoint reaped it: Linux keeps them readable until `close` (`tcp_reset`
    /// only sets `sk_err`; `tcp_recvmsg` copies queued data before reporting it).
    unread: Vec<u8>,
}

impl Runner {
    fn new(cfg: RunConfig) -> Self {
        let ecfg = EndpointConfig::seeded([0x77; 16], 13);
        Runner {
            ep: Endpoint::new(IpAddr::V4(LOCAL_IP), ecfg),
            cfg,
            now: 0,
            out: VecDeque::new(),
            fds: HashMap::new(),
            next_fd: FIRST_FD,
            status: HashMap::new(),
            cur: None,
            ports: (SCRIPT_PORT, REMOTE_PORT),
            local_isn: 0,
            local_script_isn: 0,
            remote_script_isn: 0,
            remote_isn_set: false,
            ts_map: HashMap::new(),
            ts_first: None,
            last_ts_val: None,
            pending: Vec::new(),
            log: Vec::new(),
            skipped: Vec::new(),
            events_run: 0,
            last_time: 0,
            last_inbound: false,
            ecn_passive: false,
            blocked_write: None,
            extra: HashMap::new(),
            mp: MpState::new(),
            addrs: (IpAddr::V4(LOCAL_IP), IpAddr::V4(REMOTE_IP)),
            flows: HashMap::new(),
            brisk_client: false,
            mptcp_cfg: MptcpConfig::default(),
            mptcp_enabled: true,
            tfo_bits: 1,
            tfo_keys: None,
        }
    }

    fn log(&mut self, line: String) {
        if self.cfg.trace && self.log.len() < MAX_LOG {
            self.log.push(line);
        }
    }

    fn instant(t: i64) -> Instant {
        Instant::from_micros(BASE_US + t.max(0) as u64)
    }

    fn run(&mut self, events: &[Event]) -> Outcome {
        if let Some(e) = events
            .iter()
            .find(|e| !matches!(e.kind, EventKind::Shell(_)))
        {
            if !matches!(e.time, Time::Abs(0) | Time::Rel(0)) {
                return Outcome::Fail {
                    line: e.line,
                    msg: "first event should be at time 0".into(),
                };
            }
        }
        for ev in events {
            let r = self.event(ev).and_then(|()| self.check_pending(false));
            self.events_run += 1;
            match r {
                Ok(()) => {}
                Err(Stop::Fail(msg)) => return Outcome::Fail { line: ev.line, msg },
                Err(Stop::FailAt(line, msg)) => return Outcome::Fail { line, msg },
                Err(Stop::Unsupported(feature)) => {
                    return Outcome::Unsupported {
                        line: ev.line,
                        feature,
                    }
                }
            }
        }
        // Blocking calls still waiting: give them until their end time.
        if let Some(end) = self.pending.iter().map(|p| p.end).max() {
            let limit = end + self.cfg.tolerance_us;
            match self
                .advance(limit, false)
                .and_then(|()| self.check_pending(true))
            {
                Ok(()) => {}
                Err(Stop::Fail(msg)) => return Outcome::Fail { line: 0, msg },
                Err(Stop::FailAt(line, msg)) => return Outcome::Fail { line, msg },
                Err(Stop::Unsupported(feature)) => {
                    return Outcome::Unsupported { line: 0, feature }
                }
            }
        }
        Outcome::Pass
    }
}

/// Time handling and the endpoint loop.
impl Runner {
    /// Resolves an event's time to absolute script µs: (start, end of range).
    fn resolve(&self, t: Time, inbound: bool) -> (i64, i64) {
        let offset = if self.last_inbound && inbound {
            self.last_time
        } else {
            self.now
        };
        match t {
            Time::Any => (self.now, self.now),
            Time::Abs(a) => (a, a),
            Time::AbsRange(a, b) => (a, b),
            Time::Rel(a) => (offset + a, offset + a),
            Time::RelRange(a, b) => (offset + a, offset + b),
        }
    }

    /// Polls every pending output and event at `now`.
    fn flush(&mut self) {
        let now = Self::instant(self.now);
        let mut buf = Vec::new();
        while self.ep.poll_transmit(now, &mut buf).is_some() {
            if let Ok((_, tcp)) = parse_tcp_packet(&buf) {
                if let Some(ts) = tcp.timestamps {
                    self.last_ts_val = Some(ts.tsval);
                }
                // The endpoint's ISN, which a script's SYN or SYN-ACK writes as 0:
                // learned when the SYN leaves, so inbound ACKs map even if the script
                // does not list the SYN.
                let (ip_src, ip_dst) = brisk_wire::peek::src_addr(&buf)
                    .zip(brisk_wire::peek::dst_addr(&buf))
                    .unwrap_or(self.addrs);
                if tcp.flags.syn() {
                    match self.flows.get_mut(&(ip_src, ip_dst)) {
                        Some(f) if (ip_src, ip_dst) != self.addrs => f.local_isn = tcp.seq.0,
                        _ => self.local_isn = tcp.seq.0,
                    }
                }
                for o in brisk_wire::mptcp::options(&tcp.extra).flatten() {
                    self.mp.learn(&o);
                }
            }
            if self.cfg.trace {
                if let Ok(p) = self.to_script(&buf) {
                    self.log(format!("{:.6} > {p}", secs(self.now)));
                }
            }
            self.out.push_back(Sent {
                at: self.now,
                bytes: std::mem::take(&mut buf),
            });
        }
        self.zerocopy_update();
        self.keep_unread();
        while let Some((h, e)) = self.ep.poll_event() {
            for (fd, sock) in &self.fds {
                if matches!(sock, Sock::Conn { h: sh, .. } if *sh == h) {
                    self.extra.entry(*fd).or_default().woken = true;
                }
            }
            let s = self.status.entry(h).or_default();
            match e {
                TcpEvent::Connected => s.connected = true,
                TcpEvent::PeerClosed => s.peer_closed = true,
                TcpEvent::Closed(r) => s.closed = Some(r),
                TcpEvent::Incoming { .. } | TcpEvent::Readable | TcpEvent::Writable => {}
            }
        }
    }

    /// Whether the connection ended and the endpoint has not reaped it yet.
    fn ended(&self, h: ConnHandle) -> bool {
        self.ep
            .conn(h)
            .is_some_and(|c| c.state() == brisk_tcp::State::Closed)
    }

    /// A connection that ended (its `Closed` event not yet polled, which reaps it):
    /// its unread bytes move to the descriptor, as Linux keeps a reset socket's
    /// receive queue readable.
    fn keep_unread(&mut self) {
        let ended: Vec<(i64, ConnHandle)> = self
            .fds
            .iter()
            .filter_map(|(fd, s)| match s {
                Sock::Conn { h, .. } => Some((*fd, *h)),
                _ => None,
            })
            .filter(|(_, h)| {
                self.ep
                    .conn(*h)
                    .is_some_and(|c| c.state() == brisk_tcp::State::Closed && c.readable() > 0)
            })
            .collect();
        for (fd, h) in ended {
            let mut buf = [0u8; 4096];
            while let Some(n) = self
                .ep
                .conn_mut(h)
                .map(|c| c.read(&mut buf))
                .filter(|n| *n > 0)
            {
                self.extra
                    .entry(fd)
                    .or_default()
                    .unread
                    .extend_from_slice(&buf[..n]);
            }
        }
    }

    /// Runs the endpoint's timers up to `limit`; with `stop_on_packet`, stops at the
    /// first instant a packet is queued.
    fn advance(&mut self, limit: i64, stop_on_packet: bool) -> Step {
        for _ in 0..1_000_000 {
            self.flush();
            self.check_pending(false)?;
            if stop_on_packet && !self.out.is_empty() {
                return Ok(());
            }
            match self.ep.poll_timeout() {
                Some(t) if t <= Self::instant(limit) => {
                    // The script clock counts µs; a timer between two µs (brisk's clock
                    // counts ns) fires at the next one, or it would never be reached.
                    let t = t.as_nanos().div_ceil(1_000).saturating_sub(BASE_US) as i64;
                    self.now = self.now.max(t);
                    self.ep.handle_timeout(Self::instant(self.now));
                }
                _ => {
                    self.now = self.now.max(limit);
                    self.flush();
                    return self.check_pending(false);
                }
            }
        }
        fail("the endpoint's timers did not settle (a million timer steps in one wait)")
    }

    fn event(&mut self, ev: &Event) -> Step {
        let inbound = matches!(ev.kind, EventKind::Inbound(_));
        let (start, end) = self.resolve(ev.time, inbound);
        let r = match &ev.kind {
            EventKind::Inbound(p) => self.at(start, ev.time).and_then(|()| self.inbound(p)),
            EventKind::Outbound(p) => self.outbound(p, ev.time, start, end),
            EventKind::Syscall(c) => {
                // `+a...b`: the end is relative like the start.
                let end_abs = match ev.time {
                    Time::Rel(a) => c.end.map(|e| start - a + e),
                    _ => c.end,
                };
                self.at(start, ev.time)
                    .and_then(|()| self.syscall(ev.line, c, start, end_abs))
            }
            EventKind::Python(_) => {
                self.at(start, ev.time)?;
                self.skipped.push((ev.line, "python %{ }% block".into()));
                Ok(())
            }
            EventKind::Shell(cmd) => self.shell(ev.line, cmd),
            EventKind::Unsupported(what) => unsupported(what.clone()),
        };
        self.last_time = start;
        self.last_inbound = inbound;
        r
    }

    /// Moves the clock to an inbound packet's or call's time.
    fn at(&mut self, start: i64, t: Time) -> Step {
        if t == Time::Any {
            return Ok(());
        }
        if start + self.cfg.tolerance_us < self.now {
            return fail(format!(
                "timing error: event at {:.6} s, but the previous one ended at {:.6} s",
                secs(start),
                secs(self.now)
            ));
        }
        if start > self.now {
            self.advance(start, false)?;
        }
        Ok(())
    }
}

fn secs(us: i64) -> f64 {
    us as f64 / 1e6
}

/// Packets.
impl Runner {
    fn flow(&self) -> (SocketAddr, SocketAddr) {
        (
            SocketAddr::new(self.addrs.0, self.ports.0),
            SocketAddr::new(self.addrs.1, self.ports.1),
        )
    }

    /// An `addr[...]` name: `caddrN` is the client's, `saddrN` the server's, and
    /// brisk is the client once it has connected.
    fn addr(&self, a: AddrRef) -> IpAddr {
        resolve_addr(a, self.brisk_client)
    }

    fn flow_seq(&self) -> FlowSeq {
        FlowSeq {
            ports: self.ports,
            local_isn: self.local_isn,
            local_script_isn: self.local_script_isn,
            remote_script_isn: self.remote_script_isn,
            remote_isn_set: self.remote_isn_set,
        }
    }

    /// Makes (local, remote) the current flow: a new one starts with the current
    /// ports and no ISNs yet.
    fn switch_flow(&mut self, local: IpAddr, remote: IpAddr) {
        if (local, remote) == self.addrs {
            return;
        }
        self.flows.insert(self.addrs, self.flow_seq());
        let f = self.flows.remove(&(local, remote)).unwrap_or(FlowSeq {
            ports: self.ports,
            local_isn: 0,
            local_script_isn: 0,
            remote_script_isn: 0,
            remote_isn_set: false,
        });
        self.ports = f.ports;
        self.local_isn = f.local_isn;
        self.local_script_isn = f.local_script_isn;
        self.remote_script_isn = f.remote_script_isn;
        self.remote_isn_set = f.remote_isn_set;
        self.addrs = (local, remote);
    }

    /// The sequence spaces of the flow a packet (local → remote) belongs to.
    fn flow_of(&self, local: IpAddr, remote: IpAddr) -> FlowSeq {
        if (local, remote) != self.addrs {
            if let Some(f) = self.flows.get(&(local, remote)) {
                return *f;
            }
        }
        self.flow_seq()
    }

    fn inbound(&mut self, p: &Packet) -> Step {
        if p.addrs != [None, None] {
            let remote = p.addrs[0].map_or(self.addrs.1, |a| self.addr(a));
            let local = p.addrs[1].map_or(self.addrs.0, |a| self.addr(a));
            self.switch_flow(local, remote);
        }
        let mut opts = Vec::new();
        if let Options::List(list) = &p.options {
            for o in list {
                match o {
                    TcpOpt::Nop => opts.push(1),
                    TcpOpt::Eol => opts.push(0),
                    TcpOpt::Mss(m) => opts.extend_from_slice(&[2, 4, (m >> 8) as u8, *m as u8]),
                    TcpOpt::WScale(w) => opts.extend_from_slice(&[3, 3, *w]),
                    TcpOpt::SackOk => opts.extend_from_slice(&[4, 2]),
                    TcpOpt::Ts { val, ecr } => {
                        let ecr = self.map_ecr(*ecr);
                        opts.extend_from_slice(&[8, 10]);
                        opts.extend_from_slice(&val.to_be_bytes());
                        opts.extend_from_slice(&ecr.to_be_bytes());
                    }
                    TcpOpt::Sack(blocks) => {
                        opts.extend_from_slice(&[5, (2 + 8 * blocks.len()) as u8]);
                        for (l, r) in blocks {
                            opts.extend_from_slice(&l.wrapping_add(self.local_isn).to_be_bytes());
                            opts.extend_from_slice(&r.wrapping_add(self.local_isn).to_be_bytes());
                        }
                    }
                    TcpOpt::Mptcp(o) => opts.extend(self.mp.inbound_bytes(o).map_err(Stop::Fail)?),
                    TcpOpt::FastOpen { exp: false, cookie } => {
                        opts.extend_from_slice(&[34, (2 + cookie.len()) as u8]);
                        opts.extend_from_slice(cookie);
                    }
                    TcpOpt::FastOpen { exp: true, cookie } => {
                        opts.extend_from_slice(&[254, (4 + cookie.len()) as u8, 0xF9, 0x89]);
                        opts.extend_from_slice(cookie);
                    }
                }
            }
        }
        if opts.len() > 40 {
            return fail(format!(
                "inbound options take {} bytes (at most 40)",
                opts.len()
            ));
        }
        while opts.len() % 4 != 0 {
            opts.push(0);
        }
        let (local, remote) = self.flow();
        let syn = p.flags & flag::SYN != 0;
        // The first SYN after socket() names the remote ISN; later SYNs (RFC 5961
        // tests) are absolute numbers in that same space.
        if syn && !self.remote_isn_set {
            self.remote_script_isn = p.seq;
            self.remote_isn_set = true;
        }
        // An ACK without a written number acknowledges script 0, the endpoint's ISN
        // (packetdrill maps the field whenever the ACK flag is set).
        let written = p.ack.or((p.flags & flag::ACK != 0).then_some(0));
        let ack = written.map_or(0, |a| {
            let rel = if syn {
                a.wrapping_sub(self.local_script_isn)
            } else {
                a
            };
            rel.wrapping_add(self.local_isn)
        });
        let seq = if syn {
            p.seq.wrapping_add(REMOTE_ISN)
        } else {
            p.seq
                .wrapping_add(REMOTE_ISN)
                .wrapping_add(self.remote_script_isn)
        };
        self.log(format!("{:.6} < {p}", secs(self.now)));
        // packetdrill's `--mss` makes a larger inbound segment a GSO packet, which the
        // kernel takes whole (GRO): one segment, however long, as here.
        let bytes = build_packet(
            remote,
            local,
            seq,
            ack,
            p.flags,
            p.win.unwrap_or(0),
            p.urg.unwrap_or(0),
            &opts,
            p.len as usize,
            p.ecn.unwrap_or(0),
        );
        self.ep.handle_packet(Self::instant(self.now), &bytes);
        self.flush();
        Ok(())
    }

    /// An inbound TS ecr: the endpoint's value for the script's, as packetdrill's
    /// `get_outbound_ts_val_mapping`; failing an exact match, offset from the first
    /// mapping; with no outbound timestamp matched yet, the endpoint's latest TS val.
    fn map_ecr(&self, ecr: u32) -> u32 {
        if let Some(v) = self.ts_map.get(&ecr) {
            return *v;
        }
        if let Some((s, a)) = self.ts_first {
            return a.wrapping_add(ecr.wrapping_sub(s));
        }
        self.last_ts_val.unwrap_or(ecr)
    }

    fn outbound(&mut self, p: &Packet, t: Time, start: i64, end: i64) -> Step {
        let tol = self.cfg.tolerance_us;
        if p.addrs != [None, None] {
            let local = p.addrs[0].map_or(self.addrs.0, |a| self.addr(a));
            let remote = p.addrs[1].map_or(self.addrs.1, |a| self.addr(a));
            self.switch_flow(local, remote);
        }
        let deadline = if t == Time::Any {
            self.now + ANY_WAIT_US
        } else {
            end.max(self.now) + tol + SNIFF_SLACK_US
        };
        let first = loop {
            if self.out.is_empty() {
                self.advance(deadline, true)?;
            }
            let Some(first) = self.out.pop_front() else {
                return fail(format!(
                    "expected outbound packet > {p} at {:.6} s, but none was sent by {:.6} s",
                    secs(start),
                    secs(deadline)
                ));
            };
            // packetdrill sniffs only the socket under test's packets
            // (`sniff_outbound_live_packet` skips what `find_socket_for_live_packet`
            // does not match): one of an earlier client socket is passed over.
            if self.brisk_client && self.flows.is_empty() {
                if let Ok((_, tcp)) = parse_tcp_packet(&first.bytes) {
                    if tcp.src_port != self.ports.0 {
                        self.log(format!(
                            "{:.6} (ignored: port {} is not the socket under test's)",
                            secs(first.at),
                            tcp.src_port
                        ));
                        continue;
                    }
                }
            }
            break first;
        };
        let at = first.at;
        let Ok((ip, tcp)) = parse_tcp_packet(&first.bytes) else {
            return fail("the endpoint sent a packet that does not parse as TCP/IP");
        };
        if (ip.src(), ip.dst()) != self.addrs {
            return fail(format!(
                "expected outbound packet > {p} on subflow {} > {}, but the endpoint sent one on {} > {}",
                self.addrs.0,
                self.addrs.1,
                ip.src(),
                ip.dst()
            ));
        }
        if tcp.flags.syn() {
            // The endpoint's ISN: the script's SYN sequence number stands for it.
            self.local_isn = tcp.seq.0;
            self.local_script_isn = p.seq;
        }
        let mut actual = self.to_script(&first.bytes)?;
        let mut merged = false;
        // TSO: several segments sent at one instant may make up one script segment.
        while self.cfg.tso
            && actual.len < p.len
            && actual.flags & (flag::SYN | flag::RST | flag::FIN) == 0
        {
            let Some(next) = self.out.front() else { break };
            if next.at != at {
                break;
            }
            let n = self.to_script(&next.bytes)?;
            if n.seq != actual.seq.wrapping_add(actual.len)
                || n.len == 0
                || n.flags & (flag::SYN | flag::RST) != 0
            {
                break;
            }
            self.out.pop_front();
            merged = true;
            actual.len += n.len;
            actual.flags |= n.flags & (flag::PSH | flag::FIN);
            actual.ack = n.ack;
            actual.win = n.win;
        }
        if merged {
            // packetdrill checks PSH (and CWR) only on a packet it did not aggregate
            // (`verify_tcp`'s `strict`): where TSO puts PSH is the sender's business.
            actual.flags = (actual.flags & !flag::PSH) | (p.flags & flag::PSH);
        }
        let ecn = brisk_wire::peek_ecn(&first.bytes).map_or(0, |e| e as u8);
        if let Some(want) = p.ecn {
            if want != ecn {
                let name = |e: u8| ["noecn", "ect1", "ect0", "ce"][usize::from(e & 3)];
                return fail(format!(
                    "bad outbound IP ECN field: expected [{}] actual [{}]\n    expected: > {p}\n    actual:   > {actual}",
                    name(want),
                    name(ecn)
                ));
            }
        }
        if let Err(what) = compare(p, &actual, &mut self.mp) {
            return fail(format!(
                "{what}\n    expected: > {p}\n    actual:   > {actual} (at {:.6} s)",
                secs(at)
            ));
        }
        // Remember script → endpoint TS values for the ecr of later inbound packets.
        if let (Options::List(sl), Some(ts)) = (&p.options, tcp.timestamps) {
            for o in sl {
                if let TcpOpt::Ts { val, .. } = o {
                    self.ts_map.insert(*val, ts.tsval);
                    self.ts_first.get_or_insert((*val, ts.tsval));
                }
            }
        }
        if t != Time::Any && (at < start - tol || at > end + tol) {
            let want = if start == end {
                format!("at {:.6} s", secs(start))
            } else {
                format!("in {:.6}~{:.6} s", secs(start), secs(end))
            };
            return fail(format!(
                "timing error: expected outbound packet > {p} {want} but it was sent at {:.6} s; tolerance {:.6} s",
                secs(at),
                secs(tol)
            ));
        }
        Ok(())
    }

    /// An emitted packet in script space: sequence numbers relative to the ISNs.
    fn to_script(&self, bytes: &[u8]) -> Result<Packet, Stop> {
        let Ok((ip, tcp)) = parse_tcp_packet(bytes) else {
            return fail("the endpoint sent a packet that does not parse as TCP/IP");
        };
        let fs = self.flow_of(ip.src(), ip.dst());
        let remote_isn = REMOTE_ISN.wrapping_add(fs.remote_script_isn);
        let syn = tcp.flags.syn();
        let hl = ip.header_len();
        let doff = usize::from(bytes.get(hl + 12).copied().unwrap_or(0x50) >> 4) * 4;
        let raw = bytes.get(hl + 20..hl + doff).unwrap_or(&[]);
        let mut opts = Vec::new();
        let mut i = 0;
        while i < raw.len() {
            match raw[i] {
                0 => {
                    opts.push(TcpOpt::Eol);
                    break;
                }
                1 => {
                    opts.push(TcpOpt::Nop);
                    i += 1;
                    continue;
                }
                _ => {}
            }
            let len = usize::from(*raw.get(i + 1).unwrap_or(&2)).max(2);
            let body = raw.get(i + 2..(i + len).min(raw.len())).unwrap_or(&[]);
            let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
            match (raw[i], body.len()) {
                (2, 2) => opts.push(TcpOpt::Mss(u16::from_be_bytes([body[0], body[1]]))),
                (3, 1) => opts.push(TcpOpt::WScale(body[0])),
                (4, 0) => opts.push(TcpOpt::SackOk),
                (8, 8) => opts.push(TcpOpt::Ts {
                    val: be32(&body[0..4]),
                    ecr: be32(&body[4..8]),
                }),
                (5, n) if n % 8 == 0 => opts.push(TcpOpt::Sack(
                    body.chunks_exact(8)
                        .map(|b| {
                            (
                                be32(&b[0..4]).wrapping_sub(remote_isn),
                                be32(&b[4..8]).wrapping_sub(remote_isn),
                            )
                        })
                        .collect(),
                )),
                (brisk_wire::mptcp::KIND, _) => match MptcpOption::parse(body) {
                    Ok(o) => opts.push(TcpOpt::Mptcp(self.mp.to_script(&o))),
                    Err(e) => {
                        return fail(format!(
                            "the endpoint sent an MPTCP option that does not parse: {e}"
                        ))
                    }
                },
                (34, _) => opts.push(TcpOpt::FastOpen {
                    exp: false,
                    cookie: body.to_vec(),
                }),
                (254, n) if n >= 2 && body[..2] == [0xF9, 0x89] => opts.push(TcpOpt::FastOpen {
                    exp: true,
                    cookie: body[2..].to_vec(),
                }),
                (k, _) => {
                    return unsupported(format!(
                        "the endpoint sent TCP option kind {k}, which the runner cannot show"
                    ))
                }
            }
            i += len;
        }
        Ok(Packet {
            flags: tcp.flags.bits() & 0xff,
            seq: tcp.seq.0.wrapping_sub(fs.local_isn).wrapping_add(if syn {
                fs.local_script_isn
            } else {
                0
            }),
            len: tcp.payload.len() as u32,
            ack: tcp.flags.ack().then(|| {
                tcp.ack.0.wrapping_sub(remote_isn).wrapping_add(if syn {
                    fs.remote_script_isn
                } else {
                    0
                })
            }),
            win: Some(tcp.window),
            urg: None,
            options: Options::List(opts),
            ecn: None,
            addrs: [None, None],
        })
    }
}

/// Compares a script packet with an actual one (both in script space), as
/// packetdrill's `verify_tcp` and `verify_outbound_live_tcp_options`.
fn compare(want: &Packet, got: &Packet, mp: &mut MpState) -> Result<(), String> {
    if want.flags != got.flags {
        return Err(format!(
            "bad outbound TCP flags: expected {} actual {}",
            flags_str(want.flags),
            flags_str(got.flags)
        ));
    }
    if want.seq != got.seq {
        return Err(format!(
            "bad outbound sequence number: expected {} actual {}",
            want.seq, got.seq
        ));
    }
    if want.len != got.len {
        return Err(format!(
            "bad outbound payload length: expected {} actual {}",
            want.len, got.len
        ));
    }
    if want.flags & flag::ACK != 0 {
        if let Some(a) = want.ack {
            if got.ack != Some(a) {
                return Err(format!(
                    "bad outbound ack number: expected {a} actual {}",
                    got.ack.unwrap_or(0)
                ));
            }
        }
    }
    if let Some(w) = want.win {
        if got.win != Some(w) {
            return Err(format!(
                "bad outbound window: expected {w} actual {}",
                got.win.unwrap_or(0)
            ));
        }
    }
    let got_opts: &[TcpOpt] = match &got.options {
        Options::List(l) => l,
        _ => &[],
    };
    let want_opts: &[TcpOpt] = match &want.options {
        Options::Any => return Ok(()),
        Options::None => &[],
        Options::List(l) => l,
    };
    if want_opts.len() != got_opts.len() {
        // Name the first option that is missing or extra, in script order.
        let n = want_opts.len().min(got_opts.len());
        let at = (0..n)
            .find(|&i| {
                std::mem::discriminant(&want_opts[i]) != std::mem::discriminant(&got_opts[i])
            })
            .unwrap_or(n);
        return Err(match (want_opts.get(at), got_opts.get(at)) {
            (Some(w), Some(g)) => format!(
                "bad outbound TCP options: {} expected, {} sent; option {}: expected {w} actual {g}",
                want_opts.len(),
                got_opts.len(),
                at + 1
            ),
            (Some(w), None) => format!("bad outbound TCP options: expected {w} (option {}), not sent", at + 1),
            (None, Some(g)) => format!("bad outbound TCP options: {g} (option {}) sent, not expected", at + 1),
            (None, None) => "bad outbound TCP options".into(),
        });
    }
    for (w, g) in want_opts.iter().zip(got_opts) {
        let same = match (w, g) {
            (TcpOpt::Ts { .. }, TcpOpt::Ts { .. }) => true,
            (TcpOpt::Mptcp(wm), TcpOpt::Mptcp(gm)) => {
                mp.matches(wm, gm)
                    .map_err(|e| format!("bad outbound MPTCP option: {e}"))?;
                true
            }
            _ => w == g,
        };
        if !same {
            return Err(format!("bad outbound TCP option: expected {w} actual {g}"));
        }
    }
    Ok(())
}

/// An IPv4/TCP packet with the given raw options (padded) and a zero payload.
#[allow(clippy::too_many_arguments)]
fn build_packet(
    src: SocketAddr,
    dst: SocketAddr,
    seq: u32,
    ack: u32,
    flags: u16,
    win: u16,
    urg: u16,
    opts: &[u8],
    len: usize,
    ecn: u8,
) -> Vec<u8> {
    let (IpAddr::V4(s), IpAddr::V4(d)) = (src.ip(), dst.ip()) else {
        return Vec::new();
    };
    let tcp_len = 20 + opts.len() + len;
    let total = 20 + tcp_len;
    let mut b = Vec::with_capacity(total);
    b.extend_from_slice(&[
        0x45,
        ecn & 3,
        (total >> 8) as u8,
        total as u8,
        0,
        0,
        0x40,
        0,
        64,
        6,
        0,
        0,
    ]);
    b.extend_from_slice(&s.octets());
    b.extend_from_slice(&d.octets());
    let c = checksum(&b[..20], 0);
    b[10..12].copy_from_slice(&c.to_be_bytes());
    b.extend_from_slice(&src.port().to_be_bytes());
    b.extend_from_slice(&dst.port().to_be_bytes());
    b.extend_from_slice(&seq.to_be_bytes());
    b.extend_from_slice(&ack.to_be_bytes());
    b.push((((20 + opts.len()) / 4) as u8) << 4);
    b.push(flags as u8);
    b.extend_from_slice(&win.to_be_bytes());
    b.extend_from_slice(&[0, 0]);
    b.extend_from_slice(&urg.to_be_bytes());
    b.extend_from_slice(opts);
    b.resize(total, 0);
    let mut pseudo = 0u32;
    for w in [s.octets(), d.octets()] {
        pseudo += u32::from(u16::from_be_bytes([w[0], w[1]]))
            + u32::from(u16::from_be_bytes([w[2], w[3]]));
    }
    pseudo += 6 + tcp_len as u32;
    let c = checksum(&b[20..], pseudo);
    b[36..38].copy_from_slice(&c.to_be_bytes());
    b
}

/// The Internet checksum (RFC 1071) of `data`, starting from a partial sum.
fn checksum(data: &[u8], mut sum: u32) -> u16 {
    for ch in data.chunks(2) {
        let w = if ch.len() == 2 {
            u16::from_be_bytes([ch[0], ch[1]])
        } else {
            u16::from_be_bytes([ch[0], 0])
        };
        sum += u32::from(w);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// What a call returned: a value, or -1 with an errno name.
type Ret = (i64, Option<&'static str>);

/// What a call did.
enum CallResult {
    Done(Ret),
    /// A blocking call that cannot complete yet.
    WouldBlock,
}

/// System calls.
impl Runner {
    /// Runs a call at `start`; `end` is a blocking call's return time (`start...end`).
    fn syscall(&mut self, line: usize, c: &Syscall, start: i64, end: Option<i64>) -> Step {
        let tol = self.cfg.tolerance_us;
        match self.call(c)? {
            CallResult::Done(ret) => {
                if let Some(end) = end {
                    if end > self.now + tol {
                        return fail(format!(
                            "{} returned at once ({:.6} s) but was expected to block until {:.6} s",
                            c.name,
                            secs(self.now),
                            secs(end)
                        ));
                    }
                }
                check_ret(c, ret)
            }
            CallResult::WouldBlock => {
                self.pending.push(Pending {
                    line,
                    call: c.clone(),
                    end: end.unwrap_or(start),
                });
                Ok(())
            }
        }
    }

    /// Re-tries blocking calls; with `last`, one still blocked is a failure.
    fn check_pending(&mut self, last: bool) -> Step {
        let mut i = 0;
        while i < self.pending.len() {
            let call = self.pending[i].call.clone();
            let line = self.pending[i].line;
            let end = self.pending[i].end;
            let tol = self.cfg.tolerance_us;
            match self.call(&call).map_err(|e| match e {
                Stop::Fail(m) => Stop::FailAt(line, m),
                other => other,
            })? {
                CallResult::Done(ret) => {
                    self.pending.remove(i);
                    if self.now > end + tol || self.now < end - tol {
                        return Err(Stop::FailAt(
                            line,
                            format!(
                                "timing error: expected {} to return at {:.6} s but it returned at {:.6} s; tolerance {:.6} s",
                                call.name,
                                secs(end),
                                secs(self.now),
                                secs(tol)
                            ),
                        ));
                    }
                    check_ret(&call, ret).map_err(|e| match e {
                        Stop::Fail(m) => Stop::FailAt(line, m),
                        other => other,
                    })?;
                }
                CallResult::WouldBlock => {
                    if last || self.now > end + tol {
                        return Err(Stop::FailAt(
                            line,
                            format!(
                                "{} was expected to return by {:.6} s but was still blocked at {:.6} s",
                                call.name,
                                secs(end),
                                secs(self.now)
                            ),
                        ));
                    }
                    i += 1;
                }
            }
        }
        Ok(())
    }

    fn fd(&self, c: &Syscall) -> Result<i64, Stop> {
        match c.args.first().and_then(|a| a.parse::<i64>().ok()) {
            Some(fd) => Ok(fd),
            None => fail(format!(
                "{}: the first argument must be a file descriptor",
                c.name
            )),
        }
    }

    fn conn_fd(&self, c: &Syscall) -> Result<(ConnHandle, bool), Stop> {
        let fd = self.fd(c)?;
        match self.fds.get(&fd) {
            Some(Sock::Conn { h, nonblock, .. }) => Ok((*h, *nonblock)),
            Some(Sock::Closed) | None => Err(Stop::Fail(format!("{}({fd}): EBADF", c.name))),
            Some(_) => unsupported(format!("{} on a socket that is not connected", c.name)),
        }
    }

    fn call(&mut self, c: &Syscall) -> Result<CallResult, Stop> {
        let r = self.call_inner(c);
        if let Ok(CallResult::Done((ret, e))) = &r {
            self.log(format!(
                "{:.6} {}({}) = {ret}{}",
                secs(self.now),
                c.name,
                c.args.join(", "),
                e.map(|e| format!(" {e}")).unwrap_or_default()
            ));
        }
        r
    }

    fn call_inner(&mut self, c: &Syscall) -> Result<CallResult, Stop> {
        use CallResult::*;
        let now = Self::instant(self.now);
        Ok(match c.name.as_str() {
            "socket" => {
                let ty = c.args.get(1).map(String::as_str).unwrap_or("");
                if !ty.contains("SOCK_STREAM") {
                    return unsupported(format!("socket type {ty}"));
                }
                // `IPPROTO_MPTCP` (the MPTCP fork's scripts, Linux's MPTCP sockets):
                // an MPTCP connection, `Config::mptcp` from the sysctls so far.
                let mptcp = c.args.get(2).is_some_and(|p| p == "IPPROTO_MPTCP");
                if mptcp && !self.mptcp_enabled {
                    return Ok(Done((-1, Some("ENOPROTOOPT"))));
                }
                let fd = self.new_fd(c.ret);
                // A new connection: its SYN names the remote ISN again.
                self.remote_isn_set = false;
                self.mp = MpState::new();
                let mut cfg = Box::new(self.cfg.tcp.clone());
                if mptcp {
                    cfg.mptcp = Some(Box::new(self.mptcp_cfg.clone()));
                }
                self.fds.insert(
                    fd,
                    Sock::Fresh {
                        cfg,
                        nonblock: ty.contains("SOCK_NONBLOCK"),
                    },
                );
                Done((fd, None))
            }
            "setsockopt" => {
                let fd = self.fd(c)?;
                let name = c.args.get(2).cloned().unwrap_or_default();
                let val = c.args.get(3).map(|v| int_in(v)).unwrap_or(None);
                self.setsockopt(fd, &name, val)?;
                Done((0, None))
            }
            "fcntl" => {
                let fd = self.fd(c)?;
                let cmd = c.args.get(1).map(String::as_str).unwrap_or("");
                if cmd == "F_GETFL" {
                    // O_RDWR (2), plus O_NONBLOCK (0x800) as Linux's x86 values.
                    let nb = match self.fds.get(&fd) {
                        Some(Sock::Fresh { nonblock, .. })
                        | Some(Sock::Listen { nonblock, .. })
                        | Some(Sock::Conn { nonblock, .. }) => *nonblock,
                        _ => return fail(format!("fcntl({fd}): EBADF")),
                    };
                    return Ok(Done((if nb { 0x802 } else { 0x2 }, None)));
                }
                if cmd != "F_SETFL" {
                    return unsupported(format!("fcntl {cmd}"));
                }
                let nb = c.args.get(2).is_some_and(|a| a.contains("O_NONBLOCK"));
                match self.fds.get_mut(&fd) {
                    Some(Sock::Fresh { nonblock, .. })
                    | Some(Sock::Listen { nonblock, .. })
                    | Some(Sock::Conn { nonblock, .. }) => *nonblock = nb,
                    _ => return fail(format!("fcntl({fd}): EBADF")),
                }
                Done((0, None))
            }
            "bind" => Done((0, None)),
            "listen" => {
                let fd = self.fd(c)?;
                let backlog = c
                    .args
                    .get(1)
                    .and_then(|b| b.parse::<usize>().ok())
                    .unwrap_or(128);
                let Some(Sock::Fresh { mut cfg, nonblock }) = self.fds.remove(&fd) else {
                    return fail(format!("listen({fd}) on a socket that is not fresh"));
                };
                if self.ecn_passive {
                    cfg.ecn.enabled = true;
                }
                // Linux's 0x400 (`TFO_SERVER_WO_SOCKOPT1`): every listener takes Fast
                // Open with the backlog as its queue (`fastopen_queue_tune`).
                if cfg.fastopen.is_none() && self.tfo_bits & 0x402 == 0x402 {
                    cfg.fastopen = Some(Box::new(self.tfo_config(false, backlog as u32)));
                }
                // Linux's backlog is the accept queue; its SYN queue is bounded by
                // tcp_max_syn_backlog, so a listen(3, 1) still takes many SYNs.
                match self.ep.listen(SCRIPT_PORT, backlog.max(1), *cfg) {
                    Ok(()) => {}
                    Err(ConnError::AddrInUse) => {
                        return unsupported(
                            "listen again after closing a listener (brisk's endpoint has no call to stop one)",
                        )
                    }
                    Err(e) => return fail(format!("listen: {e}")),
                }
                self.ports = (SCRIPT_PORT, REMOTE_PORT);
                self.fds.insert(
                    fd,
                    Sock::Listen {
                        port: SCRIPT_PORT,
                        nonblock,
                    },
                );
                Done((0, None))
            }
            "accept" | "accept4" => {
                let fd = self.fd(c)?;
                let Some(Sock::Listen { port, nonblock }) = self.fds.get(&fd) else {
                    return fail(format!("accept({fd}) on a socket that is not listening"));
                };
                let (port, nonblock) = (*port, *nonblock);
                match self.ep.accept(port) {
                    Some(h) => {
                        let nfd = self.new_fd(c.ret);
                        self.fds.insert(
                            nfd,
                            Sock::Conn {
                                h,
                                nonblock: false,
                                rd_shut: false,
                            },
                        );
                        self.cur = Some(h);
                        // Socket flags are inherited from the listener (`sk_clone_lock`).
                        if let Some(mut e) = self.extra.get(&fd).cloned() {
                            e.zc_pending.clear();
                            e.errq.clear();
                            e.zc_next = 0;
                            self.extra.insert(nfd, e);
                        }
                        Done((nfd, None))
                    }
                    None if nonblock => Done((-1, Some("EAGAIN"))),
                    None => WouldBlock,
                }
            }
            "connect" => {
                let fd = self.fd(c)?;
                match self.fds.get(&fd) {
                    Some(Sock::Fresh { .. }) => {
                        let Some(Sock::Fresh { mut cfg, nonblock }) = self.fds.remove(&fd) else {
                            unreachable!("matched just above")
                        };
                        let fo_connect = self.extra.get(&fd).is_some_and(|e| e.fo_connect);
                        if fo_connect && self.tfo_bits & 1 != 0 {
                            cfg.fastopen = Some(Box::new(self.tfo_config(true, 0)));
                        }
                        let remote = SocketAddr::new(IpAddr::V4(REMOTE_IP), SCRIPT_PORT);
                        self.brisk_client = true;
                        self.mp.brisk_client = true;
                        let h = match self.ep.connect(now, 0, remote, *cfg) {
                            Ok(h) => h,
                            Err(e) => return fail(format!("connect: {e}")),
                        };
                        if let Some(conn) = self.ep.conn(h) {
                            self.ports = (conn.local().port(), SCRIPT_PORT);
                        }
                        self.cur = Some(h);
                        self.fds.insert(
                            fd,
                            Sock::Conn {
                                h,
                                nonblock,
                                rd_shut: false,
                            },
                        );
                        // `TCP_FASTOPEN_CONNECT` with a cookie cached: connect returns
                        // 0 at once and the SYN waits for the first write
                        // (`tcp_fastopen_defer_connect`); brisk's SYN leaves at the
                        // next poll, which the write makes.
                        let room = self.ep.conn(h).and_then(|c| c.fastopen_syn_room());
                        if fo_connect && room.is_some() {
                            self.extra.entry(fd).or_default().fo_room = room;
                            return Ok(Done((0, None)));
                        }
                        self.flush();
                        if nonblock {
                            Done((-1, Some("EINPROGRESS")))
                        } else {
                            WouldBlock
                        }
                    }
                    Some(Sock::Conn { h, .. }) => {
                        // The blocking connect re-checked, or a second connect().
                        let s = self.status.get(h).copied().unwrap_or_default();
                        match s.closed {
                            Some(Err(e)) => Done((-1, Some(errno_of(e)))),
                            _ if s.connected => Done((0, None)),
                            _ => WouldBlock,
                        }
                    }
                    _ => return fail(format!("connect({fd}) on a listening or closed socket")),
                }
            }
            // MSG_FASTOPEN, by name or value (0x20000000).
            "sendto" | "send"
                if c.args
                    .get(3)
                    .is_some_and(|f| f.contains("MSG_FASTOPEN") || f == "0x20000000") =>
            {
                return self.sendto_fastopen(c);
            }
            // A connected socket's sendto/recvfrom ignore the address; sendmsg is a
            // send of its iovecs' total.
            "sendto" | "recvfrom" => {
                let mut plain = c.clone();
                plain.name = if c.name == "sendto" { "send" } else { "recv" }.into();
                plain.args.truncate(4);
                return self.call_inner(&plain);
            }
            "sendmsg" => {
                let msg = c.args.get(1).map(String::as_str).unwrap_or("");
                if msg.contains("msg_control") {
                    return unsupported("sendmsg with control messages");
                }
                let Some(n) = iov_total(msg) else {
                    return unsupported("sendmsg without msg_iov lengths");
                };
                let mut plain = c.clone();
                let flags = c.args.get(2).cloned().unwrap_or_else(|| "0".into());
                plain.name = "send".into();
                plain.args = vec![
                    c.args.first().cloned().unwrap_or_default(),
                    "...".into(),
                    n.to_string(),
                    flags.clone(),
                ];
                if flags.contains("MSG_FASTOPEN") {
                    return self.sendto_fastopen(&plain);
                }
                return self.call_inner(&plain);
            }
            "write" | "send" | "read" | "recv" if c.args.get(1).is_some_and(|b| b == "NULL") => {
                // A NULL buffer is a bad user address: Linux's copy fails with EFAULT
                // (for a non-zero length) before any data moves.
                self.conn_fd(c)?;
                if c.args.get(2).is_some_and(|n| n != "0") {
                    Done((-1, Some("EFAULT")))
                } else {
                    Done((0, None))
                }
            }
            "write" | "send" => {
                if c.args.get(1).is_some_and(|b| b != "...") {
                    return unsupported(format!(
                        "{} with an explicit buffer argument ({})",
                        c.name, c.args[1]
                    ));
                }
                let flags = match c.args.get(3).map(String::as_str).unwrap_or("0") {
                    "0x0" => "0",
                    f => f,
                };
                let zerocopy = c.name == "send" && flags == "MSG_ZEROCOPY";
                let eor = c.name == "send" && flags == "MSG_EOR";
                if c.name == "send" && flags != "0" && !zerocopy && !eor {
                    return unsupported(format!("send flags {flags}"));
                }
                let fd = self.fd(c)?;
                if matches!(self.fds.get(&fd), Some(Sock::Fresh { .. })) {
                    // Linux: sending on a socket that never connected is EPIPE.
                    return Ok(Done((-1, Some("EPIPE"))));
                }
                let (h, nonblock) = self.conn_fd(c)?;
                let zerocopy = zerocopy && self.extra.get(&fd).is_some_and(|e| e.zerocopy);
                let end_before = self
                    .ep
                    .conn(h)
                    .map_or(0, |c| c.acked_offset() + c.send_buffered() as u64);
                let mut n = c
                    .args
                    .get(2)
                    .and_then(|n| n.parse::<usize>().ok())
                    .unwrap_or(0);
                // The first write after a deferred Fast Open connect: non-blocking, it
                // returns what the SYN carries (Linux `tcp_sendmsg_fastopen`).
                if let Some(room) = self.extra.get_mut(&fd).and_then(|e| e.fo_room.take()) {
                    if nonblock {
                        n = n.min(room as usize);
                    }
                }
                // Events the endpoint holds for an ended connection (a reset that came
                // before `accept`) are taken first: the error is then this call's.
                if self.ended(h) {
                    self.flush();
                }
                if let Some(e) = self.take_error(h) {
                    return Ok(Done((-1, Some(e))));
                }
                let Some(conn) = self.ep.conn_mut(h) else {
                    return Ok(Done((-1, Some("EPIPE"))));
                };
                // After shutdown(SHUT_WR) or the FIN, Linux's write fails with EPIPE.
                let shut = !matches!(
                    conn.state(),
                    brisk_tcp::State::Established
                        | brisk_tcp::State::CloseWait
                        | brisk_tcp::State::SynSent
                        | brisk_tcp::State::SynReceived
                );
                // A blocking write in progress (re-checked): what is left of it.
                let (total, left) = match self.blocked_write {
                    Some((bh, total, left)) if bh == h && !nonblock => (total, left),
                    _ => (n, n),
                };
                // Only what fits is built (the script's length is not trusted).
                let fits = left.min(conn.send_capacity());
                let w = if shut || fits == 0 {
                    0
                } else {
                    conn.write(&vec![0u8; fits])
                };
                self.flush();
                if shut && n > 0 {
                    self.blocked_write = None;
                    Done((-1, Some("EPIPE")))
                } else if nonblock {
                    if w == 0 && n > 0 {
                        Done((-1, Some("EAGAIN")))
                    } else {
                        if eor && w == n {
                            if let Some(conn) = self.ep.conn_mut(h) {
                                conn.end_record();
                            }
                        }
                        if zerocopy && w > 0 {
                            self.zerocopy_sent(fd, end_before + w as u64);
                        }
                        Done((w as i64, None))
                    }
                } else if w < left {
                    // Linux's blocking write copies all of it, sleeping in
                    // `sk_stream_wait_memory` while the buffer is full.
                    self.blocked_write = Some((h, total, left - w));
                    WouldBlock
                } else {
                    self.blocked_write = None;
                    if eor {
                        if let Some(conn) = self.ep.conn_mut(h) {
                            conn.end_record();
                        }
                    }
                    if zerocopy && total > 0 {
                        // The stream's end after this (last) part of the write.
                        self.zerocopy_sent(fd, end_before + w as u64);
                    }
                    Done((total as i64, None))
                }
            }
            "read" | "recv" => {
                if c.args.get(1).is_some_and(|b| b != "...") {
                    return unsupported(format!(
                        "{} with an explicit buffer argument ({})",
                        c.name, c.args[1]
                    ));
                }
                if c.name == "recv" && c.args.get(3).is_some_and(|f| f != "0") {
                    return unsupported(format!("recv flags {}", c.args[3]));
                }
                let n = c
                    .args
                    .get(2)
                    .and_then(|n| n.parse::<usize>().ok())
                    .unwrap_or(0);
                self.read(c, n)?
            }
            "recvmsg" => self.recvmsg(c)?,
            "epoll_create" | "epoll_create1" => {
                let fd = self.new_fd(c.ret);
                self.fds.insert(fd, Sock::Epoll(Vec::new()));
                Done((fd, None))
            }
            "epoll_ctl" => {
                let ep = self.fd(c)?;
                let op = c.args.get(1).cloned().unwrap_or_default();
                let fd: i64 = c
                    .args
                    .get(2)
                    .and_then(|a| a.parse().ok())
                    .ok_or(Stop::Fail(
                        "epoll_ctl: the third argument must be a descriptor".into(),
                    ))?;
                let mask = c.args.get(3).and_then(|a| events_arg(a));
                let events = match mask.map(epoll_mask) {
                    Some(Some(m)) => m,
                    Some(None) => {
                        return unsupported(format!("epoll events {}", mask.unwrap_or("")))
                    }
                    None if op == "EPOLL_CTL_DEL" => 0,
                    None => return unsupported("epoll_ctl without {events=..., fd=N}"),
                };
                let Some(Sock::Epoll(list)) = self.fds.get_mut(&ep) else {
                    return Ok(Done((-1, Some("EINVAL"))));
                };
                let interest = Interest {
                    fd,
                    events: events & !(ev::ET | ev::ONESHOT | ev::EXCLUSIVE),
                    edge: events & ev::ET != 0,
                    oneshot: events & ev::ONESHOT != 0,
                    disarmed: false,
                };
                let at = list.iter().position(|i| i.fd == fd);
                match (op.as_str(), at) {
                    ("EPOLL_CTL_ADD", None) => list.push(interest),
                    ("EPOLL_CTL_ADD", Some(_)) => return Ok(Done((-1, Some("EEXIST")))),
                    ("EPOLL_CTL_MOD", Some(i)) => list[i] = interest,
                    ("EPOLL_CTL_DEL", Some(i)) => {
                        list.remove(i);
                    }
                    ("EPOLL_CTL_MOD" | "EPOLL_CTL_DEL", None) => {
                        return Ok(Done((-1, Some("ENOENT"))))
                    }
                    (other, _) => return unsupported(format!("epoll_ctl {other}")),
                }
                // ADD and MOD poll the file at once (`ep_insert`, `ep_modify`): a ready
                // file is reported by the next wait, edge-triggered or not.
                self.extra.entry(fd).or_default().woken = true;
                Done((0, None))
            }
            "epoll_wait" | "epoll_pwait" => self.epoll_wait(c)?,
            "ioctl" => {
                let fd = self.fd(c)?;
                let req = c.args.get(1).map(String::as_str).unwrap_or("");
                let h = match self.fds.get(&fd) {
                    Some(Sock::Conn { h, .. }) => *h,
                    _ => {
                        return unsupported(format!(
                            "ioctl {req} on a socket that is not connected"
                        ))
                    }
                };
                let Some(conn) = self.ep.conn(h) else {
                    return Ok(Done((-1, Some("EINVAL"))));
                };
                let got = match req {
                    // Bytes ready to read (the FIN is not one).
                    "SIOCINQ" | "FIONREAD" => conn.readable() as i64,
                    // Bytes not yet acknowledged, and not yet sent.
                    "SIOCOUTQ" | "TIOCOUTQ" => conn.send_buffered() as i64,
                    "SIOCOUTQNSD" => {
                        let written = conn.acked_offset() + conn.send_buffered() as u64;
                        written.saturating_sub(conn.sent_offset()) as i64
                    }
                    other => return unsupported(format!("ioctl {other}")),
                };
                if let Some(want) = c.args.get(2).and_then(|v| int_in(v)) {
                    if want != got {
                        return fail(format!("ioctl {req}: expected value {want} but got {got}"));
                    }
                }
                Done((0, None))
            }
            "close" => {
                let fd = self.fd(c)?;
                match self.fds.insert(fd, Sock::Closed) {
                    Some(Sock::Conn { h, .. }) => {
                        if let Some(conn) = self.ep.conn_mut(h) {
                            conn.close();
                        }
                        self.flush();
                        Done((0, None))
                    }
                    // Linux `inet_csk_listen_stop`: unaccepted children are reset.
                    Some(Sock::Listen { port, .. }) => {
                        self.ep.unlisten(port);
                        self.flush();
                        Done((0, None))
                    }
                    Some(Sock::Fresh { .. }) | Some(Sock::Epoll(_)) => Done((0, None)),
                    Some(Sock::Closed) | None => Done((-1, Some("EBADF"))),
                }
            }
            "shutdown" => {
                let (h, _) = self.conn_fd(c)?;
                let how = c.args.get(1).map(String::as_str).unwrap_or("");
                match how {
                    "SHUT_WR" | "SHUT_RDWR" => {
                        if let Some(conn) = self.ep.conn_mut(h) {
                            conn.shutdown_write();
                        }
                        self.flush();
                        if how == "SHUT_RDWR" {
                            if let Some(Sock::Conn { rd_shut, .. }) = self.fds.get_mut(&self.fd(c)?)
                            {
                                *rd_shut = true;
                            }
                        }
                    }
                    "SHUT_RD" => {
                        if let Some(Sock::Conn { rd_shut, .. }) = self.fds.get_mut(&self.fd(c)?) {
                            *rd_shut = true;
                        }
                    }
                    other => return unsupported(format!("shutdown how={other}")),
                }
                Done((0, None))
            }
            "getsockopt" => {
                let fd = self.fd(c)?;
                let name = c.args.get(2).cloned().unwrap_or_default();
                let got = self.getsockopt(fd, &name)?;
                // The expected value, `[N]`; `...` accepts any.
                if let Some(want) = c.args.get(3).and_then(|v| int_in(v)) {
                    if want != got {
                        return fail(format!(
                            "getsockopt {name}: expected value {want} but got {got}"
                        ));
                    }
                }
                Done((0, None))
            }
            other => return unsupported(format!("system call {other}")),
        })
    }

    /// The poll bits of a descriptor now, as Linux's `tcp_poll`.
    fn poll_bits(&self, fd: i64) -> u32 {
        let extra = self.extra.get(&fd);
        let errq = extra.is_some_and(|e| !e.errq.is_empty());
        let mut m = if errq { ev::ERR } else { 0 };
        let Some(Sock::Conn { h, .. }) = self.fds.get(&fd) else {
            return m;
        };
        let st = self.status.get(h).copied().unwrap_or_default();
        let Some(conn) = self.ep.conn(*h) else {
            return m | ev::HUP | ev::IN | ev::RDHUP;
        };
        if matches!(st.closed, Some(Err(_))) && !st.error_reported {
            m |= ev::ERR;
        }
        if conn.readable() > 0 || st.peer_closed {
            m |= ev::IN;
        }
        if st.peer_closed {
            m |= ev::RDHUP;
        }
        let established = !matches!(
            conn.state(),
            brisk_tcp::State::SynSent | brisk_tcp::State::SynReceived
        );
        // `sk_stream_is_writeable`: free space at least half of what is queued.
        if established
            && conn.send_capacity() > 0
            && conn.send_capacity() * 2 >= conn.send_buffered()
        {
            m |= ev::OUT;
        }
        m
    }

    /// `epoll_wait(epfd, {events=..., fd=N}, maxevents, 0)`: level-triggered
    /// registrations report while ready; edge-triggered ones when something happened
    /// on the socket since they last reported; one-shot ones once until re-armed.
    fn epoll_wait(&mut self, c: &Syscall) -> Result<CallResult, Stop> {
        let ep = self.fd(c)?;
        let timeout = c.args.get(3).map(String::as_str).unwrap_or("0");
        if timeout != "0" {
            return unsupported("epoll_wait with a timeout (only 0, a poll, is run)");
        }
        let max: usize = c.args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1);
        let Some(Sock::Epoll(list)) = self.fds.get(&ep) else {
            return Ok(CallResult::Done((-1, Some("EINVAL"))));
        };
        let watched: Vec<(i64, u32, bool, bool)> = list
            .iter()
            .filter(|i| !i.disarmed)
            .map(|i| (i.fd, i.events, i.edge, i.oneshot))
            .collect();
        let mut got: Vec<(i64, u32)> = Vec::new();
        for (fd, events, edge, oneshot) in watched {
            if got.len() >= max {
                break;
            }
            let bits = self.poll_bits(fd) & (events | ev::ERR | ev::HUP);
            let woken = self.extra.get(&fd).is_some_and(|e| e.woken);
            if bits == 0 || (edge && !woken) {
                continue;
            }
            if edge {
                self.extra.entry(fd).or_default().woken = false;
            }
            if oneshot {
                if let Some(Sock::Epoll(list)) = self.fds.get_mut(&ep) {
                    if let Some(i) = list.iter_mut().find(|i| i.fd == fd) {
                        i.disarmed = true;
                    }
                }
            }
            got.push((fd, bits));
        }
        if let Some(want) = c.args.get(1).and_then(|a| events_arg(a)) {
            match epoll_mask(want) {
                Some(w) => {
                    let actual = got.first().map_or(0, |g| g.1);
                    if w != actual {
                        return fail(format!(
                            "epoll_wait: expected events {want} but got {}",
                            epoll_names(actual)
                        ));
                    }
                }
                None => return unsupported(format!("epoll events {want}")),
            }
        }
        Ok(CallResult::Done((got.len() as i64, None)))
    }

    /// `read(fd, ..., n)` and the data part of `recvmsg`.
    fn read(&mut self, c: &Syscall, n: usize) -> Result<CallResult, Stop> {
        use CallResult::*;
        let (h, nonblock) = self.conn_fd(c)?;
        // After shutdown(SHUT_RD), Linux's read returns what is buffered, and 0
        // instead of blocking when nothing is.
        let rd_shut = matches!(
            self.fds.get(&self.fd(c)?),
            Some(Sock::Conn { rd_shut: true, .. })
        );
        // Bytes kept from an ended connection come first (`keep_unread`); events
        // the endpoint holds for it are taken before.
        if self.ended(h) {
            self.flush();
        }
        let fd = self.fd(c)?;
        if let Some(e) = self.extra.get_mut(&fd).filter(|e| !e.unread.is_empty()) {
            let k = n.min(e.unread.len());
            e.unread.drain(..k);
            return Ok(Done((k as i64, None)));
        }
        // Only what is readable is built (the script's length is not trusted).
        let avail = self.ep.conn(h).map_or(0, |conn| conn.readable());
        let mut buf = vec![0u8; n.min(avail)];
        let got = self.ep.conn_mut(h).map_or(0, |conn| conn.read(&mut buf));
        self.flush();
        Ok(if got > 0 || n == 0 || rd_shut {
            Done((got as i64, None))
        } else if let Some(e) = self.take_error(h).filter(|e| *e != "EPIPE") {
            // `sk_err` once; after it a reset socket reads end of file (Linux).
            Done((-1, Some(e)))
        } else if self
            .status
            .get(&h)
            .is_some_and(|s| s.peer_closed || s.closed.is_some())
        {
            Done((0, None))
        } else if nonblock {
            Done((-1, Some("EAGAIN")))
        } else {
            WouldBlock
        })
    }

    /// `recvmsg`: data with a `TCP_CM_INQ` control message (`TCP_INQ`), or with
    /// `MSG_ERRQUEUE` a zerocopy completion (`SO_ZEROCOPY`). The expected control
    /// message's fields are compared with what Linux would report.
    fn recvmsg(&mut self, c: &Syscall) -> Result<CallResult, Stop> {
        use CallResult::*;
        let fd = self.fd(c)?;
        let msg = c.args.get(1).map(String::as_str).unwrap_or("");
        let flags = c.args.get(2).map(String::as_str).unwrap_or("0");
        if flags.contains("MSG_ERRQUEUE") {
            let extra = self.extra.entry(fd).or_default();
            let Some((lo, hi)) = extra.errq.pop_front() else {
                return Ok(Done((-1, Some("EAGAIN"))));
            };
            for (field, got) in [("ee_info", lo), ("ee_data", hi)] {
                if let Some(want) = field_value(msg, field) {
                    if want != i64::from(got) {
                        return fail(format!(
                            "recvmsg: expected zerocopy completion {field}={want} but got {got} (completed range {lo}..={hi})"
                        ));
                    }
                }
            }
            if msg.contains("ee_origin=") && !msg.contains("SO_EE_ORIGIN_ZEROCOPY") {
                return unsupported("recvmsg MSG_ERRQUEUE other than zerocopy completions");
            }
            return Ok(Done((0, None)));
        }
        if flags != "0" {
            return unsupported(format!("recvmsg flags {flags}"));
        }
        let n = iov_len(msg).ok_or(Stop::Unsupported(
            "recvmsg without one msg_iov length".into(),
        ))?;
        let r = self.read(c, n)?;
        if let Done((_, None)) = r {
            if msg.contains("TCP_CM_INQ") {
                let h = self.conn_fd(c)?.0;
                let readable = self.ep.conn(h).map_or(0, |conn| conn.readable());
                // Linux's `tcp_inq`: 1 once everything is read and the FIN is in, so
                // that the reader learns to read the EOF.
                let peer_closed = self.status.get(&h).is_some_and(|s| s.peer_closed);
                let inq = if readable == 0 && peer_closed {
                    1
                } else {
                    readable
                };
                if !self.extra.get(&fd).is_some_and(|e| e.inq) {
                    return fail("recvmsg: a TCP_CM_INQ message expected without TCP_INQ set");
                }
                if let Some(want) = field_value(msg, "cmsg_data") {
                    if want != inq as i64 {
                        return fail(format!("recvmsg: expected TCP_CM_INQ {want} but got {inq}"));
                    }
                }
            } else if msg.contains("cmsg_type") {
                return unsupported("recvmsg control messages other than TCP_CM_INQ");
            }
        }
        Ok(r)
    }

    /// One notification ID per zerocopy send that queued bytes (Linux's `sk_zckey`);
    /// it completes when every byte up to `end` is acknowledged.
    fn zerocopy_sent(&mut self, fd: i64, end: u64) {
        let extra = self.extra.entry(fd).or_default();
        let id = extra.zc_next;
        extra.zc_next = id.wrapping_add(1);
        extra.zc_pending.push_back((id, end));
    }

    /// Moves zerocopy sends whose bytes are all acknowledged to the error queue,
    /// merging a completion into the previous one when their IDs are consecutive
    /// (Linux's `__msg_zerocopy_callback`).
    fn zerocopy_update(&mut self) {
        for (fd, extra) in self.extra.iter_mut() {
            if extra.zc_pending.is_empty() {
                continue;
            }
            let Some(Sock::Conn { h, .. }) = self.fds.get(fd) else {
                continue;
            };
            let Some(conn) = self.ep.conn(*h) else {
                continue;
            };
            let acked = conn.acked_offset();
            while let Some(&(id, end)) = extra.zc_pending.front() {
                if end > acked {
                    break;
                }
                extra.zc_pending.pop_front();
                extra.woken = true;
                match extra.errq.back_mut() {
                    Some((_, hi)) if hi.wrapping_add(1) == id => *hi = id,
                    _ => extra.errq.push_back((id, id)),
                }
            }
        }
    }

    /// A new descriptor: the one the script expects if it is free (packetdrill maps
    /// script descriptors to live ones, so their numbers are the script's), else the
    /// lowest unused from 3.
    fn new_fd(&mut self, want: Option<i64>) -> i64 {
        if let Some(w) =
            want.filter(|w| *w >= 0 && matches!(self.fds.get(w), None | Some(Sock::Closed)))
        {
            return w;
        }
        while self.fds.contains_key(&self.next_fd) {
            self.next_fd += 1;
        }
        self.next_fd
    }

    /// A connection's pending error, reported once (then EPIPE for writes).
    fn take_error(&mut self, h: ConnHandle) -> Option<&'static str> {
        let s = self.status.get_mut(&h)?;
        match s.closed {
            Some(Err(e)) if !s.error_reported => {
                s.error_reported = true;
                Some(errno_of(e))
            }
            Some(_) => Some("EPIPE"),
            None => None,
        }
    }

    fn setsockopt(&mut self, fd: i64, name: &str, val: Option<i64>) -> Step {
        let v = val.unwrap_or(0);
        match name {
            // Runner-side APIs: a zerocopy send is a copying send whose completion
            // is reported when acknowledged; TCP_INQ adds a control message.
            "SO_ZEROCOPY" => {
                self.extra.entry(fd).or_default().zerocopy = v != 0;
                return Ok(());
            }
            "TCP_INQ" => {
                self.extra.entry(fd).or_default().inq = v != 0;
                return Ok(());
            }
            // A packet mark for routing and filtering: nothing in TCP depends on it.
            "SO_MARK" => return Ok(()),
            "TCP_FASTOPEN_CONNECT" if matches!(self.fds.get(&fd), Some(Sock::Fresh { .. })) => {
                self.extra.entry(fd).or_default().fo_connect = v != 0;
                return Ok(());
            }
            "TCP_FASTOPEN" => {
                // The listener's queue of pending Fast Open requests (`fastopenq.max_qlen`).
                let q = u32::try_from(v).unwrap_or(0);
                let fo = Some(Box::new(self.tfo_config(false, q)));
                match self.fds.get_mut(&fd) {
                    Some(Sock::Fresh { cfg, .. }) => cfg.fastopen = fo,
                    Some(Sock::Listen { port, .. }) => {
                        let port = *port;
                        let Some(mut cfg) = self.ep.listen_config(port).cloned() else {
                            return fail(format!("setsockopt({fd}): the listener is gone"));
                        };
                        cfg.fastopen = fo;
                        if let Err(e) = self.ep.set_listen_config(port, cfg) {
                            return fail(format!("setsockopt on a listener: {e}"));
                        }
                    }
                    _ => return unsupported("setsockopt TCP_FASTOPEN on a connected socket"),
                }
                return Ok(());
            }
            _ => {}
        }
        let cfg = match self.fds.get_mut(&fd) {
            Some(Sock::Fresh { cfg, .. }) => cfg,
            Some(Sock::Conn { h, .. }) => {
                let h = *h;
                let Some(conn) = self.ep.conn_mut(h) else {
                    return Ok(());
                };
                match name {
                    "SO_REUSEADDR" | "SO_REUSEPORT" => {}
                    "SO_SNDBUF" => conn.set_send_buffer(linux_sndbuf(v)),
                    "TCP_NODELAY" => conn.set_nagle(v == 0),
                    "TCP_USER_TIMEOUT" => conn.set_user_timeout(
                        (v > 0).then(|| brisk_tcp::Duration::from_millis(v as u64)),
                    ),
                    _ => {
                        return unsupported(format!(
                            "setsockopt {name} on a connected socket (brisk has no run-time counterpart)"
                        ))
                    }
                }
                self.flush();
                return Ok(());
            }
            Some(Sock::Listen { port, .. }) => {
                let port = *port;
                if matches!(name, "SO_REUSEADDR" | "SO_REUSEPORT") {
                    return Ok(());
                }
                // Options set on a listener apply to connections it accepts later.
                let Some(mut cfg) = self.ep.listen_config(port).cloned() else {
                    return fail(format!("setsockopt({fd}): the listener is gone"));
                };
                match name {
                    "SO_SNDBUF" => cfg.send_buffer = linux_sndbuf(v),
                    "TCP_MAXSEG" if (88..=65_535).contains(&v) => cfg.mss = v as u16,
                    "TCP_NODELAY" => cfg.nagle = v == 0,
                    _ => {
                        return unsupported(format!(
                            "setsockopt {name} on a listener (no counterpart in brisk's listener config)"
                        ))
                    }
                }
                if let Err(e) = self.ep.set_listen_config(port, cfg) {
                    return fail(format!("setsockopt on a listener: {e}"));
                }
                return Ok(());
            }
            _ => return fail(format!("setsockopt({fd}): EBADF")),
        };
        match name {
            "SO_REUSEADDR" | "SO_REUSEPORT" => {}
            "SO_SNDBUF" => cfg.send_buffer = linux_sndbuf(v),
            "TCP_MAXSEG" if (88..=65_535).contains(&v) => cfg.mss = v as u16,
            "TCP_NODELAY" => cfg.nagle = v == 0,
            "TCP_USER_TIMEOUT" => {
                cfg.timeouts.user_timeout =
                    (v > 0).then(|| brisk_tcp::Duration::from_millis(v as u64));
            }
            "SO_KEEPALIVE" => {
                cfg.timeouts.keepalive = (v != 0).then(|| brisk_tcp::Duration::from_secs(7200));
            }
            "TCP_KEEPIDLE" if v > 0 => {
                cfg.timeouts.keepalive = Some(brisk_tcp::Duration::from_secs(v as u64));
            }
            "TCP_KEEPINTVL" if v > 0 => {
                cfg.timeouts.keepalive_interval = brisk_tcp::Duration::from_secs(v as u64);
            }
            "TCP_KEEPCNT" if v > 0 => cfg.timeouts.keepalive_probes = v as u32,
            "TCP_LINGER2" if v > 0 => {
                cfg.timeouts.fin_timeout = brisk_tcp::Duration::from_secs(v as u64);
            }
            other => return unsupported(format!("setsockopt {other}")),
        }
        Ok(())
    }

    /// A socket option's value as Linux's `getsockopt` reports it.
    fn getsockopt(&mut self, fd: i64, name: &str) -> Result<i64, Stop> {
        let h = match self.fds.get(&fd) {
            Some(Sock::Conn { h, .. }) => Some(*h),
            Some(Sock::Fresh { cfg, .. }) => {
                return match name {
                    "SO_SNDBUF" => Ok(cfg.send_buffer as i64),
                    // Linux: the user's MSS if set, else TCP_MSS_DEFAULT (536).
                    "TCP_MAXSEG" if cfg.mss != self.cfg.tcp.mss => Ok(i64::from(cfg.mss)),
                    "TCP_MAXSEG" => Ok(536),
                    "SO_ERROR" => Ok(0),
                    "TCP_NOTSENT_LOWAT" => Ok(0),
                    _ => unsupported(format!("getsockopt {name}")),
                };
            }
            Some(Sock::Listen { port, .. }) => {
                let cfg = self.ep.listen_config(*port);
                return match (name, cfg) {
                    ("TCP_MAXSEG", Some(c)) if c.mss != self.cfg.tcp.mss => Ok(i64::from(c.mss)),
                    ("TCP_MAXSEG", _) => Ok(536),
                    ("SO_SNDBUF", Some(c)) => Ok(c.send_buffer as i64),
                    ("SO_ERROR" | "TCP_NOTSENT_LOWAT", _) => Ok(0),
                    _ => unsupported(format!("getsockopt {name} on a listener")),
                };
            }
            _ => return fail(format!("getsockopt({fd}): EBADF")),
        };
        match (name, h) {
            ("SO_ERROR", Some(h)) => Ok(match self.take_error(h) {
                Some("EPIPE") | None => 0,
                Some(e) => errno_number(e),
            }),
            ("SO_SNDBUF", Some(h)) => Ok(self.ep.conn(h).map_or(0, |c| c.send_buffer() as i64)),
            ("TCP_MAXSEG", Some(h)) => Ok(self.ep.conn(h).map_or(536, |c| i64::from(c.mss()))),
            // brisk has no TCP_NOTSENT_LOWAT: its value is Linux's default, 0 (off).
            ("TCP_NOTSENT_LOWAT", _) => Ok(0),
            _ => unsupported(format!("getsockopt {name}")),
        }
    }

    /// Shell commands: `defaults.sh` is this runner's Linux profile; `sysctl`s with a
    /// brisk counterpart change the config of sockets created after them.
    fn shell(&mut self, line: usize, cmd: &str) -> Step {
        let mut unknown = Vec::new();
        let joined = cmd.replace("\\\n", " ");
        for part in joined
            .split([';', '\n'])
            .flat_map(|p| p.split("&&"))
            .flat_map(|p| p.split("||"))
        {
            let part = part.split('#').next().unwrap_or("").trim();
            if part.is_empty() {
                continue;
            }
            if part.ends_with("defaults.sh") {
                // The rest of defaults.sh is `linux_defaults`; its Fast Open lines
                // (server on every listener, the fixed key) are applied here.
                self.tfo_bits = 0x7_0403;
                self.tfo_keys = parse_tfo_keys("a1a1a1a1-b2b2b2b2-c3c3c3c3-d4d4d4d4");
                continue;
            }
            let mut words = part.split_whitespace();
            let prog = words.next().unwrap_or("");
            if prog == "ethtool" && part.contains(" tso off") {
                self.cfg.tso = false;
                continue;
            }
            if prog == "ip" && part.contains("tcp_metrics flush") {
                // The TCP metrics hold Linux's Fast Open cookies: brisk's cache.
                self.ep.fastopen_flush_cache();
                continue;
            }
            if prog == "tc" {
                // Queueing disciplines on the tun device: no counterpart, no effect here.
                continue;
            }
            if prog == "ip" && part.contains(" mptcp limits set ") {
                // `ip mptcp limits set subflows N add_addr_accepted N` (Linux allows 0-8):
                // applied only if every value is valid, as `ip` refuses the command.
                let w: Vec<&str> = part.split_whitespace().collect();
                let mut limits = self.mptcp_cfg.pm.limits;
                let mut ok = true;
                for pair in w.windows(2) {
                    let n = pair[1].parse::<u8>().ok().filter(|n| *n <= 8);
                    match (pair[0], n) {
                        ("subflows", Some(n)) => limits.subflows = n,
                        ("add_addr_accepted", Some(n)) => limits.add_addr_accepted = n,
                        ("subflows" | "add_addr_accepted", None) => ok = false,
                        _ => {}
                    }
                }
                if ok {
                    self.mptcp_cfg.pm.limits = limits;
                } else {
                    unknown.push(part.chars().take(60).collect::<String>());
                }
                continue;
            }
            if prog == "ip" && part.contains(" route ") {
                let w: Vec<&str> = part.split_whitespace().collect();
                let mut known = true;
                let mut i = 0;
                while i < w.len() {
                    match (w[i], w.get(i + 1).and_then(|v| v.parse::<u32>().ok())) {
                        ("advmss", Some(m)) => self.cfg.tcp.mss = m.min(65_535) as u16,
                        ("initcwnd", Some(c)) => self.cfg.tcp.congestion.initial_cwnd = c,
                        ("mtu" | "lock" | "via" | "dev" | "change" | "add" | "replace", _) => {}
                        (x, _)
                            if x.contains('.')
                                || x.contains(':')
                                || x == "tun0"
                                || x == "ip"
                                || x == "-6"
                                || x == "route"
                                || x.parse::<u32>().is_ok() => {}
                        _ => known = false,
                    }
                    i += 1;
                }
                if !known {
                    unknown.push(part.chars().take(60).collect::<String>());
                }
                continue;
            }
            if !(prog == "sysctl" || prog.ends_with("set_sysctls.py")) {
                unknown.push(part.chars().take(60).collect::<String>());
                continue;
            }
            for kv in words.filter(|w| w.contains('=')) {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                let k = k.trim_start_matches("/proc/sys/").replace('/', ".");
                let v = v.trim_matches('"');
                if !self.sysctl(&k, v) {
                    unknown.push(format!("{k}={v}"));
                }
            }
        }
        if !unknown.is_empty() {
            self.skipped
                .push((line, format!("shell: {}", unknown.join("; "))));
        }
        Ok(())
    }

    /// A socket's Fast Open configuration from the sysctls: a client (`sendto`
    /// with `MSG_FASTOPEN`, `TCP_FASTOPEN_CONNECT`) or a listener with queue `q`.
    fn tfo_config(&self, client: bool, q: u32) -> brisk_tcp::tfo::TfoConfig {
        brisk_tcp::tfo::TfoConfig {
            client: client && self.tfo_bits & 1 != 0,
            server: !client && self.tfo_bits & 2 != 0,
            max_pending: q,
            keys: self.tfo_keys,
            ..brisk_tcp::tfo::TfoConfig::default()
        }
    }

    /// `sendto(fd, ..., n, MSG_FASTOPEN, ..., ...)` (Linux `tcp_sendmsg_fastopen`): on
    /// a fresh socket, connect with Fast Open and put the data on the SYN if a cookie
    /// is cached. Non-blocking, it returns what the SYN carries, or EINPROGRESS when
    /// the SYN asks for a cookie (the data is not taken); blocking, it returns `n`
    /// once the handshake is done. On a connected socket it is a `send`.
    fn sendto_fastopen(&mut self, c: &Syscall) -> Result<CallResult, Stop> {
        use CallResult::*;
        let fd = self.fd(c)?;
        let n = c
            .args
            .get(2)
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0);
        if let Some(Sock::Conn { h, .. }) = self.fds.get(&fd) {
            let h = *h;
            if let Some(ret) = self.extra.get(&fd).and_then(|e| e.fo_blocked) {
                let s = self.status.get(&h).copied().unwrap_or_default();
                return Ok(match s.closed {
                    Some(Err(e)) => {
                        self.extra.entry(fd).or_default().fo_blocked = None;
                        Done((-1, Some(errno_of(e))))
                    }
                    _ if s.connected => {
                        self.extra.entry(fd).or_default().fo_blocked = None;
                        Done((ret as i64, None))
                    }
                    _ => WouldBlock,
                });
            }
            // After the handshake MSG_FASTOPEN is ignored.
            let mut plain = c.clone();
            plain.name = "send".into();
            plain.args.truncate(3);
            plain.args.push("0".into());
            return self.call_inner(&plain);
        }
        let Some(Sock::Fresh { mut cfg, nonblock }) = self.fds.remove(&fd) else {
            return fail(format!("sendto({fd}): EBADF"));
        };
        let flags = c.args.get(3).map(String::as_str).unwrap_or("");
        if let Some(f) = flags.split('|').map(str::trim).find(|f| {
            !matches!(
                *f,
                "MSG_FASTOPEN" | "0x20000000" | "MSG_DONTWAIT" | "MSG_NOSIGNAL"
            )
        }) {
            self.fds.insert(fd, Sock::Fresh { cfg, nonblock });
            return unsupported(format!("sendto flag {f} with MSG_FASTOPEN"));
        }
        // MSG_DONTWAIT: this call is non-blocking.
        let call_nonblock = nonblock || flags.contains("MSG_DONTWAIT");
        if self.tfo_bits & 1 != 0 {
            cfg.fastopen = Some(Box::new(self.tfo_config(true, 0)));
        }
        let now = Self::instant(self.now);
        let remote = SocketAddr::new(IpAddr::V4(REMOTE_IP), SCRIPT_PORT);
        self.brisk_client = true;
        self.mp.brisk_client = true;
        let h = match self.ep.connect(now, 0, remote, *cfg) {
            Ok(h) => h,
            Err(e) => return fail(format!("sendto(MSG_FASTOPEN): {e}")),
        };
        if let Some(conn) = self.ep.conn(h) {
            self.ports = (conn.local().port(), SCRIPT_PORT);
        }
        self.cur = Some(h);
        self.fds.insert(
            fd,
            Sock::Conn {
                h,
                nonblock,
                rd_shut: false,
            },
        );
        let room = self.ep.conn(h).and_then(|c| c.fastopen_syn_room());
        let take = match room {
            Some(r) if call_nonblock => n.min(r as usize),
            Some(_) => n,
            // A cookie request: non-blocking, the data is not taken; blocking, it
            // goes after the handshake.
            None if call_nonblock => 0,
            None => n,
        };
        if take > 0 {
            if let Some(conn) = self.ep.conn_mut(h) {
                let fits = take.min(conn.send_capacity());
                conn.write(&vec![0u8; fits]);
            }
        }
        self.flush();
        if call_nonblock {
            return Ok(if take > 0 {
                Done((take as i64, None))
            } else {
                Done((-1, Some("EINPROGRESS")))
            });
        }
        self.extra.entry(fd).or_default().fo_blocked = Some(n);
        Ok(WouldBlock)
    }

    fn sysctl(&mut self, k: &str, v: &str) -> bool {
        let n: Option<u64> = v.parse().ok();
        if let Some(m) = k.strip_prefix("net.mptcp.") {
            let Some(n @ 0..=1) = n else { return false };
            match m {
                "enabled" => self.mptcp_enabled = n == 1,
                "checksum_enabled" => self.mptcp_cfg.checksum = n == 1,
                "allow_join_initial_addr_port" => {
                    self.mptcp_cfg.allow_join_initial_addr_port = n == 1
                }
                _ => return false,
            }
            return true;
        }
        if k.trim_start_matches("net.ipv4.") == "tcp_syncookies" {
            // 0: off; 1: when the SYN queue is full (Linux's default); 2: always.
            let Some(n @ 0..=2) = n else { return false };
            self.ep.set_syncookies(n >= 1, n == 2);
            return true;
        }
        match k.trim_start_matches("net.ipv4.") {
            "tcp_fastopen" => {
                let n = match v.strip_prefix("0x") {
                    Some(h) => u32::from_str_radix(h, 16).ok(),
                    None => v.parse().ok(),
                };
                // Bits the runner knows: client 0x1, server 0x2, 0x400 (listeners
                // without the socket option) and the obsolete 0x70000 queue bits;
                // others (no-cookie modes) are refused, so the script is skipped.
                let Some(n) = n.filter(|n| n & !0x7_0403 == 0) else {
                    return false;
                };
                self.tfo_bits = n;
                return true;
            }
            "tcp_fastopen_key" => {
                let Some(keys) = parse_tfo_keys(v) else {
                    return false;
                };
                self.tfo_keys = Some(keys);
                return true;
            }
            // 0: no global black-hole back-off (Linux's default since 5.14).
            "tcp_fastopen_blackhole_timeout_sec" => return n == Some(0),
            _ => {}
        }
        if k.trim_start_matches("net.ipv4.") == "tcp_ecn" {
            // 1: request and accept ECN; 2: accept only (Linux's default).
            self.cfg.tcp.ecn.enabled = n == Some(1);
            self.ecn_passive = n == Some(2);
            return n.is_some_and(|n| n <= 2);
        }
        let c = &mut self.cfg.tcp;
        match (k.trim_start_matches("net.ipv4."), n) {
            ("tcp_timestamps", Some(n)) => c.options.timestamps = n != 0,
            ("tcp_sack", Some(n)) => c.options.sack = n != 0,
            ("tcp_window_scaling", Some(n)) => c.options.window_scaling = n != 0,
            ("tcp_slow_start_after_idle", Some(n)) => c.congestion.slow_start_after_idle = n != 0,
            ("tcp_syn_retries", Some(n)) => c.timeouts.syn_retries = n as u32,
            ("tcp_fin_timeout", Some(n)) => {
                c.timeouts.fin_timeout = brisk_tcp::Duration::from_secs(n)
            }
            ("tcp_frto", Some(n)) => c.recovery.frto = n != 0,
            // Values that are already brisk's (defaults.sh's own settings).
            ("tcp_dsack", Some(1)) | ("tcp_fack", Some(0)) | ("tcp_reordering", Some(3)) => {}
            ("tcp_congestion_control", _) if v == "cubic" => {}
            ("tcp_early_retrans", Some(3 | 4)) => c.recovery.tlp = true,
            ("tcp_recovery", Some(n)) => c.recovery.rack = n & 1 != 0,
            _ => return false,
        }
        true
    }
}

/// `net.ipv4.tcp_fastopen_key`: "primary[,backup]", each four hex words
/// `xxxxxxxx-xxxxxxxx-xxxxxxxx-xxxxxxxx`, stored as Linux does (each word
/// little-endian).
fn parse_tfo_keys(v: &str) -> Option<([u8; 16], Option<[u8; 16]>)> {
    let one = |k: &str| -> Option<[u8; 16]> {
        let words: Vec<&str> = k.split('-').collect();
        if words.len() != 4 {
            return None;
        }
        let mut key = [0u8; 16];
        for (i, w) in words.iter().enumerate() {
            let n = u32::from_str_radix(w, 16).ok()?;
            key[4 * i..4 * i + 4].copy_from_slice(&n.to_le_bytes());
        }
        Some(key)
    };
    let mut parts = v.split(',');
    let primary = one(parts.next()?)?;
    let backup = match parts.next() {
        Some(b) => Some(one(b)?),
        None => None,
    };
    parts.next().is_none().then_some((primary, backup))
}

/// The errno Linux reports for a connection error.
fn errno_of(e: ConnError) -> &'static str {
    match e {
        ConnError::Reset => "ECONNRESET",
        ConnError::Refused => "ECONNREFUSED",
        ConnError::TimedOut { .. } | ConnError::UserTimeout | ConnError::KeepaliveTimeout => {
            "ETIMEDOUT"
        }
        ConnError::Aborted => "ECONNABORTED",
        ConnError::AddrInUse => "EADDRINUSE",
        ConnError::TableFull => "ENOBUFS",
        ConnError::Unsupported => "EOPNOTSUPP",
    }
}

/// Linux's `SO_SNDBUF`: the value is clamped to `net.core.wmem_max` (212992 by
/// default) and doubled for bookkeeping overhead, at least `SOCK_MIN_SNDBUF` (4608).
/// brisk counts payload bytes only, so the doubled value is its byte limit.
fn linux_sndbuf(v: i64) -> usize {
    (v.clamp(0, 212_992) as usize * 2).max(4_608)
}

/// Linux's (x86) errno numbers, for `SO_ERROR`.
fn errno_number(e: &str) -> i64 {
    match e {
        "ECONNRESET" => 104,
        "ECONNREFUSED" => 111,
        "ETIMEDOUT" => 110,
        "ECONNABORTED" => 103,
        "EADDRINUSE" => 98,
        "ENOBUFS" => 105,
        "EOPNOTSUPP" => 95,
        _ => 5, // EIO
    }
}

/// Epoll bits by name, for messages.
fn epoll_names(m: u32) -> String {
    let mut v = Vec::new();
    for (b, n) in [
        (ev::IN, "EPOLLIN"),
        (ev::OUT, "EPOLLOUT"),
        (ev::ERR, "EPOLLERR"),
        (ev::HUP, "EPOLLHUP"),
        (ev::RDHUP, "EPOLLRDHUP"),
    ] {
        if m & b != 0 {
            v.push(n);
        }
    }
    if v.is_empty() {
        "0".into()
    } else {
        v.join("|")
    }
}

/// The number after `name=` in a `recvmsg` structure, if written as a number.
fn field_value(msg: &str, name: &str) -> Option<i64> {
    let at = msg.find(&format!("{name}="))? + name.len() + 1;
    let rest = msg[at..].trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '-'))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// The total length of `msg_iov(N)=[{..., a}, {..., b}, ...]`.
fn iov_total(msg: &str) -> Option<usize> {
    let at = msg.find("msg_iov(")?;
    let rest = &msg[at..];
    let open = rest.find("=[")? + 2;
    let body = &rest[open..open + rest[open..].find(']')?];
    let mut total = 0usize;
    for part in body.split('}') {
        let Some(len) = part.rsplit(',').next() else {
            continue;
        };
        let len = len.trim();
        if len.is_empty() {
            continue;
        }
        total = total.checked_add(len.parse::<usize>().ok()?)?;
    }
    Some(total)
}

/// The buffer length of `msg_iov(1)=[{..., N}]`.
fn iov_len(msg: &str) -> Option<usize> {
    let at = msg.find("msg_iov(1)=[{")? + "msg_iov(1)=[{".len();
    let inner = &msg[at..at + msg[at..].find('}')?];
    inner.rsplit(',').next()?.trim().parse().ok()
}

/// The first integer in a value like `[1]`, `1` or `{...}`.
fn int_in(s: &str) -> Option<i64> {
    let t = s.trim_matches(|c| c == '[' || c == ']' || c == ' ');
    t.parse().ok()
}

fn check_ret(c: &Syscall, (ret, errno): Ret) -> Step {
    let Some(want) = c.ret else { return Ok(()) };
    let want_errno = c.errno.as_deref();
    if want != ret || (want < 0 && want_errno.is_some() && want_errno != errno) {
        let show = |r: i64, e: Option<&str>| match e {
            Some(e) => format!("{r} {e}"),
            None => r.to_string(),
        };
        return fail(format!(
            "{}: expected result {} but got {}",
            c.name,
            show(want, want_errno),
            show(ret, errno)
        ));
    }
    Ok(())
}
