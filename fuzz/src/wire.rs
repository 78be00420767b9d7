//! Target `wire`: brisk-wire's parsers on arbitrary bytes.
//!
//! The first byte picks how the rest is read:
//! - 0: a whole IP packet, checksums as they are (what the endpoint sees);
//! - 1: a bare TCP segment without checksum check (reaches the option parser, which
//!   random checksums would otherwise hide), carried over a fixed IPv4 or IPv6 header;
//! - 2: a whole IP packet whose IPv4 header checksum and TCP checksum are fixed up
//!   first, so mutations of any field reach the parser (and the fixed sums must verify).
//!
//! Whatever parses must re-emit and re-parse to the same representation, except for
//! what the crate documents: SACK blocks beyond the 40-byte option space (after Linux's
//! alignment) are left out, and extra options that do not fit beside the standard ones.
//! Emitting the re-parsed representation must give the same bytes again (a fixpoint).

use brisk_wire::checksum::Accumulator;
use brisk_wire::{
    emit_tcp_packet, mark_ce, parse_tcp_packet, peek_dscp, peek_ecn, Ecn, Flags, IpRepr, Ipv4Repr,
    Ipv6Repr, ParseError, SackBlock, SackBlocks, SeqNum, TcpRepr, Timestamps, WindowScale,
    IPPROTO_TCP, MAX_OPTIONS_LEN,
};
use std::net::{Ipv4Addr, Ipv6Addr};

pub fn wire(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    peeks(rest);
    match mode % 3 {
        0 => {
            if let Ok((ip, tcp)) = parse_tcp_packet(rest) {
                round_trip(&ip, &tcp);
            }
        }
        1 => {
            let ip = if mode & 0x80 != 0 { v6() } else { v4() };
            if let Ok(tcp) = TcpRepr::parse(rest, None) {
                round_trip(&ip, &tcp);
            }
        }
        _ => {
            let mut buf = rest.to_vec();
            if !fix_checksums(&mut buf) {
                return;
            }
            match parse_tcp_packet(&buf) {
                Ok((ip, tcp)) => round_trip(&ip, &tcp),
                Err(e @ (ParseError::BadChecksum | ParseError::BadIpChecksum)) => {
                    panic!("checksums fixed up by the harness do not verify: {e:?}")
                }
                Err(_) => {}
            }
        }
    }
}

/// The peeks and `mark_ce` work on any bytes; a packet marked CE stays valid and
/// keeps its TCP content.
fn peeks(buf: &[u8]) {
    let _ = peek_dscp(buf);
    let ecn = peek_ecn(buf);
    let mut marked = buf.to_vec();
    let did = mark_ce(&mut marked);
    assert_eq!(did, ecn.is_some_and(|e| e.is_ect()), "mark_ce vs peek_ecn");
    if let Ok((ip, tcp)) = parse_tcp_packet(buf) {
        let (mip, mtcp) = parse_tcp_packet(&marked).expect("a CE-marked packet still parses");
        assert_eq!(mtcp, tcp);
        assert_eq!(mip.dscp(), ip.dscp());
        if did {
            assert_eq!(mip.ecn(), Ecn::Ce);
        }
    }
}

/// Checks `parse(emit(x)) == x` (bar documented truncation) and that emit is a fixpoint.
pub(crate) fn round_trip(ip: &IpRepr, tcp: &TcpRepr<'_>) {
    if tcp.header_len() + tcp.payload.len() > ip.max_payload_len() {
        return; // cannot be one IP packet (only reachable through mode 1)
    }
    assert!(tcp.options_len() <= MAX_OPTIONS_LEN);
    assert_eq!(tcp.options_len() % 4, 0);
    let mut out = Vec::new();
    emit_tcp_packet(ip, tcp, &mut out);
    let (ip2, tcp2) = parse_tcp_packet(&out).expect("an emitted packet parses");
    let mut want_ip = *ip;
    want_ip.set_payload_len(tcp.header_len() + tcp.payload.len());
    want_ip.set_protocol(IPPROTO_TCP);
    assert_eq!(ip2, want_ip, "IP header round trip");
    let mut want = *tcp;
    want.sack.truncate(tcp.sack_blocks_emitted());
    if tcp2.extra.is_empty() {
        want.extra = tcp2.extra; // extras that did not fit are left out, as documented
    }
    assert_eq!(tcp2, want, "TCP round trip");
    let mut again = Vec::new();
    emit_tcp_packet(&ip2, &tcp2, &mut again);
    assert_eq!(again, out, "emit is not a fixpoint");
}

/// Rewrites the IPv4 header checksum and the TCP checksum in place. False if `buf` is
/// not long enough to hold them.
pub(crate) fn fix_checksums(buf: &mut [u8]) -> bool {
    let Some(&first) = buf.first() else {
        return false;
    };
    let ip_len = match first >> 4 {
        4 => {
            let ihl = usize::from(first & 0x0f) * 4;
            if ihl < 20 || buf.len() < ihl {
                return false;
            }
            buf[10] = 0;
            buf[11] = 0;
            let mut acc = Accumulator::new();
            acc.add_bytes(&buf[..ihl]);
            let sum = acc.checksum().to_be_bytes();
            buf[10..12].copy_from_slice(&sum);
            ihl
        }
        6 => 40,
        _ => return false,
    };
    let Ok((ip, seg)) = IpRepr::parse(buf) else {
        return false;
    };
    let seg_len = seg.len();
    if seg_len < 18 || ip.protocol() != IPPROTO_TCP {
        return false;
    }
    let seg = &mut buf[ip_len..ip_len + seg_len];
    seg[16] = 0;
    seg[17] = 0;
    let mut acc = ip.pseudo_header(IPPROTO_TCP, seg_len);
    acc.add_bytes(seg);
    let sum = acc.checksum().to_be_bytes();
    seg[16..18].copy_from_slice(&sum);
    true
}

fn v4() -> IpRepr {
    IpRepr::V4(Ipv4Repr {
        src: Ipv4Addr::new(10, 0, 0, 2),
        dst: Ipv4Addr::new(10, 0, 0, 1),
        protocol: IPPROTO_TCP,
        dscp: 10,
        ecn: Ecn::Ect0,
        ttl: 64,
        ident: 1,
        dont_frag: true,
        payload_len: 0,
    })
}

fn v6() -> IpRepr {
    IpRepr::V6(Ipv6Repr {
        src: Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2),
        dst: Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1),
        next_header: IPPROTO_TCP,
        dscp: 0,
        ecn: Ecn::NotEct,
        flow_label: 0x12345,
        hop_limit: 64,
        payload_len: 0,
    })
}

/// Valid packets of the shapes Linux sends, in each mode.
pub(crate) fn seeds() -> Vec<Vec<u8>> {
    let syn = TcpRepr {
        src_port: 40000,
        dst_port: 80,
        seq: SeqNum(0x0102_0304),
        flags: Flags::SYN | Flags::ECE | Flags::CWR,
        window: 64240,
        mss: Some(1460),
        window_scale: WindowScale::new(7),
        sack_permitted: true,
        timestamps: Some(Timestamps { tsval: 7, tsecr: 0 }),
        ..TcpRepr::default()
    };
    let mut sack = SackBlocks::new();
    for (l, r) in [(1000, 2000), (3000, 4000), (0xffff_fff0, 0x10)] {
        sack.push(SackBlock {
            left: SeqNum(l),
            right: SeqNum(r),
        });
    }
    let ack = TcpRepr {
        src_port: 80,
        dst_port: 40000,
        seq: SeqNum(9),
        ack: SeqNum(0x0102_0305),
        flags: Flags::ACK | Flags::ECE,
        window: 501,
        sack,
        timestamps: Some(Timestamps { tsval: 1, tsecr: 2 }),
        ..TcpRepr::default()
    };
    let mut extra = TcpRepr {
        flags: Flags::ACK | Flags::PSH | Flags::FIN,
        payload: b"hello, world",
        ..ack
    };
    extra.sack.truncate(1);
    let _ = extra.extra.push(34, &[1, 2, 3, 4, 5, 6]);
    let mut seeds = Vec::new();
    for tcp in [syn, ack, extra] {
        for ip in [v4(), v6()] {
            let mut pkt = Vec::new();
            emit_tcp_packet(&ip, &tcp, &mut pkt);
            let ip_len = ip.header_len();
            for mode in [0u8, 2] {
                let mut s = vec![mode];
                s.extend_from_slice(&pkt);
                seeds.push(s);
            }
            let mut s = vec![if matches!(ip, IpRepr::V6(_)) { 0x81 } else { 1 }];
            s.extend_from_slice(&pkt[ip_len..]);
            seeds.push(s);
        }
    }
    seeds
}
