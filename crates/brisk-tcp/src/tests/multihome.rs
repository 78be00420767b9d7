//! A multi-homed endpoint (`Endpoint::add_address`): several local addresses, bounded;
//! packets to any of them are ours, packets from any of them are martian; a connection
//! opened from a second address (`connect_from`) carries that address in every packet
//! and delivers its bytes intact.

use super::harness::*;
use crate::config::Config;
use crate::endpoint::{AddressError, Endpoint, EndpointConfig, MAX_ADDRESSES};
use crate::event::ConnError;
use brisk_time::Duration;
use brisk_wire::parse_tcp_packet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

const C4: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const C4B: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
const S4: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

fn cfg(seed: u64) -> EndpointConfig {
    EndpointConfig::seeded([seed as u8; 16], seed)
}

#[test]
fn addresses_are_bounded_unique_and_usable() {
    let mut e = Endpoint::new(IpAddr::V4(C4), cfg(1));
    assert_eq!(e.local_addrs(), vec![IpAddr::V4(C4)]);
    assert_eq!(
        e.add_address(IpAddr::V4(C4)),
        Err(AddressError::Duplicate(IpAddr::V4(C4)))
    );
    for bad in ["0.0.0.0", "127.0.0.1", "224.0.0.1", "255.255.255.255", "::"] {
        let ip: IpAddr = bad.parse().unwrap();
        assert!(
            matches!(e.add_address(ip), Err(AddressError::Unusable(_))),
            "{bad}"
        );
    }
    // A first IPv6 address becomes the family's first: what local_addr_for gives.
    let v6 = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 9));
    e.add_address(v6).unwrap();
    assert_eq!(e.local_addr_for(v6), Some(v6));
    for i in 2..MAX_ADDRESSES {
        e.add_address(IpAddr::V4(Ipv4Addr::new(10, 0, i as u8, 1)))
            .unwrap();
    }
    assert_eq!(e.local_addrs().len(), MAX_ADDRESSES);
    let err = e
        .add_address(IpAddr::V4(Ipv4Addr::new(10, 9, 9, 9)))
        .unwrap_err();
    assert_eq!(err, AddressError::TooMany { max: MAX_ADDRESSES });
    assert!(err.to_string().contains("at most 8"), "{err}");
    // The first of the family keeps its meaning.
    assert_eq!(
        e.local_addr_for(IpAddr::V4(S4)),
        Some(IpAddr::V4(C4)),
        "local_addr_for is the first IPv4 address"
    );
    assert_eq!(e.local_addrs()[0], IpAddr::V4(C4));
}

#[test]
fn a_connection_from_the_second_address_uses_it_and_delivers_intact() {
    let mut p = Pair::new(Duration::from_millis(10));
    p.client = Endpoint::new(IpAddr::V4(C4), cfg(1));
    p.client.add_address(IpAddr::V4(C4B)).unwrap();
    p.server = Endpoint::new(IpAddr::V4(S4), cfg(2));
    p.server.listen(PORT, 16, Config::default()).unwrap();
    let remote = SocketAddr::new(IpAddr::V4(S4), PORT);
    let now = p.now;
    // An address that is not ours, or of the other family, is refused.
    let not_ours = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 7, 7, 7)), 0);
    assert_eq!(
        p.client
            .connect_from(now, not_ours, remote, Arc::new(Config::default()))
            .unwrap_err(),
        ConnError::Unsupported
    );
    let from = SocketAddr::new(IpAddr::V4(C4B), 0);
    let c = p
        .client
        .connect_from(now, from, remote, Arc::new(Config::default()))
        .unwrap();
    p.drive();
    let s = p.server.accept(PORT).expect("accepted");
    assert_eq!(p.server.conn(s).unwrap().remote().ip(), IpAddr::V4(C4B));
    assert_eq!(p.client.conn(c).unwrap().local().ip(), IpAddr::V4(C4B));
    let n = 300_000;
    let data: Vec<u8> = (0..n).map(|i| (i * 13 % 251) as u8).collect();
    let (mut sent, mut got) = (0, Vec::new());
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
    for (seen, bytes) in &p.log {
        let (ip, _) = parse_tcp_packet(bytes).unwrap();
        let (src, dst) = if seen.to_server { (C4B, S4) } else { (S4, C4B) };
        assert_eq!((ip.src(), ip.dst()), (IpAddr::V4(src), IpAddr::V4(dst)));
    }
}

#[test]
fn packets_from_any_own_address_are_martian() {
    // A SYN whose source is the server's second address is dropped unanswered.
    let mut p = Pair::new(Duration::from_millis(10));
    p.server = Endpoint::new(IpAddr::V4(S4), cfg(2));
    let second = Ipv4Addr::new(10, 0, 5, 2);
    p.server.add_address(IpAddr::V4(second)).unwrap();
    p.server.listen(PORT, 16, Config::default()).unwrap();
    p.client = Endpoint::new(IpAddr::V4(second), cfg(1));
    let now = p.now;
    p.client
        .connect(
            now,
            0,
            SocketAddr::new(IpAddr::V4(S4), PORT),
            Config::default(),
        )
        .unwrap();
    p.drive();
    assert!(p.server.accept(PORT).is_none());
    assert!(p.server.stats().drop_martian >= 1, "the drop is counted");
    assert!(p.seen(false).is_empty(), "never answered");
}

/// A connection to the server's second address is answered from that address: the
/// SYN-ACK (from the listener and from a SYN cookie), every later segment and a RST
/// for a closed port (Linux's request sock takes `ir_loc_addr` from the SYN's
/// destination). Before, the listener answered from its first address, and the
/// client's SYN-ACK never matched its connection.
#[test]
fn a_connection_to_the_second_address_is_answered_from_it() {
    const S4B: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 2);
    for cookies in [false, true] {
        let mut p = Pair::new(Duration::from_millis(10));
        p.client = Endpoint::new(IpAddr::V4(C4), cfg(3));
        p.server = Endpoint::new(IpAddr::V4(S4), cfg(4));
        p.server.add_address(IpAddr::V4(S4B)).unwrap();
        p.server.set_syncookies(true, cookies);
        p.server.listen(PORT, 16, Config::default()).unwrap();
        let remote = SocketAddr::new(IpAddr::V4(S4B), PORT);
        let c = p
            .client
            .connect(p.now, 0, remote, Config::default())
            .unwrap();
        p.drive();
        let s = p.server.accept(PORT).expect("accepted");
        assert_eq!(p.server.conn(s).unwrap().local().ip(), IpAddr::V4(S4B));
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 253) as u8).collect();
        let (mut sent, mut got) = (0, Vec::new());
        for _ in 0..10_000 {
            if sent < data.len() {
                sent += p.client.conn_mut(c).unwrap().write(&data[sent..]);
            }
            p.advance(Duration::from_millis(5));
            Pair::read_all(&mut p.server, s, &mut got);
            if got.len() >= data.len() {
                break;
            }
        }
        assert_eq!(got, data, "bytes intact (cookies {cookies})");
        // A SYN to a closed port of the second address: the RST leaves from it too.
        p.client
            .connect(
                p.now,
                0,
                SocketAddr::new(IpAddr::V4(S4B), PORT + 1),
                Config::default(),
            )
            .unwrap();
        p.drive();
        let from_server = p.seen(false);
        assert!(from_server.iter().any(|s| s.flags.rst()), "a RST was sent");
        for (seen, bytes) in &p.log {
            if seen.to_server {
                continue;
            }
            let (ip, _) = parse_tcp_packet(bytes).unwrap();
            assert_eq!(ip.src(), IpAddr::V4(S4B), "cookies {cookies}: {seen:?}");
        }
        if cookies {
            assert!(p.server.stats().syncookies_sent >= 1);
        }
    }
}
