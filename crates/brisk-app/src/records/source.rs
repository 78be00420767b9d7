//! The sending side of the `records` app: a schedule of generation times and a queue of
//! records waiting for the stream, written header first, then a pattern body.
//!
//! The schedule is the simulator's: the first record when the connection is up, then
//! every `interval` (or a normal draw around it, `jitter_sd`), plus uniform
//! `[0, jitter]`, never earlier than the previous one. Each record is stamped with its
//! scheduled time, so time it waits behind a full send buffer counts in its latency.
//! Randomness comes from the caller's RNG, so the simulator's draws stay in the order
//! its app's one RNG makes them.

use brisk_tcp::stream::ByteStream;
use brisk_time::{dur_nanos, Duration, Instant};
use rand::Rng;
use std::collections::VecDeque;

use super::{RecordHeader, HEADER_LEN};
use crate::payload::TxStream;

/// Records generated but not yet accepted by the stream; beyond this, records are
/// skipped (counted).
pub const MAX_PENDING_RECORDS: usize = 1 << 20;

/// The header of record `index` of `size` bytes, sent at `sent_at`.
fn record_header(index: u64, sent_at: Instant, size: u64) -> [u8; HEADER_LEN] {
    RecordHeader {
        index,
        sent_at_ns: sent_at.as_nanos(),
        // NOTE: size is validated to be <= MAX_RECORD (64 MiB), so it fits.
        len: size as u32,
    }
    .encode()
}

/// A standard normal draw (Box–Muller).
pub fn normal<R: Rng>(rng: &mut R) -> f64 {
    let u1: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]: ln stays finite
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[derive(Debug)]
struct PendingRecord {
    header: [u8; HEADER_LEN],
    header_sent: usize,
    body_left: u64,
    /// Its generation time (the header's send time), ns.
    gen_ns: u64,
}

/// What the `records` app's sender is asked to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordPlan {
    /// Bytes per record, header included (at least [`HEADER_LEN`]).
    pub size: u64,
    pub interval: Duration,
    /// Uniform extra delay `[0, jitter]` per record.
    pub jitter: Duration,
    /// Standard deviation of a normal gap around `interval` (zero: fixed gaps).
    pub jitter_sd: Duration,
    /// Records in all; `None`: until the run ends.
    pub count: Option<u64>,
}

/// The records sender: schedule, pending queue and counters.
#[derive(Debug)]
pub struct RecordSource {
    plan: RecordPlan,
    generated: u64,
    next_base: Instant,
    next_at: Option<Instant>,
    pending: VecDeque<PendingRecord>,
    /// Records not generated because the pending queue was full.
    pub skipped: u64,
}

impl RecordSource {
    pub fn new(plan: RecordPlan) -> Self {
        RecordSource {
            plan: RecordPlan {
                size: plan.size.max(HEADER_LEN as u64),
                ..plan
            },
            generated: 0,
            next_base: Instant::ZERO,
            next_at: None,
            pending: VecDeque::new(),
            skipped: 0,
        }
    }

    /// The connection is up: the first record is due `now`.
    pub fn start(&mut self, now: Instant) {
        self.next_base = now;
        self.next_at = Some(now);
    }

    /// When the next record is due (`None`: not started, or all generated).
    pub fn next_at(&self) -> Option<Instant> {
        self.next_at
    }

    /// Records generated so far (skipped ones included).
    pub fn generated(&self) -> u64 {
        self.generated
    }

    /// Whether every record has been generated and taken by the stream.
    pub fn finished(&self) -> bool {
        self.pending.is_empty()
            && self.next_at.is_none()
            && self.plan.count.is_some_and(|c| self.generated >= c)
    }

    /// Whether generated records still wait for the stream.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Generates the records due by `now`: `per_tick()` of them at each scheduled time
    /// (1 for a plain source; a layered one sends one per active layer).
    pub fn generate<R: Rng>(
        &mut self,
        now: Instant,
        rng: &mut R,
        mut per_tick: impl FnMut() -> u32,
    ) {
        let size = self.plan.size;
        while let Some(t) = self.next_at {
            if t > now {
                break;
            }
            for _ in 0..per_tick() {
                if self.pending.len() < MAX_PENDING_RECORDS {
                    self.pending.push_back(PendingRecord {
                        header: record_header(self.generated, t, size),
                        header_sent: 0,
                        body_left: size - HEADER_LEN as u64,
                        gen_ns: t.as_nanos(),
                    });
                } else {
                    self.skipped += 1;
                }
                self.generated += 1;
            }
            if self.plan.count.is_some_and(|c| self.generated >= c) {
                self.next_at = None;
                break;
            }
            let RecordPlan {
                interval,
                jitter,
                jitter_sd,
                ..
            } = self.plan;
            self.next_base += if jitter_sd.is_zero() {
                interval
            } else {
                let gap = dur_nanos(interval) as f64 + normal(rng) * dur_nanos(jitter_sd) as f64;
                Duration::from_nanos(gap.max(0.0) as u64)
            };
            let j = if jitter.is_zero() {
                0
            } else {
                rng.gen_range(0..=dur_nanos(jitter))
            };
            // Keep generation times monotonic even when jitter exceeds the interval.
            self.next_at = Some((self.next_base + Duration::from_nanos(j)).max(t));
        }
    }

    /// Writes pending records as far as the stream takes them; `written(end, gen_ns)`
    /// for each record now wholly in the stream (`end`: the stream offset after it).
    /// Once the last record is in, half-closes the stream and returns true.
    pub fn write(
        &mut self,
        tx: &mut TxStream,
        p: &mut dyn ByteStream,
        mut written: impl FnMut(u64, u64),
    ) -> bool {
        while let Some(r) = self.pending.front_mut() {
            if r.header_sent < HEADER_LEN {
                r.header_sent += tx.write_raw(p, &r.header[r.header_sent..]);
                if r.header_sent < HEADER_LEN {
                    break;
                }
            }
            r.body_left -= tx.write_pattern(p, r.body_left);
            if r.body_left > 0 {
                break;
            }
            written(tx.bytes, r.gen_ns);
            self.pending.pop_front();
        }
        if self.finished() {
            let _ = p.shutdown_write();
            return true;
        }
        false
    }
}

impl RecordSource {
    /// For a blocking sender that writes each record in one call (a real socket, where
    /// a header written alone could leave in a segment of its own): writes the next
    /// pending record whole, its body the pattern, through `put` (`scratch` is at
    /// least a record long). `None` when no record is pending; `Some(false)` if `put`
    /// failed (the error is the [`TxStream`]'s).
    pub fn write_next_whole(
        &mut self,
        tx: &mut TxStream,
        scratch: &mut [u8],
        put: impl FnOnce(&[u8]) -> std::io::Result<()>,
    ) -> Option<bool> {
        let r = self.pending.front()?;
        // What is left of it (all of it unless `write` wrote part of it).
        let left = (HEADER_LEN - r.header_sent) as u64 + r.body_left;
        let n = (left as usize).min(scratch.len());
        let ok = tx.write_message(&r.header[r.header_sent..], &mut scratch[..n], put);
        if ok {
            self.pending.pop_front();
        }
        Some(ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::Pattern;
    use crate::records::RecordReader;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    struct Sink(Vec<u8>);
    impl ByteStream for Sink {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            self.0.extend_from_slice(data);
            Ok(data.len())
        }
        fn read(&mut self, _buf: &mut [u8]) -> std::io::Result<usize> {
            Ok(0)
        }
        fn read_unordered(
            &mut self,
            _buf: &mut [u8],
        ) -> std::io::Result<Option<brisk_tcp::UnorderedRead>> {
            Ok(None)
        }
        fn shutdown_write(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn records_follow_the_schedule_and_parse_back() {
        let plan = RecordPlan {
            size: 100,
            interval: Duration::from_millis(10),
            jitter: Duration::from_millis(4),
            jitter_sd: Duration::ZERO,
            count: Some(20),
        };
        let mut src = RecordSource::new(plan);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let (mut out, mut tx) = (Sink(Vec::new()), TxStream::new(Pattern::new(3)));
        src.start(Instant::ZERO);
        let mut ends = Vec::new();
        while let Some(t) = src.next_at() {
            src.generate(t, &mut rng, || 1);
            src.write(&mut tx, &mut out, |end, gen| ends.push((end, gen)));
        }
        assert!(src.finished());
        assert_eq!(out.0.len(), 2000);
        assert_eq!(ends.len(), 20);
        for (k, &(end, gen)) in ends.iter().enumerate() {
            let base = 10_000_000 * k as u64;
            assert_eq!(end, 100 * (k as u64 + 1));
            assert!(gen >= base && gen <= base + 4_000_000, "{k}: {gen}");
        }
        let mut rx = RecordReader::new(100);
        let mut sent = Vec::new();
        rx.feed(&out.0, |_, _| {}, |s| sent.push(s));
        assert_eq!(rx.bad_headers(), 0);
        assert_eq!(sent, ends.iter().map(|e| e.1).collect::<Vec<_>>());

        // Whole records, one call each, make the same bytes.
        let mut src = RecordSource::new(plan);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut tx2 = TxStream::new(Pattern::new(3));
        let (mut whole, mut calls, mut scratch) = (Vec::new(), 0, vec![0u8; 100]);
        src.start(Instant::ZERO);
        while let Some(t) = src.next_at() {
            src.generate(t, &mut rng, || 1);
            while let Some(ok) = src.write_next_whole(&mut tx2, &mut scratch, |d| {
                calls += 1;
                whole.extend_from_slice(d);
                Ok(())
            }) {
                assert!(ok);
            }
        }
        assert_eq!((whole, calls), (out.0, 20));
        assert_eq!(tx2.sha256(), tx.sha256());
    }
}
