//! Inner Space's dual handshake (docs/mechanisms/inner-space.md; draft §2.1, App.
//! C.1), brisk against brisk through real packets: an upgraded server (Inner Space
//! on) and a legacy one (off); the four arrival orders of the two SYN/ACKs; exactly
//! one connection survives and the other is reset; only the Ordinary SYN is ever
//! retransmitted; the handshake takes the same time as a plain one; the explicit
//! variant's SYN-O; a Fast Open cookie carried as an Inner Option; a legacy server
//! never delivers the InSpace bytes.

use super::harness::*;
use crate::config::Config;
use crate::endpoint::{ConnHandle, DualConnect};
use crate::event::Event;
use crate::inspace::{DualVariant, InSpaceConfig};
use crate::tfo::TfoConfig;
use brisk_time::Duration;
use brisk_wire::tcp::inspace::detect::{detect_syn, Magic, SynKind};
use brisk_wire::tcp::inspace::mode::FlagOption;
use brisk_wire::{fastopen, parse_tcp_packet};

fn client_cfg(variant: DualVariant) -> Config {
    Config {
        inspace: Some(Box::new(InSpaceConfig {
            client: Some(variant),
            ..InSpaceConfig::default()
        })),
        ..Config::default()
    }
}

fn server_cfg(upgraded: bool) -> Config {
    Config {
        inspace: upgraded.then(|| {
            Box::new(InSpaceConfig {
                server: true,
                ..InSpaceConfig::default()
            })
        }),
        ..Config::default()
    }
}

struct Outcome {
    pair: DualConnect,
    winner: Option<ConnHandle>,
    /// From `connect_dual` to the client's `Connected`.
    connected_after: Option<Duration>,
    /// `Connected` events the application saw (must be one).
    connected_events: usize,
}

fn dual(p: &mut Pair, variant: DualVariant) -> Outcome {
    let start = p.now;
    let pair = p
        .client
        .connect_dual(p.now, Pair::server_addr(), client_cfg(variant))
        .unwrap();
    let mut at = None;
    p.run_until(Duration::from_secs(30), |p| {
        if at.is_none() && p.client_events.iter().any(|(_, e)| *e == Event::Connected) {
            at = Some(p.now - start);
        }
        false
    });
    let connected: Vec<ConnHandle> = p
        .client_events
        .iter()
        .filter(|(_, e)| *e == Event::Connected)
        .map(|(h, _)| *h)
        .collect();
    Outcome {
        pair,
        winner: connected.first().copied(),
        connected_after: at,
        connected_events: connected.len(),
    }
}

/// SYNs the client sent from `port`.
fn syns_from(p: &Pair, port: u16) -> usize {
    p.seen(true)
        .iter()
        .filter(|s| s.src_port == port && s.flags.syn())
        .count()
}

/// Server connections that are established (the survivors there).
fn server_established(p: &mut Pair) -> usize {
    let mut n = 0;
    while let Some(h) = p.server.accept(PORT) {
        if p.server
            .conn(h)
            .is_some_and(|c| c.state() == crate::conn::State::Established)
        {
            n += 1;
        }
    }
    n
}

#[test]
fn upgraded_server_keeps_the_upgraded_connection_with_no_added_rtt() {
    for ms in [5u64, 20, 100] {
        let lat = Duration::from_millis(ms);
        let mut p = Pair::with_configs(lat, Config::default(), server_cfg(true));
        let o = dual(&mut p, DualVariant::Implicit);
        assert_eq!(o.winner, Some(o.pair.upgraded), "{ms} ms");
        assert_eq!(o.connected_events, 1);
        // A plain handshake's time: one RTT.
        assert_eq!(o.connected_after, Some(lat * 2), "{ms} ms");
        // The SYN-U carried a detectable InSpace; the SYN/ACK-U too.
        let syn_u = p
            .log
            .iter()
            .find(|(s, _)| s.to_server && s.flags.syn() && s.len > 0)
            .expect("a SYN-U");
        let (_, tcp) = parse_tcp_packet(&syn_u.1).unwrap();
        assert_eq!(detect_syn(tcp.payload, Magic::BRISK), SynKind::Upgraded);
        let synack_u = p
            .log
            .iter()
            .find(|(s, _)| !s.to_server && s.flags.syn() && s.len > 0)
            .expect("a SYN/ACK-U");
        let (_, tcp) = parse_tcp_packet(&synack_u.1).unwrap();
        assert_eq!(detect_syn(tcp.payload, Magic::BRISK), SynKind::Upgraded);
        // The Ordinary connection was reset without its SYN/ACK being ACKed: the
        // server completes only the upgraded one.
        assert_eq!(server_established(&mut p), 1, "{ms} ms");
        assert_eq!(p.server.inspace_stats().syn_u, 1);
        assert_eq!(p.client.inspace_stats().won_upgraded, 1);
        // Data flows on the survivor, without InSpace bytes in either stream.
        let (c, req) = (o.pair.upgraded, pattern(5_000, ms));
        assert_eq!(p.client.conn_mut(c).unwrap().write(&req), req.len());
        p.drive();
        let mut got = Vec::new();
        let s = last_server_conn(&mut p);
        Pair::read_all(&mut p.server, s, &mut got);
        assert_eq!(got, req, "{ms} ms");
    }
}

/// The one server connection that is still open.
fn last_server_conn(p: &mut Pair) -> ConnHandle {
    p.server_events
        .iter()
        .rev()
        .filter_map(|(h, _)| p.server.conn(*h).map(|c| (*h, c.state())))
        .find(|(_, st)| *st == crate::conn::State::Established)
        .map(|(h, _)| h)
        .expect("an established server connection")
}

#[test]
fn legacy_server_keeps_the_ordinary_connection_and_never_reads_inner_bytes() {
    for ms in [5u64, 50] {
        let lat = Duration::from_millis(ms);
        let mut p = Pair::with_configs(lat, Config::default(), server_cfg(false));
        let o = dual(&mut p, DualVariant::Implicit);
        assert_eq!(o.winner, Some(o.pair.ordinary), "{ms} ms");
        assert_eq!(o.connected_events, 1);
        assert_eq!(o.connected_after, Some(lat * 2), "{ms} ms");
        // The Upgraded connection was reset at the legacy SYN/ACK: RST from its port.
        let up = p
            .log
            .iter()
            .find(|(s, _)| s.to_server && s.flags.syn() && s.len > 0)
            .map(|(s, _)| s.src_port)
            .unwrap();
        assert!(p
            .seen(true)
            .iter()
            .any(|s| s.src_port == up && s.flags.rst()));
        assert_eq!(server_established(&mut p), 1);
        let req = pattern(3_000, ms);
        let c = o.pair.ordinary;
        assert_eq!(p.client.conn_mut(c).unwrap().write(&req), req.len());
        p.drive();
        let mut got = Vec::new();
        let s = last_server_conn(&mut p);
        Pair::read_all(&mut p.server, s, &mut got);
        assert_eq!(got, req);
        assert_eq!(p.client.inspace_stats().won_ordinary, 1);
    }
}

/// The four arrival orders: {upgraded, legacy} server × {Ordinary, Upgraded}
/// connection's SYN/ACK first (the other delayed by 30 ms).
#[test]
fn all_four_arrival_orders_leave_exactly_one_connection() {
    let lat = Duration::from_millis(20);
    let extra = Duration::from_millis(30);
    for upgraded_server in [true, false] {
        for ordinary_first in [true, false] {
            let mut p = Pair::with_configs(lat, Config::default(), server_cfg(upgraded_server));
            // The SYN-U leaves first; port of the first SYN seen is the Upgraded one.
            let mut up_port = None;
            p.set_hook(move |s| {
                if s.to_server && s.flags.syn() && up_port.is_none() {
                    up_port = Some(s.src_port);
                }
                let to_up = !s.to_server && Some(s.dst_port) == up_port;
                if !s.to_server && s.flags.syn() && to_up == ordinary_first {
                    Action::Delay(extra)
                } else {
                    Action::Deliver
                }
            });
            let o = dual(&mut p, DualVariant::Implicit);
            let want = if upgraded_server {
                o.pair.upgraded
            } else {
                o.pair.ordinary
            };
            let case =
                format!("upgraded server {upgraded_server}, ordinary first {ordinary_first}");
            assert_eq!(o.winner, Some(want), "{case}");
            assert_eq!(o.connected_events, 1, "{case}");
            // When the answer that decides comes first, no waiting; otherwise the
            // client waits for the Upgraded connection's answer (the rules).
            let decided_at = match (upgraded_server, ordinary_first) {
                (true, false) => lat * 2,
                (false, true) => lat * 2 + extra,
                (true, true) => lat * 2 + extra,
                // Legacy answer on the Upgraded connection first: reset at once,
                // then the Ordinary one's (delayed) SYN/ACK.
                (false, false) => lat * 2 + extra,
            };
            assert_eq!(o.connected_after, Some(decided_at), "{case}");
            assert_eq!(server_established(&mut p), 1, "{case}");
        }
    }
}

#[test]
fn lost_syn_u_is_never_retransmitted_and_the_ordinary_connection_survives() {
    let lat = Duration::from_millis(20);
    let mut p = Pair::with_configs(lat, Config::default(), server_cfg(true));
    p.set_hook(|s| {
        if s.to_server && s.flags.syn() && s.len > 0 {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    let o = dual(&mut p, DualVariant::Implicit);
    assert_eq!(o.winner, Some(o.pair.ordinary));
    // The SYN-U's initial RTO (1 s) bounds the wait.
    assert_eq!(o.connected_after, Some(Duration::from_secs(1)));
    let syn_u: Vec<_> = p
        .seen(true)
        .iter()
        .filter(|s| s.flags.syn() && s.len > 0)
        .copied()
        .collect();
    assert_eq!(syn_u.len(), 1, "the SYN-U is sent once");
    assert_eq!(syns_from(&p, syn_u[0].src_port), 1);
    assert_eq!(server_established(&mut p), 1);
}

#[test]
fn when_neither_syn_is_answered_only_the_ordinary_one_is_retransmitted() {
    let lat = Duration::from_millis(20);
    let mut p = Pair::with_configs(lat, Config::default(), server_cfg(true));
    let mut dropped = 0;
    p.set_hook(move |s| {
        // The first SYN of each port lost (both first SYNs).
        if s.to_server && s.flags.syn() && dropped < 2 {
            dropped += 1;
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    let o = dual(&mut p, DualVariant::Implicit);
    assert_eq!(o.winner, Some(o.pair.ordinary));
    let syns = p.seen(true);
    let syns: Vec<_> = syns.iter().filter(|s| s.flags.syn()).collect();
    let up = syns[0].src_port;
    assert_eq!(syns.iter().filter(|s| s.src_port == up).count(), 1);
    assert_eq!(syns.iter().filter(|s| s.src_port != up).count(), 2);
    // The Ordinary SYN's retransmission after 1 s, answered one RTT later.
    assert_eq!(o.connected_after, Some(Duration::from_secs(1) + lat * 2));
}

#[test]
fn explicit_variant_syn_o_is_reset_by_an_upgraded_server() {
    let lat = Duration::from_millis(20);
    let mut p = Pair::with_configs(lat, Config::default(), server_cfg(true));
    let o = dual(&mut p, DualVariant::Explicit);
    assert_eq!(o.winner, Some(o.pair.upgraded));
    assert_eq!(o.connected_after, Some(lat * 2));
    assert_eq!(p.server.inspace_stats().syn_o_reset, 1);
    // The SYN-O carried the flag; the server answered it with RST.
    let syn_o = p
        .log
        .iter()
        .find(|(s, _)| s.to_server && s.flags.syn() && s.len == 0)
        .unwrap();
    let (_, tcp) = parse_tcp_packet(&syn_o.1).unwrap();
    assert!(FlagOption::InSpaceO.present(&tcp.extra));
    assert!(p.seen(false).iter().any(|s| s.flags.rst()));
    assert_eq!(server_established(&mut p), 1);
    // Against a legacy server the flag is ignored and the Ordinary one survives.
    let mut p = Pair::with_configs(lat, Config::default(), server_cfg(false));
    let o = dual(&mut p, DualVariant::Explicit);
    assert_eq!(o.winner, Some(o.pair.ordinary));
    assert_eq!(o.connected_after, Some(lat * 2));
    assert_eq!(server_established(&mut p), 1);
}

/// A Fast Open cookie goes as an Inner Option on the SYN-U (§2.7.1), never Outer:
/// the first dual handshake asks for a cookie inside, the second carries the cookie
/// inside and the request as data, which the upgraded server reads before the third
/// ACK.
#[test]
fn fast_open_cookie_travels_as_an_inner_option() {
    let lat = Duration::from_millis(20);
    let tfo = |c: Config| Config {
        fastopen: Some(Box::new(TfoConfig::both(16))),
        ..c
    };
    let mut server = tfo(server_cfg(true));
    server.inspace.as_deref_mut().unwrap().client = Some(DualVariant::Implicit);
    let mut p = Pair::with_configs(lat, Config::default(), server);
    let cfg = tfo(client_cfg(DualVariant::Implicit));
    for round in 0..2 {
        p.client_events.clear();
        p.log.clear();
        let pair = p
            .client
            .connect_dual(p.now, Pair::server_addr(), cfg.clone())
            .unwrap();
        let req = b"GET / HTTP/1.1\r\n\r\n";
        if round == 1 {
            // Written before the SYNs leave: on both (the application does not yet
            // know which survives).
            for h in [pair.upgraded, pair.ordinary] {
                p.client.conn_mut(h).unwrap().write(req);
            }
        }
        p.drive();
        let syn_u = p
            .log
            .iter()
            .find(|(s, _)| s.to_server && s.flags.syn() && s.len > 0)
            .expect("a SYN-U");
        let (_, tcp) = parse_tcp_packet(&syn_u.1).unwrap();
        assert!(
            fastopen::parse(&tcp.extra).is_none(),
            "round {round}: no Outer Fast Open option on a SYN-U"
        );
        assert_eq!(detect_syn(tcp.payload, Magic::BRISK), SynKind::Upgraded);
        // The Inner Options hold the Fast Open option (kind 34).
        assert_eq!(tcp.payload[12], fastopen::KIND, "round {round}");
        assert!(p.client_events.contains(&(pair.upgraded, Event::Connected)));
        if round == 1 {
            assert_eq!(tcp.payload.len(), 12 + 12 + req.len());
            // Both SYNs carried the cookie (the Ordinary one as an Outer option, which
            // the draft allows): the upgraded server took the request on each, so the
            // application saw it twice before the client reset the Ordinary one
            // (§2.7.1: acceptable, Fast Open applications tolerate duplicates).
            assert_eq!(p.server.fastopen_stats().server.passive, 2);
        }
        p.advance(Duration::from_secs(1));
    }
    assert!(p.client.fastopen_cached_cookie(SERVER_IP).is_some());
}
