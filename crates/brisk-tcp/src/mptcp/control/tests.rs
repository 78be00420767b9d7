use super::*;
use std::net::Ipv4Addr;

const LINUX_KEY_A: u64 = 0x0697be544757115c;
const LINUX_KEY_B: u64 = 0x994b4d09d49184d3;
/// The client's keys in the Linux 6.18 capture (brisk-wire tests/mptcp).
const CLIENT: Keys = Keys {
    local: LINUX_KEY_A,
    remote: LINUX_KEY_B,
};

fn parse_hex(h: &str) -> MptcpOption {
    let b: Vec<u8> = (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
        .collect();
    MptcpOption::parse(&b[2..]).unwrap()
}

fn v4(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(198, 18, 1, last))
}

fn t(ms: u64) -> Instant {
    Instant::from_millis(1000 + ms)
}

#[test]
fn linux_add_addr_and_echo() {
    // Server B announced 198.18.1.2 id 1 to client A; A's gate accepts it.
    let MptcpOption::AddAddr(add) = parse_hex("1e103001c61201027a60fc8d12a67a5a") else {
        panic!()
    };
    let mut g = AddAddrGate::new(CLIENT);
    let mut c = MptcpCounters::default();
    let addr = Addr {
        id: 1,
        ip: v4(2),
        port: 0,
    };
    assert_eq!(
        g.on_add_addr(t(0), &add, &mut c),
        AddAddrVerdict::Announce { addr }
    );
    assert_eq!(c.add_addr, 1);
    // Linux's echo is byte for byte ours.
    let MptcpOption::AddAddr(echo) = parse_hex("1e083101c6120102") else {
        panic!()
    };
    assert_eq!(echo_of(&add), MptcpOption::AddAddr(echo));
    // B's gate sees the echo of its own announcement.
    let mut gb = AddAddrGate::new(Keys {
        local: LINUX_KEY_B,
        remote: LINUX_KEY_A,
    });
    assert_eq!(
        gb.on_add_addr(t(0), &echo, &mut c),
        AddAddrVerdict::Echoed { addr }
    );
    assert_eq!(c.echo_add, 1);
    // And B's own announcement, built here, is Linux's option.
    assert_eq!(
        announce(
            Keys {
                local: LINUX_KEY_B,
                remote: LINUX_KEY_A
            },
            addr
        ),
        MptcpOption::AddAddr(add)
    );
}

#[test]
fn a_bad_hmac_is_dropped_and_counted() {
    let keys = Keys {
        local: 1,
        remote: 2,
    };
    let peer = Keys {
        local: 2,
        remote: 1,
    };
    let addr = Addr {
        id: 3,
        ip: v4(9),
        port: 8080,
    };
    let MptcpOption::AddAddr(good) = announce(peer, addr) else {
        panic!()
    };
    let mut g = AddAddrGate::new(keys);
    let mut c = MptcpCounters::default();
    // Each field is covered by the HMAC: a changed id, address, port or HMAC fails.
    let tampered = [
        AddAddr {
            hmac: good.hmac.map(|h| h ^ 1),
            ..good
        },
        AddAddr {
            address_id: 4,
            ..good
        },
        AddAddr {
            addr: v4(10),
            ..good
        },
        AddAddr {
            port: Some(8081),
            ..good
        },
        AddAddr { port: None, ..good },
    ];
    for a in &tampered {
        assert_eq!(g.on_add_addr(t(0), a, &mut c), AddAddrVerdict::BadHmac);
    }
    assert_eq!(c.add_addr_hmac_failure, 5);
    assert_eq!(c.add_addr, 0);
    // Our own announcement is not accepted as the peer's (keys in the other order).
    let MptcpOption::AddAddr(mine) = announce(keys, addr) else {
        panic!()
    };
    assert_eq!(g.on_add_addr(t(0), &mine, &mut c), AddAddrVerdict::BadHmac);
    assert_eq!(
        g.on_add_addr(t(0), &good, &mut c),
        AddAddrVerdict::Announce { addr }
    );
    assert_eq!((c.add_addr, c.port_add), (1, 1));
}

#[test]
fn id_zero_must_be_the_initial_address() {
    let keys = Keys {
        local: 10,
        remote: 20,
    };
    let peer = Keys {
        local: 20,
        remote: 10,
    };
    let mut g = AddAddrGate::new(keys);
    g.set_initial_remote(v4(1), 443);
    let mut c = MptcpCounters::default();
    let other = Addr {
        id: 0,
        ip: v4(7),
        port: 0,
    };
    let MptcpOption::AddAddr(o) = announce(peer, other) else {
        panic!()
    };
    assert_eq!(
        g.on_add_addr(t(0), &o, &mut c),
        AddAddrVerdict::EchoOnly { echo: echo_of(&o) }
    );
    for port in [0, 443] {
        let initial = Addr {
            id: 0,
            ip: v4(1),
            port,
        };
        let MptcpOption::AddAddr(o) = announce(peer, initial) else {
            panic!()
        };
        assert!(matches!(
            g.on_add_addr(t(0), &o, &mut c),
            AddAddrVerdict::Announce { .. }
        ));
    }
    let wrong_port = Addr {
        id: 0,
        ip: v4(1),
        port: 444,
    };
    let MptcpOption::AddAddr(o) = announce(peer, wrong_port) else {
        panic!()
    };
    assert!(matches!(
        g.on_add_addr(t(0), &o, &mut c),
        AddAddrVerdict::EchoOnly { .. }
    ));
}

#[test]
fn the_rate_bound_is_a_token_bucket() {
    let keys = Keys {
        local: 10,
        remote: 20,
    };
    let peer = Keys {
        local: 20,
        remote: 10,
    };
    let MptcpOption::AddAddr(o) = announce(
        peer,
        Addr {
            id: 1,
            ip: v4(1),
            port: 0,
        },
    ) else {
        panic!()
    };
    let mut g = AddAddrGate::new(keys);
    let mut c = MptcpCounters::default();
    let ok = |v: AddAddrVerdict| matches!(v, AddAddrVerdict::Announce { .. });
    for _ in 0..ADD_ADDR_BURST {
        assert!(ok(g.on_add_addr(t(0), &o, &mut c)));
    }
    assert_eq!(g.on_add_addr(t(0), &o, &mut c), AddAddrVerdict::RateLimited);
    assert_eq!(
        g.on_add_addr(t(24), &o, &mut c),
        AddAddrVerdict::RateLimited
    );
    assert!(ok(g.on_add_addr(t(25), &o, &mut c)));
    assert_eq!(
        g.on_add_addr(t(49), &o, &mut c),
        AddAddrVerdict::RateLimited
    );
    assert!(ok(g.on_add_addr(t(50), &o, &mut c)));
    // Echoes pass regardless.
    let echo = AddAddr { hmac: None, ..o };
    assert!(matches!(
        g.on_add_addr(t(50), &echo, &mut c),
        AddAddrVerdict::Echoed { .. }
    ));
    // A long quiet refills to the burst, no further.
    let n = (0..100)
        .filter(|_| ok(g.on_add_addr(t(60_000), &o, &mut c)))
        .count();
    assert_eq!(n, ADD_ADDR_BURST as usize);
    assert_eq!(c.add_addr_drop, 3 + 100 - ADD_ADDR_BURST as u64);
    // A genuine peer's pattern: 8 addresses, each re-sent 3 times 200 ms apart
    // (the smallest RTO), all pass.
    let mut g = AddAddrGate::new(keys);
    for round in 0..4u64 {
        for _ in 0..8 {
            assert!(
                ok(g.on_add_addr(t(round * 200), &o, &mut c)),
                "round {round}"
            );
        }
    }
}

#[test]
fn remove_addr_closes_the_subflows_it_names() {
    let mut c = MptcpCounters::default();
    let ids = [Some(0), Some(1), None, Some(1), Some(2)];
    let rm = RemoveAddr::new(&[1, 7]).unwrap();
    let close = on_remove_addr(&rm, &ids, &mut c);
    assert_eq!(close.iter().collect::<Vec<_>>(), vec![1, 3]);
    assert_eq!(c.rm_addr, 2);
    // An id naming nothing closes nothing; id 0 names the initial subflow.
    let none = on_remove_addr(&RemoveAddr::new(&[9]).unwrap(), &ids, &mut c);
    assert!(none.is_empty());
    let zero = on_remove_addr(&RemoveAddr::new(&[0]).unwrap(), &ids, &mut c);
    assert_eq!(zero.iter().collect::<Vec<_>>(), vec![0]);
    // Slots beyond MAX_SUBFLOWS are not looked at.
    let many = [Some(5u8); MAX_SUBFLOWS + 4];
    let m = on_remove_addr(&RemoveAddr::new(&[5]).unwrap(), &many, &mut c);
    assert_eq!(m.len(), MAX_SUBFLOWS);
}

#[test]
fn mp_prio_sets_the_backup_flag() {
    let mut c = MptcpCounters::default();
    assert_eq!(
        on_mp_prio(false, true, &mut c),
        PrioChange {
            backup: true,
            changed: true
        }
    );
    assert_eq!(
        on_mp_prio(true, true, &mut c),
        PrioChange {
            backup: true,
            changed: false
        }
    );
    assert_eq!(c.mp_prio_rx, 2);
}

#[test]
fn fastclose_needs_our_key() {
    let keys = Keys {
        local: 0xaaaa,
        remote: 0xbbbb,
    };
    let mut c = MptcpCounters::default();
    assert_eq!(
        on_fastclose(keys, 0xaaaa, &mut c),
        FastcloseVerdict::ResetAll
    );
    // The peer's own key, or a guess, is ignored.
    assert_eq!(on_fastclose(keys, 0xbbbb, &mut c), FastcloseVerdict::Ignore);
    assert_eq!(on_fastclose(keys, 0xaaab, &mut c), FastcloseVerdict::Ignore);
    assert_eq!((c.mp_fastclose_rx, c.fastclose_bad_key), (1, 2));
}

#[test]
fn tcprst_reports_its_reason_only_on_a_rst() {
    let mut c = MptcpCounters::default();
    let r = MpTcpRst {
        transient: true,
        reason: ResetReason::LackOfResources,
    };
    assert_eq!(on_tcprst(&r, false, &mut c), None);
    assert_eq!(
        on_tcprst(&r, true, &mut c),
        Some(RstReport {
            reason: ResetReason::LackOfResources,
            transient: true
        })
    );
    assert_eq!(c.mp_rst_rx, 1);
}

#[test]
fn mp_fail_falls_back_with_one_subflow_and_is_ignored_with_several() {
    let mut c = MptcpCounters::default();
    let one = FailCtx {
        allow_infinite_fallback: true,
        fail_sent: false,
    };
    assert_eq!(
        on_mp_fail(77, one, &mut c),
        FailVerdict::EchoAndFallback {
            reply: MptcpOption::MpFail { dsn: 77 }
        }
    );
    let answered = FailCtx {
        fail_sent: true,
        ..one
    };
    assert_eq!(on_mp_fail(77, answered, &mut c), FailVerdict::Answered);
    let several = FailCtx {
        allow_infinite_fallback: false,
        fail_sent: false,
    };
    assert_eq!(on_mp_fail(77, several, &mut c), FailVerdict::Ignore);
    assert_eq!((c.mp_fail_rx, c.mp_fail_ignored), (3, 1));
}

#[test]
fn checksum_failure_sends_mp_fail_or_resets() {
    let mut c = MptcpCounters::default();
    assert_eq!(
        on_checksum_failure(t(0), 5, true, &mut c),
        CsumFailVerdict::SendFail {
            fail: MptcpOption::MpFail { dsn: 5 },
            deadline: t(120_000)
        }
    );
    let CsumFailVerdict::ResetSubflow { fail, rst } = on_checksum_failure(t(0), 6, false, &mut c)
    else {
        panic!()
    };
    assert_eq!(fail, MptcpOption::MpFail { dsn: 6 });
    assert_eq!(
        rst,
        MptcpOption::MpTcpRst(MpTcpRst {
            transient: false,
            reason: ResetReason::MiddleboxInterference
        })
    );
    // Both fit one RST's option space (12 + 4 bytes).
    assert!(fail.aligned_len() + rst.aligned_len() <= 40);
    assert!(rst.fits_segment(false, true, true, false));
    assert_eq!(c.data_csum_err, 2);
}
