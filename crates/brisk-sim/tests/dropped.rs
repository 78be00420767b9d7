//! `RunOptions::dropped_ranges`: the bottleneck's drops as stream ranges per flow.

use brisk_sim::run::{run_with, RunOptions};
use brisk_sim::Scenario;

fn scenario(drop: &str) -> Scenario {
    Scenario::from_toml_str(&format!(
        r#"
name = "drops"
duration = "5s"
[bottleneck]
rate = "10Mbit"
queue = {{ kind = "droptail", packets = 100 }}
loss = {{ kind = "list", packets = [{drop}] }}
[[flow]]
rtt = "20ms"
app = {{ kind = "bulk", bytes = 14480 }}
[[flow]]
rtt = "30ms"
start = "2s"
app = {{ kind = "bulk", bytes = 2000 }}
"#
    ))
    .unwrap()
}

fn opts() -> RunOptions {
    RunOptions {
        dropped_ranges: true,
        ..RunOptions::default()
    }
}

#[test]
fn dropped_segments_map_to_their_stream_bytes() {
    // Forward packets of flow 0: SYN (0), handshake ACK (1), data 1..10 (2..11, the
    // 10th with the FIN). Dropping 4 and 11 loses data segments 3 and 10.
    let r = run_with(&scenario("4, 11"), 1, &opts()).unwrap();
    let f = &r.flows[0];
    assert!(f.stream_ok);
    assert_eq!(
        f.dropped_ranges,
        vec![(2 * 1448, 3 * 1448), (9 * 1448, 10 * 1448 + 1)],
        "segment 3, and segment 10 with its FIN"
    );
    assert!(r.flows[1].dropped_ranges.is_empty());
    // The sender retransmitted at least what was dropped.
    for &(s, e) in &f.dropped_ranges {
        assert!(f
            .retransmitted_ranges
            .iter()
            .any(|&(a, b)| a <= s && e <= b + 1));
    }
}

#[test]
fn a_lost_syn_or_pure_ack_drops_no_stream_bytes() {
    let r = run_with(&scenario("0, 1"), 1, &opts()).unwrap();
    assert!(r.flows[0].stream_ok);
    assert_eq!(r.bottleneck.drops, 2);
    assert!(
        r.flows[0].dropped_ranges.is_empty(),
        "{:?}",
        r.flows[0].dropped_ranges
    );
}

#[test]
fn off_by_default() {
    let r = brisk_sim::run(&scenario("4"), 1).unwrap();
    assert!(r.flows[0].dropped_ranges.is_empty());
}
