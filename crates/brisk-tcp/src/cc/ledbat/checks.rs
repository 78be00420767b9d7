//! LEDBAT's controller rule (RFC 6817 §2.4.2) checked on scripted ACK rounds: with a
//! fixed queuing delay q, each RTT of ACKs moves cwnd by GAIN·(TARGET − q)/TARGET
//! segments, capped at flightsize + ALLOWED_INCREASE and floored at MIN_CWND; the
//! RFC's MUSTs (TARGET ≤ 100 ms, GAIN ≤ 1) are refused otherwise. The unit tests and
//! `brisk repro ledbat` (row LEDBAT-X2, through [`gain`]) run the same functions.

use super::{Ledbat, LedbatConfig};
use crate::cc::{AckSample, CcState, CongestionControl, FlowCtx};
use brisk_time::{Duration, Instant};

const MSS: u32 = 1448;
const BASE: Duration = Duration::from_millis(40);

/// A LEDBAT sender fed whole rounds of ACKs at a fixed RTT.
struct Rounds {
    l: Ledbat,
    cc: CcState,
    now: Instant,
}

impl Rounds {
    fn new(cfg: LedbatConfig, cwnd: u32) -> Self {
        let mut cc = CcState::new(cwnd, MSS);
        cc.cwnd_limited = true;
        let mut l = Ledbat::new(cfg);
        l.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        let mut r = Rounds {
            l,
            cc,
            now: Instant::ZERO,
        };
        // One sample at the bare path delay: the base-delay minimum.
        r.ack(BASE, cwnd);
        r
    }

    /// One ACK of one segment with RTT `rtt`, `flight` segments in flight before it.
    fn ack(&mut self, rtt: Duration, flight: u32) {
        let a = AckSample {
            now: self.now,
            acked_segs: 1,
            acked_bytes: u64::from(MSS),
            rtt: Some(rtt),
            prior_in_flight: flight,
            ..AckSample::default()
        };
        self.l.on_ack(&mut FlowCtx::alone(&mut self.cc), &a);
        self.l.cong_avoid(&mut FlowCtx::alone(&mut self.cc), &a);
    }

    /// One RTT: a full window of ACKs, each at RTT base + q. The sender refills to
    /// cwnd after every ACK (ACK clocking), so each ACK finds cwnd in flight.
    fn round(&mut self, q: Duration) {
        self.now += BASE + q;
        for _ in 0..self.cc.cwnd {
            let flight = self.cc.cwnd;
            self.ack(BASE + q, flight);
        }
    }
}

/// Per RTT, cwnd moves by GAIN·off_target (within the one segment cwnd's flooring
/// hides), for several GAINs and queuing delays below, at and above TARGET.
/// Returns the measured changes per RTT.
pub fn growth_per_rtt_is_gain_times_off_target() -> Vec<(f64, u64, f64)> {
    let mut out = Vec::new();
    for (gain, q_ms) in [
        (1.0, 0u64),
        (1.0, 50),
        (1.0, 100),
        (1.0, 150),
        (0.5, 0),
        (0.5, 50),
        (0.25, 200),
    ] {
        let cfg = LedbatConfig {
            gain,
            ..LedbatConfig::default()
        };
        let q = Duration::from_millis(q_ms);
        let mut r = Rounds::new(cfg, 60);
        // The current filter (4 samples) fills with base + q in the first round.
        r.round(q);
        assert_eq!(
            r.l.queuing_delay(),
            Some(q),
            "queuing delay = filter − base"
        );
        let start = r.cc.cwnd;
        let rounds = 20;
        for _ in 0..rounds {
            r.round(q);
        }
        let off = (100.0 - q_ms as f64) / 100.0;
        let want = f64::from(rounds) * gain * off;
        let got = f64::from(r.cc.cwnd) - f64::from(start);
        assert!(
            (got - want).abs() <= 1.0,
            "GAIN {gain}, q {q_ms} ms: cwnd {start} → {} over {rounds} RTTs, want {want:+}",
            r.cc.cwnd
        );
        out.push((gain, q_ms, got / f64::from(rounds)));
    }
    out
}

/// cwnd ≤ flightsize + ALLOWED_INCREASE (an application-limited flight caps it) and
/// ≥ MIN_CWND (a queue far above TARGET drives it down to 2, not below).
pub fn allowed_increase_and_min_cwnd_bound_cwnd() {
    let mut r = Rounds::new(LedbatConfig::default(), 40);
    r.ack(BASE, 5);
    assert_eq!(r.cc.cwnd, 6, "flight 5 + ALLOWED_INCREASE 1");
    let mut r = Rounds::new(LedbatConfig::default(), 20);
    for _ in 0..200 {
        r.round(Duration::from_millis(300));
    }
    assert_eq!(r.cc.cwnd, 2, "MIN_CWND");
}

/// TARGET "MUST be 100 ms or less", GAIN "MUST be 1 or less": refused by name.
pub fn the_rfc_musts_are_enforced() {
    let c = LedbatConfig {
        target: Duration::from_millis(101),
        ..LedbatConfig::default()
    };
    assert_eq!(c.validate().unwrap_err().0, "target");
    let c = LedbatConfig {
        gain: 1.01,
        ..LedbatConfig::default()
    };
    assert_eq!(c.validate().unwrap_err().0, "gain");
    let d = LedbatConfig::default();
    assert_eq!((d.target, d.gain), (Duration::from_millis(100), 1.0));
    assert!(d.validate().is_ok());
}

/// LEDBAT-X2: the checks above; panics on a failure, returns what it measured.
pub fn gain() -> String {
    let g = growth_per_rtt_is_gain_times_off_target();
    allowed_increase_and_min_cwnd_bound_cwnd();
    the_rfc_musts_are_enforced();
    let rows: Vec<String> = g
        .iter()
        .map(|(gain, q, d)| format!("GAIN {gain}, q {q} ms: {d:+.2}/RTT"))
        .collect();
    format!(
        "cwnd change per RTT = GAIN·(TARGET − q)/TARGET, TARGET 100 ms, within one segment over 20 RTTs: {}; cwnd ≤ flight + 1; floor MIN_CWND 2; TARGET > 100 ms and GAIN > 1 refused",
        rows.join("; ")
    )
}
