use super::*;
use proptest::prelude::*;
use std::net::Ipv4Addr;

fn a(id: u8, last: u8) -> Addr {
    Addr {
        id,
        ip: IpAddr::V4(Ipv4Addr::new(198, 18, 0, last)),
        port: 0,
    }
}

fn ep(id: u8, last: u8, signal: bool, subflow: bool) -> LocalEndpoint {
    LocalEndpoint {
        addr: a(id, last),
        signal,
        subflow,
        backup: false,
    }
}

fn drain(pm: &mut PathManager) -> Vec<PmAction> {
    std::iter::from_fn(|| pm.poll_action()).collect()
}

fn drain_len(pm: &PathManager) -> usize {
    pm.queued
}

fn opens(actions: &[PmAction]) -> Vec<(u8, u8)> {
    actions
        .iter()
        .filter_map(|x| match x {
            PmAction::OpenSubflow { local, remote, .. } => Some((local.id, remote.id)),
            _ => None,
        })
        .collect()
}

#[test]
fn defaults_are_this_kernels_and_limits_are_checked() {
    assert_eq!(
        Limits::default(),
        Limits {
            subflows: 2,
            add_addr_accepted: 0
        }
    );
    assert_eq!(DEFAULT_ADD_ADDR_TIMEOUT, Duration::from_secs(120));
    let mut c = PmConfig::default();
    c.limits.subflows = 9;
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("subflows = 9 out of range 0..=8"), "{e}");
    let c = PmConfig {
        mode: PmMode::NDiffPorts { n: 0 },
        ..PmConfig::default()
    };
    assert!(c
        .validate()
        .unwrap_err()
        .to_string()
        .contains("ndiffports = 0"));
    let c = PmConfig {
        endpoints: (1..=9).map(|i| ep(i, i, true, false)).collect(),
        ..PmConfig::default()
    };
    assert!(c.validate().unwrap_err().to_string().contains("at most 8"));
    let c = PmConfig {
        endpoints: vec![ep(3, 1, true, false), ep(3, 2, true, false)],
        ..PmConfig::default()
    };
    assert!(matches!(
        c.validate(),
        Err(PmConfigError::DuplicateId { id: 3 })
    ));
}

#[test]
fn fullmesh_opens_a_subflow_per_pair_within_the_limit() {
    // Client with a second local address (subflow endpoint); the server announces one.
    let cfg = PmConfig {
        limits: Limits {
            subflows: 3,
            add_addr_accepted: 1,
        },
        endpoints: vec![ep(1, 2, false, true)],
        ..PmConfig::default()
    };
    let mut pm = PathManager::new(&cfg).unwrap();
    pm.on_established(Instant::ZERO, a(0, 1), a(0, 100), None);
    // local 1 → remote 0.
    assert_eq!(opens(&drain(&mut pm)), vec![(1, 0)]);
    pm.on_add_addr(a(5, 101));
    let acts = drain(&mut pm);
    assert_eq!(acts[0], PmAction::AddAddrEcho { addr: a(5, 101) });
    // Both local addresses to the new remote one: 2 more, 3 extra subflows in all.
    assert_eq!(opens(&acts), vec![(0, 5), (1, 5)]);
    assert_eq!(pm.subflows().len(), 4);
    // A second ADD_ADDR is beyond add_addr_accepted = 1: echoed only.
    pm.on_add_addr(a(6, 102));
    let acts = drain(&mut pm);
    assert_eq!(acts, vec![PmAction::AddAddrEcho { addr: a(6, 102) }]);
    assert_eq!(pm.stats.add_addr_ignored, 1);
}

#[test]
fn default_limits_accept_no_add_addr() {
    // As Linux out of the box: the ADD_ADDR is echoed, nothing is opened.
    let mut pm = PathManager::new(&PmConfig::default()).unwrap();
    pm.on_established(Instant::ZERO, a(0, 1), a(0, 100), None);
    pm.on_add_addr(a(1, 101));
    assert_eq!(
        drain(&mut pm),
        vec![PmAction::AddAddrEcho { addr: a(1, 101) }]
    );
}

#[test]
fn ndiffports_opens_n_subflows_over_one_pair() {
    let cfg = PmConfig {
        mode: PmMode::NDiffPorts { n: 4 },
        limits: Limits {
            subflows: 8,
            add_addr_accepted: 0,
        },
        ..PmConfig::default()
    };
    let mut pm = PathManager::new(&cfg).unwrap();
    pm.on_established(Instant::ZERO, a(0, 1), a(0, 100), None);
    assert_eq!(opens(&drain(&mut pm)), vec![(0, 0); 3]);
    assert_eq!(pm.subflows().len(), 4);
    // The limit caps it too.
    let cfg = PmConfig {
        mode: PmMode::NDiffPorts { n: 4 },
        ..PmConfig::default()
    };
    let mut pm = PathManager::new(&cfg).unwrap();
    pm.on_established(Instant::ZERO, a(0, 1), a(0, 100), None);
    assert_eq!(opens(&drain(&mut pm)).len(), 2);
}

#[test]
fn add_addr_is_resent_until_echoed_with_backoff() {
    let cfg = PmConfig {
        endpoints: vec![ep(1, 2, true, false)],
        ..PmConfig::default()
    };
    let mut pm = PathManager::new(&cfg).unwrap();
    let t0 = Instant::from_secs(10);
    pm.on_established(t0, a(0, 1), a(0, 100), None);
    assert_eq!(drain(&mut pm), vec![PmAction::AddAddr { addr: a(1, 2) }]);
    // No RTO known yet: the sysctl, 120 s.
    assert_eq!(pm.poll_timeout(), Some(t0 + Duration::from_secs(120)));
    // With a 300 ms RTO: 0.3 s << 1, then << 2; three re-sends in all.
    let rto = Some(Duration::from_millis(300));
    let mut t = t0 + Duration::from_secs(120);
    pm.on_timeout(t, rto);
    assert_eq!(pm.poll_timeout(), Some(t + Duration::from_millis(600)));
    t += Duration::from_millis(600);
    pm.on_timeout(t, rto);
    assert_eq!(pm.poll_timeout(), Some(t + Duration::from_millis(1_200)));
    t += Duration::from_millis(1_200);
    pm.on_timeout(t, rto);
    assert_eq!(pm.poll_timeout(), None, "ADD_ADDR_RETRANS_MAX reached");
    assert_eq!(pm.stats.add_addr_retrans, 3);
    assert_eq!(drain(&mut pm).len(), 3);
    // An echo stops it.
    let mut pm = PathManager::new(&cfg).unwrap();
    pm.on_established(t0, a(0, 1), a(0, 100), None);
    pm.on_add_addr_echo(a(1, 2));
    assert_eq!(pm.poll_timeout(), None);
    pm.on_add_addr_echo(a(7, 7));
    assert_eq!(pm.stats.echo_unknown, 1);
    // The first wait already uses the subflows' RTO when known at announce time
    // (`mptcp_pm_alloc_anno_list` → `mptcp_adjust_add_addr_timeout`), capped by the
    // sysctl.
    let mut pm = PathManager::new(&cfg).unwrap();
    pm.on_established(t0, a(0, 1), a(0, 100), Some(Duration::from_millis(250)));
    assert_eq!(pm.poll_timeout(), Some(t0 + Duration::from_millis(250)));
    let mut pm = PathManager::new(&cfg).unwrap();
    pm.on_established(t0, a(0, 1), a(0, 100), Some(Duration::from_secs(500)));
    assert_eq!(pm.poll_timeout(), Some(t0 + Duration::from_secs(120)));
    // add_addr_timeout 0: never re-sent.
    let mut pm = PathManager::new(&PmConfig {
        add_addr_timeout: Duration::ZERO,
        ..cfg.clone()
    })
    .unwrap();
    pm.on_established(t0, a(0, 1), a(0, 100), None);
    assert_eq!(pm.poll_timeout(), None);
}

#[test]
fn remove_addr_closes_its_subflows_and_frees_the_limit() {
    let cfg = PmConfig {
        limits: Limits {
            subflows: 2,
            add_addr_accepted: 1,
        },
        ..PmConfig::default()
    };
    let mut pm = PathManager::new(&cfg).unwrap();
    pm.on_established(Instant::ZERO, a(0, 1), a(0, 100), None);
    pm.on_add_addr(a(4, 101));
    let acts = drain(&mut pm);
    let slot = acts
        .iter()
        .find_map(|x| match x {
            PmAction::OpenSubflow { slot, .. } => Some(*slot),
            _ => None,
        })
        .unwrap();
    pm.on_rm_addr(4);
    assert_eq!(drain(&mut pm), vec![PmAction::CloseSubflow { slot }]);
    assert_eq!(pm.add_addr_accepted(), 0);
    pm.on_rm_addr(77);
    assert_eq!(pm.stats.rm_addr_unknown, 1);
    // Withdrawing a local announced endpoint sends REMOVE_ADDR.
    let cfg = PmConfig {
        endpoints: vec![ep(2, 9, true, true)],
        ..PmConfig::default()
    };
    let mut pm = PathManager::new(&cfg).unwrap();
    pm.on_established(Instant::ZERO, a(0, 1), a(0, 100), None);
    drain(&mut pm);
    pm.remove_local(2);
    let acts = drain(&mut pm);
    assert_eq!(acts[0], PmAction::RemoveAddr { id: 2 });
    assert!(matches!(acts[1], PmAction::CloseSubflow { .. }));
    assert_eq!(pm.poll_timeout(), None);
}

#[test]
fn joins_beyond_the_limit_are_refused() {
    let mut pm = PathManager::new(&PmConfig::default()).unwrap();
    pm.on_established(Instant::ZERO, a(0, 100), a(0, 1), None);
    assert!(pm.allow_join(a(0, 100), a(1, 2)).is_some());
    assert!(pm.allow_join(a(0, 100), a(2, 3)).is_some());
    assert_eq!(pm.allow_join(a(0, 100), a(3, 4)), None);
    assert_eq!(pm.stats.join_refused, 1);
    pm.on_subflow_closed(1);
    assert!(pm.allow_join(a(0, 100), a(3, 4)).is_some());
}

#[test]
fn add_addr_flood_stays_bounded() {
    let cfg = PmConfig {
        limits: Limits {
            subflows: 8,
            add_addr_accepted: 8,
        },
        ..PmConfig::default()
    };
    let mut pm = PathManager::new(&cfg).unwrap();
    pm.on_established(Instant::ZERO, a(0, 1), a(0, 100), None);
    for i in 0..10_000u32 {
        let addr = Addr {
            id: (i % 256) as u8,
            ip: IpAddr::V4(Ipv4Addr::from(0xC612_0000 + i)),
            port: (i % 7) as u16,
        };
        pm.on_add_addr(addr);
        // The caller polls rarely: the queue fills and refuses, counted.
        if i % 100 == 0 {
            drain(&mut pm);
        }
        pm.on_rm_addr((i * 7 % 256) as u8);
        assert!(pm.remote_count() <= ADDR_MAX + 1);
        assert!(pm.subflows().len() <= MAX_SUBFLOWS);
        assert!(pm.add_addr_accepted() <= 8);
        assert!(drain_len(&pm) <= ACTION_QUEUE);
    }
    assert!(pm.stats.actions_dropped > 0, "the action queue is bounded");
}

proptest! {
    /// Any sequence of events keeps the limits: extra subflows ≤ `subflows`, accepted
    /// ADD_ADDRs ≤ `add_addr_accepted`, slots ≤ MAX_SUBFLOWS.
    #[test]
    fn limits_hold_under_any_events(
        subflows in 0u8..=8, accepted in 0u8..=8, fullmesh in any::<bool>(),
        ops in proptest::collection::vec((0u8..6, 0u8..12, 0u8..12), 1..80),
    ) {
        let cfg = PmConfig {
            mode: if fullmesh { PmMode::Fullmesh } else { PmMode::NDiffPorts { n: 3 } },
            limits: Limits { subflows, add_addr_accepted: accepted },
            endpoints: vec![ep(1, 2, true, true), ep(2, 3, false, true)],
            ..PmConfig::default()
        };
        let mut pm = PathManager::new(&cfg).unwrap();
        pm.on_established(Instant::ZERO, a(0, 1), a(0, 100), None);
        let mut t = Instant::ZERO;
        for (op, x, y) in ops {
            match op {
                0 => pm.on_add_addr(a(x, 50 + y)),
                1 => pm.on_rm_addr(x),
                2 => pm.on_subflow_closed(usize::from(x)),
                3 => { let _ = pm.allow_join(a(0, 1), a(x, y)); }
                4 => { t += Duration::from_secs(200); pm.on_timeout(t, None); }
                _ if y % 2 == 0 => pm.on_add_addr_echo(a(x % 3, 1 + x % 3)),
                _ => pm.remove_local(x % 3),
            }
            while pm.poll_action().is_some() {}
            prop_assert!(pm.subflows().len() <= usize::from(subflows) + 1);
            prop_assert!(pm.add_addr_accepted() <= accepted);
            // The kept earliest deadline is the scan's (`anno_next`).
            prop_assert_eq!(pm.poll_timeout(), pm.scan_anno());
        }
    }
}
