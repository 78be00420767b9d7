//! Two elements in series acting as one, e.g. a [`Link`](crate::Link) followed by an
//! [`Impairment`](crate::Impairment) for a bottleneck with jitter. Packets leaving
//! `first` enter `second` at the instant they leave, even when the chain is polled
//! late, so a chain behaves exactly like the two elements driven separately.

use brisk_time::Instant;

use crate::element::{Element, Packet};

#[derive(Clone, Debug)]
pub struct Chain<A, B> {
    pub first: A,
    pub second: B,
}

impl<A: Element, B: Element> Chain<A, B> {
    pub fn new(first: A, second: B) -> Self {
        Chain { first, second }
    }

    /// Moves everything `first` emits up to `now` into `second`, at its emission time.
    fn transfer(&mut self, now: Instant) {
        while let Some(t) = self.first.poll_timeout().filter(|t| *t <= now) {
            let mut moved = false;
            while let Some(p) = self.first.poll_packet(t) {
                self.second.handle_packet(t, p);
                moved = true;
            }
            // An element may wake without output (a link's dequeue), but it must then
            // move its timeout on; stop rather than spin if it does not.
            if !moved && self.first.poll_timeout() == Some(t) {
                debug_assert!(
                    false,
                    "element asked to be polled at {t} but made no progress"
                );
                break;
            }
        }
    }
}

impl<A: Element, B: Element> Element for Chain<A, B> {
    fn handle_packet(&mut self, now: Instant, pkt: Packet) {
        self.transfer(now);
        self.first.handle_packet(now, pkt);
        self.transfer(now);
    }

    fn poll_packet(&mut self, now: Instant) -> Option<Packet> {
        self.transfer(now);
        self.second.poll_packet(now)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match (self.first.poll_timeout(), self.second.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impair::{ImpairParams, Impairment};
    use crate::link::{Link, LinkParams};
    use crate::loss::Loss;
    use crate::queue::{AnyQueue, DropTail, QueueLimit};
    use crate::testutil::{run, train};
    use brisk_time::Duration;

    fn link() -> Link {
        let params = LinkParams {
            rate_bps: 8_000_000,
            delay: Duration::from_millis(2),
            ..LinkParams::default()
        };
        let q: AnyQueue = DropTail::new(QueueLimit::Packets(50)).unwrap().into();
        Link::new(params, q, Loss::none()).unwrap()
    }

    fn jitter() -> Impairment {
        let params = ImpairParams {
            jitter: Duration::from_millis(3),
            reorder: true,
            ..ImpairParams::default()
        };
        Impairment::new(params, 9).unwrap()
    }

    #[test]
    fn chain_equals_the_two_elements_driven_in_sequence() {
        let arrivals = train(200, 1000, 1_200_000);
        let mut chain = Chain::new(link(), jitter());
        let joint: Vec<(Instant, u64)> = run(&mut chain, arrivals.clone())
            .into_iter()
            .map(|(t, p)| (t, p.id))
            .collect();
        let mid = run(&mut link(), arrivals);
        let apart: Vec<(Instant, u64)> = run(&mut jitter(), mid)
            .into_iter()
            .map(|(t, p)| (t, p.id))
            .collect();
        assert_eq!(joint.len(), 200);
        assert_eq!(joint, apart);
    }

    #[test]
    fn late_polling_a_chain_keeps_departure_times() {
        let mut exact = Chain::new(link(), jitter());
        exact.second.enable_event_log(10_000);
        run(&mut exact, train(100, 1000, 1_200_000));
        let mut late = Chain::new(link(), jitter());
        late.second.enable_event_log(10_000);
        for (t, p) in train(100, 1000, 1_200_000) {
            late.handle_packet(t, p);
        }
        while late.poll_packet(Instant::from_secs(10)).is_some() {}
        let (mut a, mut b) = (Vec::new(), Vec::new());
        exact.second.drain_events(&mut a);
        late.second.drain_events(&mut b);
        b.sort_by_key(crate::trace::NetEvent::at);
        assert_eq!(a.len(), 100);
        assert_eq!(a, b);
    }
}
