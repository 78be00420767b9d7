//! Target `mptcp`: brisk-wire's MPTCP option parser (issue 31 §4) on arbitrary bytes.
//!
//! The first byte picks how the rest is read:
//! - even: the rest is one option's data (what follows kind 30 and the length byte);
//! - odd: the rest is a TCP option area: `kind, len, data` items pushed into an
//!   `ExtraOptions` as far as they fit (kind 30 forced on items whose kind byte is
//!   odd, so most items are MPTCP), then every kind-30 item iterated, and the segment
//!   carried through a packet (emit, parse) beside timestamps.
//!
//! Whatever parses must re-emit to exactly `len()` bytes (the lengths are exact per
//! form, so the input's length), re-parse to the same option, and emit the same bytes
//! again (a fixpoint). The DSS checksum of the input summed in two chunks equals the
//! one-shot sum and verifies, and the crypto functions run on input-chosen keys.

use brisk_wire::mptcp::checksum::{dss_checksum, DssChecksum};
use brisk_wire::mptcp::{self, crypto, MptcpOption};
use brisk_wire::{
    emit_tcp_packet, parse_tcp_packet, Ecn, ExtraOptions, Flags, IpRepr, Ipv4Repr, TcpRepr,
    Timestamps, IPPROTO_TCP,
};
use std::net::Ipv4Addr;

pub fn mptcp(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    checksum_and_crypto(rest);
    if mode % 2 == 0 {
        one_option(rest);
    } else {
        option_area(rest);
    }
}

/// Parse, re-emit, re-parse one option's data.
fn one_option(d: &[u8]) {
    let Ok(o) = MptcpOption::parse(d) else {
        return;
    };
    assert_eq!(o.len(), d.len() + 2, "lengths are exact per form: {o:?}");
    let mut buf = [0u8; 40];
    let n = o.emit(&mut buf).expect("an option fits in 40 bytes");
    assert_eq!(n, o.len());
    assert_eq!(buf[..2], [mptcp::KIND, n as u8]);
    let again = MptcpOption::parse(&buf[2..n]).expect("an emitted option parses");
    assert_eq!(again, o, "parse(emit(x)) != x");
    let mut buf2 = [0u8; 40];
    let n2 = again.emit(&mut buf2).expect("fits");
    assert_eq!(buf[..n], buf2[..n2], "emit is not a fixpoint");
    // A buffer one byte short is refused, not overrun.
    assert!(o.emit(&mut buf[..n - 1]).is_err());
    assert!(o.emit_data(&mut buf[..n - 3]).is_err());
}

/// Items of a TCP option area into `ExtraOptions`, then the kind-30 iteration and a
/// packet round trip.
fn option_area(d: &[u8]) {
    let mut extra = ExtraOptions::new();
    let mut i = 0;
    while i + 2 <= d.len() {
        let kind = if d[i] % 2 == 1 { mptcp::KIND } else { d[i] };
        let len = usize::from(d[i + 1]).max(2);
        let Some(body) = d.get(i + 2..i + len) else {
            break;
        };
        let _ = extra.push(kind, body);
        i += len;
    }
    let parsed: Vec<_> = mptcp::options(&extra).collect();
    let raw = extra.iter().filter(|&(k, _)| k == mptcp::KIND).count();
    assert_eq!(parsed.len(), raw, "one result per kind-30 item");
    for (r, (_, body)) in parsed
        .iter()
        .zip(extra.iter().filter(|&(k, _)| k == mptcp::KIND))
    {
        assert_eq!(*r, MptcpOption::parse(body));
        if r.is_ok() {
            one_option(body);
        }
    }
    // Re-push what parsed into a fresh segment: it fits (each option is no longer
    // than its source item) and iterates back equal.
    let mut again = ExtraOptions::new();
    let ok: Vec<MptcpOption> = parsed.iter().filter_map(|r| r.ok()).collect();
    for o in &ok {
        mptcp::push(&mut again, o).expect("an option no longer than the item it came from fits");
    }
    let back: Vec<_> = mptcp::options(&again).collect();
    assert_eq!(back, ok.iter().map(|o| Ok(*o)).collect::<Vec<_>>());
    // Through a packet beside timestamps: all extras come back, or (if they do not
    // fit beside the timestamps) none.
    let tcp = TcpRepr {
        src_port: 1,
        dst_port: 2,
        flags: Flags::ACK,
        timestamps: Some(Timestamps { tsval: 1, tsecr: 2 }),
        extra: again,
        ..TcpRepr::default()
    };
    let ip = IpRepr::V4(Ipv4Repr {
        src: Ipv4Addr::new(198, 18, 0, 1),
        dst: Ipv4Addr::new(198, 18, 0, 2),
        protocol: IPPROTO_TCP,
        dscp: 0,
        ecn: Ecn::NotEct,
        ttl: 64,
        ident: 1,
        dont_frag: true,
        payload_len: 0,
    });
    let mut out = Vec::new();
    emit_tcp_packet(&ip, &tcp, &mut out);
    let (_, seg) = parse_tcp_packet(&out).expect("an emitted packet parses");
    let got: Vec<_> = mptcp::options(&seg.extra).collect();
    if 12 + again.aligned_len() <= 40 {
        assert_eq!(got, back);
    } else {
        assert!(got.is_empty());
    }
}

/// DSS checksum in chunks vs one shot; crypto on input-chosen values (no panic).
fn checksum_and_crypto(d: &[u8]) {
    let word = |at: usize| {
        let mut b = [0u8; 8];
        for (i, x) in b.iter_mut().enumerate() {
            *x = d.get(at + i).copied().unwrap_or(0);
        }
        u64::from_be_bytes(b)
    };
    let (dsn, ssn, len) = (word(0), word(8) as u32, word(12) as u16);
    let cut = usize::from(d.first().copied().unwrap_or(0)).min(d.len());
    let whole = dss_checksum(dsn, ssn, len, d);
    let mut c = DssChecksum::new(dsn, ssn, len);
    c.add(&d[..cut]);
    c.add(&d[cut..]);
    assert_eq!(c.checksum(), whole, "chunked DSS checksum differs");
    assert!(c.verifies(whole));
    let (ka, kb) = (word(16), word(24));
    let _ = (crypto::token(ka), crypto::idsn(kb));
    let thmac = crypto::join_synack_hmac(ka, kb, dsn as u32, ssn);
    assert_eq!(
        thmac.to_be_bytes(),
        crypto::join_hmac(ka, kb, dsn as u32, ssn)[..8],
        "truncated HMAC is the leftmost 64 bits"
    );
}

/// Every form, from brisk's own encoder, and Linux's options from a real capture
/// (tests/mptcp/linux_capture.sh in brisk-wire).
pub(crate) fn seeds() -> Vec<Vec<u8>> {
    use brisk_wire::mptcp::{
        AddAddr, DataSeq, Dss, Mapping, MpCapable, MpCapableForm, MpJoin, MpTcpRst, RemoveAddr,
        ResetReason,
    };
    let cap = |form| {
        MptcpOption::MpCapable(MpCapable {
            checksum_required: true,
            deny_join_id0: false,
            form,
        })
    };
    let map = |dsn, checksum| Mapping {
        dsn,
        subflow_seq: 1,
        data_len: 1000,
        checksum,
    };
    let forms = [
        cap(MpCapableForm::Syn),
        cap(MpCapableForm::SynAck { sender_key: 1 }),
        cap(MpCapableForm::Ack {
            sender_key: 1,
            receiver_key: 2,
        }),
        cap(MpCapableForm::AckData {
            sender_key: 1,
            receiver_key: 2,
            data_len: 5,
            checksum: Some(7),
        }),
        MptcpOption::MpJoin(MpJoin::Syn {
            backup: true,
            address_id: 2,
            token: 3,
            nonce: 4,
        }),
        MptcpOption::MpJoin(MpJoin::SynAck {
            backup: false,
            address_id: 2,
            truncated_hmac: 5,
            nonce: 6,
        }),
        MptcpOption::MpJoin(MpJoin::Ack { hmac: [9; 20] }),
        MptcpOption::Dss(Dss {
            data_ack: Some(DataSeq::Bits64(1)),
            mapping: Some(map(DataSeq::Bits64(2), Some(3))),
            data_fin: true,
        }),
        MptcpOption::Dss(Dss {
            data_ack: Some(DataSeq::Bits32(1)),
            mapping: Some(map(DataSeq::Bits32(2), None)),
            data_fin: false,
        }),
        MptcpOption::AddAddr(AddAddr {
            address_id: 1,
            addr: "2001:db8::2".parse().unwrap(),
            port: Some(443),
            hmac: Some(8),
        }),
        MptcpOption::AddAddr(AddAddr {
            address_id: 1,
            addr: "198.18.1.2".parse().unwrap(),
            port: None,
            hmac: None,
        }),
        MptcpOption::RemoveAddr(RemoveAddr::new(&[1, 2, 3]).unwrap()),
        MptcpOption::MpPrio { backup: true },
        MptcpOption::MpFail { dsn: 9 },
        MptcpOption::MpFastclose { receiver_key: 10 },
        MptcpOption::MpTcpRst(MpTcpRst {
            transient: true,
            reason: ResetReason::MiddleboxInterference,
        }),
    ];
    let mut out = Vec::new();
    let mut area = vec![1u8];
    for o in forms {
        let mut buf = [0u8; 40];
        let n = o.emit(&mut buf).expect("fits");
        let mut one = vec![0u8];
        one.extend_from_slice(&buf[2..n]);
        out.push(one);
        if area.len() + n <= 41 {
            area.extend_from_slice(&buf[..n]);
        } else {
            out.push(std::mem::replace(&mut area, vec![1]));
            area.extend_from_slice(&buf[..n]);
        }
    }
    out.push(area);
    // Linux 6.18's own: DSS with checksum, ADD_ADDR, MP_JOIN ACK.
    for h in [
        "1e18200d012aa11cbf4342b4b6c1327e00000001000cdc6a",
        "1e103001c61201027a60fc8d12a67a5a",
        "1e1810005823f3f42d8d4d8eb6b756c50914638611f9861f",
    ] {
        let b: Vec<u8> = (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("hex"))
            .collect();
        let mut one = vec![0u8];
        one.extend_from_slice(&b[2..]);
        out.push(one);
        let mut area = vec![1u8];
        area.extend_from_slice(&b);
        out.push(area);
    }
    out
}
