//! TUN offloads (`IFF_VNET_HDR` + `TUNSETOFFLOAD`): every read and write carries a
//! `struct virtio_net_hdr` (10 bytes, `include/uapi/linux/virtio_net.h`), and the
//! kernel may hand over TCP super-packets of up to 64 KB (TSO) whose checksum it left
//! for us (`VIRTIO_NET_HDR_F_NEEDS_CSUM`).
//!
//! The link model stays per packet, so [`Segmenter`] cuts a super-packet into the
//! MSS-sized IP packets the sender's NIC would have put on the wire, as Linux's
//! `tcp_gso_segment` / `inet_gso_segment` / `ipv6_gso_segment` do: every segment gets
//! the original headers with its own IP total/payload length, IPv4 id (+1 per segment,
//! as `inet_gso_segment` does unless the id is fixed), TCP sequence number, and flags
//! (CWR only on the first segment, FIN and PSH only on the last), and fresh IPv4 header
//! and TCP checksums. A packet that only needs its checksum is completed as
//! `skb_checksum_help` does: the ones'-complement sum from `csum_start` to the end
//! (whose checksum field already holds the pseudo-header sum), folded and stored at
//! `csum_start + csum_offset`. Writes get a zero header (no GSO, no checksum hint: the
//! receiving kernel verifies checksums itself, so the corruption model stays honest).
//!
//! Nothing here allocates: the segmenter reads from the device's scratch buffer and
//! writes into the caller's buffer.

use brisk_wire::checksum::{pseudo_header_v4, pseudo_header_v6, Accumulator};
use std::net::{Ipv4Addr, Ipv6Addr};

/// `sizeof(struct virtio_net_hdr)`, the TUN default (`TUNSETVNETHDRSZ` not used).
pub const VNET_HDR_LEN: usize = 10;
/// `VIRTIO_NET_HDR_F_NEEDS_CSUM`.
pub const F_NEEDS_CSUM: u8 = 1;
pub const GSO_NONE: u8 = 0;
pub const GSO_TCPV4: u8 = 1;
pub const GSO_UDP: u8 = 3;
pub const GSO_TCPV6: u8 = 4;
/// `VIRTIO_NET_HDR_GSO_ECN` (the sender set CWR somewhere in the burst).
pub const GSO_ECN: u8 = 0x80;
/// A zero header: one plain packet, checksums complete.
pub const ZERO_HDR: [u8; VNET_HDR_LEN] = [0; VNET_HDR_LEN];
/// Largest packet a read can return: 64 KB of IP plus the header.
pub const MAX_READ: usize = VNET_HDR_LEN + 65_535;

const TCP_FIN: u8 = 0x01;
const TCP_PSH: u8 = 0x08;
const TCP_CWR: u8 = 0x80;
const IPPROTO_TCP: u8 = 6;

/// A parsed `virtio_net_hdr` (little-endian fields, as TUN uses by default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    pub hdr_len: u16,
    pub gso_size: u16,
    pub csum_start: u16,
    pub csum_offset: u16,
}

impl VnetHdr {
    pub fn parse(b: &[u8]) -> Option<VnetHdr> {
        let b: &[u8; VNET_HDR_LEN] = b.get(..VNET_HDR_LEN)?.try_into().ok()?;
        let u = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        Some(VnetHdr {
            flags: b[0],
            gso_type: b[1],
            hdr_len: u(2),
            gso_size: u(4),
            csum_start: u(6),
            csum_offset: u(8),
        })
    }

    pub fn emit(&self) -> [u8; VNET_HDR_LEN] {
        let mut b = [0u8; VNET_HDR_LEN];
        b[0] = self.flags;
        b[1] = self.gso_type;
        b[2..4].copy_from_slice(&self.hdr_len.to_le_bytes());
        b[4..6].copy_from_slice(&self.gso_size.to_le_bytes());
        b[6..8].copy_from_slice(&self.csum_start.to_le_bytes());
        b[8..10].copy_from_slice(&self.csum_offset.to_le_bytes());
        b
    }
}

/// Why a packet read with a virtio header could not be used (it is dropped and
/// counted as a read error; never a panic).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VnetError {
    Short,
    BadGso,
    BadCsum,
}

/// Completes a `NEEDS_CSUM` packet in place (`skb_checksum_help`).
pub fn complete_checksum(pkt: &mut [u8], start: usize, offset: usize) -> Result<(), VnetError> {
    let field = start.checked_add(offset).ok_or(VnetError::BadCsum)?;
    if start >= pkt.len() || field + 2 > pkt.len() {
        return Err(VnetError::BadCsum);
    }
    let mut acc = Accumulator::new();
    acc.add_bytes(&pkt[start..]);
    let mut c = acc.checksum();
    // A UDP checksum of 0 means "none"; the folded value 0 goes out as 0xffff
    // (RFC 768; Linux's CSUM_MANGLED_0).
    if c == 0 && ip_protocol(pkt) == Some(17) {
        c = 0xffff;
    }
    pkt[field..field + 2].copy_from_slice(&c.to_be_bytes());
    Ok(())
}

fn ip_protocol(pkt: &[u8]) -> Option<u8> {
    match pkt.first()? >> 4 {
        4 => pkt.get(9).copied(),
        6 => pkt.get(6).copied(),
        _ => None,
    }
}

/// Cuts one TCP super-packet into MSS-sized segments, one per [`Segmenter::next`].
#[derive(Clone, Debug, Default)]
pub struct Segmenter {
    /// IP header length (IPv4 with options, IPv6 without extension headers).
    ip_len: usize,
    /// IP + TCP header length.
    hdr_len: usize,
    mss: usize,
    v6: bool,
    /// Payload offset of the next segment; `total` when done.
    next: usize,
    total: usize,
    index: u32,
}

impl Segmenter {
    /// Checks `pkt` (IP header first) against `hdr` and prepares to segment it. A
    /// packet without GSO, or one that fits one segment, yields itself (checksum
    /// completed as for any segment).
    pub fn start(pkt: &[u8], hdr: &VnetHdr) -> Result<Segmenter, VnetError> {
        let v6 = match pkt.first().map(|b| b >> 4) {
            Some(4) => false,
            Some(6) => true,
            _ => return Err(VnetError::Short),
        };
        let want = if v6 { GSO_TCPV6 } else { GSO_TCPV4 };
        if hdr.gso_type & !GSO_ECN != want {
            return Err(VnetError::BadGso);
        }
        let (ip_len, proto) = if v6 {
            (40, *pkt.get(6).ok_or(VnetError::Short)?)
        } else {
            (
                usize::from(pkt[0] & 0x0f) * 4,
                *pkt.get(9).ok_or(VnetError::Short)?,
            )
        };
        if proto != IPPROTO_TCP || ip_len < 20 || pkt.len() < ip_len + 20 {
            return Err(VnetError::BadGso);
        }
        let tcp_len = usize::from(pkt[ip_len + 12] >> 4) * 4;
        let hdr_len = ip_len + tcp_len;
        let mss = usize::from(hdr.gso_size);
        if tcp_len < 20 || pkt.len() < hdr_len || mss == 0 {
            return Err(VnetError::BadGso);
        }
        Ok(Segmenter {
            ip_len,
            hdr_len,
            mss,
            v6,
            next: 0,
            total: pkt.len() - hdr_len,
            index: 0,
        })
    }

    /// Whether segments remain.
    pub fn pending(&self) -> bool {
        self.next < self.total
    }

    /// Writes the next segment of `pkt` (the same bytes given to `start`) into `out`
    /// (cleared first). `false` when every segment has been written.
    pub fn next(&mut self, pkt: &[u8], out: &mut Vec<u8>) -> bool {
        if !self.pending() {
            return false;
        }
        let (h, ip) = (self.hdr_len, self.ip_len);
        let end = (self.next + self.mss).min(self.total);
        out.clear();
        out.extend_from_slice(&pkt[..h]);
        out.extend_from_slice(&pkt[h + self.next..h + end]);
        let first = self.index == 0;
        let last = end == self.total;
        let seg_len = out.len();
        if self.v6 {
            let plen = (seg_len - 40) as u16;
            out[4..6].copy_from_slice(&plen.to_be_bytes());
        } else {
            out[2..4].copy_from_slice(&(seg_len as u16).to_be_bytes());
            let id = u16::from_be_bytes([out[4], out[5]]).wrapping_add(self.index as u16);
            out[4..6].copy_from_slice(&id.to_be_bytes());
            out[10..12].copy_from_slice(&[0, 0]);
            let mut acc = Accumulator::new();
            acc.add_bytes(&out[..ip]);
            let c = acc.checksum();
            out[10..12].copy_from_slice(&c.to_be_bytes());
        }
        let t = ip;
        let seq = u32::from_be_bytes([out[t + 4], out[t + 5], out[t + 6], out[t + 7]])
            .wrapping_add(self.next as u32);
        out[t + 4..t + 8].copy_from_slice(&seq.to_be_bytes());
        let mut flags = out[t + 13];
        if !first {
            flags &= !TCP_CWR;
        }
        if !last {
            flags &= !(TCP_FIN | TCP_PSH);
        }
        out[t + 13] = flags;
        out[t + 16..t + 18].copy_from_slice(&[0, 0]);
        let tcp_len = seg_len - ip;
        let mut acc = if self.v6 {
            let a: [u8; 16] = out[8..24].try_into().unwrap_or_default();
            let b: [u8; 16] = out[24..40].try_into().unwrap_or_default();
            pseudo_header_v6(
                Ipv6Addr::from(a),
                Ipv6Addr::from(b),
                IPPROTO_TCP,
                tcp_len as u32,
            )
        } else {
            let a = Ipv4Addr::new(out[12], out[13], out[14], out[15]);
            let b = Ipv4Addr::new(out[16], out[17], out[18], out[19]);
            pseudo_header_v4(a, b, IPPROTO_TCP, tcp_len as u16)
        };
        acc.add_bytes(&out[t..]);
        let c = acc.checksum();
        out[t + 16..t + 18].copy_from_slice(&c.to_be_bytes());
        self.next = end;
        self.index += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_wire::ip::{Ecn, IpRepr, Ipv4Repr, Ipv6Repr};
    use brisk_wire::packet::{emit_tcp_packet, parse_tcp_packet};
    use brisk_wire::seq::SeqNum;
    use brisk_wire::tcp::{Flags, TcpRepr, Timestamps};

    const MSS: usize = 1448;

    /// A super-packet as the kernel hands it over with TSO: one header, a large
    /// payload, checksum left partial.
    fn superpacket(v6: bool, payload: &[u8], flags: Flags) -> Vec<u8> {
        let ip = if v6 {
            IpRepr::V6(Ipv6Repr {
                src: "2001:db8:18::1".parse().unwrap(),
                dst: "2001:db8:18::2".parse().unwrap(),
                next_header: 6,
                dscp: 0,
                ecn: Ecn::NotEct,
                flow_label: 0,
                hop_limit: 64,
                payload_len: 0,
            })
        } else {
            IpRepr::V4(Ipv4Repr {
                src: Ipv4Addr::new(198, 18, 0, 1),
                dst: Ipv4Addr::new(198, 18, 0, 2),
                protocol: 6,
                dscp: 0,
                ecn: Ecn::NotEct,
                ttl: 64,
                ident: 0x1234,
                dont_frag: true,
                payload_len: 0,
            })
        };
        let tcp = TcpRepr {
            src_port: 40000,
            dst_port: 5201,
            seq: SeqNum(0xffff_f000), // wraps inside the burst
            ack: SeqNum(77),
            flags,
            window: 500,
            timestamps: Some(Timestamps { tsval: 1, tsecr: 2 }),
            payload,
            ..TcpRepr::default()
        };
        let mut out = Vec::new();
        // emit_tcp_packet caps nothing, so a 64 KB payload fits in IP's 16-bit length.
        emit_tcp_packet(&ip, &tcp, &mut out);
        out
    }

    fn segments(pkt: &[u8], v6: bool) -> Vec<Vec<u8>> {
        let hdr = VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: if v6 { GSO_TCPV6 } else { GSO_TCPV4 },
            gso_size: MSS as u16,
            ..VnetHdr::default()
        };
        let mut s = Segmenter::start(pkt, &hdr).unwrap();
        let mut out = Vec::new();
        let mut buf = Vec::new();
        while s.next(pkt, &mut buf) {
            out.push(buf.clone());
        }
        assert!(!s.pending());
        out
    }

    #[test]
    fn segments_carry_their_own_seq_lengths_ids_flags_and_checksums() {
        for v6 in [false, true] {
            let payload: Vec<u8> = (0..10 * MSS + 100).map(|i| (i * 7) as u8).collect();
            let flags = Flags::ACK | Flags::PSH | Flags::FIN | Flags::CWR;
            let sp = superpacket(v6, &payload, flags);
            let segs = segments(&sp, v6);
            assert_eq!(segs.len(), 11);
            let mut joined = Vec::new();
            for (i, s) in segs.iter().enumerate() {
                // brisk-wire verifies the IPv4 header checksum and the TCP checksum.
                let (ip, tcp) = parse_tcp_packet(s).expect("segment parses");
                assert_eq!(ip.payload_len(), s.len() - ip.header_len());
                if let IpRepr::V4(v4) = ip {
                    assert_eq!(v4.ident, 0x1234u16.wrapping_add(i as u16));
                }
                assert_eq!(
                    tcp.seq,
                    SeqNum(0xffff_f000u32.wrapping_add((i * MSS) as u32))
                );
                assert_eq!(tcp.ack, SeqNum(77));
                assert_eq!(tcp.timestamps, Some(Timestamps { tsval: 1, tsecr: 2 }));
                let last = i == segs.len() - 1;
                assert_eq!(tcp.payload.len(), if last { 100 } else { MSS });
                assert_eq!(tcp.flags.contains(Flags::FIN), last, "FIN on {i}");
                assert_eq!(tcp.flags.contains(Flags::PSH), last, "PSH on {i}");
                assert_eq!(tcp.flags.contains(Flags::CWR), i == 0, "CWR on {i}");
                assert!(tcp.flags.contains(Flags::ACK));
                joined.extend_from_slice(tcp.payload);
            }
            assert_eq!(joined, payload);
        }
    }

    #[test]
    fn an_exact_multiple_and_a_single_segment() {
        let payload = vec![9u8; 2 * MSS];
        let segs = segments(&superpacket(false, &payload, Flags::ACK), false);
        assert_eq!(segs.len(), 2);
        assert!(segs
            .iter()
            .all(|s| parse_tcp_packet(s).unwrap().1.payload.len() == MSS));
        let one = segments(
            &superpacket(false, &[1, 2, 3], Flags::ACK | Flags::PSH),
            false,
        );
        assert_eq!(one.len(), 1);
        assert!(parse_tcp_packet(&one[0])
            .unwrap()
            .1
            .flags
            .contains(Flags::PSH));
    }

    #[test]
    fn needs_csum_is_completed_like_skb_checksum_help() {
        let good = superpacket(false, b"hello world", Flags::ACK);
        // What the kernel hands over: the TCP field holds the pseudo-header sum only.
        let mut partial = good.clone();
        let tcp_len = (good.len() - 20) as u16;
        let ph = pseudo_header_v4(
            Ipv4Addr::new(198, 18, 0, 1),
            Ipv4Addr::new(198, 18, 0, 2),
            6,
            tcp_len,
        );
        partial[36..38].copy_from_slice(&ph.sum().to_be_bytes());
        assert!(parse_tcp_packet(&partial).is_err());
        complete_checksum(&mut partial, 20, 16).unwrap();
        assert_eq!(partial, good);
        assert_eq!(
            complete_checksum(&mut partial, 20, 100),
            Err(VnetError::BadCsum)
        );
        assert_eq!(
            complete_checksum(&mut partial, usize::MAX, 16),
            Err(VnetError::BadCsum)
        );
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let hdr = VnetHdr {
            gso_type: GSO_TCPV4,
            gso_size: 1448,
            ..VnetHdr::default()
        };
        for pkt in [&[][..], &[0x45][..], &[0x45; 30][..], &[0x60; 41][..]] {
            assert!(Segmenter::start(pkt, &hdr).is_err());
        }
        let sp = superpacket(false, &[0; 3000], Flags::ACK);
        let zero = VnetHdr { gso_size: 0, ..hdr };
        assert_eq!(Segmenter::start(&sp, &zero).unwrap_err(), VnetError::BadGso);
        let udp = VnetHdr {
            gso_type: GSO_UDP,
            ..hdr
        };
        assert_eq!(Segmenter::start(&sp, &udp).unwrap_err(), VnetError::BadGso);
        assert_eq!(VnetHdr::parse(&[0; 9]), None);
        let h = VnetHdr {
            flags: 1,
            gso_type: 4,
            hdr_len: 66,
            gso_size: 1448,
            csum_start: 40,
            csum_offset: 16,
        };
        assert_eq!(VnetHdr::parse(&h.emit()), Some(h));
    }
}
