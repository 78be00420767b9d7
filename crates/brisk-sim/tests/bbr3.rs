//! BBR v3 (`cc = "bbr3"`, google/bbr v3 `tcp_bbr.c`; docs/mechanisms/bbr3.md) in
//! the simulator: it fills a 10 Mbit/s link on several RTTs and seeds with a small
//! queue on a deep buffer; under random loss it answers with its lower bounds
//! (bw_lo/inflight_lo) and keeps a smaller queue than v1; two flows converge; on a
//! short data-centre path behind a CE-marking queue it reacts to the marks
//! (ecn_alpha, inflight_lo) instead of filling the buffer.

use brisk_sim::{run, RunResult, Scenario};
use brisk_tcp::cc::bbr3::{Bbr3Diagnostics, Mode};
use brisk_tcp::cc::CcDiagnostics;

fn scenario(cc: &str, rtt_ms: u64, secs: u64, loss: f64, packets: u32) -> Scenario {
    let loss = if loss > 0.0 {
        format!("loss = {{ kind = \"bernoulli\", p = {loss} }}")
    } else {
        String::new()
    };
    let text = format!(
        r#"
name = "bbr3-{cc}"
duration = "{secs}s"
[bottleneck]
rate = "10Mbit"
{loss}
queue = {{ kind = "droptail", packets = {packets} }}
[[flow]]
cc = "{cc}"
rtt = "{rtt_ms}ms"
app = {{ kind = "bulk" }}
"#
    );
    Scenario::from_toml_str(&text).unwrap()
}

fn p50_ms(q: &[u64]) -> f64 {
    q[q.len() / 2] as f64 / 1e6
}

fn diag(r: &RunResult, i: usize) -> Bbr3Diagnostics {
    match &r.flows[i].cc_diag {
        Some(CcDiagnostics::Bbr3(d)) => **d,
        ref other => panic!("no BBR v3 diagnostics: {other:?}"),
    }
}

#[test]
fn bbr3_fills_the_link_with_a_small_queue_on_a_deep_buffer() {
    for (rtt, seed) in [(10u64, 1), (40, 2), (80, 3)] {
        let r = run(&scenario("bbr3", rtt, 20, 0.0, 1000), seed).unwrap();
        let f = &r.flows[0];
        assert_eq!(f.cc, "bbr3");
        let d = diag(&r, 0);
        let p50 = p50_ms(&f.rtt_quantiles);
        eprintln!(
            "rtt {rtt} ms seed {seed}: {:.2} Mbit/s, p50 RTT {p50:.1} ms, {d:?}",
            f.goodput_bps / 1e6
        );
        assert!(
            f.goodput_bps > 9.0e6,
            "rtt {rtt}: goodput {}",
            f.goodput_bps
        );
        // cwnd ≤ 2 BDP, paced at ~bw: the queue stays within one base RTT.
        assert!(p50 < 2.0 * rtt as f64 + 5.0, "rtt {rtt}: p50 RTT {p50} ms");
        assert!(d.full_bw_reached && d.mode != Mode::Startup, "{d:?}");
        // The estimate is the bottleneck's payload rate (~1.2 MB/s).
        let bw = d.bw_bytes_per_sec as f64;
        assert!((1.1e6..1.3e6).contains(&bw), "rtt {rtt}: bw {bw} B/s");
        // No loss: the upper bound stays unset, bandwidth probes happen (2-3 s).
        assert!(d.bw_probe_count >= 4, "{d:?}");
    }
}

#[test]
fn bbr3_answers_random_loss_with_its_lower_bounds_and_a_smaller_queue_than_v1() {
    // 1 % and 2 % random loss on a deep buffer at 40 ms: v1 ignores loss below
    // its 20 % policer threshold; v3 cuts bw_lo/inflight_lo on loss rounds
    // outside probing, so its queue is lower, and it keeps most of the link
    // (probes every 2-3 s undo the cuts).
    for (loss, seed) in [(0.01, 11u64), (0.01, 12), (0.02, 13)] {
        let v3 = run(&scenario("bbr3", 40, 20, loss, 1000), seed).unwrap();
        let v1 = run(&scenario("bbr", 40, 20, loss, 1000), seed).unwrap();
        let cu = run(&scenario("cubic", 40, 20, loss, 1000), seed).unwrap();
        let d = diag(&v3, 0);
        let (g3, g1, gc) = (
            v3.flows[0].goodput_bps,
            v1.flows[0].goodput_bps,
            cu.flows[0].goodput_bps,
        );
        let (q3, q1) = (
            p50_ms(&v3.flows[0].rtt_quantiles),
            p50_ms(&v1.flows[0].rtt_quantiles),
        );
        eprintln!(
            "loss {loss} seed {seed}: v3 {:.2} Mbit/s p50 {q3:.1} ms; v1 {:.2} p50 {q1:.1}; cubic {:.2}; {d:?}",
            g3 / 1e6,
            g1 / 1e6,
            gc / 1e6
        );
        assert!(d.lower_bound_cuts > 10, "{d:?}");
        assert!(q3 < q1, "v3 p50 {q3} ms not below v1 {q1} ms");
        assert!(g3 > 0.5 * g1, "v3 {g3} vs v1 {g1}");
        assert!(g3 > gc, "v3 {g3} vs cubic {gc}");
    }
}

#[test]
fn bbr3_probe_loss_on_a_shallow_buffer_sets_inflight_hi() {
    // A 20-packet buffer under a 33-packet BDP: probing overflows it; v3 cuts
    // inflight_hi where loss passed 2 % and keeps the link busy.
    for seed in [21u64, 22] {
        let r = run(&scenario("bbr3", 40, 20, 0.0, 20), seed).unwrap();
        let d = diag(&r, 0);
        let f = &r.flows[0];
        eprintln!(
            "seed {seed}: {:.2} Mbit/s, retrans {}, drops {}, {d:?}",
            f.goodput_bps / 1e6,
            f.retransmitted_packets,
            r.bottleneck.drops
        );
        assert!(d.inflight_hi != u32::MAX, "{d:?}");
        assert!(
            d.inflight_too_high_count > 0 || d.startup_exit.is_some(),
            "{d:?}"
        );
        assert!(f.goodput_bps > 8.5e6, "goodput {}", f.goodput_bps);
    }
}

#[test]
fn two_bbr3_flows_converge() {
    let text = |seed: u64| {
        format!(
            r#"
name = "bbr3-pair"
seed = {seed}
duration = "40s"
[bottleneck]
rate = "10Mbit"
queue = {{ kind = "droptail", packets = 200 }}
[[flow]]
rtt = "30ms"
cc = "bbr3"
app = {{ kind = "bulk" }}
[[flow]]
rtt = "30ms"
cc = "bbr3"
start = "5s"
app = {{ kind = "bulk" }}
"#
        )
    };
    for seed in [31u64, 32] {
        let r = run(&Scenario::from_toml_str(&text(seed)).unwrap(), seed).unwrap();
        // Goodput over the last 20 s from each flow's series (bytes per sampling
        // interval, stamped in ns).
        let late = |i: usize| {
            let bytes: u64 = r.flows[i]
                .goodput_series
                .iter()
                .filter(|(t, _)| *t > 20_000_000_000)
                .map(|(_, b)| *b)
                .sum();
            bytes as f64 * 8.0 / 20.0
        };
        assert!(!r.flows[0].goodput_series.is_empty());
        let (a, b) = (late(0), late(1));
        let jain = (a + b).powi(2) / (2.0 * (a * a + b * b));
        eprintln!(
            "seed {seed}: {:.2} / {:.2} Mbit/s, Jain {jain:.3}",
            a / 1e6,
            b / 1e6
        );
        assert!(jain > 0.9, "seed {seed}: Jain {jain} ({a} vs {b})");
        assert!(a + b > 8.5e6, "seed {seed}: total {}", a + b);
    }
}

fn dc(cc: &str, ecn: bool) -> Scenario {
    let text = format!(
        r#"
name = "bbr3-ecn"
duration = "3s"
[bottleneck]
rate = "100Mbit"
queue = {{ kind = "droptail", packets = 400, ecn_threshold_packets = 20 }}
[[flow]]
count = 2
rtt = "2ms"
cc = "{cc}"
app = {{ kind = "bulk" }}
[flow.tcp]
ecn = {ecn}
"#
    );
    Scenario::from_toml_str(&text).unwrap()
}

#[test]
fn bbr3_reacts_to_ce_marks_on_a_short_path_and_holds_the_queue_near_the_threshold() {
    for seed in [41u64, 42] {
        let on = run(&dc("bbr3", true), seed).unwrap();
        let off = run(&dc("bbr3", false), seed).unwrap();
        let qd = |r: &RunResult| r.bottleneck.queue_delay.as_ref().map_or(0.0, |s| s.mean) / 1e6;
        let d = diag(&on, 0);
        let total = |r: &RunResult| r.flows.iter().map(|f| f.goodput_bps).sum::<f64>();
        eprintln!(
            "seed {seed}: ECN {:.1} Mbit/s, ce {}, drops {}, mean queue {:.3} ms; no ECN {:.1} Mbit/s, drops {}, mean queue {:.3} ms; {d:?}",
            total(&on) / 1e6,
            on.bottleneck.ce_marked,
            on.bottleneck.drops,
            qd(&on),
            total(&off) / 1e6,
            off.bottleneck.drops,
            qd(&off)
        );
        assert!(d.ecn_eligible, "{d:?}");
        assert!(on.bottleneck.ce_marked > 0);
        assert!(d.ecn_alpha < 256, "alpha moved: {d:?}");
        assert!(qd(&on) < qd(&off), "ECN queue not lower");
        assert!(total(&on) > 85e6, "ECN goodput {}", total(&on));
    }
}

#[test]
fn bbr3_cannot_be_wrapped_by_a_layer_and_the_error_names_the_field() {
    let base = r#"
name = "t"
duration = "1s"
[bottleneck]
rate = "10Mbit"
queue = { kind = "droptail", packets = 100 }
[[flow]]
cc = "bbr3"
rtt = "10ms"
app = { kind = "bulk" }
"#;
    assert!(Scenario::from_toml_str(base).is_ok());
    for (body, field) in [
        ("delay_correlation = true", "tcp.delay_correlation"),
        ("new_cwv = true", "tcp.new_cwv"),
    ] {
        let text = format!("{base}[flow.tcp]\n{body}\n");
        let e = match Scenario::from_toml_str_named(&text, "scenarios/x.toml") {
            Ok(_) => panic!("accepted {body} with bbr3"),
            Err(e) => e,
        };
        assert!(e.field.ends_with(field), "{e}");
        assert!(e.message.contains("\"bbr3\""), "{e}");
    }
    // A misspelt controller names the field and lists bbr3.
    let bad = base.replace("\"bbr3\"", "\"bbr4\"");
    let e = match Scenario::from_toml_str_named(&bad, "scenarios/x.toml") {
        Ok(_) => panic!("accepted bbr4"),
        Err(e) => e,
    };
    assert!(e.field.contains("cc"), "{e}");
    assert!(e.message.contains("bbr3"), "{e}");
}

#[test]
fn bbr3_is_deterministic() {
    let sc = scenario("bbr3", 30, 5, 0.01, 100);
    let a = run(&sc, 7).unwrap();
    let b = run(&sc, 7).unwrap();
    assert_eq!(a.to_json(), b.to_json());
    let c = run(&sc, 8).unwrap();
    assert_ne!(a.to_json(), c.to_json(), "the seed changes the run");
}

/// One bulk flow of `cc` behind CoDel (5 ms / 100 ms) that marks ECN-capable packets
/// instead of dropping them, as cc-map's CoDel path, at 20 Mbit/s and 40 ms for 30 s;
/// `ecn`: whether the flow negotiates ECN (without it CoDel drops).
fn codel(cc: &str, ecn: bool) -> Scenario {
    let text = format!(
        r#"
name = "bbr3-codel"
duration = "30s"
[bottleneck]
rate = "20Mbit"
queue = {{ kind = "codel", ecn = true }}
[[flow]]
rtt = "40ms"
cc = "{cc}"
app = {{ kind = "bulk" }}
[flow.tcp]
ecn = {ecn}
"#
    );
    Scenario::from_toml_str(&text).unwrap()
}

/// The table row docs/mechanisms/bbr3.md lacked: v3 beside v1 and CUBIC behind CoDel,
/// with and without ECN. CoDel keeps every one near its 5-ms target most of the time;
/// what differs is how far each lets the queue grow before CoDel's drop (or mark) rate,
/// which rises as 1/√count, catches up with it.
#[test]
fn bbr3_behind_codel_beside_v1_and_cubic() {
    let p = |q: &[u64], x: f64| q[((q.len() - 1) as f64 * x) as usize] as f64 / 1e6;
    for seed in [51u64, 52] {
        for ecn in [false, true] {
            let mut line = format!("seed {seed} ecn {ecn}:");
            for cc in ["bbr3", "bbr", "cubic"] {
                let r = run(&codel(cc, ecn), seed).unwrap();
                let f = &r.flows[0];
                let owd = f.one_way_delay.as_ref().unwrap();
                let (p50, p95) = (p(&f.rtt_quantiles[..], 0.5), p(&f.rtt_quantiles[..], 0.95));
                line += &format!(
                    " {cc} {:.2} Mbit/s RTT p50 {p50:.1} p95 {p95:.1} ms, OWD p95 {:.1} ms, drops {} CE {};",
                    f.goodput_bps / 1e6,
                    owd.p95_ns as f64 / 1e6,
                    r.bottleneck.drops,
                    r.bottleneck.ce_marked
                );
                if cc == "bbr3" {
                    let d = diag(&r, 0);
                    line += &format!(" [{d:?}]");
                }
                // CoDel holds every controller's median near the base RTT plus
                // its target, and none starves.
                assert!(p50 < 40.0 + 15.0, "{cc} ecn {ecn} seed {seed}: p50 {p50}");
                assert!(f.goodput_bps > 15e6, "{cc}: {}", f.goodput_bps);
            }
            eprintln!("{line}");
        }
    }
}
