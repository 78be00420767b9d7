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

/// What happens to the SYN-U (and its answer) on the way.
#[derive(Clone, Copy, Debug)]
enum SynUFate {
    /// The first SYN-U is lost, the retransmission goes through.
    LostOnce,
    /// Every SYN-U is lost (a middlebox that drops SYN data).
    LostAlways,
    /// The answer to the first SYN-U comes one RTT late (after the retransmission).
    AnswerLate,
}

/// §2.1.2: the Ordinary SYN answered and the SYN-U not: the SYN-U goes again half an
/// RTT after the Ordinary's answer (once), the Upgraded connection gives up two RTTs
/// after that; the Ordinary SYN is never retransmitted meanwhile. Both server kinds,
/// each fate. RTT 40 ms.
#[test]
fn unanswered_syn_u_is_retransmitted_once_after_the_ordinary_answer() {
    let lat = Duration::from_millis(20);
    let ms = Duration::from_millis;
    for upgraded_server in [true, false] {
        for fate in [
            SynUFate::LostOnce,
            SynUFate::LostAlways,
            SynUFate::AnswerLate,
        ] {
            let case = format!("upgraded server {upgraded_server}, {fate:?}");
            let mut p = Pair::with_configs(lat, Config::default(), server_cfg(upgraded_server));
            let mut up_port = None;
            let mut syn_u_seen = 0;
            p.set_hook(move |s| {
                if s.to_server && s.flags.syn() && up_port.is_none() {
                    up_port = Some(s.src_port); // the SYN-U leaves first
                }
                if s.to_server && s.flags.syn() && Some(s.src_port) == up_port {
                    syn_u_seen += 1;
                    match fate {
                        SynUFate::LostAlways => return Action::Drop,
                        SynUFate::LostOnce if syn_u_seen == 1 => return Action::Drop,
                        _ => {}
                    }
                }
                let first_answer = !s.to_server && s.flags.syn() && Some(s.dst_port) == up_port;
                if matches!(fate, SynUFate::AnswerLate) && first_answer && s.index == 0 {
                    return Action::Delay(lat * 2);
                }
                Action::Deliver
            });
            let o = dual(&mut p, DualVariant::Implicit);
            let up = p
                .seen(true)
                .iter()
                .find(|s| s.flags.syn())
                .unwrap()
                .src_port;
            let syn_u = syns_from(&p, up);
            let ordinary_syns = p
                .seen(true)
                .iter()
                .filter(|s| s.flags.syn() && s.src_port != up)
                .count();
            assert_eq!(
                ordinary_syns, 1,
                "{case}: the Ordinary SYN is never retransmitted"
            );
            // Answered at 40 ms, the SYN-U again at 60 ms.
            let (winner, at, syns) = match (fate, upgraded_server) {
                // The retransmitted SYN-U answered at 100 ms.
                (SynUFate::LostOnce, true) => (o.pair.upgraded, ms(100), 2),
                (SynUFate::LostOnce, false) => (o.pair.ordinary, ms(100), 2),
                // Given up 80 ms after the retransmission.
                (SynUFate::LostAlways, _) => (o.pair.ordinary, ms(140), 2),
                // The late first answer (80 ms) decides.
                (SynUFate::AnswerLate, true) => (o.pair.upgraded, ms(80), 2),
                (SynUFate::AnswerLate, false) => (o.pair.ordinary, ms(80), 2),
            };
            assert_eq!(o.winner, Some(winner), "{case}");
            assert_eq!(o.connected_after, Some(at), "{case}");
            assert_eq!(syn_u, syns, "{case}: the SYN-U at most twice");
            assert_eq!(o.connected_events, 1, "{case}");
            assert_eq!(server_established(&mut p), 1, "{case}");
        }
    }
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

// ---- Inner Space on data segments (mode (i): ZOMBI-encoded InSpace per sent
// segment, ModeSwitch) --------------------------------------------------------------

fn data_client_cfg() -> Config {
    Config {
        inspace: Some(Box::new(InSpaceConfig {
            client: Some(DualVariant::Implicit),
            data: true,
            ..InSpaceConfig::default()
        })),
        ..Config::default()
    }
}

fn sha(b: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(b).into()
}

/// Writes `up` at the client and `down` at the server as room allows, reads both
/// ends, until both arrive or 10 000 rounds of 5 ms pass. `mid(p, round)` runs each
/// round (a ModeSwitch, say).
fn exchange(
    p: &mut Pair,
    c: ConnHandle,
    s: ConnHandle,
    up: &[u8],
    down: &[u8],
    mut mid: impl FnMut(&mut Pair, usize),
) -> (Vec<u8>, Vec<u8>) {
    let (mut su, mut sd) = (0, 0);
    let (mut got_up, mut got_down) = (Vec::new(), Vec::new());
    for round in 0..10_000 {
        if su < up.len() {
            su += p.client.conn_mut(c).unwrap().write(&up[su..]);
        }
        if sd < down.len() {
            sd += p.server.conn_mut(s).unwrap().write(&down[sd..]);
        }
        mid(p, round);
        p.advance(Duration::from_millis(5));
        Pair::read_all(&mut p.server, s, &mut got_up);
        Pair::read_all(&mut p.client, c, &mut got_down);
        if got_up.len() >= up.len() && got_down.len() >= down.len() {
            break;
        }
    }
    (got_up, got_down)
}

/// The first TCP Data octets of each data segment one way, with its ISN-relative
/// offset (the connection's ISS + 1 is 1).
fn data_segments(p: &Pair, to_server: bool, port: u16) -> Vec<(u32, Vec<u8>)> {
    p.log
        .iter()
        .filter(|(s, _)| {
            s.to_server == to_server
                && !s.flags.syn()
                && s.len > 0
                && (if to_server { s.src_port } else { s.dst_port }) == port
        })
        .map(|(s, b)| {
            let (_, tcp) = parse_tcp_packet(b).unwrap();
            (s.seq.0, tcp.payload.to_vec())
        })
        .collect()
}

fn upgraded_data_pair(lat: Duration, server: Config) -> (Pair, ConnHandle, ConnHandle) {
    let mut p = Pair::with_configs(lat, Config::default(), server);
    let pair = p
        .client
        .connect_dual(p.now, Pair::server_addr(), data_client_cfg())
        .unwrap();
    p.run_until(Duration::from_secs(5), |p| {
        p.client_events.iter().any(|(_, e)| *e == Event::Connected)
    });
    p.advance(Duration::from_millis(200));
    let c = p
        .client_events
        .iter()
        .find(|(_, e)| *e == Event::Connected)
        .map(|(h, _)| *h)
        .expect("connected");
    assert_eq!(c, pair.upgraded);
    let s = last_server_conn(&mut p);
    (p, c, s)
}

#[test]
fn data_segments_carry_inspace_and_bulk_arrives_intact_both_ways() {
    // Lossless, then 1 in 29 data packets lost each way (retransmissions rebuild
    // the same sent segments), at two latencies.
    for (ms, lossy) in [(10u64, false), (10, true), (40, true)] {
        let (mut p, c, s) = upgraded_data_pair(Duration::from_millis(ms), server_cfg(true));
        let cs = p.client.conn(c).unwrap().inspace_data_stats().unwrap();
        let ss = p.server.conn(s).unwrap().inspace_data_stats().unwrap();
        assert!(cs.tx_on && cs.rx_on && ss.tx_on && ss.rx_on, "{ms} ms");
        if lossy {
            let mut n = 0u64;
            p.set_hook(move |s| {
                n += 1;
                if s.len > 0 && n.is_multiple_of(29) {
                    Action::Drop
                } else {
                    Action::Deliver
                }
            });
        }
        let up = pattern(300_001, ms); // odd: the last sent segment has odd length
        let mut down = pattern(200_000, ms + 1);
        down[50_000..90_000].fill(0); // all-zero stretch: ZOMBI links everywhere
        let (got_up, got_down) = exchange(&mut p, c, s, &up, &down, |_, _| {});
        assert_eq!(sha(&got_up), sha(&up), "{ms} ms lossy {lossy}: up");
        assert_eq!(sha(&got_down), sha(&down), "{ms} ms lossy {lossy}: down");
        let cs = p.client.conn(c).unwrap().inspace_data_stats().unwrap();
        let ss = p.server.conn(s).unwrap().inspace_data_stats().unwrap();
        assert_eq!(cs.segments_sent, ss.segments_read, "{ms} ms");
        assert_eq!(ss.segments_sent, cs.segments_read, "{ms} ms");
        assert_eq!(cs.malformed + ss.malformed, 0);
        // Each sent segment costs padding + 8 octets: 8..=11 each.
        assert!(cs.overhead_sent >= 8 * cs.segments_sent);
        assert!(cs.overhead_sent <= 11 * cs.segments_sent);
        if !lossy {
            // On the wire every data segment starts a sent segment: padding up to a
            // multiple of 4 from the ISN, then the 0x0000 marker; 0x0000 appears at
            // no other aligned place (ZOMBI).
            let port = p.client.conn(c).unwrap().local().port();
            let segs = data_segments(&p, true, port);
            let iss = segs[0].0.wrapping_sub(1); // the first data byte is ISS + 1
            assert!(segs.len() > 200);
            for (seq, d) in &segs {
                let rel = seq.wrapping_sub(iss) as usize; // first data byte: 1
                let pad = 3 - (rel - 1) % 4;
                assert!(d[..pad].iter().all(|&b| b != 0));
                assert_eq!(&d[pad..pad + 2], &[0, 0], "marker at rel {rel}");
                for k in (pad + 2..d.len() - 1).step_by(2) {
                    if (rel + k).is_multiple_of(2) {
                        assert_ne!(&d[k..k + 2], &[0, 0], "stray 0x0000 at rel {}", rel + k);
                    }
                }
            }
        }
    }
}

#[test]
fn sent_segments_cut_by_tcp_are_rebuilt_by_the_reader() {
    // Writes made in SYN-SENT (after the SYN-U asked for framing) are framed at the
    // MSS the client assumes before the SYN/ACK-U (1460); the server's MSS is 600, so
    // TCP sends each sent segment in pieces: a resegmentation at the sender.
    let server = Config {
        mss: 600,
        ..server_cfg(true)
    };
    let mut p = Pair::with_configs(Duration::from_millis(5), Config::default(), server);
    let pair = p
        .client
        .connect_dual(p.now, Pair::server_addr(), data_client_cfg())
        .unwrap();
    p.advance(Duration::from_millis(1));
    let up = pattern(100_003, 9);
    let c = pair.upgraded;
    let early = p.client.conn_mut(c).unwrap().write(&up);
    assert!(early > 10_000, "written in SYN-SENT: {early}");
    p.advance(Duration::from_millis(200));
    let s = last_server_conn(&mut p);
    let (mut sent, mut all) = (early, Vec::new());
    for _ in 0..10_000 {
        sent += p.client.conn_mut(c).unwrap().write(&up[sent..]);
        p.advance(Duration::from_millis(5));
        Pair::read_all(&mut p.server, s, &mut all);
        if all.len() >= up.len() {
            break;
        }
    }
    assert_eq!(sha(&all), sha(&up));
    // Some data segments did not start with a marker: cut sent segments.
    let port = p.client.conn(c).unwrap().local().port();
    let segs = data_segments(&p, true, port);
    let iss = segs[0].0.wrapping_sub(1);
    let cut = segs
        .iter()
        .filter(|(seq, d)| {
            let rel = seq.wrapping_sub(iss) as usize;
            let pad = 3 - (rel - 1) % 4;
            d.len() < pad + 2 || d[pad..pad + 2] != [0, 0]
        })
        .count();
    assert!(cut > 20, "sent segments cut: {cut}");
    assert!(segs.iter().all(|(_, d)| d.len() <= 600));
    let ss = p.server.conn(s).unwrap().inspace_data_stats().unwrap();
    assert_eq!(ss.malformed, 0);
}

#[test]
fn mode_switch_disables_each_half_after_its_confirmation() {
    let (mut p, c, s) = upgraded_data_pair(Duration::from_millis(10), server_cfg(true));
    let up = pattern(300_000, 3);
    let down = pattern(200_000, 4);
    let (got_up, got_down) = exchange(&mut p, c, s, &up, &down, |p, round| {
        if round == 3 {
            assert!(p.client.conn_mut(c).unwrap().inspace_disable());
            assert!(
                !p.client.conn_mut(c).unwrap().inspace_disable(),
                "one request"
            );
        }
    });
    assert_eq!(sha(&got_up), sha(&up));
    assert_eq!(sha(&got_down), sha(&down));
    // The request, the confirmation and the re-echo (reading acts on them).
    let (mut more_up, mut more_down) = (Vec::new(), Vec::new());
    for _ in 0..100 {
        p.advance(Duration::from_millis(5));
        Pair::read_all(&mut p.server, s, &mut more_up);
        Pair::read_all(&mut p.client, c, &mut more_down);
    }
    assert!(more_up.is_empty() && more_down.is_empty(), "control only");
    let cs = p.client.conn(c).unwrap().inspace_data_stats().unwrap();
    let ss = p.server.conn(s).unwrap().inspace_data_stats().unwrap();
    // Request + re-echo from the client, the confirmation from the server.
    assert_eq!((cs.mode_switch_sent, ss.mode_switch_sent), (2, 1));
    assert_eq!((cs.mode_switch_read, ss.mode_switch_read), (1, 2));
    assert!(!cs.tx_on && !cs.rx_on && !ss.tx_on && !ss.rx_on);
    // Plain bytes both ways after the switch, zero runs included.
    let mut up2 = pattern(100_000, 5);
    up2[..4_000].fill(0);
    let down2 = pattern(80_001, 6);
    let (got_up, got_down) = exchange(&mut p, c, s, &up2, &down2, |_, _| {});
    assert_eq!(sha(&got_up), sha(&up2));
    assert_eq!(sha(&got_down), sha(&down2));
    let port = p.client.conn(c).unwrap().local().port();
    let segs = data_segments(&p, true, port);
    let (_, d) = segs.last().unwrap();
    assert_eq!(
        d,
        &up2[up2.len() - d.len()..],
        "plain bytes after the switch"
    );
    let cs2 = p.client.conn(c).unwrap().inspace_data_stats().unwrap();
    assert_eq!(
        cs2.segments_sent, cs.segments_sent,
        "no InSpace after I = 0"
    );
    assert!(
        !p.client.conn_mut(c).unwrap().inspace_disable(),
        "never again"
    );
}

#[test]
fn data_mode_against_a_legacy_or_plain_upgraded_server_stays_ordinary() {
    // Legacy server: the Ordinary connection survives, plain bytes.
    let mut p = Pair::with_configs(
        Duration::from_millis(10),
        Config::default(),
        server_cfg(false),
    );
    let pair = p
        .client
        .connect_dual(p.now, Pair::server_addr(), data_client_cfg())
        .unwrap();
    p.run_until(Duration::from_secs(5), |p| {
        p.client_events.iter().any(|(_, e)| *e == Event::Connected)
    });
    p.advance(Duration::from_millis(200));
    let c = pair.ordinary;
    assert!(p.client.conn(c).unwrap().inspace_data_stats().is_none());
    let s = last_server_conn(&mut p);
    let up = pattern(20_000, 5);
    let (got, _) = exchange(&mut p, c, s, &up, &[], |_, _| {});
    assert_eq!(got, up);
    // A client without `data` against an upgraded server: mode (iii), no framing.
    let mut p = Pair::with_configs(
        Duration::from_millis(10),
        Config::default(),
        server_cfg(true),
    );
    let o = dual(&mut p, DualVariant::Implicit);
    let c = o.winner.unwrap();
    assert_eq!(c, o.pair.upgraded);
    assert!(p.client.conn(c).unwrap().inspace_data_stats().is_none());
    let s = last_server_conn(&mut p);
    assert!(p.server.conn(s).unwrap().inspace_data_stats().is_none());
}
