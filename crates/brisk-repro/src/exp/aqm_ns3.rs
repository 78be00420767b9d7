//! aqm-vs-ns3: brisk's AQMs beside ns-3's on one shared scenario (issue 10 §1).
//!
//! One NewReno (brisk: `reno`) bulk flow, 10 Mbit/s, RTT 50 ms, through CoDel, PIE,
//! RED and FQ-CoDel, and CoDel with ECN. The ns-3 side is `bench/ns3/aqm.py` (the `ns3`
//! wheel, 3.44), with the same parameters: CoDel 5/100 ms; PIE with Linux 3.17.4's
//! constants and departure-rate delay estimate; RED 5/15 packets, max_p 0.1, w_q 0.002,
//! gentle; FQ-CoDel's defaults. Both sides report the steady state, from 10 s to the end
//! of 30 s (quick: 5 to 20 s), past the slow start, which the two TCPs take differently
//! (brisk's grows as Linux's, per segment ACKed; its overshoot is larger). Both receivers
//! ACK every segment: ns-3's NewReno grows by MSS²/cwnd per ACK, half a segment per RTT
//! with delayed ACKs where Linux's counting of segments ACKed gives one, which doubled
//! ns-3's sawtooth cycle and halved its drops in a first version of this comparison.
//!
//! The ns-3 runs need a Python with the `ns3` wheel: `BRISK_NS3_PYTHON` names it
//! (default `python3`); without it the claims are n/a. The experiment is of the
//! real-time kind only so that its external processes run alone, after the pool.

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Job, Plan};
use brisk_sim::{RunResult, Scenario};
use std::fmt::Write;
use std::process::Command;

pub const ID: &str = "aqm-vs-ns3";
pub const TITLE: &str =
    "AQMs against ns-3: CoDel, PIE, RED, FQ-CoDel with one NewReno flow (issue 10 §1)";
pub const CLAIMS: &[&str] = &["AQM-NS3-1", "AQM-NS3-2", "AQM-NS3-3"];

const SCRIPT: &str = "bench/ns3/aqm.py";

/// The queues compared: name, brisk's queue table, ns-3 script's name, ECN.
const QUEUES: &[(&str, &str, &str, bool)] = &[
    ("CoDel", "{ kind = \"codel\" }", "codel", false),
    (
        "CoDel, ECN",
        "{ kind = \"codel\", ecn = true }",
        "codel",
        true,
    ),
    ("PIE", "{ kind = \"pie\" }", "pie", false),
    (
        "RED",
        "{ kind = \"red\", min_th = 5, max_th = 15, max_p = 0.1 }",
        "red",
        false,
    ),
    (
        "FQ-CoDel",
        "{ kind = \"fq_codel\", ecn = false }",
        "fq_codel",
        false,
    ),
];

fn python() -> String {
    std::env::var("BRISK_NS3_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Why this host cannot run the ns-3 side, if so.
pub fn unsupported() -> Option<String> {
    if !std::path::Path::new(SCRIPT).exists() {
        return Some(format!("{SCRIPT} not found (run from the repository root)"));
    }
    let py = python();
    let ok = Command::new(&py)
        .args(["-c", "from ns import ns"])
        .output()
        .is_ok_and(|o| o.status.success());
    (!ok).then(|| {
        format!(
            "{py} has no ns-3 (pip install ns3 into a venv and set BRISK_NS3_PYTHON to its python)"
        )
    })
}

fn shape(quick: bool) -> (u64, u64) {
    if quick {
        (20, 5)
    } else {
        (30, 10)
    }
}

fn scenario(queue: &str, ecn: bool, duration_s: u64) -> String {
    format!(
        "name = \"{ID}\"\nduration = \"{duration_s}s\"\nsample_interval = \"100ms\"\n\
         [bottleneck]\nrate = \"10Mbit\"\nqueue = {queue}\n\
         [[flow]]\nrtt = \"50ms\"\ncc = \"reno\"\napp = {{ kind = \"bulk\" }}\n\
         [flow.tcp]\necn = {ecn}\nack = {{ delayed = false }}\n"
    )
}

/// Steady-state figures of one run: goodput (bit/s of payload), mean queueing delay
/// (ms), drops and marks per second.
#[derive(Clone, Copy, Debug, Default)]
struct Steady {
    goodput: f64,
    delay_ms: f64,
    drops_per_s: f64,
    marks_per_s: f64,
}

fn brisk_steady(r: &RunResult, from_s: u64, duration_s: u64) -> Steady {
    let from_ns = from_s * 1_000_000_000;
    let secs = (duration_s - from_s) as f64;
    let bytes: u64 = r.flows.first().map_or(0, |f| {
        f.goodput_series
            .iter()
            .filter(|(t, _)| *t > from_ns)
            .map(|(_, b)| *b)
            .sum()
    });
    let rows: Vec<_> = r
        .bottleneck
        .queue_series
        .iter()
        .filter(|(t, _)| *t > from_ns)
        .collect();
    let busy: Vec<f64> = rows
        .iter()
        .filter(|(_, q)| q.mean_delay_ns > 0 || q.max_packets > 0)
        .map(|(_, q)| q.mean_delay_ns as f64 / 1e6)
        .collect();
    let drops = r
        .bottleneck
        .drop_records
        .iter()
        .filter(|d| d.at.as_nanos() > from_ns)
        .count();
    Steady {
        goodput: bytes as f64 * 8.0 / secs,
        // Rows are 100-ms intervals of an always-busy link: each carries about as many
        // packets, so the mean of the rows' means is the packet mean.
        delay_ms: busy.iter().sum::<f64>() / rows.len().max(1) as f64,
        drops_per_s: drops as f64 / secs,
        // Marks are counted for the whole run only; a rate over the run stands in.
        marks_per_s: r.bottleneck.ce_marked as f64 / duration_s as f64,
    }
}

fn ns3_steady(queue: &str, ecn: bool, from_s: u64, duration_s: u64) -> Result<Steady, String> {
    let mut cmd = Command::new(python());
    cmd.args([
        SCRIPT,
        "--queue",
        queue,
        "--duration",
        &duration_s.to_string(),
        "--from",
        &from_s.to_string(),
    ]);
    if ecn {
        cmd.arg("--ecn");
    }
    let out = cmd.output().map_err(|e| format!("{SCRIPT}: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(3).collect();
        return Err(format!(
            "{SCRIPT} --queue {queue} failed: {}",
            tail.join(" | ")
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .unwrap_or("{}");
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("{SCRIPT} output: {e}"))?;
    let secs = (duration_s - from_s) as f64;
    let num = |x: &serde_json::Value| x.as_f64().unwrap_or(f64::NAN);
    Ok(Steady {
        goodput: num(&v["goodput_bps"]),
        delay_ms: num(&v["sojourn_ms"]["mean"]),
        drops_per_s: num(&v["drops"]) / secs,
        marks_per_s: num(&v["marks"]) / secs,
    })
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let (duration_s, from_s) = shape(quick);
    let mut jobs = Vec::new();
    for (name, queue, _, ecn) in QUEUES {
        let sc = Scenario::from_toml_str_named(&scenario(queue, *ecn, duration_s), ID)
            .map_err(|e| e.to_string())?;
        jobs.push(Job::new(format!("{ID} {name}"), sc, 1));
    }
    Ok(Plan {
        jobs,
        analyse: Box::new(move |runs| {
            let ns3: Vec<Result<Steady, String>> = QUEUES
                .iter()
                .map(|(_, _, q, ecn)| ns3_steady(q, *ecn, from_s, duration_s))
                .collect();
            analyse(runs, &ns3, from_s, duration_s)
        }),
    })
}

fn analyse(
    runs: &[RunResult],
    ns3: &[Result<Steady, String>],
    from_s: u64,
    duration_s: u64,
) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    r.reference = "ns-3";
    if let Some(e) = ns3.iter().find_map(|x| x.as_ref().err()) {
        for id in CLAIMS {
            r.claims.push(
                Claim::new(id, "AQMs against ns-3")
                    .ours_text(e)
                    .check(false),
            );
        }
        return r;
    }
    let pairs: Vec<(&str, Steady, Steady)> = QUEUES
        .iter()
        .zip(runs)
        .zip(ns3)
        .map(|(((name, ..), run), n)| {
            (
                *name,
                brisk_steady(run, from_s, duration_s),
                *n.as_ref().expect("checked above"),
            )
        })
        .collect();
    let mut table = format!(
        "Steady state ({from_s}–{duration_s} s), brisk / ns-3: goodput (Mbit/s), mean queueing delay (ms), drops/s, marks/s"
    );
    for (name, b, n) in &pairs {
        let _ = write!(
            table,
            "\n{name}: {:.2} / {:.2}; {:.2} / {:.2}; {:.2} / {:.2}; {:.2} / {:.2}",
            b.goodput / 1e6,
            n.goodput / 1e6,
            b.delay_ms,
            n.delay_ms,
            b.drops_per_s,
            n.drops_per_s,
            b.marks_per_s,
            n.marks_per_s
        );
    }
    r.notes.push(format!(
        "Set-up: one NewReno flow, 10 Mbit/s, RTT 50 ms, {duration_s} s; ns-3 runs {SCRIPT} (ns-3.44 from the ns3 wheel) on the same path. {table}"
    ));
    let worst = |f: &dyn Fn(&Steady, &Steady) -> f64| -> (f64, &str) {
        pairs
            .iter()
            .map(|(name, b, n)| (f(b, n), *name))
            .fold((0.0, ""), |a, x| if x.0 > a.0 { x } else { a })
    };
    let (g, g_at) = worst(&|b, n| (b.goodput / n.goodput - 1.0).abs() * 100.0);
    r.claims.push(
        Claim::new(
            "AQM-NS3-1",
            "Steady goodput, brisk against ns-3, worst queue",
        )
        .paper_text("the same AQM and TCP give the same throughput")
        .ours(g)
        .unit("%")
        .tolerance("within 5 %")
        .check(g <= 5.0)
        .note(format!("Worst: {g_at}.")),
    );
    let (d, d_at) = worst(&|b, n| {
        let diff = (b.delay_ms - n.delay_ms).abs();
        // Within 2 ms counts as equal at these sub-target delays.
        if diff <= 2.0 {
            0.0
        } else {
            diff / n.delay_ms.max(0.1) * 100.0
        }
    });
    r.claims.push(
        Claim::new(
            "AQM-NS3-2",
            "Steady mean queueing delay, brisk against ns-3, worst queue (beyond a 2-ms allowance)",
        )
        .paper_text("the same AQM holds the same standing delay")
        .ours(d)
        .unit("%")
        .tolerance("within 2 ms or 30 %")
        .check(d <= 30.0)
        .note(format!("Worst: {d_at}.")),
    );
    let (s, s_at) = worst(&|b, n| {
        let (x, y) = (b.drops_per_s + b.marks_per_s, n.drops_per_s + n.marks_per_s);
        if x.max(y) <= 0.0 {
            1.0
        } else {
            x.max(y) / x.min(y).max(1e-9)
        }
    });
    r.claims.push(
        Claim::new(
            "AQM-NS3-3",
            "Steady congestion signals (drops + marks per second), ratio brisk/ns-3 or its inverse, worst queue",
        )
        .paper_text("one signal per sawtooth cycle on both")
        .ours(s)
        .unit("×")
        .tolerance("within 2×")
        .check(s <= 2.0)
        .note(format!("Worst: {s_at}.")),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_parse() {
        for (_, q, _, ecn) in QUEUES {
            Scenario::from_toml_str_named(&scenario(q, *ecn, 30), ID).unwrap();
        }
    }

    #[test]
    fn a_failed_ns3_run_fails_every_claim_with_its_reason() {
        let r = analyse(&[], &[Err("boom".into())], 10, 30);
        assert_eq!(r.claims.len(), CLAIMS.len());
        assert!(r
            .claims
            .iter()
            .all(|c| c.verdict == crate::claim::Verdict::Fail));
    }
}
