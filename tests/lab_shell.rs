//! `brisk lab shell` as Mahimahi users use `mm-link`: iperf3's server outside, its
//! client inside, and iperf3's own throughput report checked against the emulated
//! rate. Needs root, /dev/net/tun, iproute2 and iperf3; skips with a message otherwise
//! (CI installs iperf3 and runs it as root).

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_brisk");

fn skip_reason() -> Option<String> {
    if let Some(why) = brisk_emu::netns::unsupported_reason() {
        return Some(why);
    }
    if Command::new("iperf3").arg("--version").output().is_err() {
        return Some("iperf3 is not installed (Debian: apt-get install iperf3)".into());
    }
    None
}

/// Namespaces a process with this pid created and left behind.
fn leftovers(pid: u32) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with(&format!("brisk-{pid}-")))
        .map(str::to_string)
        .collect()
}

#[test]
fn iperf3_through_the_shell_gets_the_emulated_rate() {
    if let Some(why) = skip_reason() {
        eprintln!("skip lab shell test: {why}");
        return;
    }
    let rate = 50e6;
    let child = Command::new(BIN)
        .args([
            "lab",
            "shell",
            "--rate",
            "50Mbit",
            "--rtt",
            "20ms",
            "--for",
            "60s",
            "--outside",
            "exec iperf3 -s -1 >/dev/null",
            "--",
            "iperf3",
            "-c",
            "198.18.0.1",
            "-R",
            "-C",
            "cubic",
            "-t",
            "8",
            "-O",
            "1",
            "-J",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&child.stdout);
    let stderr = String::from_utf8_lossy(&child.stderr);
    assert!(child.status.success(), "{stderr}\n{stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("iperf3 -J output");
    let got = v["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap();
    // The emulator limits IP packets; iperf3 counts TCP payload. With timestamps on, a
    // full segment is `mss` payload bytes in `mss + 52` IP bytes.
    let mss = v["start"]["tcp_mss_default"].as_f64().unwrap_or(1448.0);
    let expected = rate * mss / (mss + 52.0);
    let ratio = got / expected;
    eprintln!(
        "iperf3 received {:.2} Mbit/s; 50 Mbit/s of IP packets carries {:.2} Mbit/s of payload; ratio {ratio:.3}",
        got / 1e6,
        expected / 1e6
    );
    assert!(
        (0.95..=1.05).contains(&ratio),
        "iperf3 {got} bit/s vs {expected} expected"
    );
    assert!(stderr.contains("downlink"), "{stderr}");
}

#[test]
fn the_inside_status_is_brisks_and_nothing_is_left_behind() {
    if let Some(why) = brisk_emu::netns::unsupported_reason() {
        eprintln!("skip lab shell test: {why}");
        return;
    }
    if Command::new("curl").arg("--version").output().is_err() {
        eprintln!("skip lab shell test: curl is not installed");
        return;
    }
    // The inside command sees the outside address as Mahimahi's MAHIMAHI_BASE, reaches
    // a server there through the emulator, and its exit status becomes brisk's error.
    let child = Command::new(BIN)
        .args([
            "lab",
            "shell",
            "--rtt",
            "10ms",
            "--outside",
            "exec python3 -m http.server 8000 --bind $BRISK_OUTSIDE",
            "--",
            "sh",
            "-c",
            // The server may take a moment to bind on a busy machine: retry for 10 s.
            "for i in $(seq 100); do curl -sf -m 5 http://$MAHIMAHI_BASE:8000/ >/dev/null && exit 3; sleep 0.1; done; exit 1",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("status 3"), "{stderr}");
    assert_eq!(leftovers(pid), Vec::<String>::new());
}

#[test]
fn lab_send_json_reads_like_iperf3() {
    if let Some(why) = brisk_emu::netns::unsupported_reason() {
        eprintln!("skip lab send --json test: {why}");
        return;
    }
    let out = Command::new(BIN)
        .args([
            "lab",
            "send",
            "--rtt",
            "10ms",
            "--rate",
            "40Mbit",
            "--bytes",
            "10000000",
            "--json",
            "--interval",
            "250ms",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["start"]["test_start"]["protocol"], "TCP");
    assert_eq!(v["start"]["connected"][0]["remote_host"], "198.18.0.2");
    let intervals = v["intervals"].as_array().unwrap();
    assert!(
        intervals.len() >= 8,
        "2 s of 250 ms intervals: {}",
        intervals.len()
    );
    let sum: u64 = intervals
        .iter()
        .map(|i| i["sum"]["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, 10_000_000, "the intervals add up to the transfer");
    let recv = &v["end"]["sum_received"];
    assert_eq!(recv["bytes"].as_u64(), Some(10_000_000));
    let bps = recv["bits_per_second"].as_f64().unwrap();
    assert!(bps > 25e6 && bps < 40e6, "{bps}");
    assert_eq!(v["end"]["intact"], true);
}
