//! Path impairments as an element of their own, placed after a [`Link`](crate::Link)
//! (or anywhere): fixed extra delay, jitter, duplication and bit corruption, in the
//! spirit of Linux netem (which brisk's emulator cannot use, see spec/anchors.md).
//!
//! Per packet, in this order:
//! 1. duplication with probability `duplicate_p`: one extra copy (same `id`, since
//!    only the simulator can mint ids), which then goes through steps 2 and 3 on its own;
//! 2. corruption with probability `corrupt_p`: one uniformly chosen bit of the IP
//!    packet is flipped. A single-bit error always changes the Internet checksum
//!    (RFC 1071), so the receiver's IPv4 or TCP checksum catches it;
//! 3. delay `delay + U[0, jitter]` (integer ns, uniform). With `reorder = false` a
//!    packet never leaves before its predecessor (its departure is pushed back to the
//!    previous one's, as netem does with a rate), so jitter only bunches packets; with
//!    `reorder = true` each packet keeps its own draw and later ones may overtake.
//!
//! Duplication, corruption and jitter draw from separate ChaCha streams, so turning one
//! knob does not reshuffle the others' random choices.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use brisk_time::{dur_nanos, Duration, Instant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::element::{Element, Packet};
use crate::error::{check_prob, NetError};
use crate::loss::chance;
use crate::stats::{Counters, DropReason};
use crate::trace::{EventLog, NetEvent};

const JITTER_STREAM: u64 = 2;
const DUPLICATE_STREAM: u64 = 3;
const CORRUPT_STREAM: u64 = 4;

/// Default bound on packets held by an impairment.
pub const DEFAULT_IMPAIR_LIMIT: usize = 1 << 20;

#[derive(Clone, Debug, PartialEq)]
pub struct ImpairParams {
    /// Fixed extra delay for every packet.
    pub delay: Duration,
    /// Each packet is delayed a further uniform `[0, jitter]`.
    pub jitter: Duration,
    /// Whether jitter may reorder packets.
    pub reorder: bool,
    /// Probability that a packet is duplicated.
    pub duplicate_p: f64,
    /// Probability that a packet (each copy independently) has one bit flipped.
    pub corrupt_p: f64,
    /// Most packets held at once; beyond it packets drop as `Overflow`.
    pub limit_packets: usize,
}

impl Default for ImpairParams {
    fn default() -> Self {
        ImpairParams {
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
            reorder: false,
            duplicate_p: 0.0,
            corrupt_p: 0.0,
            limit_packets: DEFAULT_IMPAIR_LIMIT,
        }
    }
}

/// A held packet, ordered by departure then arrival, so equal times leave FIFO.
#[derive(Clone, Debug)]
struct Held {
    at: Instant,
    seq: u64,
    pkt: Packet,
}

impl PartialEq for Held {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Held {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

#[derive(Clone, Debug)]
pub struct Impairment {
    delay_ns: u64,
    jitter_ns: u64,
    reorder: bool,
    duplicate_p: f64,
    corrupt_p: f64,
    limit: usize,
    /// Min-heap on (departure, seq). Without reordering departures are non-decreasing
    /// in seq, so it degenerates to a FIFO.
    held: BinaryHeap<Reverse<Held>>,
    seq: u64,
    last_departure: Instant,
    last_now: Instant,
    rng_jitter: ChaCha8Rng,
    rng_dup: ChaCha8Rng,
    rng_corrupt: ChaCha8Rng,
    counters: Counters,
    log: EventLog,
}

fn stream(seed: u64, n: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(n);
    rng
}

impl Impairment {
    pub fn new(params: ImpairParams, seed: u64) -> Result<Self, NetError> {
        if params.limit_packets == 0 {
            return Err(NetError::invalid("limit_packets", 0, "must be at least 1"));
        }
        Ok(Impairment {
            delay_ns: dur_nanos(params.delay),
            jitter_ns: dur_nanos(params.jitter),
            reorder: params.reorder,
            duplicate_p: check_prob("duplicate_p", params.duplicate_p)?,
            corrupt_p: check_prob("corrupt_p", params.corrupt_p)?,
            limit: params.limit_packets,
            held: BinaryHeap::with_capacity(params.limit_packets.min(1024)),
            seq: 0,
            last_departure: Instant::ZERO,
            last_now: Instant::ZERO,
            rng_jitter: stream(seed, JITTER_STREAM),
            rng_dup: stream(seed, DUPLICATE_STREAM),
            rng_corrupt: stream(seed, CORRUPT_STREAM),
            counters: Counters::default(),
            log: EventLog::default(),
        })
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Packets held (waiting out their delay).
    pub fn len_packets(&self) -> usize {
        self.held.len()
    }

    /// Starts the per-packet event log, keeping at most `capacity` undrained events.
    pub fn enable_event_log(&mut self, capacity: usize) {
        self.log.enable(capacity);
    }

    /// Moves the logged events, oldest first, to the end of `out`.
    pub fn drain_events(&mut self, out: &mut Vec<NetEvent>) {
        self.log.drain_into(out);
    }

    pub fn events_lost(&self) -> u64 {
        self.log.lost()
    }

    fn maybe_corrupt(&mut self, now: Instant, pkt: &mut Packet) {
        if pkt.is_empty() || !chance(&mut self.rng_corrupt, self.corrupt_p) {
            return;
        }
        let bit = self.rng_corrupt.gen_range(0..pkt.len().saturating_mul(8));
        // Through `data_mut`, which clears `l4_csum_valid`: a damaged packet must be
        // verified (and dropped) by its receiver, never trusted.
        pkt.data_mut()[bit / 8] ^= 0x80 >> (bit % 8);
        self.counters.corrupted = self.counters.corrupted.saturating_add(1);
        self.log.push(|| NetEvent::Corrupt {
            at: now,
            id: pkt.id,
            flow: pkt.flow,
            bit,
        });
    }

    fn schedule(&mut self, now: Instant, mut pkt: Packet) {
        if self.held.len() >= self.limit {
            self.counters.count_drop(DropReason::Overflow, pkt.len());
            return self.log.push(|| NetEvent::Drop {
                at: now,
                id: pkt.id,
                flow: pkt.flow,
                bytes: pkt.len(),
                reason: DropReason::Overflow,
            });
        }
        self.maybe_corrupt(now, &mut pkt);
        let extra = if self.jitter_ns == 0 {
            0
        } else {
            self.rng_jitter.gen_range(0..=self.jitter_ns)
        };
        let mut at = Instant::from_nanos(
            now.as_nanos()
                .saturating_add(self.delay_ns)
                .saturating_add(extra),
        );
        if !self.reorder {
            at = at.max(self.last_departure);
        }
        self.last_departure = self.last_departure.max(at);
        let seq = self.seq;
        self.seq = self.seq.wrapping_add(1);
        self.held.push(Reverse(Held { at, seq, pkt }));
    }
}

impl Element for Impairment {
    fn handle_packet(&mut self, now: Instant, pkt: Packet) {
        debug_assert!(now >= self.last_now, "time ran backwards");
        let now = now.max(self.last_now);
        self.last_now = now;
        self.counters.input.add(pkt.len());
        if chance(&mut self.rng_dup, self.duplicate_p) {
            self.counters.duplicated = self.counters.duplicated.saturating_add(1);
            self.log.push(|| NetEvent::Duplicate {
                at: now,
                id: pkt.id,
                flow: pkt.flow,
            });
            let copy = pkt.clone();
            self.schedule(now, pkt);
            self.schedule(now, copy);
        } else {
            self.schedule(now, pkt);
        }
    }

    fn poll_packet(&mut self, now: Instant) -> Option<Packet> {
        self.last_now = self.last_now.max(now);
        if self.held.peek().is_some_and(|h| h.0.at <= now) {
            // NOTE(unwrap): just peeked a packet.
            let Reverse(h) = self.held.pop().unwrap();
            self.counters.output.add(h.pkt.len());
            self.log.push(|| NetEvent::Depart {
                at: h.at,
                id: h.pkt.id,
                flow: h.pkt.flow,
                bytes: h.pkt.len(),
            });
            return Some(h.pkt);
        }
        None
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.held.peek().map(|h| h.0.at)
    }
}

#[cfg(test)]
#[path = "impair_tests.rs"]
mod tests;
