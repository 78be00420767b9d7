//! The two ends of the emulated path. The loop only needs to take packets out of an
//! end, put packets into it, and know when to look again, so a TUN device (packets
//! from a kernel) and, later, a brisk sans-IO TCP `Endpoint` (`poll_transmit` /
//! `handle_packet` / `poll_timeout`) are driven by the same [`Emulator`](crate::Emulator).

use std::io;
use std::os::fd::{AsRawFd, RawFd};

use brisk_time::Instant;

use crate::os::tun::Tun;
use crate::os::vnet::VnetHdr;

/// One end of the path.
pub trait Side {
    /// An fd that turns readable when [`Side::recv`] may yield a packet; `None` for an
    /// end that only produces packets when polled (a sans-IO endpoint).
    fn poll_fd(&self) -> Option<RawFd>;

    /// Takes the next packet this end emits by `now` into `buf` (cleared first; its
    /// capacity is the largest packet taken). `Ok(false)` when there is none now.
    fn recv(&mut self, now: Instant, buf: &mut Vec<u8>) -> io::Result<bool>;

    /// Hands this end a packet at `now`. `Ok(false)` if it could not take it (dropped).
    fn send(&mut self, now: Instant, pkt: &[u8]) -> io::Result<bool>;

    /// Whether this end takes TCP super-packets ([`Side::send_gso`]) for `pkt`'s
    /// destination: a TUN device with offloads does.
    fn takes_gso(&self, _pkt: &[u8]) -> bool {
        false
    }

    /// Hands this end one super-packet at `now`: the virtio header `hdr`, the merged
    /// IP+TCP header `head`, then `payloads` in order (built by
    /// [`crate::os::gro::Run`]). `Ok(false)` if it could not take it; an error (such
    /// as an end that takes no super-packets) leaves the caller to send the members
    /// one by one.
    fn send_gso(
        &mut self,
        _now: Instant,
        _hdr: &VnetHdr,
        _head: &[u8],
        _payloads: &[&[u8]],
    ) -> io::Result<bool> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    /// When this end wants [`Side::recv`] called even without fd readiness (its
    /// timers); `None` when only the fd matters.
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    /// Packets the kernel behind this end dropped because they were not read in time
    /// (a TUN device's full ring), as a running total; `None` when it cannot tell.
    /// Called at the start and the end of a run, never per packet.
    fn kernel_drops(&self) -> Option<u64> {
        None
    }

    /// Whether the packet the last `recv` returned has a transport checksum this side
    /// computed itself (a segment cut out of a super-packet): then it is good by
    /// construction and the egress coalescer need not
    /// sum its payload again (`Packet::l4_csum_valid`). `false` when it cannot tell.
    fn recv_csum_valid(&self) -> bool {
        false
    }
}

impl Side for Tun {
    fn poll_fd(&self) -> Option<RawFd> {
        Some(self.as_raw_fd())
    }

    fn recv(&mut self, _now: Instant, buf: &mut Vec<u8>) -> io::Result<bool> {
        Tun::recv(self, buf)
    }

    fn send(&mut self, _now: Instant, pkt: &[u8]) -> io::Result<bool> {
        Tun::send(self, pkt)
    }

    fn takes_gso(&self, _pkt: &[u8]) -> bool {
        self.offload()
    }

    fn send_gso(
        &mut self,
        _now: Instant,
        hdr: &VnetHdr,
        head: &[u8],
        payloads: &[&[u8]],
    ) -> io::Result<bool> {
        Tun::send_gso(self, hdr, head, payloads)
    }

    fn kernel_drops(&self) -> Option<u64> {
        self.tx_dropped().ok()
    }

    fn recv_csum_valid(&self) -> bool {
        Tun::recv_csum_valid(self)
    }
}

impl<S: Side + ?Sized> Side for Box<S> {
    fn poll_fd(&self) -> Option<RawFd> {
        (**self).poll_fd()
    }
    fn recv(&mut self, now: Instant, buf: &mut Vec<u8>) -> io::Result<bool> {
        (**self).recv(now, buf)
    }
    fn send(&mut self, now: Instant, pkt: &[u8]) -> io::Result<bool> {
        (**self).send(now, pkt)
    }
    fn takes_gso(&self, pkt: &[u8]) -> bool {
        (**self).takes_gso(pkt)
    }
    fn send_gso(
        &mut self,
        now: Instant,
        hdr: &VnetHdr,
        head: &[u8],
        payloads: &[&[u8]],
    ) -> io::Result<bool> {
        (**self).send_gso(now, hdr, head, payloads)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        (**self).poll_timeout()
    }
    fn kernel_drops(&self) -> Option<u64> {
        (**self).kernel_drops()
    }
    fn recv_csum_valid(&self) -> bool {
        (**self).recv_csum_valid()
    }
}
