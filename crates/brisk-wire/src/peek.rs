//! Looking at a raw IP packet's addresses and ports without a full parse.
//!
//! Forwarding (the simulator's routes, the emulator's per-flow classification and
//! multiplexing) needs only addresses, on every packet, and must not pay for checksum
//! verification or reject a packet a later element would count as corrupt. These
//! functions read fixed header fields only: they check the version nibble and that the
//! bytes they read are present, and never verify checksums or lengths beyond that.
//! Every function returns `None` for input it cannot read; none panics.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

const V4_MIN_HEADER: usize = 20;
const V4_PROTOCOL: usize = 9;
const V4_SRC: usize = 12;
const V4_DST: usize = 16;
const V6_HEADER: usize = 40;
const V6_NEXT_HEADER: usize = 6;
const V6_SRC: usize = 8;
const V6_DST: usize = 24;

/// A packet's addresses, transport protocol and ports: what identifies its flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    /// The IPv4 protocol or the IPv6 next header.
    pub protocol: u8,
    pub src_port: u16,
    pub dst_port: u16,
}

fn array<const N: usize>(buf: &[u8], at: usize) -> Option<[u8; N]> {
    buf.get(at..at.checked_add(N)?)?.try_into().ok()
}

fn version(buf: &[u8]) -> Option<u8> {
    let v = buf.first()? >> 4;
    match v {
        4 if buf.len() >= V4_MIN_HEADER => Some(4),
        6 if buf.len() >= V6_HEADER => Some(6),
        _ => None,
    }
}

/// The source address of a raw IPv4 or IPv6 packet.
pub fn src_addr(buf: &[u8]) -> Option<IpAddr> {
    match version(buf)? {
        4 => array::<4>(buf, V4_SRC).map(|a| IpAddr::V4(Ipv4Addr::from(a))),
        _ => array::<16>(buf, V6_SRC).map(|a| IpAddr::V6(Ipv6Addr::from(a))),
    }
}

/// The destination address of a raw IPv4 or IPv6 packet. Inline: the simulator's
/// engine routes every packet by it, from another crate.
#[inline]
pub fn dst_addr(buf: &[u8]) -> Option<IpAddr> {
    match version(buf)? {
        4 => array::<4>(buf, V4_DST).map(|a| IpAddr::V4(Ipv4Addr::from(a))),
        _ => array::<16>(buf, V6_DST).map(|a| IpAddr::V6(Ipv6Addr::from(a))),
    }
}

/// The source IPv4 address, or `None` for anything else (IPv6 included).
pub fn ipv4_src(buf: &[u8]) -> Option<Ipv4Addr> {
    match src_addr(buf)? {
        IpAddr::V4(a) => Some(a),
        IpAddr::V6(_) => None,
    }
}

/// The destination IPv4 address, or `None` for anything else (IPv6 included).
pub fn ipv4_dst(buf: &[u8]) -> Option<Ipv4Addr> {
    match dst_addr(buf)? {
        IpAddr::V4(a) => Some(a),
        IpAddr::V6(_) => None,
    }
}

/// The flow of a raw packet: addresses, protocol and the first four bytes of the
/// transport header read as source and destination ports (TCP's and UDP's layout).
///
/// IPv4 options are skipped by the header length field; IPv4 fragments other than the
/// first carry no ports and give `None`. IPv6 extension headers are not walked: the
/// transport header is taken to follow the fixed header, which holds for everything
/// brisk emits.
pub fn flow_key(buf: &[u8]) -> Option<FlowKey> {
    let (protocol, transport) = match version(buf)? {
        4 => {
            let ihl = usize::from(buf[0] & 0x0f) * 4;
            let frag = u16::from_be_bytes(array::<2>(buf, 6)?) & 0x1fff;
            if ihl < V4_MIN_HEADER || frag != 0 {
                return None;
            }
            (buf[V4_PROTOCOL], ihl)
        }
        _ => (buf[V6_NEXT_HEADER], V6_HEADER),
    };
    let ports = array::<4>(buf, transport)?;
    Some(FlowKey {
        src: src_addr(buf)?,
        dst: dst_addr(buf)?,
        protocol,
        src_port: u16::from_be_bytes([ports[0], ports[1]]),
        dst_port: u16::from_be_bytes([ports[2], ports[3]]),
    })
}

/// Bytes of TCP payload in a raw IPv4 or IPv6 packet: the IP total (or payload)
/// length less the IP and TCP headers. `None` for a packet that is not TCP, an IPv4
/// fragment other than the first, or one too short to hold the headers it declares.
/// IPv6 extension headers are not walked (as in [`flow_key`]).
/// Inline: the simulator's hosts ask for every packet they receive.
#[inline]
pub fn tcp_payload_len(buf: &[u8]) -> Option<usize> {
    let (protocol, transport, total) = match version(buf)? {
        4 => {
            let ihl = usize::from(buf[0] & 0x0f) * 4;
            let frag = u16::from_be_bytes(array::<2>(buf, 6)?) & 0x1fff;
            if ihl < V4_MIN_HEADER || frag != 0 {
                return None;
            }
            let total = usize::from(u16::from_be_bytes(array::<2>(buf, 2)?));
            (buf[V4_PROTOCOL], ihl, total)
        }
        _ => {
            let payload = usize::from(u16::from_be_bytes(array::<2>(buf, 4)?));
            (buf[V6_NEXT_HEADER], V6_HEADER, V6_HEADER + payload)
        }
    };
    if protocol != 6 {
        return None;
    }
    let data_offset = usize::from(buf.get(transport + 12)? >> 4) * 4;
    total
        .min(buf.len())
        .checked_sub(transport.checked_add(data_offset)?)
}

/// Where the TCP header of a raw IPv4 or IPv6 packet starts; `None` as for
/// [`tcp_payload_len`].
fn tcp_header_at(buf: &[u8]) -> Option<usize> {
    match version(buf)? {
        4 => {
            let ihl = usize::from(buf[0] & 0x0f) * 4;
            let frag = u16::from_be_bytes(array::<2>(buf, 6)?) & 0x1fff;
            (ihl >= V4_MIN_HEADER && frag == 0 && buf[V4_PROTOCOL] == 6).then_some(ihl)
        }
        _ => (buf[V6_NEXT_HEADER] == 6).then_some(V6_HEADER),
    }
}

/// A TCP segment's sequence number and flags byte (CWR … FIN), from a raw IPv4 or
/// IPv6 packet; `None` as for [`tcp_payload_len`].
pub fn tcp_seq_flags(buf: &[u8]) -> Option<(u32, u8)> {
    let transport = tcp_header_at(buf)?;
    let seq = u32::from_be_bytes(array::<4>(buf, transport + 4)?);
    Some((seq, *buf.get(transport + 13)?))
}

/// A TCP segment's acknowledgment number, from a raw IPv4 or IPv6 packet; `None` as
/// for [`tcp_payload_len`].
pub fn tcp_ack(buf: &[u8]) -> Option<u32> {
    let transport = tcp_header_at(buf)?;
    Some(u32::from_be_bytes(array::<4>(buf, transport + 8)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ip::{Ecn, IpRepr, Ipv4Repr, Ipv6Repr, IPPROTO_TCP};
    use crate::packet::emit_tcp_packet;
    use crate::tcp::TcpRepr;
    use proptest::prelude::*;

    fn tcp(src_port: u16, dst_port: u16) -> TcpRepr<'static> {
        TcpRepr {
            src_port,
            dst_port,
            ..TcpRepr::default()
        }
    }

    fn v4(src: [u8; 4], dst: [u8; 4]) -> Vec<u8> {
        let ip = IpRepr::V4(Ipv4Repr {
            src: src.into(),
            dst: dst.into(),
            protocol: IPPROTO_TCP,
            dscp: 0,
            ecn: Ecn::NotEct,
            ttl: 64,
            ident: 1,
            dont_frag: true,
            payload_len: 0,
        });
        let mut out = Vec::new();
        emit_tcp_packet(&ip, &tcp(40000, 80), &mut out);
        out
    }

    fn v6(src: [u8; 16], dst: [u8; 16]) -> Vec<u8> {
        let ip = IpRepr::V6(Ipv6Repr {
            src: src.into(),
            dst: dst.into(),
            next_header: IPPROTO_TCP,
            dscp: 0,
            ecn: Ecn::NotEct,
            flow_label: 0,
            hop_limit: 64,
            payload_len: 0,
        });
        let mut out = Vec::new();
        emit_tcp_packet(&ip, &tcp(5, 6), &mut out);
        out
    }

    #[test]
    fn sequence_number_flags_and_ack_of_both_families() {
        use crate::seq::SeqNum;
        use crate::tcp::Flags;
        let seg = TcpRepr {
            seq: SeqNum(0xdead_beef),
            ack: SeqNum(0x0123_4567),
            flags: Flags::SYN | Flags::FIN,
            ..tcp(1, 2)
        };
        for mut p in [v4([1, 2, 3, 4], [5, 6, 7, 8]), v6([0xfd; 16], [0xfe; 16])] {
            let ip = if p[0] >> 4 == 4 {
                IpRepr::V4(Ipv4Repr {
                    src: [1, 2, 3, 4].into(),
                    dst: [5, 6, 7, 8].into(),
                    protocol: IPPROTO_TCP,
                    dscp: 0,
                    ecn: Ecn::NotEct,
                    ttl: 64,
                    ident: 1,
                    dont_frag: true,
                    payload_len: 0,
                })
            } else {
                IpRepr::V6(Ipv6Repr {
                    src: [0xfd; 16].into(),
                    dst: [0xfe; 16].into(),
                    next_header: IPPROTO_TCP,
                    dscp: 0,
                    ecn: Ecn::NotEct,
                    flow_label: 0,
                    hop_limit: 64,
                    payload_len: 0,
                })
            };
            p.clear();
            emit_tcp_packet(&ip, &seg, &mut p);
            assert_eq!(tcp_seq_flags(&p), Some((0xdead_beef, 0x03)));
            assert_eq!(tcp_ack(&p), Some(0x0123_4567));
            assert_eq!(tcp_seq_flags(&p[..p.len() - 8]), None, "truncated header");
        }
    }

    #[test]
    fn tcp_payload_length_of_both_families() {
        let a = v4([10, 0, 0, 1], [10, 0, 0, 2]);
        assert_eq!(tcp_payload_len(&a), Some(0));
        let v6_pure_ack = v6([0xfd; 16], [0xfe; 16]);
        assert_eq!(tcp_payload_len(&v6_pure_ack), Some(0));
        let data = [7u8; 100];
        let seg = TcpRepr {
            payload: &data,
            timestamps: Some(Default::default()),
            ..tcp(1, 2)
        };
        let mut p = Vec::new();
        for ip in [
            IpRepr::V4(Ipv4Repr {
                src: [1, 2, 3, 4].into(),
                dst: [5, 6, 7, 8].into(),
                protocol: IPPROTO_TCP,
                dscp: 0,
                ecn: Ecn::NotEct,
                ttl: 64,
                ident: 1,
                dont_frag: true,
                payload_len: 0,
            }),
            IpRepr::V6(Ipv6Repr {
                src: [0xfd; 16].into(),
                dst: [0xfe; 16].into(),
                next_header: IPPROTO_TCP,
                dscp: 0,
                ecn: Ecn::NotEct,
                flow_label: 0,
                hop_limit: 64,
                payload_len: 0,
            }),
        ] {
            emit_tcp_packet(&ip, &seg, &mut p);
            assert_eq!(tcp_payload_len(&p), Some(100));
            // Cut short: only the bytes present count; a cut header is no packet.
            assert_eq!(tcp_payload_len(&p[..p.len() - 10]), Some(90));
            assert_eq!(tcp_payload_len(&p[..ip.header_len() + 10]), None);
        }
    }

    #[test]
    fn ipv4_addresses_and_ports() {
        let p = v4([10, 0, 0, 1], [198, 19, 0, 2]);
        assert_eq!(dst_addr(&p), Some(IpAddr::from([198, 19, 0, 2])));
        assert_eq!(src_addr(&p), Some(IpAddr::from([10, 0, 0, 1])));
        assert_eq!(ipv4_dst(&p), Some(Ipv4Addr::new(198, 19, 0, 2)));
        assert_eq!(ipv4_src(&p), Some(Ipv4Addr::new(10, 0, 0, 1)));
        let k = flow_key(&p).unwrap();
        assert_eq!((k.protocol, k.src_port, k.dst_port), (6, 40000, 80));
    }

    #[test]
    fn ipv6_addresses_and_ports() {
        let mut a = [0u8; 16];
        a[0] = 0xfd;
        a[15] = 1;
        let mut b = a;
        b[15] = 2;
        let p = v6(a, b);
        assert_eq!(src_addr(&p), Some(IpAddr::from(a)));
        assert_eq!(dst_addr(&p), Some(IpAddr::from(b)));
        assert_eq!(ipv4_dst(&p), None);
        let k = flow_key(&p).unwrap();
        assert_eq!((k.protocol, k.src_port, k.dst_port), (6, 5, 6));
    }

    #[test]
    fn ipv4_options_are_skipped() {
        let mut p = v4([1, 2, 3, 4], [5, 6, 7, 8]);
        // Insert four bytes of options (NOPs) and bump IHL from 5 to 6.
        p.splice(20..20, [1u8; 4]);
        p[0] = 0x46;
        assert_eq!(flow_key(&p).unwrap().dst_port, 80);
    }

    #[test]
    fn short_or_foreign_input_is_none() {
        assert_eq!(dst_addr(&[]), None);
        assert_eq!(dst_addr(&[0x45; 19]), None);
        assert_eq!(dst_addr(&[0x65; 39]), None);
        assert_eq!(dst_addr(&[0x15; 60]), None);
        let p = v4([1, 2, 3, 4], [5, 6, 7, 8]);
        assert_eq!(flow_key(&p[..21]), None, "ports cut off");
        let mut bad_ihl = p.clone();
        bad_ihl[0] = 0x44;
        assert_eq!(flow_key(&bad_ihl), None);
        let mut fragment = p;
        fragment[7] = 1;
        assert_eq!(flow_key(&fragment), None);
    }

    proptest! {
        #[test]
        fn never_panics(buf in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = (src_addr(&buf), dst_addr(&buf), flow_key(&buf));
            let _ = (ipv4_src(&buf), ipv4_dst(&buf));
        }
    }
}
