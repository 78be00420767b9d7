//! Page loads over the GEO satellite path, through the split-TCP PEP and end to end
//! (brisk_sim::sat_web; docs/mechanisms/satellite-web.md).

use brisk_sim::sat_web::{run, Proto, SatWebConfig, Tls};
use brisk_time::Duration;

fn cfg(pep: bool, proto: Proto, tls: Tls, n: usize, size: u64) -> SatWebConfig {
    SatWebConfig {
        pep,
        proto,
        tls,
        objects: vec![size; n],
        ..SatWebConfig::default()
    }
}

const H1: Proto = Proto::Http1 { persistent: true };
const H1NP: Proto = Proto::Http1 { persistent: false };

#[test]
#[ignore = "prints a table for development"]
fn explore() {
    for pep in [false, true] {
        for (proto, tls) in [
            (H1, Tls::None),
            (H1, Tls::Full12),
            (H1NP, Tls::Full12),
            (Proto::Http2, Tls::Full12),
            (Proto::Http2, Tls::None),
        ] {
            for (n, s) in [(5, 100_000), (100, 5_000), (500, 5_000)] {
                let r = run(&cfg(pep, proto, tls, n, s)).unwrap();
                println!(
                    "pep {pep} {proto:?} {} {n}x{s}: plt {:?} setup {:?} html {:?} done {} bad {} syns {} conns {} fdrops {} relays {}",
                    tls.name(),
                    r.plt_ns.map(|x| x as f64 / 1e9),
                    r.setup_ns.map(|x| x as f64 / 1e9),
                    r.html_ns.map(|x| x as f64 / 1e9),
                    r.objects_done,
                    r.bad,
                    r.client_syns,
                    r.connections,
                    r.forward_drops,
                    r.relays.len()
                );
            }
        }
    }
    let _ = Duration::ZERO;
}

fn rtts(ns: u64) -> f64 {
    ns as f64 / 750e6
}

#[test]
fn every_protocol_loads_cleanly_through_the_pep_and_end_to_end() {
    for pep in [false, true] {
        for (proto, tls) in [
            (H1, Tls::None),
            (H1, Tls::Full12),
            (H1NP, Tls::None),
            (H1NP, Tls::Full12),
            (Proto::Http2, Tls::Full12),
            (Proto::Http2, Tls::Full13),
            (Proto::Http2, Tls::ZeroRtt13),
            (Proto::Http2, Tls::None),
        ] {
            for seed in [1, 2] {
                let mut c = cfg(pep, proto, tls, 25, 20_000);
                c.seed = seed;
                let r = run(&c).unwrap();
                let what = format!("pep {pep} {proto:?} {} seed {seed}", tls.name());
                assert_eq!(r.objects_done, 25, "{what}");
                assert_eq!(r.bytes, 25 * 20_000, "{what}");
                assert_eq!(r.bad, 0, "{what}");
                assert!(r.plt_ns.is_some(), "{what}");
                assert_eq!(r.relays.is_empty(), !pep, "{what}");
                if let Proto::Http1 { persistent: false } = proto {
                    assert_eq!(r.connections, 25, "{what}: one connection per object");
                }
            }
        }
    }
}

#[test]
fn setup_round_trips_end_to_end_are_the_handshakes() {
    // TCP 1 RTT; TLS 1.2 full +2, resumed +1; TLS 1.3 +1, 0-RTT +0; HTTP/2 by
    // Upgrade +1 without TLS, by ALPN +0 inside TLS.
    for (proto, tls, want) in [
        (H1, Tls::None, 1.0),
        (H1, Tls::Full12, 3.0),
        (H1, Tls::Resumed12, 2.0),
        (H1, Tls::Full13, 2.0),
        (H1, Tls::ZeroRtt13, 1.0),
        (Proto::Http2, Tls::None, 2.0),
        (Proto::Http2, Tls::Full12, 3.0),
        (Proto::Http2, Tls::ZeroRtt13, 1.0),
    ] {
        let r = run(&cfg(false, proto, tls, 5, 5_000)).unwrap();
        let got = rtts(r.setup_ns.unwrap());
        assert!(
            (got - want).abs() < 0.05,
            "{proto:?} {}: {got:.3} RTT, want {want}",
            tls.name()
        );
    }
}

#[test]
fn a_retry_timer_below_the_rtt_opens_backup_connections_end_to_end_only() {
    let mut c = cfg(false, Proto::Http2, Tls::Full12, 25, 20_000);
    c.retry = Some(Duration::from_millis(250));
    let r = run(&c).unwrap();
    assert_eq!(r.backups, 1, "one backup for the one HTTP/2 connection");
    assert_eq!(r.client_syns, 2);
    assert_eq!(r.bad, 0);
    assert_eq!(r.objects_done, 25);
    // Through the PEP the terminal answers the SYN within the retry time.
    c.pep = true;
    let r = run(&c).unwrap();
    assert_eq!((r.backups, r.client_syns), (0, 1));
    // A retry above the RTT opens none.
    c.pep = false;
    c.retry = Some(Duration::from_secs(1));
    let r = run(&c).unwrap();
    assert_eq!(r.backups, 0);
}

#[test]
fn http1_pays_about_one_rtt_per_object_per_connection() {
    let plt = |n| {
        rtts(
            run(&cfg(false, H1, Tls::None, n, 5_000))
                .unwrap()
                .plt_ns
                .unwrap(),
        )
    };
    let (a, b) = (plt(100), plt(300));
    // 200 more objects over 6 connections: about 33 more round trips.
    let slope = (b - a) / 200.0 * 6.0;
    assert!(
        (0.8..1.3).contains(&slope),
        "{slope:.2} RTT per object per connection"
    );
}

#[test]
fn bad_configs_are_refused_with_the_field_named() {
    let mut c = SatWebConfig::default();
    c.path.forward_bps = 0;
    let e = run(&c).unwrap_err().to_string();
    assert!(e.contains("path.forward_bps") && e.contains("9600"), "{e}");
    let mut c = SatWebConfig::default();
    c.path.return_queue = Some(0);
    assert!(run(&c)
        .unwrap_err()
        .to_string()
        .contains("path.return_queue"));
    let c = SatWebConfig {
        stream_window: 10,
        ..SatWebConfig::default()
    };
    assert!(run(&c).unwrap_err().to_string().contains("stream_window"));
    let c = SatWebConfig {
        objects: Vec::new(),
        ..SatWebConfig::default()
    };
    assert!(run(&c).unwrap_err().to_string().contains("objects"));
}

#[test]
fn the_pep_drops_window_scaling_on_the_client_leg_only_when_told() {
    // 2.048 Mbit/s forward (AMB-D1-2's other reading): the page still loads.
    for drop in [true, false] {
        let mut c = cfg(true, Proto::Http2, Tls::Full12, 25, 20_000);
        c.drop_wscale = drop;
        c.path.forward_bps = 2_048_000;
        let r = run(&c).unwrap();
        assert_eq!((r.objects_done, r.bad), (25, 0));
        assert_eq!(r.synacks, 1);
        assert_eq!(
            r.synacks_with_wscale,
            u64::from(!drop),
            "drop_wscale {drop}"
        );
    }
    // End to end the server's SYN-ACK carries it.
    let r = run(&cfg(false, Proto::Http2, Tls::Full12, 5, 5_000)).unwrap();
    assert_eq!((r.synacks, r.synacks_with_wscale), (1, 1));
}

#[test]
fn fast_open_saves_one_rtt_per_connection_wave_of_an_http1_page() {
    // HTTP/1.1 end to end, 5 objects: the HTML's connection and the second wave's
    // each carry their request on the SYN, so the page loads about 2 RTT sooner;
    // with TLS the ClientHello rides on the SYN instead.
    for pep in [false, true] {
        for seed in 1..=3 {
            for (tls, size) in [(Tls::None, 20_000), (Tls::Full13, 20_000)] {
                let mut c = cfg(pep, H1, tls, 5, size);
                c.seed = seed;
                let plain = run(&c).unwrap();
                c.fastopen = true;
                let tfo = run(&c).unwrap();
                for r in [&plain, &tfo] {
                    assert_eq!((r.objects_done, r.bad), (5, 0), "pep {pep} seed {seed}");
                }
                let saved = (plain.plt_ns.unwrap() as f64 - tfo.plt_ns.unwrap() as f64) / 0.75e9;
                // Through the PEP the client's handshake is with the terminal, one
                // LAN round trip away: Fast Open on that leg saves ~nothing (the PEP's
                // satellite leg opens its own connection, without Fast Open).
                let want = if pep { -0.05..=0.05 } else { 1.7..=2.3 };
                assert!(
                    want.contains(&saved),
                    "pep {pep} seed {seed} {tls:?}: saved {saved:.2} RTT"
                );
                // Priming connection + the page's: one SYN more than without.
                assert_eq!(tfo.client_syns, plain.client_syns + 1);
                // Set-up to the first request byte: 0 (HTTP) or TLS 1.3's 1 RTT,
                // one RTT less than without Fast Open.
                let rtts = |r: &brisk_sim::sat_web::SatWebResult| {
                    (r.setup_ns.unwrap() as f64 / 0.75e9).round() as u32
                };
                let tls_rtts = u32::from(tls != Tls::None);
                if pep {
                    // The satellite leg's own handshake stays.
                    assert_eq!(rtts(&tfo), rtts(&plain), "pep {tls:?}");
                } else {
                    assert_eq!(
                        (rtts(&tfo), rtts(&plain)),
                        (tls_rtts, tls_rtts + 1),
                        "{tls:?}"
                    );
                }
            }
        }
    }
}

#[test]
#[ignore = "prints the stream-cap sweep over seeds for development"]
fn explore_stream_cap_seeds() {
    for pep in [true, false] {
        for cap in [100, 140, 150, 160, 300] {
            let mut row = format!("pep {pep} cap {cap}:");
            for seed in 1..=5 {
                let mut c = cfg(pep, Proto::Http2, Tls::Full12, 500, 5_000);
                c.stream_cap = cap;
                c.seed = seed;
                if !pep {
                    c.client_rcvbuf = 1 << 20;
                }
                let r = run(&c).unwrap();
                row += &format!(
                    " {:.1}s(d{}/{})",
                    r.plt_ns.unwrap_or(0) as f64 / 1e9,
                    r.forward_drops,
                    r.return_drops
                );
            }
            println!("{row}");
        }
    }
}

#[test]
#[ignore = "prints a per-round trace of the stream-cap cells for development"]
fn explore_stream_cap_trace() {
    let caps: Vec<usize> = std::env::var("CAPS")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![100, 150, 300]);
    let pep = std::env::var("E2E").is_err();
    for cap in caps {
        let mut c = cfg(pep, Proto::Http2, Tls::Full12, 500, 5_000);
        c.stream_cap = cap;
        if !pep {
            c.client_rcvbuf = 1 << 20;
        }
        c.trace = Some(Duration::from_millis(250));
        if std::env::var("RENO").is_ok() {
            c.cc = Some(brisk_tcp::cc::CcAlgorithm::Reno);
        }
        // A faster return link (`RL_BPS`, bit/s): ACKs no longer queue behind requests.
        if let Some(bps) = std::env::var("RL_BPS").ok().and_then(|v| v.parse().ok()) {
            c.path.return_bps = bps;
        }
        let r = run(&c).unwrap();
        println!(
            "pep {pep} cap {cap}: PLT {:.2} s, html {:.2} s",
            r.plt_ns.unwrap_or(0) as f64 / 1e9,
            r.html_ns.unwrap_or(0) as f64 / 1e9
        );
        println!(
            "   t(s)  req done open  srv_kB cwnd ssth infl acked_kB sndbuf_kB relay_kB srtt_ms rq"
        );
        let mut last = 0;
        for t in &r.trace {
            println!(
                "{:7.2} {:4} {:4} {:4} {:7.0} {:4} {:4} {:4} {:8.0} {:9.0} {:8.0} {:7.1} {:3}  +{:.0}",
                t.t_ns as f64 / 1e9,
                t.requested,
                t.done,
                t.server_open,
                t.server_sent as f64 / 1e3,
                t.cwnd,
                t.ssthresh.min(9999),
                t.in_flight,
                t.acked as f64 / 1e3,
                t.send_buffered as f64 / 1e3,
                t.relay_buffered as f64 / 1e3,
                t.srtt_us as f64 / 1e3,
                t.return_queue,
                (t.acked - last.min(t.acked)) as f64 / 1e3
            );
            last = t.acked;
        }
    }
}
