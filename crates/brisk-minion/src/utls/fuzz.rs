//! MN-6 (Minion NSDI 2012 §6, §4.6; Nowlan's thesis §4.4): a uTLS receiver after its
//! handshake with a stock rustls sender, fed that sender's stream as uTCP would deliver
//! it (segments late, read out of order and again in order), with the stream tampered
//! with. Every delivery must be a datagram the peer sent, once. The unit tests
//! (`tests.rs`) and `brisk repro design` (row MN-6) run the same seeded loop,
//! [`mn6_fuzz`]. A set-up failure (rustls refusing the test certificate) panics: it
//! is a bug here, not an input.

use super::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use record::Header;
use rustls::pki_types::ServerName;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ClientConfig, ServerConfig};
use rustls::{Connection, RootCertStore, SupportedProtocolVersion};
use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::sync::{Arc, OnceLock};

pub(crate) static V12: &SupportedProtocolVersion = &rustls::version::TLS12;
pub(crate) static V13: &SupportedProtocolVersion = &rustls::version::TLS13;

pub(crate) fn cert() -> &'static (CertificateDer<'static>, Vec<u8>) {
    static C: OnceLock<(CertificateDer<'static>, Vec<u8>)> = OnceLock::new();
    C.get_or_init(|| {
        let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        (ck.cert.der().clone(), ck.key_pair.serialize_der())
    })
}

pub(crate) fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

pub(crate) fn client_config(
    v: &'static SupportedProtocolVersion,
    extract: bool,
) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    roots.add(cert().0.clone()).unwrap();
    let mut c = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[v])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    c.enable_secret_extraction = extract;
    Arc::new(c)
}

pub(crate) fn server_config(
    v: &'static SupportedProtocolVersion,
    extract: bool,
) -> Arc<ServerConfig> {
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert().1.clone()));
    let mut c = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[v])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert().0.clone()], key)
        .unwrap();
    c.enable_secret_extraction = extract;
    Arc::new(c)
}

pub(crate) fn name() -> ServerName<'static> {
    ServerName::try_from("localhost").unwrap()
}

/// Datagram `id`: its id, then bytes that depend on it. Sizes vary when `vary`.
pub(crate) fn msg(id: u32, vary: bool) -> Vec<u8> {
    let len = if vary {
        4 + (id as usize * 7919) % 3000
    } else {
        1000
    };
    let mut d = id.to_be_bytes().to_vec();
    d.extend((4..len).map(|i| (id as usize * 31 + i * 7) as u8));
    d
}

/// Runs the handshake between uTLS and a stock rustls peer, in order. Returns the
/// stream offset at which the peer's next bytes to uTLS start.
pub(crate) fn handshake(u: &mut Utls, peer: &mut Connection) -> u64 {
    let mut to_u = 0u64;
    for _ in 0..20 {
        let mut buf = Vec::new();
        while peer.wants_write() {
            peer.write_tls(&mut buf).unwrap();
        }
        if !buf.is_empty() {
            u.push_in_order(to_u, &buf, &mut |_| panic!("no data yet"))
                .unwrap();
            to_u += buf.len() as u64;
        }
        let out = u.outgoing().to_vec();
        u.consume_outgoing(out.len());
        if !out.is_empty() {
            peer.read_tls(&mut &out[..]).unwrap();
            peer.process_new_packets().unwrap();
        }
        if !u.is_handshaking() && !peer.is_handshaking() && out.is_empty() && buf.is_empty() {
            return to_u;
        }
    }
    panic!("handshake did not finish");
}

/// A uTLS receiver after its handshake with a stock rustls sender, and the sender's
/// later stream (from `base`) carrying `n` datagrams, each one write (one record).
pub(crate) struct Session {
    pub(crate) u: Utls,
    pub(crate) base: u64,
    pub(crate) stream: Vec<u8>,
    // `n`, `vary` and `eligible` are for the unit tests' checks of clean sessions.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) n: u32,
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) vary: bool,
    /// After the tests' `run`: records an ideal receiver could have delivered early.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) eligible: u64,
}

pub(crate) fn session(
    v: &'static SupportedProtocolVersion,
    utls_is_server: bool,
    n: u32,
    vary: bool,
    limits: Limits,
) -> Session {
    let (mut u, mut peer) = if utls_is_server {
        (
            Utls::server(server_config(v, true), limits).unwrap(),
            Connection::Client(
                rustls::ClientConnection::new(client_config(v, false), name()).unwrap(),
            ),
        )
    } else {
        (
            Utls::client(client_config(v, true), name(), limits).unwrap(),
            Connection::Server(rustls::ServerConnection::new(server_config(v, false)).unwrap()),
        )
    };
    let base = handshake(&mut u, &mut peer);
    let mut stream = Vec::new();
    for id in 0..n {
        peer.writer().write_all(&msg(id, vary)).unwrap();
        while peer.wants_write() {
            peer.write_tls(&mut stream).unwrap();
        }
    }
    Session {
        u,
        base,
        stream,
        n,
        vary,
        eligible: 0,
    }
}

/// Cuts `stream` into segments and delivers them as uTCP would: arrivals at the
/// in-order point are read in order together with everything contiguous after them
/// (including bytes handed out early, again); others are read out of order once.
/// A "lost" segment arrives `3..40` segments late. Returns (errors in order).
pub(crate) fn deliver(
    u: &mut Utls,
    base: u64,
    stream: &[u8],
    seed: u64,
    loss: f64,
    got: &mut dyn FnMut(Record<'_>),
) -> Result<(), UtlsError> {
    deliver_counting(u, base, stream, seed, loss, got, None)
}

/// Whether `[s, e)` is covered by the arrived segments (start -> len).
pub(crate) fn covered(arrived: &BTreeMap<usize, usize>, s: usize, e: usize) -> bool {
    let mut at = match arrived.range(..=s).next_back() {
        Some((&a, &l)) if a + l > s => a + l,
        _ => return false,
    };
    while at < e {
        match arrived.get(&at) {
            Some(&l) => at += l,
            None => return false,
        }
    }
    true
}

/// [`deliver`], also collecting into `eligible` the application-data records (index in
/// stream order) whose bytes were all held out of order at some moment: the records
/// an ideal receiver could deliver early.
pub(crate) fn deliver_counting(
    u: &mut Utls,
    base: u64,
    stream: &[u8],
    seed: u64,
    loss: f64,
    got: &mut dyn FnMut(Record<'_>),
    mut eligible: Option<&mut HashSet<usize>>,
) -> Result<(), UtlsError> {
    let mut spans = Vec::new();
    if eligible.is_some() {
        let mut i = 0;
        while let Some(h) = Header::parse(&stream[i..]) {
            spans.push((i, h.wire_len()));
            i += h.wire_len();
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut segs = Vec::new();
    let mut at = 0usize;
    while at < stream.len() {
        let len = rng.gen_range(200..1500).min(stream.len() - at);
        let delay = if rng.gen_bool(loss) {
            rng.gen_range(3..40)
        } else {
            0
        };
        segs.push((segs.len() + delay, at, len));
        at += len;
    }
    segs.sort_by_key(|&(k, a, _)| (k, a));
    let mut pos = 0usize;
    let mut arrived: BTreeMap<usize, usize> = BTreeMap::new();
    let mut result = Ok(());
    for (_, a, len) in segs {
        arrived.insert(a, len);
        if a > pos {
            u.push_out_of_order(base + a as u64, &stream[a..a + len], got);
            if let Some(e) = eligible.as_deref_mut() {
                // Records now wholly held beyond the in-order point.
                let first = spans.partition_point(|&(s, l)| s + l <= a);
                for (k, &(s, l)) in spans.iter().enumerate().skip(first) {
                    if s >= a + len {
                        break;
                    }
                    if s > pos && covered(&arrived, s, s + l) {
                        e.insert(k);
                    }
                }
            }
            continue;
        }
        let mut end = pos;
        while let Some(l) = arrived.remove(&end) {
            end += l;
        }
        if result.is_ok() {
            result = u.push_in_order(base + pos as u64, &stream[pos..end], got);
        }
        pos = end;
    }
    result
}

// ---- MN-6: tampering never yields a delivery of data the peer did not send ----

#[derive(Clone, Debug)]
pub(crate) enum Tamper {
    /// XOR a byte (header or ciphertext) at a position (fraction of the stream).
    Flip(f64, u8),
    /// Write a plausible application-data header (random length) at a position.
    FakeHeader(f64, u16),
    /// Insert random bytes.
    Garbage(f64, u16, u64),
    /// Copy a genuine record-sized run to another position (replay).
    Replay(f64, f64, u16),
    /// Cut the stream.
    Truncate(f64),
}

pub(crate) fn tamper(stream: &mut Vec<u8>, t: &Tamper) {
    let at = |f: f64, len: usize| ((f * len as f64) as usize).min(len.saturating_sub(1));
    match *t {
        Tamper::Flip(f, x) => {
            let i = at(f, stream.len());
            stream[i] ^= x.max(1);
        }
        Tamper::FakeHeader(f, len) => {
            let i = at(f, stream.len().saturating_sub(5));
            let [a, b] = len.to_be_bytes();
            stream[i..i + 5].copy_from_slice(&[23, 3, 3, a, b]);
        }
        Tamper::Garbage(f, n, seed) => {
            let mut g = vec![0u8; usize::from(n)];
            ChaCha8Rng::seed_from_u64(seed).fill(&mut g[..]);
            let i = at(f, stream.len());
            stream.splice(i..i, g);
        }
        Tamper::Replay(from, to, n) => {
            let i = at(from, stream.len());
            let run: Vec<u8> = stream[i..(i + usize::from(n)).min(stream.len())].to_vec();
            let j = at(to, stream.len());
            stream.splice(j..j, run);
        }
        Tamper::Truncate(f) => stream.truncate(at(f, stream.len()).max(1)),
    }
}

/// What one tampered session gave.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tampered {
    /// Genuine datagrams delivered.
    pub delivered: u64,
    /// The session failed on the in-order path (a fatal alert, as TLS).
    pub failed: bool,
    /// Deliveries that are not a genuine datagram (must be 0).
    pub wrong: u64,
    /// Datagrams delivered a second time (must be 0).
    pub twice: u64,
    /// Whether the out-of-order window or the in-order buffer went over its bound.
    pub over_bound: bool,
}

/// Delivers a session tampered with `tampers` under `loss`, and counts what came out:
/// every delivery must be a genuine datagram, none twice, memory within bounds.
pub(crate) fn check_tampered(
    v: &'static SupportedProtocolVersion,
    tampers: &[Tamper],
    seed: u64,
    loss: f64,
) -> Tampered {
    let limits = Limits {
        max_ooo_bytes: 64 << 10,
        max_ooo_runs: 64,
        max_ooo_records: 64,
        ..Limits::default()
    };
    let mut s = session(v, seed.is_multiple_of(2), 120, true, limits);
    for t in tampers {
        tamper(&mut s.stream, t);
    }
    let mut seen = HashSet::new();
    let mut out = Tampered::default();
    let stream = s.stream.clone();
    let r = deliver(&mut s.u, s.base, &stream, seed, loss, &mut |r| {
        let id = r
            .data
            .get(..4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_be_bytes);
        match id {
            Some(id) if id < 120 && r.data == &msg(id, true)[..] => {
                if !seen.insert(id) {
                    out.twice += 1;
                }
            }
            _ => out.wrong += 1,
        }
    });
    let (held, cur) = s.u.held_bytes();
    out.over_bound = held > limits.max_ooo_bytes as u64 || cur > 2 * receiver::MAX_WIRE + 1500;
    out.delivered = s.u.counters().delivered;
    out.failed = r.is_err();
    out
}

/// The seeded fuzz loop's totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FuzzReport {
    pub sessions: u64,
    /// Sessions that hit a tampered record in order and failed, as TLS does.
    pub failed: u64,
    pub delivered: u64,
    /// Deliveries of data the peer did not send.
    pub wrong: u64,
    pub twice: u64,
    /// Sessions whose buffers went over their bounds.
    pub over_bound: u64,
}

/// MN-6's seeded fuzz loop: `sessions` uTLS receivers (TLS 1.2 AES-GCM and TLS 1.3
/// alternating, client and server) fed a stock rustls sender's stream of 120 datagrams
/// that has been tampered with 1–5 times (flipped bytes, planted headers, garbage,
/// replayed runs, truncation), delivered as uTCP would with 0–30 % of segments late.
/// The first 150 sessions are the unit test's.
pub fn mn6_fuzz(sessions: u64) -> FuzzReport {
    let mut rng = ChaCha8Rng::seed_from_u64(0x6d6e36);
    let mut rep = FuzzReport {
        sessions,
        ..FuzzReport::default()
    };
    for i in 0..sessions {
        let k = rng.gen_range(1..6);
        let tampers: Vec<Tamper> = (0..k)
            .map(|_| match rng.gen_range(0..5) {
                0 => Tamper::Flip(rng.gen(), rng.gen()),
                1 => Tamper::FakeHeader(rng.gen(), rng.gen_range(17..16_700)),
                2 => Tamper::Garbage(rng.gen(), rng.gen_range(1..3000), rng.gen()),
                3 => Tamper::Replay(rng.gen(), rng.gen(), rng.gen_range(20..3000)),
                _ => Tamper::Truncate(rng.gen()),
            })
            .collect();
        let v = if i % 2 == 0 { V12 } else { V13 };
        let t = check_tampered(v, &tampers, i, rng.gen_range(0.0..0.3));
        rep.delivered += t.delivered;
        rep.failed += u64::from(t.failed);
        rep.wrong += t.wrong;
        rep.twice += t.twice;
        rep.over_bound += u64::from(t.over_bound);
    }
    rep
}
