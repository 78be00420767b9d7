//! real-fse: two brisk flows coupled by the Flow State Exchange through brisk-emu's
//! emulated 10 Mbit/s, RTT 100 ms dumbbell, beside two Linux CUBIC flows on the same
//! bottleneck, with the simulator on the same scenario (issue 33 §4; our rows
//! REAL-FSE-1 to 5).
//!
//! Cells: the controller (CUBIC; Reno in full mode) and the seed (1 in quick mode;
//! CUBIC seeds 1–3 and Reno seeds 1–2 in full mode: the run's seed fixes brisk's ISNs
//! and RNG, the flows' starts are fixed, the kernel's timing is the real one). Rows 1–5
//! judge the CUBIC cells' mean, rows 6–7 the Reno cells and the controllers side by
//! side. Arms of each cell, each over real packets and in the simulator:
//! - **coupled**: brisk CUBIC flows of one host in one FSE group (conservative active
//!   FSE on cwnd, priorities 1 and 0.5), two Linux CUBIC flows (`cc` set explicitly:
//!   new namespaces default to bbr).
//! - **uncoupled**: the same without the FSE.
//!
//! The simulator runs only brisk's TCP (`brisk run` refuses `stack = "linux"`), so its
//! twin of each arm puts brisk CUBIC where Linux CUBIC is; everything else is the same
//! scenario text. Real runs happen in the analysis, one after the other, after the
//! pool (`Kind::RealTime`). Claims comparing timing with the model become
//! inconclusive when the emulator reports that it did not keep real time
//! (`real_fidelity`).

use super::real_fidelity::{distortion, inconclusive};
use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Job, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{Chart, Series, Style, BLUE, GREY, ORANGE, RED};
use brisk_emu::realrun::RealResult;
use brisk_emu::EmuError;
use brisk_sim::{RunResult, Scenario};

pub const ID: &str = "real-fse";
pub const TITLE: &str =
    "Real packets: two brisk flows coupled by the FSE beside two Linux CUBIC flows, with the simulator (issue 33 §4)";
pub const CLAIMS: &[&str] = &[
    "REAL-FSE-1",
    "REAL-FSE-2",
    "REAL-FSE-3a",
    "REAL-FSE-3b",
    "REAL-FSE-4",
    "REAL-FSE-5",
    "REAL-FSE-6",
    "REAL-FSE-7",
];

/// One cell of the experiment: the controller of all four flows and the seed.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cell {
    cc: &'static str,
    seed: u64,
}

fn cells(quick: bool) -> Vec<Cell> {
    if quick {
        vec![Cell {
            cc: "cubic",
            seed: 1,
        }]
    } else {
        let mut v: Vec<Cell> = (1..=3).map(|seed| Cell { cc: "cubic", seed }).collect();
        v.extend((1..=2).map(|seed| Cell { cc: "reno", seed }));
        v
    }
}

/// Drop-tail queue, packets: C.1's 62 (half a BDP of 1000-byte packets; 0.74 BDP of
/// the 1500-byte packets both stacks send here).
const QUEUE: usize = 62;
const RTT_MS: u64 = 100;
/// The FSE priorities of the two brisk flows.
const PRIO: [f64; 2] = [1.0, 0.5];

/// Why this host cannot run the experiment (root, `/dev/net/tun`, iproute2).
pub fn unsupported() -> Option<String> {
    brisk_emu::netns::unsupported_reason()
}

/// Run length, s: short in quick mode (two real runs ≈ 30 s of wall time).
fn secs(quick: bool) -> u64 {
    if quick {
        12
    } else {
        60
    }
}

/// Shares and delays are taken from this time on (slow start and CUBIC's first
/// epochs left out).
fn steady_from(secs: u64) -> f64 {
    secs as f64 / 3.0
}

/// The scenario text. `linux`: the last two flows are Linux CUBIC (real runs); else
/// brisk CUBIC (the simulator's twin).
pub fn scenario_toml(cc: &str, coupled: bool, linux: bool, secs: u64) -> String {
    let mut s = format!(
        "name = \"{ID}-{}\"\nduration = \"{secs}s\"\nsample_interval = \"100ms\"\n[bottleneck]\nrate = \"10Mbit\"\nqueue = {{ kind = \"droptail\", packets = {QUEUE} }}\n",
        if coupled { "coupled" } else { "uncoupled" }
    );
    for (i, p) in PRIO.iter().enumerate() {
        s.push_str(&format!(
            "[[flow]]\ncc = \"{cc}\"\nrtt = \"{RTT_MS}ms\"\nstart = \"{}ms\"\napp = {{ kind = \"bulk\" }}\n",
            i * 50
        ));
        if coupled {
            s.push_str(&format!(
                "[flow.tcp]\nfse = {{ group = \"brisk\", priority = {p} }}\n"
            ));
        }
    }
    for i in 0..2 {
        s.push_str(&format!(
            "[[flow]]\n{}cc = \"{cc}\"\nrtt = \"{RTT_MS}ms\"\nstart = \"{}ms\"\napp = {{ kind = \"bulk\" }}\n",
            if linux { "stack = \"linux\"\n" } else { "" },
            25 + i * 50
        ));
    }
    s
}

fn scenario(cc: &str, coupled: bool, linux: bool, secs: u64) -> Result<Scenario, String> {
    Scenario::from_toml_str_named(&scenario_toml(cc, coupled, linux, secs), ID)
        .map_err(|e| format!("{ID} scenario: {e}"))
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let d = secs(quick);
    let cells = cells(quick);
    let mut jobs = Vec::new();
    for c in &cells {
        for coupled in [true, false] {
            let sc = scenario(c.cc, coupled, false, d)?;
            let mut j = Job::new(
                format!(
                    "{ID} sim {} {} seed {}",
                    c.cc,
                    if coupled { "coupled" } else { "uncoupled" },
                    c.seed
                ),
                sc,
                c.seed,
            );
            j.lean = false;
            jobs.push(j);
        }
    }
    Ok(Plan {
        jobs,
        analyse: Box::new(move |runs| {
            let sim: Vec<Nums> = runs.iter().map(|r| Nums::of_sim(r, d)).collect();
            let t0 = std::time::Instant::now();
            let done: Vec<CellRuns> = cells
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let s = [
                        sim.get(2 * k).cloned().unwrap_or_default(),
                        sim.get(2 * k + 1).cloned().unwrap_or_default(),
                    ];
                    (*c, s, run_real(c, d))
                })
                .collect();
            let mut r = analyse(d, &done);
            r.notes.push(format!(
                "Real runs took {:.0} s of wall time on this host.",
                t0.elapsed().as_secs_f64()
            ));
            r
        }),
    })
}

/// What one run (real or simulated) measured, from the steady time on.
#[derive(Clone, Debug, Default)]
struct Nums {
    /// Mean of the per-interval mean queueing delays, ms.
    queue_ms: f64,
    /// Bytes per flow.
    bytes: Vec<f64>,
    /// Bottleneck utilisation over the steady part.
    util: f64,
    /// (s, ms) queueing delay per second, whole run.
    queue_series: Vec<(f64, f64)>,
    /// (s, share) the brisk flows' share of the bytes delivered per second.
    share_series: Vec<(f64, f64)>,
    /// Why the emulator says the run did not keep real time.
    distorted: Option<String>,
    /// Every flow's stream arrived intact.
    intact: bool,
}

impl Nums {
    fn from_parts<'a>(
        queue: impl Iterator<Item = (u64, u64)>,
        flows: impl Iterator<Item = &'a [(u64, u64)]>,
        secs: u64,
    ) -> Nums {
        let from = steady_from(secs);
        let queue_series: Vec<(f64, f64)> = queue
            .map(|(t, d)| (t as f64 / 1e9, d as f64 / 1e6))
            .collect();
        let steady: Vec<f64> = queue_series
            .iter()
            .filter(|(t, _)| *t > from)
            .map(|(_, d)| *d)
            .collect();
        let flow_series: Vec<&[(u64, u64)]> = flows.collect();
        let bytes: Vec<f64> = flow_series
            .iter()
            .map(|s| {
                s.iter()
                    .filter(|(t, _)| *t as f64 / 1e9 > from)
                    .map(|(_, b)| *b as f64)
                    .sum()
            })
            .collect();
        let total: f64 = bytes.iter().sum();
        // Per second: the queue's mean and the brisk flows' share.
        let secs_n = secs as usize;
        let mut q1 = vec![(0.0, 0usize); secs_n + 1];
        for (t, d) in &queue_series {
            let k = (t.ceil() as usize).min(secs_n);
            q1[k].0 += d;
            q1[k].1 += 1;
        }
        let per_s: Vec<(f64, f64)> = q1
            .iter()
            .enumerate()
            .filter(|(_, (_, n))| *n > 0)
            .map(|(k, (sum, n))| (k as f64, sum / *n as f64))
            .collect();
        let mut b1 = vec![(0.0, 0.0); secs_n + 1];
        for (i, s) in flow_series.iter().enumerate() {
            for (t, b) in s.iter() {
                let k = ((*t as f64 / 1e9).ceil() as usize).min(secs_n);
                b1[k].1 += *b as f64;
                if i < 2 {
                    b1[k].0 += *b as f64;
                }
            }
        }
        let share_series = b1
            .iter()
            .enumerate()
            .filter(|(_, (_, all))| *all > 0.0)
            .map(|(k, (brisk, all))| (k as f64, brisk / all))
            .collect();
        Nums {
            share_series,
            queue_ms: crate::stats::mean(&steady),
            util: total * 8.0 / (10e6 * (secs as f64 - from)),
            bytes,
            queue_series: per_s,
            distorted: None,
            intact: true,
        }
    }

    fn of_sim(r: &RunResult, secs: u64) -> Nums {
        let mut n = Nums::from_parts(
            r.bottleneck
                .queue_series
                .iter()
                .map(|(t, q)| (*t, q.mean_delay_ns)),
            r.flows.iter().map(|f| f.goodput_series.as_slice()),
            secs,
        );
        n.intact = r.flows.iter().all(|f| f.stream_ok);
        n
    }

    fn of_real(r: &RealResult, secs: u64) -> Nums {
        let mut n = Nums::from_parts(
            r.bottleneck
                .queue_series
                .iter()
                .map(|(t, q)| (*t, q.mean_delay_ns)),
            r.flows.iter().map(|f| f.goodput_series.as_slice()),
            secs,
        );
        n.distorted = distortion(r);
        n.intact = r.flows.iter().all(|f| f.stream_ok && f.error.is_none());
        n
    }

    /// The brisk flows' (the first two) share of the bytes.
    fn brisk_share(&self) -> f64 {
        let t: f64 = self.bytes.iter().sum();
        if t > 0.0 {
            self.bytes.iter().take(2).sum::<f64>() / t
        } else {
            f64::NAN
        }
    }

    /// Bytes of the P = 1 flow over the P = 0.5 flow.
    fn prio_ratio(&self) -> f64 {
        match (self.bytes.first(), self.bytes.get(1)) {
            (Some(a), Some(b)) if *b > 0.0 => a / b,
            _ => f64::NAN,
        }
    }
}

/// A cell's simulated (coupled, uncoupled) and real (coupled, uncoupled) runs.
type CellRuns = (Cell, [Nums; 2], Result<[Nums; 2], String>);

/// Runs the two arms of `cell` over real packets, one after the other: (coupled,
/// uncoupled).
fn run_real(cell: &Cell, secs: u64) -> Result<[Nums; 2], String> {
    let have = brisk_emu::bulk::available_congestion_controls();
    if !have.iter().any(|c| c == cell.cc) {
        return Err(format!(
            "n/a: the kernel offers no {} congestion control (available: {})",
            cell.cc,
            have.join(", ")
        ));
    }
    let mut out = Vec::new();
    for coupled in [true, false] {
        let sc = scenario(cell.cc, coupled, true, secs)?;
        let run =
            brisk_emu::realrun::real_run(&sc, ID, Some(cell.seed)).map_err(|e| e.to_string())?;
        crate::runner::status(&format!(
            "{ID} (real time): {} seed {} {}",
            cell.cc,
            cell.seed,
            if coupled { "coupled" } else { "uncoupled" }
        ));
        match brisk_emu::realrun::run_real(&run) {
            Ok(res) => out.push(Nums::of_real(&res, secs)),
            Err(EmuError::Unsupported(why)) => return Err(format!("n/a: {why}")),
            Err(e) => return Err(e.to_string()),
        }
    }
    let uncoupled = out.pop().unwrap_or_default();
    let coupled = out.pop().unwrap_or_default();
    Ok([coupled, uncoupled])
}

/// |a/b − 1|.
fn rel(a: f64, b: f64) -> f64 {
    (a / b - 1.0).abs()
}

/// The mean of several runs' numbers (the first run's series; intact only if all
/// were; the first distortion).
fn mean_nums(v: &[&Nums]) -> Nums {
    let Some(first) = v.first() else {
        return Nums::default();
    };
    let m =
        |f: &dyn Fn(&Nums) -> f64| crate::stats::mean(&v.iter().map(|n| f(n)).collect::<Vec<_>>());
    Nums {
        queue_ms: m(&|n| n.queue_ms),
        util: m(&|n| n.util),
        bytes: (0..first.bytes.len())
            .map(|i| m(&|n| n.bytes.get(i).copied().unwrap_or(f64::NAN)))
            .collect(),
        queue_series: first.queue_series.clone(),
        share_series: first.share_series.clone(),
        distorted: v.iter().find_map(|n| n.distorted.clone()),
        intact: v.iter().all(|n| n.intact),
    }
}

fn analyse(secs: u64, cells: &[CellRuns]) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    let from = steady_from(secs);
    let cubic: Vec<&CellRuns> = cells.iter().filter(|c| c.0.cc == "cubic").collect();
    let seeds: Vec<u64> = cubic.iter().map(|c| c.0.seed).collect();
    let real: Result<[Nums; 2], String> = match cells.iter().find_map(|c| c.2.as_ref().err()) {
        Some(e) => Err(e.clone()),
        None => {
            let pick = |k: usize| {
                mean_nums(
                    &cubic
                        .iter()
                        .filter_map(|c| c.2.as_ref().ok().map(|x| &x[k]))
                        .collect::<Vec<_>>(),
                )
            };
            Ok([pick(0), pick(1)])
        }
    };
    let sim = [
        mean_nums(&cubic.iter().map(|c| &c.1[0]).collect::<Vec<_>>()),
        mean_nums(&cubic.iter().map(|c| &c.1[1]).collect::<Vec<_>>()),
    ];
    let real = &real;
    let n_runs = 2 * cubic.len();
    r.notes.push(format!(
        "Rows 1–5: the mean over CUBIC seeds {seeds:?} (one real run per arm and seed); rows 6–7: Reno and both controllers. Per cell below."
    ));
    r.notes.push(format!(
        "Set-up: brisk-emu's dumbbell, 10 Mbit/s, RTT {RTT_MS} ms, {QUEUE}-packet drop-tail; flows 1–2 brisk CUBIC (coupled arm: one FSE group, conservative active FSE on cwnd, priorities 1 and 0.5), flows 3–4 Linux CUBIC (set explicitly), bulk, starts 0/50/25/75 ms; {secs} s per run; shares, utilisation and queueing delay from {from:.0} s on. The simulator's twin: the same text with brisk CUBIC for the two Linux flows (the simulator runs only brisk's TCP)."
    ));
    let na = |id: &str, what: &str, why: &str| {
        Claim::new(id, what)
            .ours_text("not run")
            .not_applicable(why.to_string())
    };
    let real = match real {
        Ok(x) => x,
        Err(e) => {
            let why = e.strip_prefix("n/a: ").unwrap_or(e);
            let verdict_na = e.starts_with("n/a: ");
            for id in CLAIMS {
                r.claims.push(if verdict_na {
                    na(id, "real run", why)
                } else {
                    Claim::new(id, "real run")
                        .ours_text("run failed")
                        .check(false)
                        .note(e.clone())
                });
            }
            return r;
        }
    };
    let [rc, ru] = real;
    let (sc, su) = (
        sim.first().cloned().unwrap_or_default(),
        sim.get(1).cloned().unwrap_or_default(),
    );
    let distorted: Vec<&String> = cubic
        .iter()
        .filter_map(|c| c.2.as_ref().ok())
        .flat_map(|x| [&x[0].distorted, &x[1].distorted])
        .flatten()
        .collect();
    r.notes.push(format!(
        "Real coupled: brisk flows {:.2} / {:.2} MB, Linux {:.2} / {:.2} MB, queue {:.1} ms, utilisation {:.3}; real uncoupled: brisk {:.2} / {:.2}, Linux {:.2} / {:.2} MB, queue {:.1} ms, utilisation {:.3}. Simulated coupled: {:.2} / {:.2} / {:.2} / {:.2} MB, queue {:.1} ms; uncoupled {:.2} / {:.2} / {:.2} / {:.2} MB, queue {:.1} ms. Streams intact: real {} / {}, sim {} / {}.{}",
        mb(rc, 0), mb(rc, 1), mb(rc, 2), mb(rc, 3), rc.queue_ms, rc.util,
        mb(ru, 0), mb(ru, 1), mb(ru, 2), mb(ru, 3), ru.queue_ms, ru.util,
        mb(&sc, 0), mb(&sc, 1), mb(&sc, 2), mb(&sc, 3), sc.queue_ms,
        mb(&su, 0), mb(&su, 1), mb(&su, 2), mb(&su, 3), su.queue_ms,
        rc.intact, ru.intact, sc.intact, su.intact,
        if distorted.is_empty() { String::new() } else { format!(" The emulator reports distortion: {}", distorted.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("; ")) }
    ));
    // 1: priority shares over real packets (no model in the comparison: kept).
    let pr = rc.prio_ratio();
    r.claims.push(
        Claim::new(
            "REAL-FSE-1",
            "real packets, coupled: bytes of the P = 1 brisk flow / the P = 0.5 one",
        )
        .paper_text("exact priority shares (C.1, FSE-3): 2")
        .ours(pr)
        .unit("ratio")
        .tolerance("2 ± 10 %, streams intact")
        .check(rel(pr, 2.0) <= 0.1 && rc.intact)
        .note(format!("Simulated: {:.3}.", sc.prio_ratio())),
    );
    // 2: the coupled flows act as one against the Linux flows.
    let (shc, shu) = (rc.brisk_share(), ru.brisk_share());
    r.claims.push(
        Claim::new("REAL-FSE-2", "real packets: the two brisk flows' share of the link, coupled / uncoupled")
            .paper_text("coupled flows act as one flow (the group's aggregate grows as one controller's): share ≈ 1/3 of four flows coupled against ≈ 1/2 uncoupled")
            .ours(shc / shu)
            .unit("ratio")
            .tolerance("< 0.85 (direction)")
            .check(shc / shu < 0.85 && rc.intact && ru.intact)
            .note(format!(
                "brisk share coupled {shc:.3}, uncoupled {shu:.3}; simulated (brisk CUBIC in place of Linux) {:.3} and {:.3}.",
                sc.brisk_share(),
                su.brisk_share()
            )),
    );
    // 3: real vs simulated, coupled arm.
    let fidelity = |id: &str, what: &str, real_v: f64, sim_v: f64, unit: &str| {
        let c = Claim::new(id, what)
            .paper_text("(ours) the simulator within 10 % of real packets")
            .ours(real_v / sim_v)
            .unit(unit)
            .tolerance("real / simulated within 1 ± 0.10");
        let ok = rel(real_v, sim_v) <= 0.10;
        let measured = format!(
            "real {real_v:.3}, simulated {sim_v:.3} ({})",
            if ok { "within" } else { "outside" }
        );
        if distorted.is_empty() {
            c.check(ok).note(measured)
        } else {
            inconclusive(c, distorted.len(), n_runs, distorted[0], &measured)
        }
    };
    r.claims.push(fidelity(
        "REAL-FSE-3a",
        "coupled arm: mean queueing delay, real / simulated",
        rc.queue_ms,
        sc.queue_ms,
        "ratio",
    ));
    r.claims.push(fidelity(
        "REAL-FSE-3b",
        "coupled arm: the brisk flows' share, real / simulated (Linux CUBIC real, brisk CUBIC simulated)",
        shc,
        sc.brisk_share(),
        "ratio",
    ));
    // 4: queueing delay coupled vs uncoupled (FSE-3a's direction, real packets).
    r.claims.push(
        Claim::new("REAL-FSE-4", "real packets: mean queueing delay, coupled / uncoupled")
            .paper_text("FSE-3a: coupling lowers the queueing delay (there among coupled flows only; here two of four flows are coupled)")
            .ours(rc.queue_ms / ru.queue_ms)
            .unit("ratio")
            .tolerance("informative")
            .note(format!(
                "Real {:.1} vs {:.1} ms; simulated {:.1} vs {:.1} ms.",
                rc.queue_ms, ru.queue_ms, sc.queue_ms, su.queue_ms
            )),
    );
    // 5: utilisation: coupling gives away nothing the Linux flows do not take.
    r.claims.push(
        Claim::new(
            "REAL-FSE-5",
            "real packets: bottleneck utilisation, coupled − uncoupled",
        )
        .paper_text("FSE-3c: utilisation not above uncoupled; the link stays busy")
        .ours(rc.util - ru.util)
        .unit("fraction of 10 Mbit/s")
        .tolerance("coupled ≥ 0.9 and within 0.05 of uncoupled")
        .check(rc.util >= 0.9 && (rc.util - ru.util).abs() <= 0.05)
        .note(format!("Coupled {:.3}, uncoupled {:.3}.", rc.util, ru.util)),
    );
    // Per cell, and the Reno rows.
    for (c, sm, re) in cells {
        if let Ok([c1, u1]) = re {
            r.notes.push(format!(
                "{} seed {}: real coupled ratio {:.2}, brisk share {:.3}, queue {:.1} ms, util {:.3}; real uncoupled brisk share {:.3}, queue {:.1} ms, util {:.3}; simulated coupled ratio {:.2}, share {:.3}; uncoupled share {:.3}.{}",
                c.cc, c.seed, c1.prio_ratio(), c1.brisk_share(), c1.queue_ms, c1.util,
                u1.brisk_share(), u1.queue_ms, u1.util,
                sm[0].prio_ratio(), sm[0].brisk_share(), sm[1].brisk_share(),
                [&c1.distorted, &u1.distorted].into_iter().flatten().next().map_or(String::new(), |d| format!(" Distorted: {d}"))
            ));
        }
    }
    let of_cc = |cc: &str| -> Vec<&[Nums; 2]> {
        cells
            .iter()
            .filter(|c| c.0.cc == cc)
            .filter_map(|c| c.2.as_ref().ok())
            .collect()
    };
    let reno = of_cc("reno");
    if reno.is_empty() {
        r.claims.push(
            Claim::new(
                "REAL-FSE-6",
                "Reno, real packets, coupled: bytes P = 1 / P = 0.5",
            )
            .ours_text("not run")
            .not_applicable("quick mode runs CUBIC only; run `brisk repro real-fse`"),
        );
    } else {
        let ratios: Vec<f64> = reno.iter().map(|x| x[0].prio_ratio()).collect();
        let m = crate::stats::mean(&ratios);
        r.claims.push(
            Claim::new(
                "REAL-FSE-6",
                "Reno, real packets, coupled: bytes P = 1 / P = 0.5 (mean over seeds)",
            )
            .paper_text("exact priority shares (C.1, FSE-3): 2")
            .ours(m)
            .unit("ratio")
            .tolerance("2 ± 10 %, streams intact")
            .check(rel(m, 2.0) <= 0.1 && reno.iter().all(|x| x[0].intact))
            .note(format!(
                "Per seed: {}.",
                ratios
                    .iter()
                    .map(|x| format!("{x:.2}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        );
    }
    let uncoupled_share = |cc: &str| {
        let v: Vec<f64> = of_cc(cc).iter().map(|x| x[1].brisk_share()).collect();
        (crate::stats::mean(&v), v)
    };
    let (cu, cu_v) = uncoupled_share("cubic");
    let (ru_s, ru_v) = uncoupled_share("reno");
    r.claims.push(
        Claim::new(
            "REAL-FSE-7",
            "real packets, uncoupled: two brisk flows' share against two Linux flows of the same controller",
        )
        .paper_text("(ours) like for like, the two stacks' flows share equally: 0.5")
        .ours(cu)
        .unit("share (CUBIC; Reno in the note)")
        .tolerance("informative")
        .note(format!(
            "CUBIC per seed {}; Reno {} (mean {}).",
            cu_v.iter().map(|x| format!("{x:.3}")).collect::<Vec<_>>().join(", "),
            if ru_v.is_empty() { "not run (quick)".to_string() } else { ru_v.iter().map(|x| format!("{x:.3}")).collect::<Vec<_>>().join(", ") },
            if ru_v.is_empty() { "-".to_string() } else { format!("{ru_s:.3}") }
        )),
    );
    let line = |name: &str, color: &'static str, style: Style, pts: &[(f64, f64)]| {
        Series::new(name, color, style, pts.to_vec())
    };
    r.plots.push(Plot {
        figure: Figure::Chart(Chart {
            title: "Queueing delay: two brisk CUBIC flows (coupled or not) beside two CUBIC flows".into(),
            x_label: "time (s)".into(),
            y_label: "mean queueing delay per second (ms)".into(),
            series: vec![
                line("real, coupled", BLUE, Style::Line, &rc.queue_series),
                line("real, uncoupled", RED, Style::Line, &ru.queue_series),
                line("simulated, coupled", ORANGE, Style::Dashed, &sc.queue_series),
                line("simulated, uncoupled", GREY, Style::Dashed, &su.queue_series),
            ],
            ..Chart::default()
        }),
        paper: "(ours) issue 33 §4: the FSE over real packets, the simulator beside it.".into(),
        ours: format!(
            "Mean from {from:.0} s on: real {:.1} (coupled) and {:.1} ms (uncoupled), simulated {:.1} and {:.1} ms.",
            rc.queue_ms, ru.queue_ms, sc.queue_ms, su.queue_ms
        ),
    });
    r.plots.push(Plot {
        figure: Figure::Chart(Chart {
            title: "The two brisk flows' share of the bytes delivered, per second".into(),
            x_label: "time (s)".into(),
            y_label: "brisk flows' share".into(),
            series: vec![
                line("real, coupled", BLUE, Style::Line, &rc.share_series),
                line("real, uncoupled", RED, Style::Line, &ru.share_series),
                line("simulated, coupled", ORANGE, Style::Dashed, &sc.share_series),
                line("simulated, uncoupled", GREY, Style::Dashed, &su.share_series),
            ],
            ..Chart::default()
        }),
        paper: "(ours) a group that competed as one flow would hold about 1/3 of four flows; two independent flows about 1/2.".into(),
        ours: format!(
            "From {from:.0} s on: real {:.3} (coupled) and {:.3} (uncoupled); simulated, with brisk CUBIC in place of Linux CUBIC, {:.3} and {:.3}.",
            rc.brisk_share(), ru.brisk_share(), sc.brisk_share(), su.brisk_share()
        ),
    });
    r
}

fn mb(n: &Nums, i: usize) -> f64 {
    n.bytes.get(i).copied().unwrap_or(f64::NAN) / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_texts_parse_and_name_the_linux_cc() {
        for coupled in [true, false] {
            let real = scenario("cubic", coupled, true, 12).unwrap();
            assert_eq!(real.flows.len(), 4);
            assert_eq!(real.flows[2].kernel_cc(), "cubic");
            assert_eq!(real.flows[3].kernel_cc(), "cubic");
            let sim = scenario("cubic", coupled, false, 12).unwrap();
            let cfg = sim.flows[0].tcp.to_config(sim.flows[0].cc);
            assert_eq!(cfg.cc_name(), if coupled { "cubic+fse" } else { "cubic" });
            assert_eq!(
                sim.flows[2].tcp.to_config(sim.flows[2].cc).cc_name(),
                "cubic"
            );
        }
    }
}
