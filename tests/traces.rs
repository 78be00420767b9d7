//! Mahimahi traces end to end: the shipped traces are what `brisk trace` writes, a
//! scenario runs over one, and its `--link-log` reads as Mahimahi's scripts read a
//! `mm-link` log (the rules of `mm-throughput-graph`: `#` lines are comments, every other
//! line is `ms type bytes [delay]` with type `+`, `#` or `-`).

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_brisk");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn brisk(args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "brisk {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn shipped_traces_are_what_brisk_trace_writes() {
    for (file, args) in [
        (
            "traces/constant-12mbit.down",
            &["trace", "constant", "--rate", "12Mbit", "--period", "1s"][..],
        ),
        (
            "traces/stepped-24-6-12mbit.down",
            &[
                "trace",
                "stepped",
                "--step",
                "24Mbit:5s",
                "--step",
                "6Mbit:5s",
                "--step",
                "12Mbit:5s",
            ][..],
        ),
        (
            "traces/lte-like.down",
            &[
                "trace", "lte-like", "--min", "1Mbit", "--max", "40Mbit", "--period", "60s",
                "--seed", "1",
            ][..],
        ),
    ] {
        let shipped = std::fs::read_to_string(root().join(file)).unwrap();
        assert!(
            shipped == brisk(args),
            "{file} differs from `brisk {args:?}`"
        );
    }
}

/// Parses a log by mm-throughput-graph's rules and mm-link's time order
/// (`brisk_net::mmlog::check_log`), failing where that script would die.
fn parse_mm_log(text: &str) -> brisk_net::mmlog::LogSummary {
    brisk_net::mmlog::check_log(text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_run_over_a_trace_logs_like_mm_link() {
    let dir = std::env::temp_dir().join(format!("brisk-mmlog-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let json = brisk(&[
        "run",
        "scenarios/lte-like-cubic.toml",
        "--out",
        d,
        "--link-log",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let log = std::fs::read_to_string(dir.join("bottleneck.mm.log")).unwrap();
    let t = parse_mm_log(&log);
    // Capacity: every opportunity of the trace in the 30 s run (the trace's 60 s
    // period is not reached), each 1500 bytes.
    let trace = std::fs::read_to_string(root().join("traces/lte-like.down")).unwrap();
    let opportunities = trace
        .lines()
        .filter(|l| l.trim().parse::<u64>().unwrap() < 30_000)
        .count() as u64;
    assert_eq!(t.capacity_bytes, opportunities * 1500);
    // The link never carries more than its capacity, and a bulk CUBIC flow behind a
    // deep buffer uses most of it.
    assert!(t.departure_bytes <= t.capacity_bytes);
    let used = t.departure_bytes as f64 / t.capacity_bytes as f64;
    assert!(used > 0.8, "used {used}");
    // What left the link is what the receiver's goodput counts, plus headers.
    let delivered = v["flows"][0]["bytes_delivered"].as_u64().unwrap();
    assert!(t.departure_bytes > delivered);
    assert!((t.departure_bytes - delivered) as f64 / (delivered as f64) < 0.08);
    // The trace itself is copied beside the scenario.
    assert_eq!(
        std::fs::read_to_string(dir.join("bottleneck.trace")).unwrap(),
        trace
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn trace_and_rate_are_exclusive_and_bad_traces_name_file_and_line() {
    let dir = std::env::temp_dir().join(format!("brisk-badtrace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |scenario: &str, trace: &str| {
        std::fs::write(dir.join("t.down"), trace).unwrap();
        std::fs::write(dir.join("s.toml"), scenario).unwrap();
        let out = Command::new(BIN)
            .args(["run", dir.join("s.toml").to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let sc = |link: &str| {
        format!(
            "name = \"t\"\nduration = \"1s\"\n[bottleneck]\n{link}\n[[flow]]\nrtt = \"10ms\"\ncc = \"reno\"\napp = {{ kind = \"bulk\" }}\n"
        )
    };
    let e = run(&sc("trace = \"t.down\"\nrate = \"1Mbit\""), "1\n");
    assert!(
        e.contains("bottleneck.trace") && e.contains("not both"),
        "{e}"
    );
    let e = run(&sc("trace = \"t.down\""), "1\n2\nx\n");
    assert!(
        e.contains("bottleneck.trace") && e.contains("t.down line 3"),
        "{e}"
    );
    let e = run(&sc("trace = \"missing.down\""), "1\n");
    assert!(
        e.contains("missing.down") && e.contains("cannot read"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_constant_trace_carries_what_the_same_fixed_rate_carries() {
    let dir = std::env::temp_dir().join(format!("brisk-consttrace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = root().join("traces/constant-12mbit.down");
    let goodput = |link: String| {
        let p = dir.join("s.toml");
        std::fs::write(
            &p,
            format!(
                "name = \"c\"\nduration = \"20s\"\n[bottleneck]\n{link}\nqueue = {{ kind = \"droptail\", packets = 100 }}\n[[flow]]\nrtt = \"20ms\"\ncc = \"cubic\"\napp = {{ kind = \"bulk\" }}\n"
            ),
        )
        .unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&brisk(&["run", p.to_str().unwrap(), "--json"])).unwrap();
        v["flows"][0]["goodput_bps"].as_f64().unwrap()
    };
    let by_rate = goodput("rate = \"12Mbit\"".into());
    let by_trace = goodput(format!("trace = {:?}", trace.to_str().unwrap()));
    // One opportunity per ms is 12 Mbit/s exactly; the trace quantises departures to
    // whole milliseconds, which CUBIC's sawtooth barely notices.
    let ratio = by_trace / by_rate;
    assert!(
        (0.97..1.03).contains(&ratio),
        "trace {by_trace} rate {by_rate}"
    );
    assert!(by_rate > 10e6, "{by_rate}");
    let _ = std::fs::remove_dir_all(&dir);
}
