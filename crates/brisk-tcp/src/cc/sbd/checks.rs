//! SBD-1's checks: each statistic of RFC 8382 §3.1 and the grouping of §3.2.1 on
//! synthetic one-way-delay series, with the draft's parameters (W-12). Each function
//! panics on a failure; the unit tests (`tests.rs`) and `brisk repro sbd` (the SBD-1
//! row, through [`sbd1`]) run the same functions.

use super::{Estimates, Sbd, SbdConfig, SbdFlow, Variability};
use brisk_time::{Duration, Instant};

/// One interval of `n` samples: all at `level` µs except `k` samples at `level + off`
/// (negative `off`: dips under a standing queue; positive: spikes over an idle one).
pub fn interval(sbd: &mut Sbd, f: SbdFlow, level: i64, n: usize, k: usize, off: i64) {
    for i in 0..n {
        let x = if i % (n / k.max(1)) == 0 && k > 0 {
            level + off
        } else {
            level
        };
        sbd.on_owd(f, x).unwrap();
    }
    sbd.on_packets(f, n as u32, 0).unwrap();
}

pub fn sbd1_parameters_and_weights() {
    let c = SbdConfig::default();
    assert_eq!(c.t, Duration::from_millis(350));
    assert_eq!((c.n, c.m, c.f), (50, 50, 25));
    assert_eq!((c.c_s, c.c_h), (-0.01, 0.3));
    assert_eq!((c.p_l, c.p_f, c.p_s, c.p_d), (0.1, 0.1, 0.1, 0.1));
    assert_eq!((c.p_pdv, c.p_mad, c.p_v()), (0.2, 0.1, 0.2));
    let mad = SbdConfig {
        variability: Variability::Mad,
        ..SbdConfig::default()
    };
    assert_eq!((mad.p_v(), mad.p_var()), (0.7, 0.1));
    // N·T = 17.5 s until full accuracy.
    assert_eq!(c.t * c.n as u32, Duration::from_millis(17_500));

    let w = SbdConfig::improved();
    let weights: Vec<f64> = (1..=50).map(|k| w.weight(k)).collect();
    assert!(
        weights[..25].iter().all(|&x| x == 26.0),
        "26 for the 25 most recent"
    );
    let tail: Vec<f64> = (1..=25).rev().map(f64::from).collect();
    assert_eq!(&weights[25..], &tail[..], "then 25, 24, …, 1");
    assert_eq!(
        weights.iter().sum::<f64>(),
        975.0,
        "var_est denominator 25·26 + 325"
    );
    assert_eq!(w.weight(51), 0.0);
    assert_eq!(c.weight(50), 1.0, "unweighted: plain mean over M");
}

/// mean_delay, PDV, MAD and pkt_loss on a hand-computed series.
pub fn sbd1_mean_pdv_mad_and_loss_are_exact() {
    let mut sbd = Sbd::new(SbdConfig::default()).unwrap();
    let f = sbd.register().unwrap();
    // Interval 1: 10, 20, 30 → E_T 20, PDV 10.
    for x in [10, 20, 30] {
        sbd.on_owd(f, x).unwrap();
    }
    sbd.on_packets(f, 3, 1).unwrap();
    sbd.close_all();
    let e = sbd.flow(f).unwrap().estimates();
    assert_eq!(e.mean_delay, 20.0);
    assert_eq!(e.var_est, 10.0);
    assert_eq!(e.pkt_loss, 0.25);
    // Interval 2: 40, 40 → E_T 40, PDV 0; mean_delay (40+20)/2 = 30; var_est 5.
    sbd.on_owd(f, 40).unwrap();
    sbd.on_owd(f, 40).unwrap();
    sbd.on_packets(f, 2, 0).unwrap();
    sbd.close_all();
    let rec = sbd.flow(f).unwrap().record(1).unwrap();
    assert_eq!(rec.mean, Some(40.0));
    assert_eq!(rec.pdv, Some(0.0));
    // skew_base against mean_delay 20 (excluding this interval): both above → −2.
    assert_eq!((rec.skew_base, rec.skew_num), (-2, 2));
    // MAD base against E_T of the previous interval (20): |40−20|·2 = 40.
    assert_eq!((rec.var_base, rec.var_num), (40.0, 2));
    let e = sbd.flow(f).unwrap().estimates();
    assert_eq!(e.mean_delay, 30.0);
    assert_eq!(e.var_est, 5.0);
    assert_eq!(e.skew_est, -1.0);
    assert_eq!(e.pkt_loss, 1.0 / 6.0);

    let mut mad = Sbd::new(SbdConfig {
        variability: Variability::Mad,
        ..SbdConfig::default()
    })
    .unwrap();
    let g = mad.register().unwrap();
    for xs in [[10, 20, 30], [15, 25, 20]] {
        for x in xs {
            mad.on_owd(g, x).unwrap();
        }
        mad.close_all();
    }
    // MAD_MT = (|15−20| + |25−20| + |20−20|)/3.
    assert_eq!(mad.flow(g).unwrap().estimates().var_est, 10.0 / 3.0);
}

/// skew_est's sign: a standing queue with occasional dips reads negative
/// (congested), an idle queue with occasional spikes positive; always in [−1, 1].
pub fn sbd1_skew_sign_on_synthetic_traces() {
    let mut sbd = Sbd::new(SbdConfig::default()).unwrap();
    let standing = sbd.register().unwrap();
    let idle = sbd.register().unwrap();
    for _ in 0..60 {
        interval(&mut sbd, standing, 80_000, 40, 4, -30_000);
        interval(&mut sbd, idle, 20_000, 40, 4, 30_000);
        sbd.close_all();
        for f in [standing, idle] {
            let s = sbd.flow(f).unwrap().estimates().skew_est;
            assert!((-1.0..=1.0).contains(&s));
        }
    }
    let s = sbd.flow(standing).unwrap().estimates().skew_est;
    let i = sbd.flow(idle).unwrap().estimates().skew_est;
    // 36 of 40 samples above the mean, 4 below: (4 − 36)/40 = −0.8, and mirrored.
    assert_eq!(s, -0.8);
    assert_eq!(i, 0.8);
    let cfg = sbd.config().clone();
    assert!(sbd.flow(standing).unwrap().congested(&cfg));
    assert!(!sbd.flow(idle).unwrap().congested(&cfg));
}

/// freq_est on a square wave of E_T: half-period h intervals → N/h crossings in
/// the last N intervals, freq_est = 1/h, once mean_delay covers whole periods.
pub fn sbd1_freq_est_of_a_square_wave() {
    for (h, want) in [(5usize, 0.2), (2, 0.5), (1, 1.0), (25, 0.04)] {
        let mut sbd = Sbd::new(SbdConfig::default()).unwrap();
        let f = sbd.register().unwrap();
        for k in 0..400 {
            let level = if (k / h) % 2 == 0 { 50_000 } else { 10_000 };
            interval(&mut sbd, f, level, 10, 0, 0);
            sbd.close_all();
        }
        let e = sbd.flow(f).unwrap().estimates();
        assert_eq!(e.freq_est, want, "half-period {h}");
        assert!((0.0..=1.0).contains(&e.freq_est));
    }
}

/// Small fluctuations inside the p_v·var_est band are not crossings.
pub fn crossings_need_to_leave_the_band() {
    let mut sbd = Sbd::new(SbdConfig::default()).unwrap();
    let f = sbd.register().unwrap();
    for k in 0..200 {
        // Each interval: 9 samples at the level, one 10 ms spike: PDV 9 ms, so the
        // band is 0.2 · 9 = 1.8 ms; E_T alternates by ±0.5 ms only.
        let level = if k % 2 == 0 { 40_000 } else { 41_000 };
        interval(&mut sbd, f, level, 10, 1, 10_000);
        sbd.close_all();
    }
    assert_eq!(sbd.flow(f).unwrap().estimates().freq_est, 0.0);
}

/// Weighted skew_est (§3.4) on known bases: interval k back has skew_base b_k and
/// num n_k; the estimate is Σw_k·b_k / Σw_k·n_k.
pub fn sbd1_weighted_skew_matches_the_formula() {
    let cfg = SbdConfig {
        weighted: true,
        ..SbdConfig::default()
    };
    let mut sbd = Sbd::new(cfg.clone()).unwrap();
    let f = sbd.register().unwrap();
    // Interval 0 sets mean_delay = 100. Then 60 intervals: in interval j, `a` samples
    // at 50 and 10 − a at 150 around a mean that stays near 100.
    for x in [100, 100] {
        sbd.on_owd(f, x).unwrap();
    }
    sbd.close_all();
    for j in 0..60 {
        let a = (j % 7) as usize + 2; // 2..=8 below
        for i in 0..10 {
            sbd.on_owd(f, if i < a { 50 } else { 150 }).unwrap();
        }
        sbd.close_all();
    }
    let fl = sbd.flow(f).unwrap();
    let (mut num, mut den) = (0.0, 0.0);
    for age in 1..=50 {
        let r = fl.record(age).unwrap();
        num += cfg.weight(age) * f64::from(r.skew_base);
        den += cfg.weight(age) * f64::from(r.skew_num);
    }
    assert_eq!(fl.estimates().skew_est, num / den);
    // And the unweighted estimate would differ (the recent intervals count more).
    let plain: f64 = (1..=50)
        .map(|a| f64::from(fl.record(a).unwrap().skew_base))
        .sum::<f64>()
        / (1..=50)
            .map(|a| f64::from(fl.record(a).unwrap().skew_num))
            .sum::<f64>();
    assert_ne!(fl.estimates().skew_est, plain);
}

/// Four flows over two bottlenecks and one flow with no bottleneck. Each bottleneck
/// holds a standing queue with occasional dips (negative skew) whose level
/// oscillates: A (flows 0, 1) with half-period 5 T, B (flows 2, 3) with half-period
/// 2 T. Each flow has its own base delay and sample count (path lag and rate, which
/// the statistics must ignore). SBD groups {0, 1} and {2, 3} and leaves the
/// uncongested flow out: base, improved (§3.3 + §3.4), and MAD (with p_v 0.2: with
/// 0.7 this shape's level swings stay inside the band by construction, since a
/// standing queue's swing must stay under its dips for the skew to read congested).
pub fn sbd1_grouping_separates_two_bottlenecks() {
    for cfg in [
        SbdConfig::default(),
        SbdConfig::improved(),
        SbdConfig {
            variability: Variability::Mad,
            p_v: Some(0.2),
            ..SbdConfig::improved()
        },
    ] {
        let mut sbd = Sbd::new(cfg.clone()).unwrap();
        let f: Vec<SbdFlow> = (0..5).map(|_| sbd.register().unwrap()).collect();
        let base = [10_000, 45_000, 20_000, 70_000, 30_000];
        for k in 0..120usize {
            let qa = if (k / 5) % 2 == 0 { 40_000 } else { 36_000 };
            let qb = if (k / 2) % 2 == 0 { 60_000 } else { 55_000 };
            interval(&mut sbd, f[0], base[0] + qa, 40, 4, -30_000);
            interval(&mut sbd, f[1], base[1] + qa, 30, 3, -30_000);
            interval(&mut sbd, f[2], base[2] + qb, 40, 4, -30_000);
            interval(&mut sbd, f[3], base[3] + qb, 20, 2, -30_000);
            interval(&mut sbd, f[4], base[4], 40, 4, 20_000);
            sbd.close_all();
        }
        let e: Vec<Estimates> = f
            .iter()
            .map(|&g| sbd.flow(g).unwrap().estimates())
            .collect();
        assert!(sbd.shares(f[0], f[1]), "{cfg:?} {e:?}");
        assert!(sbd.shares(f[2], f[3]), "{cfg:?} {e:?}");
        assert!(!sbd.shares(f[0], f[2]), "{cfg:?} {e:?}");
        assert_eq!(sbd.group_of(f[4]), None, "not congested: not grouped");
        assert_eq!(sbd.decisions(), 119);
    }
}

/// Step 1's hysteresis: a flow whose skew_est sits between c_s and c_h stays grouped
/// only if it was congested in the previous T.
pub fn sbd1_hysteresis_keeps_a_previously_congested_flow() {
    let cfg = SbdConfig::default();
    let mut sbd = Sbd::new(cfg.clone()).unwrap();
    let f = sbd.register().unwrap();
    for _ in 0..5 {
        interval(&mut sbd, f, 80_000, 40, 4, -30_000); // skew −0.8
        sbd.close_all();
    }
    assert!(sbd.group_of(f).is_some());
    // Now an idle queue with spikes: skew_est climbs through (c_s, c_h) to 0.8.
    let mut saw_hysteresis = false;
    for _ in 0..40 {
        interval(&mut sbd, f, 20_000, 40, 4, 30_000);
        sbd.close_all();
        let s = sbd.flow(f).unwrap().estimates().skew_est;
        if s > cfg.c_s && s < cfg.c_h {
            saw_hysteresis = true;
            assert!(sbd.group_of(f).is_some(), "held by PC at skew {s}");
        }
        if s >= cfg.c_h {
            assert_eq!(sbd.group_of(f), None, "released at skew {s}");
        }
    }
    assert!(saw_hysteresis);
    assert_eq!(sbd.group_of(f), None);
    assert!(!sbd.flow(f).unwrap().congested(&cfg));
}

/// Loss alone makes a flow congested (pkt_loss > p_l) and groups it by loss.
pub fn lossy_flows_group_by_relative_loss() {
    let mut sbd = Sbd::new(SbdConfig::default()).unwrap();
    let f: Vec<SbdFlow> = (0..3).map(|_| sbd.register().unwrap()).collect();
    for _ in 0..60 {
        for (i, lost) in [(0, 20u32), (1, 21), (2, 60)] {
            for _ in 0..80 {
                sbd.on_owd(f[i], 30_000).unwrap();
            }
            sbd.on_packets(f[i], 80, lost).unwrap();
        }
        sbd.close_all();
    }
    assert!(sbd.shares(f[0], f[1]), "0.2 vs 0.208: within p_d");
    assert!(!sbd.shares(f[0], f[2]), "0.2 vs 0.43");
}

/// Decisions start at the second T; `tick` closes intervals only once per T.
pub fn decisions_every_t_from_the_second() {
    let ms = Duration::from_millis;
    let mut sbd = Sbd::new(SbdConfig::default()).unwrap();
    let f = sbd.register().unwrap();
    let t0 = Instant::ZERO;
    assert!(!sbd.tick(t0));
    interval(&mut sbd, f, 50_000, 20, 2, -10_000);
    assert!(!sbd.tick(t0 + ms(349)));
    assert!(sbd.tick(t0 + ms(350)));
    assert_eq!(sbd.decisions(), 0, "first T: statistics only");
    interval(&mut sbd, f, 50_000, 20, 2, -10_000);
    assert!(sbd.tick(t0 + ms(700)));
    assert_eq!(sbd.decisions(), 1);
    assert_eq!(sbd.flow(f).unwrap().intervals(), 2);
}

/// SBD-1: every check above, panicking on the first failure; returns what was
/// checked, for the report.
pub fn sbd1() -> String {
    sbd1_parameters_and_weights();
    sbd1_mean_pdv_mad_and_loss_are_exact();
    sbd1_skew_sign_on_synthetic_traces();
    sbd1_freq_est_of_a_square_wave();
    crossings_need_to_leave_the_band();
    sbd1_weighted_skew_matches_the_formula();
    sbd1_grouping_separates_two_bottlenecks();
    sbd1_hysteresis_keeps_a_previously_congested_flow();
    lossy_flows_group_by_relative_loss();
    decisions_every_t_from_the_second();
    "T 350 ms, N = M = 50, F = 25, c_s −0.01, c_h 0.3, p_l = p_f = p_s = p_d 0.1, p_v 0.2 (PDV) / 0.7 (MAD), p_mad 0.1; weights 26 ×25 then 25…1, Σ = 975; N·T = 17.5 s; mean_delay, PDV, MAD and pkt_loss exact on hand-computed series; skew_est −0.8 on a standing queue with dips and +0.8 on an idle queue with spikes; freq_est 0.2/0.5/1/0.04 on square waves of half-period 5/2/1/25 T, 0 inside the p_v band; weighted skew = Σw·base/Σw·num; two bottlenecks grouped {0,1}, {2,3} with the uncongested flow out (base, improved, MAD); c_s/c_h hysteresis; grouping by relative loss; decisions from the second T".into()
}
