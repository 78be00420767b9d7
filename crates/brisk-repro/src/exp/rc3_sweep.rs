//! The RC3 sweeps on the paper's network (`rc3_net`), each arm against plain TCP on
//! the same arrivals:
//! - `rc3-load` (RC3-3, Fig. 8): 10, 30 and 50 % core load;
//! - `rc3-iw` (RC3-12, Fig. 14a): RC3 against TCP with initial windows 10 and 50;
//! - `rc3-levels` (RC3-8, Fig. 12): 1, 3 and 4 priority levels at 100 Mbit/s × 40 ms.

use super::rc3_net::{self, Net};
use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Job, Plan};
use brisk_sim::fct::{FctStats, Reductions};
use brisk_sim::RunResult;

pub const LOAD_ID: &str = "rc3-load";
pub const LOAD_TITLE: &str = "RC3 at 10, 30 and 50 % load (RC3 §5.1.2, Fig. 8)";
pub const LOAD_CLAIMS: &[&str] = &["RC3-3a", "RC3-3b"];
pub const IW_ID: &str = "rc3-iw";
pub const IW_TITLE: &str =
    "RC3 against larger initial windows, IW 10 and 50 (RC3 §5.1.4, Fig. 14a)";
pub const IW_CLAIMS: &[&str] = &["RC3-12a", "RC3-12b", "RC3-12c"];
pub const LEVELS_ID: &str = "rc3-levels";
pub const LEVELS_TITLE: &str =
    "RC3 with 1, 3 and 4 priority levels at 100 Mbit/s × 40 ms (RC3 §5.1.2, Fig. 12)";
pub const LEVELS_CLAIMS: &[&str] = &["RC3-8a", "RC3-8b"];

/// (seeds, flows per run).
fn sizes(quick: bool) -> (u64, u32) {
    if quick {
        (1, 1000)
    } else {
        (5, 3000)
    }
}

/// One arm: a label, the network and the `tcp` table of every host.
struct Arm {
    label: String,
    net: Net,
    tcp: String,
}

fn jobs(id: &str, arms: &[Arm], seeds: u64) -> Result<Vec<Job>, String> {
    let mut v = Vec::new();
    for seed in 1..=seeds {
        for a in arms {
            v.push(Job::network(
                format!("{id} {} seed {seed}", a.label),
                rc3_net::scenario(id, &a.net, &a.tcp, &[])?,
                seed,
            ));
        }
    }
    Ok(v)
}

/// Pooled statistics per arm (runs are seed-major, arms in order).
fn per_arm(runs: &[RunResult], arms: usize) -> Vec<FctStats> {
    (0..arms)
        .map(|k| {
            let mine: Vec<&RunResult> = runs.iter().skip(k).step_by(arms).collect();
            rc3_net::stats(&mine, None)
        })
        .collect()
}

fn nan(x: Option<f64>) -> f64 {
    x.unwrap_or(f64::NAN)
}

fn set_up(quick: bool, what: &str) -> String {
    let (seeds, flows) = sizes(quick);
    format!(
        "Set-up: rc3-base's network and TCP (docs/mechanisms/rc3.md){what}; {seeds} seed(s) × {flows} downloads per arm{}, arms sharing arrivals per seed, pooled.",
        if quick { " (--quick; the full run has 5 × 3000)" } else { "" }
    )
}

pub fn plan_load(quick: bool) -> Result<Plan, String> {
    let (seeds, flows) = sizes(quick);
    let mut arms = Vec::new();
    for load in [0.1, 0.3, 0.5] {
        for (name, extra) in [("TCP", ""), ("RC3", "rc3 = true")] {
            arms.push(Arm {
                label: format!("{name} load {load}"),
                net: Net {
                    load,
                    ..Net::base(flows)
                },
                tcp: rc3_net::tcp(extra),
            });
        }
    }
    let jobs = jobs(LOAD_ID, &arms, seeds)?;
    Ok(Plan {
        jobs,
        analyse: Box::new(move |runs| analyse_load(runs, quick)),
    })
}

fn analyse_load(runs: &[RunResult], quick: bool) -> ExperimentResult {
    let mut r = ExperimentResult::new(LOAD_ID, LOAD_TITLE);
    let s = per_arm(runs, 6);
    let red: Vec<Reductions> = (0..3)
        .map(|i| s[2 * i + 1].reductions_from(&s[2 * i]))
        .collect();
    let flows: Vec<f64> = red.iter().map(|x| nan(x.over_flows)).collect();
    let bytes: Vec<f64> = red.iter().map(|x| nan(x.over_bytes)).collect();
    for (id, what, ours, paper) in [
        ("RC3-3a", "over flows", &flows, [45.56, 43.54, 41.44]),
        ("RC3-3b", "over bytes", &bytes, [78.36, 74.35, 64.88]),
    ] {
        let falls = ours[0] > ours[1] && ours[1] > ours[2];
        let near = ours.iter().zip(paper).all(|(o, p)| (o - p).abs() <= 8.0);
        r.claims.push(
            Claim::new(id, &format!("reduction {what} at 10 / 30 / 50 % load"))
                .paper_text(&format!(
                    "{:.2} / {:.2} / {:.2}",
                    paper[0], paper[1], paper[2]
                ))
                .ours_text(&format!("{:.1} / {:.1} / {:.1}", ours[0], ours[1], ours[2]))
                .unit("%")
                .tolerance("falls with load; each ±8 pp")
                .check(falls && near),
        );
    }
    let small: Vec<String> = red
        .iter()
        .map(|x| {
            format!(
                "{:.1}",
                x.bins.first().copied().flatten().unwrap_or(f64::NAN)
            )
        })
        .collect();
    r.notes
        .push(set_up(quick, ", at 10, 30 and 50 % mean core load"));
    r.notes.push(format!(
        "Flows of at most 4 packets gain {} % at 10 / 30 / 50 % (the paper: small flows gain more at higher load, as large flows finish sooner at low priority).",
        small.join(" / ")
    ));
    r
}

pub fn plan_iw(quick: bool) -> Result<Plan, String> {
    let (seeds, flows) = sizes(quick);
    let arms: Vec<Arm> = [
        ("TCP IW 4", rc3_net::tcp("")),
        ("RC3", rc3_net::tcp("rc3 = true")),
        (
            "TCP IW 10",
            rc3_net::tcp("").replace("initial_cwnd = 4", "initial_cwnd = 10"),
        ),
        (
            "TCP IW 50",
            rc3_net::tcp("").replace("initial_cwnd = 4", "initial_cwnd = 50"),
        ),
    ]
    .into_iter()
    .map(|(label, tcp)| Arm {
        label: label.into(),
        net: Net::base(flows),
        tcp,
    })
    .collect();
    let jobs = jobs(IW_ID, &arms, seeds)?;
    Ok(Plan {
        jobs,
        analyse: Box::new(move |runs| analyse_iw(runs, quick)),
    })
}

fn analyse_iw(runs: &[RunResult], quick: bool) -> ExperimentResult {
    let mut r = ExperimentResult::new(IW_ID, IW_TITLE);
    let s = per_arm(runs, 4);
    let red: Vec<Reductions> = (1..4).map(|i| s[i].reductions_from(&s[0])).collect();
    let (rc3, iw10, iw50) = (
        nan(red[0].over_flows),
        nan(red[1].over_flows),
        nan(red[2].over_flows),
    );
    let order = rc3 > iw50 && iw50 > iw10 && iw10 > 0.0;
    let near = [(rc3, 44.0), (iw10, 13.0), (iw50, 24.0)]
        .iter()
        .all(|(o, p)| (o - p).abs() <= 8.0);
    r.claims.push(
        Claim::new(
            "RC3-12a",
            "mean-FCT reduction over flows: RC3 / IW 10 / IW 50",
        )
        .paper_text("44 / 13 / 24")
        .ours_text(&format!("{rc3:.1} / {iw10:.1} / {iw50:.1}"))
        .unit("%")
        .tolerance("RC3 > IW50 > IW10 > 0; each ±8 pp")
        .check(order && near),
    );
    let small = |x: &Reductions| x.bins.first().copied().flatten().unwrap_or(f64::NAN);
    let (s10, s50) = (small(&red[1]), small(&red[2]));
    r.claims.push(
        Claim::new("RC3-12b", "larger IW, flows of at most 4 packets")
            .paper_text("a penalty (more queueing)")
            .ours_text(&format!("IW 10 {s10:.1} %, IW 50 {s50:.1} %"))
            .unit("%")
            .tolerance("reduction < 0 for IW 10 and IW 50")
            .check(s10 < 0.0 && s50 < 0.0),
    );
    let bins: Vec<f64> = red[0].bins.iter().map(|b| nan(*b)).collect();
    let min = bins
        .iter()
        .copied()
        .filter(|b| b.is_finite())
        .fold(f64::INFINITY, f64::min);
    r.claims.push(
        Claim::new("RC3-12c", "RC3's reduction in every size bin")
            .paper_text("never worse than TCP")
            .ours_text(&format!("min {min:.1} %"))
            .unit("%")
            .tolerance("≥ 0 in every bin")
            .check(min >= 0.0),
    );
    r.notes.push(set_up(
        quick,
        "; arms: TCP IW 4 (the baseline), RC3 (IW 4), TCP IW 10, TCP IW 50",
    ));
    r
}

pub fn plan_levels(quick: bool) -> Result<Plan, String> {
    let (seeds, flows) = sizes(quick);
    let slow = |flows| Net {
        rate_mbps: 100,
        ..Net::base(flows)
    };
    let arms: Vec<Arm> = [
        ("TCP", String::new()),
        ("RC3 1 level", "rc3 = { levels = [40] }".to_string()),
        (
            "RC3 3 levels",
            "rc3 = { levels = [40, 400, 4000] }".to_string(),
        ),
        (
            "RC3 4 levels",
            "rc3 = { levels = [10, 100, 1000, 10000] }".to_string(),
        ),
    ]
    .into_iter()
    .map(|(label, extra)| Arm {
        label: label.into(),
        net: slow(flows),
        tcp: rc3_net::tcp(&extra),
    })
    .collect();
    let jobs = jobs(LEVELS_ID, &arms, seeds)?;
    Ok(Plan {
        jobs,
        analyse: Box::new(move |runs| analyse_levels(runs, quick)),
    })
}

fn analyse_levels(runs: &[RunResult], quick: bool) -> ExperimentResult {
    let mut r = ExperimentResult::new(LEVELS_ID, LEVELS_TITLE);
    let s = per_arm(runs, 4);
    let red: Vec<Reductions> = (1..4).map(|i| s[i].reductions_from(&s[0])).collect();
    for (id, what, get, paper) in [
        (
            "RC3-8a",
            "over flows",
            (|x: &Reductions| nan(x.over_flows)) as fn(&Reductions) -> f64,
            [24.55, 33.98, 32.94],
        ),
        (
            "RC3-8b",
            "over bytes",
            |x: &Reductions| nan(x.over_bytes),
            [28.22, 36.05, 37.19],
        ),
    ] {
        let o: Vec<f64> = red.iter().map(get).collect();
        let shape = o[0] < o[1] && o[0] < o[2] && (o[1] - o[2]).abs() <= 3.0;
        let near = o.iter().zip(paper).all(|(a, p)| (a - p).abs() <= 8.0);
        r.claims.push(
            Claim::new(id, &format!("reduction {what}: 1 / 3 / 4 levels"))
                .paper_text(&format!(
                    "{:.2} / {:.2} / {:.2}",
                    paper[0], paper[1], paper[2]
                ))
                .ours_text(&format!("{:.1} / {:.1} / {:.1}", o[0], o[1], o[2]))
                .unit("%")
                .tolerance("1 < 3 ≈ 4 (within 3 pp); each ±8 pp")
                .check(shape && near),
        );
    }
    r.notes.push(set_up(
        quick,
        " at 100 Mbit/s (BDP 500 KB, router buffers 500 KB); levels (40) with the last level absorbing the rest, (40, 400, 4000) and (10, 100, 1000, 10000)",
    ));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_plans_have_one_run_per_arm() {
        assert_eq!(plan_load(true).unwrap().jobs.len(), 6);
        assert_eq!(plan_iw(true).unwrap().jobs.len(), 4);
        let p = plan_levels(true).unwrap();
        assert_eq!(p.jobs.len(), 4);
        let levels = |k: usize| {
            let (_, c) = &p.jobs[k].net.as_ref().unwrap().workload.class_configs()[0];
            c.transmit.rc3.as_ref().map(|r| r.levels.levels())
        };
        assert_eq!(
            [levels(0), levels(1), levels(2), levels(3)],
            [None, Some(1), Some(3), Some(4)]
        );
    }
}
