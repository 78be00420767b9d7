//! IPv4 (RFC 791) and IPv6 (RFC 8200) headers, with DSCP and ECN (RFC 2474, RFC 3168).
//!
//! Parsing returns the header and the payload it delimits; bytes past the total length
//! (Ethernet minimum-frame padding) are ignored. IPv4 options are accepted and skipped;
//! fragments are refused, as brisk does not reassemble. Emitting always writes a
//! 20-byte IPv4 header (no options) or the 40-byte IPv6 fixed header.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::checksum::{self, Accumulator};
use crate::error::ParseError;

pub const IPPROTO_TCP: u8 = 6;

/// The two ECN bits of the IP header.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum Ecn {
    #[default]
    NotEct = 0,
    Ect1 = 1,
    Ect0 = 2,
    Ce = 3,
}

impl Ecn {
    pub fn from_bits(b: u8) -> Ecn {
        match b & 3 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
    pub fn is_ect(self) -> bool {
        self != Ecn::NotEct
    }
}

/// The traffic class / TOS byte: DSCP in the upper six bits, ECN in the lower two.
fn tos_byte(dscp: u8, ecn: Ecn) -> u8 {
    ((dscp & 0x3f) << 2) | ecn as u8
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Ipv4Repr {
    pub src: std::net::Ipv4Addr,
    pub dst: std::net::Ipv4Addr,
    pub protocol: u8,
    /// 6-bit DSCP (RFC 2474).
    pub dscp: u8,
    pub ecn: Ecn,
    pub ttl: u8,
    pub ident: u16,
    pub dont_frag: bool,
    /// Length of what follows the IP header.
    pub payload_len: usize,
}

/// IPv4 header field offsets (RFC 791 §3.1).
mod v4 {
    pub const TOS: usize = 1;
    pub const TOTAL_LEN: usize = 2;
    pub const IDENT: usize = 4;
    pub const FLAGS_FRAG: usize = 6;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: usize = 10;
    pub const SRC: usize = 12;
    pub const DST: usize = 16;
    pub const FLAG_DF: u16 = 0x4000;
    pub const FLAG_MF: u16 = 0x2000;
    pub const FRAG_OFFSET: u16 = 0x1fff;
}

impl Ipv4Repr {
    /// Length of the header `emit` writes (no options).
    pub const HEADER_LEN: usize = 20;
    /// Largest payload a 16-bit total length can describe.
    pub const MAX_PAYLOAD: usize = u16::MAX as usize - Self::HEADER_LEN;

    /// Parses an IPv4 header, verifying its checksum, and returns the payload delimited
    /// by the total length (trailing bytes beyond it are ignored).
    ///
    /// Inline (into `IpRepr::parse`, its one caller outside tests): once the header sum
    /// shrank, LLVM stopped inlining it, and the `Result` was then built and copied
    /// twice per packet.
    #[inline]
    pub fn parse(buf: &[u8]) -> Result<(Ipv4Repr, &[u8]), ParseError> {
        if buf.len() < Self::HEADER_LEN {
            return Err(ParseError::Truncated);
        }
        let version = buf[0] >> 4;
        if version != 4 {
            return Err(ParseError::BadVersion(version));
        }
        let header_len = usize::from(buf[0] & 0x0f) * 4;
        if header_len < Self::HEADER_LEN {
            return Err(ParseError::BadIpLength);
        }
        if header_len > buf.len() {
            return Err(ParseError::Truncated);
        }
        // Verify before trusting the remaining fields, so that corruption is counted
        // as corruption rather than as whatever the damaged field now says.
        // The common option-less header through the 20-byte sum (the same value as
        // the accumulator's: `checksum::header20_sum`).
        let sum = match buf.first_chunk::<{ Self::HEADER_LEN }>() {
            Some(h) if header_len == Self::HEADER_LEN => checksum::header20_sum(h),
            _ => {
                let mut acc = Accumulator::new();
                acc.add_bytes(&buf[..header_len]);
                acc.sum()
            }
        };
        if sum != 0xffff {
            return Err(ParseError::BadIpChecksum);
        }
        let total_len = usize::from(be16(buf, v4::TOTAL_LEN));
        if total_len < header_len {
            return Err(ParseError::BadIpLength);
        }
        if total_len > buf.len() {
            return Err(ParseError::Truncated);
        }
        let flags_frag = be16(buf, v4::FLAGS_FRAG);
        if flags_frag & (v4::FLAG_MF | v4::FRAG_OFFSET) != 0 {
            return Err(ParseError::Fragment);
        }
        let repr = Ipv4Repr {
            src: Ipv4Addr::from(be32(buf, v4::SRC)),
            dst: Ipv4Addr::from(be32(buf, v4::DST)),
            protocol: buf[v4::PROTOCOL],
            dscp: buf[v4::TOS] >> 2,
            ecn: Ecn::from_bits(buf[v4::TOS]),
            ttl: buf[v4::TTL],
            ident: be16(buf, v4::IDENT),
            dont_frag: flags_frag & v4::FLAG_DF != 0,
            payload_len: total_len - header_len,
        };
        Ok((repr, &buf[header_len..total_len]))
    }

    /// Appends the 20-byte header with its checksum. `payload_len` must be at most
    /// [`Self::MAX_PAYLOAD`] (a caller bug otherwise; the length field saturates).
    ///
    /// Inline (into `IpRepr::emit`, its one caller outside tests), as `parse` is.
    #[inline]
    pub fn emit(&self, out: &mut Vec<u8>) {
        debug_assert!(
            self.payload_len <= Self::MAX_PAYLOAD,
            "IPv4 payload too long"
        );
        let total_len = (Self::HEADER_LEN + self.payload_len).min(usize::from(u16::MAX)) as u16;
        let flags_frag = if self.dont_frag { v4::FLAG_DF } else { 0 };
        // Built in a fixed array and appended once: a push per field re-checked the
        // vector's capacity each time, on every packet the simulator sends.
        let [l0, l1] = total_len.to_be_bytes();
        let [i0, i1] = self.ident.to_be_bytes();
        let [f0, f1] = flags_frag.to_be_bytes();
        let [s0, s1, s2, s3] = self.src.octets();
        let [d0, d1, d2, d3] = self.dst.octets();
        let mut h: [u8; Self::HEADER_LEN] = [
            0x45,
            tos_byte(self.dscp, self.ecn),
            l0,
            l1,
            i0,
            i1,
            f0,
            f1,
            self.ttl,
            self.protocol,
            0,
            0,
            s0,
            s1,
            s2,
            s3,
            d0,
            d1,
            d2,
            d3,
        ];
        let c = !checksum::header20_sum(&h);
        h[v4::CHECKSUM..v4::CHECKSUM + 2].copy_from_slice(&c.to_be_bytes());
        out.extend_from_slice(&h);
    }
}

/// IPv6 fixed header. Extension headers are not supported: a packet whose next header
/// is not the upper-layer protocol is reported as that protocol (`NotTcp` for TCP users).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Ipv6Repr {
    pub src: Ipv6Addr,
    pub dst: Ipv6Addr,
    pub next_header: u8,
    /// 6-bit DSCP, upper bits of the traffic class.
    pub dscp: u8,
    pub ecn: Ecn,
    /// 20-bit flow label (RFC 6437); upper bits are ignored on emit.
    pub flow_label: u32,
    pub hop_limit: u8,
    /// Length of what follows the fixed header.
    pub payload_len: usize,
}

impl Ipv6Repr {
    pub const HEADER_LEN: usize = 40;
    /// Largest payload a 16-bit payload length can describe (no jumbograms).
    pub const MAX_PAYLOAD: usize = u16::MAX as usize;

    /// Parses the fixed header and returns the payload delimited by the payload length.
    pub fn parse(buf: &[u8]) -> Result<(Ipv6Repr, &[u8]), ParseError> {
        if buf.len() < Self::HEADER_LEN {
            return Err(ParseError::Truncated);
        }
        let version = buf[0] >> 4;
        if version != 6 {
            return Err(ParseError::BadVersion(version));
        }
        let first = be32(buf, 0);
        let traffic_class = (first >> 20) as u8;
        let payload_len = usize::from(be16(buf, 4));
        let end = Self::HEADER_LEN + payload_len;
        if end > buf.len() {
            return Err(ParseError::Truncated);
        }
        let mut src = [0u8; 16];
        src.copy_from_slice(&buf[8..24]);
        let mut dst = [0u8; 16];
        dst.copy_from_slice(&buf[24..40]);
        let repr = Ipv6Repr {
            src: Ipv6Addr::from(src),
            dst: Ipv6Addr::from(dst),
            next_header: buf[6],
            dscp: traffic_class >> 2,
            ecn: Ecn::from_bits(traffic_class),
            flow_label: first & 0x000f_ffff,
            hop_limit: buf[7],
            payload_len,
        };
        Ok((repr, &buf[Self::HEADER_LEN..end]))
    }

    /// Appends the 40-byte fixed header.
    pub fn emit(&self, out: &mut Vec<u8>) {
        debug_assert!(
            self.payload_len <= Self::MAX_PAYLOAD,
            "IPv6 payload too long"
        );
        let payload_len = self.payload_len.min(Self::MAX_PAYLOAD) as u16;
        let first = (6u32 << 28)
            | (u32::from(tos_byte(self.dscp, self.ecn)) << 20)
            | (self.flow_label & 0x000f_ffff);
        out.reserve(Self::HEADER_LEN);
        out.extend_from_slice(&first.to_be_bytes());
        out.extend_from_slice(&payload_len.to_be_bytes());
        out.push(self.next_header);
        out.push(self.hop_limit);
        out.extend_from_slice(&self.src.octets());
        out.extend_from_slice(&self.dst.octets());
    }
}

/// Either IP version; what the TCP pseudo-header and the demultiplexer need.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum IpRepr {
    V4(Ipv4Repr),
    V6(Ipv6Repr),
}

impl IpRepr {
    pub fn src(&self) -> IpAddr {
        match self {
            IpRepr::V4(r) => IpAddr::V4(r.src),
            IpRepr::V6(r) => IpAddr::V6(r.src),
        }
    }
    pub fn dst(&self) -> IpAddr {
        match self {
            IpRepr::V4(r) => IpAddr::V4(r.dst),
            IpRepr::V6(r) => IpAddr::V6(r.dst),
        }
    }
    pub fn ecn(&self) -> Ecn {
        match self {
            IpRepr::V4(r) => r.ecn,
            IpRepr::V6(r) => r.ecn,
        }
    }
    pub fn dscp(&self) -> u8 {
        match self {
            IpRepr::V4(r) => r.dscp,
            IpRepr::V6(r) => r.dscp,
        }
    }
    /// TTL (IPv4) or hop limit (IPv6).
    pub fn ttl(&self) -> u8 {
        match self {
            IpRepr::V4(r) => r.ttl,
            IpRepr::V6(r) => r.hop_limit,
        }
    }
    /// Protocol (IPv4) or next header (IPv6).
    pub fn protocol(&self) -> u8 {
        match self {
            IpRepr::V4(r) => r.protocol,
            IpRepr::V6(r) => r.next_header,
        }
    }
    /// Length of the header `emit` writes.
    pub fn header_len(&self) -> usize {
        match self {
            IpRepr::V4(_) => Ipv4Repr::HEADER_LEN,
            IpRepr::V6(_) => Ipv6Repr::HEADER_LEN,
        }
    }
    pub fn payload_len(&self) -> usize {
        match self {
            IpRepr::V4(r) => r.payload_len,
            IpRepr::V6(r) => r.payload_len,
        }
    }
    /// Largest payload this version's length field can describe.
    pub fn max_payload_len(&self) -> usize {
        match self {
            IpRepr::V4(_) => Ipv4Repr::MAX_PAYLOAD,
            IpRepr::V6(_) => Ipv6Repr::MAX_PAYLOAD,
        }
    }
    pub fn set_payload_len(&mut self, len: usize) {
        match self {
            IpRepr::V4(r) => r.payload_len = len,
            IpRepr::V6(r) => r.payload_len = len,
        }
    }
    pub fn set_protocol(&mut self, protocol: u8) {
        match self {
            IpRepr::V4(r) => r.protocol = protocol,
            IpRepr::V6(r) => r.next_header = protocol,
        }
    }
    pub fn set_ecn(&mut self, ecn: Ecn) {
        match self {
            IpRepr::V4(r) => r.ecn = ecn,
            IpRepr::V6(r) => r.ecn = ecn,
        }
    }

    /// Parses either version by the version nibble, returning the payload.
    pub fn parse(buf: &[u8]) -> Result<(IpRepr, &[u8]), ParseError> {
        match buf.first().map(|b| b >> 4) {
            None => Err(ParseError::Truncated),
            Some(4) => Ipv4Repr::parse(buf).map(|(r, p)| (IpRepr::V4(r), p)),
            Some(6) => Ipv6Repr::parse(buf).map(|(r, p)| (IpRepr::V6(r), p)),
            Some(v) => Err(ParseError::BadVersion(v)),
        }
    }

    /// Appends the header (with checksum, for IPv4).
    pub fn emit(&self, out: &mut Vec<u8>) {
        match self {
            IpRepr::V4(r) => r.emit(out),
            IpRepr::V6(r) => r.emit(out),
        }
    }

    /// Pseudo-header sum for an upper-layer segment of `len` bytes and `protocol`.
    pub fn pseudo_header(&self, protocol: u8, len: usize) -> Accumulator {
        match self {
            // Segments never exceed the 16-bit length fields; saturate rather than wrap.
            IpRepr::V4(r) => checksum::pseudo_header_v4(
                r.src,
                r.dst,
                protocol,
                u16::try_from(len).unwrap_or(u16::MAX),
            ),
            IpRepr::V6(r) => checksum::pseudo_header_v6(
                r.src,
                r.dst,
                protocol,
                u32::try_from(len).unwrap_or(u32::MAX),
            ),
        }
    }
}

/// Big-endian u16 at `at`; callers have checked the length.
fn be16(buf: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([buf[at], buf[at + 1]])
}

/// Big-endian u32 at `at`; callers have checked the length.
fn be32(buf: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_v4() -> Ipv4Repr {
        Ipv4Repr {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            protocol: IPPROTO_TCP,
            dscp: 46,
            ecn: Ecn::Ect0,
            ttl: 64,
            ident: 0x1234,
            dont_frag: true,
            payload_len: 4,
        }
    }

    fn emitted_v4() -> Vec<u8> {
        let mut out = Vec::new();
        sample_v4().emit(&mut out);
        out.extend_from_slice(&[1, 2, 3, 4]);
        out
    }

    #[test]
    fn ipv4_emit_writes_expected_bytes() {
        let out = emitted_v4();
        let mut expected = vec![
            0x45, 0xba, 0x00, 0x18, 0x12, 0x34, 0x40, 0x00, 0x40, 0x06, 0, 0, 10, 0, 0, 1, 10, 0,
            0, 2,
        ];
        let c = checksum::checksum(&expected);
        expected[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(&out[..20], &expected[..]);
    }

    #[test]
    fn ipv4_parse_inverts_emit_and_ignores_padding() {
        let mut out = emitted_v4();
        out.extend_from_slice(&[0xee; 6]); // Ethernet padding
        let (repr, payload) = Ipv4Repr::parse(&out).unwrap();
        assert_eq!(repr, sample_v4());
        assert_eq!(payload, &[1, 2, 3, 4]);
    }

    #[test]
    fn ipv4_parse_skips_options() {
        let mut pkt = vec![
            0x46, 0, 0, 26, 0, 0, 0, 0, 64, 6, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 1, 1, 0, 0xaa, 0xbb,
        ];
        fix_checksum(&mut pkt, 24);
        let (repr, payload) = Ipv4Repr::parse(&pkt).unwrap();
        assert_eq!(repr.payload_len, 2);
        assert_eq!(payload, &[0xaa, 0xbb]);
    }

    /// Recomputes the checksum of the first `len` header bytes after a test edits them.
    fn fix_checksum(pkt: &mut [u8], len: usize) {
        pkt[10..12].copy_from_slice(&[0, 0]);
        let c = checksum::checksum(&pkt[..len]);
        pkt[10..12].copy_from_slice(&c.to_be_bytes());
    }

    #[test]
    fn ipv4_rejects_fragments() {
        for flags_frag in [0x2000u16, 0x0001, 0x4010] {
            let mut pkt = emitted_v4();
            pkt[6..8].copy_from_slice(&flags_frag.to_be_bytes());
            fix_checksum(&mut pkt, 20);
            assert_eq!(Ipv4Repr::parse(&pkt), Err(ParseError::Fragment));
        }
    }

    #[test]
    fn ipv4_rejects_bad_lengths() {
        let mut pkt = emitted_v4();
        pkt[0] = 0x44;
        assert_eq!(Ipv4Repr::parse(&pkt), Err(ParseError::BadIpLength));
        let mut pkt = emitted_v4();
        pkt[2..4].copy_from_slice(&19u16.to_be_bytes());
        fix_checksum(&mut pkt, 20);
        assert_eq!(Ipv4Repr::parse(&pkt), Err(ParseError::BadIpLength));
        let mut pkt = emitted_v4();
        pkt[2..4].copy_from_slice(&25u16.to_be_bytes());
        fix_checksum(&mut pkt, 20);
        assert_eq!(Ipv4Repr::parse(&pkt), Err(ParseError::Truncated));
        let mut pkt = emitted_v4();
        pkt[0] = 0x4f; // 60-byte header in a 24-byte buffer
        assert_eq!(Ipv4Repr::parse(&pkt), Err(ParseError::Truncated));
    }

    #[test]
    fn ipv4_bit_flip_in_header_fails_checksum() {
        let good = emitted_v4();
        // Byte 0 (version/IHL) changes the framing and is reported as such.
        for byte in 1..20 {
            for bit in 0..8 {
                let mut pkt = good.clone();
                pkt[byte] ^= 1 << bit;
                assert_eq!(
                    Ipv4Repr::parse(&pkt),
                    Err(ParseError::BadIpChecksum),
                    "byte {byte} bit {bit}"
                );
            }
        }
    }

    #[test]
    fn ipv6_round_trips() {
        let repr = Ipv6Repr {
            src: "2001:db8::1".parse().unwrap(),
            dst: "2001:db8::2".parse().unwrap(),
            next_header: IPPROTO_TCP,
            dscp: 10,
            ecn: Ecn::Ect1,
            flow_label: 0xabcde,
            hop_limit: 3,
            payload_len: 2,
        };
        let mut out = Vec::new();
        repr.emit(&mut out);
        // Version 6, traffic class 0x29 (DSCP 10, ECT(1)), flow label abcde.
        assert_eq!(&out[..4], &[0x62, 0x9a, 0xbc, 0xde]);
        out.extend_from_slice(&[9, 9, 0]);
        let (ip, payload) = IpRepr::parse(&out).unwrap();
        assert_eq!(ip, IpRepr::V6(repr));
        assert_eq!(payload, &[9, 9]);
        assert_eq!(ip.header_len(), 40);
    }

    #[test]
    fn unknown_version_is_reported() {
        assert_eq!(IpRepr::parse(&[0x50; 40]), Err(ParseError::BadVersion(5)));
        assert_eq!(IpRepr::parse(&[]), Err(ParseError::Truncated));
    }
}
