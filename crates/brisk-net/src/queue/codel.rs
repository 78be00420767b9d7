//! CoDel, Controlled Delay AQM (RFC 8289), as Linux's `codel_dequeue`
//! (`include/net/codel_impl.h`) runs it.
//!
//! Parameters and defaults (RFC 8289 §4.2–4.4, Linux `codel_params_init`):
//! - `target` 5 ms: the acceptable standing queue delay;
//! - `interval` 100 ms: how long the delay must stay above `target` before acting;
//! - `limit` 1000 packets (Linux's `sch_codel` default), a tail-drop bound;
//! - `mtu` 1514 bytes: no drop while the backlog is at most one MTU (RFC 8289 §4.4);
//! - `ecn` off: when on, ECN-capable packets are CE-marked instead of dropped.
//!
//! The state machine, at dequeue: a packet whose sojourn has been above `target` for
//! `interval` starts the dropping state; then one packet per `interval / √count` is
//! dropped (or marked) until a packet's sojourn falls below `target`. A new dropping
//! state soon after the last resumes near the last drop rate (`count − lastcount`).
//! Departure from Linux: 1/√count is computed exactly in f64 rather than by Linux's
//! fixed-point Newton step; the two agree to about 1e-4 after the first steps, and
//! the arithmetic is deterministic either way.

use std::collections::VecDeque;

use brisk_time::{Duration, Instant};

use super::fifo::{Entry, Fifo};
use super::{mark_if_ect, Dequeued, Queue, QueueDrop};
use crate::element::Packet;
use crate::error::NetError;

/// CoDel's configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoDelParams {
    pub target: Duration,
    pub interval: Duration,
    pub limit_packets: usize,
    pub mtu: usize,
    pub ecn: bool,
}

impl Default for CoDelParams {
    fn default() -> Self {
        CoDelParams {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            limit_packets: 1000,
            mtu: 1514,
            ecn: false,
        }
    }
}

impl CoDelParams {
    /// Range checks, naming the field.
    pub fn validate(&self) -> Result<(), NetError> {
        if self.interval.is_zero() {
            return Err(NetError::invalid(
                "queue.interval",
                "0",
                "must be greater than 0",
            ));
        }
        if self.target.is_zero() || self.target >= self.interval {
            return Err(NetError::invalid(
                "queue.target",
                format!("{:?}", self.target),
                "must be greater than 0 and below the interval",
            ));
        }
        if self.limit_packets == 0 {
            return Err(NetError::invalid("queue.packets", 0, "must be at least 1"));
        }
        Ok(())
    }
}

/// The CoDel state of one queue (FQ-CoDel keeps one per flow).
#[derive(Clone, Debug, Default)]
pub(crate) struct CoDelVars {
    /// When the sojourn first went above target in this episode (None: below).
    first_above: Option<Instant>,
    drop_next: Instant,
    count: u32,
    lastcount: u32,
    dropping: bool,
}

/// Where a CoDel dequeue takes its packets from and puts its drops.
pub(crate) struct CoDelCtx<'a> {
    pub p: &'a CoDelParams,
    pub q: &'a mut Fifo,
    /// Bytes queued elsewhere that count toward the MTU rule (FQ-CoDel's other flows:
    /// Linux passes the qdisc's whole backlog).
    pub other_backlog: usize,
    pub dropped: &'a mut VecDeque<QueueDrop>,
}

impl CoDelVars {
    /// `t + interval / √count` (RFC 8289 §5.5 `control_law`).
    fn control_law(&self, p: &CoDelParams, t: Instant) -> Instant {
        let n = f64::from(self.count.max(1));
        t + Duration::from_nanos((p.interval.as_nanos() as f64 / n.sqrt()) as u64)
    }

    /// Takes the head and says whether CoDel would drop it (RFC 8289 `dodequeue`,
    /// Linux `codel_should_drop`).
    fn do_dequeue(&mut self, cx: &mut CoDelCtx, now: Instant) -> (Option<Entry>, bool) {
        let Some(e) = cx.q.pop() else {
            self.first_above = None;
            return (None, false);
        };
        let sojourn = now.saturating_duration_since(e.enqueued_at);
        if sojourn < cx.p.target || cx.q.bytes() + cx.other_backlog <= cx.p.mtu {
            self.first_above = None;
            return (Some(e), false);
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + cx.p.interval);
                (Some(e), false)
            }
            Some(t) => (Some(e), now >= t),
        }
    }

    /// Drops `e` or, with ECN on and the packet ECN-capable, marks it. Returns the
    /// packet back when it was marked (it is then delivered).
    fn drop_or_mark(cx: &mut CoDelCtx, now: Instant, mut e: Entry) -> Option<Entry> {
        if cx.p.ecn && mark_if_ect(&mut e.pkt) {
            e.ce_marked = true;
            return Some(e);
        }
        cx.dropped.push_back(QueueDrop {
            pkt: e.pkt,
            at: now,
            enqueued_at: e.enqueued_at,
            overflow: false,
        });
        None
    }

    /// RFC 8289 §5.7 `dequeue` (Linux `codel_dequeue`): the next packet to send, after
    /// the drops due now.
    pub(crate) fn dequeue(&mut self, cx: &mut CoDelCtx, now: Instant) -> Option<Entry> {
        let (head, ok_to_drop) = self.do_dequeue(cx, now);
        let Some(mut cur) = head else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
            }
            // A large backlog can make the next drop due at once: hence the loop.
            while self.dropping && now >= self.drop_next {
                self.count = self.count.saturating_add(1);
                if let Some(marked) = Self::drop_or_mark(cx, now, cur) {
                    self.drop_next = self.control_law(cx.p, self.drop_next);
                    return Some(marked);
                }
                let (next, ok) = self.do_dequeue(cx, now);
                let Some(next) = next else {
                    self.dropping = false;
                    return None;
                };
                cur = next;
                if ok {
                    self.drop_next = self.control_law(cx.p, self.drop_next);
                } else {
                    self.dropping = false;
                }
            }
            return Some(cur);
        }
        if !ok_to_drop {
            return Some(cur);
        }
        let out = match Self::drop_or_mark(cx, now, cur) {
            Some(marked) => Some(marked),
            None => self.do_dequeue(cx, now).0,
        };
        self.enter_dropping(cx.p, now);
        out
    }

    /// Enters the dropping state after the first drop (or mark) of an episode. If the
    /// last episode ended recently, resume near its drop rate (RFC 8289 §5.6).
    fn enter_dropping(&mut self, p: &CoDelParams, now: Instant) {
        self.dropping = true;
        let delta = self.count.saturating_sub(self.lastcount);
        let recent = now.saturating_duration_since(self.drop_next) < p.interval * 16;
        self.count = if delta > 1 && recent { delta } else { 1 };
        self.lastcount = self.count;
        self.drop_next = self.control_law(p, now);
    }
}

#[derive(Clone, Debug)]
pub struct CoDel {
    p: CoDelParams,
    q: Fifo,
    vars: CoDelVars,
    /// Packets dropped by the last `dequeue` (drained by the owner).
    dropped: VecDeque<QueueDrop>,
}

impl CoDel {
    pub fn new(p: CoDelParams) -> Result<Self, NetError> {
        p.validate()?;
        Ok(CoDel {
            p,
            q: Fifo::with_capacity(p.limit_packets.min(64)),
            vars: CoDelVars::default(),
            dropped: VecDeque::new(),
        })
    }
}

impl Queue for CoDel {
    fn enqueue(&mut self, now: Instant, pkt: Packet) -> Result<(), Packet> {
        if self.q.len() >= self.p.limit_packets {
            return Err(pkt);
        }
        self.q.push(pkt, now, false);
        Ok(())
    }

    fn dequeue(&mut self, now: Instant) -> Option<Dequeued> {
        self.dropped.clear();
        let mut cx = CoDelCtx {
            p: &self.p,
            q: &mut self.q,
            other_backlog: 0,
            dropped: &mut self.dropped,
        };
        self.vars.dequeue(&mut cx, now).map(Dequeued::from)
    }

    fn drops_pending(&self) -> bool {
        !self.dropped.is_empty()
    }

    fn poll_drop(&mut self) -> Option<QueueDrop> {
        // The drops of one dequeue call, oldest first.
        self.dropped.pop_front()
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
    use brisk_wire::{peek_ecn, Ecn};

    fn ms(t: u64) -> Instant {
        Instant::from_millis(t)
    }

    /// Feeds one 1500-byte packet every `gap_us` and serves one every `svc_us` (a
    /// standing queue when gap < svc) for `dur_ms`; returns (dequeue time, dropped ids
    /// of that dequeue, delivered packet) per service.
    fn run(
        q: &mut CoDel,
        gap_us: u64,
        svc_us: u64,
        dur_ms: u64,
        ecn: Ecn,
    ) -> Vec<(Instant, Vec<u64>, Option<Dequeued>)> {
        let mut out = Vec::new();
        let (mut next_in, mut next_out, mut id) = (0u64, svc_us, 0u64);
        let end = dur_ms * 1000;
        while next_in < end || next_out < end {
            if next_in <= next_out && next_in < end {
                let _ = q.enqueue(Instant::from_micros(next_in), ip(id, 1500, ecn));
                id += 1;
                next_in += gap_us;
            } else {
                let now = Instant::from_micros(next_out);
                let d = q.dequeue(now);
                let drops: Vec<u64> = std::iter::from_fn(|| q.poll_drop())
                    .map(|x| x.pkt.id)
                    .collect();
                out.push((now, drops, d));
                next_out += svc_us;
            }
        }
        out
    }

    #[test]
    fn a_queue_below_target_is_never_dropped() {
        let mut q = CoDel::new(CoDelParams::default()).unwrap();
        // Arrivals slower than service: sojourn ~0.
        let r = run(&mut q, 1200, 1000, 2000, Ecn::NotEct);
        assert!(r.iter().all(|x| x.1.is_empty()));
    }

    #[test]
    fn a_standing_queue_is_dropped_after_one_interval_then_faster() {
        let mut q = CoDel::new(CoDelParams::default()).unwrap();
        // 1.25x overload: the sojourn passes 5 ms after ~25 ms.
        let r = run(&mut q, 800, 1000, 20_000, Ecn::NotEct);
        let drops: Vec<Instant> = r
            .iter()
            .flat_map(|(t, d, _)| d.iter().map(move |_| *t))
            .collect();
        assert!(!drops.is_empty());
        // The first drop waits one interval after the sojourn first exceeds target.
        let above = r
            .iter()
            .find(|(t, _, d)| {
                d.as_ref()
                    .is_some_and(|d| d.sojourn(*t) >= Duration::from_millis(5))
            })
            .map(|x| x.0)
            .unwrap();
        let first = drops[0];
        assert!(
            first >= above + Duration::from_millis(99)
                && first <= above + Duration::from_millis(102),
            "sojourn above target at {above:?}, first drop {first:?}"
        );
        // Then one interval/√count apart: 100, 100/√2 ≈ 70.7, 100/√3 ≈ 57.7 ms (to the
        // 1-ms service grid).
        let gaps: Vec<f64> = drops
            .windows(2)
            .map(|w| (w[1] - w[0]).as_secs_f64() * 1e3)
            .collect();
        for (g, want) in gaps.iter().zip([100.0, 70.7, 57.7, 50.0]) {
            assert!((g - want).abs() < 1.5, "{gaps:?}");
        }
        // Unresponsive traffic 25 % over the rate needs one drop in five arrivals
        // (250/s), which the √count ramp reaches after about 5 s; later CoDel drops at
        // that rate and the queue stays below its 1000-packet limit.
        let late = drops.iter().filter(|t| **t > ms(15_000)).count();
        assert!(
            (1000..=1500).contains(&late),
            "{late} drops in the last 5 s"
        );
        assert!(q.len_packets() < 1000, "{} queued", q.len_packets());
    }

    #[test]
    fn with_ecn_it_marks_ect_packets_instead_of_dropping_them() {
        let p = CoDelParams {
            ecn: true,
            ..CoDelParams::default()
        };
        let mut q = CoDel::new(p).unwrap();
        let r = run(&mut q, 800, 1000, 1000, Ecn::Ect0);
        assert!(r.iter().all(|x| x.1.is_empty()), "no drops");
        let marked: Vec<&Dequeued> = r
            .iter()
            .filter_map(|x| x.2.as_ref())
            .filter(|d| d.ce_marked)
            .collect();
        assert!(!marked.is_empty());
        assert!(marked
            .iter()
            .all(|d| peek_ecn(&d.pkt.data) == Some(Ecn::Ce)));
        // Not-ECT traffic through the same ECN queue is dropped.
        let mut q = CoDel::new(p).unwrap();
        let r = run(&mut q, 800, 1000, 1000, Ecn::NotEct);
        assert!(r.iter().any(|x| !x.1.is_empty()));
        assert!(r.iter().filter_map(|x| x.2.as_ref()).all(|d| !d.ce_marked));
    }

    #[test]
    fn one_mtu_of_backlog_is_never_dropped_and_the_limit_tail_drops() {
        let mut q = CoDel::new(CoDelParams {
            limit_packets: 3,
            ..CoDelParams::default()
        })
        .unwrap();
        for i in 0..3 {
            q.enqueue(ms(0), ip(i, 1500, Ecn::NotEct)).unwrap();
        }
        assert_eq!(
            q.enqueue(ms(0), ip(3, 1500, Ecn::NotEct)).unwrap_err().id,
            3
        );
        // Old packets, but after taking the head only 1 MTU is left behind it.
        assert!(q.dequeue(ms(500)).is_some());
        assert!(q.dequeue(ms(700)).is_some());
        assert!(q.dequeue(ms(900)).is_some());
        assert!(q.poll_drop().is_none());
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let e = CoDel::new(CoDelParams {
            target: Duration::from_millis(100),
            ..CoDelParams::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("queue.target"), "{e}");
        let e = CoDel::new(CoDelParams {
            interval: Duration::ZERO,
            ..CoDelParams::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("queue.interval"), "{e}");
    }
}
