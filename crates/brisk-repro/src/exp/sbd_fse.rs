//! sbd-fse: shared-bottleneck detection (RFC 8382) choosing which flows the Flow
//! State Exchange couples (issue 33 §4, "no paper has this end to end"). Our claims
//! (`FSE-X1*`), not the seed's.
//!
//! One brisk host sends four bulk CUBIC flows to four receivers, RTT 100 ms, 1000-byte
//! packets. Flows 1 and 2 (priorities 1 and 0.5) share link X (10 Mbit/s); flow 3
//! (priority 1) crosses link Y (6 Mbit/s) alone and flow 4 (priority 0.5) link Z (15
//! Mbit/s) alone. Every bottleneck has a drop-tail queue of one BDP (100 ms). Four
//! arms on the same flows and seeds:
//! - **uncoupled**: the flows' own CUBIC;
//! - **blind**: all four in one FSE group (`fse = { group = "all" }`): coupling every
//!   flow of the host, as grouping by host alone would;
//! - **sbd**: every flow's group is the host detector's stable group
//!   (`fse = { sbd = true }`: `SbdConfig::improved()`, the stability filter's 90 % of
//!   20 decisions), so the FSE couples only what SBD found;
//! - **truth**: flows 1 and 2 in one named group, 3 and 4 alone: the oracle coupling.
//!
//! The detector runs on the sender in every arm (it only observes unless a flow
//! follows it), so its grouping is reported for the uncoupled arm too.
//!
//! Measured after a settling time (30 s; the detector needs N·T = 17.5 s for full
//! accuracy plus the 7-s stability window): each bottleneck's mean queueing delay
//! (queue bytes / rate, sampled every 10 ms) and utilisation (busy time), the bytes
//! flows 1 and 2 delivered, and per grouping decision whether the coupled groups
//! were the truth ({1,2} coupled; 3 and 4 coupled with no one).
//!
//! The tolerances below were written before the first run.

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{Chart, Series, Style, BLUE, GREEN, GREY, ORANGE, RED};

use super::sbd::{endpoint, ip, link_node};
use brisk_net::Queue;
use brisk_sim::app::{ClientApp, Pattern, ServerApp};
use brisk_sim::engine::{Engine, NodeId};
use brisk_sim::host::{ClientSide, Host, Role, ServerSide};
use brisk_sim::node::SimNode;
use brisk_sim::scenario::AppSpec;
use brisk_tcp::cc::fse::tcp::FseConfig;
use brisk_tcp::cc::sbd::{SbdConfig, SbdHostConfig};
use brisk_tcp::Config;
use brisk_time::{Duration, Instant};
use std::net::{IpAddr, SocketAddr};

pub const ID: &str = "sbd-fse";
pub const TITLE: &str =
    "Shared-bottleneck detection choosing the flows the FSE couples (issue 33 §4; ours)";
pub const CLAIMS: &[&str] = &["FSE-X1a", "FSE-X1b", "FSE-X1c", "FSE-X1d", "FSE-X1e"];

/// The bottlenecks: (name, rate bit/s, flows on it).
const LINKS: [(&str, u64, &[usize]); 3] = [
    ("X", 10_000_000, &[0, 1]),
    ("Y", 6_000_000, &[2]),
    ("Z", 15_000_000, &[3]),
];
const PRIORITY: [f64; 4] = [1.0, 0.5, 1.0, 0.5];
/// One-way delays: bottleneck 44 ms, access 1 ms, ACK path 55 ms: RTT 100 ms.
const LINK_DELAY_MS: u64 = 44;
const REVERSE_DELAY_MS: u64 = 55;
const RTT_MS: u64 = 100;
const PROBE_MS: u64 = 10;
/// From here on the run is measured.
const SETTLE_MS: u64 = 30_000;
/// MSS giving 1000-byte IP packets (as `brisk repro fse`).
const MSS: u16 = 960;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arm {
    Uncoupled,
    Blind,
    Sbd,
    Truth,
}

const ARMS: [Arm; 4] = [Arm::Uncoupled, Arm::Blind, Arm::Sbd, Arm::Truth];

impl Arm {
    fn name(self) -> &'static str {
        match self {
            Arm::Uncoupled => "uncoupled",
            Arm::Blind => "blind (one group)",
            Arm::Sbd => "SBD-driven",
            Arm::Truth => "true groups",
        }
    }
    fn color(self) -> &'static str {
        match self {
            Arm::Uncoupled => RED,
            Arm::Blind => GREY,
            Arm::Sbd => BLUE,
            Arm::Truth => GREEN,
        }
    }
    /// Flow i's FSE settings in this arm.
    fn fse(self, i: usize) -> Option<FseConfig> {
        let with = |group: Option<&str>, sbd: bool| FseConfig {
            group: group.map(str::to_string),
            priority: PRIORITY[i],
            sbd,
            ..FseConfig::default()
        };
        match self {
            Arm::Uncoupled => None,
            Arm::Blind => Some(with(Some("all"), false)),
            Arm::Sbd => Some(with(None, true)),
            Arm::Truth if i < 2 => Some(with(Some("x"), false)),
            Arm::Truth => None,
        }
    }
}

/// What one run measured.
#[derive(Clone, Debug, Default)]
struct RunOut {
    /// Per link: mean queueing delay (ms) and utilisation over the measured part.
    queue_ms: [f64; 3],
    util: [f64; 3],
    /// Bytes flows 1 and 2 delivered in the measured part.
    bytes_x: [u64; 2],
    /// Decisions in the measured part, and how many had the true coupled groups.
    decisions: usize,
    correct: usize,
    /// When the coupled groups first equalled the truth (s), if they did.
    first_correct: Option<f64>,
    /// Link X's queueing delay per second (s, ms).
    x_series: Vec<(f64, f64)>,
    /// The coupled groups per decision (time s, group per flow).
    groups: Vec<(f64, [Option<u32>; 4])>,
    /// Measured decisions in which each flow was grouped at all (the raw decision,
    /// before the stability filter), and in which flows 1 and 2 were together.
    raw_grouped: [usize; 4],
    raw_12: usize,
    /// Measured decisions after which flows 1 and 2 were coupled.
    coupled_12: usize,
    /// Per flow, the mean over measured decisions of (skew_est, var_est ms, freq_est,
    /// pkt_loss).
    est: [(f64, f64, f64, f64); 4],
}

pub(crate) fn add_flow(
    from: &mut Host,
    to: &mut Host,
    to_ip: IpAddr,
    id: u32,
    cfg: Config,
    start: Instant,
    seed: u64,
) -> Result<(), String> {
    let app = AppSpec::Bulk {
        bytes: None,
        write_size: None,
        pause: None,
    };
    let fwd = Pattern::with_hashing(seed ^ 0xf5e0 ^ u64::from(id), false);
    let rev = Pattern::with_hashing(seed ^ 0xf5e1 ^ u64::from(id), false);
    let client = ClientApp::new(
        &app,
        fwd.clone(),
        rev.clone(),
        seed.wrapping_add(u64::from(id)),
    );
    let port = 5001;
    let side = ClientSide::new(client, SocketAddr::new(to_ip, port), start, cfg.clone(), 2);
    from.add_flow(id, Role::Client(Box::new(side)))
        .map_err(|e| format!("flow {id}: {e}"))?;
    let server = ServerSide::new(ServerApp::new(&app, fwd, rev, port), port, cfg, 2);
    to.add_flow(id, Role::Server(Box::new(server)))
        .map_err(|e| format!("flow {id}: {e}"))
}

fn received(e: &Engine<SimNode>, node: NodeId) -> u64 {
    e.node(node).as_host().map_or(0, |h| {
        h.flows
            .iter()
            .filter_map(|f| match &f.role {
                Role::Server(sv) => sv
                    .conn
                    .and_then(|c| h.ep.conn(c))
                    .map(|c| c.info().bytes_received),
                _ => None,
            })
            .sum()
    })
}

/// Whether the coupled groups are the truth: flows 1 and 2 together, 3 and 4 with
/// no one.
fn is_truth(g: &[Option<u32>; 4]) -> bool {
    g[0].is_some() && g[0] == g[1] && g[2].is_none() && g[3].is_none()
}

/// Builds and runs one arm. (Flow and link indices address several tables at once,
/// hence the index loops.)
#[allow(clippy::needless_range_loop)]
fn run(arm: Arm, seed: u64, secs: u64) -> Result<RunOut, String> {
    let mut e: Engine<SimNode> = Engine::new();
    let s_ip = ip(0, 1);
    let r_ip = |i: usize| ip(0, 10 + i as u8);
    let mut sender = Host::new(s_ip, endpoint(s_ip, seed, 0));
    sender
        .ep
        .enable_sbd(SbdHostConfig {
            sbd: SbdConfig::improved(),
            ..SbdHostConfig::default()
        })
        .map_err(|e| e.to_string())?;
    let mut receivers: Vec<Host> = (0..4)
        .map(|i| Host::new(r_ip(i), endpoint(r_ip(i), seed, 0)))
        .collect();
    let starts = super::fse::starts(seed, 4);
    for (i, r) in receivers.iter_mut().enumerate() {
        let mut cfg = Config {
            mss: MSS,
            ..Config::default()
        };
        cfg.congestion.controller.fse = arm.fse(i);
        let start = Instant::ZERO + Duration::from_millis(starts[i]);
        add_flow(&mut sender, r, r_ip(i), i as u32, cfg, start, seed)?;
    }
    let s = e.add_node(SimNode::Host(Box::new(sender)));
    let r: Vec<NodeId> = receivers
        .into_iter()
        .map(|h| e.add_node(SimNode::Host(Box::new(h))))
        .collect();
    // One BDP of queue at each link's rate: rate · RTT / 1000-byte packets.
    let links: Vec<NodeId> = LINKS
        .iter()
        .map(|&(_, rate, _)| {
            let pkts = (rate * RTT_MS / 1000 / 8 / 1000) as usize;
            link_node(&mut e, rate, LINK_DELAY_MS, pkts)
        })
        .collect();
    let access = link_node(&mut e, 0, 1, 1 << 20);
    let rev = link_node(&mut e, 0, REVERSE_DELAY_MS, 1 << 20);
    for (k, &(_, _, flows)) in LINKS.iter().enumerate() {
        for &i in flows {
            e.routes_mut(s).add(r_ip(i), links[k]);
            e.routes_mut(links[k]).add(r_ip(i), access);
        }
    }
    for i in 0..4 {
        e.routes_mut(access).add(r_ip(i), r[i]);
        e.routes_mut(r[i]).set_default(rev);
    }
    e.routes_mut(rev).add(s_ip, s);

    let end_ms = secs * 1000;
    let mut out = RunOut::default();
    let mut q_sum = [0f64; 3];
    let mut probes = 0u64;
    let mut sec_sum = 0f64;
    let mut sec_n = 0u32;
    let mut busy0 = [0u64; 3];
    let mut bytes0 = [0u64; 2];
    let mut seen = 0;
    let mut t_ms = 0;
    let busy = |e: &Engine<SimNode>, k: usize| {
        e.node(links[k])
            .as_link()
            .map_or(0, |l| l.link.counters().busy_ns)
    };
    while t_ms < end_ms {
        t_ms += PROBE_MS;
        e.run_until(Instant::ZERO + Duration::from_millis(t_ms), &mut ());
        if t_ms == SETTLE_MS {
            for k in 0..3 {
                busy0[k] = busy(&e, k);
            }
            bytes0 = [received(&e, r[0]), received(&e, r[1])];
        }
        for (k, &node) in links.iter().enumerate() {
            let Some(l) = e.node(node).as_link() else {
                continue;
            };
            let ms = l.link.queue().len_bytes() as f64 * 8.0 / LINKS[k].1 as f64 * 1000.0;
            if k == 0 {
                sec_sum += ms;
                sec_n += 1;
            }
            if t_ms > SETTLE_MS {
                q_sum[k] += ms;
            }
        }
        if t_ms > SETTLE_MS {
            probes += 1;
        }
        if t_ms.is_multiple_of(1000) {
            out.x_series
                .push((t_ms as f64 / 1000.0, sec_sum / f64::from(sec_n.max(1))));
            sec_sum = 0.0;
            sec_n = 0;
        }
        let Some(hc) = e.node(s).as_host().map(|h| h.ep.host_cc()) else {
            continue;
        };
        let Some(sbd) = hc.sbd() else {
            continue;
        };
        if sbd.decisions() == seen {
            continue;
        }
        seen = sbd.decisions();
        // The host numbers flows in the order they connected (random starts): find
        // each one's test flow by its receiver.
        let mut g = [None; 4];
        let mut raw = [None; 4];
        for (f, rg) in sbd.groups() {
            let Some((_, remote)) = hc.path(f) else {
                continue;
            };
            if let Some(i) = (0..4).find(|&i| r_ip(i) == remote.ip()) {
                g[i] = sbd.coupled_group_of(f);
                raw[i] = rg;
                if t_ms > SETTLE_MS {
                    if let Some(x) = sbd.stats(f).map(|st| st.estimates()) {
                        let v = &mut out.est[i];
                        v.0 += x.skew_est;
                        v.1 += x.var_est / 1000.0;
                        v.2 += x.freq_est;
                        v.3 += x.pkt_loss;
                    }
                }
            }
        }
        if t_ms > SETTLE_MS {
            for i in 0..4 {
                out.raw_grouped[i] += usize::from(raw[i].is_some());
            }
            out.raw_12 += usize::from(raw[0].is_some() && raw[0] == raw[1]);
            out.coupled_12 += usize::from(g[0].is_some() && g[0] == g[1]);
        }
        let ok = is_truth(&g);
        let t = t_ms as f64 / 1000.0;
        if ok && out.first_correct.is_none() {
            out.first_correct = Some(t);
        }
        if t_ms > SETTLE_MS {
            out.decisions += 1;
            out.correct += usize::from(ok);
        }
        out.groups.push((t, g));
    }
    let n = out.decisions.max(1) as f64;
    for v in &mut out.est {
        *v = (v.0 / n, v.1 / n, v.2 / n, v.3 / n);
    }
    let dt_ns = (end_ms - SETTLE_MS) as f64 * 1e6;
    for k in 0..3 {
        out.queue_ms[k] = q_sum[k] / probes.max(1) as f64;
        out.util[k] = (busy(&e, k) - busy0[k]) as f64 / dt_ns;
    }
    out.bytes_x = [
        received(&e, r[0]) - bytes0[0],
        received(&e, r[1]) - bytes0[1],
    ];
    Ok(out)
}

struct Shape {
    secs: u64,
    seeds: Vec<u64>,
}

fn shape(quick: bool) -> Shape {
    if quick {
        Shape {
            secs: 60,
            seeds: vec![1, 2],
        }
    } else {
        Shape {
            secs: 200,
            seeds: (1..=5).collect(),
        }
    }
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    Ok(Plan {
        jobs: Vec::new(),
        analyse: Box::new(move |_| analyse(&shape(quick))),
    })
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = xs.collect();
    crate::stats::mean(&v)
}

fn analyse(sh: &Shape) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    // outs[arm][seed]
    let mut outs: Vec<Vec<RunOut>> = Vec::new();
    for arm in ARMS {
        let mut v = Vec::new();
        for &seed in &sh.seeds {
            match run(arm, seed, sh.secs) {
                Ok(o) => v.push(o),
                Err(err) => {
                    r.claims.push(
                        Claim::new("FSE-X1a", "SBD-driven FSE")
                            .ours_text("run failed")
                            .check(false)
                            .note(err),
                    );
                    return r;
                }
            }
        }
        outs.push(v);
    }
    let ix = |a: Arm| ARMS.iter().position(|x| *x == a).unwrap_or(0);
    let at = |a: Arm| &outs[ix(a)];
    let q = |a: Arm, k: usize| mean(at(a).iter().map(|o| o.queue_ms[k]));
    let u = |a: Arm, k: usize| mean(at(a).iter().map(|o| o.util[k]));
    r.notes.push(format!(
        "Set-up (module doc of crates/brisk-repro/src/exp/sbd_fse.rs): one host, four bulk CUBIC flows, RTT 100 ms, 1000-byte packets; flows 1 (P = 1) and 2 (P = 0.5) share X (10 Mbit/s), flow 3 (P = 1) alone on Y (6 Mbit/s), flow 4 (P = 0.5) alone on Z (15 Mbit/s); drop-tail queues of one BDP. Conservative active FSE on cwnd. The detector: RFC 8382 at the sender, SbdConfig::improved(), coupling only pairs grouped together in ≥ 90 % of the last 20 decisions. {} s per run, measured from {} s, seeds {:?}.",
        sh.secs,
        SETTLE_MS / 1000,
        sh.seeds
    ));
    for arm in ARMS {
        r.notes.push(format!(
            "{}: queueing delay X/Y/Z {:.1}/{:.1}/{:.1} ms, utilisation {:.3}/{:.3}/{:.3}; flows 1:2 bytes on X {}; coupled groups = truth in {} decisions after {} s; first at {}.",
            arm.name(),
            q(arm, 0),
            q(arm, 1),
            q(arm, 2),
            u(arm, 0),
            u(arm, 1),
            u(arm, 2),
            at(arm)
                .iter()
                .map(|o| format!("{:.2}", o.bytes_x[0] as f64 / o.bytes_x[1].max(1) as f64))
                .collect::<Vec<_>>()
                .join(", "),
            at(arm)
                .iter()
                .map(|o| format!("{}/{}", o.correct, o.decisions))
                .collect::<Vec<_>>()
                .join(", "),
            SETTLE_MS / 1000,
            at(arm)
                .iter()
                .map(|o| o.first_correct.map_or("never".into(), |t| format!("{t:.1} s")))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for arm in [Arm::Sbd, Arm::Uncoupled, Arm::Truth] {
        r.notes.push(format!(
            "{}: the detector's raw decisions after {} s, per seed: flows 1–4 grouped at all in {} of the decisions; flows 1 and 2 together in {}; mean estimates per flow (skew_est, var_est ms, freq_est, pkt_loss): {}.",
            arm.name(),
            SETTLE_MS / 1000,
            at(arm)
                .iter()
                .map(|o| o
                    .raw_grouped
                    .iter()
                    .map(|&c| format!("{:.0} %", 100.0 * c as f64 / o.decisions.max(1) as f64))
                    .collect::<Vec<_>>()
                    .join("/"))
                .collect::<Vec<_>>()
                .join(" | "),
            at(arm)
                .iter()
                .map(|o| format!("{:.0} %", 100.0 * o.raw_12 as f64 / o.decisions.max(1) as f64))
                .collect::<Vec<_>>()
                .join(" | "),
            at(arm)
                .iter()
                .map(|o| o
                    .est
                    .iter()
                    .map(|x| format!("({:.2} {:.1} {:.2} {:.3})", x.0, x.1, x.2, x.3))
                    .collect::<Vec<_>>()
                    .join(" "))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    for arm in [Arm::Sbd, Arm::Uncoupled] {
        r.notes.push(format!(
            "{}: the detector's coupled groups after {} s, most frequent first (flows 1–4; a letter per group, - for none), per seed: {}.",
            arm.name(),
            SETTLE_MS / 1000,
            at(arm)
                .iter()
                .map(|o| partitions(&o.groups))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    // FSE-X1a: queueing delay on the shared link.
    let (qs, qu, qt) = (q(Arm::Sbd, 0), q(Arm::Uncoupled, 0), q(Arm::Truth, 0));
    r.claims.push(
        Claim::new(
            "FSE-X1a",
            "shared link X: mean queueing delay, SBD-driven coupling / uncoupled",
        )
        .paper_text("(none: ours) the coupled group's lower queue (FSE-3a) kept")
        .ours(qs / qu)
        .unit("ratio")
        .tolerance("< 1, and SBD-driven within 20 % of the true groups' delay")
        .check(qs < qu && (qs - qt).abs() <= 0.2 * qt)
        .note(format!(
            "Mean over seeds: SBD-driven {qs:.1} ms, uncoupled {qu:.1} ms, true groups {qt:.1} ms, blind {:.1} ms.",
            q(Arm::Blind, 0)
        )),
    );
    // FSE-X1b: utilisation of the links whose flows share nothing.
    let worst_drop = [1, 2]
        .iter()
        .map(|&k| u(Arm::Uncoupled, k) - u(Arm::Sbd, k))
        .fold(f64::NEG_INFINITY, f64::max);
    r.claims.push(
        Claim::new(
            "FSE-X1b",
            "unshared links Y, Z: utilisation uncoupled − SBD-driven (worst link)",
        )
        .paper_text("(none: ours) flows alone on a bottleneck lose nothing")
        .ours(worst_drop)
        .unit("fraction")
        .tolerance("≤ 0.02 on each of Y and Z")
        .check(worst_drop <= 0.02)
        .note(format!(
            "Y: uncoupled {:.3}, SBD-driven {:.3}, true {:.3}, blind {:.3}; Z: {:.3}, {:.3}, {:.3}, {:.3}; X: {:.3}, {:.3}, {:.3}, {:.3}.",
            u(Arm::Uncoupled, 1),
            u(Arm::Sbd, 1),
            u(Arm::Truth, 1),
            u(Arm::Blind, 1),
            u(Arm::Uncoupled, 2),
            u(Arm::Sbd, 2),
            u(Arm::Truth, 2),
            u(Arm::Blind, 2),
            u(Arm::Uncoupled, 0),
            u(Arm::Sbd, 0),
            u(Arm::Truth, 0),
            u(Arm::Blind, 0),
        )),
    );
    // FSE-X1c: priority shares on X.
    let ratios: Vec<f64> = at(Arm::Sbd)
        .iter()
        .map(|o| o.bytes_x[0] as f64 / o.bytes_x[1].max(1) as f64)
        .collect();
    let worst_ratio = ratios.iter().copied().fold(f64::NAN, |w, x| {
        if w.is_nan() || (x - 2.0).abs() > (w - 2.0).abs() {
            x
        } else {
            w
        }
    });
    r.claims.push(
        Claim::new(
            "FSE-X1c",
            "shared link X: bytes of flow 1 (P = 1) / flow 2 (P = 0.5), SBD-driven, worst seed",
        )
        .paper(2.0)
        .ours(worst_ratio)
        .unit("ratio")
        .tolerance("2.0 ± 0.2 in every seed, with flows 1 and 2 coupled in ≥ 90 % of the decisions (else the ratio is not the FSE's doing)")
        .check(
            ratios.iter().all(|x| (x - 2.0).abs() <= 0.2)
                && at(Arm::Sbd)
                    .iter()
                    .all(|o| o.coupled_12 as f64 >= 0.9 * o.decisions as f64),
        )
        .note(format!(
            "Per seed: {}; flows 1 and 2 coupled in {} of the decisions after 30 s (a ratio near 2 without coupling is what earlier coupling left: CUBIC flows converge slowly). Uncoupled: {}.",
            ratios
                .iter()
                .map(|x| format!("{x:.2}"))
                .collect::<Vec<_>>()
                .join(", "),
            at(Arm::Sbd)
                .iter()
                .map(|o| format!("{:.0} %", 100.0 * o.coupled_12 as f64 / o.decisions.max(1) as f64))
                .collect::<Vec<_>>()
                .join(", "),
            at(Arm::Uncoupled)
                .iter()
                .map(|o| format!("{:.2}", o.bytes_x[0] as f64 / o.bytes_x[1].max(1) as f64))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    );
    // FSE-X1d: the coupled groups are right.
    let acc: Vec<f64> = at(Arm::Sbd)
        .iter()
        .map(|o| o.correct as f64 / o.decisions.max(1) as f64)
        .collect();
    let worst_acc = acc.iter().copied().fold(f64::INFINITY, f64::min);
    r.claims.push(
        Claim::new(
            "FSE-X1d",
            "coupled groups equal the truth ({1,2}; 3 and 4 alone), SBD-driven arm, worst seed",
        )
        .paper_text("(none: ours) SBD-2's ≥ 90 % bar")
        .ours(100.0 * worst_acc)
        .unit("% of decisions after 30 s")
        .tolerance("≥ 90 %")
        .check(worst_acc >= 0.9)
        .note(format!(
            "Per seed: {}. The same detector watching the uncoupled flows: {}.",
            acc.iter()
                .map(|x| format!("{:.1} %", 100.0 * x))
                .collect::<Vec<_>>()
                .join(", "),
            at(Arm::Uncoupled)
                .iter()
                .map(|o| format!(
                    "{:.1} %",
                    100.0 * o.correct as f64 / o.decisions.max(1) as f64
                ))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    );
    // FSE-X1e: what blind coupling costs, that SBD avoids.
    let blind_yz = (u(Arm::Blind, 1) + u(Arm::Blind, 2)) / 2.0;
    let sbd_yz = (u(Arm::Sbd, 1) + u(Arm::Sbd, 2)) / 2.0;
    r.claims.push(
        Claim::new(
            "FSE-X1e",
            "unshared links Y, Z: mean utilisation, blind coupling − SBD-driven",
        )
        .paper_text("(none: ours) coupling flows that share no bottleneck costs utilisation")
        .ours(blind_yz - sbd_yz)
        .unit("fraction")
        .tolerance("< 0 (direction)")
        .check(blind_yz < sbd_yz)
        .note(format!(
            "Blind {blind_yz:.3}, SBD-driven {sbd_yz:.3}, uncoupled {:.3}.",
            (u(Arm::Uncoupled, 1) + u(Arm::Uncoupled, 2)) / 2.0
        )),
    );
    r.plots.push(queue_plot(&outs));
    r.plots.push(util_plot(&outs, sh));
    r
}

/// The coupled partitions of the measured decisions, as "ab-- 80 %, ...".
fn partitions(groups: &[(f64, [Option<u32>; 4])]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    let measured = groups
        .iter()
        .filter(|(t, _)| *t > SETTLE_MS as f64 / 1000.0);
    let mut n = 0;
    for (_, g) in measured {
        n += 1;
        let mut names: Vec<u32> = Vec::new();
        let key: String = g
            .iter()
            .map(|x| match x {
                None => '-',
                Some(v) => {
                    let i = names.iter().position(|y| y == v).unwrap_or_else(|| {
                        names.push(*v);
                        names.len() - 1
                    });
                    (b'a' + i as u8) as char
                }
            })
            .collect();
        match counts.iter_mut().find(|(k, _)| *k == key) {
            Some(c) => c.1 += 1,
            None => counts.push((key, 1)),
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    counts
        .iter()
        .take(4)
        .map(|(k, c)| format!("{k} {:.0} %", 100.0 * *c as f64 / f64::from(n.max(1))))
        .collect::<Vec<_>>()
        .join(", ")
}

fn queue_plot(outs: &[Vec<RunOut>]) -> Plot {
    let mut series: Vec<Series> = ARMS
        .iter()
        .zip(outs)
        .map(|(a, o)| {
            Series::new(
                a.name(),
                a.color(),
                Style::Line,
                o.first().map(|x| x.x_series.clone()).unwrap_or_default(),
            )
        })
        .collect();
    // The SBD-driven arm's coupled groups: a mark at 210 ms while {1,2} are coupled.
    if let Some(o) = outs.get(2).and_then(|v| v.first()) {
        let pts = o
            .groups
            .iter()
            .filter(|(_, g)| g[0].is_some() && g[0] == g[1])
            .map(|(t, _)| (*t, 210.0))
            .collect();
        series.push(Series::new(
            "flows 1, 2 coupled (SBD)",
            ORANGE,
            Style::Points,
            pts,
        ));
        let wrong = o
            .groups
            .iter()
            .filter(|(_, g)| g[2].is_some() || g[3].is_some())
            .map(|(t, _)| (*t, 200.0))
            .collect();
        series.push(Series::new(
            "flow 3 or 4 coupled (wrong)",
            RED,
            Style::Points,
            wrong,
        ));
    }
    Plot {
        figure: Figure::Chart(Chart {
            title: "Queueing delay on the shared link X (seed 1)".into(),
            x_label: "time (s)".into(),
            y_label: "queueing delay (ms, mean per s); marks above 200".into(),
            series,
            v_lines: vec![(SETTLE_MS as f64 / 1000.0, "measured from".into())],
            ..Chart::default()
        }),
        paper: "None: no paper composes SBD and the FSE (issue 33 §4).".into(),
        ours: "Lines: the mean queueing delay per second on X in each arm; orange marks at 210: decisions after which SBD's stable groups couple flows 1 and 2; red marks at 200: decisions coupling flow 3 or 4 (wrong).".into(),
    }
}

fn util_plot(outs: &[Vec<RunOut>], sh: &Shape) -> Plot {
    let series = ARMS
        .iter()
        .zip(outs)
        .map(|(a, o)| {
            let runs = o
                .iter()
                .map(|x| (0..3).map(|k| (k as f64 + 1.0, x.util[k])).collect())
                .collect();
            super::over_seeds(a.name(), a.color(), Style::Marker, runs)
        })
        .collect();
    Plot {
        figure: Figure::Chart(Chart {
            title: "Utilisation of each bottleneck (1 = X shared by flows 1, 2; 2 = Y, flow 3 alone; 3 = Z, flow 4 alone)".into(),
            x_label: "bottleneck (1 = X, 2 = Y, 3 = Z)".into(),
            y_label: "utilisation after 30 s".into(),
            x_range: Some((0.5, 3.5)),
            y_range: Some((0.0, 1.05)),
            series,
            ..Chart::default()
        }),
        paper: "None (ours).".into(),
        ours: format!(
            "Busy time of each bottleneck from 30 s to the end, per arm; markers at the same value overlap (the last drawn shows). {}",
            crate::bands::caption(sh.seeds.len())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truth_is_flows_1_and_2_only() {
        assert!(is_truth(&[Some(0), Some(0), None, None]));
        assert!(!is_truth(&[Some(0), Some(0), Some(0), None]));
        assert!(!is_truth(&[None, None, None, None]));
        assert!(!is_truth(&[Some(0), Some(1), None, None]));
    }

    #[test]
    fn arms_configure_the_fse_as_described() {
        assert!(Arm::Uncoupled.fse(0).is_none());
        assert_eq!(Arm::Blind.fse(3).unwrap().group.as_deref(), Some("all"));
        let s = Arm::Sbd.fse(1).unwrap();
        assert!(s.sbd && s.group.is_none() && s.priority == 0.5);
        assert!(Arm::Truth.fse(1).is_some() && Arm::Truth.fse(2).is_none());
        for a in ARMS {
            for i in 0..4 {
                if let Some(c) = a.fse(i) {
                    c.validate().unwrap();
                }
            }
        }
    }
}
