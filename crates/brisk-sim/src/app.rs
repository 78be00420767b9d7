//! Applications that drive one connection each: `bulk`, `records` and
//! `request_response`, as a client (the flow's sender, which opens the connection) and a
//! server (the receiver).
//!
//! The payload (brisk-app's `payload`: a per-flow seeded pattern, checked byte for byte
//! as it is read, SHA-256 at both ends), the `bulk` sender and the `records` framing,
//! schedule and queue are brisk-app's, shared with real-packet runs; this module adds
//! the simulator's event-driven wiring and the apps only the simulator runs.
//!
//! Record framing (`records`): each record is `size` bytes, starting with a 24-byte
//! header `magic "BRK1" | index u64 | send time ns u64 | length u32` (big-endian). The
//! receiver parses records from the byte stream and counts one delivered when its last
//! byte has been read, with latency `read time - send time`.
//!
//! Unordered receive (`[flow.tcp] unordered = true`, uTCP): the receiver reads with
//! `read_unordered`. Goodput and `bytes_delivered` then count each byte at its *first*
//! delivery (out of order or in order, never twice), and a record counts as delivered
//! (latency measured) once all its bytes have reached the app in any order
//! (`crate::unordered`). Integrity checks (pattern, headers, SHA-256) still run on the
//! in-order stream, which uTCP delivers in full.
//!
//! Apps talk to the connection through brisk-tcp's [`ByteStream`] (alias [`Pipe`]) so
//! they can be tested without TCP and the same code can run over other streams. The
//! simulator's streams never fail, so an error is treated as "nothing moved".

use brisk_time::{dur_nanos, Duration, Instant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;

use crate::dgram_app::{DgramAccount, DgramSink, DgramSource};
use crate::metrics::Samples;
use crate::page_app::{PageClient, PageServer};
use crate::scenario::AppSpec;
use crate::udp_app::{UdpSink, UdpSource};
use crate::unordered::{FirstDelivery, RecordAssembly, UnorderedRx};
use crate::web::{Page, SharedPage, SizeQueue};
use brisk_app::bulk::BulkSource;
use brisk_app::records::{self, RecordPlan, RecordReader, RecordSource};
use brisk_tcp::stream::ByteStream;
#[cfg(test)]
use brisk_tcp::UnorderedRead;

/// Length of a record header (brisk-app's framing, shared with real-packet runs).
pub const RECORD_HEADER_LEN: usize = records::HEADER_LEN;
/// A web request's size when the scenario gives none (a typical HTTP/1.1 GET).
pub const DEFAULT_WEB_REQUEST: u64 = 300;

// The payload and the stream halves are brisk-app's (shared with real-packet runs);
// re-exported so the `brisk_sim::app` paths hold.
pub use brisk_app::payload::{Pattern, RxStream, TxStream, PATTERN_LEN};
pub use brisk_app::records::{MAX_PENDING_RECORDS, MAX_RECORD_TIMES};

/// What an app needs from a connection: brisk-tcp's [`ByteStream`], which
/// `brisk_tcp::Connection` (the simulator's app-side handle) implements, as do the
/// real-packet lab's streams. The old name stays for existing users.
pub use brisk_tcp::stream::ByteStream as Pipe;

/// Parses records out of the byte stream (receiver side of `records`): brisk-app's
/// framing, with every body byte checked against the pattern.
#[derive(Debug)]
struct RecordParser {
    size: u64,
    reader: RecordReader,
}

impl RecordParser {
    fn new(size: u64) -> Self {
        RecordParser {
            size,
            reader: RecordReader::new(size),
        }
    }

    /// Consumes `data` (at stream offset `off`); pattern-checks body bytes; calls
    /// `done(sent_at_ns)` per completed record.
    fn feed(&mut self, rx: &mut RxStream, off: u64, data: &[u8], done: impl FnMut(u64)) {
        self.reader
            .feed(data, |i, body| rx.check_pattern(off + i as u64, body), done);
    }

    fn bad_headers(&self) -> u64 {
        self.reader.bad_headers()
    }
}

/// The layered source's rate control: the CDG paper's SCC video (Hayes et al.) is
/// under-specified, so this is a labelled substitute, a delay-based layer controller
/// in SCC's spirit. It watches the delay of each record from its generation to its
/// cumulative ACK (sender backlog plus round trip) and keeps the least such delay as
/// the base. Once per [`LAYER_HOLD`] it takes the least delay of that period (a
/// minimum filter, so delayed ACKs and other one-off waits do not count) and:
/// - drops a layer when it exceeds the base by more than [`LAYER_DOWN`];
/// - adds a layer when it is within [`LAYER_UP`] of the base.
///
/// At least one layer always runs (the base layer of scalable video); it starts with
/// that one and probes upwards.
#[derive(Debug, Clone)]
pub struct LayerControl {
    max: u32,
    pub active: u32,
    base: Option<Duration>,
    period_start: Instant,
    period_min: Option<Duration>,
    /// Layer-intervals sent, for the mean number of layers.
    pub layer_ticks: u64,
    pub ticks: u64,
}

/// Queueing above the base delay that makes the source drop a layer.
pub const LAYER_DOWN: Duration = Duration::from_millis(100);
/// Queueing below which the source adds a layer.
pub const LAYER_UP: Duration = Duration::from_millis(25);
/// The decision period.
pub const LAYER_HOLD: Duration = Duration::from_secs(1);

impl LayerControl {
    pub fn new(max: u32, now: Instant) -> Self {
        LayerControl {
            max: max.clamp(1, 16),
            active: 1,
            base: None,
            period_start: now,
            period_min: None,
            layer_ticks: 0,
            ticks: 0,
        }
    }

    fn note_tick(&mut self, sent: u32) {
        self.layer_ticks += u64::from(sent);
        self.ticks += 1;
    }

    fn on_record_acked(&mut self, now: Instant, delay: Duration) {
        let base = self.base.map_or(delay, |b| b.min(delay));
        self.base = Some(base);
        let m = self.period_min.map_or(delay, |m| m.min(delay));
        self.period_min = Some(m);
        if now - self.period_start < LAYER_HOLD {
            return;
        }
        let queued = m - base;
        if queued > LAYER_DOWN {
            self.active = self.active.saturating_sub(1).max(1);
        } else if queued < LAYER_UP {
            self.active = (self.active + 1).min(self.max);
        }
        self.period_start = now;
        self.period_min = None;
    }
}

/// Application-level results of one side.
#[derive(Debug, Default)]
pub struct AppStats {
    /// When the last byte of a sized transfer (or the last response) was read.
    pub completed_at: Option<Instant>,
    /// Per-record (or per-exchange) delivery latencies, ns.
    pub latencies: Samples,
    /// Records not generated because the pending queue was full.
    pub records_skipped: u64,
    /// Record headers that did not parse or were out of sequence.
    pub bad_headers: u64,
    /// (generation ns, delivery ns) of each record whose latency was measured.
    pub deliveries: Vec<(u64, u64)>,
    /// Per record (sender side): from the first transmission of its last byte to the
    /// cumulative ACK that covers it (the RDB paper's "ACK latency", §IV-B), ns.
    pub ack_latencies: Samples,
}

#[derive(Debug)]
enum ClientKind {
    /// brisk-app's bulk sender, and its pause (from, until), if it has one.
    Bulk(BulkSource, Option<(Instant, Instant)>),
    /// brisk-app's records sender.
    Records {
        source: RecordSource,
        /// A layered source: records per interval follow this controller.
        layers: Option<LayerControl>,
    },
    Rr {
        request: u64,
        response: u64,
        count: Option<u64>,
        think: Duration,
        think_exp: bool,
        done: u64,
        /// Request bytes still to write for the current exchange.
        req_left: u64,
        /// Response bytes still to read.
        resp_left: u64,
        started_at: Instant,
        next_at: Option<Instant>,
    },
    /// Datagrams over uCOBS (`crate::dgram_app`).
    Datagrams(Box<DgramSource>),
    /// A page load on one connection (`crate::page_app`).
    Page(Box<PageClient>),
    /// Datagrams over UDP (`crate::udp_app`): no connection; the host sends them.
    Udp(Box<UdpSource>),
    /// One of a page's connections (`crate::web`).
    Web {
        page: SharedPage,
        conn: u32,
        request: u64,
        /// The server's queue of object sizes on this connection.
        sizes: SizeQueue,
        req_left: u64,
        /// The object being fetched and its bytes still to read.
        cur: Option<(usize, u64)>,
    },
}

/// The flow's sender side: opens the connection and produces the forward stream.
#[derive(Debug)]
pub struct ClientApp {
    kind: ClientKind,
    pub tx: TxStream,
    pub rx: RxStream,
    pub stats: AppStats,
    /// Records written whole into the send buffer, not yet sent whole once:
    /// (stream offset of their end, generation ns).
    written: VecDeque<(u64, u64)>,
    /// (generation ns, when the record's last byte was first transmitted ns), in
    /// generation order.
    pub first_tx: Vec<(u64, u64)>,
    /// Records sent whole at least once, not yet cumulatively ACKed: (stream offset
    /// of their end, first transmission ns, generation ns). Bounded like `written`.
    unacked: VecDeque<(u64, u64, u64)>,
    rng: ChaCha8Rng,
    connected: bool,
    closed: bool,
}

impl ClientApp {
    pub fn new(spec: &AppSpec, fwd: Rc<Pattern>, rev: Rc<Pattern>, seed: u64) -> Self {
        let kind = match *spec {
            AppSpec::Bulk {
                bytes,
                write_size,
                pause,
            } => ClientKind::Bulk(
                BulkSource {
                    total: bytes.map(|b| b.0),
                    write_size: write_size.map(|w| w.0 as usize),
                },
                pause.map(|q| (Instant::ZERO + q.at.0, Instant::ZERO + q.at.0 + q.length.0)),
            ),
            AppSpec::Records {
                size,
                interval,
                jitter,
                jitter_sd,
                count,
                layers,
            } => ClientKind::Records {
                layers: layers.map(|n| LayerControl::new(n, Instant::ZERO)),
                source: RecordSource::new(RecordPlan {
                    size: size.0,
                    interval: interval.0,
                    jitter: jitter.map(|j| j.0).unwrap_or_default(),
                    jitter_sd: jitter_sd.map(|j| j.0).unwrap_or_default(),
                    count,
                }),
            },
            AppSpec::Datagrams {
                size,
                interval,
                jitter,
                count,
                urgent_every,
            } => ClientKind::Datagrams(Box::new(DgramSource::new(
                fwd.clone(),
                size.0,
                interval.0,
                jitter.map(|j| j.0).unwrap_or_default(),
                count,
                urgent_every,
            ))),
            AppSpec::Udp {
                size,
                interval,
                jitter,
                count,
            } => ClientKind::Udp(Box::new(UdpSource::new(
                fwd.clone(),
                size.0,
                interval.0,
                jitter.map(|j| j.0).unwrap_or_default(),
                count,
            ))),
            AppSpec::RequestResponse {
                request,
                response,
                count,
                think,
                think_exp,
            } => ClientKind::Rr {
                request: request.0,
                response: response.0,
                count,
                think: think.map(|t| t.0).unwrap_or_default(),
                think_exp: think_exp == Some(true),
                done: 0,
                req_left: 0,
                resp_left: 0,
                started_at: Instant::ZERO,
                next_at: None,
            },
            AppSpec::Page { .. } => {
                // NOTE(expect): matched just above.
                ClientKind::Page(Box::new(PageClient::new(
                    spec.page_config().expect("a page"),
                    fwd.clone(),
                    rev.clone(),
                )))
            }
            // A page on one connection; `ClientApp::web` builds the shared page for
            // several.
            AppSpec::Web {
                ref objects,
                request,
                ..
            } => {
                let sizes: Vec<u64> = objects.iter().map(|o| o.0).collect();
                return Self::web(
                    Page::new(&sizes, 1),
                    0,
                    request.map_or(DEFAULT_WEB_REQUEST, |r| r.0),
                    SizeQueue::default(),
                    fwd,
                    rev,
                    seed,
                );
            }
        };
        Self::with_kind(kind, fwd, rev, seed)
    }

    /// Connection `conn` of a page download; `sizes` is shared with its server.
    pub fn web(
        page: SharedPage,
        conn: u32,
        request: u64,
        sizes: SizeQueue,
        fwd: Rc<Pattern>,
        rev: Rc<Pattern>,
        seed: u64,
    ) -> Self {
        let kind = ClientKind::Web {
            page,
            conn,
            request,
            sizes,
            req_left: 0,
            cur: None,
        };
        Self::with_kind(kind, fwd, rev, seed)
    }

    fn with_kind(kind: ClientKind, fwd: Rc<Pattern>, rev: Rc<Pattern>, seed: u64) -> Self {
        ClientApp {
            written: VecDeque::new(),
            first_tx: Vec::new(),
            unacked: VecDeque::new(),
            kind,
            tx: TxStream::new(fwd),
            rx: RxStream::new(rev),
            stats: AppStats::default(),
            rng: ChaCha8Rng::seed_from_u64(seed),
            connected: false,
            closed: false,
        }
    }

    /// The connection is established: start producing.
    pub fn on_connected(&mut self, now: Instant, p: &mut dyn ByteStream) {
        self.connected = true;
        match &mut self.kind {
            ClientKind::Records { source, .. } => source.start(now),
            ClientKind::Rr { next_at, .. } => *next_at = Some(now),
            ClientKind::Datagrams(d) => d.start(now),
            ClientKind::Page(c) => c.start(now, p),
            ClientKind::Bulk(..) | ClientKind::Udp(_) => {}
            ClientKind::Web { .. } => self.web_next(now, p),
        }
        self.handle_timeout(now, p);
    }

    /// Whether the connection may open now (a page's other connections wait for the
    /// HTML).
    pub fn may_connect(&self) -> bool {
        match &self.kind {
            ClientKind::Web { page, conn, .. } => page.borrow().may_connect(*conn),
            // UDP opens no connection.
            ClientKind::Udp(_) => false,
            _ => true,
        }
    }

    /// The browser of a `page` flow.
    pub fn page_client(&self) -> Option<&PageClient> {
        match &self.kind {
            ClientKind::Page(c) => Some(c),
            _ => None,
        }
    }

    /// The page this connection belongs to, if it is a web connection.
    pub fn page(&self) -> Option<&SharedPage> {
        match &self.kind {
            ClientKind::Web { page, .. } => Some(page),
            _ => None,
        }
    }

    /// An idle web connection asks for the next object, or closes when none is left.
    fn web_next(&mut self, now: Instant, p: &mut dyn ByteStream) {
        let ClientKind::Web {
            page,
            conn,
            request,
            sizes,
            req_left,
            cur,
        } = &mut self.kind
        else {
            return;
        };
        if cur.is_some() || self.closed {
            return;
        }
        let mut pg = page.borrow_mut();
        if let Some(k) = pg.take(*conn, now) {
            let size = pg.objects[k].size;
            sizes.borrow_mut().push_back(size);
            *cur = Some((k, size));
            *req_left = *request;
        } else if pg.exhausted() {
            let _ = p.shutdown_write();
            self.closed = true;
        }
    }

    /// App timer (record generation, think time).
    pub fn poll_timeout(&self) -> Option<Instant> {
        match &self.kind {
            ClientKind::Records { source, .. } => source.next_at(),
            // Wake at the end of a pause to write again.
            ClientKind::Bulk(_, pause) => pause.map(|(_, until)| until),
            ClientKind::Rr { next_at, .. } => *next_at,
            ClientKind::Datagrams(d) => d.sched.next_at,
            // The host drives a UDP source (`ClientApp::udp_next_at`).
            ClientKind::Web { .. } | ClientKind::Page(_) | ClientKind::Udp(_) => None,
        }
    }

    pub fn handle_timeout(&mut self, now: Instant, p: &mut dyn ByteStream) {
        match &mut self.kind {
            ClientKind::Records { source, layers } => {
                let skipped = source.skipped;
                source.generate(now, &mut self.rng, || {
                    let per_tick = layers.as_ref().map_or(1, |l| l.active);
                    if let Some(l) = layers.as_mut() {
                        l.note_tick(per_tick);
                    }
                    per_tick
                });
                self.stats.records_skipped += source.skipped - skipped;
            }
            ClientKind::Rr {
                request,
                response,
                req_left,
                resp_left,
                started_at,
                next_at,
                ..
            } => {
                if next_at.is_some_and(|t| t <= now) {
                    *next_at = None;
                    *req_left = *request;
                    *resp_left = *response;
                    *started_at = now;
                }
            }
            ClientKind::Datagrams(d) => d.generate(now, &mut self.rng),
            ClientKind::Bulk(_, pause) => {
                if pause.is_some_and(|(_, until)| until <= now) {
                    *pause = None;
                }
            }
            ClientKind::Web { .. } | ClientKind::Page(_) | ClientKind::Udp(_) => {}
        }
        self.on_writable(now, p);
    }

    /// The connection has sent the stream's first `sent` bytes at least once: the
    /// records that end within them were first transmitted (whole) by `now`.
    pub fn note_sent(&mut self, sent: u64, now: Instant) {
        while self.written.front().is_some_and(|&(end, _)| end <= sent) {
            // NOTE(unwrap): just checked that there is a front.
            let (end, gen_ns) = self.written.pop_front().unwrap();
            if self.first_tx.len() < MAX_RECORD_TIMES {
                self.first_tx.push((gen_ns, now.as_nanos()));
            }
            self.unacked.push_back((end, now.as_nanos(), gen_ns));
        }
    }

    /// Whether records wait for their cumulative ACK (the host asks before reading
    /// the connection's ACK point).
    pub fn awaits_ack(&self) -> bool {
        !self.unacked.is_empty()
    }

    /// The connection's first `acked` stream bytes are cumulatively ACKed by `now`:
    /// the records within them have their ACK latency.
    pub fn note_acked(&mut self, acked: u64, now: Instant) {
        while let Some(&(end, tx_ns, gen_ns)) = self.unacked.front() {
            if end > acked {
                break;
            }
            self.unacked.pop_front();
            self.stats
                .ack_latencies
                .push(now.as_nanos().saturating_sub(tx_ns));
            if let ClientKind::Records {
                layers: Some(l), ..
            } = &mut self.kind
            {
                l.on_record_acked(
                    now,
                    Duration::from_nanos(now.as_nanos().saturating_sub(gen_ns)),
                );
            }
        }
    }

    /// Writes whatever is due, as far as the send buffer allows.
    pub fn on_writable(&mut self, now: Instant, p: &mut dyn ByteStream) {
        if !self.connected || self.closed {
            return;
        }
        match &mut self.kind {
            ClientKind::Bulk(b, pause) => {
                if !pause.is_some_and(|(from, _)| now >= from) {
                    self.closed = b.write(&mut self.tx, p);
                }
            }
            ClientKind::Records { source, .. } => {
                // Bounded by the send buffer: entries leave as the bytes are sent.
                let written = &mut self.written;
                self.closed = source.write(&mut self.tx, p, |end, gen_ns| {
                    written.push_back((end, gen_ns));
                });
            }
            ClientKind::Datagrams(d) => {
                d.write(now, p);
                self.closed = d.finished;
            }
            ClientKind::Page(c) => c.write(p),
            ClientKind::Udp(_) => {}
            ClientKind::Rr { req_left, .. } | ClientKind::Web { req_left, .. } => {
                if *req_left > 0 {
                    *req_left -= self.tx.write_pattern(p, *req_left);
                }
            }
        }
    }

    /// A UDP source's next wake-up (its start, then each datagram's generation time).
    pub fn udp_next_at(&self, start: Instant) -> Option<Instant> {
        match &self.kind {
            ClientKind::Udp(u) => u.next_at(start),
            _ => None,
        }
    }

    /// A UDP source generates what is due by `now`.
    pub fn udp_generate(&mut self, now: Instant, start: Instant) {
        if let ClientKind::Udp(u) = &mut self.kind {
            u.generate(now, start, &mut self.rng);
        }
    }

    /// Whether this is a UDP source (its kind never changes).
    pub fn is_udp(&self) -> bool {
        matches!(self.kind, ClientKind::Udp(_))
    }

    /// The next due UDP datagram as a whole packet in `out`; false if none.
    pub fn udp_poll(&mut self, src: IpAddr, dst: SocketAddr, out: &mut Vec<u8>) -> bool {
        match &mut self.kind {
            ClientKind::Udp(u) => u.poll_packet(src, dst, out),
            _ => false,
        }
    }

    /// A UDP source's counters: (generated, sent, payload bytes sent).
    pub fn udp_sent(&self) -> Option<(u64, u64, u64)> {
        match &self.kind {
            ClientKind::Udp(u) => Some((u.generated(), u.sent, u.bytes)),
            _ => None,
        }
    }

    /// Payload bytes a `datagrams` source has written into its stream (datagram
    /// headers and bodies, before uCOBS framing; the receiver counts the same unit).
    pub fn datagram_payload_sent(&self) -> Option<u64> {
        match &self.kind {
            ClientKind::Datagrams(d) => Some(d.payload_sent),
            _ => None,
        }
    }

    /// Datagrams a `datagrams` or `udp` source generated.
    pub fn datagrams_generated(&self) -> Option<u64> {
        match &self.kind {
            ClientKind::Datagrams(d) => Some(d.sched.generated),
            ClientKind::Udp(u) => Some(u.generated()),
            _ => None,
        }
    }

    /// Reads everything available (responses, for request/response).
    pub fn on_readable(&mut self, now: Instant, p: &mut dyn ByteStream, scratch: &mut [u8]) {
        if let ClientKind::Page(c) = &mut self.kind {
            c.read(now, p, scratch);
            if c.complete() && self.stats.completed_at.is_none() {
                self.stats.completed_at = Some(now);
                self.closed = true;
            }
            return;
        }
        loop {
            let n = p.read(scratch).unwrap_or(0);
            if n == 0 {
                break;
            }
            let data = &scratch[..n];
            self.rx.check_pattern(self.rx.bytes, data);
            self.rx.account(data);
            if let ClientKind::Rr {
                resp_left,
                done,
                count,
                think,
                think_exp,
                started_at,
                next_at,
                req_left,
                ..
            } = &mut self.kind
            {
                let mut left = n as u64;
                // Responses never overlap: the next request waits for this response.
                if *resp_left > 0 && *req_left == 0 {
                    let used = left.min(*resp_left);
                    *resp_left -= used;
                    left -= used;
                    if *resp_left == 0 {
                        *done += 1;
                        self.stats.latencies.push(dur_nanos(now - *started_at));
                        // Each exchange's (request, response complete) times: a
                        // ping-like probe's latency over time (flent's tests).
                        if self.stats.deliveries.len() < MAX_RECORD_TIMES {
                            self.stats
                                .deliveries
                                .push((started_at.as_nanos(), now.as_nanos()));
                        }
                        if count.is_some_and(|c| *done >= c) {
                            self.stats.completed_at = Some(now);
                            let _ = p.shutdown_write();
                            self.closed = true;
                        } else if *think_exp {
                            // Exponential with mean `think` (inverse transform).
                            let u: f64 = self.rng.gen_range(f64::EPSILON..1.0);
                            let gap = -u.ln() * dur_nanos(*think) as f64;
                            *next_at = Some(now + Duration::from_nanos(gap as u64));
                        } else {
                            *next_at = Some(now + *think);
                        }
                    }
                }
                // Bytes beyond what was asked for break the protocol.
                self.rx.bad_bytes += left;
            }
            if let ClientKind::Web { page, cur, .. } = &mut self.kind {
                let mut left = n as u64;
                if let Some((k, resp_left)) = cur {
                    let used = left.min(*resp_left);
                    *resp_left -= used;
                    left -= used;
                    if *resp_left == 0 {
                        let mut pg = page.borrow_mut();
                        pg.finish(*k, now);
                        if pg.complete() {
                            self.stats.completed_at = Some(now);
                        }
                        *cur = None;
                    }
                }
                self.rx.bad_bytes += left;
                self.web_next(now, p);
                self.on_writable(now, p);
            }
        }
    }
}

#[derive(Debug)]
enum ServerKind {
    Bulk {
        total: Option<u64>,
    },
    Records {
        parser: RecordParser,
        count: Option<u64>,
        delivered: u64,
    },
    Datagrams(Box<DgramSink>),
    Page(Box<PageServer>),
    Udp(Box<UdpSink>),
    Rr {
        request: u64,
        response: u64,
        req_have: u64,
        resp_left: u64,
    },
    /// A page's server: each complete request asks for the next size in `sizes`.
    Web {
        request: u64,
        sizes: SizeQueue,
        req_have: u64,
        resp_left: u64,
    },
}

/// The flow's receiver side: accepts the connection and consumes the forward stream.
#[derive(Debug)]
pub struct ServerApp {
    kind: ServerKind,
    pub tx: TxStream,
    pub rx: RxStream,
    pub stats: AppStats,
    /// Bytes read since the last goodput sample (first deliveries when unordered).
    pub interval_bytes: u64,
    /// Unordered-receive accounting, once the connection reads unordered.
    pub unordered: Option<Box<UnorderedRx>>,
}

impl ServerApp {
    /// The receiver of `spec`, listening on `port` (which a `udp` receiver checks).
    pub fn new(spec: &AppSpec, fwd: Rc<Pattern>, rev: Rc<Pattern>, port: u16) -> Self {
        let kind = match *spec {
            AppSpec::Bulk { bytes, .. } => ServerKind::Bulk {
                total: bytes.map(|b| b.0),
            },
            AppSpec::Records { size, count, .. } => ServerKind::Records {
                parser: RecordParser::new(size.0),
                count,
                delivered: 0,
            },
            AppSpec::Datagrams { size, count, .. } => {
                ServerKind::Datagrams(Box::new(DgramSink::new(fwd.clone(), size.0, count)))
            }
            AppSpec::Page { .. } => {
                // NOTE(expect): matched just above.
                ServerKind::Page(Box::new(PageServer::new(
                    spec.page_config().expect("a page"),
                    fwd.clone(),
                    rev.clone(),
                )))
            }
            AppSpec::Udp { size, count, .. } => {
                ServerKind::Udp(Box::new(UdpSink::new(fwd.clone(), size.0, count, port)))
            }
            AppSpec::RequestResponse {
                request, response, ..
            } => ServerKind::Rr {
                request: request.0,
                response: response.0,
                req_have: 0,
                resp_left: 0,
            },
            AppSpec::Web { request, .. } => ServerKind::Web {
                request: request.map_or(DEFAULT_WEB_REQUEST, |r| r.0),
                sizes: SizeQueue::default(),
                req_have: 0,
                resp_left: 0,
            },
        };
        Self::with_kind(kind, fwd, rev)
    }

    /// The server of one of a page's connections; `sizes` is shared with its client.
    pub fn web(request: u64, sizes: SizeQueue, fwd: Rc<Pattern>, rev: Rc<Pattern>) -> Self {
        let kind = ServerKind::Web {
            request,
            sizes,
            req_have: 0,
            resp_left: 0,
        };
        Self::with_kind(kind, fwd, rev)
    }

    /// Whether this server belongs to a page download (its retransmissions are traced).
    pub fn is_web(&self) -> bool {
        matches!(self.kind, ServerKind::Web { .. })
    }

    fn with_kind(kind: ServerKind, fwd: Rc<Pattern>, rev: Rc<Pattern>) -> Self {
        ServerApp {
            kind,
            tx: TxStream::new(rev),
            rx: RxStream::new(fwd),
            stats: AppStats::default(),
            interval_bytes: 0,
            unordered: None,
        }
    }

    /// Bytes delivered to the app: each byte once, at its first delivery (for
    /// datagrams, their payload bytes).
    pub fn delivered_bytes(&self) -> u64 {
        if let Some(a) = self.dgram_account() {
            return a.payload_bytes;
        }
        self.unordered
            .as_ref()
            .map_or(self.rx.bytes, |u| u.first.bytes)
    }

    /// The server of a `page` flow.
    pub fn page_server(&self) -> Option<&PageServer> {
        match &self.kind {
            ServerKind::Page(s) => Some(s),
            _ => None,
        }
    }

    /// The datagram receiver, for a `datagrams` flow.
    pub fn dgram_sink(&self) -> Option<&DgramSink> {
        match &self.kind {
            ServerKind::Datagrams(d) => Some(d),
            _ => None,
        }
    }

    /// The datagram accounting of a `datagrams` or `udp` flow, and the receiver's
    /// drops of what it could not decode (uCOBS records, UDP packets).
    pub fn dgram_account(&self) -> Option<&DgramAccount> {
        match &self.kind {
            ServerKind::Datagrams(d) => Some(&d.acc),
            ServerKind::Udp(u) => Some(&u.acc),
            _ => None,
        }
    }

    /// Whether this is a `udp` flow's receiver.
    pub fn is_udp(&self) -> bool {
        matches!(self.kind, ServerKind::Udp(_))
    }

    /// A UDP packet for this receiver arrived (`crate::udp_app`).
    pub fn on_udp_packet(&mut self, now: Instant, pkt: &[u8]) {
        let ServerKind::Udp(u) = &mut self.kind else {
            return;
        };
        self.interval_bytes += u.on_packet(now, pkt);
        self.rx.bad_bytes = u.acc.bad;
        if u.acc.complete() && self.stats.completed_at.is_none() {
            self.stats.completed_at = Some(now);
        }
    }

    pub fn on_readable(&mut self, now: Instant, p: &mut dyn ByteStream, scratch: &mut [u8]) {
        if let ServerKind::Page(s) = &mut self.kind {
            // Requests in, responses out, in the page's framing (`crate::page_app`).
            s.read(p, scratch);
            return;
        }
        if let ServerKind::Datagrams(d) = &mut self.kind {
            // uCOBS reads in or out of order itself (`brisk_minion::UcobsReceiver`).
            self.interval_bytes += d.read(now, p);
            self.rx.bad_bytes = d.acc.bad + d.scanner_drops();
            if d.acc.complete() && self.stats.completed_at.is_none() {
                self.stats.completed_at = Some(now);
            }
            return;
        }
        if p.supports_unordered() || self.unordered.is_some() {
            self.read_unordered(now, p, scratch);
            self.on_writable(now, p);
            return;
        }
        // In place where the stream allows (`ByteStream::read_in_place`): the bytes are
        // checked where TCP holds them, not copied to `scratch` first; all that is
        // readable, without a last empty read where the stream knows it is drained.
        // An error is "nothing more moved" (the simulator's streams never fail).
        let _ = p.read_all_in_place(scratch, &mut |data| {
            self.interval_bytes += data.len() as u64;
            self.consume_in_order(now, data, true);
        });
        self.on_writable(now, p);
    }

    /// Greedy unordered reads: first-delivery accounting for every piece, the usual
    /// in-order processing (integrity checks) for in-order pieces.
    fn read_unordered(&mut self, now: Instant, p: &mut dyn ByteStream, scratch: &mut [u8]) {
        let kind = &self.kind;
        let mut u = self.unordered.take().unwrap_or_else(|| {
            Box::new(UnorderedRx {
                first: FirstDelivery::default(),
                records: match kind {
                    ServerKind::Records { parser, .. } => Some(RecordAssembly::new(parser.size)),
                    _ => None,
                },
            })
        });
        while let Ok(Some(r)) = p.read_unordered(scratch) {
            let data = &scratch[..r.len.min(scratch.len())];
            let before = u.first.bytes;
            let lat = &mut self.stats.latencies;
            let deliveries = &mut self.stats.deliveries;
            let mut records = u.records.as_mut();
            let mut add = |off: u64, piece: &[u8]| {
                if let Some(a) = records.as_deref_mut() {
                    a.add(off, piece, |sent| {
                        lat.push(now.as_nanos().saturating_sub(sent));
                        if deliveries.len() < MAX_RECORD_TIMES {
                            deliveries.push((sent, now.as_nanos()));
                        }
                    });
                }
            };
            if r.in_order {
                debug_assert_eq!(r.offset, self.rx.bytes, "in-order reads are contiguous");
                u.first.on_in_order(r.offset, data.len() as u64, |s, e| {
                    add(s, &data[(s - r.offset) as usize..(e - r.offset) as usize]);
                });
            } else if u.first.on_ooo(r.offset, data.len() as u64) {
                add(r.offset, data);
            }
            self.interval_bytes += u.first.bytes - before;
            if r.in_order {
                self.consume_in_order(now, data, false);
            }
        }
        // Completion: every byte (or record) delivered at least once.
        let done = match &self.kind {
            ServerKind::Bulk { total } => total.is_some_and(|t| u.first.bytes >= t),
            ServerKind::Records { count, .. } => {
                count.is_some_and(|c| u.records.as_ref().is_some_and(|a| a.completed >= c))
            }
            ServerKind::Rr { .. }
            | ServerKind::Web { .. }
            | ServerKind::Datagrams(_)
            | ServerKind::Page(_)
            | ServerKind::Udp(_) => false,
        };
        if done && self.stats.completed_at.is_none() {
            self.stats.completed_at = Some(now);
        }
        self.unordered = Some(u);
    }

    /// In-order bytes at offset `rx.bytes`: integrity checks, record parsing and the
    /// app's protocol. `ordered`: record latency and completion are measured here (not
    /// by the unordered accounting).
    fn consume_in_order(&mut self, now: Instant, data: &[u8], ordered: bool) {
        let n = data.len();
        let off = self.rx.bytes;
        {
            match &mut self.kind {
                ServerKind::Bulk { total } => {
                    self.rx.check_pattern(off, data);
                    self.rx.account(data);
                    if let Some(t) = *total {
                        if ordered && self.rx.bytes >= t && self.stats.completed_at.is_none() {
                            self.stats.completed_at = Some(now);
                        }
                        self.rx.bad_bytes += self.rx.bytes.saturating_sub(t).min(n as u64);
                    }
                }
                ServerKind::Records {
                    parser,
                    count,
                    delivered,
                } => {
                    let lat = &mut self.stats.latencies;
                    let deliveries = &mut self.stats.deliveries;
                    let mut finished = 0u64;
                    parser.feed(&mut self.rx, off, data, |sent| {
                        if ordered {
                            lat.push(now.as_nanos().saturating_sub(sent));
                            if deliveries.len() < MAX_RECORD_TIMES {
                                deliveries.push((sent, now.as_nanos()));
                            }
                        }
                        finished += 1;
                    });
                    self.rx.account(data);
                    *delivered += finished;
                    self.stats.bad_headers = parser.bad_headers();
                    if ordered
                        && count.is_some_and(|c| *delivered >= c)
                        && self.stats.completed_at.is_none()
                    {
                        self.stats.completed_at = Some(now);
                    }
                }
                // Read by `DgramSink` / `PageServer` in `on_readable`, never here; UDP
                // has no stream.
                ServerKind::Datagrams(_) | ServerKind::Page(_) | ServerKind::Udp(_) => {}
                ServerKind::Rr {
                    request,
                    response,
                    req_have,
                    resp_left,
                } => {
                    self.rx.check_pattern(off, data);
                    self.rx.account(data);
                    *req_have += n as u64;
                    while *req_have >= *request {
                        *req_have -= *request;
                        *resp_left += *response;
                    }
                }
                ServerKind::Web {
                    request,
                    sizes,
                    req_have,
                    resp_left,
                } => {
                    self.rx.check_pattern(off, data);
                    self.rx.account(data);
                    *req_have += n as u64;
                    while *req_have >= *request {
                        *req_have -= *request;
                        match sizes.borrow_mut().pop_front() {
                            Some(size) => *resp_left += size,
                            // A request the browser did not announce breaks the protocol.
                            None => self.rx.bad_bytes += *request,
                        }
                    }
                }
            }
        }
    }

    pub fn on_writable(&mut self, _now: Instant, p: &mut dyn ByteStream) {
        if let ServerKind::Page(s) = &mut self.kind {
            s.write(p);
            return;
        }
        if let ServerKind::Rr { resp_left, .. } | ServerKind::Web { resp_left, .. } = &mut self.kind
        {
            if *resp_left > 0 {
                *resp_left -= self.tx.write_pattern(p, *resp_left);
            }
        }
    }

    /// The client finished sending: close our side too.
    pub fn on_peer_closed(&mut self, p: &mut dyn ByteStream) {
        let _ = p.shutdown_write();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_follow_the_least_delay_of_each_second() {
        let t = |ms: u64| Instant::from_millis(ms);
        let mut l = LayerControl::new(4, t(0));
        // Calm (delayed ACKs add up to 40 ms to single records, but the least delay
        // of each second is the base): one more layer per second, up to the maximum.
        for k in 0..100u64 {
            let extra = if k % 2 == 0 { 40 } else { 0 };
            l.on_record_acked(t(k * 50), Duration::from_millis(120 + extra));
        }
        assert_eq!(l.active, 4);
        // Every record waits 150 ms beyond the base: one layer per second goes, never
        // the base layer.
        for k in 0..100u64 {
            l.on_record_acked(t(5_000 + k * 50), Duration::from_millis(270));
        }
        assert_eq!(l.active, 1);
        // Queueing between 25 and 100 ms holds the level.
        for k in 0..100u64 {
            l.on_record_acked(t(10_000 + k * 50), Duration::from_millis(170));
        }
        assert_eq!(l.active, 1);
    }
    use crate::units::{Dur, Size};
    use std::io;

    /// An in-memory pipe with a bounded send buffer; "the network" moves bytes from a
    /// pipe's `sent` to the peer's `inbox` on `deliver`.
    #[derive(Default)]
    struct Mem {
        sent: Vec<u8>,
        inbox: VecDeque<u8>,
        cap: usize,
        shut: bool,
    }
    impl ByteStream for Mem {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            let n = data.len().min(self.cap.saturating_sub(self.sent.len()));
            self.sent.extend_from_slice(&data[..n]);
            Ok(n)
        }
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.inbox.len());
            for b in buf.iter_mut().take(n) {
                *b = self.inbox.pop_front().unwrap_or(0);
            }
            Ok(n)
        }
        fn read_unordered(&mut self, _buf: &mut [u8]) -> io::Result<Option<UnorderedRead>> {
            Ok(None)
        }
        fn shutdown_write(&mut self) -> io::Result<()> {
            self.shut = true;
            Ok(())
        }
    }
    fn deliver(from: &mut Mem, to: &mut Mem, max: usize) {
        let n = max.min(from.sent.len());
        to.inbox.extend(from.sent.drain(..n));
    }
    fn mem(cap: usize) -> Mem {
        Mem {
            cap,
            ..Default::default()
        }
    }
    fn pats() -> (Rc<Pattern>, Rc<Pattern>) {
        (Pattern::new(1), Pattern::new(2))
    }

    #[test]
    fn sized_bulk_transfer_arrives_intact_and_completes() {
        let spec = AppSpec::Bulk {
            bytes: Some(Size(300_000)),
            write_size: None,
            pause: None,
        };
        let (f, r) = pats();
        let mut c = ClientApp::new(&spec, f.clone(), r.clone(), 7);
        let mut s = ServerApp::new(&spec, f, r, 5001);
        let (mut cp, mut sp) = (mem(10_000), mem(10_000));
        let mut scratch = vec![0u8; 4096];
        c.on_connected(Instant::ZERO, &mut cp);
        for step in 0..1000u64 {
            deliver(&mut cp, &mut sp, 1448);
            s.on_readable(Instant::from_millis(step), &mut sp, &mut scratch);
            c.on_writable(Instant::from_millis(step), &mut cp);
        }
        assert_eq!(c.tx.bytes, 300_000);
        assert!(cp.shut);
        assert_eq!(s.rx.bytes, 300_000);
        assert_eq!(s.rx.bad_bytes, 0);
        assert_eq!(s.rx.sha256(), c.tx.sha256());
        assert!(s.stats.completed_at.is_some());
    }

    #[test]
    fn a_flipped_byte_is_detected() {
        let spec = AppSpec::Bulk {
            bytes: None,
            write_size: None,
            pause: None,
        };
        let (f, r) = pats();
        let mut c = ClientApp::new(&spec, f.clone(), r.clone(), 7);
        let mut s = ServerApp::new(&spec, f, r, 5001);
        let (mut cp, mut sp) = (mem(5000), mem(0));
        c.on_connected(Instant::ZERO, &mut cp);
        cp.sent[1234] ^= 0x10;
        deliver(&mut cp, &mut sp, 5000);
        s.on_readable(Instant::ZERO, &mut sp, &mut [0u8; 512]);
        assert_eq!(s.rx.bad_bytes, 1);
        assert_ne!(s.rx.sha256(), c.tx.sha256());
    }

    #[test]
    fn records_are_parsed_across_arbitrary_read_boundaries_with_exact_latency() {
        let spec = AppSpec::Records {
            layers: None,
            size: Size(1000),
            interval: Dur(Duration::from_millis(10)),
            jitter: None,
            jitter_sd: None,
            count: Some(5),
        };
        let (f, r) = pats();
        let mut c = ClientApp::new(&spec, f.clone(), r.clone(), 3);
        let mut s = ServerApp::new(&spec, f, r, 5001);
        let (mut cp, mut sp) = (mem(1 << 20), mem(0));
        c.on_connected(Instant::ZERO, &mut cp);
        let mut t = Instant::ZERO;
        while let Some(w) = c.poll_timeout() {
            t = w;
            c.handle_timeout(t, &mut cp);
        }
        assert_eq!(cp.sent.len(), 5000);
        assert!(cp.shut, "closes after the last record");
        // Deliver in awkward 7-byte pieces, 3 ms after the last record was sent.
        let read_at = t + Duration::from_millis(3);
        while !cp.sent.is_empty() {
            deliver(&mut cp, &mut sp, 7);
            s.on_readable(read_at, &mut sp, &mut [0u8; 5]);
        }
        let mut lat = s.stats.latencies.sorted();
        lat.dedup();
        // Records sent at 0, 10, ..., 40 ms, all read at 43 ms.
        assert_eq!(
            lat,
            vec![3_000_000, 13_000_000, 23_000_000, 33_000_000, 43_000_000]
        );
        assert_eq!(s.stats.bad_headers, 0);
        assert_eq!(s.rx.bad_bytes, 0);
        assert_eq!(s.stats.completed_at, Some(read_at));
        assert_eq!(s.rx.sha256(), c.tx.sha256());
    }

    /// A receiver-side pipe that replays scripted `read_unordered` results.
    struct Script {
        reads: VecDeque<(u64, Vec<u8>, bool)>,
    }
    impl ByteStream for Script {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            Ok(data.len())
        }
        fn read(&mut self, _buf: &mut [u8]) -> io::Result<usize> {
            Ok(0)
        }
        fn shutdown_write(&mut self) -> io::Result<()> {
            Ok(())
        }
        fn supports_unordered(&self) -> bool {
            true
        }
        fn read_unordered(&mut self, buf: &mut [u8]) -> io::Result<Option<UnorderedRead>> {
            let Some((offset, data, in_order)) = self.reads.pop_front() else {
                return Ok(None);
            };
            buf[..data.len()].copy_from_slice(&data);
            Ok(Some(UnorderedRead {
                offset,
                len: data.len(),
                in_order,
            }))
        }
    }

    #[test]
    fn unordered_records_count_at_first_complete_delivery_and_bytes_once() {
        let spec = AppSpec::Records {
            layers: None,
            size: Size(1000),
            interval: Dur(Duration::from_millis(10)),
            jitter: None,
            jitter_sd: None,
            count: Some(3),
        };
        let (f, r) = pats();
        let mut c = ClientApp::new(&spec, f.clone(), r.clone(), 3);
        let mut s = ServerApp::new(&spec, f, r, 5001);
        let mut cp = mem(1 << 20);
        c.on_connected(Instant::ZERO, &mut cp);
        while let Some(w) = c.poll_timeout() {
            c.handle_timeout(w, &mut cp);
        }
        let st = cp.sent.clone();
        let piece = |a: usize, b: usize, in_order| (a as u64, st[a..b].to_vec(), in_order);
        let mut scratch = [0u8; 4096];
        let mut at = |ms: u64, reads: Vec<(u64, Vec<u8>, bool)>, s: &mut ServerApp| {
            let mut p = Script {
                reads: reads.into(),
            };
            s.on_readable(Instant::from_millis(ms), &mut p, &mut scratch);
        };
        // Records sent at 0, 10, 20 ms. Record 0 arrives in order at 15 ms; record 2
        // out of order in two pieces at 25 ms; record 1 fills the hole at 40 ms, and
        // record 2 is read again in order.
        at(15, vec![piece(0, 1000, true)], &mut s);
        at(
            25,
            vec![piece(2000, 2010, false), piece(2010, 3000, false)],
            &mut s,
        );
        assert_eq!(s.delivered_bytes(), 2000);
        assert_eq!(s.rx.bytes, 1000);
        assert!(s.stats.completed_at.is_none());
        at(40, vec![piece(1000, 3000, true)], &mut s);
        assert_eq!(
            s.stats.latencies.sorted(),
            vec![5_000_000, 15_000_000, 30_000_000]
        );
        assert_eq!(s.delivered_bytes(), 3000);
        assert_eq!(
            s.interval_bytes, 3000,
            "goodput counts first deliveries only"
        );
        assert_eq!(s.stats.completed_at, Some(Instant::from_millis(40)));
        assert_eq!(
            (s.rx.bytes, s.rx.bad_bytes, s.stats.bad_headers),
            (3000, 0, 0)
        );
        assert_eq!(s.rx.sha256(), c.tx.sha256());
    }

    #[test]
    fn records_with_jitter_stay_in_order_and_within_bounds() {
        let spec = AppSpec::Records {
            layers: None,
            size: Size(100),
            interval: Dur(Duration::from_millis(10)),
            jitter: Some(Dur(Duration::from_millis(4))),
            jitter_sd: None,
            count: Some(50),
        };
        let (f, r) = pats();
        let mut c = ClientApp::new(&spec, f, r, 11);
        let mut cp = mem(1 << 20);
        c.on_connected(Instant::ZERO, &mut cp);
        // The first record goes out on connect, at time zero.
        let mut times = vec![Instant::ZERO];
        while let Some(w) = c.poll_timeout() {
            times.push(w);
            c.handle_timeout(w, &mut cp);
        }
        assert_eq!(times.len(), 50);
        for (k, w) in times.iter().enumerate().skip(1) {
            let base = Instant::from_millis(10 * k as u64);
            assert!(
                *w >= base && *w <= base + Duration::from_millis(4),
                "{k}: {w}"
            );
        }
        assert!(times
            .windows(2)
            .any(|w| w[1] - w[0] != Duration::from_millis(10)));
    }

    #[test]
    fn request_response_measures_each_exchange() {
        let spec = AppSpec::RequestResponse {
            think_exp: None,
            request: Size(100),
            response: Size(3000),
            count: Some(3),
            think: Some(Dur(Duration::from_millis(5))),
        };
        let (f, r) = pats();
        let mut c = ClientApp::new(&spec, f.clone(), r.clone(), 1);
        let mut s = ServerApp::new(&spec, f, r, 5001);
        let (mut cp, mut sp) = (mem(1 << 20), mem(1 << 20));
        let mut now = Instant::ZERO;
        c.on_connected(now, &mut cp);
        let mut scratch = [0u8; 1024];
        for _ in 0..100 {
            now += Duration::from_millis(1);
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now, &mut cp);
            }
            deliver(&mut cp, &mut sp, usize::MAX);
            s.on_readable(now, &mut sp, &mut scratch);
            now += Duration::from_millis(1);
            deliver(&mut sp, &mut cp, usize::MAX);
            c.on_readable(now, &mut cp, &mut scratch);
        }
        assert_eq!(c.stats.latencies.len(), 3);
        // The first request is written at 0 and reaches the server at the 1 ms step; later
        // ones start on the step the server reads them, so they take one step less.
        assert_eq!(
            c.stats.latencies.sorted(),
            vec![1_000_000, 1_000_000, 2_000_000]
        );
        assert!(c.stats.completed_at.is_some());
        assert_eq!((c.rx.bad_bytes, s.rx.bad_bytes), (0, 0));
        assert_eq!(s.tx.bytes, 9000);
        assert_eq!(c.rx.sha256(), s.tx.sha256());
    }
}
