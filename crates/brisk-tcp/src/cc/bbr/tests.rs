//! BBR against hand-computed Linux values and a scripted fixed-rate pipe.

use super::*;

#[test]
fn constants_are_linux_fixed_point() {
    assert_eq!(HIGH_GAIN, 739);
    assert_eq!(DRAIN_GAIN, 88);
    assert_eq!(CWND_GAIN, 512);
    assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
    assert_eq!(FULL_BW_THRESH, 320);
}

#[test]
fn rates_and_bdp_in_linux_units() {
    // 1 packet per 100 µs = 10 000 pkt/s: bw = 2^24 / 100 = 167 772 (truncated).
    let bw = (BW_UNIT / 100) as u32;
    assert_eq!(bw, 167_772);
    // In bytes/s at mss 1000 and gain 1: ~10 MB/s less the 1 % margin.
    assert_eq!(
        Bbr::rate_bytes_per_sec(1000, u64::from(bw), BBR_UNIT),
        9_899_990
    );
    let mut b = Bbr::new(1);
    // No min RTT yet: TCP_INIT_CWND.
    assert_eq!(b.bdp(bw, BBR_UNIT), 10);
    // 20 ms min RTT: 200 packets (rounded up: 167 772 · 20 000 / 2^24 = 199.99...).
    b.min_rtt_us = 20_000;
    assert_eq!(b.bdp(bw, BBR_UNIT), 200);
    assert_eq!(b.bdp(bw, CWND_GAIN), 400);
    // Quantization budget at a 9.9 MB/s pacing rate: 9 667 B per ms = 6 segments
    // of 1448; cwnd + 3 · 6, rounded up to even.
    b.pacing_rate = 9_899_990;
    assert_eq!(b.tso_segs_goal(1448), 6);
    assert_eq!(b.quantization_budget(201, 1448), 220);
    // Slow pacing: single-segment bursts (bbr_min_tso_segs).
    b.pacing_rate = 100_000;
    assert_eq!(b.tso_segs_goal(1448), 1);
}

/// A sender over a fixed-rate pipe: `rate` packets per ms, `rtt_ms` base RTT, no
/// queue model beyond "inflight above the BDP waits": each ms, the pipe delivers
/// `rate` packets if that many are in flight, ACKed one base RTT after sending.
struct Pipe {
    bbr: Bbr,
    cc: CcState,
    now: Instant,
    rate: u32,
    rtt_ms: u64,
    /// Per packet in flight: (sent at, delivered at send, delivered_mstamp at send,
    /// first_tx at send, app-limited at send).
    flight: std::collections::VecDeque<crate::sent::SentInfo>,
    /// When the pipe may deliver the next packet.
    next_free: Instant,
    /// Bytes the pacing rate allows to send now (BBR paces: without it DRAIN
    /// never drains).
    pace_credit: u64,
}

impl Pipe {
    fn new(rate: u32, rtt_ms: u64) -> Self {
        let mut cc = CcState::new(10, 1448);
        let mut bbr = Bbr::new(7);
        let now = Instant::from_millis(1);
        bbr.init(&mut FlowCtx::alone(&mut cc), now);
        Pipe {
            bbr,
            cc,
            now,
            rate,
            rtt_ms,
            flight: Default::default(),
            next_free: now,
            pace_credit: 0,
        }
    }

    /// Run for `ms` milliseconds in 1 ms steps: send up to cwnd, deliver at the
    /// pipe's rate, ACK one base RTT later (queueing adds to it).
    fn run(&mut self, ms: u64) {
        for _ in 0..ms {
            // Send what cwnd and the pacing rate allow (at most 1 ms of credit).
            let per_ms = self.bbr.pacing_rate / 1000;
            self.pace_credit = (self.pace_credit + per_ms).min(per_ms.max(1448));
            while (self.flight.len() as u32) < self.cc.cwnd && self.pace_credit >= 1448 {
                self.pace_credit -= 1448;
                let packets_out = self.flight.len() as u32;
                let snap = crate::rate::on_send(&mut self.cc.rate, self.now, packets_out);
                self.flight.push_back(crate::sent::SentInfo {
                    sent_at: self.now,
                    bytes: 1448,
                    in_flight_at_send: packets_out + 1,
                    delivered_at_send: self.cc.delivered,
                    first_tx_us: snap.first_tx_us,
                    delivered_us: snap.delivered_us,
                    rate_app_limited: snap.app_limited,
                    ..Default::default()
                });
            }
            // The packets whose ACK arrives now: served at `rate` per ms after a
            // one-way delay, ACKed after the other half of the RTT.
            let mut acked = Vec::new();
            for _ in 0..self.rate {
                let Some(front) = self.flight.front() else {
                    break;
                };
                let served = front.sent_at.max(self.next_free);
                let ack_at = served + Duration::from_millis(self.rtt_ms);
                if ack_at > self.now {
                    break;
                }
                self.next_free = served + Duration::from_micros(1000 / u64::from(self.rate));
                acked.push(self.flight.pop_front().unwrap());
            }
            if !acked.is_empty() {
                let prior_in_flight = self.flight.len() as u32 + acked.len() as u32;
                self.cc.delivered += acked.len() as u64;
                self.cc.in_flight = self.flight.len() as u32;
                let newest = acked.last().unwrap();
                let rtt = self.now - newest.sent_at;
                if self.cc.min_rtt.is_zero() || rtt < self.cc.min_rtt {
                    self.cc.min_rtt = rtt;
                }
                self.cc.srtt = rtt;
                let rs = crate::rate::generate(
                    &mut self.cc.rate,
                    self.cc.delivered,
                    self.now,
                    self.cc.min_rtt,
                    crate::rate::AckDelivery {
                        newest: Some(newest),
                        acked_sacked: acked.len() as u32,
                        prior_in_flight,
                        rtt: Some(rtt),
                        ..Default::default()
                    },
                );
                let ack = AckSample {
                    now: self.now,
                    acked_segs: acked.len() as u32,
                    rate: rs,
                    ..Default::default()
                };
                self.bbr
                    .cong_control(&mut FlowCtx::alone(&mut self.cc), &ack);
            }
            self.now += Duration::from_millis(1);
        }
    }
}

#[test]
fn startup_fills_the_pipe_then_drains_and_probes() {
    // 10 packets per ms, 20 ms: a BDP of 200 packets.
    let mut p = Pipe::new(10, 20);
    p.run(2000);
    let d = match p.bbr.diagnostics() {
        Some(super::super::CcDiagnostics::Bbr(d)) => d,
        other => panic!("{other:?}"),
    };
    assert!(d.full_bw_reached, "{d:?}");
    assert_eq!(d.mode, Mode::ProbeBw, "{d:?}");
    // The estimate is the pipe's rate: 10 packets/ms = 14.48 MB/s.
    let want = 14_480_000.0;
    let got = d.bw_bytes_per_sec as f64;
    assert!((got - want).abs() / want < 0.05, "bw {got} vs {want}");
    // min RTT is the base RTT; cwnd about 2 BDP plus the budget.
    assert_eq!(d.min_rtt_us, 20_000);
    assert!(p.cc.cwnd >= 400 && p.cc.cwnd <= 460, "cwnd {}", p.cc.cwnd);
    assert!(p.cc.ssthresh < u32::MAX, "DRAIN sets ssthresh");
}

#[test]
fn probe_rtt_every_ten_seconds_at_four_packets() {
    let mut p = Pipe::new(10, 20);
    p.run(2_000);
    // The path's delay grows by 1 ms (a route change): no sample matches the
    // 20 ms minimum again, so the filter expires 10 s after the last one. (On this
    // queue-free pipe the drain phase otherwise re-measures the minimum exactly and
    // the filter never expires, as in Linux.) Once PROBE_RTT has re-measured it,
    // the delay grows again.
    p.rtt_ms = 21;
    let mut entries = Vec::new();
    let mut exits = Vec::new();
    let mut was = p.bbr.mode;
    for _ in 0..22_000u64 {
        p.run(1);
        let m = p.bbr.mode;
        if m == Mode::ProbeRtt {
            assert!(p.cc.cwnd <= 4, "cwnd {} in PROBE_RTT", p.cc.cwnd);
        }
        if m == Mode::ProbeRtt && was != Mode::ProbeRtt {
            entries.push(p.now);
        }
        if m != Mode::ProbeRtt && was == Mode::ProbeRtt {
            exits.push(p.now);
            assert_eq!(m, Mode::ProbeBw);
            p.rtt_ms += 1;
        }
        was = m;
    }
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert_eq!(exits.len(), 2, "{exits:?}");
    // First: 10 s after the last 20 ms sample (within the first 2 s).
    let first = entries[0].as_micros() / 1000;
    assert!(
        (10_000..12_100).contains(&first),
        "first PROBE_RTT at {first} ms"
    );
    // Then every 10 s: the exit restarts the filter's clock.
    let gap = entries[1] - exits[0];
    assert!(
        gap >= Duration::from_secs(10) && gap < Duration::from_millis(10_100),
        "{gap:?}"
    );
    for (e, x) in entries.iter().zip(&exits) {
        let held = *x - *e;
        // At least 200 ms at 4 packets, plus draining to 4 and a round.
        assert!(
            held >= Duration::from_millis(200) && held < Duration::from_millis(400),
            "{held:?}"
        );
    }
    // The minimum is the delay PROBE_RTT measured last; cwnd is back near 2 BDP.
    assert_eq!(p.bbr.min_rtt_us, 22_000);
    assert_eq!(p.bbr.probe_rtt_count, 2);
    assert!(p.cc.cwnd > 200, "cwnd {}", p.cc.cwnd);
}

#[test]
fn full_pipe_needs_three_rounds_without_quarter_growth() {
    let mut b = Bbr::new(3);
    let mut cc = CcState::new(10, 1448);
    b.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
    let rs = RateSample::default();
    b.bw.reset(0, 1000);
    b.round_start = true;
    // Round 1: 1000 >= 0 · 1.25: a new full_bw.
    b.check_full_bw_reached(&rs);
    assert_eq!((b.full_bw, b.full_bw_cnt), (1000, 0));
    // 1240 < 1250: no growth, three times.
    b.bw.reset(1, 1240);
    for i in 1..=3 {
        b.check_full_bw_reached(&rs);
        assert_eq!(b.full_bw_cnt, i);
    }
    assert!(b.full_bw_reached);
    // App-limited rounds do not count.
    let mut b2 = Bbr::new(3);
    b2.round_start = true;
    b2.full_bw = 1000;
    b2.bw.reset(0, 1000);
    let app = RateSample {
        is_app_limited: true,
        ..RateSample::default()
    };
    b2.check_full_bw_reached(&app);
    assert_eq!(b2.full_bw_cnt, 0);
}

#[test]
fn a_policer_is_found_from_two_consistent_lossy_intervals() {
    let mut b = Bbr::new(5);
    let mut cc = CcState::new(10, 1448);
    b.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
    b.mode = Mode::ProbeBw;
    let lossy = RateSample {
        losses: 1,
        delivered: 10,
        interval_us: 10_000,
        ..RateSample::default()
    };
    // Interval 1: from the first loss, 4 rounds, 100 delivered and 30 lost (over
    // 50/256) in 100 ms: 1 packet/ms.
    let mut t = 0u64;
    let mut step = |b: &mut Bbr, cc: &mut CcState, delivered: u64, lost: u64| {
        t += 25;
        cc.delivered += delivered;
        cc.rate.lost += lost;
        cc.rate.delivered_mstamp = Instant::from_millis(t);
        b.round_start = true;
        b.lt_bw_sampling(cc, &lossy);
    };
    step(&mut b, &mut cc, 0, 0); // starts sampling at t=25
    for _ in 0..4 {
        step(&mut b, &mut cc, 25, 8);
    }
    assert!(!b.lt_use_bw);
    assert_ne!(b.lt_bw, 0, "interval 1 done");
    let first = b.lt_bw;
    // Interval 2 at the same rate: policed.
    for _ in 0..4 {
        step(&mut b, &mut cc, 25, 8);
    }
    assert!(b.lt_use_bw);
    assert!(b.lt_bw.abs_diff(first) * 8 <= first);
    assert_eq!(b.bw(), b.lt_bw);
    // 48 rounds later it gives the long-term rate up.
    for _ in 0..48 {
        b.round_start = true;
        b.lt_bw_sampling(&cc, &lossy);
    }
    assert!(!b.lt_use_bw);
}

#[test]
fn recovery_conserves_packets_then_restores_cwnd() {
    let mut b = Bbr::new(9);
    let mut cc = CcState::new(100, 1448);
    b.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
    b.min_rtt_us = 10_000;
    b.bw.reset(0, (BW_UNIT / 100) as u32);
    b.full_bw_reached = true;
    b.mode = Mode::ProbeBw;
    // Loss: ssthresh saves cwnd 100; recovery starts.
    let ss = b.ssthresh(
        &mut FlowCtx::alone(&mut cc),
        Instant::ZERO,
        CongestionCause::Loss,
    );
    assert_eq!(ss, u32::MAX);
    assert_eq!(b.prior_cwnd, 100);
    b.on_event(
        &mut FlowCtx::alone(&mut cc),
        Instant::ZERO,
        CcEvent::EnterRecovery,
    );
    // First ACK in recovery: 2 delivered, 3 marked lost, 60 left in flight:
    // cwnd = in_flight + acked = 62.
    cc.in_flight = 60;
    let rs = RateSample {
        losses: 3,
        acked_sacked: 2,
        ..RateSample::default()
    };
    b.set_cwnd(&mut cc, &rs, 2, b.bw(), CWND_GAIN);
    assert_eq!(cc.cwnd, 62);
    assert!(b.packet_conservation);
    // Recovery ends: the saved 100 is back.
    b.on_event(
        &mut FlowCtx::alone(&mut cc),
        Instant::ZERO,
        CcEvent::ExitRecovery,
    );
    b.packet_conservation = false;
    let rs = RateSample {
        acked_sacked: 1,
        ..RateSample::default()
    };
    b.set_cwnd(&mut cc, &rs, 1, b.bw(), CWND_GAIN);
    assert!(cc.cwnd >= 100, "cwnd {}", cc.cwnd);
}
