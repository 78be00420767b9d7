//! Whole IP packets carrying TCP: what the simulator and the TUN device move around.

use crate::checksum;
use crate::error::ParseError;
use crate::ip::{Ecn, IpRepr, IPPROTO_TCP};
use crate::tcp::TcpRepr;

/// IPv4 header checksum offset (RFC 791 §3.1).
const V4_CHECKSUM: usize = 10;
const V4_MIN_HEADER: usize = 20;
const V6_HEADER: usize = 40;

/// Parses an IP packet carrying TCP. Verifies the IPv4 header checksum and the TCP checksum.
/// Bytes beyond the IP total length are ignored. Never allocates.
pub fn parse_tcp_packet(buf: &[u8]) -> Result<(IpRepr, TcpRepr<'_>), ParseError> {
    parse_ip_tcp(buf, true)
}

/// As [`parse_tcp_packet`], for a packet whose TCP checksum is known to be correct
/// (its sender computed it and nothing has changed the bytes since, Linux's
/// `CHECKSUM_UNNECESSARY`): the TCP checksum is not summed. The IPv4 header checksum
/// is still verified (20 bytes; cheap).
pub fn parse_tcp_packet_trusted(buf: &[u8]) -> Result<(IpRepr, TcpRepr<'_>), ParseError> {
    parse_ip_tcp(buf, false)
}

/// As [`parse_tcp_packet`], the TCP segment parsed into `tcp` (every field
/// overwritten; unspecified on an error) and the IP header returned: for a caller
/// that keeps the segment where it uses it. Returned in a tuple, the ~150-byte
/// `TcpRepr` was copied twice per packet (`TcpRepr::parse_into`).
pub fn parse_tcp_packet_into<'a>(
    buf: &'a [u8],
    tcp: &mut TcpRepr<'a>,
) -> Result<IpRepr, ParseError> {
    parse_ip_tcp_into(buf, true, tcp)
}

/// [`parse_tcp_packet_trusted`] into `tcp`, as [`parse_tcp_packet_into`].
pub fn parse_tcp_packet_trusted_into<'a>(
    buf: &'a [u8],
    tcp: &mut TcpRepr<'a>,
) -> Result<IpRepr, ParseError> {
    parse_ip_tcp_into(buf, false, tcp)
}

/// The IP header, then the TCP segment, its checksum summed only if `verify_tcp`.
#[inline]
fn parse_ip_tcp(buf: &[u8], verify_tcp: bool) -> Result<(IpRepr, TcpRepr<'_>), ParseError> {
    let mut tcp = TcpRepr::default();
    let ip = parse_ip_tcp_into(buf, verify_tcp, &mut tcp)?;
    Ok((ip, tcp))
}

/// [`parse_ip_tcp`] with the segment parsed into `tcp`.
#[inline]
fn parse_ip_tcp_into<'a>(
    buf: &'a [u8],
    verify_tcp: bool,
    tcp: &mut TcpRepr<'a>,
) -> Result<IpRepr, ParseError> {
    let (ip, segment) = IpRepr::parse(buf)?;
    if ip.protocol() != IPPROTO_TCP {
        return Err(ParseError::NotTcp(ip.protocol()));
    }
    tcp.parse_into(segment, verify_tcp.then_some(&ip))?;
    Ok(ip)
}

/// Clears `out` and writes IP header + TCP segment. Lengths and checksums are computed
/// here (`ip`'s `payload_len` is ignored, and its protocol is forced to TCP).
pub fn emit_tcp_packet(ip: &IpRepr, tcp: &TcpRepr<'_>, out: &mut Vec<u8>) {
    out.clear();
    let mut ip = *ip;
    let segment_len = tcp.header_len() + tcp.payload.len();
    debug_assert!(
        segment_len <= ip.max_payload_len(),
        "TCP segment too long for IP"
    );
    ip.set_payload_len(segment_len);
    ip.set_protocol(IPPROTO_TCP);
    out.reserve(ip.header_len() + segment_len);
    ip.emit(out);
    tcp.emit(&ip, out);
}

/// The traffic class / TOS byte of a raw IP packet. None if too short or not IP.
fn peek_tos(buf: &[u8]) -> Option<u8> {
    match buf.first()? >> 4 {
        4 if buf.len() >= V4_MIN_HEADER => Some(buf[1]),
        6 if buf.len() >= V6_HEADER => Some((buf[0] << 4) | (buf[1] >> 4)),
        _ => None,
    }
}

/// ECN bits of a raw IP packet, without a full parse. None if too short / not IP.
pub fn peek_ecn(buf: &[u8]) -> Option<Ecn> {
    peek_tos(buf).map(Ecn::from_bits)
}

/// DSCP of a raw IP packet, without a full parse.
pub fn peek_dscp(buf: &[u8]) -> Option<u8> {
    peek_tos(buf).map(|tos| tos >> 2)
}

/// Sets CE on an ECN-capable packet in place (RFC 3168 §5), fixing the IPv4 header
/// checksum incrementally (RFC 1624). Returns false, changing nothing, if the packet is
/// Not-ECT or not IP. A packet already marked CE is left as is and reported as marked.
pub fn mark_ce(buf: &mut [u8]) -> bool {
    match peek_ecn(buf) {
        None | Some(Ecn::NotEct) => false,
        Some(Ecn::Ce) => true,
        Some(_) if buf[0] >> 4 == 4 => {
            let old = u16::from_be_bytes([buf[0], buf[1]]);
            buf[1] |= Ecn::Ce as u8;
            let new = u16::from_be_bytes([buf[0], buf[1]]);
            let at = V4_CHECKSUM;
            let check = u16::from_be_bytes([buf[at], buf[at + 1]]);
            let check = checksum::update_u16(check, old, new);
            buf[at..at + 2].copy_from_slice(&check.to_be_bytes());
            true
        }
        Some(_) => {
            // IPv6: ECN is bits 4-5 of the second byte; there is no header checksum.
            buf[1] |= (Ecn::Ce as u8) << 4;
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::Accumulator;
    use crate::ip::{Ipv4Repr, Ipv6Repr};
    use crate::seq::SeqNum;
    use crate::tcp::{Flags, Timestamps};
    use std::net::Ipv4Addr;

    fn v4(ecn: Ecn) -> IpRepr {
        IpRepr::V4(Ipv4Repr {
            src: Ipv4Addr::new(192, 168, 1, 10),
            dst: Ipv4Addr::new(192, 168, 1, 20),
            protocol: IPPROTO_TCP,
            dscp: 0,
            ecn,
            ttl: 64,
            ident: 7,
            dont_frag: true,
            payload_len: 0,
        })
    }

    fn v6(ecn: Ecn) -> IpRepr {
        IpRepr::V6(Ipv6Repr {
            src: "fd00::1".parse().unwrap(),
            dst: "fd00::2".parse().unwrap(),
            next_header: IPPROTO_TCP,
            dscp: 8,
            ecn,
            flow_label: 0x12345,
            hop_limit: 64,
            payload_len: 0,
        })
    }

    fn data_segment(payload: &[u8]) -> TcpRepr<'_> {
        TcpRepr {
            src_port: 40000,
            dst_port: 5201,
            seq: SeqNum(1000),
            ack: SeqNum(2000),
            flags: Flags::ACK | Flags::PSH,
            window: 502,
            timestamps: Some(Timestamps {
                tsval: 11,
                tsecr: 22,
            }),
            payload,
            ..TcpRepr::default()
        }
    }

    fn ipv4_header_verifies(pkt: &[u8]) -> bool {
        let mut acc = Accumulator::new();
        acc.add_bytes(&pkt[..20]);
        acc.verifies()
    }

    #[test]
    fn packet_round_trips_with_lengths_filled_in() {
        for ip in [v4(Ecn::Ect0), v6(Ecn::Ect1)] {
            let mut out = vec![0xff; 3]; // stale contents must be cleared
            let tcp = data_segment(b"hello");
            emit_tcp_packet(&ip, &tcp, &mut out);
            assert_eq!(out.len(), ip.header_len() + 32 + 5);
            let (pip, ptcp) = parse_tcp_packet(&out).unwrap();
            let mut expected_ip = ip;
            expected_ip.set_payload_len(37);
            assert_eq!(pip, expected_ip);
            assert_eq!(ptcp, tcp);
        }
    }

    #[test]
    fn any_bit_flip_is_detected() {
        for ip in [v4(Ecn::NotEct), v6(Ecn::NotEct)] {
            let mut good = Vec::new();
            emit_tcp_packet(&ip, &data_segment(b"payload!"), &mut good);
            for byte in 0..good.len() {
                for bit in 0..8 {
                    let mut pkt = good.clone();
                    pkt[byte] ^= 1 << bit;
                    let r = parse_tcp_packet(&pkt);
                    let hl = ip.header_len();
                    if hl == 40 && (byte == 7 || (byte < 4 && !(byte == 0 && bit >= 4))) {
                        // IPv6 traffic class, flow label and hop limit are covered by
                        // no checksum (RFC 8200 §8.1).
                        continue;
                    }
                    if byte == 0 || (hl == 40 && byte < 8) {
                        // Version, IHL, IPv6 length and next header: reported as such.
                        assert!(r.is_err(), "byte {byte} bit {bit}");
                    } else if hl == 20 && byte < hl {
                        assert_eq!(r, Err(ParseError::BadIpChecksum), "byte {byte} bit {bit}");
                    } else {
                        // TCP segment, or IPv6 addresses via the pseudo-header.
                        assert_eq!(r, Err(ParseError::BadChecksum), "byte {byte} bit {bit}");
                    }
                }
            }
        }
    }

    /// Parsing into a repr that held another segment (options, extras, SACK blocks)
    /// overwrites every field: the result equals a fresh parse, checksummed or not.
    #[test]
    fn parse_into_overwrites_a_used_repr() {
        let mut rich = data_segment(b"abc");
        rich.mss = Some(1460);
        rich.sack_permitted = true;
        rich.window_scale = crate::tcp::WindowScale::new(7);
        rich.sack = crate::tcp::SackBlocks::from_slice(&[crate::tcp::SackBlock {
            left: SeqNum(5),
            right: SeqNum(9),
        }]);
        rich.extra.push(253, &[1, 2, 3, 4]).unwrap();
        let mut plain = data_segment(b"");
        plain.timestamps = None;
        for ip in [v4(Ecn::Ect0), v6(Ecn::NotEct)] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            emit_tcp_packet(&ip, &rich, &mut a);
            emit_tcp_packet(&ip, &plain, &mut b);
            let mut tcp = TcpRepr::default();
            for pkt in [&a, &b, &a] {
                let want = parse_tcp_packet(pkt).unwrap();
                let ip = parse_tcp_packet_into(pkt, &mut tcp).unwrap();
                assert_eq!((ip, tcp), want);
                let ip = parse_tcp_packet_trusted_into(pkt, &mut tcp).unwrap();
                assert_eq!((ip, tcp), want);
            }
            let mut bad = a.clone();
            let last = bad.len() - 1;
            bad[last] ^= 1;
            assert_eq!(
                parse_tcp_packet_into(&bad, &mut tcp),
                Err(ParseError::BadChecksum)
            );
        }
    }

    #[test]
    fn non_tcp_is_rejected() {
        let mut out = Vec::new();
        emit_tcp_packet(&v4(Ecn::NotEct), &data_segment(b""), &mut out);
        out[9] = 17;
        out[10..12].copy_from_slice(&[0, 0]);
        let c = checksum::checksum(&out[..20]);
        out[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(parse_tcp_packet(&out), Err(ParseError::NotTcp(17)));
    }

    #[test]
    fn every_truncation_is_an_error() {
        for ip in [v4(Ecn::NotEct), v6(Ecn::NotEct)] {
            let mut good = Vec::new();
            emit_tcp_packet(&ip, &data_segment(b"abc"), &mut good);
            for len in 0..good.len() {
                assert!(parse_tcp_packet(&good[..len]).is_err(), "len {len}");
            }
        }
    }

    #[test]
    fn mark_ce_keeps_ipv4_checksum_valid() {
        for ecn in [Ecn::Ect0, Ecn::Ect1] {
            for dscp in [0u8, 10, 46, 63] {
                let mut ip = v4(ecn);
                if let IpRepr::V4(r) = &mut ip {
                    r.dscp = dscp;
                }
                let mut pkt = Vec::new();
                emit_tcp_packet(&ip, &data_segment(b"x"), &mut pkt);
                assert!(mark_ce(&mut pkt));
                assert_eq!(peek_ecn(&pkt), Some(Ecn::Ce));
                assert_eq!(peek_dscp(&pkt), Some(dscp));
                assert!(ipv4_header_verifies(&pkt));
                let (pip, _) = parse_tcp_packet(&pkt).unwrap();
                assert_eq!(pip.ecn(), Ecn::Ce);
            }
        }
    }

    #[test]
    fn mark_ce_sets_ipv6_ecn() {
        let mut pkt = Vec::new();
        emit_tcp_packet(&v6(Ecn::Ect0), &data_segment(b"x"), &mut pkt);
        assert!(mark_ce(&mut pkt));
        let (pip, _) = parse_tcp_packet(&pkt).unwrap();
        assert_eq!(pip.ecn(), Ecn::Ce);
        assert_eq!(pip.dscp(), 8);
    }

    #[test]
    fn mark_ce_leaves_not_ect_and_garbage_alone() {
        let mut pkt = Vec::new();
        emit_tcp_packet(&v4(Ecn::NotEct), &data_segment(b"x"), &mut pkt);
        let before = pkt.clone();
        assert!(!mark_ce(&mut pkt));
        assert_eq!(pkt, before);
        let mut junk = [0x12u8; 30];
        assert!(!mark_ce(&mut junk));
        assert_eq!(junk, [0x12; 30]);
        assert!(!mark_ce(&mut [0x45, 0x02]));
        assert_eq!(peek_ecn(&[]), None);
    }

    #[test]
    fn mark_ce_on_ce_changes_nothing() {
        let mut pkt = Vec::new();
        emit_tcp_packet(&v4(Ecn::Ce), &data_segment(b"x"), &mut pkt);
        let before = pkt.clone();
        assert!(mark_ce(&mut pkt));
        assert_eq!(pkt, before);
    }
}
