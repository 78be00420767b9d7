//! uTLS against stock rustls over a simulated unordered receive: exactly-once, correct
//! delivery under loss and reordering (TLS 1.2 AES-GCM and TLS 1.3), MN-6 tampering,
//! and MN-4 wire identity.

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

static V12: &SupportedProtocolVersion = &rustls::version::TLS12;
static V13: &SupportedProtocolVersion = &rustls::version::TLS13;

fn cert() -> &'static (CertificateDer<'static>, Vec<u8>) {
    static C: OnceLock<(CertificateDer<'static>, Vec<u8>)> = OnceLock::new();
    C.get_or_init(|| {
        let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        (ck.cert.der().clone(), ck.key_pair.serialize_der())
    })
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

pub(super) fn client_config(
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

pub(super) fn server_config(
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

fn name() -> ServerName<'static> {
    ServerName::try_from("localhost").unwrap()
}

/// Datagram `id`: its id, then bytes that depend on it. Sizes vary when `vary`.
fn msg(id: u32, vary: bool) -> Vec<u8> {
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
fn handshake(u: &mut Utls, peer: &mut Connection) -> u64 {
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
struct Session {
    u: Utls,
    base: u64,
    stream: Vec<u8>,
    n: u32,
    vary: bool,
    /// After [`run`]: records an ideal receiver could have delivered early.
    eligible: u64,
}

fn session(
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
fn deliver(
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
fn covered(arrived: &BTreeMap<usize, usize>, s: usize, e: usize) -> bool {
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
fn deliver_counting(
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

/// Delivers a session under `loss`, checks every datagram once and intact; returns
/// (delivered out of order, trials).
fn run(s: &mut Session, seed: u64, loss: f64) -> (u64, u64) {
    let mut seen = vec![0u32; s.n as usize];
    let vary = s.vary;
    let mut eligible = HashSet::new();
    deliver_counting(
        &mut s.u,
        s.base,
        &s.stream.clone(),
        seed,
        loss,
        &mut |r| {
            let id = u32::from_be_bytes(r.data[..4].try_into().unwrap());
            assert_eq!(r.data, &msg(id, vary)[..], "datagram {id} intact");
            seen[id as usize] += 1;
        },
        Some(&mut eligible),
    )
    .unwrap();
    s.eligible = eligible.len() as u64;
    assert!(
        seen.iter().all(|&c| c == 1),
        "every datagram exactly once: {seen:?}"
    );
    let c = s.u.counters();
    assert_eq!(c.delivered, u64::from(s.n));
    assert_eq!(c.duplicates_skipped, c.delivered_out_of_order);
    assert_eq!(s.u.held_bytes(), (0, 0), "nothing left over");
    assert!(c.delivered_out_of_order <= s.eligible);
    (c.delivered_out_of_order, c.trials)
}

#[test]
fn in_order_it_is_plain_tls() {
    for v in [V12, V13] {
        for server in [true, false] {
            let mut s = session(v, server, 200, true, Limits::default());
            let (ooo, trials) = run(&mut s, 1, 0.0);
            assert_eq!((ooo, trials), (0, 0));
        }
    }
}

/// Loss rates of the sweep (a "lost" segment arrives 3 to 40 segments late).
const LOSSES: [f64; 3] = [0.01, 0.03, 0.05];

#[test]
fn tls12_gcm_records_are_delivered_out_of_order_by_their_explicit_nonce() {
    for (k, loss) in LOSSES.into_iter().enumerate() {
        let mut s = session(V12, true, 2000, false, Limits::default());
        let (ooo, trials) = run(&mut s, 7 + k as u64, loss);
        let c = s.u.counters();
        eprintln!(
            "TLS 1.2 GCM, loss {loss}: {ooo} of 2000 early, {} eligible, {} candidates, {trials} trials, {} unauthenticated",
            s.eligible, c.ooo_candidates, c.ooo_unauthenticated
        );
        assert!(ooo > 0, "losses let records through early");
        assert_eq!(
            ooo, s.eligible,
            "every record wholly held early was delivered early"
        );
        // The nonce relation (rustls: seq XOR iv) gives at most two guesses per record.
        assert!(trials <= 2 * c.ooo_candidates, "{c:?}");
    }
}

#[test]
fn tls13_records_are_delivered_out_of_order_by_inference() {
    for vary in [false, true] {
        for (k, loss) in LOSSES.into_iter().enumerate() {
            let mut s = session(V13, false, 2000, vary, Limits::default());
            let (ooo, trials) = run(&mut s, 11 + k as u64, loss);
            let c = s.u.counters();
            eprintln!(
                "TLS 1.3, sizes vary {vary}, loss {loss}: {ooo} of 2000 early, {} eligible, {} candidates, {trials} trials, {} unauthenticated",
                s.eligible, c.ooo_candidates, c.ooo_unauthenticated
            );
            assert!(ooo > 0, "losses let records through early");
            assert_eq!(
                ooo, s.eligible,
                "every record wholly held early was delivered early"
            );
        }
    }
}

#[test]
fn tight_bounds_only_delay_delivery() {
    let limits = Limits {
        max_ooo_bytes: 6000,
        max_ooo_runs: 2,
        max_ooo_records: 2,
        max_trials: 1,
        ..Limits::default()
    };
    for v in [V12, V13] {
        let mut s = session(v, true, 1000, true, limits);
        run(&mut s, 3, 0.05);
        let c = s.u.counters();
        assert!(c.ooo_bytes_refused > 0, "{c:?}");
    }
    let bad = Limits {
        max_trials: 0,
        ..Limits::default()
    };
    assert!(matches!(
        Utls::server(server_config(V13, true), bad),
        Err(UtlsError::BadLimit {
            field: "max_trials",
            ..
        })
    ));
}

#[test]
fn needs_secret_extraction() {
    assert!(Utls::server(server_config(V13, false), Limits::default()).is_err());
    assert!(Utls::client(client_config(V13, false), name(), Limits::default()).is_err());
}

#[test]
fn key_update_and_close_notify_are_handled_in_order() {
    let mut u = Utls::server(server_config(V13, true), Limits::default()).unwrap();
    let mut peer = Connection::Client(
        rustls::ClientConnection::new(client_config(V13, false), name()).unwrap(),
    );
    let base = handshake(&mut u, &mut peer);
    let mut stream = Vec::new();
    for id in 0..300 {
        if id == 150 {
            peer.refresh_traffic_keys().unwrap();
        }
        peer.writer().write_all(&msg(id, true)).unwrap();
        while peer.wants_write() {
            peer.write_tls(&mut stream).unwrap();
        }
    }
    peer.send_close_notify();
    while peer.wants_write() {
        peer.write_tls(&mut stream).unwrap();
    }
    let mut seen = HashSet::new();
    let mut epochs = HashSet::new();
    deliver(&mut u, base, &stream, 5, 0.03, &mut |r| {
        let id = u32::from_be_bytes(r.data[..4].try_into().unwrap());
        assert_eq!(r.data, &msg(id, true)[..]);
        assert!(seen.insert(id), "{id} twice");
        epochs.insert((r.epoch, id >= 150));
    })
    .unwrap();
    assert_eq!(seen.len(), 300);
    assert_eq!(
        epochs,
        HashSet::from([(0, false), (1, true)]),
        "KeyUpdate moved to epoch 1"
    );
    assert_eq!(u.counters().key_updates, 1);
    assert!(u.peer_closed());
    // uTLS's answer to the peer's KeyUpdate (rustls asks for one) reaches the peer.
    let out = u.outgoing().to_vec();
    peer.read_tls(&mut &out[..]).unwrap();
    peer.process_new_packets().unwrap();
}

#[test]
fn utls_to_utls_both_ways() {
    for v in [V12, V13] {
        let mut c = Utls::client(client_config(v, true), name(), Limits::default()).unwrap();
        let mut s = Utls::server(server_config(v, true), Limits::default()).unwrap();
        let (mut c2s, mut s2c) = (0u64, 0u64);
        let mut got = Vec::new();
        for round in 0..10 {
            if round == 4 {
                c.send(b"hello server").unwrap();
                s.send(b"hello client").unwrap();
            }
            let a = c.outgoing().to_vec();
            c.consume_outgoing(a.len());
            s.push_in_order(c2s, &a, &mut |r| got.push(r.data.to_vec()))
                .unwrap();
            c2s += a.len() as u64;
            let b = s.outgoing().to_vec();
            s.consume_outgoing(b.len());
            c.push_in_order(s2c, &b, &mut |r| got.push(r.data.to_vec()))
                .unwrap();
            s2c += b.len() as u64;
        }
        got.sort();
        assert_eq!(
            got,
            vec![b"hello client".to_vec(), b"hello server".to_vec()]
        );
    }
}

// ---- MN-6: tampering never yields a delivery of data the peer did not send ----

#[derive(Clone, Debug)]
enum Tamper {
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

fn tamper(stream: &mut Vec<u8>, t: &Tamper) {
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

/// Delivers a tampered session; asserts no delivery is anything but a genuine
/// datagram, none twice, memory within bounds, and no panic.
fn check_tampered(
    v: &'static SupportedProtocolVersion,
    tampers: &[Tamper],
    seed: u64,
    loss: f64,
) -> (u64, bool) {
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
    let stream = s.stream.clone();
    let r = deliver(&mut s.u, s.base, &stream, seed, loss, &mut |r| {
        let id = u32::from_be_bytes(r.data[..4].try_into().unwrap());
        assert!(
            id < 120 && r.data == &msg(id, true)[..],
            "a delivery that is not a genuine datagram"
        );
        assert!(seen.insert(id), "datagram {id} delivered twice");
    });
    let (held, cur) = s.u.held_bytes();
    assert!(
        held <= limits.max_ooo_bytes as u64,
        "window {held} over its bound"
    );
    assert!(
        cur <= 2 * receiver::MAX_WIRE + 1500,
        "in-order buffer {cur}"
    );
    (s.u.counters().delivered, r.is_err())
}

#[test]
fn mn6_seeded_fuzz_loop_never_delivers_tampered_records() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x6d6e36);
    let (mut failed, mut delivered) = (0, 0);
    for i in 0..150u64 {
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
        let (d, err) = check_tampered(v, &tampers, i, rng.gen_range(0.0..0.3));
        delivered += d;
        failed += u64::from(err);
    }
    eprintln!("MN-6 fuzz: 150 tampered sessions, {failed} failed in order (fatal, as TLS), {delivered} genuine deliveries, 0 wrong");
    assert!(failed > 0, "tampering is detected in order");
}

#[test]
fn replayed_genuine_record_is_not_delivered_twice() {
    // A whole genuine record copied further on: early it may authenticate under its
    // own number, but that number is delivered once; in order the copy is fatal.
    for v in [V12, V13] {
        let mut s = session(v, true, 50, false, Limits::default());
        let rec = s.stream[..1029.min(s.stream.len())].to_vec();
        let at = s.stream.len() / 2;
        let at = at - at % rec.len();
        s.stream.splice(at..at, rec);
        let mut seen = HashSet::new();
        let stream = s.stream.clone();
        let r = deliver(&mut s.u, s.base, &stream, 9, 0.5, &mut |r| {
            let id = u32::from_be_bytes(r.data[..4].try_into().unwrap());
            assert!(seen.insert(id), "{id} twice");
        });
        assert!(r.is_err(), "the replay fails in order");
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn tamper_strategy() -> impl Strategy<Value = Tamper> {
        prop_oneof![
            (0.0..1.0f64, any::<u8>()).prop_map(|(f, x)| Tamper::Flip(f, x)),
            (0.0..1.0f64, 17u16..16_700).prop_map(|(f, l)| Tamper::FakeHeader(f, l)),
            (0.0..1.0f64, 1u16..2000, any::<u64>()).prop_map(|(f, n, s)| Tamper::Garbage(f, n, s)),
            (0.0..1.0f64, 0.0..1.0f64, 20u16..3000).prop_map(|(a, b, n)| Tamper::Replay(a, b, n)),
            (0.0..1.0f64).prop_map(Tamper::Truncate),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn clean_streams_deliver_every_record_once(seed in any::<u64>(), loss in 0.0..0.2f64, v13 in any::<bool>(), server in any::<bool>()) {
            let mut s = session(if v13 { V13 } else { V12 }, server, 300, true, Limits::default());
            run(&mut s, seed, loss);
        }

        /// Arbitrary out-of-order pushes (any offset, overlapping, header-like bytes)
        /// and in-order pushes of junk: no panic, nothing delivered, memory bounded.
        #[test]
        fn arbitrary_pushes_never_panic_or_deliver(
            ops in proptest::collection::vec((any::<bool>(), 0u64..200_000, proptest::collection::vec(any::<u8>(), 0..3000), any::<bool>()), 1..40),
            v13 in any::<bool>(),
        ) {
            let limits = Limits { max_ooo_bytes: 100_000, max_ooo_runs: 16, ..Limits::default() };
            let mut s = session(if v13 { V13 } else { V12 }, true, 0, false, limits);
            let base = s.base;
            for (in_order, off, mut bytes, plant) in ops {
                if plant && bytes.len() >= 5 {
                    let l = (bytes.len() - 5) as u16;
                    bytes[..5].copy_from_slice(&[23, 3, 3, (l >> 8) as u8, l as u8]);
                }
                let mut d = |_: Record<'_>| panic!("junk delivered");
                if in_order {
                    let _ = s.u.push_in_order(base + off % 50, &bytes, &mut d);
                } else {
                    s.u.push_out_of_order(base + off, &bytes, &mut d);
                }
                let (held, _) = s.u.held_bytes();
                prop_assert!(held <= 100_000);
            }
        }

        #[test]
        fn tampered_streams_never_deliver_wrong_data(
            tampers in proptest::collection::vec(tamper_strategy(), 1..5),
            seed in any::<u64>(),
            loss in 0.0..0.4f64,
            v13 in any::<bool>(),
        ) {
            check_tampered(if v13 { V13 } else { V12 }, &tampers, seed, loss);
        }
    }
}

// ---- MN-4: uTLS wire bytes = TLS wire bytes ----

/// The bytes a client sends after its handshake for `n` datagrams, and the server's
/// view: uTLS client vs stock rustls client, same server, same writes.
fn client_stream(
    utls: bool,
    v: &'static SupportedProtocolVersion,
    n: u32,
) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut server =
        Connection::Server(rustls::ServerConnection::new(server_config(v, false)).unwrap());
    let mut out = Vec::new();
    if utls {
        let mut u = Utls::client(client_config(v, true), name(), Limits::default()).unwrap();
        handshake(&mut u, &mut server);
        for id in 0..n {
            u.send(&msg(id, true)).unwrap();
        }
        out.extend_from_slice(u.outgoing());
    } else {
        let mut c = Connection::Client(
            rustls::ClientConnection::new(client_config(v, false), name()).unwrap(),
        );
        loop {
            let mut b = Vec::new();
            while c.wants_write() {
                c.write_tls(&mut b).unwrap();
            }
            server.read_tls(&mut &b[..]).unwrap();
            server.process_new_packets().unwrap();
            let mut b2 = Vec::new();
            while server.wants_write() {
                server.write_tls(&mut b2).unwrap();
            }
            c.read_tls(&mut &b2[..]).unwrap();
            c.process_new_packets().unwrap();
            if !c.is_handshaking() && !server.is_handshaking() && b.is_empty() && b2.is_empty() {
                break;
            }
        }
        for id in 0..n {
            c.writer().write_all(&msg(id, true)).unwrap();
            while c.wants_write() {
                c.write_tls(&mut out).unwrap();
            }
        }
    }
    // The stock server reads it.
    let mut plain = Vec::new();
    let mut rest = &out[..];
    while !rest.is_empty() {
        server.read_tls(&mut rest).unwrap();
        server.process_new_packets().unwrap();
        let _ = std::io::Read::read_to_end(&mut server.reader(), &mut plain);
    }
    let mut msgs = Vec::new();
    let mut i = 0;
    for id in 0..n {
        let l = msg(id, true).len();
        msgs.push(plain[i..i + l].to_vec());
        i += l;
    }
    (out, msgs)
}

fn headers(stream: &[u8]) -> Vec<[u8; 5]> {
    let mut v = Vec::new();
    let mut i = 0;
    while let Some(h) = Header::parse(&stream[i..]) {
        v.push(stream[i..i + 5].try_into().unwrap());
        i += h.wire_len();
    }
    assert_eq!(i, stream.len(), "whole records");
    v
}

#[test]
fn mn4_utls_wire_bytes_equal_tls_wire_bytes() {
    for (v, tls13) in [(V12, false), (V13, true)] {
        let n = 200;
        let (u, um) = client_stream(true, v, n);
        let (t, tm) = client_stream(false, v, n);
        let expect: usize = (0..n)
            .map(|id| record_wire_len(tls13, !tls13, msg(id, true).len()))
            .sum();
        eprintln!(
            "MN-4 ({}): uTLS {} B, TLS {} B, TLS framing {} B for {n} datagrams",
            if tls13 { "1.3" } else { "1.2" },
            u.len(),
            t.len(),
            expect
        );
        assert_eq!(u.len(), t.len(), "same number of bytes");
        assert_eq!(u.len(), expect, "TLS's framing, nothing added");
        assert_eq!(
            headers(&u),
            headers(&t),
            "same record headers, record for record"
        );
        assert_eq!(um, tm, "a stock TLS receiver reads the same datagrams");
        assert_eq!(um, (0..n).map(|id| msg(id, true)).collect::<Vec<_>>());
    }
}
