//! MN-5, Minion's CPU cost (Minion NSDI 2012 §1 and §8.1, Fig. 6(a)(b); Nowlan's
//! thesis §6.2.1): the driver shared by the benchmark (`benches/mn_cpu.rs`) and
//! `brisk repro mn-cpu`. uCOBS against raw TCP, and uTLS against stock TLS, for a bulk
//! transfer at an RTT of 60 ms and loss of 0, 1, 2 and 5 %.
//!
//! - Two brisk sans-IO endpoints in one thread, as in `tests/fallback.rs`: a wire
//!   with 30 ms one-way delay, virtual time, no link rate (the transfer is
//!   cwnd-limited). Data packets towards the receiver are dropped with probability p
//!   (a seeded ChaCha8 RNG), first sendings and retransmissions alike.
//! - Four arms move the same payload in 1448-byte application writes, datagrams or
//!   records: raw TCP (in-order `read`), uCOBS (unordered receive), stock rustls
//!   (buffered API, in order) and uTLS (unordered receive). Both TLS arms use TLS 1.3
//!   with TLS13_AES_128_GCM_SHA256 (ring).
//! - CPU time comes from the caller's clock (the thread's CPU time,
//!   `CLOCK_THREAD_CPUTIME_ID`, in the benchmark and in `brisk repro`; this crate is
//!   sans-IO and reads none): the whole run, the sender application's calls and the
//!   receiver application's calls, from the end of the TCP (and TLS) handshake.
//! - [`measure`] runs one unmeasured warm-up per arm, then the cells `reps` times with
//!   the arms interleaved, and takes each figure's median less the clock's own cost.

use crate::utls::{Limits as UtlsLimits, Utls};
use crate::{Limits, UcobsReceiver, UcobsSender};
use brisk_tcp::endpoint::{Endpoint, EndpointConfig};
use brisk_tcp::{Config, Connection, Duration, Instant};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

/// Application write, datagram and record size (one MSS of plaintext).
const CHUNK: usize = 1448;
/// The loss rates of the paper's Fig. 6 (assumed: "0–5 %").
pub const LOSSES: [f64; 4] = [0.0, 0.01, 0.02, 0.05];
const READ_BUF: usize = 64 << 10;

/// The payload: `n` chunks of seeded random bytes, each starting with its index.
pub struct Payload {
    bytes: Vec<u8>,
    n: usize,
}

impl Payload {
    /// `mb` MiB, in whole 1448-byte chunks.
    pub fn new(mb: usize) -> Payload {
        let n = (mb << 20) / CHUNK;
        let mut bytes = vec![0u8; n * CHUNK];
        ChaCha8Rng::seed_from_u64(5).fill_bytes(&mut bytes);
        for (i, c) in bytes.chunks_mut(CHUNK).enumerate() {
            c[..4].copy_from_slice(&(i as u32).to_be_bytes());
        }
        Payload { bytes, n }
    }
    /// The payload's size in MiB.
    pub fn mib(&self) -> f64 {
        self.bytes.len() as f64 / (1u64 << 20) as f64
    }
    /// Its number of chunks.
    pub fn chunks(&self) -> usize {
        self.n
    }
    fn chunk(&self, i: usize) -> &[u8] {
        &self.bytes[i * CHUNK..(i + 1) * CHUNK]
    }
}

/// What the receiver got; any wrong byte, duplicate or stray datagram aborts.
struct Check<'a> {
    p: &'a Payload,
    seen: Vec<bool>,
    /// Payload bytes delivered (stream: in-order position).
    got: usize,
    early: u64,
}

impl<'a> Check<'a> {
    fn new(p: &'a Payload) -> Self {
        Check {
            p,
            seen: vec![false; p.n],
            got: 0,
            early: 0,
        }
    }
    fn stream(&mut self, data: &[u8]) {
        let want = &self.p.bytes[self.got..self.got + data.len()];
        assert!(data == want, "stream bytes wrong at offset {}", self.got);
        self.got += data.len();
    }
    fn datagram(&mut self, data: &[u8], in_order: bool) {
        assert_eq!(data.len(), CHUNK, "datagram length");
        let i = u32::from_be_bytes(data[..4].try_into().expect("4 bytes")) as usize;
        assert!(i < self.p.n, "datagram index {i} out of range");
        assert!(data == self.p.chunk(i), "datagram {i} corrupted");
        assert!(!self.seen[i], "datagram {i} delivered twice");
        self.seen[i] = true;
        self.got += CHUNK;
        if !in_order {
            self.early += 1;
        }
    }
    fn done(&self) -> bool {
        self.got == self.p.bytes.len()
    }
}

/// Bytes queued for a connection that did not take them all yet.
#[derive(Default)]
struct Tx {
    buf: Vec<u8>,
    pos: usize,
}

impl Tx {
    /// `true`: nothing left.
    fn flush(&mut self, c: &mut Connection) -> bool {
        while self.pos < self.buf.len() {
            let n = c.write(&self.buf[self.pos..]);
            if n == 0 {
                return false;
            }
            self.pos += n;
        }
        self.buf.clear();
        self.pos = 0;
        true
    }
}

/// Feeds what `c` has in order into a stock rustls connection; hands its plaintext
/// to `plain`; queues and flushes what it wants to send.
fn pump_tls(
    tls: &mut rustls::Connection,
    c: &mut Connection,
    tx: &mut Tx,
    buf: &mut [u8],
    plain: &mut dyn FnMut(&[u8]),
) {
    loop {
        let n = c.read(buf);
        if n == 0 {
            break;
        }
        let mut rd = &buf[..n];
        while !rd.is_empty() {
            tls.read_tls(&mut rd).expect("read_tls");
            tls.process_new_packets().expect("TLS record error");
            let mut pt = [0u8; 16 << 10];
            loop {
                match tls.reader().read(&mut pt) {
                    Ok(0) => break,
                    Ok(k) => plain(&pt[..k]),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => panic!("TLS read: {e}"),
                }
            }
        }
    }
    while tls.wants_write() {
        tls.write_tls(&mut tx.buf).expect("write_tls");
    }
    tx.flush(c);
}

/// The four ways the same payload is carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arm {
    Raw,
    Ucobs,
    Tls,
    Utls,
}

impl Arm {
    pub const ALL: [Arm; 4] = [Arm::Raw, Arm::Ucobs, Arm::Tls, Arm::Utls];
    pub fn name(self) -> &'static str {
        match self {
            Arm::Raw => "raw TCP",
            Arm::Ucobs => "uCOBS",
            Arm::Tls => "TLS (rustls)",
            Arm::Utls => "uTLS",
        }
    }
    fn unordered(self) -> bool {
        matches!(self, Arm::Ucobs | Arm::Utls)
    }
}

/// One arm's two applications.
enum Apps {
    Raw {
        tx: Tx,
    },
    Ucobs {
        tx: UcobsSender,
        rx: Box<UcobsReceiver>,
    },
    Tls {
        client: Box<rustls::Connection>,
        server: Box<rustls::Connection>,
        ctx: Tx,
        stx: Tx,
    },
    Utls {
        client: Box<Utls>,
        server: Box<Utls>,
    },
}

impl Default for Tls {
    fn default() -> Self {
        Tls::new()
    }
}

/// The TLS arms' configurations (one self-signed certificate).
pub struct Tls {
    client: Arc<ClientConfig>,
    server: Arc<ServerConfig>,
}

impl Tls {
    /// TLS 1.3, TLS13_AES_128_GCM_SHA256 only, for both TLS arms.
    pub fn new() -> Tls {
        let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string()])
            .expect("self-signed certificate");
        let cert: CertificateDer<'static> = ck.cert.der().clone();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.key_pair.serialize_der()));
        let mut provider = rustls::crypto::ring::default_provider();
        provider.cipher_suites = vec![rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256];
        let provider = Arc::new(provider);
        let mut roots = RootCertStore::empty();
        roots.add(cert.clone()).expect("root");
        let mut client = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .expect("TLS 1.3")
            .with_root_certificates(roots)
            .with_no_client_auth();
        client.enable_secret_extraction = true;
        let mut server = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .expect("TLS 1.3")
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .expect("server cert");
        server.enable_secret_extraction = true;
        Tls {
            client: Arc::new(client),
            server: Arc::new(server),
        }
    }
}

fn name() -> ServerName<'static> {
    ServerName::try_from("localhost").expect("name")
}

impl Apps {
    fn new(arm: Arm, tls: &Tls) -> Apps {
        match arm {
            Arm::Raw => Apps::Raw { tx: Tx::default() },
            Arm::Ucobs => Apps::Ucobs {
                tx: UcobsSender::new(),
                rx: Box::new(UcobsReceiver::new(Limits::default(), READ_BUF).expect("receiver")),
            },
            Arm::Tls => Apps::Tls {
                client: Box::new(
                    rustls::ClientConnection::new(tls.client.clone(), name())
                        .expect("client")
                        .into(),
                ),
                server: Box::new(
                    rustls::ServerConnection::new(tls.server.clone())
                        .expect("server")
                        .into(),
                ),
                ctx: Tx::default(),
                stx: Tx::default(),
            },
            Arm::Utls => Apps::Utls {
                client: Box::new(
                    Utls::client(tls.client.clone(), name(), UtlsLimits::default())
                        .expect("uTLS client"),
                ),
                server: Box::new(
                    Utls::server(tls.server.clone(), UtlsLimits::default()).expect("uTLS server"),
                ),
            },
        }
    }

    /// Drives the TLS handshake (nothing to do for the plain arms); `true` when done.
    fn handshake(&mut self, c: &mut Connection, s: &mut Connection, buf: &mut [u8]) -> bool {
        let no_data = &mut |_: &[u8]| panic!("application data during the handshake");
        match self {
            Apps::Raw { .. } | Apps::Ucobs { .. } => true,
            Apps::Tls {
                client,
                server,
                ctx,
                stx,
            } => {
                pump_tls(client, c, ctx, buf, no_data);
                pump_tls(server, s, stx, buf, no_data);
                !client.is_handshaking()
                    && !server.is_handshaking()
                    && ctx.buf.is_empty()
                    && stx.buf.is_empty()
            }
            Apps::Utls { client, server } => {
                let mut no_rec = |_: crate::utls::Record<'_>| panic!("data in handshake");
                while client.poll_once(c, buf, &mut no_rec).expect("uTLS client") {}
                while server.poll_once(s, buf, &mut no_rec).expect("uTLS server") {}
                !client.is_handshaking()
                    && !server.is_handshaking()
                    && client.outgoing().is_empty()
                    && server.outgoing().is_empty()
            }
        }
    }

    /// The sender application: writes chunks from `next` while the stream takes them.
    fn send(&mut self, c: &mut Connection, p: &Payload, next: &mut usize, buf: &mut [u8]) {
        match self {
            Apps::Raw { tx } => {
                while tx.flush(c) && *next < p.n {
                    tx.buf.extend_from_slice(p.chunk(*next));
                    *next += 1;
                }
            }
            Apps::Ucobs { tx, .. } => {
                while *next < p.n {
                    if !tx.send(c, p.chunk(*next), 0).expect("uCOBS send") {
                        break;
                    }
                    *next += 1;
                }
                tx.flush(c).expect("uCOBS flush");
            }
            Apps::Tls { client, ctx, .. } => {
                // TLS 1.3 session tickets arrive on this side; read them.
                pump_tls(client, c, ctx, buf, &mut |_| panic!("data to the sender"));
                while ctx.flush(c) && *next < p.n {
                    // One write is one record.
                    client
                        .writer()
                        .write_all(p.chunk(*next))
                        .expect("TLS write");
                    while client.wants_write() {
                        client.write_tls(&mut ctx.buf).expect("write_tls");
                    }
                    *next += 1;
                }
            }
            Apps::Utls { client, .. } => {
                let mut no_rec = |_: crate::utls::Record<'_>| panic!("data to the sender");
                while client.poll_once(c, buf, &mut no_rec).expect("uTLS read") {}
                while client.flush(c).expect("uTLS flush") && *next < p.n {
                    client.send(p.chunk(*next)).expect("uTLS send");
                    *next += 1;
                }
            }
        }
    }

    /// The receiver application: reads everything there is and checks it.
    fn receive(&mut self, s: &mut Connection, check: &mut Check<'_>, buf: &mut [u8]) {
        match self {
            Apps::Raw { .. } => loop {
                let n = s.read(buf);
                if n == 0 {
                    break;
                }
                check.stream(&buf[..n]);
            },
            Apps::Ucobs { rx, .. } => {
                rx.poll(s, &mut |d| check.datagram(d.data, d.in_order))
                    .expect("uCOBS receive");
            }
            Apps::Tls { server, stx, .. } => {
                pump_tls(server, s, stx, buf, &mut |d| check.stream(d));
            }
            Apps::Utls { server, .. } => {
                while server
                    .poll_once(s, buf, &mut |r| check.datagram(r.data, r.in_order))
                    .expect("uTLS receive")
                {}
            }
        }
    }
}

/// CPU ns of one run (after the handshake).
#[derive(Clone, Copy, Debug, Default)]
pub struct Cost {
    /// Everything: both TCP endpoints, the wire and both applications.
    pub total: u64,
    /// The sender application's calls.
    pub sender: u64,
    /// The receiver application's calls.
    pub receiver: u64,
}

/// One run's measurements.
#[derive(Clone, Debug)]
pub struct RunOut {
    pub cost: Cost,
    /// Datagrams or records delivered ahead of a hole.
    pub early: u64,
    pub retransmits: u64,
    /// Sender (and receiver) application calls timed.
    pub calls: u64,
}

/// One transfer of `p` over `arm` at `loss` (seeded), timed with `clock` (the
/// caller's CPU clock in ns: this crate reads no clock). Panics if a byte arrives
/// wrong, twice or not at all: that is a bug in a protocol, not a measurement.
pub fn run(
    arm: Arm,
    loss: f64,
    seed: u64,
    p: &Payload,
    tls: &Tls,
    clock: &dyn Fn() -> u64,
) -> RunOut {
    let ca = IpAddr::V4(Ipv4Addr::new(198, 18, 0, 1));
    let sa = IpAddr::V4(Ipv4Addr::new(198, 18, 0, 2));
    let ccfg = Config {
        nagle: false,
        ..Config::default()
    };
    let scfg = Config {
        unordered: arm.unordered(),
        ..Config::default()
    };
    let mut client = Endpoint::new(
        ca,
        // Fixed values, not the OS-drawn default: the same run every time.
        EndpointConfig::seeded([0x5a; 16], seed),
    );
    let mut server = Endpoint::new(
        sa,
        // Fixed values, not the OS-drawn default: the same run every time.
        EndpointConfig::seeded([0x5a; 16], seed + 1),
    );
    server.listen(443, 8, scfg).expect("listen");
    let mut now = Instant::ZERO;
    let c = client
        .connect(now, 5000, SocketAddr::new(sa, 443), ccfg)
        .expect("connect");
    let mut apps = Apps::new(arm, tls);
    let mut check = Check::new(p);
    let mut drop_rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6d6e_355f);
    let delay = Duration::from_millis(30);
    let mut wire: BTreeMap<(Instant, u64), (bool, Vec<u8>)> = BTreeMap::new();
    let mut serial = 0u64;
    let mut s = None;
    let mut handshaken = false;
    let mut next = 0usize;
    let mut cost = Cost::default();
    let mut calls = 0u64;
    let mut start = 0u64;
    let mut pkt = Vec::with_capacity(2048);
    let mut buf = vec![0u8; READ_BUF];
    for _ in 0..50_000_000u64 {
        if s.is_none() {
            s = server.accept(443);
        }
        if let Some(h) = s {
            let cc = client.conn_mut(c).expect("client connection");
            let sc = server.conn_mut(h).expect("server connection");
            if !handshaken && apps.handshake(cc, sc, &mut buf) {
                handshaken = true;
                start = clock();
            }
            if handshaken {
                let t0 = clock();
                apps.send(cc, p, &mut next, &mut buf);
                let t1 = clock();
                apps.receive(sc, &mut check, &mut buf);
                let t2 = clock();
                cost.sender += t1 - t0;
                cost.receiver += t2 - t1;
                calls += 1;
                if check.done() {
                    cost.total = t2 - start;
                    let retransmits = client.conn_mut(c).map_or(0, |cc| cc.info().retransmits);
                    return RunOut {
                        cost,
                        early: check.early,
                        retransmits,
                        calls,
                    };
                }
            }
        }
        // Emit; drop data packets to the receiver with probability `loss` once the
        // handshake is over.
        for (to_server, ep) in [(true, &mut client), (false, &mut server)] {
            pkt.clear();
            while ep.poll_transmit(now, &mut pkt).is_some() {
                let out = std::mem::replace(&mut pkt, Vec::with_capacity(2048));
                if to_server && handshaken && out.len() > 60 && drop_rng.gen_bool(loss) {
                    continue;
                }
                wire.insert((now + delay, serial), (to_server, out));
                serial += 1;
            }
        }
        let next_wire = wire.keys().next().map(|k| k.0);
        let next_timer = [client.poll_timeout(), server.poll_timeout()]
            .into_iter()
            .flatten()
            .min();
        let Some(t) = [next_wire, next_timer].into_iter().flatten().min() else {
            panic!(
                "{}: stalled with {} of {} bytes",
                arm.name(),
                check.got,
                p.bytes.len()
            );
        };
        now = now.max(t);
        while let Some(e) = wire.first_entry() {
            if e.key().0 > now {
                break;
            }
            let (to_server, pkt) = e.remove();
            if to_server {
                server.handle_packet(now, &pkt);
            } else {
                client.handle_packet(now, &pkt);
            }
        }
        client.handle_timeout(now);
        server.handle_timeout(now);
    }
    panic!("{}: did not finish", arm.name());
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// One (loss, arm) cell: the medians over its runs, less the clock's cost.
#[derive(Clone, Debug)]
pub struct CellResult {
    pub loss: f64,
    pub arm: Arm,
    /// Median CPU ns of the whole run, the sender's calls and the receiver's calls.
    pub cost: Cost,
    pub early: u64,
    pub retransmits: u64,
    pub calls: u64,
}

/// What [`measure`] found.
#[derive(Clone, Debug)]
pub struct Measured {
    /// MiB per run.
    pub mib: f64,
    pub reps: usize,
    /// The cost of one clock reading, ns (subtracted per timed call).
    pub clock_ns: f64,
    /// `cells[loss][arm]`, in [`LOSSES`] and [`Arm::ALL`] order.
    pub cells: Vec<Vec<CellResult>>,
}

impl Measured {
    /// `ours / peer` of one figure at loss index `li`: `f` picks the figure.
    pub fn ratio(&self, li: usize, ours: Arm, peer: Arm, f: impl Fn(&Cost) -> u64) -> f64 {
        let at = |a: Arm| {
            let i = Arm::ALL.iter().position(|x| *x == a).unwrap_or(0);
            f(&self.cells[li][i].cost) as f64
        };
        at(ours) / at(peer)
    }
}

/// Every cell `reps` times with `mb` MiB per run, the arms interleaved so that drift in
/// the machine's load is spread over all of them; one unmeasured warm-up run per arm
/// first (page faults, caches, rustls's lazy set-up).
pub fn measure(mb: usize, reps: usize, clock: &dyn Fn() -> u64) -> Measured {
    let reps = reps.max(1);
    let p = Payload::new(mb.max(1));
    // What one reading of the clock costs: each timed application call carries about
    // one reading's worth of it.
    let clock_ns = {
        let n = 20_000u64;
        let t0 = clock();
        for _ in 0..n {
            std::hint::black_box(clock());
        }
        (clock() - t0) as f64 / n as f64
    };
    let tls = Tls::new();
    for arm in Arm::ALL {
        run(arm, 0.0, 7, &p, &tls, clock);
    }
    let mut runs = vec![vec![Vec::<RunOut>::new(); Arm::ALL.len()]; LOSSES.len()];
    for rep in 0..reps {
        for (li, &loss) in LOSSES.iter().enumerate() {
            for (ai, &arm) in Arm::ALL.iter().enumerate() {
                let seed = 1000 * rep as u64 + li as u64 * 10 + 1;
                runs[li][ai].push(run(arm, loss, seed, &p, &tls, clock));
            }
        }
    }
    // Less the clock's own cost: one reading per timed call in each application
    // figure, three per call in the total.
    let net = |ns: u64, calls: u64, k: f64| ns.saturating_sub((k * clock_ns * calls as f64) as u64);
    let cells = runs
        .iter()
        .zip(LOSSES)
        .map(|(per_arm, loss)| {
            per_arm
                .iter()
                .zip(Arm::ALL)
                .map(|(rs, arm)| CellResult {
                    loss,
                    arm,
                    cost: Cost {
                        total: median(rs.iter().map(|r| net(r.cost.total, r.calls, 3.0)).collect()),
                        sender: median(
                            rs.iter()
                                .map(|r| net(r.cost.sender, r.calls, 1.0))
                                .collect(),
                        ),
                        receiver: median(
                            rs.iter()
                                .map(|r| net(r.cost.receiver, r.calls, 1.0))
                                .collect(),
                        ),
                    },
                    early: median(rs.iter().map(|r| r.early).collect()),
                    retransmits: median(rs.iter().map(|r| r.retransmits).collect()),
                    calls: median(rs.iter().map(|r| r.calls).collect()),
                })
                .collect()
        })
        .collect();
    Measured {
        mib: p.mib(),
        reps,
        clock_ns,
        cells,
    }
}
