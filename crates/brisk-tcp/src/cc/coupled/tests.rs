//! The coupled controllers on the host room: MP-1 (LISA's arithmetic), a lone member
//! is its base controller, the member bound, the factory names, and RFC 6356 §2's
//! goals as properties over the multipath model (`model.rs`) on several seeds and
//! paths.

use super::model::{Link, Model};
use super::mp1::{worked_example, Sub};
use super::*;
use crate::cc::host::{GroupKey, HostCc};
use crate::cc::reno::Reno;
use crate::cc::spec::{CcContext, CcFactory, CcSpec, StandardCcFactory};
use crate::cc::{CcAlgorithm, CcDiagnostics, PathInfo};
use brisk_time::Duration;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::net::SocketAddr;

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([198, 18, 0, 1], port))
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn coupled(kind: Coupling, lisa: bool) -> Coupled {
    Coupled::new(kind, CoupledConfig { lisa })
}

#[test]
fn mp1_worked_example_80_against_90_and_100() {
    // LISA: old 40 → 30, new 10, 10 ACKs ignored; after one RTT 60 + 20 = 80.
    assert_eq!(worked_example(true, true), (60, 20, 10));
    // Without ignoring the ACKs of the 40 in flight: 70 + 20 = 90.
    let (o, n, _) = worked_example(true, false);
    assert_eq!((o, n, o + n), (70, 20, 90));
    // Uncoupled slow start (no LISA): 80 + 20 = 100.
    let (o, n, ignored) = worked_example(false, true);
    assert_eq!((o, n, o + n, ignored), (80, 20, 100, 0));
}

#[test]
fn lisa_takes_from_the_fastest_slow_starter_and_a_reduction_drops_the_rest() {
    let mut host = HostCc::new();
    let mut a = Sub::new(&mut host, 1, coupled(Coupling::Olia, true), 24, 24);
    a.cc.srtt = ms(80);
    a.init(&mut host);
    let mut b = Sub::new(&mut host, 2, coupled(Coupling::Olia, true), 10, 22);
    b.init(&mut host);
    assert_eq!(b.cc.cwnd, 10, "a ≥ 20 gives 10");
    let st = host.flow_stats(a.id).unwrap().coupled;
    assert_eq!(
        (st.lisa_debit, st.lisa_ignore),
        (10, 10),
        "24 in flight − 14 kept"
    );
    a.ack(&mut host);
    assert_eq!(
        a.cc.cwnd, 14,
        "the debit is applied at the donor's next ACK"
    );
    assert_eq!(a.ctrl.lisa_ignoring(), 9);
    for _ in 0..6 {
        b.ack(&mut host);
    }
    assert_eq!((b.cc.cwnd, b.cc.in_flight), (16, 16));
    // c joins: b sends 16 per 40 ms, faster than a's 14 per 80 ms: b is the donor.
    let mut c = Sub::new(&mut host, 3, coupled(Coupling::Olia, true), 10, 0);
    c.init(&mut host);
    assert_eq!(c.cc.cwnd, 8, "6–19 halves");
    let st = host.flow_stats(b.id).unwrap().coupled;
    assert_eq!((st.lisa_debit, st.lisa_ignore), (8, 8));
    b.ack(&mut host);
    assert_eq!(b.cc.cwnd, 8, "debit applied, this ACK's increase ignored");
    assert_eq!(b.ctrl.lisa_ignoring(), 7);
    let mut cx = FlowCtx::new(&mut b.cc, Some(b.id), Some(&mut host));
    b.ctrl
        .on_event(&mut cx, Instant::ZERO, CcEvent::EnterRecovery);
    assert_eq!(b.ctrl.lisa_ignoring(), 0, "L5: a reduction drops the rest");
    // Members in congestion avoidance are no donors: with none, the joiner keeps its IW.
    for s in [&mut a, &mut b, &mut c] {
        s.cc.ssthresh = 5;
        s.ack(&mut host);
    }
    let mut d = Sub::new(&mut host, 4, coupled(Coupling::Olia, true), 10, 0);
    d.init(&mut host);
    assert_eq!(d.cc.cwnd, 10);
    let st = host.flow_stats(a.id).unwrap().coupled;
    assert_eq!((st.lisa_debit, st.lisa_ignore), (0, 0));
}

// ---------------------------------------------------------------------------------
// RFC 6356 §2's goals over the multipath model.

/// The controller of one run: a coupled one, or uncoupled Reno per subflow (the
/// control that shows each property can fail).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ctl {
    Coupled(CcAlgorithm),
    Uncoupled,
}

impl Ctl {
    fn build(self) -> Box<dyn CongestionControl> {
        match self {
            Ctl::Coupled(a) => a.build(),
            Ctl::Uncoupled => Box::new(Reno),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Ctl::Coupled(a) => a.name(),
            Ctl::Uncoupled => "uncoupled",
        }
    }
}

const WARMUP: Duration = Duration::from_secs(20);
const MEASURE: Duration = Duration::from_secs(60);

/// One path of a scenario: a link (segments/s, queue) and the RTT over it.
#[derive(Clone, Copy, Debug)]
struct PathSpec {
    rate: u64,
    rtt: Duration,
    queue: u32,
    /// Competing single-path Reno flows on the link.
    competitors: usize,
}

/// A scenario's paths, drawn from `seed`.
fn draw(seed: u64, n: usize, rate: (u64, u64), rtt_ms: (u64, u64)) -> Vec<PathSpec> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let rate = rng.gen_range(rate.0..=rate.1);
            let rtt = ms(rng.gen_range(rtt_ms.0..=rtt_ms.1));
            // About one BDP of buffer (Reno's full-utilisation rule), at least 8.
            let queue = ((rate * rtt.as_micros() as u64 / 1_000_000) as u32).max(8);
            PathSpec {
                rate,
                rtt,
                queue,
                competitors: 0,
            }
        })
        .collect()
}

/// Runs the group `ctl` with one subflow per entry of `subflows` (link index, RTT)
/// over `links`, each with its competitors (same RTT as the path). Returns segments
/// per second: (per subflow, per competitor).
fn run(
    links: &[PathSpec],
    subflows: &[(usize, Duration)],
    ctl: Option<Ctl>,
    seed: u64,
) -> (Vec<f64>, Vec<f64>) {
    run_with(links, &[], subflows, ctl, seed)
}

fn run_lossy(
    links: &[PathSpec],
    loss_ppm: &[u32],
    subflows: &[(usize, Duration)],
    ctl: Ctl,
    seed: u64,
) -> (Vec<f64>, Vec<f64>) {
    run_with(links, loss_ppm, subflows, Some(ctl), seed)
}

fn run_with(
    links: &[PathSpec],
    loss_ppm: &[u32],
    subflows: &[(usize, Duration)],
    ctl: Option<Ctl>,
    seed: u64,
) -> (Vec<f64>, Vec<f64>) {
    let mut m = Model::new(
        links
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut l = Link::new(p.rate, p.queue);
                l.loss_ppm = loss_ppm.get(i).copied().unwrap_or(0);
                l
            })
            .collect(),
        seed,
    );
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let mut subs = Vec::new();
    if let Some(ctl) = ctl {
        for (k, &(link, rtt)) in subflows.iter().enumerate() {
            // Subflows join a few RTTs apart, as MPTCP's do.
            let start = ms(k as u64 * 150 + rng.gen_range(0..50));
            subs.push(m.add(ctl.build(), link, rtt, Some(1), start));
        }
    }
    let mut comp = Vec::new();
    for (l, p) in links.iter().enumerate() {
        for _ in 0..p.competitors {
            let start = ms(rng.gen_range(0..500));
            comp.push(m.add(Box::new(Reno), l, p.rtt, None, start));
        }
    }
    m.run_until(WARMUP);
    m.reset_counts();
    m.run_until(WARMUP + MEASURE);
    let secs = MEASURE.as_secs_f64();
    let rate = |ids: &[usize]| {
        ids.iter()
            .map(|&i| m.delivered(&[i]) as f64 / secs)
            .collect()
    };
    (rate(&subs), rate(&comp))
}

const COUPLED: [Ctl; 3] = [
    Ctl::Coupled(CcAlgorithm::Lia),
    Ctl::Coupled(CcAlgorithm::Olia),
    Ctl::Coupled(CcAlgorithm::Balia),
];
const SEEDS: [u64; 4] = [1, 2, 3, 4];

/// Goal 2 (RFC 6356 §2, "do no harm"): two or three subflows with different RTTs
/// through one bottleneck shared with a single-path TCP take no more than one TCP on
/// the best of those paths would (the same run with the group replaced by one Reno
/// flow on the lowest-RTT path). Uncoupled subflows take more: the property can fail.
fn goal2(seed: u64, n: usize) -> Vec<(Ctl, f64)> {
    let mut link = draw(seed, 1, (800, 1500), (20, 60))[0];
    link.competitors = 1;
    let mut rng = ChaCha8Rng::seed_from_u64(seed * 31 + n as u64);
    let mut rtts: Vec<Duration> = (0..n)
        .map(|_| link.rtt + ms(rng.gen_range(0..=link.rtt.as_millis() as u64)))
        .collect();
    rtts[0] = link.rtt; // the best path: the competitor's RTT
    let links = [link];
    let subs: Vec<(usize, Duration)> = rtts.iter().map(|&r| (0, r)).collect();
    let (reference, _) = run(&links, &subs[..1], Some(Ctl::Uncoupled), seed);
    let reference = reference[0];
    let mut out = Vec::new();
    for ctl in COUPLED.into_iter().chain([Ctl::Uncoupled]) {
        let (g, _) = run(&links, &subs, Some(ctl), seed);
        out.push((ctl, g.iter().sum::<f64>() / reference));
    }
    out
}

/// Goal 1 (RFC 6356 §2, "improve throughput"): subflows over disjoint links with
/// different rates and RTTs, each shared with single-path TCPs, give the connection
/// at least what one TCP gets on the best of the paths (each path measured alone with
/// the same competitors).
fn goal1(seed: u64, n: usize) -> Vec<(Ctl, f64)> {
    let mut links = draw(seed, n, (500, 1500), (15, 120));
    let mut rng = ChaCha8Rng::seed_from_u64(seed * 17 + n as u64);
    for l in &mut links {
        l.competitors = rng.gen_range(1..=2);
    }
    let subs: Vec<(usize, Duration)> = links.iter().enumerate().map(|(i, p)| (i, p.rtt)).collect();
    let best = (0..n)
        .map(|i| run(&links, &subs[i..=i], Some(Ctl::Uncoupled), seed).0[0])
        .fold(0.0, f64::max);
    COUPLED
        .into_iter()
        .chain([Ctl::Uncoupled])
        .map(|ctl| {
            let (g, _) = run(&links, &subs, Some(ctl), seed);
            (ctl, g.iter().sum::<f64>() / best)
        })
        .collect()
}

/// Goal 3 (RFC 6356 §2, "balance congestion"): two disjoint links of equal rate and
/// RTT, the second with a higher loss rate (more congested; random loss before the
/// queue, so every packet sees the path's congestion level). Returns the share of
/// the connection's traffic on the congested path. Uncoupled Reno splits as
/// 1/√p (≈ 0.3 here); LIA's equilibrium is ∝ 1/p, OLIA's moves all but a minimum off.
fn goal3(seed: u64) -> Vec<(Ctl, f64)> {
    let p = draw(seed, 1, (800, 1200), (20, 80))[0];
    let mut rng = ChaCha8Rng::seed_from_u64(seed * 7);
    let links = [p, p];
    let loss = [rng.gen_range(1_000..=3_000), rng.gen_range(10_000..=20_000)];
    let subs = [(0, p.rtt), (1, p.rtt)];
    COUPLED
        .into_iter()
        .chain([Ctl::Uncoupled])
        .map(|ctl| {
            let (g, _) = run_lossy(&links, &loss, &subs, ctl, seed);
            (ctl, g[1] / (g[0] + g[1]))
        })
        .collect()
}

fn show(v: &[(Ctl, f64)]) -> String {
    v.iter()
        .map(|(c, x)| format!("{} {x:.2}", c.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn goal2_do_no_harm_at_a_shared_bottleneck() {
    for seed in SEEDS {
        for n in [2, 3] {
            let r = goal2(seed, n);
            eprintln!(
                "goal 2 seed {seed} subflows {n}: group / one TCP = {}",
                show(&r)
            );
            for (ctl, ratio) in r {
                if ctl == Ctl::Uncoupled {
                    assert!(
                        ratio >= 1.15,
                        "the control: uncoupled takes more ({ratio:.2})"
                    );
                } else {
                    assert!(ratio <= 1.10, "{} takes {ratio:.2}× one TCP", ctl.name());
                }
            }
        }
    }
}

#[test]
fn goal1_improve_throughput_over_disjoint_paths() {
    for seed in SEEDS {
        for n in [2, 3] {
            let r = goal1(seed, n);
            eprintln!(
                "goal 1 seed {seed} subflows {n}: group / best single-path TCP = {}",
                show(&r)
            );
            for (ctl, ratio) in r {
                assert!(
                    ratio >= 0.80,
                    "{} gets {ratio:.2}× the best path",
                    ctl.name()
                );
            }
        }
    }
}

#[test]
fn goal3_balance_congestion_moves_traffic_off_the_lossier_path() {
    for seed in SEEDS {
        let r = goal3(seed);
        eprintln!(
            "goal 3 seed {seed}: share on the congested path = {}",
            show(&r)
        );
        let share = |c: Ctl| r.iter().find(|(x, _)| *x == c).map(|(_, s)| *s).unwrap();
        let uncoupled = share(Ctl::Uncoupled);
        for ctl in COUPLED {
            assert!(
                share(ctl) <= uncoupled - 0.08,
                "{} keeps {:.2} on the congested path (uncoupled {uncoupled:.2})",
                ctl.name(),
                share(ctl)
            );
        }
        // OLIA moves more off than LIA (its α_r shifts window to the best paths).
        let (lia, olia) = (
            share(Ctl::Coupled(CcAlgorithm::Lia)),
            share(Ctl::Coupled(CcAlgorithm::Olia)),
        );
        assert!(olia < lia, "olia {olia:.2} lia {lia:.2}");
    }
}

// ---------------------------------------------------------------------------------
// A lone member, the bound, the factory.

/// cwnd after every ACK of a one-flow run on the model.
fn lone_trace(ctrl: Box<dyn CongestionControl>, group: Option<u64>, seed: u64) -> Vec<u32> {
    let mut m = Model::new(vec![Link::new(1000, 30)], seed);
    m.trace = true;
    m.add(ctrl, 0, ms(40), group, ms(0));
    m.run_until(Duration::from_secs(20));
    let f = &m.flows[0];
    assert!(f.losses > 0 || f.trace.len() > 100);
    f.trace.iter().map(|&(_, w)| w).collect()
}

#[test]
fn a_single_member_group_is_reno_exactly() {
    for seed in [1, 2, 3] {
        let reno = lone_trace(Box::new(Reno), None, seed);
        for alg in CcAlgorithm::COUPLED {
            for lisa in [false, true] {
                let kind = alg.coupling().unwrap();
                let t = lone_trace(Box::new(coupled(kind, lisa)), Some(5), seed);
                assert_eq!(t, reno, "{} lisa {lisa} seed {seed}", alg.name());
            }
        }
    }
}

#[test]
fn members_beyond_the_bound_cost_no_more_and_still_couple() {
    let mut host = HostCc::new();
    let mut subs: Vec<Sub> = (0..12)
        .map(|i| Sub::new(&mut host, 10 + i, coupled(Coupling::Lia, false), 20, 20))
        .collect();
    for s in &mut subs {
        s.cc.ssthresh = 10; // congestion avoidance
        s.init(&mut host);
        s.ack(&mut host);
    }
    let g = host.group_of(subs[0].id).unwrap();
    assert_eq!(host.members(g).len(), 12);
    assert_eq!(host.coupled_members(g).len(), MAX_COUPLED);
    for s in &subs {
        let mut vars = s.cc.clone();
        let cx = FlowCtx::new(&mut vars, Some(s.id), Some(&mut host));
        let own = s.ctrl.own(&cx);
        let ms = Members::gather(&cx, own);
        assert!(ms.as_slice().len() <= MAX_COUPLED + 1);
        assert_eq!(ms.as_slice()[ms.me()], own);
        // Nine (or eight) equal members: each grows ~1/n² as fast as Reno.
        assert!(lia::window(ms.as_slice(), ms.me()) >= 20 * 8);
    }
}

#[test]
fn the_factory_builds_each_by_name_and_labels_lisa() {
    let mut host = HostCc::new();
    let (flow, group) = host.join(addr(1), addr(2), Some(GroupKey::Assigned(3)));
    let path = PathInfo {
        local: addr(1),
        remote: addr(2),
        mss: 1448,
        initial_cwnd: 10,
        initial_rto: Duration::from_secs(1),
        now: Instant::ZERO,
        flow,
        group,
    };
    for alg in CcAlgorithm::COUPLED {
        for lisa in [false, true] {
            let mut spec = CcSpec::from(alg);
            spec.tuning.coupled.lisa = lisa;
            let ctx = CcContext {
                seed: 1,
                path: &path,
                host: &mut host,
            };
            let c = StandardCcFactory.build(&spec, ctx);
            assert_eq!(c.label(), spec.name());
            let want = if lisa {
                format!("{}+lisa", alg.name())
            } else {
                alg.name().to_string()
            };
            assert_eq!(spec.name(), want);
            assert_eq!(c.name(), alg.name());
        }
        // The scenario vocabulary: serde names.
        use serde::de::value::{Error, StrDeserializer};
        use serde::Deserialize;
        let parsed = CcAlgorithm::deserialize(StrDeserializer::<Error>::new(alg.name())).unwrap();
        assert_eq!(parsed, alg);
    }
}

// ---------------------------------------------------------------------------------
// cwnd traces of a two-subflow connection, as snapshots (`coupled/snapshots/`).

/// Two subflows through one shared bottleneck (1000 segments/s, 17-segment queue, the
/// LISA paper's BDP), RTTs 40 and 50 ms, the second joining at 150 ms (three RTTs
/// after the first, as in the seed's measurements); each flow's cwnd and ssthresh
/// every 100 ms for 6 s.
fn pair_trace(make: fn() -> Box<dyn CongestionControl>) -> String {
    use std::fmt::Write;
    let mut m = Model::new(vec![Link::new(1000, 17)], 11);
    m.trace = true;
    let label = make().label();
    m.add(make(), 0, ms(40), Some(1), ms(0));
    m.add(make(), 0, ms(50), Some(1), ms(150));
    let mut out =
        format!("{label}: two subflows, shared 1000 seg/s link, queue 17, RTT 40/50 ms\n");
    for step in 1..=60u64 {
        m.run_until(ms(step * 100));
        let ss = |s: u32| {
            if s == u32::MAX {
                "inf".to_string()
            } else {
                s.to_string()
            }
        };
        let (a, b) = (&m.flows[0].cc, &m.flows[1].cc);
        writeln!(
            out,
            "{:>5.1}s cwnd {:>3} {:>3} sum {:>3} ssthresh {:>3} {:>3}",
            step as f64 / 10.0,
            a.cwnd,
            b.cwnd,
            a.cwnd + b.cwnd,
            ss(a.ssthresh),
            ss(b.ssthresh)
        )
        .unwrap();
    }
    let (d0, d1) = (m.flows[0].delivered, m.flows[1].delivered);
    writeln!(out, "delivered {d0} + {d1}, drops {}", m.links[0].drops).unwrap();
    out
}

fn snapshot(name: &str, make: fn() -> Box<dyn CongestionControl>) {
    let text = pair_trace(make);
    assert_eq!(text, pair_trace(make), "{name} is not deterministic");
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    s.set_omit_expression(true);
    s.bind(|| insta::assert_snapshot!(format!("pair-{name}"), text));
}

#[test]
fn pair_traces() {
    snapshot("lia", || Box::new(coupled(Coupling::Lia, false)));
    snapshot("olia", || Box::new(coupled(Coupling::Olia, false)));
    snapshot("balia", || Box::new(coupled(Coupling::Balia, false)));
    snapshot("lia+lisa", || Box::new(coupled(Coupling::Lia, true)));
    snapshot("olia+lisa", || Box::new(coupled(Coupling::Olia, true)));
    snapshot("uncoupled-reno", || Box::new(Reno));
}

/// LISA on the model in the seed's shared-bottleneck setting (B.2 §3: 5 Mbit/s ≈ 430
/// segments/s of 1448 B, RTT 40 ms, BDP ≈ 17; the second subflow sends its IW three
/// RTTs after the first): drops in the first two seconds (≈ slow start and the first
/// recovery, the paper's R_ss) and the largest compound window, with and without LISA,
/// per queue size and seed. A direction check of MP-3 on the model, not its
/// reproduction (that needs MPTCP in the simulator).
fn lisa_start(lisa: bool, queue: u32, seed: u64) -> (u64, u32) {
    let mut m = Model::new(vec![Link::new(430, queue)], seed);
    let make = || -> Box<dyn CongestionControl> { Box::new(coupled(Coupling::Lia, lisa)) };
    m.add(make(), 0, ms(40), Some(1), ms(0));
    m.add(make(), 0, ms(40), Some(1), ms(120 + seed % 7));
    let mut peak = 0;
    for step in 1..=400u64 {
        m.run_until(ms(step * 5));
        peak = peak.max(m.flows[0].cc.cwnd + m.flows[1].cc.cwnd);
    }
    (m.links[0].drops, peak)
}

#[test]
fn lisa_lowers_start_up_losses_at_a_shared_bottleneck() {
    let (mut with, mut without) = (0, 0);
    for queue in [8, 12, 17, 25, 34] {
        let mut line = format!("queue {queue:>2}:");
        for seed in SEEDS {
            let (dl, pl) = lisa_start(true, queue, seed);
            let (dn, pn) = lisa_start(false, queue, seed);
            with += dl;
            without += dn;
            line.push_str(&format!("  drops {dl:>3}/{dn:<3} peak {pl:>3}/{pn:<3}"));
        }
        eprintln!("LISA/without {line}");
    }
    eprintln!("LISA total drops {with}, without {without}");
    assert!(with < without, "LISA {with} drops, without {without}");
}

// ---------------------------------------------------------------------------------
// Through real endpoints: the endpoint lends the host room to each connection, so
// connections it groups (here by remote host, as an MPTCP connection will group its
// subflows) couple, and LISA credits a joiner from a slow-starting sibling.

/// Two connections to one server, grouped, with `lia` (+ LISA if `lisa`): the first
/// runs into slow start, the second is opened then. Returns the first connection's
/// cwnd as sampled at every step, and the host room's view after the transfers.
fn endpoints(lisa: bool) -> (Vec<u32>, u64, usize, [CoupledDiagnostics; 2]) {
    use crate::cc::host::Grouping;
    use crate::endpoint::{Endpoint, EndpointConfig};
    use crate::testkit::{Pair, CLIENT_IP};
    let mut cfg = crate::Config::default();
    cfg.congestion.controller = CcSpec::from(CcAlgorithm::Lia);
    cfg.congestion.controller.tuning.coupled.lisa = lisa;
    let mut p = Pair::with_configs(ms(10), cfg.clone(), crate::Config::default());
    p.client = Endpoint::new(
        CLIENT_IP,
        EndpointConfig {
            isn_secret: [1; 16],
            rng_seed: 1,
            cc_grouping: Grouping::RemoteHost,
            ..EndpointConfig::seeded([7; 16], 7)
        },
    );
    let (c1, s1) = p.establish();
    let data = crate::testkit::pattern(400_000, 3);
    p.client.conn_mut(c1).unwrap().write(&data);
    let mut w1 = Vec::new();
    assert!(p.run_until(Duration::from_secs(5), |p| {
        let w = p.client.conn(c1).unwrap().info().cwnd;
        w1.push(w);
        w >= 24
    }));
    let (c2, s2) = p.establish();
    p.client.conn_mut(c2).unwrap().write(&data);
    let (mut got1, mut got2) = (Vec::new(), Vec::new());
    assert!(p.run_until(Duration::from_secs(30), |p| {
        w1.push(p.client.conn(c1).unwrap().info().cwnd);
        Pair::read_all(&mut p.server, s1, &mut got1);
        Pair::read_all(&mut p.server, s2, &mut got2);
        got1.len() == data.len() && got2.len() == data.len()
    }));
    assert!(got1 == data && got2 == data, "both transfers intact");
    let retransmits = p.client.conn(c1).unwrap().info().retransmits
        + p.client.conn(c2).unwrap().info().retransmits;
    let host = p.client.host_cc();
    let active = host
        .flows()
        .filter(|(_, s)| s.coupled.active && s.cwnd > 0)
        .count();
    assert_eq!(host.group_count(), 1);
    let diag = |h| match p.client.conn(h).unwrap().info().cc_diag {
        Some(CcDiagnostics::Coupled(d)) => d,
        other => panic!("{other:?}"),
    };
    (w1, retransmits, active, [diag(c1), diag(c2)])
}

#[test]
fn grouped_connections_couple_through_the_endpoint_and_lisa_credits_the_joiner() {
    for lisa in [false, true] {
        let (w1, retransmits, active, [d1, d2]) = endpoints(lisa);
        assert_eq!(retransmits, 0, "a lossless pipe");
        assert_eq!(active, 2, "both flows published into the host room");
        assert_eq!(
            (d1.members, d2.members),
            (1, 1),
            "slow start throughout: no CA step"
        );
        // The first connection was at ≥ 24 in slow start when the second opened: with
        // LISA it gave 10 and the joiner started at 10 (Algorithm 1's first branch);
        // without LISA nothing moved and its window never fell (no loss here).
        if lisa {
            assert_eq!((d1.lisa_given, d2.lisa_credit), (10, 10), "{d1:?} {d2:?}");
            assert_eq!((d1.lisa_credit, d2.lisa_given), (0, 0));
        } else {
            assert_eq!(
                (d1, d2),
                (
                    CoupledDiagnostics {
                        members: 1,
                        ..Default::default()
                    },
                    d1
                )
            );
            assert!(w1.windows(2).all(|w| w[1] >= w[0]));
        }
    }
}
