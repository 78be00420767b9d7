//! SACK processing under attack (issue 13): the per-ACK cost of a hostile receiver's
//! ACKs with changing SACK blocks while the sender holds 80 660 outstanding segments.
//!
//! The attack (the security review's setup): the peer forces the smallest MSS brisk
//! accepts (64, so 52 payload bytes with timestamps), opens a large window and lets
//! the sender fill its default 4-MiB send buffer: 80 660 segments (`initial_cwnd`
//! stands in for the ~13 rounds of slow start the attacker would otherwise ACK
//! through). It then never advances the cumulative ACK and sends ACKs with three SACK
//! blocks (all that fit beside timestamps): two move between eight stripes of the
//! lower data, with edges jittered by whole segments, so that each ACK re-covers data
//! SACKed by earlier ACKs but not by the previous one (what defeats a last-blocks
//! cache such as Linux's `recv_sack_cache`); the third SACKs one more segment of the
//! top `BAIT` each time, so every ACK delivers something and runs the whole loss
//! machinery (RACK, recovery, PRR), not only the SACK walk.
//!
//! Two tables:
//! - `endpoint`: the whole per-ACK path (`Endpoint::handle_packet` plus draining
//!   `poll_transmit`), p50/p99/max per ACK from a histogram. Timeouts that fall due
//!   between ACKs (RTO, RACK reorder timer) are handled untimed and counted.
//! - `scoreboard`: `Scoreboard::sack` alone against the peer, the linear walk brisk
//!   used before issue 13 (kept below as `LinearBoard`), fed the same block sequence
//!   on the same 80 660 segments; the ratio is peer / brisk.
//!
//! Time is the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`, as `mn_cpu` in
//! brisk-minion reads it), so time the thread spends preempted by other work on a
//! shared machine is not counted; one reading is a system call, whose measured cost
//! is subtracted from each sample. Run pinned to one core:
//! `taskset -c 1 cargo bench -p brisk-tcp --bench sack_attack`. `SACK_ACKS` sets the
//! number of ACKs (default 20 000). Run without `--bench`
//! (`cargo test --release -p brisk-tcp --benches`) it is a 500-ACK smoke run.

use brisk_tcp::endpoint::{Endpoint, EndpointConfig};
use brisk_tcp::recovery::scoreboard::Scoreboard;
use brisk_tcp::sent::SentInfo;
use brisk_tcp::{Config, Duration, Instant};
use brisk_wire::{
    emit_tcp_packet, parse_tcp_packet, Ecn, Flags, IpRepr, Ipv4Repr, SackBlock, SackBlocks, SeqNum,
    TcpRepr, Timestamps, IPPROTO_TCP,
};
use hdrhistogram::Histogram;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// The thread's CPU time in ns.
fn cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The cost of one `cpu_ns` reading (median of many), subtracted from each sample.
fn clock_cost_ns() -> u64 {
    let mut v: Vec<u64> = (0..1001)
        .map(|_| {
            let a = cpu_ns();
            let b = cpu_ns();
            b - a
        })
        .collect();
    v.sort_unstable();
    v[500]
}

/// Outstanding segments in the attack (the security review's count).
const SEGS: u64 = 80_660;
/// Payload per segment: brisk's minimum MSS (64) less the timestamp option.
const MSS: u64 = 52;
/// Stripes the moving SACK blocks cover, below the bait.
const STRIPES: u64 = 8;
/// Top segments SACKed one per ACK, in order (wrapping after that many ACKs).
const BAIT: u64 = 20_000;
/// One hostile ACK every 200 µs (5 000 per second).
const ACK_GAP: Duration = Duration::from_micros(200);

const VICTIM: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const PEER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

/// A small deterministic generator (xorshift64*) for the edge jitter.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The SACK blocks of ACK `k`, as segment-index ranges `[a, b)` within `0..SEGS`:
/// the bait segment first (the most recent data first, as RFC 2018 §4 has it), then
/// two of the eight stripes (which two depends on `k`), each shrunk at both ends by
/// 0-15 segments; segment 0 is never SACKed (the hole that pins SND.UNA).
fn blocks_for(k: u64, rng: &mut Rng) -> Vec<(u64, u64)> {
    let low = SEGS - BAIT;
    let stripe = low / STRIPES;
    let bait = low + k % BAIT;
    let mut v = vec![(bait, bait + 1)];
    for j in 0..2 {
        let s = (k + j * 3 + (k / STRIPES) % 2) % STRIPES;
        let a = (s * stripe).max(1) + rng.below(16);
        let b = ((s + 1) * stripe).min(low) - rng.below(16);
        v.push((a, b));
    }
    v
}

fn percentiles(h: &Histogram<u64>) -> (f64, f64, f64) {
    let us = |ns: u64| ns as f64 / 1000.0;
    (
        us(h.value_at_quantile(0.50)),
        us(h.value_at_quantile(0.99)),
        us(h.max()),
    )
}

fn ip(src: Ipv4Addr, dst: Ipv4Addr) -> IpRepr {
    IpRepr::V4(Ipv4Repr {
        src,
        dst,
        protocol: IPPROTO_TCP,
        dscp: 0,
        ecn: Ecn::NotEct,
        ttl: 64,
        ident: 0,
        dont_frag: true,
        payload_len: 0,
    })
}

struct EndpointResult {
    /// What the victim did (deterministic: the same in every run of one build).
    summary: String,
    /// `handle_packet` alone.
    input: Histogram<u64>,
    /// `handle_packet` plus draining `poll_transmit`.
    hist: Histogram<u64>,
    /// `handle_timeout` plus draining `poll_transmit`, per timeout handled.
    timer: Histogram<u64>,
    /// Packets sent in reply to each ACK.
    sent: Histogram<u64>,
    outstanding: u64,
    timeouts: u64,
    total_ns: u64,
}

/// The attack on a real endpoint; returns the per-ACK histogram (ns).
fn endpoint_attack(acks: u64, clock: u64) -> EndpointResult {
    let cfg = Config {
        congestion: brisk_tcp::config::CongestionConfig {
            initial_cwnd: SEGS as u32 + 100,
            ..Config::default().congestion
        },
        ..Config::default()
    };
    let cfg_send_buffer = cfg.send_buffer;
    let mut ep = Endpoint::new(IpAddr::V4(VICTIM), EndpointConfig::seeded([7; 16], 7));
    let mut now = Instant::from_millis(1);
    let peer = SocketAddr::new(IpAddr::V4(PEER), 80);
    let h = ep.connect(now, 40000, peer, cfg).expect("connect");
    let mut out = Vec::new();
    let _ = ep.poll_transmit(now, &mut out).expect("SYN");
    let (_, syn) = parse_tcp_packet(&out).expect("valid SYN");
    let iss = syn.seq;
    let irs = SeqNum(1_000_000);
    let mut pkt = Vec::new();
    let send = |ep: &mut Endpoint, now: Instant, seg: TcpRepr<'_>, pkt: &mut Vec<u8>| {
        emit_tcp_packet(&ip(PEER, VICTIM), &seg, pkt);
        ep.handle_packet(now, pkt);
    };
    now += Duration::from_millis(10);
    send(
        &mut ep,
        now,
        TcpRepr {
            src_port: 80,
            dst_port: 40000,
            seq: irs,
            ack: iss + 1,
            flags: Flags::SYN | Flags::ACK,
            window: 65535,
            mss: Some(1),
            window_scale: Some(brisk_wire::WindowScale::MAX),
            sack_permitted: true,
            timestamps: Some(Timestamps {
                tsval: 1,
                tsecr: syn.timestamps.map_or(0, |t| t.tsval),
            }),
            ..TcpRepr::default()
        },
        &mut pkt,
    );
    while ep.poll_transmit(now, &mut out).is_some() {}
    // The SYN-ACK's window is never scaled: open the scaled window.
    send(
        &mut ep,
        now,
        TcpRepr {
            src_port: 80,
            dst_port: 40000,
            seq: irs + 1,
            ack: iss + 1,
            flags: Flags::ACK,
            window: 65535,
            timestamps: Some(Timestamps { tsval: 2, tsecr: 0 }),
            ..TcpRepr::default()
        },
        &mut pkt,
    );
    assert_eq!(ep.conn(h).expect("conn").mss(), MSS as u32);
    // The default 4-MiB send buffer, full: 80 659 segments of 52 bytes and one of 36.
    let data = vec![0x5a; cfg_send_buffer];
    let written = ep.conn_mut(h).expect("conn").write(&data);
    assert_eq!(written, data.len(), "the send buffer takes the whole write");
    let mut sent = 0u64;
    for _ in 0..1000 {
        while ep.poll_transmit(now, &mut out).is_some() {
            sent += 1;
        }
        if sent >= SEGS {
            break;
        }
        now += Duration::from_micros(10);
    }
    let outstanding = ep.conn(h).expect("conn").info().in_flight as u64;
    assert_eq!(sent, SEGS, "every segment left at once");
    // Segment i covers wire sequence iss + 1 + i·MSS.
    let seq_of = |i: u64| iss + 1 + (i * MSS) as u32;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut hist = Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).expect("histogram");
    let mut timeouts = 0;
    let mut total_ns = 0;
    let mut input = hist.clone();
    let mut timer = hist.clone();
    let mut sent = Histogram::<u64>::new_with_bounds(1, 1 << 30, 3).expect("histogram");
    for k in 0..acks {
        now += ACK_GAP;
        if ep.poll_timeout().is_some_and(|t| t <= now) {
            let t0 = cpu_ns();
            ep.handle_timeout(now);
            while ep.poll_transmit(now, &mut out).is_some() {}
            let ns = (cpu_ns() - t0).saturating_sub(clock);
            timer.record(ns.max(1)).expect("in range");
            timeouts += 1;
        }
        let mut sack = SackBlocks::new();
        for (a, b) in blocks_for(k, &mut rng) {
            sack.push(SackBlock {
                left: seq_of(a),
                right: seq_of(b),
            });
        }
        let seg = TcpRepr {
            src_port: 80,
            dst_port: 40000,
            seq: irs + 1,
            ack: seq_of(0),
            flags: Flags::ACK,
            window: 65535,
            sack,
            timestamps: Some(Timestamps {
                tsval: 3 + k as u32,
                tsecr: 0,
            }),
            ..TcpRepr::default()
        };
        emit_tcp_packet(&ip(PEER, VICTIM), &seg, &mut pkt);
        let t0 = cpu_ns();
        ep.handle_packet(now, &pkt);
        let t1 = cpu_ns();
        let mut n = 0;
        while ep.poll_transmit(now, &mut out).is_some() {
            n += 1;
        }
        let t2 = cpu_ns();
        let ns = (t2 - t0).saturating_sub(2 * clock);
        input
            .record((t1 - t0).saturating_sub(clock).max(1))
            .expect("in range");
        sent.record(n).expect("in range");
        total_ns += ns;
        hist.record(ns.max(1)).expect("in range");
    }
    let i = ep.conn(h).expect("conn").info();
    let summary = format!(
        "victim: {} packets out, {} retransmits, {} marked lost, {} SACKed, cwnd {}, {} RTOs",
        ep.stats().packets_out,
        i.retransmits,
        i.lost,
        i.sacked,
        i.cwnd,
        i.rto_count
    );
    EndpointResult {
        summary,
        input,
        hist,
        timer,
        sent,
        outstanding,
        timeouts,
        total_ns,
    }
}

/// brisk's scoreboard SACK walk before issue 13, as the peer: a binary search to each
/// block's first segment, then one step per segment it covers, skipping only what the
/// previous ACK's blocks covered.
struct LinearBoard {
    segs: Vec<(u64, u64, bool)>,
    sack_cache: Vec<(u64, u64)>,
    sacked_out: u32,
}

impl LinearBoard {
    fn sack(&mut self, blocks: &[(u64, u64)]) -> u32 {
        let mut newly = 0;
        for &(l, r) in blocks {
            let mut pos = l;
            'outer: while pos < r {
                if let Some(&(_, cr)) = self.sack_cache.iter().find(|c| c.0 <= pos && pos < c.1) {
                    pos = cr;
                    continue;
                }
                let mut i = self.segs.partition_point(|s| s.1 <= pos);
                while i < self.segs.len() {
                    let s = self.segs[i];
                    if s.1 > r {
                        break 'outer;
                    }
                    if s.0 >= l && !s.2 {
                        self.segs[i].2 = true;
                        self.sacked_out += 1;
                        newly += 1;
                    }
                    pos = s.1;
                    i += 1;
                    if self.sack_cache.iter().any(|c| c.0 <= pos && pos < c.1) {
                        continue 'outer;
                    }
                }
                break;
            }
        }
        self.sack_cache.clear();
        self.sack_cache.extend_from_slice(blocks);
        newly
    }
}

/// `Scoreboard::sack` against `LinearBoard` on the same blocks; (brisk, peer)
/// histograms in ns.
fn scoreboard_attack(acks: u64, clock: u64) -> (Histogram<u64>, Histogram<u64>) {
    let mut board = Scoreboard::new();
    let mut peer = LinearBoard {
        segs: Vec::with_capacity(SEGS as usize),
        sack_cache: Vec::new(),
        sacked_out: 0,
    };
    for i in 0..SEGS {
        let (s, e) = (1 + i * MSS, 1 + (i + 1) * MSS);
        let info = SentInfo {
            sent_at: Instant::from_micros(i),
            bytes: MSS as u32,
            ..Default::default()
        };
        board.push(s, e, false, info);
        peer.segs.push((s, e, false));
    }
    let seq = |i: u64| 1 + i * MSS;
    let blocks = |k: u64, rng: &mut Rng| -> Vec<(u64, u64)> {
        blocks_for(k, rng)
            .into_iter()
            .map(|(a, b)| (seq(a), seq(b)))
            .collect()
    };
    // One pass each (the same blocks), so neither evicts the other's cache lines
    // between samples.
    let mut hb = Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).expect("histogram");
    let mut hp = hb.clone();
    let mut newly = Vec::with_capacity(acks as usize);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for k in 0..acks {
        let blocks = blocks(k, &mut rng);
        let t0 = cpu_ns();
        let n = board.sack(&blocks, |_| {});
        let t1 = cpu_ns();
        newly.push(n);
        hb.record((t1 - t0).saturating_sub(clock).max(1))
            .expect("in range");
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for k in 0..acks {
        let blocks = blocks(k, &mut rng);
        let t0 = cpu_ns();
        let n = peer.sack(&blocks);
        let t1 = cpu_ns();
        assert_eq!(n, newly[k as usize], "ACK {k}: brisk and the peer disagree");
        hp.record((t1 - t0).saturating_sub(clock).max(1))
            .expect("in range");
    }
    assert_eq!(board.sacked_out(), peer.sacked_out);
    (hb, hp)
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let acks: u64 = if bench {
        std::env::var("SACK_ACKS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(20_000)
    } else {
        500
    };
    println!("SACK processing under attack: {SEGS} outstanding segments of {MSS} bytes, {acks} ACKs, 2 moving SACK blocks and 1 new each");
    let clock = clock_cost_ns();
    println!("thread CPU clock reading: {clock} ns (subtracted from each sample)");
    let e = endpoint_attack(acks, clock);
    println!();
    println!(
        "{} outstanding segments; {} timeouts fell due between ACKs",
        e.outstanding, e.timeouts
    );
    println!("{}", e.summary);
    println!();
    println!("| endpoint | p50 µs | p99 µs | max µs |");
    println!("|---|---|---|---|");
    for (name, h) in [
        ("per ACK: handle_packet", &e.input),
        ("per ACK: handle_packet + poll_transmit", &e.hist),
        ("per timeout: handle_timeout + poll_transmit", &e.timer),
    ] {
        let (p50, p99, max) = percentiles(h);
        println!("| {name} | {p50:.2} | {p99:.2} | {max:.1} |");
    }
    println!(
        "| packets sent per ACK (not µs) | {} | {} | {} |",
        e.sent.value_at_quantile(0.5),
        e.sent.value_at_quantile(0.99),
        e.sent.max()
    );
    println!(
        "mean per ACK with its output: {:.2} µs",
        e.total_ns as f64 / acks as f64 / 1000.0
    );
    let (hb, hp) = scoreboard_attack(acks, clock);
    let (b50, b99, bmax) = percentiles(&hb);
    let (p50, p99, pmax) = percentiles(&hp);
    println!();
    println!("| Scoreboard::sack | p50 µs/ACK | p99 µs/ACK | max µs |");
    println!("|---|---|---|---|");
    println!("| brisk | {b50:.2} | {b99:.2} | {bmax:.1} |");
    println!("| peer: linear walk (brisk before issue 13) | {p50:.2} | {p99:.2} | {pmax:.1} |");
    println!(
        "| ratio peer / brisk | {:.1}× | {:.1}× | |",
        p50 / b50.max(0.001),
        p99 / b99.max(0.001)
    );
}
