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

/// Live `sleep MARKER` processes.
fn sleeps(marker: &str) -> usize {
    processes_with(marker)
        .iter()
        .filter(|p| p.ends_with(&format!(": sleep {marker}")))
        .count()
}

/// Pids of live processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let cmd = cmd.trim_end();
        if cmd.contains(marker) {
            found.push(format!("{name}: {cmd}"));
        }
    }
    found
}

/// A `brisk lab shell` child that gets SIGINT (and, 10 s later, SIGKILL) if the test
/// fails before it ends, so that a failure leaves nothing running.
struct Interrupted(std::process::Child);

impl Drop for Interrupted {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            // SAFETY: signals our own child.
            unsafe { libc::kill(self.0.id() as libc::pid_t, libc::SIGINT) };
            for _ in 0..200 {
                if !matches!(self.0.try_wait(), Ok(None)) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

#[test]
fn sigint_ends_the_inside_and_outside_commands_before_the_namespaces() {
    if let Some(why) = brisk_emu::netns::unsupported_reason() {
        eprintln!("skip lab shell test: {why}");
        return;
    }
    // Marker durations no other process uses (this test's pid in them); each side
    // also starts a background job in its group (a shell's stragglers), which must go.
    let me = std::process::id();
    let (outer, inner) = (format!("3599.{me}1"), format!("3599.{me}3"));
    let (outer, inner) = (outer.as_str(), inner.as_str());
    let child = Command::new(BIN)
        .args([
            "lab",
            "shell",
            "--for",
            "60s",
            "--outside",
            &format!("sleep {outer} & exec sleep {outer}"),
            "--",
            "sh",
            "-c",
            &format!("sleep {inner} & sleep {inner}; true"),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut guard = Interrupted(child);
    let child = &mut guard.0;
    // Wait (bounded) until both commands run.
    let t0 = std::time::Instant::now();
    while (sleeps(outer) < 2 || sleeps(inner) < 2)
        && t0.elapsed() < std::time::Duration::from_secs(20)
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(sleeps(inner), 2, "inside command never started");
    assert_eq!(sleeps(outer), 2, "outside command never started");
    // SAFETY: signals our own child.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) };
    let t1 = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t1.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            panic!("brisk lab shell did not end within 20 s of SIGINT");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGINT), "{stderr}");
    // Orphans are reparented and reaped by init; give that a moment.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let left: Vec<String> = [outer, inner]
        .iter()
        .flat_map(|m| processes_with(m))
        .collect();
    assert!(left.is_empty(), "survivors: {left:?}\n{stderr}");
    assert_eq!(leftovers(pid), Vec::<String>::new(), "{stderr}");
    assert!(stderr.contains("ended 2 command group(s)"), "{stderr}");
}

#[test]
fn a_negative_rate_is_a_clear_error_and_never_a_command() {
    // Before any root check: argument errors come first, and nothing is started.
    for args in [
        vec!["lab", "shell", "--rate", "-5Mbit", "--", "true"],
        vec!["lab", "shell", "--rate", "-5", "--", "true"],
        vec!["lab", "up", "--uplink-rate", "-5Mbit"],
    ] {
        let out = Command::new(BIN).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("rate"), "{args:?}: {stderr}");
        assert!(
            stderr.contains("greater than 0 bit/s"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("-- -5"), "clap's tip: {stderr}");
    }
    // Following clap's old tip would have run "-5" as the inside command.
    let out = Command::new(BIN)
        .args(["lab", "shell", "--rtt", "10ms", "--", "-5"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("must be a program"), "{stderr}");
    assert!(
        !stderr.contains("outside 198.18.0.1"),
        "banner printed: {stderr}"
    );
}

#[test]
fn link_logs_are_in_time_order_and_read_by_mm_throughput_graph_rules() {
    if let Some(why) = skip_reason() {
        eprintln!("skip lab shell link-log test: {why}");
        return;
    }
    // A rate-limited downlink and an unlimited uplink, both logged while iperf3 moves
    // data down (and ACKs up) for 3 s through a 20 ms path.
    let dir = std::env::temp_dir().join(format!("brisk-lablog-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(BIN)
        .args([
            "lab",
            "shell",
            "--rate",
            "20Mbit",
            "--rtt",
            "20ms",
            "--for",
            "60s",
            "--link-log",
            dir.to_str().unwrap(),
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
            "3",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for (name, limited) in [("downlink.mm.log", true), ("uplink.mm.log", false)] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let sum = brisk_net::mmlog::check_log(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!("{name}: {sum:?}");
        assert!(text.contains("# init timestamp: 0"), "{name}");
        assert!(text.contains("# queue: "), "{name}");
        assert!(sum.departures > 100, "{name}: {sum:?}");
        if limited {
            // 20 Mbit/s for the run: capacity is the rate, and iperf3 fills most of it.
            let secs = (sum.last_ms - sum.first_ms) as f64 / 1e3;
            let cap = sum.capacity_bytes as f64 * 8.0 / secs;
            assert!((18e6..22e6).contains(&cap), "{name}: capacity {cap} bit/s");
        } else {
            // Unlimited: one opportunity per departure, the size of the packet.
            assert_eq!(sum.capacity_bytes, sum.departure_bytes, "{name}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ipv6_through_the_shell_reaches_linux_over_the_emulator() {
    if let Some(why) = skip_reason() {
        eprintln!("skip lab shell --ipv6 test: {why}");
        return;
    }
    let out = Command::new(BIN)
        .args([
            "lab",
            "shell",
            "--ipv6",
            "--rate",
            "20Mbit",
            "--rtt",
            "10ms",
            "--for",
            "60s",
            "--outside",
            "exec iperf3 -s -1 -B $BRISK_OUTSIDE6 >/dev/null",
            "--",
            "sh",
            "-c",
            "iperf3 -6 -c $BRISK_OUTSIDE6 -R -C cubic -t 2 -J",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}\n{stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("iperf3 -J output");
    assert_eq!(v["start"]["connected"][0]["remote_host"], "2001:db8:18::1");
    let got = v["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap();
    assert!(
        got > 12e6 && got < 20e6,
        "{got} bit/s over IPv6 at 20 Mbit/s"
    );
}

/// `--paths`: the multipath lab from the CLI, with Linux MPTCP at both ends
/// (scripts/mptcp-xfer.py): the same SHA-256 at both ends, the join counted, both
/// paths used, nothing left behind.
#[test]
fn multipath_shell_carries_an_mptcp_transfer_over_both_paths() {
    if let Some(why) = brisk_emu::netns::unsupported_reason() {
        eprintln!("skip multipath shell test: {why}");
        return;
    }
    if Command::new("python3").arg("--version").output().is_err()
        || !std::path::Path::new("/proc/sys/net/mptcp/enabled").exists()
    {
        eprintln!("skip multipath shell test: needs python3 and an MPTCP kernel");
        return;
    }
    let dir = std::env::temp_dir().join(format!("brisk-mpshell-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let toml = dir.join("two.toml");
    std::fs::write(
        &toml,
        "[[path]]\nrtt = \"10ms\"\nreverse = { rate = \"20Mbit\" }\n\
         [[path]]\nrtt = \"20ms\"\nreverse = { rate = \"20Mbit\" }\n",
    )
    .unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/mptcp-xfer.py");
    let limits = "ip mptcp limits set subflows 2 add_addr_accepted 2";
    let child = Command::new(BIN)
        .args(["lab", "shell", "--paths"])
        .arg(&toml)
        .args(["--for", "50s", "--outside"])
        .arg(format!(
            "{limits}; ip mptcp endpoint add $BRISK_OUTSIDE_1 dev $BRISK_DEV_1 signal; \
             exec python3 {script} server 5201"
        ))
        .args(["--", "sh", "-c"])
        .arg(format!(
            "{limits}; python3 {script} client $BRISK_OUTSIDE_0 5201 3000000 && sleep 0.5 && \
             nstat -az MPTcpExtMPJoinSynAckRx"
        ))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let child = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let (out, err) = (
        String::from_utf8_lossy(&child.stdout),
        String::from_utf8_lossy(&child.stderr),
    );
    assert!(child.status.success(), "{out}\n{err}");
    let sha = |who: &str| {
        out.lines()
            .find(|l| l.starts_with(who))
            .and_then(|l| l.split("sha256 ").nth(1))
            .map(str::to_string)
    };
    let (c, s) = (sha("client:"), sha("server:"));
    assert!(c.is_some() && c == s, "{out}");
    assert!(out.contains("server: 3000000 bytes"), "{out}");
    let joins: u64 = out
        .lines()
        .find(|l| l.starts_with("MPTcpExtMPJoinSynAckRx"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert_eq!(joins, 1, "{out}");
    // Both paths' uplinks (inside → outside) carried data.
    for k in 0..2 {
        let line = err
            .lines()
            .find(|l| l.contains(&format!("path {k}: downlink")))
            .unwrap_or_else(|| panic!("no path {k} line in\n{err}"));
        let bytes: u64 = line
            .split("uplink ")
            .nth(1)
            .and_then(|r| r.split(" (").nth(1))
            .and_then(|r| r.split(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        assert!(bytes > 100_000, "path {k} uplink {bytes} bytes: {line}");
    }
    assert!(leftovers(pid).is_empty(), "{:?}", leftovers(pid));
}
