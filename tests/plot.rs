//! `brisk plot` end to end: a short run written with `--out` (and a `--seeds` run, and
//! a `brisk sweep --out` directory), plotted, and every inline SVG parsed with a real
//! XML parser, its legend clear of the data; and the errors for a missing directory and
//! a garbled CSV, which must name the file and line.

#[path = "../crates/brisk-repro/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_brisk");

/// Two flows through a small lossy queue: drops happen and seeds differ.
const SCENARIO: &str = r#"
name = "plot-test"
seed = 1
duration = "4s"

[bottleneck]
rate = "10Mbit"
queue = { kind = "droptail", packets = 30 }
loss = { kind = "bernoulli", p = 0.005 }

[[flow]]
rtt = "20ms"
cc = "cubic"
app = { kind = "bulk" }

[[flow]]
rtt = "40ms"
cc = "reno"
start = "0.5s"
app = { kind = "bulk" }
"#;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("brisk-plot-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn brisk(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run brisk")
}

fn ok(args: &[&str]) -> String {
    let o = brisk(args);
    assert!(
        o.status.success(),
        "brisk {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn scenario(dir: &Path) -> String {
    let p = dir.join("sc.toml");
    std::fs::write(&p, SCENARIO).unwrap();
    p.display().to_string()
}

/// Every `<svg>…</svg>` of the page, parsed; returns (id, title, document text).
fn svgs(html: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("<svg ") {
        let end = rest[i..].find("</svg>").expect("closed svg") + i + "</svg>".len();
        let text = rest[i..end].to_string();
        let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("not XML: {e}"));
        let root = doc.root_element();
        let id = root.attribute("id").unwrap_or("").to_string();
        let title = root
            .descendants()
            .find(|n| n.attribute("class") == Some("title"))
            .and_then(|n| n.text())
            .unwrap_or("")
            .to_string();
        for n in doc.descendants() {
            for a in ["x", "y", "cx", "cy", "d", "width", "height"] {
                if let Some(v) = n.attribute(a) {
                    assert!(!v.contains("NaN") && !v.contains("inf"), "{id}: {a}={v}");
                }
            }
        }
        if let Err(e) = common::legend_clear(&text, &id) {
            panic!("{e}");
        }
        out.push((id, title, text));
        rest = &rest[end..];
    }
    out
}

fn count(doc: &str, pred: impl Fn(roxmltree::Node) -> bool) -> usize {
    roxmltree::Document::parse(doc)
        .unwrap()
        .descendants()
        .filter(|n| pred(*n))
        .count()
}

#[test]
fn a_run_directory_plots_as_parseable_svgs() {
    let d = tmp("single");
    let out = d.join("run");
    ok(&["run", &scenario(&d), "--out", out.to_str().unwrap()]);
    let said = ok(&["plot", out.to_str().unwrap()]);
    assert!(said.contains("plot.html"), "{said}");
    let html = std::fs::read_to_string(out.join("plot.html")).unwrap();
    assert!(!html.contains("<script") && !html.contains(" src="));
    let figs = svgs(&html);
    let ids: Vec<&str> = figs.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(
        ids,
        [
            "plot-goodput",
            "plot-rtt",
            "plot-cwnd",
            "plot-queue",
            "plot-drops",
            "plot-throughput-delay"
        ]
    );
    for (id, title, text) in &figs {
        assert!(!title.is_empty(), "{id} has no title");
        if id != "plot-queue" {
            // One line (or marker) per flow, named in the legend.
            let legend = count(text, |n| n.attribute("class") == Some("legend"));
            assert_eq!(legend, 1, "{id}: legend");
            assert!(
                text.contains("flow 0 cubic") && text.contains("flow 1 reno"),
                "{id}"
            );
        }
    }
    let goodput = &figs[0].2;
    let lines = count(goodput, |n| {
        n.has_tag_name("path") && n.attribute("fill") == Some("none")
    });
    assert!(lines >= 2, "goodput: {lines} lines");
    let tput = &figs[5];
    assert!(tput.1.contains("Throughput against delay"));
    assert!(
        tput.2.contains("reversed"),
        "the x axis says it is reversed"
    );
    let markers = count(&tput.2, |n| {
        n.has_tag_name("circle") && n.attribute("r") == Some("5")
    });
    assert_eq!(markers, 2, "one point per flow");
    // Each figure's data and SVG are downloadable from the page itself.
    assert_eq!(html.matches("download=\"").count(), 2 * figs.len());
    assert!(html.contains("href=\"data:text/csv;charset=utf-8,series%2Ckind"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_seeds_directory_plots_means_with_ellipses() {
    let d = tmp("seeds");
    let out = d.join("runs");
    ok(&[
        "run",
        &scenario(&d),
        "--seeds",
        "1..3",
        "--out",
        out.to_str().unwrap(),
    ]);
    for k in 1..=3 {
        assert!(out.join(format!("seed-{k}/summary.json")).is_file());
    }
    let agg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(agg["seeds"], serde_json::json!([1, 2, 3]));
    assert!(agg["flows"][0]["owd_p95_ms"]["mean"].is_f64());
    let file = d.join("p.html");
    ok(&[
        "plot",
        out.to_str().unwrap(),
        "--out",
        file.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&file).unwrap();
    let figs = svgs(&html);
    let tput = figs
        .iter()
        .find(|f| f.0 == "plot-throughput-delay")
        .expect("throughput-delay chart");
    let ellipses = count(&tput.2, |n| n.attribute("class") == Some("outline"));
    assert_eq!(ellipses, 2, "one ellipse per flow");
    assert!(html.contains("3 seeds (1, 2, 3)"));
    // Re-running into the same directory needs --force, which replaces the seeds.
    let again = brisk(&[
        "run",
        &scenario(&d),
        "--seeds",
        "1..2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!again.status.success());
    ok(&[
        "run",
        &scenario(&d),
        "--seeds",
        "1..2",
        "--out",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert!(!out.join("seed-3").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_input_names_the_file_and_line() {
    let d = tmp("bad");
    let missing = d.join("nope");
    let o = brisk(&["plot", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("nope: no such directory"), "{e}");

    let out = d.join("run");
    ok(&["run", &scenario(&d), "--out", out.to_str().unwrap()]);
    let rtt = out.join("rtt.csv");
    let mut lines: Vec<String> = std::fs::read_to_string(&rtt)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines[2] = lines[2].replacen(',', ",garbage", 1);
    std::fs::write(&rtt, lines.join("\n")).unwrap();
    let o = brisk(&["plot", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("rtt.csv:3: flow is not a flow number"), "{e}");
    assert!(
        !e.contains("internal error") && !e.contains("panicked"),
        "{e}"
    );

    std::fs::write(&rtt, "time_s,flow,mean_ms\n0.1,0\n").unwrap();
    let e = String::from_utf8_lossy(&brisk(&["plot", out.to_str().unwrap()]).stderr).into_owned();
    assert!(
        e.contains("rtt.csv:2: 2 fields where the header has 3"),
        "{e}"
    );

    std::fs::write(out.join("summary.json"), "{\"flows\": [").unwrap();
    let e = String::from_utf8_lossy(&brisk(&["plot", out.to_str().unwrap()]).stderr).into_owned();
    assert!(e.contains("summary.json:1: not JSON"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_sweep_directory_plots_one_marker_per_cell() {
    let d = tmp("sweep");
    scenario(&d);
    // 2 × 3 = 6 cells, the loss grid value an inline table (quoted in rows.csv);
    // 2 seeds each, so the lossy cells differ between seeds and get ellipses.
    let sweep = d.join("s.toml");
    std::fs::write(
        &sweep,
        "name = \"plot-sweep\"\nbase = \"sc.toml\"\nseeds = \"1..2\"\n\
         [grid]\n\"bottleneck.rate\" = [\"5Mbit\", \"10Mbit\"]\n\
         \"bottleneck.loss\" = [{ kind = \"bernoulli\", p = 0.0 }, { kind = \"bernoulli\", p = 0.005 }, { kind = \"bernoulli\", p = 0.02 }]\n",
    )
    .unwrap();
    let out = d.join("out");
    ok(&[
        "sweep",
        sweep.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(std::fs::read_to_string(out.join("rows.csv"))
        .unwrap()
        .contains("\"{ kind = \"\"bernoulli\"\""));
    let said = ok(&["plot", out.to_str().unwrap()]);
    assert!(said.contains("plot.html"), "{said}");
    let html = std::fs::read_to_string(out.join("plot.html")).unwrap();
    // `svgs` checks every figure's legend against its data.
    let figs = svgs(&html);
    assert_eq!(figs.len(), 1, "one chart for the sweep");
    let (id, title, text) = &figs[0];
    assert_eq!(id, "plot-throughput-delay");
    assert!(title.contains("Throughput against delay"), "{title}");
    let markers = count(text, |n| {
        n.has_tag_name("circle") && n.attribute("r") == Some("5")
    });
    assert_eq!(markers, 6, "one marker per cell");
    let tags = count(text, |n| n.attribute("class") == Some("tag"));
    assert_eq!(tags, 6, "each marker numbered");
    // Each cell labelled by its grid values.
    for label in [
        "0: loss=bernoulli p=0.0, rate=5Mbit",
        "5: loss=bernoulli p=0.02, rate=10Mbit",
    ] {
        assert!(text.contains(label), "{label} not in the legend");
    }
    // The loss-free cells are deterministic (no ellipse), the lossy ones are not.
    let ellipses = count(text, |n| n.attribute("class") == Some("outline"));
    assert_eq!(ellipses, 4, "an ellipse per lossy cell");
    assert!(html.contains("6 cells × 2 seed(s)"), "title counts cells");
    let _ = std::fs::remove_dir_all(&d);
}
