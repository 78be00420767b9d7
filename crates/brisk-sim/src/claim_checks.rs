//! Claim UT-1 (uTCP is wire-identical to TCP, Minion §4.1, thesis §4.2): the same
//! seeded lossy scenario with `[flow.tcp] unordered` on and off gives byte-identical
//! packet traces at both hosts, while the receiving app sees bytes and records earlier.
//! `tests/unordered.rs` and `brisk repro design` run these same checks, which panic on
//! a failure. Test kit, not API.

use crate::{run_with, RunOptions, RunResult, Scenario};
use std::path::Path;

fn scenario(app: &str, rtt: &str, loss: f64, unordered: bool) -> Scenario {
    let text = format!(
        r#"
name = "utcp"
duration = "8s"
[bottleneck]
rate = "10Mbit"
queue = {{ kind = "droptail", packets = 50 }}
loss = {{ kind = "bernoulli", p = {loss} }}
[[flow]]
rtt = "{rtt}"
app = {app}
[flow.tcp]
unordered = {unordered}
"#
    );
    Scenario::from_toml_str(&text).expect("a constant, valid scenario")
}

/// Runs with per-host pcaps in `dir`; returns the result and the pcaps by file name.
fn run(sc: &Scenario, dir: &Path) -> (RunResult, Vec<(String, Vec<u8>)>) {
    let opts = RunOptions {
        pcap_dir: Some(dir.to_path_buf()),
        trace_hash: true,
        ..Default::default()
    };
    let res = run_with(sc, 11, &opts).expect("the scenario runs");
    let mut pcaps: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("the pcap directory exists")
        .map(|e| {
            let p = e.expect("a directory entry").path();
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (name, std::fs::read(&p).expect("the pcap is readable"))
        })
        .collect();
    pcaps.sort();
    let _ = std::fs::remove_dir_all(dir);
    (res, pcaps)
}

pub fn on_and_off(app: &str, rtt: &str, loss: f64, tag: &str) -> (RunResult, RunResult) {
    let base = std::env::temp_dir().join(format!("brisk-utcp-{tag}-{}", std::process::id()));
    let (off, off_pcaps) = run(&scenario(app, rtt, loss, false), &base.join("off"));
    let (on, on_pcaps) = run(&scenario(app, rtt, loss, true), &base.join("on"));
    let _ = std::fs::remove_dir_all(&base);
    assert_eq!(
        off_pcaps.len(),
        4,
        "one pcap per host and the bottleneck's pcapng files (departures, drops)"
    );
    for ((n1, b1), (n2, b2)) in off_pcaps.iter().zip(&on_pcaps) {
        assert_eq!(n1, n2);
        // The drops file may hold few packets; its bytes are compared all the same.
        assert!(
            n1.ends_with(".drops.pcapng") || b1.len() > 10_000,
            "{n1}: the run sent packets"
        );
        assert!(
            b1 == b2,
            "{n1}: packet trace differs with unordered receive"
        );
    }
    assert_eq!(off.trace_sha256, on.trace_sha256);
    assert!(off.flows[0].stream_ok && on.flows[0].stream_ok);
    (off, on)
}

/// Cumulative bytes per sample.
pub fn cumulative(res: &RunResult) -> Vec<u64> {
    res.flows[0]
        .goodput_series
        .iter()
        .scan(0u64, |acc, &(_, b)| {
            *acc += b;
            Some(*acc)
        })
        .collect()
}

pub fn lossy_bulk_transfer_is_wire_identical_and_delivers_bytes_no_later() -> String {
    let (off, on) = on_and_off(r#"{ kind = "bulk" }"#, "60ms", 0.03, "bulk");
    assert!(on.bottleneck.drops > 0 || off.flows[0].retransmitted_packets > 0);
    let (c_off, c_on) = (cumulative(&off), cumulative(&on));
    assert_eq!(c_off.len(), c_on.len());
    // First delivery is never later than in-order delivery, and strictly earlier
    // somewhere (out-of-order data counted before the hole filled).
    assert!(c_off.iter().zip(&c_on).all(|(a, b)| b >= a));
    assert!(c_off.iter().zip(&c_on).any(|(a, b)| b > a));
    assert!(on.flows[0].bytes_delivered >= off.flows[0].bytes_delivered);
    assert_eq!(
        on.flows[0].goodput_series.len(),
        off.flows[0].goodput_series.len()
    );
    format!(
        "bulk, 60 ms, 3 % loss: pcaps identical ({} retransmissions)",
        off.flows[0].retransmitted_packets
    )
}

pub fn lossy_records_are_wire_identical_and_fewer_wait_a_round_trip() -> String {
    let app = r#"{ kind = "records", size = 1448, interval = "20ms" }"#;
    let (off, on) = on_and_off(app, "100ms", 0.02, "records");
    let (l_off, l_on) = (
        off.flows[0].record_latency.expect("records were delivered"),
        on.flows[0].record_latency.expect("records were delivered"),
    );
    // Same records delivered (every one completes in both; latency only moves).
    assert!(l_on.count >= l_off.count, "{l_on:?} vs {l_off:?}");
    assert!(l_on.mean < l_off.mean, "{l_on:?} vs {l_off:?}");
    assert!(l_on.p95 <= l_off.p95, "{l_on:?} vs {l_off:?}");
    format!(
        "records, 100 ms, 2 % loss: pcaps identical, mean record latency {:.0} → {:.0} ms",
        l_off.mean / 1e6,
        l_on.mean / 1e6
    )
}

/// UT-1: both runs. Panics on a failure.
pub fn ut1() -> String {
    format!(
        "{}; {}",
        lossy_bulk_transfer_is_wire_identical_and_delivers_bytes_no_later(),
        lossy_records_are_wire_identical_and_fewer_wait_a_round_trip()
    )
}
