//! HTTPS in the satellite page loads through rustls (brisk_sim::sat_tls,
//! `SatWebConfig::rustls`; docs/mechanisms/satellite-web.md): the handshakes' round
//! trips as rustls makes them, resumption and 0-RTT, ALPN, and the same bytes for the
//! same seed.

use brisk_sim::sat_web::{run, Proto, SatWebConfig, Tls};
use brisk_time::Duration;

const H1: Proto = Proto::Http1 { persistent: true };

fn cfg(pep: bool, proto: Proto, tls: Tls, n: usize, size: u64) -> SatWebConfig {
    SatWebConfig {
        pep,
        proto,
        tls,
        objects: vec![size; n],
        rustls: true,
        start_jitter: Duration::ZERO,
        ..SatWebConfig::default()
    }
}

fn rtts(ns: u64) -> f64 {
    ns as f64 / 750e6
}

#[test]
fn rustls_handshakes_cost_their_round_trips_end_to_end() {
    // TCP 1 RTT; TLS 1.2 full +2, resumed +1; TLS 1.3 full +1, 0-RTT +0; ALPN +0.
    for (proto, tls, want) in [
        (H1, Tls::Full12, 3.0),
        (H1, Tls::Resumed12, 2.0),
        (H1, Tls::Full13, 2.0),
        (H1, Tls::ZeroRtt13, 1.0),
        (Proto::Http2, Tls::Full12, 3.0),
        (Proto::Http2, Tls::Full13, 2.0),
        (Proto::Http2, Tls::ZeroRtt13, 1.0),
    ] {
        for seed in 1..=2 {
            let mut c = cfg(false, proto, tls, 5, 5_000);
            c.seed = seed;
            let r = run(&c).unwrap();
            let what = format!("{proto:?} {} seed {seed}", tls.name());
            assert!(r.plt_ns.is_some(), "{what}: page not loaded");
            assert_eq!(r.bad, 0, "{what}: bad bytes");
            let t = &r.tls;
            assert_eq!(t.failures, 0, "{what}");
            let got = rtts(r.setup_ns.unwrap());
            assert!(
                (got - want).abs() < 0.05,
                "{what}: {got:.3} RTT, want {want}"
            );
            // Every connection's handshake is rustls's: the first one full unless the
            // browser returns with a session; later ones resume it.
            assert_eq!(t.full + t.resumed, r.connections, "{what}: {t:?}");
            let returning = matches!(tls, Tls::Resumed12 | Tls::ZeroRtt13);
            assert_eq!(t.full == 0, returning, "{what}: {t:?}");
            assert!(t.resumed >= 1 || r.connections == 1, "{what}: {t:?}");
            let v13 = matches!(tls, Tls::Full13 | Tls::ZeroRtt13);
            assert_eq!(t.tls13, if v13 { r.connections } else { 0 }, "{what}");
            if proto == Proto::Http2 {
                assert_eq!(t.alpn_h2, r.connections, "{what}: h2 by ALPN");
            } else {
                assert_eq!(t.alpn_h2, 0, "{what}");
            }
            if tls == Tls::ZeroRtt13 {
                assert!(t.early_sent >= 1 && t.early_refused == 0, "{what}: {t:?}");
            } else {
                assert_eq!(t.early_sent, 0, "{what}");
            }
            // Records cost bytes: more TLS bytes in than application bytes.
            assert!(t.wire.received > t.wire.plain_received, "{what}: {t:?}");
            assert!(
                t.server_first_flight.is_some_and(|b| b > 100),
                "{what}: {t:?}"
            );
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_another_seed_other_bytes() {
    for (proto, tls) in [(H1, Tls::Full12), (Proto::Http2, Tls::ZeroRtt13)] {
        for pep in [false, true] {
            let c = cfg(pep, proto, tls, 10, 20_000);
            let a = run(&c).unwrap();
            let b = run(&c).unwrap();
            assert_eq!(a, b, "{proto:?} {} pep {pep}", tls.name());
            let other = run(&SatWebConfig { seed: 2, ..c }).unwrap();
            assert_ne!(a.client_wire_digest, other.client_wire_digest);
            assert_eq!(other.bad, 0);
        }
    }
}

#[test]
fn rustls_pages_load_cleanly_through_the_pep() {
    for (proto, tls) in [
        (H1, Tls::Full12),
        (Proto::Http1 { persistent: false }, Tls::Full12),
        (Proto::Http2, Tls::Full12),
    ] {
        let r = run(&cfg(true, proto, tls, 25, 20_000)).unwrap();
        assert_eq!(r.objects_done, 25, "{proto:?}");
        assert_eq!((r.bad, r.tls.failures), (0, 0), "{proto:?}");
        assert_eq!(r.bytes, 25 * 20_000);
    }
}

#[test]
#[ignore = "prints model vs rustls for development"]
fn explore_model_vs_rustls() {
    for pep in [true, false] {
        for (proto, tls) in [
            (H1, Tls::Full12),
            (Proto::Http1 { persistent: false }, Tls::Full12),
            (Proto::Http2, Tls::Full12),
            (H1, Tls::Full13),
            (H1, Tls::ZeroRtt13),
        ] {
            for (n, s) in [(5, 100_000), (25, 20_000), (100, 5_000), (500, 5_000)] {
                let mut c = cfg(pep, proto, tls, n, s);
                c.start_jitter = Duration::from_millis(100);
                let m = run(&SatWebConfig {
                    rustls: false,
                    ..c.clone()
                })
                .unwrap();
                let r = run(&c).unwrap();
                println!(
                    "pep {pep} {proto:?} {} {n}x{s}: model {:.2} s rustls {:.2} s setup {:.2}/{:.2} RTT tls {:?}",
                    tls.name(),
                    m.plt_ns.unwrap_or(0) as f64 / 1e9,
                    r.plt_ns.unwrap_or(0) as f64 / 1e9,
                    rtts(m.setup_ns.unwrap_or(0)),
                    rtts(r.setup_ns.unwrap_or(0)),
                    r.tls
                );
            }
        }
    }
}
