//! Copa (`cc = "copa"`, NSDI 2018; docs/mechanisms/copa.md) in the simulator: alone it
//! fills a 10 Mbit/s link with a queue of a few packets (δ = 0.5: 1/δ = 2 packets
//! standing, oscillating) where CUBIC fills the deep buffer, and stays in default
//! mode; two Copa flows share fairly; against CUBIC it switches to competitive mode
//! and keeps a share. Several paths and seeds (the seed moves the flows' start times).

use brisk_sim::{run, RunResult, Scenario};
use brisk_tcp::cc::copa::{CopaDiagnostics, Mode};
use brisk_tcp::cc::CcDiagnostics;

/// A dumbbell at 10 Mbit/s with a `packets` drop-tail buffer and `flows` as
/// (cc, start ms), each at `rtt_ms`.
fn scenario(flows: &[(&str, u64)], rtt_ms: u64, secs: u64, packets: u32, loss: f64) -> Scenario {
    scenario_at(10, flows, rtt_ms, secs, packets, loss)
}

/// As [`scenario`] with the bottleneck at `mbit` Mbit/s.
fn scenario_at(
    mbit: u64,
    flows: &[(&str, u64)],
    rtt_ms: u64,
    secs: u64,
    packets: u32,
    loss: f64,
) -> Scenario {
    let loss = if loss > 0.0 {
        format!("loss = {{ kind = \"bernoulli\", p = {loss} }}")
    } else {
        String::new()
    };
    let mut text = format!(
        r#"
name = "copa-test"
duration = "{secs}s"
[bottleneck]
rate = "{mbit}Mbit"
{loss}
queue = {{ kind = "droptail", packets = {packets} }}
"#
    );
    for (cc, start) in flows {
        text.push_str(&format!(
            "[[flow]]\ncc = \"{cc}\"\nrtt = \"{rtt_ms}ms\"\nstart = \"{start}ms\"\napp = {{ kind = \"bulk\" }}\n"
        ));
    }
    Scenario::from_toml_str(&text).unwrap()
}

fn diag(r: &RunResult, i: usize) -> CopaDiagnostics {
    match r.flows[i].cc_diag {
        Some(CcDiagnostics::Copa(d)) => d,
        ref other => panic!("no Copa diagnostics: {other:?}"),
    }
}

fn queue_ms(r: &RunResult) -> f64 {
    r.bottleneck.queue_delay.map_or(0.0, |q| q.mean / 1e6)
}

/// One 1500-byte packet at 10 Mbit/s, ms.
const PKT_MS: f64 = 1.2;

/// Alone on a deep buffer at 20, 40 and 80 ms, two seeds each: Copa fills the link
/// with a queue of a few packets (no runaway). Failed before issue 35's fix at 20 ms
/// (207 ms of queue: false competitive entries, see docs/mechanisms/copa.md).
#[test]
fn copa_alone_fills_the_link_with_a_small_queue() {
    for (rtt, seed) in ALONE {
        alone(rtt, seed);
    }
}

/// The (rtt ms, seed) pairs of the alone tests.
const ALONE: [(u64, u64); 6] = [(20, 1), (20, 2), (40, 2), (40, 3), (80, 3), (80, 4)];

/// One alone run, checked; returns Copa's diagnostics.
fn alone(rtt: u64, seed: u64) -> CopaDiagnostics {
    let start = seed * 37;
    let c = run(&scenario(&[("copa", start)], rtt, 30, 1000, 0.0), seed).unwrap();
    let u = run(&scenario(&[("cubic", start)], rtt, 30, 1000, 0.0), seed).unwrap();
    let f = &c.flows[0];
    assert_eq!(f.cc, "copa");
    let d = diag(&c, 0);
    let (cq, uq) = (queue_ms(&c), queue_ms(&u));
    eprintln!(
        "rtt {rtt} ms seed {seed}: copa {:.2} Mbit/s mean queue {cq:.2} ms; cubic {:.2} Mbit/s queue {uq:.1} ms; {d:?}",
        f.goodput_bps / 1e6,
        u.flows[0].goodput_bps / 1e6
    );
    assert!(
        f.goodput_bps > 8.5e6,
        "rtt {rtt} ms: goodput {}",
        f.goodput_bps
    );
    // δ = 0.5: 1/δ = 2 packets of standing queue, the oscillation between 0
    // and about 2.5/δ = 5 (paper §2.1): mean queue between 0.5 and 8 packets.
    assert!(
        (0.5 * PKT_MS..8.0 * PKT_MS).contains(&cq),
        "rtt {rtt} ms: mean queue {cq} ms"
    );
    assert!(
        uq > 20.0 * cq,
        "rtt {rtt} ms: cubic queue {uq} vs copa {cq}"
    );
    assert!(!d.slow_start);
    assert!(
        c.flows[0].retransmitted_packets == 0,
        "no loss with a small queue"
    );
    d
}

/// Alone Copa stays in default mode (§2.2: its queue empties every few RTTs): the
/// paths above, 120 ms, and 25 Mbit/s at 20-120 ms (a bandwidth nothing was tuned
/// on). Failed before issue 35's third pass (40 ms: 45 false entries, 7.4 s of 30;
/// 120 ms: 30, 4.3 s; 25 Mbit/s at 40 ms: 68, 5.1 s; docs/mechanisms/copa.md cause 5).
#[test]
fn copa_alone_stays_in_default_mode() {
    let paths = ALONE.iter().map(|&(r, s)| (10, r, s)).chain([
        (10, 120, 5),
        (25, 20, 1),
        (25, 40, 2),
        (25, 80, 3),
        (25, 120, 5),
    ]);
    for (mbit, rtt, seed) in paths {
        let (d, _) = alone_at(mbit, rtt, seed);
        // At most 10 % of the run competitive.
        assert!(
            d.competitive_ms < 3_000,
            "{mbit} Mbit/s rtt {rtt} ms seed {seed}: {d:?}"
        );
    }
}

/// Copa alone at `mbit` Mbit/s for 30 s on a 1000-packet drop-tail: checks goodput
/// (above 85 % of the link) and no loss; returns Copa's diagnostics and its mean
/// queue, ms.
fn alone_at(mbit: u64, rtt: u64, seed: u64) -> (CopaDiagnostics, f64) {
    let c = run(
        &scenario_at(mbit, &[("copa", seed * 37)], rtt, 30, 1000, 0.0),
        seed,
    )
    .unwrap();
    let f = &c.flows[0];
    let d = diag(&c, 0);
    let q = queue_ms(&c);
    eprintln!(
        "{mbit} Mbit/s rtt {rtt} ms seed {seed}: copa {:.2} Mbit/s mean queue {q:.2} ms; {d:?}",
        f.goodput_bps / 1e6
    );
    assert!(
        f.goodput_bps > 0.85 * mbit as f64 * 1e6,
        "{mbit} Mbit/s rtt {rtt} ms: goodput {}",
        f.goodput_bps
    );
    assert!(!d.slow_start);
    assert!(f.retransmitted_packets == 0, "no loss with a small queue");
    (d, q)
}

/// Jain's fairness index of `xs`.
fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    s * s / (xs.len() as f64 * s2)
}

#[test]
#[ignore = "fails at 20 ms: shares fair (Jain 0.953) but the queue runs away (281 ms): \
            the flows' out-of-phase troughs still miss an empty queue now and then, and once \
            both are competitive nothing halves 1/delta without loss (40 and 60 ms pass since \
            issue 35's third pass); docs/mechanisms/copa.md cause 6"]
fn two_copa_flows_converge_to_fair_shares() {
    for (rtt, seed) in [(20u64, 4u64), (40, 5), (60, 6)] {
        let late = 2000 + seed * 111;
        let r = run(
            &scenario(&[("copa", 0), ("copa", late)], rtt, 40, 1000, 0.0),
            seed,
        )
        .unwrap();
        let g: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
        // Judge the shares over the last 20 s, after convergence: bytes in the
        // goodput series past 20 s.
        let tail: Vec<f64> = r
            .flows
            .iter()
            .map(|f| {
                f.goodput_series
                    .iter()
                    .filter(|(t, _)| *t >= 20_000_000_000)
                    .map(|(_, b)| *b as f64)
                    .sum()
            })
            .collect();
        let j = jain(&tail);
        eprintln!(
            "rtt {rtt} ms: goodput {:.2} / {:.2} Mbit/s, last 20 s {:?}, Jain {j:.3}, queue {:.2} ms, {:?} {:?}",
            g[0] / 1e6,
            g[1] / 1e6,
            tail,
            queue_ms(&r),
            diag(&r, 0),
            diag(&r, 1)
        );
        assert!(j > 0.95, "rtt {rtt} ms: Jain {j} ({tail:?})");
        assert!(
            r.bottleneck.utilization > 0.85,
            "{}",
            r.bottleneck.utilization
        );
        // Two flows: about 2·(1/δ) packets standing.
        assert!(queue_ms(&r) < 16.0 * PKT_MS, "queue {} ms", queue_ms(&r));
        for i in 0..2 {
            assert_eq!(diag(&r, i).mode, Mode::Default, "{:?}", diag(&r, i));
        }
    }
}

#[test]
fn copa_switches_to_competitive_mode_against_cubic_and_keeps_a_share() {
    // A buffer of about 2 BDP at 40 ms: CUBIC keeps it full.
    for (rtt, seed, packets) in [(40u64, 7u64, 70u32), (20, 8, 100), (60, 9, 100)] {
        let r = run(
            &scenario(
                &[("copa", seed * 13), ("cubic", 1000)],
                rtt,
                60,
                packets,
                0.0,
            ),
            seed,
        )
        .unwrap();
        let (c, u) = (r.flows[0].goodput_bps, r.flows[1].goodput_bps);
        let d = diag(&r, 0);
        let share = c / (c + u);
        eprintln!(
            "rtt {rtt} ms buffer {packets}: copa {:.2} cubic {:.2} Mbit/s (share {share:.2}), {d:?}",
            c / 1e6,
            u / 1e6
        );
        assert!(d.competitive_entries >= 1, "{d:?}");
        assert!(d.competitive_ms > 20_000, "{d:?}");
        // A reasonable share: the paper's Fig. 8 has Copa near CUBIC's rate; a
        // delay-based flow without the switch gets a few percent.
        assert!(share > 0.2, "rtt {rtt} ms: copa share {share}");
    }
}

#[test]
fn without_the_switch_copa_yields_to_cubic() {
    let text = |switch: bool| {
        format!(
            r#"
name = "copa-vs-cubic"
duration = "60s"
[bottleneck]
rate = "10Mbit"
queue = {{ kind = "droptail", packets = 70 }}
[[flow]]
cc = "copa"
rtt = "40ms"
app = {{ kind = "bulk" }}
[flow.tcp.copa]
mode_switch = {switch}
[[flow]]
cc = "cubic"
rtt = "40ms"
start = "1s"
app = {{ kind = "bulk" }}
"#
        )
    };
    let on = run(&Scenario::from_toml_str(&text(true)).unwrap(), 1).unwrap();
    let off = run(&Scenario::from_toml_str(&text(false)).unwrap(), 1).unwrap();
    let share =
        |r: &RunResult| r.flows[0].goodput_bps / (r.flows[0].goodput_bps + r.flows[1].goodput_bps);
    eprintln!(
        "copa share with the switch {:.3}, without {:.3}; {:?}",
        share(&on),
        share(&off),
        diag(&off, 0)
    );
    assert_eq!(diag(&off, 0).competitive_entries, 0);
    assert!(
        share(&on) > 2.0 * share(&off),
        "{} vs {}",
        share(&on),
        share(&off)
    );
}

#[test]
fn copa_is_deterministic_and_survives_random_loss() {
    for seed in [11u64, 12, 13] {
        let sc = scenario(&[("copa", 0)], 40, 20, 1000, 0.01);
        let a = run(&sc, seed).unwrap();
        let b = run(&sc, seed).unwrap();
        assert_eq!(
            a.to_json(),
            b.to_json(),
            "same scenario and seed, same result"
        );
        let f = &a.flows[0];
        eprintln!(
            "seed {seed}: copa at 1 % loss {:.2} Mbit/s, {:?}",
            f.goodput_bps / 1e6,
            diag(&a, 0)
        );
        // Copa's default mode does not back off on loss: most of the link.
        assert!(f.goodput_bps > 6.0e6, "seed {seed}: {}", f.goodput_bps);
        assert!(f.stream_ok);
    }
}

#[test]
fn scenario_errors_name_the_copa_field() {
    let base = r#"
name = "t"
duration = "1s"
[bottleneck]
rate = "10Mbit"
queue = { kind = "droptail", packets = 100 }
[[flow]]
cc = "copa"
rtt = "10ms"
app = { kind = "bulk" }
"#;
    assert!(Scenario::from_toml_str(base).is_ok());
    for (body, field, says) in [
        (
            "[flow.tcp]\ndelay_correlation = true\n",
            "tcp.delay_correlation",
            "copa",
        ),
        (
            "[flow.tcp.congestion]\nnew_cwv = true\n",
            "tcp.new_cwv",
            "copa",
        ),
        ("[flow.tcp.copa]\ndelta = 0\n", "tcp.copa.delta", "outside"),
        (
            "[flow.tcp.copa]\ndelta = 1.5\n",
            "tcp.copa.delta",
            "outside",
        ),
        ("[flow.tcp.copa]\nspeed = 2\n", "speed", "unknown"),
    ] {
        let text = format!("{base}{body}");
        let e = match Scenario::from_toml_str_named(&text, "scenarios/x.toml") {
            Ok(_) => panic!("accepted {body}"),
            Err(e) => e,
        };
        eprintln!("{body}: {e}");
        assert!(e.to_string().contains(field), "{e}");
        assert!(e.to_string().contains(says), "{e}");
    }
    // [flow.tcp.copa] with another controller.
    let text = base.replace("\"copa\"", "\"cubic\"") + "[flow.tcp.copa]\ndelta = 0.5\n";
    let e = Scenario::from_toml_str(&text).unwrap_err();
    assert!(e.to_string().contains("tcp.copa"), "{e}");
    assert!(e.to_string().contains("needs cc = \"copa\""), "{e}");
}

/// The table in docs/mechanisms/copa.md: Copa, CUBIC, BBR and LEDBAT alone on a deep
/// drop-tail path (10 Mbit/s, 40 ms, 1000 packets) and a shallow lossy one (20
/// packets, 0.5 % random loss), three seeds each (the seed moves the start and draws
/// the losses). `cargo test --release -p brisk-sim --test copa copa_table -- --ignored
/// --nocapture`
#[test]
#[ignore = "the doc's comparison table (about a minute)"]
fn copa_table() {
    println!("| path | cc | goodput Mbit/s | mean queue ms | p95 RTT ms | retransmitted |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (path, packets, loss) in [
        ("deep drop-tail", 1000u32, 0.0),
        ("shallow lossy", 20, 0.005),
    ] {
        for cc in ["copa", "cubic", "bbr", "ledbat"] {
            let (mut g, mut q, mut p95, mut rx) = (Vec::new(), Vec::new(), Vec::new(), 0u64);
            for seed in [1u64, 2, 3] {
                let r = run(&scenario(&[(cc, seed * 37)], 40, 30, packets, loss), seed).unwrap();
                let f = &r.flows[0];
                g.push(f.goodput_bps / 1e6);
                q.push(queue_ms(&r));
                p95.push(f.rtt.map_or(0.0, |s| s.p95 as f64 / 1e6));
                rx += f.retransmitted_packets;
            }
            let band = |v: &[f64]| {
                let m = v.iter().sum::<f64>() / v.len() as f64;
                let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
                let hi = v.iter().cloned().fold(0.0, f64::max);
                format!("{m:.2} ({lo:.2}–{hi:.2})")
            };
            println!(
                "| {path} | {cc} | {} | {} | {} | {} |",
                band(&g),
                band(&q),
                band(&p95),
                rx / 3
            );
        }
    }
}
