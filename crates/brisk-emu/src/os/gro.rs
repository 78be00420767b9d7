//! Egress coalescing: consecutive TCP packets that are due at a TUN together are
//! written as one super-packet, the way Linux's GRO would have merged them on a NIC's
//! receive path. One write then runs the receiving kernel's TCP receive path once per
//! super-packet instead of once per 1500-byte packet (perf showed that path, inside
//! `tun_get_user`, to be a third of all CPU time with plain writes).
//!
//! [`Run`] mirrors the merge decisions of `tcp_gro_receive` (net/ipv4/tcp_offload.c),
//! with the network-layer checks of `inet_gro_receive` (net/ipv4/af_inet.c) and
//! `ipv6_gro_receive` (net/ipv6/ip6_offload.c), and [`Run::finish`] mirrors
//! `tcp4_gro_complete` / `tcp6_gro_complete` (the merged header, GSO type with ECN
//! when the first segment had CWR). A packet joins the run when:
//! * same addresses, ports and protocol (GRO's flow lookup); IPv4 without options or
//!   fragmentation (`inet_gro_receive` wants `0x45`), IPv6 with TCP directly after
//!   the fixed header;
//! * IPv4: same TOS (so any ECN change, e.g. a CE mark, ends the run), TTL and DF,
//!   and the IP id one more than the previous member's (the segmenter restores ids
//!   that way; GRO's fixed-id variant cannot be expressed in a `virtio_net_hdr`).
//!   IPv6: same traffic class, flow label and hop limit;
//! * its sequence number follows the run's last byte, and its ack number, window,
//!   data offset, options and flags equal the first member's (`tcp_flag_word` ^
//!   masked by CWR, FIN, PSH), and it has no CWR (a CWR packet only heads a run);
//! * it carries data, no more than the first member (the run's MSS); a shorter one,
//!   or one with PSH or FIN, is the last (GRO's final flush); a packet with SYN, RST
//!   or URG never joins nor heads a run;
//! * its IPv4 header checksum and TCP checksum verify (`skb_gro_checksum_validate`):
//!   a packet the path corrupted goes out alone, so the receiving kernel still sees
//!   the bad checksum and drops it. The TCP checksum pass is skipped for a packet
//!   whose checksum the emulator itself computed when it cut it out of a super-packet
//!   and whose bytes nothing changed since (`Packet::l4_csum_valid`, which the
//!   corruption model clears through `Packet::data_mut`): `start_with`/`push_with`;
//! * the run stays within 64 KB of IP (`gro_max_size`) and [`MAX_RUN`] segments.
//!
//! The super-packet carries `VIRTIO_NET_HDR_F_NEEDS_CSUM` with the TCP checksum field
//! holding the pseudo-header sum, as a TSO sender hands it over: the kernel marks it
//! `CHECKSUM_PARTIAL`, which local delivery accepts without summing 64 KB again. That
//! is sound because every member's checksum was verified here first; a fully summed
//! super-packet would cost a second pass over the bytes for nothing. Splitting the
//! result with [`crate::os::vnet::Segmenter`] gives back the original packets byte
//! for byte (the tests check this), so nothing the path did to a packet is lost.
//!
//! Nothing here allocates: a run is a fixed-size copy of the first header plus
//! counters; the payloads are written straight from the packets' own buffers.

use brisk_wire::checksum::{pseudo_header_v4, pseudo_header_v6, Accumulator};
use std::net::{Ipv4Addr, Ipv6Addr};

use crate::os::vnet::{VnetHdr, F_NEEDS_CSUM, GSO_ECN, GSO_TCPV4, GSO_TCPV6};

/// Most packets in one super-packet (the writer's iovec array is sized by it; Linux
/// GRO stops at 64 KB, which 1448-byte segments reach at 45).
pub const MAX_RUN: usize = 64;
/// Largest IP packet a run may grow to (IPv4 total length / IPv6 payload length are
/// 16 bits; `gro_max_size` defaults to 64 KB).
const MAX_IP: usize = 65_535;
/// IPv6 header plus the largest TCP header.
const MAX_HDR: usize = 40 + 60;

const TCP_FIN: u8 = 0x01;
const TCP_SYN: u8 = 0x02;
const TCP_RST: u8 = 0x04;
const TCP_PSH: u8 = 0x08;
const TCP_URG: u8 = 0x20;
const TCP_CWR: u8 = 0x80;

/// The headers of one TCP packet, checked well-formed.
struct Parsed {
    v6: bool,
    ip_len: usize,
    hdr_len: usize,
}

/// Parses `pkt` as a GRO candidate: IPv4 without options or fragments, or IPv6 with
/// TCP as next header; exact IP length; IP and TCP checksums verify. `None` otherwise.
/// `tcp_csum_valid`: the TCP checksum is known good (the emulator computed it when it
/// cut the packet out of a super-packet, and nothing changed the bytes since:
/// `Packet::l4_csum_valid`, Linux's `CHECKSUM_UNNECESSARY`), so the pass over the
/// payload is skipped, as `skb_gro_checksum_validate` skips it for such an skb.
fn parse(pkt: &[u8], tcp_csum_valid: bool) -> Option<Parsed> {
    let v6 = match pkt.first()? {
        0x45 => false,
        b if b >> 4 == 6 => true,
        _ => return None,
    };
    let ip_len = if v6 { 40 } else { 20 };
    if pkt.len() < ip_len + 20 {
        return None;
    }
    if v6 {
        let plen = usize::from(u16::from_be_bytes([pkt[4], pkt[5]]));
        if pkt[6] != 6 || plen + 40 != pkt.len() {
            return None;
        }
    } else {
        let tot = usize::from(u16::from_be_bytes([pkt[2], pkt[3]]));
        // MF or a fragment offset: `ip_is_fragment`, which GRO leaves alone.
        let frag = u16::from_be_bytes([pkt[6], pkt[7]]) & 0x3fff;
        if pkt[9] != 6 || tot != pkt.len() || frag != 0 {
            return None;
        }
        let mut acc = Accumulator::new();
        acc.add_bytes(&pkt[..20]);
        if !acc.verifies() {
            return None;
        }
    }
    let tcp_len = usize::from(pkt[ip_len + 12] >> 4) * 4;
    let hdr_len = ip_len + tcp_len;
    if tcp_len < 20 || pkt.len() < hdr_len {
        return None;
    }
    if tcp_csum_valid {
        return Some(Parsed {
            v6,
            ip_len,
            hdr_len,
        });
    }
    let seg_len = pkt.len() - ip_len;
    let mut acc = if v6 {
        let s: [u8; 16] = pkt[8..24].try_into().ok()?;
        let d: [u8; 16] = pkt[24..40].try_into().ok()?;
        pseudo_header_v6(Ipv6Addr::from(s), Ipv6Addr::from(d), 6, seg_len as u32)
    } else {
        let s = Ipv4Addr::new(pkt[12], pkt[13], pkt[14], pkt[15]);
        let d = Ipv4Addr::new(pkt[16], pkt[17], pkt[18], pkt[19]);
        pseudo_header_v4(s, d, 6, seg_len as u16)
    };
    acc.add_bytes(&pkt[ip_len..]);
    if !acc.verifies() {
        return None;
    }
    Some(Parsed {
        v6,
        ip_len,
        hdr_len,
    })
}

/// A run of packets being merged; see the module docs.
#[derive(Clone, Debug)]
pub struct Run {
    /// The first member's IP and TCP headers.
    head: [u8; MAX_HDR],
    v6: bool,
    ip_len: usize,
    hdr_len: usize,
    /// The first member's payload length: the super-packet's `gso_size`.
    mss: usize,
    count: usize,
    payload: usize,
    /// Sequence number the next member must carry.
    next_seq: u32,
    /// FIN/PSH of the last member (GRO ors them into the merged header).
    last_flags: u8,
    /// A member ended the run (shorter than the MSS, or PSH/FIN): `tcp_gro_receive`'s
    /// final flush.
    closed: bool,
}

impl Run {
    /// Starts a run with `pkt`, or `None` when it cannot head one (not TCP, no data,
    /// SYN/RST/URG, a bad checksum, IP options or extension headers): such a packet
    /// goes out alone.
    pub fn start(pkt: &[u8]) -> Option<Run> {
        Run::start_with(pkt, false)
    }

    /// [`Run::start`] for a packet whose TCP checksum is known good (`csum_valid`,
    /// see [`parse`]): no pass over its payload.
    pub fn start_with(pkt: &[u8], csum_valid: bool) -> Option<Run> {
        let p = parse(pkt, csum_valid)?;
        let t = p.ip_len;
        let flags = pkt[t + 13];
        let mss = pkt.len() - p.hdr_len;
        if mss == 0 || flags & (TCP_SYN | TCP_RST | TCP_URG) != 0 {
            return None;
        }
        let mut head = [0u8; MAX_HDR];
        head[..p.hdr_len].copy_from_slice(&pkt[..p.hdr_len]);
        Some(Run {
            head,
            v6: p.v6,
            ip_len: p.ip_len,
            hdr_len: p.hdr_len,
            mss,
            count: 1,
            payload: mss,
            next_seq: seq(pkt, t).wrapping_add(mss as u32),
            last_flags: flags & (TCP_FIN | TCP_PSH),
            closed: flags & (TCP_FIN | TCP_PSH) != 0,
        })
    }

    /// Members so far.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Length of the merged IP and TCP headers (the payload of every member starts
    /// at this offset).
    pub fn hdr_len(&self) -> usize {
        self.hdr_len
    }

    /// Adds `pkt` if `tcp_gro_receive` would merge it; `false` leaves the run as it
    /// was (the packet then heads the next run or goes alone).
    pub fn push(&mut self, pkt: &[u8]) -> bool {
        self.push_with(pkt, false)
    }

    /// [`Run::push`] for a packet whose TCP checksum is known good (`csum_valid`, see
    /// [`parse`]): no pass over its payload.
    pub fn push_with(&mut self, pkt: &[u8], csum_valid: bool) -> bool {
        if self.closed || self.count >= MAX_RUN {
            return false;
        }
        let (h, t) = (self.hdr_len, self.ip_len);
        if pkt.len() <= h {
            return false;
        }
        let len = pkt.len() - h;
        if len > self.mss || h + self.payload + len > MAX_IP + if self.v6 { 40 } else { 0 } {
            return false;
        }
        // Cheap header comparisons before the checksum pass.
        let head = &self.head[..h];
        let same_ip = if self.v6 {
            // Version, traffic class, flow label; next header, hop limit; addresses.
            head[..4] == pkt[..4] && head[6..40] == pkt[6..40]
        } else {
            let id = u16::from_be_bytes([head[4], head[5]]).wrapping_add(self.count as u16);
            // Version/IHL and TOS; DF/fragment, TTL, protocol; addresses; the id.
            head[..2] == pkt[..2]
                && head[6..10] == pkt[6..10]
                && head[12..20] == pkt[12..20]
                && pkt[4..6] == id.to_be_bytes()
        };
        if !same_ip || pkt.first() != head.first() {
            return false;
        }
        // Same doff/window (the flag word) and flags but CWR/FIN/PSH; ports; ack;
        // options.
        let flags = pkt[t + 13];
        let same_tcp = head[t..t + 4] == pkt[t..t + 4]
            && head[t + 8..t + 13] == pkt[t + 8..t + 13]
            && (head[t + 13] ^ flags) & !(TCP_CWR | TCP_FIN | TCP_PSH) == 0
            && head[t + 14..t + 16] == pkt[t + 14..t + 16]
            && head[t + 20..h] == pkt[t + 20..h];
        if !same_tcp || flags & TCP_CWR != 0 || seq(pkt, t) != self.next_seq {
            return false;
        }
        if parse(pkt, csum_valid).is_none_or(|p| p.hdr_len != h) {
            return false;
        }
        self.count += 1;
        self.payload += len;
        self.next_seq = self.next_seq.wrapping_add(len as u32);
        self.last_flags = flags & (TCP_FIN | TCP_PSH);
        self.closed = len < self.mss || self.last_flags != 0;
        true
    }

    /// The virtio header and merged IP+TCP header of the run (`tcp4_gro_complete` /
    /// `tcp6_gro_complete`): total length of all members, fresh IPv4 header checksum,
    /// the last member's FIN/PSH, and the TCP checksum field set to the pseudo-header
    /// sum with `NEEDS_CSUM` (see the module docs for why). The payloads follow the
    /// header in member order.
    pub fn finish(&mut self) -> (VnetHdr, &[u8]) {
        let (h, t) = (self.hdr_len, self.ip_len);
        let head = &mut self.head[..h];
        let total = h + self.payload;
        let tcp_len = total - t;
        let acc = if self.v6 {
            head[4..6].copy_from_slice(&((total - 40) as u16).to_be_bytes());
            let s: [u8; 16] = head[8..24].try_into().unwrap_or_default();
            let d: [u8; 16] = head[24..40].try_into().unwrap_or_default();
            pseudo_header_v6(Ipv6Addr::from(s), Ipv6Addr::from(d), 6, tcp_len as u32)
        } else {
            head[2..4].copy_from_slice(&(total as u16).to_be_bytes());
            head[10..12].copy_from_slice(&[0, 0]);
            let mut ip = Accumulator::new();
            ip.add_bytes(&head[..20]);
            head[10..12].copy_from_slice(&ip.checksum().to_be_bytes());
            let s = Ipv4Addr::new(head[12], head[13], head[14], head[15]);
            let d = Ipv4Addr::new(head[16], head[17], head[18], head[19]);
            pseudo_header_v4(s, d, 6, tcp_len as u16)
        };
        head[t + 13] |= self.last_flags;
        // NEEDS_CSUM: the field holds the folded pseudo-header sum, not its
        // complement, as `tcp_v4_send_check` leaves it for a checksum offload.
        head[t + 16..t + 18].copy_from_slice(&acc.sum().to_be_bytes());
        (self.vnet_hdr(), &self.head[..h])
    }

    fn vnet_hdr(&self) -> VnetHdr {
        let cwr = self.head[self.ip_len + 13] & TCP_CWR != 0;
        VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: if self.v6 { GSO_TCPV6 } else { GSO_TCPV4 } | if cwr { GSO_ECN } else { 0 },
            hdr_len: self.hdr_len as u16,
            gso_size: self.mss as u16,
            csum_start: self.ip_len as u16,
            csum_offset: 16,
        }
    }
}

/// A cheap first look (no checksum, no run): whether `pkt` could head a run at all,
/// i.e. is TCP over plain IPv4 or IPv6 with payload and without SYN, RST or URG.
/// A pure ACK cannot, so the loop writes it at once instead of holding it for a
/// burst it will never join.
pub fn may_merge(pkt: &[u8]) -> bool {
    let (t, total) = match pkt.first() {
        Some(0x45) if pkt.get(9) == Some(&6) => (20, pkt.len()),
        Some(b) if b >> 4 == 6 && pkt.get(6) == Some(&6) => (40, pkt.len()),
        _ => return false,
    };
    let (Some(off), Some(flags)) = (pkt.get(t + 12), pkt.get(t + 13)) else {
        return false;
    };
    total > t + usize::from(off >> 4) * 4 && flags & (TCP_SYN | TCP_RST | TCP_URG) == 0
}

fn seq(pkt: &[u8], t: usize) -> u32 {
    u32::from_be_bytes([pkt[t + 4], pkt[t + 5], pkt[t + 6], pkt[t + 7]])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::vnet::{complete_checksum, Segmenter};
    use brisk_wire::ip::{Ecn, IpRepr, Ipv4Repr, Ipv6Repr};
    use brisk_wire::packet::{emit_tcp_packet, parse_tcp_packet};
    use brisk_wire::seq::SeqNum;
    use brisk_wire::tcp::{Flags, TcpRepr, Timestamps};
    use proptest::prelude::*;

    /// What a kernel's TSO would put on the wire: `lens` payload sizes in sequence
    /// from `seq0`, ids counting up, `first`/`last` flags on the ends.
    fn burst(v6: bool, seq0: u32, lens: &[usize], first: Flags, last: Flags) -> Vec<Vec<u8>> {
        let mut seq = seq0;
        let n = lens.len();
        lens.iter()
            .enumerate()
            .map(|(i, &len)| {
                let payload: Vec<u8> = (0..len).map(|k| (k * 31 + i * 7) as u8).collect();
                let mut flags = Flags::ACK;
                if i == 0 {
                    flags.insert(first);
                }
                if i == n - 1 {
                    flags.insert(last);
                }
                let p = one(
                    v6,
                    SeqNum(seq),
                    0x1234u16.wrapping_add(i as u16),
                    flags,
                    &payload,
                );
                seq = seq.wrapping_add(len as u32);
                p
            })
            .collect()
    }

    fn one(v6: bool, seq: SeqNum, ident: u16, flags: Flags, payload: &[u8]) -> Vec<u8> {
        let ip = if v6 {
            IpRepr::V6(Ipv6Repr {
                src: "2001:db8:18::1".parse().unwrap(),
                dst: "2001:db8:18::2".parse().unwrap(),
                next_header: 6,
                dscp: 0,
                ecn: Ecn::Ect0,
                flow_label: 7,
                hop_limit: 64,
                payload_len: 0,
            })
        } else {
            IpRepr::V4(Ipv4Repr {
                src: Ipv4Addr::new(198, 18, 0, 1),
                dst: Ipv4Addr::new(198, 18, 0, 2),
                protocol: 6,
                dscp: 0,
                ecn: Ecn::Ect0,
                ttl: 64,
                ident,
                dont_frag: true,
                payload_len: 0,
            })
        };
        let tcp = TcpRepr {
            src_port: 40000,
            dst_port: 5201,
            seq,
            ack: SeqNum(77),
            flags,
            window: 500,
            timestamps: Some(Timestamps { tsval: 1, tsecr: 2 }),
            payload,
            ..TcpRepr::default()
        };
        let mut out = Vec::new();
        emit_tcp_packet(&ip, &tcp, &mut out);
        out
    }

    #[test]
    fn may_merge_agrees_with_run_start_on_heads() {
        for v6 in [false, true] {
            let data = one(v6, SeqNum(1), 1, Flags::ACK, &[7u8; 100]);
            assert!(may_merge(&data) && Run::start(&data).is_some());
            let ack = one(v6, SeqNum(1), 1, Flags::ACK, &[]);
            assert!(!may_merge(&ack) && Run::start(&ack).is_none());
            for f in [Flags::SYN, Flags::RST, Flags::URG] {
                let p = one(v6, SeqNum(1), 1, Flags::ACK | f, &[7u8; 100]);
                assert!(!may_merge(&p) && Run::start(&p).is_none());
            }
            for cut in 0..data.len().min(60) {
                assert!(!may_merge(&data[..cut]) || cut > 52, "cut {cut}");
            }
        }
        assert!(!may_merge(&[0x46; 60]), "IPv4 with options never merges");
    }

    /// Groups `pkts` into runs as the emulator does; each run's length.
    fn runs(pkts: &[Vec<u8>]) -> Vec<usize> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < pkts.len() {
            let mut n = 1;
            if let Some(mut r) = Run::start(&pkts[i]) {
                while i + n < pkts.len() && r.push(&pkts[i + n]) {
                    n += 1;
                }
                assert_eq!(r.count(), n);
            }
            out.push(n);
            i += n;
        }
        out
    }

    /// Coalesces all of `pkts` (which must form one run), then splits the result.
    fn round_trip(pkts: &[Vec<u8>]) -> Vec<Vec<u8>> {
        let mut r = Run::start(&pkts[0]).expect("heads a run");
        for p in &pkts[1..] {
            assert!(r.push(p), "joins the run");
        }
        let h = r.hdr_len();
        let (hdr, head) = r.finish();
        let mut sp = head.to_vec();
        for p in pkts {
            sp.extend_from_slice(&p[h..]);
        }
        // What the receiving kernel would accept: completing the partial checksum
        // (as a forwarding `skb_checksum_help` would) gives a valid big TCP segment.
        let mut full = sp.clone();
        complete_checksum(&mut full, hdr.csum_start.into(), hdr.csum_offset.into()).unwrap();
        let (_, tcp) = parse_tcp_packet(&full).expect("super-packet checksums verify");
        assert_eq!(tcp.payload.len(), sp.len() - h);
        let mut seg = Segmenter::start(&sp, &hdr).unwrap();
        let mut out = Vec::new();
        let mut buf = Vec::new();
        while seg.next(&sp, &mut buf) {
            out.push(buf.clone());
        }
        out
    }

    #[test]
    fn a_tso_burst_round_trips_byte_for_byte() {
        for v6 in [false, true] {
            let lens = [1448, 1448, 1448, 1448, 200];
            let pkts = burst(v6, 0xffff_f000, &lens, Flags::CWR, Flags::PSH | Flags::FIN);
            assert_eq!(round_trip(&pkts), pkts);
            let (hdr, _) = {
                let mut r = Run::start(&pkts[0]).unwrap();
                pkts[1..].iter().for_each(|p| assert!(r.push(p)));
                let (h, b) = r.finish();
                (h, b.to_vec())
            };
            assert_eq!(hdr.gso_size, 1448);
            assert_eq!(hdr.gso_type & GSO_ECN, GSO_ECN);
            assert_eq!(hdr.flags, F_NEEDS_CSUM);
        }
    }

    #[test]
    fn what_gro_would_not_merge_stays_separate() {
        let base = burst(false, 1000, &[1000; 4], Flags::NONE, Flags::NONE);
        assert_eq!(runs(&base), vec![4]);
        let edit = |i: usize, f: &dyn Fn(&mut Vec<u8>)| {
            let mut p = base.clone();
            f(&mut p[i]);
            p
        };
        // Re-emitted packets with one field changed (checksums valid).
        let with = |i: usize, seq: u32, id: u16, flags: Flags, len: usize| {
            let mut p = base.clone();
            p[i] = one(false, SeqNum(seq), id, flags, &vec![1; len]);
            p
        };
        // A sequence gap, an id that does not count up, CWR on a later member, SYN,
        // a longer packet, no payload.
        assert_eq!(
            runs(&with(2, 3001, 0x1236, Flags::ACK, 1000)),
            vec![2, 1, 1]
        );
        assert_eq!(
            runs(&with(2, 3000, 0x1234, Flags::ACK, 1000)),
            vec![2, 1, 1]
        );
        assert_eq!(
            runs(&with(2, 3000, 0x1236, Flags::ACK | Flags::CWR, 1000)),
            vec![2, 2]
        );
        assert_eq!(runs(&with(0, 1000, 0x1234, Flags::SYN, 1000)), vec![1, 3]);
        assert_eq!(
            runs(&with(1, 2000, 0x1235, Flags::ACK, 1001)),
            vec![1, 1, 2]
        );
        assert_eq!(runs(&with(1, 2000, 0x1235, Flags::ACK, 0)), vec![1, 1, 2]);
        // PSH or a short packet ends a run (GRO's final flush); the next starts anew.
        assert_eq!(
            runs(&with(1, 2000, 0x1235, Flags::ACK | Flags::PSH, 1000)),
            vec![2, 2]
        );
        let short = with(1, 2000, 0x1235, Flags::ACK, 999);
        assert_eq!(runs(&short), vec![2, 2]);
        // A CE mark (TOS), a corrupted payload byte (checksum), another port.
        let ce = edit(2, &|p| {
            p[1] |= 3;
            p[10..12].copy_from_slice(&[0, 0]);
            let c = brisk_wire::checksum::checksum(&p[..20]);
            p[10..12].copy_from_slice(&c.to_be_bytes());
        });
        assert_eq!(runs(&ce), vec![2, 1, 1]);
        assert_eq!(runs(&edit(2, &|p| p[100] ^= 0x40)), vec![2, 1, 1]);
        assert_eq!(runs(&edit(2, &|p| p[21] ^= 1)), vec![2, 1, 1]);
        // Anything that is not a well-formed TCP packet: alone, never a panic.
        for junk in [
            vec![],
            vec![0x45],
            vec![0x45; 40],
            vec![0x60; 60],
            vec![0x46; 80],
        ] {
            assert!(Run::start(&junk).is_none());
            let mut r = Run::start(&base[0]).unwrap();
            assert!(!r.push(&junk));
        }
    }

    #[test]
    fn a_known_good_checksum_skips_only_the_payload_pass() {
        // Segments the emulator cut itself (`csum_valid`) merge exactly as verified
        // ones do, into the same super-packet.
        for v6 in [false, true] {
            let pkts = burst(v6, 5000, &[1448, 1448, 1448, 700], Flags::NONE, Flags::PSH);
            let mut a = Run::start(&pkts[0]).unwrap();
            let mut b = Run::start_with(&pkts[0], true).unwrap();
            for p in &pkts[1..] {
                assert!(a.push(p));
                assert!(b.push_with(p, true));
            }
            let (ha, ba) = a.finish();
            let (hb, bb) = b.finish();
            assert_eq!((ha.emit(), ba.to_vec()), (hb.emit(), bb.to_vec()));
        }
        // Everything but the TCP checksum is still checked: a packet whose header
        // differs, or whose IPv4 header checksum is wrong, stays out.
        let base = burst(false, 1000, &[1000; 3], Flags::NONE, Flags::NONE);
        let mut r = Run::start_with(&base[0], true).unwrap();
        let mut bad_ip = base[1].clone();
        bad_ip[10] ^= 0x01;
        assert!(!r.push_with(&bad_ip, true));
        let mut other_port = base[1].clone();
        other_port[21] ^= 1;
        assert!(!r.push_with(&other_port, true));
        assert!(r.push_with(&base[1], true));
        // Without the flag a corrupted payload is found, as before; so the flag must
        // be cleared by whatever changes the bytes (`Packet::data_mut` does).
        let mut corrupt = base[2].clone();
        corrupt[100] ^= 0x40;
        assert!(!r.clone().push_with(&corrupt, false));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn any_gro_run_round_trips(
            v6 in any::<bool>(),
            seq0 in any::<u32>(),
            mss in 1usize..=1460,
            full in 0usize..40,
            tail in 0usize..=1460,
            cwr in any::<bool>(),
            psh in any::<bool>(),
        ) {
            let mut lens = vec![mss; full + 1];
            if tail > 0 && tail <= mss {
                lens.push(tail);
            }
            while lens.iter().sum::<usize>() + 100 > MAX_IP {
                lens.pop();
            }
            let first = if cwr { Flags::CWR } else { Flags::NONE };
            let last = if psh { Flags::PSH } else { Flags::NONE };
            let pkts = burst(v6, seq0, &lens, first, last);
            if pkts.len() > 1 {
                prop_assert_eq!(round_trip(&pkts), pkts);
            } else {
                prop_assert_eq!(runs(&pkts), vec![1]);
            }
        }
    }
}
