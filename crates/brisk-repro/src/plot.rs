//! `brisk plot DIR`: flent-style time series of one run's output directory (simulated
//! or `--real`), one panel per measure and one line per flow, and a Pantheon-style
//! chart of throughput against one-way delay; all in one self-contained HTML page.
//!
//! A `brisk sweep --out` directory (`rows.csv`, `runs.jsonl`) gets one throughput-delay
//! chart across the sweep's cells instead, as Pantheon compares schemes and flent
//! compares runs: one marker per cell (the mean over its seeds, numbered as in
//! `rows.csv`, labelled by its grid values) with the seeds' covariance ellipse.
//!
//! The panels come from the run's CSV files (`goodput.csv`, `rtt.csv`, `cwnd.csv`,
//! `queue.csv`, `drops.csv`; a missing one is skipped with a note), the flows' names
//! and the throughput-delay points from `summary.json`. A directory written by
//! `brisk run --seeds A..B --out DIR` holds one `seed-<k>/` per seed: its time series
//! are the first seed's, and the throughput-delay chart shows each flow's mean over
//! the seeds with its 1-sigma covariance ellipse, as Pantheon draws them.
//!
//! Bad input is an error naming the file (and line, for CSV), never a panic.

use crate::figure::Figure;
use crate::html::esc;
use crate::svg::{categorical, Chart, Series, Style};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Samples per line beyond which a series is averaged down (a long run at a short
/// sampling interval would otherwise give megabytes of SVG).
const MAX_POINTS: usize = 2000;

/// Why a directory could not be plotted; the message names the file (and line).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PlotError(pub String);

fn err(msg: impl Into<String>) -> PlotError {
    PlotError(msg.into())
}

/// Splits CSV text into records with the line each starts on (RFC 4180: a quoted field
/// may hold commas, doubled quotes and line breaks, as `brisk sweep` writes a grid
/// value such as `{ kind = "bernoulli", p = 0.002 }`). Fields are trimmed. `Err` holds
/// the line of a quote that is never closed.
fn csv_records(text: &str) -> Result<Vec<(usize, Vec<String>)>, usize> {
    let mut out = Vec::new();
    let (mut fields, mut cur) = (Vec::new(), String::new());
    let (mut quoted, mut line, mut start, mut quote_line) = (false, 1usize, 1usize, 0usize);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            ('"', true) => quoted = false,
            ('"', false) => {
                quoted = true;
                quote_line = line;
            }
            (',', false) => fields.push(std::mem::take(&mut cur).trim().to_string()),
            ('\n', q) => {
                line += 1;
                if q {
                    cur.push('\n');
                } else {
                    fields.push(std::mem::take(&mut cur).trim().to_string());
                    out.push((start, std::mem::take(&mut fields)));
                    start = line;
                }
            }
            ('\r', false) => {}
            (c, _) => cur.push(c),
        }
    }
    if quoted {
        return Err(quote_line);
    }
    if !cur.is_empty() || !fields.is_empty() {
        fields.push(cur.trim().to_string());
        out.push((start, fields));
    }
    Ok(out)
}

/// One CSV file: its header and its rows with their line numbers.
#[derive(Debug)]
struct Csv {
    path: PathBuf,
    header: Vec<String>,
    rows: Vec<(usize, Vec<String>)>,
}

impl Csv {
    /// Reads `path`; `Ok(None)` when it does not exist.
    fn read(path: &Path) -> Result<Option<Csv>, PlotError> {
        let text = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(err(format!("{}: {e}", path.display()))),
        };
        let text = String::from_utf8(text)
            .map_err(|e| err(format!("{}: not UTF-8 text: {e}", path.display())))?;
        let records = csv_records(&text).map_err(|line| {
            err(format!(
                "{}:{line}: a quoted field is not closed",
                path.display()
            ))
        })?;
        let mut records = records.into_iter();
        let header: Vec<String> = match records.next() {
            Some((_, h)) if !(h.len() == 1 && h[0].is_empty()) => h,
            _ => return Err(err(format!("{}:1: empty file, no header", path.display()))),
        };
        let mut rows = Vec::new();
        for (line, fields) in records {
            if fields.len() == 1 && fields[0].is_empty() {
                continue;
            }
            if fields.len() != header.len() {
                return Err(err(format!(
                    "{}:{line}: {} fields where the header has {}",
                    path.display(),
                    fields.len(),
                    header.len()
                )));
            }
            rows.push((line, fields));
        }
        Ok(Some(Csv {
            path: path.to_path_buf(),
            header,
            rows,
        }))
    }

    /// The index of the first of `names` the header has.
    fn col(&self, names: &[&str]) -> Result<usize, PlotError> {
        names
            .iter()
            .find_map(|n| self.header.iter().position(|h| h == n))
            .ok_or_else(|| {
                err(format!(
                    "{}:1: no column {} in the header ({})",
                    self.path.display(),
                    names.join(" or "),
                    self.header.join(",")
                ))
            })
    }

    fn has(&self, name: &str) -> bool {
        self.header.iter().any(|h| h == name)
    }

    /// Field `c` of a row as a number; an empty field is NaN (a gap, as the writers
    /// leave for an unknown value).
    fn num(&self, line: usize, row: &[String], c: usize) -> Result<f64, PlotError> {
        let f = &row[c];
        if f.is_empty() {
            return Ok(f64::NAN);
        }
        f.parse::<f64>().map_err(|_| {
            err(format!(
                "{}:{line}: {} is not a number: {f:?}",
                self.path.display(),
                self.header[c]
            ))
        })
    }

    /// `(flow, time, value)` of every row.
    fn flow_series(
        &self,
        value: impl Fn(&Csv, usize, &[String]) -> Result<f64, PlotError>,
    ) -> Result<BTreeMap<u32, Vec<(f64, f64)>>, PlotError> {
        let (tc, fc) = (self.col(&["time_s"])?, self.col(&["flow"])?);
        let mut out: BTreeMap<u32, Vec<(f64, f64)>> = BTreeMap::new();
        for (line, row) in &self.rows {
            let flow = row[fc].parse::<u32>().map_err(|_| {
                err(format!(
                    "{}:{line}: flow is not a flow number: {:?}",
                    self.path.display(),
                    row[fc]
                ))
            })?;
            let t = self.num(*line, row, tc)?;
            out.entry(flow)
                .or_default()
                .push((t, value(self, *line, row)?));
        }
        Ok(out)
    }
}

/// A flow as `summary.json` describes it.
#[derive(Clone, Debug)]
struct FlowInfo {
    id: u32,
    label: String,
    goodput_bps: f64,
    owd_p95_ms: Option<f64>,
}

/// One run directory's `summary.json`.
struct RunInfo {
    scenario: String,
    seed: Option<u64>,
    duration_s: Option<f64>,
    real: bool,
    flows: Vec<FlowInfo>,
}

fn read_summary(dir: &Path) -> Result<RunInfo, PlotError> {
    let path = dir.join("summary.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        err(format!(
            "{}: {e} (is {} the --out directory of a brisk run?)",
            path.display(),
            dir.display()
        ))
    })?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| err(format!("{}:{}: not JSON: {e}", path.display(), e.line())))?;
    let flows = v["flows"]
        .as_array()
        .ok_or_else(|| err(format!("{}: no \"flows\" array", path.display())))?;
    let mut out = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        let id = f["id"]
            .as_u64()
            .and_then(|x| u32::try_from(x).ok())
            .ok_or_else(|| err(format!("{}: flows[{i}] has no numeric id", path.display())))?;
        let cc = f["cc"].as_str().unwrap_or("?");
        let label = match f["stack"].as_str() {
            Some(stack) => format!("flow {id} {stack} {cc}"),
            None => format!("flow {id} {cc}"),
        };
        out.push(FlowInfo {
            id,
            label,
            goodput_bps: f["goodput_bps"].as_f64().unwrap_or(f64::NAN),
            owd_p95_ms: f["one_way_delay"]["p95_ms"].as_f64(),
        });
    }
    Ok(RunInfo {
        scenario: v["scenario"].as_str().unwrap_or("?").to_string(),
        seed: v["seed"].as_u64(),
        duration_s: v["duration_s"].as_f64(),
        real: v.get("real").is_some_and(|r| !r.is_null()),
        flows: out,
    })
}

/// Averages a series down to at most `MAX_POINTS` points (NaN stays a gap).
fn thin(pts: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if pts.len() <= MAX_POINTS {
        return pts;
    }
    let k = pts.len().div_ceil(MAX_POINTS);
    pts.chunks(k)
        .map(|c| {
            let n = c.len() as f64;
            (
                c.iter().map(|p| p.0).sum::<f64>() / n,
                c.iter().map(|p| p.1).sum::<f64>() / n,
            )
        })
        .collect()
}

/// A figure on the page: a file stem for its downloads, the figure and a caption.
pub struct Panel {
    pub name: String,
    pub figure: Figure,
    pub caption: String,
}

/// Everything `brisk plot` draws for a directory.
pub struct PlotPage {
    pub title: String,
    pub notes: Vec<String>,
    pub panels: Vec<Panel>,
}

fn flow_label(flows: &[FlowInfo], id: u32) -> String {
    flows
        .iter()
        .find(|f| f.id == id)
        .map_or_else(|| format!("flow {id}"), |f| f.label.clone())
}

/// One colour per flow, by its position in `summary.json`, the same in every panel.
fn flow_color(flows: &[FlowInfo], id: u32) -> &'static str {
    categorical(flows.iter().position(|f| f.id == id).unwrap_or(id as usize))
}

fn per_flow_chart(
    title: &str,
    y_label: &str,
    flows: &[FlowInfo],
    series: BTreeMap<u32, Vec<(f64, f64)>>,
) -> Chart {
    Chart {
        title: title.into(),
        x_label: "time (s)".into(),
        y_label: y_label.into(),
        series: series
            .into_iter()
            .map(|(id, pts)| {
                Series::new(
                    &flow_label(flows, id),
                    flow_color(flows, id),
                    Style::Line,
                    thin(pts),
                )
            })
            .collect(),
        ..Chart::default()
    }
}

/// Starts the y axis at 0 (rates, windows, queue lengths and counts are read against
/// zero; the automatic range would start a narrow one at its minimum).
fn from_zero(mut c: Chart) -> Chart {
    let hi = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|v| v.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    if hi > 0.0 {
        c.y_range = Some((0.0, hi * 1.05));
    }
    c
}

/// Sets the y axis of a rate chart by its bulk, not by a few spikes: when the largest
/// sample exceeds twice the 98th percentile of all samples (at least 20), the axis
/// stops at 1.25 × that percentile. Returns (samples cut, the cap, the largest sample).
fn clip_spikes(mut c: Chart) -> (Chart, Option<(usize, f64, f64)>) {
    let mut v: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|v| v.is_finite())
        .collect();
    if v.len() < 20 {
        return (c, None);
    }
    v.sort_by(f64::total_cmp);
    let p98 = v[((v.len() - 1) as f64 * 0.98).round() as usize];
    let cap = p98 * 1.25;
    let max = v[v.len() - 1];
    if !(p98 > 0.0 && max > 2.0 * p98) {
        return (c, None);
    }
    let n = v.iter().filter(|&&x| x > cap).count();
    c.y_range = Some((0.0, cap));
    (c, Some((n, cap, max)))
}

/// Gives every time-series panel the same time axis, 0 to the run's end (its duration,
/// or the last sample of any panel), and carries the cumulative drop counts on to it.
fn common_time_axis(panels: &mut [Panel], duration_s: Option<f64>) {
    let last = panels
        .iter()
        .filter_map(|p| match &p.figure {
            Figure::Chart(c) => Some(c),
            _ => None,
        })
        .flat_map(|c| c.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)))
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max);
    let end = duration_s
        .filter(|d| d.is_finite() && *d > 0.0)
        .unwrap_or(0.0)
        .max(last);
    if end <= 0.0 {
        return;
    }
    for p in panels.iter_mut() {
        if let Figure::Chart(c) = &mut p.figure {
            c.x_range = Some((0.0, end));
            if p.name == "drops" {
                for s in &mut c.series {
                    if let Some(&(t, n)) = s.points.last() {
                        if t < end {
                            s.points.push((end, n));
                        }
                    }
                }
            }
        }
    }
}

/// The time-series panels of one run directory.
fn time_series(
    dir: &Path,
    run: &RunInfo,
    notes: &mut Vec<String>,
) -> Result<Vec<Panel>, PlotError> {
    let flows = &run.flows;
    let mut panels = Vec::new();
    let mut missing = Vec::new();
    let mut open = |name: &str| -> Result<Option<Csv>, PlotError> {
        let c = Csv::read(&dir.join(name))?;
        if c.is_none() {
            missing.push(name.to_string());
        }
        Ok(c)
    };

    if let Some(c) = open("goodput.csv")? {
        // The simulator writes the rate; real runs write bytes per interval, whose
        // rate follows from the step to the flow's previous sample.
        let series = if c.has("goodput_bps") {
            let g = c.col(&["goodput_bps"])?;
            c.flow_series(|c, l, r| Ok(c.num(l, r, g)? / 1e6))?
        } else {
            let b = c.col(&["bytes"])?;
            let bytes = c.flow_series(|c, l, r| c.num(l, r, b))?;
            bytes
                .into_iter()
                .map(|(id, pts)| {
                    let mut prev = 0.0;
                    let rates = pts
                        .into_iter()
                        .map(|(t, v)| {
                            let dt = t - prev;
                            prev = t;
                            (
                                t,
                                if dt > 0.0 {
                                    v * 8.0 / dt / 1e6
                                } else {
                                    f64::NAN
                                },
                            )
                        })
                        .collect();
                    (id, rates)
                })
                .collect()
        };
        let (chart, clipped) = clip_spikes(from_zero(per_flow_chart(
            "Goodput",
            "goodput (Mbit/s)",
            flows,
            series,
        )));
        let mut caption = format!(
            "Bytes the receiving application read per sampling interval, per flow ({}).",
            c.path.display()
        );
        if let Some((n, cap, max)) = clipped {
            let _ = write!(
                caption,
                " The axis stops at {cap:.1} Mbit/s (1.25 × the 98th percentile of all samples): {n} sample(s) above it, up to {max:.1} Mbit/s, are cut off. Such spikes are bytes held behind a hole and read at once when it fills (head-of-line release), not the link's rate."
            );
        }
        panels.push(Panel {
            name: "goodput".into(),
            figure: Figure::Chart(chart),
            caption,
        });
    }
    if let Some(c) = open("rtt.csv")? {
        let (col, what) = if c.has("mean_ms") {
            (
                c.col(&["mean_ms"])?,
                "mean of the RTT samples in each interval",
            )
        } else {
            (c.col(&["srtt_ms"])?, "the sender's smoothed RTT, sampled")
        };
        let series = c.flow_series(|c, l, r| c.num(l, r, col))?;
        panels.push(Panel {
            name: "rtt".into(),
            figure: Figure::Chart(per_flow_chart("RTT", "RTT (ms)", flows, series)),
            caption: format!("Round-trip time: {what}, per flow."),
        });
    }
    if let Some(c) = open("cwnd.csv")? {
        let col = c.col(&["cwnd_segments", "cwnd"])?;
        let series = c.flow_series(|c, l, r| c.num(l, r, col))?;
        panels.push(Panel {
            name: "cwnd".into(),
            figure: Figure::Chart(from_zero(per_flow_chart(
                "Congestion window",
                "cwnd (segments)",
                flows,
                series,
            ))),
            caption: "The sender's congestion window at each sample, per flow.".into(),
        });
    }
    if let Some(c) = open("queue.csv")? {
        let (tc, qc) = (c.col(&["time_s"])?, c.col(&["queue_packets"])?);
        let mut pts = Vec::with_capacity(c.rows.len());
        for (line, row) in &c.rows {
            pts.push((c.num(*line, row, tc)?, c.num(*line, row, qc)?));
        }
        panels.push(Panel {
            name: "queue".into(),
            figure: Figure::Chart(from_zero(Chart {
                title: "Bottleneck queue".into(),
                x_label: "time (s)".into(),
                y_label: "queue (packets)".into(),
                series: vec![Series::new(
                    "queue",
                    crate::svg::GREY,
                    Style::Line,
                    thin(pts),
                )],
                ..Chart::default()
            })),
            caption: "Packets in the bottleneck queue at each sample.".into(),
        });
    }
    if let Some(c) = open("drops.csv")? {
        if !c.rows.is_empty() {
            let series = c.flow_series(|_, _, _| Ok(0.0))?;
            // Cumulative drops: one step per drop.
            let series = series
                .into_iter()
                .map(|(id, pts)| {
                    let mut ts: Vec<f64> = pts.into_iter().map(|p| p.0).collect();
                    ts.sort_by(f64::total_cmp);
                    let mut cum = vec![(0.0, 0.0)];
                    cum.extend(ts.into_iter().enumerate().map(|(i, t)| (t, (i + 1) as f64)));
                    (id, cum)
                })
                .collect::<BTreeMap<_, _>>();
            let mut ch = per_flow_chart("Drops", "drops (cumulative)", flows, series);
            for s in &mut ch.series {
                s.style = Style::Step;
                s.points = thin(std::mem::take(&mut s.points));
            }
            let ch = from_zero(ch);
            panels.push(Panel {
                name: "drops".into(),
                figure: Figure::Chart(ch),
                caption: "Packets dropped at the bottleneck so far, per flow.".into(),
            });
        } else {
            notes.push("drops.csv: no drops in this run.".into());
        }
    }
    if !missing.is_empty() {
        notes.push(format!(
            "Not in {}: {} (those panels are left out).",
            dir.display(),
            missing.join(", ")
        ));
    }
    common_time_axis(&mut panels, run.duration_s);
    Ok(panels)
}

/// The 1-sigma covariance ellipse of `pts` (sample covariance, n − 1) as a closed
/// outline of 72 points; `None` for fewer than two points or non-finite values.
pub fn covariance_ellipse(pts: &[(f64, f64)]) -> Option<Vec<(f64, f64)>> {
    let n = pts.len();
    if n < 2 || pts.iter().any(|p| !p.0.is_finite() || !p.1.is_finite()) {
        return None;
    }
    let (mx, my) = (
        pts.iter().map(|p| p.0).sum::<f64>() / n as f64,
        pts.iter().map(|p| p.1).sum::<f64>() / n as f64,
    );
    let d = (n - 1) as f64;
    let sxx = pts.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>() / d;
    let syy = pts.iter().map(|p| (p.1 - my).powi(2)).sum::<f64>() / d;
    let sxy = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / d;
    // Eigenvalues of [[sxx, sxy], [sxy, syy]] and the major axis' angle.
    let (mid, r) = (
        (sxx + syy) / 2.0,
        (((sxx - syy) / 2.0).powi(2) + sxy * sxy).sqrt(),
    );
    let (a, b) = ((mid + r).max(0.0).sqrt(), (mid - r).max(0.0).sqrt());
    let th = 0.5 * (2.0 * sxy).atan2(sxx - syy);
    let (c, s) = (th.cos(), th.sin());
    Some(
        (0..72)
            .map(|k| {
                let t = k as f64 * std::f64::consts::TAU / 72.0;
                let (u, v) = (a * t.cos(), b * t.sin());
                (mx + u * c - v * s, my + u * s + v * c)
            })
            .collect(),
    )
}

const TPUT_DELAY_X: &str = "95th-percentile one-way delay (ms), reversed: lower is to the right";

/// Pantheon's throughput-delay chart: one point per flow (one run), or per flow the
/// mean over runs with the 1-sigma covariance ellipse (several seeds).
fn throughput_delay(runs: &[RunInfo]) -> Option<Panel> {
    let first = runs.first()?;
    let mut series = Vec::new();
    let mut without = 0;
    for (i, f) in first.flows.iter().enumerate() {
        let pts: Vec<(f64, f64)> = runs
            .iter()
            .filter_map(|r| r.flows.iter().find(|g| g.id == f.id))
            .filter_map(|g| Some((g.owd_p95_ms?, g.goodput_bps / 1e6)))
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .collect();
        if pts.is_empty() {
            without += 1;
            continue;
        }
        let n = pts.len() as f64;
        let mean = (
            pts.iter().map(|p| p.0).sum::<f64>() / n,
            pts.iter().map(|p| p.1).sum::<f64>() / n,
        );
        let mut s = Series::new(&f.label, categorical(i), Style::Marker, vec![mean]);
        if runs.len() > 1 {
            s.polygons = covariance_ellipse(&pts).into_iter().collect();
        }
        series.push(s);
    }
    if series.is_empty() {
        return None;
    }
    let caption = if runs.len() > 1 {
        format!(
            "Pantheon-style: each flow's mean throughput against its 95th-percentile one-way delay over {} seeds, with the 1-sigma covariance ellipse of the seeds' points. Delay increases to the left, so better is up and to the right.",
            runs.len()
        )
    } else {
        "Pantheon-style: each flow's mean throughput against its 95th-percentile one-way delay (sender host to receiver host). Delay increases to the left, so better is up and to the right.".into()
    };
    let mut caption = caption;
    if without > 0 {
        let _ = write!(
            caption,
            " {without} flow(s) without a one-way delay are left out."
        );
    }
    Some(tput_delay_panel(series, caption))
}

/// The throughput-delay figure of `series` (markers, maybe with ellipses), its axes
/// padded on both sides: a point or ellipse at the data's edge must not sit on the
/// frame, and delay and throughput are never below 0.
fn tput_delay_panel(series: Vec<Series>, caption: String) -> Panel {
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().chain(s.polygons.iter().flatten()))
        .copied()
        .collect();
    let padded = |v: Vec<f64>| -> (f64, f64) {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let pad = if hi > lo {
            (hi - lo) * 0.08
        } else {
            lo.abs() * 0.1 + 1.0
        };
        ((lo - pad).max(0.0), hi + pad)
    };
    let x_range = padded(all.iter().map(|p| p.0).collect());
    let y_range = padded(all.iter().map(|p| p.1).collect());
    Panel {
        name: "throughput-delay".into(),
        figure: Figure::Chart(Chart {
            title: "Throughput against delay (better: up and right)".into(),
            x_label: TPUT_DELAY_X.into(),
            y_label: "mean throughput (Mbit/s)".into(),
            x_reversed: true,
            x_range: Some(x_range),
            y_range: Some(y_range),
            series,
            ..Chart::default()
        }),
        caption,
    }
}

/// Whether `dir` is a `brisk sweep --out` directory: `rows.csv` beside `runs.jsonl`,
/// and no run's `summary.json`.
fn is_sweep_dir(dir: &Path) -> bool {
    dir.join("rows.csv").is_file()
        && dir.join("runs.jsonl").is_file()
        && !dir.join("summary.json").exists()
}

/// A grid value as a legend shows it: `{ kind = "bernoulli", p = 0.002 }` becomes
/// `bernoulli p=0.002`.
fn short_value(v: &str) -> String {
    let v = v.trim();
    let inner = v
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .unwrap_or(v);
    let parts: Vec<String> = inner
        .split(',')
        .map(|p| {
            let p = p.trim().replace('"', "");
            match p.split_once('=') {
                Some((k, x)) if k.trim() == "kind" => x.trim().to_string(),
                Some((k, x)) => format!("{}={}", k.trim(), x.trim()),
                None => p,
            }
        })
        .collect();
    parts.join(" ")
}

/// Short names for the grid keys: the last dotted part (`bottleneck.rate` -> `rate`),
/// or the whole key where two keys would share it.
fn short_keys(keys: &[String]) -> Vec<String> {
    let last = |k: &str| k.rsplit('.').next().unwrap_or(k).to_string();
    keys.iter()
        .map(|k| {
            let l = last(k);
            if keys.iter().filter(|o| last(o) == l).count() > 1 {
                k.clone()
            } else {
                l
            }
        })
        .collect()
}

/// One sweep cell as the chart needs it.
struct SweepCell {
    label: String,
    /// Per seed: (total goodput Mbit/s, largest flow p95 one-way delay ms); `None`
    /// where a flow of that run has no one-way delay.
    seeds: BTreeMap<u64, Option<(f64, f64)>>,
    flows: BTreeMap<u64, usize>,
}

/// The sweep's throughput-delay chart: one marker per cell (its mean over seeds),
/// tagged with the cell's number, with the seeds' 1-sigma covariance ellipse.
fn sweep_page(dir: &Path) -> Result<PlotPage, PlotError> {
    let path = dir.join("rows.csv");
    let c = Csv::read(&path)?.ok_or_else(|| err(format!("{}: not found", path.display())))?;
    let (cc, sc) = (c.col(&["cell"])?, c.col(&["seed"])?);
    c.col(&["flow"])?;
    let g = c.col(&["goodput_bps"])?;
    let d = c.col(&["one_way_delay.p95_ms"]).map_err(|e| {
        err(format!(
            "{e}: a network (workload) sweep has no per-flow delay to plot"
        ))
    })?;
    if cc >= sc {
        return Err(err(format!(
            "{}:1: the grid keys should sit between cell and seed in the header",
            path.display()
        )));
    }
    let keys: Vec<String> = c.header[cc + 1..sc].to_vec();
    let short = short_keys(&keys);
    let int = |line: usize, row: &[String], col: usize| -> Result<u64, PlotError> {
        row[col].parse::<u64>().map_err(|_| {
            err(format!(
                "{}:{line}: {} is not a whole number: {:?}",
                path.display(),
                c.header[col],
                row[col]
            ))
        })
    };
    let mut cells: BTreeMap<u64, SweepCell> = BTreeMap::new();
    for (line, row) in &c.rows {
        let (cell, seed) = (int(*line, row, cc)?, int(*line, row, sc)?);
        let (gbps, owd) = (c.num(*line, row, g)?, c.num(*line, row, d)?);
        let e = cells.entry(cell).or_insert_with(|| SweepCell {
            label: format!(
                "{cell}: {}",
                short
                    .iter()
                    .zip(&row[cc + 1..sc])
                    .map(|(k, v)| format!("{k}={}", short_value(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            seeds: BTreeMap::new(),
            flows: BTreeMap::new(),
        });
        *e.flows.entry(seed).or_default() += 1;
        let pt = e.seeds.entry(seed).or_insert(Some((0.0, 0.0)));
        *pt = match *pt {
            Some((t, w)) if gbps.is_finite() && owd.is_finite() => {
                Some((t + gbps / 1e6, w.max(owd)))
            }
            _ => None,
        };
    }
    if cells.is_empty() {
        return Err(err(format!("{}: no rows", path.display())));
    }
    let n_seeds = cells.values().map(|c| c.seeds.len()).max().unwrap_or(0);
    let many_flows = cells.values().any(|c| c.flows.values().any(|&n| n > 1));
    let mut series = Vec::new();
    let (mut without, mut deterministic) = (Vec::new(), 0);
    for (i, (cell, cl)) in cells.iter().enumerate() {
        let pts: Vec<(f64, f64)> = cl.seeds.values().flatten().map(|&(t, w)| (w, t)).collect();
        if pts.is_empty() {
            without.push(cell.to_string());
            continue;
        }
        let n = pts.len() as f64;
        let mean = (
            pts.iter().map(|p| p.0).sum::<f64>() / n,
            pts.iter().map(|p| p.1).sum::<f64>() / n,
        );
        let mut s = Series::new(&cl.label, categorical(i), Style::Marker, vec![mean])
            .with_tag(cell.to_string());
        if pts.iter().all(|p| *p == pts[0]) {
            deterministic += usize::from(pts.len() > 1);
        } else {
            s.polygons = covariance_ellipse(&pts).into_iter().collect();
        }
        series.push(s);
    }
    if series.is_empty() {
        return Err(err(format!(
            "{}: no cell has a one-way delay (one_way_delay.p95_ms is empty in every row)",
            path.display()
        )));
    }
    let what = if many_flows {
        "the cell's total throughput (the sum over its flows) against the largest 95th-percentile one-way delay among its flows"
    } else {
        "the flow's throughput against its 95th-percentile one-way delay"
    };
    let mut caption = format!(
        "Pantheon-style, one point per sweep cell (numbered as in rows.csv): {what}, the mean over the cell's seeds, with the 1-sigma covariance ellipse of the seeds' points. Delay increases to the left, so better is up and to the right."
    );
    if deterministic > 0 {
        let _ = write!(
            caption,
            " {deterministic} cell(s) gave the same point in every seed (deterministic), so they have no ellipse."
        );
    }
    if !without.is_empty() {
        let _ = write!(
            caption,
            " Left out, no one-way delay: cell(s) {}.",
            without.join(", ")
        );
    }
    let scenario = std::fs::read_to_string(dir.join("runs.jsonl"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| serde_json::from_str::<Value>(l).ok())
                .and_then(|v| v["summary"]["scenario"].as_str().map(str::to_string))
        })
        .unwrap_or_else(|| "?".into());
    Ok(PlotPage {
        title: format!(
            "brisk plot: sweep over {scenario}, {} cells × {n_seeds} seed(s)",
            cells.len()
        ),
        notes: vec![format!(
            "A brisk sweep directory ({}): grid keys {}. Plot one run's time series with brisk run on that cell's scenario and --out.",
            path.display(),
            keys.join(", ")
        )],
        panels: vec![tput_delay_panel(series, caption)],
    })
}

/// The `seed-<k>` subdirectories of a multi-seed output directory, by seed.
fn seed_dirs(dir: &Path) -> Result<Vec<(u64, PathBuf)>, PlotError> {
    let rd = std::fs::read_dir(dir).map_err(|e| err(format!("{}: {e}", dir.display())))?;
    let mut out = Vec::new();
    for e in rd {
        let e = e.map_err(|e| err(format!("{}: {e}", dir.display())))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(k) = name
            .strip_prefix("seed-")
            .and_then(|k| k.parse::<u64>().ok())
        {
            if e.path().is_dir() {
                out.push((k, e.path()));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Reads `dir` and builds every panel.
pub fn build(dir: &Path) -> Result<PlotPage, PlotError> {
    if !dir.is_dir() {
        return Err(err(format!("{}: no such directory", dir.display())));
    }
    if is_sweep_dir(dir) {
        return sweep_page(dir);
    }
    let seeds = seed_dirs(dir)?;
    let mut notes = Vec::new();
    let (runs, series_dir) = if seeds.is_empty() {
        (vec![read_summary(dir)?], dir.to_path_buf())
    } else {
        let runs = seeds
            .iter()
            .map(|(_, d)| read_summary(d))
            .collect::<Result<Vec<_>, _>>()?;
        notes.push(format!(
            "{} seeds ({}). Time series: seed {} only (plot another with brisk plot {}).",
            seeds.len(),
            seeds
                .iter()
                .map(|s| s.0.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            seeds[0].0,
            seeds[0].1.display()
        ));
        (runs, seeds[0].1.clone())
    };
    let first = &runs[0];
    let mut panels = time_series(&series_dir, first, &mut notes)?;
    match throughput_delay(&runs) {
        Some(p) => panels.push(p),
        None => notes.push(if first.real {
            "No throughput-delay chart: real runs do not measure one-way delay (summary.json has one_way_delay null).".into()
        } else {
            "No throughput-delay chart: no flow has a one-way delay in summary.json.".into()
        }),
    }
    let mut title = format!("brisk plot: {}", first.scenario);
    if seeds.is_empty() {
        if let Some(s) = first.seed {
            let _ = write!(title, ", seed {s}");
        }
    }
    if let Some(d) = first.duration_s {
        let _ = write!(title, ", {d} s");
    }
    if first.real {
        title.push_str(" (real packets)");
    }
    Ok(PlotPage {
        title,
        notes,
        panels,
    })
}

/// `data:` URL of `text` (percent-encoded), for a download link inside the page.
fn data_url(mime: &str, text: &str) -> String {
    let mut o = format!("data:{mime};charset=utf-8,");
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            o.push(b as char);
        } else {
            let _ = write!(o, "%{b:02X}");
        }
    }
    o
}

const CSS: &str = "body{font-family:Helvetica,Arial,sans-serif;max-width:1440px;margin:2em auto;padding:0 1em;color:#222}
.figs{display:grid;grid-template-columns:minmax(0,1fr);gap:.5em 2.5em;margin:1em 0}
@media (min-width:1150px){.figs{grid-template-columns:repeat(2,minmax(0,1fr))}}
figure{margin:0 0 1.5em}figure svg{width:100%;height:auto;max-width:760px;display:block}
figcaption{font-size:13px;line-height:1.4}.dl{font-size:12px;color:#555}.note{font-size:13px;color:#444}";

impl PlotPage {
    /// The page: inline CSS and SVG, no scripts, no external resources; each figure's
    /// SVG and CSV are `data:` links, so the one file is all there is to share.
    pub fn html(&self) -> String {
        let mut o = String::new();
        let _ = write!(
            o,
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{CSS}</style></head><body><h1>{}</h1>",
            esc(&self.title),
            esc(&self.title)
        );
        for n in &self.notes {
            let _ = write!(o, "<p class=\"note\">{}</p>", esc(n));
        }
        o.push_str("<div class=\"figs\">");
        for p in &self.panels {
            let svg = p.figure.svg(&format!("plot-{}", p.name));
            let file_svg = format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{svg}\n");
            let _ = write!(
                o,
                "<figure>{svg}<figcaption>{}<br><span class=\"dl\">Download: <a download=\"{name}.csv\" href=\"{}\">data (CSV)</a> · <a download=\"{name}.svg\" href=\"{}\">figure (SVG)</a></span></figcaption></figure>",
                esc(&p.caption),
                data_url("text/csv", &p.figure.csv()),
                data_url("image/svg+xml", &file_svg),
                name = esc(&p.name),
            );
        }
        o.push_str("</div></body></html>\n");
        o
    }
}

/// Plots `dir` into `out` (default `dir/plot.html`); returns the file written.
pub fn write(dir: &Path, out: Option<&Path>) -> Result<PathBuf, PlotError> {
    let page = build(dir)?;
    let path = out.map_or_else(|| dir.join("plot.html"), Path::to_path_buf);
    std::fs::write(&path, page.html()).map_err(|e| err(format!("{}: {e}", path.display())))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ellipse_of_correlated_points_is_tilted_and_centred() {
        let pts = [(1.0, 1.0), (2.0, 2.1), (3.0, 2.9), (4.0, 4.0)];
        let e = covariance_ellipse(&pts).unwrap();
        let n = e.len() as f64;
        let (cx, cy) = (
            e.iter().map(|p| p.0).sum::<f64>() / n,
            e.iter().map(|p| p.1).sum::<f64>() / n,
        );
        assert!((cx - 2.5).abs() < 1e-9 && (cy - 2.5).abs() < 1e-9);
        // The major axis runs along y = x: its first point is up and to the right.
        assert!(e[0].0 > 3.0 && e[0].1 > 3.0, "{:?}", e[0]);
        assert!(covariance_ellipse(&pts[..1]).is_none());
    }

    fn chart_of(points: Vec<(f64, f64)>) -> Chart {
        Chart {
            series: vec![Series::new("f", "#000000", Style::Line, points)],
            ..Chart::default()
        }
    }

    #[test]
    fn one_head_of_line_spike_does_not_set_the_goodput_axis() {
        let mut pts: Vec<(f64, f64)> = (0..100).map(|i| (i as f64, 9.0 + (i % 3) as f64)).collect();
        pts[50].1 = 220.0;
        let (c, clipped) = clip_spikes(chart_of(pts.clone()));
        let (n, cap, max) = clipped.expect("clipped");
        assert_eq!((n, max), (1, 220.0));
        assert!((cap - 11.0 * 1.25).abs() < 1e-9, "{cap}");
        assert_eq!(c.y_range, Some((0.0, cap)));
        // Ordinary variation (peaks under twice the 98th percentile) is not cut.
        pts[50].1 = 18.0;
        assert!(clip_spikes(chart_of(pts)).1.is_none());
    }

    #[test]
    fn every_time_series_panel_spans_the_run_and_drops_run_on_to_its_end() {
        let panel = |name: &str, pts| Panel {
            name: name.into(),
            figure: Figure::Chart(chart_of(pts)),
            caption: String::new(),
        };
        let mut panels = vec![
            panel("goodput", vec![(0.1, 1.0), (19.9, 1.0)]),
            panel("drops", vec![(0.0, 0.0), (3.0, 1.0), (4.0, 2.0)]),
        ];
        common_time_axis(&mut panels, Some(20.0));
        for p in &panels {
            let Figure::Chart(c) = &p.figure else {
                panic!()
            };
            assert_eq!(c.x_range, Some((0.0, 20.0)), "{}", p.name);
        }
        let Figure::Chart(d) = &panels[1].figure else {
            panic!()
        };
        assert_eq!(d.series[0].points.last(), Some(&(20.0, 2.0)));
    }

    #[test]
    fn data_urls_escape_everything_but_plain_characters() {
        assert_eq!(
            data_url("text/csv", "a,b\n1 2"),
            "data:text/csv;charset=utf-8,a%2Cb%0A1%202"
        );
    }

    #[test]
    fn garbled_csv_names_file_and_line() {
        let dir = std::env::temp_dir().join(format!("brisk-plot-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("rtt.csv");
        std::fs::write(&p, "time_s,flow,mean_ms\n0.1,0,3\n0.2,0,x\n").unwrap();
        let c = Csv::read(&p).unwrap().unwrap();
        let col = c.col(&["mean_ms"]).unwrap();
        let e = c.flow_series(|c, l, r| c.num(l, r, col)).unwrap_err();
        assert!(
            e.0.ends_with("rtt.csv:3: mean_ms is not a number: \"x\""),
            "{e}"
        );
        std::fs::write(&p, "time_s,flow,mean_ms\n0.1,0\n").unwrap();
        let e = Csv::read(&p).unwrap_err();
        assert!(
            e.0.ends_with("rtt.csv:2: 2 fields where the header has 3"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
