//! cc-map: every congestion controller brisk has on Pantheon's figure (issue 35 §3):
//! throughput against 95th-percentile one-way delay, the delay axis reversed (better
//! is up and to the right), one chart per path, each controller's seeds drawn as the
//! mean with its 1-σ covariance ellipse as Pantheon draws them (Yan et al., USENIX ATC
//! 2018, Fig. 3).
//!
//! The controllers are `crate::roster::CONTROLLERS` (the one list; a controller not in
//! this build is left out and named in a note), plus the thesis's delay-correlation
//! layer over CUBIC (`delay_correlation = true`; refused over BBR, see [`DC_ROWS`]),
//! its own comparison now against the real BBR. One bulk flow at a time over each path:
//! - deep drop-tail: 20 Mbit/s, RTT 40 ms, a 200-ms buffer (5 BDPs);
//! - shallow buffer: 20 Mbit/s, RTT 40 ms, 20 packets (0.3 BDP);
//! - lossy link: 20 Mbit/s, RTT 40 ms, 1 % independent loss, a 1-BDP buffer;
//! - LTE-like: `traces/lte-like.down` (Mahimahi, 1-40 Mbit/s with outages), RTT 40 ms,
//!   a 250-packet drop-tail (as Pantheon's and Sprout's cellular paths, deep);
//! - GEO-like: 10 Mbit/s, RTT 600 ms, a 1-BDP (600-ms) buffer;
//! - CoDel: 20 Mbit/s, RTT 40 ms, CoDel (5 ms / 100 ms) with ECN marking.
//!
//! Seeds: every path has up to 1 ms of non-reordering per-packet jitter (a seeded
//! draw), so seeds differ as repeated runs over a real path do; the LTE trace and the
//! loss are fixed per path and drawn per seed respectively. DCTCP runs with ECN on
//! (its roster entry): behind CoDel it sees marks, elsewhere it falls back to loss.

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Job, Plan, Plot};
use crate::figure::Figure;
use crate::plot::covariance_ellipse;
use crate::roster;
use crate::svg::{categorical_mark, Chart, Series, Style};
use brisk_sim::{RunResult, Scenario};
use std::fmt::Write;
use std::sync::Arc;

pub const ID: &str = "cc-map";
pub const TITLE: &str =
    "Every controller on Pantheon's map: throughput against p95 one-way delay over six paths (issue 35)";
pub const CLAIMS: &[&str] = &["CCMAP-1", "CCMAP-2", "CCMAP-3", "CCMAP-4", "CCMAP-5"];

/// The delay-correlation layer's rows: (label, base `cc`).
/// The delay-correlation layer over CUBIC only: brisk refuses it over BBR (BBR sets
/// cwnd itself on every ACK, Linux `cong_control`, and the layer acts through
/// `cong_avoid` and ssthresh), so the thesis's comparison is CUBIC+DC against the real
/// BBR, both on this page.
const DC_ROWS: [(&str, &str); 1] = [("CUBIC+DC", "cubic")];

/// A path: label, `[bottleneck]` body (without `rate` for the trace), RTT ms, whether
/// it is the LTE trace, the rate in Mbit/s for the axis (the trace's peak).
struct Path {
    label: &'static str,
    link: &'static str,
    rtt_ms: u64,
    trace: bool,
    /// Longer runs (the GEO path's slow start lasts seconds).
    long: bool,
}

const PATHS: [Path; 6] = [
    Path {
        label: "deep drop-tail",
        link: "rate = \"20Mbit\"\nqueue = { kind = \"droptail\", time = \"200ms\" }\n",
        rtt_ms: 40,
        trace: false,
        long: false,
    },
    Path {
        label: "shallow buffer",
        link: "rate = \"20Mbit\"\nqueue = { kind = \"droptail\", packets = 20 }\n",
        rtt_ms: 40,
        trace: false,
        long: false,
    },
    Path {
        label: "lossy link",
        link: "rate = \"20Mbit\"\nqueue = { kind = \"droptail\", packets = 67 }\nloss = { kind = \"bernoulli\", p = 0.01 }\n",
        rtt_ms: 40,
        trace: false,
        long: false,
    },
    Path {
        label: "LTE-like trace",
        link: "queue = { kind = \"droptail\", packets = 250 }\n",
        rtt_ms: 40,
        trace: true,
        long: false,
    },
    Path {
        label: "GEO-like",
        link: "rate = \"10Mbit\"\nqueue = { kind = \"droptail\", time = \"600ms\" }\n",
        rtt_ms: 600,
        trace: false,
        long: true,
    },
    Path {
        label: "CoDel",
        link: "rate = \"20Mbit\"\nqueue = { kind = \"codel\", ecn = true }\n",
        rtt_ms: 40,
        trace: false,
        long: false,
    },
];

/// The LTE-like trace, shipped with the binary so the experiment runs anywhere.
const LTE_TRACE: &str = include_str!("../../../../traces/lte-like.down");

/// One row of the map: label, `cc`, extra `[flow.tcp]` lines.
#[derive(Clone, Debug)]
struct Row {
    label: String,
    cc: &'static str,
    tcp: String,
}

/// The built controllers, then the delay-correlation rows.
fn rows() -> Vec<Row> {
    let mut v: Vec<Row> = roster::built()
        .map(|(c, _)| Row {
            label: c.label.to_string(),
            cc: c.cc,
            tcp: c.tcp.to_string(),
        })
        .collect();
    for (label, cc) in DC_ROWS {
        if roster::by_name(cc).is_some_and(|c| c.algorithm().is_some()) {
            v.push(Row {
                label: label.to_string(),
                cc,
                tcp: "delay_correlation = true\n".into(),
            });
        }
    }
    v
}

/// (duration s, long-path duration s, seeds).
fn shape(quick: bool) -> (u64, u64, u64) {
    if quick {
        (10, 20, 2)
    } else {
        (30, 60, 5)
    }
}

#[derive(Clone, Copy, Debug)]
struct Cell {
    row: usize,
    path: usize,
    seed: u64,
}

fn scenario_toml(row: &Row, p: &Path, duration_s: u64) -> String {
    // The trace replaces `rate`; a placeholder rate keeps the text parseable and is
    // removed when the trace is attached.
    let link = if p.trace {
        format!("rate = \"20Mbit\"\n{}", p.link)
    } else {
        p.link.to_string()
    };
    format!(
        "name = \"{ID}\"\nduration = \"{duration_s}s\"\nsample_interval = \"1s\"\n\
         [bottleneck]\n{link}jitter = {{ max = \"1ms\", reorder = false }}\n\
         [[flow]]\nrtt = \"{}ms\"\ncc = \"{}\"\napp = {{ kind = \"bulk\" }}\n[flow.tcp]\n{}",
        p.rtt_ms, row.cc, row.tcp
    )
}

fn cells(quick: bool, n_rows: usize) -> Vec<Cell> {
    let (_, _, seeds) = shape(quick);
    let mut v = Vec::new();
    for path in 0..PATHS.len() {
        for row in 0..n_rows {
            for seed in 1..=seeds {
                v.push(Cell { row, path, seed });
            }
        }
    }
    v
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let (dur, long_dur, _) = shape(quick);
    let rows = rows();
    let cells = cells(quick, rows.len());
    let trace = Arc::new(
        brisk_net::mahimahi::DeliveryTrace::parse(LTE_TRACE)
            .map_err(|e| format!("traces/lte-like.down: {e}"))?,
    );
    let mut jobs = Vec::new();
    for c in &cells {
        let p = &PATHS[c.path];
        let row = &rows[c.row];
        let d = if p.long { long_dur } else { dur };
        let mut sc = Scenario::from_toml_str_named(&scenario_toml(row, p, d), ID)
            .map_err(|e| e.to_string())?;
        if p.trace {
            sc.bottleneck.rate = None;
            sc.bottleneck.trace = Some(brisk_scenario::link::TraceFile::loaded(
                "traces/lte-like.down",
                trace.clone(),
            ));
        }
        let label = format!("{ID} {} {} seed {}", row.label, p.label, c.seed);
        jobs.push(Job::new(label, sc, c.seed).lean());
    }
    Ok(Plan {
        jobs,
        analyse: Box::new(move |runs| analyse(&rows, &cells, runs)),
    })
}

/// One run's point: (p95 one-way delay ms, goodput Mbit/s).
fn point(r: &RunResult) -> Option<(f64, f64)> {
    let f = r.flows.first()?;
    let owd = f.one_way_delay.as_ref()?;
    Some((owd.p95_ns as f64 / 1e6, f.goodput_bps / 1e6))
}

/// Mean and sample standard deviation of `v`.
fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len().max(1) as f64;
    let m = v.iter().sum::<f64>() / n;
    let sd = if v.len() > 1 {
        (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    (m, sd)
}

/// Per (row, path): the seeds' points.
type Points = Vec<Vec<Vec<(f64, f64)>>>;

fn analyse(rows: &[Row], cells: &[Cell], runs: &[RunResult]) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    let mut pts: Points = vec![vec![Vec::new(); PATHS.len()]; rows.len()];
    for (c, run) in cells.iter().zip(runs) {
        if let Some(p) = point(run) {
            pts[c.row][c.path].push(p);
        }
    }
    let seeds = cells.iter().map(|c| c.seed).max().unwrap_or(0);
    let missing: Vec<&str> = roster::CONTROLLERS
        .iter()
        .filter(|c| c.algorithm().is_none())
        .map(|c| c.label)
        .collect();
    r.notes.push(format!(
        "Set-up: one bulk flow per run, {seeds} seeds per point (≤ 1 ms seeded non-reordering jitter on every path), goodput over the whole run including slow start, p95 of the data packets' one-way delay (sender host to receiver host, propagation included: 20 ms on the 40-ms paths, 300 ms on GEO). Paths: deep drop-tail (20 Mbit/s, 40 ms, 200-ms buffer), shallow (20 packets), lossy (1 % loss, 1 BDP), LTE-like (traces/lte-like.down, 250 packets), GEO-like (10 Mbit/s, 600 ms, 1 BDP), CoDel (ECN). Controllers: crate::roster::CONTROLLERS as built here{}; +DC is the delay-correlation layer over the base.",
        if missing.is_empty() {
            String::new()
        } else {
            format!(" (not built here yet: {})", missing.join(", "))
        }
    ));
    let stat = |row: usize, path: usize| -> Option<((f64, f64), (f64, f64))> {
        let v = &pts[row][path];
        if v.is_empty() {
            return None;
        }
        let d: Vec<f64> = v.iter().map(|p| p.0).collect();
        let g: Vec<f64> = v.iter().map(|p| p.1).collect();
        Some((mean_sd(&d), mean_sd(&g)))
    };
    for (pi, p) in PATHS.iter().enumerate() {
        let mut t = format!(
            "{}: goodput Mbit/s ± σ / p95 one-way delay ms ± σ:",
            p.label
        );
        for (ri, row) in rows.iter().enumerate() {
            if let Some(((d, dsd), (g, gsd))) = stat(ri, pi) {
                let _ = write!(t, "\n{}: {g:.2} ± {gsd:.2} / {d:.1} ± {dsd:.1}", row.label);
            }
        }
        r.notes.push(t);
    }

    let idx = |label: &str| rows.iter().position(|x| x.label == label);
    let both = |a: &str, b: &str, path: usize| Some((stat(idx(a)?, path)?, stat(idx(b)?, path)?));
    // CCMAP-1: BBR keeps the deep buffer's delay below CUBIC's (BBR v1 bounds
    // inflight at 2 BDP; CUBIC fills the buffer).
    if let Some((bbr, cubic)) = both("BBR", "CUBIC", 0) {
        r.claims.push(
            Claim::new(
                "CCMAP-1",
                "Deep drop-tail (200 ms): BBR's p95 one-way delay below CUBIC's",
            )
            .paper_text("lower: BBR's cwnd ≤ 2 BDP (Cardwell et al. 2016), CUBIC fills the buffer")
            .ours_text(&format!("{:.0} vs {:.0} ms", bbr.0 .0, cubic.0 .0))
            .tolerance("mean over seeds lower")
            .check(bbr.0 .0 < cubic.0 .0),
        );
    }
    // CCMAP-2: the delay-correlation layer lowers CUBIC's delay on the deep buffer.
    if let Some((dc, cubic)) = both("CUBIC+DC", "CUBIC", 0) {
        r.claims.push(
            Claim::new(
                "CCMAP-2",
                "Deep drop-tail: CUBIC+DC's p95 one-way delay below CUBIC's",
            )
            .paper_text("lower (thesis ch. 3)")
            .ours_text(&format!("{:.0} vs {:.0} ms", dc.0 .0, cubic.0 .0))
            .tolerance("mean over seeds lower")
            .check(dc.0 .0 < cubic.0 .0),
        );
    }
    // CCMAP-3: BBR does not take random loss as congestion: on the lossy link it
    // keeps more goodput than CUBIC.
    if let Some((bbr, cubic)) = both("BBR", "CUBIC", 2) {
        r.claims.push(
            Claim::new(
                "CCMAP-3",
                "Lossy link (1 % random loss): BBR's goodput above CUBIC's",
            )
            .paper_text("higher: BBR's model ignores loss below ~20 % (Cardwell et al. 2016)")
            .ours_text(&format!("{:.1} vs {:.1} Mbit/s", bbr.1 .0, cubic.1 .0))
            .tolerance("mean over seeds at least 1.5x")
            .check(bbr.1 .0 >= 1.5 * cubic.1 .0),
        );
    }
    // CCMAP-4: LEDBAT's delay on the deep buffer stays near its 100-ms target, below
    // CUBIC's full buffer.
    if let Some((ledbat, cubic)) = both("LEDBAT", "CUBIC", 0) {
        r.claims.push(
            Claim::new(
                "CCMAP-4",
                "Deep drop-tail: LEDBAT's p95 one-way delay below CUBIC's",
            )
            .paper_text(
                "queueing delay near TARGET = 100 ms (RFC 6817 §2.1) < a full 200-ms buffer",
            )
            .ours_text(&format!("{:.0} vs {:.0} ms", ledbat.0 .0, cubic.0 .0))
            .tolerance("mean over seeds lower")
            .check(ledbat.0 .0 < cubic.0 .0),
        );
    }
    // CCMAP-5: behind CoDel every controller's p95 one-way delay is bounded (20 ms of
    // propagation plus CoDel's sojourn, which its 5-ms target keeps short).
    let mut worst = (0.0f64, String::new());
    for (ri, row) in rows.iter().enumerate() {
        if let Some(((d, _), _)) = stat(ri, 5) {
            if d > worst.0 {
                worst = (d, row.label.clone());
            }
        }
    }
    if !worst.1.is_empty() {
        r.claims.push(
            Claim::new(
                "CCMAP-5",
                "Behind CoDel: the largest p95 one-way delay of any controller",
            )
            .paper_text("bounded by the AQM (target 5 ms, interval 100 ms; RFC 8289)")
            .ours(worst.0)
            .unit("ms")
            .tolerance("≤ 60 ms (20 ms propagation + 40)")
            .check(worst.0 <= 60.0)
            .note(format!("worst: {}", worst.1)),
        );
    }

    // The map: one chart per path.
    for (pi, p) in PATHS.iter().enumerate() {
        let mut series = Vec::new();
        for (ri, row) in rows.iter().enumerate() {
            let v = &pts[ri][pi];
            let Some(((d, _), (g, _))) = stat(ri, pi) else {
                continue;
            };
            // Twenty rows, ten colours: colour and shape together tell them apart
            // (circles for the first ten, triangles for the next).
            let (color, shape) = categorical_mark(ri);
            let mut s = Series::new(&row.label, color, Style::Marker, vec![(d, g)])
                .with_shape(shape)
                .with_tag(row.label.clone());
            s.polygons = covariance_ellipse(v).into_iter().collect();
            series.push(s);
        }
        let all: Vec<(f64, f64)> = series
            .iter()
            .flat_map(|s| s.points.iter().chain(s.polygons.iter().flatten()))
            .copied()
            .collect();
        let (lo, hi) = all.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
            (lo.min(p.0), hi.max(p.0))
        });
        let gmax = all.iter().fold(0.0f64, |m, p| m.max(p.1));
        let pad = ((hi - lo) * 0.08).max(1.0);
        r.plots.push(Plot {
            figure: Figure::Chart(Chart {
                title: format!(
                    "{}: throughput against p95 one-way delay (better: up and right)",
                    p.label
                ),
                x_label: "95th-percentile one-way delay (ms), reversed".into(),
                y_label: "goodput (Mbit/s)".into(),
                x_reversed: true,
                x_range: Some(((lo - pad).max(0.0), hi + pad)),
                y_range: Some((0.0, gmax * 1.1 + 0.5)),
                series,
                ..Chart::default()
            }),
            paper: "Pantheon's figure (Yan et al. 2018, Fig. 3): each scheme's mean over runs with its 1-σ ellipse; no paper has brisk's controllers on it.".into(),
            ours: format!(
                "{}: one bulk flow per run, base RTT {} ms; each controller's mean over {seeds} seeds (marker, labelled where there is room, else named by its colour and shape in the legend) with the seeds' 1-σ covariance ellipse; CUBIC+DC is the delay-correlation layer over CUBIC (refused over BBR, which sets cwnd itself).",
                p.label, p.rtt_ms
            ),
        });
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_parses_with_its_controller_and_the_trace_loads() {
        let rows = rows();
        // The six controllers here today plus the two delay-correlation rows.
        assert!(rows.len() >= 8, "{}", rows.len());
        let p = plan(true).unwrap();
        assert_eq!(p.jobs.len(), PATHS.len() * rows.len() * 2);
        for (j, c) in p.jobs.iter().zip(cells(true, rows.len())) {
            let f = &j.scenario.flows[0];
            assert_eq!(f.cc.name(), rows[c.row].cc, "{}", j.label);
            let cfg = f.tcp.to_config(f.cc);
            assert_eq!(cfg.ecn.enabled, rows[c.row].tcp.contains("ecn"));
            assert_eq!(j.scenario.bottleneck.trace.is_some(), PATHS[c.path].trace);
        }
    }
}
