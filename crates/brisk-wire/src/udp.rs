//! UDP (RFC 768) over IPv4 or IPv6: the 8-byte header and whole packets, for the
//! simulator's datagram flows (`app = { kind = "udp" }`, the Minion VoIP baseline).
//!
//! The checksum covers the pseudo-header, header and payload (RFC 768; RFC 8200 §8.1
//! for IPv6). Emitting always computes it; a transmitted zero is sent as 0xffff (RFC 768:
//! "an all zero transmitted checksum value means that the transmitter generated no
//! checksum"). Parsing accepts a zero checksum over IPv4 only (IPv6 requires one,
//! RFC 8200 §8.1) and otherwise verifies it. Parsing never panics and never allocates.

use crate::error::ParseError;
use crate::ip::IpRepr;

pub const IPPROTO_UDP: u8 = 17;

/// The UDP header's fields (the length and checksum are derived).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
}

impl UdpRepr {
    pub const HEADER_LEN: usize = 8;

    /// Parses a UDP datagram (`segment`, the IP payload) and returns its payload; `ip`
    /// gives the pseudo-header for the checksum.
    pub fn parse<'a>(segment: &'a [u8], ip: &IpRepr) -> Result<(UdpRepr, &'a [u8]), ParseError> {
        if segment.len() < Self::HEADER_LEN {
            return Err(ParseError::Truncated);
        }
        let be16 = |at: usize| u16::from_be_bytes([segment[at], segment[at + 1]]);
        let len = usize::from(be16(4));
        // The UDP length must cover the header and fit the IP payload; IP padding
        // beyond it is ignored, as for IP itself.
        if len < Self::HEADER_LEN || len > segment.len() {
            return Err(ParseError::BadUdpLength);
        }
        let check = be16(6);
        let v6 = matches!(ip, IpRepr::V6(_));
        if check != 0 || v6 {
            let mut acc = ip.pseudo_header(IPPROTO_UDP, len);
            acc.add_bytes(&segment[..len]);
            if !acc.verifies() {
                return Err(ParseError::BadUdpChecksum);
            }
        }
        let repr = UdpRepr {
            src_port: be16(0),
            dst_port: be16(2),
        };
        Ok((repr, &segment[Self::HEADER_LEN..len]))
    }

    /// Appends the header and `payload`, with the checksum over `ip`'s pseudo-header.
    pub fn emit(&self, ip: &IpRepr, payload: &[u8], out: &mut Vec<u8>) {
        let len = Self::HEADER_LEN + payload.len();
        // Callers keep datagrams within the IP payload limit; saturate rather than wrap.
        let len16 = u16::try_from(len).unwrap_or(u16::MAX);
        let start = out.len();
        out.extend_from_slice(&self.src_port.to_be_bytes());
        out.extend_from_slice(&self.dst_port.to_be_bytes());
        out.extend_from_slice(&len16.to_be_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(payload);
        let mut acc = ip.pseudo_header(IPPROTO_UDP, len);
        acc.add_bytes(&out[start..]);
        let c = match acc.checksum() {
            0 => 0xffff,
            c => c,
        };
        out[start + 6..start + 8].copy_from_slice(&c.to_be_bytes());
    }
}

/// Parses an IP packet carrying UDP, verifying the IPv4 header checksum and the UDP
/// checksum. Returns the IP header, the UDP header and the payload.
pub fn parse_udp_packet(buf: &[u8]) -> Result<(IpRepr, UdpRepr, &[u8]), ParseError> {
    let (ip, segment) = IpRepr::parse(buf)?;
    if ip.protocol() != IPPROTO_UDP {
        return Err(ParseError::NotUdp(ip.protocol()));
    }
    let (udp, payload) = UdpRepr::parse(segment, &ip)?;
    Ok((ip, udp, payload))
}

/// Clears `out` and writes IP header + UDP datagram (`ip`'s payload length and protocol
/// are set here).
pub fn emit_udp_packet(ip: &IpRepr, udp: &UdpRepr, payload: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut ip = *ip;
    let len = UdpRepr::HEADER_LEN + payload.len();
    debug_assert!(len <= ip.max_payload_len(), "UDP datagram too long for IP");
    ip.set_payload_len(len);
    ip.set_protocol(IPPROTO_UDP);
    out.reserve(ip.header_len() + len);
    ip.emit(out);
    udp.emit(&ip, payload, out);
}

/// The IP protocol (next header) of a raw packet, without a full parse.
pub fn peek_protocol(buf: &[u8]) -> Option<u8> {
    match buf.first()? >> 4 {
        4 if buf.len() >= 20 => Some(buf[9]),
        6 if buf.len() >= 40 => Some(buf[6]),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ip::{Ecn, Ipv4Repr, Ipv6Repr};
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn v4() -> IpRepr {
        IpRepr::V4(Ipv4Repr {
            src: Ipv4Addr::new(198, 18, 0, 1),
            dst: Ipv4Addr::new(198, 19, 0, 1),
            protocol: IPPROTO_UDP,
            dscp: 0,
            ecn: Ecn::NotEct,
            ttl: 64,
            ident: 7,
            dont_frag: true,
            payload_len: 0,
        })
    }

    fn v6() -> IpRepr {
        IpRepr::V6(Ipv6Repr {
            src: Ipv6Addr::LOCALHOST,
            dst: Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 2),
            next_header: IPPROTO_UDP,
            dscp: 0,
            ecn: Ecn::NotEct,
            flow_label: 0,
            hop_limit: 64,
            payload_len: 0,
        })
    }

    const U: UdpRepr = UdpRepr {
        src_port: 49152,
        dst_port: 5001,
    };

    #[test]
    fn round_trips_over_both_ip_versions() {
        for ip in [v4(), v6()] {
            let payload: Vec<u8> = (0..=255u8).cycle().take(641).collect();
            let mut out = Vec::new();
            emit_udp_packet(&ip, &U, &payload, &mut out);
            assert_eq!(out.len(), ip.header_len() + 8 + 641);
            assert_eq!(peek_protocol(&out), Some(IPPROTO_UDP));
            let (pip, udp, p) = parse_udp_packet(&out).unwrap();
            assert_eq!(udp, U);
            assert_eq!(p, &payload[..]);
            assert_eq!(pip.payload_len(), 8 + 641);
        }
    }

    #[test]
    fn known_checksum() {
        // Worked by hand: pseudo-header 198.18.0.1 → 198.19.0.1, proto 17, len 12;
        // header 49152 → 5001, len 12; payload "abcd".
        let mut out = Vec::new();
        emit_udp_packet(&v4(), &U, b"abcd", &mut out);
        let seg = &out[20..];
        let words: [u32; 12] = [
            0xc612, 0x0001, 0xc613, 0x0001, 17, 12, 49152, 5001, 12, 0, 0x6162, 0x6364,
        ];
        let mut s: u32 = words.iter().sum();
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        assert_eq!(u16::from_be_bytes([seg[6], seg[7]]), !(s as u16));
    }

    #[test]
    fn every_corrupted_bit_of_the_datagram_is_caught() {
        let mut out = Vec::new();
        emit_udp_packet(&v4(), &U, b"voice frame", &mut out);
        for byte in 20..out.len() {
            for bit in 0..8 {
                let mut bad = out.clone();
                bad[byte] ^= 1 << bit;
                let r = parse_udp_packet(&bad);
                assert!(
                    matches!(
                        r,
                        Err(ParseError::BadUdpChecksum | ParseError::BadUdpLength)
                    ),
                    "byte {byte} bit {bit}: {r:?}"
                );
            }
        }
    }

    #[test]
    fn bad_input_is_an_error_never_a_panic() {
        let mut out = Vec::new();
        emit_udp_packet(&v4(), &U, b"x", &mut out);
        for n in 0..out.len() {
            assert!(parse_udp_packet(&out[..n]).is_err(), "prefix {n}");
        }
        // A TCP packet is not UDP.
        let mut tcp = out.clone();
        tcp[9] = 6;
        tcp[10..12].copy_from_slice(&[0, 0]);
        let c = crate::checksum::checksum(&tcp[..20]);
        tcp[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(parse_udp_packet(&tcp), Err(ParseError::NotUdp(6)));
        // A zero checksum over IPv4 means "none" (RFC 768); over IPv6 it is refused.
        let mut none = out.clone();
        none[26..28].copy_from_slice(&[0, 0]);
        assert!(parse_udp_packet(&none).is_ok());
        let mut o6 = Vec::new();
        emit_udp_packet(&v6(), &U, b"x", &mut o6);
        o6[46..48].copy_from_slice(&[0, 0]);
        assert_eq!(parse_udp_packet(&o6), Err(ParseError::BadUdpChecksum));
    }
}
