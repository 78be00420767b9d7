//! MN-5, Minion's CPU cost (Minion NSDI 2012 §1 and §8.1, Fig. 6(a)(b); Nowlan's
//! thesis §6.2.1): uCOBS against raw TCP, and uTLS against stock TLS, for a bulk
//! transfer of 30 MB at an RTT of 60 ms and loss of 0, 1, 2 and 5 %.
//!
//! Claimed: uCOBS total CPU ≤ 5× raw TCP; uTLS receiver ≤ 1.07× TLS receiver; uTLS
//! sender = TLS sender ±3 %.
//!
//! How it runs (a benchmark, not a test: CPU time is not deterministic):
//! - Two brisk sans-IO endpoints in one thread, as in `tests/fallback.rs`: a wire
//!   with 30 ms one-way delay, virtual time, no link rate (the transfer is
//!   cwnd-limited). Data packets towards the receiver are dropped with probability p
//!   (a seeded ChaCha8 RNG), first sendings and retransmissions alike.
//! - Four arms move the same payload in 1448-byte application writes, datagrams or
//!   records: raw TCP (in-order `read`), uCOBS (unordered receive), stock rustls
//!   (buffered API, in order) and uTLS (unordered receive). Both TLS arms use TLS 1.3
//!   with TLS13_AES_128_GCM_SHA256 (ring).
//! - CPU time is the thread's (`CLOCK_THREAD_CPUTIME_ID`): the whole run (both TCP
//!   endpoints, the wire and both applications), the sender application's calls and
//!   the receiver application's calls. The clock starts after the TCP (and TLS)
//!   handshake, so the handshake is not counted. A reading of that clock is a system
//!   call (about 0.8 µs here); its measured cost is subtracted once per timed call
//!   from the sender and receiver figures and three times per call from the total.
//! - Each run checks that every byte arrived exactly once and intact (the receiver
//!   compares against the payload) and aborts otherwise. One unmeasured warm-up run
//!   per arm comes first; then each cell runs 3 times (arms interleaved) and each
//!   figure printed is the median of its 3.
//!
//! `cargo bench -p brisk-minion --bench mn_cpu`; `MN_CPU_MB` shrinks the transfer
//! (default 30), `MN_CPU_REPS` changes the repeats (default 3). Run without `--bench`
//! (`cargo test --release -p brisk-minion --benches`) it is a 1-MiB smoke run.

use brisk_minion::utls::{Limits as UtlsLimits, Utls};
use brisk_minion::{Limits, UcobsReceiver, UcobsSender};
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
const LOSSES: [f64; 4] = [0.0, 0.01, 0.02, 0.05];
const READ_BUF: usize = 64 << 10;

/// The thread's CPU time in ns.
fn cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The payload: `n` chunks of seeded random bytes, each starting with its index.
struct Payload {
    bytes: Vec<u8>,
    n: usize,
}

impl Payload {
    fn new(mb: usize) -> Payload {
        let n = (mb << 20) / CHUNK;
        let mut bytes = vec![0u8; n * CHUNK];
        ChaCha8Rng::seed_from_u64(5).fill_bytes(&mut bytes);
        for (i, c) in bytes.chunks_mut(CHUNK).enumerate() {
            c[..4].copy_from_slice(&(i as u32).to_be_bytes());
        }
        Payload { bytes, n }
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arm {
    Raw,
    Ucobs,
    Tls,
    Utls,
}

impl Arm {
    const ALL: [Arm; 4] = [Arm::Raw, Arm::Ucobs, Arm::Tls, Arm::Utls];
    fn name(self) -> &'static str {
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

struct Tls {
    client: Arc<ClientConfig>,
    server: Arc<ServerConfig>,
}

impl Tls {
    /// TLS 1.3, TLS13_AES_128_GCM_SHA256 only, for both TLS arms.
    fn new() -> Tls {
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
                let mut no_rec = |_: brisk_minion::utls::Record<'_>| panic!("data in handshake");
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
                let mut no_rec = |_: brisk_minion::utls::Record<'_>| panic!("data to the sender");
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
#[derive(Clone, Copy, Default)]
struct Cost {
    total: u64,
    sender: u64,
    receiver: u64,
}

#[derive(Clone)]
struct RunOut {
    cost: Cost,
    early: u64,
    retransmits: u64,
    /// Sender (and receiver) application calls timed.
    calls: u64,
}

fn run(arm: Arm, loss: f64, seed: u64, p: &Payload, tls: &Tls) -> RunOut {
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
                start = cpu_ns();
            }
            if handshaken {
                let t0 = cpu_ns();
                apps.send(cc, p, &mut next, &mut buf);
                let t1 = cpu_ns();
                apps.receive(sc, &mut check, &mut buf);
                let t2 = cpu_ns();
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
    v[v.len() / 2]
}

fn env_usize(name: &str, default: usize, range: std::ops::RangeInclusive<usize>) -> usize {
    match std::env::var(name) {
        Err(_) => default,
        Ok(s) => match s.parse::<usize>() {
            Ok(v) if range.contains(&v) => v,
            _ => {
                eprintln!("{name}={s}: expected an integer in {range:?}");
                std::process::exit(2);
            }
        },
    }
}

fn main() {
    // `cargo bench` passes `--bench`; without it (`cargo test --benches`) this is a
    // smoke run: 1 MiB, one run per cell, the byte checks all the same.
    let bench = std::env::args().any(|a| a == "--bench");
    let mb = env_usize("MN_CPU_MB", if bench { 30 } else { 1 }, 1..=1024);
    let reps = env_usize("MN_CPU_REPS", if bench { 3 } else { 1 }, 1..=99);
    let p = Payload::new(mb);
    // What one reading of the clock costs: each timed application call carries about
    // one reading's worth of it.
    let clock = {
        let n = 100_000u64;
        let t0 = cpu_ns();
        for _ in 0..n {
            std::hint::black_box(cpu_ns());
        }
        (cpu_ns() - t0) as f64 / n as f64
    };
    let tls = Tls::new();
    let mbs = p.bytes.len() as f64 / (1u64 << 20) as f64;
    println!(
        "MN-5: {} x {CHUNK} B = {:.2} MiB per run, RTT 60 ms, no link rate (cwnd-limited), \
         TLS 1.3 AES-128-GCM; CPU = CLOCK_THREAD_CPUTIME_ID after the handshake; \
         median of {reps} runs per cell",
        p.n, mbs
    );
    // One unmeasured run per arm first (page faults, caches, rustls's lazy setup).
    for arm in Arm::ALL {
        run(arm, 0.0, 7, &p, &tls);
    }
    // costs[loss][arm] = runs, interleaved so that drift in the machine's load is
    // spread over all arms.
    let mut costs = vec![vec![Vec::<RunOut>::new(); 4]; LOSSES.len()];
    for rep in 0..reps {
        for (li, &loss) in LOSSES.iter().enumerate() {
            for (ai, &arm) in Arm::ALL.iter().enumerate() {
                let seed = 1000 * rep as u64 + li as u64 * 10 + 1;
                costs[li][ai].push(run(arm, loss, seed, &p, &tls));
            }
        }
    }
    let per_mb = |ns: u64| ns as f64 / mbs;
    println!();
    println!(
        "one CLOCK_THREAD_CPUTIME_ID reading: {clock:.0} ns; subtracted once per timed call \
         (\"calls\") from the sender and receiver figures and three times from the total"
    );
    println!(
        "{:>5}  {:<13} {:>14} {:>14} {:>14} {:>9} {:>9} {:>9}",
        "loss", "arm", "total ns/MiB", "sender ns/MiB", "recv ns/MiB", "early", "rexmit", "calls"
    );
    let mut med = vec![[Cost::default(); 4]; LOSSES.len()];
    for (li, &loss) in LOSSES.iter().enumerate() {
        for (ai, &arm) in Arm::ALL.iter().enumerate() {
            let runs = &costs[li][ai];
            // Less the clock's own cost: one reading per timed call in each
            // application figure, three per call in the total.
            let net =
                |ns: u64, calls: u64, k: f64| ns.saturating_sub((k * clock * calls as f64) as u64);
            let m = Cost {
                total: median(
                    runs.iter()
                        .map(|r| net(r.cost.total, r.calls, 3.0))
                        .collect(),
                ),
                sender: median(
                    runs.iter()
                        .map(|r| net(r.cost.sender, r.calls, 1.0))
                        .collect(),
                ),
                receiver: median(
                    runs.iter()
                        .map(|r| net(r.cost.receiver, r.calls, 1.0))
                        .collect(),
                ),
            };
            med[li][ai] = m;
            println!(
                "{:>4}%  {:<13} {:>14.0} {:>14.0} {:>14.0} {:>9} {:>9} {:>9}",
                loss * 100.0,
                arm.name(),
                per_mb(m.total),
                per_mb(m.sender),
                per_mb(m.receiver),
                median(runs.iter().map(|r| r.early).collect()),
                median(runs.iter().map(|r| r.retransmits).collect()),
                median(runs.iter().map(|r| r.calls).collect()),
            );
        }
    }
    println!();
    println!(
        "{:>5}  {:<34} {:>9} {:>9} {:>8}  {:<14} verdict",
        "loss", "ratio", "ours", "peer", "ratio", "claim"
    );
    let mut all = true;
    for (li, &loss) in LOSSES.iter().enumerate() {
        let [raw, ucobs, tls_c, utls_c] = med[li];
        let rows = [
            (
                "uCOBS total / raw TCP total",
                ucobs.total,
                raw.total,
                "<= 5",
                0.0,
                5.0,
            ),
            (
                "uTLS receiver / TLS receiver",
                utls_c.receiver,
                tls_c.receiver,
                "<= 1.07",
                0.0,
                1.07,
            ),
            (
                "uTLS sender / TLS sender",
                utls_c.sender,
                tls_c.sender,
                "1.00 +-3 %",
                0.97,
                1.03,
            ),
        ];
        for (what, ours, peer, claim, lo, hi) in rows {
            let r = ours as f64 / peer as f64;
            let pass = (lo..=hi).contains(&r);
            all &= pass;
            println!(
                "{:>4}%  {:<34} {:>9.0} {:>9.0} {:>8.3}  {:<14} {}",
                loss * 100.0,
                what,
                per_mb(ours),
                per_mb(peer),
                r,
                claim,
                if pass { "PASS" } else { "FAIL" }
            );
        }
    }
    println!();
    println!(
        "MN-5 overall: {} (ours/peer in ns per MiB of payload; CPU numbers vary run to run)",
        if all { "PASS" } else { "FAIL" }
    );
}
