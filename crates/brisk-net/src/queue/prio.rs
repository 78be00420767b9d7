//! Strict priority by DSCP, with push-out priority dropping: the network RC3 needs
//! (Mittal et al., NSDI 2014, §4.2.2: "the queues do priority dropping and priority
//! scheduling"; spec `rc3.md` §1.3 and ambiguity A6).
//!
//! - `bands` bands (1 to 16). A packet's band is `min(DSCP, bands − 1)`, with DSCP the
//!   IPv4 TOS byte or the IPv6 traffic class shifted right by two. Band 0 is served
//!   first; a band is served only when every band above it is empty; FIFO within a band.
//! - One limit (packets or bytes) for all bands together.
//! - Push-out (spec A6): an arrival of band `b` that does not fit evicts the most
//!   recently enqueued packets of the lowest-priority non-empty band numbered above
//!   `b`, newest first, then the next band up, until it fits. When even evicting every
//!   lower-priority packet would not make room (or there is none), the arrival is
//!   rejected and nothing is evicted: a push-out that still ends in a drop would only
//!   add a loss. Evicted packets are reported through [`Queue::poll_drop`] as overflow.
//! - `push_out = false` is the ablation: the arrival is tail-dropped against the shared
//!   limit whatever its band.
//!
//! Linux's counterpart is `sch_prio.c` (`tc qdisc … prio bands N`): up to 16 bands,
//! strict priority, but each band is its own child qdisc with its own limit, and a full
//! band drops its arrival; Linux never pushes out. The shared buffer with push-out is
//! what the paper's simulated routers do, and what keeps priority-0 TCP unharmed by a
//! buffer full of low-priority packets (spec §1.3).
//!
//! Packets without a readable IPv4 or IPv6 header go to the lowest-priority band (and
//! are counted as unclassified): a packet we cannot read must not pre-empt, or push
//! out, traffic that declared its class. (Linux would give a non-IP frame the default
//! priority; in brisk every packet on a link is IP, so such a packet is garbage or
//! hostile, and the least-privileged band is the safe place for it.)
//!
//! Cost per packet: dequeue is one `trailing_zeros` on the mask of non-empty bands and
//! a `pop_front`. An enqueue that fits is a peek and a `push_back`. When the queue is
//! full, the room check sums the occupancy of at most 15 bands (by walking the mask's
//! set bits) and each eviction is one `leading_zeros` and a `pop_back`; every packet is
//! evicted at most once, so evictions are O(1) amortised. The bands' deques keep their
//! capacity, so a steady state allocates nothing.
//!
//! PIE on band 0 ([`Prio::with_band0_pie`], scenario key `band0_pie`; brisk's choice
//! for composing RC3 with ABE, docs/mechanisms/rc3.md "Beyond the paper"): band 0
//! becomes a [`Pie`] whose controller sees band 0 alone. Its delay estimate is band 0's
//! backlog over band 0's departure rate, which strict priority makes the link's rate
//! whenever band 0 is backlogged, so it is the delay a band-0 packet waits. An arrival
//! of band 0 is first judged by PIE (drop early, or CE-mark an ECN-capable packet),
//! then admitted to the shared buffer as any other (push-out included); a PIE drop is
//! counted as the band's `rejected`. The lower bands are untouched: RC3's copies are
//! not ECN-capable, and PIE on them would only drop what push-out already discards
//! first when room is needed.
//!
//! Host NICs (RC3 §4.2.2 lengthens the host's transmit queue so that it "can store all
//! the packets forwarded by the TCP stack"): use a large explicit limit rather than an
//! unbounded queue, e.g. `queue = { kind = "prio", bands = 4, packets = 1000000 }`
//! (about 1.5 GB at most of 1500-byte packets, allocated only as it fills; RC3's three
//! default levels cover 4440 segments per flow, so this holds more than 200 such flows
//! at once).

use std::collections::VecDeque;

use brisk_time::Instant;
use serde::Serialize;

use super::fifo::Fifo;
use super::pie::{Pie, PieParams};
use super::{Dequeued, Queue, QueueDrop, QueueLimit};
use crate::element::Packet;
use crate::error::NetError;

/// Most bands (Linux's `TCQ_PRIO_BANDS`).
pub const MAX_BANDS: usize = 16;
/// Bands when a description gives none (Linux's `prio` default).
pub const DEFAULT_BANDS: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrioParams {
    /// Number of bands, 1 to [`MAX_BANDS`].
    pub bands: usize,
    /// Shared by all bands.
    pub limit: QueueLimit,
    /// Whether a higher-priority arrival pushes out lower-priority packets (spec A6);
    /// false is the tail-drop ablation.
    pub push_out: bool,
}

impl Default for PrioParams {
    fn default() -> Self {
        PrioParams {
            bands: DEFAULT_BANDS,
            limit: QueueLimit::Packets(1000),
            push_out: true,
        }
    }
}

impl PrioParams {
    pub fn validate(&self) -> Result<(), NetError> {
        if self.bands == 0 || self.bands > MAX_BANDS {
            return Err(NetError::invalid(
                "queue.bands",
                self.bands,
                "must be between 1 and 16",
            ));
        }
        self.limit.validate("queue.limit")?;
        Ok(())
    }
}

/// What one band has seen, in packets. For every band, `enqueued = dequeued +
/// pushed_out + ` the packets it holds; every arrival is either enqueued or rejected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BandCounters {
    /// Arrivals accepted.
    pub enqueued: u64,
    /// Packets sent on.
    pub dequeued: u64,
    /// Arrivals refused (counted in their own band).
    pub rejected: u64,
    /// Packets evicted for a higher-priority arrival (counted in the evicted band).
    pub pushed_out: u64,
}

#[derive(Clone, Debug)]
pub struct Prio {
    p: PrioParams,
    bands: Vec<Fifo>,
    counters: Vec<BandCounters>,
    /// Bit `b` is set while band `b` holds a packet.
    nonempty: u32,
    packets: usize,
    bytes: usize,
    /// Arrivals without a readable IP header (sent to the lowest band).
    unclassified: u64,
    dropped: VecDeque<QueueDrop>,
    /// Band 0 under PIE (then `bands[0]` stays empty), if configured.
    pie: Option<Box<Pie>>,
    /// Band-0 arrivals PIE CE-marked.
    pie_marked: u64,
}

/// Packets reserved per band up front.
const PREALLOC_PACKETS: usize = 8;

impl Prio {
    pub fn new(p: PrioParams) -> Result<Self, NetError> {
        p.validate()?;
        // Little room up front: each band's deque grows to its own peak and stays
        // there. Reserving a full queue per band cost 15 % of the memory of a run with
        // 10^5 open RC3 flows (docs/performance.md), where most bands of most ports
        // never hold more than a few packets. Capacity changes no behaviour.
        let prealloc = match p.limit {
            QueueLimit::Packets(n) => n.min(PREALLOC_PACKETS),
            QueueLimit::Bytes(n) => (n / 1500).clamp(1, PREALLOC_PACKETS),
        };
        Ok(Prio {
            p,
            // Not `vec![…; n]`: a cloned deque does not keep its capacity.
            bands: (0..p.bands)
                .map(|_| Fifo::with_capacity(prealloc))
                .collect(),
            counters: vec![BandCounters::default(); p.bands],
            nonempty: 0,
            packets: 0,
            bytes: 0,
            unclassified: 0,
            dropped: VecDeque::new(),
            pie: None,
            pie_marked: 0,
        })
    }

    /// Puts band 0 under PIE with `p` (its packet limit is ignored: the shared limit
    /// holds), drawing from `seed` as a [`Pie`] queue would.
    pub fn with_band0_pie(mut self, p: PieParams, seed: u64) -> Result<Self, NetError> {
        self.pie = Some(Box::new(Pie::new(
            PieParams {
                limit_packets: usize::MAX,
                ..p
            },
            seed,
        )?));
        Ok(self)
    }

    /// Band 0's PIE probability (None without PIE).
    pub fn band0_pie_prob(&self) -> Option<f64> {
        self.pie.as_ref().map(|q| q.prob())
    }

    /// Band-0 arrivals PIE CE-marked (their early drops are band 0's `rejected`).
    pub fn band0_pie_marked(&self) -> u64 {
        self.pie_marked
    }

    fn band_fifo_len(&self, band: usize) -> usize {
        match (&self.pie, band) {
            (Some(q), 0) => q.len_packets(),
            _ => self.bands[band].len(),
        }
    }

    pub fn params(&self) -> PrioParams {
        self.p
    }

    /// Per-band counters, band 0 (highest priority) first.
    pub fn band_counters(&self) -> &[BandCounters] {
        &self.counters
    }

    /// Packets band `band` holds now (0 for a band that does not exist).
    pub fn band_len(&self, band: usize) -> usize {
        if band < self.bands.len() {
            self.band_fifo_len(band)
        } else {
            0
        }
    }

    /// Arrivals that had no readable IP header.
    pub fn unclassified(&self) -> u64 {
        self.unclassified
    }

    /// The band of a packet: its DSCP, capped at the last band; unreadable packets go
    /// to the last (lowest-priority) band.
    fn classify(&mut self, pkt: &Packet) -> usize {
        let last = self.p.bands - 1;
        match brisk_wire::peek_dscp(&pkt.data) {
            Some(dscp) => usize::from(dscp).min(last),
            None => {
                self.unclassified = self.unclassified.saturating_add(1);
                last
            }
        }
    }

    /// The bands numbered above `band` (lower priority) that hold packets.
    fn lower_than(&self, band: usize) -> u32 {
        // `band` < 16, so the shift cannot overflow a u32.
        self.nonempty & !((2u32 << band) - 1)
    }

    /// Spec A6: makes room for a `len`-byte arrival of `band` by evicting the newest
    /// packets of the lowest-priority non-empty band below it, band after band. Returns
    /// false, evicting nothing, if even all of them would not make room.
    fn push_out(&mut self, now: Instant, band: usize, len: usize) -> bool {
        let mut lower = self.lower_than(band);
        let (mut lp, mut lb) = (0usize, 0usize);
        while lower != 0 {
            let b = lower.trailing_zeros() as usize;
            lp += self.bands[b].len();
            lb += self.bands[b].bytes();
            lower &= lower - 1;
        }
        if lp == 0 || !self.p.limit.fits(self.packets - lp, self.bytes - lb, len) {
            return false;
        }
        while !self.p.limit.fits(self.packets, self.bytes, len) {
            let lower = self.lower_than(band);
            // The room check above guarantees a victim; stay safe if it ever did not.
            if lower == 0 {
                return false;
            }
            let victim = (31 - lower.leading_zeros()) as usize;
            // A set bit means a non-empty band, so this always yields a packet.
            let Some(e) = self.bands[victim].pop_back() else {
                return false;
            };
            if self.bands[victim].len() == 0 {
                self.nonempty &= !(1 << victim);
            }
            self.packets -= 1;
            self.bytes -= e.pkt.len();
            let c = &mut self.counters[victim];
            c.pushed_out = c.pushed_out.saturating_add(1);
            self.dropped.push_back(QueueDrop {
                pkt: e.pkt,
                at: now,
                enqueued_at: e.enqueued_at,
                overflow: true,
            });
        }
        true
    }
}

impl Queue for Prio {
    fn enqueue(&mut self, now: Instant, mut pkt: Packet) -> Result<(), Packet> {
        self.dropped.clear();
        let band = self.classify(&pkt);
        let len = pkt.len();
        // PIE judges a band-0 arrival before the shared buffer does.
        let mut marked = false;
        if band == 0 {
            if let Some(q) = self.pie.as_mut() {
                match q.admit(now, &mut pkt) {
                    Some(m) => marked = m,
                    None => {
                        let c = &mut self.counters[0];
                        c.rejected = c.rejected.saturating_add(1);
                        return Err(pkt);
                    }
                }
            }
        }
        let fits = self.p.limit.fits(self.packets, self.bytes, len)
            || (self.p.push_out && self.push_out(now, band, len));
        if !fits {
            let c = &mut self.counters[band];
            c.rejected = c.rejected.saturating_add(1);
            return Err(pkt);
        }
        match (self.pie.as_mut(), band) {
            (Some(q), 0) => {
                q.push_admitted(now, pkt, marked);
                self.pie_marked += u64::from(marked);
            }
            _ => self.bands[band].push(pkt, now, false),
        }
        self.nonempty |= 1 << band;
        self.packets += 1;
        self.bytes += len;
        let c = &mut self.counters[band];
        c.enqueued = c.enqueued.saturating_add(1);
        Ok(())
    }

    fn dequeue(&mut self, now: Instant) -> Option<Dequeued> {
        self.dropped.clear();
        if self.nonempty == 0 {
            return None;
        }
        let band = self.nonempty.trailing_zeros() as usize;
        let d: Dequeued = match (self.pie.as_mut(), band) {
            (Some(q), 0) => q.dequeue(now)?,
            _ => self.bands[band].pop()?.into(),
        };
        if self.band_fifo_len(band) == 0 {
            self.nonempty &= !(1 << band);
        }
        self.packets -= 1;
        self.bytes -= d.pkt.len();
        let c = &mut self.counters[band];
        c.dequeued = c.dequeued.saturating_add(1);
        Some(d)
    }

    fn drops_pending(&self) -> bool {
        !self.dropped.is_empty()
    }

    fn poll_drop(&mut self) -> Option<QueueDrop> {
        self.dropped.pop_front()
    }

    fn len_packets(&self) -> usize {
        self.packets
    }

    fn len_bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
#[path = "prio_tests.rs"]
mod tests;
