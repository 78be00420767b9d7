//! rc3-critical: "traditional QoS" against RC3 for a tenth of the flows (NSDI 2014
//! §5.1.4, Fig. 14b; claim RC3-13; spec A14). rc3-base's network and load; each flow
//! is "critical" with probability 0.1, drawn from a stream of its own, so all three
//! arms have the same arrivals and the same critical flows per seed:
//!
//! 0. every flow on TCP at DSCP 0 (band 0);
//! 1. critical flows on TCP at DSCP 0, every other packet at DSCP 1: the critical
//!    flows' packets (data and ACKs, both ends run the class's TCP) are one band above
//!    everything else (spec A14: "critical TCP goes to band 0; everything else shifts
//!    down by one band");
//! 2. critical flows on RC3 (priority 0 plus RLP copies at 1-3), the rest TCP at 0.

use super::rc3_net::{self, Net};
use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Job, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{Chart, Series, Style, BLUE, GREY, RED};
use brisk_sim::fct::FctStats;
use brisk_sim::RunResult;

pub const ID: &str = "rc3-critical";
pub const TITLE: &str =
    "Critical flows at high priority against critical flows on RC3 (RC3 §5.1.4, Fig. 14b)";
pub const CLAIMS: &[&str] = &["RC3-13a", "RC3-13b", "RC3-13c", "RC3-13d"];

/// The critical share (the paper's 10 %).
pub const CRITICAL: f64 = 0.1;

fn sizes(quick: bool) -> (u64, u32) {
    // (seeds, flows per run): a tenth are critical.
    if quick {
        (2, 1500)
    } else {
        (10, 3000)
    }
}

const ARMS: [&str; 3] = ["all TCP", "critical high priority", "critical RC3"];

pub fn plan(quick: bool) -> Result<Plan, String> {
    let (seeds, flows) = sizes(quick);
    let net = Net::base(flows);
    let class = |tcp: &str| {
        format!("name = \"critical\"\nflows = {CRITICAL}\ncc = \"reno\"\ntcp = {{ {tcp} }}")
    };
    let plain = rc3_net::tcp("");
    let arms = [
        (plain.clone(), class(&plain)),
        (rc3_net::tcp("dscp = 1"), class(&plain)),
        (plain.clone(), class(&rc3_net::tcp("rc3 = true"))),
    ];
    let mut jobs = Vec::new();
    for seed in 1..=seeds {
        for (name, (base, critical)) in ARMS.iter().zip(&arms) {
            jobs.push(Job::network(
                format!("{ID} {name} seed {seed}"),
                rc3_net::scenario(ID, &net, base, std::slice::from_ref(critical))?,
                seed,
            ));
        }
    }
    Ok(Plan {
        jobs,
        analyse: Box::new(move |runs| analyse(runs, quick)),
    })
}

fn analyse(runs: &[RunResult], quick: bool) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    let arm = |k: usize| -> Vec<&RunResult> { runs.iter().skip(k).step_by(3).collect() };
    let arms = [arm(0), arm(1), arm(2)];
    let crit: Vec<FctStats> = arms.iter().map(|a| rc3_net::stats(a, Some(1))).collect();
    let rest: Vec<FctStats> = arms.iter().map(|a| rc3_net::stats(a, Some(0))).collect();
    let broken = rc3_net::broken(&runs.iter().collect::<Vec<_>>());
    let ms = |s: &FctStats| s.mean_fct_s.map_or(f64::NAN, |x| x * 1e3);
    let (c0, c1, c2) = (ms(&crit[0]), ms(&crit[1]), ms(&crit[2]));
    let (n0, n1, n2) = (ms(&rest[0]), ms(&rest[1]), ms(&rest[2]));
    let pct = |a: f64, b: f64| (b / a - 1.0) * 100.0;
    let ok = broken == 0;
    r.claims.push(
        Claim::new(
            "RC3-13a",
            "critical flows' mean FCT: RC3 < high priority < regular",
        )
        .paper_text("78 < 119 < 126 ms")
        .ours_text(&format!("{c2:.1} / {c1:.1} / {c0:.1} ms"))
        .unit("ms")
        .tolerance("strict order")
        .check(c2 < c1 && c1 < c0 && ok),
    );
    let red_rc3 = -pct(c0, c2);
    r.claims.push(
        Claim::new("RC3-13b", "critical flows' mean FCT: reduction with RC3")
            .paper(38.1)
            .ours(red_rc3)
            .unit("%")
            .tolerance("±8 pp")
            .check((red_rc3 - 38.1).abs() <= 8.0 && ok)
            .note(format!(
                "{c0:.1} → {c2:.1} ms (paper 126 → 78 ms); with high priority {:.1} % (paper 5.6 %)",
                -pct(c0, c1)
            )),
    );
    let (d1, d2) = (pct(n0, n1), pct(n0, n2));
    r.claims.push(
        Claim::new(
            "RC3-13c",
            "non-critical flows' mean FCT when critical flows go at high priority",
        )
        .paper_text("< 2 % worse")
        .ours(d1)
        .unit("%")
        .tolerance("change within ±2 %")
        .check(d1.abs() <= 2.0 && ok)
        .note(format!("{n0:.1} → {n1:.1} ms")),
    );
    r.claims.push(
        Claim::new(
            "RC3-13d",
            "non-critical flows' mean FCT when critical flows use RC3",
        )
        .paper_text("< 1 % better")
        .ours(d2)
        .unit("%")
        .tolerance("change within ±2 %")
        .check(d2.abs() <= 2.0 && ok)
        .note(format!("{n0:.1} → {n2:.1} ms")),
    );
    let counts: Vec<String> = crit
        .iter()
        .zip(&rest)
        .zip(ARMS)
        .map(|((c, n), a)| format!("{a}: {} critical, {} other", c.completed, n.completed))
        .collect();
    let bw = |s: &FctStats| s.byte_weighted_fct_s.map_or(f64::NAN, |x| x * 1e3);
    r.notes.push(format!(
        "Byte-weighted mean FCT of the critical flows: {:.1} / {:.1} / {:.1} ms (regular / high priority / RC3); of the others {:.1} / {:.1} / {:.1} ms. Flows measured (after warm-up, pooled over seeds): {}.",
        bw(&crit[0]),
        bw(&crit[1]),
        bw(&crit[2]),
        bw(&rest[0]),
        bw(&rest[1]),
        bw(&rest[2]),
        counts.join("; ")
    ));
    let (seeds, flows) = sizes(quick);
    r.notes.push(format!(
        "Set-up (spec A14; our representation): rc3-base's network, TCP and load (Internet2-like, 1 Gbit/s, 30 % load, BDP strict-priority buffers with push-out, 4 bands, NewReno + SACK, IW 4, downloads). Each flow is critical with probability {CRITICAL}, drawn from its own seeded stream (`[[workload.class]]` with `flows`), so the three arms share arrivals and critical flows. Both ends of a critical flow run the class's TCP (the critical sender accepts on the class's port). High priority: `tcp.dscp = 1` on every host's default TCP (every non-critical packet, data, ACKs and handshakes, in band 1) and DSCP 0 for the critical flows (band 0), so only the critical flows' packets sit above the rest. RC3 arm: the critical flows' class turns on RC3 (copies at DSCP 1-3), everything else TCP at DSCP 0. {seeds} seeds × {flows} flows per arm{}, first 10 % of the arrival span left out. Flows broken or unfinished: {broken}.",
        if quick { " (--quick: fewer seeds and flows than the full run's 10 × 3000)" } else { "" }
    ));
    let bins = |s: &FctStats| -> Vec<(f64, f64)> {
        s.bins
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.mean_fct_s.map(|m| (rc3_net::bin_mid(i) / 1e3, m * 1e3)))
            .collect()
    };
    r.plots.push(Plot {
        figure: Figure::Chart(Chart {
            title: "Critical flows' mean FCT per size (Fig. 14b)".into(),
            x_label: "flow size (KB, log)".into(),
            y_label: "mean FCT (ms, log)".into(),
            x_log: true,
            y_log: true,
            series: vec![
                Series::new("regular TCP", GREY, Style::Line, bins(&crit[0])),
                Series::new("high-priority TCP", RED, Style::Line, bins(&crit[1])),
                Series::new("RC3", BLUE, Style::Line, bins(&crit[2])),
            ],
            ..Chart::default()
        }),
        paper: "Fig. 14b: critical flows 126 ms regular, 119 ms at high priority, 78 ms on RC3 (means); per-size values not in the text.".into(),
        ours: "Critical flows only, pooled over seeds; size bins of 4, 10, 40, 100, 440, 1000, 4440 packets.".into(),
    });
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arms_put_critical_flows_and_the_rest_where_spec_a14_says() {
        let p = plan(true).unwrap();
        assert_eq!(p.jobs.len(), 6);
        let cfg = |k: usize| p.jobs[k].net.as_ref().unwrap().workload.class_configs();
        for k in 0..3 {
            let c = cfg(k);
            assert_eq!(c.len(), 2);
            let (base, crit) = (&c[0].1, &c[1].1);
            assert_eq!(crit.dscp, 0);
            assert_eq!(base.dscp, u8::from(k == 1));
            assert_eq!(crit.transmit.rc3.is_some(), k == 2);
            assert!(base.transmit.rc3.is_none());
            let cls = &p.jobs[k].net.as_ref().unwrap().workload.classes[0];
            assert_eq!(cls.flows, Some(CRITICAL));
        }
    }
}
