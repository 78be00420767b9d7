//! The one trait every network element implements.

use brisk_time::Instant;

/// A packet in flight: the raw IP bytes plus simulator metadata that is never on the wire.
#[derive(Clone, Debug)]
pub struct Packet {
    /// The whole IP packet, as a host emitted it (elements may corrupt or CE-mark it).
    ///
    /// Whoever changes these bytes in a way that can change whether the transport
    /// checksum verifies (anything but the IPv4 TOS / IPv6 traffic class and the IPv4
    /// header checksum) must clear [`l4_csum_valid`](Self::l4_csum_valid);
    /// [`data_mut`](Self::data_mut) does.
    pub data: Vec<u8>,
    /// Unique per run; orders ties deterministically and names the packet in traces.
    pub id: u64,
    /// Which flow (sender/receiver pair) this belongs to; for metrics only.
    pub flow: u32,
    /// When the sending host emitted it.
    pub sent_at: Instant,
    /// The transport (TCP) checksum is known to be correct, so a receiving host may
    /// skip verifying it (the IPv4 header checksum is still checked). The model is
    /// Linux's `CHECKSUM_UNNECESSARY` (include/linux/skbuff.h), which veth, loopback
    /// and virtio-net (`VIRTIO_NET_HDR_F_DATA_VALID`) set for a packet whose path
    /// vouches for it: verifying a sum the sender computed a moment ago, over bytes
    /// nothing touched since, took about 6 % of a simulated bulk flow's CPU samples
    /// (docs/performance.md, the simulator's sixth round).
    ///
    /// True only where the packet was just emitted by brisk's own `emit_tcp_packet`
    /// (via `Endpoint::poll_transmit`); false for anything from outside (TUN, pcap,
    /// scripts, tests) and for UDP. Anything that rewrites `data` beyond the TOS byte
    /// and IPv4 header checksum (the corruption model, say) must clear it. CE marking
    /// may keep it: the TCP pseudo-header (RFC 9293 §3.1) has no TOS / traffic class.
    pub l4_csum_valid: bool,
}

impl Packet {
    pub fn len(&self) -> usize {
        self.data.len()
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    /// The bytes, to change: clears [`l4_csum_valid`](Self::l4_csum_valid), since the
    /// change may invalidate the transport checksum.
    pub fn data_mut(&mut self) -> &mut [u8] {
        self.l4_csum_valid = false;
        &mut self.data
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
