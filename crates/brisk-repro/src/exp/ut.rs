//! ut-bulk and ut-records: TCP's latency tax and what unordered receive (uTCP,
//! `[flow.tcp] unordered = true`) removes (thesis §2.2.2, Figs 2.3 and 2.4).
//!
//! With unordered receive the simulator counts each byte at its first delivery to the
//! application, in any order, and a record as delivered once all its bytes have been
//! delivered. Losses are Bernoulli on the data direction only (spec resolution).

use super::{cdf_over_seeds, ms};
use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Job, Plan, Plot};
use crate::figure::Figure;
use crate::scen::{build, Flow, Link};
use crate::stats::{frac_at_least, mean};
use crate::svg::{Chart, Series, Style, BLUE, RED};
use brisk_sim::RunResult;

pub const BULK_ID: &str = "ut-bulk";
pub const BULK_TITLE: &str =
    "Bulk transfer under 3 % loss: in-order vs unordered reads (thesis Fig. 2.3)";
pub const BULK_CLAIMS: &[&str] = &["UT-3a", "UT-3b"];
pub const RECORDS_ID: &str = "ut-records";
pub const RECORDS_TITLE: &str = "Record delivery latency under 2 % loss (thesis Fig. 2.4)";
pub const RECORDS_CLAIMS: &[&str] = &["UT-2a", "UT-2b", "UT-2c"];

const BULK_RTT_MS: u64 = 60;
const BIN_MS: u64 = 5;

fn seeds(quick: bool) -> Vec<u64> {
    if quick {
        vec![1, 2, 3]
    } else {
        vec![1, 2, 3, 4, 5]
    }
}

pub fn plan_bulk(quick: bool) -> Result<Plan, String> {
    let link = Link {
        rate_bps: 10_000_000,
        queue_packets: 50,
        loss: 0.03,
    };
    let mut jobs = Vec::new();
    let seeds = seeds(quick);
    for &s in &seeds {
        for (name, flow) in [
            ("tcp", Flow::bulk(BULK_RTT_MS)),
            ("utcp", Flow::bulk(BULK_RTT_MS).knob("unordered = true")),
        ] {
            jobs.push(Job::new(
                format!("ut-bulk {name} seed {s}"),
                build(&format!("ut-bulk-{name}"), 10_000, BIN_MS, &link, &[flow])?,
                s,
            ));
        }
    }
    Ok(Plan {
        jobs,
        analyse: Box::new(analyse_bulk),
    })
}

/// Loss events (drops more than one RTT apart start a new event), seconds.
fn loss_events(r: &RunResult) -> Vec<f64> {
    let mut ev: Vec<f64> = Vec::new();
    for d in &r.bottleneck.drop_records {
        let t = d.at.as_nanos() as f64 / 1e9;
        if ev.last().is_none_or(|&l| t - l > BULK_RTT_MS as f64 / 1e3) {
            ev.push(t);
        }
    }
    ev
}

/// Share of loss events followed, within 3 RTTs, by an application stall (no bytes
/// delivered) of at least one RTT.
fn stalled_share(r: &RunResult) -> f64 {
    let Some(f) = r.flows.first() else {
        return f64::NAN;
    };
    let rtt = BULK_RTT_MS as f64 / 1e3;
    let bin = BIN_MS as f64 / 1e3;
    let series: Vec<(f64, u64)> = f
        .goodput_series
        .iter()
        .map(|(t, b)| (*t as f64 / 1e9, *b))
        .collect();
    let events = loss_events(r);
    // Ignore losses too close to the end to see their aftermath.
    let end = r.duration.as_secs_f64() - 3.0 * rtt;
    let events: Vec<f64> = events.into_iter().filter(|t| *t < end).collect();
    if events.is_empty() {
        return f64::NAN;
    }
    let stalled = events
        .iter()
        .filter(|&&t| stalls_after(&series, t, rtt, bin))
        .count();
    stalled as f64 / events.len() as f64
}

/// Whether delivery (bins of `bin` s) stops for ≥ `rtt` within 3 RTTs after `t`.
fn stalls_after(series: &[(f64, u64)], t: f64, rtt: f64, bin: f64) -> bool {
    let mut run = 0.0f64;
    let mut best = 0.0f64;
    for (_, b) in series
        .iter()
        .filter(|(bt, _)| *bt > t && *bt <= t + 3.0 * rtt)
    {
        if *b == 0 {
            run += bin;
            best = best.max(run);
        } else {
            run = 0.0;
        }
    }
    best + 1e-9 >= rtt
}

/// The first loss event at or after `from` s that in-order delivery stalls after.
fn first_stalled_event(r: &RunResult, from: f64) -> Option<f64> {
    let f = r.flows.first()?;
    let series: Vec<(f64, u64)> = f
        .goodput_series
        .iter()
        .map(|(t, b)| (*t as f64 / 1e9, *b))
        .collect();
    let rtt = BULK_RTT_MS as f64 / 1e3;
    loss_events(r)
        .into_iter()
        .filter(|t| *t >= from)
        .find(|&t| stalls_after(&series, t, rtt, BIN_MS as f64 / 1e3))
}

fn cumulative(r: &RunResult, from: f64, to: f64) -> Vec<(f64, f64)> {
    let mut acc = 0u64;
    let mut out = Vec::new();
    for (t, b) in r.flows.first().map_or(&[][..], |f| &f.goodput_series[..]) {
        acc += b;
        let ts = *t as f64 / 1e9;
        if ts >= from && ts <= to {
            out.push((ts, acc as f64 / 1e6));
        }
    }
    out
}

fn analyse_bulk(runs: &[RunResult]) -> ExperimentResult {
    let mut r = ExperimentResult::new(BULK_ID, BULK_TITLE);
    let tcp: Vec<&RunResult> = runs.iter().step_by(2).collect();
    let utcp: Vec<&RunResult> = runs.iter().skip(1).step_by(2).collect();
    r.notes.push(format!(
        "Set-up (spec resolutions): 10 Mbit/s bottleneck, 50-packet drop-tail queue, 60 ms RTT, 3 % Bernoulli loss on the data direction, 10 s bulk transfer, CUBIC, SACK, RACK-TLP; greedy reader; {} seeds. A stall is a run of ≥ 1 RTT with no bytes delivered to the application ({BIN_MS}-ms bins); a loss event is a drop more than 1 RTT after the previous one.",
        tcp.len()
    ));
    let share = |xs: &[&RunResult]| {
        mean(
            &xs.iter()
                .map(|x| stalled_share(x))
                .filter(|v| v.is_finite())
                .collect::<Vec<_>>(),
        )
    };
    let (st, su) = (share(&tcp), share(&utcp));
    let delivered = |xs: &[&RunResult]| {
        mean(
            &xs.iter()
                .map(|x| {
                    x.flows
                        .first()
                        .map_or(0.0, |f| f.bytes_delivered as f64 / 1e6)
                })
                .collect::<Vec<_>>(),
        )
    };
    let (dt, du) = (delivered(&tcp), delivered(&utcp));
    r.claims.push(
        Claim::new(
            "UT-3a",
            "in-order reads: loss events followed by an app stall ≥ 1 RTT",
        )
        .paper_text("every loss")
        .ours(st * 100.0)
        .unit("%")
        .tolerance("≥ 80 %")
        .check(st >= 0.8),
    );
    r.claims.push(
        Claim::new("UT-3b", "unordered reads: loss events followed by an app stall ≥ 1 RTT")
            .paper_text("none (\"without interruption\"), sender RTO stalls excepted")
            .ours(su * 100.0)
            .unit("%")
            .tolerance("≤ 20 % (RTO stalls count here)")
            .check(su <= 0.2)
            .note(format!("First-delivery bytes after 10 s: {du:.2} MB unordered vs {dt:.2} MB in order (the same transfer; unordered reads only deliver earlier).")),
    );
    if let (Some(t1), Some(u1)) = (tcp.first(), utcp.first()) {
        let (a, b) = (2.0, 4.0);
        r.plots.push(Plot {
            figure: Figure::Chart(Chart {
                title: "Bytes delivered to the application (Fig. 2.3), 2–4 s".into(),
                x_label: "time (s)".into(),
                y_label: "cumulative MB delivered".into(),
                series: vec![
                    Series::new("TCP, in-order reads", RED, Style::Step, cumulative(t1, a, b)),
                    Series::new("uTCP, unordered reads", BLUE, Style::Dashed, cumulative(u1, a, b)),
                ],
                ..Chart::default()
            }),
            paper: "With TCP, application progress stops for one or more RTTs after every loss; uTCP keeps delivering without interruption.".into(),
            ours: format!(
                "In-order delivery stalls ≥ 1 RTT after {:.0} % of loss events; unordered first delivery after {:.0} %. One seed (seed 1): traces of different seeds are not averaged, as their losses fall at different times. The next figure zooms onto one loss.",
                st * 100.0,
                su * 100.0
            ),
        });
        if let Some(t) = first_stalled_event(t1, a) {
            let rtt = BULK_RTT_MS as f64 / 1e3;
            let (from, to) = (t - 2.0 * rtt, t + 5.0 * rtt);
            r.plots.push(Plot {
                figure: Figure::Chart(Chart {
                    title: format!("One loss event at {t:.3} s, zoomed (Fig. 2.3)"),
                    x_label: "time (s)".into(),
                    y_label: "cumulative MB delivered".into(),
                    x_range: Some((from, to)),
                    v_lines: vec![
                        (t, "drop".into()),
                        (t + rtt, "+1 RTT".into()),
                    ],
                    series: vec![
                        Series::new("TCP, in-order reads", RED, Style::Step, cumulative(t1, from, to)),
                        Series::new("uTCP, unordered reads", BLUE, Style::Dashed, cumulative(u1, from, to)),
                    ],
                    ..Chart::default()
                }),
                paper: "Fig. 2.3: after a loss, the in-order counter stays flat for about one RTT until the retransmission arrives, then jumps; the unordered counter keeps rising.".into(),
                ours: format!(
                    "The first loss event after {a:.0} s in seed 1's in-order run that stalls its reader (the drop line is that run's; the unordered run uses the same seed). {BIN_MS}-ms bins; RTT {BULK_RTT_MS} ms."
                ),
            });
        }
    }
    r
}

pub fn plan_records(quick: bool) -> Result<Plan, String> {
    let link = Link {
        rate_bps: 10_000_000,
        queue_packets: 1000,
        loss: 0.02,
    };
    let dur = if quick { 60_000 } else { 120_000 };
    let mut jobs = Vec::new();
    for &s in &seeds(quick) {
        let base = Flow::records(100, 1448, 20)
            .knob("nagle = false")
            .knob("initial_cwnd = 3")
            .knob("rack = false")
            .knob("tlp = false");
        for (name, flow) in [
            ("tcp", base.clone()),
            ("utcp", base.knob("unordered = true")),
        ] {
            jobs.push(Job::new(
                format!("ut-records {name} seed {s}"),
                build(&format!("ut-records-{name}"), dur, 100, &link, &[flow])?,
                s,
            ));
        }
    }
    Ok(Plan {
        jobs,
        analyse: Box::new(analyse_records),
    })
}

/// Share of records whose latency (quantiles `q`) exceeds the run's minimum by ≥ 1
/// RTT (100 ms).
fn delayed_share_of(q: &[u64]) -> f64 {
    let Some(&min) = q.first() else {
        return f64::NAN;
    };
    frac_at_least(q, min + 100_000_000)
}

/// [`delayed_share_of`] for the primary metric: latency after the record's first
/// transmission (the thesis counts records "waiting in TCP's receive queue for a
/// prior segment's retransmission", which excludes the wait in the sender's buffer).
fn delayed_share(r: &RunResult) -> f64 {
    r.flows.first().map_or(f64::NAN, |f| {
        delayed_share_of(&f.record_latency_tx_quantiles)
    })
}

/// The end-to-end share (generation → application), kept beside the primary metric.
fn delayed_share_e2e(r: &RunResult) -> f64 {
    r.flows
        .first()
        .map_or(f64::NAN, |f| delayed_share_of(&f.record_latency_quantiles))
}

fn analyse_records(runs: &[RunResult]) -> ExperimentResult {
    let mut r = ExperimentResult::new(RECORDS_ID, RECORDS_TITLE);
    let tcp: Vec<&RunResult> = runs.iter().step_by(2).collect();
    let utcp: Vec<&RunResult> = runs.iter().skip(1).step_by(2).collect();
    let records: u64 = tcp
        .iter()
        .filter_map(|x| x.flows.first()?.record_latency.map(|s| s.count))
        .sum();
    r.notes.push(format!(
        "Set-up: 1448-byte records every 20 ms (579 kbit/s, one record per segment), 100 ms RTT, 2 % Bernoulli loss on the data direction, 10 Mbit/s (not a bottleneck). 2.6.34-like TCP (spec resolution): IW3, Nagle off, RTOmin 200 ms, SACK with classic 3-dupack recovery (RACK and TLP off). {} seeds, {records} records with in-order reads. A record is delayed when its latency exceeds the run's smallest record latency by ≥ 1 RTT. Primary metric (UT-2a–c): latency from the first transmission of the record's last byte to its delivery to the application, the thesis's wait in TCP's receive queue. Beside it (next note, information only): the end-to-end latency from the record's generation, which adds the wait in the sender's buffer: at 2 % loss a ~6-packet window carries the 5.75 records per RTT with little room, so after each loss records queue at the sender for hundreds of ms, in both read modes (Linux's own CUBIC sender delays as many on this path).",
        tcp.len()
    ));
    let share = |xs: &[&RunResult]| mean(&xs.iter().map(|x| delayed_share(x)).collect::<Vec<_>>());
    let (st, su) = (share(&tcp) * 100.0, share(&utcp) * 100.0);
    let share_e2e =
        |xs: &[&RunResult]| mean(&xs.iter().map(|x| delayed_share_e2e(x)).collect::<Vec<_>>());
    let (et, eu) = (share_e2e(&tcp) * 100.0, share_e2e(&utcp) * 100.0);
    r.claims.push(
        Claim::new(
            "UT-2a",
            "in-order reads: records delayed ≥ 1 RTT after first tx",
        )
        .paper_text("> 10")
        .ours(st)
        .unit("%")
        .tolerance("8–20 %")
        .check((8.0..=20.0).contains(&st)),
    );
    r.claims.push(
        Claim::new(
            "UT-2b",
            "unordered reads: records delayed ≥ 1 RTT after first tx",
        )
        .paper_text("< 3")
        .ours(su)
        .unit("%")
        .tolerance("≤ 3 %")
        .check(su <= 3.0),
    );
    r.claims.push(
        Claim::new("UT-2c", "unordered below in-order")
            .paper_text("yes")
            .ours_text(&format!("{su:.2} < {st:.2}"))
            .unit("%")
            .tolerance("strictly less")
            .check(su < st),
    );
    r.notes.push(format!(
        "End to end (from the record's generation, the metric before this revision): {et:.1} % of records delayed ≥ 1 RTT with in-order reads, {eu:.1} % with unordered reads. The difference to UT-2a/b is the wait in the sender's buffer."
    ));
    if let (Some(t1), Some(_)) = (
        tcp.first().and_then(|x| x.flows.first()),
        utcp.first().and_then(|x| x.flows.first()),
    ) {
        let min = t1.record_latency_tx_quantiles.first().copied().unwrap_or(0);
        fn lat<'a>(xs: &[&'a RunResult]) -> Vec<&'a [u64]> {
            xs.iter()
                .filter_map(|x| x.flows.first().map(|f| &f.record_latency_tx_quantiles[..]))
                .collect()
        }
        r.plots.push(Plot {
            figure: Figure::Chart(Chart {
                title: "Record delivery latency CDF (Fig. 2.4)".into(),
                x_label: "latency, first transmission → application (ms)".into(),
                y_label: "fraction of records".into(),
                y_range: Some((0.0, 1.0)),
                x_range: Some((0.0, 600.0)),
                series: vec![
                    cdf_over_seeds("TCP, in-order reads", RED, &lat(&tcp)),
                    cdf_over_seeds("uTCP, unordered reads", BLUE, &lat(&utcp)),
                ],
                ..Chart::default()
            }),
            paper: "Over 10 % of records are delayed by at least one full RTT with TCP, waiting for a prior segment's retransmission; under 3 % with unordered delivery.".into(),
            ours: format!(
                "{st:.1} % of records delayed ≥ 1 RTT (latency ≥ {:.0} ms) with in-order reads, {su:.1} % with unordered reads. The x axis stops at 600 ms so the first RTTs stay readable; the note under it gives where each curve's tail ends and the CDF's value at the cut. {}",
                ms(min + 100_000_000),
                crate::bands::caption(tcp.len())
            ),
        });
    }
    r
}
