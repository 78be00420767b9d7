//! Ctrl-C during a long `brisk run` stops the simulation cleanly: the table (or JSON)
//! of what was simulated so far is printed and written, and the exit code is 130. The
//! JSON and summary.json say so: `"interrupted": {"at_sim_time_s", "scenario_duration_s",
//! "signal": "SIGINT"}`, absent from a complete run.

use std::process::{Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_brisk");

#[test]
fn ctrl_c_stops_a_long_run_with_what_it_has() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("brisk-interrupt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // bench-1g simulates 20 s of 1 Gbit/s: many seconds of wall time here.
    let child = Command::new(BIN)
        .args(["run", "scenarios/bench-1g.toml", "--json", "--out"])
        .arg(&dir)
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted at"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let d = v["duration_s"].as_f64().unwrap();
    assert!(d > 0.0 && d < 20.0, "stopped early: {d}");
    assert!(v["flows"][0]["bytes_delivered"].as_u64().unwrap() > 0);
    let i = &v["interrupted"];
    assert_eq!(i["at_sim_time_s"].as_f64(), Some(d), "{i}");
    assert_eq!(i["scenario_duration_s"].as_f64(), Some(20.0), "{i}");
    assert_eq!(i["signal"], "SIGINT", "{i}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["duration_s"].as_f64(), Some(d));
    assert_eq!(&summary["interrupted"], i);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_complete_run_has_no_interrupted_field() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(BIN)
        .args(["run", "scenarios/records-example.toml", "--json"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.get("interrupted").is_none(), "{}", v["interrupted"]);
}
