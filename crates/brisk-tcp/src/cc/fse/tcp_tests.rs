//! The FSE layer on scripted hooks: shares by priority, one cut per congestion event,
//! the group growing as one flow, bounds, and groups changed at run time.

use super::*;
use crate::cc::host::{FlowId, HostCc};
use crate::cc::reno::Reno;
use crate::cc::CcState;

fn addr(host: u8, port: u16) -> SocketAddr {
    SocketAddr::from(([198, 18, 0, host], port))
}

/// One host's flows, each an FSE layer around Reno with its own variables.
struct Group {
    host: HostCc,
    flows: Vec<(FlowId, FseLayer, CcState)>,
    now: Instant,
}

const RTT: Duration = Duration::from_millis(100);

impl Group {
    fn new() -> Self {
        Group {
            host: HostCc::new(),
            flows: Vec::new(),
            now: Instant::ZERO,
        }
    }

    /// A flow in the group `cfg` names (to remote host 2), initialised.
    fn add(&mut self, cfg: FseConfig) -> usize {
        let remote = addr(2, 80);
        let key = cfg.group_key(remote);
        let (id, _) = self
            .host
            .join(addr(1, 1000 + self.flows.len() as u16), remote, Some(key));
        let mut vars = CcState::new(10, 1448);
        vars.srtt = RTT;
        vars.cwnd_limited = true;
        let mut layer = FseLayer::new(Box::new(Reno), cfg);
        {
            let mut cx = FlowCtx::new(&mut vars, Some(id), Some(&mut self.host));
            CongestionControl::init(&mut layer, &mut cx, self.now);
        }
        self.flows.push((id, layer, vars));
        self.flows.len() - 1
    }

    fn ack(&mut self, i: usize, segs: u32) {
        let (id, layer, vars) = &mut self.flows[i];
        let ack = AckSample {
            now: self.now,
            acked_segs: segs,
            ..Default::default()
        };
        let mut cx = FlowCtx::new(vars, Some(*id), Some(&mut self.host));
        CongestionControl::cong_avoid(layer, &mut cx, &ack);
    }

    /// One RTT of ACKs for every flow: each gets its window's worth, one segment per
    /// ACK, interleaved.
    fn round(&mut self) {
        let most = self.flows.iter().map(|f| f.2.cwnd).max().unwrap_or(0);
        for k in 0..most {
            for i in 0..self.flows.len() {
                if k < self.flows[i].2.cwnd {
                    self.ack(i, 1);
                }
            }
        }
        self.now += RTT;
    }

    /// A loss on flow i: ssthresh, then the connection's reduction (cwnd = ssthresh).
    fn loss(&mut self, i: usize) -> u32 {
        let (id, layer, vars) = &mut self.flows[i];
        let mut cx = FlowCtx::new(vars, Some(*id), Some(&mut self.host));
        let ss = CongestionControl::ssthresh(layer, &mut cx, self.now, CongestionCause::Loss);
        vars.ssthresh = ss;
        vars.cwnd = ss;
        ss
    }

    fn fse(&self) -> &Fse {
        let g = self.host.group_of(self.flows[0].0).unwrap();
        self.host.group_fse(g).unwrap().fse()
    }

    /// Flow i's assigned window FSE_R.
    fn share(&mut self, i: usize) -> f64 {
        let h = self.host.fse_mut(self.flows[i].0).unwrap().1;
        self.fse().rate(h).unwrap()
    }
}

fn named(p: f64) -> FseConfig {
    FseConfig {
        group: Some("g".into()),
        priority: p,
        ..FseConfig::default()
    }
}

#[test]
fn windows_follow_the_priority_shares_of_one_group_window() {
    let mut g = Group::new();
    let a = g.add(named(1.0));
    let b = g.add(named(0.5));
    assert_eq!(g.fse().s_cr(), 20.0, "two initial windows");
    for _ in 0..6 {
        g.round();
    }
    let s_cr = g.fse().s_cr();
    let (wa, wb) = (g.flows[a].2.cwnd, g.flows[b].2.cwnd);
    // Each flow's window is its share, rounded: 2/3 and 1/3 of S_CR.
    let ra = g.share(a);
    assert!((ra - s_cr * 2.0 / 3.0).abs() < 1e-6, "{ra} {s_cr}");
    g.ack(a, 0); // a hook without growth reads the latest shares
    g.ack(b, 0);
    let (wa2, wb2) = (g.flows[a].2.cwnd, g.flows[b].2.cwnd);
    assert!(
        (f64::from(wa2) - s_cr * 2.0 / 3.0).abs() <= 0.5 + 1e-9,
        "{wa} {wa2} {s_cr}"
    );
    assert!(
        (f64::from(wb2) - s_cr / 3.0).abs() <= 0.5 + 1e-9,
        "{wb} {wb2} {s_cr}"
    );
    // Slow start of the group: doubling per round, as one flow's.
    assert!(s_cr > 20.0 * 30.0, "{s_cr}");
    assert_eq!(
        g.host
            .group_fse(g.host.group_of(g.flows[a].0).unwrap())
            .unwrap()
            .decreases(),
        0
    );
}

#[test]
fn a_congestion_event_cuts_the_group_once_and_freezes_it_two_rtts() {
    let mut g = Group::new();
    for _ in 0..3 {
        g.add(named(1.0));
    }
    for _ in 0..4 {
        g.round();
    }
    let s_cr = g.fse().s_cr();
    let cwnd0 = g.flows[0].2.cwnd;
    let ss = g.loss(0);
    // Reno's halving (cwnd/2, rounded down), applied to the group once.
    let factor = f64::from(cwnd0 / 2) / f64::from(cwnd0);
    let cut = g.fse().s_cr();
    assert!((cut - s_cr * factor).abs() < 1e-6, "{cut} {s_cr} {factor}");
    assert_eq!(f64::from(ss), (cut / 3.0).round());
    // Flow 1 loses within the freeze: no second cut; its new ssthresh is its (already
    // cut) share.
    g.now += RTT;
    let ss1 = g.loss(1);
    assert_eq!(g.fse().s_cr(), cut, "frozen");
    assert_eq!(f64::from(ss1), (cut / 3.0).round());
    // Flow 2 has not lost: at its next ACK it takes the cut share and leaves slow start.
    g.ack(2, 0);
    assert_eq!(f64::from(g.flows[2].2.cwnd), (cut / 3.0).round());
    assert!(!g.flows[2].2.in_slow_start());
    // After two RTTs of flow 0 a new loss cuts again.
    g.now += RTT * 2;
    let before = g.fse().s_cr();
    g.loss(2);
    assert!(g.fse().s_cr() < before * 0.6);
}

/// C.1's "I/N": in congestion avoidance the group grows about one segment per RTT
/// whatever its size; summing the increases grows it N per RTT.
#[test]
fn in_congestion_avoidance_the_group_grows_as_one_flow() {
    for (increase, n, expect) in [
        (Increase::OneFlow, 4, 1.0),
        (Increase::Sum, 4, 4.0),
        (Increase::OneFlow, 8, 1.0),
    ] {
        let mut g = Group::new();
        for _ in 0..n {
            g.add(FseConfig {
                increase,
                ..named(1.0)
            });
        }
        for _ in 0..3 {
            g.round();
        }
        g.loss(0); // into congestion avoidance, the whole group
        g.now += RTT * 3; // past the freeze
        for i in 0..n {
            g.ack(i, 0);
        }
        let start = g.fse().s_cr();
        let rounds = 20;
        for _ in 0..rounds {
            g.round();
        }
        let per_rtt = (g.fse().s_cr() - start) / f64::from(rounds);
        assert!(
            (per_rtt - expect).abs() <= 0.35 * expect,
            "{increase:?} n={n}: {per_rtt} per RTT"
        );
        assert!(g.flows.iter().all(|f| !f.2.in_slow_start()));
    }
}

#[test]
fn a_full_group_refuses_a_flow_which_then_runs_alone_and_tables_stay_bounded() {
    let mut g = Group::new();
    let cfg = FseConfig {
        max_flows: 2,
        ..named(1.0)
    };
    g.add(cfg.clone());
    g.add(cfg.clone());
    let c = g.add(cfg.clone());
    let Some(CcDiagnostics::Fse(d)) = CongestionControl::diagnostics(&g.flows[c].1) else {
        panic!("fse diagnostics")
    };
    assert!(!d.coupled);
    assert_eq!(d.refused, 1);
    // It runs Reno alone: slow start from 10, untouched by the group.
    g.ack(c, 5);
    g.ack(c, 5);
    assert_eq!(g.flows[c].2.cwnd, 20);
    assert_eq!(
        CongestionControl::diagnostics(&g.flows[c].1).map(|d| match d {
            CcDiagnostics::Fse(d) => d.refused,
            _ => 99,
        }),
        Some(1),
        "no retry per ACK"
    );
    assert_eq!(g.fse().len(), 2);
    // Churn: flows come and go; the group never holds more than its limit and the
    // host's tables stay as large as the most flows alive at once.
    for k in 0..5_000u32 {
        let i = g.add(cfg.clone());
        g.ack(i, 1);
        let (id, _, _) = g.flows.remove(if k % 2 == 0 { 0 } else { i });
        g.host.leave(id);
        assert!(g.fse_len_any() <= 2);
    }
    let (flows, groups) = g.host.footprint();
    assert!(flows <= 5 && groups <= 1, "{flows} {groups}");
}

impl Group {
    fn fse_len_any(&self) -> usize {
        self.flows
            .iter()
            .filter_map(|f| self.host.group_of(f.0))
            .filter_map(|g| self.host.group_fse(g))
            .map(|f| f.fse().len())
            .max()
            .unwrap_or(0)
    }
}

#[test]
fn groups_supplied_at_run_time_move_flows_between_fses() {
    // A scripted grouping, as SBD would supply: a, b, c start in one named group;
    // then c is found on another bottleneck, later a joins it.
    let mut g = Group::new();
    for _ in 0..3 {
        g.add(named(1.0));
    }
    g.round();
    let (a, c) = (g.flows[0].0, g.flows[2].0);
    let first = g.host.group_of(a).unwrap();
    assert_eq!(g.host.group_fse(first).unwrap().fse().len(), 3);
    let total = g.fse().s_cr();
    let other = g.host.regroup(c, Some(GroupKey::Assigned(5))).unwrap();
    assert_ne!(other, first);
    assert_eq!(g.host.group_fse(first).unwrap().fse().len(), 2);
    assert!(
        g.host.group_fse(first).unwrap().fse().s_cr() < total,
        "c's share left with it"
    );
    assert!(
        g.host.group_fse(other).is_none(),
        "registers at its next hook"
    );
    g.ack(2, 0);
    let fo = g.host.group_fse(other).unwrap();
    assert_eq!(fo.fse().len(), 1);
    assert_eq!(
        fo.fse().s_cr(),
        f64::from(g.flows[2].2.cwnd),
        "alone: its own window"
    );
    g.host.regroup(a, Some(GroupKey::Assigned(5)));
    g.ack(0, 0);
    assert_eq!(g.host.group_fse(other).unwrap().fse().len(), 2);
    assert_eq!(g.host.group_fse(first).unwrap().fse().len(), 1);
    // Out of every group: the flow runs its controller alone.
    g.host.regroup(a, None);
    g.ack(0, 0);
    let Some(CcDiagnostics::Fse(d)) = CongestionControl::diagnostics(&g.flows[0].1) else {
        panic!()
    };
    assert!(!d.coupled);
}

#[test]
fn after_an_rto_the_flow_climbs_back_to_its_share_by_slow_start() {
    let mut g = Group::new();
    g.add(named(1.0));
    g.add(named(1.0));
    for _ in 0..4 {
        g.round();
    }
    {
        let (id, layer, vars) = &mut g.flows[0];
        let mut cx = FlowCtx::new(vars, Some(*id), Some(&mut g.host));
        let ss = CongestionControl::ssthresh(layer, &mut cx, g.now, CongestionCause::Rto);
        CongestionControl::on_event(layer, &mut cx, g.now, CcEvent::Rto);
        vars.ssthresh = ss;
        vars.cwnd = 1;
    }
    g.ack(0, 1);
    assert_eq!(
        g.flows[0].2.cwnd, 2,
        "slow start from 1, no jump to the share"
    );
    for _ in 0..200 {
        g.ack(0, 1);
    }
    assert!(!g.flows[0].1.climbing, "reached its share");
    g.ack(0, 0);
    let share = window(g.share(0));
    assert_eq!(g.flows[0].2.cwnd, share);
}

#[test]
fn settings_are_checked_by_field_and_range() {
    let bad = |c: FseConfig| c.validate().unwrap_err();
    assert_eq!(bad(named(1.5)).0, "priority");
    assert!(bad(named(0.05)).1.contains("between 0.1 and 1.0"));
    let e = bad(FseConfig {
        max_flows: 0,
        ..named(1.0)
    });
    assert_eq!(e, ("max_flows", "must be between 1 and 4096, got 0".into()));
    assert_eq!(
        bad(FseConfig {
            group: Some(String::new()),
            ..named(1.0)
        })
        .0,
        "group"
    );
    assert!(named(0.1).validate().is_ok());
    // Keys: a name, or the remote host.
    let by_host = FseConfig::default();
    assert_eq!(
        by_host.group_key(addr(9, 1)),
        GroupKey::RemoteHost(addr(9, 2).ip())
    );
    assert_eq!(named(1.0).group_key(addr(9, 1)), GroupKey::named("g"));
    assert_ne!(GroupKey::named("g"), GroupKey::named("h"));
}

#[test]
fn a_group_runs_one_algorithm() {
    let mut g = Group::new();
    g.add(named(1.0));
    let i = g.add(FseConfig {
        algorithm: Algorithm::Active,
        ..named(1.0)
    });
    let Some(CcDiagnostics::Fse(d)) = CongestionControl::diagnostics(&g.flows[i].1) else {
        panic!()
    };
    assert_eq!((d.coupled, d.refused), (false, 1));
}

#[test]
fn a_flow_back_from_idle_rejoins_and_climbs_to_its_share() {
    let mut g = Group::new();
    for _ in 0..3 {
        g.add(named(1.0));
    }
    for _ in 0..4 {
        g.round();
    }
    g.loss(0);
    g.now += RTT * 3;
    let before = g.fse().s_cr();
    let held = g.share(1);
    // Flow 1 was idle; the connection restarts its window at 10.
    {
        let (id, layer, vars) = &mut g.flows[1];
        vars.cwnd = 10;
        let mut cx = FlowCtx::new(vars, Some(*id), Some(&mut g.host));
        CongestionControl::on_event(layer, &mut cx, g.now, CcEvent::CwndRestart);
    }
    assert!(
        (g.fse().s_cr() - (before - held + 10.0)).abs() < 1e-6,
        "its idle share went back, its restart window came in"
    );
    // The others' next update (their next growth, within an RTT in congestion
    // avoidance) redistributes: flow 1's share is a third again, and it climbs there by
    // slow start, not at once.
    let s_cr = g.fse().s_cr();
    for _ in 0..1000 {
        if g.fse().s_cr() != s_cr {
            break;
        }
        g.ack(0, 1);
    }
    assert_ne!(g.fse().s_cr(), s_cr, "flow 0 grew");
    let share = g.share(1);
    assert!((share - g.fse().s_cr() / 3.0).abs() < 1e-6);
    g.ack(1, 1);
    assert_eq!(g.flows[1].2.cwnd, 11);
    for _ in 0..200 {
        g.ack(1, 1);
    }
    assert!(!g.flows[1].1.climbing);
}
