//! `brisk repro` with stderr not a terminal (a pipe, as in CI logs or `2>log`) prints a
//! line per finished experiment with its verdict counts and elapsed time (the heartbeat
//! every minute is tested in brisk-repro's runner with a short period).

use std::process::{Command, Stdio};

#[test]
fn piped_stderr_gets_a_line_per_finished_experiment() {
    let out = std::env::temp_dir().join(format!("brisk-repro-progress-{}", std::process::id()));
    let o = Command::new(env!("CARGO_BIN_EXE_brisk"))
        .args(["repro", "--quick", "not-reproducible", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("brisk runs");
    let _ = std::fs::remove_dir_all(&out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.lines().any(|l| l
            .starts_with("brisk repro: not-reproducible done (0 pass, 0 fail, 5 n/a) at ")
            && l.ends_with(" s")),
        "{err}"
    );
}
