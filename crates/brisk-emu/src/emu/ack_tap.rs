//! ACK latency of record streams, measured where the senders meet the emulator: the
//! RDB paper's metric (Opstad et al., LCN 2015, §IV-B: "ACK latency", measured there
//! with a sniffer at the sender) for real runs, defined as the simulator defines it
//! (`brisk-sim`'s `ClientApp::note_sent`/`note_acked`): per record, from the first
//! transmission of the record's last byte to the first cumulative ACK that covers it.
//!
//! The tap sees every packet of the senders' side as the loop reads it from the senders
//! (data, stamped when read) or writes it to them (ACKs, stamped when written): the
//! same instants as the senders' pcap. Both kinds of sender are measured alike (brisk
//! and the kernel), from the wire, with no help from either stack. Flows are told
//! apart by their receiver's address (`route::receiver_flow_ip`); a flow's records are
//! `size` bytes each, back to back from the first byte after the SYN (brisk-app's
//! framing), so record `k` ends at stream offset `(k + 1) · size`.
//!
//! What the two measures do not share: the simulator stamps at the sending host's
//! hand-off, the tap a few µs later (after the sender's device, and for brisk its
//! stack thread's queue) for data and as much earlier for ACKs.
//!
//! Cost per packet: a fixed-field read and, per record boundary crossed or covered,
//! one queue operation. Memory per flow is bounded: at most [`MAX_PENDING`] records
//! await their ACK (beyond that new ones are not timed, and counted) and
//! [`MAX_SAMPLES`] latencies are kept.

use std::collections::VecDeque;

use brisk_wire::peek;

use crate::emu::route::receiver_flow_ip;

/// Most records per flow sent and not yet cumulatively ACKed that are timed.
pub const MAX_PENDING: usize = 1 << 20;
/// Most latency samples kept per flow.
pub const MAX_SAMPLES: usize = 2_000_000;

const SYN: u8 = 0x02;
const RST: u8 = 0x04;
const ACK: u8 = 0x10;

/// One flow's state.
#[derive(Clone, Debug, Default)]
struct FlowTap {
    /// Record size in bytes; 0: not a record stream (not measured).
    size: u64,
    /// ISN + 1 once the sender's SYN was seen: the sequence number of stream offset 0.
    base: Option<u32>,
    /// Stream offset just past the highest byte sent so far.
    high: u64,
    /// Stream offset just past the highest byte cumulatively ACKed so far.
    acked: u64,
    /// End offset of the next record whose last byte has not been sent yet.
    next_end: u64,
    /// Records sent whole and not yet ACKed: (end offset, first transmission ns).
    pending: VecDeque<(u64, u64)>,
    /// (ACK ns, latency ns) per record ACKed.
    samples: Vec<(u64, u64)>,
    /// (record index, first transmission of its last byte ns), in record order.
    first_tx: Vec<(u64, u64)>,
    /// Records not timed because `pending` was full.
    untimed: u64,
}

/// Per-flow ACK latencies of record streams (see the module's doc).
#[derive(Clone, Debug, Default)]
pub struct AckTap {
    flows: Vec<FlowTap>,
}

/// What the tap measured for one flow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AckTapFlow {
    /// (when the ACK came, ACK latency), ns, per record ACKed, in ACK order.
    pub latencies: Vec<(u64, u64)>,
    /// (record index, first transmission of its last byte, ns since the run's origin).
    pub first_tx: Vec<(u64, u64)>,
    /// Records sent while `MAX_PENDING` others awaited their ACK (not timed).
    pub untimed: u64,
}

/// Where `seq` falls in the stream, given the stream's `base` and a recent offset
/// `near` (sequence numbers wrap every 4 GiB; segments are within 2 GiB of it).
fn offset(seq: u32, base: u32, near: u64) -> u64 {
    let rel = seq.wrapping_sub(base);
    let delta = rel.wrapping_sub(near as u32) as i32;
    near.saturating_add_signed(i64::from(delta))
}

impl AckTap {
    /// A tap for flows `0..sizes.len()`; `sizes[i]`: flow i's record size (`None`, or
    /// 0: not measured).
    pub fn new(sizes: &[Option<u64>]) -> AckTap {
        AckTap {
            flows: sizes
                .iter()
                .map(|s| {
                    let size = s.unwrap_or(0);
                    FlowTap {
                        size,
                        next_end: size,
                        ..FlowTap::default()
                    }
                })
                .collect(),
        }
    }

    /// One packet of the senders' side at `at_ns`, either direction.
    pub fn observe(&mut self, at_ns: u64, pkt: &[u8]) {
        let Some(key) = peek::flow_key(pkt) else {
            return;
        };
        let (to_receiver, flow) = match receiver_flow_ip(key.dst) {
            Some(f) => (true, f),
            None => match receiver_flow_ip(key.src) {
                Some(f) => (false, f),
                None => return,
            },
        };
        let Some(f) = self.flows.get_mut(flow as usize).filter(|f| f.size > 0) else {
            return;
        };
        let Some((seq, flags)) = peek::tcp_seq_flags(pkt) else {
            return;
        };
        if flags & RST != 0 {
            return;
        }
        if to_receiver {
            if flags & SYN != 0 {
                f.base.get_or_insert(seq.wrapping_add(1));
                return;
            }
            let (Some(base), Some(len)) = (f.base, peek::tcp_payload_len(pkt)) else {
                return;
            };
            if len == 0 {
                return;
            }
            let end = offset(seq, base, f.high).saturating_add(len as u64);
            f.sent(end, at_ns);
        } else if flags & ACK != 0 && flags & SYN == 0 {
            let (Some(base), Some(ack)) = (f.base, peek::tcp_ack(pkt)) else {
                return;
            };
            f.acked_to(offset(ack, base, f.acked), at_ns);
        }
    }

    /// The measurements, per flow (empty for flows not measured).
    pub fn finish(self) -> Vec<AckTapFlow> {
        self.flows
            .into_iter()
            .map(|f| AckTapFlow {
                latencies: f.samples,
                first_tx: f.first_tx,
                untimed: f.untimed,
            })
            .collect()
    }
}

impl FlowTap {
    /// Bytes up to `end` have now been sent at least once.
    fn sent(&mut self, end: u64, at_ns: u64) {
        if end <= self.high {
            return; // a retransmission, or a bundle of old bytes only
        }
        self.high = end;
        while self.next_end <= end {
            let index = self.next_end / self.size - 1;
            if self.first_tx.len() < MAX_SAMPLES {
                self.first_tx.push((index, at_ns));
            }
            if self.next_end > self.acked {
                if self.pending.len() < MAX_PENDING {
                    self.pending.push_back((self.next_end, at_ns));
                } else {
                    self.untimed += 1;
                }
            }
            self.next_end += self.size;
        }
    }

    /// The receiver has cumulatively ACKed the stream up to `ack`.
    fn acked_to(&mut self, ack: u64, at_ns: u64) {
        if ack <= self.acked {
            return;
        }
        // A FIN takes one sequence number past the data: never past what was sent.
        self.acked = ack.min(self.high.max(self.acked));
        while let Some(&(end, tx)) = self.pending.front() {
            if end > self.acked {
                break;
            }
            self.pending.pop_front();
            if self.samples.len() < MAX_SAMPLES {
                self.samples.push((at_ns, at_ns.saturating_sub(tx)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_wire::ip::{Ecn, IpRepr, Ipv4Repr, IPPROTO_TCP};
    use brisk_wire::packet::emit_tcp_packet;
    use brisk_wire::seq::SeqNum;
    use brisk_wire::tcp::{Flags, TcpRepr};

    const SENDER: [u8; 4] = [198, 18, 0, 1];

    fn pkt(
        flow: usize,
        to_receiver: bool,
        seq: u32,
        ack: u32,
        flags: Flags,
        len: usize,
    ) -> Vec<u8> {
        let recv = crate::emu::dumbbell::receiver_addr(flow).octets();
        let (src, dst) = if to_receiver {
            (SENDER, recv)
        } else {
            (recv, SENDER)
        };
        let payload = vec![7u8; len];
        let ip = IpRepr::V4(Ipv4Repr {
            src: src.into(),
            dst: dst.into(),
            protocol: IPPROTO_TCP,
            dscp: 0,
            ecn: Ecn::NotEct,
            ttl: 64,
            ident: 1,
            dont_frag: true,
            payload_len: 0,
        });
        let tcp = TcpRepr {
            src_port: 40000,
            dst_port: 5201,
            seq: SeqNum(seq),
            ack: SeqNum(ack),
            flags,
            payload: &payload,
            ..TcpRepr::default()
        };
        let mut out = Vec::new();
        emit_tcp_packet(&ip, &tcp, &mut out);
        out
    }

    fn data(flow: usize, seq: u32, len: usize) -> Vec<u8> {
        pkt(flow, true, seq, 1, Flags::ACK, len)
    }

    fn ack(flow: usize, ack: u32) -> Vec<u8> {
        pkt(flow, false, 1, ack, Flags::ACK, 0)
    }

    fn syn(flow: usize, isn: u32) -> Vec<u8> {
        pkt(flow, true, isn, 0, Flags::SYN, 0)
    }

    fn lat(f: &AckTapFlow) -> Vec<u64> {
        f.latencies.iter().map(|x| x.1).collect()
    }

    #[test]
    fn a_record_is_timed_from_its_last_byte_to_the_ack_covering_it() {
        // 100-byte records; ISN near the wrap so offsets cross it.
        let isn = u32::MAX - 150;
        let b = isn.wrapping_add(1);
        let mut t = AckTap::new(&[Some(100)]);
        t.observe(0, &syn(0, isn));
        t.observe(10, &data(0, b, 60)); // record 0's first part
        t.observe(20, &data(0, b.wrapping_add(60), 90)); // rest of 0, half of 1
        t.observe(25, &data(0, b, 60)); // a retransmission: no new first sends
        t.observe(30, &ack(0, b.wrapping_add(60))); // covers no record whole
        t.observe(40, &data(0, b.wrapping_add(150), 50)); // rest of record 1
        t.observe(50, &ack(0, b.wrapping_add(150))); // record 0: 50 - 20
        t.observe(70, &ack(0, b.wrapping_add(200).wrapping_add(1))); // + FIN: record 1
        t.observe(80, &ack(0, b.wrapping_add(200)));
        let f = &t.finish()[0];
        assert_eq!(f.latencies, vec![(50, 30), (70, 30)]);
        assert_eq!(f.first_tx, vec![(0, 20), (1, 40)]);
    }

    #[test]
    fn a_bundle_times_only_its_new_bytes_and_flows_stay_apart() {
        let mut t = AckTap::new(&[Some(10), None, Some(10)]);
        for f in [0, 1, 2] {
            t.observe(0, &syn(f, 999));
        }
        t.observe(1, &data(0, 1000, 10));
        t.observe(2, &data(1, 1000, 10)); // flow 1 is not measured
        t.observe(3, &data(0, 1000, 20)); // RDB: record 0 again with record 1
        t.observe(4, &data(2, 1000, 30));
        t.observe(9, &ack(2, 1030));
        t.observe(10, &ack(0, 1020));
        let r = t.finish();
        assert_eq!(lat(&r[0]), vec![9, 7]);
        assert_eq!(r[0].first_tx, vec![(0, 1), (1, 3)]);
        assert!(r[1].latencies.is_empty());
        assert_eq!(lat(&r[2]), vec![5, 5, 5]);
    }

    #[test]
    fn hostile_input_is_ignored() {
        let mut t = AckTap::new(&[Some(10)]);
        // Data before any SYN, garbage, truncated packets, a SYN-ACK from the receiver.
        t.observe(1, &data(0, 5, 10));
        t.observe(2, &[0x45; 3]);
        t.observe(3, &[]);
        let mut p = data(0, 5, 10);
        p.truncate(30);
        t.observe(4, &p);
        t.observe(5, &pkt(0, false, 77, 1, Flags::SYN | Flags::ACK, 0));
        assert!(t.finish()[0].latencies.is_empty());
        // An ACK far beyond anything sent times nothing that was not sent.
        let mut t = AckTap::new(&[Some(10)]);
        t.observe(0, &syn(0, 0));
        t.observe(1, &data(0, 1, 10));
        t.observe(2, &ack(0, 1_000_001));
        t.observe(3, &data(0, 11, 10));
        t.observe(4, &ack(0, 21));
        assert_eq!(lat(&t.finish()[0]), vec![1, 1]);
    }

    #[test]
    fn pending_records_are_bounded() {
        let mut t = AckTap::new(&[Some(1)]);
        t.observe(0, &syn(0, 0));
        let mut seq = 1u32;
        // 2^20 + 500 one-byte records, never ACKed: the queue stops at its limit.
        while (seq as usize) <= MAX_PENDING + 500 {
            t.observe(1, &data(0, seq, 1400));
            seq += 1400;
        }
        let f = &t.finish()[0];
        assert!(f.untimed > 0);
        assert!(f.latencies.is_empty());
    }
}
