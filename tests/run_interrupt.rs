//! Ctrl-C during a long `brisk run` stops the simulation cleanly: the table (or JSON)
//! of what was simulated so far is printed and written, and the exit code is 130.

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
    let summary = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    assert!(summary.contains("\"duration_s\""));
    let _ = std::fs::remove_dir_all(&dir);
}
