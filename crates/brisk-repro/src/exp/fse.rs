//! fse: the Flow State Exchange (RITE D1.3 App. C.1–C.2; claims FSE-1, FSE-3, FSE-4a).
//!
//! - FSE-1: the passive FSE's worked example (draft -05 Appendix A.1), computed by
//!   brisk's FSE (`brisk_tcp::cc::fse`), against the rates the draft lists.
//! - FSE-3: the C.1 dumbbell (10 Mbit/s, RTT 100 ms, 1000-byte packets, 62-packet
//!   drop-tail, N backlogged flows starting at random in the first second). The
//!   seed's flows are rate-based (RAP, TFRC); here they are Reno TCP flows of one host,
//!   coupled by the conservative active FSE on their congestion windows
//!   (`[flow.tcp] fse`), half of them at priority 1 and half at 0.5, against the same
//!   flows uncoupled (docs/mechanisms/fse.md says why the TCP arm tests the claim).
//! - FSE-4a: the same dumbbell with LEDBAT flows (RFC 6817), coupled and not.

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Job, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{Chart, Style, BLUE, GREY, ORANGE, RED};
use brisk_sim::{RunResult, Scenario};
use brisk_tcp::cc::fse::{Algorithm, Fse};

pub const ID: &str = "fse";
pub const TITLE: &str =
    "The Flow State Exchange: the A.1 example and the C.1 dumbbell with coupled TCP flows (D1.3 App. C.1–C.2)";
pub const CLAIMS: &[&str] = &["FSE-1", "FSE-2", "FSE-3a", "FSE-3b", "FSE-3c", "FSE-4a"];

/// The four flavours of run, in job order per (N, seed).
const ARMS: [Arm; 4] = [Arm::RenoFse, Arm::Reno, Arm::LedbatFse, Arm::Ledbat];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arm {
    RenoFse,
    Reno,
    LedbatFse,
    Ledbat,
}

impl Arm {
    fn cc(self) -> &'static str {
        match self {
            Arm::RenoFse | Arm::Reno => "reno",
            Arm::LedbatFse | Arm::Ledbat => "ledbat",
        }
    }
    fn coupled(self) -> bool {
        matches!(self, Arm::RenoFse | Arm::LedbatFse)
    }
    fn name(self) -> &'static str {
        match self {
            Arm::RenoFse => "reno-fse",
            Arm::Reno => "reno",
            Arm::LedbatFse => "ledbat-fse",
            Arm::Ledbat => "ledbat",
        }
    }
}

/// Flow i's priority in the coupled arms: alternately 1 and 0.5.
fn priority(i: usize) -> f64 {
    if i.is_multiple_of(2) {
        1.0
    } else {
        0.5
    }
}

/// Start times uniform in the first second, drawn from the seed (SplitMix64).
pub(crate) fn starts(seed: u64, n: usize) -> Vec<u64> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ n as u64;
    (0..n)
        .map(|_| {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % 1000
        })
        .collect()
}

/// The C.1 dumbbell: the MSS gives 1000-byte IP packets (40 bytes of headers and 12 of
/// timestamps: 948 bytes of payload).
fn scenario(arm: Arm, n: usize, seed: u64, secs: u64) -> Result<Scenario, String> {
    let mut s = format!(
        "name = \"fse-{}-{n}\"\nduration = \"{secs}s\"\nsample_interval = \"500ms\"\n[bottleneck]\nrate = \"10Mbit\"\nqueue = {{ kind = \"droptail\", packets = 62 }}\n",
        arm.name()
    );
    for (i, start) in starts(seed, n).into_iter().enumerate() {
        s.push_str(&format!(
            "[[flow]]\ncc = \"{}\"\nrtt = \"100ms\"\nstart = \"{start}ms\"\napp = {{ kind = \"bulk\" }}\n[flow.tcp]\nmss = 960\n",
            arm.cc()
        ));
        if arm.coupled() {
            s.push_str(&format!(
                "fse = {{ group = \"c1\", priority = {} }}\n",
                priority(i)
            ));
        }
    }
    Scenario::from_toml_str_named(&s, "fse").map_err(|e| e.to_string())
}

struct Shape {
    /// Seeded FSE-2 sequences per algorithm (the design rows' 64 quick, 256 full).
    fse2_cases: usize,
    secs: u64,
    ns: Vec<usize>,
    seeds: Vec<u64>,
}

fn shape(quick: bool) -> Shape {
    if quick {
        Shape {
            fse2_cases: 64,
            secs: 30,
            ns: vec![2, 4],
            seeds: vec![1, 2],
        }
    } else {
        Shape {
            fse2_cases: 256,
            secs: 100,
            ns: vec![2, 4, 8, 16],
            seeds: (1..=10).collect(),
        }
    }
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let sh = shape(quick);
    let mut jobs = Vec::new();
    for &n in &sh.ns {
        for &seed in &sh.seeds {
            for arm in ARMS {
                let mut j = Job::new(
                    format!("fse {} n={n} seed {seed}", arm.name()),
                    scenario(arm, n, seed, sh.secs)?,
                    seed,
                );
                j.lean = false;
                jobs.push(j);
            }
        }
    }
    Ok(Plan {
        jobs,
        analyse: Box::new(move |runs| analyse(runs, &sh)),
    })
}

/// FSE-1: the A.1 trace by brisk's passive FSE; the largest difference from the
/// draft's listed rates (6, 3.33, 2, 9.33, 9.33), after rounding to 0.01.
pub fn fse1_trace() -> Result<(Vec<f64>, f64), String> {
    let e = |x: brisk_tcp::cc::fse::FseError| x.to_string();
    let inf = f64::INFINITY;
    let mut fse = Fse::new(Algorithm::Passive, 4).map_err(e)?;
    let f1 = fse.register(1.0, 1.0).map_err(e)?;
    for k in 2..=10 {
        fse.update_passive(f1, f64::from(k), inf).map_err(e)?;
    }
    let f2 = fse.register(0.5, 1.0).map_err(e)?;
    let mut rates = Vec::new();
    // The toy controller: +1 per update without congestion, −2 with, from the rate the
    // FSE assigned.
    let step = |fse: &Fse, f, d: f64| fse.rate(f).unwrap_or(0.0) + d;
    rates.push(
        fse.update_passive(f1, step(&fse, f1, -2.0), inf)
            .map_err(e)?
            .rate,
    );
    rates.push(
        fse.update_passive(f2, step(&fse, f2, 1.0), inf)
            .map_err(e)?
            .rate,
    );
    rates.push(
        fse.update_passive(f1, step(&fse, f1, 1.0), 2.0)
            .map_err(e)?
            .rate,
    );
    rates.push(
        fse.update_passive(f2, step(&fse, f2, 1.0), inf)
            .map_err(e)?
            .rate,
    );
    fse.leave(f1).map_err(e)?;
    rates.push(
        fse.update_passive(f2, step(&fse, f2, -2.0), inf)
            .map_err(e)?
            .rate,
    );
    let paper = [6.0, 3.33, 2.0, 9.33, 9.33];
    let r2 = |x: f64| (x * 100.0).round() / 100.0;
    let worst = rates
        .iter()
        .zip(paper)
        .map(|(a, b)| (r2(*a) - b).abs())
        .fold(0.0, f64::max);
    Ok((rates, worst))
}

fn queue_ms(r: &RunResult) -> f64 {
    r.bottleneck
        .queue_delay
        .as_ref()
        .map_or(f64::NAN, |q| q.mean / 1e6)
}

/// Jain's index of the flows' bytes, each divided by its priority.
fn jain_by_priority(r: &RunResult) -> f64 {
    let x: Vec<f64> = r
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| f.bytes_delivered as f64 / priority(i))
        .collect();
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if s2 > 0.0 {
        s * s / (x.len() as f64 * s2)
    } else {
        f64::NAN
    }
}

/// Jain's index of the bytes themselves (the uncoupled arms have no priorities).
fn jain(r: &RunResult) -> f64 {
    let x: Vec<f64> = r.flows.iter().map(|f| f.bytes_delivered as f64).collect();
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

fn mean(xs: &[f64]) -> f64 {
    crate::stats::mean(xs)
}

fn analyse(runs: &[RunResult], sh: &Shape) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    r.notes.push(format!(
        "Set-up (C.1): 10 Mbit/s, RTT 100 ms, MSS 960 (1000-byte packets), 62-packet drop-tail, N ∈ {:?} backlogged flows starting at random in the first second, {} s, {} seed(s). Coupled arms: one host, one FSE group (conservative active FSE on cwnd, the group growing as one flow), priorities alternately 1 and 0.5. Uncoupled arms: the same flows without the FSE. TCP Reno stands in for the seed's RAP/TFRC (docs/mechanisms/fse.md).",
        sh.ns,
        sh.secs,
        sh.seeds.len()
    ));
    // FSE-1.
    match fse1_trace() {
        Ok((rates, worst)) => r.claims.push(
            Claim::new("FSE-1", "passive FSE, A.1 example: largest rate difference")
                .paper_text("rates 6, 3.33, 2, 9.33, 9.33 Mbit/s")
                .ours(worst)
                .unit("Mbit/s")
                .tolerance("≤ 0.005 (exact to 0.01)")
                .check(worst <= 0.005)
                .note(format!(
                    "brisk's passive FSE gives {}.",
                    rates
                        .iter()
                        .map(|x| format!("{x:.2}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
        ),
        Err(e) => r.notes.push(format!("FSE-1 could not run: {e}")),
    }
    // FSE-2: the property test's check over seeded sequences.
    let fse2 = Claim::new(
        "FSE-2",
        "active and conservative-active FSE: invariants after every operation of scripted update sequences",
    )
    .paper_text("FSE_R(i) = P(i)·S_CR/ΣP; Σ FSE_R = S_CR; conservative: a decrease scales S_CR by CC_R/FSE_R(f) and freezes it for 2 RTTs of f; an increase adds DELTA")
    .tolerance("exact (to 1e-9 relative), every operation");
    let how = format!("Ran `brisk_tcp::cc::fse::checks::fse2` (the check of `cargo test --release -p brisk-tcp cc::fse::tests::fse2`) on {} seeded sequences per algorithm.", sh.fse2_cases);
    let cases = sh.fse2_cases;
    r.claims.push(
        match crate::exp::design::run_check(|| brisk_tcp::cc::fse::checks::fse2(cases)) {
            Ok(what) => fse2.ours_text(&what).check(true).note(how),
            Err(msg) => fse2
                .ours_text("check failed")
                .check(false)
                .note(format!("{how} It failed: {msg}")),
        },
    );
    // Runs in plan order: per N, per seed, ARMS.
    let per = ARMS.len();
    let cell = |ni: usize, si: usize, arm: usize| runs.get((ni * sh.seeds.len() + si) * per + arm);
    let arm_ix = |a: Arm| ARMS.iter().position(|x| *x == a).unwrap_or(0);
    let series = |a: Arm, f: &dyn Fn(&RunResult) -> f64| -> Vec<Vec<(f64, f64)>> {
        (0..sh.seeds.len())
            .map(|si| {
                sh.ns
                    .iter()
                    .enumerate()
                    .filter_map(|(ni, &n)| cell(ni, si, arm_ix(a)).map(|x| (n as f64, f(x))))
                    .collect()
            })
            .collect()
    };
    let mean_at = |a: Arm, ni: usize, f: &dyn Fn(&RunResult) -> f64| {
        mean(
            &(0..sh.seeds.len())
                .filter_map(|si| cell(ni, si, arm_ix(a)).map(f))
                .collect::<Vec<_>>(),
        )
    };
    // FSE-3a: mean queueing delay lower for every N.
    let mut lower_all = true;
    let mut per_seed_lower = 0;
    let mut total = 0;
    let mut rows = Vec::new();
    for (ni, &n) in sh.ns.iter().enumerate() {
        let (qf, qu) = (
            mean_at(Arm::RenoFse, ni, &queue_ms),
            mean_at(Arm::Reno, ni, &queue_ms),
        );
        lower_all &= qf < qu;
        for si in 0..sh.seeds.len() {
            if let (Some(a), Some(b)) = (
                cell(ni, si, arm_ix(Arm::RenoFse)),
                cell(ni, si, arm_ix(Arm::Reno)),
            ) {
                total += 1;
                per_seed_lower += usize::from(queue_ms(a) < queue_ms(b));
            }
        }
        let (uf, uu) = (
            mean_at(Arm::RenoFse, ni, &|x| x.bottleneck.utilization),
            mean_at(Arm::Reno, ni, &|x| x.bottleneck.utilization),
        );
        rows.push((n, qf, qu, uf, uu));
    }
    let ratio = mean(&rows.iter().map(|x| x.1 / x.2).collect::<Vec<_>>());
    r.claims.push(
        Claim::new("FSE-3a", "mean queueing delay, coupled / uncoupled (mean over N)")
            .paper_text("\"consistent reduction\" (values lost)")
            .ours(ratio)
            .unit("ratio")
            .tolerance("< 1 for every N")
            .check(lower_all)
            .note(format!(
                "Lower in {per_seed_lower} of {total} (N, seed) pairs. Per N (coupled vs uncoupled): {}.",
                rows.iter()
                    .map(|(n, qf, qu, _, _)| format!("N={n} {qf:.1} vs {qu:.1} ms"))
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
    );
    // FSE-3b: exact priority shares.
    let jains: Vec<f64> = (0..sh.ns.len())
        .flat_map(|ni| (0..sh.seeds.len()).map(move |si| (ni, si)))
        .filter_map(|(ni, si)| cell(ni, si, arm_ix(Arm::RenoFse)).map(jain_by_priority))
        .collect();
    let worst_jain = jains.iter().copied().fold(f64::INFINITY, f64::min);
    let unc_jain = mean(
        &(0..sh.ns.len())
            .flat_map(|ni| (0..sh.seeds.len()).map(move |si| (ni, si)))
            .filter_map(|(ni, si)| cell(ni, si, arm_ix(Arm::Reno)).map(jain))
            .collect::<Vec<_>>(),
    );
    r.claims.push(
        Claim::new(
            "FSE-3b",
            "priority shares: Jain's index of bytes/priority, worst run",
        )
        .paper_text("\"precise fairness\"")
        .ours(worst_jain)
        .unit("index")
        .tolerance("≥ 0.99")
        .check(worst_jain >= 0.99)
        .note(format!(
            "Bytes over the whole run, start-up included. Uncoupled flows (equal, no priorities) reach a mean Jain's index of {unc_jain:.3}."
        )),
    );
    // FSE-3c: utilisation not above uncoupled.
    let above: Vec<String> = rows
        .iter()
        .filter(|(_, _, _, uf, uu)| uf > &(uu + 0.002))
        .map(|(n, _, _, uf, uu)| format!("N={n}: {uf:.3} > {uu:.3}"))
        .collect();
    let udiff = mean(&rows.iter().map(|x| x.3 - x.4).collect::<Vec<_>>());
    r.claims.push(
        Claim::new("FSE-3c", "utilisation coupled − uncoupled (mean over N)")
            .paper_text("≤ uncoupled")
            .ours(udiff)
            .unit("fraction")
            .tolerance("≤ 0 (+0.002) for every N")
            .check(above.is_empty())
            .note(format!(
                "Per N (coupled vs uncoupled): {}.{}",
                rows.iter()
                    .map(|(n, _, _, uf, uu)| format!("N={n} {uf:.3} vs {uu:.3}"))
                    .collect::<Vec<_>>()
                    .join("; "),
                if above.is_empty() {
                    String::new()
                } else {
                    format!(" Above: {}.", above.join(", "))
                }
            )),
    );
    // FSE-4a: LEDBAT with the FSE: lower queue, utilisation not much lower.
    let mut l_rows = Vec::new();
    for (ni, &n) in sh.ns.iter().enumerate() {
        l_rows.push((
            n,
            mean_at(Arm::LedbatFse, ni, &queue_ms),
            mean_at(Arm::Ledbat, ni, &queue_ms),
            mean_at(Arm::LedbatFse, ni, &|x| x.bottleneck.utilization),
            mean_at(Arm::Ledbat, ni, &|x| x.bottleneck.utilization),
        ));
    }
    let l_ok = l_rows
        .iter()
        .all(|(_, qf, qu, uf, uu)| qf < qu && *uf >= uu - 0.05);
    let l_ratio = mean(&l_rows.iter().map(|x| x.1 / x.2).collect::<Vec<_>>());
    r.claims.push(
        Claim::new("FSE-4a", "LEDBAT: mean queueing delay coupled / uncoupled")
            .paper_text("lower queue, \"without significantly affecting throughput\"")
            .ours(l_ratio)
            .unit("ratio")
            .tolerance("< 1 and utilisation within 5 pp, every N (direction)")
            .check(l_ok)
            .note(format!(
                "Per N (coupled vs uncoupled): {}.",
                l_rows
                    .iter()
                    .map(|(n, qf, qu, uf, uu)| format!(
                        "N={n} queue {qf:.1} vs {qu:.1} ms, utilisation {uf:.3} vs {uu:.3}"
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
    );
    // Figures: queue and utilisation against N, with seed bands.
    let seeds_caption = crate::bands::caption(sh.seeds.len());
    let with_band = |name: &str, color: &'static str, style: Style, runs: Vec<Vec<(f64, f64)>>| {
        super::over_seeds(name, color, style, runs)
    };
    let util = |x: &RunResult| x.bottleneck.utilization;
    r.plots.push(Plot {
        figure: Figure::Chart(Chart {
            title: "Mean queueing delay at the bottleneck".into(),
            x_label: "flows N".into(),
            y_label: "mean queueing delay (ms)".into(),
            series: vec![
                with_band("Reno + FSE", BLUE, Style::Line, series(Arm::RenoFse, &queue_ms)),
                with_band("Reno uncoupled", RED, Style::Dashed, series(Arm::Reno, &queue_ms)),
                with_band("LEDBAT + FSE", ORANGE, Style::Line, series(Arm::LedbatFse, &queue_ms)),
                with_band("LEDBAT uncoupled", GREY, Style::Dashed, series(Arm::Ledbat, &queue_ms)),
            ],
            ..Chart::default()
        }),
        paper: "C.1 Figs 1–2 (values lost in extraction): the FSE gives a consistent reduction of the average queueing delay for RAP and TFRC; body Fig 4.1: the same for LEDBAT.".into(),
        ours: format!(
            "Reno: {}. {seeds_caption}",
            rows.iter()
                .map(|(n, qf, qu, _, _)| format!("N={n}: {qf:.1} ms coupled, {qu:.1} ms uncoupled"))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    });
    r.plots.push(Plot {
        figure: Figure::Chart(Chart {
            title: "Bottleneck utilisation".into(),
            x_label: "flows N".into(),
            y_label: "utilisation".into(),
            y_range: Some((0.5, 1.0)),
            series: vec![
                with_band("Reno + FSE", BLUE, Style::Line, series(Arm::RenoFse, &util)),
                with_band("Reno uncoupled", RED, Style::Dashed, series(Arm::Reno, &util)),
                with_band("LEDBAT + FSE", ORANGE, Style::Line, series(Arm::LedbatFse, &util)),
                with_band("LEDBAT uncoupled", GREY, Style::Dashed, series(Arm::Ledbat, &util)),
            ],
            ..Chart::default()
        }),
        paper: "C.1: utilisation with the FSE is at most that of uncoupled flows (FSE-RAP above a single RAP flow; FSE-TFRC at most 3 % below a single TFRC flow).".into(),
        ours: format!(
            "Reno: {}. {seeds_caption}",
            rows.iter()
                .map(|(n, _, _, uf, uu)| format!("N={n}: {uf:.3} coupled, {uu:.3} uncoupled"))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    });
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fse1_trace_matches_the_draft() {
        let (rates, worst) = fse1_trace().unwrap();
        assert_eq!(rates.len(), 5);
        assert!(worst <= 0.005, "{rates:?}");
    }

    #[test]
    fn starts_are_in_the_first_second_and_differ_by_seed() {
        let a = starts(1, 8);
        assert!(a.iter().all(|&s| s < 1000));
        assert_ne!(a, starts(2, 8));
        assert_eq!(a, starts(1, 8));
    }

    #[test]
    fn scenarios_build_with_the_fse_knob() {
        let sc = scenario(Arm::RenoFse, 4, 1, 10).unwrap();
        assert_eq!(sc.flows.len(), 4);
        let cfg = sc.flows[1].tcp.to_config(sc.flows[1].cc);
        assert_eq!(cfg.cc_name(), "reno+fse");
        assert_eq!(cfg.congestion.controller.fse.unwrap().priority, 0.5);
    }
}
