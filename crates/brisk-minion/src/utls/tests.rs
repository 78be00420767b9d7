//! uTLS against stock rustls over a simulated unordered receive: exactly-once, correct
//! delivery under loss and reordering (TLS 1.2 AES-GCM and TLS 1.3), MN-6 tampering,
//! and MN-4 wire identity.

use super::fuzz::*;
use super::*;
use record::Header;
use rustls::{Connection, SupportedProtocolVersion};
use std::collections::HashSet;
use std::io::Write;

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

#[test]
fn mn6_seeded_fuzz_loop_never_delivers_tampered_records() {
    let r = mn6_fuzz(150);
    eprintln!("MN-6 fuzz: {r:?}");
    assert_eq!((r.wrong, r.twice, r.over_bound), (0, 0, 0), "{r:?}");
    assert!(r.failed > 0, "tampering is detected in order");
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
            let t = check_tampered(if v13 { V13 } else { V12 }, &tampers, seed, loss);
            prop_assert_eq!((t.wrong, t.twice, t.over_bound), (0, 0, false));
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
