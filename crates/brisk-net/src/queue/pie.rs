//! PIE, Proportional Integral controller Enhanced (RFC 8033), as Linux 3.17.4's
//! `sch_pie.c` ran it: the version the RITE ABE experiments used (spec
//! `rite-satellite-web-innerspace-abe.md` §4.4).
//!
//! Every `tupdate` the drop probability moves by
//! `α·(qdelay − target) + β·(qdelay − qdelay_old)`, with α and β scaled down while the
//! probability is small. The queue delay is estimated as the backlog over the measured
//! departure rate (Linux's `avg_dq_rate`, measured over 10 000-byte cycles while the
//! backlog is at least that). An arriving packet is dropped early with the current
//! probability, except during the initial burst allowance, while the delay is below
//! half the target and the probability below 20 %, and while fewer than two MTUs are
//! queued. With `ecn`, an ECN-capable packet is CE-marked instead, unless the
//! probability is above `ecn_drop_above` (Linux 3.17's hard-coded 10 %; the ABE
//! paper turned the rule off, App. B).
//!
//! Parameters and defaults (Linux 3.17.4): `target` 20 ms, `tupdate` 30 ms, α 0.125,
//! β 1.25, `max_burst` 100 ms, a 1000-packet `limit`, packet mode, ECN off, the 10 %
//! rule on. Where RFC 8033 differs: its `max_burst` is 150 ms (the draft the paper
//! cites; Linux hard-codes 100 ms); it scales α and β over seven probability ranges
//! (down to /2048 below 1e-6) where Linux 3.17 uses three (/8 below 1 %, /2 below
//! 10 %, 1 above); it decrements the burst allowance by `tupdate` at each update
//! where Linux decrements it by each measured departure cycle; and it measures the
//! delay either way, where Linux 3.17 only from the departure rate.
//!
//! The controller is periodic, but the queue has no timer of its own: at every call
//! the updates due since the last one are run first. Between calls the queue does
//! not change, so each update sees what Linux's timer would have seen.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use brisk_time::{Duration, Instant};

use super::fifo::Fifo;
use super::{mark_if_ect, Dequeued, Queue};
use crate::element::Packet;
use crate::error::{check_prob, NetError};

/// ChaCha stream for PIE's decisions, apart from the loss model's (same seed).
const PIE_STREAM: u64 = 0x0070_6965; // "pie"
/// Backlog (bytes) above which departure-rate cycles are measured (Linux
/// `QUEUE_THRESHOLD`).
const QUEUE_THRESHOLD: usize = 10_000;
/// Most updates run in one catch-up (an idle queue for longer decays to zero anyway).
const MAX_CATCH_UP: u32 = 10_000;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieParams {
    pub target: Duration,
    pub tupdate: Duration,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst: Duration,
    pub limit_packets: usize,
    pub ecn: bool,
    /// Drop instead of marking above this probability (None: always mark).
    pub ecn_drop_above: Option<f64>,
    pub bytemode: bool,
    pub mtu: usize,
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams {
            target: Duration::from_millis(20),
            tupdate: Duration::from_millis(30),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Duration::from_millis(100),
            limit_packets: 1000,
            ecn: false,
            ecn_drop_above: Some(0.1),
            bytemode: false,
            mtu: 1514,
        }
    }
}

impl PieParams {
    pub fn validate(&self) -> Result<(), NetError> {
        if self.target.is_zero() || self.target > Duration::from_secs(10) {
            return Err(NetError::invalid(
                "queue.target",
                format!("{:?}", self.target),
                "must be greater than 0 and at most 10s",
            ));
        }
        if self.tupdate < Duration::from_millis(1) || self.tupdate > Duration::from_secs(10) {
            return Err(NetError::invalid(
                "queue.tupdate",
                format!("{:?}", self.tupdate),
                "must be between 1ms and 10s",
            ));
        }
        for (f, v) in [("queue.alpha", self.alpha), ("queue.beta", self.beta)] {
            if !(v.is_finite() && (0.0..=32.0).contains(&v)) {
                return Err(NetError::invalid(f, v, "must be between 0 and 32"));
            }
        }
        if let Some(p) = self.ecn_drop_above {
            check_prob("queue.ecn_drop_above", p)?;
        }
        if self.limit_packets == 0 {
            return Err(NetError::invalid("queue.packets", 0, "must be at least 1"));
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct Pie {
    p: PieParams,
    q: Fifo,
    rng: ChaCha8Rng,
    prob: f64,
    burst_left: Duration,
    qdelay: Duration,
    qdelay_old: Duration,
    /// Bytes departed in the current measurement cycle (None: not measuring).
    dq_count: Option<usize>,
    dq_start: Instant,
    /// Departure rate, bytes per second (0: not measured yet).
    avg_dq_rate: f64,
    next_update: Instant,
}

impl Pie {
    pub fn new(p: PieParams, seed: u64) -> Result<Self, NetError> {
        p.validate()?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(PIE_STREAM);
        Ok(Pie {
            p,
            q: Fifo::with_capacity(p.limit_packets.min(64)),
            rng,
            prob: 0.0,
            burst_left: p.max_burst,
            qdelay: Duration::ZERO,
            qdelay_old: Duration::ZERO,
            dq_count: None,
            dq_start: Instant::ZERO,
            avg_dq_rate: 0.0,
            next_update: Instant::ZERO + p.tupdate,
        })
    }

    /// The current drop (or mark) probability.
    pub fn prob(&self) -> f64 {
        self.prob
    }

    /// Linux `pie_vars_init`: a fresh measurement cycle and burst allowance.
    fn reset_vars(&mut self) {
        self.dq_count = None;
        self.avg_dq_rate = 0.0;
        self.burst_left = self.p.max_burst;
    }

    fn catch_up(&mut self, now: Instant) {
        let mut n = 0;
        while now >= self.next_update {
            if n == MAX_CATCH_UP {
                self.next_update = now + self.p.tupdate;
                break;
            }
            self.update();
            self.next_update += self.p.tupdate;
            n += 1;
        }
    }

    /// Linux `calculate_probability`, run every `tupdate`.
    fn update(&mut self) {
        let backlog = self.q.bytes();
        let qdelay_old = self.qdelay;
        self.qdelay_old = self.qdelay;
        let qdelay = if self.avg_dq_rate > 0.0 {
            Duration::from_nanos((backlog as f64 / self.avg_dq_rate * 1e9) as u64)
        } else {
            Duration::ZERO
        };
        // A tiny backlog rounds the delay to 0: no update this round.
        let mut update_prob = !(qdelay.is_zero() && backlog != 0);
        let scale = if self.prob < 0.01 {
            1.0 / 8.0
        } else if self.prob < 0.1 {
            0.5
        } else {
            1.0
        };
        let secs = |d: Duration| d.as_secs_f64();
        let mut delta = self.p.alpha * scale * (secs(qdelay) - secs(self.p.target))
            + self.p.beta * scale * (secs(qdelay) - secs(qdelay_old));
        // At most 2 % per update once the probability is 10 % or more.
        if delta > 0.02 && self.prob >= 0.1 {
            delta = 0.02;
        }
        // Non-linear: rise fast above 250 ms of delay.
        if qdelay > Duration::from_millis(250) {
            delta += 0.02;
        }
        let p = self.prob + delta;
        if p >= 1.0 {
            self.prob = 1.0;
            update_prob = false;
        } else {
            self.prob = p.max(0.0);
        }
        // Decay fast when the queue has been empty for two updates.
        if qdelay.is_zero() && qdelay_old.is_zero() && update_prob {
            self.prob *= 0.98;
        }
        self.qdelay = qdelay;
        let half = self.p.target / 2;
        if self.qdelay < half
            && self.qdelay_old < half
            && self.prob == 0.0
            && self.avg_dq_rate > 0.0
        {
            self.reset_vars();
        }
    }

    /// Linux `drop_early`.
    fn drop_early(&mut self, len: usize) -> bool {
        if !self.burst_left.is_zero() {
            return false;
        }
        if self.qdelay < self.p.target / 2 && self.prob < 0.2 {
            return false;
        }
        if self.q.bytes() < 2 * self.p.mtu {
            return false;
        }
        let p = if self.p.bytemode && len <= self.p.mtu {
            self.prob * len as f64 / self.p.mtu as f64
        } else {
            self.prob
        };
        self.rng.gen::<f64>() < p
    }

    /// Linux `pie_process_dequeue`: the departure-rate measurement.
    fn on_departure(&mut self, now: Instant, len: usize) {
        let backlog = self.q.bytes();
        if backlog >= QUEUE_THRESHOLD && self.dq_count.is_none() {
            self.dq_start = now;
            self.dq_count = Some(0);
        }
        let Some(count) = self.dq_count.as_mut() else {
            return;
        };
        *count += len;
        if *count < QUEUE_THRESHOLD {
            return;
        }
        let dtime = now.saturating_duration_since(self.dq_start);
        if dtime.is_zero() {
            return;
        }
        let rate = *count as f64 / dtime.as_secs_f64();
        self.avg_dq_rate = if self.avg_dq_rate == 0.0 {
            rate
        } else {
            self.avg_dq_rate * 7.0 / 8.0 + rate / 8.0
        };
        if backlog < QUEUE_THRESHOLD {
            self.dq_count = None;
        } else {
            self.dq_count = Some(0);
            self.dq_start = now;
        }
        self.burst_left = self.burst_left.saturating_sub(dtime);
    }
}

impl Pie {
    /// PIE's verdict on an arrival, the packet limit apart: `None` to drop it, else
    /// whether it was CE-marked (and is to be queued). Runs the updates due first.
    pub(crate) fn admit(&mut self, now: Instant, pkt: &mut Packet) -> Option<bool> {
        self.catch_up(now);
        self.verdict(pkt)
    }

    fn verdict(&mut self, pkt: &mut Packet) -> Option<bool> {
        if !self.drop_early(pkt.len()) {
            return Some(false);
        }
        let may_mark = self.p.ecn && self.p.ecn_drop_above.is_none_or(|t| self.prob <= t);
        if may_mark && mark_if_ect(pkt) {
            return Some(true);
        }
        None
    }

    /// Queues a packet [`Pie::admit`] let in.
    pub(crate) fn push_admitted(&mut self, now: Instant, pkt: Packet, marked: bool) {
        self.q.push(pkt, now, marked);
    }
}

impl Queue for Pie {
    fn enqueue(&mut self, now: Instant, mut pkt: Packet) -> Result<(), Packet> {
        self.catch_up(now);
        if self.q.len() >= self.p.limit_packets {
            return Err(pkt);
        }
        match self.verdict(&mut pkt) {
            Some(marked) => {
                self.q.push(pkt, now, marked);
                Ok(())
            }
            None => Err(pkt),
        }
    }

    fn dequeue(&mut self, now: Instant) -> Option<Dequeued> {
        self.catch_up(now);
        let e = self.q.pop()?;
        self.on_departure(now, e.pkt.len());
        Some(e.into())
    }

    /// Drops only the packet offered (the default `poll_drop`).
    fn drops_pending(&self) -> bool {
        false
    }

    fn len_packets(&self) -> usize {
        self.q.len()
    }

    fn len_bytes(&self) -> usize {
        self.q.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::test_packets::ip;
    use brisk_wire::Ecn;

    /// Unresponsive traffic at `load` × a `rate_bps` link served by the test, for
    /// `secs`; returns the queue and (drops, marks, mean sojourn ms over the last half).
    fn drive(p: PieParams, load: f64, rate_bps: f64, secs: f64, ecn: Ecn) -> (Pie, u64, u64, f64) {
        let mut q = Pie::new(p, 3).unwrap();
        let svc = 1500.0 * 8.0 / rate_bps; // s per packet
        let gap = svc / load;
        let (mut t_in, mut t_out, mut id) = (0.0f64, svc, 0u64);
        let (mut drops, mut marks, mut soj, mut n) = (0u64, 0u64, 0.0, 0u64);
        while t_in < secs || t_out < secs {
            if t_in <= t_out && t_in < secs {
                let now = Instant::from_nanos((t_in * 1e9) as u64);
                if q.enqueue(now, ip(id, 1500, ecn)).is_err() {
                    drops += 1;
                }
                id += 1;
                t_in += gap;
            } else {
                let now = Instant::from_nanos((t_out * 1e9) as u64);
                if let Some(d) = q.dequeue(now) {
                    marks += u64::from(d.ce_marked);
                    if t_out > secs / 2.0 {
                        soj += d.sojourn(now).as_secs_f64() * 1e3;
                        n += 1;
                    }
                }
                t_out += svc;
            }
        }
        (q, drops, marks, soj / n.max(1) as f64)
    }

    #[test]
    fn an_unloaded_queue_never_drops() {
        let (q, drops, _, _) = drive(PieParams::default(), 0.8, 10e6, 5.0, Ecn::NotEct);
        assert_eq!(drops, 0);
        assert_eq!(q.prob(), 0.0);
    }

    #[test]
    fn overload_drives_the_delay_to_the_target() {
        // 25 % over the rate: PIE must drop one arrival in five.
        let (q, drops, marks, delay) = drive(PieParams::default(), 1.25, 10e6, 30.0, Ecn::NotEct);
        assert!(drops > 0 && marks == 0);
        assert!(
            (10.0..40.0).contains(&delay),
            "mean sojourn {delay} ms, target 20"
        );
        assert!((0.1..0.35).contains(&q.prob()), "prob {}", q.prob());
    }

    #[test]
    fn the_10_percent_rule_drops_ect_packets_and_can_be_turned_off() {
        let on = PieParams {
            ecn: true,
            ..PieParams::default()
        };
        // 25 % overload needs p ≈ 0.2 > 10 %: with the rule, ECT packets are dropped.
        let (_, drops, marks, _) = drive(on, 1.25, 10e6, 30.0, Ecn::Ect0);
        assert!(drops > 0, "above 10 % the rule drops");
        assert!(marks > 0, "below it, marks");
        let off = PieParams {
            ecn_drop_above: None,
            ..on
        };
        let (q, drops, marks, _) = drive(off, 1.25, 10e6, 30.0, Ecn::Ect0);
        // Marking removes nothing: the probability climbs and the queue is held only
        // by its limit, whose drops are the only ones.
        assert!(marks > drops, "{marks} marks, {drops} limit drops");
        assert!(q.prob() > 0.2, "{}", q.prob());
    }

    #[test]
    fn the_burst_allowance_lets_the_first_100_ms_through() {
        let (mut q, _, _, _) = drive(PieParams::default(), 0.5, 10e6, 0.01, Ecn::NotEct);
        // A burst of 200 packets at once, well past 2 MTU: no early drop while the
        // allowance lasts (nothing has departed, so it is untouched).
        let t = Instant::from_millis(20);
        let dropped = (0..200)
            .filter(|&i| q.enqueue(t, ip(10_000 + i, 1500, Ecn::NotEct)).is_err())
            .count();
        assert_eq!(dropped, 0);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        for (p, field) in [
            (
                PieParams {
                    target: Duration::ZERO,
                    ..PieParams::default()
                },
                "queue.target",
            ),
            (
                PieParams {
                    tupdate: Duration::from_micros(10),
                    ..PieParams::default()
                },
                "queue.tupdate",
            ),
            (
                PieParams {
                    alpha: -1.0,
                    ..PieParams::default()
                },
                "queue.alpha",
            ),
            (
                PieParams {
                    ecn_drop_above: Some(2.0),
                    ..PieParams::default()
                },
                "queue.ecn_drop_above",
            ),
        ] {
            let e = Pie::new(p, 1).unwrap_err();
            assert!(e.to_string().contains(field), "{e}");
        }
    }
}
