//! Packets on the pure delay lines folded into a link (`Engine::fold_delay_line`),
//! not yet arrived: the link takes them at their arrival times, lazily, at its next
//! call at or after them (`LinkNode`).
//!
//! A dumbbell's forward access line only delays (no rate, no loss, no queueing), so a
//! data segment used to cost two wake-ups and three hand-overs (host → access line →
//! bottleneck → receiver). Folded, the host hands the segment straight to the
//! bottleneck with its arrival time, and the bottleneck wakes once, when the segment
//! leaves (docs/performance.md, "Delay lines folded into the next hop (§1, helper
//! perfevent)").
//!
//! Lines of one delay share a FIFO: packets are handed over at non-decreasing times, so
//! arrivals along one delay are in order. Lines of several delays (flows of different
//! RTTs) are merged by `(arrival, hand-over order)`.

use std::collections::VecDeque;

use brisk_net::Packet;
use brisk_time::Instant;

/// The packets of the folded lines of one delay.
#[derive(Debug)]
struct Line {
    delay_ns: u64,
    /// The sum of the folded lines' `delay_line_limit`s: the most they held at once.
    limit: usize,
    /// (arrival, hand-over number, packet), arrivals non-decreasing.
    q: VecDeque<(Instant, u64, Packet)>,
}

/// Pending arrivals of the lines folded into one node.
#[derive(Debug, Default)]
pub struct Ingress {
    lines: Vec<Line>,
    /// Hand-overs so far: orders arrivals of one instant on lines of different delays.
    handed: u64,
    /// Packets refused because their line was full (as the line itself would have
    /// dropped them; its `Overflow` drops were never reported either).
    pub overflow: u64,
}

/// The most distinct delays folded into one link. Finding the next arrival scans one
/// FIFO head per delay on every call, so the scan must stay short: a dumbbell's flows
/// have a few RTTs, but a scenario may give each of thousands of flows its own. Lines
/// of further delays stay nodes of their own (the unfolded path, the same packets at
/// the same times).
pub const MAX_DELAYS: usize = 8;

impl Ingress {
    /// Takes a line of `delay_ns` holding at most `limit` packets; false (not taken)
    /// when it would be the `MAX_DELAYS + 1`-th distinct delay.
    pub fn add_line(&mut self, delay_ns: u64, limit: usize) -> bool {
        let full = self.lines.len() >= MAX_DELAYS;
        match self.lines.iter_mut().find(|l| l.delay_ns == delay_ns) {
            Some(l) => l.limit = l.limit.saturating_add(limit),
            None if full => return false,
            None => self.lines.push(Line {
                delay_ns,
                limit,
                q: VecDeque::new(),
            }),
        }
        true
    }

    /// Whether any line is folded here (a link without any pays one test per call).
    #[inline]
    pub fn is_folded(&self) -> bool {
        !self.lines.is_empty()
    }

    /// A packet handed over at `now` onto the folded line of `delay_ns`, arriving at
    /// `now + delay_ns`. False if no line of that delay is folded here.
    pub fn push(&mut self, now: Instant, delay_ns: u64, pkt: Packet) -> bool {
        let Some(l) = self.lines.iter_mut().find(|l| l.delay_ns == delay_ns) else {
            return false;
        };
        if l.q.len() >= l.limit {
            self.overflow += 1;
            return true;
        }
        self.handed += 1;
        l.q.push_back((now.saturating_add_nanos(delay_ns), self.handed, pkt));
        true
    }

    /// The line whose front arrives first, by `(arrival, hand-over number)`.
    #[inline]
    fn first(&self) -> Option<usize> {
        if let [l] = &self.lines[..] {
            return (!l.q.is_empty()).then_some(0);
        }
        let mut best: Option<(Instant, u64, usize)> = None;
        for (i, l) in self.lines.iter().enumerate() {
            if let Some(&(at, n, _)) = l.q.front() {
                if best.is_none_or(|(bat, bn, _)| (at, n) < (bat, bn)) {
                    best = Some((at, n, i));
                }
            }
        }
        best.map(|b| b.2)
    }

    /// The next arrival: its time and its packet's length.
    #[inline]
    pub fn front(&self) -> Option<(Instant, usize)> {
        let i = self.first()?;
        self.lines[i].q.front().map(|(at, _, p)| (*at, p.len()))
    }

    /// The next arrival if it is at or before `now`.
    #[inline]
    pub fn pop_due(&mut self, now: Instant) -> Option<(Instant, Packet)> {
        let i = self.first()?;
        let q = &mut self.lines[i].q;
        if q.front().is_some_and(|(at, _, _)| *at <= now) {
            q.pop_front().map(|(at, _, p)| (at, p))
        } else {
            None
        }
    }

    /// Packets on the lines.
    pub fn len(&self) -> usize {
        self.lines.iter().map(|l| l.q.len()).sum()
    }

    /// Whether no packet is on the lines.
    pub fn is_empty(&self) -> bool {
        self.lines.iter().all(|l| l.q.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(id: u64, len: usize) -> Packet {
        Packet {
            data: vec![0; len],
            id,
            flow: 0,
            sent_at: Instant::ZERO,
            l4_csum_valid: false,
        }
    }

    #[test]
    fn at_most_max_delays_distinct_delays_are_folded() {
        let mut g = Ingress::default();
        for d in 0..MAX_DELAYS as u64 {
            assert!(g.add_line(d + 1, 4));
        }
        assert!(!g.add_line(1_000, 4), "one delay too many");
        assert!(g.add_line(1, 4), "a known delay shares its FIFO");
        assert!(!g.push(Instant::ZERO, 1_000, pkt(0, 1)));
    }

    #[test]
    fn lines_of_several_delays_arrive_in_time_then_hand_over_order() {
        let mut g = Ingress::default();
        g.add_line(5, 10);
        g.add_line(3, 10);
        g.add_line(5, 10); // a second line of 5 ns shares the first's FIFO
        assert!(!g.push(Instant::ZERO, 4, pkt(0, 1)), "no line of 4 ns");
        let t = Instant::from_nanos;
        assert!(g.push(t(0), 5, pkt(1, 10))); // arrives 5
        assert!(g.push(t(1), 3, pkt(2, 20))); // arrives 4
        assert!(g.push(t(2), 3, pkt(3, 30))); // arrives 5, handed after 1
        assert!(g.push(t(2), 5, pkt(4, 40))); // arrives 7
        assert_eq!(g.len(), 4);
        assert_eq!(g.front(), Some((t(4), 20)));
        assert!(g.pop_due(t(3)).is_none());
        let order: Vec<(u64, u64)> = std::iter::from_fn(|| g.pop_due(t(100)))
            .map(|(at, p)| (at.as_nanos(), p.id))
            .collect();
        assert_eq!(order, vec![(4, 2), (5, 1), (5, 3), (7, 4)]);
        assert!(g.is_empty());
    }

    /// One run of random packets into three delay lines (5, 5 and 3 ms) in front of a
    /// 10 Mbit/s link with a 4-packet drop-tail queue and 1 ms of delay, the lines
    /// either nodes of their own or folded into the link: what leaves the link (time,
    /// id), its counters, its event log and the engine's counts.
    fn through_lines(
        fold: bool,
        sends: &[(u64, usize, usize)],
        loss: bool,
    ) -> (
        Vec<(u64, u64)>,
        brisk_net::Counters,
        Vec<brisk_net::NetEvent>,
        crate::engine::EngineStats,
    ) {
        use crate::engine::{Engine, NodeId, Observer};
        use crate::node::{LinkNode, SimNode};
        use brisk_net::{DropTail, Link, LinkParams, Loss, LossModel, QueueLimit};
        use brisk_time::Duration;

        struct Out(NodeId, Vec<(u64, u64)>);
        impl Observer for Out {
            fn on_packet(&mut self, now: Instant, from: NodeId, _: NodeId, p: &Packet) {
                if from == self.0 {
                    self.1.push((now.as_nanos(), p.id));
                }
            }
        }
        let link = |rate_bps, ms, limit, loss: Loss| {
            let params = LinkParams {
                rate_bps,
                delay: Duration::from_millis(ms),
                ..LinkParams::default()
            };
            let q = DropTail::new(QueueLimit::Packets(limit)).unwrap().into();
            Link::new(params, q, loss).unwrap()
        };
        let mut e: Engine<SimNode> = Engine::new();
        let b_loss = match loss {
            true => Loss::new(LossModel::Bernoulli { p: 0.2 }, 7).unwrap(),
            false => Loss::none(),
        };
        let mut b = LinkNode::new(link(10_000_000, 1, 4, b_loss));
        b.link.enable_event_log(1 << 16);
        let b = e.add_node(SimNode::Link(Box::new(b)));
        let sink = e.add_node(SimNode::Router(Box::default()));
        e.routes_mut(b).set_default(sink);
        let mut lines = Vec::new();
        for ms in [5, 5, 3] {
            let l = e.add_node(SimNode::Link(Box::new(LinkNode::new(link(
                0,
                ms,
                1000,
                Loss::none(),
            )))));
            e.routes_mut(l).set_default(b);
            if fold {
                let link = &e.node(l).as_link().unwrap().link;
                let d = link.pure_delay().expect("a pure delay line");
                let limit = link.delay_line_limit();
                assert!(e.fold_delay_line(l, b, d, limit));
            }
            lines.push(l);
        }
        let mut out = Out(b, Vec::new());
        for (k, &(t, line, len)) in sends.iter().enumerate() {
            let t = Instant::from_nanos(t);
            e.run_until(t, &mut out);
            e.inject(lines[line], pkt(k as u64, len), &mut out);
        }
        // Stopping in between (as a run's samples do) changes nothing.
        e.run_until(Instant::from_millis(40), &mut out);
        e.run_until(Instant::from_secs(10), &mut out);
        let SimNode::Link(b) = e.node_mut(b) else {
            panic!("b is a link")
        };
        assert!(b.ingress.is_empty());
        let mut log = Vec::new();
        b.link.drain_events(&mut log);
        (out.1, b.link.counters().clone(), log, e.stats().clone())
    }

    #[test]
    fn a_folded_line_delivers_as_the_line_did() {
        // Bursts and gaps: xorshift times, some packets sent together on one line.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // Packets sent together go onto one line: two lines of one delay whose
        // packets arrive at one instant are where the two can differ (the lines' wake
        // order against the order they were handed over; the doc's tie-order note).
        let mut sends: Vec<(u64, usize, usize)> = Vec::new();
        let mut t = 0u64;
        for _ in 0..600 {
            let r = next();
            let mut line = (r >> 16) as usize % 3;
            if r % 3 != 0 {
                t += r % 3_000_000;
            } else if let Some(last) = sends.last() {
                line = last.1;
            }
            let len = [60, 1500, 576, 1500][(r >> 8) as usize % 4];
            sends.push((t, line, len));
        }
        for loss in [false, true] {
            let plain = through_lines(false, &sends, loss);
            let folded = through_lines(true, &sends, loss);
            assert!(plain.0.len() > 300, "{}", plain.0.len());
            assert!(plain.1.dropped_total().packets > 0, "the queue overflows");
            assert_eq!(folded.0, plain.0, "departures (time, id), loss {loss}");
            assert_eq!(folded.1, plain.1, "counters");
            assert_eq!(folded.2, plain.2, "event log");
            // One wake-up and one hand-over less per packet on a line (a burst that
            // left a line together was one wake-up).
            assert_eq!(folded.3.packets, plain.3.packets - sends.len() as u64);
            assert!(folded.3.events < plain.3.events);
        }
    }

    #[test]
    fn a_full_line_refuses_packets() {
        let mut g = Ingress::default();
        g.add_line(5, 2);
        for i in 0..3 {
            assert!(g.push(Instant::ZERO, 5, pkt(i, 1)));
        }
        assert_eq!((g.len(), g.overflow), (2, 1));
    }
}
