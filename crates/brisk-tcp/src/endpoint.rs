//! The endpoint: one local address, its listeners and a bounded connection table.
//! It parses incoming packets, drops and counts bad ones, demultiplexes by 4-tuple,
//! answers segments for no socket with RST (RFC 9293 §3.10.7.1), and emits wire bytes.
//!
//! Limits (RFC 4987 §3.1; tested in `tests/listener.rs`): a listener holds at most
//! `backlog` half-open connections and `backlog` unaccepted ones; further SYNs are
//! dropped unanswered (`drop_backlog_full`), as is the ACK that would complete a
//! handshake while the accept queue is full (Linux `listen_overflow`: the connection
//! retransmits its SYN-ACK until there is room or its 5 retries, about 63 s, run out).
//! The table holds at most `max_connections`, TIME-WAIT included (`drop_table_full`).
//!
//! Cost per operation does not grow with the number of connections: connections with
//! possible output sit in a FIFO ready queue (round-robin), and deadlines sit in a
//! min-heap with lazy invalidation — each connection has at most one live heap entry,
//! registered at its earliest known deadline; an entry that surfaces early simply
//! re-registers the connection's current deadline.

use crate::cc::spec::{CcContext, CcFactory, HostCc, StandardCcFactory};
use crate::cc::CongestionControl;
use crate::config::Config;
use crate::conn::{isn, Connection, Setup, State};
use crate::event::{ConnError, Event};
use crate::stats::EndpointStats;
use brisk_time::Instant;
use brisk_wire::{
    emit_tcp_packet, parse_tcp_packet, Ecn, Flags, IpRepr, Ipv4Repr, ParseError, SeqNum, TcpRepr,
    IPPROTO_TCP,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// Endpoint-wide settings.
#[derive(Clone, Debug)]
pub struct EndpointConfig {
    /// RFC 6528 secret key for ISN generation. RFC 6528 §3 needs it unknown to an
    /// off-path attacker, so `default()` draws it from the OS; only simulators and
    /// tests, whose peers are not attackers, should set a known value.
    pub isn_secret: [u8; 16],
    /// Seed for the endpoint's ChaCha RNG (ephemeral ports, jitter).
    pub rng_seed: u64,
    /// Connection-table limit; beyond it new connections are refused and counted.
    pub max_connections: usize,
    /// Defaults for connections accepted by listeners.
    pub default_config: Config,
    /// Builds each connection's congestion controller from its `Config::congestion`
    /// spec, with the connection's seed and the host's shared `HostCc`.
    pub cc_factory: Arc<dyn CcFactory>,
}

/// The OS random number generator could not be read (`getrandom(2)` or the
/// platform's equivalent, through the `getrandom` crate).
#[derive(Debug, thiserror::Error)]
#[error("the OS random number generator failed: {0}")]
pub struct OsRngError(getrandom::Error);

impl EndpointConfig {
    /// Defaults with the given ISN secret and RNG seed: for simulators, tests and
    /// replays, where the same inputs must give the same bytes out.
    pub fn seeded(isn_secret: [u8; 16], rng_seed: u64) -> Self {
        EndpointConfig {
            isn_secret,
            rng_seed,
            max_connections: 65_536,
            default_config: Config::default(),
            cc_factory: Arc::new(StandardCcFactory),
        }
    }

    /// Defaults with the ISN secret and RNG seed drawn from the OS, each on its own
    /// (the seed steers observable choices such as ephemeral ports, so it must not
    /// reveal the secret). Use this where a failure must be reported, not panic.
    pub fn from_os_rng() -> Result<Self, OsRngError> {
        let mut isn_secret = [0u8; 16];
        getrandom::getrandom(&mut isn_secret).map_err(OsRngError)?;
        let mut seed = [0u8; 8];
        getrandom::getrandom(&mut seed).map_err(OsRngError)?;
        Ok(Self::seeded(isn_secret, u64::from_le_bytes(seed)))
    }
}

impl Default for EndpointConfig {
    /// [`EndpointConfig::from_os_rng`]: a library or socket user who takes the
    /// defaults gets unpredictable ISNs (RFC 6528) without asking. A fixed secret
    /// here would be public, and with it every ISN predictable from the 4-tuple and
    /// the clock.
    ///
    /// # Panics
    ///
    /// If the OS random number generator fails; falling back to a known secret
    /// silently would defeat RFC 6528. Callers that must not panic use
    /// `from_os_rng` (or `seeded`).
    fn default() -> Self {
        Self::from_os_rng().unwrap_or_else(|e| panic!("EndpointConfig::default: {e}"))
    }
}

/// A stable handle to a connection in the endpoint's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnHandle(pub u32);

/// Metadata of an emitted packet (the bytes are in the caller's buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub conn: Option<ConnHandle>,
    pub len: usize,
    pub ecn: Ecn,
    pub dscp: u8,
}

/// Linux's default ephemeral range (`ip_local_port_range`).
const EPHEMERAL: (u16, u16) = (32_768, 60_999);
/// Bound on queued stateless RSTs (excess are dropped, counted as not sent).
const MAX_PENDING_RSTS: usize = 1024;
/// Bound on queued application events across connections.
const MAX_EVENTS: usize = 1 << 16;
const TTL: u8 = 64;

struct Listener {
    backlog: usize,
    config: Config,
    /// Connections in SYN-RECEIVED not yet established.
    syn_queue: usize,
    accept: VecDeque<ConnHandle>,
}

struct Slot {
    conn: Connection,
    /// Listener port while the connection is passive and not yet accepted.
    listener: Option<u16>,
    /// In the listener's accept queue (established, not yet accepted).
    queued: bool,
    in_ready: bool,
    /// Deadline of this slot's live heap entry.
    registered: Option<Instant>,
    /// Closed event handed out: reap.
    closed: bool,
}

/// A stateless reply (RST for a segment to no socket).
#[derive(Clone, Copy)]
struct Reply {
    remote: SocketAddr,
    local_port: u16,
    seq: SeqNum,
    ack: Option<SeqNum>,
}

/// See the module doc.
pub struct Endpoint {
    local: IpAddr,
    config: EndpointConfig,
    rng: ChaCha8Rng,
    slots: Vec<Option<Slot>>,
    free: VecDeque<u32>,
    live: usize,
    table: HashMap<(u16, SocketAddr), ConnHandle>,
    listeners: HashMap<u16, Listener>,
    ready: VecDeque<ConnHandle>,
    timers: BinaryHeap<Reverse<(Instant, u32)>>,
    events: VecDeque<(ConnHandle, Event)>,
    replies: VecDeque<Reply>,
    stats: EndpointStats,
    ip_ident: u16,
    next_seed: u64,
    host_cc: HostCc,
}

impl Endpoint {
    pub fn new(local: IpAddr, config: EndpointConfig) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(config.rng_seed);
        let next_seed = rng.gen();
        Endpoint {
            local,
            config,
            rng,
            slots: Vec::new(),
            free: VecDeque::new(),
            live: 0,
            table: HashMap::new(),
            listeners: HashMap::new(),
            ready: VecDeque::new(),
            timers: BinaryHeap::new(),
            events: VecDeque::new(),
            replies: VecDeque::new(),
            stats: EndpointStats::default(),
            ip_ident: 0,
            next_seed,
            host_cc: HostCc::default(),
        }
    }

    pub fn local_addr(&self) -> IpAddr {
        self.local
    }

    /// Starts listening on `port` with an accept backlog of `backlog` connections.
    pub fn listen(&mut self, port: u16, backlog: usize, config: Config) -> Result<(), ConnError> {
        if port == 0 {
            return Err(ConnError::Unsupported);
        }
        if self.listeners.contains_key(&port) {
            return Err(ConnError::AddrInUse);
        }
        self.listeners.insert(
            port,
            Listener {
                backlog: backlog.max(1),
                config,
                syn_queue: 0,
                accept: VecDeque::new(),
            },
        );
        Ok(())
    }

    /// Active open. `local_port` 0 picks an ephemeral port.
    pub fn connect(
        &mut self,
        now: Instant,
        local_port: u16,
        remote: SocketAddr,
        config: Config,
    ) -> Result<ConnHandle, ConnError> {
        if !matches!((self.local, remote.ip()), (IpAddr::V4(_), IpAddr::V4(_))) {
            return Err(ConnError::Unsupported);
        }
        if self.live >= self.config.max_connections {
            self.stats.drop_table_full += 1;
            return Err(ConnError::TableFull);
        }
        let port = if local_port == 0 {
            self.pick_ephemeral(remote)?
        } else {
            if self.table.contains_key(&(local_port, remote)) {
                return Err(ConnError::AddrInUse);
            }
            local_port
        };
        let local = SocketAddr::new(self.local, port);
        let setup = self.setup(now, local, remote, config);
        let conn = Connection::connect(now, setup);
        let h = self.insert(conn, None);
        self.touch(h);
        Ok(h)
    }

    /// Takes the next established connection from `port`'s accept queue.
    pub fn accept(&mut self, port: u16) -> Option<ConnHandle> {
        let l = self.listeners.get_mut(&port)?;
        let h = l.accept.pop_front()?;
        if let Some(slot) = self.slot_mut(h) {
            slot.queued = false;
            slot.listener = None;
        }
        // Events that arrived before accept (data, FIN, close) are delivered now.
        self.touch(h);
        Some(h)
    }

    /// One IP packet from the network.
    pub fn handle_packet(&mut self, now: Instant, packet: &[u8]) {
        self.stats.packets_in += 1;
        let (ip, tcp) = match parse_tcp_packet(packet) {
            Ok(p) => p,
            Err(ParseError::BadChecksum | ParseError::BadIpChecksum) => {
                self.stats.drop_checksum += 1;
                return;
            }
            Err(_) => {
                self.stats.drop_parse += 1;
                return;
            }
        };
        if ip.dst() != self.local {
            self.stats.drop_not_local += 1;
            return;
        }
        let remote = SocketAddr::new(ip.src(), tcp.src_port);
        if let Some(&h) = self.table.get(&(tcp.dst_port, remote)) {
            self.deliver(now, h, ip.ecn(), ip.dscp(), &tcp);
            return;
        }
        let f = tcp.flags;
        if f.syn() && !f.ack() && !f.rst() && self.listeners.contains_key(&tcp.dst_port) {
            self.on_listen_syn(now, remote, &tcp);
            return;
        }
        self.stats.drop_no_socket += 1;
        self.reply_rst(tcp.dst_port, remote, &tcp);
    }

    fn deliver(&mut self, now: Instant, h: ConnHandle, ecn: Ecn, dscp: u8, tcp: &TcpRepr<'_>) {
        if self.accept_overflow(h, tcp) {
            self.stats.drop_backlog_full += 1;
            return;
        }
        let Some(slot) = self.slot_mut(h) else { return };
        let before = *slot.conn.counters();
        slot.conn.handle_segment_dscp(now, ecn, dscp, tcp);
        let after = *slot.conn.counters();
        self.stats.drop_paws += after.paws_drops - before.paws_drops;
        self.stats.drop_out_of_window += after.out_of_window - before.out_of_window;
        self.stats.challenge_acks += after.challenge_acks - before.challenge_acks;
        self.stats.oow_acks_suppressed += after.oow_acks_suppressed - before.oow_acks_suppressed;
        self.touch(h);
    }

    /// Linux `tcp_check_req` on a full accept queue (`listen_overflow`): the ACK that
    /// would complete a passive handshake is dropped, so the connection stays in
    /// SYN-RECEIVED and retransmits its SYN-ACK until the application makes room or
    /// the SYN-ACK retries run out. Keeps the accept queue within the backlog.
    fn accept_overflow(&self, h: ConnHandle, tcp: &TcpRepr<'_>) -> bool {
        let Some(slot) = self.slots.get(h.0 as usize).and_then(|s| s.as_ref()) else {
            return false;
        };
        let f = tcp.flags;
        let completes = f.ack() && !f.rst() && !f.syn();
        completes
            && !slot.queued
            && slot.conn.state() == State::SynReceived
            && slot
                .listener
                .and_then(|port| self.listeners.get(&port))
                .is_some_and(|l| l.accept.len() >= l.backlog)
    }

    /// RFC 9293 §3.10.7.2: a SYN to a listener creates a connection in SYN-RECEIVED,
    /// within the backlog and table limits.
    fn on_listen_syn(&mut self, now: Instant, remote: SocketAddr, tcp: &TcpRepr<'_>) {
        let port = tcp.dst_port;
        let Some(l) = self.listeners.get(&port) else {
            return;
        };
        if l.syn_queue >= l.backlog || l.accept.len() >= l.backlog {
            self.stats.drop_backlog_full += 1;
            return;
        }
        if self.live >= self.config.max_connections {
            self.stats.drop_table_full += 1;
            return;
        }
        if !matches!(remote.ip(), IpAddr::V4(_)) {
            self.stats.drop_parse += 1;
            return;
        }
        let config = l.config.clone();
        let local = SocketAddr::new(self.local, port);
        let setup = self.setup(now, local, remote, config);
        let conn = Connection::accept(now, setup, tcp);
        if let Some(l) = self.listeners.get_mut(&port) {
            l.syn_queue += 1;
        }
        let h = self.insert(conn, Some(port));
        self.touch(h);
    }

    /// RFC 9293 §3.10.7.1: never answer an RST; an ACK gets `<SEQ=SEG.ACK><CTL=RST>`,
    /// anything else `<SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>`.
    fn reply_rst(&mut self, local_port: u16, remote: SocketAddr, tcp: &TcpRepr<'_>) {
        if tcp.flags.rst() || !matches!(remote.ip(), IpAddr::V4(_)) {
            return;
        }
        if self.replies.len() >= MAX_PENDING_RSTS {
            return;
        }
        let reply = if tcp.flags.ack() {
            Reply {
                remote,
                local_port,
                seq: tcp.ack,
                ack: None,
            }
        } else {
            Reply {
                remote,
                local_port,
                seq: SeqNum(0),
                ack: Some(tcp.seq + tcp.seg_len()),
            }
        };
        self.replies.push_back(reply);
    }

    /// Writes the next packet to send into `out` (cleared first).
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant, out: &mut Vec<u8>) -> Option<Transmit> {
        if let Some(r) = self.replies.pop_front() {
            let mut flags = Flags::RST;
            if r.ack.is_some() {
                flags.insert(Flags::ACK);
            }
            let tcp = TcpRepr {
                src_port: r.local_port,
                dst_port: r.remote.port(),
                seq: r.seq,
                ack: r.ack.unwrap_or(SeqNum(0)),
                flags,
                ..TcpRepr::default()
            };
            let ip = self.ip_repr(r.remote.ip(), Ecn::NotEct, 0)?;
            emit_tcp_packet(&ip, &tcp, out);
            self.stats.rst_sent += 1;
            self.stats.packets_out += 1;
            return Some(Transmit {
                conn: None,
                len: out.len(),
                ecn: Ecn::NotEct,
                dscp: 0,
            });
        }
        while let Some(h) = self.ready.pop_front() {
            let Some(slot) = self.slots.get_mut(h.0 as usize).and_then(|s| s.as_mut()) else {
                continue;
            };
            slot.in_ready = false;
            let Some(seg) = slot.conn.poll_transmit(now) else {
                self.touch_events_and_timer(h);
                continue;
            };
            let remote = slot.conn.remote().ip();
            let payload = slot.conn.payload(&seg);
            let tcp = seg.to_repr(payload);
            let dscp = seg.meta.dscp;
            let ecn = seg.meta.ecn;
            let Some(ip) = ip_repr(self.local, remote, ecn, dscp, self.ip_ident) else {
                continue;
            };
            emit_tcp_packet(&ip, &tcp, out);
            if seg.header.flags.rst() {
                self.stats.rst_sent += 1;
            }
            self.ip_ident = self.ip_ident.wrapping_add(1);
            self.stats.packets_out += 1;
            // More may follow: round-robin to the back of the queue.
            self.touch(h);
            return Some(Transmit {
                conn: Some(h),
                len: out.len(),
                ecn,
                dscp,
            });
        }
        None
    }

    /// The earliest time `handle_timeout` should be called (possibly early; a spurious
    /// call is harmless).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.timers.peek().map(|Reverse((t, _))| *t)
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some(&Reverse((t, idx))) = self.timers.peek() {
            if t > now {
                break;
            }
            self.timers.pop();
            let h = ConnHandle(idx);
            let Some(slot) = self.slot_mut(h) else {
                continue;
            };
            if slot.registered != Some(t) {
                continue; // stale entry
            }
            slot.registered = None;
            slot.conn.handle_timeout(now);
            self.touch(h);
        }
    }

    #[must_use]
    pub fn poll_event(&mut self) -> Option<(ConnHandle, Event)> {
        let (h, ev) = self.events.pop_front()?;
        if matches!(ev, Event::Closed(_)) {
            if let Some(slot) = self.slot_mut(h) {
                slot.closed = true;
            }
            self.reap(h);
        }
        Some((h, ev))
    }

    pub fn conn(&self, h: ConnHandle) -> Option<&Connection> {
        self.slots.get(h.0 as usize)?.as_ref().map(|s| &s.conn)
    }

    /// Mutable access for application calls; the connection is re-examined for output
    /// and timers on the next `poll_transmit` / `poll_timeout`.
    pub fn conn_mut(&mut self, h: ConnHandle) -> Option<&mut Connection> {
        self.slots.get(h.0 as usize)?.as_ref()?;
        // Whatever the caller does may create output or change timers.
        self.mark_ready(h);
        self.slots
            .get_mut(h.0 as usize)?
            .as_mut()
            .map(|s| &mut s.conn)
    }

    pub fn stats(&self) -> &EndpointStats {
        &self.stats
    }

    /// Live connections in the table.
    pub fn connection_count(&self) -> usize {
        self.live
    }

    /// Sizes of the endpoint's containers (slots, 4-tuple table, timer heap, events,
    /// queued RSTs), for tests and fuzz targets that check memory stays bounded under
    /// load.
    pub fn footprint(&self) -> [usize; 5] {
        [
            self.slots.len(),
            self.table.len(),
            self.timers.len(),
            self.events.len(),
            self.replies.len(),
        ]
    }

    // ----- internals -----

    /// What a new connection is made of: an RFC 6528 ISN, the next seed from the
    /// endpoint's RNG, and the controller the factory builds with that seed.
    fn setup(
        &mut self,
        now: Instant,
        local: SocketAddr,
        remote: SocketAddr,
        config: Config,
    ) -> Setup {
        let iss = isn::initial_seq(now, local, remote, &self.config.isn_secret);
        let seed = self.seed();
        let cc = self.build_cc(&config, seed);
        Setup {
            local,
            remote,
            config,
            iss,
            seed,
            cc,
        }
    }

    fn build_cc(&self, config: &Config, seed: u64) -> Box<dyn CongestionControl> {
        let ctx = CcContext {
            seed,
            host: &self.host_cc,
        };
        self.config
            .cc_factory
            .build(&config.congestion.controller, ctx)
    }

    /// The state shared by this host's congestion controllers.
    pub fn host_cc(&self) -> &HostCc {
        &self.host_cc
    }

    fn seed(&mut self) -> u64 {
        let s = self.next_seed;
        self.next_seed = self.rng.gen();
        s
    }

    fn ip_repr(&self, remote: IpAddr, ecn: Ecn, dscp: u8) -> Option<IpRepr> {
        ip_repr(self.local, remote, ecn, dscp, self.ip_ident)
    }

    fn pick_ephemeral(&mut self, remote: SocketAddr) -> Result<u16, ConnError> {
        let span = u32::from(EPHEMERAL.1 - EPHEMERAL.0) + 1;
        let start = self.rng.gen_range(0..span);
        for i in 0..span {
            let port = EPHEMERAL.0 + ((start + i) % span) as u16;
            if !self.table.contains_key(&(port, remote)) && !self.listeners.contains_key(&port) {
                return Ok(port);
            }
        }
        Err(ConnError::TableFull)
    }

    fn slot_mut(&mut self, h: ConnHandle) -> Option<&mut Slot> {
        self.slots.get_mut(h.0 as usize)?.as_mut()
    }

    fn insert(&mut self, conn: Connection, listener: Option<u16>) -> ConnHandle {
        let key = (conn.local().port(), conn.remote());
        let slot = Slot {
            conn,
            listener,
            queued: false,
            in_ready: false,
            registered: None,
            closed: false,
        };
        // FIFO reuse keeps a just-freed handle from being reissued at once.
        let idx = match self.free.pop_front() {
            Some(i) => {
                self.slots[i as usize] = Some(slot);
                i
            }
            None => {
                self.slots.push(Some(slot));
                (self.slots.len() - 1) as u32
            }
        };
        let h = ConnHandle(idx);
        self.table.insert(key, h);
        self.live += 1;
        h
    }

    fn reap(&mut self, h: ConnHandle) {
        let Some(slot) = self.slots.get_mut(h.0 as usize).and_then(|s| s.take()) else {
            return;
        };
        let key = (slot.conn.local().port(), slot.conn.remote());
        if self.table.get(&key) == Some(&h) {
            self.table.remove(&key);
        }
        if let Some(port) = slot.listener {
            if let Some(l) = self.listeners.get_mut(&port) {
                if slot.queued {
                    l.accept.retain(|&x| x != h);
                } else {
                    l.syn_queue = l.syn_queue.saturating_sub(1);
                }
            }
        }
        self.live -= 1;
        self.free.push_back(h.0);
    }

    fn mark_ready(&mut self, h: ConnHandle) {
        if let Some(slot) = self.slot_mut(h) {
            if !slot.in_ready {
                slot.in_ready = true;
                self.ready.push_back(h);
            }
        }
    }

    /// After any input to a connection: queue it for output, collect its events and
    /// register its deadline.
    fn touch(&mut self, h: ConnHandle) {
        self.mark_ready(h);
        self.touch_events_and_timer(h);
    }

    fn touch_events_and_timer(&mut self, h: ConnHandle) {
        let Some(slot) = self.slots.get_mut(h.0 as usize).and_then(|s| s.as_mut()) else {
            return;
        };
        let unaccepted = slot.listener.is_some() && !slot.queued;
        let queued = slot.queued;
        // Passive connections report to the application only once accepted.
        let mut closed_unaccepted = false;
        let mut became_established = false;
        if !queued {
            while let Some(ev) = slot.conn.poll_event() {
                if unaccepted {
                    match ev {
                        Event::Connected => became_established = true,
                        Event::Closed(_) => closed_unaccepted = true,
                        _ => {}
                    }
                    if became_established {
                        // Keep data/FIN events for after accept.
                        break;
                    }
                } else if self.events.len() < MAX_EVENTS {
                    self.events.push_back((h, ev));
                }
            }
        }
        let deadline = slot.conn.poll_timeout();
        let register = match (deadline, slot.registered) {
            (Some(d), Some(r)) => d < r,
            (Some(_), None) => true,
            _ => false,
        };
        if register {
            // NOTE(unwrap): `register` implies `deadline` is Some.
            let d = deadline.unwrap();
            slot.registered = Some(d);
            self.timers.push(Reverse((d, h.0)));
        }
        let listener = slot.listener;
        if became_established {
            slot.queued = true;
            if let Some(port) = listener {
                if let Some(l) = self.listeners.get_mut(&port) {
                    l.syn_queue = l.syn_queue.saturating_sub(1);
                    l.accept.push_back(h);
                    self.events.push_back((h, Event::Incoming { port }));
                }
            }
        } else if closed_unaccepted {
            self.reap(h);
        }
    }
}

fn ip_repr(local: IpAddr, remote: IpAddr, ecn: Ecn, dscp: u8, ident: u16) -> Option<IpRepr> {
    let (IpAddr::V4(src), IpAddr::V4(dst)) = (local, remote) else {
        return None;
    };
    Some(IpRepr::V4(Ipv4Repr {
        src,
        dst,
        protocol: IPPROTO_TCP,
        dscp,
        ecn,
        ttl: TTL,
        ident,
        dont_frag: true,
        payload_len: 0,
    }))
}

#[cfg(test)]
mod config_tests {
    use super::EndpointConfig;

    /// RFC 6528: the default ISN secret is unpredictable, not a constant of the source.
    #[test]
    fn default_isn_secret_and_seed_come_from_the_os() {
        let a = EndpointConfig::default();
        let b = EndpointConfig::default();
        assert_ne!(a.isn_secret, [0x5a; 16], "the old public constant");
        assert_ne!(a.isn_secret, b.isn_secret);
        assert_ne!(a.rng_seed, b.rng_seed);
    }

    /// Simulators and replays get exactly what they pass.
    #[test]
    fn seeded_keeps_the_given_values() {
        let c = EndpointConfig::seeded([7; 16], 42);
        assert_eq!((c.isn_secret, c.rng_seed), ([7; 16], 42));
    }
}
