//! Behaviour snapshots: every scenario in `scenarios/` (one example per mechanism:
//! controllers, layers, AQMs, sender and receiver mechanisms, a network workload), a
//! handful of fault-campaign seeds, and fault seeds rerun over each controller, layer
//! and AQM, each run once, recorded as its full JSON summary plus a SHA-256 of every
//! packet hand-over (`trace_sha256`) and of each host's pcap (a network scenario: its
//! table). The controllers' own cwnd traces are snapshots in `brisk-tcp`
//! (`crates/brisk-tcp/src/cc/traces.rs`).
//!
//! A change to any snapshot is a change of behaviour: make it in its own commit and
//! say why in the message. Structural work (refactors) must leave them untouched.
//! Review a change with `cargo insta review`, or accept it with
//! `INSTA_UPDATE=always cargo test --release -p brisk-sim --test snapshots`.

mod common;

use brisk_sim::{run_with, RunOptions, Scenario};
use common::fault::Over;
use sha2::{Digest, Sha256};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Fault-campaign seeds recorded (a mix of loss models, impairments and apps).
const FAULT_SEEDS: [u64; 8] = [0, 1, 2, 3, 5, 8, 13, 21];

/// Fault-campaign seeds rerun over each controller, layer and AQM that the plain
/// campaign (CUBIC or Reno over drop-tail) never reaches: the generated path, impairments
/// and app stay those of the seed; the controller, queue and ECN/layer knobs are
/// replaced (`common::fault::scenario_over`). Each pair has a seed without random loss
/// (so a queue builds and the AQM or the ECN threshold acts) and one with the seed's
/// impairments.
const FAULT_OVER: [(&str, Over, [u64; 2]); 8] = [
    (
        "cdg",
        Over {
            cc: "cdg",
            queue: None,
            tcp: "",
        },
        [4, 6],
    ),
    (
        "dctcp-step",
        Over {
            cc: "dctcp",
            queue: Some(r#"{ kind = "droptail", packets = 100, ecn_threshold_packets = 20 }"#),
            tcp: "ecn = true\n",
        },
        [10, 9],
    ),
    (
        "reno-dc",
        Over {
            cc: "reno",
            queue: None,
            tcp: "delay_correlation = true\n",
        },
        [25, 11],
    ),
    (
        "cubic-cwv",
        Over {
            cc: "cubic",
            queue: None,
            tcp: "new_cwv = true\nnew_cwv_nvp = \"2s\"\n",
        },
        [12, 43],
    ),
    (
        "cubic-abe-pie",
        Over {
            cc: "cubic",
            queue: Some(r#"{ kind = "pie", ecn = true }"#),
            tcp: "ecn = true\nabe = true\n",
        },
        [30, 15],
    ),
    (
        "reno-red",
        Over {
            cc: "reno",
            queue: Some(r#"{ kind = "red", ecn = true, packets = 200 }"#),
            tcp: "ecn = true\n",
        },
        [38, 17],
    ),
    (
        "cubic-codel",
        Over {
            cc: "cubic",
            queue: Some(r#"{ kind = "codel" }"#),
            tcp: "",
        },
        [61, 20],
    ),
    (
        "cdg-fq-codel",
        Over {
            cc: "cdg",
            queue: Some(r#"{ kind = "fq_codel" }"#),
            tcp: "",
        },
        [64, 22],
    ),
];

/// Scenarios whose pcaps would be too large to write in a test (the 1 Gbit/s
/// benchmark writes ~5 GB); `trace_sha256` covers every one of their packets anyway.
const NO_PCAP: [&str; 1] = ["bench-1g"];

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

/// A scratch directory unique to this process and `tag`, removed on drop.
struct Scratch(PathBuf);
impl Scratch {
    fn new(tag: &str) -> Self {
        let p = std::env::temp_dir().join(format!("brisk-snap-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        Scratch(p)
    }
}
impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The snapshot text of one run: pretty JSON summary, then one line per pcap.
fn record(sc: &Scenario, seed: u64, tag: &str, pcaps: bool) -> String {
    let scratch = Scratch::new(tag);
    let opts = RunOptions {
        trace_hash: true,
        pcap_dir: pcaps.then(|| scratch.0.clone()),
        ..Default::default()
    };
    let res = run_with(sc, seed, &opts).unwrap_or_else(|e| panic!("{tag}: {e}"));
    let mut out = serde_json::to_string_pretty(&res.to_json()).expect("json");
    out.push('\n');
    if pcaps {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&scratch.0)
            .expect("pcap dir")
            .map(|e| e.expect("entry").path())
            .collect();
        files.sort();
        for f in files {
            let bytes = std::fs::read(&f).expect("pcap");
            let name = f.file_name().expect("name").to_string_lossy().into_owned();
            let hash = Sha256::digest(&bytes);
            let mut hex = String::new();
            for b in hash {
                write!(hex, "{b:02x}").unwrap();
            }
            writeln!(out, "pcap {name}: {} bytes, sha256 {hex}", bytes.len()).unwrap();
        }
    }
    out
}

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    s.set_omit_expression(true);
    s
}

#[test]
fn scenarios_are_unchanged() {
    let mut names: Vec<PathBuf> = std::fs::read_dir(scenarios_dir())
        .expect("scenarios/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    names.sort();
    assert!(
        names.len() >= 8,
        "expected the shipped scenarios, found {names:?}"
    );
    for path in names {
        let stem = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let toml = std::fs::read_to_string(&path).expect("scenario text");
        if brisk_scenario::network::is_net_scenario(&toml) {
            // A network scenario: its table (utilisation, FCT per class and size bin).
            let sc = brisk_sim::topo_build::load(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let res = brisk_sim::wl_run::run_net(&sc, sc.seed).expect("network run");
            let text = res.table();
            settings().bind(|| insta::assert_snapshot!(format!("scenario-{stem}"), text));
            continue;
        }
        let sc = Scenario::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let text = record(&sc, sc.seed, &stem, !NO_PCAP.contains(&stem.as_str()));
        settings().bind(|| insta::assert_snapshot!(format!("scenario-{stem}"), text));
    }
}

#[test]
fn fault_seeds_are_unchanged() {
    for seed in FAULT_SEEDS {
        let toml = common::fault::scenario_for(seed);
        let sc = Scenario::from_toml_str(&toml).expect("fault scenario");
        let text = record(&sc, seed, &format!("fault-{seed}"), true);
        settings().bind(|| insta::assert_snapshot!(format!("fault-seed-{seed}"), text));
    }
}

#[test]
fn fault_seeds_over_each_controller_are_unchanged() {
    for (label, over, seeds) in FAULT_OVER {
        for seed in seeds {
            let toml = common::fault::scenario_over(seed, Some(&over));
            let sc = Scenario::from_toml_str(&toml)
                .unwrap_or_else(|e| panic!("{label} seed {seed}: {e}\n{toml}"));
            let text = record(&sc, seed, &format!("fault-{label}-{seed}"), true);
            settings().bind(|| insta::assert_snapshot!(format!("fault-{label}-seed-{seed}"), text));
        }
    }
}
