//! Web page loads over a GEO satellite path, through a split-TCP PEP or end to end
//! (seed 004 App. D.1; spec `rite-satellite-web-innerspace-abe.md` §1; claims WEB-1 to
//! WEB-6; docs/mechanisms/satellite-web.md).
//!
//! The path is a chain of four nodes and three two-way links:
//!
//! ```text
//! client C ──LAN── terminal T ══satellite══ gateway G ──terrestrial── server S
//! ```
//!
//! The satellite hop is asymmetric: the forward link (G → T, the seed's FL, 8 or
//! 2.048 Mbit/s) and the return link (T → G, RL, 512 kbit/s), each with a drop-tail
//! queue. The one-way delays add up to the seed's emulator reference, an RTT of
//! 750 ms. End to end (the seed's IPsec tunnel), T and G only forward packets. With
//! the PEP, T and G are brisk endpoints: T owns the server's address (a transparent
//! proxy), accepts the client's connection, opens its own to G; G accepts and opens
//! the third to S; [`crate::pep::Relay`]s join the legs. The client-facing leg is
//! terminated without window scaling when `drop_wscale` is set (the option the seed
//! saw the PEP drop).
//!
//! The page app speaks a frame format shaped like HTTP/2's (RFC 9113 §4.1: a 9-byte
//! header, length, type, flags, stream) for every protocol, so one parser serves all:
//! - HTTP/1.1: `connections` connections, one outstanding request each, persistent
//!   or one object per connection; the HTML (object 0) first, the other connections
//!   opened once it is in (as the `web` app does).
//! - HTTP/2: one connection, at most `stream_cap` streams open, DATA frames of the
//!   open streams round-robin, per-stream and connection flow-control windows with
//!   WINDOW_UPDATEs (RFC 9113 §5.2, §6.9); discovery by ALPN (inside TLS, no round
//!   trip) or by an Upgrade exchange (one round trip, the seed's model).
//! - TLS: the handshake as its real flights of realistic sizes over the byte stream
//!   (a round-trip model with real bytes: see the doc for why not rustls): TLS 1.2
//!   full (2 RTT), resumed (1 RTT), TLS 1.3 full (1 RTT), TLS 1.3 0-RTT (requests as
//!   early data). Later connections of a page resume the first one's session.
//!
//! Everything is virtual time in integer nanoseconds; one seed, one run.

use crate::pep::{Relay, RelayCounters};
use crate::sat_tls::{Session, TlsPair};
use brisk_net::{DropTail, Element, Link, LinkParams, Loss, Packet, Queue, QueueLimit};
use brisk_tcp::{Config, ConnHandle, Endpoint, EndpointConfig, Event, State};
use brisk_time::{Duration, Instant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use siphasher::sip::SipHasher13;
use std::collections::VecDeque;
use std::hash::Hasher;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

pub const CLIENT: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
pub const SERVER: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
pub const TERMINAL: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 3);
pub const GATEWAY: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 4);
const PORT: u16 = 443;
/// LAN (client to terminal) and terrestrial (gateway to server) links.
const LAN_BPS: u64 = 100_000_000;
const LAN_ONE_WAY: Duration = Duration::from_micros(500);
const TERR_BPS: u64 = 100_000_000;
const TERR_ONE_WAY: Duration = Duration::from_millis(5);
const WIRE_QUEUE: usize = 1000;
/// Throughput series bin (the seed's Figs 2–3 sample every 100 ms).
pub const BIN: Duration = Duration::from_millis(100);
const MAX_STEPS_PER_INSTANT: u32 = 200_000;
const READ_CHUNK: usize = 64 * 1024;
pub const MAX_OBJECTS: usize = 10_000;
pub const MAX_CONNECTIONS: usize = 64;

/// Model sizes, bytes (see the doc): an HTTP/1.1 request and response header, an
/// HTTP/2 request and response HEADERS block (HPACK-compressed), the TLS flights.
pub const H1_REQUEST: usize = 400;
pub const H1_RESPONSE_HEADER: usize = 300;
pub const H2_REQUEST: usize = 100;
pub const H2_RESPONSE_HEADER: usize = 60;
pub const UPGRADE_REQUEST: usize = 400;
pub const UPGRADE_RESPONSE: usize = 150;
pub const TLS_CLIENT_HELLO: usize = 512;
pub const TLS_SERVER_FULL: usize = 4000;
pub const TLS_SERVER_RESUMED: usize = 250;
pub const TLS_CLIENT_KEY_EXCHANGE: usize = 200;
pub const TLS_FINISHED: usize = 60;
/// HTTP/2's default and largest DATA frame payload.
pub const FRAME: usize = 16_384;
use crate::page_app::{h2_frame_header, H2_HEADER as HEADER};

// Frame types: HTTP/2's where it has one (RFC 9113 §6), private ones above 0x1f.
const T_DATA: u8 = 0x0;
const T_HEADERS: u8 = 0x1;
const T_SETTINGS: u8 = 0x4;
const T_WINDOW_UPDATE: u8 = 0x8;
const T_CLIENT_HELLO: u8 = 0x20;
const T_SERVER_FLIGHT: u8 = 0x21;
const T_CLIENT_FLIGHT: u8 = 0x22;
const T_SERVER_FINISHED: u8 = 0x23;
const T_UPGRADE: u8 = 0x30;
const T_SWITCHING: u8 = 0x31;
const END_STREAM: u8 = 0x1;

/// The satellite path.
#[derive(Clone, Debug, PartialEq)]
pub struct SatPath {
    /// Round-trip propagation delay, client to server (all hops).
    pub rtt: Duration,
    /// Forward (gateway → terminal) and return (terminal → gateway) link rates.
    pub forward_bps: u64,
    pub return_bps: u64,
    /// Drop-tail queues of the forward and return links, packets (None: one
    /// bandwidth-delay product of that link at the path's RTT, at least 8).
    pub forward_queue: Option<usize>,
    pub return_queue: Option<usize>,
}

impl Default for SatPath {
    /// The seed's emulator reference: RTT 750 ms, FL 8 Mbit/s, RL 512 kbit/s.
    fn default() -> Self {
        SatPath {
            rtt: Duration::from_millis(750),
            forward_bps: 8_000_000,
            return_bps: 512_000,
            forward_queue: None,
            return_queue: None,
        }
    }
}

impl SatPath {
    fn bdp_packets(&self, bps: u64) -> usize {
        let bytes = bps as f64 / 8.0 * brisk_time::dur_nanos(self.rtt) as f64 / 1e9;
        ((bytes / 1500.0).ceil() as usize).max(8)
    }
    pub fn forward_queue_packets(&self) -> usize {
        self.forward_queue
            .unwrap_or_else(|| self.bdp_packets(self.forward_bps))
    }
    pub fn return_queue_packets(&self) -> usize {
        self.return_queue
            .unwrap_or_else(|| self.bdp_packets(self.return_bps))
    }
    /// The satellite hop's one-way delay: the RTT less the LAN and terrestrial hops.
    fn sat_one_way(&self) -> Duration {
        let rest = 2 * (brisk_time::dur_nanos(LAN_ONE_WAY) + brisk_time::dur_nanos(TERR_ONE_WAY));
        Duration::from_nanos(brisk_time::dur_nanos(self.rtt).saturating_sub(rest) / 2)
    }
}

/// The application protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    /// HTTP/1.1: persistent connections, or one object per connection.
    Http1 { persistent: bool },
    /// HTTP/2 over one connection; without TLS discovered by an Upgrade exchange,
    /// with TLS by ALPN.
    Http2,
}

/// The TLS handshake of a page's first connection (later ones resume its session).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tls {
    None,
    /// TLS 1.2 full handshake (2 RTT) and abbreviated (resumed, 1 RTT; RFC 5246 §7.3).
    Full12,
    Resumed12,
    /// TLS 1.3 full handshake (1 RTT; RFC 8446 §2) and with 0-RTT early data (§2.3).
    Full13,
    ZeroRtt13,
}

impl Tls {
    /// The handshake a later connection of the same page does.
    fn resumed(self) -> Tls {
        match self {
            Tls::Full12 | Tls::Resumed12 => Tls::Resumed12,
            t => t,
        }
    }
    fn code(self) -> u8 {
        self as u8
    }
    fn from_code(c: u8) -> Option<Tls> {
        [
            Tls::None,
            Tls::Full12,
            Tls::Resumed12,
            Tls::Full13,
            Tls::ZeroRtt13,
        ]
        .get(usize::from(c))
        .copied()
    }
    pub fn name(self) -> &'static str {
        match self {
            Tls::None => "none",
            Tls::Full12 => "TLS 1.2 full",
            Tls::Resumed12 => "TLS 1.2 resumed",
            Tls::Full13 => "TLS 1.3 full",
            Tls::ZeroRtt13 => "TLS 1.3 0-RTT",
        }
    }
}

/// One page load.
#[derive(Clone, Debug, PartialEq)]
pub struct SatWebConfig {
    pub path: SatPath,
    /// Split-TCP PEP at the terminal and the gateway (else end to end).
    pub pep: bool,
    /// The PEP terminates the client's leg without window scaling.
    pub drop_wscale: bool,
    /// Each PEP relay pipe and the PEP legs' socket buffers, bytes.
    pub pep_buffer: usize,
    pub proto: Proto,
    pub tls: Tls,
    /// Object sizes; object 0 is the HTML.
    pub objects: Vec<u64>,
    /// HTTP/1.1 connections (Firefox: 6).
    pub connections: usize,
    /// HTTP/2: most concurrent streams (Apache's SPDY default: 100).
    pub stream_cap: usize,
    /// HTTP/2: the client's initial stream window and connection window, bytes.
    pub stream_window: u32,
    pub conn_window: u32,
    /// The client's TCP receive buffer, bytes (the seed's ≈128 kB).
    pub client_rcvbuf: usize,
    /// Initial congestion window of every sender, segments (Linux 3.8: 10).
    pub iw: u32,
    /// Firefox's connection retry timeout: a connection not up by then gets a
    /// backup attempt (None: off).
    pub retry: Option<Duration>,
    /// The page starts at a seeded random instant in `[0, start_jitter)`.
    pub start_jitter: Duration,
    /// Stop here if the page has not loaded.
    pub limit: Duration,
    pub seed: u64,
    /// TCP Fast Open (RFC 7413) on the client and the server (and the PEP
    /// terminal's client-facing listener): before the page, one priming connection
    /// fetches a cookie (a visit before this one); every page connection then writes
    /// its first bytes (request, ClientHello or Upgrade) before its SYN leaves, so they
    /// ride on the SYN, as Linux's `TCP_FASTOPEN_CONNECT` does.
    pub fastopen: bool,
    /// HTTPS through rustls over the connections (`crate::sat_tls`: real TLS 1.2 /
    /// 1.3 records, handshakes, resumption and 0-RTT, deterministic) instead of the
    /// round-trip model's flights. `Resumed12` and `ZeroRtt13` then mean a returning
    /// browser: a full handshake before the page (in memory) leaves the session.
    pub rustls: bool,
    /// Sample [`TraceRow`]s this often (None: no trace).
    pub trace: Option<Duration>,
    /// Every TCP sender's congestion control (None: brisk's default, CUBIC).
    pub cc: Option<brisk_tcp::cc::CcAlgorithm>,
}

impl Default for SatWebConfig {
    fn default() -> Self {
        SatWebConfig {
            path: SatPath::default(),
            pep: true,
            drop_wscale: true,
            pep_buffer: 1 << 20,
            proto: Proto::Http1 { persistent: true },
            tls: Tls::None,
            objects: vec![5_000; 100],
            connections: 6,
            stream_cap: 100,
            stream_window: 256 * 1024,
            conn_window: 12 << 20,
            client_rcvbuf: 128 * 1024,
            iw: 10,
            retry: None,
            start_jitter: Duration::from_millis(100),
            limit: Duration::from_secs(600),
            seed: 1,
            fastopen: false,
            rustls: false,
            trace: None,
            cc: None,
        }
    }
}

/// A config field out of range.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SatWebError {
    #[error("sat-web: {field} = {value} is out of range ({range})")]
    Range {
        field: &'static str,
        value: String,
        range: &'static str,
    },
    #[error("sat-web: TLS set-up failed: {0}")]
    Tls(String),
    #[error("sat-web: no progress after {MAX_STEPS_PER_INSTANT} steps at t = {0} ns (driver bug)")]
    Livelock(u64),
}

fn range(field: &'static str, value: impl std::fmt::Display, r: &'static str) -> SatWebError {
    SatWebError::Range {
        field,
        value: value.to_string(),
        range: r,
    }
}

impl SatWebConfig {
    pub fn validate(&self) -> Result<(), SatWebError> {
        let p = &self.path;
        let ms = |d: Duration| format!("{} ms", brisk_time::dur_nanos(d) / 1_000_000);
        if !(Duration::from_millis(12)..=Duration::from_secs(10)).contains(&p.rtt) {
            return Err(range("path.rtt", ms(p.rtt), "12 ms to 10 s"));
        }
        for (f, v) in [
            ("path.forward_bps", p.forward_bps),
            ("path.return_bps", p.return_bps),
        ] {
            if !(9_600..=10_000_000_000).contains(&v) {
                return Err(range(f, v, "9600 bit/s to 10 Gbit/s"));
            }
        }
        for (f, v) in [
            ("path.forward_queue", p.forward_queue),
            ("path.return_queue", p.return_queue),
        ] {
            if let Some(q) = v {
                if !(1..=100_000).contains(&q) {
                    return Err(range(f, q, "1 to 100000 packets"));
                }
            }
        }
        if !(crate::pep::MIN_PIPE..=crate::pep::MAX_PIPE).contains(&self.pep_buffer) {
            return Err(range("pep_buffer", self.pep_buffer, "1 KiB to 64 MiB"));
        }
        if self.objects.is_empty() || self.objects.len() > MAX_OBJECTS {
            return Err(range("objects", self.objects.len(), "1 to 10000 objects"));
        }
        if let Some(&b) = self.objects.iter().find(|&&b| b == 0 || b > 64 << 20) {
            return Err(range("object size", b, "1 B to 64 MiB"));
        }
        if !(1..=MAX_CONNECTIONS).contains(&self.connections) {
            return Err(range("connections", self.connections, "1 to 64"));
        }
        if !(1..=MAX_OBJECTS).contains(&self.stream_cap) {
            return Err(range("stream_cap", self.stream_cap, "1 to 10000"));
        }
        for (f, v) in [
            ("stream_window", self.stream_window),
            ("conn_window", self.conn_window),
        ] {
            // RFC 9113 §6.9.1: at most 2^31 − 1; below a frame it only stalls.
            if !(1024..=0x7fff_ffff).contains(&v) {
                return Err(range(f, v, "1024 to 2147483647 bytes"));
            }
        }
        if !(4096..=(64 << 20)).contains(&self.client_rcvbuf) {
            return Err(range(
                "client_rcvbuf",
                self.client_rcvbuf,
                "4 KiB to 64 MiB",
            ));
        }
        if !(1..=100).contains(&self.iw) {
            return Err(range("iw", self.iw, "1 to 100 segments"));
        }
        if let Some(r) = self.retry {
            if r.is_zero() || r > Duration::from_secs(60) {
                return Err(range("retry", ms(r), "above 0, at most 60 s"));
            }
        }
        if self.start_jitter > Duration::from_secs(10) {
            return Err(range("start_jitter", ms(self.start_jitter), "0 to 10 s"));
        }
        if self.limit.is_zero() || self.limit > Duration::from_secs(3600) {
            return Err(range("limit", ms(self.limit), "above 0, at most 1 h"));
        }
        Ok(())
    }
}

/// A page load's outcome.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SatWebResult {
    /// When the page started (the first connection opened), ns.
    pub start_ns: u64,
    /// Page load time: start to the last byte of the last object.
    pub plt_ns: Option<u64>,
    /// Start to the first request byte written (the set-up cost).
    pub setup_ns: Option<u64>,
    /// When the HTML was in, ns since the start.
    pub html_ns: Option<u64>,
    pub objects_done: usize,
    /// Object bytes read by the browser.
    pub bytes: u64,
    /// Bytes or frames that were not what they had to be (0 for a clean load).
    pub bad: u64,
    /// SYNs the client sent (retransmissions included), connections it opened, and
    /// of those the retry timer's backups.
    pub client_syns: u64,
    pub connections: u64,
    pub backups: u64,
    /// SYN-ACKs the client received, and of those with a window-scale option.
    pub synacks: u64,
    pub synacks_with_wscale: u64,
    /// Object bytes read per [`BIN`] from the start.
    pub series: Vec<u64>,
    /// The PEP relays' counters (empty end to end).
    pub relays: Vec<RelayCounters>,
    /// Packets dropped at the satellite's forward and return queues.
    pub forward_drops: u64,
    pub return_drops: u64,
    /// What rustls did (all zero with the model).
    pub tls: TlsStats,
    /// SipHash-1-3 (fixed keys) of every packet the client sent and received, in
    /// order: equal for equal runs (the determinism check).
    pub client_wire_digest: u64,
    /// Samples every `SatWebConfig::trace` (empty without).
    pub trace: Vec<TraceRow>,
}

/// One sample of a page load: what the browser asked for, what the server has open,
/// and the satellite sender's window (the PEP gateway's leg to the terminal, or end to
/// end the server's connection; the first such connection). Taken at the first event
/// at or after each sample time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceRow {
    pub t_ns: u64,
    /// Requests the browser has written and objects it has read whole.
    pub requested: usize,
    pub done: usize,
    /// Responses the server has open (bytes left to stage).
    pub server_open: usize,
    /// Bytes the server's application has staged in all (headers and frames).
    pub server_sent: u64,
    /// The satellite sender: cwnd and ssthresh (segments), segments in flight, bytes
    /// acknowledged, bytes in its send buffer, and bytes waiting in the PEP relay
    /// before it (0 end to end).
    pub cwnd: u32,
    pub ssthresh: u32,
    pub in_flight: u32,
    pub acked: u64,
    pub send_buffered: usize,
    pub relay_buffered: usize,
    /// The satellite sender's smoothed and minimum RTT, µs.
    pub srtt_us: u64,
    pub min_rtt_us: u64,
    /// Packets queued at the return link (ACKs and the client's requests share it).
    pub return_queue: usize,
}

/// `cfg.cc` on a connection config.
fn apply_cc(cc: Option<brisk_tcp::cc::CcAlgorithm>, c: &mut Config) {
    if let Some(a) = cc {
        c.congestion.controller = a.into();
    }
}

/// rustls's side of a page load (`SatWebConfig::rustls`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TlsStats {
    /// Client connections whose handshake completed, full and resumed.
    pub full: u64,
    pub resumed: u64,
    /// Of those, TLS 1.3 ones, and ones that agreed on h2 by ALPN.
    pub tls13: u64,
    pub alpn_h2: u64,
    /// Connections that sent early data (0-RTT), and of those the server refused.
    pub early_sent: u64,
    pub early_refused: u64,
    /// TLS errors (each fatal for its connection).
    pub failures: u64,
    /// TLS bytes the server wrote answering the page's first ClientHello.
    pub server_first_flight: Option<u64>,
    /// TLS bytes the client sent and received over all its connections, and the
    /// application bytes inside them.
    pub wire: crate::sat_tls::WireBytes,
}

// ---------------------------------------------------------------- framing

/// A frame whose payload starts with `head` and is padded to `len` bytes.
fn frame(out: &mut Vec<u8>, ty: u8, flags: u8, stream: u32, head: &[u8], len: usize) {
    let len = len.max(head.len());
    h2_frame_header(out, len, ty, flags, stream);
    out.extend_from_slice(head);
    out.resize(out.len() + len - head.len(), 0);
}

/// Byte `j` of object `k`'s body.
fn body_byte(k: u32, j: u64) -> u8 {
    (u64::from(k).wrapping_mul(131) ^ j.wrapping_mul(7)) as u8
}

/// What the parser hands up.
enum Piece<'a> {
    /// A whole non-DATA frame: type, flags, stream, its first payload bytes.
    Frame { ty: u8, stream: u32, head: [u8; 8] },
    /// DATA payload bytes of `stream`.
    Data { stream: u32, data: &'a [u8] },
}

/// A streaming frame parser; holds one header and 8 payload bytes.
#[derive(Debug, Default)]
struct Parser {
    hdr: [u8; HEADER],
    hdr_len: usize,
    /// The current frame: type, flags, stream, bytes left, head bytes seen.
    cur: Option<(u8, u8, u32, usize, [u8; 8], usize)>,
}

impl Parser {
    fn push(&mut self, mut data: &[u8], out: &mut dyn FnMut(Piece<'_>)) {
        while !data.is_empty() || matches!(self.cur, Some((_, _, _, 0, _, _))) {
            if let Some((ty, flags, stream, left, mut head, mut seen)) = self.cur {
                let n = left.min(data.len());
                if ty == T_DATA {
                    if n > 0 || left == 0 {
                        out(Piece::Data {
                            stream,
                            data: &data[..n],
                        });
                    }
                } else {
                    for &b in &data[..n] {
                        if seen < 8 {
                            head[seen] = b;
                        }
                        seen += 1;
                    }
                }
                data = &data[n..];
                if n == left {
                    self.cur = None;
                    if ty != T_DATA {
                        out(Piece::Frame { ty, stream, head });
                    }
                } else {
                    self.cur = Some((ty, flags, stream, left - n, head, seen));
                }
                continue;
            }
            let n = (HEADER - self.hdr_len).min(data.len());
            self.hdr[self.hdr_len..self.hdr_len + n].copy_from_slice(&data[..n]);
            self.hdr_len += n;
            data = &data[n..];
            if self.hdr_len == HEADER {
                self.hdr_len = 0;
                let h = self.hdr;
                let len = usize::from(h[0]) << 16 | usize::from(h[1]) << 8 | usize::from(h[2]);
                let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]);
                self.cur = Some((h[3], h[4], stream, len, [0; 8], 0));
            }
        }
    }
}

/// Bytes staged for a connection, written as its send buffer takes them.
#[derive(Debug, Default)]
struct Outbox {
    buf: Vec<u8>,
    off: usize,
}

impl Outbox {
    fn pending(&self) -> bool {
        self.off < self.buf.len()
    }
    fn flush(&mut self, ep: &mut Endpoint, h: ConnHandle) -> bool {
        let mut moved = false;
        if let Some(c) = ep.conn_mut(h) {
            while self.off < self.buf.len() {
                let n = c.write(&self.buf[self.off..]);
                if n == 0 {
                    break;
                }
                self.off += n;
                moved = true;
            }
        }
        if self.off == self.buf.len() {
            self.buf.clear();
            self.off = 0;
        }
        moved
    }
}

/// Writes a connection's staged bytes, through its TLS session if it has one
/// (`early`: a client may send them as 0-RTT data while the handshake is on).
fn flush_io(
    out: &mut Outbox,
    tls: Option<&mut Session>,
    early: bool,
    ep: &mut Endpoint,
    h: ConnHandle,
) -> bool {
    let Some(t) = tls else {
        return out.flush(ep, h);
    };
    let mut moved = false;
    if out.pending() {
        t.send(&out.buf[out.off..], early && t.is_handshaking());
        out.buf.clear();
        out.off = 0;
        moved = true;
    }
    if let Some(c) = ep.conn_mut(h) {
        while t.off < t.wire.len() {
            let n = c.write(&t.wire[t.off..]);
            if n == 0 {
                break;
            }
            t.off += n;
            moved = true;
        }
    }
    if t.off == t.wire.len() {
        t.wire.clear();
        t.off = 0;
    }
    moved
}

// ---------------------------------------------------------------- server

#[derive(Debug)]
struct SrvStream {
    stream: u32,
    obj: u32,
    sent: u64,
    header_sent: bool,
    window: i64,
}

#[derive(Debug)]
struct SrvConn {
    h: ConnHandle,
    parser: Parser,
    out: Outbox,
    tls: Option<Tls>,
    /// The handshake is over (or there is none): requests may be served.
    ready: bool,
    h2: bool,
    initial_window: i64,
    conn_window: i64,
    /// Responses in progress: HTTP/1.1 in order, HTTP/2 round-robin.
    active: VecDeque<SrvStream>,
    closing: bool,
    /// rustls's session (`SatWebConfig::rustls`).
    rtls: Option<Box<Session>>,
}

impl SrvConn {
    fn pending(&self) -> bool {
        self.out.pending() || self.rtls.as_ref().is_some_and(|t| t.wire_pending())
    }
}

struct Server {
    sizes: Vec<u64>,
    conns: Vec<SrvConn>,
    bad: u64,
    tls: Option<Arc<TlsPair>>,
    tls_failures: u64,
    first_flight: Option<u64>,
    /// Application bytes staged (for the trace).
    staged: u64,
}

impl Server {
    fn on_frame(&mut self, i: usize, ty: u8, stream: u32, head: [u8; 8]) {
        let n_obj = self.sizes.len();
        let c = &mut self.conns[i];
        let u32_at =
            |o: usize| u32::from_be_bytes([head[o], head[o + 1], head[o + 2], head[o + 3]]);
        match ty {
            T_CLIENT_HELLO => match Tls::from_code(head[0]) {
                Some(t) if t != Tls::None && c.tls.is_none() => {
                    c.tls = Some(t);
                    let (size, ready) = match t {
                        Tls::Full12 | Tls::Full13 => (TLS_SERVER_FULL, false),
                        Tls::ZeroRtt13 => (TLS_SERVER_RESUMED, true),
                        _ => (TLS_SERVER_RESUMED, false),
                    };
                    frame(&mut c.out.buf, T_SERVER_FLIGHT, 0, 0, &[], size);
                    c.ready = ready;
                }
                _ => self.bad += 1,
            },
            T_CLIENT_FLIGHT => match c.tls {
                Some(Tls::Full12) => {
                    frame(&mut c.out.buf, T_SERVER_FINISHED, 0, 0, &[], TLS_FINISHED);
                    c.ready = true;
                }
                Some(_) => c.ready = true,
                None => self.bad += 1,
            },
            T_UPGRADE => {
                frame(&mut c.out.buf, T_SWITCHING, 0, 0, &[], UPGRADE_RESPONSE);
            }
            T_SETTINGS => {
                c.h2 = true;
                c.initial_window = i64::from(u32_at(0));
                // The server's SETTINGS (its stream cap travels here; the client is
                // configured with the same cap).
                frame(&mut c.out.buf, T_SETTINGS, 0, 0, &[], 12);
            }
            T_WINDOW_UPDATE => {
                let inc = i64::from(u32_at(0) & 0x7fff_ffff);
                if stream == 0 {
                    c.conn_window += inc;
                } else if let Some(s) = c.active.iter_mut().find(|s| s.stream == stream) {
                    s.window += inc;
                }
            }
            T_HEADERS => {
                let k = u32_at(0);
                // At most one open response per object: a peer asking for more is
                // counted, not queued (bounds `active`).
                if !c.ready || k as usize >= n_obj || c.active.len() >= n_obj {
                    self.bad += 1;
                    return;
                }
                let w = c.initial_window;
                c.active.push_back(SrvStream {
                    stream,
                    obj: k,
                    sent: 0,
                    header_sent: false,
                    window: w,
                });
            }
            _ => self.bad += 1,
        }
    }

    /// Stages the next frame of connection `i`'s responses; false when none can go.
    fn stage(&mut self, i: usize) -> bool {
        let c = &mut self.conns[i];
        let n = c.active.len();
        for _ in 0..n {
            let Some(mut s) = c.active.pop_front() else {
                return false;
            };
            let size = self.sizes[s.obj as usize];
            if !s.header_sent {
                let len = if c.h2 {
                    H2_RESPONSE_HEADER
                } else {
                    H1_RESPONSE_HEADER
                };
                frame(&mut c.out.buf, T_HEADERS, 0, s.stream, &[], len);
                s.header_sent = true;
                c.active.push_front(s);
                return true;
            }
            let mut room = (size - s.sent).min(FRAME as u64);
            if c.h2 {
                room = room
                    .min(s.window.max(0) as u64)
                    .min(c.conn_window.max(0) as u64);
            }
            if room == 0 {
                // HTTP/2: this stream waits for a window; try the next one.
                c.active.push_back(s);
                if !c.h2 {
                    return false;
                }
                continue;
            }
            let end = s.sent + room == size;
            h2_frame_header(
                &mut c.out.buf,
                room as usize,
                T_DATA,
                if end { END_STREAM } else { 0 },
                s.stream,
            );
            c.out
                .buf
                .extend((s.sent..s.sent + room).map(|j| body_byte(s.obj, j)));
            s.sent += room;
            if c.h2 {
                s.window -= room as i64;
                c.conn_window -= room as i64;
            }
            if !end {
                if c.h2 {
                    c.active.push_back(s);
                } else {
                    c.active.push_front(s);
                }
            }
            return true;
        }
        false
    }

    fn step(&mut self, ep: &mut Endpoint, scratch: &mut [u8]) -> bool {
        let mut moved = false;
        // A connection that is gone is forgotten (its handle may be reused).
        let before = self.conns.len();
        self.conns
            .retain(|c| ep.conn(c.h).is_some_and(|x| x.state() != State::Closed));
        moved |= self.conns.len() != before;
        for i in 0..self.conns.len() {
            let h = self.conns[i].h;
            let mut frames = Vec::new();
            if let Some(c) = ep.conn_mut(h) {
                loop {
                    let n = c.read(scratch);
                    if n == 0 {
                        break;
                    }
                    moved = true;
                    let sc = &mut self.conns[i];
                    let parser = &mut sc.parser;
                    let mut push = |d: &[u8]| {
                        parser.push(d, &mut |p| match p {
                            Piece::Frame {
                                ty, stream, head, ..
                            } => frames.push((ty, stream, head)),
                            // The client sends no DATA.
                            Piece::Data { .. } => frames.push((T_DATA, 0, [0; 8])),
                        })
                    };
                    match &mut sc.rtls {
                        None => push(&scratch[..n]),
                        Some(t) => {
                            if t.receive(&scratch[..n], &mut push).is_err() {
                                // A TLS error is fatal for the connection.
                                self.tls_failures += 1;
                                self.bad += 1;
                                c.abort();
                                break;
                            }
                            if self.first_flight.is_none() {
                                self.first_flight = t.first_flight;
                            }
                        }
                    }
                }
                if c.peer_closed() && c.readable() == 0 && !self.conns[i].closing {
                    self.conns[i].closing = true;
                }
            }
            for (ty, stream, head) in frames {
                self.on_frame(i, ty, stream, head);
            }
            loop {
                let sc = &mut self.conns[i];
                self.staged += (sc.out.buf.len() - sc.out.off) as u64;
                moved |= flush_io(&mut sc.out, sc.rtls.as_deref_mut(), false, ep, h);
                if sc.pending() || !self.stage(i) {
                    break;
                }
            }
            let c = &mut self.conns[i];
            if c.closing && !c.pending() && c.active.is_empty() {
                if let Some(cc) = ep.conn_mut(h) {
                    if cc.state() == State::CloseWait {
                        cc.close();
                        moved = true;
                    }
                }
            }
        }
        moved
    }
}

// ---------------------------------------------------------------- browser

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Connecting,
    /// Waiting for the server's TLS flight (`0`) or its Finished (`1`).
    Tls(u8),
    Upgrade,
    Ready,
    Done,
}

#[derive(Debug)]
struct CliConn {
    h: ConnHandle,
    phase: Phase,
    tls: Tls,
    parser: Parser,
    out: Outbox,
    opened_at: Instant,
    /// The backup attempt of (or for) this connection, by index.
    partner: Option<usize>,
    /// HTTP/1.1: the object in flight.
    current: Option<u32>,
    /// HTTP/2: open streams, bytes read since the last WINDOW_UPDATE per stream
    /// (indexed by object) and for the connection.
    open: usize,
    conn_unacked: u64,
    /// Requests sent on it.
    requests: usize,
    /// rustls's session (`SatWebConfig::rustls`), and whether its handshake is counted.
    rtls: Option<Box<Session>>,
    tls_noted: bool,
}

impl CliConn {
    fn pending(&self) -> bool {
        self.out.pending() || self.rtls.as_ref().is_some_and(|t| t.wire_pending())
    }
}

struct Browser {
    cfg: SatWebConfig,
    conns: Vec<CliConn>,
    got: Vec<u64>,
    stream_unacked: Vec<u64>,
    done: Vec<Option<Instant>>,
    n_done: usize,
    next: usize,
    start: Instant,
    started: bool,
    res: SatWebResult,
    resumable: bool,
    /// Fast Open's priming connection: `None` before it is opened, then its handle
    /// and whether it is done (the cookie is in).
    priming: Option<(ConnHandle, bool)>,
    /// rustls's configs (`SatWebConfig::rustls` with TLS).
    tls: Option<Arc<TlsPair>>,
}

impl Browser {
    fn html_done(&self) -> bool {
        self.done[0].is_some()
    }
    fn complete(&self) -> bool {
        self.n_done == self.got.len()
    }

    fn config(&self) -> Config {
        let mut c = Config {
            recv_buffer: self.cfg.client_rcvbuf,
            ..Config::default()
        };
        c.congestion.initial_cwnd = self.cfg.iw;
        apply_cc(self.cfg.cc, &mut c);
        if self.cfg.fastopen {
            c.fastopen = Some(Box::new(brisk_tcp::tfo::TfoConfig::both(16)));
        }
        c
    }

    fn open(&mut self, now: Instant, ep: &mut Endpoint, partner: Option<usize>) {
        let remote = SocketAddr::new(IpAddr::V4(SERVER), PORT);
        let Ok(h) = ep.connect(now, 0, remote, self.config()) else {
            self.res.bad += 1;
            return;
        };
        let tls = if self.resumable {
            self.cfg.tls.resumed()
        } else {
            self.cfg.tls
        };
        self.res.connections += 1;
        if partner.is_some() {
            self.res.backups += 1;
        }
        let idx = self.conns.len();
        if let Some(p) = partner {
            self.conns[p].partner = Some(idx);
        }
        let early = self.cfg.fastopen && partner.is_none();
        self.conns.push(CliConn {
            h,
            phase: Phase::Connecting,
            tls,
            parser: Parser::default(),
            out: Outbox::default(),
            opened_at: now,
            partner,
            current: None,
            open: 0,
            conn_unacked: 0,
            requests: 0,
            rtls: None,
            tls_noted: false,
        });
        if early {
            // Fast Open: the first bytes are written now, before the SYN leaves
            // (`step` writes the request and flushes before the network runs).
            self.on_connected(idx, ep);
        }
    }

    /// Opens connections as the protocol allows.
    fn open_more(&mut self, now: Instant, ep: &mut Endpoint) -> bool {
        if !self.started {
            if now < self.start {
                return false;
            }
            if self.cfg.fastopen {
                // A visit before the page: one connection that only fetches the
                // cookie (closed once up); the page starts when it is.
                match self.priming {
                    None => {
                        let remote = SocketAddr::new(IpAddr::V4(SERVER), PORT);
                        match ep.connect(now, 0, remote, self.config()) {
                            Ok(h) => self.priming = Some((h, false)),
                            Err(_) => {
                                self.res.bad += 1;
                                self.priming = Some((ConnHandle(u32::MAX), true));
                            }
                        }
                        return true;
                    }
                    Some((_, false)) => return false,
                    Some((_, true)) => {}
                }
            }
            self.started = true;
            self.res.start_ns = now.as_nanos();
            self.open(now, ep, None);
            return true;
        }
        let mut moved = false;
        // Connection retry: a connection not up after `retry` gets one backup.
        if let Some(r) = self.cfg.retry {
            for i in 0..self.conns.len() {
                let c = &self.conns[i];
                if c.phase == Phase::Connecting && c.partner.is_none() && now >= c.opened_at + r {
                    self.open(now, ep, Some(i));
                    moved = true;
                }
            }
        }
        if let Proto::Http1 { persistent } = self.cfg.proto {
            if !self.html_done() {
                return moved;
            }
            let primaries = |b: &Browser| {
                b.conns
                    .iter()
                    .enumerate()
                    .filter(|(i, c)| c.phase != Phase::Done && c.partner.is_none_or(|p| p > *i))
                    .count()
            };
            let waiting = |b: &Browser| {
                b.conns
                    .iter()
                    .enumerate()
                    .filter(|(i, c)| {
                        c.phase != Phase::Done
                            && c.current.is_none()
                            && c.requests == 0
                            && c.partner.is_none_or(|p| p > *i)
                    })
                    .count()
            };
            // Persistent: up to `connections` in all. Non-persistent: one per object
            // not yet asked for, at most `connections` at a time.
            while primaries(self) < self.cfg.connections
                && self.next + waiting(self) < self.got.len()
                && (!persistent
                    || self.res.connections - self.res.backups < self.cfg.connections as u64)
            {
                self.open(now, ep, None);
                moved = true;
                if !persistent {
                    break;
                }
            }
        }
        moved
    }

    fn request(&mut self, i: usize, now: Instant) {
        let k = self.next as u32;
        self.next += 1;
        let c = &mut self.conns[i];
        c.requests += 1;
        let (len, stream) = match self.cfg.proto {
            Proto::Http1 { .. } => {
                c.current = Some(k);
                (H1_REQUEST, k + 1)
            }
            Proto::Http2 => {
                c.open += 1;
                (H2_REQUEST, 2 * k + 1)
            }
        };
        frame(
            &mut c.out.buf,
            T_HEADERS,
            END_STREAM,
            stream,
            &k.to_be_bytes(),
            len,
        );
        if self.res.setup_ns.is_none() {
            self.res.setup_ns = Some(now.as_nanos() - self.res.start_ns);
        }
    }

    /// The connection may carry requests: HTTP/2 sends its preface first.
    fn become_ready(&mut self, i: usize) {
        let h2 = self.cfg.proto == Proto::Http2;
        let (sw, cw) = (self.cfg.stream_window, self.cfg.conn_window);
        let c = &mut self.conns[i];
        c.phase = Phase::Ready;
        if h2 {
            let mut s = [0u8; 8];
            s[..4].copy_from_slice(&sw.to_be_bytes());
            s[4..].copy_from_slice(&(self.cfg.stream_cap as u32).to_be_bytes());
            // The connection preface (24 bytes) and SETTINGS, then the connection
            // window raised from the default 65 535 (RFC 9113 §6.9.2).
            frame(&mut c.out.buf, T_SETTINGS, 0, 0, &s, 24 + 12);
            let inc = cw.saturating_sub(65_535);
            if inc > 0 {
                frame(&mut c.out.buf, T_WINDOW_UPDATE, 0, 0, &inc.to_be_bytes(), 4);
            }
        }
    }

    fn on_connected(&mut self, i: usize, ep: &mut Endpoint) {
        // The backup race: the first of a pair up wins, the other is abandoned.
        if let Some(p) = self.conns[i].partner {
            if self.conns[p].phase == Phase::Connecting {
                if let Some(c) = ep.conn_mut(self.conns[p].h) {
                    c.abort();
                }
                self.conns[p].phase = Phase::Done;
            } else if self.conns[p].phase != Phase::Done {
                if let Some(c) = ep.conn_mut(self.conns[i].h) {
                    c.abort();
                }
                self.conns[i].phase = Phase::Done;
                return;
            }
        }
        let tls = self.conns[i].tls;
        let c = &mut self.conns[i];
        match tls {
            Tls::None => {
                if self.cfg.proto == Proto::Http2 {
                    frame(&mut c.out.buf, T_UPGRADE, 0, 0, &[], UPGRADE_REQUEST);
                    c.phase = Phase::Upgrade;
                } else {
                    self.become_ready(i);
                }
            }
            _ if self.tls.is_some() => {
                let made = self.tls.as_ref().map(|p| p.client_conn());
                match made {
                    Some(Ok(cc)) => {
                        // The ClientHello is in the session's wire bytes now.
                        let mut t = Box::new(Session::new(cc));
                        let early = t.can_send_early();
                        if early {
                            self.res.tls.early_sent += 1;
                        }
                        c.rtls = Some(t);
                        c.phase = Phase::Tls(0);
                        if early {
                            // 0-RTT: requests go now, as early data.
                            self.become_ready(i);
                        }
                    }
                    _ => {
                        self.res.tls.failures += 1;
                        self.res.bad += 1;
                        if let Some(cc) = ep.conn_mut(c.h) {
                            cc.abort();
                        }
                        c.phase = Phase::Done;
                    }
                }
            }
            t => {
                frame(
                    &mut c.out.buf,
                    T_CLIENT_HELLO,
                    0,
                    0,
                    &[t.code()],
                    TLS_CLIENT_HELLO,
                );
                c.phase = Phase::Tls(0);
                if t == Tls::ZeroRtt13 {
                    self.become_ready(i);
                }
            }
        }
    }

    fn on_frame(&mut self, i: usize, ty: u8) {
        let (phase, tls) = (self.conns[i].phase, self.conns[i].tls);
        match (ty, phase) {
            (T_SERVER_FLIGHT, Phase::Tls(0)) => {
                self.resumable = true;
                let c = &mut self.conns[i];
                match tls {
                    Tls::Full12 => {
                        frame(
                            &mut c.out.buf,
                            T_CLIENT_FLIGHT,
                            0,
                            0,
                            &[],
                            TLS_CLIENT_KEY_EXCHANGE,
                        );
                        c.phase = Phase::Tls(1);
                    }
                    _ => {
                        frame(&mut c.out.buf, T_CLIENT_FLIGHT, 0, 0, &[], TLS_FINISHED);
                        self.become_ready(i);
                    }
                }
            }
            // 0-RTT: the server's flight arrives after the early requests.
            (T_SERVER_FLIGHT, Phase::Ready) if tls == Tls::ZeroRtt13 => {
                let c = &mut self.conns[i];
                frame(&mut c.out.buf, T_CLIENT_FLIGHT, 0, 0, &[], TLS_FINISHED);
            }
            (T_SERVER_FINISHED, Phase::Tls(1)) => self.become_ready(i),
            (T_SWITCHING, Phase::Upgrade) => self.become_ready(i),
            (T_SETTINGS | T_HEADERS, Phase::Ready) => {}
            _ => self.res.bad += 1,
        }
    }

    fn on_data(&mut self, i: usize, now: Instant, stream: u32, data: &[u8]) {
        let k = match self.cfg.proto {
            Proto::Http1 { .. } => stream.wrapping_sub(1),
            Proto::Http2 => stream.wrapping_sub(1) / 2,
        } as usize;
        if k >= self.got.len() {
            self.res.bad += data.len() as u64;
            return;
        }
        let off = self.got[k];
        let size = self.cfg.objects[k];
        if off + data.len() as u64 > size {
            self.res.bad += data.len() as u64;
            return;
        }
        let wrong = data
            .iter()
            .enumerate()
            .filter(|(j, &b)| b != body_byte(k as u32, off + *j as u64))
            .count();
        self.res.bad += wrong as u64;
        self.got[k] += data.len() as u64;
        self.res.bytes += data.len() as u64;
        let bin = ((now.as_nanos() - self.res.start_ns) / brisk_time::dur_nanos(BIN)) as usize;
        if bin < 1 << 16 {
            if self.res.series.len() <= bin {
                self.res.series.resize(bin + 1, 0);
            }
            self.res.series[bin] += data.len() as u64;
        }
        if self.cfg.proto == Proto::Http2 {
            // WINDOW_UPDATEs once half a window is read (Firefox-like).
            self.stream_unacked[k] += data.len() as u64;
            let c = &mut self.conns[i];
            c.conn_unacked += data.len() as u64;
            if c.conn_unacked >= u64::from(self.cfg.conn_window / 2) {
                let inc = c.conn_unacked as u32;
                frame(&mut c.out.buf, T_WINDOW_UPDATE, 0, 0, &inc.to_be_bytes(), 4);
                c.conn_unacked = 0;
            }
            if self.got[k] < size && self.stream_unacked[k] >= u64::from(self.cfg.stream_window / 2)
            {
                let inc = self.stream_unacked[k] as u32;
                frame(
                    &mut c.out.buf,
                    T_WINDOW_UPDATE,
                    0,
                    stream,
                    &inc.to_be_bytes(),
                    4,
                );
                self.stream_unacked[k] = 0;
            }
        }
        if self.got[k] == size && self.done[k].is_none() {
            self.done[k] = Some(now);
            self.n_done += 1;
            if k == 0 {
                self.res.html_ns = Some(now.as_nanos() - self.res.start_ns);
            }
            let c = &mut self.conns[i];
            match self.cfg.proto {
                Proto::Http1 { .. } => c.current = None,
                Proto::Http2 => c.open = c.open.saturating_sub(1),
            }
        }
    }

    fn step(&mut self, now: Instant, ep: &mut Endpoint, scratch: &mut [u8]) -> bool {
        let mut moved = self.open_more(now, ep);
        for i in 0..self.conns.len() {
            if self.conns[i].phase == Phase::Done {
                continue;
            }
            let h = self.conns[i].h;
            // Read.
            let mut pieces: Vec<(u8, u32, Vec<u8>)> = Vec::new();
            let mut peer_closed = false;
            let mut tls_failed = false;
            if let Some(c) = ep.conn_mut(h) {
                loop {
                    let n = c.read(scratch);
                    if n == 0 {
                        break;
                    }
                    moved = true;
                    let cc = &mut self.conns[i];
                    let parser = &mut cc.parser;
                    let mut push = |d: &[u8]| {
                        parser.push(d, &mut |p| match p {
                            Piece::Frame { ty, stream, .. } => {
                                pieces.push((ty, stream, Vec::new()))
                            }
                            Piece::Data { stream, data, .. } => {
                                pieces.push((T_DATA, stream, data.to_vec()))
                            }
                        })
                    };
                    match &mut cc.rtls {
                        None => push(&scratch[..n]),
                        Some(t) => {
                            if t.receive(&scratch[..n], &mut push).is_err() {
                                tls_failed = true;
                                c.abort();
                                break;
                            }
                        }
                    }
                }
                peer_closed = c.peer_closed() && c.readable() == 0;
            }
            if tls_failed {
                self.res.tls.failures += 1;
                self.res.bad += 1;
                self.conns[i].phase = Phase::Done;
                continue;
            }
            moved |= self.tls_progress(i);
            for (ty, stream, data) in pieces {
                if ty == T_DATA {
                    self.on_data(i, now, stream, &data);
                } else {
                    self.on_frame(i, ty);
                }
            }
            // Request.
            if self.conns[i].phase == Phase::Ready {
                let html_ok = |b: &Browser| b.next == 0 || b.html_done();
                match self.cfg.proto {
                    Proto::Http1 { persistent } => {
                        let fresh = persistent || self.conns[i].requests == 0;
                        if self.conns[i].current.is_none()
                            && self.next < self.got.len()
                            && html_ok(self)
                            && fresh
                        {
                            self.request(i, now);
                            moved = true;
                        }
                    }
                    Proto::Http2 => {
                        while self.conns[i].open < self.cfg.stream_cap
                            && self.next < self.got.len()
                            && html_ok(self)
                        {
                            self.request(i, now);
                            moved = true;
                        }
                    }
                }
            }
            let cc = &mut self.conns[i];
            // Early data while rustls's handshake is still on (0-RTT).
            let early = cc.phase == Phase::Ready;
            moved |= flush_io(&mut cc.out, cc.rtls.as_deref_mut(), early, ep, h);
            // Close: when nothing is left for this connection.
            let c = &self.conns[i];
            let idle = c.phase == Phase::Ready && c.current.is_none() && c.open == 0;
            let finished = match self.cfg.proto {
                Proto::Http1 { persistent: false } => idle && self.used(i),
                _ => idle && self.next >= self.got.len(),
            };
            if (finished || peer_closed) && !c.pending() {
                if let Some(cc) = ep.conn_mut(h) {
                    cc.close();
                }
                self.conns[i].phase = Phase::Done;
                moved = true;
            }
        }
        if self.complete() && self.res.plt_ns.is_none() {
            let last = self.done.iter().flatten().max().map_or(0, |t| t.as_nanos());
            self.res.plt_ns = Some(last - self.res.start_ns);
            self.res.objects_done = self.n_done;
        }
        moved
    }

    /// rustls's handshake of connection `i` ended: count it, and let requests go.
    fn tls_progress(&mut self, i: usize) -> bool {
        let c = &mut self.conns[i];
        let Some(t) = c.rtls.as_deref() else {
            return false;
        };
        if c.tls_noted || t.is_handshaking() {
            return false;
        }
        c.tls_noted = true;
        let st = &mut self.res.tls;
        match t.handshake_kind() {
            Some(rustls::HandshakeKind::Resumed) => st.resumed += 1,
            _ => st.full += 1,
        }
        st.tls13 += u64::from(t.is_tls13());
        st.alpn_h2 += u64::from(t.alpn() == Some(b"h2"));
        st.early_refused += u64::from(t.early_refused);
        self.resumable = true;
        if c.phase == Phase::Tls(0) {
            self.become_ready(i);
        }
        true
    }

    /// Whether HTTP/1.1 connection `i` has fetched its object (non-persistent).
    fn used(&self, i: usize) -> bool {
        self.conns[i].current.is_none() && self.conns[i].requests > 0
    }
}

// ---------------------------------------------------------------- the path

fn endpoint(addr: Ipv4Addr, seed: u64) -> Endpoint {
    Endpoint::new(
        IpAddr::V4(addr),
        EndpointConfig {
            ..EndpointConfig::seeded([0x5b; 16], seed)
        },
    )
}

fn link(bps: u64, delay: Duration, queue: usize) -> Link<DropTail> {
    // NOTE(unreachable): rates, delays and queues were range-checked by `validate`.
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

/// IPv4 destination of a packet (None if it is not IPv4).
fn dst(pkt: &[u8]) -> Option<Ipv4Addr> {
    (pkt.len() >= 20 && pkt[0] >> 4 == 4).then(|| Ipv4Addr::new(pkt[16], pkt[17], pkt[18], pkt[19]))
}

fn is_syn_ack(pkt: &[u8]) -> bool {
    let ihl = usize::from(pkt.first().map_or(0, |b| b & 0xf)) * 4;
    pkt.get(ihl + 13).is_some_and(|f| f & 0x12 == 0x12)
}

fn is_syn(pkt: &[u8]) -> bool {
    let ihl = usize::from(pkt.first().map_or(0, |b| b & 0xf)) * 4;
    pkt.get(ihl + 13)
        .is_some_and(|f| f & 0x02 != 0 && f & 0x10 == 0)
}

/// A PEP node: its endpoint and the relays it runs.
struct PepNode {
    ep: Endpoint,
    relays: Vec<Relay>,
    /// Counters of the relays that finished.
    finished: Vec<RelayCounters>,
    /// The config of the legs it opens.
    cfg_out: Config,
    /// The address its opened legs go to.
    next_hop: SocketAddr,
}

impl PepNode {
    fn events(&mut self, now: Instant) -> bool {
        let mut moved = false;
        while let Some((_, ev)) = self.ep.poll_event() {
            if let Event::Incoming { port } = ev {
                while let Some(a) = self.ep.accept(port) {
                    // The next leg opens at once; the relay holds the bytes until it is up.
                    match self.ep.connect(now, 0, self.next_hop, self.cfg_out.clone()) {
                        Ok(b) => self.relays.push(Relay::new(a, b, self.cfg_out.send_buffer)),
                        Err(_) => {
                            if let Some(c) = self.ep.conn_mut(a) {
                                c.abort();
                            }
                        }
                    }
                    moved = true;
                }
            }
        }
        moved
    }
    fn pump(&mut self, scratch: &mut [u8]) -> bool {
        let mut moved = false;
        for r in &mut self.relays {
            moved |= r.pump(&mut self.ep, scratch);
        }
        // A finished relay lets go of its legs (their handles may be reused).
        for r in self.relays.iter().filter(|r| r.done()) {
            self.finished.push(r.counters());
        }
        self.relays.retain(|r| !r.done());
        moved
    }
}

struct World {
    cfg: SatWebConfig,
    client: Endpoint,
    server: Endpoint,
    terminal: Option<PepNode>,
    gateway: Option<PepNode>,
    /// C→T, T→C, T→G (return), G→T (forward), G→S, S→G.
    c_t: Link<DropTail>,
    t_c: Link<DropTail>,
    t_g: Link<DropTail>,
    g_t: Link<DropTail>,
    g_s: Link<DropTail>,
    s_g: Link<DropTail>,
    browser: Browser,
    srv: Server,
    buf: Vec<u8>,
    scratch: Vec<u8>,
    next_id: u64,
    /// rustls's configs and clock (`SatWebConfig::rustls` with TLS).
    tls: Option<Arc<TlsPair>>,
    digest: SipHasher13,
}

impl World {
    fn new(cfg: &SatWebConfig, tls: Option<TlsPair>) -> Self {
        let s = cfg.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let client = endpoint(CLIENT, s ^ 1);
        let mut server = endpoint(SERVER, s ^ 2);
        let mut srv_cfg = Config::default();
        srv_cfg.congestion.initial_cwnd = cfg.iw;
        apply_cc(cfg.cc, &mut srv_cfg);
        let tfo = || Some(Box::new(brisk_tcp::tfo::TfoConfig::both(16)));
        if cfg.fastopen {
            srv_cfg.fastopen = tfo();
        }
        // NOTE(unreachable): a fresh endpoint listening on one port.
        server
            .listen(PORT, 1024, srv_cfg)
            .unwrap_or_else(|e| unreachable!("listen: {e:?}"));
        let (terminal, gateway) = if cfg.pep {
            let mut leg = Config {
                send_buffer: cfg.pep_buffer,
                recv_buffer: cfg.pep_buffer,
                ..Config::default()
            };
            leg.congestion.initial_cwnd = cfg.iw;
            apply_cc(cfg.cc, &mut leg);
            let mut lan = leg.clone();
            lan.options.window_scaling = !cfg.drop_wscale;
            if cfg.fastopen {
                lan.fastopen = tfo();
            }
            let mut t = endpoint(TERMINAL, s ^ 3);
            // Transparent: the terminal answers for the server's address.
            let _ = t.add_address(IpAddr::V4(SERVER));
            t.listen(PORT, 1024, lan)
                .unwrap_or_else(|e| unreachable!("listen: {e:?}"));
            let mut g = endpoint(GATEWAY, s ^ 4);
            g.listen(PORT, 1024, leg.clone())
                .unwrap_or_else(|e| unreachable!("listen: {e:?}"));
            (
                Some(PepNode {
                    ep: t,
                    relays: Vec::new(),
                    finished: Vec::new(),
                    cfg_out: leg.clone(),
                    next_hop: SocketAddr::new(IpAddr::V4(GATEWAY), PORT),
                }),
                Some(PepNode {
                    ep: g,
                    relays: Vec::new(),
                    finished: Vec::new(),
                    cfg_out: leg,
                    next_hop: SocketAddr::new(IpAddr::V4(SERVER), PORT),
                }),
            )
        } else {
            (None, None)
        };
        let p = &cfg.path;
        let sat = p.sat_one_way();
        let mut rng = ChaCha8Rng::seed_from_u64(s ^ 5);
        let jitter = brisk_time::dur_nanos(cfg.start_jitter);
        let start = Instant::from_nanos(if jitter == 0 {
            0
        } else {
            rng.gen_range(0..jitter)
        });
        let n = cfg.objects.len();
        let tls = tls.map(Arc::new);
        World {
            client,
            server,
            terminal,
            gateway,
            c_t: link(LAN_BPS, LAN_ONE_WAY, WIRE_QUEUE),
            t_c: link(LAN_BPS, LAN_ONE_WAY, WIRE_QUEUE),
            t_g: link(p.return_bps, sat, p.return_queue_packets()),
            g_t: link(p.forward_bps, sat, p.forward_queue_packets()),
            g_s: link(TERR_BPS, TERR_ONE_WAY, WIRE_QUEUE),
            s_g: link(TERR_BPS, TERR_ONE_WAY, WIRE_QUEUE),
            browser: Browser {
                cfg: cfg.clone(),
                conns: Vec::new(),
                got: vec![0; n],
                stream_unacked: vec![0; n],
                done: vec![None; n],
                n_done: 0,
                next: 0,
                start,
                started: false,
                res: SatWebResult::default(),
                resumable: false,
                priming: None,
                tls: tls.clone(),
            },
            srv: Server {
                sizes: cfg.objects.clone(),
                conns: Vec::new(),
                bad: 0,
                tls: tls.clone(),
                tls_failures: 0,
                first_flight: None,
                staged: 0,
            },
            tls,
            digest: SipHasher13::new_with_keys(0x5a7, 0x3eb),
            cfg: cfg.clone(),
            buf: Vec::with_capacity(2048),
            scratch: vec![0; READ_CHUNK],
            next_id: 0,
        }
    }

    fn packet(&mut self, now: Instant) -> Packet {
        self.next_id += 1;
        Packet {
            data: self.buf.clone(),
            id: self.next_id,
            flow: 0,
            sent_at: now,
            l4_csum_valid: true,
        }
    }

    /// Moves packets along the chain; returns progress.
    fn network(&mut self, now: Instant) -> bool {
        let mut moved = false;
        // Hosts' output.
        while self.client.poll_transmit(now, &mut self.buf).is_some() {
            if is_syn(&self.buf) {
                self.browser.res.client_syns += 1;
            }
            self.digest.write(&self.buf);
            let p = self.packet(now);
            self.c_t.handle_packet(now, p);
            moved = true;
        }
        while self.server.poll_transmit(now, &mut self.buf).is_some() {
            let p = self.packet(now);
            self.s_g.handle_packet(now, p);
            moved = true;
        }
        if let Some(t) = &mut self.terminal {
            while t.ep.poll_transmit(now, &mut self.buf).is_some() {
                self.next_id += 1;
                let p = Packet {
                    data: self.buf.clone(),
                    id: self.next_id,
                    flow: 0,
                    sent_at: now,
                    l4_csum_valid: true,
                };
                if dst(&p.data) == Some(CLIENT) {
                    self.t_c.handle_packet(now, p);
                } else {
                    self.t_g.handle_packet(now, p);
                }
                moved = true;
            }
        }
        if let Some(g) = &mut self.gateway {
            while g.ep.poll_transmit(now, &mut self.buf).is_some() {
                self.next_id += 1;
                let p = Packet {
                    data: self.buf.clone(),
                    id: self.next_id,
                    flow: 0,
                    sent_at: now,
                    l4_csum_valid: true,
                };
                if dst(&p.data) == Some(SERVER) {
                    self.g_s.handle_packet(now, p);
                } else {
                    self.g_t.handle_packet(now, p);
                }
                moved = true;
            }
        }
        // Links' output: to the next node, which terminates (PEP) or forwards.
        while let Some(p) = self.c_t.poll_packet(now) {
            match &mut self.terminal {
                Some(t) => crate::host::receive(&mut t.ep, now, &p),
                None => self.t_g.handle_packet(now, p),
            }
            moved = true;
        }
        while let Some(p) = self.g_t.poll_packet(now) {
            match &mut self.terminal {
                Some(t) => crate::host::receive(&mut t.ep, now, &p),
                None => self.t_c.handle_packet(now, p),
            }
            moved = true;
        }
        while let Some(p) = self.t_g.poll_packet(now) {
            match &mut self.gateway {
                Some(g) => crate::host::receive(&mut g.ep, now, &p),
                None => self.g_s.handle_packet(now, p),
            }
            moved = true;
        }
        while let Some(p) = self.s_g.poll_packet(now) {
            match &mut self.gateway {
                Some(g) => crate::host::receive(&mut g.ep, now, &p),
                None => self.g_t.handle_packet(now, p),
            }
            moved = true;
        }
        while let Some(p) = self.t_c.poll_packet(now) {
            if is_syn_ack(&p.data) {
                let ws = brisk_wire::parse_tcp_packet(&p.data)
                    .is_ok_and(|(_, t)| t.window_scale.is_some());
                let r = &mut self.browser.res;
                r.synacks += 1;
                r.synacks_with_wscale += u64::from(ws);
            }
            self.digest.write(&p.data);
            crate::host::receive(&mut self.client, now, &p);
            moved = true;
        }
        while let Some(p) = self.g_s.poll_packet(now) {
            crate::host::receive(&mut self.server, now, &p);
            moved = true;
        }
        moved
    }

    fn events(&mut self) -> bool {
        let mut moved = false;
        while let Some((h, ev)) = self.client.poll_event() {
            if let Some((p, false)) = self.browser.priming {
                if p == h && ev == Event::Connected {
                    if let Some(c) = self.client.conn_mut(h) {
                        c.close();
                    }
                    self.browser.priming = Some((h, true));
                    moved = true;
                    continue;
                }
            }
            if ev == Event::Connected {
                // Handles are reused once a connection is gone: match live ones only.
                let live = |c: &CliConn| c.h == h && c.phase == Phase::Connecting;
                if let Some(i) = self.browser.conns.iter().position(live) {
                    {
                        self.browser.on_connected(i, &mut self.client);
                        moved = true;
                    }
                }
            }
        }
        while let Some((_, ev)) = self.server.poll_event() {
            if let Event::Incoming { port } = ev {
                while let Some(h) = self.server.accept(port) {
                    self.srv.conns.push(SrvConn {
                        h,
                        parser: Parser::default(),
                        out: Outbox::default(),
                        tls: None,
                        ready: self.cfg.tls == Tls::None,
                        h2: false,
                        initial_window: 65_535,
                        conn_window: 65_535,
                        active: VecDeque::new(),
                        closing: false,
                        rtls: None,
                    });
                    if let Some(p) = &self.srv.tls {
                        let sc = self.srv.conns.last_mut().expect("just pushed");
                        match p.server_conn() {
                            Ok(t) => {
                                sc.rtls = Some(Box::new(Session::new(t)));
                                // Plaintext comes out of rustls only once it is
                                // authenticated (early data or after the handshake).
                                sc.ready = true;
                            }
                            Err(_) => {
                                self.srv.tls_failures += 1;
                                if let Some(c) = self.server.conn_mut(h) {
                                    c.abort();
                                }
                            }
                        }
                    }
                    moved = true;
                }
            }
        }
        moved
    }

    fn step(&mut self, now: Instant) -> bool {
        let mut moved = self.events();
        if let Some(t) = &mut self.terminal {
            moved |= t.events(now);
            moved |= t.pump(&mut self.scratch);
        }
        if let Some(g) = &mut self.gateway {
            moved |= g.events(now);
            moved |= g.pump(&mut self.scratch);
        }
        moved |= self.browser.step(now, &mut self.client, &mut self.scratch);
        moved |= self.srv.step(&mut self.server, &mut self.scratch);
        moved |= self.network(now);
        moved
    }

    fn sample(&self, now: Instant) -> TraceRow {
        let b = &self.browser;
        let mut row = TraceRow {
            t_ns: now.as_nanos(),
            requested: b.next,
            done: b.n_done,
            server_open: self.srv.conns.iter().map(|c| c.active.len()).sum(),
            server_sent: self.srv.staged,
            ..TraceRow::default()
        };
        let (ep, h, relay) = match &self.gateway {
            Some(g) => match g.relays.first() {
                Some(r) => (&g.ep, r.accepted, r.buffered()),
                None => return row,
            },
            None => match self.srv.conns.first() {
                Some(c) => (&self.server, c.h, 0),
                None => return row,
            },
        };
        if let Some(c) = ep.conn(h) {
            let i = c.info();
            row.cwnd = i.cwnd;
            row.ssthresh = i.ssthresh;
            row.in_flight = i.in_flight;
            row.acked = i.bytes_acked;
            row.send_buffered = c.send_buffered();
            row.srtt_us = brisk_time::dur_nanos(i.srtt) / 1000;
            row.min_rtt_us = brisk_time::dur_nanos(i.min_rtt) / 1000;
        }
        row.return_queue = self.t_g.queue().len_packets();
        row.relay_buffered = relay;
        row
    }

    fn endpoints(&mut self) -> Vec<&mut Endpoint> {
        let mut v = vec![&mut self.client, &mut self.server];
        if let Some(t) = &mut self.terminal {
            v.push(&mut t.ep);
        }
        if let Some(g) = &mut self.gateway {
            v.push(&mut g.ep);
        }
        v
    }

    fn next_wake(&mut self, now: Instant) -> Option<Instant> {
        let mut t: Vec<Option<Instant>> =
            self.endpoints().iter().map(|e| e.poll_timeout()).collect();
        for l in [
            &self.c_t, &self.t_c, &self.t_g, &self.g_t, &self.g_s, &self.s_g,
        ] {
            t.push(l.poll_timeout());
        }
        let b = &self.browser;
        // While Fast Open's priming connection is up, the page waits for it (its
        // packets and timers wake the loop), not for `start`, which has passed.
        if !b.started && !matches!(b.priming, Some((_, false))) {
            t.push(Some(b.start));
        }
        if let Some(r) = self.cfg.retry {
            for c in &b.conns {
                if c.phase == Phase::Connecting && c.partner.is_none() {
                    t.push(Some((c.opened_at + r).max(now)));
                }
            }
        }
        t.into_iter().flatten().min()
    }
}

/// Loads the page once.
pub fn run(cfg: &SatWebConfig) -> Result<SatWebResult, SatWebError> {
    cfg.validate()?;
    // rustls's randomness for this run (its own stream: the same seed, the same bytes).
    let _scope = crate::sat_tls::Scope::new(cfg.seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 6);
    let tls = if cfg.rustls && cfg.tls != Tls::None {
        let (v13, early) = match cfg.tls {
            Tls::Full13 => (true, false),
            Tls::ZeroRtt13 => (true, true),
            _ => (false, false),
        };
        let alpn: &[&[u8]] = match cfg.proto {
            Proto::Http2 => &[b"h2", b"http/1.1"],
            Proto::Http1 { .. } => &[b"http/1.1"],
        };
        let p = TlsPair::new(v13, early, alpn).map_err(|e| SatWebError::Tls(e.to_string()))?;
        if matches!(cfg.tls, Tls::Resumed12 | Tls::ZeroRtt13) {
            p.prime().map_err(|e| SatWebError::Tls(e.to_string()))?;
        }
        Some(p)
    } else {
        None
    };
    let mut w = World::new(cfg, tls);
    let end = Instant::ZERO + cfg.limit;
    let mut now = Instant::ZERO;
    let mut trace = Vec::new();
    let mut next_sample = Instant::ZERO;
    loop {
        if let Some(period) = cfg.trace.filter(|p| !p.is_zero()) {
            if now >= next_sample && trace.len() < 1 << 16 {
                trace.push(w.sample(now));
                next_sample = now + period;
            }
        }
        if let Some(p) = &w.tls {
            p.clock.set(now.as_nanos());
        }
        for ep in w.endpoints() {
            if ep.poll_timeout().is_some_and(|t| t <= now) {
                ep.handle_timeout(now);
            }
        }
        let mut steps = 0u32;
        while w.step(now) {
            steps += 1;
            if steps > MAX_STEPS_PER_INSTANT {
                return Err(SatWebError::Livelock(now.as_nanos()));
            }
        }
        if w.browser.complete() {
            break;
        }
        match w.next_wake(now) {
            Some(t) if t < end => now = t.max(now),
            _ => break,
        }
    }
    let mut r = std::mem::take(&mut w.browser.res);
    r.objects_done = w.browser.n_done;
    r.bad += w.srv.bad;
    r.forward_drops = w.g_t.counters().dropped_total().packets;
    r.return_drops = w.t_g.counters().dropped_total().packets;
    r.client_wire_digest = w.digest.finish();
    r.trace = trace;
    r.tls.failures += w.srv.tls_failures;
    r.tls.server_first_flight = w.srv.first_flight;
    for t in w.browser.conns.iter().filter_map(|c| c.rtls.as_deref()) {
        let (a, b) = (&mut r.tls.wire, t.bytes);
        a.sent += b.sent;
        a.received += b.received;
        a.plain_sent += b.plain_sent;
        a.plain_received += b.plain_received;
    }
    for p in [&w.terminal, &w.gateway].into_iter().flatten() {
        r.relays.extend(p.finished.iter().copied());
        r.relays.extend(p.relays.iter().map(|x| x.counters()));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_parse_across_any_split() {
        let mut wire = Vec::new();
        frame(
            &mut wire,
            T_HEADERS,
            END_STREAM,
            7,
            &5u32.to_be_bytes(),
            100,
        );
        h2_frame_header(&mut wire, 3, T_DATA, END_STREAM, 7);
        wire.extend_from_slice(&[1, 2, 3]);
        frame(&mut wire, T_SETTINGS, 0, 0, &[], 0);
        for chunk in [1, 2, 5, 9, 10, 64, wire.len()] {
            let mut p = Parser::default();
            let mut got = Vec::new();
            for c in wire.chunks(chunk) {
                p.push(c, &mut |x| match x {
                    Piece::Frame { ty, stream, head } => got.push((ty, stream, head[..4].to_vec())),
                    Piece::Data { stream, data } => got.push((T_DATA, stream, data.to_vec())),
                });
            }
            let data: Vec<u8> = got
                .iter()
                .filter(|g| g.0 == T_DATA)
                .flat_map(|g| g.2.clone())
                .collect();
            assert_eq!(data, vec![1, 2, 3], "chunk {chunk}");
            let frames: Vec<_> = got.iter().filter(|g| g.0 != T_DATA).collect();
            assert_eq!(frames.len(), 2, "chunk {chunk}");
            assert_eq!((frames[0].0, frames[0].1), (T_HEADERS, 7));
            assert_eq!(frames[0].2, 5u32.to_be_bytes().to_vec());
            assert_eq!(frames[1].0, T_SETTINGS);
        }
    }

    #[test]
    fn a_server_refuses_more_requests_than_objects() {
        let mut srv = Server {
            sizes: vec![1000; 4],
            conns: vec![SrvConn {
                h: ConnHandle(0),
                parser: Parser::default(),
                out: Outbox::default(),
                tls: None,
                ready: true,
                h2: false,
                initial_window: 65_535,
                conn_window: 65_535,
                active: VecDeque::new(),
                closing: false,
                rtls: None,
            }],
            bad: 0,
            tls: None,
            tls_failures: 0,
            first_flight: None,
            staged: 0,
        };
        for i in 0..10_000u32 {
            srv.on_frame(
                0,
                T_HEADERS,
                2 * i + 1,
                [0, 0, 0, (i % 4) as u8, 0, 0, 0, 0],
            );
        }
        assert_eq!(srv.conns[0].active.len(), 4);
        assert_eq!(srv.bad, 10_000 - 4);
        // Unknown frame types and a second ClientHello are counted too.
        srv.on_frame(0, 0x7f, 0, [0; 8]);
        srv.on_frame(0, T_CLIENT_HELLO, 0, [9, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(srv.bad, 10_000 - 4 + 2);
    }
}
