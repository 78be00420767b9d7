//! Scripted ACK streams through the layer around Reno (CWV-1), and the spec's worked
//! example W-9 (CWV-2 loss response, CWV-3 NVP closedown). Windows in segments, MSS
//! 1448 B; pipeACK in bytes.

use super::*;
use crate::cc::reno::Reno;
/// Segment size of the scripted flows.
const MSS: u32 = 1448;

const RTT: Duration = Duration::from_millis(100);

/// An ack-clocked sender in rounds: each round ACKs what the previous one sent, one
/// segment per ACK. A rate-limited application writes its `n` segments for the round
/// when the round's first ACK arrives, so each round is one burst.
struct Flow {
    l: NewCwv,
    cc: CcState,
    now: Instant,
    outstanding: u32,
    /// Most segments outstanding in this round (the connection's `max_packets_out`).
    max_out: u32,
}

impl Flow {
    fn new(iw: u32, ssthresh: u32) -> Self {
        let mut cc = CcState::new(iw, MSS);
        cc.ssthresh = ssthresh;
        cc.srtt = RTT;
        let mut l = NewCwv::new(Box::new(Reno), NewCwvConfig::default());
        CongestionControl::init(&mut l, &mut FlowCtx::alone(&mut cc), Instant::ZERO);
        Flow {
            l,
            cc,
            now: Instant::ZERO,
            outstanding: 0,
            max_out: 0,
        }
    }

    fn send(&mut self, n: u32) {
        for _ in 0..n {
            let info = SentInfo {
                sent_at: self.now,
                bytes: MSS,
                in_flight_at_send: self.outstanding + 1,
                delivered_at_send: 0,
                app_limited: false,
                retransmit: false,
                ..Default::default()
            };
            self.outstanding += 1;
            self.max_out = self.max_out.max(self.outstanding);
            self.cc.in_flight = self.outstanding;
            CongestionControl::on_sent(&mut self.l, &mut FlowCtx::alone(&mut self.cc), &info);
        }
    }

    fn ack_one(&mut self) {
        let ack = AckSample {
            now: self.now,
            acked_segs: 1,
            acked_bytes: u64::from(MSS),
            rtt: Some(RTT),
            newest_acked: None,
            prior_in_flight: self.outstanding,
            ece: false,
            ..Default::default()
        };
        self.outstanding -= 1;
        self.cc.in_flight = self.outstanding;
        // The connection's `refresh_cc_state`: Linux's slow-start allowance for the
        // base; `cwnd_blocked`, the strict test the layer reads, is set by the test.
        self.cc.cwnd_limited =
            self.cc.cwnd_blocked || (self.cc.in_slow_start() && self.cc.cwnd < 2 * self.max_out);
        CongestionControl::on_ack(&mut self.l, &mut FlowCtx::alone(&mut self.cc), &ack);
        if !self.l.in_recovery {
            CongestionControl::cong_avoid(&mut self.l, &mut FlowCtx::alone(&mut self.cc), &ack);
        }
    }

    /// One round: ACK everything outstanding, sending `n` new segments on the way.
    fn round(&mut self, n: u32) {
        self.now += RTT;
        self.max_out = self.outstanding;
        let k = self.outstanding.max(1);
        if self.outstanding == 0 {
            self.send(n);
            return;
        }
        for i in 1..=k {
            self.ack_one();
            if i == 1 {
                self.send(n);
            }
        }
    }

    fn pipeack_segs(&self) -> Option<u64> {
        self.l.pipeack(self.now).map(|b| b / u64::from(MSS))
    }

    fn loss(&mut self, prior_in_flight: u32) -> u32 {
        self.l.prior_in_flight = prior_in_flight;
        let ss = CongestionControl::ssthresh(
            &mut self.l,
            &mut FlowCtx::alone(&mut self.cc),
            self.now,
            CongestionCause::Loss,
        )
        .max(2);
        self.cc.ssthresh = ss;
        CongestionControl::on_event(
            &mut self.l,
            &mut FlowCtx::alone(&mut self.cc),
            self.now,
            CcEvent::EnterRecovery,
        );
        ss
    }

    fn retransmit(&mut self, n: u32) {
        for _ in 0..n {
            let info = SentInfo {
                sent_at: self.now,
                bytes: MSS,
                in_flight_at_send: self.outstanding + 1,
                delivered_at_send: 0,
                app_limited: false,
                retransmit: true,
                ..Default::default()
            };
            CongestionControl::on_sent(&mut self.l, &mut FlowCtx::alone(&mut self.cc), &info);
        }
    }

    /// The connection's `exit_recovery`: cwnd = ssthresh, then the event.
    fn exit_recovery(&mut self) {
        self.cc.cwnd = self.cc.ssthresh;
        CongestionControl::on_event(
            &mut self.l,
            &mut FlowCtx::alone(&mut self.cc),
            self.now,
            CcEvent::ExitRecovery,
        );
    }

    /// A flow sending `per_round` segments per round; after two rounds (pipeACK
    /// still undefined, so the base may grow cwnd) cwnd is set to `cwnd`, then two
    /// more rounds leave it non-validated when `per_round < cwnd/2`.
    fn rate_limited(cwnd: u32, ssthresh: u32, iw: u32, per_round: u32) -> Self {
        let mut f = Flow::new(iw, ssthresh);
        f.send(per_round);
        f.round(per_round);
        f.round(per_round);
        f.cc.cwnd = cwnd;
        f.round(per_round);
        f.round(per_round);
        f
    }
}

pub fn starts_validated_with_pipeack_undefined_and_skips_the_first_round() {
    let mut f = Flow::new(10, u32::MAX);
    assert!(f.l.is_validated());
    assert_eq!(f.l.pipeack(f.now), None);
    f.send(10);
    f.cc.cwnd_blocked = true;
    f.round(20); // the first flight (the IW) is acknowledged: no sample yet
    assert_eq!(f.l.diag().samples, 0);
    assert_eq!(f.l.pipeack(f.now), None);
    assert!(f.l.is_validated());
    assert_eq!(f.cc.cwnd, 20);
    f.round(40); // the first sample: the 20 segments of the second round
    assert_eq!(f.l.diag().samples, 1);
    assert_eq!(f.pipeack_segs(), Some(20));
}

pub fn enters_non_validated_below_half_cwnd_and_stops_growing_unless_cwnd_limited() {
    // Slow start (ssthresh ∞) would double cwnd each round; a sender using 6 of 20
    // segments is rate-limited.
    let mut f = Flow::rate_limited(20, u32::MAX, 10, 6);
    assert_eq!(f.pipeack_segs(), Some(6));
    assert!(!f.l.is_validated());
    assert_eq!(
        f.cc.cwnd, 20,
        "no growth while non-validated and not cwnd-limited"
    );
    assert!(f.l.diag().growth_withheld > 0);
    // pipeACK = 10 = ½·cwnd is validated (spec C1: "≥").
    f.round(10);
    f.round(10);
    assert_eq!(f.pipeack_segs(), Some(10));
    // On the ACK whose sample made pipeACK 10 the phase was validated and slow start
    // grew cwnd by one; 2·10 < 21 then makes it non-validated again.
    assert_eq!(f.cc.cwnd, 21);
    assert!(!f.l.is_validated());
}

pub fn cwnd_limited_sender_may_grow_while_non_validated() {
    let mut f = Flow::rate_limited(20, u32::MAX, 10, 6);
    assert!(!f.l.is_validated());
    f.cc.cwnd_blocked = true;
    f.round(6);
    assert_eq!(f.cc.cwnd, 26, "slow start: +1 per ACKed segment");
}

pub fn cwnd_is_kept_across_idle_and_the_phase_begins_when_the_bins_age_out() {
    // A validated flow goes idle: after the Sampling Period (max(3·SRTT, 1 s) = 1 s)
    // pipeACK counts as 0 and the non-validated phase is dated from the expiry.
    let mut f = Flow::new(20, 20);
    f.send(20);
    f.round(20);
    f.round(20);
    f.round(0);
    assert!(f.l.is_validated());
    let last_sample = f.now;
    assert_eq!(f.pipeack_segs(), Some(20));
    assert_eq!(f.cc.cwnd, 20);
    f.now += Duration::from_secs(30);
    f.send(1); // new data after 30 s of idle
    assert!(!f.l.is_validated());
    assert_eq!(f.pipeack_segs(), Some(0));
    let since = f.l.non_validated_since().unwrap();
    assert!(since > last_sample && since <= last_sample + Duration::from_secs(1));
    assert_eq!(f.cc.cwnd, 20, "the layer never shrinks cwnd for idleness");
}

/// W-9, first part (CWV-2): cwnd 20, pipeACK 6, LossFlightSize 8: recovery cwnd 4;
/// R = 2 → exit cwnd 3, ssthresh 3, pipeACK undefined (RFC 5681 alone gives 4).
pub fn w9_loss_in_the_non_validated_phase() {
    let mut f = Flow::rate_limited(20, u32::MAX, 10, 6);
    assert_eq!((f.cc.cwnd, f.pipeack_segs()), (20, Some(6)));
    assert!(!f.l.is_validated());
    let ss = f.loss(8);
    assert_eq!(ss, 4, "max(6, 8)/2");
    f.cc.cwnd = ss; // PRR's target for the recovery period
                    // Not updated during recovery: ACKs arrive, no sample is taken.
    let samples = f.l.diag().samples;
    f.retransmit(2);
    f.now += RTT;
    for _ in 0..6 {
        f.ack_one();
    }
    assert_eq!(f.l.diag().samples, samples);
    assert_eq!(f.pipeack_segs(), Some(6));
    f.exit_recovery();
    assert_eq!((f.cc.cwnd, f.cc.ssthresh), (3, 3), "(8 − 2)/2");
    assert_eq!(f.l.pipeack(f.now), None, "pipeACK undefined after recovery");
    assert!(f.l.is_validated());
    assert_eq!(f.l.diag().loss_responses, 1);
}

pub fn loss_in_the_validated_phase_is_the_base_controllers() {
    let mut f = Flow::new(20, 20);
    f.send(20);
    for _ in 0..3 {
        f.round(20);
    }
    assert!(f.l.is_validated());
    let ss = f.loss(20);
    assert_eq!(ss, 10, "Reno: cwnd/2");
    f.exit_recovery();
    assert_eq!((f.cc.cwnd, f.cc.ssthresh), (10, 10));
    assert_eq!(f.l.pipeack(f.now), None);
}

pub fn the_loss_cwnd_never_falls_below_one_segment() {
    let mut f = Flow::rate_limited(20, u32::MAX, 10, 1);
    assert!(!f.l.is_validated(), "{:?}", f.l.diag());
    f.loss(1);
    f.retransmit(3);
    f.exit_recovery();
    assert_eq!((f.cc.cwnd, f.cc.ssthresh), (1, 1));
}

pub fn an_rto_exits_the_non_validated_phase_and_undefines_pipeack() {
    let mut f = Flow::rate_limited(20, u32::MAX, 10, 6);
    assert!(!f.l.is_validated());
    let ss = CongestionControl::ssthresh(
        &mut f.l,
        &mut FlowCtx::alone(&mut f.cc),
        f.now,
        CongestionCause::Rto,
    );
    assert_eq!(ss, 10, "RFC 5681: the base's answer");
    CongestionControl::on_event(
        &mut f.l,
        &mut FlowCtx::alone(&mut f.cc),
        f.now,
        CcEvent::Rto,
    );
    assert!(f.l.is_validated());
    assert_eq!(f.l.pipeack(f.now), None);
}

pub fn an_undone_recovery_keeps_the_restored_window() {
    let mut f = Flow::rate_limited(20, u32::MAX, 10, 6);
    f.loss(8);
    CongestionControl::on_event(
        &mut f.l,
        &mut FlowCtx::alone(&mut f.cc),
        f.now,
        CcEvent::Undo,
    );
    f.cc.cwnd = 20; // the connection's undo
    CongestionControl::on_event(
        &mut f.l,
        &mut FlowCtx::alone(&mut f.cc),
        f.now,
        CcEvent::ExitRecovery,
    );
    assert_eq!(f.cc.cwnd, 20);
}

/// W-9, second part (CWV-3): cwnd 20, ssthresh 10, IW 10, non-validated for 300 s →
/// ssthresh 15, cwnd 10; at 600 s two reductions have been applied.
pub fn w9_nvp_closedown_one_reduction_per_elapsed_nvp() {
    let mut f = Flow::rate_limited(20, 10, 10, 6);
    assert!(!f.l.is_validated());
    assert_eq!((f.cc.cwnd, f.cc.ssthresh), (20, 10));
    let t0 = f.l.non_validated_since().unwrap();
    f.now = t0 + (Duration::from_secs(300) - Duration::from_nanos(1));
    f.send(1);
    assert_eq!(
        (f.cc.cwnd, f.cc.ssthresh, f.l.diag().nvp_reductions),
        (20, 10, 0)
    );
    f.now = t0 + Duration::from_secs(300);
    f.send(1);
    assert_eq!(
        (f.cc.cwnd, f.cc.ssthresh),
        (10, 15),
        "max(10, ¾·20), max(½·20, IW)"
    );
    assert_eq!(f.l.diag().nvp_reductions, 1);
    f.now = t0 + Duration::from_secs(600);
    f.send(1);
    assert_eq!(f.l.diag().nvp_reductions, 2);
    assert_eq!((f.cc.cwnd, f.cc.ssthresh), (10, 15), "cwnd at IW stays");

    // Fast-forwarded in one step: both reductions at once.
    let mut g = Flow::rate_limited(40, 10, 10, 6);
    let t0 = g.l.non_validated_since().unwrap();
    g.now = t0 + Duration::from_secs(600);
    g.send(1);
    assert_eq!(g.l.diag().nvp_reductions, 2);
    // 40 → ssthresh 30, cwnd 20 → ssthresh max(30, 15) = 30, cwnd max(10, IW) = 10.
    assert_eq!((g.cc.cwnd, g.cc.ssthresh), (10, 30));
    assert_eq!(
        g.l.non_validated_since(),
        Some(t0 + Duration::from_secs(600))
    );
}

pub fn the_filter_keeps_the_maximum_over_five_bins_of_the_sampling_period() {
    let mut p = PipeAckFilter::default();
    assert_eq!(p.value(Instant::ZERO), None);
    let srtt = Duration::from_millis(500); // period = max(1.5 s, 1 s) = 1.5 s, bins 300 ms
    let t = |ms| Instant::from_millis(ms);
    p.push(t(0), 5, srtt);
    p.push(t(100), 9, srtt); // same bin
    p.push(t(400), 3, srtt);
    p.push(t(800), 4, srtt);
    assert_eq!(p.value(t(1000)), Some(9));
    assert_eq!(p.value(t(1499)), Some(9));
    assert_eq!(p.value(t(1500)), Some(4), "the first bin aged out");
    assert_eq!(p.value(t(2300)), Some(0), "all aged out: 0, not undefined");
    for i in 0..20 {
        p.push(t(3000 + 300 * i), i, srtt);
    }
    assert_eq!(p.value(t(3000 + 300 * 19)), Some(19));
    assert_eq!(p.bins.iter().flatten().count(), BINS);
    p.reset();
    assert_eq!(p.value(t(9000)), None);
}

/// CWV-1: the phase transitions on scripted ACK streams. Panics on a failure.
pub fn cwv1() -> String {
    starts_validated_with_pipeack_undefined_and_skips_the_first_round();
    enters_non_validated_below_half_cwnd_and_stops_growing_unless_cwnd_limited();
    cwnd_limited_sender_may_grow_while_non_validated();
    cwnd_is_kept_across_idle_and_the_phase_begins_when_the_bins_age_out();
    an_rto_exits_the_non_validated_phase_and_undefines_pipeack();
    the_filter_keeps_the_maximum_over_five_bins_of_the_sampling_period();
    "validated with pipeACK undefined at start; non-validated below cwnd/2, no growth unless cwnd-limited, cwnd kept over idle; RTO undefines pipeACK; 5-bin max filter".into()
}

/// CWV-2: W-9's loss response in the non-validated phase. Panics on a failure.
pub fn cwv2() -> String {
    w9_loss_in_the_non_validated_phase();
    loss_in_the_validated_phase_is_the_base_controllers();
    the_loss_cwnd_never_falls_below_one_segment();
    an_undone_recovery_keeps_the_restored_window();
    "W-9: cwnd 20, pipeACK 6, LossFlightSize 8 → recovery cwnd 4, exit cwnd 3 = ssthresh, pipeACK undefined; never below 1 MSS".into()
}

/// CWV-3: W-9's NVP closedown. Panics on a failure.
pub fn cwv3() -> String {
    w9_nvp_closedown_one_reduction_per_elapsed_nvp();
    "W-9: cwnd 20, ssthresh 10, IW 10, non-validated 300 s → ssthresh 15, cwnd 10; two reductions at 600 s".into()
}
