//! Conformance checks of the foundation (issue 2, §5), each a `brisk run` of a scenario in
//! `scenarios/`. Documented results: docs/mechanisms/cubic.md and docs/conformance.md.

use brisk_sim::{run, RunResult, Scenario};
use std::path::PathBuf;

fn run_file(name: &str) -> RunResult {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name);
    let sc = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    run(&sc, sc.seed).unwrap_or_else(|e| panic!("{e}"))
}

/// 1. The thesis's §6.1.1 baseline: one CUBIC flow, 10 Mbit/s, 10 ms, 1000-packet
///    drop-tail, 20 s. The thesis reports a mean RTT of 493 ms, the first overflow at
///    ~80 % of the run, and >100 retransmissions. A faithful modern CUBIC fills the buffer
///    faster than the thesis's 2014 kernel did: RFC 9438's curve from HyStart's exit
///    predicts a first drop at ~14 s and a mean RTT near 600 ms, and ns-3's TcpCubic on
///    the same scenario (`bench/ns3/bufferbloat.py --rate 10Mbps --duration 20`) gives
///    592 ms. We therefore check the mean RTT against that independent model (±20 %)
///    and record the distance to the thesis's 493 ms in docs/conformance.md.
#[test]
fn bufferbloat_cubic_fills_the_buffer_like_linux_cubic() {
    let res = run_file("bufferbloat-cubic.toml");
    let f = &res.flows[0];
    let rtt = f.rtt.expect("rtt samples");
    let mean_ms = rtt.mean / 1e6;
    let table = res.table();
    assert!(f.goodput_bps >= 9.3e6, "goodput {}\n{table}", f.goodput_bps);
    let first_drop = res
        .bottleneck
        .first_drop
        .expect("CUBIC must overflow the buffer");
    assert!(
        first_drop.as_secs_f64() > 0.7 * 20.0,
        "first drop {first_drop}\n{table}"
    );
    assert!(f.retransmitted_packets > 100, "{table}");
    let ns3_ms = 592.0;
    assert!(
        (mean_ms - ns3_ms).abs() <= 0.2 * ns3_ms,
        "mean RTT {mean_ms:.1} ms vs ns-3 CUBIC {ns3_ms} ms\n{table}"
    );
    // The queue really is the RTT: mean RTT is base RTT plus mean queueing delay.
    let qd = res.bottleneck.queue_delay.expect("queue delay").mean / 1e6;
    assert!(
        (mean_ms - 10.0 - qd).abs() < 0.15 * mean_ms,
        "rtt {mean_ms} vs 10 + {qd}"
    );
}

/// 2. Reno under Bernoulli loss: goodput within a factor of 2 of the Mathis formula
///    `MSS/RTT * sqrt(3/2) / sqrt(p)` (Mathis et al., CCR 1997), 10 Mbit/s, 60 ms.
#[test]
fn reno_goodput_tracks_the_mathis_formula() {
    for (file, p) in [
        ("reno-loss-0.1pct.toml", 0.001f64),
        ("reno-loss-1pct.toml", 0.01),
        ("reno-loss-3pct.toml", 0.03),
    ] {
        let res = run_file(file);
        let f = &res.flows[0];
        let rtt_s = f.rtt.expect("rtt").mean / 1e9;
        let mathis = (1448.0 * 8.0 / rtt_s) * (1.5f64).sqrt() / p.sqrt();
        // The link caps what Mathis can predict.
        let expected = mathis.min(10e6);
        let ratio = f.goodput_bps / expected;
        assert!(
            (0.5..=2.0).contains(&ratio),
            "{file}: goodput {:.2} Mbit/s vs Mathis {:.2} Mbit/s (ratio {ratio:.2})\n{}",
            f.goodput_bps / 1e6,
            expected / 1e6,
            res.table()
        );
    }
}

/// 3. Two CUBIC flows with equal RTTs over 60 s share the bottleneck fairly.
#[test]
fn two_cubic_flows_share_fairly() {
    let res = run_file("two-cubic-fairness.toml");
    let x: Vec<f64> = res.flows.iter().map(|f| f.goodput_bps).collect();
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    let jain = sum * sum / (x.len() as f64 * sq);
    assert!(jain >= 0.9, "Jain's index {jain:.3}\n{}", res.table());
    assert!(res.bottleneck.utilization > 0.9, "{}", res.table());
}
