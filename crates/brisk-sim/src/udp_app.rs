//! The `udp` application: fixed-size datagrams every `interval`, each sent as one
//! IP/UDP packet (RFC 768, `brisk_wire::udp`) with no congestion control and no
//! retransmission. It is the UDP arm of the Minion VoIP experiment (Minion NSDI 2012
//! §8.2, Fig. 7–8: "TCP, UDP, and uCOBS"), so its payload and accounting are the
//! `datagrams` app's (`crate::dgram_app`): brisk-app's 24-byte record header (index,
//! generation time, length) and the flow's pattern; the receiver checks each
//! datagram's bytes and counts it once, with its latency from generation to arrival.
//! A datagram the network drops is simply never delivered.
//!
//! The host (`crate::host`) sends what the source has due before anything its TCP
//! endpoint has, and hands every UDP packet it receives to its UDP sink instead of
//! the endpoint. The packets cross the same access links and bottleneck queue as TCP.

use brisk_time::{Duration, Instant};
use brisk_wire::udp::{emit_udp_packet, parse_udp_packet, UdpRepr};
use brisk_wire::{Ecn, IpRepr, Ipv4Repr, Ipv6Repr};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;

use crate::dgram_app::{datagram_bytes, DgramAccount, Schedule};
use brisk_app::payload::Pattern;
use brisk_app::records::MAX_PENDING_RECORDS;

/// The source port of every UDP flow (each flow has its own pair of hosts).
pub const UDP_SRC_PORT: u16 = 49152;
/// Largest `size` of a `udp` flow (the scenario vocabulary's limit).
pub use brisk_scenario::app::MAX_UDP_PAYLOAD;

/// The sending side.
#[derive(Debug)]
pub struct UdpSource {
    pat: Rc<Pattern>,
    size: u64,
    sched: Schedule,
    started: bool,
    /// Due, not yet handed to the network: (index, generation time). The host drains
    /// it at once, so it holds at most the datagrams of one instant; bounded anyway.
    due: VecDeque<(u64, Instant)>,
    ident: u16,
    payload: Vec<u8>,
    /// Datagrams sent.
    pub sent: u64,
    /// Payload bytes sent.
    pub bytes: u64,
    /// Datagrams not sent because `due` was full.
    pub skipped: u64,
}

impl UdpSource {
    pub fn new(
        pat: Rc<Pattern>,
        size: u64,
        interval: Duration,
        jitter: Duration,
        count: Option<u64>,
    ) -> Self {
        UdpSource {
            pat,
            size,
            sched: Schedule::new(interval, jitter, count),
            started: false,
            due: VecDeque::new(),
            ident: 0,
            payload: Vec::with_capacity(size as usize),
            sent: 0,
            bytes: 0,
            skipped: 0,
        }
    }

    /// When the source next needs the host: its start, then each generation time.
    pub fn next_at(&self, start: Instant) -> Option<Instant> {
        if self.started {
            self.sched.next_at
        } else {
            Some(start)
        }
    }

    /// Generates what is due by `now` (starting the schedule at `start` first).
    pub fn generate(&mut self, now: Instant, start: Instant, rng: &mut ChaCha8Rng) {
        if now < start {
            return;
        }
        if !self.started {
            self.started = true;
            self.sched.start(start);
        }
        let (due, skipped) = (&mut self.due, &mut self.skipped);
        self.sched.due(now, rng, |index, t| {
            if due.len() < MAX_PENDING_RECORDS {
                due.push_back((index, t));
            } else {
                *skipped += 1;
            }
        });
    }

    /// Writes the next due datagram from `src` to `dst` into `out` as a whole IP
    /// packet; false when none is due (or the addresses' families differ).
    pub fn poll_packet(&mut self, src: IpAddr, dst: SocketAddr, out: &mut Vec<u8>) -> bool {
        let Some((index, t)) = self.due.pop_front() else {
            return false;
        };
        let ip = match (src, dst.ip()) {
            (IpAddr::V4(s), IpAddr::V4(d)) => IpRepr::V4(Ipv4Repr {
                src: s,
                dst: d,
                protocol: brisk_wire::IPPROTO_UDP,
                dscp: 0,
                ecn: Ecn::NotEct,
                ttl: 64,
                ident: self.ident,
                dont_frag: true,
                payload_len: 0,
            }),
            (IpAddr::V6(s), IpAddr::V6(d)) => IpRepr::V6(Ipv6Repr {
                src: s,
                dst: d,
                next_header: brisk_wire::IPPROTO_UDP,
                dscp: 0,
                ecn: Ecn::NotEct,
                flow_label: 0,
                hop_limit: 64,
                payload_len: 0,
            }),
            _ => {
                self.skipped += 1;
                return false;
            }
        };
        self.ident = self.ident.wrapping_add(1);
        datagram_bytes(&self.pat, index, t, self.size, &mut self.payload);
        let udp = UdpRepr {
            src_port: UDP_SRC_PORT,
            dst_port: dst.port(),
        };
        emit_udp_packet(&ip, &udp, &self.payload, out);
        self.sent += 1;
        self.bytes += self.size;
        true
    }

    /// Datagrams generated (sent, due or skipped).
    pub fn generated(&self) -> u64 {
        self.sched.generated
    }
}

/// The receiving side: datagrams to `port`.
#[derive(Debug)]
pub struct UdpSink {
    port: u16,
    pub acc: DgramAccount,
    /// Packets that did not parse as UDP (bad checksum, length) or were for another
    /// port; also counted in `acc.bad`.
    pub bad_packets: u64,
}

impl UdpSink {
    pub fn new(pat: Rc<Pattern>, size: u64, count: Option<u64>, port: u16) -> Self {
        UdpSink {
            port,
            acc: DgramAccount::new(pat, size, count),
            bad_packets: 0,
        }
    }

    /// A UDP packet arrived at `now`. Returns the payload bytes delivered.
    pub fn on_packet(&mut self, now: Instant, pkt: &[u8]) -> u64 {
        match parse_udp_packet(pkt) {
            Ok((_, udp, payload)) if udp.dst_port == self.port => {
                let before = self.acc.payload_bytes;
                // A FIFO path cannot reorder, and UDP has no order to keep: every
                // datagram counts as delivered in order.
                self.acc.on_datagram(now, payload, true);
                self.acc.payload_bytes - before
            }
            _ => {
                self.bad_packets += 1;
                self.acc.bad += 1;
                0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::net::Ipv4Addr;

    #[test]
    fn a_source_sends_on_schedule_and_a_sink_accounts_each_once() {
        let pat = Pattern::new(9);
        let mut src = UdpSource::new(
            pat.clone(),
            640,
            Duration::from_millis(20),
            Duration::ZERO,
            Some(3),
        );
        let mut sink = UdpSink::new(pat, 640, Some(3), 5001);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let start = Instant::ZERO + Duration::from_secs(1);
        assert_eq!(src.next_at(start), Some(start));
        src.generate(Instant::ZERO, start, &mut rng);
        let (s, d) = (
            IpAddr::V4(Ipv4Addr::new(198, 18, 0, 1)),
            SocketAddr::new(IpAddr::V4(Ipv4Addr::new(198, 19, 0, 1)), 5001),
        );
        let mut out = Vec::new();
        assert!(!src.poll_packet(s, d, &mut out), "nothing before the start");
        src.generate(start + Duration::from_millis(45), start, &mut rng);
        assert_eq!(src.generated(), 3);
        assert_eq!(src.next_at(start), None, "a counted source ends");
        let mut pkts = Vec::new();
        while src.poll_packet(s, d, &mut out) {
            assert_eq!(out.len(), 20 + 8 + 640);
            pkts.push(out.clone());
        }
        assert_eq!(pkts.len(), 3);
        let now = start + Duration::from_millis(100);
        for p in &pkts {
            assert_eq!(sink.on_packet(now, p), 640);
        }
        // A duplicate is bad, not a second delivery; so is a corrupted packet.
        assert_eq!(sink.on_packet(now, &pkts[0]), 0);
        let mut bad = pkts[1].clone();
        bad[40] ^= 1;
        assert_eq!(sink.on_packet(now, &bad), 0);
        assert_eq!(sink.acc.delivered, 3);
        assert!(sink.acc.complete());
        assert_eq!((sink.acc.bad, sink.bad_packets), (2, 1));
        let lat: Vec<u64> = sink.acc.deliveries.iter().map(|x| x.2 - x.1).collect();
        assert_eq!(lat, vec![100_000_000, 80_000_000, 60_000_000]);
    }
}
