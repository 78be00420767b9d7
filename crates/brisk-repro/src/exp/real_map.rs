//! real-aqm-map: the reference points of `aqm-map` over real packets. Linux's CUBIC and
//! BBR (the kernel of the host, one flow at a time through brisk-emu) and brisk's CUBIC
//! and BBR,
//! behind the same emulated queues as the simulated map: a 200-ms drop-tail, CoDel,
//! PIE and FQ-CoDel (brisk-net's code in both worlds), 10 Mbit/s, RTT 100 ms (and
//! 20 ms in the full run). brisk CUBIC's simulated run of each cell sits beside its
//! real one, as a fidelity check of the emulated AQMs.
//!
//! Linux's ECN is off here (brisk's ECN interop is `real-ecn`); CDG and DCTCP have no
//! module in this lab's kernel and are simulator-only (`aqm-map`).

use super::ms;
use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Job, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{categorical, Chart, Series, Style};
use brisk_emu::path::{Dur, EmuConfig, PathSpec, QueueSpec, Rate};
use brisk_emu::realrun::{run_real, FlowStack, RealRun};
use brisk_emu::EmuError;
use brisk_sim::{RunResult, Scenario};
use brisk_time::Duration;
use std::fmt::Write;

pub const ID: &str = "real-aqm-map";
pub const TITLE: &str =
    "Real packets: Linux and brisk CUBIC and BBR behind emulated drop-tail and AQMs";
pub const CLAIMS: &[&str] = &["REAL-MAP-1", "REAL-MAP-2"];

/// (label, queue table as in scenario files).
const QUEUES: [(&str, &str); 4] = [
    ("drop-tail", "{ kind = \"droptail\", time = \"200ms\" }"),
    ("CoDel", "{ kind = \"codel\" }"),
    ("PIE", "{ kind = \"pie\" }"),
    ("FQ-CoDel", "{ kind = \"fq_codel\" }"),
];

/// (label, stack, cc). brisk CUBIC (index 2) is the one compared with its simulation;
/// brisk BBR stands beside Linux BBR (`real-bbr` compares the two on other paths).
const SENDERS: [(&str, FlowStack, &str); 4] = [
    ("Linux CUBIC", FlowStack::Linux, "cubic"),
    ("Linux BBR", FlowStack::Linux, "bbr"),
    ("brisk CUBIC", FlowStack::Brisk, "cubic"),
    ("brisk BBR", FlowStack::Brisk, "bbr"),
];

#[derive(Clone, Copy, Debug)]
struct Cell {
    queue: usize,
    rtt_ms: u64,
}

fn shape(quick: bool) -> (u64, Vec<Cell>) {
    let mut cells = Vec::new();
    let (secs, rtts, queues): (u64, &[u64], &[usize]) = if quick {
        (10, &[100], &[0, 1])
    } else {
        (20, &[20, 100], &[0, 1, 2, 3])
    };
    for &rtt_ms in rtts {
        for &queue in queues {
            cells.push(Cell { queue, rtt_ms });
        }
    }
    (secs, cells)
}

/// Why this host cannot run the experiment (root, `/dev/net/tun`, iproute2).
pub fn unsupported() -> Option<String> {
    brisk_emu::netns::unsupported_reason()
}

fn scenario_toml(c: Cell, secs: u64) -> String {
    format!(
        "name = \"{ID}\"\nseed = 1\nduration = \"{secs}s\"\n[bottleneck]\nrate = \"10Mbit\"\nqueue = {}\n\
         [[flow]]\nrtt = \"{}ms\"\ncc = \"cubic\"\napp = {{ kind = \"bulk\" }}\n",
        QUEUES[c.queue].1, c.rtt_ms
    )
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let (secs, cells) = shape(quick);
    let mut jobs = Vec::new();
    let mut queues = Vec::new();
    for c in &cells {
        let sc = Scenario::from_toml_str_named(&scenario_toml(*c, secs), ID)
            .map_err(|e| e.to_string())?;
        queues.push(
            sc.bottleneck
                .queue
                .clone()
                .ok_or_else(|| format!("{ID}: the scenario has no queue"))?,
        );
        jobs.push(Job::new(
            format!("{ID} sim {} rtt {}", QUEUES[c.queue].0, c.rtt_ms),
            sc,
            1,
        ));
    }
    Ok(Plan {
        jobs,
        analyse: Box::new(move |runs| {
            let t0 = std::time::Instant::now();
            let real = run_all(secs, &cells, &queues);
            let mut r = analyse(&cells, runs, &real);
            r.notes.push(format!(
                "Real runs took {:.0} s of wall time ({} s each).",
                t0.elapsed().as_secs_f64(),
                secs
            ));
            r
        }),
    })
}

/// One sender's real numbers in one cell: goodput (Mbit/s), p95 queueing over the
/// run (ms), mean queueing after the warm-up (ms), and why the emulator says the run
/// did not keep the model's timing, if it did not (`real_fidelity`).
type Real = Result<(f64, f64, f64, Option<String>), String>;

/// The fidelity claims compare the steady state: slow start's overshoot is a few
/// hundred ms of a 10-20 s run, and decides its p95.
const WARMUP_NS: u64 = 5_000_000_000;

/// Mean sojourn (ms) over the sampling bins after the warm-up that dequeued anything.
fn steady_ms(bins: impl Iterator<Item = (u64, u64)>) -> f64 {
    let v: Vec<f64> = bins
        .filter(|&(t, mean_ns)| t > WARMUP_NS && mean_ns > 0)
        .map(|(_, mean_ns)| mean_ns as f64 / 1e6)
        .collect();
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn run_all(secs: u64, cells: &[Cell], queues: &[QueueSpec]) -> Vec<Vec<Real>> {
    let have = brisk_emu::bulk::available_congestion_controls();
    let mut lab_missing: Option<String> = None;
    cells
        .iter()
        .zip(queues)
        .map(|(c, q)| {
            SENDERS
                .iter()
                .map(|(label, stack, cc)| {
                    if let Some(why) = &lab_missing {
                        return Err(why.clone());
                    }
                    if *stack == FlowStack::Linux && !have.iter().any(|x| x == cc) {
                        return Err(format!("the kernel offers no {cc}"));
                    }
                    crate::runner::status(&format!(
                        "{ID} (real time): {label}, {} rtt {}",
                        QUEUES[c.queue].0, c.rtt_ms
                    ));
                    let path = EmuConfig {
                        rtt: Some(Dur(Duration::from_millis(c.rtt_ms))),
                        bottleneck: PathSpec {
                            rate: Some(Rate(10_000_000)),
                            queue: Some(q.clone()),
                            ..PathSpec::default()
                        },
                        reverse: None,
                        seed: 1,
                    };
                    let run = RealRun::one_bulk_flow(
                        format!("{ID} {label} {} {}", QUEUES[c.queue].0, c.rtt_ms),
                        Duration::from_secs(secs),
                        path,
                        *stack,
                        cc,
                        // A brisk flow's controller is its config's (`cc` only
                        // labels it).
                        if *stack == FlowStack::Brisk && *cc == "bbr" {
                            super::real_bbr::bbr_config()
                        } else {
                            brisk_tcp::Config::default()
                        },
                    )
                    .and_then(|run| run_real(&run));
                    match run {
                        Ok(res) => Ok((
                            res.flows.first().map_or(0.0, |f| f.goodput_bps / 1e6),
                            res.bottleneck.queue_delay.map_or(f64::NAN, |s| ms(s.p95)),
                            steady_ms(
                                res.bottleneck
                                    .queue_series
                                    .iter()
                                    .map(|(t, q)| (*t, q.mean_delay_ns)),
                            ),
                            super::real_fidelity::distortion(&res),
                        )),
                        Err(EmuError::Unsupported(why)) => {
                            lab_missing = Some(why.clone());
                            Err(why)
                        }
                        Err(e) => Err(e.to_string()),
                    }
                })
                .collect()
        })
        .collect()
}

fn analyse(cells: &[Cell], sims: &[RunResult], real: &[Vec<Real>]) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    let sim_of = |i: usize| -> (f64, f64, f64) {
        sims.get(i)
            .and_then(|x| {
                x.flows.first().map(|f| {
                    (
                        f.goodput_bps / 1e6,
                        x.bottleneck.queue_delay.map_or(f64::NAN, |q| ms(q.p95)),
                        steady_ms(
                            x.bottleneck
                                .queue_series
                                .iter()
                                .map(|(t, q)| (*t, q.mean_delay_ns)),
                        ),
                    )
                })
            })
            .unwrap_or((f64::NAN, f64::NAN, f64::NAN))
    };
    let mut t = String::from("Goodput Mbit/s / p95 queueing ms over the run / mean queueing ms after 5 s, real packets (brisk CUBIC: real | simulated):");
    let mut worst_g = (0.0f64, String::new());
    let mut worst_d = (0.0f64, String::new());
    let mut errors = Vec::new();
    // brisk's real runs the emulator says it distorted: (cell, reason, goodput and
    // delay deviations). They are shown, not judged (`real_fidelity`).
    let mut distorted: Vec<(String, String, f64, f64)> = Vec::new();
    let mut clean = 0usize;
    for (i, c) in cells.iter().enumerate() {
        let _ = write!(t, "\n{} RTT {} ms:", QUEUES[c.queue].0, c.rtt_ms);
        for (k, (label, ..)) in SENDERS.iter().enumerate() {
            match &real[i][k] {
                Ok((g, p95, d, bad)) => {
                    let _ = write!(t, "  {label} {g:.2} / {p95:.1} / {d:.1}");
                    if bad.is_some() {
                        t.push_str(" (distorted)");
                    }
                    if k == 2 {
                        let (sg, sp95, sd) = sim_of(i);
                        let _ = write!(t, " | {sg:.2} / {sp95:.1} / {sd:.1}");
                        let eg = (g / sg - 1.0).abs();
                        // Delay agreement within 15 % or 2 ms (a 1-ms sojourn is
                        // below the emulator's timer resolution in relative terms).
                        // A missing side (NaN) is a failure, not 0 (`f64::max`
                        // would drop the NaN).
                        let ed = if d.is_finite() && sd.is_finite() {
                            ((d - sd).abs() - 2.0).max(0.0) / sd.max(1e-9)
                        } else {
                            f64::INFINITY
                        };
                        let cell = format!("{} RTT {}", QUEUES[c.queue].0, c.rtt_ms);
                        if let Some(why) = bad {
                            distorted.push((cell, why.clone(), eg, ed));
                            continue;
                        }
                        clean += 1;
                        if eg > worst_g.0 || !eg.is_finite() {
                            worst_g = (eg, cell.clone());
                        }
                        if ed > worst_d.0 || !ed.is_finite() {
                            worst_d = (ed, cell);
                        }
                    }
                }
                Err(e) => {
                    let _ = write!(t, "  {label} n/a");
                    errors.push(format!("{label}: {e}"));
                }
            }
        }
    }
    r.notes.push(t);
    let lab_missing = real.iter().all(|row| row.iter().all(|x| x.is_err()));
    let brisk_failed = real.iter().any(|row| row[2].is_err());
    if lab_missing || brisk_failed {
        let why = errors.first().cloned().unwrap_or_default();
        for id in CLAIMS {
            r.claims.push(
                Claim::new(
                    id,
                    "brisk CUBIC real vs simulated behind the emulated queues",
                )
                .not_applicable(format!("real runs did not complete: {why}")),
            );
        }
        return r;
    }
    // Only the cells whose brisk run kept the model's timing are judged; distorted
    // ones are named in the note with what they measured.
    let excluded = if distorted.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = distorted
            .iter()
            .map(|(cell, _, eg, ed)| {
                format!(
                    "{cell} (goodput {:.1} % off, delay {:.1} % off)",
                    eg * 100.0,
                    ed * 100.0
                )
            })
            .collect();
        format!(
            "; not judged, the emulator distorted brisk's run: {}",
            list.join(", ")
        )
    };
    let runs = clean + distorted.len();
    for (id, what, worst, pick) in [
        (
            "REAL-MAP-1",
            "brisk CUBIC goodput, real vs simulated, worst cell over the queues",
            &worst_g,
            2usize,
        ),
        (
            "REAL-MAP-2",
            "brisk CUBIC mean queueing delay after 5 s, real vs simulated, worst cell (beyond 2 ms)",
            &worst_d,
            3,
        ),
    ] {
        let claim = Claim::new(id, what)
            .paper_text("simulator")
            .unit("% off")
            .tolerance("≤ 15 %");
        if clean == 0 {
            let all = distorted
                .iter()
                .map(|x| if pick == 2 { x.2 } else { x.3 })
                .fold(0.0f64, f64::max);
            let (cell, why, ..) = &distorted[0];
            r.claims.push(super::real_fidelity::inconclusive(
                claim.ours(all * 100.0),
                distorted.len(),
                runs,
                why,
                &format!("worst {:.1} % off ({cell})", all * 100.0),
            ));
        } else {
            r.claims.push(
                claim
                    .ours(worst.0 * 100.0)
                    .check(worst.0 <= 0.15)
                    .note(format!("{}{excluded}", worst.1)),
            );
        }
    }
    for (cell, why, ..) in &distorted {
        r.notes
            .push(format!("Emulator on brisk's run, {cell}: {why}"));
    }
    if !errors.is_empty() {
        r.notes.push(format!("Not run: {}.", errors.join("; ")));
    }
    // One chart per RTT: each sender's points over the queues.
    let mut rtts: Vec<u64> = cells.iter().map(|c| c.rtt_ms).collect();
    rtts.dedup();
    for rtt in rtts {
        let mut series = Vec::new();
        for (k, (label, ..)) in SENDERS.iter().enumerate() {
            for (i, c) in cells.iter().enumerate().filter(|(_, c)| c.rtt_ms == rtt) {
                if let Ok((g, d, ..)) = real[i][k] {
                    // One colour per sender, the queue named beside its point (the
                    // 16 sender-queue pairs would repeat the ten categorical colours).
                    series.push(
                        Series::new(
                            &format!("{label}, {}", QUEUES[c.queue].0),
                            categorical(k),
                            Style::Marker,
                            vec![(d.max(0.1), g)],
                        )
                        .with_tag(QUEUES[c.queue].0),
                    );
                }
            }
        }
        r.plots.push(Plot {
            figure: Figure::Chart(Chart {
                title: format!("Real packets, RTT {rtt} ms: goodput against p95 queueing delay"),
                x_label: "p95 queueing delay (ms, log; better to the right)".into(),
                y_label: "goodput (Mbit/s)".into(),
                x_log: true,
                x_reversed: true,
                y_range: Some((0.0, 10.0)),
                series,
                ..Chart::default()
            }),
            paper: "No paper; the reference points of aqm-map's simulated picture.".into(),
            ours: format!("One flow per run through brisk-emu, 10 Mbit/s, RTT {rtt} ms."),
        });
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_parse_and_quick_is_small() {
        for quick in [true, false] {
            let (secs, cells) = shape(quick);
            for c in &cells {
                Scenario::from_toml_str_named(&scenario_toml(*c, secs), ID).unwrap();
            }
        }
        assert_eq!(shape(true).1.len(), 2);
    }

    #[test]
    fn cells_the_emulator_distorted_are_shown_not_judged() {
        let (_, cells) = shape(true);
        // No simulated runs: every comparison is off, so a judged claim fails.
        let real = |bad: &[Option<&str>]| -> Vec<Vec<Real>> {
            bad.iter()
                .map(|b| {
                    (0..SENDERS.len())
                        .map(|_| Ok((9.0, 20.0, 10.0, b.map(str::to_string))))
                        .collect()
                })
                .collect()
        };
        let verdicts = |r: &ExperimentResult| -> Vec<crate::Verdict> {
            r.claims.iter().map(|c| c.verdict).collect()
        };
        let late = "late deliveries: bottleneck delivery-time error p99 3604 us > 1000 us";
        let clean = analyse(&cells, &[], &real(&[None, None]));
        assert_eq!(verdicts(&clean), [crate::Verdict::Fail; 2]);
        let all = analyse(&cells, &[], &real(&[Some(late), Some(late)]));
        assert_eq!(verdicts(&all), [crate::Verdict::NotApplicable; 2]);
        assert!(
            all.claims[1].note.contains("3604 us"),
            "{}",
            all.claims[1].note
        );
        // One clean cell is judged; the other is named with what it measured.
        let one = analyse(&cells, &[], &real(&[None, Some(late)]));
        assert_eq!(verdicts(&one), [crate::Verdict::Fail; 2]);
        assert!(
            one.claims[1].note.contains("not judged"),
            "{}",
            one.claims[1].note
        );
    }
}
