//! End to end through brisk-tcp: streams arrive intact over lossy, reordering paths,
//! and sized transfers complete.

use brisk_sim::{run, Scenario};

fn scenario(extra_bottleneck: &str, app: &str) -> Scenario {
    let text = format!(
        r#"
name = "integrity"
duration = "20s"
[bottleneck]
rate = "10Mbit"
queue = {{ kind = "droptail", packets = 60 }}
{extra_bottleneck}
[[flow]]
rtt = "20ms"
app = {app}
"#
    );
    Scenario::from_toml_str(&text).unwrap()
}

#[test]
fn sized_bulk_transfer_over_lossy_bottleneck_arrives_intact() {
    let sc = scenario(
        r#"loss = { kind = "bernoulli", p = 0.02 }"#,
        r#"{ kind = "bulk", bytes = 2000000 }"#,
    );
    let res = run(&sc, 1).unwrap();
    let f = &res.flows[0];
    assert!(res.bottleneck.drops > 0, "the test needs losses");
    assert_eq!(f.bytes_delivered, 2_000_000, "{}", res.table());
    assert_eq!(f.bytes_sent, 2_000_000);
    assert!(f.stream_ok, "{}", res.table());
    assert!(f.fct.is_some());
    assert!(f.retransmitted_packets > 0, "{}", res.table());
}

#[test]
fn reordering_duplication_and_corruption_do_not_break_the_stream() {
    let sc = scenario(
        r#"jitter = { max = "3ms", reorder = true }
duplicate = 0.01
corrupt = 0.01"#,
        r#"{ kind = "bulk", bytes = 1000000 }"#,
    );
    let res = run(&sc, 2).unwrap();
    let f = &res.flows[0];
    assert_eq!(f.bytes_delivered, 1_000_000, "{}", res.table());
    assert!(f.stream_ok);
}

#[test]
fn records_report_per_record_latency_at_least_the_one_way_delay() {
    let sc = scenario(
        "",
        r#"{ kind = "records", size = 1000, interval = "50ms", count = 40 }
[flow.tcp]
nagle = false"#,
    );
    let res = run(&sc, 1).unwrap();
    let f = &res.flows[0];
    let lat = f.record_latency.expect("latencies");
    assert_eq!(lat.count, 40);
    // One-way base delay is 10 ms; 1000 bytes at 10 Mbit/s add ~0.8 ms.
    assert!(lat.min >= 10_000_000, "{lat:?}");
    assert!(lat.p50 < 30_000_000, "{lat:?}");
    assert!(f.stream_ok);
    assert!(f.fct.is_some());
}

#[test]
fn request_response_exchanges_complete() {
    let sc = scenario(
        "",
        r#"{ kind = "request_response", request = 200, response = 20000, count = 10, think = "10ms" }"#,
    );
    let res = run(&sc, 1).unwrap();
    let f = &res.flows[0];
    let lat = f.record_latency.expect("exchange latencies");
    assert_eq!(lat.count, 10);
    assert!(lat.min >= 20_000_000, "at least one RTT: {lat:?}");
    assert!(f.stream_ok);
    assert!(f.fct.is_some());
}

#[test]
fn bulk_flow_fills_the_bottleneck() {
    let sc = scenario("", r#"{ kind = "bulk" }"#);
    let res = run(&sc, 1).unwrap();
    assert!(res.bottleneck.utilization > 0.9, "{}", res.table());
    assert!(res.flows[0].goodput_bps > 8.5e6, "{}", res.table());
}

#[test]
fn without_digests_the_pattern_check_still_vouches_for_the_stream() {
    let sc = scenario(
        r#"loss = { kind = "bernoulli", p = 0.01 }"#,
        r#"{ kind = "bulk", bytes = 500000 }"#,
    );
    let opts = brisk_sim::RunOptions {
        skip_stream_hashes: true,
        ..Default::default()
    };
    let res = brisk_sim::run_with(&sc, 1, &opts).unwrap();
    assert_eq!(res.flows[0].bytes_delivered, 500_000);
    assert!(res.flows[0].stream_ok);
    // Digests do not change what happens on the wire.
    let with = run(&sc, 1).unwrap();
    assert_eq!(with.to_json(), res.to_json());
}

/// Hosts skip the TCP checksum of a packet whose `l4_csum_valid` says its sender
/// computed it and nothing changed it since (Linux's `CHECKSUM_UNNECESSARY`). The
/// corruption model must clear that flag: every corrupted packet is then verified and
/// dropped by its receiver (a trusted one would deliver its flipped bit, and the stream
/// hash would differ).
#[test]
fn corrupted_segments_are_verified_and_dropped_never_trusted() {
    let sc = scenario("corrupt = 0.03", r#"{ kind = "bulk", bytes = 5000000 }"#);
    let res = run(&sc, 3).unwrap();
    let f = &res.flows[0];
    assert_eq!(f.bytes_delivered, 5_000_000, "{}", res.table());
    assert!(
        f.stream_ok,
        "the received stream's hash must match the sent one"
    );

    // The same run again, to count inside: what the links corrupted against what
    // the hosts dropped for it.
    let mut net = brisk_sim::topology::build(&sc, 3).unwrap();
    net.engine
        .run_until(brisk_time::Instant::ZERO + sc.duration.0, &mut ());
    let corrupted: u64 = net
        .engine
        .nodes()
        .iter()
        .map(|n| match n {
            brisk_sim::node::SimNode::Impair(i) => i.counters().corrupted,
            _ => 0,
        })
        .sum();
    let (mut checksum, mut parse) = (0, 0);
    for fl in &net.flows {
        for node in [fl.sender, fl.receiver] {
            let s = net.engine.node(node).as_host().unwrap().ep.stats();
            checksum += s.drop_checksum;
            parse += s.drop_parse;
        }
    }
    let unroutable = net.engine.stats().unroutable;
    assert!(corrupted >= 50, "the test needs corruption: {corrupted}");
    // A flipped bit fails the IPv4 header or TCP checksum, except in the version or
    // header-length nibble (checked before the sum: a parse drop) or in the
    // destination address (no route).
    assert_eq!(checksum + parse + unroutable, corrupted);
    assert!(checksum * 10 >= corrupted * 9, "{checksum} of {corrupted}");
}
