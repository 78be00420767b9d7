//! The Fast Open option through a whole packet: a SYN with every option Linux puts on
//! a SYN (MSS, SACK-permitted, timestamps, window scale) and any Fast Open option
//! round-trips, takes Linux's bytes, and never passes 40 option bytes; malformed
//! lengths from the wire are an error for the caller to count, never a panic.

use std::net::Ipv4Addr;

use brisk_wire::fastopen::{self, FastOpen, FastOpenCookie, FastOpenError};
use brisk_wire::{
    emit_tcp_packet, parse_tcp_packet, Ecn, ExtraOptions, Flags, IpRepr, Ipv4Repr, SeqNum, TcpRepr,
    Timestamps, WindowScale, IPPROTO_TCP, MAX_OPTIONS_LEN,
};
use proptest::prelude::*;

fn ip() -> IpRepr {
    IpRepr::V4(Ipv4Repr {
        src: Ipv4Addr::new(198, 18, 0, 1),
        dst: Ipv4Addr::new(198, 18, 0, 2),
        protocol: IPPROTO_TCP,
        dscp: 0,
        ecn: Ecn::NotEct,
        ttl: 64,
        ident: 0,
        dont_frag: true,
        payload_len: 0,
    })
}

fn syn<'a>(extra: ExtraOptions, payload: &'a [u8], full: bool) -> TcpRepr<'a> {
    TcpRepr {
        src_port: 40000,
        dst_port: 80,
        seq: SeqNum(1000),
        flags: Flags::SYN,
        window: 64240,
        mss: Some(1460),
        window_scale: full.then(|| WindowScale::clamped(7)),
        sack_permitted: full,
        timestamps: full.then_some(Timestamps { tsval: 1, tsecr: 0 }),
        extra,
        payload,
        ..Default::default()
    }
}

fn fast_open() -> impl Strategy<Value = FastOpen> {
    (
        prop_oneof![Just(0usize), (2usize..=8).prop_map(|n| 2 * n)],
        any::<[u8; 16]>(),
        any::<bool>(),
    )
        .prop_map(|(len, bytes, experimental)| FastOpen {
            cookie: (len > 0).then(|| FastOpenCookie::new(&bytes[..len]).unwrap()),
            experimental,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn fast_open_round_trips_on_a_full_syn(
        opt in fast_open(),
        full in any::<bool>(),
        payload in proptest::collection::vec(any::<u8>(), 0..1460),
    ) {
        let mut extra = ExtraOptions::new();
        fastopen::push(&mut extra, &opt).unwrap();
        let tcp = syn(extra, &payload, full);
        let mut out = Vec::new();
        emit_tcp_packet(&ip(), &tcp, &mut out);
        prop_assert!(tcp.options_len() <= MAX_OPTIONS_LEN);
        let (_, parsed) = parse_tcp_packet(&out).expect("emitted SYN parses");
        prop_assert_eq!(fastopen::parse(&parsed.extra), Some(Ok(opt)));
        prop_assert_eq!(parsed.payload, &payload[..]);
        prop_assert_eq!(parsed.mss, Some(1460));
        prop_assert_eq!(parsed.timestamps.is_some(), full);
    }

    #[test]
    fn any_option_data_parses_without_panic(kind in prop_oneof![Just(34u8), Just(254u8)],
                                            data in proptest::collection::vec(any::<u8>(), 0..38)) {
        let got = FastOpen::parse(kind, &data);
        let (cookie, fo) = match (kind, data.as_slice()) {
            (34, d) => (d, true),
            (_, [0xf9, 0x89, rest @ ..]) => (rest, true),
            _ => (&[][..], false),
        };
        if !fo {
            prop_assert_eq!(got, Ok(None));
        } else if cookie.is_empty() || ((4..=16).contains(&cookie.len()) && cookie.len().is_multiple_of(2)) {
            prop_assert!(matches!(got, Ok(Some(_))));
        } else {
            prop_assert_eq!(got, Err(FastOpenError::BadLength { cookie_len: cookie.len() }));
        }
    }
}

/// A Linux SYN with an 8-byte cookie: `tcp_options_write`'s layout, byte for byte
/// (MSS; SACK-permitted + timestamps; NOP + window scale; 34 10 cookie NOP NOP).
#[test]
fn syn_option_bytes_are_linuxs() {
    let cookie = FastOpenCookie::new(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
    let mut extra = ExtraOptions::new();
    fastopen::push(&mut extra, &FastOpen::with_cookie(cookie)).unwrap();
    let tcp = syn(extra, b"GET /", true);
    let mut out = Vec::new();
    emit_tcp_packet(&ip(), &tcp, &mut out);
    let opts = &out[20 + 20..20 + tcp.header_len()];
    assert_eq!(
        opts,
        &[
            2, 4, 0x05, 0xb4, // MSS 1460
            4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, // SACK-permitted, timestamps
            1, 3, 3, 7, // NOP, window scale 7
            34, 10, 1, 2, 3, 4, 5, 6, 7, 8, 1, 1, // Fast Open, NOP NOP
        ][..]
    );
    // A cookie request is `34 2` followed by NOP NOP.
    let mut req = ExtraOptions::new();
    fastopen::push(&mut req, &FastOpen::REQUEST).unwrap();
    let tcp = syn(req, &[], true);
    out.clear();
    emit_tcp_packet(&ip(), &tcp, &mut out);
    assert_eq!(&out[40 + 20..40 + 24], &[34, 2, 1, 1]);
}

/// The longest forms fill the SYN's 40 bytes exactly; nothing else fits beside them.
#[test]
fn longest_cookie_fills_the_syn_option_space() {
    let cookie = FastOpenCookie::new(&[9; 16]).unwrap();
    for experimental in [false, true] {
        let mut extra = ExtraOptions::new();
        let opt = FastOpen {
            cookie: Some(cookie),
            experimental,
        };
        fastopen::push(&mut extra, &opt).unwrap();
        let tcp = syn(extra, &[], true);
        assert_eq!(tcp.options_len(), MAX_OPTIONS_LEN);
        let mut out = Vec::new();
        emit_tcp_packet(&ip(), &tcp, &mut out);
        let (_, parsed) = parse_tcp_packet(&out).unwrap();
        assert_eq!(fastopen::parse(&parsed.extra), Some(Ok(opt)));
    }
}
