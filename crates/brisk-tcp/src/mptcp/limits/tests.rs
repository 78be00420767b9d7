//! One test per bound under hostile input. Existing tests elsewhere cover the rest
//! and are named in docs/security.md: `dsn::tests::recv_map_flood_stays_bounded`
//! (RecvMap limit), `dsn::tests::send_map_errors_name_the_field` (SendMap limit and
//! MAX_MAP_LEN), `recv::tests::range_flood_is_refused_and_counted` (max_ranges),
//! `pm::tests` (action queue and limits).

use super::*;
use crate::mptcp::control::{self, AddAddrGate, AddAddrVerdict, Keys};
use crate::mptcp::counters::MptcpCounters;
use crate::mptcp::dsn::{MapVerdict, Mapping, RecvMap, WindowCtx};
use crate::mptcp::join::{JoinError, JoinInitiator, JoinResponder};
use crate::mptcp::pm::{Addr, Limits, PathManager, PmAction, PmConfig};
use crate::mptcp::token::{TokenError, TokenTable};
use brisk_time::{Duration, Instant};
use brisk_wire::mptcp::{crypto, MptcpError, MptcpOption};
use std::net::{IpAddr, Ipv4Addr};

const SERVER: Keys = Keys {
    local: 0x5e5e_5e5e_0000_0001,
    remote: 0xc1c1_c1c1_0000_0002,
};

fn addr(id: u8, a: u8, b: u8) -> Addr {
    Addr {
        id,
        ip: IpAddr::V4(Ipv4Addr::new(198, 18, a, b)),
        port: 0,
    }
}

/// What a server does with a SYN carrying MP_JOIN, composed from the pieces: token
/// lookup, the path manager's limit, then the responder (as `subflow_check_req`).
fn accept_join(
    tokens: &TokenTable<u32>,
    pm: &mut PathManager,
    syn: &MptcpOption,
    from: Addr,
    nonce: u32,
    c: &mut MptcpCounters,
) -> Result<(usize, JoinResponder, MptcpOption), JoinError> {
    let r = (|| {
        let MptcpOption::MpJoin(brisk_wire::mptcp::MpJoin::Syn { token, .. }) = *syn else {
            return Err(JoinError::Missing { step: "SYN" });
        };
        // Connection 0 holds SERVER's keys in this test.
        tokens.get(token).ok_or(JoinError::UnknownToken { token })?;
        c.join_syn_rx += 1;
        let slot = pm
            .allow_join(addr(0, 0, 1), from)
            .ok_or(JoinError::LimitReached)?;
        let (resp, synack) =
            JoinResponder::on_syn(SERVER.local, SERVER.remote, syn, 0, false, nonce)?;
        Ok((slot, resp, synack))
    })();
    if let Err(e) = &r {
        c.count_join_error(e);
    }
    r
}

#[test]
fn a_join_flood_beyond_the_limit_is_refused() {
    let mut tokens = TokenTable::new(4);
    tokens.insert(crypto::token(SERVER.local), 0u32).unwrap();
    let cfg = PmConfig {
        limits: Limits {
            subflows: 8,
            add_addr_accepted: 0,
        },
        ..PmConfig::default()
    };
    let mut pm = PathManager::new(&cfg).unwrap();
    pm.on_established(Instant::ZERO, addr(0, 0, 1), addr(0, 1, 1), None);
    let mut c = MptcpCounters::default();
    let mut accepted = 0;
    for i in 0..10_000u32 {
        let peer = JoinInitiator::new(SERVER.remote, SERVER.local, 1, false, i);
        let from = addr(1, 2, (i % 250) as u8);
        match accept_join(&tokens, &mut pm, &peer.syn_option(), from, !i, &mut c) {
            Ok(_) => accepted += 1,
            Err(e) => {
                assert_eq!(e, JoinError::LimitReached);
                assert_eq!(
                    e.reset_reason(),
                    brisk_wire::mptcp::ResetReason::AdministrativelyProhibited
                );
            }
        }
        assert!(pm.subflows().len() <= MAX_SUBFLOWS);
    }
    assert_eq!(
        accepted, 8,
        "the subflows limit, beside the initial subflow"
    );
    assert_eq!(pm.subflows().len(), 9);
    assert_eq!(c.join_syn_rx, 10_000);
    assert_eq!(c.join_rejected, 10_000 - 8);
    // Joins naming a token nobody holds: refused before the path manager is asked.
    for t in 0..1000u32 {
        let syn = MptcpOption::MpJoin(brisk_wire::mptcp::MpJoin::Syn {
            backup: false,
            address_id: 1,
            token: t.wrapping_mul(0x9e37_79b9),
            nonce: t,
        });
        let e = accept_join(&tokens, &mut pm, &syn, addr(1, 3, 1), 0, &mut c).unwrap_err();
        assert!(matches!(e, JoinError::UnknownToken { .. }));
    }
    assert_eq!(c.join_no_token_found, 1000);
    assert_eq!(pm.stats.join_refused, 10_000 - 8);
}

#[test]
fn a_forged_third_ack_never_completes_a_join() {
    // The SYN is cheap to forge (the token is public on the wire); the third ACK
    // needs both keys. 10 000 forged HMACs all fail and are counted.
    let syn = JoinInitiator::new(SERVER.remote, SERVER.local, 1, false, 7).syn_option();
    let (resp, _) = JoinResponder::on_syn(SERVER.local, SERVER.remote, &syn, 0, false, 8).unwrap();
    let mut c = MptcpCounters::default();
    for i in 0..10_000u32 {
        let mut hmac = [0u8; 20];
        hmac[..4].copy_from_slice(&i.to_be_bytes());
        let e = resp
            .on_ack(&MptcpOption::MpJoin(brisk_wire::mptcp::MpJoin::Ack {
                hmac,
            }))
            .unwrap_err();
        c.count_join_error(&e);
    }
    assert_eq!(c.join_ack_hmac_failure, 10_000);
}

#[test]
fn the_token_table_is_bounded() {
    let mut t: TokenTable<u32> = TokenTable::new(100);
    let mut k = 1u64;
    let mut full = 0;
    for i in 0..10_000u32 {
        match t.insert_new_key(
            || {
                k = k.wrapping_mul(0x5851_f42d_4c95_7f2d).wrapping_add(1);
                k
            },
            i,
        ) {
            Ok(_) => {}
            Err(TokenError::Full { limit: 100 }) => full += 1,
            Err(e) => panic!("{e}"),
        }
        assert!(t.len() <= 100);
    }
    assert_eq!(full, 10_000 - 100);
}

#[test]
fn an_add_addr_flood_keeps_the_tables_bounded() {
    // A peer with the keys (so its HMACs verify) announces a new address every
    // millisecond for 100 s; the path manager accepts up to its limits and the
    // gate lets at most the burst plus one per 25 ms through.
    let client = Keys {
        local: SERVER.remote,
        remote: SERVER.local,
    };
    let mut gate = AddAddrGate::new(client);
    let cfg = PmConfig {
        limits: Limits {
            subflows: 8,
            add_addr_accepted: 8,
        },
        ..PmConfig::default()
    };
    let mut pm = PathManager::new(&cfg).unwrap();
    let t0 = Instant::from_secs(1);
    pm.on_established(t0, addr(0, 0, 2), addr(0, 0, 1), None);
    while pm.poll_action().is_some() {}
    let mut c = MptcpCounters::default();
    let mut through = 0u64;
    let mut echoes = 0u64;
    let n = 100_000u32;
    for i in 0..n {
        let now = t0.saturating_add(Duration::from_millis(u64::from(i)));
        let a = addr(1 + (i % 255) as u8, (i >> 8) as u8, i as u8);
        let MptcpOption::AddAddr(opt) = control::announce(SERVER, a) else {
            unreachable!()
        };
        match gate.on_add_addr(now, &opt, &mut c) {
            AddAddrVerdict::Announce { addr } => {
                through += 1;
                pm.on_add_addr(addr);
            }
            AddAddrVerdict::RateLimited => {}
            v => panic!("{v:?}"),
        }
        // The caller drains the actions it is given; each step yields a bounded few.
        let mut k = 0;
        while let Some(act) = pm.poll_action() {
            k += 1;
            if matches!(act, PmAction::AddAddrEcho { .. }) {
                echoes += 1;
            }
        }
        assert!(k <= PM_ACTION_QUEUE);
        assert!(pm.remote_count() <= PM_ADDR_MAX + 1);
        assert!(pm.subflows().len() <= MAX_SUBFLOWS);
    }
    let bound = u64::from(ADD_ADDR_BURST) + 100_000 / ADD_ADDR_REFILL.as_millis() as u64;
    assert!(through <= bound, "{through} > {bound}");
    assert_eq!(c.add_addr, through);
    assert_eq!(c.add_addr_drop, u64::from(n) - through);
    assert_eq!(echoes, through, "every ADD_ADDR let through is echoed");
    assert_eq!(pm.add_addr_accepted(), 8);

    // Without draining, the path manager's queue stops at its limit.
    let mut pm = PathManager::new(&cfg).unwrap();
    for i in 0..1000u32 {
        pm.on_add_addr(addr(1 + (i % 200) as u8, 9, i as u8));
    }
    let mut k = 0;
    while pm.poll_action().is_some() {
        k += 1;
    }
    assert_eq!(k, PM_ACTION_QUEUE);
    assert!(pm.stats.actions_dropped >= 1000 - PM_ACTION_QUEUE as u64);

    // Forged ADD_ADDRs (no keys) never reach the path manager and cost no tokens.
    let mut gate = AddAddrGate::new(client);
    for i in 0..10_000u32 {
        let a = addr(1, 7, i as u8);
        let MptcpOption::AddAddr(mut opt) = control::announce(SERVER, a) else {
            unreachable!()
        };
        opt.hmac = Some(u64::from(i));
        assert_eq!(gate.on_add_addr(t0, &opt, &mut c), AddAddrVerdict::BadHmac);
    }
    assert_eq!(c.add_addr_hmac_failure, 10_000);
    let MptcpOption::AddAddr(good) = control::announce(SERVER, addr(1, 7, 1)) else {
        unreachable!()
    };
    assert!(matches!(
        gate.on_add_addr(t0, &good, &mut c),
        AddAddrVerdict::Announce { .. }
    ));
}

#[test]
fn mappings_outside_the_window_are_refused() {
    // What recv_map_verdicts_as_linux leaves out: far beyond the edge, a window that
    // wraps at 2^64, a DATA_FIN alone beyond the edge.
    let map = |dsn: u64, sub_off: u64, len: u16, data_fin: bool| Mapping {
        dsn,
        sub_off,
        len,
        data_fin,
    };
    let mut r = RecvMap::new(16);
    let mut c = MptcpCounters::default();
    let win = WindowCtx {
        data_ack: 1_000,
        right_edge: 2_000,
    };
    for dsn in [2_000, 2_001, 1 << 40, (1 << 63) + 999] {
        let v = r.on_mapping(map(dsn, 0, 100, false), 0, 100, win);
        c.count_mapping(v);
        assert_eq!(v, MapVerdict::OutsideWindow, "dsn {dsn}");
    }
    assert_eq!(c.no_dss_in_window, 4);
    assert!(r.is_empty(), "nothing held");
    let wrap = WindowCtx {
        data_ack: u64::MAX - 100,
        right_edge: (u64::MAX - 100).wrapping_add(1_000),
    };
    assert_eq!(
        r.on_mapping(map(u64::MAX - 50, 0, 200, false), 0, 200, wrap),
        MapVerdict::New,
        "a mapping across 2^64 inside the window"
    );
    assert_eq!(
        r.on_mapping(map(wrap.right_edge, 500, 10, false), 500, 10, wrap),
        MapVerdict::OutsideWindow
    );
    assert_eq!(
        r.on_mapping(map(wrap.right_edge + 5, 0, 1, true), 0, 0, wrap),
        MapVerdict::OutsideWindow,
        "a DATA_FIN alone beyond the edge"
    );
    assert_eq!(
        r.on_mapping(map(wrap.right_edge - 1, 0, 1, true), 0, 0, wrap),
        MapVerdict::DataFinOnly {
            dsn: wrap.right_edge - 1
        }
    );
    // The data-level length is 16 bits: longer mappings cannot even be expressed.
    assert_eq!(MAX_MAP_LEN, 65_535);
}

#[test]
fn remove_addr_ids_and_subflow_slots_are_bounded() {
    // Nine ids: the parser refuses, as Linux's (MPTCP_RM_IDS_MAX).
    let data = [0x40, 1, 2, 3, 4, 5, 6, 7, 8, 9];
    assert!(matches!(
        MptcpOption::parse(&data),
        Err(MptcpError::BadLength { .. })
    ));
    assert_eq!(MAX_REMOVE_IDS, 8);
    // REMOVE_ADDR decisions look at most MAX_SUBFLOWS slots.
    let mut c = MptcpCounters::default();
    let rm = brisk_wire::mptcp::RemoveAddr::new(&[1]).unwrap();
    let close = control::on_remove_addr(&rm, &[Some(1); 64], &mut c);
    assert_eq!(close.len(), MAX_SUBFLOWS);
    assert_eq!(PM_ADDR_MAX, 8);
    assert_eq!(ADD_ADDR_RETRANS_MAX, 3);
    assert_eq!(MP_FAIL_TIMEOUT, Duration::from_secs(120));
}
