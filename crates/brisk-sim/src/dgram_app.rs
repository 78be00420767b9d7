//! The `datagrams` application: fixed-size datagrams every `interval`, each written as
//! one uCOBS record (Minion NSDI 2012 §5; `brisk-minion`), read back as datagrams. The
//! VoIP, priority and fallback experiments of issue 12 run on it.
//!
//! A datagram is brisk-app's 24-byte record header (index, generation time, length)
//! followed by the flow's pattern at offset `index × size` (so its content depends on
//! its index only, not on where it sits in the stream, which prioritised sending
//! changes). The receiver checks every datagram's header and body, counts each index
//! once (a second delivery, or an index never sent, is counted as bad) and measures
//! latency from generation to delivery: at first complete delivery, out of order or in
//! order, exactly once.
//!
//! `interval = 0` makes a network-limited source, the blocking writer of Minion §8.3: a
//! new datagram is generated whenever the stream has taken the previous one, so its
//! delay (generation to delivery) is its wait in the send buffer plus the network.
//!
//! With `urgent_every = n`, every n-th datagram (indices n−1, 2n−1, …) is written at
//! priority [`URGENT_PRIORITY`], the others at [`NORMAL_PRIORITY`]; the sender's
//! `[flow.tcp] unordered_send` decides whether that reorders anything (uTCP's send
//! side), and the receiver's `[flow.tcp] unordered` whether records are delivered out
//! of order.

use brisk_app::records::{RecordHeader, HEADER_LEN};
use brisk_minion::{Limits, UcobsReceiver, UcobsSender};
use brisk_tcp::stream::ByteStream;
use brisk_time::{dur_nanos, Duration, Instant};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::rc::Rc;

use crate::metrics::Samples;
use brisk_app::payload::Pattern;
use brisk_app::records::{MAX_PENDING_RECORDS, MAX_RECORD_TIMES};

/// Priority of ordinary datagrams.
pub const NORMAL_PRIORITY: u8 = 1;
/// Priority of every `urgent_every`-th datagram.
pub const URGENT_PRIORITY: u8 = 2;

/// The body of datagram `index` (after its header).
fn body(pat: &Pattern, index: u64, size: u64) -> &[u8] {
    pat.at(
        index.wrapping_mul(size) + HEADER_LEN as u64,
        (size as usize) - HEADER_LEN,
    )
}

/// When datagrams are generated: every `interval` plus uniform `jitter` (generation
/// times never go backwards), `count` of them at most. Shared by the uCOBS source here
/// and the UDP source (`crate::udp_app`).
#[derive(Debug)]
pub struct Schedule {
    interval: Duration,
    jitter: Duration,
    count: Option<u64>,
    /// Datagrams generated so far (the next one's index).
    pub generated: u64,
    next_base: Instant,
    pub next_at: Option<Instant>,
}

impl Schedule {
    pub fn new(interval: Duration, jitter: Duration, count: Option<u64>) -> Self {
        Schedule {
            interval,
            jitter,
            count,
            generated: 0,
            next_base: Instant::ZERO,
            next_at: None,
        }
    }

    /// The first datagram is due at `now` (none for a network-limited source, which
    /// generates as it writes, never on a timer).
    pub fn start(&mut self, now: Instant) {
        self.next_base = now;
        self.next_at = (!self.interval.is_zero()).then_some(now);
    }

    /// All datagrams of a counted source are generated.
    pub fn exhausted(&self) -> bool {
        self.count.is_some_and(|c| self.generated >= c)
    }

    /// Calls `gen(index, generation time)` for every datagram due by `now`.
    pub fn due(&mut self, now: Instant, rng: &mut ChaCha8Rng, mut gen: impl FnMut(u64, Instant)) {
        while let Some(t) = self.next_at {
            if t > now {
                break;
            }
            gen(self.generated, t);
            self.generated += 1;
            if self.exhausted() {
                self.next_at = None;
                break;
            }
            self.next_base += self.interval;
            let j = if self.jitter.is_zero() {
                0
            } else {
                rng.gen_range(0..=dur_nanos(self.jitter))
            };
            self.next_at = Some((self.next_base + Duration::from_nanos(j)).max(t));
        }
    }
}

/// The payload of datagram `index`: the record header, then its body.
pub fn datagram_bytes(pat: &Pattern, index: u64, t: Instant, size: u64, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(
        &RecordHeader {
            index,
            sent_at_ns: t.as_nanos(),
            len: size as u32,
        }
        .encode(),
    );
    out.extend_from_slice(body(pat, index, size));
}

/// The sending side.
#[derive(Debug)]
pub struct DgramSource {
    pat: Rc<Pattern>,
    size: u64,
    network_limited: bool,
    urgent_every: Option<u64>,
    pub sched: Schedule,
    /// Generated, not yet taken by the stream: (index, generation time).
    pending: VecDeque<(u64, Instant)>,
    sender: UcobsSender,
    scratch: Vec<u8>,
    /// Datagrams not generated because `pending` was full.
    pub skipped: u64,
    /// Payload bytes of the datagrams the stream has taken (each datagram's header and
    /// body, before uCOBS encoding): the unit the receiver's `payload_bytes` counts.
    pub payload_sent: u64,
    pub finished: bool,
}

impl DgramSource {
    pub fn new(
        pat: Rc<Pattern>,
        size: u64,
        interval: Duration,
        jitter: Duration,
        count: Option<u64>,
        urgent_every: Option<u64>,
    ) -> Self {
        DgramSource {
            pat,
            size,
            network_limited: interval.is_zero(),
            urgent_every,
            sched: Schedule::new(interval, jitter, count),
            pending: VecDeque::new(),
            sender: UcobsSender::new(),
            scratch: Vec::with_capacity(size as usize),
            skipped: 0,
            payload_sent: 0,
            finished: false,
        }
    }

    pub fn start(&mut self, now: Instant) {
        self.sched.start(now);
    }

    /// Generates every datagram due by `now`.
    pub fn generate(&mut self, now: Instant, rng: &mut ChaCha8Rng) {
        let (pending, skipped) = (&mut self.pending, &mut self.skipped);
        self.sched.due(now, rng, |index, t| {
            if pending.len() < MAX_PENDING_RECORDS {
                pending.push_back((index, t));
            } else {
                *skipped += 1;
            }
        });
    }

    /// Writes pending datagrams while the stream takes them (a network-limited source
    /// generates each as the previous one is taken); closes after the last.
    pub fn write(&mut self, now: Instant, p: &mut dyn ByteStream) {
        if self.finished {
            return;
        }
        // A record the stream took in part is finished first.
        if !self.sender.flush(p).unwrap_or(false) {
            return;
        }
        loop {
            if self.pending.is_empty() && self.network_limited && !self.sched.exhausted() {
                self.pending.push_back((self.sched.generated, now));
                self.sched.generated += 1;
            }
            let Some(&(index, t)) = self.pending.front() else {
                break;
            };
            datagram_bytes(&self.pat, index, t, self.size, &mut self.scratch);
            let urgent = self
                .urgent_every
                .is_some_and(|n| (index + 1).is_multiple_of(n));
            let prio = if urgent {
                URGENT_PRIORITY
            } else {
                NORMAL_PRIORITY
            };
            match self.sender.send(p, &self.scratch, prio) {
                Ok(true) => {
                    self.payload_sent += self.scratch.len() as u64;
                    self.pending.pop_front();
                }
                _ => return,
            }
        }
        if self.sched.exhausted()
            && self.pending.is_empty()
            && self.sender.flush(p).unwrap_or(false)
        {
            let _ = p.shutdown_write();
            self.finished = true;
        }
    }

    /// uCOBS record bytes the stream has taken.
    pub fn bytes_written(&self) -> u64 {
        self.sender.bytes
    }
}

/// What a datagram receiver counts, whatever carried the datagrams (uCOBS over TCP
/// here, UDP in `crate::udp_app`).
#[derive(Debug)]
pub struct DgramAccount {
    pat: Rc<Pattern>,
    size: u64,
    count: Option<u64>,
    /// Indices seen (bit per index, up to `MAX_RECORD_TIMES`).
    seen: Vec<u64>,
    pub delivered: u64,
    pub delivered_out_of_order: u64,
    /// Payload bytes delivered (each datagram once).
    pub payload_bytes: u64,
    /// Datagrams with a bad header or body, a repeated index or an index never sent.
    pub bad: u64,
    pub latencies: Samples,
    /// (index, generation ns, delivery ns) per datagram, in delivery order (bounded).
    pub deliveries: Vec<(u64, u64, u64)>,
}

impl DgramAccount {
    pub fn new(pat: Rc<Pattern>, size: u64, count: Option<u64>) -> Self {
        DgramAccount {
            pat,
            size,
            count,
            seen: Vec::new(),
            delivered: 0,
            delivered_out_of_order: 0,
            payload_bytes: 0,
            bad: 0,
            latencies: Samples::default(),
            deliveries: Vec::new(),
        }
    }

    /// One datagram delivered at `now` (`in_order`: from in-order bytes).
    pub fn on_datagram(&mut self, now: Instant, data: &[u8], in_order: bool) {
        let fresh = valid_header(data, &self.pat, self.size)
            .filter(|h| first_time(&mut self.seen, h.index));
        let Some(hdr) = fresh else {
            self.bad += 1;
            return;
        };
        self.latencies
            .push(now.as_nanos().saturating_sub(hdr.sent_at_ns));
        if self.deliveries.len() < MAX_RECORD_TIMES {
            self.deliveries
                .push((hdr.index, hdr.sent_at_ns, now.as_nanos()));
        }
        self.delivered += 1;
        self.delivered_out_of_order += u64::from(!in_order);
        self.payload_bytes += data.len() as u64;
    }

    /// Every datagram of a counted flow has arrived.
    pub fn complete(&self) -> bool {
        self.count.is_some_and(|c| self.delivered >= c)
    }
}

/// The receiving side.
#[derive(Debug)]
pub struct DgramSink {
    receiver: UcobsReceiver,
    pub acc: DgramAccount,
}

impl DgramSink {
    pub fn new(pat: Rc<Pattern>, size: u64, count: Option<u64>) -> Self {
        let limits = Limits {
            max_datagram: size as usize,
            ..Limits::default()
        };
        DgramSink {
            // NOTE(expect): size is validated (24 B to 64 KiB) and 64 KiB reads are
            // within the receiver's range.
            receiver: UcobsReceiver::new(limits, 64 * 1024).expect("validated limits"),
            acc: DgramAccount::new(pat, size, count),
        }
    }

    /// Reads what the stream has and accounts every datagram delivered. Returns the
    /// payload bytes delivered by this call.
    pub fn read(&mut self, now: Instant, p: &mut dyn ByteStream) -> u64 {
        let before = self.acc.payload_bytes;
        let acc = &mut self.acc;
        let r = self
            .receiver
            .poll(p, &mut |d| acc.on_datagram(now, d.data, d.in_order));
        if r.is_err() {
            self.acc.bad += 1;
        }
        self.acc.payload_bytes - before
    }

    /// Malformed or oversized records the scanner skipped (counted as bad too).
    pub fn scanner_drops(&self) -> u64 {
        let c = self.receiver.counters();
        c.malformed + c.oversized
    }
}

/// The header of a datagram whose length, header and body are what the source writes
/// for its index; `None` otherwise.
fn valid_header(data: &[u8], pat: &Pattern, size: u64) -> Option<RecordHeader> {
    if data.len() as u64 != size || data.len() < HEADER_LEN {
        return None;
    }
    let mut h = [0u8; HEADER_LEN];
    h.copy_from_slice(&data[..HEADER_LEN]);
    let (hdr, magic) = RecordHeader::decode(&h);
    (magic && u64::from(hdr.len) == size && data[HEADER_LEN..] == *body(pat, hdr.index, size))
        .then_some(hdr)
}

/// Marks `index` seen; false if it was seen before. Indices beyond the bitmap's bound
/// are not tracked (accepted).
fn first_time(seen: &mut Vec<u64>, index: u64) -> bool {
    if index >= MAX_RECORD_TIMES as u64 {
        return true;
    }
    let (w, b) = ((index / 64) as usize, index % 64);
    if seen.len() <= w {
        seen.resize(w + 1, 0);
    }
    let fresh = seen[w] & (1 << b) == 0;
    seen[w] |= 1 << b;
    fresh
}
