//! real-sbd: RFC 8382 shared-bottleneck detection on real packets (issue 33 §4, "SBD
//! on real packets, where the lab's emulated links give two bottlenecks"), beside the
//! simulator's twin. Our rows REAL-SBD-1 to 4.
//!
//! brisk's stack sends four bulk CUBIC flows through the two-path lab
//! (`brisk_emu::tools::multipath`, `realrun::twopath::run_two_path_with`) to Linux
//! receivers, with the host's detector on (`SbdConfig::improved()`, the sender-side
//! OWD feed of `cc/sbd/feed.rs`; the clock-skew correction off: both ends read one
//! machine's clock, so there is no drift to remove, and `sbd.md` shows the correction
//! pulled by queue changes). Each flow leaves from brisk's address on its path, so
//! the flows cross the bottleneck of that path only:
//! - **two** (the claim's arm): path A, 10 Mbit/s, carries flows 1 and 2; path B,
//!   6 Mbit/s, flows 3 and 4. Truth: {1,2} and {3,4}, both congested.
//! - **one** (the control, full mode only): all four flows on path A. Truth: one group
//!   of four.
//!
//! Both paths: RTT 100 ms (split evenly), drop-tail queue of one BDP in 1500-byte
//! packets (A 83, B 50), no loss; starts at random in the first second (the seed's
//! FSE runs' rule). The bottlenecks are congested by construction (backlogged bulk
//! flows through drop-tail); the run checks it (every used path dropped packets and
//! was at least 90 % busy) and says so if not.
//!
//! The twin: the same flows, rates, queues and delays in brisk-sim (one sender host,
//! four receivers, one link per path), the same detector settings and seed.
//!
//! Judged: every decision of the detector after [`JUDGE_FROM_S`] (N·T = 17.5 s for
//! full statistics, plus 2.5 s); a decision is correct when every flow is grouped
//! and each of the six pairs is together exactly when the flows share a path (the
//! sbd experiment's rule for SBD-2). Raw decisions, not the stability filter's
//! coupled groups (which are reported beside).
//!
//! Tolerances, written before the first run: REAL-SBD-1 and 2 at SBD-2's bar
//! (≥ 90 % of the judged decisions correct); REAL-SBD-3 the real accuracy within
//! 0.15 of the twin's; REAL-SBD-4 the plumbing (decisions every T within 10 %,
//! ≥ 90 % of them seen by the watcher, every flow tracked, streams intact, every
//! used path congested). Quick mode runs only the two-path arm for 15 s, less than
//! the detector's N·T: rows 1–3 are then not applicable by design (say so), row 4
//! is judged.

use super::real_fidelity::{distortion, inconclusive};
use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{Chart, Series, Style, BLUE, GREY, ORANGE, RED};

use super::sbd::{endpoint, ip, link_node};
use super::sbd_fse::add_flow;
use brisk_emu::realrun::twopath::{run_two_path_with, TwoPathOptions, TwoPathRun};
use brisk_emu::realrun::{FlowStack, LinuxKnobs, RealApp, RealFlow, RealResult, RealRun};
use brisk_emu::tools::multipath::MultiPathConfig;
use brisk_emu::EmuError;
use brisk_sim::engine::{Engine, NodeId};
use brisk_sim::host::Host;
use brisk_sim::node::SimNode;
use brisk_tcp::cc::sbd::{FeedConfig, SbdConfig, SbdHostConfig};
use brisk_tcp::Config;
use brisk_time::{Duration, Instant};

pub const ID: &str = "real-sbd";
pub const TITLE: &str =
    "Real packets: shared-bottleneck detection (RFC 8382) over the lab's two emulated bottlenecks, with the simulator (issue 33 §4)";
pub const CLAIMS: &[&str] = &["REAL-SBD-1", "REAL-SBD-2", "REAL-SBD-3", "REAL-SBD-4"];

const FLOWS: usize = 4;
/// Path rates, bit/s: A (path 0) and B (path 1).
const RATES: [u64; 2] = [10_000_000, 6_000_000];
const RTT_MS: u64 = 100;
/// Packets a path's MTU-sized packets fill.
const PACKET: u64 = 1500;
/// Decisions from here on are judged: N·T = 17.5 s plus 2.5 s.
pub const JUDGE_FROM_S: f64 = 20.0;
/// The draft's T.
const T_S: f64 = 0.35;
const SEED: u64 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arm {
    Two,
    One,
}

impl Arm {
    fn name(self) -> &'static str {
        match self {
            Arm::Two => "two bottlenecks",
            Arm::One => "one bottleneck",
        }
    }
    /// Flow i's path.
    fn paths(self) -> [usize; FLOWS] {
        match self {
            Arm::Two => [0, 0, 1, 1],
            Arm::One => [0; FLOWS],
        }
    }
    fn used_paths(self) -> usize {
        match self {
            Arm::Two => 2,
            Arm::One => 1,
        }
    }
}

/// One BDP of 1500-byte packets at `rate`.
fn queue_packets(rate: u64) -> u64 {
    rate * RTT_MS / 1000 / 8 / PACKET
}

/// The detector's settings in both worlds.
fn sbd_config() -> SbdHostConfig {
    SbdHostConfig {
        sbd: SbdConfig::improved(),
        feed: FeedConfig {
            skew_correction: false,
            ..FeedConfig::default()
        },
        ..SbdHostConfig::default()
    }
}

/// Why this host cannot run the experiment (root, `/dev/net/tun`, iproute2).
pub fn unsupported() -> Option<String> {
    brisk_emu::netns::unsupported_reason()
}

fn secs(quick: bool) -> u64 {
    if quick {
        15
    } else {
        60
    }
}

fn arms(quick: bool) -> Vec<Arm> {
    if quick {
        vec![Arm::Two]
    } else {
        vec![Arm::Two, Arm::One]
    }
}

/// The estimates of one flow in one decision: skew_est, var_est (ms), freq_est, loss.
type Est = [f64; 4];

/// One decision, from either world.
#[derive(Clone, Debug, Default)]
struct Decision {
    t_s: f64,
    groups: [Option<u32>; FLOWS],
    coupled: [Option<u32>; FLOWS],
    est: [Est; FLOWS],
    tracked: usize,
}

/// What one run gave.
#[derive(Clone, Debug, Default)]
struct Out {
    decisions: Vec<Decision>,
    /// Decisions the detector made in all, and those the watcher did not see.
    total: u64,
    missed: u64,
    intact: bool,
    /// Per used path: queue drops and utilisation.
    drops: Vec<u64>,
    util: Vec<f64>,
    distorted: Option<String>,
    samples: u64,
}

/// Whether decision `g` is the truth of `arm` (module docs).
fn correct(arm: Arm, g: &[Option<u32>; FLOWS]) -> bool {
    let p = arm.paths();
    g.iter().all(Option::is_some)
        && (0..FLOWS).all(|i| ((i + 1)..FLOWS).all(|j| (g[i] == g[j]) == (p[i] == p[j])))
}

/// Pairs of the six decided right.
fn pairs_right(arm: Arm, g: &[Option<u32>; FLOWS]) -> usize {
    let p = arm.paths();
    let mut n = 0;
    for i in 0..FLOWS {
        for j in (i + 1)..FLOWS {
            let together = g[i].is_some() && g[i] == g[j];
            n += usize::from(together == (p[i] == p[j]));
        }
    }
    n
}

/// What the judged decisions of one run say.
#[derive(Clone, Debug, Default)]
struct Judged {
    n: usize,
    correct: usize,
    coupled_correct: usize,
    /// Per flow: judged decisions in which it was grouped.
    grouped: [usize; FLOWS],
    /// Judged decisions with {1,2} together and with {3,4} together.
    together_12: usize,
    together_34: usize,
    /// Judged decisions that put two flows of different paths in one group.
    merged_across: usize,
    /// Mean estimates per flow over the judged decisions.
    est: [Est; FLOWS],
}

impl Judged {
    fn of(arm: Arm, o: &Out) -> Judged {
        let mut j = Judged::default();
        for d in o.decisions.iter().filter(|d| d.t_s >= JUDGE_FROM_S) {
            j.n += 1;
            j.correct += usize::from(correct(arm, &d.groups));
            j.coupled_correct += usize::from(correct(arm, &d.coupled));
            for i in 0..FLOWS {
                j.grouped[i] += usize::from(d.groups[i].is_some());
                for k in 0..4 {
                    j.est[i][k] += d.est[i][k];
                }
            }
            j.together_12 += usize::from(d.groups[0].is_some() && d.groups[0] == d.groups[1]);
            j.together_34 += usize::from(d.groups[2].is_some() && d.groups[2] == d.groups[3]);
            let p = arm.paths();
            j.merged_across += usize::from((0..FLOWS).any(|a| {
                ((a + 1)..FLOWS)
                    .any(|b| p[a] != p[b] && d.groups[a].is_some() && d.groups[a] == d.groups[b])
            }));
        }
        let n = j.n.max(1) as f64;
        for e in &mut j.est {
            for v in e.iter_mut() {
                *v /= n;
            }
        }
        j
    }
    fn accuracy(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.correct as f64 / self.n as f64
        }
    }
    fn share(&self, x: usize) -> f64 {
        x as f64 / self.n.max(1) as f64
    }
}

/// The real run of `arm`.
fn run_real(arm: Arm, secs: u64) -> Result<Out, String> {
    let mut toml = String::new();
    for (k, rate) in RATES.iter().enumerate().take(arm.used_paths()) {
        toml.push_str(&format!(
            "[[path]]\nrtt = \"{RTT_MS}ms\"\nbottleneck = {{ rate = \"{rate}bps\", queue = {{ kind = \"droptail\", packets = {} }} }}\nseed = {}\n",
            queue_packets(*rate),
            k + 1
        ));
    }
    let paths = MultiPathConfig::from_toml(&toml).map_err(|e| format!("paths: {e}"))?;
    let starts = super::fse::starts(SEED, FLOWS);
    let flows = (0..FLOWS)
        .map(|i| RealFlow {
            stack: FlowStack::Brisk,
            cc: "cubic".into(),
            tcp: Config::default(),
            linux: LinuxKnobs::default(),
            start: Duration::from_millis(starts[i]),
            rtt: Duration::from_millis(RTT_MS),
            app: RealApp::Bulk { bytes: None },
        })
        .collect();
    let run = RealRun {
        name: format!("{ID}-{}", if arm == Arm::Two { "two" } else { "one" }),
        seed: SEED,
        duration: Duration::from_secs(secs),
        path: brisk_emu::emu::path::EmuConfig::default(),
        flows,
        sample_interval: Duration::from_millis(100),
        pcap_dir: None,
        link_log_dir: None,
    };
    let tp = TwoPathRun { run, paths };
    let opts = TwoPathOptions {
        flow_paths: arm.paths().to_vec(),
        sbd: Some(sbd_config()),
    };
    let res = match run_two_path_with(&tp, &opts) {
        Ok(r) => r,
        Err(EmuError::Unsupported(why)) => return Err(format!("n/a: {why}")),
        Err(e) => return Err(e.to_string()),
    };
    Ok(of_real(&res, secs))
}

fn of_real(r: &RealResult, secs: u64) -> Out {
    let mut o = Out {
        intact: r.flows.iter().all(|f| f.stream_ok && f.error.is_none()),
        distorted: distortion(r),
        ..Out::default()
    };
    for p in &r.paths {
        o.drops.push(p.dropped_queue);
        // Delivered bytes include the drain after the end: cap at 1.
        let cap = p.rate_bps.unwrap_or(0) as f64 * secs as f64 / 8.0;
        o.util.push(if cap > 0.0 {
            (p.forward_bytes as f64 / cap).min(1.0)
        } else {
            f64::NAN
        });
    }
    if let Some(s) = &r.sbd {
        o.total = s.total;
        o.missed = s.missed;
        o.samples = s.samples;
        for d in &s.decisions {
            let mut x = Decision {
                t_s: d.at_ns as f64 / 1e9,
                ..Decision::default()
            };
            for (i, f) in d.flows.iter().enumerate().take(FLOWS) {
                x.groups[i] = f.group;
                x.coupled[i] = f.coupled;
                x.est[i] = [f.skew_est, f.var_est_ms, f.freq_est, f.pkt_loss];
                x.tracked += usize::from(f.tracked);
            }
            o.decisions.push(x);
        }
    }
    o
}

/// The simulator's twin of `arm` (module docs).
#[allow(clippy::needless_range_loop)]
fn run_sim(arm: Arm, secs: u64) -> Result<Out, String> {
    let mut e: Engine<SimNode> = Engine::new();
    let s_ip = ip(0, 1);
    let r_ip = |i: usize| ip(0, 10 + i as u8);
    let mut sender = Host::new(s_ip, endpoint(s_ip, SEED, 0));
    sender
        .ep
        .enable_sbd(sbd_config())
        .map_err(|e| e.to_string())?;
    let mut receivers: Vec<Host> = (0..FLOWS)
        .map(|i| Host::new(r_ip(i), endpoint(r_ip(i), SEED, 0)))
        .collect();
    let starts = super::fse::starts(SEED, FLOWS);
    for (i, r) in receivers.iter_mut().enumerate() {
        let start = Instant::ZERO + Duration::from_millis(starts[i]);
        add_flow(
            &mut sender,
            r,
            r_ip(i),
            i as u32,
            Config::default(),
            start,
            SEED,
        )?;
    }
    let s = e.add_node(SimNode::Host(Box::new(sender)));
    let r: Vec<NodeId> = receivers
        .into_iter()
        .map(|h| e.add_node(SimNode::Host(Box::new(h))))
        .collect();
    // Bottleneck one way 49 ms, access 1 ms, ACK path 50 ms: RTT 100 ms, as the lab's
    // even split.
    let links: Vec<NodeId> = (0..arm.used_paths())
        .map(|k| link_node(&mut e, RATES[k], 49, queue_packets(RATES[k]) as usize))
        .collect();
    let access = link_node(&mut e, 0, 1, 1 << 20);
    let rev = link_node(&mut e, 0, RTT_MS / 2, 1 << 20);
    let paths = arm.paths();
    for i in 0..FLOWS {
        e.routes_mut(s).add(r_ip(i), links[paths[i]]);
        e.routes_mut(links[paths[i]]).add(r_ip(i), access);
        e.routes_mut(access).add(r_ip(i), r[i]);
        e.routes_mut(r[i]).set_default(rev);
    }
    e.routes_mut(rev).add(s_ip, s);
    let mut o = Out {
        intact: true,
        ..Out::default()
    };
    let mut seen = 0;
    let mut t_ms = 0;
    while t_ms < secs * 1000 {
        t_ms += 10;
        e.run_until(Instant::ZERO + Duration::from_millis(t_ms), &mut ());
        let Some(hc) = e.node(s).as_host().map(|h| h.ep.host_cc()) else {
            continue;
        };
        let Some(sbd) = hc.sbd() else { continue };
        if sbd.decisions() == seen {
            continue;
        }
        o.missed += sbd.decisions() - seen - 1;
        seen = sbd.decisions();
        let mut d = Decision {
            t_s: t_ms as f64 / 1000.0,
            ..Decision::default()
        };
        for (f, g) in sbd.groups() {
            let Some((_, remote)) = hc.path(f) else {
                continue;
            };
            if let Some(i) = (0..FLOWS).find(|&i| r_ip(i) == remote.ip()) {
                d.groups[i] = g;
                d.coupled[i] = sbd.coupled_group_of(f);
                if let Some(x) = sbd.stats(f).map(|st| st.estimates()) {
                    d.est[i] = [x.skew_est, x.var_est / 1000.0, x.freq_est, x.pkt_loss];
                }
                d.tracked += 1;
            }
        }
        o.decisions.push(d);
        o.total = seen;
        o.samples = sbd.samples;
    }
    let dt = secs as f64 * 1e9;
    for &l in &links {
        let (drops, busy) = e.node(l).as_link().map_or((0, 0), |l| {
            let c = l.link.counters();
            (c.dropped_total().packets, c.busy_ns)
        });
        o.drops.push(drops);
        o.util.push(busy as f64 / dt);
    }
    Ok(o)
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    Ok(Plan {
        jobs: Vec::new(),
        analyse: Box::new(move |_| {
            let d = secs(quick);
            let t0 = std::time::Instant::now();
            let mut runs = Vec::new();
            for arm in arms(quick) {
                let sim = run_sim(arm, d);
                crate::runner::status(&format!("{ID} (real time): {}", arm.name()));
                let real = run_real(arm, d);
                runs.push((arm, real, sim));
            }
            let mut r = analyse(quick, d, &runs);
            r.notes.push(format!(
                "Real runs and their twins took {:.0} s of wall time on this host.",
                t0.elapsed().as_secs_f64()
            ));
            r
        }),
    })
}

type ArmRuns = (Arm, Result<Out, String>, Result<Out, String>);

fn analyse(quick: bool, secs: u64, runs: &[ArmRuns]) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    r.notes.push(format!(
        "Set-up (module doc of crates/brisk-repro/src/exp/real_sbd.rs): brisk's stack sends four bulk CUBIC flows through the two-path lab to Linux receivers; two-bottleneck arm: flows 1, 2 on path A ({} Mbit/s), flows 3, 4 on path B ({} Mbit/s); one-bottleneck arm (full mode only): all four on A. RTT {RTT_MS} ms, drop-tail of one BDP (A {} and B {} packets of 1500 B). The detector: the sender's, SbdConfig::improved(), clock-skew correction off (one machine's clock at both ends). {secs} s per run; decisions from {JUDGE_FROM_S} s on are judged. The twin: the same in brisk-sim.",
        RATES[0] / 1_000_000,
        RATES[1] / 1_000_000,
        queue_packets(RATES[0]),
        queue_packets(RATES[1]),
    ));
    let find = |a: Arm| runs.iter().find(|x| x.0 == a);
    // A real failure (not "n/a") fails every row; n/a makes them all n/a.
    for (arm, real, sim) in runs {
        for (world, res) in [("real", real), ("simulated", sim)] {
            if let Err(e) = res {
                let why = e.strip_prefix("n/a: ").unwrap_or(e);
                for id in CLAIMS {
                    let c = Claim::new(id, &format!("{} run, {}", world, arm.name()));
                    r.claims.push(if e.starts_with("n/a: ") {
                        c.ours_text("not run").not_applicable(why.to_string())
                    } else {
                        c.ours_text("run failed").check(false).note(e.clone())
                    });
                }
                return r;
            }
        }
    }
    let ok = |x: &Result<Out, String>| x.as_ref().ok().cloned().unwrap_or_default();
    let mut plumbing_ok = true;
    // Only the timing parts failed, in a run the emulator calls distorted.
    let mut timing_only = true;
    let mut first_distortion: Option<String> = None;
    let mut plumbing = Vec::new();
    for (arm, real, sim) in runs {
        let (ro, so) = (ok(real), ok(sim));
        for (world, o) in [("real", &ro), ("sim", &so)] {
            let j = Judged::of(*arm, o);
            r.notes.push(format!(
                "{} ({world}): {} decisions ({} missed by the watcher), {} OWD samples; judged {}: {} correct ({:.1} %), coupled groups correct {:.1} %; {{1,2}} together {:.1} %, {{3,4}} together {:.1} %, flows of different paths merged in {:.1} %; grouped per flow {:.0}/{:.0}/{:.0}/{:.0} %; mean (skew, var ms, freq, loss) per flow {}; per path drops {:?}, utilisation {:?}; streams intact {}.{}",
                arm.name(), o.total, o.missed, o.samples, j.n, j.correct, 100.0 * j.accuracy(),
                100.0 * j.share(j.coupled_correct), 100.0 * j.share(j.together_12), 100.0 * j.share(j.together_34), 100.0 * j.share(j.merged_across),
                100.0 * j.share(j.grouped[0]), 100.0 * j.share(j.grouped[1]), 100.0 * j.share(j.grouped[2]), 100.0 * j.share(j.grouped[3]),
                j.est.iter().map(|e| format!("({:+.3}, {:.1}, {:.2}, {:.3})", e[0], e[1], e[2], e[3])).collect::<Vec<_>>().join(" "),
                o.drops, o.util.iter().map(|u| format!("{u:.3}")).collect::<Vec<_>>(), o.intact,
                o.distorted.as_ref().map_or(String::new(), |d| format!(" Emulator: {d}")),
            ));
            // Decisions every T from the first flow's second interval on.
            let expected = (secs as f64 / T_S - 3.0).max(1.0);
            let cadence = (o.total as f64 / expected - 1.0).abs() <= 0.10;
            let seen_ok = o.total > 0 && (o.missed as f64) <= 0.10 * o.total as f64;
            let tracked = o.decisions.last().is_some_and(|d| d.tracked == FLOWS);
            let congested = o.drops.len() == arm.used_paths()
                && o.drops.iter().all(|&d| d > 0)
                && o.util.iter().all(|&u| u >= 0.9);
            let good = cadence && seen_ok && tracked && o.intact && congested;
            plumbing_ok &= good;
            if !good {
                timing_only &= tracked && o.intact && congested && o.distorted.is_some();
            }
            if first_distortion.is_none() {
                first_distortion = o.distorted.clone();
            }
            plumbing.push(format!(
                "{} {world}: {} decisions (≈ {expected:.0} expected), {} missed, all four tracked {tracked}, intact {}, congested paths {congested}",
                arm.name(), o.total, o.missed, o.intact
            ));
        }
    }
    let c4 = Claim::new(
        "REAL-SBD-4",
        "real packets: the detector runs in brisk's stack and reports its groups per decision",
    )
    .paper_text("(ours) decisions every T = 350 ms, every flow tracked, the bottlenecks congested")
    .ours_text(if plumbing_ok { "as expected" } else { "not as expected" })
    .tolerance("decision count within 10 % of run/T, ≥ 90 % seen, 4 tracked, streams intact, each used path dropping and ≥ 90 % busy, in both worlds");
    // Decisions close on the ACK clock and the watcher polls in real time: a host
    // that did not keep real time can miss them without a fault of the detector.
    r.claims
        .push(match (&first_distortion, plumbing_ok || !timing_only) {
            (Some(d), false) => inconclusive(c4, 1, runs.len(), d, &plumbing.join("; ")),
            _ => c4.check(plumbing_ok).note(plumbing.join("; ")),
        });
    let short = format!(
        "quick mode: {secs} s of real time is less than the detector's N·T = 17.5 s plus the settling time, so no decision is judged; by design. Run `brisk repro real-sbd` (60 s per arm)"
    );
    let accuracy_claim = |id: &str, what: &str, arm: Arm| -> Claim {
        let c = Claim::new(id, what)
            .paper_text("SBD-2's bar: ≥ 90 % of decisions correct")
            .unit("fraction of judged decisions")
            .tolerance("≥ 0.90");
        let Some((_, real, sim)) = find(arm) else {
            return c.ours_text("not run").not_applicable(short.clone());
        };
        let (ro, so) = (ok(real), ok(sim));
        let (jr, js) = (Judged::of(arm, &ro), Judged::of(arm, &so));
        if jr.n == 0 {
            return c
                .ours_text("no judged decision")
                .not_applicable(short.clone());
        }
        let acc = jr.accuracy();
        let measured = format!(
            "real {:.3} of {} decisions; simulated twin {:.3} of {}",
            acc,
            jr.n,
            js.accuracy(),
            js.n
        );
        let c = c.ours(acc);
        match &ro.distorted {
            Some(d) => inconclusive(c, 1, 1, d, &measured),
            None => c.check(acc >= 0.9).note(measured),
        }
    };
    r.claims.push(accuracy_claim(
        "REAL-SBD-1",
        "real packets, two bottlenecks: decisions grouping {1,2} and {3,4} apart",
        Arm::Two,
    ));
    r.claims.push(accuracy_claim(
        "REAL-SBD-2",
        "real packets, one bottleneck (control): decisions grouping all four together",
        Arm::One,
    ));
    {
        let c = Claim::new(
            "REAL-SBD-3",
            "two bottlenecks: grouping accuracy, real − simulated twin",
        )
        .paper_text("(ours) the simulator predicts what SBD does on real packets")
        .unit("fraction")
        .tolerance("|real − simulated| ≤ 0.15");
        r.claims.push(match find(Arm::Two) {
            Some((_, real, sim)) => {
                let (ro, so) = (ok(real), ok(sim));
                let (jr, js) = (Judged::of(Arm::Two, &ro), Judged::of(Arm::Two, &so));
                if jr.n == 0 || js.n == 0 {
                    c.ours_text("no judged decision")
                        .not_applicable(short.clone())
                } else {
                    let dlt = jr.accuracy() - js.accuracy();
                    let measured =
                        format!("real {:.3}, simulated {:.3}", jr.accuracy(), js.accuracy());
                    let c = c.ours(dlt);
                    match &ro.distorted {
                        Some(d) => inconclusive(c, 1, 1, d, &measured),
                        None => c.check(dlt.abs() <= 0.15).note(measured),
                    }
                }
            }
            None => c.ours_text("not run").not_applicable(short.clone()),
        });
    }
    // Figure: pairs decided right per decision, real and simulated, per arm.
    let mut series = Vec::new();
    for (arm, real, sim) in runs {
        for (world, res, color, style) in [
            (
                "real",
                real,
                if *arm == Arm::Two { BLUE } else { RED },
                Style::Line,
            ),
            (
                "simulated",
                sim,
                if *arm == Arm::Two { ORANGE } else { GREY },
                Style::Dashed,
            ),
        ] {
            let o = ok(res);
            let pts: Vec<(f64, f64)> = o
                .decisions
                .iter()
                .map(|d| (d.t_s, pairs_right(*arm, &d.groups) as f64))
                .collect();
            series.push(Series::new(
                &format!("{world}, {}", arm.name()),
                color,
                style,
                pts,
            ));
        }
    }
    r.plots.push(Plot {
        figure: Figure::Chart(Chart {
            title: "SBD over real packets: pairs of flows decided right per decision (6 = all)"
                .into(),
            x_label: "time (s)".into(),
            y_label: "pairs right (of 6)".into(),
            y_range: Some((0.0, 6.2)),
            series,
            v_lines: vec![(JUDGE_FROM_S, "judged from here".into())],
            ..Chart::default()
        }),
        paper: "(ours) issue 33 §4: SBD on real packets; RFC 8382's grouping against the lab's two bottlenecks."
            .into(),
        ours: if quick {
            "Quick run: too short to judge (see the notes).".into()
        } else {
            "See REAL-SBD-1 to 3.".into()
        },
    });
    // Figure: skew_est per flow, real, two-bottleneck arm.
    if let Some((_, Ok(o), _)) = find(Arm::Two) {
        let colors = [BLUE, crate::svg::GREEN, ORANGE, RED];
        let series = (0..FLOWS)
            .map(|i| {
                Series::new(
                    &format!("flow {} (path {})", i + 1, if i < 2 { "A" } else { "B" }),
                    colors[i],
                    Style::Line,
                    o.decisions
                        .iter()
                        .filter(|d| d.est[i][0].is_finite())
                        .map(|d| (d.t_s, d.est[i][0]))
                        .collect(),
                )
            })
            .collect();
        r.plots.push(Plot {
            figure: Figure::Chart(Chart {
                title: "Real packets, two bottlenecks: each flow's skew_est per decision".into(),
                x_label: "time (s)".into(),
                y_label: "skew_est".into(),
                series,
                h_lines: vec![(-0.01, "c_s".into()), (0.3, "c_h".into())],
                ..Chart::default()
            }),
            paper: "RFC 8382 §3.2: a flow is congested when skew_est < c_s (or < c_h while it was); flows are told apart by skew in steps of p_s = 0.1.".into(),
            ours: "The estimates the grouping used (notes: means per flow).".into(),
        });
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truth_and_pairs() {
        let g = [Some(0), Some(0), Some(1), Some(1)];
        assert!(correct(Arm::Two, &g));
        assert!(!correct(Arm::One, &g));
        assert_eq!(pairs_right(Arm::Two, &g), 6);
        assert_eq!(pairs_right(Arm::One, &g), 2);
        let all = [Some(3); FLOWS];
        assert!(correct(Arm::One, &all));
        let missing = [Some(0), None, Some(1), Some(1)];
        assert!(!correct(Arm::Two, &missing));
        assert_eq!(queue_packets(RATES[0]), 83);
        assert_eq!(queue_packets(RATES[1]), 50);
    }

    /// The twin runs and its detector decides every T (a short run: no judgement).
    #[test]
    fn the_twin_decides_every_t() {
        let o = run_sim(Arm::Two, 5).unwrap();
        assert!(o.total >= 10, "{}", o.total);
        assert_eq!(o.decisions.last().unwrap().tracked, FLOWS);
    }
}
