use super::*;
use crate::cc::testmodel::{PathSender, MSS};
use crate::cc::CcState;
use crate::sent::SentInfo;
use std::collections::VecDeque;

const MS: fn(u64) -> Duration = Duration::from_millis;

/// One flow on the shared test path (`testmodel.rs`): LEDBAT holds the queue at
/// TARGET. 40 ms base RTT, 1 ms per segment; the RTT settles at base + TARGET.
#[test]
fn one_flow_holds_the_queue_at_target() {
    for (target, base_ms) in [(100, 40), (25, 40), (100, 10), (60, 80)] {
        let cfg = LedbatConfig {
            target: MS(target),
            ..LedbatConfig::default()
        };
        let mut s = PathSender::new(Ledbat::new(cfg), 2, u32::MAX, MS(base_ms), MS(1));
        s.run(60_000);
        let rtt = s.mean_rtt_us(5_000) as f64 / 1000.0;
        let want = (base_ms + target) as f64;
        assert!(
            (rtt - want).abs() <= 0.05 * want,
            "target {target} ms, base {base_ms} ms: mean RTT {rtt} ms, want ≈ {want}"
        );
        assert_eq!(s.ctrl.base_delay(), Some(MS(base_ms)));
    }
}

/// Growth is at most ALLOWED_INCREASE above the flight, and never faster than one
/// segment per RTT (GAIN 1, off_target ≤ 1).
#[test]
fn growth_is_at_most_one_segment_per_rtt() {
    let mut s = PathSender::new(Ledbat::default(), 2, u32::MAX, MS(40), Duration::ZERO);
    let mut prev = s.cc.cwnd;
    for _ in 0..200 {
        // One round: every segment in flight ACKed at the base RTT.
        let n = s.flight.len();
        s.now += MS(40);
        for _ in 0..n {
            s.ack_oldest(MS(40));
        }
        assert!(s.cc.cwnd <= prev + 1, "{} → {}", prev, s.cc.cwnd);
        prev = s.cc.cwnd;
    }
    assert!(prev > 150, "no queue: grows linearly, got {prev}");
}

#[test]
fn growth_per_rtt_is_gain_times_off_target() {
    let g = checks::growth_per_rtt_is_gain_times_off_target();
    assert_eq!(g.len(), 7);
}

#[test]
fn allowed_increase_and_min_cwnd_bound_cwnd() {
    checks::allowed_increase_and_min_cwnd_bound_cwnd();
}

#[test]
fn the_rfc_musts_are_enforced() {
    checks::the_rfc_musts_are_enforced();
}

#[test]
fn loss_halves_to_at_least_min_cwnd() {
    let mut s = PathSender::new(Ledbat::default(), 40, u32::MAX, MS(40), MS(1));
    assert_eq!(s.loss(CongestionCause::Loss), 20);
    s.cc.cwnd = 3;
    assert_eq!(
        s.ctrl
            .ssthresh(&mut FlowCtx::alone(&mut s.cc), s.now, CongestionCause::Loss),
        2
    );
}

#[test]
fn base_history_keeps_per_minute_minima() {
    let mut l = Ledbat::default();
    let mut cc = CcState::new(10, MSS);
    let mut ack = |l: &mut Ledbat, t_s: u64, rtt_ms: u64| {
        let a = AckSample {
            now: Instant::ZERO + Duration::from_secs(t_s),
            acked_segs: 1,
            rtt: Some(MS(rtt_ms)),
            ..AckSample::default()
        };
        l.on_ack(&mut FlowCtx::alone(&mut cc), &a);
    };
    ack(&mut l, 0, 50);
    ack(&mut l, 30, 40);
    assert_eq!(l.base_delay(), Some(MS(40)));
    // Eleven more minutes at 60 ms: the 40 ms minute falls out of the 10 kept.
    for m in 1..=11 {
        ack(&mut l, 60 * m, 60);
    }
    assert_eq!(l.base_delay(), Some(MS(60)));
    // A lower delay is taken at once (route change down).
    ack(&mut l, 60 * 11 + 1, 30);
    assert_eq!(l.base_delay(), Some(MS(30)));
    // The current filter is the minimum of the last 4 samples.
    for d in [70, 80, 90, 100] {
        ack(&mut l, 700, d);
    }
    assert_eq!(l.queuing_delay(), Some(MS(40)));
}

#[test]
fn config_errors_name_the_parameter() {
    let c = LedbatConfig {
        target: MS(150),
        ..LedbatConfig::default()
    };
    assert_eq!(c.validate().unwrap_err().0, "target");
    let c = LedbatConfig {
        gain: 2.0,
        ..LedbatConfig::default()
    };
    assert_eq!(
        c.validate().unwrap_err(),
        ("gain", "2 is outside (0, 1]".into())
    );
    assert!(LedbatConfig::default().validate().is_ok());
}

/// A LEDBAT sender of the two-flow model: controller, variables, and in flight (send
/// state, ACK arrival).
type Sender = (Ledbat, CcState, VecDeque<(SentInfo, Instant)>);

/// Two LEDBAT flows through one FIFO bottleneck (1 ms per segment, 40 ms base RTT),
/// ACK-clocked, no loss. Flow 2 starts at `start2`.
struct TwoFlows {
    flows: [Sender; 2],
    started: [bool; 2],
    start: [Instant; 2],
    last_depart: Instant,
    tau: Duration,
    base: Duration,
    /// Segments delivered per flow after `measure_from`.
    delivered: [u64; 2],
    measure_from: Instant,
}

impl TwoFlows {
    fn new(start2: Duration, measure_from: Duration) -> Self {
        let mk = || {
            let mut c = CcState::new(2, MSS);
            c.cwnd_limited = true;
            let mut l = Ledbat::default();
            l.init(&mut FlowCtx::alone(&mut c), Instant::ZERO);
            (l, c, VecDeque::new())
        };
        TwoFlows {
            flows: [mk(), mk()],
            started: [false; 2],
            start: [Instant::ZERO, Instant::ZERO + start2],
            last_depart: Instant::ZERO,
            tau: MS(1),
            base: MS(40),
            delivered: [0; 2],
            measure_from: Instant::ZERO + measure_from,
        }
    }

    fn fill(&mut self, i: usize, now: Instant) {
        let (_, cc, flight) = &mut self.flows[i];
        while (flight.len() as u32) < cc.cwnd {
            let depart = self.last_depart.max(now) + self.tau;
            self.last_depart = depart;
            let info = SentInfo {
                sent_at: now,
                bytes: MSS,
                in_flight_at_send: flight.len() as u32 + 1,
                delivered_at_send: cc.delivered,
                app_limited: false,
                retransmit: false,
                ..Default::default()
            };
            flight.push_back((info, depart + (self.base - self.tau)));
        }
        cc.in_flight = flight.len() as u32;
    }

    fn run_until(&mut self, end: Instant) {
        loop {
            // The earliest event: a flow's start or the ACK of its oldest segment.
            let mut next: Option<(Instant, usize)> = None;
            for i in 0..2 {
                let t = if self.started[i] {
                    self.flows[i].2.front().map(|&(_, at)| at)
                } else {
                    Some(self.start[i])
                };
                if let Some(t) = t {
                    if next.is_none_or(|(n, _)| t < n) {
                        next = Some((t, i));
                    }
                }
            }
            let Some((now, i)) = next else { break };
            if now > end {
                break;
            }
            if !self.started[i] {
                self.started[i] = true;
                self.fill(i, now);
                continue;
            }
            let (ctrl, cc, flight) = &mut self.flows[i];
            let (info, _) = flight.pop_front().unwrap();
            cc.delivered += 1;
            let prior = flight.len() as u32 + 1;
            cc.in_flight = flight.len() as u32;
            let ack = AckSample {
                now,
                acked_segs: 1,
                acked_bytes: u64::from(MSS),
                rtt: Some(now.saturating_duration_since(info.sent_at)),
                newest_acked: Some(info),
                prior_in_flight: prior,
                ece: false,
                ..Default::default()
            };
            ctrl.on_ack(&mut FlowCtx::alone(cc), &ack);
            ctrl.cong_avoid(&mut FlowCtx::alone(cc), &ack);
            if now >= self.measure_from {
                self.delivered[i] += 1;
            }
            self.fill(i, now);
        }
    }

    fn share(&self, i: usize) -> f64 {
        self.delivered[i] as f64 / (self.delivered[0] + self.delivered[1]) as f64
    }
}

/// RFC 6817 §4's latecomer advantage, shown rather than hidden: flow 1 holds the
/// queue at TARGET (100 ms) when flow 2 starts; flow 2's first samples include that
/// queue, so its base delay is ~100 ms too high, it pushes the queue to ~2·TARGET,
/// and flow 1 (which measures the true base) backs off to MIN_CWND. Started
/// together, the two share the path about evenly.
#[test]
fn latecomer_takes_the_bottleneck_from_the_first_flow() {
    let t = |s| Instant::ZERO + Duration::from_secs(s);
    let mut last = 0.0;
    for start2 in [20, 30, 45] {
        // Shares (flow 2 joins at 20, 30 or 45 s): from 60 s to 90 s after flow 2 joins.
        let mut late = TwoFlows::new(
            Duration::from_secs(start2),
            Duration::from_secs(start2 + 60),
        );
        late.run_until(t(start2 + 90));
        let base2 = late.flows[1].0.base_delay().unwrap();
        let base1 = late.flows[0].0.base_delay().unwrap();
        assert_eq!(base1, MS(40), "flow 1 knows the true base delay");
        assert!(
            base2 >= MS(120),
            "flow 2 took the standing queue for base: {base2:?}"
        );
        assert!(late.share(1) > 0.95, "latecomer share {:.3}", late.share(1));
        // Flow 1 sees flow 2's queue on top of its own target: ~180 ms queuing delay.
        let q1 = late.flows[0].0.queuing_delay().unwrap();
        assert!(q1 > MS(150), "flow 1 queuing delay {q1:?}");
        assert!(
            late.flows[0].1.cwnd <= 3,
            "first flow starved: cwnd {}",
            late.flows[0].1.cwnd
        );
        last = late.share(1);
        eprintln!("latecomer at {start2} s: share {last:.3}");
    }
    let mut together = TwoFlows::new(Duration::ZERO, Duration::from_secs(90));
    together.run_until(t(120));
    let s = together.share(1);
    eprintln!("latecomer share {last:.3}, together {s:.3}");
    assert!((0.35..=0.65).contains(&s), "started together: share {s:.3}");
}

/// `cc = "ledbat"` reaches a connection through the standard factory: the name
/// parses, the connection reports the label, and a transfer with losses completes
/// intact (the reductions go through the connection's own path).
#[test]
fn ledbat_runs_in_a_connection() {
    use crate::cc::CcAlgorithm;
    use crate::testkit::{Action, Pair};
    use crate::Config;
    use serde::Deserialize;
    let alg = CcAlgorithm::deserialize(
        serde::de::value::StrDeserializer::<serde::de::value::Error>::new("ledbat"),
    )
    .unwrap();
    assert_eq!(alg, CcAlgorithm::Ledbat);
    assert_eq!(alg.name(), "ledbat");
    let mut c = Config::default();
    c.congestion.controller = alg.into();
    let mut p = Pair::with_configs(MS(10), c.clone(), c);
    let (cl, sv) = p.establish();
    p.set_hook(|x| {
        if x.to_server && x.len > 0 && x.index % 97 == 13 {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    let data = crate::testkit::pattern(400_000, 7);
    p.client.conn_mut(cl).unwrap().write(&data);
    let mut got = Vec::new();
    assert!(p.run_until(Duration::from_secs(30), |p| {
        Pair::read_all(&mut p.server, sv, &mut got);
        got.len() == data.len()
    }));
    assert_eq!(got, data);
    let info = p.client.conn(cl).unwrap().info();
    assert_eq!(&*info.cc, "ledbat");
    assert!(info.retransmits > 0, "the hook dropped segments");
    assert!(info.cwnd >= 2);
}
