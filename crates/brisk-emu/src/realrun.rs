//! Scenarios over real packets (`brisk run --real`): every flow's sender is brisk or
//! the Linux kernel's TCP, its receiver is always a Linux kernel, and the path between
//! them is the emulator running the simulator's elements with the scenario's
//! bottleneck keys. Results use the simulator's JSON field names so the two compare
//! field by field.
//!
//! ```text
//!  stack = "linux":  netns a (kernel senders) ─ TUN ═ emulator ═ TUN ─ netns b (kernel receivers)
//!  stack = "brisk":  brisk (this process)     ═══════ emulator ═ TUN ─ netns k (kernel receivers)
//! ```
//! Measurement, per flow: bytes the receiver read by the scenario's end give goodput
//! over the flow's active time (as the simulator); the stream is then drained (bounded)
//! and its SHA-256 compared. RTT: brisk flows record every RTT sample (as the
//! simulator does); the kernel exposes only its smoothed RTT, so Linux flows report
//! `tcpi_rtt` sampled every `rtt_sample` — and *both* stacks carry that sampled
//! `srtt` series, the like-for-like measure between brisk and Linux.
//! Limits: all flows of a run share one stack (mixed stacks need a multiplexing side,
//! not built yet) and one path RTT; applications are bulk transfers.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration as StdDuration, Instant as WallInstant};

use brisk_time::Duration;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::brisklab::{BriskLab, KERNEL_ADDR};
use crate::bulk::{set_cc, tcp_stats};
use crate::emulator::{EmuReport, Emulator, EmulatorOptions};
use crate::error::{EmuError, Result};
use crate::lab::{TwoHosts, ADDR_B};
use crate::path::EmuConfig;
use crate::stack::StackConfig;
use crate::tools::hex;
use brisk_sim::output::{queue_delay_json, rtt_json};

/// Which TCP sends a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowStack {
    Brisk,
    Linux,
}

impl FlowStack {
    pub fn name(self) -> &'static str {
        match self {
            FlowStack::Brisk => "brisk",
            FlowStack::Linux => "linux",
        }
    }
}

/// One flow of a real run.
#[derive(Clone, Debug)]
pub struct RealFlow {
    pub stack: FlowStack,
    /// Congestion control name (a kernel module for Linux flows).
    pub cc: String,
    /// brisk's per-connection settings (unused for Linux flows).
    pub tcp: brisk_tcp::Config,
    pub start: Duration,
    /// Send this many bytes then close; `None`: until the end.
    pub bytes: Option<u64>,
}

/// A real run: the path, the flows, how long.
#[derive(Clone, Debug)]
pub struct RealRun {
    pub name: String,
    pub seed: u64,
    pub duration: Duration,
    pub path: EmuConfig,
    pub flows: Vec<RealFlow>,
    /// How often srtt/cwnd are sampled and goodput binned.
    pub sample_interval: Duration,
    /// Per-packet delivery records kept for queueing-delay statistics.
    pub delivery_log: usize,
    pub pcap_dir: Option<std::path::PathBuf>,
}

impl RealRun {
    /// One bulk flow from time zero (seed 1, 100 ms samples, no delivery log, no pcaps):
    /// the shape of the benchmarks and of the bufferbloat experiment.
    pub fn one_bulk_flow(
        name: String,
        duration: Duration,
        path: EmuConfig,
        stack: FlowStack,
        cc: &str,
        tcp: brisk_tcp::Config,
    ) -> RealRun {
        RealRun {
            name,
            seed: 1,
            duration,
            path,
            flows: vec![RealFlow {
                stack,
                cc: cc.to_string(),
                tcp,
                start: Duration::ZERO,
                bytes: None,
            }],
            sample_interval: Duration::from_millis(100),
            delivery_log: 0,
            pcap_dir: None,
        }
    }
}

/// Summary statistics of a sample set, in ns: the simulator's, so real and simulated
/// runs report the same statistic.
pub type Stats = brisk_sim::metrics::Summary;

/// Most samples kept per flow and series.
const MAX_SAMPLES: usize = 2_000_000;

/// One flow's results.
#[derive(Clone, Debug, Default)]
pub struct RealFlowResult {
    pub id: u32,
    pub stack: &'static str,
    pub cc: String,
    pub start: Duration,
    pub bytes_sent: u64,
    /// Read by the receiver by the end of the scenario.
    pub bytes_delivered: u64,
    pub goodput_bps: f64,
    pub retransmitted_packets: u64,
    pub fct: Option<StdDuration>,
    /// Per-ACK RTT samples (brisk) or sampled srtt (Linux).
    pub rtt: Option<Stats>,
    /// srtt sampled every `sample_interval`, both stacks.
    pub srtt: Option<Stats>,
    /// (ns since start, srtt ns).
    pub srtt_series: Vec<(u64, u64)>,
    /// (ns since start, cwnd segments).
    pub cwnd_series: Vec<(u64, u32)>,
    /// (interval end ns, bytes read in the interval).
    pub goodput_series: Vec<(u64, u64)>,
    pub stream_ok: bool,
    pub error: Option<String>,
}

/// A real run's results.
#[derive(Clone, Debug)]
pub struct RealResult {
    pub scenario: String,
    pub seed: u64,
    pub duration: Duration,
    pub flows: Vec<RealFlowResult>,
    pub emulator: EmuReport,
    /// Sojourn in the forward bottleneck (queueing only), from the delivery log.
    pub queue_delay: Option<Stats>,
    pub utilization: f64,
    /// Process CPU seconds (user + system) over the run.
    pub cpu_s: f64,
    /// Seconds the loop spent inside brisk's endpoint (brisk runs only).
    pub brisk_busy_s: f64,
}

fn process_cpu_s() -> f64 {
    // SAFETY: getrusage fills a zeroed rusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// The receiving side of one flow.
struct RxOut {
    delivered_by_end: u64,
    total: u64,
    sha256: String,
    series: Vec<(u64, u64)>,
    done_at: Option<StdDuration>,
    error: Option<String>,
}

fn receive<R: Read>(
    mut s: R,
    t0: WallInstant,
    end: StdDuration,
    interval: StdDuration,
    grace: StdDuration,
) -> RxOut {
    let mut buf = vec![0u8; 64 * 1024];
    let mut hash = Sha256::new();
    let (mut total, mut by_end, mut bin, mut bin_end) = (0u64, 0u64, 0u64, interval);
    let mut series = Vec::new();
    let mut error = None;
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let at = t0.elapsed();
                hash.update(&buf[..n]);
                total += n as u64;
                while at > bin_end && series.len() < MAX_SAMPLES {
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
    let done = t0.elapsed();
    series.push((bin_end.as_nanos() as u64, bin));
    RxOut {
        delivered_by_end: by_end,
        total,
        sha256: hex(&hash.finalize()),
        series,
        done_at: (done <= end).then_some(done),
        error,
    }
}

/// The sending side's result.
struct TxOut {
    sent: u64,
    sha256: String,
    error: Option<String>,
}

/// Writes the flow's byte stream until `end` (or `bytes`), then half-closes.
fn send<W: Write>(
    mut w: W,
    t0: WallInstant,
    end: StdDuration,
    bytes: Option<u64>,
    seed: u64,
) -> (W, TxOut) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut buf = vec![0u8; 64 * 1024];
    let mut hash = Sha256::new();
    let mut sent = 0u64;
    let mut error = None;
    while t0.elapsed() < end {
        let n = match bytes {
            Some(b) if sent >= b => break,
            Some(b) => (b - sent).min(buf.len() as u64) as usize,
            None => buf.len(),
        };
        rng.fill_bytes(&mut buf[..n]);
        if let Err(e) = w.write_all(&buf[..n]) {
            if e.kind() != std::io::ErrorKind::TimedOut {
                error = Some(format!("sender: {e}"));
            } else {
                // The write timeout is set to reach just past the end: a partial
                // write may have happened, so the stream's hash is unknowable.
                error = Some("sender: write timed out at the end".into());
            }
            break;
        }
        hash.update(&buf[..n]);
        sent += n as u64;
    }
    (
        w,
        TxOut {
            sent,
            sha256: hex(&hash.finalize()),
            error,
        },
    )
}

/// What the per-flow sampler collected.
#[derive(Default)]
struct Sampled {
    srtt: Vec<(u64, u64)>,
    cwnd: Vec<(u64, u32)>,
    rtt_samples: Vec<u64>,
    retrans: u64,
}

fn flow_result(
    id: u32,
    f: &RealFlow,
    tx: TxOut,
    rx: RxOut,
    sampled: Sampled,
    end: StdDuration,
) -> RealFlowResult {
    let start = StdDuration::from_nanos(f.start.as_nanos() as u64);
    let active_end = rx.done_at.unwrap_or(end);
    let active = active_end.saturating_sub(start).as_secs_f64().max(1e-9);
    let srtt_vals: Vec<u64> = sampled.srtt.iter().map(|x| x.1).collect();
    let srtt = Stats::of(&srtt_vals);
    let rtt = if f.stack == FlowStack::Brisk {
        Stats::of(&sampled.rtt_samples)
    } else {
        srtt
    };
    let stream_ok =
        tx.error.is_none() && rx.error.is_none() && rx.total == tx.sent && rx.sha256 == tx.sha256;
    RealFlowResult {
        id,
        stack: f.stack.name(),
        cc: f.cc.clone(),
        start: f.start,
        bytes_sent: tx.sent,
        bytes_delivered: rx.delivered_by_end,
        goodput_bps: rx.delivered_by_end as f64 * 8.0 / active,
        retransmitted_packets: sampled.retrans,
        fct: f.bytes.and(rx.done_at.map(|d| d.saturating_sub(start))),
        rtt,
        srtt,
        srtt_series: sampled.srtt,
        cwnd_series: sampled.cwnd,
        goodput_series: rx.series,
        stream_ok,
        error: tx.error.or(rx.error),
    }
}

fn std_dur(d: Duration) -> StdDuration {
    StdDuration::from_nanos(d.as_nanos() as u64)
}

/// Runs `run` over real packets; needs root and /dev/net/tun.
pub fn run_real(run: &RealRun) -> Result<RealResult> {
    let Some(first) = run.flows.first() else {
        return Err(EmuError::Config("a run needs at least one flow".into()));
    };
    if run.flows.iter().any(|f| f.stack != first.stack) {
        return Err(EmuError::Config(
            "mixing stack = \"brisk\" and stack = \"linux\" flows in one real run is not supported yet; run them separately".into(),
        ));
    }
    if first.stack == FlowStack::Linux {
        let have = crate::bulk::available_congestion_controls();
        for (i, f) in run.flows.iter().enumerate() {
            if !have.contains(&f.cc) {
                return Err(EmuError::Config(format!(
                    "flow[{i}].cc = {:?}: the kernel offers {}",
                    f.cc,
                    have.join(", ")
                )));
            }
        }
    }
    let opts = EmulatorOptions {
        delivery_log: run.delivery_log,
        pcap_a: run.pcap_dir.as_ref().map(|d| d.join("sender.pcap")),
        pcap_b: run.pcap_dir.as_ref().map(|d| d.join("receiver.pcap")),
        ..EmulatorOptions::default()
    };
    let end = std_dur(run.duration);
    let grace = StdDuration::from_secs(15);
    let limit = run.duration.saturating_add(Duration::from_secs(25));
    let cpu0 = process_cpu_s();
    let (flows, emulator, busy) = match first.stack {
        FlowStack::Linux => {
            let (hosts, ta, tb) = TwoHosts::with_default_mtu()?;
            let handle = Emulator::new(ta, tb, &run.path, opts)?.spawn(Some(limit))?;
            let flows = run_linux(run, &hosts, end, grace);
            let emu = handle.stop()?;
            hosts.teardown()?;
            (flows?, emu, 0.0)
        }
        FlowStack::Brisk => {
            let lab = BriskLab::new(
                &run.path,
                StackConfig::new(crate::brisklab::BRISK_ADDR),
                opts,
                Some(limit),
            )?;
            let flows = run_brisk(run, &lab, end, grace);
            let busy = lab.stack().busy_seconds();
            let emu = lab.stop()?;
            (flows?, emu, busy)
        }
    };
    let cpu_s = process_cpu_s() - cpu0;
    let fwd = &emulator.forward;
    let (delay, rate) = (
        run.path
            .bottleneck
            .delay
            .map_or(0, |d| d.0.as_nanos() as u64)
            + run.path.rtt.map_or(0, |d| d.0.as_nanos() as u64 / 2),
        run.path.bottleneck.rate.map_or(0, |r| r.0),
    );
    // Queueing delay = time in the link - propagation - own serialisation.
    let sojourn: Vec<u64> = fwd
        .deliveries
        .iter()
        .map(|d| {
            let ser = (d.bytes as u64)
                .saturating_mul(8_000_000_000)
                .checked_div(rate)
                .unwrap_or(0);
            let inside = (d.scheduled - d.read_at).as_nanos() as u64;
            inside.saturating_sub(delay).saturating_sub(ser)
        })
        .collect();
    let utilization = if rate > 0 {
        (fwd.delivered_bytes as f64 * 8.0 / rate as f64 / emulator.elapsed_s.max(1e-9)).min(1.0)
    } else {
        0.0
    };
    Ok(RealResult {
        scenario: run.name.clone(),
        seed: run.seed,
        duration: run.duration,
        flows,
        queue_delay: Stats::of(&sojourn),
        utilization,
        emulator,
        cpu_s,
        brisk_busy_s: busy,
    })
}

fn flow_seed(run: &RealRun, i: usize) -> u64 {
    run.seed.wrapping_mul(1_000_003).wrapping_add(i as u64)
}

fn run_linux(
    run: &RealRun,
    hosts: &TwoHosts,
    end: StdDuration,
    grace: StdDuration,
) -> Result<Vec<RealFlowResult>> {
    let t0 = WallInstant::now();
    let interval = std_dur(run.sample_interval);
    let listeners = bind_listeners(hosts.ns_b(), ADDR_B, run.flows.len())?;
    std::thread::scope(|s| {
        let mut joins = Vec::new();
        for (i, (f, l)) in run.flows.iter().zip(listeners).enumerate() {
            let seed = flow_seed(run, i);
            let ns_a = hosts.ns_a();
            joins.push(s.spawn(move || -> Result<RealFlowResult> {
                std::thread::sleep(std_dur(f.start).saturating_sub(t0.elapsed()));
                let addr = SocketAddr::from((ADDR_B, 5201 + i as u16));
                let c = ns_a.run_in(move || {
                    std::net::TcpStream::connect_timeout(&addr, StdDuration::from_secs(5))
                })?;
                let c = c.map_err(|e| EmuError::io(format!("connect {addr}"), e))?;
                set_cc(&c, &f.cc)?;
                c.set_write_timeout(Some(end.saturating_sub(t0.elapsed()) + grace))
                    .map_err(|e| EmuError::io("SO_SNDTIMEO", e))?;
                let (r, _) = l.accept().map_err(|e| EmuError::io("accept", e))?;
                r.set_read_timeout(Some(end + grace))
                    .map_err(|e| EmuError::io("SO_RCVTIMEO", e))?;
                let stop = AtomicBool::new(false);
                let (tx, rx, sampled) = std::thread::scope(|s2| {
                    let rx = s2.spawn(|| receive(&r, t0, end, interval, grace));
                    let sampler = s2.spawn(|| {
                        let mut out = Sampled::default();
                        while !stop.load(Ordering::Relaxed) {
                            if let Ok(st) = tcp_stats(&c) {
                                let at = t0.elapsed().as_nanos() as u64;
                                if out.srtt.len() < MAX_SAMPLES && st.srtt_us > 0 {
                                    out.srtt.push((at, u64::from(st.srtt_us) * 1000));
                                    out.cwnd.push((at, st.snd_cwnd));
                                }
                                out.retrans = u64::from(st.total_retrans);
                            }
                            std::thread::sleep(interval.min(StdDuration::from_millis(10)));
                        }
                        out
                    });
                    let (c2, tx) = send(&c, t0, end, f.bytes, seed);
                    let _ = c2.shutdown(Shutdown::Write);
                    stop.store(true, Ordering::Relaxed);
                    let sampled = sampler.join().unwrap_or_default();
                    let rx = rx.join().map_err(|_| EmuError::Panicked("receiver".into()));
                    (tx, rx, sampled)
                });
                Ok(flow_result(i as u32, f, tx, rx?, sampled, end))
            }));
        }
        join_flows(joins)
    })
}

fn run_brisk(
    run: &RealRun,
    lab: &BriskLab,
    end: StdDuration,
    grace: StdDuration,
) -> Result<Vec<RealFlowResult>> {
    let t0 = WallInstant::now();
    let interval = std_dur(run.sample_interval);
    let listeners = bind_listeners(lab.kernel(), KERNEL_ADDR, run.flows.len())?;
    std::thread::scope(|s| {
        let mut joins = Vec::new();
        for (i, (f, l)) in run.flows.iter().zip(listeners).enumerate() {
            let seed = flow_seed(run, i);
            let stack = lab.stack();
            joins.push(s.spawn(move || -> Result<RealFlowResult> {
                std::thread::sleep(std_dur(f.start).saturating_sub(t0.elapsed()));
                let addr = SocketAddr::from((KERNEL_ADDR, 5201 + i as u16));
                let mut c = crate::socket::TcpStream::connect_with(
                    stack,
                    addr,
                    f.tcp.clone(),
                    Some(StdDuration::from_secs(5)),
                )
                .map_err(|e| EmuError::io(format!("brisk connect {addr}"), e))?;
                c.set_write_timeout(Some(end.saturating_sub(t0.elapsed()) + grace))
                    .map_err(|e| EmuError::io("write timeout", e))?;
                let _ = c.set_trace(true);
                let (r, _) = l.accept().map_err(|e| EmuError::io("accept", e))?;
                r.set_read_timeout(Some(end + grace))
                    .map_err(|e| EmuError::io("SO_RCVTIMEO", e))?;
                let stop = AtomicBool::new(false);
                let c = &c;
                let (tx, rx, sampled) = std::thread::scope(|s2| {
                    let rx = s2.spawn(|| receive(&r, t0, end, interval, grace));
                    let sampler = s2.spawn(|| {
                        let mut out = Sampled::default();
                        let mut trace = Vec::new();
                        loop {
                            let stopping = stop.load(Ordering::Relaxed);
                            if let Some(info) = c.info() {
                                let at = t0.elapsed().as_nanos() as u64;
                                let srtt = info.srtt.as_nanos() as u64;
                                if out.srtt.len() < MAX_SAMPLES && srtt > 0 {
                                    out.srtt.push((at, srtt));
                                    out.cwnd.push((at, info.cwnd));
                                }
                                out.retrans = info.retransmits;
                            }
                            c.drain_trace(&mut trace);
                            for ev in trace.drain(..) {
                                if let brisk_tcp::TraceEvent::RttSample { rtt, .. } = ev {
                                    if out.rtt_samples.len() < MAX_SAMPLES {
                                        out.rtt_samples.push(rtt.as_nanos() as u64);
                                    }
                                }
                            }
                            if stopping {
                                break;
                            }
                            std::thread::sleep(interval.min(StdDuration::from_millis(10)));
                        }
                        out
                    });
                    let (_, tx) = send(c, t0, end, f.bytes, seed);
                    stop.store(true, Ordering::Relaxed);
                    let sampled = sampler.join().unwrap_or_default();
                    // Half-close after the last sample, so the connection was still
                    // there to be inspected.
                    let _ = c.shutdown(Shutdown::Write);
                    let rx = rx.join().map_err(|_| EmuError::Panicked("receiver".into()));
                    (tx, rx, sampled)
                });
                Ok(flow_result(i as u32, f, tx, rx?, sampled, end))
            }));
        }
        join_flows(joins)
    })
}

/// One receiving listener per flow in `ns`, on `addr` port 5201 + flow index.
fn bind_listeners(
    ns: &crate::netns::Netns,
    addr: std::net::Ipv4Addr,
    n: usize,
) -> Result<Vec<std::net::TcpListener>> {
    (0..n)
        .map(|i| {
            let addr = SocketAddr::from((addr, 5201 + i as u16));
            ns.run_in(move || std::net::TcpListener::bind(addr))?
                .map_err(|e| EmuError::io(format!("bind {addr}"), e))
        })
        .collect()
}

/// Waits for every flow thread; the first error (or panic) wins.
fn join_flows(
    joins: Vec<std::thread::ScopedJoinHandle<'_, Result<RealFlowResult>>>,
) -> Result<Vec<RealFlowResult>> {
    joins
        .into_iter()
        .map(|j| j.join().map_err(|_| EmuError::Panicked("flow".into()))?)
        .collect()
}

impl RealResult {
    /// The simulator's `--json` shape, plus `stack` and `srtt_ms` per flow and a
    /// `real` section (emulator counters, CPU).
    pub fn to_json(&self) -> Value {
        let flows: Vec<Value> = self
            .flows
            .iter()
            .map(|f| {
                json!({
                    "id": f.id,
                    "stack": f.stack,
                    "cc": f.cc,
                    "app": "bulk",
                    "start_s": f.start.as_secs_f64(),
                    "goodput_bps": f.goodput_bps,
                    "bytes_delivered": f.bytes_delivered,
                    "bytes_sent": f.bytes_sent,
                    "retransmitted_packets": f.retransmitted_packets,
                    "fct_s": f.fct.map(|d| d.as_secs_f64()),
                    "rtt_ms": rtt_json(&f.rtt),
                    "srtt_ms": rtt_json(&f.srtt),
                    "record_latency_ms": Value::Null,
                    "stream_ok": f.stream_ok,
                    "first_drop_s": Value::Null,
                    "records_skipped": 0,
                    "error": f.error,
                })
            })
            .collect();
        let fwd = &self.emulator.forward;
        json!({
            "scenario": self.scenario,
            "seed": self.seed,
            "duration_s": self.duration.as_secs_f64(),
            "flows": flows,
            "bottleneck": {
                "utilization": self.utilization,
                "drops": fwd.dropped_queue_full + fwd.dropped_loss + fwd.dropped_outage + fwd.dropped_overflow,
                "first_drop_s": Value::Null,
                "max_queue_packets": fwd.max_queue_packets,
                "queue_delay_ms": queue_delay_json(&self.queue_delay),
            },
            "real": {
                "cpu_s": self.cpu_s,
                "brisk_busy_s": self.brisk_busy_s,
                "emulator": &self.emulator,
            },
        })
    }

    /// A human-readable table.
    pub fn table(&self) -> String {
        use std::fmt::Write as _;
        let mut t = String::new();
        let _ = writeln!(
            t,
            "{} (real packets, {:.1} s)",
            self.scenario,
            self.duration.as_secs_f64()
        );
        let _ = writeln!(
            t,
            "{:>4} {:>6} {:>6} {:>12} {:>10} {:>10} {:>10} {:>8} {:>6}",
            "flow", "stack", "cc", "goodput", "rtt mean", "rtt p99", "srtt mean", "retx", "ok"
        );
        for f in &self.flows {
            let ms = |s: &Option<Stats>, p99: bool| {
                s.map_or("-".to_string(), |s| {
                    format!("{:.2}ms", if p99 { s.p99 as f64 } else { s.mean } / 1e6)
                })
            };
            let _ = writeln!(
                t,
                "{:>4} {:>6} {:>6} {:>7.2}Mbit/s {:>10} {:>10} {:>10} {:>8} {:>6}",
                f.id,
                f.stack,
                f.cc,
                f.goodput_bps / 1e6,
                ms(&f.rtt, false),
                ms(&f.rtt, true),
                ms(&f.srtt, false),
                f.retransmitted_packets,
                f.stream_ok
            );
            if let Some(e) = &f.error {
                let _ = writeln!(t, "     error: {e}");
            }
        }
        let fwd = &self.emulator.forward;
        let _ = writeln!(
            t,
            "bottleneck: utilization {:.1}%, drops {}, max queue {} pkts, queueing delay mean {}; emulator delivery error p99 {:.1} us; CPU {:.2} s",
            self.utilization * 100.0,
            fwd.dropped_queue_full + fwd.dropped_loss + fwd.dropped_outage + fwd.dropped_overflow,
            fwd.max_queue_packets,
            self.queue_delay
                .map_or("-".into(), |q| format!("{:.2}ms", q.mean / 1e6)),
            fwd.delivery_error.p99_ns as f64 / 1e3,
            self.cpu_s,
        );
        t
    }

    /// Writes `summary.json`, `rtt.csv` (sampled srtt), `cwnd.csv`, `goodput.csv`.
    pub fn write_dir(&self, dir: &std::path::Path) -> Result<()> {
        use std::fmt::Write as _;
        let w = |name: &str, text: String| {
            let p = dir.join(name);
            std::fs::write(&p, text)
                .map_err(|e| EmuError::io(format!("writing {}", p.display()), e))
        };
        std::fs::create_dir_all(dir)
            .map_err(|e| EmuError::io(format!("creating {}", dir.display()), e))?;
        let mut j = serde_json::to_string_pretty(&self.to_json()).unwrap_or_default();
        j.push('\n');
        w("summary.json", j)?;
        let (mut rtt, mut cwnd, mut gp) = (
            String::from("time_s,flow,srtt_ms\n"),
            String::from("time_s,flow,cwnd\n"),
            String::from("time_s,flow,bytes\n"),
        );
        for f in &self.flows {
            for (t, v) in &f.srtt_series {
                let _ = writeln!(
                    rtt,
                    "{:.6},{},{:.3}",
                    *t as f64 / 1e9,
                    f.id,
                    *v as f64 / 1e6
                );
            }
            for (t, v) in &f.cwnd_series {
                let _ = writeln!(cwnd, "{:.6},{},{}", *t as f64 / 1e9, f.id, v);
            }
            for (t, v) in &f.goodput_series {
                let _ = writeln!(gp, "{:.6},{},{}", *t as f64 / 1e9, f.id, v);
            }
        }
        w("rtt.csv", rtt)?;
        w("cwnd.csv", cwnd)?;
        w("goodput.csv", gp)
    }
}
