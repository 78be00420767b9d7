//! abe-mixed: ABE flows sharing a bottleneck with flows that do not use ECN (RITE D1.3
//! App. E.1 §4.6, Figs. 14–15; claim ABE-10).
//!
//! Ten flows through 10 Mbit/s behind CoDel or PIE (with ECN; PIE's 10 % rule off):
//! five CUBIC with ECN and ABE at β_ecn, five NewReno without ECN, all at one RTT (20,
//! 80, 160, 320 ms). The metric is the ratio of the mean per-flow throughput of the ABE
//! flows to that of the legacy flows, over the run after its first 2 s. The paper's
//! mixes "totalled 10 flows"; five and five is assumed.

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Job, Plan};
use brisk_sim::{RunResult, Scenario};
use std::fmt::Write;

pub const ID: &str = "abe-mixed";
pub const TITLE: &str =
    "ABE flows against flows without ECN: throughput ratio (D1.3 App. E.1 Figs. 14-15)";
pub const CLAIMS: &[&str] = &["ABE-10a", "ABE-10b"];

const AQMS: [(&str, &str); 2] = [
    ("CoDel", "{ kind = \"codel\", ecn = true }"),
    (
        "PIE",
        "{ kind = \"pie\", ecn = true, ecn_drop_rule = false }",
    ),
];
const BETAS: [f64; 2] = [0.85, 0.9];
const N: u32 = 5;

#[derive(Clone, Copy, Debug)]
struct Cell {
    aqm: usize,
    rtt_ms: u64,
    beta: f64,
}

fn shape(quick: bool) -> (u64, Vec<u64>) {
    if quick {
        (60, vec![80, 320])
    } else {
        (300, vec![20, 80, 160, 320])
    }
}

fn scenario_toml(c: Cell, duration_s: u64) -> String {
    format!(
        "name = \"{ID}\"\nduration = \"{duration_s}s\"\nsample_interval = \"1s\"\n\
         [bottleneck]\nrate = \"10Mbit\"\nqueue = {}\n\
         [[flow]]\ncount = {N}\nrtt = \"{rtt}ms\"\ncc = \"cubic\"\napp = {{ kind = \"bulk\" }}\n\
         [flow.tcp]\necn = true\nabe = true\nbeta_ecn = {}\n\
         [[flow]]\ncount = {N}\nrtt = \"{rtt}ms\"\ncc = \"reno\"\napp = {{ kind = \"bulk\" }}\n",
        AQMS[c.aqm].1,
        c.beta,
        rtt = c.rtt_ms,
    )
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let (duration_s, rtts) = shape(quick);
    let mut cells = Vec::new();
    for aqm in 0..AQMS.len() {
        for &rtt_ms in &rtts {
            for &beta in &BETAS {
                cells.push(Cell { aqm, rtt_ms, beta });
            }
        }
    }
    let mut jobs = Vec::new();
    for c in &cells {
        let sc = Scenario::from_toml_str_named(&scenario_toml(*c, duration_s), ID)
            .map_err(|e| e.to_string())?;
        jobs.push(Job::new(
            format!("{ID} {} rtt {} beta {}", AQMS[c.aqm].0, c.rtt_ms, c.beta),
            sc,
            1,
        ));
    }
    Ok(Plan {
        jobs,
        analyse: Box::new(move |runs| analyse(&cells, runs)),
    })
}

/// Mean per-flow throughput of the ABE flows over that of the legacy flows, after
/// the first 2 s.
fn ratio(r: &RunResult) -> f64 {
    let per_flow = |ids: std::ops::Range<u32>| -> f64 {
        let v: Vec<f64> = r
            .flows
            .iter()
            .filter(|f| ids.contains(&f.id))
            .map(|f| {
                f.goodput_series
                    .iter()
                    .filter(|(t, _)| *t > 2_000_000_000)
                    .map(|(_, b)| *b as f64)
                    .sum::<f64>()
            })
            .collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    };
    per_flow(0..N) / per_flow(N..2 * N).max(1.0)
}

fn analyse(cells: &[Cell], runs: &[RunResult]) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    let ratios: Vec<(Cell, f64, bool)> = cells
        .iter()
        .zip(runs)
        .map(|(c, run)| (*c, ratio(run), run.flows.iter().all(|f| f.stream_ok)))
        .collect();
    let mut table =
        String::from("Per-flow throughput ratio, ABE (CUBIC, ECN) : legacy (NewReno, no ECN):");
    for (c, x, ok) in &ratios {
        let _ = write!(
            table,
            "\n{} RTT {} ms beta_ecn {}: {x:.2}{}",
            AQMS[c.aqm].0,
            c.rtt_ms,
            c.beta,
            if *ok { "" } else { " (a stream broke)" }
        );
    }
    r.notes.push(format!(
        "Set-up: 10 flows through 10 Mbit/s, CoDel or PIE with ECN (PIE's 10 % rule off): {N} CUBIC with ECN + ABE and {N} NewReno without ECN, one RTT per run; throughput after the first 2 s. The paper's mixes totalled 10 flows; five and five is assumed, one run per cell (the paper ran 3)."
    ));
    r.notes.push(table);
    for (id, beta, lo, hi, paper) in [
        ("ABE-10a", 0.9, 2.0, 3.5, "≈ 3 at most"),
        ("ABE-10b", 0.85, 1.5, 2.5, "≈ 2 at most"),
    ] {
        let xs: Vec<f64> = ratios
            .iter()
            .filter(|(c, ..)| (c.beta - beta).abs() < 1e-9)
            .map(|x| x.1)
            .collect();
        let max = xs.iter().copied().fold(f64::NAN, f64::max);
        r.claims.push(
            Claim::new(
                id,
                &format!("beta_ecn {beta}: largest per-flow throughput ratio ABE : legacy over AQMs and RTTs"),
            )
            .paper_text(paper)
            .ours(max)
            .tolerance(&format!("{lo}–{hi}"))
            .check((lo..=hi).contains(&max))
            .note(
                xs.iter()
                    .map(|x| format!("{x:.2}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        );
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_have_five_abe_and_five_legacy_flows() {
        let c = Cell {
            aqm: 1,
            rtt_ms: 80,
            beta: 0.9,
        };
        let sc = Scenario::from_toml_str_named(&scenario_toml(c, 60), ID).unwrap();
        assert_eq!(sc.total_flows(), 10);
        let abe = sc.flows[0].tcp.to_config(sc.flows[0].cc);
        assert_eq!(
            abe.congestion.controller.abe().and_then(|a| a.beta_ecn),
            Some(0.9)
        );
        let legacy = sc.flows[1].tcp.to_config(sc.flows[1].cc);
        assert!(!legacy.ecn.enabled && legacy.congestion.controller.abe().is_none());
    }
}
