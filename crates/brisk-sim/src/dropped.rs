//! Which stream bytes the bottleneck dropped, per flow (`RunOptions::dropped_ranges`).
//!
//! Tail-loss analyses (the TLP paper's "flows with a loss in their last four
//! segments") need the losses themselves, not the sender's retransmissions, which
//! also count spurious ones (a TLP probe whose original was only queued). The run's
//! observer sees every packet handed to the bottleneck and every packet leaving it:
//! data segments are remembered by packet id while inside, each flow's ISN from its
//! SYN, and the bottleneck's drop records (which name the packet id) turn the ones
//! that never left into stream ranges. Memory is bounded by the packets inside the
//! bottleneck plus the drops (at most the meter's `MAX_DROP_RECORDS`).

use brisk_net::meter::DropRecord;
use brisk_net::Packet;
use std::collections::HashMap;

use crate::web::ByteRanges;

/// TCP flag bits (RFC 9293 §3.1).
const FIN: u8 = 0x01;
const SYN: u8 = 0x02;
const ACK: u8 = 0x10;

/// A data segment inside the bottleneck: flow, sequence number, payload length, FIN.
#[derive(Clone, Copy, Debug)]
struct Inside {
    flow: u32,
    seq: u32,
    len: u32,
    fin: bool,
}

#[derive(Debug, Default)]
pub struct DropTracker {
    /// Each flow's initial sequence number (from its SYN).
    isn: HashMap<u32, u32>,
    inside: HashMap<u64, Inside>,
}

impl DropTracker {
    /// A packet handed to the bottleneck's entry.
    pub fn on_enter(&mut self, pkt: &Packet) {
        let Some((seq, flags)) = brisk_wire::peek::tcp_seq_flags(&pkt.data) else {
            return;
        };
        if flags & SYN != 0 && flags & ACK == 0 {
            self.isn.insert(pkt.flow, seq);
            return;
        }
        let len = brisk_wire::peek::tcp_payload_len(&pkt.data).unwrap_or(0) as u32;
        if len > 0 || flags & FIN != 0 {
            self.inside.insert(
                pkt.id,
                Inside {
                    flow: pkt.flow,
                    seq,
                    len,
                    fin: flags & FIN != 0,
                },
            );
        }
    }

    /// A packet left the bottleneck's exit.
    pub fn on_exit(&mut self, pkt: &Packet) {
        self.inside.remove(&pkt.id);
    }

    /// The dropped stream ranges per flow (indexed by flow id, `flows` long): stream
    /// offset = sequence number − ISN − 1; a FIN is the byte after the data.
    pub fn ranges(&self, drops: &[DropRecord], flows: usize) -> Vec<ByteRanges> {
        let mut out = vec![ByteRanges::default(); flows];
        for d in drops {
            let Some(s) = self.inside.get(&d.id) else {
                continue;
            };
            let (Some(isn), Some(r)) = (self.isn.get(&s.flow), out.get_mut(s.flow as usize)) else {
                continue;
            };
            let start = u64::from(s.seq.wrapping_sub(*isn).wrapping_sub(1));
            let end = start + u64::from(s.len) + u64::from(s.fin);
            r.add(start, end);
        }
        out
    }
}
