//! brisk's ports of Linux's Vegas, Westwood+, Hybla, Illinois, H-TCP and BIC
//! modules (`cc = "vegas"` ... `"bic"`, `crates/brisk-tcp/src/cc/<name>.rs`;
//! `docs/mechanisms/<name>.md`) in the simulator: each, as a bulk sender on a
//! dumbbell, fills the link over several RTTs and seeds, reacts to loss, and shows
//! the property it is known for, set beside Reno or CUBIC on the same path.

use brisk_sim::{run, FlowResult, Scenario};

const ALL: [&str; 6] = ["vegas", "westwood", "hybla", "illinois", "htcp", "bic"];

struct Path {
    rate_mbit: u32,
    rtt_ms: u64,
    queue: u32,
    loss: f64,
    secs: u64,
}

fn scenario(cc: &str, p: &Path) -> Scenario {
    let loss = if p.loss > 0.0 {
        format!("loss = {{ kind = \"bernoulli\", p = {} }}", p.loss)
    } else {
        String::new()
    };
    let text = format!(
        r#"
name = "linux-cc-{cc}"
duration = "{secs}s"
[bottleneck]
rate = "{rate}Mbit"
{loss}
queue = {{ kind = "droptail", packets = {queue} }}
[[flow]]
cc = "{cc}"
rtt = "{rtt}ms"
app = {{ kind = "bulk" }}
"#,
        secs = p.secs,
        rate = p.rate_mbit,
        queue = p.queue,
        rtt = p.rtt_ms,
    );
    Scenario::from_toml_str(&text).unwrap()
}

fn flow(cc: &str, p: &Path, seed: u64) -> FlowResult {
    let r = run(&scenario(cc, p), seed).unwrap();
    let f = r.flows.into_iter().next().unwrap();
    assert_eq!(f.cc, cc);
    assert!(f.stream_ok, "{cc}: stream corrupted");
    f
}

fn mbit(f: &FlowResult) -> f64 {
    f.goodput_bps / 1e6
}

fn p50_ms(f: &FlowResult) -> f64 {
    f.rtt_quantiles[f.rtt_quantiles.len() / 2] as f64 / 1e6
}

/// Every controller fills a 10 Mbit/s link with a buffer of one BDP, and the
/// buffer's overflow costs retransmissions (the loss reaction runs), on three RTTs
/// with a seed each. 30 s: Westwood+'s first estimate is filtered from slow
/// start's low early rate, so after the start-up losses it regrows from well
/// below the BDP (at 100 ms, from 22 segments to the BDP's 83 over 6 s), as Linux's
/// would.
#[test]
fn each_fills_the_link_and_recovers_from_buffer_overflow() {
    for (rtt, seed) in [(20u64, 1u64), (50, 2), (100, 3)] {
        // One BDP of buffer: 10 Mbit/s · rtt / 1500 B.
        let bdp = (10_000_000 / 8 * rtt / 1000 / 1500) as u32;
        let p = Path {
            rate_mbit: 10,
            rtt_ms: rtt,
            queue: bdp.max(10),
            loss: 0.0,
            secs: 30,
        };
        for cc in ALL {
            let f = flow(cc, &p, seed);
            eprintln!(
                "{cc} rtt {rtt} ms: {:.2} Mbit/s, p50 RTT {:.1} ms, {} retransmitted",
                mbit(&f),
                p50_ms(&f),
                f.retransmitted_packets
            );
            // Payload of a 10 Mbit/s link is ~9.6 Mbit/s; slow start and the
            // sawtooth cost some.
            assert!(mbit(&f) > 8.5, "{cc} rtt {rtt}: {:.2} Mbit/s", mbit(&f));
            if cc != "vegas" {
                // Loss-based growth overflows the buffer, so loss recovery ran.
                assert!(f.retransmitted_packets > 0, "{cc} rtt {rtt}: no loss");
            }
        }
    }
}

/// Median of the per-interval mean RTTs from `from_s` on, ms.
fn steady_rtt_ms(f: &FlowResult, from_s: f64) -> f64 {
    let mut v: Vec<u64> = f
        .rtt_series
        .iter()
        .filter(|(t, r)| *t as f64 / 1e9 >= from_s && r.count > 0)
        .map(|(_, r)| r.mean_ns)
        .collect();
    assert!(!v.is_empty(), "no RTT rows after {from_s} s");
    v.sort_unstable();
    v[v.len() / 2] as f64 / 1e6
}

/// Vegas keeps alpha..beta (2..4) segments queued: with a 1000-packet buffer its
/// RTT settles within a few ms of the base RTT where Reno fills the buffer. Slow
/// start overshoots (the round's minimum RTT lags a doubling window: cwnd ~150 at
/// 60 ms) and Vegas then takes one segment off per RTT, as Linux's does, so the
/// steady state is judged over the last 7 s of 25.
#[test]
fn vegas_keeps_a_small_queue_where_reno_fills_the_buffer() {
    for (rtt, seed) in [(20u64, 4u64), (60, 5)] {
        let p = Path {
            rate_mbit: 10,
            rtt_ms: rtt,
            queue: 1000,
            loss: 0.0,
            secs: 25,
        };
        let v = flow("vegas", &p, seed);
        let r = flow("reno", &p, seed);
        let (vs, rs) = (steady_rtt_ms(&v, 18.0), steady_rtt_ms(&r, 18.0));
        eprintln!(
            "rtt {rtt}: vegas {:.2} Mbit/s steady RTT {vs:.1} ms, {} retx; reno {:.2} steady {rs:.1}",
            mbit(&v),
            v.retransmitted_packets,
            mbit(&r),
        );
        assert!(mbit(&v) > 9.0, "vegas rtt {rtt}: {:.2}", mbit(&v));
        // At most beta = 4 segments of 1.2 ms each queued, plus ACK delays.
        assert!(
            vs < rtt as f64 + 8.0,
            "vegas rtt {rtt}: steady RTT {vs:.1} ms"
        );
        assert!(vs > rtt as f64, "vegas rtt {rtt}: steady RTT {vs:.1} ms");
        assert_eq!(v.retransmitted_packets, 0, "vegas never overflowed");
        assert!(rs > vs + 100.0, "reno {rs:.1} ms vs vegas {vs:.1} ms");
    }
}

/// Westwood+ sets the window after a loss to the measured BWE·RTTmin instead of
/// halving it, so random (non-congestion) loss costs it far less than Reno.
#[test]
fn westwood_keeps_its_rate_through_random_loss_better_than_reno() {
    for seed in [6u64, 7, 8] {
        let p = Path {
            rate_mbit: 10,
            rtt_ms: 60,
            queue: 100,
            loss: 0.005,
            secs: 30,
        };
        let w = flow("westwood", &p, seed);
        let r = flow("reno", &p, seed);
        eprintln!(
            "seed {seed}: westwood {:.2} Mbit/s, reno {:.2}",
            mbit(&w),
            mbit(&r)
        );
        assert!(
            mbit(&w) > 1.3 * mbit(&r),
            "seed {seed}: westwood {:.2} vs reno {:.2}",
            mbit(&w),
            mbit(&r)
        );
    }
}

/// Hybla's growth per second does not depend on the RTT: on a 600 ms (GEO-like)
/// path it delivers in 20 s nearly what it does on a 60 ms path, where Reno on
/// the long path falls far behind.
#[test]
fn hybla_growth_is_independent_of_rtt_where_renos_is_not() {
    let at = |cc: &str, rtt: u64, seed: u64| {
        let p = Path {
            rate_mbit: 10,
            rtt_ms: rtt,
            queue: 1000,
            loss: 0.002,
            secs: 20,
        };
        mbit(&flow(cc, &p, seed))
    };
    for seed in [9u64, 10] {
        let (h_short, h_long) = (at("hybla", 60, seed), at("hybla", 600, seed));
        let (r_short, r_long) = (at("reno", 60, seed), at("reno", 600, seed));
        eprintln!(
            "seed {seed}: hybla {h_short:.2} / {h_long:.2} Mbit/s at 60 / 600 ms; reno {r_short:.2} / {r_long:.2}"
        );
        assert!(
            h_long > 0.7 * h_short,
            "hybla {h_long:.2} at 600 ms vs {h_short:.2} at 60 ms"
        );
        assert!(
            h_long > 2.0 * r_long,
            "hybla {h_long:.2} vs reno {r_long:.2}"
        );
    }
}

/// On a long fat path (50 Mbit/s, 150 and 200 ms: BDP 625 and 833 packets) with a
/// shallow buffer (60 packets), the high-speed controllers (Illinois, H-TCP, BIC)
/// regain the window after each loss much faster than Reno's one segment per RTT.
/// (At 80 ms H-TCP was only 1.15× Reno: 41.9 vs 36.5 Mbit/s.)
#[test]
fn high_speed_controllers_outrun_reno_on_a_long_fat_path() {
    for (rtt, seed) in [(150u64, 11u64), (200, 12)] {
        let p = Path {
            rate_mbit: 50,
            rtt_ms: rtt,
            queue: 60,
            loss: 0.0,
            secs: 30,
        };
        let r = mbit(&flow("reno", &p, seed));
        for cc in ["illinois", "htcp", "bic"] {
            let g = mbit(&flow(cc, &p, seed));
            eprintln!("rtt {rtt}: {cc} {g:.2} Mbit/s, reno {r:.2}");
            assert!(g > 1.5 * r, "rtt {rtt}: {cc} {g:.2} vs reno {r:.2}");
        }
    }
}

/// The same scenario and seed give the same bytes (sans-IO, no clock or RNG in the
/// controllers).
#[test]
fn each_is_deterministic() {
    let p = Path {
        rate_mbit: 10,
        rtt_ms: 40,
        queue: 30,
        loss: 0.01,
        secs: 5,
    };
    for cc in ALL {
        let a = flow(cc, &p, 13);
        let b = flow(cc, &p, 13);
        assert_eq!(a.bytes_delivered, b.bytes_delivered, "{cc}");
        assert_eq!(a.retransmitted_packets, b.retransmitted_packets, "{cc}");
        assert_eq!(a.rtt_quantiles, b.rtt_quantiles, "{cc}");
    }
}
