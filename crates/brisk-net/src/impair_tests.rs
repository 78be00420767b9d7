use super::*;
use crate::testutil::{run, train};

fn imp(params: ImpairParams, seed: u64) -> Impairment {
    Impairment::new(params, seed).unwrap()
}

fn jitter(reorder: bool) -> ImpairParams {
    ImpairParams {
        delay: Duration::from_millis(10),
        jitter: Duration::from_millis(5),
        reorder,
        ..ImpairParams::default()
    }
}

/// Packets with distinct contents, one every 100 µs.
fn distinct_train(n: u64) -> Vec<(Instant, Packet)> {
    let mut t = train(n, 60, 100_000);
    for (_, p) in &mut t {
        for (i, b) in p.data.iter_mut().enumerate() {
            *b = (p.id as u8).wrapping_mul(31).wrapping_add(i as u8);
        }
    }
    t
}

#[test]
fn fixed_delay_without_jitter_is_exact() {
    let params = ImpairParams {
        delay: Duration::from_micros(250),
        ..ImpairParams::default()
    };
    let out = run(&mut imp(params, 1), train(5, 100, 1000));
    let ns: Vec<u64> = out.iter().map(|(t, _)| t.as_nanos()).collect();
    assert_eq!(ns, vec![250_000, 251_000, 252_000, 253_000, 254_000]);
}

#[test]
fn jitter_without_reorder_preserves_order() {
    let arrivals = train(5000, 100, 100_000);
    let sent: Vec<Instant> = arrivals.iter().map(|a| a.0).collect();
    let out = run(&mut imp(jitter(false), 3), arrivals);
    assert_eq!(out.len(), 5000);
    let ids: Vec<u64> = out.iter().map(|(_, p)| p.id).collect();
    assert_eq!(ids, (0..5000).collect::<Vec<_>>());
    let delays: Vec<u64> = out
        .iter()
        .map(|(t, p)| (*t - sent[p.id as usize]).as_micros() as u64)
        .collect();
    // FIFO clamping makes a delay the running maximum of recent draws, so it stays
    // within [delay, delay + jitter] but skews high.
    assert!(delays.iter().all(|d| (10_000..=15_000).contains(d)));
    let (lo, hi) = (delays.iter().min().unwrap(), delays.iter().max().unwrap());
    assert!(hi - lo > 2_000, "jitter varies: {lo}..{hi} us");
}

#[test]
fn jitter_with_reorder_lets_packets_overtake_within_bounds() {
    let arrivals = train(5000, 100, 100_000);
    let sent: Vec<Instant> = arrivals.iter().map(|a| a.0).collect();
    let out = run(&mut imp(jitter(true), 3), arrivals);
    assert_eq!(out.len(), 5000);
    let overtaken = out.windows(2).filter(|w| w[0].1.id > w[1].1.id).count();
    assert!(overtaken > 1000, "only {overtaken} reorderings");
    for (t, p) in &out {
        let d = dur_nanos(*t - sent[p.id as usize]);
        assert!((10_000_000..=15_000_000).contains(&d), "delay {d}");
    }
    let mean = out
        .iter()
        .map(|(t, p)| dur_nanos(*t - sent[p.id as usize]) as f64)
        .sum::<f64>()
        / 5000.0;
    assert!((mean - 12.5e6).abs() < 0.1e6, "uniform jitter mean {mean}");
}

#[test]
fn duplication_adds_counted_copies() {
    let params = ImpairParams {
        duplicate_p: 0.1,
        ..ImpairParams::default()
    };
    let mut e = imp(params, 5);
    let out = run(&mut e, train(20_000, 100, 1000));
    let c = e.counters();
    assert!((1700..2300).contains(&c.duplicated), "{}", c.duplicated);
    assert_eq!(out.len() as u64, 20_000 + c.duplicated);
    assert_eq!(c.output.packets, out.len() as u64);
    // Each duplicate follows its original with the same id.
    let repeats = out.windows(2).filter(|w| w[0].1.id == w[1].1.id).count();
    assert_eq!(repeats as u64, c.duplicated);
}

#[test]
fn corruption_flips_exactly_one_bit_and_breaks_the_checksum() {
    let params = ImpairParams {
        corrupt_p: 0.05,
        ..ImpairParams::default()
    };
    let arrivals = distinct_train(10_000);
    let originals: Vec<Vec<u8>> = arrivals.iter().map(|(_, p)| p.data.clone()).collect();
    let mut e = imp(params, 11);
    let out = run(&mut e, arrivals);
    let mut corrupted = 0;
    for (_, p) in &out {
        let orig = &originals[p.id as usize];
        let flipped: u32 = orig
            .iter()
            .zip(&p.data)
            .map(|(a, b)| (a ^ b).count_ones())
            .sum();
        assert!(flipped <= 1);
        if flipped == 1 {
            corrupted += 1;
            assert_ne!(ones_complement_sum(orig), ones_complement_sum(&p.data));
        }
    }
    assert_eq!(corrupted, e.counters().corrupted);
    assert!((400..600).contains(&corrupted), "{corrupted}");
}

/// A packet that arrives with its transport checksum vouched for (`l4_csum_valid`)
/// keeps the flag unless corrupted; a corrupted one loses it, so its receiver verifies
/// (and drops) it instead of trusting it. Duplicates keep it (same bytes).
#[test]
fn corruption_clears_the_trusted_checksum_flag() {
    let params = ImpairParams {
        corrupt_p: 0.05,
        duplicate_p: 0.05,
        ..ImpairParams::default()
    };
    let mut arrivals = distinct_train(10_000);
    for (_, p) in &mut arrivals {
        p.l4_csum_valid = true;
    }
    let originals: Vec<Vec<u8>> = arrivals.iter().map(|(_, p)| p.data.clone()).collect();
    let mut e = imp(params, 12);
    let out = run(&mut e, arrivals);
    let mut cleared = 0;
    for (_, p) in &out {
        let changed = originals[p.id as usize] != p.data;
        assert_eq!(p.l4_csum_valid, !changed, "packet {}", p.id);
        cleared += u64::from(changed);
    }
    assert_eq!(cleared, e.counters().corrupted);
    assert!(cleared > 300, "{cleared}");
}

/// RFC 1071 sum, folded, for checking that a flip is detectable.
fn ones_complement_sum(b: &[u8]) -> u16 {
    let mut s: u32 = b
        .chunks(2)
        .map(|c| u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0)))
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

#[test]
fn same_seed_same_output_different_seed_different_output() {
    let params = ImpairParams {
        jitter: Duration::from_millis(2),
        reorder: true,
        duplicate_p: 0.05,
        corrupt_p: 0.05,
        ..ImpairParams::default()
    };
    let go = |seed| {
        run(&mut imp(params.clone(), seed), distinct_train(2000))
            .into_iter()
            .map(|(t, p)| (t, p.id, p.data))
            .collect::<Vec<_>>()
    };
    assert_eq!(go(7), go(7));
    assert_ne!(go(7), go(8));
}

#[test]
fn enabling_duplication_keeps_the_jitter_draws() {
    let mut a = jitter(true);
    a.delay = Duration::ZERO;
    let mut b = a.clone();
    b.corrupt_p = 0.5;
    let delays = |p: ImpairParams| {
        run(&mut imp(p, 4), train(500, 100, 1_000_000))
            .into_iter()
            .map(|(t, _)| t)
            .collect::<Vec<_>>()
    };
    assert_eq!(delays(a), delays(b), "corruption draws from its own stream");
}

#[test]
fn limit_bounds_held_packets() {
    let params = ImpairParams {
        delay: Duration::from_secs(1),
        limit_packets: 10,
        ..ImpairParams::default()
    };
    let mut e = imp(params, 0);
    let out = run(&mut e, train(15, 100, 1));
    assert_eq!(out.len(), 10);
    assert_eq!(e.counters().dropped(DropReason::Overflow).packets, 5);
}

#[test]
fn bad_params_name_their_field() {
    let bad = ImpairParams {
        duplicate_p: 2.0,
        ..ImpairParams::default()
    };
    let e = Impairment::new(bad, 0).unwrap_err();
    assert!(e.to_string().contains("duplicate_p"), "{e}");
    let bad = ImpairParams {
        limit_packets: 0,
        ..ImpairParams::default()
    };
    assert!(Impairment::new(bad, 0).is_err());
}

#[test]
fn random_params_conserve_packets() {
    use rand::{Rng, SeedableRng};
    let mut rng = ChaCha8Rng::seed_from_u64(0x1a3);
    for round in 0..100 {
        let params = ImpairParams {
            delay: Duration::from_nanos(rng.gen_range(0..1_000_000)),
            jitter: Duration::from_nanos([0, 1, u64::MAX / 4, 3_000_000][rng.gen_range(0..4)]),
            reorder: rng.gen(),
            duplicate_p: rng.gen_range(0.0..=1.0),
            corrupt_p: rng.gen_range(0.0..=1.0),
            limit_packets: rng.gen_range(1..200),
        };
        let mut e = imp(params, round);
        let arrivals: Vec<_> = (0..rng.gen_range(0..300))
            .map(|i| {
                (
                    Instant::from_nanos(i * 10_000),
                    crate::testutil::pkt(i, rng.gen_range(0..100)),
                )
            })
            .collect();
        let n = arrivals.len() as u64;
        let cut = rng.gen_range(0..=arrivals.len());
        let mut arrivals = arrivals;
        let rest = arrivals.split_off(cut);
        let out = run(&mut e, arrivals);
        // The driver ran until idle; the rest arrive no earlier than it got to.
        let base = out.last().map_or(Instant::ZERO, |o| o.0);
        for (t, p) in rest {
            e.handle_packet(t.max(base), p);
        }
        let c = e.counters();
        assert_eq!(c.input.packets, n);
        assert_eq!(
            c.input.packets + c.duplicated,
            out.len() as u64 + c.dropped_total().packets + e.len_packets() as u64,
            "round {round}"
        );
    }
}
