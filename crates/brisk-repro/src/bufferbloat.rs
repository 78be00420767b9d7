//! Experiment `real-bufferbloat`: the thesis' bufferbloat baseline (10 Mbit/s, 10 ms,
//! 1000-packet drop-tail queue, one bulk flow, 20 s) over real packets, side by side
//! with Linux and with the simulator: Linux CUBIC, Linux BBR, brisk CUBIC and brisk
//! CUBIC + delay correlation, one flow at a time through the same emulated path, and
//! the simulator's run of the same scenario for each brisk variant.
//!
//! Fidelity claims checked: brisk CUBIC real vs simulated within 15 % on mean RTT and
//! goodput; brisk CUBIC vs Linux CUBIC within 20 %. brisk's "real" and simulated mean
//! RTT are both per-ACK sender samples; brisk vs Linux compares sampled srtt, the one
//! RTT measure the kernel exposes (see `brisk_emu::realrun`).
//!
//! It lives in brisk-repro, beside the experiment that grades it (`exp::real_bloat`),
//! because it needs both the emulator and the simulator; brisk-emu stays free of
//! brisk-sim.

use std::fmt::Write as _;
use std::path::Path;

use brisk_time::Duration;
use serde_json::{json, Value};

use brisk_emu::error::{EmuError, Result};
use brisk_emu::path::{Dur, EmuConfig, PathSpec, QueueSpec, Rate};
use brisk_emu::realrun::{run_real, FlowStack, RealResult, RealRun};

/// One variant's numbers.
#[derive(Clone, Debug)]
pub struct BloatRow {
    pub label: &'static str,
    pub stack: FlowStack,
    pub goodput_bps: f64,
    /// Per-ACK samples (brisk) or sampled srtt (Linux), ms.
    pub rtt_mean_ms: f64,
    pub rtt_p99_ms: f64,
    pub srtt_mean_ms: f64,
    pub retransmits: u64,
    pub stream_ok: bool,
    /// The simulator's goodput and mean RTT for the same scenario (brisk variants).
    pub sim: Option<(f64, f64)>,
    /// (seconds, srtt ms).
    pub series: Vec<(f64, f64)>,
}

/// A fidelity claim's outcome.
#[derive(Clone, Debug)]
pub struct Fidelity {
    pub claim: String,
    pub ours: f64,
    pub reference: f64,
    pub tolerance: f64,
    pub pass: bool,
}

#[derive(Clone, Debug)]
pub struct BloatReport {
    pub duration: Duration,
    pub rows: Vec<BloatRow>,
    pub claims: Vec<Fidelity>,
    pub svg: String,
}

const SCENARIO: &str = r#"
name = "bufferbloat"
seed = 1
duration = "DURATION"
[bottleneck]
rate = "10Mbit"
queue = { kind = "droptail", packets = 1000 }
[[flow]]
rtt = "10ms"
cc = "cubic"
app = { kind = "bulk" }
"#;

fn path() -> EmuConfig {
    EmuConfig {
        rtt: Some(Dur(Duration::from_millis(10))),
        bottleneck: PathSpec {
            rate: Some(Rate(10_000_000)),
            queue: Some(QueueSpec::droptail_packets(1000)),
            ..PathSpec::default()
        },
        reverse: None,
        seed: 1,
    }
}

/// The experiment's simulator scenario (TOML): brisk CUBIC, with or without delay
/// correlation, for `duration`. `brisk repro` runs exactly this text on its pool.
pub fn scenario_toml(duration: Duration, dc: bool) -> String {
    let mut text = SCENARIO.replace("DURATION", &format!("{}ms", duration.as_millis()));
    if dc {
        text.push_str("[flow.tcp]\ndelay_correlation = true\n");
    }
    text
}

/// The simulator's (goodput bit/s, mean RTT ms) for brisk CUBIC, with or without
/// delay correlation.
fn simulate(duration: Duration, dc: bool) -> Result<(f64, f64)> {
    let sc = brisk_sim::Scenario::from_toml_str(&scenario_toml(duration, dc))
        .map_err(|e| EmuError::Config(format!("bufferbloat scenario: {e}")))?;
    let r = brisk_sim::run(&sc, sc.seed).map_err(|e| EmuError::Config(e.to_string()))?;
    let f = r
        .flows
        .first()
        .ok_or_else(|| EmuError::Config("simulation produced no flow".into()))?;
    Ok((f.goodput_bps, f.rtt.map_or(f64::NAN, |s| s.mean / 1e6)))
}

fn real(duration: Duration, stack: FlowStack, cc: &str, dc: bool) -> Result<RealResult> {
    let mut tcp = brisk_tcp::Config::default();
    if dc {
        tcp.congestion.controller =
            tcp.congestion
                .controller
                .with_layer(brisk_tcp::cc::LayerSpec::DelayCorrelation(
                    brisk_tcp::cc::delay_corr::DelayCorrConfig::default(),
                ));
    }
    let name = format!(
        "real-bufferbloat {} {cc}{}",
        stack.name(),
        if dc { "+dc" } else { "" }
    );
    run_real(&RealRun::one_bulk_flow(
        name,
        duration,
        path(),
        stack,
        cc,
        tcp,
    )?)
}

fn within(a: f64, b: f64, tol: f64) -> bool {
    a.is_finite() && b.is_finite() && (a - b).abs() <= tol * b.abs()
}

/// One variant of the experiment: who sends, with which congestion control.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    pub label: &'static str,
    pub stack: FlowStack,
    pub cc: &'static str,
    /// brisk's delay-correlation layer on top of `cc`.
    pub dc: bool,
}

/// The four variants, in report order.
pub const VARIANTS: [Variant; 4] = [
    Variant {
        label: "Linux CUBIC",
        stack: FlowStack::Linux,
        cc: "cubic",
        dc: false,
    },
    Variant {
        label: "Linux BBR",
        stack: FlowStack::Linux,
        cc: "bbr",
        dc: false,
    },
    Variant {
        label: "brisk CUBIC",
        stack: FlowStack::Brisk,
        cc: "cubic",
        dc: false,
    },
    Variant {
        label: "brisk CUBIC + delay correlation",
        stack: FlowStack::Brisk,
        cc: "cubic",
        dc: true,
    },
];

/// Runs one variant over real packets (about `duration` plus the drain of the queue);
/// `sim` is left empty. Needs root and TUN, and the kernel module for Linux variants.
pub fn measure(duration: Duration, v: &Variant) -> Result<BloatRow> {
    let r = real(duration, v.stack, v.cc, v.dc)?;
    let f = r
        .flows
        .first()
        .ok_or_else(|| EmuError::Config("real run produced no flow".into()))?;
    Ok(BloatRow {
        label: v.label,
        stack: v.stack,
        goodput_bps: f.goodput_bps,
        rtt_mean_ms: f.rtt.map_or(f64::NAN, |s| s.mean / 1e6),
        rtt_p99_ms: f.rtt.map_or(f64::NAN, |s| s.p99 as f64 / 1e6),
        srtt_mean_ms: f.srtt.map_or(f64::NAN, |s| s.mean / 1e6),
        retransmits: f.retransmitted_packets,
        stream_ok: f.stream_ok,
        sim: None,
        series: f
            .srtt_series
            .iter()
            .map(|(t, v)| (*t as f64 / 1e9, *v as f64 / 1e6))
            .collect(),
    })
}

/// Runs the experiment (about 4 × `duration` of wall time). Needs root and TUN.
pub fn real_bufferbloat(duration: Duration) -> Result<BloatReport> {
    brisk_emu::netns::check_supported()?;
    let have = brisk_emu::bulk::available_congestion_controls();
    let mut rows = Vec::new();
    for v in &VARIANTS {
        if v.stack == FlowStack::Linux && !have.iter().any(|c| c == v.cc) {
            eprintln!(
                "real-bufferbloat: kernel lacks {}; skipping {}",
                v.cc, v.label
            );
            continue;
        }
        let mut row = measure(duration, v)?;
        if v.stack == FlowStack::Brisk {
            row.sim = Some(simulate(duration, v.dc)?);
        }
        rows.push(row);
    }
    let find = |l: &str| rows.iter().find(|r| r.label == l);
    let mut claims = Vec::new();
    if let Some(b) = find("brisk CUBIC") {
        if let Some((sg, sr)) = b.sim {
            claims.push(Fidelity {
                claim: "brisk CUBIC real vs sim: mean RTT within 15%".into(),
                ours: b.rtt_mean_ms,
                reference: sr,
                tolerance: 0.15,
                pass: within(b.rtt_mean_ms, sr, 0.15),
            });
            claims.push(Fidelity {
                claim: "brisk CUBIC real vs sim: goodput within 15%".into(),
                ours: b.goodput_bps / 1e6,
                reference: sg / 1e6,
                tolerance: 0.15,
                pass: within(b.goodput_bps, sg, 0.15),
            });
        }
        if let Some(l) = find("Linux CUBIC") {
            claims.push(Fidelity {
                claim: "brisk CUBIC vs Linux CUBIC: mean srtt within 20%".into(),
                ours: b.srtt_mean_ms,
                reference: l.srtt_mean_ms,
                tolerance: 0.2,
                pass: within(b.srtt_mean_ms, l.srtt_mean_ms, 0.2),
            });
            claims.push(Fidelity {
                claim: "brisk CUBIC vs Linux CUBIC: goodput within 20%".into(),
                ours: b.goodput_bps / 1e6,
                reference: l.goodput_bps / 1e6,
                tolerance: 0.2,
                pass: within(b.goodput_bps, l.goodput_bps, 0.2),
            });
        }
    }
    let svg = rtt_svg(&rows, duration.as_secs_f64());
    Ok(BloatReport {
        duration,
        rows,
        claims,
        svg,
    })
}

impl BloatReport {
    pub fn table(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "real-bufferbloat: 10 Mbit/s, 10 ms, 1000-pkt drop-tail, {:.0} s, one flow at a time",
            self.duration.as_secs_f64()
        );
        let _ = writeln!(
            t,
            "| variant | goodput Mbit/s | mean RTT ms | p99 RTT ms | mean srtt ms | retx | intact | sim goodput | sim mean RTT |"
        );
        let _ = writeln!(t, "|---|---|---|---|---|---|---|---|---|");
        for r in &self.rows {
            let (sg, sr) = r.sim.map_or(("-".into(), "-".into()), |(g, rt)| {
                (format!("{:.2}", g / 1e6), format!("{rt:.1}"))
            });
            let _ = writeln!(
                t,
                "| {} | {:.2} | {:.1} | {:.1} | {:.1} | {} | {} | {} | {} |",
                r.label,
                r.goodput_bps / 1e6,
                r.rtt_mean_ms,
                r.rtt_p99_ms,
                r.srtt_mean_ms,
                r.retransmits,
                r.stream_ok,
                sg,
                sr
            );
        }
        for c in &self.claims {
            let _ = writeln!(
                t,
                "{} {}: {:.2} vs {:.2} ({:+.1}%)",
                if c.pass { "PASS" } else { "FAIL" },
                c.claim,
                c.ours,
                c.reference,
                (c.ours / c.reference - 1.0) * 100.0
            );
        }
        t
    }

    pub fn to_json(&self) -> Value {
        json!({
            "experiment": "real-bufferbloat",
            "duration_s": self.duration.as_secs_f64(),
            "rows": self.rows.iter().map(|r| json!({
                "variant": r.label, "stack": r.stack.name(), "goodput_bps": r.goodput_bps,
                "rtt_mean_ms": r.rtt_mean_ms, "rtt_p99_ms": r.rtt_p99_ms,
                "srtt_mean_ms": r.srtt_mean_ms, "retransmits": r.retransmits,
                "stream_ok": r.stream_ok,
                "sim_goodput_bps": r.sim.map(|s| s.0), "sim_rtt_mean_ms": r.sim.map(|s| s.1),
            })).collect::<Vec<_>>(),
            "claims": self.claims.iter().map(|c| json!({
                "claim": c.claim, "ours": c.ours, "reference": c.reference,
                "tolerance": c.tolerance, "pass": c.pass,
            })).collect::<Vec<_>>(),
        })
    }

    /// Writes `table.md`, `summary.json`, `rtt.svg` and `rtt.csv` into `dir`.
    pub fn write_dir(&self, dir: &Path) -> Result<()> {
        let io = |p: &Path| {
            let p = p.display().to_string();
            move |e| EmuError::io(format!("writing {p}"), e)
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let mut csv = String::from("variant,time_s,srtt_ms\n");
        for r in &self.rows {
            for (t, v) in &r.series {
                let _ = writeln!(csv, "{},{t:.3},{v:.3}", r.label);
            }
        }
        for (name, text) in [
            ("table.md", self.table()),
            (
                "summary.json",
                serde_json::to_string_pretty(&self.to_json()).unwrap_or_default(),
            ),
            ("rtt.svg", self.svg.clone()),
            ("rtt.csv", csv),
        ] {
            let p = dir.join(name);
            std::fs::write(&p, text).map_err(io(&p))?;
        }
        Ok(())
    }
}

/// A plain SVG line chart of srtt over time, one line per variant.
fn rtt_svg(rows: &[BloatRow], secs: f64) -> String {
    let (w, h, m) = (720.0, 360.0, 50.0);
    let ymax = rows
        .iter()
        .flat_map(|r| r.series.iter().map(|p| p.1))
        .fold(10.0f64, f64::max)
        * 1.1;
    let x = |t: f64| m + (t / secs.max(1e-9)) * (w - 2.0 * m);
    let y = |v: f64| h - m - (v / ymax) * (h - 2.0 * m);
    let colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"];
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = write!(
        s,
        r#"<line x1="{m}" y1="{}" x2="{}" y2="{}" stroke="black"/><line x1="{m}" y1="{m}" x2="{m}" y2="{}" stroke="black"/>"#,
        h - m,
        w - m,
        h - m,
        h - m
    );
    let _ = write!(
        s,
        r#"<text x="{}" y="{}">time (s)</text><text x="5" y="{}">srtt (ms)</text><text x="{m}" y="20">real-bufferbloat: srtt over time</text>"#,
        w / 2.0,
        h - 10.0,
        m - 10.0
    );
    for i in 0..=4 {
        let v = ymax * f64::from(i) / 4.0;
        let _ = write!(s, r#"<text x="5" y="{:.1}">{v:.0}</text>"#, y(v) + 4.0);
    }
    for (i, r) in rows.iter().enumerate() {
        let c = colors[i % colors.len()];
        let pts: Vec<String> = r
            .series
            .iter()
            .map(|(t, v)| format!("{:.1},{:.1}", x(*t), y(*v)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline fill="none" stroke="{c}" stroke-width="1.5" points="{}"/><text x="{}" y="{}" fill="{c}">{}</text>"#,
            pts.join(" "),
            w - m - 200.0,
            m + 15.0 * i as f64,
            r.label
        );
    }
    s.push_str("</svg>\n");
    s
}
