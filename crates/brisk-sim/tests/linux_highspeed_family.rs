//! Scalable, HighSpeed, Veno, YeAH and TCP-LP (Linux 6.18's `tcp_scalable.c`,
//! `tcp_highspeed.c`, `tcp_veno.c`, `tcp_yeah.c`, `tcp_lp.c`) in the simulator: each
//! fills a drop-tail bottleneck alone, survives random loss, and shows the property it
//! was designed for, against Reno or CUBIC on the same path and seed:
//! - Scalable and HighSpeed hold a larger window than Reno on a long fat path with
//!   random loss (their response functions grow faster than 1/√p);
//! - Veno backs off less than Reno when the loss is random (no backlog);
//! - YeAH fills the link with a short queue where CUBIC fills a deep buffer;
//! - TCP-LP yields to a CUBIC flow (fails, as Linux's arithmetic makes it: ignored);
//!   the corrected variant (`[flow.tcp.lp] variant = "corrected"`) fills the link
//!   alone and yields to CUBIC and to Reno.
//!
//! Several seeds and RTTs each. Docs: docs/mechanisms/{scalable,highspeed,veno,yeah,lp}.md.

use brisk_sim::{run, FlowResult, Scenario};

/// One or two bulk flows on a `rate_mbit` drop-tail bottleneck of `packets`.
fn scenario(
    ccs: &[(&str, &str)],
    rate_mbit: u64,
    rtt_ms: u64,
    packets: u64,
    loss: f64,
    secs: u64,
) -> Scenario {
    let loss = if loss > 0.0 {
        format!("loss = {{ kind = \"bernoulli\", p = {loss} }}")
    } else {
        String::new()
    };
    let mut text = format!(
        r#"
name = "linux-cc"
duration = "{secs}s"
[bottleneck]
rate = "{rate_mbit}Mbit"
{loss}
queue = {{ kind = "droptail", packets = {packets} }}
"#
    );
    for (cc, start) in ccs {
        // "lp-corrected" is `cc = "lp"` with the corrected variant (its label).
        let (name, table) = match *cc {
            "lp-corrected" => ("lp", "[flow.tcp.lp]\nvariant = \"corrected\"\n"),
            other => (other, ""),
        };
        text.push_str(&format!(
            "[[flow]]\ncc = \"{name}\"\nrtt = \"{rtt_ms}ms\"\nstart = \"{start}\"\napp = {{ kind = \"bulk\" }}\n{table}"
        ));
    }
    Scenario::from_toml_str(&text).unwrap()
}

fn alone(
    cc: &str,
    rate: u64,
    rtt: u64,
    packets: u64,
    loss: f64,
    secs: u64,
    seed: u64,
) -> FlowResult {
    let r = run(
        &scenario(&[(cc, "0s")], rate, rtt, packets, loss, secs),
        seed,
    )
    .unwrap();
    let f = r.flows[0].clone();
    assert_eq!(f.cc, cc);
    assert!(f.stream_ok && f.error.is_none(), "{cc}: {:?}", f.error);
    f
}

fn mbit(f: &FlowResult) -> f64 {
    f.goodput_bps / 1e6
}

fn p50_ms(f: &FlowResult) -> f64 {
    f.rtt_quantiles[f.rtt_quantiles.len() / 2] as f64 / 1e6
}

/// Alone on a 20 Mbit/s drop-tail path of one BDP (at least 20 packets), lossless:
/// at least 90 % of the rate, for three RTTs.
fn fills_the_link(cc: &str) {
    for (rtt, seed) in [(20u64, 1), (50, 2), (100, 3)] {
        let bdp = (20_000_000 / 8 * rtt / 1000 / 1500).max(20);
        let f = alone(cc, 20, rtt, bdp, 0.0, 20, seed);
        eprintln!(
            "{cc} rtt {rtt} ms: {:.2} Mbit/s, p50 RTT {:.1} ms, {} retransmits",
            mbit(&f),
            p50_ms(&f),
            f.retransmitted_packets
        );
        assert!(mbit(&f) > 18.0, "{cc} rtt {rtt} ms: {:.2} Mbit/s", mbit(&f));
        // The buffer overflows: the controller saw losses and recovered from them.
        assert!(f.retransmitted_packets > 0, "{cc} rtt {rtt} ms saw no loss");
    }
}

/// On a long fat path with random loss, `cc` keeps more than `factor` × Reno's goodput,
/// over three seeds and two RTTs.
fn beats_reno_on_a_lossy_long_fat_path(cc: &str, loss: f64, factor: f64) {
    for (rtt, seed) in [(60u64, 1), (100, 2), (100, 3)] {
        let bdp = 100_000_000 / 8 * rtt / 1000 / 1500;
        let c = alone(cc, 100, rtt, bdp, loss, 30, seed);
        let r = alone("reno", 100, rtt, bdp, loss, 30, seed);
        eprintln!(
            "{cc} rtt {rtt} ms loss {loss} seed {seed}: {:.1} Mbit/s ({} rtx), reno {:.1} Mbit/s ({} rtx)",
            mbit(&c),
            c.retransmitted_packets,
            mbit(&r),
            r.retransmitted_packets
        );
        assert!(c.retransmitted_packets > 0);
        assert!(
            mbit(&c) > factor * mbit(&r),
            "{cc} rtt {rtt} ms seed {seed}: {:.1} vs reno {:.1} Mbit/s",
            mbit(&c),
            mbit(&r)
        );
    }
}

#[test]
fn scalable_fills_the_link_and_outgrows_reno_at_large_windows() {
    fills_the_link("scalable");
    beats_reno_on_a_lossy_long_fat_path("scalable", 1e-4, 2.0);
}

#[test]
fn highspeed_fills_the_link_and_outgrows_reno_at_large_windows() {
    fills_the_link("highspeed");
    // At p = 3e-5 Reno's window (~190 segments behind delayed ACKs) is far above
    // Low_Window (38) yet below the BDP (500-833), so the two response functions differ.
    // Linux counts HighSpeed's increase per ACK, not per segment: behind a delayed-ACK
    // receiver a(w) is halved, hence a modest margin.
    beats_reno_on_a_lossy_long_fat_path("highspeed", 3e-5, 1.15);
}

#[test]
fn veno_fills_the_link_and_backs_off_less_on_random_loss() {
    fills_the_link("veno");
    // 20 Mbit/s, 1 % random loss: the window stays far below the BDP, so no queue
    // builds, Veno reads each loss as random (cwnd·4/5) where Reno halves.
    for (rtt, seed) in [(40u64, 1), (80, 2), (80, 3)] {
        let v = alone("veno", 20, rtt, 200, 0.01, 30, seed);
        let r = alone("reno", 20, rtt, 200, 0.01, 30, seed);
        eprintln!(
            "veno rtt {rtt} seed {seed}: {:.2} Mbit/s, reno {:.2}",
            mbit(&v),
            mbit(&r)
        );
        assert!(
            mbit(&v) > 1.2 * mbit(&r),
            "rtt {rtt} seed {seed}: veno {:.2} vs reno {:.2} Mbit/s",
            mbit(&v),
            mbit(&r)
        );
    }
}

#[test]
fn yeah_fills_the_link_with_a_short_queue_where_cubic_fills_the_buffer() {
    fills_the_link("yeah");
    // A deep buffer (1000 packets, 0.6 s at 20 Mbit/s): YeAH's decongestion keeps its
    // queue near ALPHA (80 packets, 48 ms) where CUBIC fills the buffer.
    for (rtt, seed) in [(20u64, 1), (40, 2), (80, 3)] {
        let y = alone("yeah", 20, rtt, 1000, 0.0, 30, seed);
        let c = alone("cubic", 20, rtt, 1000, 0.0, 30, seed);
        eprintln!(
            "yeah rtt {rtt}: {:.2} Mbit/s p50 RTT {:.1} ms; cubic {:.2} Mbit/s p50 RTT {:.1} ms",
            mbit(&y),
            p50_ms(&y),
            mbit(&c),
            p50_ms(&c)
        );
        assert!(mbit(&y) > 18.0, "rtt {rtt}: yeah {:.2} Mbit/s", mbit(&y));
        assert!(
            2.0 * p50_ms(&y) < p50_ms(&c),
            "rtt {rtt}: yeah p50 {:.1} ms vs cubic {:.1} ms",
            p50_ms(&y),
            p50_ms(&c)
        );
    }
}

#[test]
fn lp_fills_the_link() {
    fills_the_link("lp");
}

/// TCP-LP's purpose: a CUBIC flow joining an LP flow takes most of the link. **Fails**
/// (lp's share 0.44-0.54 over these four runs): Linux's 32-bit arithmetic, kept here,
/// keeps the smoothed one-way delay `<< 3` in a `u32`, so with the hosts' random
/// timestamp offsets the threshold test almost always holds and TCP-LP runs as Reno
/// (docs/mechanisms/lp.md, "Departures"). Kept as the failing check of the claim.
#[test]
#[ignore = "fails as Linux's tcp_lp.c does: docs/mechanisms/lp.md"]
fn lp_yields_to_a_cubic_flow() {
    let shares = lp_shares_beside("lp", "cubic", &[(20, 1), (40, 2), (40, 3), (80, 4)]);
    let mean = shares.iter().sum::<f64>() / shares.len() as f64;
    assert!(
        mean < 0.3,
        "lp's mean share beside cubic {mean:.2}: {shares:?}"
    );
}

/// LP's share of the two goodputs when `other` joins an `lp` flow 5 s into a 40 s run
/// (20 Mbit/s, a two-BDP drop-tail buffer), per (RTT ms, seed).
fn lp_shares_beside(lp: &str, other: &str, runs: &[(u64, u64)]) -> Vec<f64> {
    runs.iter()
        .map(|&(rtt, seed)| lp_share_at(lp, other, 20, rtt, seed))
        .collect()
}

/// LP's share of the two goodputs when `other` joins an `lp` flow 5 s into a 40 s run
/// on a `rate` Mbit/s bottleneck with a two-BDP drop-tail buffer.
fn lp_share_at(lp: &str, other: &str, rate: u64, rtt: u64, seed: u64) -> f64 {
    let bdp = (rate * 1_000_000 / 8 * rtt / 1000 / 1500).max(20);
    let r = run(
        &scenario(&[(lp, "0s"), (other, "5s")], rate, rtt, 2 * bdp, 0.0, 40),
        seed,
    )
    .unwrap();
    let (l, o) = (&r.flows[0], &r.flows[1]);
    assert_eq!(l.cc, lp);
    assert!(l.stream_ok && o.stream_ok, "{:?} {:?}", l.error, o.error);
    let share = l.goodput_bps / (l.goodput_bps + o.goodput_bps);
    eprintln!(
        "{lp} {rate} Mbit/s rtt {rtt} seed {seed}: {lp} {:.2} Mbit/s, {other} {:.2} Mbit/s, {lp} share {share:.2}",
        mbit(l),
        mbit(o)
    );
    share
}

/// Alone, the corrected variant fills the link: its early indications wait until a
/// loss has shown the buffer's depth, so its own slow-start bursts do not stop it
/// (docs/mechanisms/lp.md, "The corrected variant").
#[test]
fn lp_corrected_fills_the_link() {
    fills_the_link("lp-corrected");
}

/// The corrected variant on paths none of its choices were made on: 10, 50 and
/// 100 Mbit/s, other RTTs and seeds. Alone on a one-BDP buffer it fills the link;
/// beside a CUBIC flow joining it after 5 s (two-BDP buffer) it yields; and a CUBIC
/// flow it joins keeps most of the link.
#[test]
fn lp_corrected_fills_and_yields_on_other_paths() {
    for (rate, rtt, seed) in [(10u64, 30u64, 6u64), (50, 60, 7), (100, 25, 8)] {
        let bdp = (rate * 1_000_000 / 8 * rtt / 1000 / 1500).max(20);
        let f = alone("lp-corrected", rate, rtt, bdp, 0.0, 20, seed);
        eprintln!(
            "lp-corrected alone {rate} Mbit/s rtt {rtt} seed {seed}: {:.2} Mbit/s, p50 RTT {:.1} ms",
            mbit(&f),
            p50_ms(&f)
        );
        assert!(
            mbit(&f) > 0.9 * rate as f64,
            "alone {rate} Mbit/s rtt {rtt}: {:.2} Mbit/s",
            mbit(&f)
        );
        let share = lp_share_at("lp-corrected", "cubic", rate, rtt, seed);
        assert!(share < 0.3, "{rate} Mbit/s rtt {rtt}: share {share:.2}");
        // CUBIC first, LP joining at 5 s: LP's share of the two.
        let r = run(
            &scenario(
                &[("cubic", "0s"), ("lp-corrected", "5s")],
                rate,
                rtt,
                2 * bdp,
                0.0,
                40,
            ),
            seed,
        )
        .unwrap();
        let (c, l) = (&r.flows[0], &r.flows[1]);
        let late = l.goodput_bps / (l.goodput_bps + c.goodput_bps);
        eprintln!(
            "lp-corrected joining cubic {rate} Mbit/s rtt {rtt} seed {seed}: lp {:.2}, cubic {:.2} Mbit/s, share {late:.2}",
            mbit(l),
            mbit(c)
        );
        assert!(
            late < 0.3,
            "{rate} Mbit/s rtt {rtt}: joining share {late:.2}"
        );
    }
}

/// The corrected variant leaves the link to a best-effort flow joining it: the same
/// bound as the faithful port's failing check, per run, beside CUBIC and beside Reno,
/// on RTTs and seeds it was not tuned on. With `lp_corrected_fills_the_link` it shows
/// the variant both uses an idle link and leaves it to a best-effort flow.
#[test]
fn lp_corrected_yields_to_cubic_and_to_reno() {
    for other in ["cubic", "reno"] {
        let shares = lp_shares_beside(
            "lp-corrected",
            other,
            &[(20, 1), (40, 2), (40, 3), (80, 4), (120, 5)],
        );
        for s in &shares {
            assert!(*s < 0.3, "lp-corrected's share beside {other}: {shares:?}");
        }
    }
}
