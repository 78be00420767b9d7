use super::*;
use brisk_wire::mptcp::{MpTcpRst, RemoveAddr};
use proptest::prelude::*;

/// Keys of a Linux 6.18 capture (brisk-wire's tests/mptcp/linux_capture.sh): A the
/// client, B the server.
const LINUX_KEY_A: u64 = 0x0697be544757115c;
const LINUX_KEY_B: u64 = 0x994b4d09d49184d3;

fn wire(o: &MptcpOption) -> String {
    let mut b = [0u8; 40];
    let n = o.emit(&mut b).unwrap();
    b[..n].iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn linux_captured_join_is_reproduced_byte_for_byte() {
    // Linux's own MP_JOIN exchange (client nonce 0x7479f3a0, server 0x1a1eb3d6,
    // address id 1 both ways): brisk builds the same three options from the keys
    // and nonces, and each side accepts the other's.
    let mut a = JoinInitiator::new(LINUX_KEY_A, LINUX_KEY_B, 1, false, 0x7479f3a0);
    let syn = a.syn_option();
    assert_eq!(wire(&syn), "1e0c100111e2b34b7479f3a0");
    let (b, synack) =
        JoinResponder::on_syn(LINUX_KEY_B, LINUX_KEY_A, &syn, 1, false, 0x1a1eb3d6).unwrap();
    assert_eq!(wire(&synack), "1e10100159dd5d47d135fedc1a1eb3d6");
    let ack = a.on_synack(&synack).unwrap();
    assert_eq!(
        wire(&ack),
        "1e1810005823f3f42d8d4d8eb6b756c50914638611f9861f"
    );
    b.on_ack(&ack).unwrap();
    assert_eq!(
        a.peer(),
        Some(JoinPeer {
            address_id: 1,
            backup: false,
            nonce: 0x1a1eb3d6
        })
    );
    assert_eq!(
        b.peer(),
        JoinPeer {
            address_id: 1,
            backup: false,
            nonce: 0x7479f3a0
        }
    );
}

#[test]
fn python_hmac_vectors() {
    // brisk-wire/tests/mptcp/vectors.py, first join row: sender key 0x0123…, receiver
    // 0xfedc…, sender nonce 0x01020304, receiver nonce 0xa0b0c0d0.
    let (k1, k2, n1, n2) = (
        0x0123456789abcdef,
        0xfedcba9876543210,
        0x01020304,
        0xa0b0c0d0,
    );
    // As responder B = sender: its SYN/ACK carries the truncated HMAC.
    let syn = JoinInitiator::new(k2, k1, 0, false, n2).syn_option();
    let (_, synack) = JoinResponder::on_syn(k1, k2, &syn, 0, false, n1).unwrap();
    let MptcpOption::MpJoin(MpJoin::SynAck { truncated_hmac, .. }) = synack else {
        panic!("{synack:?}")
    };
    assert_eq!(truncated_hmac, 0x0ca3ceb849b1a943);
    // As initiator A = sender: its third ACK carries the 160-bit HMAC.
    let mut a = JoinInitiator::new(k1, k2, 0, false, n1);
    let (b, synack) = JoinResponder::on_syn(k2, k1, &a.syn_option(), 0, false, n2).unwrap();
    let ack = a.on_synack(&synack).unwrap();
    assert_eq!(wire(&ack)[8..], *"0ca3ceb849b1a94372451ab6b22b0ba8e61b1aff");
    b.on_ack(&ack).unwrap();
}

fn handshake(ka: u64, kb: u64, na: u32, nb: u32) -> (JoinInitiator, JoinResponder, MptcpOption) {
    let mut a = JoinInitiator::new(ka, kb, 2, true, na);
    let (b, synack) = JoinResponder::on_syn(kb, ka, &a.syn_option(), 3, false, nb).unwrap();
    let ack = a.on_synack(&synack).unwrap();
    (a, b, ack)
}

#[test]
fn backup_and_address_ids_travel_both_ways() {
    let (a, b, ack) = handshake(1, 2, 3, 4);
    b.on_ack(&ack).unwrap();
    assert_eq!(
        b.peer(),
        JoinPeer {
            address_id: 2,
            backup: true,
            nonce: 3
        }
    );
    let p = a.peer().unwrap();
    assert_eq!((p.address_id, p.backup, p.nonce), (3, false, 4));
}

#[test]
fn tampered_synack_hmac_or_nonce_is_refused() {
    let mut a = JoinInitiator::new(11, 22, 1, false, 33);
    let (_, synack) = JoinResponder::on_syn(22, 11, &a.syn_option(), 1, false, 44).unwrap();
    let MptcpOption::MpJoin(MpJoin::SynAck {
        backup,
        address_id,
        truncated_hmac,
        nonce,
    }) = synack
    else {
        panic!()
    };
    for (h, n) in [
        (truncated_hmac ^ 1, nonce),
        (truncated_hmac, nonce ^ 0x8000_0000),
    ] {
        let bad = MptcpOption::MpJoin(MpJoin::SynAck {
            backup,
            address_id,
            truncated_hmac: h,
            nonce: n,
        });
        let e = a.on_synack(&bad).unwrap_err();
        assert_eq!(e, JoinError::BadSynAckHmac { got: h });
        assert_eq!(e.mib(), Some("MPJoinSynAckHMacFailure"));
        assert_eq!(e.reset_reason(), ResetReason::MptcpError);
        assert_eq!(a.peer(), None, "a refused SYN/ACK teaches nothing");
    }
    // The genuine one still passes afterwards.
    a.on_synack(&synack).unwrap();
}

#[test]
fn tampered_ack_hmac_is_refused() {
    let (_, b, ack) = handshake(5, 6, 7, 8);
    let MptcpOption::MpJoin(MpJoin::Ack { hmac }) = ack else {
        panic!()
    };
    for i in [0, 7, 19] {
        let mut h = hmac;
        h[i] ^= 0x40;
        let e = b
            .on_ack(&MptcpOption::MpJoin(MpJoin::Ack { hmac: h }))
            .unwrap_err();
        assert_eq!(e, JoinError::BadAckHmac);
        assert_eq!(e.mib(), Some("MPJoinAckHMacFailure"));
    }
    // An ACK computed with another nonce (a replay from an earlier join) fails too.
    let (_, _, other) = handshake(5, 6, 7, 9);
    assert_eq!(b.on_ack(&other), Err(JoinError::BadAckHmac));
    b.on_ack(&ack).unwrap();
}

#[test]
fn wrong_subtype_form_and_token_are_named() {
    let syn = JoinInitiator::new(1, 2, 0, false, 9).syn_option();
    // The token is of key 2; a caller that resolved it to key 3 is caught.
    let e = JoinResponder::on_syn(3, 1, &syn, 0, false, 1).unwrap_err();
    assert!(matches!(e, JoinError::TokenMismatch { .. }), "{e}");
    assert!(e.to_string().contains("token"), "{e}");
    let prio = MptcpOption::MpPrio { backup: true };
    assert_eq!(
        JoinResponder::on_syn(2, 1, &prio, 0, false, 1).unwrap_err(),
        JoinError::NotMpJoin {
            step: "SYN",
            got: Subtype::MpPrio
        }
    );
    let ack_form = MptcpOption::MpJoin(MpJoin::Ack { hmac: [0; 20] });
    let e = JoinResponder::on_syn(2, 1, &ack_form, 0, false, 1).unwrap_err();
    assert!(
        e.to_string().contains("wrong form") && e.to_string().contains("12"),
        "{e}"
    );
    let mut a = JoinInitiator::new(1, 2, 0, false, 9);
    assert!(matches!(
        a.on_synack(&syn),
        Err(JoinError::WrongForm { expected: "16", .. })
    ));
    let rst = MptcpOption::MpTcpRst(MpTcpRst {
        transient: false,
        reason: ResetReason::Unspecified,
    });
    assert!(matches!(
        a.on_synack(&rst),
        Err(JoinError::NotMpJoin {
            got: Subtype::MpTcpRst,
            ..
        })
    ));
    let (b, _) = JoinResponder::on_syn(2, 1, &syn, 0, false, 1).unwrap();
    let rm = MptcpOption::RemoveAddr(RemoveAddr::new(&[1]).unwrap());
    assert!(matches!(b.on_ack(&rm), Err(JoinError::NotMpJoin { .. })));
    assert!(matches!(
        b.on_ack(&syn),
        Err(JoinError::WrongForm { expected: "24", .. })
    ));
}

#[test]
fn refusals_map_to_linux_counters_and_reasons() {
    assert_eq!(
        JoinError::UnknownToken { token: 1 }.mib(),
        Some("MPJoinNoTokenFound")
    );
    assert_eq!(JoinError::LimitReached.mib(), Some("MPJoinRejected"));
    assert_eq!(
        JoinError::LimitReached.reset_reason(),
        ResetReason::AdministrativelyProhibited
    );
    assert_eq!(
        JoinError::Missing { step: "SYN/ACK" }.reset_reason(),
        ResetReason::MptcpError
    );
}

#[test]
fn find_join_picks_mp_join_among_options() {
    let mut extra = ExtraOptions::new();
    assert_eq!(
        find_join(&extra, "SYN/ACK"),
        Err(JoinError::Missing { step: "SYN/ACK" })
    );
    // A broken kind-30 item and an MP_PRIO before the MP_JOIN are skipped.
    extra.push(30, &[0xf0]).unwrap();
    brisk_wire::mptcp::push(&mut extra, &MptcpOption::MpPrio { backup: false }).unwrap();
    let syn = JoinInitiator::new(1, 2, 4, false, 5).syn_option();
    brisk_wire::mptcp::push(&mut extra, &syn).unwrap();
    assert_eq!(find_join(&extra, "SYN"), Ok(syn));
}

proptest! {
    #[test]
    fn any_keys_and_nonces_round_trip(ka: u64, kb: u64, na: u32, nb: u32, flip in 0usize..20) {
        let (_, b, ack) = handshake(ka, kb, na, nb);
        prop_assert!(b.on_ack(&ack).is_ok());
        let MptcpOption::MpJoin(MpJoin::Ack { mut hmac }) = ack else { unreachable!() };
        hmac[flip] ^= 1;
        prop_assert_eq!(b.on_ack(&MptcpOption::MpJoin(MpJoin::Ack { hmac })), Err(JoinError::BadAckHmac));
        // The wrong keys (one swapped for another) never verify.
        let mut a2 = JoinInitiator::new(ka, kb ^ 1, 0, false, na);
        let (_, synack) = JoinResponder::on_syn(kb, ka, &JoinInitiator::new(ka, kb, 0, false, na).syn_option(), 0, false, nb).unwrap();
        let bad = matches!(a2.on_synack(&synack), Err(JoinError::BadSynAckHmac { .. }));
        prop_assert!(bad);
    }
}
