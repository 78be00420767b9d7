//! The endpoint: its local addresses (one IPv4, one IPv6 or both), its listeners and
//! a bounded connection table. It parses incoming packets, drops and counts bad ones,
//! demultiplexes by 4-tuple, answers segments for no socket with RST (RFC 9293
//! §3.10.7.1), and emits wire bytes.
//!
//! Dual stack: an endpoint made with [`Endpoint::dual_stack`] has one address of each
//! family. Its listeners accept both, as a Linux socket bound to `::` with
//! `IPV6_V6ONLY=0` does, and each connection uses the local address of its peer's
//! family. A peer is always named by its native address: an IPv4-mapped IPv6 address
//! (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2) given to `connect` means that IPv4 peer, and
//! is connected over IPv4, as Linux does for a dual-stack socket; on the wire such an
//! address in an IPv6 header is invalid and the packet is dropped (Linux
//! `tcp_v6_conn_request`, `ip6_rcv_core`). With one address per family, the peer's
//! address fixes the local one, so the table key stays `(local port, remote)`.
//! Over IPv6 a connection advertises and sends 20 bytes less MSS than `Config::mss`
//! (the IPv6 header is 40 bytes, not 20: MSS = MTU − 60, as Linux's IPv6 advmss).
//!
//! Limits (RFC 4987 §3.1; tested in `tests/listener.rs`): a listener holds at most
//! `backlog` half-open connections and `backlog` unaccepted ones; further SYNs are
//! dropped unanswered (`drop_backlog_full`), as is the ACK that would complete a
//! handshake while the accept queue is full (Linux `listen_overflow`: the connection
//! retransmits its SYN-ACK until there is room or its 5 retries, about 63 s, run out).
//! The table holds at most `max_connections`, TIME-WAIT included (`drop_table_full`).
//! With `EndpointConfig::syncookies` (the default, Linux `tcp_syncookies = 1`) a SYN
//! that finds the SYN queue full is answered with a SYN cookie instead
//! (`crate::syncookie`), keeping no state; the ACK returning a valid cookie creates the
//! connection. A full accept queue still drops SYNs, as in Linux `tcp_conn_request`.
//!
//! Cost per operation does not grow with the number of connections: connections with
//! possible output sit in a FIFO ready queue (round-robin), and deadlines sit in a
//! min-heap with lazy invalidation (`crate::timer_heap`): each connection has at most
//! one live entry, registered at its earliest known deadline, and the heap holds at
//! most 2 × armed connections + 64 entries at all times (issues 13 and 29).

mod config;
mod conn_configs;
mod dual;
mod fastopen;
mod join;
mod listen;
mod listeners;
mod table;

pub use config::{EndpointConfig, OsRngError};
pub use conn_configs::ConnConfigs;
pub use dual::{DualConnect, InSpaceStats};
pub use fastopen::{ClientCounters as FastOpenClientCounters, FastOpenStats};

use crate::cc::host::{HostCc, HostHome};
use crate::cc::spec::CcContext;
use crate::cc::FlowCc;
use crate::config::Config;
use crate::conn::{isn, Connection, Setup, State};
use crate::event::{ConnError, Event};
use crate::mem::MemAccount;
use crate::stats::EndpointStats;
use crate::syncookie::{self, SynCookies};
use crate::timer_heap::TimerHeap;
use brisk_time::Instant;
use brisk_wire::{
    emit_tcp_packet, parse_tcp_packet_into, parse_tcp_packet_trusted_into, Ecn, Flags, IpRepr,
    Ipv4Repr, Ipv6Repr, ParseError, SeqNum, TcpRepr, IPPROTO_TCP,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

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
/// What the IPv6 header costs over the IPv4 one, taken off `Config::mss` for IPv6
/// connections (RFC 8200 §4: 40 bytes against 20).
const V6_EXTRA_HEADER: u16 = 20;
/// The least MSS an IPv6 connection advertises: IPv6's minimum link MTU, 1280 (RFC
/// 8200 §5), less 60 bytes of headers. `Config::mss` below it (tests, simulations of
/// tiny MSS) is used unchanged.
const V6_MIN_MSS: u16 = 1220;
/// Most local addresses of one endpoint ([`Endpoint::add_address`]).
pub const MAX_ADDRESSES: usize = 8;

/// Why [`Endpoint::add_address`] refused an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    #[error("address {0} is already one of this endpoint's")]
    Duplicate(IpAddr),
    #[error("address {0} cannot be a host's (unspecified, loopback, multicast, broadcast or IPv4-mapped)")]
    Unusable(IpAddr),
    #[error("an endpoint has at most {max} addresses")]
    TooMany { max: usize },
}

struct Listener {
    backlog: usize,
    config: Arc<Config>,
    /// Connections in SYN-RECEIVED not yet established.
    syn_queue: usize,
    accept: VecDeque<ConnHandle>,
    /// When the SYN queue last overflowed (Linux `tcp_synq_overflow`): ACKs are
    /// checked as SYN cookies only within `syncookie::COOKIE_VALID` of it.
    last_overflow: Option<Instant>,
    /// Fast Open's pending-request queue (`fastopen.rs`), made with the first SYN
    /// that a listener with Fast Open on sees.
    tfo_queue: Option<crate::tfo::PendingQueue>,
}

struct Slot {
    conn: Connection,
    /// Listener port while the connection is passive and not yet accepted.
    listener: Option<u16>,
    /// In the listener's accept queue (established, not yet accepted).
    queued: bool,
    in_ready: bool,
    /// In `Endpoint::mem_waiters`: a write was refused for memory.
    mem_wait: bool,
    /// Closed event handed out: reap.
    closed: bool,
    /// The MPTCP token this connection holds in `Endpoint::tokens`.
    mp_token: Option<u32>,
    /// A Fast Open child holding a slot in this listener's pending queue.
    tfo_pending: Option<u16>,
}

impl Slot {
    /// Queues the connection (handle `h`) for output once.
    #[inline]
    fn mark_ready(&mut self, h: ConnHandle, ready: &mut VecDeque<ConnHandle>) {
        if !self.in_ready {
            self.in_ready = true;
            ready.push_back(h);
        }
    }
}

/// A stateless reply (RST for a segment to no socket).
#[derive(Clone, Copy)]
struct Reply {
    /// The address the answered segment was sent to: a reply leaves from it (a
    /// multi-homed endpoint has several).
    local_ip: IpAddr,
    remote: SocketAddr,
    local_port: u16,
    seq: SeqNum,
    ack: Option<SeqNum>,
    /// MP_TCPRST to carry (RFC 8684 §3.6): the reason a join was refused.
    mp_reset: Option<brisk_wire::mptcp::MpTcpRst>,
}

/// See the module doc.
pub struct Endpoint {
    /// The address `local_addr` reports: the only one, or the IPv4 one of a dual stack.
    local: IpAddr,
    v4: Option<Ipv4Addr>,
    v6: Option<Ipv6Addr>,
    /// Addresses added by [`Endpoint::add_address`] beyond the first of each family
    /// (a multi-homed host), at most `MAX_ADDRESSES` in all with `v4` and `v6`.
    extra: Vec<IpAddr>,
    config: EndpointConfig,
    rng: ChaCha8Rng,
    /// Boxed: a `Connection` is about 2.5 KB, and inline slots would make the table's
    /// doubling slack (up to half its capacity) and every reaped slot cost that much.
    slots: Vec<Option<Box<Slot>>>,
    free: VecDeque<u32>,
    live: usize,
    table: HashMap<(u16, SocketAddr), ConnHandle>,
    /// The last `table` hit. A bulk flow's packets arrive back to back on one
    /// connection, so this saves the SipHash of most lookups (the table keeps SipHash
    /// with random keys: on real networks its keys are the peer's choice). Cleared on
    /// every `table` insert and remove, so it never disagrees with the table.
    last_hit: Option<((u16, SocketAddr), ConnHandle)>,
    listeners: listeners::Listeners,
    /// Recent connection configs (`conn_configs.rs`), possibly shared with other
    /// endpoints; made on first use.
    conn_configs: Option<ConnConfigs>,
    ready: VecDeque<ConnHandle>,
    timers: TimerHeap,
    events: VecDeque<(ConnHandle, Event)>,
    replies: VecDeque<Reply>,
    stats: EndpointStats,
    ip_ident: u16,
    next_seed: u64,
    /// The host's congestion state, lent to a connection's controller during each
    /// call into that connection (`lend_cc`).
    host_cc: HostHome,
    cookies: SynCookies,
    mem: MemAccount,
    /// The slot last lent to the application by `conn_mut`: its writes may have
    /// changed what it holds, so it is re-read before the next allowance is given.
    lent: Option<u32>,
    /// Connections whose writes were refused for memory, woken (`Event::Writable`)
    /// when the total leaves pressure. At most one entry per live slot.
    mem_waiters: VecDeque<ConnHandle>,
    /// MPTCP tokens → connections, for MP_JOIN SYNs (RFC 8684 §3.2; Linux
    /// `token.c`). Made with the first MPTCP connection.
    tokens: Option<Box<crate::mptcp::token::TokenTable<ConnHandle>>>,
    /// TCP Fast Open's host state (`fastopen.rs`), made when first used.
    tfo: Option<Box<fastopen::TfoHost>>,
    /// Inner Space's dual handshakes (`dual.rs`); `None` until one is used.
    dual: Option<Box<dual::DualHost>>,
}

impl Endpoint {
    /// An endpoint with one local address, IPv4 or IPv6; it talks to peers of that
    /// family only (`connect` to the other returns `Unsupported`, and packets from it
    /// are not addressed to us).
    pub fn new(local: IpAddr, config: EndpointConfig) -> Self {
        let local = local.to_canonical();
        let (v4, v6) = match local {
            IpAddr::V4(a) => (Some(a), None),
            IpAddr::V6(a) => (None, Some(a)),
        };
        Self::with_addrs(local, v4, v6, config)
    }

    /// A dual-stack endpoint: one IPv4 and one IPv6 address. Listeners accept peers of
    /// both families; `connect` uses the address of the remote's family.
    pub fn dual_stack(v4: Ipv4Addr, v6: Ipv6Addr, config: EndpointConfig) -> Self {
        Self::with_addrs(IpAddr::V4(v4), Some(v4), Some(v6), config)
    }

    fn with_addrs(
        local: IpAddr,
        v4: Option<Ipv4Addr>,
        v6: Option<Ipv6Addr>,
        config: EndpointConfig,
    ) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(config.rng_seed);
        let next_seed = rng.gen();
        let mut cookies = SynCookies::new(&config.isn_secret);
        cookies.ts_ppm = config.ts_clock_ppm;
        let mem = MemAccount::new(config.mem);
        Endpoint {
            local,
            v4,
            v6,
            extra: Vec::new(),
            config,
            rng,
            slots: Vec::new(),
            free: VecDeque::new(),
            live: 0,
            table: HashMap::new(),
            last_hit: None,
            listeners: listeners::Listeners::default(),
            conn_configs: None,
            ready: VecDeque::new(),
            timers: TimerHeap::default(),
            events: VecDeque::new(),
            replies: VecDeque::new(),
            stats: EndpointStats::default(),
            ip_ident: 0,
            next_seed,
            host_cc: HostHome::default(),
            cookies,
            mem,
            lent: None,
            mem_waiters: VecDeque::new(),
            tokens: None,
            tfo: None,
            dual: None,
        }
    }

    pub fn local_addr(&self) -> IpAddr {
        self.local
    }

    /// The local address this endpoint uses with `remote` (the first of its family), or
    /// `None` if the endpoint has no address of that family. An IPv4-mapped IPv6
    /// `remote` counts as IPv4 (see the module doc). Addresses added by
    /// [`add_address`](Self::add_address) are used only when asked for by name
    /// ([`connect_from`](Self::connect_from)).
    pub fn local_addr_for(&self, remote: IpAddr) -> Option<IpAddr> {
        match remote.to_canonical() {
            IpAddr::V4(_) => self.v4.map(IpAddr::V4),
            IpAddr::V6(_) => self.v6.map(IpAddr::V6),
        }
    }

    /// Every local address: the first of each family (the IPv4 one first), then the
    /// added ones in the order they were added.
    pub fn local_addrs(&self) -> Vec<IpAddr> {
        let firsts = [self.v4.map(IpAddr::V4), self.v6.map(IpAddr::V6)];
        firsts
            .into_iter()
            .flatten()
            .chain(self.extra.iter().copied())
            .collect()
    }

    /// Adds a local address (a multi-homed host: one address per interface, as the
    /// MPTCP path manager announces them). If the endpoint has no address of its family
    /// yet it becomes that family's first (what `local_addr_for` returns). At most
    /// [`MAX_ADDRESSES`] addresses in all: Linux's in-kernel MPTCP path manager keeps at
    /// most 8 endpoints (`MPTCP_PM_ADDR_MAX`), and `is_local` compares every packet's
    /// destination with each address, so a small list keeps that check a few compares.
    pub fn add_address(&mut self, ip: IpAddr) -> Result<(), AddressError> {
        let ip = ip.to_canonical();
        if !usable_peer(ip) || ip.is_loopback() {
            return Err(AddressError::Unusable(ip));
        }
        if self.local_addrs().contains(&ip) {
            return Err(AddressError::Duplicate(ip));
        }
        let count = usize::from(self.v4.is_some()) + usize::from(self.v6.is_some());
        if count + self.extra.len() >= MAX_ADDRESSES {
            return Err(AddressError::TooMany { max: MAX_ADDRESSES });
        }
        match ip {
            IpAddr::V4(a) if self.v4.is_none() => self.v4 = Some(a),
            IpAddr::V6(a) if self.v6.is_none() => self.v6 = Some(a),
            _ => self.extra.push(ip),
        }
        Ok(())
    }

    /// Whether a packet to `dst` is ours: one of our addresses, compared natively (an
    /// IPv4-mapped destination in an IPv6 header is not our IPv4 address). The first
    /// address of each family is compared first; added ones only if there are any.
    #[inline]
    fn is_local(&self, dst: IpAddr) -> bool {
        let first = match dst {
            IpAddr::V4(a) => self.v4 == Some(a),
            IpAddr::V6(a) => self.v6 == Some(a),
        };
        first || (!self.extra.is_empty() && self.extra.contains(&dst))
    }

    /// Linux's martian sources (`ip_route_input_slow`'s `martian_source`,
    /// `ip6_rcv_core`): a source no peer may have ([`usable_peer`]: unspecified,
    /// `0.0.0.0/8`, multicast, broadcast, IPv4-mapped in an IPv6 header), a loopback
    /// address (`127.0.0.0/8`, `::1`), or any of our own addresses (IPv4:
    /// `fib_validate_source` finds it local; IPv6 Linux accepts it, brisk drops it too,
    /// as a LAND attack's SYN). Answering one would aim SYN-ACKs and RSTs at ourselves
    /// or at many hosts. An endpoint whose first address of that family is a loopback
    /// address is on a loopback device, where both are ordinary (Linux accepts them
    /// from `lo`).
    fn martian_source(&self, src: IpAddr) -> bool {
        if !usable_peer(src) {
            return true;
        }
        let ours = match src {
            IpAddr::V4(_) => self.v4.map(IpAddr::V4),
            IpAddr::V6(_) => self.v6.map(IpAddr::V6),
        };
        match ours {
            Some(a) if a.is_loopback() => false,
            _ => src.is_loopback() || ours == Some(src) || self.extra.contains(&src),
        }
    }

    /// Active open from the local address `local` (one of [`local_addrs`]
    /// (Self::local_addrs), of `remote`'s family): a multi-homed host's flow on the
    /// path of that address. `connect_shared` uses the family's first address.
    pub fn connect_from(
        &mut self,
        now: Instant,
        local: SocketAddr,
        remote: SocketAddr,
        config: Arc<Config>,
    ) -> Result<ConnHandle, ConnError> {
        let remote = SocketAddr::new(remote.ip().to_canonical(), remote.port());
        let local_ip = local.ip().to_canonical();
        if !self.is_local(local_ip) || local_ip.is_ipv4() != remote.ip().is_ipv4() {
            return Err(ConnError::Unsupported);
        }
        if self.martian_source(remote.ip()) {
            return Err(ConnError::Unsupported);
        }
        if self.live >= self.config.max_connections {
            self.stats.drop_table_full += 1;
            return Err(ConnError::TableFull);
        }
        // The table key is (local port, remote): a port is unique per remote across
        // all local addresses, so demultiplexing needs no local address.
        let port = if local.port() == 0 {
            self.pick_ephemeral(remote)?
        } else {
            if self.table.contains_key(&(local.port(), remote)) {
                return Err(ConnError::AddrInUse);
            }
            local.port()
        };
        let setup = self.setup(now, SocketAddr::new(local_ip, port), remote, config);
        let mut conn = Connection::connect(now, setup);
        if conn.config.fastopen.is_some() {
            self.tfo_connect(now, &mut conn);
        }
        let h = self.insert(conn, None);
        self.mp_register(h);
        self.touch(h);
        Ok(h)
    }

    /// Changes the SYN-cookie mode (`EndpointConfig::syncookies` and
    /// `syncookies_always`; Linux's `tcp_syncookies` 0, 1, 2) for SYNs from now on.
    pub fn set_syncookies(&mut self, on: bool, always: bool) {
        self.config.syncookies = on;
        self.config.syncookies_always = always;
    }

    /// Active open. `local_port` 0 picks an ephemeral port.
    pub fn connect(
        &mut self,
        now: Instant,
        local_port: u16,
        remote: SocketAddr,
        config: Config,
    ) -> Result<ConnHandle, ConnError> {
        self.connect_shared(now, local_port, remote, Arc::new(config))
    }

    /// [`connect`](Self::connect) with a config shared by reference: connections
    /// opened with the same `Arc` (to peers of one family) share one copy while they
    /// do not change it, instead of holding 408 B each.
    pub fn connect_shared(
        &mut self,
        now: Instant,
        local_port: u16,
        remote: SocketAddr,
        config: Arc<Config>,
    ) -> Result<ConnHandle, ConnError> {
        // An IPv4-mapped peer is that IPv4 peer (module doc).
        let remote = SocketAddr::new(remote.ip().to_canonical(), remote.port());
        let Some(local_ip) = self.local_addr_for(remote.ip()) else {
            return Err(ConnError::Unsupported);
        };
        if self.martian_source(remote.ip()) {
            // Also what lets `handle_parsed` skip the check for known connections.
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
        let local = SocketAddr::new(local_ip, port);
        let setup = self.setup(now, local, remote, config);
        let mut conn = Connection::connect(now, setup);
        if conn.config.fastopen.is_some() {
            self.tfo_connect(now, &mut conn);
        }
        let h = self.insert(conn, None);
        self.mp_register(h);
        self.touch(h);
        Ok(h)
    }

    /// One IP packet from the network. Both the IPv4 header and the TCP checksum
    /// are verified.
    pub fn handle_packet(&mut self, now: Instant, packet: &[u8]) {
        let mut tcp = TcpRepr::default();
        let ip = parse_tcp_packet_into(packet, &mut tcp);
        self.handle_parsed(now, ip, &tcp);
    }

    /// One IP packet whose TCP checksum is known to be correct: its sender computed
    /// it and nothing has changed the bytes since (the simulator's own links, when
    /// they did not corrupt it). The TCP checksum is not summed, as Linux skips it for
    /// an skb marked `CHECKSUM_UNNECESSARY` (include/linux/skbuff.h) by veth, loopback
    /// or virtio-net; the IPv4 header checksum is still verified. A packet whose
    /// bytes may have changed must go through [`handle_packet`](Self::handle_packet).
    pub fn handle_packet_trusted(&mut self, now: Instant, packet: &[u8]) {
        let mut tcp = TcpRepr::default();
        let ip = parse_tcp_packet_trusted_into(packet, &mut tcp);
        self.handle_parsed(now, ip, &tcp);
    }

    /// `tcp` is the segment parsed in place (`parse_tcp_packet_into`: returned by
    /// value, it was copied twice per packet), meaningful only when `parsed` is `Ok`.
    fn handle_parsed(
        &mut self,
        now: Instant,
        parsed: Result<IpRepr, ParseError>,
        tcp: &TcpRepr<'_>,
    ) {
        self.stats.packets_in += 1;
        // By reference: moving the parsed header out of the `Result` copied it for
        // every packet.
        let ip = match &parsed {
            Ok(ip) => ip,
            Err(ParseError::BadChecksum | ParseError::BadIpChecksum) => {
                self.stats.drop_checksum += 1;
                return;
            }
            Err(_) => {
                self.stats.drop_parse += 1;
                return;
            }
        };
        if !self.is_local(ip.dst()) {
            self.stats.drop_not_local += 1;
            return;
        }
        let remote = SocketAddr::new(ip.src(), tcp.src_port);
        if let Some(h) = self.lookup(tcp.dst_port, remote) {
            // No connection has a martian peer (neither `connect` nor a listener
            // makes one), so the check below is needed only without one.
            self.deliver(now, h, ip.ecn(), ip.dscp(), remote, tcp);
            return;
        }
        if self.martian_source(ip.src()) {
            // A source no peer may have: counted, never answered.
            self.stats.drop_martian += 1;
            return;
        }
        let f = tcp.flags;
        if f.syn() && !f.ack() && !f.rst() && self.listeners.contains_key(&tcp.dst_port) {
            self.on_listen_syn(now, ip.dst(), remote, tcp);
            return;
        }
        if f.syn() && !f.ack() && !f.rst() && self.tokens.is_some() && join::is_mp_join(tcp) {
            // A join to a port with no listener: Linux takes it if a connection with
            // the token is on that port (`mptcp_handle_join`... via the token).
            self.on_join_syn(now, ip.dst(), remote, tcp, false);
            return;
        }
        if self.on_cookie_ack(now, ip.ecn(), ip.dscp(), ip.dst(), remote, tcp) {
            return;
        }
        self.stats.drop_no_socket += 1;
        self.reply_rst(ip.dst(), tcp.dst_port, remote, tcp);
    }

    fn deliver(
        &mut self,
        now: Instant,
        h: ConnHandle,
        ecn: Ecn,
        dscp: u8,
        remote: SocketAddr,
        tcp: &TcpRepr<'_>,
    ) {
        if self.accept_overflow(h, tcp) {
            self.stats.drop_backlog_full += 1;
            return;
        }
        self.settle_lent();
        let allowance = self.mem.allowance();
        let Some(slot) = self
            .slots
            .get_mut(h.0 as usize)
            .and_then(|s| s.as_deref_mut())
        else {
            return;
        };
        let before = *slot.conn.counters();
        slot.conn.set_mem_allowance(allowance);
        let mptcp = slot.conn.is_mptcp();
        let tfo = slot.conn.has_tfo();
        if mptcp {
            slot.conn.mp_set_rx_remote(remote);
        }
        if tfo {
            slot.conn.tfo_end_input(tcp);
        }
        lend_cc(&mut self.host_cc, &mut slot.conn, |c| {
            c.handle_segment_dscp(now, ecn, dscp, tcp)
        });
        let after = *slot.conn.counters();
        self.stats.drop_mem += after.mem_dropped - before.mem_dropped;
        self.stats.drop_paws += after.paws_drops - before.paws_drops;
        self.stats.drop_out_of_window += after.out_of_window - before.out_of_window;
        self.stats.challenge_acks += after.challenge_acks - before.challenge_acks;
        self.stats.oow_acks_suppressed += after.oow_acks_suppressed - before.oow_acks_suppressed;
        self.stats.mptcp_refused += after.mptcp_refused - before.mptcp_refused;
        self.stats.mptcp_fallbacks += after.mptcp_fallbacks - before.mptcp_fallbacks;
        // A segment after which a poll would find nothing (a data segment whose ACK
        // is delayed, an ACK that leaves cwnd full): the connection is not queued
        // for one (`Connection::poll_finds_nothing`; MPTCP and Fast Open do more
        // work here, so they are polled as before).
        let quiet = !mptcp && !tfo && slot.conn.poll_finds_nothing();
        if mptcp {
            self.mp_service(now, h);
        }
        if tfo {
            self.tfo_after(now, h);
        }
        if !quiet {
            self.mark_ready(h);
        }
        self.touch_events_and_timer(h);
        self.mem.relieve(&mut self.slots, h.0, &mut self.stats);
    }

    /// Whether [`poll_transmit`](Self::poll_transmit) has anything to look at: a
    /// queued RST or cookie SYN-ACK, or a connection marked ready. Without any it
    /// returns `None` and changes nothing, so a caller may skip it (and its `out`).
    #[must_use]
    #[inline]
    pub fn has_queued_output(&self) -> bool {
        !self.ready.is_empty() || self.control_queued()
    }

    /// A queued RST or cookie SYN-ACK ([`Endpoint::poll_control`]'s work).
    #[inline]
    fn control_queued(&self) -> bool {
        !self.replies.is_empty() || self.cookies.has_pending()
    }

    /// The endpoint's own packets, before any connection's: RSTs answering segments
    /// that matched no connection, and SYN cookies' SYN-ACKs. Out of line and cold:
    /// a simulated bulk flow sends none of them, and inlined into `poll_transmit`
    /// they were code between its entry and its per-connection loop that every
    /// packet's fetch ran through (the instruction cache, docs/performance.md,
    /// "The hot path as shipped").
    #[cold]
    #[inline(never)]
    fn poll_control(&mut self, out: &mut Vec<u8>) -> Option<Option<Transmit>> {
        if let Some(r) = self.replies.pop_front() {
            let mut flags = Flags::RST;
            if r.ack.is_some() {
                flags.insert(Flags::ACK);
            }
            let mut tcp = TcpRepr {
                src_port: r.local_port,
                dst_port: r.remote.port(),
                seq: r.seq,
                ack: r.ack.unwrap_or(SeqNum(0)),
                flags,
                ..TcpRepr::default()
            };
            if let Some(rst) = r.mp_reset {
                // 4 bytes always fit an empty option space.
                let _ = brisk_wire::mptcp::push(
                    &mut tcp.extra,
                    &brisk_wire::mptcp::MptcpOption::MpTcpRst(rst),
                );
            }
            let Some(ip) = ip_repr(r.local_ip, r.remote.ip(), Ecn::NotEct, 0, self.ip_ident) else {
                return Some(None);
            };
            emit_tcp_packet(&ip, &tcp, out);
            self.stats.rst_sent += 1;
            self.stats.packets_out += 1;
            return Some(Some(Transmit {
                conn: None,
                len: out.len(),
                ecn: Ecn::NotEct,
                dscp: 0,
            }));
        }
        if let Some(p) = self.cookies.pop_synack() {
            let Some(ip) = ip_repr(p.local, p.remote, Ecn::NotEct, p.dscp, self.ip_ident) else {
                return Some(None);
            };
            emit_tcp_packet(&ip, &p.header, out);
            self.ip_ident = self.ip_ident.wrapping_add(1);
            self.stats.packets_out += 1;
            return Some(Some(Transmit {
                conn: None,
                len: out.len(),
                ecn: Ecn::NotEct,
                dscp: p.dscp,
            }));
        }
        None
    }

    /// Writes the next packet to send into `out` (cleared first).
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant, out: &mut Vec<u8>) -> Option<Transmit> {
        if self.control_queued() {
            if let Some(t) = self.poll_control(out) {
                return t;
            }
        }
        while let Some(h) = self.ready.pop_front() {
            let Some(slot) = self.slots.get_mut(h.0 as usize).and_then(|s| s.as_mut()) else {
                continue;
            };
            slot.in_ready = false;
            // Queued by a call that left nothing to send: most often a lend
            // (`conn_mut`) that changed nothing a poll reads (the simulator's host
            // lends every connection after each batch of events to drain its
            // traces, and its apps' reads and writes rarely open anything). The
            // proof costs less than the poll it replaces, and the mark keeps its
            // place in the poll order (`Connection::poll_finds_nothing`).
            // By reference: binding the segment by value copied it out of the
            // `Option` for every packet sent.
            let polled = if slot.conn.poll_finds_nothing() {
                None
            } else {
                lend_cc(&mut self.host_cc, &mut slot.conn, |c| c.poll_transmit(now))
            };
            let Some(seg) = &polled else {
                self.touch_events_and_timer(h);
                continue;
            };
            let exhausted = slot.conn.poll_exhausted();
            // A subflow's segment leaves from its own addresses (MPTCP).
            let (local, remote) = slot.conn.tx_addrs(seg);
            slot.conn.prepare_payload(seg);
            let payload = slot.conn.payload(seg);
            let mut tcp = seg.to_repr(payload);
            // Inner Space's SYN-U, SYN/ACK-U or SYN-O (`conn/inspace.rs`).
            let wrapped;
            if tcp.flags.syn() && slot.conn.has_inspace() {
                if let Some((seq, extra, data)) = slot.conn.inspace_syn_wire(&tcp) {
                    wrapped = data;
                    tcp.seq = seq;
                    tcp.extra = extra;
                    tcp.payload = &wrapped;
                }
            }
            // Fast Open's cookie at the end of a connection (`TfoConfig::cookie_at_end`).
            if !tcp.flags.syn() && slot.conn.has_tfo() {
                slot.conn.tfo_end_option(&mut tcp.extra, tcp.flags.fin());
            }
            let dscp = seg.meta.dscp;
            let ecn = seg.meta.ecn;
            let Some(ip) = ip_repr(local, remote, ecn, dscp, self.ip_ident) else {
                continue;
            };
            emit_tcp_packet(&ip, &tcp, out);
            if seg.header.flags.rst() {
                self.stats.rst_sent += 1;
            }
            self.ip_ident = self.ip_ident.wrapping_add(1);
            self.stats.packets_out += 1;
            // More may follow: round-robin to the back of the queue. Not after an ACK
            // that ended the connection's poll (`Connection::poll_exhausted`): its
            // next poll would find nothing, and whatever can change that (input,
            // timeouts, `conn_mut`) queues it again. (`touch` spelt out: the
            // inline-always `touch_events_and_timer` once, not twice.)
            if !exhausted {
                self.mark_ready(h);
            }
            self.touch_events_and_timer(h);
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
        self.timers.peek()
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some(idx) = self.timers.pop_due(now) {
            let h = ConnHandle(idx);
            let Some(slot) = self
                .slots
                .get_mut(idx as usize)
                .and_then(|s| s.as_deref_mut())
            else {
                continue;
            };
            lend_cc(&mut self.host_cc, &mut slot.conn, |c| c.handle_timeout(now));
            if slot.conn.is_mptcp() {
                self.mp_service(now, h);
            }
            self.touch(h);
        }
    }

    #[must_use]
    #[inline]
    pub fn poll_event(&mut self) -> Option<(ConnHandle, Event)> {
        loop {
            let (h, ev) = match self.dual.is_some() {
                false => self.events.pop_front()?,
                // Inner Space's dual handshakes hold, swallow or release events.
                true => match self.dual_released() {
                    Some(x) => x,
                    None => {
                        let (h, ev) = self.events.pop_front()?;
                        match self.dual_filter(h, ev) {
                            Some(x) => x,
                            None => continue,
                        }
                    }
                },
            };
            if matches!(ev, Event::Closed(_)) {
                self.closed_event(h);
            }
            return Some((h, ev));
        }
    }

    /// The application was told the connection closed: reap it.
    #[inline(never)]
    fn closed_event(&mut self, h: ConnHandle) {
        if let Some(slot) = self.slot_mut(h) {
            slot.closed = true;
        }
        self.reap(h);
    }

    pub fn conn(&self, h: ConnHandle) -> Option<&Connection> {
        self.slots.get(h.0 as usize)?.as_ref().map(|s| &s.conn)
    }

    /// Mutable access for application calls; the connection is re-examined for output
    /// and timers on the next `poll_transmit` / `poll_timeout`.
    ///
    /// Writes may allocate only what the endpoint's memory policy allows them
    /// (`crate::mem`); beyond it they are short, as with a full send buffer.
    #[inline]
    pub fn conn_mut(&mut self, h: ConnHandle) -> Option<&mut Connection> {
        // Lent again with nothing received in between (`deliver` settles the lent
        // connection): the allowance it has left is still what the policy gives it,
        // as nothing else could allocate meanwhile.
        let allowance = if self.lent == Some(h.0) {
            None
        } else {
            self.settle_lent();
            Some(self.mem.send_allowance(h.0, self.live))
        };
        let slot = self.slots.get_mut(h.0 as usize)?.as_deref_mut()?;
        // Whatever the caller does may create output or change timers (one lookup).
        slot.mark_ready(h, &mut self.ready);
        if let Some(a) = allowance {
            slot.conn.set_send_allowance(a);
            self.lent = Some(h.0);
        }
        Some(&mut slot.conn)
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

    /// Cookie SYN-ACKs waiting for `poll_transmit` (the only thing a cookie SYN
    /// leaves behind, until polled).
    #[cfg(test)]
    pub(crate) fn cookies_pending(&self) -> usize {
        self.cookies.pending_len()
    }

    // ----- internals -----

    /// What a new connection is made of: an RFC 6528 ISN, the next seed from the
    /// endpoint's RNG, and the controller the factory builds with that seed.
    fn setup(
        &mut self,
        now: Instant,
        local: SocketAddr,
        remote: SocketAddr,
        config: Arc<Config>,
    ) -> Setup {
        let config = self.conn_config(config, remote.is_ipv6());
        let iss = isn::initial_seq(now, local, remote, &self.config.isn_secret);
        let seed = self.seed();
        let cc = self.build_cc(now, local, remote, &config, seed);
        Setup {
            local,
            remote,
            config,
            iss,
            seed,
            cc,
        }
    }

    /// `config` as a connection to a peer of this family uses it: the IPv6 MSS and
    /// RC3 without timestamps (`Connection::from_setup`), on this host's timestamp
    /// clock. Kept, so that connections opened or accepted with the same `Arc` share
    /// one copy (`conn_configs.rs`).
    fn conn_config(&mut self, config: Arc<Config>, v6: bool) -> Arc<Config> {
        let ppm = self.config.ts_clock_ppm;
        let make = || {
            let mut used = config.clone();
            if v6 && used.mss > V6_MIN_MSS {
                let c = Arc::make_mut(&mut used);
                c.mss = (c.mss - V6_EXTRA_HEADER).max(V6_MIN_MSS);
            }
            crate::conn::rc3_without_timestamps(&mut used);
            if used.ts_clock_ppm != ppm {
                Arc::make_mut(&mut used).ts_clock_ppm = ppm;
            }
            used
        };
        self.conn_configs
            .get_or_insert_with(ConnConfigs::default)
            .get_or_make(&config, v6, ppm, make)
    }

    /// Keeps connection configs in `cache`, shared with the other endpoints given it,
    /// from now on (a simulator's hosts: one copy of each per run instead of one per
    /// host). What a connection's config holds is the same either way.
    pub fn share_conn_configs(&mut self, cache: &ConnConfigs) {
        self.conn_configs = Some(cache.clone());
    }

    /// The connection's controller: the flow joins the host's table (and its group),
    /// then the factory builds with the path and the host state. `reap` releases it.
    fn build_cc(
        &mut self,
        now: Instant,
        local: SocketAddr,
        remote: SocketAddr,
        config: &Config,
        seed: u64,
    ) -> FlowCc {
        let host = self.host_cc.get_mut();
        // An FSE flow joins the group its configuration names (fse/tcp.rs).
        let fse = config.congestion.controller.fse.as_ref();
        let key = match fse {
            Some(fse) => fse.join_key(remote),
            None => self.config.cc_grouping.key(remote),
        };
        let (flow, mut group) = host.join(local, remote, key);
        if fse.is_some_and(|f| f.sbd) {
            // Its group follows the detector's stable groups (issue 33 §4).
            host.group_by_sbd(flow);
            group = host.group_of(flow);
        }
        let path = config.cc_path(local, remote, now, flow, group);
        let ctx = CcContext {
            seed,
            path: &path,
            host,
        };
        let ctrl = self
            .config
            .cc_factory
            .build(&config.congestion.controller, ctx);
        FlowCc::new(ctrl, Some(flow))
    }

    /// Turns on RFC 8382 shared-bottleneck detection for this host's flows opened or
    /// accepted from now on (`crate::cc::sbd::host`); an out-of-range setting is an
    /// error naming the field.
    pub fn enable_sbd(
        &mut self,
        cfg: crate::cc::sbd::SbdHostConfig,
    ) -> Result<(), crate::cc::sbd::SbdError> {
        let s = crate::cc::sbd::SbdHost::new(cfg)?;
        self.host_cc.get_mut().enable_sbd(s);
        Ok(())
    }

    /// The state shared by this host's congestion controllers.
    pub fn host_cc(&self) -> &HostCc {
        self.host_cc.get()
    }

    fn seed(&mut self) -> u64 {
        let s = self.next_seed;
        self.next_seed = self.rng.gen();
        s
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
}

/// Whether `ip` can be a TCP peer's address: not unspecified ("this network",
/// `0.0.0.0/8`, included: Linux `ipv4_is_zeronet`), multicast, broadcast, or (in an
/// IPv6 header) IPv4-mapped. Linux drops such sources too (`ip_route_input_slow`,
/// `tcp_v4_rcv`'s multicast/broadcast check, `ip6_rcv_core`, `tcp_v6_conn_request`);
/// answering them would aim RSTs and SYN-ACKs at many hosts or at none.
fn usable_peer(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => !(a.octets()[0] == 0 || a.is_multicast() || a.is_broadcast()),
        IpAddr::V6(a) => !(a.is_unspecified() || a.is_multicast() || a.to_ipv4_mapped().is_some()),
    }
}

/// The IP header of an outgoing segment. IPv6 packets carry flow label 0 (RFC 6437
/// §2 allows it; Linux hashes the 4-tuple into one, which only path hashing uses) and
/// hop limit 64, Linux's default; their ident and DF have no IPv6 counterpart.
/// Runs `f` on `conn` with the host's congestion state lent to its controller, so
/// that every hook the call reaches sees the host (`crate::cc::host`): one pointer
/// moved in, one moved back, no lock.
#[inline]
fn lend_cc<R>(
    home: &mut HostHome,
    conn: &mut Connection,
    f: impl FnOnce(&mut Connection) -> R,
) -> R {
    home.lend_to(conn.flow_cc_mut());
    let r = f(conn);
    home.take_back(conn.flow_cc_mut());
    r
}

fn ip_repr(local: IpAddr, remote: IpAddr, ecn: Ecn, dscp: u8, ident: u16) -> Option<IpRepr> {
    match (local, remote) {
        (IpAddr::V4(src), IpAddr::V4(dst)) => Some(IpRepr::V4(Ipv4Repr {
            src,
            dst,
            protocol: IPPROTO_TCP,
            dscp,
            ecn,
            ttl: TTL,
            ident,
            dont_frag: true,
            payload_len: 0,
        })),
        (IpAddr::V6(src), IpAddr::V6(dst)) => Some(IpRepr::V6(Ipv6Repr {
            src,
            dst,
            next_header: IPPROTO_TCP,
            dscp,
            ecn,
            flow_label: 0,
            hop_limit: TTL,
            payload_len: 0,
        })),
        _ => None,
    }
}
