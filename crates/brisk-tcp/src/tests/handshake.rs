use super::harness::*;
use crate::config::Config;
use crate::conn::State;
use crate::endpoint::{Endpoint, EndpointConfig};
use crate::event::{ConnError, Event};
use brisk_time::{Duration, Instant};
use brisk_wire::{
    emit_tcp_packet, Flags, IpRepr, Ipv4Repr, SeqNum, TcpRepr, Timestamps, WindowScale, IPPROTO_TCP,
};
use std::net::{IpAddr, SocketAddr};

pub fn craft(src: IpAddr, dst: IpAddr, tcp: &TcpRepr<'_>) -> Vec<u8> {
    let (IpAddr::V4(s), IpAddr::V4(d)) = (src, dst) else {
        unreachable!()
    };
    let ip = IpRepr::V4(Ipv4Repr {
        src: s,
        dst: d,
        protocol: IPPROTO_TCP,
        dscp: 0,
        ecn: brisk_wire::Ecn::NotEct,
        ttl: 64,
        ident: 0,
        dont_frag: true,
        payload_len: 0,
    });
    let mut out = Vec::new();
    emit_tcp_packet(&ip, tcp, &mut out);
    out
}

#[test]
fn three_way_handshake_negotiates_mss_wscale_sack_and_timestamps() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    assert!(p.client_has(Event::Connected));
    assert!(p.server_has(Event::Incoming { port: PORT }));

    let syn = p.logged_repr(0);
    assert_eq!(syn.flags, Flags::SYN);
    assert_eq!(syn.mss, Some(1460));
    assert_eq!(syn.window_scale, WindowScale::new(7)); // 6 MiB buffer >> 7 fits in 16 bits
    assert!(syn.sack_permitted);
    let syn_ts = syn.timestamps.expect("TS on SYN");
    assert_eq!(syn_ts.tsecr, 0);
    let (iss, syn_win) = (syn.seq, syn.window);
    assert_eq!(syn_win, 65_535);

    let synack = p.logged_repr(1);
    assert_eq!(synack.flags, Flags::SYN | Flags::ACK);
    assert_eq!(synack.ack, iss + 1);
    assert_eq!(synack.mss, Some(1460));
    assert_eq!(synack.window_scale, WindowScale::new(7));
    assert!(synack.sack_permitted);
    assert_eq!(synack.timestamps.unwrap().tsecr, syn_ts.tsval);
    let irs = synack.seq;

    let ack = p.logged_repr(2);
    assert_eq!(ack.flags, Flags::ACK);
    assert_eq!((ack.seq, ack.ack), (iss + 1, irs + 1));
    assert_eq!(ack.mss, None);
    assert_eq!(p.log.len(), 3);

    for (ep, h) in [(&p.client, c), (&p.server, s)] {
        let conn = ep.conn(h).unwrap();
        assert_eq!(conn.state(), State::Established);
        assert_eq!(conn.mss(), 1448);
        let info = conn.info();
        assert!(info.srtt >= Duration::from_millis(19), "{:?}", info.srtt);
    }
}

#[test]
fn handshake_without_options_falls_back() {
    let cfg = {
        let mut c = Config::default();
        c.options.sack = false;
        c.options.timestamps = false;
        c.options.window_scaling = false;
        c
    };
    let mut p = Pair::with_configs(Duration::from_millis(5), cfg, Config::default());
    let (c, s) = p.establish();
    let synack = p.logged_repr(1);
    assert_eq!(synack.window_scale, None);
    assert!(!synack.sack_permitted);
    assert_eq!(synack.timestamps, None);
    assert_eq!(p.client.conn(c).unwrap().mss(), 1460);
    assert_eq!(p.server.conn(s).unwrap().mss(), 1460);
}

#[test]
fn simultaneous_open_reaches_established_on_both_sides() {
    let mut p = Pair::new(Duration::from_millis(10));
    let now = p.now;
    let a = p
        .client
        .connect(
            now,
            5000,
            SocketAddr::new(SERVER_IP, 6000),
            Config::default(),
        )
        .unwrap();
    let b = p
        .server
        .connect(
            now,
            6000,
            SocketAddr::new(CLIENT_IP, 5000),
            Config::default(),
        )
        .unwrap();
    p.drive();
    assert_eq!(p.client.conn(a).unwrap().state(), State::Established);
    assert_eq!(p.server.conn(b).unwrap().state(), State::Established);
    assert!(p.client_has(Event::Connected) && p.server_has(Event::Connected));
    let synacks = p
        .log
        .iter()
        .filter(|(s, _)| s.flags == Flags::SYN | Flags::ACK)
        .count();
    assert_eq!(synacks, 2);
    let syns = p.log.iter().filter(|(s, _)| s.flags == Flags::SYN).count();
    assert_eq!(syns, 2);
}

#[test]
fn syn_to_closed_port_gets_rst_ack_and_refuses_connect() {
    let mut p = Pair::new(Duration::from_millis(5));
    let h = p
        .client
        .connect(p.now, 0, SocketAddr::new(SERVER_IP, 81), Config::default())
        .unwrap();
    p.drive();
    let syn = p.seen(true)[0];
    let rst = p.seen(false)[0];
    assert_eq!(rst.flags, Flags::RST | Flags::ACK);
    assert_eq!(rst.seq, SeqNum(0));
    assert_eq!(rst.ack, syn.seq + 1);
    assert!(p
        .client_events
        .contains(&(h, Event::Closed(Err(ConnError::Refused)))));
    assert_eq!(p.server.stats().drop_no_socket, 1);
    assert_eq!(p.server.stats().rst_sent, 1);
}

#[test]
fn ack_to_no_socket_gets_rst_with_seq_from_ack_and_rst_is_never_answered() {
    let mut ep = Endpoint::new(SERVER_IP, EndpointConfig::seeded([7; 16], 7));
    let mut out = Vec::new();
    let ack = TcpRepr {
        src_port: 1234,
        dst_port: 99,
        seq: SeqNum(100),
        ack: SeqNum(5555),
        flags: Flags::ACK,
        payload: b"hello",
        ..TcpRepr::default()
    };
    ep.handle_packet(Instant::ZERO, &craft(CLIENT_IP, SERVER_IP, &ack));
    let _ = ep.poll_transmit(Instant::ZERO, &mut out).unwrap();
    let (_, rst) = brisk_wire::parse_tcp_packet(&out).unwrap();
    assert_eq!(rst.flags, Flags::RST);
    assert_eq!(rst.seq, SeqNum(5555));
    let rst_in = TcpRepr {
        flags: Flags::RST,
        ..ack
    };
    ep.handle_packet(Instant::ZERO, &craft(CLIENT_IP, SERVER_IP, &rst_in));
    assert!(ep.poll_transmit(Instant::ZERO, &mut out).is_none());
}

/// A client's SYN to port 80.
fn syn_to_port_80() -> TcpRepr<'static> {
    TcpRepr {
        src_port: 1234,
        dst_port: 80,
        seq: SeqNum(1),
        flags: Flags::SYN,
        ..TcpRepr::default()
    }
}

#[test]
fn corrupted_packets_are_counted_not_processed() {
    let mut ep = Endpoint::new(SERVER_IP, EndpointConfig::seeded([7; 16], 7));
    let syn = syn_to_port_80();
    let mut bytes = craft(CLIENT_IP, SERVER_IP, &syn);
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    ep.handle_packet(Instant::ZERO, &bytes);
    ep.handle_packet(Instant::ZERO, &bytes[..10]);
    assert_eq!(ep.stats().drop_checksum, 1);
    assert_eq!(ep.stats().drop_parse, 1);
    let mut out = Vec::new();
    assert!(ep.poll_transmit(Instant::ZERO, &mut out).is_none());
}

/// `handle_packet_trusted` (for packets whose TCP checksum the path vouches for, as
/// Linux's `CHECKSUM_UNNECESSARY`) skips only the TCP checksum: a bad IPv4 header
/// checksum is still a checksum drop, and `handle_packet` still drops a bad TCP one.
#[test]
fn the_trusted_path_skips_only_the_tcp_checksum() {
    let syn = syn_to_port_80();
    let good = craft(CLIENT_IP, SERVER_IP, &syn);
    let mut bad_tcp = good.clone();
    bad_tcp[20 + 16] ^= 0x01; // the TCP checksum field (IPv4 header of 20 bytes)
    let mut bad_ip = good.clone();
    bad_ip[10] ^= 0x01; // the IPv4 header checksum field
    let mut ep = Endpoint::new(SERVER_IP, EndpointConfig::seeded([7; 16], 7));
    let mut out = Vec::new();

    ep.handle_packet(Instant::ZERO, &bad_tcp);
    assert_eq!(ep.stats().drop_checksum, 1, "verified: bad TCP checksum");
    ep.handle_packet_trusted(Instant::ZERO, &bad_ip);
    assert_eq!(ep.stats().drop_checksum, 2, "trusted: bad IP checksum");
    ep.handle_packet(Instant::ZERO, &bad_ip);
    assert_eq!(ep.stats().drop_checksum, 3, "verified: bad IP checksum");
    assert!(ep.poll_transmit(Instant::ZERO, &mut out).is_none());
    assert_eq!(ep.stats().drop_no_socket, 0);

    // Trusted, the TCP checksum is not read: the segment is processed (no listener
    // on port 80, so it is answered with a RST), as the good one is either way.
    ep.handle_packet_trusted(Instant::ZERO, &bad_tcp);
    assert_eq!(ep.stats().drop_checksum, 3);
    assert_eq!(ep.stats().drop_no_socket, 1);
    assert!(ep.poll_transmit(Instant::ZERO, &mut out).is_some());
    ep.handle_packet_trusted(Instant::ZERO, &good);
    ep.handle_packet(Instant::ZERO, &good);
    assert_eq!(ep.stats().drop_no_socket, 3);
    assert_eq!(ep.stats().drop_checksum, 3);
}

/// Builds a segment from the client's 4-tuple using the last client packet's numbers.
pub fn from_client(p: &Pair, flags: Flags, seq_off: i32, payload: &'static [u8]) -> Vec<u8> {
    let last = *p.seen(true).last().unwrap();
    let repr = p
        .log
        .iter()
        .rev()
        .find(|(s, _)| s.to_server)
        .map(|(_, b)| b.clone())
        .unwrap();
    let (_, t) = brisk_wire::parse_tcp_packet(&repr).unwrap();
    let tcp = TcpRepr {
        src_port: t.src_port,
        dst_port: t.dst_port,
        seq: SeqNum(last.seq.0.wrapping_add(seq_off as u32)),
        ack: last.ack,
        flags,
        window: 1000,
        timestamps: t.timestamps.map(|ts| Timestamps {
            tsval: ts.tsval.wrapping_add(1),
            tsecr: ts.tsecr,
        }),
        payload,
        ..TcpRepr::default()
    };
    craft(CLIENT_IP, SERVER_IP, &tcp)
}

#[test]
fn in_window_rst_and_syn_get_challenge_acks_and_exact_rst_resets() {
    let mut p = Pair::new(Duration::from_millis(5));
    let (c, s) = p.establish();
    let before = p.seen(false).len();
    let rst = from_client(&p, Flags::RST, 100, b"");
    p.inject(true, rst);
    p.drive();
    assert_eq!(p.server.conn(s).unwrap().state(), State::Established);
    // Challenge ACKs share the per-connection 500 ms out-of-window limit (Linux
    // `tcp_send_challenge_ack`), so the second challenge comes after it.
    p.advance(Duration::from_millis(500));
    let syn = from_client(&p, Flags::SYN, 0, b"");
    p.inject(true, syn);
    p.drive();
    assert_eq!(p.server.conn(s).unwrap().state(), State::Established);
    assert_eq!(p.server.stats().challenge_acks, 2);
    let replies: Vec<_> = p.seen(false)[before..].to_vec();
    assert!(replies.len() >= 2);
    assert!(replies.iter().all(|r| r.flags == Flags::ACK && r.len == 0));
    // The client answered nothing harmful and is still connected.
    assert_eq!(p.client.conn(c).unwrap().state(), State::Established);

    let exact = from_client(&p, Flags::RST, 0, b"");
    p.inject(true, exact);
    p.drive();
    assert!(p
        .server_events
        .contains(&(s, Event::Closed(Err(ConnError::Reset)))));
}

#[test]
fn challenge_acks_are_rate_limited() {
    // The RFC 5961 §7 count alone: without the 500 ms out-of-window limit that
    // precedes it (Linux `tcp_send_challenge_ack`), which would let only one through.
    let cfg = Config {
        challenge_ack_limit: 3,
        invalid_ratelimit: Duration::ZERO,
        ..Config::default()
    };
    let mut p = Pair::with_configs(Duration::from_millis(5), Config::default(), cfg);
    let (_c, s) = p.establish();
    for i in 0..10 {
        let rst = from_client(&p, Flags::RST, 10 + i, b"");
        p.inject(true, rst);
    }
    p.drive();
    let conn = p.server.conn(s).unwrap();
    assert_eq!(conn.counters().challenge_acks, 3);
    assert_eq!(conn.counters().challenge_acks_suppressed, 7);
}

#[test]
fn ack_for_unsent_data_is_not_accepted() {
    let mut p = Pair::new(Duration::from_millis(5));
    let (_c, s) = p.establish();
    let last = *p.seen(true).last().unwrap();
    let bytes = p
        .log
        .iter()
        .rev()
        .find(|(s, _)| s.to_server)
        .map(|(_, b)| b.clone())
        .unwrap();
    let (_, t) = brisk_wire::parse_tcp_packet(&bytes).unwrap();
    let bogus = TcpRepr {
        ack: last.ack + 1_000_000,
        ..t
    };
    p.inject(true, craft(CLIENT_IP, SERVER_IP, &bogus));
    p.drive();
    let conn = p.server.conn(s).unwrap();
    assert_eq!(conn.counters().bad_acks, 1);
    assert_eq!(conn.state(), State::Established);
    assert_eq!(conn.info().bytes_acked, 0);
}
