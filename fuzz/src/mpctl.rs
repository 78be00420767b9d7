//! Target `mpctl`: brisk-tcp's MPTCP control decisions (issue 31 §4) on arbitrary
//! options and sequences: the MP_JOIN handshake (`mptcp::join`), the ADD_ADDR gate
//! and the other control options (`mptcp::control`), the token table
//! (`mptcp::token`) against a map.
//!
//! Bytes 0-15 are the two keys; then operations, each a byte (low nibble: which)
//! and its fields, with options parsed from input bytes (so every form, valid or
//! not, reaches the decisions). Invariants:
//! - no panic;
//! - a join verifies only with the true HMAC (a forged one from the input verifies
//!   exactly when it equals the real one);
//! - the ADD_ADDR gate lets through at most `ADD_ADDR_BURST` + one per
//!   `ADD_ADDR_REFILL` of elapsed time, and an announcement passes only with the
//!   right HMAC;
//! - REMOVE_ADDR closes only subflows whose id it names, at most `MAX_SUBFLOWS`;
//! - the token table agrees with a map and never holds more than its limit.

use crate::input::Input;
use brisk_tcp::mptcp::control::{
    self, AddAddrGate, AddAddrVerdict, FailCtx, Keys, ADD_ADDR_BURST, ADD_ADDR_REFILL,
};
use brisk_tcp::mptcp::counters::MptcpCounters;
use brisk_tcp::mptcp::join::{JoinError, JoinInitiator, JoinResponder};
use brisk_tcp::mptcp::token::{TokenError, TokenTable};
use brisk_tcp::mptcp::MAX_SUBFLOWS;
use brisk_time::{Duration, Instant};
use brisk_wire::mptcp::{crypto, MpJoin, MptcpOption};
use std::collections::HashMap;

const TOKEN_LIMIT: usize = 16;
const MAX_OPS: usize = 512;

fn option(inp: &mut Input<'_>) -> Option<MptcpOption> {
    let n = usize::from(inp.u8()) % 29;
    MptcpOption::parse(inp.bytes(n)).ok()
}

fn u64_of(inp: &mut Input<'_>) -> u64 {
    (u64::from(inp.u32()) << 32) | u64::from(inp.u32())
}

pub fn mpctl(data: &[u8]) {
    let mut inp = Input::new(data);
    let keys = Keys {
        local: u64_of(&mut inp),
        remote: u64_of(&mut inp),
    };
    let peer = Keys {
        local: keys.remote,
        remote: keys.local,
    };
    let mut c = MptcpCounters::default();
    let mut gate = AddAddrGate::new(keys);
    let t0 = Instant::from_secs(1);
    let mut now = t0;
    let mut through = 0u64;
    let mut tokens: TokenTable<u16> = TokenTable::new(TOKEN_LIMIT);
    let mut model: HashMap<u32, u16> = HashMap::new();
    for i in 0..MAX_OPS {
        if inp.is_empty() {
            break;
        }
        let op = inp.u8();
        match op % 12 {
            0 => {
                // Responder: a SYN option from the input, then a third ACK.
                let Some(syn) = option(&mut inp) else {
                    continue;
                };
                let nonce = inp.u32();
                let Ok((r, synack)) =
                    JoinResponder::on_syn(keys.local, keys.remote, &syn, 1, false, nonce)
                else {
                    continue;
                };
                assert!(matches!(synack, MptcpOption::MpJoin(MpJoin::SynAck { .. })));
                let mut hmac = [0u8; 20];
                for (d, s) in hmac.iter_mut().zip(inp.bytes(20)) {
                    *d = *s;
                }
                let real = crypto::join_ack_hmac(keys.remote, keys.local, r.peer().nonce, nonce);
                let ok = r.on_ack(&MptcpOption::MpJoin(MpJoin::Ack { hmac })).is_ok();
                assert_eq!(ok, hmac == real, "a forged third-ACK HMAC verified");
                if op & 0x80 != 0 {
                    // The genuine initiator always completes.
                    let mut a = JoinInitiator::new(keys.remote, keys.local, 2, true, inp.u32());
                    let (r, synack) = JoinResponder::on_syn(
                        keys.local,
                        keys.remote,
                        &a.syn_option(),
                        1,
                        false,
                        nonce,
                    )
                    .expect("a genuine SYN is accepted");
                    let ack = a.on_synack(&synack).expect("a genuine SYN/ACK verifies");
                    r.on_ack(&ack).expect("a genuine third ACK verifies");
                }
            }
            1 => {
                // Initiator: a SYN/ACK from the input.
                let mut a = JoinInitiator::new(keys.local, keys.remote, 1, false, inp.u32());
                let Some(o) = option(&mut inp) else { continue };
                match a.on_synack(&o) {
                    Ok(ack) => {
                        let MptcpOption::MpJoin(MpJoin::SynAck {
                            truncated_hmac,
                            nonce,
                            ..
                        }) = o
                        else {
                            panic!("accepted a non-SYN/ACK: {o:?}")
                        };
                        assert_eq!(
                            truncated_hmac,
                            crypto::join_synack_hmac(keys.remote, keys.local, nonce, a.nonce())
                        );
                        assert!(matches!(ack, MptcpOption::MpJoin(MpJoin::Ack { .. })));
                    }
                    Err(e) => c.count_join_error(&e),
                }
            }
            2 | 3 => {
                // ADD_ADDR: parsed from the input, or built by the peer (good HMAC).
                let opt = if op % 12 == 2 {
                    option(&mut inp)
                } else {
                    let b = inp.bytes(7);
                    let get = |i: usize| b.get(i).copied().unwrap_or(0);
                    Some(control::announce(
                        peer,
                        brisk_tcp::mptcp::pm::Addr {
                            id: get(0),
                            ip: std::net::Ipv4Addr::new(198, 18, get(1), get(2)).into(),
                            port: u16::from_be_bytes([get(3), get(4)]) & 0x0fff,
                        },
                    ))
                };
                let Some(MptcpOption::AddAddr(a)) = opt else {
                    continue;
                };
                let v = gate.on_add_addr(now, &a, &mut c);
                if let AddAddrVerdict::Announce { .. } | AddAddrVerdict::EchoOnly { .. } = v {
                    through += 1;
                    let want = crypto::add_addr_hmac(
                        peer.local,
                        peer.remote,
                        a.address_id,
                        a.addr,
                        a.port,
                    );
                    assert_eq!(a.hmac, Some(want), "an ADD_ADDR passed without its HMAC");
                }
                let elapsed = now.saturating_duration_since(t0).as_nanos() as u64;
                let bound = u64::from(ADD_ADDR_BURST) + elapsed / ADD_ADDR_REFILL.as_nanos() as u64;
                assert!(
                    through <= bound,
                    "{through} ADD_ADDRs through, bound {bound}"
                );
            }
            4 => now = now.saturating_add(Duration::from_millis(u64::from(inp.u16()))),
            5 => {
                let Some(MptcpOption::RemoveAddr(rm)) = option(&mut inp) else {
                    continue;
                };
                let n = usize::from(inp.u8()) % 20;
                let ids: Vec<Option<u8>> = inp
                    .bytes(n)
                    .iter()
                    .map(|&b| (b & 0x80 == 0).then_some(b & 0x0f))
                    .collect();
                let close = control::on_remove_addr(&rm, &ids, &mut c);
                assert!(close.len() <= MAX_SUBFLOWS);
                for s in close.iter() {
                    assert!(ids[s].is_some_and(|id| rm.ids().contains(&id)));
                }
            }
            6 => {
                let key = if op & 0x80 != 0 {
                    keys.local
                } else {
                    u64_of(&mut inp)
                };
                let v = control::on_fastclose(keys, key, &mut c);
                assert_eq!(v == control::FastcloseVerdict::ResetAll, key == keys.local);
            }
            7 => {
                let ctx = FailCtx {
                    allow_infinite_fallback: op & 0x10 != 0,
                    fail_sent: op & 0x20 != 0,
                };
                let _ = control::on_mp_fail(u64_of(&mut inp), ctx, &mut c);
                let _ = control::on_checksum_failure(now, u64_of(&mut inp), op & 0x40 != 0, &mut c);
            }
            8 => {
                if let Some(MptcpOption::MpTcpRst(r)) = option(&mut inp) {
                    let rep = control::on_tcprst(&r, op & 0x10 != 0, &mut c);
                    assert_eq!(rep.is_some(), op & 0x10 != 0);
                }
                let _ = control::on_mp_prio(op & 0x20 != 0, op & 0x40 != 0, &mut c);
            }
            9 => {
                // Token table: insert.
                let token = u32::from(inp.u8() % 64) << (inp.u8() % 24);
                let r = tokens.insert(token, i as u16);
                if model.contains_key(&token) {
                    assert_eq!(r, Err(TokenError::Collision { token }));
                } else if model.len() >= TOKEN_LIMIT {
                    assert_eq!(r, Err(TokenError::Full { limit: TOKEN_LIMIT }));
                } else {
                    assert_eq!(r, Ok(()));
                    model.insert(token, i as u16);
                }
            }
            10 => {
                let token = u32::from(inp.u8() % 64) << (inp.u8() % 24);
                assert_eq!(tokens.remove(token), model.remove(&token));
            }
            _ => {
                let token = u32::from(inp.u8() % 64) << (inp.u8() % 24);
                assert_eq!(tokens.get(token), model.get(&token).copied());
                let _ = JoinError::UnknownToken { token }.reset_reason();
            }
        }
        assert_eq!(tokens.len(), model.len());
        assert!(tokens.len() <= TOKEN_LIMIT);
    }
    for (t, h) in &model {
        assert_eq!(tokens.get(*t), Some(*h));
    }
}

/// Seeds: a genuine join, an ADD_ADDR burst with time steps, each control option.
pub(crate) fn seeds() -> Vec<Vec<u8>> {
    let mut keys = Vec::new();
    keys.extend_from_slice(&0x0697be544757115cu64.to_be_bytes());
    keys.extend_from_slice(&0x994b4d09d49184d3u64.to_be_bytes());
    let mut out = Vec::new();
    // A genuine join (op 0x84: 0 mod 12, bit 7 set): a SYN the responder accepts.
    let syn = JoinInitiator::new(0x994b4d09d49184d3, 0x0697be544757115c, 1, false, 7).syn_option();
    let mut b = [0u8; 40];
    let n = syn.emit(&mut b).expect("fits");
    let mut s = keys.clone();
    s.push(0x84);
    s.push((n - 2) as u8);
    s.extend_from_slice(&b[2..n]);
    s.extend_from_slice(&[0, 0, 0, 9]);
    s.extend_from_slice(&[0; 20]);
    s.extend_from_slice(&[0, 0, 0, 5]);
    out.push(s);
    // Eleven valid ADD_ADDRs, a time step, more; token inserts, removals, lookups.
    let mut s = keys.clone();
    for i in 0..11u8 {
        s.extend_from_slice(&[3, i, 1, i, 0, 0, 0, 0]);
    }
    s.extend_from_slice(&[4, 0, 100]);
    for i in 0..4u8 {
        s.extend_from_slice(&[3, i, 2, i, 0, 0, 0, 0]);
    }
    for i in 0..20u8 {
        s.extend_from_slice(&[9, i, i % 5]);
    }
    // Remove, look up, MP_FASTCLOSE with our key (138: 6 mod 12, bit 7), MP_FAIL and a
    // checksum failure (91: 7 mod 12, bits 4 and 6).
    s.extend_from_slice(&[10, 3, 3, 11, 4, 4, 138, 91]);
    s.extend_from_slice(&[0; 16]);
    out.push(s);
    out
}
