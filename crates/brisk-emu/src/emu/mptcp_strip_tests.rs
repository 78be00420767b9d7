use super::*;

use std::net::{Ipv4Addr, Ipv6Addr};

use brisk_wire::checksum::{checksum, pseudo_header_v4, pseudo_header_v6, Accumulator};

const SRC: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
const DST: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
const SRC6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0x18, 0, 0, 0, 0, 1);
const DST6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0x18, 0, 0, 0, 0, 2);

const SYN: u8 = 0x02;
const ACK: u8 = 0x10;

/// MP_CAPABLE of a v1 SYN (RFC 8684 §3.1: subtype 0, version 1, flags A|H).
const MP_CAPABLE_SYN: [u8; 4] = [30, 4, 0x01, 0x81];
/// A DSS with a 4-byte data ACK and a 4-byte mapping (RFC 8684 §3.3: flags a=0 A=1
/// m=0 M=1): data ACK, DSN, subflow seq, data-level length, no checksum.
const DSS: [u8; 18] = [
    30, 18, 0x20, 0x05, 0, 0, 0x10, 0, 0, 0, 0x20, 0, 0, 0, 0, 1, 0x05, 0xa8,
];
/// ADD_ADDR (IPv4, echo) with address ID 1.
const ADD_ADDR_ECHO: [u8; 8] = [30, 8, 0x31, 1, 198, 18, 1, 2];

/// The TCP segment (header with `options`, padded with EOL to a multiple of 4, and
/// `payload`) with its checksum for `pseudo`.
fn segment(
    flags: u8,
    options: &[u8],
    payload: &[u8],
    pseudo: impl Fn(usize) -> Accumulator,
) -> Vec<u8> {
    let mut opts = options.to_vec();
    while !opts.len().is_multiple_of(4) {
        opts.push(0);
    }
    let doff = 20 + opts.len();
    let mut t = vec![0u8; 20];
    t[0..2].copy_from_slice(&40000u16.to_be_bytes());
    t[2..4].copy_from_slice(&5201u16.to_be_bytes());
    t[4..8].copy_from_slice(&0x0102_0304u32.to_be_bytes());
    t[8..12].copy_from_slice(&0x0a0b_0c0du32.to_be_bytes());
    t[12] = ((doff / 4) as u8) << 4;
    t[13] = flags;
    t[14..16].copy_from_slice(&64240u16.to_be_bytes());
    t.extend_from_slice(&opts);
    t.extend_from_slice(payload);
    let mut acc = pseudo(t.len());
    acc.add_bytes(&t);
    let c = acc.checksum();
    t[16..18].copy_from_slice(&c.to_be_bytes());
    t
}

fn tcp4(flags: u8, options: &[u8], payload: &[u8]) -> Vec<u8> {
    let seg = segment(flags, options, payload, |len| {
        pseudo_header_v4(SRC, DST, 6, len as u16)
    });
    let mut ip = vec![0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 6, 0, 0];
    ip[2..4].copy_from_slice(&((20 + seg.len()) as u16).to_be_bytes());
    ip.extend_from_slice(&SRC.octets());
    ip.extend_from_slice(&DST.octets());
    let c = checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    ip.extend_from_slice(&seg);
    ip
}

fn tcp6(flags: u8, options: &[u8], payload: &[u8]) -> Vec<u8> {
    let seg = segment(flags, options, payload, |len| {
        pseudo_header_v6(SRC6, DST6, 6, len as u32)
    });
    let mut ip = vec![0x60, 0, 0, 0, 0, 0, 6, 64];
    ip[4..6].copy_from_slice(&(seg.len() as u16).to_be_bytes());
    ip.extend_from_slice(&SRC6.octets());
    ip.extend_from_slice(&DST6.octets());
    ip.extend_from_slice(&seg);
    ip
}

/// Whether the TCP checksum of an IPv4 or IPv6 packet built above verifies.
fn tcp_checksum_ok(pkt: &[u8]) -> bool {
    let (tcp, mut acc) = if pkt[0] >> 4 == 4 {
        (20, pseudo_header_v4(SRC, DST, 6, (pkt.len() - 20) as u16))
    } else {
        (40, pseudo_header_v6(SRC6, DST6, 6, (pkt.len() - 40) as u32))
    };
    acc.add_bytes(&pkt[tcp..]);
    acc.verifies()
}

/// The byte offset of `needle` in `hay` (the option bytes in the packet).
fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len())
        .position(|w| w == needle)
        .expect("option present")
}

#[test]
fn syn_loses_mp_capable_and_keeps_the_other_options_and_a_good_checksum() {
    // MSS, SACK-permitted, timestamps, NOP, window scale, then MP_CAPABLE at an odd
    // offset (after the 3-byte window scale), so the words it shares with its
    // neighbours are updated too.
    let mut opts = vec![
        2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
    ];
    opts.extend_from_slice(&MP_CAPABLE_SYN);
    let orig = tcp4(SYN, &opts, &[]);
    let at = find(&orig[20..], &MP_CAPABLE_SYN) + 20;
    assert!(tcp_checksum_ok(&orig));
    let mut pkt = orig.clone();
    let s = strip(&mut pkt, StripPackets::All);
    assert_eq!(
        s,
        Stripped {
            options: 1,
            bytes: 4
        }
    );
    assert_eq!(&pkt[at..at + 4], &[1, 1, 1, 1]);
    for (i, (a, b)) in pkt.iter().zip(&orig).enumerate() {
        // Only the option and the TCP checksum (bytes 36..38) change.
        if !(at..at + 4).contains(&i) && !(36..38).contains(&i) {
            assert_eq!(a, b, "byte {i}");
        }
    }
    assert!(tcp_checksum_ok(&pkt), "checksum after stripping");
    // The IPv4 header (and its checksum) is untouched.
    assert_eq!(&pkt[..20], &orig[..20]);
    assert_eq!(checksum(&pkt[..20]), 0);
}

#[test]
fn every_alignment_and_several_options_per_packet() {
    for pad in 0..4 {
        let mut opts = vec![1u8; pad];
        opts.extend_from_slice(&DSS);
        opts.extend_from_slice(&ADD_ADDR_ECHO);
        let orig = tcp4(ACK, &opts, b"hello, multipath");
        let mut pkt = orig.clone();
        let s = strip(&mut pkt, StripPackets::All);
        assert_eq!(
            s,
            Stripped {
                options: 2,
                bytes: 26
            },
            "pad {pad}"
        );
        let opt_area = &pkt[40..40 + pad + 26];
        assert!(opt_area.iter().all(|b| *b == 1), "pad {pad}: {opt_area:?}");
        assert!(tcp_checksum_ok(&pkt), "pad {pad}");
        assert_eq!(pkt.len(), orig.len());
        assert_eq!(&pkt[pkt.len() - 16..], b"hello, multipath");
    }
}

#[test]
fn the_selection_picks_handshake_or_data_segments() {
    let syn = tcp4(SYN, &MP_CAPABLE_SYN, &[]);
    let syn_ack = tcp4(SYN | ACK, &MP_CAPABLE_SYN, &[]);
    let data = tcp4(ACK, &DSS, &[7; 100]);
    let pure_ack = tcp4(ACK, &DSS, &[]);
    let cases = [
        (StripPackets::All, [true, true, true, true]),
        (StripPackets::Syn, [true, true, false, false]),
        (StripPackets::Data, [false, false, true, false]),
    ];
    for (which, expect) in cases {
        for (orig, stripped) in [&syn, &syn_ack, &data, &pure_ack].into_iter().zip(expect) {
            let mut pkt = orig.clone();
            let s = strip(&mut pkt, which);
            assert_eq!(s.options == 1, stripped, "{which:?}");
            assert_eq!(&pkt == orig, !stripped, "{which:?}");
            assert!(tcp_checksum_ok(&pkt));
        }
    }
}

#[test]
fn ipv6_segments_are_stripped_too() {
    let mut opts = vec![2, 4, 0x05, 0xa0, 1];
    opts.extend_from_slice(&DSS);
    let orig = tcp6(ACK, &opts, &[9; 33]);
    assert!(tcp_checksum_ok(&orig));
    let mut pkt = orig.clone();
    assert_eq!(strip(&mut pkt, StripPackets::Data).options, 1);
    assert!(tcp_checksum_ok(&pkt));
    assert!(pkt[40 + 25..40 + 25 + 18].iter().all(|b| *b == 1));
}

#[test]
fn a_corrupted_segment_stays_corrupted() {
    let mut pkt = tcp4(ACK, &DSS, &[1, 2, 3, 4, 5]);
    let last = pkt.len() - 1;
    pkt[last] ^= 0x40;
    assert!(!tcp_checksum_ok(&pkt));
    assert_eq!(strip(&mut pkt, StripPackets::All).options, 1);
    assert!(
        !tcp_checksum_ok(&pkt),
        "stripping must not repair a bad checksum"
    );
}

#[test]
fn other_packets_and_other_options_pass_unchanged() {
    // No MPTCP option: nothing changes.
    let plain = tcp4(SYN, &[2, 4, 0x05, 0xb4, 4, 2], &[]);
    let mut pkt = plain.clone();
    assert_eq!(strip(&mut pkt, StripPackets::All), Stripped::default());
    assert_eq!(pkt, plain);
    // UDP.
    let mut udp = tcp4(0, &MP_CAPABLE_SYN, &[]);
    udp[9] = 17;
    let before = udp.clone();
    assert_eq!(strip(&mut udp, StripPackets::All).options, 0);
    assert_eq!(udp, before);
    // An IPv4 fragment after the first.
    let mut frag = tcp4(SYN, &MP_CAPABLE_SYN, &[]);
    frag[6] = 0x00;
    frag[7] = 0x10;
    let before = frag.clone();
    assert_eq!(strip(&mut frag, StripPackets::All).options, 0);
    assert_eq!(frag, before);
    // Options after an end-of-list are not options.
    let mut eol = vec![0u8, 0, 0, 0];
    eol.extend_from_slice(&MP_CAPABLE_SYN);
    let orig = tcp4(SYN, &eol, &[]);
    let mut pkt = orig.clone();
    assert_eq!(strip(&mut pkt, StripPackets::All).options, 0);
    assert_eq!(pkt, orig);
}

#[test]
fn a_malformed_option_stops_the_walk_without_panic() {
    // A zero-length option before the MPTCP one: the walk stops there.
    let mut opts = vec![8, 0, 0, 0];
    opts.extend_from_slice(&MP_CAPABLE_SYN);
    let orig = tcp4(SYN, &opts, &[]);
    let mut pkt = orig.clone();
    assert_eq!(strip(&mut pkt, StripPackets::All).options, 0);
    assert_eq!(pkt, orig);
    // An MPTCP option whose length runs past the header is left alone.
    let orig = tcp4(SYN, &[1, 1, 30, 40], &[]);
    let mut pkt = orig.clone();
    assert_eq!(strip(&mut pkt, StripPackets::All).options, 0);
    assert_eq!(pkt, orig);
}

#[test]
fn truncated_and_garbled_packets_never_panic() {
    let mut opts = MP_CAPABLE_SYN.to_vec();
    opts.extend_from_slice(&DSS);
    let full = tcp4(ACK, &opts, &[3; 20]);
    for len in 0..=full.len() {
        let mut pkt = full[..len].to_vec();
        let _ = strip(&mut pkt, StripPackets::All);
    }
    // Every single-byte value at every header position.
    for pos in 0..60 {
        for v in [0u8, 1, 2, 4, 5, 6, 0x0f, 0x30, 0x45, 0x4f, 0x60, 0xf0, 0xff] {
            let mut pkt = full.clone();
            pkt[pos] = v;
            let _ = strip(&mut pkt, StripPackets::All);
            let mut pkt6 = tcp6(ACK, &opts, &[3; 20]);
            pkt6[pos] = v;
            let _ = strip(&mut pkt6, StripPackets::All);
        }
    }
}
