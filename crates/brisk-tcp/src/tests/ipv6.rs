//! IPv6 and dual stack (endpoint module doc): connections over IPv6 carry the IPv6
//! pseudo-header checksum (RFC 8200 §8.1) and an MSS 20 bytes below the IPv4 one;
//! one listener of a dual-stack endpoint accepts both families, as a Linux socket
//! bound to `::` with `IPV6_V6ONLY=0`; IPv4-mapped peers are IPv4 peers, and
//! IPv4-mapped, multicast or unspecified sources on the wire are dropped unanswered.

use super::handshake::craft;
use super::harness::*;
use crate::config::Config;
use crate::endpoint::{ConnHandle, Endpoint, EndpointConfig};
use crate::event::{ConnError, Event};
use brisk_time::{Duration, Instant};
use brisk_wire::{emit_tcp_packet, parse_tcp_packet, Flags, IpRepr, Ipv6Repr, SeqNum, TcpRepr};
use brisk_wire::{Ecn, IPPROTO_TCP};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

const C4: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const S4: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const C6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1);
const S6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2);

fn cfg(seed: u64) -> EndpointConfig {
    EndpointConfig::seeded([seed as u8; 16], seed)
}

/// A pair whose client and server are both dual-stack, the server listening on `PORT`.
fn dual_pair() -> Pair {
    let mut p = Pair::new(Duration::from_millis(10));
    p.client = Endpoint::dual_stack(C4, C6, cfg(1));
    p.server = Endpoint::dual_stack(S4, S6, cfg(2));
    p.server.listen(PORT, 128, Config::default()).unwrap();
    p
}

fn connect_to(p: &mut Pair, ip: IpAddr) -> ConnHandle {
    let now = p.now;
    let h = p
        .client
        .connect(now, 0, SocketAddr::new(ip, PORT), Config::default())
        .expect("connect");
    p.drive();
    h
}

fn craft6(src: Ipv6Addr, dst: Ipv6Addr, tcp: &TcpRepr<'_>) -> Vec<u8> {
    let ip = IpRepr::V6(Ipv6Repr {
        src,
        dst,
        next_header: IPPROTO_TCP,
        dscp: 0,
        ecn: Ecn::NotEct,
        flow_label: 0,
        hop_limit: 64,
        payload_len: 0,
    });
    let mut out = Vec::new();
    emit_tcp_packet(&ip, tcp, &mut out);
    out
}

fn syn(dst_port: u16) -> TcpRepr<'static> {
    TcpRepr {
        src_port: 40_000,
        dst_port,
        seq: SeqNum(1000),
        flags: Flags::SYN,
        window: 65_535,
        mss: Some(1440),
        ..TcpRepr::default()
    }
}

/// The TCP checksum over the IPv6 pseudo-header (RFC 8200 §8.1), computed here
/// independently of the wire crate: it must come out as zero over a correct packet.
fn v6_checksum_residue(pkt: &[u8]) -> u16 {
    let seg = &pkt[40..];
    let mut sum: u32 = 0;
    let mut add = |b: &[u8]| {
        for c in b.chunks(2) {
            let w = u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]);
            sum += u32::from(w);
        }
    };
    add(&pkt[8..40]); // source and destination addresses
    add(&(seg.len() as u32).to_be_bytes());
    add(&[0, 0, 0, IPPROTO_TCP]);
    add(seg);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

fn transfer(p: &mut Pair, c: ConnHandle, s: ConnHandle, n: usize) -> Vec<u8> {
    let data: Vec<u8> = (0..n).map(|i| (i * 7 % 251) as u8).collect();
    let mut sent = 0;
    let mut got = Vec::new();
    for _ in 0..10_000 {
        if sent < n {
            sent += p.client.conn_mut(c).unwrap().write(&data[sent..]);
        }
        p.advance(Duration::from_millis(5));
        Pair::read_all(&mut p.server, s, &mut got);
        if got.len() >= n {
            break;
        }
    }
    assert_eq!(got, data, "bytes intact");
    got
}

#[test]
fn ipv6_connection_transfers_with_v6_headers_checksums_and_mss() {
    let mut p = dual_pair();
    let c = connect_to(&mut p, IpAddr::V6(S6));
    let s = p.server.accept(PORT).expect("accepted over IPv6");
    assert!(p.client_has(Event::Connected));
    let sc = p.server.conn(s).unwrap();
    assert_eq!(sc.local(), SocketAddr::new(IpAddr::V6(S6), PORT));
    assert_eq!(sc.remote().ip(), IpAddr::V6(C6));
    assert_eq!(p.client.conn(c).unwrap().local().ip(), IpAddr::V6(C6));
    transfer(&mut p, c, s, 200_000);

    let mut data_segments = 0;
    for (seen, bytes) in &p.log {
        assert_eq!(bytes[0] >> 4, 6, "every packet is IPv6");
        assert_eq!(bytes[7], 64, "hop limit");
        assert_eq!(v6_checksum_residue(bytes), 0, "pseudo-header checksum");
        let (ip, tcp) = parse_tcp_packet(bytes).unwrap();
        let (src, dst) = if seen.to_server { (C6, S6) } else { (S6, C6) };
        assert_eq!((ip.src(), ip.dst()), (IpAddr::V6(src), IpAddr::V6(dst)));
        if tcp.flags.syn() {
            // MTU 1500 − 40 (IPv6) − 20 (TCP), as Linux's IPv6 advmss.
            assert_eq!(tcp.mss, Some(1440));
        }
        if seen.to_server && seen.len > 0 {
            data_segments += 1;
            assert!(ip.header_len() + tcp.header_len() + seen.len <= 1500);
            assert!(seen.len <= 1440 - 12, "payload {} over MSS", seen.len);
        }
    }
    assert!(data_segments > 100);
    // The sender fills its segments: MSS less the 12-byte timestamp option.
    assert_eq!(p.client.conn(c).unwrap().info().mss, 1428);
}

#[test]
fn a_corrupted_ipv6_segment_fails_the_checksum() {
    let mut ep = Endpoint::new(IpAddr::V6(S6), cfg(2));
    ep.listen(PORT, 8, Config::default()).unwrap();
    let mut pkt = craft6(C6, S6, &syn(PORT));
    // The source address is covered only by the pseudo-header.
    pkt[23] ^= 1;
    ep.handle_packet(Instant::from_millis(1), &pkt);
    assert_eq!(ep.stats().drop_checksum, 1);
    assert_eq!(ep.connection_count(), 0);
}

#[test]
fn one_dual_stack_listener_accepts_both_families() {
    let mut p = dual_pair();
    let c4 = connect_to(&mut p, IpAddr::V4(S4));
    let c6 = connect_to(&mut p, IpAddr::V6(S6));
    let s4 = p.server.accept(PORT).expect("v4 accepted");
    let s6 = p.server.accept(PORT).expect("v6 accepted");
    let fam = |ep: &Endpoint, h| {
        let c = ep.conn(h).unwrap();
        (c.local().is_ipv6(), c.remote().is_ipv6())
    };
    assert_eq!(fam(&p.server, s4), (false, false));
    assert_eq!(fam(&p.server, s6), (true, true));
    assert_eq!(fam(&p.client, c4), (false, false));
    assert_eq!(fam(&p.client, c6), (true, true));
    assert_eq!(p.server.connection_count(), 2);
    transfer(&mut p, c4, s4, 30_000);
    transfer(&mut p, c6, s6, 30_000);
    // Both families' SYNs: 1460 over IPv4, 1440 over IPv6.
    let syn_mss: Vec<_> = p
        .log
        .iter()
        .filter(|(s, _)| s.to_server && s.flags.syn())
        .map(|(_, b)| (b[0] >> 4, parse_tcp_packet(b).unwrap().1.mss))
        .collect();
    assert_eq!(syn_mss, [(4, Some(1460)), (6, Some(1440))]);
}

#[test]
fn a_v4_mapped_peer_is_reached_over_ipv4() {
    let mut p = dual_pair();
    let mapped = IpAddr::V6(S4.to_ipv6_mapped());
    let c = connect_to(&mut p, mapped);
    assert!(p.client_has(Event::Connected));
    assert_eq!(
        p.client.conn(c).unwrap().remote(),
        SocketAddr::new(IpAddr::V4(S4), PORT)
    );
    assert!(p.log.iter().all(|(_, b)| b[0] >> 4 == 4));
    assert_eq!(
        p.client.local_addr_for(mapped),
        Some(IpAddr::V4(C4)),
        "mapped peers use the IPv4 address"
    );
}

/// Issue 29: martian sources (Linux `ip_route_input_slow`'s `martian_source`,
/// `ip6_rcv_core`) got SYN-ACKs. SYNs (and, to a closed port, what would draw an
/// RST) from loopback, from our own address, from multicast, broadcast, "this network"
/// and unspecified sources are dropped unanswered and counted as `drop_martian`; a
/// SYN from an ordinary peer still gets its SYN-ACK.
#[test]
fn martian_sources_are_dropped_and_counted() {
    let mut ep = Endpoint::dual_stack(S4, S6, cfg(2));
    ep.listen(PORT, 8, Config::default()).unwrap();
    let now = Instant::from_millis(1);
    let v4 = [
        Ipv4Addr::LOCALHOST,
        Ipv4Addr::new(127, 3, 2, 1),
        S4,
        Ipv4Addr::new(224, 0, 0, 1),
        Ipv4Addr::BROADCAST,
        Ipv4Addr::UNSPECIFIED,
        Ipv4Addr::new(0, 1, 2, 3),
    ];
    let v6 = [
        Ipv6Addr::LOCALHOST,
        S6,
        Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1),
    ];
    for src in v4 {
        ep.handle_packet(now, &craft(IpAddr::V4(src), IpAddr::V4(S4), &syn(PORT)));
        ep.handle_packet(now, &craft(IpAddr::V4(src), IpAddr::V4(S4), &syn(PORT + 1)));
    }
    for src in v6 {
        ep.handle_packet(now, &craft6(src, S6, &syn(PORT)));
        ep.handle_packet(now, &craft6(src, S6, &syn(PORT + 1)));
    }
    let mut buf = Vec::new();
    assert!(
        ep.poll_transmit(now, &mut buf).is_none(),
        "a martian was answered"
    );
    assert_eq!(ep.connection_count(), 0);
    let st = ep.stats();
    assert_eq!(st.drop_martian, 2 * (v4.len() + v6.len()) as u64, "{st:?}");
    assert_eq!(
        st.drop_no_socket + st.drop_parse + st.drop_not_local,
        0,
        "{st:?}"
    );
    // An ordinary peer is still answered.
    ep.handle_packet(now, &craft(IpAddr::V4(C4), IpAddr::V4(S4), &syn(PORT)));
    ep.handle_packet(now, &craft6(C6, S6, &syn(PORT)));
    let mut answered = 0;
    while ep.poll_transmit(now, &mut buf).is_some() {
        answered += 1;
    }
    assert_eq!(answered, 2, "SYN-ACKs to real peers");
}

/// On a loopback device loopback sources are ordinary (Linux accepts them from
/// `lo`): an endpoint whose own address is loopback answers them, its own address
/// included (a client on the same host).
#[test]
fn loopback_endpoints_accept_loopback_peers() {
    for (local, peer) in [
        (
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V4(Ipv4Addr::LOCALHOST),
        ),
        (
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)),
        ),
        (
            IpAddr::V6(Ipv6Addr::LOCALHOST),
            IpAddr::V6(Ipv6Addr::LOCALHOST),
        ),
    ] {
        let mut ep = Endpoint::new(local, cfg(3));
        ep.listen(PORT, 8, Config::default()).unwrap();
        let now = Instant::from_millis(1);
        let pkt = match (peer, local) {
            (IpAddr::V6(p), IpAddr::V6(l)) => craft6(p, l, &syn(PORT)),
            _ => craft(peer, local, &syn(PORT)),
        };
        ep.handle_packet(now, &pkt);
        let mut buf = Vec::new();
        assert!(
            ep.poll_transmit(now, &mut buf).is_some(),
            "{peer} -> {local}"
        );
        assert_eq!(ep.stats().drop_martian, 0);
    }
}

#[test]
fn unusable_ipv6_sources_are_dropped_unanswered() {
    let mut ep = Endpoint::dual_stack(S4, S6, cfg(2));
    ep.listen(PORT, 8, Config::default()).unwrap();
    let now = Instant::from_millis(1);
    let bad = [
        C4.to_ipv6_mapped(),
        Ipv6Addr::UNSPECIFIED,
        Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1),
    ];
    for src in bad {
        // To the listener (would draw a SYN-ACK) and to a closed port (an RST).
        ep.handle_packet(now, &craft6(src, S6, &syn(PORT)));
        ep.handle_packet(now, &craft6(src, S6, &syn(PORT + 1)));
    }
    // An IPv4-mapped destination is not our IPv4 address.
    ep.handle_packet(now, &craft6(C6, S4.to_ipv6_mapped(), &syn(PORT)));
    let mut buf = Vec::new();
    assert!(
        ep.poll_transmit(now, &mut buf).is_none(),
        "nothing answered"
    );
    assert_eq!(ep.connection_count(), 0);
    assert_eq!(ep.stats().drop_martian, 6);
    assert_eq!(ep.stats().drop_not_local, 1);
}

#[test]
fn a_closed_ipv6_port_answers_with_an_ipv6_rst() {
    let mut ep = Endpoint::dual_stack(S4, S6, cfg(2));
    let now = Instant::from_millis(1);
    ep.handle_packet(now, &craft6(C6, S6, &syn(81)));
    let mut buf = Vec::new();
    ep.poll_transmit(now, &mut buf).expect("an RST");
    let (ip, tcp) = parse_tcp_packet(&buf).unwrap();
    assert_eq!((ip.src(), ip.dst()), (IpAddr::V6(S6), IpAddr::V6(C6)));
    assert!(tcp.flags.rst() && tcp.flags.ack());
    assert_eq!(tcp.ack, SeqNum(1001));
    assert_eq!(ep.stats().rst_sent, 1);
}

#[test]
fn a_single_family_endpoint_refuses_the_other() {
    let now = Instant::from_millis(1);
    let mut v4 = Endpoint::new(IpAddr::V4(S4), cfg(2));
    let to6 = SocketAddr::new(IpAddr::V6(C6), PORT);
    assert_eq!(
        v4.connect(now, 0, to6, Config::default()),
        Err(ConnError::Unsupported)
    );
    v4.listen(PORT, 8, Config::default()).unwrap();
    v4.handle_packet(now, &craft6(C6, S6, &syn(PORT)));
    assert_eq!(v4.stats().drop_not_local, 1);

    let mut v6 = Endpoint::new(IpAddr::V6(S6), cfg(3));
    let to4 = SocketAddr::new(IpAddr::V4(C4), PORT);
    assert_eq!(
        v6.connect(now, 0, to4, Config::default()),
        Err(ConnError::Unsupported)
    );
    v6.listen(PORT, 8, Config::default()).unwrap();
    v6.handle_packet(now, &craft(IpAddr::V4(C4), IpAddr::V4(S4), &syn(PORT)));
    assert_eq!(v6.stats().drop_not_local, 1);
    // Multicast peers are refused locally.
    let mcast = SocketAddr::new(IpAddr::V6(Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1)), 80);
    assert_eq!(
        v6.connect(now, 0, mcast, Config::default()),
        Err(ConnError::Unsupported)
    );
}

/// RFC 6528 over IPv6: the ISN depends on the full 128-bit addresses, so two peers
/// that differ only in their low bits get unrelated ISNs.
#[test]
fn ipv6_isns_depend_on_the_whole_address() {
    use crate::conn::isn::initial_seq;
    let l = SocketAddr::new(IpAddr::V6(S6), 80);
    let r1 = SocketAddr::new(IpAddr::V6(C6), 40_000);
    let r2 = SocketAddr::new(
        IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb9, 0, 0, 0, 0, 0, 1)),
        40_000,
    );
    let k = [9u8; 16];
    assert_ne!(
        initial_seq(Instant::ZERO, l, r1, &k),
        initial_seq(Instant::ZERO, l, r2, &k)
    );
}

/// SYN cookies on a dual-stack listener: with the SYN queue full (one spoofed IPv4
/// half-open entry), an IPv6 client gets a cookie SYN-ACK from the endpoint's IPv6
/// address, and its ACK validates against that address, so the connection opens and
/// carries data. (The cookie is keyed on the 4-tuple: the wrong family's local
/// address would make every IPv6 cookie fail.)
#[test]
fn syn_cookies_work_over_ipv6_on_a_dual_stack_listener() {
    let mut p = Pair::new(Duration::from_millis(10));
    p.client = Endpoint::dual_stack(C4, C6, cfg(1));
    p.server = Endpoint::dual_stack(S4, S6, cfg(2));
    p.server.listen(PORT, 1, Config::default()).unwrap();
    let spoofed = TcpRepr {
        src_port: 4000,
        dst_port: PORT,
        seq: SeqNum(77),
        flags: Flags::SYN,
        window: 1000,
        mss: Some(1460),
        ..TcpRepr::default()
    };
    let now = p.now;
    p.server.handle_packet(
        now,
        &craft(
            IpAddr::V4(Ipv4Addr::new(198, 19, 0, 9)),
            IpAddr::V4(S4),
            &spoofed,
        ),
    );
    let mut buf = Vec::new();
    while p.server.poll_transmit(now, &mut buf).is_some() {}
    assert_eq!(p.server.connection_count(), 1, "the SYN queue is full");
    let c = connect_to(&mut p, IpAddr::V6(S6));
    let st = p.server.stats();
    assert_eq!(
        (
            st.syncookies_sent,
            st.syncookies_validated,
            st.syncookies_failed
        ),
        (1, 1, 0)
    );
    let s = p.server.accept(PORT).expect("cookie connection accepted");
    assert!(p.server.conn(s).unwrap().local().is_ipv6());
    transfer(&mut p, c, s, 20_000);
}
