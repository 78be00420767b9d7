//! The byte streams of a real run's flows, written against brisk-tcp's [`ByteStream`]
//! so the same code drives brisk's sockets and the kernel's: a bulk sender writing the
//! lab's offset-keyed payload (`stack/pattern.rs`), which the receiver compares byte
//! for byte as it reads (SHA-256 at both ends took a third of the CPU at gigabits per
//! second), and a records sender writing a ChaCha8 payload framed by brisk-app as the
//! simulator's (24-byte header `BRK1 | index | send time ns | length`, big-endian),
//! hashed with SHA-256 at both ends (a record's header carries its send time, so it
//! cannot be regenerated from the offset). The receiver bins goodput and, for
//! records, parses the framing and measures each record's latency. Times are on the
//! run's shared [`Clock`].

use brisk_tcp::stream::ByteStream;
use std::time::Duration as StdDuration;

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

use super::{since, std_dur, RealApp, MAX_SAMPLES, RECORD_HEADER_LEN};
use crate::os::clock::Clock;
use crate::stack::pattern::{Pattern, PatternCheck};
use crate::tools::hex;
use brisk_app::records::{RecordHeader, RecordReader};

/// Parses the records framing (brisk-app's, the simulator's) from a byte stream,
/// measuring each record's latency when its last byte is read.
#[derive(Debug)]
pub(super) struct RecordRx {
    reader: RecordReader,
    pub(super) latencies: Vec<u64>,
    /// (generation ns, delivery ns) of each record measured, in record order (the
    /// stream is read in order, so entry k is record k).
    pub(super) deliveries: Vec<(u64, u64)>,
    pub(super) bad_headers: u64,
}

impl RecordRx {
    pub(super) fn new(size: u64) -> RecordRx {
        RecordRx {
            reader: RecordReader::new(size),
            latencies: Vec::new(),
            deliveries: Vec::new(),
            bad_headers: 0,
        }
    }

    /// `data` was read at `at_ns`; latencies count only if `measure` (by the end).
    fn feed(&mut self, data: &[u8], at_ns: u64, measure: bool) {
        let (lat, del) = (&mut self.latencies, &mut self.deliveries);
        self.reader.feed(
            data,
            |_, _| {},
            |sent| {
                if measure && lat.len() < MAX_SAMPLES {
                    lat.push(at_ns.saturating_sub(sent));
                    del.push((sent, at_ns));
                }
            },
        );
        self.bad_headers = self.reader.bad_headers();
    }
}

/// How a stream's bytes are checked end to end.
#[derive(Clone, Copy, Debug)]
pub(super) enum Check {
    /// Bulk: the offset-keyed payload of this seed, compared as it is read.
    Pattern(u64),
    /// Records: SHA-256 of everything written and read.
    Sha256,
}

/// What the receiver found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Received {
    /// The first byte that differed from the payload, if any.
    Pattern {
        mismatch_at: Option<u64>,
    },
    Sha256(String),
}

enum Verifier {
    Pattern(PatternCheck),
    Sha256(Sha256),
}

impl Verifier {
    fn new(check: Check) -> Verifier {
        match check {
            Check::Pattern(seed) => Verifier::Pattern(PatternCheck::new(seed)),
            Check::Sha256 => Verifier::Sha256(Sha256::new()),
        }
    }
    fn update(&mut self, off: u64, data: &[u8]) {
        match self {
            Verifier::Pattern(p) => p.update(off, data),
            Verifier::Sha256(h) => h.update(data),
        }
    }
    fn finish(self) -> Received {
        match self {
            Verifier::Pattern(p) => Received::Pattern {
                mismatch_at: p.mismatch_at(),
            },
            Verifier::Sha256(h) => Received::Sha256(hex(&h.finalize())),
        }
    }
}

/// Whether what arrived is exactly what was sent.
pub(super) fn intact(tx: &TxOut, rx: &RxOut) -> bool {
    rx.total == tx.sent
        && match &rx.received {
            Received::Pattern { mismatch_at } => mismatch_at.is_none() && tx.sha256.is_none(),
            Received::Sha256(h) => tx.sha256.as_ref() == Some(h),
        }
}

/// The receiving side of one flow.
pub(super) struct RxOut {
    pub(super) delivered_by_end: u64,
    pub(super) total: u64,
    pub(super) received: Received,
    pub(super) series: Vec<(u64, u64)>,
    /// When the flow completed, if by the end: the read that reached the expected
    /// byte count (a sized flow; the simulator's completion, the last byte read), else
    /// the end of the stream.
    pub(super) done_at: Option<StdDuration>,
    /// When the last byte was read, also after the end.
    pub(super) finished_at: StdDuration,
    pub(super) records: Option<RecordRx>,
    pub(super) error: Option<String>,
}

/// What a receiver expects of its stream.
pub(super) struct Expect {
    /// The records framing to parse, for a records app.
    pub(super) records: Option<RecordRx>,
    /// The bytes a sized flow sends; the flow completes when they have been read,
    /// which can be well before the FIN (an RC3 sender sends its FIN only once the
    /// peer's ACK has covered its copies).
    pub(super) bytes: Option<u64>,
    pub(super) check: Check,
}

/// Reads `s` to its end.
pub(super) fn receive<S: ByteStream>(
    mut s: S,
    clock: Clock,
    end: StdDuration,
    interval: StdDuration,
    grace: StdDuration,
    expect: Expect,
) -> RxOut {
    let Expect {
        mut records,
        bytes: expect,
        check,
    } = expect;
    let mut buf = vec![0u8; 64 * 1024];
    let mut complete_at = None;
    let mut verifier = Verifier::new(check);
    let (mut total, mut by_end, mut bin, mut bin_end) = (0u64, 0u64, 0u64, interval);
    let mut series = Vec::new();
    let mut error = None;
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let at = since(clock);
                verifier.update(total, &buf[..n]);
                total += n as u64;
                if complete_at.is_none() && expect.is_some_and(|e| total >= e) {
                    complete_at = Some(at);
                }
                if let Some(r) = &mut records {
                    r.feed(&buf[..n], at.as_nanos() as u64, at <= end);
                }
                while at > bin_end && bin_end <= end && series.len() < MAX_SAMPLES {
                    series.push((bin_end.as_nanos() as u64, bin));
                    bin = 0;
                    bin_end += interval;
                }
                if at <= end {
                    by_end += n as u64;
                    bin += n as u64;
                }
                if at > end + grace {
                    error = Some("stream not drained within the grace period".into());
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                error = Some(format!("receiver: {e}"));
                break;
            }
        }
    }
    let done = since(clock);
    while bin_end <= end && series.len() < MAX_SAMPLES {
        series.push((bin_end.as_nanos() as u64, bin));
        bin = 0;
        bin_end += interval;
    }
    RxOut {
        delivered_by_end: by_end,
        total,
        received: verifier.finish(),
        series,
        done_at: Some(complete_at.unwrap_or(done)).filter(|d| *d <= end),
        finished_at: done,
        records,
        error,
    }
}

/// The sending side's result.
pub(super) struct TxOut {
    pub(super) sent: u64,
    /// SHA-256 of what was written (records); `None` for a bulk stream, whose bytes
    /// the receiver checks against the payload itself.
    pub(super) sha256: Option<String>,
    pub(super) error: Option<String>,
}

/// Tracks what a sender wrote.
struct Tx {
    hash: Option<Sha256>,
    sent: u64,
    error: Option<String>,
}

impl Tx {
    /// A sender that hashes what it writes (records).
    fn hashed() -> Tx {
        Tx {
            hash: Some(Sha256::new()),
            sent: 0,
            error: None,
        }
    }

    /// A sender of the offset-keyed payload, which needs no hash.
    fn pattern() -> Tx {
        Tx {
            hash: None,
            sent: 0,
            error: None,
        }
    }

    /// Writes all of `data`; false (with the error kept) if that failed.
    fn write<S: ByteStream>(&mut self, w: &mut S, data: &[u8]) -> bool {
        self.write_with(data, |d| w.write_all(d))
    }

    /// Writes all of `data` with `put`; false (with the error kept) if that failed.
    fn write_with(&mut self, data: &[u8], put: impl FnOnce(&[u8]) -> std::io::Result<()>) -> bool {
        if let Err(e) = put(data) {
            self.error = Some(if e.kind() == std::io::ErrorKind::TimedOut {
                // The write timeout reaches just past the end: a partial write may
                // have happened, so the stream's hash is unknowable.
                "sender: write timed out at the end".into()
            } else {
                format!("sender: {e}")
            });
            return false;
        }
        if let Some(h) = &mut self.hash {
            h.update(data);
        }
        self.sent += data.len() as u64;
        true
    }

    fn done(self) -> TxOut {
        TxOut {
            sent: self.sent,
            sha256: self.hash.map(|h| hex(&h.finalize())),
            error: self.error,
        }
    }
}

/// Writes a bulk stream until `end` (or `bytes`). A sized flow's last bytes go through
/// `last`, which also half-closes (so a brisk sender's FIN rides on its last segment,
/// as the simulator's does); the caller's half-close after that is a no-op.
pub(super) fn send_bulk<S: ByteStream>(
    mut w: S,
    clock: Clock,
    end: StdDuration,
    bytes: Option<u64>,
    seed: u64,
    last: impl FnOnce(&[u8]) -> std::io::Result<()>,
) -> TxOut {
    let mut last = Some(last);
    // A sized flow is one message, written in one call as an application would
    // send() it (up to 4 MiB, brisk's default send buffer): RC3 makes each write a
    // chunk of its own, and so does the simulator's app, which hands the whole flow
    // over at once. The stream's bytes do not depend on the write size.
    let len = bytes.map_or(64 * 1024, |b| b.clamp(1, 4 << 20) as usize);
    let mut buf = vec![0u8; len];
    let mut tx = Tx::pattern();
    let pattern = Pattern::new(seed);
    while since(clock) < end {
        let n = match bytes {
            Some(b) if tx.sent >= b => break,
            Some(b) => (b - tx.sent).min(buf.len() as u64) as usize,
            None => buf.len(),
        };
        pattern.fill(tx.sent, &mut buf[..n]);
        let is_last = bytes.is_some_and(|b| tx.sent + n as u64 >= b);
        let ok = match if is_last { last.take() } else { None } {
            Some(f) => tx.write_with(&buf[..n], f),
            None => tx.write(&mut w, &buf[..n]),
        };
        if !ok {
            break;
        }
    }
    tx.done()
}

/// Writes records on their schedule (the simulator's: first at once, then every
/// `interval` plus uniform jitter, never earlier than the previous) until `end` or
/// `count`. Each is stamped with its scheduled time, so time a record waits behind a
/// blocked write counts in its latency, as the simulator's pending records do.
pub(super) fn send_records<S: ByteStream>(
    mut w: S,
    clock: Clock,
    end: StdDuration,
    app: &RealApp,
    seed: u64,
) -> TxOut {
    let RealApp::Records {
        size,
        interval,
        jitter,
        count,
    } = *app
    else {
        return Tx::hashed().done();
    };
    let mut payload = ChaCha8Rng::seed_from_u64(seed);
    let mut jit = ChaCha8Rng::seed_from_u64(seed ^ 0x6a69_7474_6572);
    // `size` is bounded by MAX_RECORD (checked by run_real).
    let mut buf = vec![0u8; size as usize];
    let mut tx = Tx::hashed();
    let mut base = since(clock);
    let mut at = base;
    let mut index = 0u64;
    while at < end {
        let now = since(clock);
        if at > now {
            std::thread::sleep(at - now);
        }
        let header = RecordHeader {
            index,
            sent_at_ns: at.as_nanos() as u64,
            len: size as u32,
        };
        buf[..RECORD_HEADER_LEN].copy_from_slice(&header.encode());
        payload.fill_bytes(&mut buf[RECORD_HEADER_LEN..]);
        if !tx.write(&mut w, &buf) {
            break;
        }
        index += 1;
        if count.is_some_and(|c| index >= c) {
            break;
        }
        base += std_dur(interval);
        let j = if jitter.is_zero() {
            0
        } else {
            jit.gen_range(0..=jitter.as_nanos() as u64)
        };
        at = (base + StdDuration::from_nanos(j)).max(at);
    }
    tx.done()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stack::kernel_stream::KernelStream;

    fn record(index: u64, sent_ns: u64, size: usize) -> Vec<u8> {
        let mut r = vec![7u8; size];
        let h = RecordHeader {
            index,
            sent_at_ns: sent_ns,
            len: size as u32,
        };
        r[..RECORD_HEADER_LEN].copy_from_slice(&h.encode());
        r
    }

    #[test]
    fn records_split_across_reads_give_one_latency_each() {
        let mut stream = Vec::new();
        for i in 0..5 {
            stream.extend(record(i, 1000 * i, 100));
        }
        let mut rx = RecordRx::new(100);
        // Odd-sized reads split headers and bodies alike.
        for (k, chunk) in stream.chunks(37).enumerate() {
            rx.feed(chunk, 10_000 + k as u64, true);
        }
        assert_eq!(rx.bad_headers, 0);
        assert_eq!(rx.latencies.len(), 5);
        // Record 0 ends in read 2 (bytes 74..111), at 10_002, sent at 0.
        assert_eq!(rx.latencies[0], 10_002);
        assert!(
            rx.latencies.windows(2).all(|w| w[0] > w[1]),
            "{:?}",
            rx.latencies
        );
    }

    #[test]
    fn wrong_index_or_magic_counts_as_a_bad_header() {
        let mut rx = RecordRx::new(30);
        rx.feed(&record(0, 0, 30), 1, true);
        rx.feed(&record(5, 0, 30), 2, true);
        let mut bad = record(2, 0, 30);
        bad[0] = b'X';
        rx.feed(&bad, 3, false);
        assert_eq!(rx.bad_headers, 2);
        assert_eq!(
            rx.latencies.len(),
            2,
            "records after the end are not measured"
        );
    }

    /// An in-memory stream: writes append to `out`, reads drain `inp`.
    #[derive(Default)]
    struct Mem {
        out: Vec<u8>,
        inp: std::collections::VecDeque<u8>,
    }

    impl ByteStream for Mem {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            self.out.extend_from_slice(data);
            Ok(data.len())
        }
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.inp.len());
            for (b, x) in buf.iter_mut().zip(self.inp.drain(..n)) {
                *b = x;
            }
            Ok(n)
        }
        fn read_unordered(
            &mut self,
            _buf: &mut [u8],
        ) -> std::io::Result<Option<brisk_tcp::UnorderedRead>> {
            Err(std::io::ErrorKind::Unsupported.into())
        }
        fn shutdown_write(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn twenty_records() -> RealApp {
        RealApp::Records {
            size: 64,
            interval: brisk_time::Duration::from_micros(1),
            jitter: brisk_time::Duration::from_micros(1),
            count: Some(20),
        }
    }

    #[test]
    fn record_sender_output_parses_back() {
        let mut out = Mem::default();
        let tx = send_records(
            &mut out,
            Clock::start(),
            StdDuration::from_secs(10),
            &twenty_records(),
            3,
        );
        assert_eq!((tx.sent, out.out.len()), (20 * 64, 20 * 64));
        assert!(tx.error.is_none());
        let mut rx = RecordRx::new(64);
        rx.feed(&out.out, u64::MAX / 2, true);
        assert_eq!((rx.latencies.len(), rx.bad_headers), (20, 0));
    }

    /// The same sender and receiver code runs over two `ByteStream`s: in memory and
    /// the kernel's TCP on loopback (brisk's own socket is covered by tests/realrun.rs,
    /// which needs root).
    #[test]
    fn records_app_runs_unchanged_over_memory_and_kernel_tcp() {
        let clock = Clock::start();
        let (end, tick) = (StdDuration::from_secs(10), StdDuration::from_millis(100));
        let mut mem = Mem::default();
        let tx_mem = send_records(&mut mem, clock, end, &twenty_records(), 5);
        mem.inp = mem.out.drain(..).collect();
        let rx_mem = receive(
            &mut mem,
            clock,
            end,
            tick,
            tick,
            Expect {
                records: Some(RecordRx::new(64)),
                bytes: None,
                check: Check::Sha256,
            },
        );

        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let a = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        let (tx_tcp, rx_tcp) = std::thread::scope(|s| {
            let rx = s.spawn(|| {
                let records = Some(RecordRx::new(64));
                receive(
                    KernelStream::new(&b),
                    clock,
                    end,
                    tick,
                    tick,
                    Expect {
                        records,
                        bytes: None,
                        check: Check::Sha256,
                    },
                )
            });
            let mut w = KernelStream::new(&a);
            let tx = send_records(&mut w, clock, end, &twenty_records(), 5);
            w.shutdown_write().unwrap();
            (tx, rx.join().unwrap())
        });
        for (tx, rx) in [(&tx_mem, &rx_mem), (&tx_tcp, &rx_tcp)] {
            assert!(tx.error.is_none() && rx.error.is_none());
            assert_eq!((tx.sent, rx.total), (20 * 64, 20 * 64));
            let r = rx.records.as_ref().unwrap();
            assert_eq!((r.latencies.len(), r.bad_headers), (20, 0));
            assert!(intact(tx, rx), "what was sent arrived");
        }
    }

    fn pattern(seed: u64) -> Expect {
        Expect {
            records: None,
            bytes: None,
            check: Check::Pattern(seed),
        }
    }

    #[test]
    fn bulk_streams_are_checked_byte_for_byte() {
        let clock = Clock::start();
        let (end, tick) = (StdDuration::from_secs(10), StdDuration::from_millis(100));
        let mut mem = Mem::default();
        let tx = send_bulk(&mut mem, clock, end, Some(200_000), 9, |_| Ok(()));
        assert_eq!(tx.sha256, None, "a bulk sender hashes nothing");
        // `last` swallowed the final write; put the whole stream back for the reader.
        let mut stream = vec![0u8; 200_000];
        Pattern::new(9).fill(0, &mut stream);
        mem.inp = stream.iter().copied().collect();
        let rx = receive(&mut mem, clock, end, tick, tick, pattern(9));
        assert!(intact(&tx, &rx));
        stream[150_001] ^= 0x40;
        mem.inp = stream.iter().copied().collect();
        let bad = receive(&mut mem, clock, end, tick, tick, pattern(9));
        assert_eq!(
            bad.received,
            Received::Pattern {
                mismatch_at: Some(150_001)
            }
        );
        assert!(!intact(&tx, &bad));
    }
}
