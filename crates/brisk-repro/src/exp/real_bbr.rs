//! real-bbr: brisk's BBR v1 (`cc/bbr`, Linux `tcp_bbr.c` as written) beside the host
//! kernel's `bbr` module over real packets, on the same emulated paths, one flow at a
//! time through brisk-emu (issue 35 §2, first bullet):
//!
//! - **bufferbloated drop-tail**: 10 Mbit/s, RTT 40 ms, 1000-packet drop-tail (24 BDPs);
//! - **shallow and lossy**: 10 Mbit/s, RTT 40 ms, 20-packet drop-tail (0.6 BDP), 1 %
//!   Bernoulli loss;
//! - **LTE-like**: the generator behind `traces/lte-like.down` (1–40 Mbit/s random walk
//!   with bursty opportunities and short outages; the run's seed picks the walk), RTT
//!   40 ms, 1000-packet drop-tail.
//!
//! Linux's controller is set on the socket (`TCP_CONGESTION`, never the namespace's
//! default). Each seed runs Linux then brisk, so a load change on the host falls on
//! both. Measured per run: goodput over the run, the mean of srtt sampled every 100 ms
//! (`tcpi_rtt` for Linux, brisk's srtt: the one RTT both stacks expose alike,
//! `realrun`), and the pacing rate's trajectory (`tcpi_pacing_rate`; brisk's BBR
//! diagnostics). Claim (ours, from the issue): brisk within 10 % of Linux on goodput
//! and on mean srtt, per path, over the seeds' means. Runs the emulator flags as not
//! keeping the model's timing are shown, not judged (`real_fidelity`).

use super::{over_seeds, real_fidelity};
use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{Chart, Style, BLUE, ORANGE};
use brisk_emu::path::EmuConfig;
use brisk_emu::realrun::{run_real, FlowStack, RealRun};
use brisk_emu::EmuError;
use brisk_time::Duration;
use std::fmt::Write;

pub const ID: &str = "real-bbr";
pub const TITLE: &str =
    "Real packets: brisk's BBR v1 beside Linux's bbr on a bloated, a shallow lossy and an LTE-like path";
pub const CLAIMS: &[&str] = &[
    "REAL-BBR-1a",
    "REAL-BBR-1b",
    "REAL-BBR-1c",
    "REAL-BBR-2a",
    "REAL-BBR-2b",
    "REAL-BBR-2c",
];

/// Relative tolerance of both claims (the 10 %).
const TOL: f64 = 0.10;

/// The paths, in claim-letter order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PathKind {
    Bloat,
    Lossy,
    Lte,
}

const PATHS: [PathKind; 3] = [PathKind::Bloat, PathKind::Lossy, PathKind::Lte];

/// The stacks, in the order each seed runs them.
const STACKS: [(FlowStack, &str); 2] = [
    (FlowStack::Linux, "Linux bbr"),
    (FlowStack::Brisk, "brisk BBR"),
];

const RTT_MS: u64 = 40;

impl PathKind {
    fn label(self) -> &'static str {
        match self {
            PathKind::Bloat => "bufferbloated drop-tail (10 Mbit/s, 1000 packets)",
            PathKind::Lossy => "shallow drop-tail with 1 % loss (10 Mbit/s, 20 packets)",
            PathKind::Lte => "LTE-like trace (1-40 Mbit/s, 1000 packets)",
        }
    }

    fn short(self) -> &'static str {
        match self {
            PathKind::Bloat => "bloated",
            PathKind::Lossy => "shallow+loss",
            PathKind::Lte => "LTE-like",
        }
    }

    fn letter(self) -> char {
        match self {
            PathKind::Bloat => 'a',
            PathKind::Lossy => 'b',
            PathKind::Lte => 'c',
        }
    }

    /// The emulated path for `seed` (the seed drives the loss and the LTE walk).
    fn config(self, seed: u64) -> Result<EmuConfig, String> {
        let link = match self {
            PathKind::Bloat => {
                "rate = \"10Mbit\"\nqueue = { kind = \"droptail\", packets = 1000 }\n"
            }
            PathKind::Lossy => {
                "rate = \"10Mbit\"\nqueue = { kind = \"droptail\", packets = 20 }\n\
                 loss = { kind = \"bernoulli\", p = 0.01 }\n"
            }
            PathKind::Lte => "queue = { kind = \"droptail\", packets = 1000 }\n",
        };
        let text = format!("rtt = \"{RTT_MS}ms\"\nseed = {seed}\n[bottleneck]\n{link}");
        let mut cfg = EmuConfig::from_toml(&text).map_err(|e| format!("{ID}: {e}"))?;
        if self == PathKind::Lte {
            // `brisk trace lte-like --min 1Mbit --max 40Mbit --period 60s --seed SEED`.
            let trace =
                brisk_net::mahimahi::generate::lte_like(1_000_000, 40_000_000, 60_000, seed);
            cfg.bottleneck.trace = Some(brisk_scenario::link::TraceFile::loaded(
                format!("lte-like seed {seed}"),
                std::sync::Arc::new(trace),
            ));
        }
        Ok(cfg)
    }
}

/// Run length (s) and seeds.
fn shape(quick: bool) -> (u64, Vec<u64>) {
    if quick {
        (8, vec![1])
    } else {
        (20, vec![1, 2, 3])
    }
}

/// Why this host cannot run the experiment (root, `/dev/net/tun`, iproute2).
pub fn unsupported() -> Option<String> {
    brisk_emu::netns::unsupported_reason()
}

/// One real run's numbers.
#[derive(Clone, Debug, Default)]
struct RunNums {
    goodput_mbps: f64,
    srtt_mean_ms: f64,
    retrans: u64,
    /// (s, pacing rate Mbit/s).
    pacing: Vec<(f64, f64)>,
    /// (s, srtt ms).
    srtt: Vec<(f64, f64)>,
    /// The emulator's reason why the run did not keep the model's timing.
    distorted: Option<String>,
}

type Outcome = Result<RunNums, String>;

/// `runs[path][stack][seed]`.
type Runs = Vec<[Vec<Outcome>; 2]>;

pub fn plan(quick: bool) -> Result<Plan, String> {
    // Check every path builds before any real time is spent.
    for p in PATHS {
        p.config(1)?.build().map_err(|e| format!("{ID}: {e}"))?;
    }
    Ok(Plan {
        jobs: Vec::new(),
        analyse: Box::new(move |_| {
            let (secs, seeds) = shape(quick);
            let t0 = std::time::Instant::now();
            let runs = run_all(secs, &seeds);
            let mut r = analyse(secs, &seeds, &runs);
            r.notes.push(format!(
                "Real runs took {:.0} s of wall time on this host{}.",
                t0.elapsed().as_secs_f64(),
                std::fs::read_to_string("/proc/sys/kernel/osrelease")
                    .map_or(String::new(), |k| format!(" (Linux {})", k.trim()))
            ));
            r
        }),
    })
}

/// Sample times to 0.1-s bins, so that the seeds' series meet on equal x.
fn binned(series: &[(u64, u64)], scale: f64) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(series.len());
    for &(t, v) in series {
        let x = (t as f64 / 1e8).round() / 10.0;
        let y = v as f64 * scale;
        match out.last_mut() {
            Some(last) if last.0 == x => last.1 = y,
            _ => out.push((x, y)),
        }
    }
    out
}

fn run_all(secs: u64, seeds: &[u64]) -> Runs {
    let have = brisk_emu::bulk::available_congestion_controls();
    let mut lab_missing: Option<String> = None;
    let mut runs: Runs = Vec::new();
    for p in PATHS {
        let mut row: [Vec<Outcome>; 2] = [Vec::new(), Vec::new()];
        for &seed in seeds {
            for (k, (stack, label)) in STACKS.iter().enumerate() {
                let o = if let Some(why) = &lab_missing {
                    Err(why.clone())
                } else if *stack == FlowStack::Linux && !have.iter().any(|x| x == "bbr") {
                    Err("the kernel offers no bbr".to_string())
                } else {
                    crate::runner::status(&format!(
                        "{ID} (real time): {label}, {}, seed {seed}",
                        p.short()
                    ));
                    match one_run(p, seed, secs, *stack) {
                        Err(Err(why)) => {
                            lab_missing = Some(why.clone());
                            Err(why)
                        }
                        Err(Ok(e)) => Err(e),
                        Ok(n) => Ok(n),
                    }
                };
                row[k].push(o);
            }
        }
        runs.push(row);
    }
    runs
}

/// One flow over `p`: its numbers, or `Err(Ok(error))`, or `Err(Err(why))` when the
/// lab itself is missing.
fn one_run(
    p: PathKind,
    seed: u64,
    secs: u64,
    stack: FlowStack,
) -> Result<RunNums, Result<String, String>> {
    let path = p.config(seed).map_err(Ok)?;
    let mut run = RealRun::one_bulk_flow(
        format!("{ID} {} {} seed {seed}", stack.name(), p.short()),
        Duration::from_secs(secs),
        path,
        stack,
        "bbr",
        bbr_config(),
    )
    .map_err(|e| Ok(e.to_string()))?;
    run.seed = seed;
    let res = match run_real(&run) {
        Ok(res) => res,
        Err(EmuError::Unsupported(why)) => return Err(Err(why)),
        Err(e) => return Err(Ok(e.to_string())),
    };
    let f = res
        .flows
        .first()
        .ok_or_else(|| Ok("the run has no flow".to_string()))?;
    if let Some(e) = &f.error {
        return Err(Ok(e.clone()));
    }
    Ok(RunNums {
        goodput_mbps: f.goodput_bps / 1e6,
        srtt_mean_ms: f.srtt.map_or(f64::NAN, |s| s.mean / 1e6),
        retrans: f.retransmitted_packets,
        pacing: binned(&f.pacing_series, 8.0 / 1e6),
        srtt: binned(&f.srtt_series, 1e-6),
        distorted: real_fidelity::distortion(&res),
    })
}

/// brisk's settings with BBR. A brisk flow's controller is its `tcp` config's; the
/// `cc` name of a `RealFlow` only labels it (Linux flows use the name).
pub fn bbr_config() -> brisk_tcp::Config {
    let mut c = brisk_tcp::Config::default();
    c.congestion.controller = brisk_tcp::cc::CcAlgorithm::Bbr.into();
    c
}

fn mean(v: &[f64]) -> f64 {
    crate::stats::mean(v)
}

fn spread(v: &[f64]) -> (f64, f64) {
    (
        v.iter().copied().fold(f64::INFINITY, f64::min),
        v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

fn analyse(secs: u64, seeds: &[u64], runs: &Runs) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    r.reference = "Linux";
    r.notes.push(format!(
        "One bulk flow per run, {secs} s, base RTT {RTT_MS} ms, seeds {seeds:?}; Linux's bbr set on the socket (TCP_CONGESTION), brisk's `cc = \"bbr\"`. Mean srtt: srtt sampled every 100 ms (tcpi_rtt for Linux), both stacks."
    ));
    let mut table = String::from(
        "Per path: goodput Mbit/s and mean srtt ms, mean over clean runs [min-max over the seeds], retransmitted packets per run; (d) = the emulator flagged the run:",
    );
    let mut errors = Vec::new();
    for (pi, p) in PATHS.iter().enumerate() {
        let Some(row) = runs.get(pi) else { continue };
        let _ = write!(table, "\n{}:", p.label());
        // (goodput, srtt) means over each stack's clean runs.
        let mut means = [(f64::NAN, f64::NAN); 2];
        let mut clean = [0usize; 2];
        let mut distorted: Vec<String> = Vec::new();
        let mut failed = false;
        for (k, (_, label)) in STACKS.iter().enumerate() {
            let mut g = Vec::new();
            let mut d = Vec::new();
            let mut per_run = Vec::new();
            for o in &row[k] {
                match o {
                    Ok(n) => {
                        per_run.push(format!(
                            "{:.2}/{:.1}/{}{}",
                            n.goodput_mbps,
                            n.srtt_mean_ms,
                            n.retrans,
                            if n.distorted.is_some() { " (d)" } else { "" }
                        ));
                        if let Some(why) = &n.distorted {
                            distorted.push(format!("{label}: {why}"));
                        } else {
                            g.push(n.goodput_mbps);
                            d.push(n.srtt_mean_ms);
                        }
                    }
                    Err(e) => {
                        failed = true;
                        per_run.push("n/a".into());
                        errors.push(format!("{label}, {}: {e}", p.short()));
                    }
                }
            }
            clean[k] = g.len();
            means[k] = (mean(&g), mean(&d));
            let (glo, ghi) = spread(&g);
            let (dlo, dhi) = spread(&d);
            let _ = write!(
                table,
                "  {label} {:.2} [{glo:.2}-{ghi:.2}] / {:.1} [{dlo:.1}-{dhi:.1}] (runs {})",
                means[k].0,
                means[k].1,
                per_run.join(", ")
            );
        }
        let eg = (means[1].0 / means[0].0 - 1.0).abs();
        let ed = (means[1].1 / means[0].1 - 1.0).abs();
        let all = row[0].len() + row[1].len();
        for (num, what, e, unit_vals) in [
            ('1', "goodput", eg, (means[1].0, means[0].0, "Mbit/s")),
            ('2', "mean srtt", ed, (means[1].1, means[0].1, "ms")),
        ] {
            let id = format!("REAL-BBR-{num}{}", p.letter());
            let claim = Claim::new(
                &id,
                &format!(
                    "brisk BBR's {what} against Linux bbr's, {} (mean over seeds)",
                    p.label()
                ),
            )
            .paper_text("Linux")
            .unit("% off")
            .tolerance("≤ 10 %");
            let measured = format!(
                "brisk {:.2} against Linux {:.2} {}, {:.1} % off",
                unit_vals.0,
                unit_vals.1,
                unit_vals.2,
                e * 100.0
            );
            let c = if failed {
                claim.not_applicable(format!(
                    "real runs did not complete: {}",
                    errors.first().cloned().unwrap_or_default()
                ))
            } else if clean[0] == 0 || clean[1] == 0 {
                real_fidelity::inconclusive(
                    claim.ours(e * 100.0),
                    distorted.len(),
                    all,
                    distorted.first().map_or("", String::as_str),
                    &measured,
                )
            } else {
                let mut note = measured;
                if !distorted.is_empty() {
                    let _ = write!(
                        note,
                        "; {} of {all} runs not judged, the emulator flagged them (first: {})",
                        distorted.len(),
                        distorted[0]
                    );
                }
                claim.ours(e * 100.0).check(e <= TOL).note(note)
            };
            r.claims.push(c);
        }
        // Figures: the pacing rate's and srtt's trajectories, both stacks.
        for (title, ylabel, pick) in [
            ("pacing rate", "pacing rate (Mbit/s)", 0usize),
            ("srtt", "srtt (ms, sampled every 100 ms)", 1),
        ] {
            let mut series = Vec::new();
            for (k, (_, label)) in STACKS.iter().enumerate() {
                let lines: Vec<Vec<(f64, f64)>> = row[k]
                    .iter()
                    .filter_map(|o| o.as_ref().ok())
                    .map(|n| {
                        if pick == 0 {
                            n.pacing.clone()
                        } else {
                            n.srtt.clone()
                        }
                    })
                    .filter(|l| !l.is_empty())
                    .collect();
                if lines.is_empty() {
                    continue;
                }
                series.push(over_seeds(
                    label,
                    if k == 0 { BLUE } else { ORANGE },
                    Style::Line,
                    lines,
                ));
            }
            if series.is_empty() {
                continue;
            }
            let n = row[0].len().max(row[1].len());
            r.plots.push(Plot {
                figure: Figure::Chart(Chart {
                    title: format!("{}: {title}, Linux bbr and brisk BBR", p.short()),
                    x_label: "time (s)".into(),
                    y_label: ylabel.into(),
                    series,
                    ..Chart::default()
                }),
                paper: "No paper: the reference is Linux's tcp_bbr.c running in the host kernel on the same emulated path.".into(),
                ours: format!(
                    "One bulk flow per run, {secs} s. {}",
                    crate::bands::caption(n)
                ),
            });
        }
    }
    r.notes.push(table);
    if !errors.is_empty() {
        r.notes.push(format!("Not run: {}.", errors.join("; ")));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Verdict;

    #[test]
    fn paths_build_and_quick_is_small() {
        for p in PATHS {
            for seed in [1, 2] {
                p.config(seed).unwrap().build().unwrap();
            }
        }
        let (secs, seeds) = shape(true);
        assert!(secs * seeds.len() as u64 * 6 <= 60);
    }

    fn nums(g: f64, d: f64, bad: bool) -> Outcome {
        Ok(RunNums {
            goodput_mbps: g,
            srtt_mean_ms: d,
            pacing: vec![(0.1, g), (0.2, g)],
            srtt: vec![(0.1, d), (0.2, d)],
            distorted: bad.then(|| "late deliveries".to_string()),
            ..RunNums::default()
        })
    }

    #[test]
    fn verdicts_follow_the_per_path_gaps_and_skip_flagged_runs() {
        // Path a: 5 % / 5 % off (pass); b: goodput 20 % off (fail); c: brisk's only
        // run flagged (n/a, measured anyway).
        let runs: Runs = vec![
            [vec![nums(9.0, 50.0, false)], vec![nums(9.45, 52.5, false)]],
            [vec![nums(9.0, 45.0, false)], vec![nums(7.2, 45.0, false)]],
            [vec![nums(9.0, 45.0, false)], vec![nums(9.0, 45.0, true)]],
        ];
        let r = analyse(8, &[1], &runs);
        let v: Vec<(String, Verdict)> =
            r.claims.iter().map(|c| (c.id.clone(), c.verdict)).collect();
        let get = |id: &str| v.iter().find(|x| x.0 == id).unwrap().1;
        assert_eq!(get("REAL-BBR-1a"), Verdict::Pass);
        assert_eq!(get("REAL-BBR-2a"), Verdict::Pass);
        assert_eq!(get("REAL-BBR-1b"), Verdict::Fail);
        assert_eq!(get("REAL-BBR-2b"), Verdict::Pass);
        assert_eq!(get("REAL-BBR-1c"), Verdict::NotApplicable);
        assert_eq!(r.claims.len(), CLAIMS.len());
        for c in &r.claims {
            assert!(CLAIMS.contains(&c.id.as_str()), "{}", c.id);
        }
        // Two figures per path.
        assert_eq!(r.plots.len(), 6);
    }

    #[test]
    fn a_failed_run_makes_its_path_not_applicable() {
        let runs: Runs = vec![[vec![Err("boom".into())], vec![nums(9.0, 45.0, false)]]];
        let r = analyse(8, &[1], &runs);
        assert_eq!(r.claims[0].verdict, Verdict::NotApplicable);
        assert!(r.claims[0].note.contains("boom"), "{}", r.claims[0].note);
    }
}
