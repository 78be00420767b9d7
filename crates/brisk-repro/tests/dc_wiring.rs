//! Delay correlation on the real connection: `[flow.tcp] delay_correlation = true`
//! wraps the flow's CUBIC, and on the thesis' bufferbloat scenario the layer clamps
//! cwnd near the BDP where CUBIC alone fills the 1000-packet queue.

use brisk_sim::Scenario;

fn scenario(dc: bool) -> Scenario {
    let knobs = if dc {
        "[flow.tcp]\ndelay_correlation = true\n"
    } else {
        ""
    };
    Scenario::from_toml_str(&format!(
        "name = \"bb\"\nduration = \"8s\"\n[bottleneck]\nrate = \"10Mbit\"\nqueue = {{ kind = \"droptail\", packets = 1000 }}\n[[flow]]\nrtt = \"10ms\"\ncc = \"cubic\"\napp = {{ kind = \"bulk\" }}\n{knobs}"
    ))
    .unwrap()
}

#[test]
fn delay_correlation_clamps_cwnd_on_the_bufferbloat_scenario() {
    let cubic = brisk_sim::run(&scenario(false), 1).unwrap();
    let dc = brisk_sim::run(&scenario(true), 1).unwrap();
    let (c, d) = (&cubic.flows[0], &dc.flows[0]);
    assert_eq!(c.cc, "cubic");
    assert_eq!(d.cc, "cubic+dc");
    // After the first second, the layer holds cwnd within a few packets of the BDP
    // (≈8.3 packets) plus the high dither (+10); CUBIC alone grows far beyond.
    let late_max = |f: &brisk_sim::run::FlowResult| {
        f.cwnd_series
            .iter()
            .filter(|(t, _)| *t > 1_000_000_000)
            .map(|(_, r)| r.cwnd)
            .max()
            .unwrap()
    };
    assert!(late_max(d) <= 25, "dc cwnd {}", late_max(d));
    assert!(late_max(c) > 200, "cubic cwnd {}", late_max(c));
    let mean = |f: &brisk_sim::run::FlowResult| f.rtt.unwrap().mean / 1e6;
    assert!(mean(d) < 30.0, "dc mean RTT {} ms", mean(d));
    assert!(mean(c) > 10.0 * mean(d));
    assert!(dc.bottleneck.utilization > 0.95);
    assert_eq!(d.retransmitted_packets, 0);
}

#[test]
fn delay_correlation_knobs_are_validated() {
    let bad = |tcp: &str| {
        Scenario::from_toml_str(&format!(
            "name = \"x\"\nduration = \"1s\"\n[bottleneck]\nrate = \"10Mbit\"\n[[flow]]\nrtt = \"10ms\"\napp = {{ kind = \"bulk\" }}\n[flow.tcp]\n{tcp}\n"
        ))
        .unwrap_err()
    };
    assert_eq!(bad("dc_window = 64").field, "flow[0].tcp.delay_correlation");
    assert_eq!(
        bad("delay_correlation = true\ndc_window = 1").field,
        "flow[0].tcp.dc_window"
    );
    assert_eq!(
        bad("delay_correlation = true\ndc_threshold = 1.5").field,
        "flow[0].tcp.dc_threshold"
    );
}
