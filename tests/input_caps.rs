//! Issue 29: local input files are read with a cap. `brisk run /dev/zero` and
//! `brisk trace info /dev/zero` used to read until allocation failed (4.2 GB); now
//! they fail fast with a message naming the file and the limit.

use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_brisk");

fn fails_fast(args: &[&str]) -> String {
    let t = Instant::now();
    let out = Command::new(BIN).args(args).output().unwrap();
    let took = t.elapsed();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "brisk {args:?} succeeded");
    assert!(
        took < Duration::from_secs(20),
        "brisk {args:?} took {took:?}"
    );
    assert!(err.contains("/dev/zero"), "names the file: {err}");
    assert!(err.contains("64 MiB"), "names the limit: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn run_of_an_endless_file_fails_fast() {
    fails_fast(&["run", "/dev/zero"]);
}

#[test]
fn trace_info_of_an_endless_file_fails_fast() {
    fails_fast(&["trace", "info", "/dev/zero"]);
}
