//! aqm-map: every controller brisk has, through every queue brisk-net has, on one
//! Pantheon-style picture of throughput against 95th-percentile queueing delay (issue
//! 10 §5: no paper has this one picture of the whole family).
//!
//! One flow at a time through 10 Mbit/s, at RTT 20 ms and 100 ms, for 30 s:
//! - controllers: CUBIC, Reno, CUBIC+ABE, Reno+ABE (ECN), CDG, DCTCP (ECN), and CUBIC
//!   with the thesis's delay correlation;
//! - queues: a 200-ms drop-tail (a bloated buffer: 2 BDPs at 100 ms, 10 at 20 ms), the
//!   same drop-tail with DCTCP's step marking at K = 20 packets (RFC 8257 §3.1: ECN
//!   flows are marked above K, others see a plain drop-tail), CoDel, PIE and FQ-CoDel,
//!   each with ECN marking for ECN flows.
//!
//! Linux's BBR and CUBIC over real packets are in `real-bufferbloat` (drop-tail only);
//! the emulator's AQMs are the same code, but real points are not on this map yet.
//!
//! The claims are checks of what each mechanism is for (our IDs, MAP-n), and the
//! delay-correlation rows answer the question whether the layer still helps
//! behind an AQM.

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Job, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{categorical, Chart, Series, Style};
use brisk_sim::{RunResult, Scenario};
use std::fmt::Write;

pub const ID: &str = "aqm-map";
pub const TITLE: &str =
    "Every controller through every queue: throughput against p95 queueing delay (beyond the papers)";
pub const CLAIMS: &[&str] = &["MAP-1", "MAP-2", "MAP-3", "MAP-4"];

/// (label, `cc`, extra `[flow.tcp]` lines, uses ECN).
const CONTROLLERS: [(&str, &str, &str, bool); 7] = [
    ("CUBIC", "cubic", "", false),
    ("Reno", "reno", "", false),
    ("CUBIC+ABE", "cubic", "ecn = true\nabe = true\n", true),
    ("Reno+ABE", "reno", "ecn = true\nabe = true\n", true),
    ("CDG", "cdg", "", false),
    ("DCTCP", "dctcp", "ecn = true\n", true),
    ("CUBIC+DC", "cubic", "delay_correlation = true\n", false),
];

/// (label, queue table).
const QUEUES: [(&str, &str); 5] = [
    ("drop-tail", "{ kind = \"droptail\", time = \"200ms\" }"),
    (
        "drop-tail K=20",
        "{ kind = \"droptail\", time = \"200ms\", ecn_threshold_packets = 20 }",
    ),
    ("CoDel", "{ kind = \"codel\", ecn = true }"),
    ("PIE", "{ kind = \"pie\", ecn = true }"),
    ("FQ-CoDel", "{ kind = \"fq_codel\", ecn = true }"),
];

#[derive(Clone, Copy, Debug)]
struct Cell {
    cc: usize,
    queue: usize,
    rtt_ms: u64,
}

fn shape(quick: bool) -> (u64, Vec<u64>) {
    if quick {
        (30, vec![100])
    } else {
        (30, vec![20, 100])
    }
}

fn scenario_toml(c: Cell, duration_s: u64) -> String {
    let (_, cc, tcp, _) = CONTROLLERS[c.cc];
    format!(
        "name = \"{ID}\"\nduration = \"{duration_s}s\"\nsample_interval = \"1s\"\n\
         [bottleneck]\nrate = \"10Mbit\"\nqueue = {}\n\
         [[flow]]\nrtt = \"{}ms\"\ncc = \"{cc}\"\napp = {{ kind = \"bulk\" }}\n[flow.tcp]\n{tcp}",
        QUEUES[c.queue].1, c.rtt_ms
    )
}

fn cells(quick: bool) -> Vec<Cell> {
    let (_, rtts) = shape(quick);
    let mut v = Vec::new();
    for &rtt_ms in &rtts {
        for queue in 0..QUEUES.len() {
            for cc in 0..CONTROLLERS.len() {
                v.push(Cell { cc, queue, rtt_ms });
            }
        }
    }
    v
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let (duration_s, _) = shape(quick);
    let cells = cells(quick);
    let mut jobs = Vec::new();
    for c in &cells {
        let sc = Scenario::from_toml_str_named(&scenario_toml(*c, duration_s), ID)
            .map_err(|e| e.to_string())?;
        let label = format!(
            "{ID} {} {} rtt {}",
            CONTROLLERS[c.cc].0, QUEUES[c.queue].0, c.rtt_ms
        );
        jobs.push(Job::new(label, sc, 1).lean());
    }
    Ok(Plan {
        jobs,
        analyse: Box::new(move |runs| analyse(&cells, runs)),
    })
}

/// One point of the map.
#[derive(Clone, Copy, Debug)]
struct Point {
    mbit: f64,
    p95_ms: f64,
    drops: u64,
    marks: u64,
}

fn point(r: &RunResult) -> Point {
    Point {
        mbit: r.flows.first().map_or(0.0, |f| f.goodput_bps / 1e6),
        p95_ms: r
            .bottleneck
            .queue_delay
            .map_or(f64::NAN, |q| q.p95 as f64 / 1e6),
        drops: r.bottleneck.drops,
        marks: r.bottleneck.ce_marked,
    }
}

fn analyse(cells: &[Cell], runs: &[RunResult]) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    let pts: Vec<(Cell, Point)> = cells
        .iter()
        .zip(runs)
        .map(|(c, x)| (*c, point(x)))
        .collect();
    let get = |cc: &str, q: usize, rtt: u64| {
        pts.iter()
            .find(|(c, _)| CONTROLLERS[c.cc].0 == cc && c.queue == q && c.rtt_ms == rtt)
            .map(|x| x.1)
    };
    let rtts: Vec<u64> = {
        let mut v: Vec<u64> = cells.iter().map(|c| c.rtt_ms).collect();
        v.dedup();
        v.sort_unstable();
        v.dedup();
        v
    };
    r.notes.push(
        "Set-up: one flow at a time, 10 Mbit/s, 30 s (quick: RTT 100 ms only); goodput over the whole run including slow start; delay is the bottleneck's p95 sojourn. ECN flows: CUBIC+ABE, Reno+ABE (β_ecn 0.85 / 0.8) and DCTCP; the drop-tail K=20 queue marks them above 20 packets and drops only at its 200-ms limit. Linux BBR and CUBIC over real packets are in real-bufferbloat (drop-tail only) and not on this map.".into(),
    );
    for &rtt in &rtts {
        let mut t = format!("RTT {rtt} ms, goodput Mbit/s / p95 queueing ms (drops, CE marks):");
        for (ci, (name, ..)) in CONTROLLERS.iter().enumerate() {
            let _ = write!(t, "\n{name}:");
            for (qi, (qn, _)) in QUEUES.iter().enumerate() {
                if let Some(p) = pts
                    .iter()
                    .find(|(c, _)| c.cc == ci && c.queue == qi && c.rtt_ms == rtt)
                    .map(|x| x.1)
                {
                    let _ = write!(
                        t,
                        "  {qn} {:.2} / {:.1} ({}, {})",
                        p.mbit, p.p95_ms, p.drops, p.marks
                    );
                }
            }
        }
        r.notes.push(t);
    }
    let big = *rtts.last().unwrap_or(&100);

    // MAP-1: DCTCP with step marking: full link, queue held near K.
    if let Some(p) = get("DCTCP", 1, big) {
        // K = 20 packets of 1500 B at 10 Mbit/s is 24 ms.
        let ok = p.mbit >= 9.0 && p.p95_ms <= 30.0;
        r.claims.push(
            Claim::new(
                "MAP-1",
                &format!("DCTCP, drop-tail with marking at K = 20 packets (24 ms), RTT {big} ms: goodput and p95 queueing"),
            )
            .paper_text("full link, queue near K (RFC 8257 §3.1)")
            .ours_text(&format!("{:.2} Mbit/s, {:.1} ms", p.mbit, p.p95_ms))
            .tolerance("≥ 9 Mbit/s and ≤ 30 ms")
            .check(ok),
        );
    }
    // MAP-2: every AQM keeps every controller's p95 delay far below the bloated
    // drop-tail's.
    let mut worst = (0.0f64, String::new());
    let mut all_ok = true;
    for &rtt in &rtts {
        for (ci, (name, ..)) in CONTROLLERS.iter().enumerate() {
            for (q, (qname, _)) in QUEUES.iter().enumerate().skip(2) {
                if let Some(p) = pts
                    .iter()
                    .find(|(c, _)| c.cc == ci && c.queue == q && c.rtt_ms == rtt)
                    .map(|x| x.1)
                {
                    if p.p95_ms > worst.0 {
                        worst = (p.p95_ms, format!("{name} behind {qname} at {rtt} ms"));
                    }
                    all_ok &= p.p95_ms <= 60.0;
                }
            }
        }
    }
    r.claims.push(
        Claim::new(
            "MAP-2",
            "Behind CoDel, PIE and FQ-CoDel, the largest p95 queueing delay of any controller",
        )
        .paper_text("bounded by the AQM (targets 5-20 ms)")
        .ours(worst.0)
        .unit("ms")
        .tolerance("≤ 60 ms")
        .check(all_ok)
        .note(worst.1),
    );
    // MAP-3 and MAP-4: delay correlation behind drop-tail and behind AQMs.
    if let (Some(dc), Some(cu)) = (get("CUBIC+DC", 0, big), get("CUBIC", 0, big)) {
        r.claims.push(
            Claim::new(
                "MAP-3",
                &format!("Delay correlation behind the 200-ms drop-tail, RTT {big} ms: p95 queueing, CUBIC+DC against CUBIC"),
            )
            .paper_text("lower (thesis ch. 3)")
            .ours_text(&format!("{:.0} vs {:.0} ms", dc.p95_ms, cu.p95_ms))
            .tolerance("lower")
            .check(dc.p95_ms < cu.p95_ms),
        );
    }
    let mut dc_aqm = String::new();
    let mut max_loss = 0.0f64;
    for &rtt in &rtts {
        for q in [2usize, 4] {
            if let (Some(dc), Some(cu)) = (get("CUBIC+DC", q, rtt), get("CUBIC", q, rtt)) {
                let d = dc.mbit / cu.mbit - 1.0;
                max_loss = max_loss.max(-d);
                let _ = write!(
                    dc_aqm,
                    "{} {rtt} ms: goodput {:+.1} %, p95 {:.1} vs {:.1} ms, drops {} vs {}; ",
                    QUEUES[q].0,
                    d * 100.0,
                    dc.p95_ms,
                    cu.p95_ms,
                    dc.drops,
                    cu.drops
                );
            }
        }
    }
    r.claims.push(
        Claim::new(
            "MAP-4",
            "Delay correlation behind CoDel and FQ-CoDel: largest goodput loss against CUBIC alone",
        )
        .paper_text("not studied (issue 10 §5 asks)")
        .ours(max_loss * 100.0)
        .unit("%")
        .tolerance("≤ 5 %: it does no harm")
        .check(max_loss <= 0.05)
        .note(dc_aqm),
    );

    // The map: one chart per queue; each controller is a large marker at the larger
    // RTT and a small point at the smaller one.
    for (qi, (qn, _)) in QUEUES.iter().enumerate() {
        let mut series = Vec::new();
        for &rtt in rtts.iter().rev() {
            for (ci, (name, ..)) in CONTROLLERS.iter().enumerate() {
                let Some(p) = pts
                    .iter()
                    .find(|(c, _)| c.cc == ci && c.queue == qi && c.rtt_ms == rtt)
                    .map(|x| x.1)
                else {
                    continue;
                };
                let (label, style) = if rtt == big {
                    (format!("{name}, {rtt} ms"), Style::Marker)
                } else {
                    (format!("{name}, {rtt} ms"), Style::Points)
                };
                series.push(Series::new(
                    &label,
                    categorical(ci),
                    style,
                    vec![(p.p95_ms.max(0.1), p.mbit)],
                ));
            }
        }
        r.plots.push(Plot {
            figure: Figure::Chart(Chart {
                title: format!("{qn}: goodput against p95 queueing delay"),
                x_label: "p95 queueing delay (ms, log; better to the right)".into(),
                y_label: "goodput (Mbit/s)".into(),
                x_log: true,
                x_reversed: true,
                y_range: Some((0.0, 10.0)),
                series,
                ..Chart::default()
            }),
            paper: "No paper has this picture; the style is Pantheon's throughput against p95 delay.".into(),
            ours: format!(
                "One flow per run through 10 Mbit/s behind {qn}; large markers at RTT {big} ms, small points at the smaller RTT."
            ),
        });
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_parses_and_ecn_flows_negotiate_ecn() {
        for c in cells(false) {
            let sc = Scenario::from_toml_str_named(&scenario_toml(c, 30), ID).unwrap();
            let cfg = sc.flows[0].tcp.to_config(sc.flows[0].cc);
            assert_eq!(cfg.ecn.enabled, CONTROLLERS[c.cc].3, "{c:?}");
        }
        assert_eq!(cells(false).len(), 70);
    }
}
