//! Property tests: emit/parse are inverses, and no input makes parsing panic.
//!
//! `packet_parse_inverts_emit` is the crate's promise, `parse(emit(x)) == x`, over the
//! whole representable space: any 9-bit flags, any window scale the type allows (0 to
//! 14), any extra options `ExtraOptions` accepts, addresses, ECN, DSCP < 64, IPv6 flow
//! labels < 2^20. Only what the crate documents as left out of the emitted form
//! differs: SACK blocks and extra options that do not fit in the 40 option bytes.

use std::net::{Ipv4Addr, Ipv6Addr};

use brisk_wire::{
    emit_tcp_packet, mark_ce, parse_tcp_packet, peek_dscp, peek_ecn, Ecn, Flags, IpRepr, Ipv4Repr,
    Ipv6Repr, SackBlock, SackBlocks, SeqNum, TcpRepr, Timestamps, WindowScale, IPPROTO_TCP,
    MAX_OPTIONS_LEN,
};
use proptest::prelude::*;

fn ecn() -> impl Strategy<Value = Ecn> {
    (0u8..4).prop_map(Ecn::from_bits)
}

fn ipv4() -> impl Strategy<Value = Ipv4Repr> {
    (
        any::<u32>(),
        any::<u32>(),
        0u8..64,
        ecn(),
        any::<u8>(),
        any::<u16>(),
        any::<bool>(),
    )
        .prop_map(|(src, dst, dscp, ecn, ttl, ident, dont_frag)| Ipv4Repr {
            src: Ipv4Addr::from(src),
            dst: Ipv4Addr::from(dst),
            protocol: IPPROTO_TCP,
            dscp,
            ecn,
            ttl,
            ident,
            dont_frag,
            payload_len: 0,
        })
}

fn ipv6() -> impl Strategy<Value = Ipv6Repr> {
    (
        any::<u128>(),
        any::<u128>(),
        0u8..64,
        ecn(),
        0u32..(1 << 20),
        any::<u8>(),
    )
        .prop_map(|(src, dst, dscp, ecn, flow_label, hop_limit)| Ipv6Repr {
            src: Ipv6Addr::from(src),
            dst: Ipv6Addr::from(dst),
            next_header: IPPROTO_TCP,
            dscp,
            ecn,
            flow_label,
            hop_limit,
            payload_len: 0,
        })
}

fn ip() -> impl Strategy<Value = IpRepr> {
    prop_oneof![ipv4().prop_map(IpRepr::V4), ipv6().prop_map(IpRepr::V6)]
}

/// Every field of a TcpRepr except the payload, which the test body borrows.
#[derive(Debug, Clone)]
struct TcpFields {
    ports: (u16, u16),
    seq: u32,
    ack: u32,
    flags: u16,
    window: u16,
    urgent: u16,
    mss: Option<u16>,
    window_scale: Option<u8>,
    sack_permitted: bool,
    sack: Vec<(u32, u32)>,
    timestamps: Option<(u32, u32)>,
    /// Extra options as (kind, data); those `ExtraOptions::push` refuses are skipped.
    extra: Vec<(u8, Vec<u8>)>,
}

impl TcpFields {
    fn repr<'a>(&self, payload: &'a [u8]) -> TcpRepr<'a> {
        let blocks: Vec<SackBlock> = self
            .sack
            .iter()
            .map(|&(l, r)| SackBlock {
                left: SeqNum(l),
                right: SeqNum(r),
            })
            .collect();
        TcpRepr {
            src_port: self.ports.0,
            dst_port: self.ports.1,
            seq: SeqNum(self.seq),
            ack: SeqNum(self.ack),
            flags: Flags::from_bits_truncate(self.flags),
            window: self.window,
            urgent: self.urgent,
            mss: self.mss,
            window_scale: self.window_scale.map(WindowScale::clamped),
            sack_permitted: self.sack_permitted,
            sack: SackBlocks::from_slice(&blocks),
            timestamps: self
                .timestamps
                .map(|(tsval, tsecr)| Timestamps { tsval, tsecr }),
            extra: {
                let mut x = brisk_wire::ExtraOptions::new();
                for (kind, data) in &self.extra {
                    let _ = x.push(*kind, data);
                }
                x
            },
            payload,
        }
    }
}

fn tcp_fields() -> impl Strategy<Value = TcpFields> {
    (
        (any::<u16>(), any::<u16>()),
        any::<u32>(),
        any::<u32>(),
        any::<u16>(), // all 2^16 values, truncated to the 2^9 representable flags
        any::<u16>(),
        any::<u16>(),
        proptest::option::of(any::<u16>()),
        proptest::option::of(0u8..=14),
        any::<bool>(),
        proptest::collection::vec((any::<u32>(), any::<u32>()), 0..=4),
        proptest::option::of((any::<u32>(), any::<u32>())),
        proptest::collection::vec(
            (any::<u8>(), proptest::collection::vec(any::<u8>(), 0..12)),
            0..4,
        ),
    )
        .prop_map(
            |(
                ports,
                seq,
                ack,
                flags,
                window,
                urgent,
                mss,
                window_scale,
                sack_permitted,
                sack,
                timestamps,
                extra,
            )| TcpFields {
                ports,
                seq,
                ack,
                flags,
                window,
                urgent,
                mss,
                window_scale,
                sack_permitted,
                sack,
                timestamps,
                extra,
            },
        )
}

/// A valid packet built from arbitrary fields, for mutation tests.
fn valid_packet() -> impl Strategy<Value = Vec<u8>> {
    (
        ip(),
        tcp_fields(),
        proptest::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(|(ip, fields, payload)| {
            let mut out = Vec::new();
            emit_tcp_packet(&ip, &fields.repr(&payload), &mut out);
            out
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn packet_parse_inverts_emit(
        ip in ip(),
        fields in tcp_fields(),
        payload in proptest::collection::vec(any::<u8>(), 0..1500),
    ) {
        let tcp = fields.repr(&payload);
        let mut out = Vec::new();
        emit_tcp_packet(&ip, &tcp, &mut out);

        prop_assert!(tcp.options_len() <= MAX_OPTIONS_LEN);
        prop_assert_eq!(tcp.options_len() % 4, 0);
        prop_assert_eq!(out.len(), ip.header_len() + tcp.header_len() + payload.len());

        // Emission keeps the SACK blocks that fit, first ones first, and the extra
        // options if they all fit beside the standard ones.
        let mut expected = tcp;
        expected.sack.truncate(tcp.sack_blocks_emitted());
        let standard = 4 * usize::from(tcp.mss.is_some())
            + if tcp.timestamps.is_some() { 12 } else { 4 * usize::from(tcp.sack_permitted) }
            + 4 * usize::from(tcp.window_scale.is_some());
        if standard + tcp.extra.aligned_len() > MAX_OPTIONS_LEN {
            expected.extra = brisk_wire::ExtraOptions::new();
        }
        let mut expected_ip = ip;
        expected_ip.set_payload_len(tcp.header_len() + payload.len());

        let (pip, ptcp) = parse_tcp_packet(&out).expect("emitted packet parses");
        prop_assert_eq!(pip, expected_ip);
        prop_assert_eq!(ptcp, expected);
    }

    #[test]
    fn sack_blocks_fill_the_option_space(fields in tcp_fields()) {
        let tcp = fields.repr(&[]);
        let emitted = tcp.sack_blocks_emitted();
        prop_assert!(emitted <= tcp.sack.len());
        if emitted < tcp.sack.len() {
            // One more block would not have fitted.
            let with_one_more = tcp.options_len() + 8 + if emitted == 0 { 4 } else { 0 };
            prop_assert!(with_one_more > MAX_OPTIONS_LEN);
        }
    }

    #[test]
    fn parsing_arbitrary_bytes_never_panics(buf in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = parse_tcp_packet(&buf);
        let _ = TcpRepr::parse(&buf, None);
        let _ = peek_ecn(&buf);
        let _ = peek_dscp(&buf);
        let mut b = buf.clone();
        let _ = mark_ce(&mut b);
    }

    #[test]
    fn parsing_arbitrary_tcp_after_valid_ip_never_panics(
        ip in ipv4(),
        seg in proptest::collection::vec(any::<u8>(), 0..120),
        offset_nibble in 0u8..16,
    ) {
        // Random segments almost never pass the checksum, so parse them without it to
        // reach the option parser.
        let mut seg = seg;
        if seg.len() > 12 {
            seg[12] = (offset_nibble << 4) | (seg[12] & 0x0f);
        }
        let _ = TcpRepr::parse(&seg, None);
        let _ = TcpRepr::parse(&seg, Some(&IpRepr::V4(ip)));
    }

    #[test]
    fn every_truncation_of_a_valid_packet_is_an_error(pkt in valid_packet()) {
        for len in 0..pkt.len() {
            prop_assert!(parse_tcp_packet(&pkt[..len]).is_err(), "len {}", len);
        }
        prop_assert!(parse_tcp_packet(&pkt).is_ok());
    }

    #[test]
    fn trailing_padding_is_ignored(pkt in valid_packet(), pad in proptest::collection::vec(any::<u8>(), 1..30)) {
        let (ip, tcp) = parse_tcp_packet(&pkt).unwrap();
        let mut padded = pkt.clone();
        padded.extend_from_slice(&pad);
        let (pip, ptcp) = parse_tcp_packet(&padded).unwrap();
        prop_assert_eq!(pip, ip);
        prop_assert_eq!(ptcp, tcp);
    }

    #[test]
    fn mark_ce_keeps_packets_valid(pkt in valid_packet()) {
        let mut marked = pkt.clone();
        let ect = peek_ecn(&pkt).unwrap().is_ect();
        prop_assert_eq!(mark_ce(&mut marked), ect);
        let (ip, tcp) = parse_tcp_packet(&pkt).unwrap();
        let (mip, mtcp) = parse_tcp_packet(&marked).expect("still valid after marking");
        prop_assert_eq!(mtcp, tcp);
        prop_assert_eq!(mip.dscp(), ip.dscp());
        prop_assert_eq!(mip.ecn(), if ect { Ecn::Ce } else { Ecn::NotEct });
    }
}

/// The edges of the two bounded types: every flag combination and every window scale
/// round-trips exactly, and nothing outside them can be built.
#[test]
fn flags_and_window_scale_cover_exactly_what_the_header_carries() {
    let ip = IpRepr::V4(Ipv4Repr {
        src: Ipv4Addr::new(10, 0, 0, 1),
        dst: Ipv4Addr::new(10, 0, 0, 2),
        protocol: IPPROTO_TCP,
        dscp: 0,
        ecn: Ecn::NotEct,
        ttl: 64,
        ident: 0,
        dont_frag: true,
        payload_len: 0,
    });
    let mut out = Vec::new();
    for bits in 0..=u16::MAX {
        let flags = Flags::from_bits_truncate(bits);
        assert_eq!(flags.bits(), bits & 0x1ff);
        if bits > 0x1ff {
            continue;
        }
        for shift in 0..=14u8 {
            let tcp = TcpRepr {
                flags,
                window_scale: WindowScale::new(shift),
                ..TcpRepr::default()
            };
            emit_tcp_packet(&ip, &tcp, &mut out);
            assert_eq!(parse_tcp_packet(&out).unwrap().1, tcp, "{bits:#x} {shift}");
        }
    }
    for shift in 15..=u8::MAX {
        assert_eq!(WindowScale::new(shift), None);
        assert_eq!(WindowScale::clamped(shift), WindowScale::MAX);
    }
    assert_eq!(WindowScale::MAX.get(), 14);
}
