//! The sender-and-path model shared by the congestion-control unit tests: a
//! cwnd-limited sender (it refills the window at once) over a FIFO bottleneck that
//! serves one segment per `tau`, with `base` round trip when empty and optional
//! uniform jitter. A segment sent with x segments in flight (itself included) sees
//! rtt = base + max(0, x − BDP)·τ, BDP = base/τ.
//!
//! ACKs can be delivered two ways: [`PathSender::step`] lets the bottleneck time them
//! (delay correlation's tests), and [`PathSender::ack_oldest`] lets the test set the
//! clock and the RTT each ACK reports (CUBIC's round-based tests, which study the
//! window against time on an uncongested path: `tau = 0`).

use super::{AckSample, CcState, CongestionCause, CongestionControl, FlowCtx};
use crate::sent::SentInfo;
use brisk_time::{Duration, Instant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// Segment size of the model.
pub(crate) const MSS: u32 = 1448;

pub(crate) struct PathSender<C: CongestionControl> {
    pub ctrl: C,
    pub cc: CcState,
    pub now: Instant,
    /// Round trip with an empty queue (also what `cc.srtt` is set to).
    pub base: Duration,
    /// Service time per segment at the bottleneck (zero: no bottleneck).
    pub tau: Duration,
    /// Extra per-segment delay uniform in [0, jitter), uncorrelated with load.
    pub jitter: Duration,
    /// Whether ACKs carry the send-time state of the segment they cover.
    pub send_info: bool,
    /// In flight, in send (= ACK) order: send state and ACK arrival time.
    pub flight: VecDeque<(SentInfo, Instant)>,
    /// Per ACK: (cwnd after it, RTT of the ACKed segment in µs).
    pub trace: Vec<(u32, u64)>,
    last_depart: Instant,
    rng: ChaCha8Rng,
}

impl<C: CongestionControl> PathSender<C> {
    pub fn new(mut ctrl: C, cwnd: u32, ssthresh: u32, base: Duration, tau: Duration) -> Self {
        let mut cc = CcState::new(cwnd, MSS);
        cc.ssthresh = ssthresh;
        cc.cwnd_limited = true;
        ctrl.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        let mut s = PathSender {
            ctrl,
            cc,
            now: Instant::ZERO,
            base,
            tau,
            jitter: Duration::ZERO,
            send_info: true,
            flight: VecDeque::new(),
            trace: Vec::new(),
            last_depart: Instant::ZERO,
            rng: ChaCha8Rng::seed_from_u64(99),
        };
        s.fill();
        s
    }

    /// Sends until the window is full.
    pub fn fill(&mut self) {
        while (self.flight.len() as u32) < self.cc.cwnd {
            let depart = self.last_depart.max(self.now) + self.tau;
            self.last_depart = depart;
            let jitter_us = self.jitter.as_micros() as u64;
            let jitter = if jitter_us > 0 {
                Duration::from_micros(self.rng.gen_range(0..jitter_us))
            } else {
                Duration::ZERO
            };
            let ack_at = depart + self.base.saturating_sub(self.tau) + jitter;
            let info = SentInfo {
                sent_at: self.now,
                bytes: MSS,
                in_flight_at_send: self.flight.len() as u32 + 1,
                delivered_at_send: self.cc.delivered,
                app_limited: false,
                retransmit: false,
                ..Default::default()
            };
            self.cc.in_flight = info.in_flight_at_send;
            self.ctrl.on_sent(&mut FlowCtx::alone(&mut self.cc), &info);
            self.flight.push_back((info, ack_at));
        }
    }

    /// The bottleneck delivers the next ACK at its time (jitter may reorder arrival
    /// times slightly; ACKs are still processed in send order, as a FIFO delivers).
    pub fn step(&mut self) {
        let Some(&(info, ack_at)) = self.flight.front() else {
            return;
        };
        self.now = self.now.max(ack_at);
        let rtt = self.now.saturating_duration_since(info.sent_at);
        self.ack_oldest(rtt);
    }

    pub fn run(&mut self, acks: usize) {
        for _ in 0..acks {
            self.step();
        }
    }

    /// One ACK for the oldest segment at the current time, reporting `rtt`.
    pub fn ack_oldest(&mut self, rtt: Duration) {
        let newest = self.flight.pop_front().map(|(info, _)| info);
        self.cc.delivered += 1;
        self.cc.in_flight = self.flight.len() as u32;
        self.cc.srtt = self.base;
        let ack = AckSample {
            now: self.now,
            acked_segs: 1,
            acked_bytes: u64::from(MSS),
            rtt: Some(rtt),
            newest_acked: if self.send_info { newest } else { None },
            prior_in_flight: self.cc.in_flight + 1,
            ece: false,
            ..Default::default()
        };
        self.ctrl.on_ack(&mut FlowCtx::alone(&mut self.cc), &ack);
        self.ctrl
            .cong_avoid(&mut FlowCtx::alone(&mut self.cc), &ack);
        self.trace.push((self.cc.cwnd, rtt.as_micros() as u64));
        self.fill();
    }

    /// A congestion event handled as Linux does by the end of recovery: ssthresh from
    /// the controller, cwnd = ssthresh, cwnd_cnt cleared, the excess in flight gone.
    pub fn loss(&mut self, cause: CongestionCause) -> u32 {
        let ss = self
            .ctrl
            .ssthresh(&mut FlowCtx::alone(&mut self.cc), self.now, cause);
        self.cc.ssthresh = ss;
        self.cc.cwnd = ss;
        self.cc.cwnd_cnt = 0;
        while self.flight.len() > ss as usize {
            self.flight.pop_back();
        }
        self.cc.in_flight = self.flight.len() as u32;
        ss
    }

    /// Mean RTT (µs) over the last `last` ACKs.
    pub fn mean_rtt_us(&self, last: usize) -> u64 {
        let t = &self.trace[self.trace.len() - last..];
        t.iter().map(|&(_, r)| r).sum::<u64>() / last as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::reno::Reno;

    #[test]
    fn a_queue_builds_once_the_window_exceeds_the_bdp() {
        // BDP = 20 ms / 1 ms = 20 segments; a window of 30 queues 10 segments.
        let mut s = PathSender::new(
            Reno,
            30,
            30,
            Duration::from_millis(20),
            Duration::from_millis(1),
        );
        s.cc.cwnd_limited = false; // hold cwnd at 30
        s.run(300);
        assert_eq!(s.cc.cwnd, 30);
        assert_eq!(s.mean_rtt_us(100), 30_000);
    }
}
