//! fse-pause: FSE-4b, the RMCAT media pause-and-resume test with the Flow State
//! Exchange (RITE D1.3 body §4.1, Fig 4.2): three equal-priority flows of one host,
//! flow 2 paused at about 60 s for 40 s, with and without the FSE. The seed's flows are
//! NADA (rate-based); here they are Reno TCP flows (docs/mechanisms/fse.md). Directions
//! only: a smaller delay spike when flow 2 resumes, and strict fairness.
//!
//! A resumed TCP flow restarts its window after the idle period (RFC 5681 §4.1). Alone,
//! it slow-starts on top of the others' full windows; coupled, it leaves the FSE and
//! joins again with its restart window, takes its share from the others at once and
//! climbs to it by slow start (`fse/tcp.rs`, T-9), so the aggregate does not grow.

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Job, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{Chart, Style, BLUE, RED};
use brisk_sim::{RunResult, Scenario};

pub const ID: &str = "fse-pause";
pub const TITLE: &str =
    "The Flow State Exchange: one of three flows paused and resumed (D1.3 body §4.1, Fig 4.2)";
pub const CLAIMS: &[&str] = &["FSE-4b"];

/// Bottleneck queue: one BDP (125 packets of 1000 bytes), so that a spike has room to
/// show (C.1's 62 packets cap any spike at about 50 ms).
const QUEUE: u64 = 125;
const BIN_MS: u64 = 500;
/// The window after the resume in which the spike is measured.
const SPIKE_MS: u64 = 5_000;

struct Shape {
    secs: u64,
    pause_at: u64,
    pause_for: u64,
    seeds: Vec<u64>,
}

fn shape(quick: bool) -> Shape {
    if quick {
        // The paper's 60 s + 40 s, scaled down by 3 (and 2 seeds) for the CI budget.
        Shape {
            secs: 45,
            pause_at: 20,
            pause_for: 13,
            seeds: vec![1, 2],
        }
    } else {
        Shape {
            secs: 150,
            pause_at: 60,
            pause_for: 40,
            seeds: (1..=5).collect(),
        }
    }
}

fn scenario(coupled: bool, seed: u64, sh: &Shape) -> Result<Scenario, String> {
    let mut s = format!(
        "name = \"fse-pause\"\nduration = \"{}s\"\nsample_interval = \"{BIN_MS}ms\"\n[bottleneck]\nrate = \"10Mbit\"\nqueue = {{ kind = \"droptail\", packets = {QUEUE} }}\n",
        sh.secs
    );
    let starts = super::fse::starts(seed, 3);
    for (i, start) in starts.into_iter().enumerate() {
        let pause = if i == 1 {
            format!(
                ", pause = {{ at = \"{}s\", for = \"{}s\" }}",
                sh.pause_at, sh.pause_for
            )
        } else {
            String::new()
        };
        s.push_str(&format!(
            "[[flow]]\ncc = \"reno\"\nrtt = \"100ms\"\nstart = \"{start}ms\"\napp = {{ kind = \"bulk\"{pause} }}\n[flow.tcp]\nmss = 960\nsend_buffer = \"256KiB\"\n"
        ));
        if coupled {
            s.push_str("fse = { group = \"rmcat\" }\n");
        }
    }
    Scenario::from_toml_str_named(&s, "fse-pause").map_err(|e| e.to_string())
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let sh = shape(quick);
    let mut jobs = Vec::new();
    for &seed in &sh.seeds {
        for coupled in [true, false] {
            let name = if coupled { "fse" } else { "uncoupled" };
            jobs.push(Job::new(
                format!("fse-pause {name} seed {seed}"),
                scenario(coupled, seed, &sh)?,
                seed,
            ));
        }
    }
    Ok(Plan {
        jobs,
        analyse: Box::new(move |runs| analyse(runs, &sh)),
    })
}

/// Mean queueing delay per bin, (s, ms).
fn queue_series(r: &RunResult) -> Vec<(f64, f64)> {
    r.bottleneck
        .queue_series
        .iter()
        .map(|(t, q)| (*t as f64 / 1e9, q.mean_delay_ns as f64 / 1e6))
        .collect()
}

/// The largest per-bin mean queueing delay in the `SPIKE_MS` after the resume, ms.
fn spike_ms(r: &RunResult, resume_ms: u64) -> f64 {
    let (a, b) = (resume_ms as f64 / 1e3, (resume_ms + SPIKE_MS) as f64 / 1e3);
    queue_series(r)
        .into_iter()
        .filter(|(t, _)| *t > a && *t <= b)
        .map(|(_, d)| d)
        .fold(0.0, f64::max)
}

/// Drops at the bottleneck in the `SPIKE_MS` after the resume.
fn drops_after(r: &RunResult, resume_ms: u64) -> u64 {
    let (a, b) = (resume_ms * 1_000_000, (resume_ms + SPIKE_MS) * 1_000_000);
    r.bottleneck
        .queue_series
        .iter()
        .filter(|(t, _)| *t > a && *t <= b)
        .map(|(_, q)| q.drops)
        .sum()
}

/// Jain's index of the three flows' bytes delivered from `from_ms` to the end.
fn jain_after(r: &RunResult, from_ms: u64) -> f64 {
    let x: Vec<f64> = r
        .flows
        .iter()
        .map(|f| {
            f.goodput_series
                .iter()
                .filter(|(t, _)| *t > from_ms * 1_000_000)
                .map(|(_, b)| *b as f64)
                .sum()
        })
        .collect();
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if s2 > 0.0 {
        s * s / (x.len() as f64 * s2)
    } else {
        f64::NAN
    }
}

fn analyse(runs: &[RunResult], sh: &Shape) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    let resume = (sh.pause_at + sh.pause_for) * 1000;
    r.notes.push(format!(
        "Set-up: 10 Mbit/s, RTT 100 ms, MSS 960 (1000-byte packets), {QUEUE}-packet drop-tail (one BDP), three Reno flows of one host starting at random in the first second, 256-KiB send buffers; flow 2 stops writing at {} s for {} s ({} s in all, {} seed(s){}). Coupled: one FSE group, equal priorities (conservative active FSE). Spike: the largest 0.5-s mean queueing delay in the {} s after the resume; fairness: Jain's index of the bytes from 10 s after the resume to the end.",
        sh.pause_at,
        sh.pause_for,
        sh.secs,
        sh.seeds.len(),
        if sh.secs < 100 { "; the paper's 60 s + 40 s scaled down for the quick suite" } else { "" },
        SPIKE_MS / 1000
    ));
    let fse: Vec<&RunResult> = runs.iter().step_by(2).collect();
    let unc: Vec<&RunResult> = runs.iter().skip(1).step_by(2).collect();
    let mean = |xs: &[&RunResult], f: &dyn Fn(&RunResult) -> f64| {
        crate::stats::mean(&xs.iter().map(|x| f(x)).collect::<Vec<_>>())
    };
    let (sf, su) = (
        mean(&fse, &|x| spike_ms(x, resume)),
        mean(&unc, &|x| spike_ms(x, resume)),
    );
    let (df, du) = (
        mean(&fse, &|x| drops_after(x, resume) as f64),
        mean(&unc, &|x| drops_after(x, resume) as f64),
    );
    let (jf, ju) = (
        mean(&fse, &|x| jain_after(x, resume + 10_000)),
        mean(&unc, &|x| jain_after(x, resume + 10_000)),
    );
    let lower = fse
        .iter()
        .zip(&unc)
        .filter(|(a, b)| spike_ms(a, resume) < spike_ms(b, resume))
        .count();
    r.claims.push(
        Claim::new(
            "FSE-4b",
            "pause and resume: delay spike after the resume, coupled / uncoupled",
        )
        .paper_text("smaller spike, strict fairness (no numbers)")
        .ours(sf / su)
        .unit("ratio")
        .tolerance("< 1, and Jain's index ≥ 0.99 coupled (direction)")
        .check(sf < su && jf >= 0.99)
        .note(format!(
            "Spike {sf:.1} ms coupled vs {su:.1} ms uncoupled (lower in {lower} of {} seeds); drops in those {} s {df:.1} vs {du:.1}; Jain's index after the resume {jf:.4} vs {ju:.4}.",
            fse.len(),
            SPIKE_MS / 1000
        )),
    );
    let over = |xs: &[&RunResult]| xs.iter().map(|x| queue_series(x)).collect::<Vec<_>>();
    r.plots.push(Plot {
        figure: Figure::Chart(Chart {
            title: "Queueing delay; flow 2 paused, then resumed".into(),
            x_label: "time (s)".into(),
            y_label: "mean queueing delay per 0.5 s (ms)".into(),
            series: vec![
                super::over_seeds("three Reno flows + FSE", BLUE, Style::Line, over(&fse)),
                super::over_seeds("three Reno flows uncoupled", RED, Style::Dashed, over(&unc)),
            ],
            ..Chart::default()
        }),
        paper: "Body Fig 4.2 (NADA): with the FSE the aggregate is shared fairly and the delay spike of the flow restarting after its pause is smaller.".into(),
        ours: format!(
            "Flow 2 pauses at {} s and resumes at {} s. Largest 0.5-s mean queueing delay in the {} s after the resume: {sf:.1} ms coupled, {su:.1} ms uncoupled. {}",
            sh.pause_at,
            resume / 1000,
            SPIKE_MS / 1000,
            crate::bands::caption(fse.len())
        ),
    });
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_flow_pauses_and_every_flow_is_coupled() {
        let sh = shape(true);
        let sc = scenario(true, 1, &sh).unwrap();
        assert_eq!(sc.flows.len(), 3);
        assert!(matches!(
            sc.flows[1].app,
            brisk_sim::scenario::AppSpec::Bulk { pause: Some(_), .. }
        ));
        assert!(matches!(
            sc.flows[0].app,
            brisk_sim::scenario::AppSpec::Bulk { pause: None, .. }
        ));
        let cfg = sc.flows[2].tcp.to_config(sc.flows[2].cc);
        assert_eq!(cfg.cc_name(), "reno+fse");
    }
}
