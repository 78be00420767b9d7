//! RED, Random Early Detection (Floyd and Jacobson 1993), with the gentle mode (Floyd
//! 2000) and ECN marking, as Linux's `sch_red` (`include/net/red.h`) and ns-3's
//! `RedQueueDisc` run it.
//!
//! At each arrival the average queue `avg` (an EWMA of the length in packets, weight
//! `w_q`) decides:
//! - `avg < min_th`: enqueue;
//! - `min_th ≤ avg < max_th`: mark or drop with `pa = pb / (1 − count·pb)`, where
//!   `pb = max_p·(avg − min_th)/(max_th − min_th)` and `count` is the number of
//!   packets since the last mark (the spacing correction of the 1993 paper);
//! - gentle, `max_th ≤ avg < 2·max_th`: `pb` rises from `max_p` to 1;
//! - above: every packet is marked or dropped.
//!
//! With `ecn`, ECN-capable packets are CE-marked instead of dropped, in every region
//! unless `harddrop` (Linux's `TC_RED_HARDDROP`) drops them above the gentle band.
//! While the queue is empty, `avg` decays as if `m` minimum-size packets had left
//! (`m` = idle time / the time to send one `mean_packet` at the link `rate`), so a
//! burst after an idle period starts from a lower average.
//!
//! Parameters and defaults (ns-3's `RedQueueDisc`): `min_th` 5, `max_th` 15 packets,
//! `max_p` 0.02 (1/LInterm, LInterm = 50), `w_q` 0.002, gentle on, a 1000-packet
//! `limit`, `mean_packet` 1000 bytes. Departure: thresholds in packets only (no byte
//! mode), as the RITE experiments need.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use brisk_time::{Duration, Instant};

use super::fifo::Fifo;
use super::{mark_if_ect, Dequeued, Queue};
use crate::element::Packet;
use crate::error::{check_prob, NetError};

/// ChaCha stream for RED's decisions, apart from the loss model's (same seed).
const RED_STREAM: u64 = 0x0072_6564; // "red"

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    pub ecn: bool,
    pub harddrop: bool,
    pub limit_packets: usize,
    /// Link rate (bit/s) for the idle decay; 0 turns the decay off.
    pub rate_bps: u64,
    pub mean_packet: usize,
}

impl Default for RedParams {
    fn default() -> Self {
        RedParams {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.02,
            w_q: 0.002,
            gentle: true,
            ecn: false,
            harddrop: false,
            limit_packets: 1000,
            rate_bps: 0,
            mean_packet: 1000,
        }
    }
}

impl RedParams {
    pub fn validate(&self) -> Result<(), NetError> {
        if !(self.min_th.is_finite() && self.min_th >= 0.0) {
            return Err(NetError::invalid(
                "queue.min_th",
                self.min_th,
                "must be at least 0",
            ));
        }
        if !(self.max_th.is_finite() && self.max_th > self.min_th) {
            return Err(NetError::invalid(
                "queue.max_th",
                self.max_th,
                "must be above min_th",
            ));
        }
        check_prob("queue.max_p", self.max_p)?;
        check_prob("queue.w_q", self.w_q)?;
        if self.w_q == 0.0 {
            return Err(NetError::invalid("queue.w_q", 0, "must be above 0"));
        }
        if self.limit_packets == 0 {
            return Err(NetError::invalid("queue.packets", 0, "must be at least 1"));
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct Red {
    p: RedParams,
    q: Fifo,
    avg: f64,
    /// Packets since the last mark or drop; −1 after the average was below min_th.
    count: i64,
    /// When the queue last went empty (for the idle decay).
    idle_since: Option<Instant>,
    rng: ChaCha8Rng,
    /// Time to send one mean packet, for the idle decay (None: no decay).
    pkt_time: Option<Duration>,
}

impl Red {
    pub fn new(p: RedParams, seed: u64) -> Result<Self, NetError> {
        p.validate()?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(RED_STREAM);
        let pkt_time = (p.rate_bps > 0).then(|| {
            Duration::from_nanos(
                (p.mean_packet as u64 * 8).saturating_mul(1_000_000_000) / p.rate_bps,
            )
        });
        Ok(Red {
            p,
            q: Fifo::with_capacity(p.limit_packets.min(64)),
            avg: 0.0,
            count: -1,
            idle_since: Some(Instant::ZERO),
            rng,
            pkt_time,
        })
    }

    /// The current average queue length, packets.
    pub fn avg(&self) -> f64 {
        self.avg
    }

    fn update_avg(&mut self, now: Instant) {
        match (self.idle_since.take(), self.pkt_time) {
            (Some(since), Some(t)) if !t.is_zero() => {
                let m =
                    now.saturating_duration_since(since).as_nanos() as f64 / t.as_nanos() as f64;
                self.avg *= (1.0 - self.p.w_q).powf(m);
            }
            _ => {
                let q = self.q.len() as f64;
                self.avg = (1.0 - self.p.w_q) * self.avg + self.p.w_q * q;
            }
        }
    }

    /// The marking probability for the current average, before the count correction
    /// (None: below min_th; Some(1) in the forced region).
    fn pb(&self) -> Option<f64> {
        let (min, max, max_p) = (self.p.min_th, self.p.max_th, self.p.max_p);
        if self.avg < min {
            None
        } else if self.avg < max {
            Some(max_p * (self.avg - min) / (max - min))
        } else if self.p.gentle && self.avg < 2.0 * max {
            Some(max_p + (1.0 - max_p) * (self.avg - max) / max)
        } else {
            Some(1.0)
        }
    }
}

impl Queue for Red {
    fn enqueue(&mut self, now: Instant, mut pkt: Packet) -> Result<(), Packet> {
        self.update_avg(now);
        if self.q.len() >= self.p.limit_packets {
            return Err(pkt);
        }
        let Some(pb) = self.pb() else {
            self.count = -1;
            self.q.push(pkt, now, false);
            return Ok(());
        };
        let forced = pb >= 1.0;
        let hit = if forced {
            true
        } else {
            self.count += 1;
            let c = self.count as f64;
            let pa = if c * pb >= 1.0 {
                1.0
            } else {
                pb / (1.0 - c * pb)
            };
            self.rng.gen::<f64>() < pa
        };
        if !hit {
            self.q.push(pkt, now, false);
            return Ok(());
        }
        self.count = 0;
        let may_mark = self.p.ecn && !(forced && self.p.harddrop);
        if may_mark && mark_if_ect(&mut pkt) {
            self.q.push(pkt, now, true);
            return Ok(());
        }
        // A drop into an empty queue leaves it idle: the idle period goes on from now
        // (Linux restarts it at the dequeue that finds the queue empty). Without this
        // the average decayed only by w_q per arrival, and a flow in RTO backoff whose
        // every retransmission met an empty queue above max_th was starved for good.
        if self.q.len() == 0 {
            self.idle_since = Some(now);
        }
        Err(pkt)
    }

    fn dequeue(&mut self, now: Instant) -> Option<Dequeued> {
        let e = self.q.pop()?;
        if self.q.len() == 0 {
            self.idle_since = Some(now);
        }
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

    fn red(p: RedParams) -> Red {
        Red::new(p, 7).unwrap()
    }

    #[test]
    fn the_average_follows_the_queue_with_weight_w_q() {
        let mut q = red(RedParams {
            max_th: 1e9,
            min_th: 1e8,
            ..RedParams::default()
        });
        let t = Instant::from_millis(1);
        for i in 0..1000 {
            q.enqueue(t, ip(i, 100, Ecn::NotEct)).unwrap();
        }
        // avg_n = Σ w(1−w)^(n−1−k)·k for queue lengths 0..n−1.
        let w = 0.002f64;
        let mut want = 0.0;
        for k in 0..1000 {
            want = (1.0 - w) * want + w * k as f64;
        }
        assert!((q.avg() - want).abs() < 1e-9, "{} vs {want}", q.avg());
    }

    #[test]
    fn drops_start_at_min_th_and_are_forced_above_twice_max_th() {
        let mut q = red(RedParams {
            w_q: 1.0, // the average is the instantaneous queue
            ..RedParams::default()
        });
        let t = Instant::from_millis(1);
        let mut outcome = Vec::new();
        for i in 0..400 {
            outcome.push(q.enqueue(t, ip(i, 100, Ecn::NotEct)).is_ok());
        }
        assert!(outcome[..6].iter().all(|&ok| ok), "below min_th: no drop");
        // Once pb ≥ 0.5 (avg ≥ 22.6 in the gentle band) the count correction drops
        // every arrival after an accepted one: the queue cannot reach 2·max_th.
        let n = q.len_packets();
        assert!((16..30).contains(&n), "queue {n}");
        assert!(outcome[300..].iter().all(|&ok| !ok));
    }

    #[test]
    fn the_drop_rate_in_the_linear_region_is_about_pb_with_the_count_spacing() {
        // Hold the average at 10 packets (pb = 0.01): pa = pb/(1 − count·pb) makes
        // the gap between drops uniform on 1..1/pb, mean ≈ 1/(2·pb) ≈ 50.
        let mut q = red(RedParams {
            w_q: 1.0,
            ..RedParams::default()
        });
        let t = Instant::from_millis(1);
        for i in 0..10 {
            q.enqueue(t, ip(i, 100, Ecn::NotEct)).unwrap();
        }
        let mut drops = 0;
        let n = 100_000;
        for i in 0..n {
            match q.enqueue(t, ip(100 + i, 100, Ecn::NotEct)) {
                Ok(()) => {
                    q.dequeue(t);
                }
                Err(_) => drops += 1,
            }
        }
        let rate = drops as f64 / n as f64;
        assert!((rate - 1.0 / 50.5).abs() < 0.002, "drop rate {rate}");
    }

    #[test]
    fn ecn_marks_instead_of_dropping_and_harddrop_drops_above_the_band() {
        let mut q = red(RedParams {
            w_q: 1.0,
            ecn: true,
            ..RedParams::default()
        });
        let t = Instant::from_millis(1);
        for i in 0..60 {
            q.enqueue(t, ip(i, 100, Ecn::Ect0)).unwrap();
        }
        let marked = std::iter::from_fn(|| q.dequeue(t))
            .filter(|d| d.ce_marked)
            .count();
        assert!(marked > 10, "{marked}");
        let mut q = red(RedParams {
            w_q: 1.0,
            ecn: true,
            harddrop: true,
            ..RedParams::default()
        });
        let ok = (0..40)
            .filter(|&i| q.enqueue(t, ip(i, 100, Ecn::Ect0)).is_ok())
            .count();
        assert!(ok < 40, "forced region drops with harddrop");
    }

    #[test]
    fn the_average_decays_while_the_link_is_idle() {
        let mut q = red(RedParams {
            rate_bps: 8_000_000, // 1 ms per 1000-byte packet
            min_th: 1000.0,
            max_th: 2000.0,
            ..RedParams::default()
        });
        let t0 = Instant::from_millis(1);
        for i in 0..500 {
            q.enqueue(t0, ip(i, 100, Ecn::NotEct)).unwrap();
        }
        while q.dequeue(t0).is_some() {}
        let before = q.avg();
        // 1 s idle = 1000 packet times: avg × 0.998^1000 ≈ 0.135 × avg.
        q.enqueue(t0 + Duration::from_secs(1), ip(999, 100, Ecn::NotEct))
            .unwrap();
        assert!((q.avg() / before - 0.998f64.powi(1000)).abs() < 1e-6);
    }

    #[test]
    fn drops_into_an_empty_queue_keep_the_average_decaying() {
        let mut q = red(RedParams {
            rate_bps: 8_000_000, // 1 ms per mean packet
            ..RedParams::default()
        });
        let t0 = Instant::from_millis(1);
        // Drive the average far above 2·max_th, then empty the queue.
        for i in 0..1000 {
            let _ = q.enqueue(t0, ip(i, 100, Ecn::NotEct));
        }
        while q.dequeue(t0).is_some() {}
        assert!(q.avg() > 30.0, "{}", q.avg());
        // A lone packet every 100 ms (a sender in RTO backoff): the first ones may be
        // dropped, but the idle decay continues across those drops and one gets in.
        let accepted = (1..=50u64).find(|k| {
            q.enqueue(
                t0 + Duration::from_millis(100 * k),
                ip(5000 + k, 100, Ecn::NotEct),
            )
            .is_ok()
        });
        assert!(
            accepted.is_some_and(|k| k <= 10),
            "{accepted:?}, avg {}",
            q.avg()
        );
    }

    #[test]
    fn bad_parameters_name_the_field() {
        for (p, field) in [
            (
                RedParams {
                    max_th: 5.0,
                    ..RedParams::default()
                },
                "queue.max_th",
            ),
            (
                RedParams {
                    max_p: 1.5,
                    ..RedParams::default()
                },
                "queue.max_p",
            ),
            (
                RedParams {
                    w_q: 0.0,
                    ..RedParams::default()
                },
                "queue.w_q",
            ),
        ] {
            let e = Red::new(p, 1).unwrap_err();
            assert!(e.to_string().contains(field), "{e}");
        }
    }
}
