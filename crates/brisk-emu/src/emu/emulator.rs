//! The real-time driver: brisk-net's sans-IO elements, unchanged, clocked by
//! CLOCK_MONOTONIC instead of the simulator's event queue.
//!
//! ```text
//!   side A ──read──▶ forward PathChain (Link [→ Impairment]) ──write──▶ side B
//!   side A ◀─write── reverse PathChain                      ◀──read─── side B
//! ```
//! One thread runs a loop over an epoll set holding both sides' fds and a timerfd.
//! Each iteration reads the clock (`now`, ns since start) and
//! 1. releases every packet whose departure time is `<= now` from both chains, polling
//!    each chain at that packet's own departure time (`poll_timeout()`), so the model
//!    sees exact times however late the loop runs, and writes it to the far side;
//! 2. reads up to `batch` packets from each ready side into pooled buffers, hands
//!    each to its chain at its own read time (one more clock read per packet, so a
//!    long batch does not delay the packets in it) and releases what is already due;
//! 3. arms the timerfd (absolute, ns) at the earliest `poll_timeout()` minus `spin`,
//!    and waits; within `spin` of a deadline it busy-polls instead, which is what
//!    keeps wake-up jitter in the microseconds.
//!
//! Delivery-time error = clock at the write − the departure time the model gave the
//! packet; it is what the emulator adds on top of the model, recorded per direction in
//! a [`Histogram`] (the write's own duration, which for a TUN includes the receiving
//! kernel's processing, is kept apart as `write_cost`). Buffers are recycled through a bounded pool, so the steady state
//! allocates nothing per packet (only duplicates and dropped packets' buffers cost one).

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use brisk_net::{DropReason, Element, NetEvent, Packet};
use brisk_time::{Duration, Instant};
use brisk_wire::pcap::PcapWriter;
use serde::Serialize;

use crate::emu::ack_tap::{AckTap, AckTapFlow};
use crate::emu::health::{self, DirInput, Health, HealthInput, HealthLimits};
use crate::emu::mptcp_strip::{self, StripPackets};
use crate::emu::path::{EmuConfig, PathChain};
use crate::emu::route::{MeterReport, Route};
use crate::emu::side::Side;
use crate::error::{panic_message, EmuError, Result};
use crate::os::clock::{Clock, TimerFd};
use crate::os::gro;
use crate::os::poll::Epoll;
use crate::os::sched::{self, RtGuard};
use crate::tools::hist::{Histogram, LatencySummary};

const TOKEN_A: u64 = 0;
const TOKEN_B: u64 = 1;
const TOKEN_TIMER: u64 = 2;
/// Longest blocking wait, so the stop flag is seen promptly.
const MAX_WAIT_MS: i32 = 10;

/// Knobs of the loop itself (the path is an [`EmuConfig`]).
#[derive(Clone, Debug)]
pub struct EmulatorOptions {
    /// Per-element event-log capacity (enqueue/dequeue/drop/departure); 0: off.
    pub event_log: usize,
    /// Per-direction [`Delivery`] records kept; 0: off.
    pub delivery_log: usize,
    /// pcap of everything read from and written to side A / side B.
    pub pcap_a: Option<PathBuf>,
    pub pcap_b: Option<PathBuf>,
    /// Measure record streams' ACK latency on side A (the senders'; see
    /// [`AckTap`]): each flow's record size (`None`: not measured). Empty: off.
    pub ack_tap_a: Vec<Option<u64>>,
    /// Busy-poll instead of sleeping when the next deadline is this close (floor of
    /// the adaptive margin: the loop learns how late timer wake-ups come and starts
    /// spinning that much earlier, up to `max_spin`).
    pub spin: Duration,
    pub max_spin: Duration,
    /// Most packets read from one side per iteration.
    pub batch: usize,
    /// Most idle buffers kept for reuse.
    pub pool: usize,
    /// Capacity of each packet buffer (largest packet read).
    pub buf_size: usize,
    /// Mahimahi-format logs (`mm-link` format) of the forward and reverse links.
    pub link_logs: [Option<PathBuf>; 2],
    /// The time base; `None` starts a fresh one when the loop starts. A side with its
    /// own notion of time (a brisk stack, whose application threads read the clock
    /// too) passes its clock here so both agree on every `Instant`.
    pub clock: Option<Clock>,
    /// Thresholds of the run's self-check ([`EmuReport::health`]).
    pub health: HealthLimits,
    /// Egress coalescing (os/gro.rs) toward sides that take super-packets: while the
    /// loop is still reading a burst from the other side, a packet that is already
    /// due may wait at most this long for later due packets of its flow to join it
    /// in one write. Zero: only packets due together at a write are merged. The wait
    /// is part of the recorded delivery-time error. Default 10 µs, or
    /// `BRISK_EMU_COALESCE_US`.
    pub coalesce_slack: Duration,
    /// Whether the coalescing wait applies to every release, not only while a burst
    /// is being read ([`HOLD_ENV`], which gives the default; off unless set to 1).
    pub coalesce_hold: bool,
    /// `SCHED_FIFO` priority of the loop thread while it runs (os/sched.rs); `None`:
    /// the normal policy. Default 10, `BRISK_EMU_RT=0` turns it off; never on one CPU.
    pub realtime: Option<i32>,
    /// A CPU the loop thread must not run on (its affinity is every other CPU while
    /// it runs): the one a [`ThreadedSide`](crate::ThreadedSide) is pinned to, so the
    /// real-time loop never holds that thread off its CPU. `None`: no change.
    pub avoid_cpu: Option<usize>,
}

/// The environment override of [`EmulatorOptions::coalesce_slack`], in µs.
pub const COALESCE_ENV: &str = "BRISK_EMU_COALESCE_US";
/// `BRISK_EMU_HOLD=1`: the coalescing wait applies to every release, not only while
/// a burst is being read (issue 36 §5 experiment; off by default). Without it a
/// loop that writes as packets fall due sends what fell due during its last write
/// (~7 packets at 10 Gbit/s whatever the slack), so the slack only acts inside
/// [`ingest`]. With it a due packet that may head a super-packet waits up to the
/// slack in the loop too (its deadline joins the loop's wait), so writes grow toward
/// a slack's worth of the link's packets; each member's delivery error still counts
/// from its own departure time.
pub const HOLD_ENV: &str = "BRISK_EMU_HOLD";
/// Staged packets at which a held run is written at once: 64 KB of 1448-byte
/// segments, the most one super-packet carries.
const HOLD_FULL: usize = 44;
const COALESCE_DEFAULT_US: u64 = 10;

fn coalesce_slack_from_env() -> Duration {
    let us = std::env::var(COALESCE_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(COALESCE_DEFAULT_US);
    Duration::from_micros(us)
}

impl Default for EmulatorOptions {
    fn default() -> Self {
        EmulatorOptions {
            event_log: 0,
            delivery_log: 0,
            pcap_a: None,
            pcap_b: None,
            ack_tap_a: Vec::new(),
            spin: Duration::from_micros(10),
            max_spin: Duration::from_micros(200),
            batch: 64,
            pool: 8192,
            buf_size: 2048,
            link_logs: [None, None],
            clock: None,
            health: HealthLimits::default(),
            coalesce_slack: coalesce_slack_from_env(),
            coalesce_hold: std::env::var(HOLD_ENV).as_deref() == Ok("1"),
            realtime: sched::default_priority(),
            avoid_cpu: None,
        }
    }
}

/// One packet's passage, for timing analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub id: u64,
    pub bytes: usize,
    /// When it was read from the source side.
    pub read_at: Instant,
    /// When the model let it leave.
    pub scheduled: Instant,
    /// When the write to the destination side started.
    pub written: Instant,
}

/// Per-direction results.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DirReport {
    pub read_packets: u64,
    pub read_bytes: u64,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    pub dropped_queue_full: u64,
    pub dropped_loss: u64,
    pub dropped_outage: u64,
    pub dropped_overflow: u64,
    pub duplicated: u64,
    pub corrupted: u64,
    /// Packets whose MPTCP options the option-stripping middlebox overwrote
    /// ([`Emulator::strip_mptcp`], emu/mptcp_strip.rs), and how many options.
    pub mptcp_stripped_packets: u64,
    pub mptcp_stripped_options: u64,
    pub max_queue_packets: usize,
    /// Per-band counters of a `prio` queue on this direction's link, band 0 first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prio_bands: Option<Vec<brisk_net::queue::BandCounters>>,
    pub read_errors: u64,
    pub write_errors: u64,
    /// Writes the destination refused (would block).
    pub write_refused: u64,
    /// Super-packet writes (os/gro.rs) and the packets they carried; the rest of
    /// `delivered_packets` went out one per write.
    pub gso_writes: u64,
    pub gso_packets: u64,
    /// Super-packets the destination rejected, whose members then went out one by one.
    pub gso_fallbacks: u64,
    /// Start of the write to the destination − the model's departure time.
    pub delivery_error: LatencySummary,
    /// How long each write took (for a TUN: the receiving kernel's work); one sample
    /// per write, so a super-packet counts once.
    pub write_cost: LatencySummary,
    pub events_lost: u64,
    /// The elements' event logs, time-ordered (with `event_log` on).
    #[serde(skip)]
    pub events: Vec<NetEvent>,
    #[serde(skip)]
    pub deliveries: Vec<Delivery>,
    /// The metered shared link's measurements (routes built `with_meter`).
    #[serde(skip)]
    pub meter: Option<MeterReport>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct EmuReport {
    pub elapsed_s: f64,
    pub iterations: u64,
    pub timer_wakeups: u64,
    /// Seconds the loop spent moving packets (see [`crate::emu::health`]).
    pub busy_s: f64,
    /// The loop thread's scheduling: `SCHED_FIFO 10`, or `normal` with the reason.
    pub scheduling: String,
    /// Short sleeps the real-time loop took to leave its CPU to other threads now
    /// and then, instead of being stopped by the kernel for 50 ms (see `run`).
    pub duty_sleeps: u64,
    /// Of those, the ones deferred to a moment when nothing was due
    /// (`sched::DutyCycle::deferring`).
    pub duty_quiet_sleeps: u64,
    /// Whether the emulator kept up and delivered on time; warnings if not.
    pub health: Health,
    /// A → B.
    pub forward: DirReport,
    /// B → A.
    pub reverse: DirReport,
    /// brisk's endpoint on a thread of its own (`emu/threaded.rs`): its queues'
    /// limits, delays and drops; `None` when it ran on the loop's thread. Filled in by
    /// the dumbbell after the loop ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stack_thread: Option<crate::emu::threaded::ThreadedReport>,
    /// Side A's ACK-latency tap, per flow (`EmulatorOptions::ack_tap_a`; empty if off).
    #[serde(skip)]
    pub ack_tap_a: Vec<AckTapFlow>,
}

/// What watches one side's packets (read from it and written to it): its pcap and
/// the ACK-latency tap, each optional.
#[derive(Default)]
struct Capture {
    file: Option<PcapWriter<BufWriter<File>>>,
    acks: Option<AckTap>,
}

impl Capture {
    fn write_packet(&mut self, ts_ns: u64, data: &[u8]) -> std::io::Result<()> {
        if let Some(t) = &mut self.acks {
            t.observe(ts_ns, data);
        }
        match &mut self.file {
            Some(f) => f.write_packet(ts_ns, data),
            None => Ok(()),
        }
    }
}

struct Dir {
    path: Route,
    flow: u32,
    hist: Histogram,
    write_hist: Histogram,
    report: DirReport,
    delivery_cap: usize,
    /// Packets the model has released (each with its departure time) that are not
    /// written yet, oldest first; see [`flush`]. Its capacity is kept.
    staged: Vec<(Instant, Packet)>,
    /// The MPTCP-option stripper at this direction's entrance, if any.
    strip: Option<StripPackets>,
}

impl Dir {
    fn new(path: Route, flow: u32, delivery_cap: usize) -> Dir {
        Dir {
            path,
            flow,
            hist: Histogram::default(),
            write_hist: Histogram::default(),
            report: DirReport::default(),
            delivery_cap,
            staged: Vec::with_capacity(gro::MAX_RUN * 4),
            strip: None,
        }
    }

    fn finish(&mut self, end: Instant) -> DirReport {
        let mut r = std::mem::take(&mut self.report);
        r.meter = self.path.finish_meter(end);
        if let Err(e) = self.path.finish_log(end) {
            r.write_errors += 1;
            eprintln!("brisk-emu: link log: {e}");
        }
        let chain = self.path.chain();
        let c = chain.link().counters();
        r.dropped_queue_full = c.dropped(DropReason::QueueFull).packets;
        r.dropped_loss = c.dropped(DropReason::LossModel).packets;
        r.dropped_outage = c.dropped(DropReason::Outage).packets;
        r.dropped_overflow = c.dropped(DropReason::Overflow).packets;
        r.max_queue_packets = c.max_queue_packets;
        r.prio_bands = chain
            .link()
            .queue()
            .as_prio()
            .map(|q| q.band_counters().to_vec());
        r.dropped_overflow += self.path.access_overflow();
        if let Some(i) = chain.impairment() {
            let ic = i.counters();
            r.dropped_overflow += ic.dropped(DropReason::Overflow).packets;
            r.duplicated = ic.duplicated;
            r.corrupted = ic.corrupted;
        }
        r.delivery_error = self.hist.summary();
        r.write_cost = self.write_hist.summary();
        r.events_lost = chain.events_lost();
        self.path.drain_events(&mut r.events);
        r
    }
}

impl Dir {
    /// The shared link's (one-way delay, rate; `None`: unlimited or trace-driven).
    fn link_shape(&self) -> (Duration, Option<u64>) {
        let l = self.path.chain().link();
        (l.delay(), Some(l.rate_bps()).filter(|r| *r > 0))
    }
}

fn dir_input<'a>(
    name: &'a str,
    r: &DirReport,
    (delay, rate): (Duration, Option<u64>),
) -> DirInput<'a> {
    DirInput {
        name,
        delivered_packets: r.delivered_packets,
        delivered_bytes: r.delivered_bytes,
        late: r.delivery_error,
        one_way_delay: delay,
        rate_bps: rate,
    }
}

impl EmuReport {
    /// The self-check's warnings, one line each, for a table or a log.
    pub fn warning_lines(&self) -> String {
        self.health
            .warnings
            .iter()
            .map(|w| warning_line(w))
            .collect()
    }
}

/// How every emulator warning is printed.
pub(crate) fn warning_line(w: &str) -> String {
    format!("WARNING (emulator): {w}\n")
}

/// Shared state the per-packet helpers need besides one direction.
struct Io {
    clock: Clock,
    pool: Vec<Vec<u8>>,
    pool_cap: usize,
    buf_size: usize,
    batch: usize,
    next_id: u64,
    coalesce_slack: Duration,
    /// `EmulatorOptions::coalesce_hold`: the wait applies outside [`ingest`] too.
    hold: bool,
}

impl Io {
    fn buffer(&mut self) -> Vec<u8> {
        self.pool
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(self.buf_size))
    }

    fn recycle(&mut self, buf: Vec<u8>) {
        if self.pool.len() < self.pool_cap && buf.capacity() >= self.buf_size {
            self.pool.push(buf);
        }
    }
}

/// Sends every packet of `dir` due by `now` to `dst` (with [`HOLD_ENV`], unless
/// they may still wait for more of their run). Returns how many were written.
fn release<D: Side>(
    dir: &mut Dir,
    dst: &mut D,
    now: Instant,
    io: &mut Io,
    pcap: Option<&mut Capture>,
) -> u64 {
    stage(dir, now);
    if io.hold {
        flush_unless_coalescing(dir, dst, now, io, pcap)
    } else {
        flush(dir, dst, io, pcap)
    }
}

/// When `dir`'s held packets must be written ([`HOLD_ENV`]): its oldest staged
/// packet's departure plus the slack; `None` when nothing is staged.
fn hold_deadline(dir: &Dir, io: &Io) -> Option<Instant> {
    dir.staged
        .first()
        .map(|(t, _)| t.saturating_add(io.coalesce_slack))
}

/// Moves every packet of `dir` due by `now` out of the model into `dir.staged`.
fn stage(dir: &mut Dir, now: Instant) {
    while let Some(t) = dir.path.poll_timeout().filter(|t| *t <= now) {
        // Polling at `t`, not `now`: the packet that comes out departs exactly at `t`
        // (the chain's earliest deadline), and later packets keep their own times.
        let Some(pkt) = dir.path.poll_packet(t) else {
            if dir.path.poll_timeout() == Some(t) {
                debug_assert!(false, "path asked to be polled at {t} but made no progress");
                break;
            }
            continue; // a dequeue without departure moved the deadline on
        };
        dir.staged.push((t, pkt));
    }
}

/// Writes `dir.staged` to `dst`, in order. Where `dst` takes super-packets, each run
/// of consecutive packets that GRO would merge (os/gro.rs) goes out in one write;
/// everything else, one packet per write. Every packet in `staged` is already due, so
/// merging delays none of them beyond the write they share. Returns how many packets
/// were written.
fn flush<D: Side>(dir: &mut Dir, dst: &mut D, io: &mut Io, mut pcap: Option<&mut Capture>) -> u64 {
    let mut sent = 0;
    let mut staged = std::mem::take(&mut dir.staged);
    let mut i = 0;
    while i < staged.len() {
        let mut run = None;
        if staged.len() - i > 1 && dst.takes_gso(&staged[i].1.data) {
            // A member whose checksum the emulator computed and nothing changed since
            // (`l4_csum_valid`) is not summed again.
            let p = &staged[i].1;
            if let Some(mut r) = gro::Run::start_with(&p.data, p.l4_csum_valid) {
                while i + r.count() < staged.len() && {
                    let q = &staged[i + r.count()].1;
                    r.push_with(&q.data, q.l4_csum_valid)
                } {}
                run = Some(r).filter(|r| r.count() > 1);
            }
        }
        let n = match run {
            Some(mut r) => {
                let n = r.count();
                let members = &staged[i..i + n];
                let h = r.hdr_len();
                let (hdr, head) = r.finish();
                // Payload slices on the stack: no allocation per write.
                let mut payloads: [&[u8]; gro::MAX_RUN] = [&[]; gro::MAX_RUN];
                for (slot, (_, p)) in payloads.iter_mut().zip(members) {
                    *slot = &p.data[h..];
                }
                let written = io.clock.now();
                let ok = dst.send_gso(written, &hdr, head, &payloads[..n]);
                let done = io.clock.now();
                match ok {
                    Ok(true) => {
                        dir.report.gso_writes += 1;
                        dir.report.gso_packets += n as u64;
                        dir.write_hist.record((done - written).as_nanos() as u64);
                        for (t, p) in members {
                            delivered(dir, *t, p, written, pcap.as_deref_mut());
                        }
                        sent += n as u64;
                    }
                    Ok(false) => dir.report.write_refused += n as u64,
                    Err(_) => {
                        // The kernel refused the super-packet: the members still go,
                        // one per write, so nothing is lost to the optimisation.
                        dir.report.gso_fallbacks += 1;
                        for (t, p) in members {
                            sent += send_one(dir, dst, io, *t, p, pcap.as_deref_mut());
                        }
                    }
                }
                n
            }
            None => {
                let (t, p) = &staged[i];
                sent += send_one(dir, dst, io, *t, p, pcap.as_deref_mut());
                1
            }
        };
        i += n;
    }
    for (_, p) in staged.drain(..) {
        io.recycle(p.data);
    }
    dir.staged = staged;
    sent
}

/// Writes one packet due at `t` on its own; 1 if it was written.
fn send_one<D: Side>(
    dir: &mut Dir,
    dst: &mut D,
    io: &mut Io,
    t: Instant,
    pkt: &Packet,
    pcap: Option<&mut Capture>,
) -> u64 {
    let written = io.clock.now();
    let ok = dst.send(t, &pkt.data);
    let done = io.clock.now();
    match ok {
        Ok(true) => {
            dir.write_hist.record((done - written).as_nanos() as u64);
            delivered(dir, t, pkt, written, pcap);
            1
        }
        Ok(false) => {
            dir.report.write_refused += 1;
            0
        }
        Err(_) => {
            dir.report.write_errors += 1;
            0
        }
    }
}

/// Accounts one packet due at `t` whose write started at `written`.
fn delivered(
    dir: &mut Dir,
    t: Instant,
    pkt: &Packet,
    written: Instant,
    pcap: Option<&mut Capture>,
) {
    let r = &mut dir.report;
    r.delivered_packets += 1;
    r.delivered_bytes += pkt.data.len() as u64;
    dir.hist.record((written - t).as_nanos() as u64);
    if r.deliveries.len() < dir.delivery_cap {
        r.deliveries.push(Delivery {
            id: pkt.id,
            bytes: pkt.data.len(),
            read_at: pkt.sent_at,
            scheduled: t,
            written,
        });
    }
    if let Some(p) = pcap {
        // A failing capture must not stop the emulation; the writer is flushed (and
        // its error reported) at the end.
        let _ = p.write_packet(written.as_nanos(), &pkt.data);
    }
}

/// Reads up to `batch` packets from `src` into `dir`, releasing what is due at once
/// to `dst`, and what falls due meanwhile in `back` (the other direction, which
/// delivers to `src`) to `src`: a long batch from one side, each packet of which may
/// run a kernel's TCP inside its write, must not hold the other direction's due
/// packets back until it ends (that wait was part of the delivery-error tail).
/// Returns (whether the batch limit was hit, packets written to `dst`, packets
/// written to `src`).
#[allow(clippy::too_many_arguments)]
fn ingest<S: Side, D: Side>(
    src: &mut S,
    dir: &mut Dir,
    dst: &mut D,
    back: &mut Dir,
    now: Instant,
    io: &mut Io,
    mut pcap_src: Option<&mut Capture>,
    mut pcap_dst: Option<&mut Capture>,
) -> (bool, u64, u64) {
    let (mut sent, mut sent_back) = (0, 0);
    let mut now = now;
    // Whether the batch limit, not an empty side, ended the reads.
    let mut full = true;
    for _ in 0..io.batch {
        let mut buf = io.buffer();
        match src.recv(now, &mut buf) {
            Ok(true) => {
                // Stamp each packet with its own read time: reading a batch takes
                // tens of µs, which would otherwise delay every packet's release.
                now = io.clock.now().max(now);
                // Departures due before this arrival leave the model first, at their
                // own times, so the chain never sees time run backwards. They are
                // written now unless they may wait for later packets of the burst
                // to join them (`coalesce_slack`).
                stage(dir, now);
                sent += flush_unless_coalescing(dir, dst, now, io, pcap_dst.as_deref_mut());
                dir.report.read_packets += 1;
                dir.report.read_bytes += buf.len() as u64;
                if let Some(p) = pcap_src.as_deref_mut() {
                    let _ = p.write_packet(now.as_nanos(), &buf);
                }
                // The middlebox sits at the path's entrance: the source side's pcap
                // has the packet as sent, the destination's as delivered.
                if let Some(which) = dir.strip {
                    let s = mptcp_strip::strip(&mut buf, which);
                    if s.options > 0 {
                        dir.report.mptcp_stripped_packets += 1;
                        dir.report.mptcp_stripped_options += u64::from(s.options);
                    }
                }
                let id = io.next_id;
                io.next_id += 1;
                let pkt = Packet {
                    data: buf,
                    id,
                    flow: dir.flow,
                    sent_at: now,
                    // Valid only where the side computed the TCP checksum itself
                    // (a segment of a super-packet); a packet taken as the kernel
                    // wrote it is not trusted. The MPTCP strip above keeps a good
                    // checksum good (it updates it incrementally), and whatever
                    // changes the bytes on the path clears the flag (`data_mut`).
                    l4_csum_valid: src.recv_csum_valid(),
                };
                dir.path.handle_packet(now, pkt);
                stage(dir, now);
                sent += flush_unless_coalescing(dir, dst, now, io, pcap_dst.as_deref_mut());
                stage(back, now);
                sent_back += flush_unless_coalescing(back, src, now, io, pcap_src.as_deref_mut());
            }
            Ok(false) => {
                io.recycle(buf);
                full = false;
                break;
            }
            Err(_) => {
                dir.report.read_errors += 1;
                io.recycle(buf);
                full = false;
                break;
            }
        }
    }
    // Without HOLD_ENV nothing stays staged past an ingest: the loop's wait only
    // looks at the models. With it, a held run's deadline joins that wait.
    if io.hold {
        sent += flush_unless_coalescing(dir, dst, now, io, pcap_dst);
        sent_back += flush_unless_coalescing(back, src, now, io, pcap_src);
    } else {
        sent += flush(dir, dst, io, pcap_dst);
        sent_back += flush(back, src, io, pcap_src);
    }
    (full, sent, sent_back)
}

/// Writes `dir.staged` unless its oldest packet may still wait for more of its burst:
/// `dst` takes super-packets and that packet has been due for less than
/// `coalesce_slack`. The end of every [`ingest`] writes whatever is left.
fn flush_unless_coalescing<D: Side>(
    dir: &mut Dir,
    dst: &mut D,
    now: Instant,
    io: &mut Io,
    pcap: Option<&mut Capture>,
) -> u64 {
    match dir.staged.first() {
        None => 0,
        Some((t, p))
            if now - *t < io.coalesce_slack
                && (!io.hold || dir.staged.len() < HOLD_FULL)
                && gro::may_merge(&p.data)
                && dst.takes_gso(&p.data) =>
        {
            0
        }
        Some(_) => flush(dir, dst, io, pcap),
    }
}

/// Sleeps `d` whatever the fds say (clock_nanosleep, CLOCK_MONOTONIC).
fn min_opt(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

/// Side's capture: its pcap file and/or its ACK tap (`tap`: record sizes per flow,
/// empty for none); `None` when neither is asked for.
fn open_pcap(path: &Option<PathBuf>, tap: &[Option<u64>]) -> Result<Option<Capture>> {
    let acks = (!tap.is_empty()).then(|| AckTap::new(tap));
    let file = match path {
        None => None,
        Some(p) => {
            let f = File::create(p)
                .map_err(|e| EmuError::io(format!("creating {}", p.display()), e))?;
            Some(
                PcapWriter::new(BufWriter::with_capacity(1 << 20, f))
                    .map_err(|e| EmuError::io(format!("writing {}", p.display()), e))?,
            )
        }
    };
    Ok((file.is_some() || acks.is_some()).then_some(Capture { file, acks }))
}

/// A two-sided link emulator. Build with [`Emulator::new`], then [`Emulator::run`]
/// on the current thread or [`Emulator::spawn`] on its own.
pub struct Emulator<A: Side, B: Side> {
    a: A,
    b: B,
    fwd: Dir,
    rev: Dir,
    opts: EmulatorOptions,
}

impl<A: Side, B: Side> Emulator<A, B> {
    pub fn new(a: A, b: B, cfg: &EmuConfig, opts: EmulatorOptions) -> Result<Self> {
        let (fwd, rev) = cfg.build()?;
        Self::with_paths(a, b, fwd, rev, opts)
    }

    /// With hand-built element chains.
    pub fn with_paths(
        a: A,
        b: B,
        fwd: PathChain,
        rev: PathChain,
        opts: EmulatorOptions,
    ) -> Result<Self> {
        Self::with_routes(a, b, Route::plain(fwd), Route::plain(rev), opts)
    }

    /// With per-flow routes (the dumbbell of [`crate::emu::dumbbell`]).
    pub fn with_routes(
        a: A,
        b: B,
        mut fwd: Route,
        mut rev: Route,
        opts: EmulatorOptions,
    ) -> Result<Self> {
        if opts.batch == 0 || opts.buf_size < 68 {
            return Err(EmuError::Config(
                "batch must be >= 1 and buf_size >= 68 (minimum IPv4 MTU)".into(),
            ));
        }
        if opts.event_log > 0 {
            fwd.chain_mut().enable_event_log(opts.event_log);
            rev.chain_mut().enable_event_log(opts.event_log);
        }
        if let Some(p) = &opts.link_logs[0] {
            fwd = fwd
                .with_link_log(p, "downlink")
                .map_err(|e| EmuError::io(format!("creating {}", p.display()), e))?;
        }
        if let Some(p) = &opts.link_logs[1] {
            rev = rev
                .with_link_log(p, "uplink")
                .map_err(|e| EmuError::io(format!("creating {}", p.display()), e))?;
        }
        Ok(Emulator {
            a,
            b,
            fwd: Dir::new(fwd, 0, opts.delivery_log),
            rev: Dir::new(rev, 1, opts.delivery_log),
            opts,
        })
    }

    /// Puts an MPTCP-option stripper (emu/mptcp_strip.rs) at the entrance of the
    /// forward (A → B) and/or reverse (B → A) direction; `None` removes it. What it
    /// did is counted in each [`DirReport`]'s `mptcp_stripped_*`.
    pub fn strip_mptcp(&mut self, forward: Option<StripPackets>, reverse: Option<StripPackets>) {
        self.fwd.strip = forward;
        self.rev.strip = reverse;
    }

    /// Runs until `stop` is set or `limit` has passed; returns the report. Time zero
    /// (for outages and logs) is the start of this call, or the origin of
    /// `EmulatorOptions::clock` when one is given.
    pub fn run(&mut self, stop: &AtomicBool, limit: Option<Duration>) -> Result<EmuReport> {
        // Ask for exact timer expiry on this thread (default slack is 50 µs).
        // SAFETY: prctl with an integer argument; failure only costs precision.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        // Run ahead of the endpoints it serves (os/sched.rs); restored on return.
        let rt = RtGuard::enter(self.opts.realtime);
        // Restored on return, like the policy; a refusal (no other CPU) changes nothing.
        let _affinity = self
            .opts
            .avoid_cpu
            .and_then(|cpu| sched::AffinityGuard::restrict(|c| c != cpu));
        // Placement experiments (issue 36 §5): the loop on one CPU only.
        let _pinned = sched::cpu_from_env(sched::EMU_CPU_ENV)
            .and_then(|cpu| sched::AffinityGuard::restrict(|c| c == cpu));
        let mut pcap_a = open_pcap(&self.opts.pcap_a, &self.opts.ack_tap_a)?;
        let mut pcap_b = open_pcap(&self.opts.pcap_b, &[])?;
        let clock = self.opts.clock.unwrap_or_else(Clock::start);
        let mut timer = TimerFd::new(clock)?;
        let mut ep = Epoll::new()?;
        ep.add(std::os::fd::AsRawFd::as_raw_fd(&timer), TOKEN_TIMER)?;
        if let Some(fd) = self.a.poll_fd() {
            ep.add(fd, TOKEN_A)?;
        }
        if let Some(fd) = self.b.poll_fd() {
            ep.add(fd, TOKEN_B)?;
        }
        let mut io = Io {
            clock,
            pool: Vec::with_capacity(self.opts.pool.min(1 << 16)),
            pool_cap: self.opts.pool,
            buf_size: self.opts.buf_size,
            batch: self.opts.batch,
            next_id: 0,
            coalesce_slack: self.opts.coalesce_slack,
            hold: self.opts.coalesce_hold,
        };
        let end = limit.map_or(Instant::MAX, |d| clock.now().saturating_add(d));
        let (spin_floor, spin_max) = (self.opts.spin, self.opts.max_spin.max(self.opts.spin));
        let mut spin = spin_floor;
        // EWMA (1/8) of how late the timer wakes us, in ns.
        let mut wake_late_ns = 0u64;
        let mut armed_for: Option<Instant> = None;
        let (a_polled, b_polled) = (self.a.poll_fd().is_none(), self.b.poll_fd().is_none());
        let (mut iterations, mut wakeups) = (0u64, 0u64);
        let mut ready = (1 << TOKEN_A) | (1 << TOKEN_B);
        // Self-check (emu/health.rs): drops at the input devices and busy time.
        let drops0 = (self.a.kernel_drops(), self.b.kernel_drops());
        let cpu0 = health::thread_cpu_s();
        let mut busy_ns = 0u64;
        // Duty cycle of a real-time loop (os/sched.rs, `DutyCycle`: why and how).
        let mut duty = if sched::duty_defer_from_env() {
            sched::DutyCycle::deferring(clock.now())
        } else {
            sched::DutyCycle::start(clock.now())
        };
        let realtime = rt.is_realtime();
        loop {
            let now = clock.now();
            if now >= end || stop.load(Ordering::Relaxed) {
                break;
            }
            iterations += 1;
            if realtime && duty.check(now, || clock.now()) {
                continue;
            }
            if ready & (1 << TOKEN_TIMER) != 0 {
                timer.ack();
                wakeups += 1;
                if let Some(at) = armed_for.take() {
                    let late = (now - at).as_nanos() as u64;
                    wake_late_ns = wake_late_ns - wake_late_ns / 8 + late / 8;
                    spin = Duration::from_nanos(wake_late_ns.saturating_mul(2))
                        .clamp(spin_floor, spin_max);
                }
            }
            let (a, b) = (&mut self.a, &mut self.b);
            let reads0 = self.fwd.report.read_packets + self.rev.report.read_packets;
            let mut to_a = release(&mut self.rev, a, now, &mut io, pcap_a.as_mut());
            let mut to_b = release(&mut self.fwd, b, now, &mut io, pcap_b.as_mut());
            let due = |t: Option<Instant>| t.is_some_and(|t| t <= now);
            let mut more = false;
            if ready & (1 << TOKEN_A) != 0 || a_polled || due(a.poll_timeout()) {
                let (m, s, back) = ingest(
                    a,
                    &mut self.fwd,
                    b,
                    &mut self.rev,
                    now,
                    &mut io,
                    pcap_a.as_mut(),
                    pcap_b.as_mut(),
                );
                more |= m;
                to_b += s;
                to_a += back;
            }
            if ready & (1 << TOKEN_B) != 0 || b_polled || due(b.poll_timeout()) {
                let (m, s, back) = ingest(
                    b,
                    &mut self.rev,
                    a,
                    &mut self.fwd,
                    now,
                    &mut io,
                    pcap_b.as_mut(),
                    pcap_a.as_mut(),
                );
                more |= m;
                to_a += s;
                to_b += back;
            }
            // A pure sans-IO side may answer what it was just handed: look again now.
            more |= (a_polled && to_a > 0) || (b_polled && to_b > 0);
            // Busy from wake-up to here if anything moved; a spin or a wake-up that
            // found nothing to do is idle time (headroom).
            let reads = self.fwd.report.read_packets + self.rev.report.read_packets - reads0;
            if to_a + to_b + reads > 0 {
                busy_ns += (clock.now() - now).as_nanos() as u64;
            }
            if more {
                ready = ep.wait(0)? | (1 << TOKEN_A) | (1 << TOKEN_B);
                continue;
            }
            let next = [
                self.fwd.path.poll_timeout(),
                self.rev.path.poll_timeout(),
                a.poll_timeout(),
                b.poll_timeout(),
                hold_deadline(&self.fwd, &io),
                hold_deadline(&self.rev, &io),
            ]
            .into_iter()
            .fold(Some(end), min_opt);
            let t = clock.now();
            if realtime && duty.pay_if_quiet(t, next, || clock.now()) {
                ready = ep.wait(0)?;
                continue;
            }
            match next {
                Some(n) if n <= t.saturating_add(spin) => {
                    // Close to a deadline: busy-poll rather than trust a wake-up.
                    ready = ep.wait(0)?;
                }
                Some(n) => {
                    let at = n.checked_sub(spin).unwrap_or(n);
                    timer
                        .arm_at(at)
                        .map_err(|e| EmuError::io("timerfd_settime", e))?;
                    armed_for = Some(at);
                    ready = ep.wait(MAX_WAIT_MS)?;
                }
                None => {
                    timer
                        .disarm()
                        .map_err(|e| EmuError::io("timerfd_settime", e))?;
                    ready = ep.wait(MAX_WAIT_MS)?;
                }
            }
        }
        // Held packets (HOLD_ENV) still go out; without it nothing is staged here.
        flush(&mut self.fwd, &mut self.b, &mut io, pcap_b.as_mut());
        flush(&mut self.rev, &mut self.a, &mut io, pcap_a.as_mut());
        let elapsed = clock.now();
        let ack_tap_a = pcap_a
            .as_mut()
            .and_then(|p| p.acks.take())
            .map_or_else(Vec::new, AckTap::finish);
        for (p, name) in [(pcap_a, "side A"), (pcap_b, "side B")] {
            if let Some(mut f) = p.and_then(|p| p.file) {
                f.flush()
                    .map_err(|e| EmuError::io(format!("flushing the {name} pcap"), e))?;
            }
        }
        let thread_cpu_s = health::thread_cpu_s() - cpu0;
        let drops1 = (self.a.kernel_drops(), self.b.kernel_drops());
        let kernel_drops = match (drops0, drops1) {
            ((Some(a0), Some(b0)), (Some(a1), Some(b1))) => {
                Some(a1.saturating_sub(a0) + b1.saturating_sub(b0))
            }
            ((Some(a0), None), (Some(a1), None)) => Some(a1.saturating_sub(a0)),
            ((None, Some(b0)), (None, Some(b1))) => Some(b1.saturating_sub(b0)),
            _ => None,
        };
        let (fwd_link, rev_link) = (self.fwd.link_shape(), self.rev.link_shape());
        let forward = self.fwd.finish(elapsed);
        let reverse = self.rev.finish(elapsed);
        let busy_s = busy_ns as f64 / 1e9;
        let health = health::assess(
            &HealthInput {
                elapsed_s: elapsed.as_secs_f64(),
                busy_s,
                thread_cpu_s,
                forward: dir_input("bottleneck", &forward, fwd_link),
                reverse: dir_input("reverse", &reverse, rev_link),
                kernel_drops,
            },
            &self.opts.health,
        );
        let report = EmuReport {
            elapsed_s: elapsed.as_secs_f64(),
            iterations,
            timer_wakeups: wakeups,
            busy_s,
            scheduling: rt.description.clone(),
            duty_sleeps: duty.sleeps,
            duty_quiet_sleeps: duty.quiet_sleeps,
            health,
            forward,
            reverse,
            stack_thread: None,
            ack_tap_a,
        };
        // Every run says so when the emulator distorted it, whichever tool ran it
        // (summaries repeat this in their tables and JSON).
        eprint!("{}", report.warning_lines());
        health::note_reported(report.health.warnings.len());
        Ok(report)
    }

    pub fn sides(&self) -> (&A, &B) {
        (&self.a, &self.b)
    }
}

impl<A: Side + Send + 'static, B: Side + Send + 'static> Emulator<A, B> {
    /// Runs the loop on its own thread until [`EmulatorHandle::stop`] or `limit`.
    pub fn spawn(mut self, limit: Option<Duration>) -> Result<EmulatorHandle> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let join = std::thread::Builder::new()
            .name("brisk-emu".into())
            .spawn(move || self.run(&flag, limit))
            .map_err(|e| EmuError::io("spawning the emulator thread", e))?;
        Ok(EmulatorHandle {
            stop,
            join: Some(join),
        })
    }
}

/// A running emulator thread; stopped and joined on drop. Its sides (e.g. TUN
/// devices) close when the thread ends.
pub struct EmulatorHandle {
    stop: Arc<AtomicBool>,
    join: Option<JoinHandle<Result<EmuReport>>>,
}

impl EmulatorHandle {
    /// Stops the loop and returns its report.
    pub fn stop(mut self) -> Result<EmuReport> {
        self.stop.store(true, Ordering::Relaxed);
        self.join_inner()
    }

    /// Waits for the loop to end by itself (its time limit).
    pub fn wait(mut self) -> Result<EmuReport> {
        self.join_inner()
    }

    pub fn is_finished(&self) -> bool {
        match &self.join {
            Some(j) => j.is_finished(),
            None => true,
        }
    }

    fn join_inner(&mut self) -> Result<EmuReport> {
        match self.join.take() {
            Some(j) => j
                .join()
                .map_err(|p| EmuError::Panicked(panic_message(&*p)))?,
            None => Err(EmuError::Config("emulator already joined".into())),
        }
    }
}

impl Drop for EmulatorHandle {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(j) = self.join.take() {
            let _ = j.join();
        }
    }
}
