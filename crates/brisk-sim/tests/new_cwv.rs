//! new-CWV (RFC 7661) end to end (claim CWV-4): a bursty rate-limited flow keeps its
//! cwnd across idle periods where RFC 5681 slow-start-after-idle restarts it, and a
//! bulk flow is unchanged. Numbers: docs/mechanisms/new-cwv.md.

use brisk_sim::{run, Scenario};
use brisk_tcp::cc::CcDiagnostics;

fn scenario(app: &str, tcp: &str, duration: &str) -> Scenario {
    let text = format!(
        r#"
name = "newcwv"
duration = "{duration}"
[bottleneck]
rate = "10Mbit"
queue = {{ kind = "droptail", packets = 200 }}
[[flow]]
rtt = "100ms"
app = {app}
[flow.tcp]
{tcp}"#
    );
    Scenario::from_toml_str(&text).unwrap()
}

const BURSTS: &str = r#"{ kind = "records", size = "100KB", interval = "2s" }"#;

/// cwnd just before each burst (sampled at t = 2k s − 1 ms, k ≥ 2) and the mean
/// record latency.
fn bursts(tcp: &str) -> (Vec<u32>, f64, Option<CcDiagnostics>) {
    let res = run(&scenario(BURSTS, tcp, "20s"), 1).unwrap();
    let f = &res.flows[0];
    let mut before = Vec::new();
    for k in 2..10u64 {
        let t = k * 2_000_000_000 - 1_000_000;
        let cwnd = f
            .cwnd_series
            .iter()
            .take_while(|(at, _)| *at <= t)
            .last()
            .map_or(0, |(_, r)| r.cwnd);
        before.push(cwnd);
    }
    let lat = f.record_latency.as_ref().map_or(f64::NAN, |s| s.mean / 1e9);
    (before, lat, f.cc_diag.clone())
}

#[test]
fn bursty_flow_keeps_cwnd_across_idle_with_new_cwv() {
    let (cwv, cwv_lat, diag) = bursts("new_cwv = true");
    let (ssai, ssai_lat, _) = bursts("");
    let (nossai, nossai_lat, _) = bursts("slow_start_after_idle = false");
    eprintln!("cwnd before bursts: new-CWV {cwv:?}, SSAI {ssai:?}, no-SSAI {nossai:?}");
    eprintln!(
        "mean record latency s: new-CWV {cwv_lat:.4}, SSAI {ssai_lat:.4}, no-SSAI {nossai_lat:.4}"
    );
    eprintln!("new-CWV diagnostics: {diag:?}");
    let Some(CcDiagnostics::NewCwv(d)) = diag else {
        panic!("no new-CWV diagnostics: {diag:?}");
    };
    assert!(d.samples > 0);
    // new-CWV: the window carried into each burst is the one the last burst left.
    assert!(cwv.iter().all(|&c| c > 10), "{cwv:?}");
    // RFC 5681 with slow start after idle: restarted towards IW (10) after 2 s idle.
    // The restart happens at the next send, so the window recorded before it is the
    // old one; the latency shows the restart.
    assert!(cwv_lat < ssai_lat, "{cwv_lat} vs {ssai_lat}");
    assert!(
        (cwv_lat - nossai_lat).abs() <= 0.10 * nossai_lat,
        "{cwv_lat} vs {nossai_lat}"
    );
}

#[test]
fn bulk_flow_is_unchanged_by_new_cwv() {
    let app = r#"{ kind = "bulk", bytes = "5MB" }"#;
    let plain = run(&scenario(app, "", "30s"), 1).unwrap();
    let cwv = run(&scenario(app, "new_cwv = true", "30s"), 1).unwrap();
    let (a, b) = (&plain.flows[0], &cwv.flows[0]);
    let (fa, fb) = (a.fct.unwrap().as_secs_f64(), b.fct.unwrap().as_secs_f64());
    eprintln!(
        "bulk 5MB FCT s: cubic {fa:.4}, cubic+cwv {fb:.4}; goodput {:.0} vs {:.0} bit/s",
        a.goodput_bps, b.goodput_bps
    );
    assert!((fa - fb).abs() <= 0.02 * fa, "{fa} vs {fb}");
}
