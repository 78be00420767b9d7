use super::*;

fn trace(text: &str) -> Arc<DeliveryTrace> {
    Arc::new(DeliveryTrace::parse(text).unwrap())
}

fn ms(t: Instant) -> f64 {
    t.as_nanos() as f64 / 1e6
}

#[test]
fn parses_mahimahi_format_and_repeats_with_the_last_timestamp() {
    let t = trace("1\n1\n3\n5\n\n");
    assert_eq!(t.len(), 4);
    assert_eq!(t.period_ms(), 5);
    let times: Vec<f64> = t
        .opportunities(Instant::ZERO, Instant::from_millis(12))
        .map(ms)
        .collect();
    assert_eq!(
        times,
        vec![1.0, 1.0, 3.0, 5.0, 6.0, 6.0, 8.0, 10.0, 11.0, 11.0]
    );
}

#[test]
fn bad_traces_name_their_line() {
    let e = |s: &str| DeliveryTrace::parse(s).unwrap_err();
    assert_eq!(e("").line, 0);
    assert_eq!(e("0\n0\n").line, 2, "zero period");
    let d = e("5\n3\n");
    assert_eq!(d.line, 2);
    assert!(d.message.contains("must not decrease"), "{d}");
    let g = e("1\nfoo\n2\n");
    assert_eq!(g.line, 2);
    assert!(g.message.contains("\"foo\""), "{g}");
    assert_eq!(e("1\n\n2\n").line, 2, "blank line inside");
    assert_eq!(e("-1\n").line, 1);
    assert!(e("99999999999\n").message.contains("24h"));
}

#[test]
fn one_opportunity_carries_1500_bytes_and_splits_bigger_packets() {
    // Opportunities every ms.
    let mut s = TraceServer::new(trace("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"));
    // 1500 bytes: the first opportunity at or after 0.
    assert_eq!(ms(s.finish(Instant::ZERO, 1500, false)), 1.0);
    // 3000 bytes queued behind it: the next two.
    assert_eq!(ms(s.finish(Instant::from_millis(1), 3000, true)), 3.0);
    // Two 700-byte packets share one opportunity; the third spills to the next.
    let t = Instant::from_millis(3);
    assert_eq!(ms(s.finish(t, 700, true)), 4.0);
    let t = Instant::from_millis(4);
    assert_eq!(ms(s.finish(t, 700, true)), 4.0);
    assert_eq!(ms(s.finish(t, 700, true)), 5.0);
}

#[test]
fn an_idle_link_wastes_its_opportunities() {
    let mut s = TraceServer::new(trace("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"));
    assert_eq!(ms(s.finish(Instant::ZERO, 100, false)), 1.0);
    // Not back to back: the 1400 spare bytes at 1 ms are gone; 7.5 ms waits for 8 ms,
    // and past the period it wraps (10 ms period: 23.2 ms → 24 ms).
    assert_eq!(ms(s.finish(Instant::from_micros(7500), 100, false)), 8.0);
    assert_eq!(ms(s.finish(Instant::from_micros(23_200), 100, false)), 24.0);
    // Exactly at an opportunity: used.
    assert_eq!(ms(s.finish(Instant::from_millis(30), 100, false)), 30.0);
}

#[test]
fn long_run_rate_matches_the_trace() {
    // 12 Mbit/s constant: one opportunity per ms; a saturated link carries 1500 B/ms.
    let t = Arc::new(generate::constant(12_000_000, 1000));
    assert_eq!(t.len(), 1000);
    assert!((t.mean_rate_bps() - 12e6).abs() < 1.0);
    let mut s = TraceServer::new(t);
    let mut at = Instant::ZERO;
    let mut first = true;
    for _ in 0..10_000 {
        at = s.finish(at, 1500, !first);
        first = false;
    }
    assert_eq!(ms(at), 10_000.0);
}

#[test]
fn generated_traces_round_trip_and_have_their_rates() {
    let step = generate::stepped(&[(12_000_000, 1000), (24_000_000, 1000)]);
    assert_eq!(DeliveryTrace::parse(&step.to_text()).unwrap(), step);
    assert_eq!(step.period_ms(), 2000);
    assert!((step.mean_rate_bps() - 18e6).abs() < 1e4);
    let lte = generate::lte_like(2_000_000, 40_000_000, 60_000, 1);
    assert_eq!(lte, generate::lte_like(2_000_000, 40_000_000, 60_000, 1));
    assert_eq!(DeliveryTrace::parse(&lte.to_text()).unwrap(), lte);
    let mean = lte.mean_rate_bps();
    assert!((2e6..40e6).contains(&mean), "mean {mean}");
}
