//! The byte streams of a real run's flows: brisk-app's `bulk` and `records` apps (the
//! simulator's) driven over a blocking [`ByteStream`], so the same code drives brisk's
//! sockets and the kernel's. Both write brisk-app's pattern payload, which the
//! receiver checks byte for byte as it reads (with a SHA-256 at both ends for records,
//! whose headers carry send times and so cannot be regenerated from the offset; at
//! gigabits per second a hash of bulk streams took a third of the CPU). Records use
//! brisk-app's framing and schedule (24-byte header `BRK1 | index | send time ns |
//! length`, big-endian); the receiver bins goodput and, for records, parses the
//! framing and measures each record's latency. Times are on the run's shared
//! [`Clock`].
//!
//! The simulator hands its apps a non-blocking stream; here each write is one whole
//! message through a blocking `write_all` (`TxStream::write_message`): RC3 makes each
//! write a chunk, and a record header written alone could leave in a segment of its
//! own while the stack runs in another thread.

use brisk_tcp::stream::ByteStream;
use brisk_time::{Duration, Instant};
use std::time::Duration as StdDuration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{since, RealApp, MAX_SAMPLES};
use crate::os::clock::Clock;
use brisk_app::bulk::BulkSource;
use brisk_app::payload::{Pattern, RxStream, TxStream};
use brisk_app::records::{RecordPlan, RecordReader, RecordSource};

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
    /// `body(i, bytes)` sees every body byte (`i`: its index in `data`).
    fn feed(&mut self, data: &[u8], at_ns: u64, measure: bool, body: impl FnMut(usize, &[u8])) {
        let (lat, del) = (&mut self.latencies, &mut self.deliveries);
        self.reader.feed(data, body, |sent| {
            if measure && lat.len() < MAX_SAMPLES {
                lat.push(at_ns.saturating_sub(sent));
                del.push((sent, at_ns));
            }
        });
        self.bad_headers = self.reader.bad_headers();
    }
}

/// The flow's payload: brisk-app's pattern of this seed, hashed at both ends for
/// records only.
fn payload(seed: u64, records: bool) -> std::rc::Rc<Pattern> {
    Pattern::with_hashing(seed, records)
}

/// Whether what arrived is exactly what was sent.
pub(super) fn intact(tx: &TxOut, rx: &RxOut) -> bool {
    rx.total == tx.sent && rx.bad_bytes == 0 && rx.sha256 == tx.sha256
}

/// The receiving side of one flow.
pub(super) struct RxOut {
    pub(super) delivered_by_end: u64,
    pub(super) total: u64,
    /// Bytes that differed from the payload (record headers are checked by the parser).
    pub(super) bad_bytes: u64,
    /// SHA-256 of what was read (records).
    pub(super) sha256: Option<[u8; 32]>,
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
    /// The flow's seed (its payload).
    pub(super) seed: u64,
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
        seed,
    } = expect;
    let mut buf = vec![0u8; 64 * 1024];
    let mut complete_at = None;
    let mut rx = RxStream::new(payload(seed, records.is_some()));
    let (mut by_end, mut bin, mut bin_end) = (0u64, 0u64, interval);
    let mut series = Vec::new();
    let mut error = None;
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let at = since(clock);
                let (data, off) = (&buf[..n], rx.bytes);
                match &mut records {
                    Some(r) => r.feed(data, at.as_nanos() as u64, at <= end, |i, body| {
                        rx.check_pattern(off + i as u64, body)
                    }),
                    None => rx.check_pattern(off, data),
                }
                rx.account(data);
                if complete_at.is_none() && expect.is_some_and(|e| rx.bytes >= e) {
                    complete_at = Some(at);
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
        total: rx.bytes,
        bad_bytes: rx.bad_bytes,
        sha256: rx.sha256(),
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
    pub(super) sha256: Option<[u8; 32]>,
    pub(super) error: Option<String>,
}

impl TxOut {
    fn of(tx: TxStream) -> TxOut {
        TxOut {
            sent: tx.bytes,
            sha256: tx.sha256(),
            error: tx.error.map(|e| {
                if e.kind() == std::io::ErrorKind::TimedOut {
                    // The write timeout reaches just past the end: a partial write may
                    // have happened, so the stream's hash is unknowable.
                    "sender: write timed out at the end".into()
                } else {
                    format!("sender: {e}")
                }
            }),
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
    let app = BulkSource {
        total: bytes,
        write_size: None,
    };
    let mut tx = TxStream::new(payload(seed, false));
    while since(clock) < end {
        let Some((n, is_last)) = app.next_message(&tx, buf.len()) else {
            break;
        };
        let msg = &mut buf[..n];
        let ok = match if is_last { last.take() } else { None } {
            Some(f) => tx.write_message(&[], msg, f),
            None => tx.write_message(&[], msg, |d| w.write_all(d)),
        };
        if !ok {
            break;
        }
    }
    TxOut::of(tx)
}

/// Writes records on their schedule (brisk-app's, the simulator's: first at once,
/// then every `interval` plus uniform jitter, never earlier than the previous) until
/// `end` or `count`, each in one write. Each is stamped with its scheduled time, so
/// time a record waits behind a blocked write counts in its latency, as the
/// simulator's pending records do.
pub(super) fn send_records<S: ByteStream>(
    mut w: S,
    clock: Clock,
    end: StdDuration,
    app: &RealApp,
    seed: u64,
) -> TxOut {
    let mut tx = TxStream::new(payload(seed, true));
    let RealApp::Records {
        size,
        interval,
        jitter,
        count,
    } = *app
    else {
        return TxOut::of(tx);
    };
    let mut src = RecordSource::new(RecordPlan {
        size,
        interval,
        jitter,
        jitter_sd: Duration::ZERO,
        count,
    });
    let mut jit = ChaCha8Rng::seed_from_u64(seed ^ 0x6a69_7474_6572);
    // `size` is bounded by MAX_RECORD (checked by run_real).
    let mut buf = vec![0u8; size as usize];
    let end_ns = end.as_nanos() as u64;
    let (end, last_due) = (
        Instant::from_nanos(end_ns),
        Instant::from_nanos(end_ns.saturating_sub(1)),
    );
    src.start(clock.now());
    while let Some(at) = src.next_at().filter(|&at| at < end) {
        let t = clock.now();
        if at > t {
            std::thread::sleep(StdDuration::from_nanos((at - t).as_nanos() as u64));
        }
        // Records due by now, but none from the end on.
        let due = clock.now().min(last_due);
        src.generate(due, &mut jit, || 1);
        while let Some(ok) = src.write_next_whole(&mut tx, &mut buf, |d| w.write_all(d)) {
            if !ok {
                return TxOut::of(tx);
            }
        }
    }
    TxOut::of(tx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stack::kernel_stream::KernelStream;

    #[test]
    fn records_after_the_end_are_parsed_but_not_measured() {
        let mut stream = Vec::new();
        for i in 0..3u64 {
            let h = brisk_app::records::RecordHeader {
                index: i,
                sent_at_ns: 0,
                len: 30,
            };
            let mut r = vec![7u8; 30];
            r[..24].copy_from_slice(&h.encode());
            stream.extend(r);
        }
        let mut rx = RecordRx::new(30);
        rx.feed(&stream[..60], 1, true, |_, _| {});
        rx.feed(&stream[60..], 2, false, |_, _| {});
        assert_eq!((rx.bad_headers, rx.latencies.len()), (0, 2));
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
        rx.feed(&out.out, u64::MAX / 2, true, |_, _| {});
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
                seed: 5,
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
                        seed: 5,
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
            seed,
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
        assert_eq!(bad.bad_bytes, 1);
        assert!(!intact(&tx, &bad));
    }
}
