//! LEDBAT (RFC 6817, `cc = "ledbat"`) in the simulator: alone on a 10 Mbit/s path with
//! a deep drop-tail buffer it keeps the bottleneck busy with about TARGET (100 ms) of
//! queue, where CUBIC fills the buffer. Three paths (20, 40, 80 ms). Docs: docs/mechanisms/ledbat.md.

use brisk_sim::{run, Scenario};

fn scenario(cc: &str, rtt_ms: u64) -> Scenario {
    let text = format!(
        r#"
name = "ledbat-{cc}"
duration = "60s"
[bottleneck]
rate = "10Mbit"
queue = {{ kind = "droptail", packets = 1000 }}
[[flow]]
cc = "{cc}"
rtt = "{rtt_ms}ms"
app = {{ kind = "bulk" }}
"#
    );
    Scenario::from_toml_str(&text).unwrap()
}

#[test]
fn ledbat_holds_about_target_of_queue_where_cubic_fills_the_buffer() {
    // The scenario draws nothing random, so seeds give identical runs: vary the path.
    for (rtt, seed) in [(20u64, 1), (40, 2), (80, 3)] {
        let l = run(&scenario("ledbat", rtt), seed).unwrap();
        let c = run(&scenario("cubic", rtt), seed).unwrap();
        let (lf, cf) = (&l.flows[0], &c.flows[0]);
        assert_eq!(lf.cc, "ledbat");
        let l_p50_ms = lf.rtt_quantiles[lf.rtt_quantiles.len() / 2] as f64 / 1e6;
        let c_p50_ms = cf.rtt_quantiles[cf.rtt_quantiles.len() / 2] as f64 / 1e6;
        eprintln!(
            "rtt {rtt} ms: ledbat {:.2} Mbit/s p50 RTT {l_p50_ms:.1} ms; cubic {:.2} Mbit/s p50 RTT {c_p50_ms:.1} ms",
            lf.goodput_bps / 1e6,
            cf.goodput_bps / 1e6
        );
        assert!(
            lf.goodput_bps > 8.5e6,
            "rtt {rtt} ms: ledbat goodput {}",
            lf.goodput_bps
        );
        // Base RTT + TARGET 100 ms, within ±20 ms (the RTT also carries serialisation).
        let want = rtt as f64 + 100.0;
        assert!(
            (want - 20.0..=want + 20.0).contains(&l_p50_ms),
            "rtt {rtt} ms: ledbat median RTT {l_p50_ms} ms"
        );
        assert!(
            c_p50_ms > 2.0 * l_p50_ms,
            "rtt {rtt} ms: cubic median RTT {c_p50_ms} ms"
        );
    }
}
