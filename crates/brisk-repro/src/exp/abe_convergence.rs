//! abe-convergence: does ABE slow two flows' convergence? (RITE D1.3 App. E.1 §4.5,
//! Figs. 12–13; claim ABE-9).
//!
//! Two flows of the same controller (NewReno or CUBIC) with ECN and ABE at β_ecn share
//! a bottleneck of C Mbit/s behind CoDel (5/100 ms) or PIE (20 ms, Linux 3.17.4, the
//! 10 % rule off), both at the same base RTT. The second flow starts [`START2_S`] s after
//! the first. Convergence time is the time from the second flow's start until Jain's
//! index of the two flows' cumulative bytes since then reaches 0.95 (the paper's
//! definition) and stays there to the end of the run: at small BDPs the second flow's
//! initial window alone lifts the index over 0.95 in the first 100-ms sample, so the
//! first crossing (reported in the notes) often measures nothing. Each cell's time is
//! divided by the default's (NewReno 0.5, CUBIC 0.7) in the same cell. A run that never converges counts as converging at its end
//! (censored; counted in the notes).
//!
//! The paper's grid is C ∈ {1, 5, 10, 20, 40, 100} Mbit/s × RTT ∈ {10, 20, 40, 60, 80,
//! 160, 240, 320} ms, 90-s runs. The full run here leaves out 100 Mbit/s, which alone
//! would cost more than the other five rates together, and keeps 90 s.

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Job, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{categorical, Chart, Series, Style};
use brisk_sim::{RunResult, Scenario};
use std::fmt::Write;

pub const ID: &str = "abe-convergence";
pub const TITLE: &str =
    "ABE and the convergence of two flows: Jain's index over a rate x RTT grid (D1.3 App. E.1 Figs. 12-13)";
pub const CLAIMS: &[&str] = &["ABE-9a", "ABE-9b", "ABE-9c"];

const AQMS: [(&str, &str); 2] = [
    ("CoDel", "{ kind = \"codel\", ecn = true }"),
    (
        "PIE",
        "{ kind = \"pie\", ecn = true, ecn_drop_rule = false }",
    ),
];
const CCS: [(&str, f64); 2] = [("reno", 0.5), ("cubic", 0.7)];
/// When the second flow starts, s.
const START2_S: u64 = 10;
const JFI: f64 = 0.95;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Cell {
    cc: usize,
    aqm: usize,
    rate_mbit: u64,
    rtt_ms: u64,
    beta: f64,
}

struct Shape {
    duration_s: u64,
    rates: Vec<u64>,
    rtts: Vec<u64>,
    betas: Vec<f64>,
}

fn shape(quick: bool) -> Shape {
    if quick {
        Shape {
            duration_s: 30,
            rates: vec![10],
            rtts: vec![20, 80],
            betas: vec![0.5, 0.7, 0.75, 0.9],
        }
    } else {
        Shape {
            duration_s: 90,
            rates: vec![1, 5, 10, 20, 40],
            rtts: vec![10, 20, 40, 60, 80, 160, 240, 320],
            betas: vec![0.5, 0.6, 0.7, 0.75, 0.8, 0.9],
        }
    }
}

fn cells(s: &Shape) -> Vec<Cell> {
    let mut out = Vec::new();
    for (cc, _) in CCS.iter().enumerate() {
        for (aqm, _) in AQMS.iter().enumerate() {
            for &rate_mbit in &s.rates {
                for &rtt_ms in &s.rtts {
                    for &beta in &s.betas {
                        out.push(Cell {
                            cc,
                            aqm,
                            rate_mbit,
                            rtt_ms,
                            beta,
                        });
                    }
                }
            }
        }
    }
    out
}

fn scenario_toml(c: &Cell, duration_s: u64) -> String {
    let flow = |start: u64| {
        format!(
            "[[flow]]\nrtt = \"{}ms\"\nstart = \"{start}s\"\ncc = \"{}\"\napp = {{ kind = \"bulk\" }}\n\
             [flow.tcp]\necn = true\nabe = true\nbeta_ecn = {}\n",
            c.rtt_ms, CCS[c.cc].0, c.beta
        )
    };
    format!(
        "name = \"{ID}\"\nduration = \"{duration_s}s\"\nsample_interval = \"100ms\"\n\
         [bottleneck]\nrate = \"{}Mbit\"\nqueue = {}\n{}{}",
        c.rate_mbit,
        AQMS[c.aqm].1,
        flow(0),
        flow(START2_S)
    )
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let s = shape(quick);
    let cells = cells(&s);
    let mut jobs = Vec::with_capacity(cells.len());
    for c in &cells {
        let sc = Scenario::from_toml_str_named(&scenario_toml(c, s.duration_s), ID)
            .map_err(|e| e.to_string())?;
        jobs.push(Job::new(
            format!(
                "{ID} {} {} {} Mbit/s rtt {} beta {}",
                CCS[c.cc].0, AQMS[c.aqm].0, c.rate_mbit, c.rtt_ms, c.beta
            ),
            sc,
            1,
        ));
    }
    Ok(Plan {
        jobs,
        analyse: Box::new(move |runs| {
            // Reduce each run to its convergence time at once (the series are not kept).
            let conv: Vec<(Option<f64>, Option<f64>)> = runs.iter().map(convergence_s).collect();
            analyse(&s, &cells, &conv, quick)
        }),
    })
}

/// Jain's index of two non-negative amounts.
pub fn jain(x: f64, y: f64) -> f64 {
    let sq = x * x + y * y;
    if sq == 0.0 {
        return 1.0;
    }
    (x + y) * (x + y) / (2.0 * sq)
}

/// Seconds from the second flow's start until Jain's index of the cumulative bytes
/// since then reaches [`JFI`]: (first reaches it, reaches it for good); `None` if it
/// never does (is not above it at the end).
fn convergence_s(r: &RunResult) -> (Option<f64>, Option<f64>) {
    let from = START2_S * 1_000_000_000;
    let (Some(a), Some(b)) = (r.flows.first(), r.flows.get(1)) else {
        return (None, None);
    };
    let (mut x, mut y) = (0.0, 0.0);
    let (mut first, mut settled) = (None, None);
    for ((t, ba), (_, bb)) in a.goodput_series.iter().zip(&b.goodput_series) {
        if *t <= from {
            continue;
        }
        x += *ba as f64;
        y += *bb as f64;
        let at = (*t - from) as f64 / 1e9;
        if y > 0.0 && jain(x, y) >= JFI {
            first.get_or_insert(at);
            settled.get_or_insert(at);
        } else {
            settled = None;
        }
    }
    (first, settled)
}

fn analyse(
    s: &Shape,
    cells: &[Cell],
    conv_both: &[(Option<f64>, Option<f64>)],
    quick: bool,
) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    let horizon = (s.duration_s - START2_S) as f64;
    // The first crossing, for the notes: at small BDPs the second flow's initial window
    // alone can lift the index over 0.95 in the first 100 ms, before the flows have
    // shared anything; the claims use the time from which it stays above.
    let first: Vec<Option<f64>> = conv_both.iter().map(|c| c.0).collect();
    let conv: Vec<Option<f64>> = conv_both.iter().map(|c| c.1).collect();
    let conv = &conv[..];
    let censored = conv.iter().filter(|c| c.is_none()).count();
    r.notes.push(format!(
        "Set-up: two flows of one controller with ECN + ABE, the second starting at {START2_S} s, {} s runs, rates {:?} Mbit/s (the paper's 100 Mbit/s left out for time), RTTs {:?} ms, beta_ecn {:?}, CoDel (5/100 ms) and PIE (20 ms, 10 % rule off): {} runs. Convergence: Jain's index of the bytes since the second flow's start ≥ {JFI} from then to the end of the run; ratio = time at beta_ecn / time at the default (NewReno 0.5, CUBIC 0.7) in the same cell. {censored} runs never converged and count as {horizon} s.",
        s.duration_s,
        s.rates,
        s.rtts,
        s.betas,
        cells.len()
    ));
    let time = |c: &Cell| -> f64 {
        cells
            .iter()
            .zip(conv)
            .find(|(x, _)| *x == c)
            .map_or(f64::NAN, |(_, t)| t.unwrap_or(horizon))
    };
    // Ratios per (cc, aqm, beta).
    let ratios = |cc: usize, aqm: usize, beta: f64| -> Vec<f64> {
        let def = CCS[cc].1;
        cells
            .iter()
            .filter(|c| c.cc == cc && c.aqm == aqm && (c.beta - beta).abs() < 1e-9)
            .map(|c| {
                let base = time(&Cell { beta: def, ..*c });
                // Resolution is one 100-ms sample: floor both at it.
                time(c).max(0.1) / base.max(0.1)
            })
            .collect()
    };
    let median = |v: &[f64]| crate::stats::median(v);
    let mut table = String::from(
        "Convergence-time ratio to the default, median [fraction of cells faster / slower than the default]:",
    );
    for (cc, _) in CCS.iter().enumerate() {
        for (aqm, _) in AQMS.iter().enumerate() {
            let _ = write!(table, "\n{} {}:", CCS[cc].0, AQMS[aqm].0);
            for &b in &s.betas {
                if (b - CCS[cc].1).abs() < 1e-9 {
                    continue;
                }
                let v = ratios(cc, aqm, b);
                let faster = v.iter().filter(|x| **x < 1.0).count() as f64 / v.len().max(1) as f64;
                let slower = v.iter().filter(|x| **x > 1.0).count() as f64 / v.len().max(1) as f64;
                let _ = write!(
                    table,
                    " {b}: {:.2} [{:.0} / {:.0} %];",
                    median(&v),
                    faster * 100.0,
                    slower * 100.0
                );
            }
        }
    }
    let mut times = String::from("Median convergence time at the default beta (s):");
    for (cc, _) in CCS.iter().enumerate() {
        for (aqm, _) in AQMS.iter().enumerate() {
            let v: Vec<f64> = cells
                .iter()
                .filter(|c| c.cc == cc && c.aqm == aqm && (c.beta - CCS[cc].1).abs() < 1e-9)
                .map(time)
                .collect();
            let _ = write!(times, " {} {}: {:.1};", CCS[cc].0, AQMS[aqm].0, median(&v));
        }
    }
    r.notes.push(times);
    // The first-crossing reading, per rate, at the default beta and as ratios.
    let mut firsts = String::from(
        "First crossing of 0.95 instead (the literal 'time until'): median time at the default beta (s) by rate, then the median ratio per beta:",
    );
    for (cc, _) in CCS.iter().enumerate() {
        let _ = write!(firsts, "\n{}:", CCS[cc].0);
        for &rate in &s.rates {
            let v: Vec<f64> = cells
                .iter()
                .zip(&first)
                .filter(|(c, _)| {
                    c.cc == cc && c.rate_mbit == rate && (c.beta - CCS[cc].1).abs() < 1e-9
                })
                .map(|(_, t)| t.unwrap_or(horizon))
                .collect();
            let _ = write!(firsts, " {rate} Mbit/s {:.1};", median(&v));
        }
        for &b in &s.betas {
            if (b - CCS[cc].1).abs() < 1e-9 {
                continue;
            }
            let v: Vec<f64> = cells
                .iter()
                .zip(&first)
                .filter(|(c, _)| c.cc == cc && (c.beta - b).abs() < 1e-9)
                .map(|(c, t)| {
                    let base = cells
                        .iter()
                        .zip(&first)
                        .find(|(x, _)| {
                            **x == Cell {
                                beta: CCS[cc].1,
                                ..*c
                            }
                        })
                        .map_or(f64::NAN, |(_, t)| t.unwrap_or(horizon));
                    t.unwrap_or(horizon).max(0.1) / base.max(0.1)
                })
                .collect();
            let _ = write!(firsts, " ratio {b}: {:.2};", median(&v));
        }
    }
    r.notes.push(firsts);
    r.notes.push(table);

    // ABE-9a: median ratio ≤ 1.2 for every beta in [0.7, 0.9] other than the default.
    let mut worst = 0.0f64;
    let mut worst_at = String::new();
    for (cc, _) in CCS.iter().enumerate() {
        for (aqm, _) in AQMS.iter().enumerate() {
            for &b in s.betas.iter().filter(|&&b| (0.7..=0.9).contains(&b)) {
                if (b - CCS[cc].1).abs() < 1e-9 {
                    continue;
                }
                let m = median(&ratios(cc, aqm, b));
                if m > worst || m.is_nan() {
                    worst = m;
                    worst_at = format!("{} {} {b}", CCS[cc].0, AQMS[aqm].0);
                }
            }
        }
    }
    let claim_a = Claim::new(
        "ABE-9a",
        "Median convergence-time ratio ABE / default, worst over controller, AQM and beta_ecn in [0.7, 0.9]",
    )
    .paper_text("convergence is not consistently harmed")
    .ours(worst)
    .tolerance("≤ 1.2")
    .note(format!("worst at {worst_at}"));

    // ABE-9b: CUBIC with beta_ecn well below 0.7 converges more slowly.
    let low: Vec<f64> = s.betas.iter().copied().filter(|&b| b <= 0.6).collect();
    let mut shown = Vec::new();
    let mut ok_b = !low.is_empty();
    for (aqm, _) in AQMS.iter().enumerate() {
        for &b in &low {
            let m = median(&ratios(1, aqm, b));
            ok_b &= m > 1.0;
            shown.push(format!("{} {b}: {m:.2}", AQMS[aqm].0));
        }
    }
    let claim_b = Claim::new(
        "ABE-9b",
        "CUBIC, beta_ecn ≤ 0.6: median convergence-time ratio to 0.7 (each AQM)",
    )
    .paper_text("beta_ecn well below 0.7 increases CUBIC's convergence time")
    .ours_text(&shown.join("; "))
    .tolerance("> 1 for each AQM and beta");
    // ABE-9c: NewReno + PIE at 0.75 improves convergence.
    let v = ratios(0, 1, 0.75);
    let m = median(&v);
    let faster = v.iter().filter(|x| **x < 1.0).count() as f64 / v.len().max(1) as f64;
    let claim_c = Claim::new(
        "ABE-9c",
        "NewReno behind PIE, beta_ecn 0.75: median convergence-time ratio to 0.5 (and the share of cells faster)",
    )
    .paper_text("NewReno + PIE with beta_ecn 0.75 consistently improves convergence")
    .ours(m)
    .tolerance("< 1, and faster in more than half the cells")
    .note(format!("{:.0} % of {} cells faster", faster * 100.0, v.len()));
    if quick {
        let why = "Quick mode runs 2 cells per group (10 Mbit/s, RTT 20 and 80 ms, 30 s): too few for a direction over the grid.";
        r.claims.push(claim_a.not_applicable(why));
        r.claims.push(claim_b.not_applicable(why));
        r.claims.push(claim_c.not_applicable(why));
    } else {
        r.claims.push(claim_a.check(worst <= 1.2));
        r.claims.push(claim_b.check(ok_b));
        r.claims.push(claim_c.check(m < 1.0 && faster > 0.5));
    }

    // Figure: CDFs of the ratio per beta, one chart per controller (solid CoDel,
    // dashed PIE), as the paper's Figs. 12-13.
    for (cc, _) in CCS.iter().enumerate() {
        let mut series = Vec::new();
        for (i, &b) in s.betas.iter().enumerate() {
            if (b - CCS[cc].1).abs() < 1e-9 {
                continue;
            }
            for (aqm, _) in AQMS.iter().enumerate() {
                let mut v = ratios(cc, aqm, b);
                v.sort_by(f64::total_cmp);
                let n = v.len().max(1) as f64;
                let pts = v
                    .iter()
                    .enumerate()
                    .map(|(k, x)| (*x, (k + 1) as f64 / n))
                    .collect();
                series.push(
                    Series::new(
                        &format!("{} {b}", AQMS[aqm].0),
                        categorical(i),
                        if aqm == 0 { Style::Line } else { Style::Dashed },
                        pts,
                    )
                    .as_steps(),
                );
            }
        }
        r.plots.push(Plot {
            figure: Figure::Chart(Chart {
                title: format!(
                    "{}: convergence time / time at beta_ecn {} (Figs. 12-13)",
                    CCS[cc].0, CCS[cc].1
                ),
                x_label: "ratio".into(),
                y_label: "CDF over the rate x RTT cells".into(),
                x_log: true,
                series,
                v_lines: vec![(1.0, "no change".into())],
                ..Chart::default()
            }),
            paper: "Figs. 12-13: distribution of the convergence-time ratio to the default for each beta_ecn; heavy-tailed; CUBIC slower well below 0.7, NewReno + PIE faster at 0.75.".into(),
            ours: format!("{} cells per line; solid: CoDel, dashed: PIE.", s.rates.len() * s.rtts.len()),
        });
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index() {
        assert_eq!(jain(1.0, 1.0), 1.0);
        assert!((jain(1.0, 0.0) - 0.5).abs() < 1e-12);
        // 0.95 is reached at a share ratio of (2 - sqrt(0.76)) / 1.8 = 0.627.
        assert!(jain(1.0, 0.62) < 0.95 && jain(1.0, 0.63) > 0.95);
    }

    #[test]
    fn scenarios_parse() {
        for c in cells(&shape(true)) {
            let sc = Scenario::from_toml_str_named(&scenario_toml(&c, 30), ID).unwrap();
            assert_eq!(sc.flows.len(), 2);
        }
    }
}
