use super::*;
use crate::cc::testmodel::PathSender;
use crate::claim_checks::delay_corr as c;
use crate::sent::SentInfo;
use proptest::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

// ---------------------------------------------------------------------------
// A trivial base controller: +1 segment per ACKed segment up to `cap`, halving on
// `ssthresh`. Shared counters let tests see what the layer forwarded.

#[derive(Debug, Default)]
struct Calls {
    on_ack: AtomicU64,
    cong_avoid: AtomicU64,
    ssthresh: AtomicU64,
    events: AtomicU64,
}

#[derive(Debug)]
struct Probe {
    cap: u32,
    calls: Arc<Calls>,
}

impl CongestionControl for Probe {
    fn name(&self) -> &'static str {
        "probe"
    }
    fn on_ack(&mut self, _cc: &mut FlowCtx<'_>, _ack: &AckSample) {
        self.calls.on_ack.fetch_add(1, Ordering::Relaxed);
    }
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        self.calls.cong_avoid.fetch_add(1, Ordering::Relaxed);
        cc.cwnd = cc.cwnd.saturating_add(ack.acked_segs).min(self.cap);
    }
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, _cause: CongestionCause) -> u32 {
        self.calls.ssthresh.fetch_add(1, Ordering::Relaxed);
        (cc.cwnd / 2).max(2)
    }
    fn on_event(&mut self, _cc: &mut FlowCtx<'_>, _now: Instant, _ev: CcEvent) {
        self.calls.events.fetch_add(1, Ordering::Relaxed);
    }
}

fn layer(cap: u32, cfg: DelayCorrConfig) -> (DelayCorrelation, Arc<Calls>) {
    let calls = Arc::new(Calls::default());
    let base = Probe {
        cap,
        calls: calls.clone(),
    };
    (DelayCorrelation::new(Box::new(base), cfg), calls)
}

// ---------------------------------------------------------------------------
// The shared FIFO bottleneck model (`cc::testmodel`): one packet served per τ,
// `BASE_US` round trip with an empty queue, every segment ACKed on its own.

type Fifo<C> = PathSender<C>;

fn fifo<C: CongestionControl>(dc: C, initial_cwnd: u32, base_us: u64, tau_us: u64) -> Fifo<C> {
    PathSender::new(
        dc,
        initial_cwnd,
        u32::MAX,
        Duration::from_micros(base_us),
        Duration::from_micros(tau_us),
    )
}

const BASE_US: u64 = 20_000;
const TAU_US: u64 = 1_000; // BDP = 20 packets

// ---------------------------------------------------------------------------
// Algorithm 3 and the thesis' worked example (claims DC-7, W-5).

#[test]
fn dither_matches_the_thesis_worked_example() {
    c::dither_matches_the_thesis_worked_example();
}

#[test]
fn dither_phase_flips_at_half_the_window() {
    let cfg = DelayCorrConfig::default();
    assert_eq!(cfg.dither(100, 15, 32), 102);
    assert_eq!(cfg.dither(100, 16, 32), 110);
    assert_eq!(cfg.dither(100, 63, 128), 102);
    assert_eq!(cfg.dither(100, 64, 128), 110);
    let off = DelayCorrConfig {
        dither: false,
        ..DelayCorrConfig::default()
    };
    assert_eq!(off.dither(100, 20, 32), 100);
}

#[test]
fn fifo_line_gives_r_of_one_and_the_bdp_exactly() {
    c::fifo_line_gives_r_of_one_and_the_bdp_exactly();
}

#[test]
fn worked_example_through_the_layer_sets_10_then_18() {
    // Drive real ACKs whose observations lie on a BDP = 8 line; with sampling off the
    // window index advances by one per ACK, so the dither phase is predictable.
    let cfg = DelayCorrConfig {
        sampling: false,
        ..DelayCorrConfig::default()
    };
    let (mut dc, calls) = layer(1000, cfg);
    let mut cc = CcState::new(40, 1448);
    let base_us = 100_000u64;
    let tau_us = 6_000u64;
    let mut cwnds = Vec::new();
    for i in 0..64u64 {
        let x = 9 + (i % 30) as u32;
        let rtt = base_us + u64::from(x - 8) * tau_us;
        let now = Instant::from_micros(1_000_000 + i * 10_000);
        let sent = ago(now, Duration::from_micros(rtt));
        let ack = ack_for(now, sent, x);
        if i == 0 {
            // One sample at the path's minimum RTT (an uncongested packet).
            let a0 = ack_for(now, ago(now, Duration::from_micros(base_us)), 8);
            dc.on_ack(&mut FlowCtx::alone(&mut cc), &a0);
        }
        dc.on_ack(&mut FlowCtx::alone(&mut cc), &ack);
        dc.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack);
        cwnds.push((dc.window().index(), cc.cwnd));
    }
    let s = dc.snapshot();
    assert_eq!(s.estimate, Some(8));
    assert!(s.clamping);
    for &(idx, cwnd) in &cwnds[40..] {
        assert_eq!(cwnd, if idx < 16 { 10 } else { 18 }, "index {idx}");
    }
    // While clamping, the base's cong_avoid was not called.
    assert!(calls.cong_avoid.load(Ordering::Relaxed) < 40);
}

fn ago(now: Instant, d: Duration) -> Instant {
    now.checked_sub(d).expect("test times start late enough")
}

fn ack_for(now: Instant, sent_at: Instant, in_flight_at_send: u32) -> AckSample {
    AckSample {
        now,
        acked_segs: 1,
        acked_bytes: 1448,
        rtt: Some(now.saturating_duration_since(sent_at)),
        newest_acked: Some(SentInfo {
            sent_at,
            bytes: 1448,
            in_flight_at_send,
            ..Default::default()
        }),
        prior_in_flight: in_flight_at_send,
        ece: false,
        ..Default::default()
    }
}

// ---------------------------------------------------------------------------
// State size (DC-8) and running sums (Algorithm 1).

#[test]
fn per_socket_state_is_8w_plus_40_bytes() {
    c::per_socket_state_is_8w_plus_40_bytes();
}

proptest! {
    #[test]
    fn running_sums_equal_recomputation(
        w in 2usize..200,
        obs in proptest::collection::vec((0u32..=u32::MAX, 0u32..=u32::MAX), 0..700),
    ) {
        c::running_sums_case(w, &obs).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn statistics_never_overflow_at_the_largest_window(
        obs in proptest::collection::vec((0u32..=u32::MAX, 0u32..=u32::MAX), MAX_WINDOW..MAX_WINDOW + 50),
        target in 0u32..=u32::MAX,
    ) {
        let mut win = ObservationWindow::new(MAX_WINDOW);
        for &(x, y) in &obs {
            win.push(x, y);
        }
        let m = win.moments();
        let r = m.r();
        prop_assert!((-1.0..=1.0).contains(&r));
        let _ = m.x_at(target.min(MAX_VALUE));
    }
}

#[test]
fn extreme_values_fill_the_largest_window_without_overflow() {
    let mut win = ObservationWindow::new(MAX_WINDOW);
    for i in 0..MAX_WINDOW {
        let v = if i % 2 == 0 { MAX_VALUE } else { 0 };
        win.push(v, v);
    }
    assert_eq!(win.sums(), win.recompute());
    let m = win.moments();
    assert!((m.r() - 1.0).abs() < 1e-12);
    assert_eq!(m.x_at(0), Some(0));
    // All at the cap: no variance, no fit.
    for _ in 0..MAX_WINDOW {
        win.push(u32::MAX, u32::MAX);
    }
    assert_eq!(
        win.sums().xx,
        (MAX_WINDOW as u64) * u64::from(MAX_VALUE).pow(2)
    );
    assert_eq!(win.moments().r(), 0.0);
}

// ---------------------------------------------------------------------------
// Degenerate fits (spec [AMB-8]).

#[test]
fn identical_observations_give_zero_correlation_and_no_action() {
    let win = c::fifo_window(32, 0, 20_000, 0, |_| 10);
    assert_eq!(win.moments().r(), 0.0);
    assert_eq!(win.moments().x_at(20_000), None);

    let cfg = DelayCorrConfig {
        sampling: false,
        ..DelayCorrConfig::default()
    };
    let (mut dc, calls) = layer(1000, cfg);
    let mut cc = CcState::new(10, 1448);
    for i in 0..100u64 {
        let now = Instant::from_millis(100 + i);
        let ack = ack_for(now, ago(now, Duration::from_millis(20)), 10);
        dc.on_ack(&mut FlowCtx::alone(&mut cc), &ack);
        dc.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack);
    }
    let s = dc.snapshot();
    assert_eq!(s.r, Some(0.0));
    assert_eq!(s.clamps, 0);
    assert_eq!(cc.cwnd, 110, "base grew +1 per ACK untouched");
    assert_eq!(calls.cong_avoid.load(Ordering::Relaxed), 100);
}

#[test]
fn negative_slope_never_clamps() {
    let (mut dc, _) = layer(
        1000,
        DelayCorrConfig {
            sampling: false,
            ..Default::default()
        },
    );
    let mut cc = CcState::new(10, 1448);
    for i in 0..64u64 {
        let now = Instant::from_millis(1000 + i);
        let x = 10 + (i % 20) as u32;
        // More in flight, *less* delay.
        let rtt = Duration::from_micros(60_000 - u64::from(x) * 1000);
        let ack = ack_for(now, ago(now, rtt), x);
        dc.on_ack(&mut FlowCtx::alone(&mut cc), &ack);
        dc.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack);
    }
    let s = dc.snapshot();
    assert!(s.r.unwrap() < -0.99);
    assert_eq!(s.clamps, 0);
}

#[test]
fn intercept_above_min_rtt_floors_the_estimate_at_zero_plus_dither() {
    // Perfect correlation, but the line predicts 30 ms at zero in flight while the
    // min RTT is 20 ms: the estimate is negative and cwnd falls to the dither.
    let (mut dc, _) = layer(
        1000,
        DelayCorrConfig {
            sampling: false,
            // Algorithm 2 as written: the fit's pipe (200 packets) would defer.
            pipe_check: false,
            ..Default::default()
        },
    );
    let mut cc = CcState::new(50, 1448);
    let t0 = Instant::from_secs(1);
    dc.on_ack(
        &mut FlowCtx::alone(&mut cc),
        &ack_for(t0, ago(t0, Duration::from_millis(20)), 1),
    );
    for i in 1..=32u64 {
        let now = t0 + Duration::from_millis(i);
        let x = 10 + i as u32;
        let rtt = Duration::from_micros(30_000 + u64::from(x) * 100);
        let ack = ack_for(now, ago(now, rtt), x);
        dc.on_ack(&mut FlowCtx::alone(&mut cc), &ack);
        dc.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack);
    }
    let s = dc.snapshot();
    assert!(s.clamping);
    assert_eq!(s.estimate, Some(0));
    // The window is full and index wrapped to 0 or 1: low dither, above the floor.
    assert_eq!(cc.cwnd, 2);
}

#[test]
fn clamped_cwnd_respects_floor_and_cwnd_clamp() {
    let cfg = DelayCorrConfig {
        dither: false,
        min_cwnd: 4,
        // Algorithm 2 as written: these lines are steeper than their pipe.
        pipe_check: false,
        ..DelayCorrConfig::default()
    };
    let mut cc = CcState::new(100, 1448);
    for (bdp, clamp, want) in [(1u32, 1000u32, 4u32), (500, 300, 300), (50, 1000, 50)] {
        let (mut dc, _) = layer(
            1000,
            DelayCorrConfig {
                sampling: false,
                ..cfg.clone()
            },
        );
        cc.cwnd_clamp = clamp;
        let t0 = Instant::from_secs(1);
        dc.on_ack(
            &mut FlowCtx::alone(&mut cc),
            &ack_for(t0, ago(t0, Duration::from_millis(20)), bdp),
        );
        for i in 1..=32u64 {
            let now = t0 + Duration::from_millis(i);
            let x = bdp + i as u32;
            let rtt = Duration::from_micros(20_000 + u64::from(x - bdp) * 100);
            let ack = ack_for(now, ago(now, rtt), x);
            dc.on_ack(&mut FlowCtx::alone(&mut cc), &ack);
            dc.cong_avoid(&mut FlowCtx::alone(&mut cc), &ack);
        }
        assert_eq!(dc.snapshot().estimate, Some(bdp));
        assert_eq!(cc.cwnd, want, "bdp {bdp} clamp {clamp}");
    }
}

// ---------------------------------------------------------------------------
// Closed loop on the FIFO model.

#[test]
fn warm_up_defers_until_the_window_is_full() {
    let (dc, calls) = layer(10_000, DelayCorrConfig::default());
    let mut f = fifo(dc, 10, BASE_US, TAU_US);
    let mut first_consult_at = None;
    for i in 0..3000 {
        f.step();
        let s = f.ctrl.snapshot();
        if s.consults > 0 && first_consult_at.is_none() {
            first_consult_at = Some(i);
            assert_eq!(s.window_len, 32);
            assert_eq!(s.stored, 32, "consulted before the window was full");
        }
        if first_consult_at.is_none() {
            assert!(!s.clamping);
        }
    }
    assert!(first_consult_at.is_some());
    // Before the first consult every ACK went to the base.
    assert!(calls.cong_avoid.load(Ordering::Relaxed) as usize >= first_consult_at.unwrap());
}

#[test]
fn bufferbloat_is_detected_and_cwnd_clamped_near_the_bdp() {
    let (dc, _) = layer(10_000, DelayCorrConfig::default());
    let mut f = fifo(dc, 10, BASE_US, TAU_US);
    f.run(20_000);
    let s = f.ctrl.snapshot();
    assert!(s.clamping, "{s:?}");
    assert!(s.r.unwrap() >= 0.98, "{s:?}");
    let est = s.estimate.unwrap();
    assert!((19..=21).contains(&est), "estimate {est}, BDP 20");
    assert_eq!(s.min_rtt, Some(Duration::from_micros(BASE_US)));
    // RTT stays within a small factor of the minimum (low dither +2, high +10 pkts).
    let mean = f.mean_rtt_us(5_000);
    assert!(mean <= BASE_US + 12 * TAU_US, "mean RTT {mean} µs");
    assert!(mean >= BASE_US, "mean RTT {mean} µs");
    // And the link stays busy: cwnd never below the BDP in steady state.
    let min_cwnd = f.trace[15_000..].iter().map(|&(c, _)| c).min().unwrap();
    assert!(min_cwnd >= 20, "cwnd fell to {min_cwnd}");
    // Both dither levels are in use.
    let max_cwnd = f.trace[15_000..].iter().map(|&(c, _)| c).max().unwrap();
    assert!(max_cwnd >= 29, "no high dither seen (max cwnd {max_cwnd})");
}

#[test]
fn without_the_layer_the_same_path_bloats() {
    // Control for the test above: the base alone fills the queue without bound.
    let base = Probe {
        cap: 2_000,
        calls: Arc::default(),
    };
    let mut f = fifo(base, 10, BASE_US, TAU_US);
    f.run(20_000);
    assert!(f.mean_rtt_us(5_000) > 10 * BASE_US);
}

#[test]
fn passive_layer_measures_the_correlation_but_leaves_cwnd_to_the_base() {
    let cfg = DelayCorrConfig {
        passive: true,
        ..DelayCorrConfig::default()
    };
    let (dc, calls) = layer(2_000, cfg);
    let mut f = fifo(dc, 10, BASE_US, TAU_US);
    // While the base grows the queue, consults see the FIFO line (the first ones
    // still hold pre-queue points: the knee of the hockey stick lowers r).
    let mut rs = Vec::new();
    let mut last = 0;
    for _ in 0..1_500 {
        f.step();
        let s = f.ctrl.snapshot();
        if s.consults != last {
            last = s.consults;
            rs.push(s.r.unwrap());
        }
    }
    assert!(rs.len() > 100, "{} consults", rs.len());
    let high = rs.iter().filter(|&&r| r >= 0.98).count();
    assert!(
        high * 10 >= rs.len() * 9,
        "{high} of {} consults had r ≥ 0.98",
        rs.len()
    );
    assert!(rs.last().is_some_and(|&r| r >= 0.999));
    let s = f.ctrl.snapshot();
    assert!(s.estimate.is_some_and(|e| (19..=21).contains(&e)), "{s:?}");
    assert_eq!((s.clamps, s.clamping), (0, false));
    // The base saw every ACK and the path bloats exactly as without the layer.
    assert_eq!(calls.cong_avoid.load(Ordering::Relaxed), 1_500);
    assert!(f.mean_rtt_us(100) > 10 * BASE_US);
    let Some(CcDiagnostics::DelayCorrelation(d)) = f.ctrl.diagnostics() else {
        panic!("no diagnostics");
    };
    assert_eq!(d, s.diagnostics());
    // Once the base's window stops moving, every segment leaves with the same number
    // in flight: the rate has no variance and r is 0 although the queue is full.
    f.run(20_000);
    assert_eq!(f.ctrl.snapshot().r, Some(0.0));
}

#[test]
fn flat_rtt_below_the_bdp_defers_to_the_base() {
    // The base never exceeds half the BDP, so there is no queue; jitter adds noise
    // that is uncorrelated with the rate.
    let (dc, calls) = layer(10, DelayCorrConfig::default());
    let mut f = fifo(dc, 4, BASE_US, TAU_US);
    f.jitter = Duration::from_micros(2_000);
    f.run(5_000);
    let s = f.ctrl.snapshot();
    assert!(s.consults > 1_000);
    assert_eq!(s.clamps, 0);
    assert!(!s.clamping);
    assert!(s.r.unwrap().abs() < 0.3, "r = {:?}", s.r);
    assert_eq!(f.cc.cwnd, 10);
    assert_eq!(calls.cong_avoid.load(Ordering::Relaxed), 5_000);
}

#[test]
fn control_returns_to_the_base_when_the_correlation_disappears() {
    let (dc, calls) = layer(10_000, DelayCorrConfig::default());
    let mut f = fifo(dc, 10, BASE_US, TAU_US);
    f.run(10_000);
    assert!(f.ctrl.is_clamping());
    let before = f.ctrl.snapshot();
    let ss_calls = calls.ssthresh.load(Ordering::Relaxed);
    // The bottleneck gets 4× faster: BDP 80, far above the clamped window, so RTT
    // goes flat and the correlation vanishes.
    f.tau = Duration::from_micros(250);
    let mut released_at = None;
    for i in 0..20_000 {
        f.step();
        if released_at.is_none() && !f.ctrl.is_clamping() {
            released_at = Some(i);
            let s = f.ctrl.snapshot();
            assert!(s.r.unwrap() < 0.9);
            assert_eq!(s.releases, before.releases + 1);
            // Re-anchored: the base's ssthresh hook ran once, ssthresh = cwnd.
            assert_eq!(calls.ssthresh.load(Ordering::Relaxed), ss_calls + 1);
            // (the base then grew this ACK by its usual +1).
            assert_eq!(f.cc.ssthresh + 1, f.cc.cwnd);
        }
    }
    assert!(released_at.is_some(), "never released");
    // The base grew the window past the old clamp, bloated the new queue, and the
    // layer found the new BDP.
    let s = f.ctrl.snapshot();
    assert!(s.clamping, "{s:?}");
    let est = s.estimate.unwrap();
    assert!((78..=82).contains(&est), "estimate {est}, new BDP 80");
}

#[test]
fn keep_policy_leaves_the_base_state_alone_on_release() {
    let cfg = DelayCorrConfig {
        release: ReleasePolicy::Keep,
        ..DelayCorrConfig::default()
    };
    let (dc, calls) = layer(10_000, cfg);
    let mut f = fifo(dc, 10, BASE_US, TAU_US);
    f.run(10_000);
    assert!(f.ctrl.is_clamping());
    f.tau = Duration::from_micros(250);
    while f.ctrl.is_clamping() {
        f.step();
    }
    assert_eq!(calls.ssthresh.load(Ordering::Relaxed), 0);
    assert_eq!(f.ctrl.snapshot().releases, 1);
}

#[test]
fn recovery_interrupts_the_clamp_and_observations_continue() {
    let (dc, calls) = layer(10_000, DelayCorrConfig::default());
    let mut f = fifo(dc, 10, BASE_US, TAU_US);
    f.run(10_000);
    assert!(f.ctrl.is_clamping());
    let now = f.now;
    f.ctrl
        .on_event(&mut FlowCtx::alone(&mut f.cc), now, CcEvent::EnterRecovery);
    assert!(!f.ctrl.is_clamping());
    assert_eq!(calls.events.load(Ordering::Relaxed), 1, "event forwarded");
    // In recovery the connection calls on_ack but not cong_avoid: the layer keeps
    // observing and leaves cwnd to PRR.
    f.cc.cwnd = 7;
    let (stored, consults) = (f.ctrl.snapshot().stored, f.ctrl.snapshot().consults);
    for i in 0..50u64 {
        let t = now + Duration::from_millis(i);
        let ack = ack_for(t, ago(t, Duration::from_millis(25)), 25);
        f.ctrl.on_ack(&mut FlowCtx::alone(&mut f.cc), &ack);
    }
    assert!(f.ctrl.snapshot().stored > stored);
    assert_eq!(f.ctrl.snapshot().consults, consults);
    assert_eq!(f.cc.cwnd, 7);
    // After recovery the next ACK re-consults, and the bloated history clamps again.
    let t = now + Duration::from_millis(60);
    f.ctrl
        .on_event(&mut FlowCtx::alone(&mut f.cc), t, CcEvent::ExitRecovery);
    let ack = ack_for(t, ago(t, Duration::from_millis(25)), 25);
    f.ctrl.on_ack(&mut FlowCtx::alone(&mut f.cc), &ack);
    f.ctrl.cong_avoid(&mut FlowCtx::alone(&mut f.cc), &ack);
    assert_eq!(f.ctrl.snapshot().consults, consults + 1);
}

#[test]
fn after_an_rto_consults_wait_for_a_segment_sent_after_it() {
    let (dc, _) = layer(10_000, DelayCorrConfig::default());
    let mut f = fifo(dc, 10, BASE_US, TAU_US);
    f.run(10_000);
    let rto_at = f.now + Duration::from_millis(300);
    f.ctrl
        .on_event(&mut FlowCtx::alone(&mut f.cc), rto_at, CcEvent::Rto);
    f.cc.cwnd = 1;
    let consults = f.ctrl.snapshot().consults;
    // ACKs for segments sent before the RTO: observed, but no consult.
    let t = rto_at + Duration::from_millis(5);
    let old = ack_for(t, ago(rto_at, Duration::from_millis(10)), 30);
    f.ctrl.on_ack(&mut FlowCtx::alone(&mut f.cc), &old);
    f.ctrl.cong_avoid(&mut FlowCtx::alone(&mut f.cc), &old);
    assert_eq!(f.ctrl.snapshot().consults, consults);
    assert_eq!(f.cc.cwnd, 2, "the base (slow start) owned cwnd");
    // A segment first sent after the RTO ends the deferral.
    let t2 = rto_at + Duration::from_millis(40);
    let new = ack_for(t2, rto_at + Duration::from_millis(15), 2);
    f.ctrl.on_ack(&mut FlowCtx::alone(&mut f.cc), &new);
    f.ctrl.cong_avoid(&mut FlowCtx::alone(&mut f.cc), &new);
    assert_eq!(f.ctrl.snapshot().consults, consults + 1);
}

#[test]
fn retransmitted_segments_give_no_observation() {
    let (mut dc, _) = layer(
        1000,
        DelayCorrConfig {
            sampling: false,
            ..Default::default()
        },
    );
    let mut cc = CcState::new(10, 1448);
    let now = Instant::from_secs(1);
    let mut ack = ack_for(now, ago(now, Duration::from_millis(5)), 10);
    ack.newest_acked.as_mut().unwrap().retransmit = true;
    dc.on_ack(&mut FlowCtx::alone(&mut cc), &ack);
    assert_eq!(dc.snapshot().stored, 0);
    assert_eq!(
        dc.snapshot().min_rtt,
        None,
        "ambiguous RTT must not lower min RTT"
    );
    ack.newest_acked = None;
    dc.on_ack(&mut FlowCtx::alone(&mut cc), &ack);
    assert_eq!(dc.snapshot().stored, 0);
    let ack = ack_for(now, ago(now, Duration::from_millis(5)), 10);
    dc.on_ack(&mut FlowCtx::alone(&mut cc), &ack);
    assert_eq!(dc.snapshot().stored, 1);
}

#[test]
fn sampling_keeps_about_w_per_two_cwnd_rounds() {
    let (mut dc, _) = layer(1000, DelayCorrConfig::default());
    let mut cc = CcState::new(320, 1448);
    let n = 20_000u64;
    for i in 0..n {
        let now = Instant::from_millis(1000 + i);
        dc.on_ack(
            &mut FlowCtx::alone(&mut cc),
            &ack_for(now, ago(now, Duration::from_millis(20)), 300),
        );
    }
    // p = 32 / 640 = 1/20 → 1000 expected; binomial σ ≈ 31.
    let stored = dc.snapshot().stored;
    assert!((850..=1150).contains(&stored), "stored {stored}");
    // With the window larger than 2·cwnd every observation is kept.
    cc.cwnd = 16;
    for i in 0..100 {
        let now = Instant::from_millis(100_000 + i);
        dc.on_ack(
            &mut FlowCtx::alone(&mut cc),
            &ack_for(now, ago(now, Duration::from_millis(20)), 16),
        );
    }
    assert_eq!(dc.snapshot().stored, stored + 100);
}

#[test]
fn same_seed_same_trace_and_seed_changes_sampling() {
    let trace = |seed: u64| {
        let cfg = DelayCorrConfig {
            seed,
            ..DelayCorrConfig::default()
        };
        let (dc, _) = layer(10_000, cfg);
        let mut f = fifo(dc, 10, BASE_US, TAU_US);
        f.run(8_000);
        (f.trace, f.ctrl.snapshot())
    };
    let (a, sa) = trace(7);
    let (b, sb) = trace(7);
    assert_eq!(a, b);
    assert_eq!(sa, sb);
    let (c, _) = trace(8);
    assert_ne!(a, c, "the seed has no effect on sampling");
}

#[test]
fn config_validation_rejects_out_of_range_values() {
    let ok = DelayCorrConfig::default();
    assert_eq!(ok.validate(), Ok(()));
    let bad = |f: fn(&mut DelayCorrConfig)| {
        let mut c = DelayCorrConfig::default();
        f(&mut c);
        c.validate()
    };
    assert_eq!(bad(|c| c.window = 1), Err(DelayCorrConfigError::Window(1)));
    assert_eq!(
        bad(|c| c.window = MAX_WINDOW + 1),
        Err(DelayCorrConfigError::Window(MAX_WINDOW + 1))
    );
    assert!(matches!(
        bad(|c| c.threshold = f64::NAN),
        Err(DelayCorrConfigError::Threshold(_))
    ));
    assert!(matches!(
        bad(|c| c.threshold = 0.0),
        Err(DelayCorrConfigError::Threshold(_))
    ));
    assert!(matches!(
        bad(|c| c.threshold = 1.5),
        Err(DelayCorrConfigError::Threshold(_))
    ));
    assert_eq!(
        bad(|c| c.dither_high_shift = 40),
        Err(DelayCorrConfigError::DitherShift(40))
    );
    assert_eq!(bad(|c| c.min_cwnd = 0), Err(DelayCorrConfigError::MinCwnd));
    // `new` sanitizes instead of panicking.
    let wild = DelayCorrConfig {
        window: 0,
        threshold: f64::NAN,
        dither_high_shift: 99,
        min_cwnd: 0,
        ..DelayCorrConfig::default()
    };
    let (dc, _) = layer(10, wild);
    assert_eq!(dc.config().validate(), Ok(()));
    assert_eq!(dc.window().capacity(), 2);
}

#[test]
fn delegates_name_independent_hooks_to_the_base() {
    let (mut dc, calls) = layer(10, DelayCorrConfig::default());
    let mut cc = CcState::new(10, 1448);
    assert_eq!(dc.name(), "dc");
    assert_eq!(
        dc.label(),
        "probe+dc",
        "any base composes, not just the known ones"
    );
    assert_eq!(dc.base().name(), "probe");
    assert_eq!(
        dc.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Loss
        ),
        5
    );
    assert_eq!(dc.undo_cwnd(&mut FlowCtx::alone(&mut cc), 20), 20);
    assert_eq!(dc.pacing_rate(&cc), None);
    let now = Instant::from_secs(1);
    dc.on_ack(
        &mut FlowCtx::alone(&mut cc),
        &ack_for(now, ago(now, Duration::from_millis(3)), 1),
    );
    assert_eq!(calls.on_ack.load(Ordering::Relaxed), 1);
    assert_eq!(calls.ssthresh.load(Ordering::Relaxed), 1);
}

#[test]
fn config_wraps_the_base_controller_only_when_asked() {
    use crate::cc::CcAlgorithm;
    let mut cfg = crate::Config::default();
    assert_eq!(cfg.build_cc(7).label(), "cubic");
    assert_eq!(cfg.cc_name(), "cubic");
    let dc = crate::cc::LayerSpec::DelayCorrelation(DelayCorrConfig::default());
    cfg.congestion.controller = cfg.congestion.controller.with_layer(dc.clone());
    assert_eq!(cfg.build_cc(7).label(), "cubic+dc");
    assert_eq!(cfg.cc_name(), "cubic+dc");
    cfg.congestion.controller = crate::cc::CcSpec::from(CcAlgorithm::Reno).with_layer(dc);
    assert_eq!(cfg.build_cc(7).label(), "reno+dc");
    assert_eq!(cfg.cc_name(), "reno+dc");
}

// ---------------------------------------------------------------------------
// The pipe check (issue 29): a burst below the pipe correlates perfectly but must not
// clamp; a standing queue through the origin still does.

/// Feeds 32 observations on the line `rtt = 20 ms + (x − foot)·100 µs` for
/// x = foot+1 ..= foot+32, after one 20-ms sample that sets the min RTT.
/// τ = 100 µs, so the path holds min_rtt / τ = 200 packets.
fn feed_line(dc: &mut DelayCorrelation, cc: &mut CcState, foot: u32) {
    let t0 = Instant::from_secs(1);
    dc.on_ack(
        &mut FlowCtx::alone(cc),
        &ack_for(t0, ago(t0, Duration::from_millis(20)), 1),
    );
    for i in 1..=32u32 {
        let now = t0 + Duration::from_millis(u64::from(i));
        let x = foot + i;
        let rtt = Duration::from_micros(20_000 + u64::from(x - foot) * 100);
        let ack = ack_for(now, ago(now, rtt), x);
        dc.on_ack(&mut FlowCtx::alone(cc), &ack);
        dc.cong_avoid(&mut FlowCtx::alone(cc), &ack);
    }
}

#[test]
fn a_burst_below_the_pipe_defers_and_algorithm_2_alone_clamps_there() {
    // The line starts at 50 packets in flight: r = 1, estimate 50, but the largest
    // in-flight (82) plus the high dither (10) is far short of the 200-packet pipe.
    let cfg = DelayCorrConfig {
        sampling: false,
        ..Default::default()
    };
    let (mut dc, _) = layer(1000, cfg.clone());
    let mut cc = CcState::new(100, 1448);
    feed_line(&mut dc, &mut cc, 50);
    let s = dc.snapshot();
    assert!(s.r.unwrap() > 0.99);
    assert_eq!(s.clamps, 0, "a burst below the pipe is not bufferbloat");
    assert!(s.short_of_pipe > 0);
    assert_eq!(s.pipe, Some(200));
    // Algorithm 2 as written clamps at the burst's foot: the trap of issue 29.
    let (mut lit, _) = layer(
        1000,
        DelayCorrConfig {
            pipe_check: false,
            ..cfg
        },
    );
    let mut cc = CcState::new(100, 1448);
    feed_line(&mut lit, &mut cc, 50);
    let s = lit.snapshot();
    assert!(s.clamping);
    assert_eq!(s.estimate, Some(50));
}

#[test]
fn a_standing_queue_reaches_the_pipe_and_clamps_at_it() {
    // The same slope with its foot at the pipe (200): a standing queue. The check
    // passes and the estimate is the pipe.
    let (mut dc, _) = layer(
        1000,
        DelayCorrConfig {
            sampling: false,
            ..Default::default()
        },
    );
    let mut cc = CcState::new(300, 1448);
    feed_line(&mut dc, &mut cc, 200);
    let s = dc.snapshot();
    assert!(s.clamping);
    assert_eq!(s.short_of_pipe, 0);
    assert_eq!(s.estimate, Some(200));
    assert_eq!(s.pipe, Some(200));
}

/// Feeds 16 observations of an idle cluster (x = 120..=135 at the 20-ms minimum RTT),
/// then 16 of a queue on Little's line (x = 400..=415, rtt = x·100 µs): the window the
/// 1 Gbit/s run held after a loss (DC-3d), scaled to a 200-packet pipe.
fn feed_idle_then_queued(dc: &mut DelayCorrelation, cc: &mut CcState) {
    let t0 = Instant::from_secs(1);
    let pts = (120..136u32)
        .map(|x| (x, 20_000u64))
        .chain((400..416u32).map(|x| (x, u64::from(x) * 100)));
    for (i, (x, rtt_us)) in pts.enumerate() {
        let now = t0 + Duration::from_millis(i as u64);
        let ack = ack_for(now, ago(now, Duration::from_micros(rtt_us)), x);
        dc.on_ack(&mut FlowCtx::alone(cc), &ack);
        dc.cong_avoid(&mut FlowCtx::alone(cc), &ack);
    }
}

#[test]
fn a_window_mixing_an_idle_and_a_queued_cluster_defers_at_the_centroid() {
    // r ≈ 1 and the largest in-flight (415) passes the slope's pipe (269), but the
    // estimate (127, the idle cluster) plus the high dither is short of Little's law at
    // the centroid (20 ms · Σx/Σy = 176): no clamp.
    let cfg = DelayCorrConfig {
        sampling: false,
        ..Default::default()
    };
    let (mut dc, _) = layer(1000, cfg.clone());
    let mut cc = CcState::new(500, 1448);
    feed_idle_then_queued(&mut dc, &mut cc);
    let s = dc.snapshot();
    assert!(s.r.unwrap() > 0.99);
    assert_eq!(s.pipe, Some(269));
    assert_eq!(s.short_of_pipe, 0);
    assert!(s.off_centroid > 0);
    assert_eq!(
        s.clamps, 0,
        "a foot below the centroid's pipe is not bufferbloat"
    );
    let m = dc.window().moments();
    assert_eq!(m.centroid_pipe(20_000), Some(176));
    // Algorithm 2 as written clamps at the idle cluster.
    let (mut lit, _) = layer(
        1000,
        DelayCorrConfig {
            pipe_check: false,
            ..cfg
        },
    );
    let mut cc = CcState::new(500, 1448);
    feed_idle_then_queued(&mut lit, &mut cc);
    let s = lit.snapshot();
    assert!(s.clamping);
    assert_eq!(s.estimate, Some(127));
}

#[test]
fn on_little_s_line_the_centroid_pipe_is_the_slope_pipe() {
    // Observations y = x·τ exactly: both pipes equal min_rtt / τ.
    let mut w = ObservationWindow::new(32);
    for x in 201..=232u32 {
        w.push(x, x * 100);
    }
    let m = w.moments();
    assert_eq!(m.pipe(20_000), Some(200));
    assert_eq!(m.centroid_pipe(20_000), Some(200));
    assert_eq!(
        ObservationWindow::new(4).moments().centroid_pipe(20_000),
        None
    );
}
