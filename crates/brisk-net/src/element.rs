//! The one trait every network element implements.

use brisk_time::Instant;

/// A packet in flight: the raw IP bytes plus simulator metadata that is never on the wire.
#[derive(Clone, Debug)]
pub struct Packet {
    /// The whole IP packet, as a host emitted it (elements may corrupt or CE-mark it).
    pub data: Vec<u8>,
    /// Unique per run; orders ties deterministically and names the packet in traces.
    pub id: u64,
    /// Which flow (sender/receiver pair) this belongs to; for metrics only.
    pub flow: u32,
    /// When the sending host emitted it.
    pub sent_at: Instant,
}

impl Packet {
    pub fn len(&self) -> usize {
        self.data.len()
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// A sans-IO network element: packets go in with `handle_packet`, come out of
/// `poll_packet` once their (absolute) departure time has come, and `poll_timeout`
/// says when to poll next.
///
/// Drivers must, after any `handle_packet` or once `now >= poll_timeout()`, call
/// `poll_packet(now)` until it returns `None`.
pub trait Element {
    /// A packet arrives at `now`.
    fn handle_packet(&mut self, now: Instant, pkt: Packet);
    /// The next packet whose departure time is `<= now`, if any.
    fn poll_packet(&mut self, now: Instant) -> Option<Packet>;
    /// The earliest time at which `poll_packet` may return something; `None` when idle.
    fn poll_timeout(&self) -> Option<Instant>;
}

/// Lets a driver hold heterogeneous elements as `Box<dyn Element>`.
impl<E: Element + ?Sized> Element for Box<E> {
    fn handle_packet(&mut self, now: Instant, pkt: Packet) {
        (**self).handle_packet(now, pkt)
    }
    fn poll_packet(&mut self, now: Instant) -> Option<Packet> {
        (**self).poll_packet(now)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        (**self).poll_timeout()
    }
}
