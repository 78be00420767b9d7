//! `brisk run --seeds A..B`: the same scenario under several seeds, each metric
//! reported as mean and 95 % confidence interval (Student's t, two-sided) across seeds,
//! per flow and for the bottleneck, in the table and the JSON.

use brisk_sim::{RunResult, Scenario};
use serde_json::{json, Value};
use std::fmt::Write;

/// Parses `A..B` (inclusive) or `A..=B`; at most 1000 seeds.
pub fn parse_range(s: &str) -> Result<std::ops::RangeInclusive<u64>, String> {
    brisk_sweep::spec::seed_range(s, 1000)
}

pub use brisk_sweep::stats::mean_ci;

fn stat(xs: &[f64]) -> Value {
    let (m, ci, n) = mean_ci(xs);
    let num = |x: f64| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number);
    json!({ "mean": num(m), "ci95": num(ci), "n": n })
}

type Metric = (
    &'static str,
    &'static str,
    f64,
    fn(&brisk_sim::FlowResult) -> Option<f64>,
);

/// Per-flow metrics: JSON key, table label, display scale, extractor.
const FLOW_METRICS: &[Metric] = &[
    ("goodput_bps", "goodput Mbit/s", 1e-6, |f| {
        Some(f.goodput_bps)
    }),
    ("rtt_mean_ms", "rtt mean ms", 1.0, |f| {
        f.rtt.map(|r| r.mean / 1e6)
    }),
    ("rtt_p99_ms", "rtt p99 ms", 1.0, |f| {
        f.rtt.map(|r| r.p99 as f64 / 1e6)
    }),
    ("owd_p95_ms", "owd p95 ms", 1.0, |f| {
        f.one_way_delay.map(|d| d.p95_ns as f64 / 1e6)
    }),
    ("jitter_ms", "jitter ms", 1.0, |f| {
        f.one_way_delay.and_then(|d| d.jitter_ns).map(|j| j / 1e6)
    }),
    ("retransmitted_packets", "retrans", 1.0, |f| {
        Some(f.retransmitted_packets as f64)
    }),
    ("fct_s", "fct s", 1.0, |f| f.fct.map(|d| d.as_secs_f64())),
    ("record_latency_p99_ms", "record p99 ms", 1.0, |f| {
        f.record_latency.map(|r| r.p99 as f64 / 1e6)
    }),
];

/// Runs `sc` for every seed in `seeds`.
pub fn run_all(
    sc: &Scenario,
    seeds: std::ops::RangeInclusive<u64>,
) -> anyhow::Result<Vec<RunResult>> {
    seeds
        .map(|s| brisk_sim::run(sc, s).map_err(anyhow::Error::from))
        .collect()
}

fn column(
    runs: &[RunResult],
    flow: usize,
    f: fn(&brisk_sim::FlowResult) -> Option<f64>,
) -> Vec<f64> {
    runs.iter()
        .map(|r| r.flows.get(flow).and_then(f).unwrap_or(f64::NAN))
        .collect()
}

/// Whether every run gave the same results (its `--json` but the seed): the scenario
/// draws nothing at random, so the seeds repeat one run and say nothing about spread.
pub fn deterministic(runs: &[RunResult]) -> bool {
    let strip = |r: &RunResult| {
        let mut v = r.to_json();
        if let Some(o) = v.as_object_mut() {
            o.remove("seed");
        }
        v
    };
    match runs.split_first() {
        Some((first, rest)) if !rest.is_empty() => {
            let a = strip(first);
            rest.iter().all(|r| strip(r) == a)
        }
        _ => false,
    }
}

pub fn to_json(sc: &Scenario, seeds: &[u64], runs: &[RunResult]) -> Value {
    let nflows = runs.first().map_or(0, |r| r.flows.len());
    let flows: Vec<Value> = (0..nflows)
        .map(|i| {
            let mut o = json!({ "id": i, "cc": runs[0].flows[i].cc });
            for (key, _, _, f) in FLOW_METRICS {
                o[*key] = stat(&column(runs, i, *f));
            }
            o
        })
        .collect();
    let b = |f: fn(&RunResult) -> f64| stat(&runs.iter().map(f).collect::<Vec<_>>());
    json!({
        "scenario": sc.name,
        "seeds": seeds,
        "deterministic": deterministic(runs),
        "flows": flows,
        "bottleneck": {
            "utilization": b(|r| r.bottleneck.utilization),
            "drops": b(|r| r.bottleneck.drops as f64),
            "queue_delay_mean_ms": b(|r| r.bottleneck.queue_delay.map_or(f64::NAN, |q| q.mean / 1e6)),
        },
        "jain_fairness": b(|r| r.jain_fairness()),
    })
}

pub fn table(sc: &Scenario, seeds: &[u64], runs: &[RunResult]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "scenario {}  seeds {}..{} ({} runs)  mean ± 95 % CI (Student's t) across seeds",
        sc.name,
        seeds.first().copied().unwrap_or(0),
        seeds.last().copied().unwrap_or(0),
        runs.len()
    );
    let det = deterministic(runs);
    if det {
        let _ = writeln!(
            s,
            "deterministic: every seed gave the same run (the scenario draws nothing at \
             random: no random loss, jitter or corruption), so there is no spread to report"
        );
    }
    let cell = |xs: &[f64], scale: f64| {
        let (m, ci, n) = mean_ci(xs);
        match n {
            0 => "-".to_string(),
            1 => format!("{:.3}", m * scale),
            // Equal in every seed: a CI of ± 0 would read as a measured spread (and
            // in a deterministic run every value is; the line above says so).
            _ if ci == 0.0 && det => format!("{:.3}", m * scale),
            _ if ci == 0.0 => format!("{:.3} (same in every seed)", m * scale),
            _ => format!("{:.3} ± {:.3}", m * scale, ci * scale),
        }
    };
    let nflows = runs.first().map_or(0, |r| r.flows.len());
    for i in 0..nflows {
        let _ = writeln!(s, "flow {i} ({})", runs[0].flows[i].cc);
        for (_, label, scale, f) in FLOW_METRICS {
            let col = column(runs, i, *f);
            if col.iter().any(|x| x.is_finite()) {
                let _ = writeln!(s, "  {label:<16} {}", cell(&col, *scale));
            }
        }
    }
    let col = |f: fn(&RunResult) -> f64| runs.iter().map(f).collect::<Vec<_>>();
    let _ = writeln!(s, "bottleneck");
    let _ = writeln!(
        s,
        "  {:<16} {}",
        "utilization %",
        cell(&col(|r| r.bottleneck.utilization), 100.0)
    );
    let _ = writeln!(
        s,
        "  {:<16} {}",
        "drops",
        cell(&col(|r| r.bottleneck.drops as f64), 1.0)
    );
    let _ = writeln!(
        s,
        "  {:<16} {}",
        "queue delay ms",
        cell(
            &col(|r| r.bottleneck.queue_delay.map_or(f64::NAN, |q| q.mean / 1e6)),
            1.0
        )
    );
    if nflows > 1 {
        let _ = writeln!(
            s,
            "  {:<16} {}",
            "Jain's index",
            cell(&col(|r| r.jain_fairness()), 1.0)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_inclusively_and_bad_ones_say_why() {
        assert_eq!(parse_range("1..10").unwrap(), 1..=10);
        assert_eq!(parse_range("3..=3").unwrap(), 3..=3);
        assert!(parse_range("5..1").unwrap_err().contains("empty"));
        assert!(parse_range("1..5000").unwrap_err().contains("1000"));
        assert!(parse_range("x").unwrap_err().contains("1..10"));
    }
}
