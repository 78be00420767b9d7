//! A simulated host: one brisk TCP `Endpoint` and the applications on it.
//!
//! Input (a packet or a due timer) goes to the endpoint, then events are dispatched to
//! the apps, which read and write; output is pulled with `poll_transmit` (brisk-tcp's
//! order: transmit until `None`, then events, then `poll_timeout`). The host also
//! samples its flows every sampling interval (cwnd, goodput) and keeps the sender's RTT
//! samples from the connection's trace.

use brisk_net::Packet;
use brisk_tcp::cc::CcDiagnostics;
use brisk_tcp::{ConnError, ConnHandle, Connection, Endpoint, Event, TcpInfo, TraceEvent};
use brisk_time::{dur_nanos, Instant};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use crate::app::{ClientApp, ServerApp};
use crate::engine::Ctx;
use crate::metrics::{Samples, Series};
use crate::web::ByteRanges;
use brisk_report::OneWayDelay;

/// Port receivers listen on (plus the flow's index on the host).
pub const BASE_PORT: u16 = 5001;
/// Read buffer for the apps (one per run, in the engine's `Ctx`: one per host was
/// 128 KB per flow).
const SCRATCH: usize = 64 * 1024;

/// One cwnd sample row.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CwndRow {
    pub cwnd: u32,
    pub ssthresh: u32,
    pub srtt_ns: u64,
    pub in_flight: u32,
}

/// An MPTCP sender's subflows summed at one sample (seed 004 B.2's compound window).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MpRow {
    pub subflows: u32,
    /// Sum of the subflows' cwnd, segments.
    pub cwnd: u32,
    /// Sum of the subflows' segments in flight.
    pub in_flight: u32,
    /// Sum of the subflows' retransmitted segments so far.
    pub retransmits: u64,
    /// Subflows in slow start (cwnd < ssthresh).
    pub slow_start: u32,
}

/// Cap on controller-diagnostics rows per flow (one per delay-correlation consult,
/// about one per ACK): ~15 MB; later rows are counted in `ClientSide::cc_dropped`.
pub const MAX_CC_ROWS: usize = 1 << 18;

/// The sender's controller diagnostics after one change (for delay correlation:
/// one consult), with the sender's latest RTT sample and cwnd at that moment.
#[derive(Clone, Debug, PartialEq)]
pub struct CcRow {
    pub diag: CcDiagnostics,
    /// The latest RTT sample before this row (0 before the first).
    pub rtt_ns: u64,
    /// cwnd after the ACK that produced this row, segments.
    pub cwnd: u32,
}

/// RTT samples of one interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RttRow {
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: u64,
    pub max_ns: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct RttAgg {
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl RttAgg {
    fn push(&mut self, v: u64) {
        self.min = if self.count == 0 { v } else { self.min.min(v) };
        self.max = self.max.max(v);
        self.count += 1;
        self.sum += u128::from(v);
    }
    fn take(&mut self) -> Option<RttRow> {
        let a = std::mem::take(self);
        (a.count > 0).then(|| RttRow {
            count: a.count,
            min_ns: a.min,
            mean_ns: (a.sum / u128::from(a.count)) as u64,
            max_ns: a.max,
        })
    }
}

/// The sender side of one flow.
pub struct ClientSide {
    pub app: ClientApp,
    pub remote: SocketAddr,
    pub start: Instant,
    /// Shared by the flows built from one scenario entry (a copy per flow cost 488
    /// B, and another in the endpoint's `connect`).
    pub config: Arc<brisk_tcp::Config>,
    pub conn: Option<ConnHandle>,
    pub connect_at: Option<Instant>,
    pub connected_at: Option<Instant>,
    pub rtt: Samples,
    /// Per-interval RTT aggregates (intervals without samples have no row).
    pub rtt_series: Series<RttRow>,
    rtt_agg: RttAgg,
    pub cwnd: Series<CwndRow>,
    /// An MPTCP sender's subflows summed, one row per sample (none for plain TCP).
    pub mp: Series<MpRow>,
    /// An MPTCP sender's subflows, as last seen (samples, close, end of run).
    pub mp_subflows: Vec<TcpInfo>,
    /// Controller diagnostics, one row per change (bounded by [`MAX_CC_ROWS`]).
    pub cc: Series<CcRow>,
    /// Bytes the client application has read so far (responses, pages), one row per
    /// sample once it has read any: a flow's download direction (flent's TCP download
    /// in `request_response`). Bulk and records clients read nothing and get no row.
    pub rx_total: Series<u64>,
    /// Diagnostics rows beyond the cap, not stored.
    pub cc_dropped: u64,
    last_rtt_ns: u64,
    last_cwnd: u32,
    /// The last sample found this side's connection, plain TCP: an idle host's next
    /// sample repeats its row without looking the connection up (`Host::sample`).
    repeat_row: bool,
    /// The latest `TcpInfo` seen (refreshed at samples, close and the end of the run).
    pub info: Option<TcpInfo>,
    pub error: Option<ConnError>,
    pub connect_error: Option<ConnError>,
    /// The connection reported `Closed` (cleanly or with `error`).
    pub closed: bool,
    /// Stream bytes the connection retransmitted (from its trace).
    pub retx: ByteRanges,
    /// The connection still ran MPTCP at the end of the run (it offered it, the peer
    /// took it and it never fell back): set by `finish`.
    pub mptcp: bool,
}

/// The receiver side of one flow.
pub struct ServerSide {
    pub app: ServerApp,
    pub port: u16,
    /// Shared as the client's is.
    pub config: Arc<brisk_tcp::Config>,
    pub conn: Option<ConnHandle>,
    /// Bytes read per sampling interval.
    pub goodput: Series<u64>,
    /// One-way delay and jitter of the flow's data packets arriving here (fixed size).
    pub owd: OneWayDelay,
    pub error: Option<ConnError>,
    /// The connection reported `Closed` (cleanly or with `error`).
    pub closed: bool,
    /// Response bytes the connection retransmitted (traced for web servers only).
    pub retx: ByteRanges,
    /// The connection's latest `TcpInfo` (web servers only: they are the data senders;
    /// boxed, as other servers never fill it).
    pub info: Option<Box<TcpInfo>>,
}

impl ServerSide {
    /// A receiver listening on `port`.
    pub fn new(
        app: ServerApp,
        port: u16,
        config: impl Into<Arc<brisk_tcp::Config>>,
        rows: usize,
    ) -> Self {
        ServerSide {
            app,
            port,
            config: config.into(),
            conn: None,
            goodput: Series::with_cap(rows),
            owd: Default::default(),
            error: None,
            closed: false,
            retx: ByteRanges::default(),
            info: None,
        }
    }
}

pub enum Role {
    Client(Box<ClientSide>),
    Server(Box<ServerSide>),
}

/// One flow's application on this host.
pub struct HostFlow {
    pub flow: u32,
    pub role: Role,
}

/// The run's sampling book, in the engine's `Ctx` so that hosts reach it: the sample
/// instants so far and the hosts changed since their last sample.
///
/// A host that handled no packet, timeout or poll since its last sample would repeat
/// that sample's rows (`Host::sample`'s idle path); at 10^5 flows most hosts are idle
/// at most samples, and visiting each of them at every sample cost ~4 cache misses per
/// host (issue 36 §2). So the run samples only the hosts in `changed`, and a host
/// writes the idle rows of the samples it missed when it next changes (before the
/// change: its state is then still what an idle sample would have read) or at the end
/// of the run (`Host::catch_up`): the same rows at the same instants, written later.
#[derive(Debug, Default)]
pub struct Sampling {
    /// Every sample so far: its instant and the samples left in the run, that one
    /// included (`Series::push_every`'s sizing).
    pub(crate) times: Vec<(Instant, usize)>,
    /// Node ids of the registered hosts changed since their last sample (each once).
    pub(crate) changed: Vec<u32>,
}

pub struct Host {
    pub ip: IpAddr,
    pub ep: Endpoint,
    pub flows: Vec<HostFlow>,
    /// Flow index by connection handle (`ConnHandle.0`, a slot index), `u32::MAX`
    /// for none: a vector, as every packet out looks its flow up here.
    by_conn: Vec<u32>,
    trace: Vec<TraceEvent>,
    /// Some flow is a UDP source (`add_flow` sets it): only then does `poll_packet`
    /// ask the flows for due datagrams.
    udp_sources: bool,
    /// Whether the host handled a packet, a timeout or a poll since the last
    /// `sample`: a host that did not has, connection by connection, the same state
    /// (a connection changes only through its endpoint, and the endpoint only
    /// through these calls), so its sample repeats the last rows without asking
    /// each connection for its `TcpInfo` again (issue 36 §2: most of 10^5 flows are
    /// idle at any sample).
    changed: bool,
    /// Every sample asks every connection (`full_samples`: for the test that checks
    /// the shortcut above against the full path).
    full_samples: bool,
    /// This host's node id once the run registered it for sampling (`Sampling`),
    /// `u32::MAX` before.
    node: u32,
    /// Samples of the run (`Sampling::times`) this host has written rows for.
    sampled: u32,
}

impl ClientSide {
    /// A sender that opens its connection to `remote` at `start`.
    pub fn new(
        app: ClientApp,
        remote: SocketAddr,
        start: Instant,
        config: impl Into<Arc<brisk_tcp::Config>>,
        rows: usize,
    ) -> Self {
        ClientSide {
            app,
            remote,
            start,
            config: config.into(),
            conn: None,
            connect_at: None,
            connected_at: None,
            rtt: Samples::default(),
            rtt_series: Series::with_cap(rows),
            rtt_agg: RttAgg::default(),
            cwnd: Series::with_cap(rows),
            mp: Series::with_cap(rows),
            mp_subflows: Vec::new(),
            cc: Series::with_cap(MAX_CC_ROWS),
            rx_total: Series::with_cap(rows),
            cc_dropped: 0,
            last_rtt_ns: 0,
            last_cwnd: 0,
            repeat_row: false,
            info: None,
            error: None,
            connect_error: None,
            closed: false,
            retx: ByteRanges::default(),
            mptcp: false,
        }
    }
}

impl Host {
    pub fn new(ip: IpAddr, ep: Endpoint) -> Self {
        Host {
            ip,
            ep,
            flows: Vec::new(),
            by_conn: Vec::new(),
            trace: Vec::new(),
            udp_sources: false,
            changed: true,
            full_samples: false,
            node: u32::MAX,
            sampled: 0,
        }
    }

    /// Registers the host as node `node` for the run's sampling: from now on the run
    /// samples it only when it changed (`Sampling`). A host starts changed, so the
    /// caller also puts it in `Sampling::changed`.
    pub(crate) fn register(&mut self, node: usize) {
        self.node = u32::try_from(node).expect("node ids fit in u32");
    }

    /// Whether the next sample must visit this host (`Sampling::changed`).
    pub(crate) fn is_changed(&self) -> bool {
        self.changed
    }

    /// Called at every packet and timeout (a poll always follows one): the first
    /// since the last sample writes the samples this host missed while idle and puts
    /// it on the run's list.
    #[inline]
    fn touch(&mut self, ctx: &mut crate::engine::Ctx) {
        if !self.changed {
            self.first_change(&mut ctx.sampling);
        }
    }

    #[inline(never)]
    fn first_change(&mut self, sampling: &mut Sampling) {
        if self.node != u32::MAX {
            self.catch_up(&sampling.times);
            sampling.changed.push(self.node);
        }
        self.changed = true;
    }

    /// Writes the rows of the samples in `times` this host has not written: it was
    /// idle at each (not changed since its last sample), so they are idle samples of
    /// its present state.
    pub(crate) fn catch_up(&mut self, times: &[(Instant, usize)]) {
        let from = self.sampled as usize;
        if from >= times.len() {
            return;
        }
        debug_assert!(!self.changed || self.node == u32::MAX);
        for &(t, left) in &times[from..] {
            self.sample(t, left);
        }
    }

    /// Makes every `sample` take the full path (asking each connection for its
    /// `TcpInfo` even when the host has not changed since the last sample), for
    /// checking that the shortcut gives the same rows.
    pub fn full_samples(&mut self) {
        self.full_samples = true;
    }

    /// Adds a flow; a server starts listening at once.
    pub fn add_flow(&mut self, flow: u32, role: Role) -> Result<(), ConnError> {
        if let Role::Server(s) = &role {
            self.ep.listen_shared(s.port, 128, s.config.clone())?;
        }
        self.udp_sources |= matches!(&role, Role::Client(c) if c.app.is_udp());
        self.flows.push(HostFlow { flow, role });
        Ok(())
    }

    fn flow_for_conn(&self, h: ConnHandle) -> Option<usize> {
        self.by_conn
            .get(h.0 as usize)
            .filter(|&&i| i != u32::MAX)
            .map(|&i| i as usize)
    }

    /// Dispatches endpoint events to apps. Returns whether anything happened.
    fn process(&mut self, now: Instant, scratch: &mut [u8]) -> bool {
        let mut any = false;
        while let Some((h, ev)) = self.ep.poll_event() {
            any = true;
            if let Event::Incoming { port } = ev {
                while let Some(c) = self.ep.accept(port) {
                    let Some(i) = self.flows.iter().position(|f| {
                        matches!(&f.role, Role::Server(s) if s.port == port && s.conn.is_none())
                    }) else {
                        // A second connection to a one-connection app: refuse it.
                        if let Some(conn) = self.ep.conn_mut(c) {
                            conn.abort();
                        }
                        continue;
                    };
                    set_flow_for_conn(&mut self.by_conn, c, i);
                    if let Role::Server(s) = &mut self.flows[i].role {
                        s.conn = Some(c);
                        if let Some(conn) = self.ep.conn_mut(c) {
                            // A page's servers send the data: trace their
                            // retransmissions.
                            conn.set_trace(s.app.is_web());
                            s.app.on_readable(now, conn, scratch);
                        }
                    }
                }
                continue;
            }
            let Some(i) = self.flow_for_conn(h) else {
                continue;
            };
            let ep = &mut self.ep;
            match &mut self.flows[i].role {
                Role::Client(c) => match ev {
                    Event::Connected => {
                        c.connected_at = Some(now);
                        if let Some(conn) = ep.conn_mut(h) {
                            c.app.on_connected(now, conn);
                        }
                    }
                    Event::Readable | Event::PeerClosed => {
                        if let Some(conn) = ep.conn_mut(h) {
                            c.app.on_readable(now, conn, scratch);
                        }
                    }
                    Event::Writable => {
                        if let Some(conn) = ep.conn_mut(h) {
                            c.app.on_writable(now, conn);
                        }
                    }
                    Event::Closed(r) => {
                        if let Some(conn) = ep.conn(h) {
                            c.info = Some(conn.info());
                            c.mptcp = conn.is_mptcp();
                            if c.mptcp {
                                c.mp_subflows = conn.mptcp_subflow_infos();
                            }
                        }
                        c.error = r.err();
                        c.closed = true;
                    }
                    Event::Incoming { .. } => {}
                },
                Role::Server(s) => match ev {
                    Event::Readable => {
                        if let Some(conn) = ep.conn_mut(h) {
                            s.app.on_readable(now, conn, scratch);
                        }
                    }
                    Event::PeerClosed => {
                        if let Some(conn) = ep.conn_mut(h) {
                            s.app.on_readable(now, conn, scratch);
                            s.app.on_peer_closed(conn);
                        }
                    }
                    Event::Writable => {
                        if let Some(conn) = ep.conn_mut(h) {
                            s.app.on_writable(now, conn);
                        }
                    }
                    Event::Closed(r) => {
                        s.error = r.err();
                        s.closed = true;
                    }
                    Event::Connected | Event::Incoming { .. } => {}
                },
            }
        }
        self.drain_traces();
        any
    }

    /// Moves RTT samples and controller diagnostics from the senders' connection
    /// traces into their sample sets and series, and retransmitted ranges into their
    /// logs.
    ///
    /// Inline, the work out of line (`drain_flow`): it runs after every `process`
    /// (about 480 000 times in `bench sim`'s 2 s run) and most calls find nothing to
    /// move (a bulk receiver traces nothing, a sender about every other call).
    #[inline]
    fn drain_traces(&mut self) {
        for f in &mut self.flows {
            let (h, web) = match &f.role {
                Role::Client(c) => (c.conn, false),
                Role::Server(s) => (s.conn, s.app.is_web()),
            };
            // `conn_mut` even with nothing to drain: it marks the connection ready,
            // and the endpoint's poll order follows those marks.
            let Some(conn) = h.and_then(|h| self.ep.conn_mut(h)) else {
                continue;
            };
            // A web server's `info` is refreshed every time: the endpoint reaps a
            // connection as it reports `Closed`, so keep the data sender's counters
            // current.
            if conn.has_trace() || web {
                drain_flow(f, conn, &mut self.trace);
            }
        }
    }

    /// Opens due connections and fires due app timers.
    fn run_apps(&mut self, now: Instant) {
        for i in 0..self.flows.len() {
            let Role::Client(c) = &mut self.flows[i].role else {
                continue;
            };
            if c.connect_at.is_none()
                && c.connect_error.is_none()
                && c.start <= now
                && c.app.may_connect()
            {
                c.connect_at = Some(now);
                match self.ep.connect_shared(now, 0, c.remote, c.config.clone()) {
                    Ok(h) => {
                        c.conn = Some(h);
                        set_flow_for_conn(&mut self.by_conn, h, i);
                        if let Some(conn) = self.ep.conn_mut(h) {
                            conn.set_trace(true);
                        }
                    }
                    Err(e) => c.connect_error = Some(e),
                }
            }
            if c.app.poll_timeout().is_some_and(|t| t <= now) {
                if let Some(conn) = c.conn.and_then(|h| self.ep.conn_mut(h)) {
                    c.app.handle_timeout(now, conn);
                }
            }
            // A UDP source (`crate::udp_app`) needs no connection.
            c.app.udp_generate(now, c.start);
        }
    }

    /// Records one sample row per flow. The run calls it between engine steps, after
    /// every event at `now` (never as a host timer, so sampling cannot reorder the
    /// events it watches).
    pub fn sample(&mut self, now: Instant, left: usize) {
        self.sampled += 1;
        let idle = !std::mem::replace(&mut self.changed, self.full_samples);
        // Drained (and each connection lent) whenever anything changed: lending marks
        // the connection ready, and the endpoint's poll order follows the marks. An
        // idle host was drained at the last sample and not touched since (only a
        // packet, a timeout or a poll moves a connection's trace, its ready mark or
        // the endpoint's lent connection, and each sets `changed`), so draining it
        // again would find no trace and set marks that are still set; skipping it
        // saves a walk through the endpoint's slots per host per sample (~2.5 M
        // simulated LL misses at 10^5 flows; `tests/idle_samples.rs` checks the
        // shortcut against the full path).
        if !idle {
            self.drain_traces();
        }
        let t = now.as_nanos();
        for f in &mut self.flows {
            match &mut f.role {
                Role::Client(c) => {
                    if let Some(row) = c.rtt_agg.take() {
                        c.rtt_series.push(t, row);
                    }
                    if c.app.rx.bytes > 0 {
                        c.rx_total.push(t, c.app.rx.bytes);
                    }
                    let last = c.cwnd.rows.last().map(|&(_, row)| row);
                    if let (true, true, Some(row)) = (idle, c.repeat_row, last) {
                        // The last sample found a plain-TCP connection and nothing
                        // changed since: the same row, without looking it up.
                        c.cwnd.push_every(t, row, left);
                        continue;
                    }
                    c.repeat_row = false;
                    if let Some(conn) = c.conn.and_then(|h| self.ep.conn(h)) {
                        // Unchanged since the last row: the same row again (MPTCP's
                        // subflow rows take the full path).
                        c.repeat_row = !conn.is_mptcp();
                        if let (true, true, Some(row)) = (idle, c.repeat_row, last) {
                            c.cwnd.push_every(t, row, left);
                            continue;
                        }
                        let info = conn.info();
                        c.cwnd.push_every(
                            t,
                            CwndRow {
                                cwnd: info.cwnd,
                                ssthresh: info.ssthresh,
                                srtt_ns: dur_nanos(info.srtt),
                                in_flight: info.in_flight,
                            },
                            left,
                        );
                        c.info = Some(info);
                        if conn.is_mptcp() {
                            c.mp_subflows = conn.mptcp_subflow_infos();
                            let mut row = MpRow::default();
                            for i in &c.mp_subflows {
                                row.subflows += 1;
                                row.cwnd += i.cwnd;
                                row.in_flight += i.in_flight;
                                row.retransmits += i.retransmits;
                                row.slow_start += u32::from(i.cwnd < i.ssthresh);
                            }
                            c.mp.push(t, row);
                        }
                    }
                }
                Role::Server(s) => {
                    s.goodput.push_every(t, s.app.interval_bytes, left);
                    s.app.interval_bytes = 0;
                }
            }
        }
    }

    /// End of run: final trace drain and `TcpInfo` snapshot.
    pub fn finish(&mut self) {
        // As in `sample`: a host untouched since the last sample has nothing to drain,
        // and a plain-TCP client's `TcpInfo` is the one its last full sample took
        // (only the idle shortcut ran since), so it is not asked again (at 10^5 flows
        // `Connection::info` at the end of the run was ~3.6 M simulated LL misses).
        let idle = !self.changed;
        if !idle {
            self.drain_traces();
        }
        for f in &mut self.flows {
            match &mut f.role {
                Role::Client(c) => {
                    if idle && c.repeat_row && c.info.is_some() {
                        continue;
                    }
                    if let Some(conn) = c.conn.and_then(|h| self.ep.conn(h)) {
                        c.info = Some(conn.info());
                        c.mptcp = conn.is_mptcp();
                        if c.mptcp {
                            c.mp_subflows = conn.mptcp_subflow_infos();
                        }
                    }
                }
                Role::Server(s) if s.app.is_web() => {
                    if let Some(conn) = s.conn.and_then(|h| self.ep.conn(h)) {
                        s.info = Some(Box::new(conn.info()));
                    }
                }
                Role::Server(_) => {}
            }
        }
    }

    /// The earliest app deadline: a client's start (until it connects), its app timer
    /// (once it has a connection) and a UDP source's next datagram. Plain loops and
    /// `min_opt` rather than iterator chains: the engine asks after every packet the
    /// host handles or sends (about 240 000 calls in `bench sim`'s 2 s run), and the
    /// `filter_map`/`chain`/`flatten` version cost about 44 instructions a call more.
    fn app_timeout(&self) -> Option<Instant> {
        let mut at = None;
        for f in &self.flows {
            let Role::Client(c) = &f.role else {
                continue;
            };
            if c.connect_at.is_none() && c.connect_error.is_none() && c.app.may_connect() {
                at = min_opt(at, Some(c.start));
            }
            if c.conn.is_some() {
                at = min_opt(at, c.app.poll_timeout());
            }
            at = min_opt(at, c.app.udp_next_at(c.start));
        }
        at
    }

    pub fn handle_packet(&mut self, now: Instant, pkt: Packet, ctx: &mut Ctx) {
        self.touch(ctx);
        if brisk_wire::udp::peek_protocol(&pkt.data) == Some(brisk_wire::IPPROTO_UDP)
            && self.udp_in(now, &pkt)
        {
            ctx.pool.give(pkt.data);
            return;
        }
        self.record_delay(now, &pkt);
        receive(&mut self.ep, now, &pkt);
        self.note_acked(now);
        ctx.pool.give(pkt.data);
    }

    /// A UDP packet for this host's `udp` receiver of the packet's flow: accounted
    /// there with its one-way delay. False if no such receiver (the endpoint then
    /// counts the packet as a drop).
    fn udp_in(&mut self, now: Instant, pkt: &Packet) -> bool {
        for f in &mut self.flows {
            if let (true, Role::Server(s)) = (f.flow == pkt.flow, &mut f.role) {
                if s.app.is_udp() {
                    s.owd
                        .record(dur_nanos(now.saturating_duration_since(pkt.sent_at)));
                    s.app.on_udp_packet(now, &pkt.data);
                    return true;
                }
            }
        }
        false
    }

    /// A data packet (TCP payload) of a flow this host receives: its one-way delay,
    /// from the sending host's hand-off (`sent_at`, which network elements carry
    /// through unchanged) to now. Hosts hold one flow side each, so the search is short.
    fn record_delay(&mut self, now: Instant, pkt: &Packet) {
        if brisk_wire::peek::tcp_payload_len(&pkt.data).is_none_or(|n| n == 0) {
            return;
        }
        for f in &mut self.flows {
            if let (true, Role::Server(s)) = (f.flow == pkt.flow, &mut f.role) {
                s.owd
                    .record(dur_nanos(now.saturating_duration_since(pkt.sent_at)));
                return;
            }
        }
    }

    pub fn poll_packet(&mut self, now: Instant, ctx: &mut Ctx) -> Option<Packet> {
        // The engine polls a node only right after handing it a packet or a timeout
        // (`Node`'s contract), which marked it changed.
        debug_assert!(self.changed, "polled without a packet or a timeout first");
        let mut buf = ctx.pool.take();
        if self.udp_sources {
            if let Some(p) = self.poll_udp(now, ctx, &mut buf) {
                return Some(p);
            }
        }
        loop {
            // Most calls after a packet find nothing queued (the endpoint's ready
            // connections are polled dry before `process`): that is known without the
            // call.
            let tx = if self.ep.has_queued_output() {
                self.ep.poll_transmit(now, &mut buf)
            } else {
                None
            };
            if let Some(tx) = tx {
                debug_assert_eq!(tx.len, buf.len());
                let idx = tx.conn.and_then(|h| self.flow_for_conn(h));
                if let (Some(h), Some(i)) = (tx.conn, idx) {
                    self.note_sent(h, i, now);
                }
                let flow = idx
                    .or(if self.flows.is_empty() { None } else { Some(0) })
                    .map_or(u32::MAX, |i| self.flows[i].flow);
                return Some(Packet {
                    data: ctx.pool.fit(buf),
                    id: ctx.next_packet_id(),
                    flow,
                    sent_at: now,
                    // `poll_transmit` wrote it with `emit_tcp_packet`, checksums
                    // computed; elements that damage it clear this.
                    l4_csum_valid: true,
                });
            }
            if !self.process(now, ctx.scratch(SCRATCH)) {
                ctx.pool.give(buf);
                return None;
            }
        }
    }

    /// A due UDP datagram, which leaves at once (no congestion control, no send
    /// buffer), written into `buf` and taken from it. Out of line: hosts without UDP
    /// sources never run it, and inlined it sat in the middle of `poll_packet`, whose
    /// code every packet fetches (the instruction cache, docs/performance.md, "The hot
    /// path as shipped").
    #[inline(never)]
    fn poll_udp(&mut self, now: Instant, ctx: &mut Ctx, buf: &mut Vec<u8>) -> Option<Packet> {
        for f in &mut self.flows {
            if let Role::Client(c) = &mut f.role {
                if c.app.udp_poll(self.ip, c.remote, buf) {
                    return Some(Packet {
                        data: ctx.pool.fit(std::mem::take(buf)),
                        id: ctx.next_packet_id(),
                        flow: f.flow,
                        sent_at: now,
                        // UDP: the receiving host never takes this through a TCP
                        // parse, so there is nothing to vouch for.
                        l4_csum_valid: false,
                    });
                }
            }
        }
        None
    }

    /// Flow `i`'s client has sent on `h`: its records whose last byte has now been
    /// sent once (for the record latency after first transmission).
    fn note_sent(&mut self, h: ConnHandle, i: usize, now: Instant) {
        let Role::Client(c) = &mut self.flows[i].role else {
            return;
        };
        if let Some(sent) = self.ep.conn(h).map(|k| k.sent_offset()) {
            c.app.note_sent(sent, now);
        }
    }

    /// After an arriving packet: records of this host's senders that it ACKed.
    fn note_acked(&mut self, now: Instant) {
        for f in &mut self.flows {
            if let Role::Client(c) = &mut f.role {
                if !c.app.awaits_ack() {
                    continue;
                }
                if let Some(acked) = c
                    .conn
                    .and_then(|h| self.ep.conn(h))
                    .map(|k| k.acked_offset())
                {
                    c.app.note_acked(acked, now);
                }
            }
        }
    }

    pub fn handle_timeout(&mut self, now: Instant, ctx: &mut Ctx) {
        self.touch(ctx);
        if self.ep.poll_timeout().is_some_and(|t| t <= now) {
            self.ep.handle_timeout(now);
        }
        self.run_apps(now);
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        min_opt(self.ep.poll_timeout(), self.app_timeout())
    }
}

/// `Host::drain_traces` for one flow whose connection has trace events or is a web
/// server's: its events into the flow's series and logs, and a web server's `info`.
#[inline(never)]
fn drain_flow(f: &mut HostFlow, conn: &mut Connection, trace: &mut Vec<TraceEvent>) {
    let c = match &mut f.role {
        Role::Client(c) => c,
        Role::Server(s) => {
            if conn.has_trace() {
                conn.drain_trace(trace);
                for ev in trace.drain(..) {
                    if let TraceEvent::Retransmit { seq, len, .. } = ev {
                        add_retx(&mut s.retx, seq, len);
                    }
                }
            }
            if s.app.is_web() {
                s.info = Some(Box::new(conn.info()));
            }
            return;
        }
    };
    conn.drain_trace(trace);
    for ev in trace.drain(..) {
        match ev {
            TraceEvent::RttSample { rtt, .. } => {
                c.last_rtt_ns = dur_nanos(rtt);
                c.rtt.push(c.last_rtt_ns);
                c.rtt_agg.push(c.last_rtt_ns);
            }
            TraceEvent::Cwnd { cwnd, .. } => c.last_cwnd = cwnd,
            TraceEvent::Retransmit { seq, len, .. } => add_retx(&mut c.retx, seq, len),
            TraceEvent::CcState { at, diag } => {
                if c.cc.rows.len() < MAX_CC_ROWS {
                    let row = CcRow {
                        diag,
                        rtt_ns: c.last_rtt_ns,
                        cwnd: c.last_cwnd,
                    };
                    c.cc.push(at.as_nanos(), row);
                } else {
                    c.cc_dropped += 1;
                }
            }
            _ => {}
        }
    }
}

/// A simulated packet into a host's endpoint. One the path vouches for skips the TCP
/// checksum (`Packet::l4_csum_valid`, Linux's `CHECKSUM_UNNECESSARY`); a damaged one
/// had the flag cleared and is verified (and dropped).
pub(crate) fn receive(ep: &mut Endpoint, now: Instant, pkt: &Packet) {
    if pkt.l4_csum_valid {
        ep.handle_packet_trusted(now, &pkt.data);
    } else {
        ep.handle_packet(now, &pkt.data);
    }
}

/// The earlier of two optional deadlines (`None` is "no deadline", not "earliest").
#[inline]
fn min_opt(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Records in `by_conn` that connection `h` belongs to flow `i` (a reused handle is
/// overwritten, as the map this replaced did).
fn set_flow_for_conn(by_conn: &mut Vec<u32>, h: ConnHandle, i: usize) {
    let k = h.0 as usize;
    if by_conn.len() <= k {
        by_conn.resize(k + 1, u32::MAX);
    }
    by_conn[k] = u32::try_from(i).expect("flows per host fit in u32");
}

/// A traced retransmission of `len` bytes at `seq` (relative to the ISN: stream
/// offset `seq − 1`; a bare FIN logs the byte after the data).
fn add_retx(log: &mut ByteRanges, seq: u64, len: u32) {
    let start = seq.saturating_sub(1);
    log.add(start, start + u64::from(len));
}
