//! flent's standard tests in the simulator (issue 35 §3): `rrul`, `tcp-upload` and
//! `tcp-download` (Høiland-Jørgensen et al., "Flent: The FLExible Network Tester",
//! VALUETOOLS 2017; test definitions `flent/tests/rrul.conf`, `tcp_upload.conf`,
//! `tcp_download.conf`), drawn as flent draws them: throughput per direction and
//! latency over time (its `all_scaled` plot), and the latency's CDF and box summary
//! across runs (its `ping_cdf` and `box_ping` plots).
//!
//! The path is a dumbbell with a bottleneck each way (`[bottleneck]` up, `[reverse]`
//! down), the same rate and queue both ways unless `down_rate` differs, and ≤ 1 ms of
//! seeded non-reordering jitter on each (so seeds differ). Flows, as flent's tests:
//! - `rrul`: 4 TCP uploads (bulk), 4 TCP downloads (`request_response`: the data comes from the far host over
//!   `[reverse]`), a ping-like probe and a UDP latency probe (a response is at most 64 MiB, so a
//!   download is back-to-back 64-MiB responses, one round trip apart);
//! - `tcp-upload` / `tcp-download`: one TCP flow in that direction and the ping.
//!
//! Departures, each because brisk has no such packet: flent's ping is ICMP every
//! 200 ms; here it is a TCP request/response of 64 bytes each way every 200 ms (an
//! idle connection's round trip: both queues and the delayed-ACK-free exchange, as
//! netperf's TCP_RR), so its latency is a round trip like ping's. flent's UDP_RR
//! probes are round trips too; brisk's UDP app is one-way, so the UDP probe here is a
//! 100-byte datagram upward every 200 ms and its one-way delay is plotted. Load starts
//! after 5 s of idle probes, as flent's `delay` of 5 s; the load runs `length`.
//!
//! `brisk flent <test>` runs one test for any controller and queue
//! ([`Setup`]); `brisk repro flent` runs the three tests for CUBIC and BBR behind a
//! drop-tail and CoDel and checks what these tests exist to show.

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Job, Plan, Plot};
use crate::figure::Figure;
use crate::stats::box_stats;
use crate::svg::{categorical, BoxPlot, Chart, Series, Style};
use brisk_sim::{RunResult, Scenario};
use std::fmt::Write;

pub const ID: &str = "flent";
pub const TITLE: &str =
    "flent's RRUL, TCP upload and TCP download with latency under load (issue 35)";
pub const CLAIMS: &[&str] = &["FLENT-1", "FLENT-2", "FLENT-3"];

/// Seconds of idle probing before the load starts (flent's `delay`).
pub const IDLE_S: u64 = 5;
/// The probes' interval (flent's ping step, 0.2 s), ms.
const PROBE_MS: u64 = 200;

/// One of flent's tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    Rrul,
    TcpUpload,
    TcpDownload,
}

impl Test {
    pub const ALL: [Test; 3] = [Test::Rrul, Test::TcpUpload, Test::TcpDownload];

    /// flent's name (with a dash, as `brisk flent` takes it).
    pub fn name(self) -> &'static str {
        match self {
            Test::Rrul => "rrul",
            Test::TcpUpload => "tcp-upload",
            Test::TcpDownload => "tcp-download",
        }
    }

    /// The test named `s` (flent's underscores accepted).
    pub fn parse(s: &str) -> Result<Test, String> {
        let s = s.replace('_', "-");
        Test::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| {
                format!("unknown flent test {s:?}: one of rrul, tcp-upload, tcp-download")
            })
    }

    /// (TCP uploads, TCP downloads, UDP probe).
    fn flows(self) -> (usize, usize, bool) {
        match self {
            Test::Rrul => (4, 4, true),
            Test::TcpUpload => (1, 0, false),
            Test::TcpDownload => (0, 1, false),
        }
    }
}

/// One run of a test: its controller, queue and path.
#[derive(Clone, Debug)]
pub struct Setup {
    pub test: Test,
    /// A label for the controller (e.g. "CUBIC").
    pub cc_label: String,
    /// The `cc = "..."` name of the TCP flows.
    pub cc: String,
    /// Extra `[flow.tcp]` lines of the TCP flows (e.g. `ecn = true`).
    pub tcp: String,
    /// A label for the queue.
    pub queue_label: String,
    /// The queue as an inline TOML table, both directions.
    pub queue: String,
    /// Up and down rates, Mbit/s.
    pub up_mbit: f64,
    pub down_mbit: f64,
    /// Base round-trip time, ms.
    pub rtt_ms: u64,
    /// Seconds of load (flent's `length`, default 60).
    pub length_s: u64,
}

impl Setup {
    /// How reports name the run.
    pub fn label(&self) -> String {
        format!(
            "{} {} {}",
            self.test.name(),
            self.cc_label,
            self.queue_label
        )
    }

    /// The scenario text: uploads, downloads, then the ping, then the UDP probe.
    pub fn scenario_toml(&self) -> String {
        let (up, down, udp) = self.test.flows();
        let dur = IDLE_S + self.length_s;
        let mut s = format!(
            "name = \"{ID}-{}\"\nduration = \"{dur}s\"\nsample_interval = \"{PROBE_MS}ms\"\n\
             [bottleneck]\nrate = \"{}kbit\"\nqueue = {}\njitter = {{ max = \"1ms\", reorder = false }}\n\
             [reverse]\nrate = \"{}kbit\"\nqueue = {}\njitter = {{ max = \"1ms\", reorder = false }}\n",
            self.test.name(),
            (self.up_mbit * 1000.0).round() as u64,
            self.queue,
            (self.down_mbit * 1000.0).round() as u64,
            self.queue,
        );
        let tcp_flow = |s: &mut String, app: &str| {
            let _ = write!(
                s,
                "[[flow]]\nrtt = \"{}ms\"\ncc = \"{}\"\nstart = \"{IDLE_S}s\"\napp = {app}\n[flow.tcp]\n{}",
                self.rtt_ms, self.cc, self.tcp
            );
        };
        for _ in 0..up {
            tcp_flow(&mut s, "{ kind = \"bulk\" }");
        }
        for _ in 0..down {
            // Back-to-back 64-MiB responses (the app's largest) to 100-B requests: a
            // download, with one round trip's pause every 64 MiB (27 s at 20 Mbit/s).
            tcp_flow(
                &mut s,
                "{ kind = \"request_response\", request = \"100B\", response = \"64MiB\" }",
            );
        }
        let _ = write!(
            s,
            "[[flow]]\nrtt = \"{}ms\"\napp = {{ kind = \"request_response\", request = \"64B\", response = \"64B\", think = \"{PROBE_MS}ms\" }}\n",
            self.rtt_ms
        );
        if udp {
            let _ = write!(
                s,
                "[[flow]]\nrtt = \"{}ms\"\napp = {{ kind = \"udp\", size = \"100B\", interval = \"{PROBE_MS}ms\" }}\n",
                self.rtt_ms
            );
        }
        s
    }

    pub fn scenario(&self) -> Result<Scenario, String> {
        Scenario::from_toml_str_named(&self.scenario_toml(), ID).map_err(|e| e.to_string())
    }
}

/// What one run gives: series in (s, value) and the probes' samples under load.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// Per TCP flow: (s, Mbit/s), uploads then downloads.
    pub up: Vec<Vec<(f64, f64)>>,
    pub down: Vec<Vec<(f64, f64)>>,
    /// Ping-like round trips: (request s, ms).
    pub ping: Vec<(f64, f64)>,
    /// UDP one-way delays: (sent s, ms).
    pub udp: Vec<(f64, f64)>,
    /// Mean throughput per direction over the load, Mbit/s (sum over flows).
    pub up_mbit: f64,
    pub down_mbit: f64,
}

impl Measured {
    /// The ping's round trips while the load runs (after its first second: flent's
    /// summaries skip the ramp-up too), ms.
    pub fn ping_loaded(&self) -> Vec<f64> {
        let from = IDLE_S as f64 + 1.0;
        self.ping
            .iter()
            .filter(|p| p.0 >= from)
            .map(|p| p.1)
            .collect()
    }
    /// The ping's round trips before the load, ms.
    pub fn ping_idle(&self) -> Vec<f64> {
        self.ping
            .iter()
            .filter(|p| p.0 < IDLE_S as f64)
            .map(|p| p.1)
            .collect()
    }
}

/// Per-interval Mbit/s from cumulative (ns, bytes) rows.
fn rate_from_totals(rows: &[(u64, u64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(rows.len());
    let mut prev: Option<(u64, u64)> = None;
    for &(t, b) in rows {
        if let Some((t0, b0)) = prev {
            let dt = (t - t0) as f64 / 1e9;
            if dt > 0.0 {
                out.push((t as f64 / 1e9, (b - b0) as f64 * 8.0 / dt / 1e6));
            }
        }
        prev = Some((t, b));
    }
    out
}

/// Per-interval Mbit/s from per-interval (ns, bytes) rows.
fn rate_from_intervals(rows: &[(u64, u64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(rows.len());
    let mut t0 = 0u64;
    for &(t, b) in rows {
        let dt = (t.saturating_sub(t0)) as f64 / 1e9;
        if dt > 0.0 {
            out.push((t as f64 / 1e9, b as f64 * 8.0 / dt / 1e6));
        }
        t0 = t;
    }
    out
}

/// Mean of a series' values with t in the load window (after its first second).
fn load_mean(series: &[(f64, f64)]) -> f64 {
    let v: Vec<f64> = series
        .iter()
        .filter(|p| p.0 > IDLE_S as f64 + 1.0)
        .map(|p| p.1)
        .collect();
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Reads one run of `test`.
pub fn measure(test: Test, r: &RunResult) -> Measured {
    let (up, down, udp) = test.flows();
    let mut m = Measured::default();
    for f in r.flows.iter().take(up) {
        m.up.push(rate_from_intervals(&f.goodput_series));
    }
    for f in r.flows.iter().skip(up).take(down) {
        m.down.push(rate_from_totals(&f.rx_series));
    }
    if let Some(p) = r.flows.get(up + down) {
        m.ping = p
            .exchanges
            .iter()
            .map(|&(s, e)| (s as f64 / 1e9, (e - s) as f64 / 1e6))
            .collect();
    }
    if udp {
        if let Some(d) = r
            .flows
            .get(up + down + 1)
            .and_then(|f| f.datagrams.as_ref())
        {
            m.udp = d
                .deliveries
                .iter()
                .map(|&(_, g, t)| (g as f64 / 1e9, (t - g) as f64 / 1e6))
                .collect();
        }
    }
    m.up_mbit = m.up.iter().map(|s| load_mean(s)).sum();
    m.down_mbit = m.down.iter().map(|s| load_mean(s)).sum();
    m
}

/// Sums per-flow series sample by sample (they share the sampling instants).
fn sum_series(flows: &[Vec<(f64, f64)>]) -> Vec<(f64, f64)> {
    let mut acc: Vec<(f64, f64)> = Vec::new();
    for s in flows {
        for &(t, v) in s {
            match acc.iter_mut().find(|p| (p.0 - t).abs() < 1e-6) {
                Some(p) => p.1 += v,
                None => acc.push((t, v)),
            }
        }
    }
    acc.sort_by(|a, b| a.0.total_cmp(&b.0));
    acc
}

/// flent's `all_scaled` for one run: throughput per direction (totals and each flow)
/// and latency over time, as two charts.
pub fn run_plots(s: &Setup, m: &Measured) -> Vec<Plot> {
    let mut series = Vec::new();
    if !m.down.is_empty() {
        series.push(Series::new(
            "download (sum)",
            categorical(0),
            Style::Line,
            sum_series(&m.down),
        ));
        for (i, f) in m.down.iter().enumerate().filter(|_| m.down.len() > 1) {
            series.push(Series::new(
                &format!("download {}", i + 1),
                categorical(0),
                Style::Dashed,
                f.clone(),
            ));
        }
    }
    if !m.up.is_empty() {
        series.push(Series::new(
            "upload (sum)",
            categorical(1),
            Style::Line,
            sum_series(&m.up),
        ));
        for (i, f) in m.up.iter().enumerate().filter(|_| m.up.len() > 1) {
            series.push(Series::new(
                &format!("upload {}", i + 1),
                categorical(1),
                Style::Dashed,
                f.clone(),
            ));
        }
    }
    let top = s.up_mbit.max(s.down_mbit) * 1.15;
    let tput = Plot {
        figure: Figure::Chart(Chart {
            title: format!("{}: throughput per direction", s.label()),
            x_label: "time (s)".into(),
            y_label: "Mbit/s".into(),
            y_range: Some((0.0, top)),
            series,
            v_lines: vec![(IDLE_S as f64, "load starts".into())],
            ..Chart::default()
        }),
        paper: "flent's all_scaled plot: download and upload throughput (each flow and the sum) over time.".into(),
        ours: format!(
            "{}: {} Mbit/s up, {} down, base RTT {} ms; mean over the load: up {:.2}, down {:.2} Mbit/s.",
            s.label(),
            s.up_mbit,
            s.down_mbit,
            s.rtt_ms,
            m.up_mbit,
            m.down_mbit
        ),
    };
    let mut lat = vec![Series::new(
        "ping-like (TCP 64 B RR), round trip",
        categorical(2),
        Style::Line,
        m.ping.clone(),
    )];
    if !m.udp.is_empty() {
        lat.push(Series::new(
            "UDP probe, one way (upload)",
            categorical(3),
            Style::Line,
            m.udp.clone(),
        ));
    }
    let latency = Plot {
        figure: Figure::Chart(Chart {
            title: format!("{}: latency under load", s.label()),
            x_label: "time (s)".into(),
            y_label: "ms".into(),
            series: lat,
            v_lines: vec![(IDLE_S as f64, "load starts".into())],
            ..Chart::default()
        }),
        paper: "flent's all_scaled plot: the latency probes over time.".into(),
        ours: {
            let idle = box_stats(&m.ping_idle()).map_or(f64::NAN, |b| b.median);
            let load = box_stats(&m.ping_loaded()).map_or(f64::NAN, |b| b.median);
            format!(
                "Ping-like round trip: median {idle:.1} ms idle, {load:.1} ms under load (the probes before {IDLE_S} s are idle)."
            )
        },
    };
    vec![tput, latency]
}

/// flent's `ping_cdf` and `box_ping` across runs: each run's ping under load.
pub fn summary_plots(title: &str, runs: &[(String, Vec<f64>)]) -> Vec<Plot> {
    let mut series = Vec::new();
    let mut groups = Vec::new();
    for (i, (label, v)) in runs.iter().enumerate() {
        let mut s = v.clone();
        s.sort_by(f64::total_cmp);
        let n = s.len().max(1) as f64;
        let pts: Vec<(f64, f64)> = s
            .iter()
            .enumerate()
            .map(|(k, &x)| (x, (k + 1) as f64 / n))
            .collect();
        let mut ser = Series::new(label, categorical(i), Style::Step, pts);
        ser.steps = true;
        series.push(ser);
        if let Some(b) = box_stats(v) {
            groups.push((label.clone(), categorical(i), b));
        }
    }
    vec![
        Plot {
            figure: Figure::Chart(Chart {
                title: format!("{title}: CDF of the ping-like round trip under load"),
                x_label: "round trip (ms, log)".into(),
                y_label: "cumulative probability".into(),
                x_log: true,
                y_range: Some((0.0, 1.0)),
                series,
                ..Chart::default()
            }),
            paper: "flent's ping_cdf plot.".into(),
            ours: "Every run's ping-like probes after the load's first second, all seeds together."
                .into(),
        },
        Plot {
            figure: Figure::Boxes(BoxPlot {
                title: format!("{title}: ping-like round trip under load"),
                x_label: "run".into(),
                y_label: "round trip (ms, log)".into(),
                y_log: true,
                groups,
            }),
            paper: "flent's box_ping plot.".into(),
            ours: "Box = IQR, line = median, whiskers = Tukey fences; all seeds together.".into(),
        },
    ]
}

// --- brisk repro flent ---

/// (controller label, cc, queue label, queue): the repro's arms.
const ARMS: [(&str, &str, &str, &str); 4] = [
    (
        "CUBIC",
        "cubic",
        "drop-tail",
        "{ kind = \"droptail\", time = \"200ms\" }",
    ),
    (
        "BBR",
        "bbr",
        "drop-tail",
        "{ kind = \"droptail\", time = \"200ms\" }",
    ),
    ("CUBIC", "cubic", "CoDel", "{ kind = \"codel\" }"),
    ("BBR", "bbr", "CoDel", "{ kind = \"codel\" }"),
];

/// (load seconds, seeds).
fn shape(quick: bool) -> (u64, u64) {
    if quick {
        (10, 2)
    } else {
        (60, 3)
    }
}

/// The repro's setups: every test, every arm.
fn setups(quick: bool) -> Vec<Setup> {
    let (length_s, _) = shape(quick);
    let mut v = Vec::new();
    for test in Test::ALL {
        for (cc_label, cc, ql, q) in ARMS {
            v.push(Setup {
                test,
                cc_label: cc_label.into(),
                cc: cc.into(),
                tcp: String::new(),
                queue_label: ql.into(),
                queue: q.into(),
                up_mbit: 20.0,
                down_mbit: 20.0,
                rtt_ms: 40,
                length_s,
            });
        }
    }
    v
}

/// Jobs of `setups` over `seeds`: setup-major.
pub fn jobs(setups: &[Setup], seeds: &[u64]) -> Result<Vec<Job>, String> {
    let mut jobs = Vec::new();
    for s in setups {
        let sc = s.scenario()?;
        for &seed in seeds {
            jobs.push(Job::new(
                format!("{ID} {} seed {seed}", s.label()),
                sc.clone(),
                seed,
            ));
        }
    }
    Ok(jobs)
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let setups = setups(quick);
    let (_, n) = shape(quick);
    let seeds: Vec<u64> = (1..=n).collect();
    let jobs = jobs(&setups, &seeds)?;
    Ok(Plan {
        jobs,
        analyse: Box::new(move |runs| analyse(&setups, seeds.len(), runs)),
    })
}

/// Per setup: each seed's measurement.
pub fn measure_all(setups: &[Setup], seeds: usize, runs: &[RunResult]) -> Vec<Vec<Measured>> {
    setups
        .iter()
        .enumerate()
        .map(|(i, s)| {
            runs.iter()
                .skip(i * seeds)
                .take(seeds)
                .map(|r| measure(s.test, r))
                .collect()
        })
        .collect()
}

/// The figures of `setups` (each run's first seed over time, then per test the
/// summaries across its setups) and a note per setup.
pub fn report(r: &mut ExperimentResult, setups: &[Setup], ms: &[Vec<Measured>]) {
    for test in Test::ALL {
        let idx: Vec<usize> = (0..setups.len())
            .filter(|&i| setups[i].test == test)
            .collect();
        if idx.is_empty() {
            continue;
        }
        let mut sums = Vec::new();
        for &i in &idx {
            let s = &setups[i];
            if let Some(m) = ms[i].first() {
                r.plots.extend(run_plots(s, m));
            }
            let ping: Vec<f64> = ms[i].iter().flat_map(|m| m.ping_loaded()).collect();
            let idle: Vec<f64> = ms[i].iter().flat_map(|m| m.ping_idle()).collect();
            let up: f64 = ms[i].iter().map(|m| m.up_mbit).sum::<f64>() / ms[i].len().max(1) as f64;
            let down: f64 =
                ms[i].iter().map(|m| m.down_mbit).sum::<f64>() / ms[i].len().max(1) as f64;
            let b = box_stats(&ping);
            let udp: Vec<f64> = ms[i]
                .iter()
                .flat_map(|m| {
                    m.udp
                        .iter()
                        .filter(|p| p.0 > IDLE_S as f64 + 1.0)
                        .map(|p| p.1)
                })
                .collect();
            r.notes.push(format!(
                "{}: {} seed(s); throughput up {up:.2}, down {down:.2} Mbit/s; ping-like round trip idle median {:.1} ms, under load median {:.1} ms (IQR {:.1}-{:.1}, p99 {:.1}){}",
                s.label(),
                ms[i].len(),
                box_stats(&idle).map_or(f64::NAN, |b| b.median),
                b.as_ref().map_or(f64::NAN, |b| b.median),
                b.as_ref().map_or(f64::NAN, |b| b.q1),
                b.as_ref().map_or(f64::NAN, |b| b.q3),
                crate::stats::quantile(&ping, 0.99),
                if udp.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; UDP one-way median {:.1} ms",
                        box_stats(&udp).map_or(f64::NAN, |b| b.median)
                    )
                }
            ));
            sums.push((format!("{} {}", s.cc_label, s.queue_label), ping));
        }
        r.plots.extend(summary_plots(test.name(), &sums));
    }
}

fn median(v: &[f64]) -> f64 {
    box_stats(v).map_or(f64::NAN, |b| b.median)
}

fn analyse(setups: &[Setup], seeds: usize, runs: &[RunResult]) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    let ms = measure_all(setups, seeds, runs);
    r.notes.push(format!(
        "Set-up: 20 Mbit/s each way, base RTT 40 ms, the same queue both ways (drop-tail 200 ms, or CoDel 5 ms / 100 ms), ≤ 1 ms seeded jitter, {seeds} seed(s), {IDLE_S} s of idle probes then the load. Ping-like probe: a 64-B TCP request/response every 200 ms (flent pings with ICMP); UDP probe: 100-B datagrams upward every 200 ms, one-way (flent's UDP_RR is a round trip)."
    ));
    let find = |t: Test, cc: &str, q: &str| {
        setups
            .iter()
            .position(|s| s.test == t && s.cc_label == cc && s.queue_label == q)
    };
    let ping_of = |i: usize| -> Vec<f64> { ms[i].iter().flat_map(|m| m.ping_loaded()).collect() };
    // FLENT-1: RRUL with CUBIC: CoDel keeps the round trip under load far below the
    // bloated drop-tail's (what RRUL was made to show, Høiland-Jørgensen et al. §4).
    if let (Some(dt), Some(cd)) = (
        find(Test::Rrul, "CUBIC", "drop-tail"),
        find(Test::Rrul, "CUBIC", "CoDel"),
    ) {
        let (a, b) = (median(&ping_of(dt)), median(&ping_of(cd)));
        r.claims.push(
            Claim::new(
                "FLENT-1",
                "RRUL, CUBIC: median ping-like round trip under load, CoDel against a 200-ms drop-tail",
            )
            .paper_text("far lower behind CoDel (bufferbloat; flent paper §4)")
            .ours_text(&format!("{b:.0} vs {a:.0} ms"))
            .tolerance("CoDel's at most half")
            .check(b <= 0.5 * a),
        );
    }
    // FLENT-2: RRUL with CUBIC behind CoDel uses both directions (4 flows each way,
    // each direction's ACKs sharing the other's queue).
    if let Some(cd) = find(Test::Rrul, "CUBIC", "CoDel") {
        let n = ms[cd].len().max(1) as f64;
        let up = ms[cd].iter().map(|m| m.up_mbit).sum::<f64>() / n;
        let down = ms[cd].iter().map(|m| m.down_mbit).sum::<f64>() / n;
        r.claims.push(
            Claim::new(
                "FLENT-2",
                "RRUL, CUBIC behind CoDel: throughput per direction (20 Mbit/s each way)",
            )
            .paper_text("both directions near the link rate")
            .ours_text(&format!("up {up:.1}, down {down:.1} Mbit/s"))
            .tolerance("each ≥ 80 % of 20 Mbit/s")
            .check(up >= 16.0 && down >= 16.0),
        );
    }
    // FLENT-3: one CUBIC upload fills the drop-tail buffer: the round trip under load
    // grows by most of the 200-ms buffer.
    if let Some(dt) = find(Test::TcpUpload, "CUBIC", "drop-tail") {
        let load = median(&ping_of(dt));
        let idle = median(
            &ms[dt]
                .iter()
                .flat_map(|m| m.ping_idle())
                .collect::<Vec<_>>(),
        );
        r.claims.push(
            Claim::new(
                "FLENT-3",
                "TCP upload, CUBIC, 200-ms drop-tail: median ping-like round trip, under load minus idle",
            )
            .paper_text("most of the buffer (CUBIC fills it)")
            .ours_text(&format!("{:.0} ms ({load:.0} - {idle:.0})", load - idle))
            .tolerance("≥ 100 ms")
            .check(load - idle >= 100.0),
        );
    }
    report(&mut r, setups, &ms);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_parse_and_every_setup_builds() {
        assert_eq!(Test::parse("tcp_upload").unwrap(), Test::TcpUpload);
        assert!(Test::parse("rtt_fair").unwrap_err().contains("rrul"));
        for s in setups(false) {
            let sc = s.scenario().unwrap();
            let (up, down, udp) = s.test.flows();
            assert_eq!(
                sc.flows.len(),
                up + down + 1 + usize::from(udp),
                "{}",
                s.label()
            );
            assert!(sc.reverse.is_some());
        }
    }

    #[test]
    fn rrul_runs_both_directions_and_the_probes() {
        let s = Setup {
            length_s: 3,
            ..setups(true)[2].clone()
        };
        assert_eq!((s.test, s.queue_label.as_str()), (Test::Rrul, "CoDel"));
        let r = brisk_sim::run(&s.scenario().unwrap(), 1).unwrap();
        let m = measure(s.test, &r);
        assert_eq!((m.up.len(), m.down.len()), (4, 4));
        assert!(
            m.up_mbit > 10.0 && m.down_mbit > 10.0,
            "{} {}",
            m.up_mbit,
            m.down_mbit
        );
        // Idle pings see the base RTT (40 ms) plus serialisation and jitter.
        let idle = m.ping_idle();
        assert!(idle.len() >= 15, "{}", idle.len());
        assert!(idle.iter().all(|&x| (40.0..50.0).contains(&x)), "{idle:?}");
        assert!(!m.ping_loaded().is_empty() && !m.udp.is_empty());
    }
}
