//! Scenarios over real packets (`brisk run --real`): the simulator's dumbbell
//! ([`crate::emu::dumbbell`]) with each flow's sender chosen per flow — brisk (in this
//! process) or the Linux kernel's TCP (a namespace) — all crossing **one** emulated
//! bottleneck behind their own access delays (rtt/2 each way). Receivers are Linux
//! kernels. Results use the simulator's JSON fields so the two compare field by field.
//!
//! Measurement, per flow: bytes the receiver read by the scenario's end give goodput
//! over the flow's active time (as the simulator); the stream is then drained (bounded)
//! and its SHA-256 compared. RTT: brisk flows record every RTT sample (as the
//! simulator does); the kernel exposes only its smoothed RTT, so Linux flows report
//! `tcpi_rtt` sampled every `sample_interval` (at most 10 ms) — and *both* stacks
//! carry that sampled `srtt` series, the like-for-like measure between brisk and Linux.
//! The apps are brisk-app's `bulk` and `records`, the simulator's (`realrun/traffic.rs`
//! drives them over blocking streams): the same payload, records framed and scheduled
//! as the simulator's (24-byte header `BRK1 | index | send time ns | length`,
//! big-endian), stamped with their scheduled time on the shared clock; the receiver
//! parses them and measures each record's latency.
//! Bottleneck: the simulator's `LinkMeter` watches the shared link up to the
//! scenario's end (drops, first drop per flow, queueing delay, queue series), and
//! utilisation is the link's busy time over the scenario's duration.

use std::net::{Shutdown, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration as StdDuration;

use brisk_report::BottleneckResult;
use brisk_time::{Duration, Instant};
use serde_json::Value;

use crate::emu::dumbbell::{receiver_addr, Dumbbell, DumbbellConfig, BRISK_SENDER, MAX_FLOWS};
use crate::emu::emulator::{EmuReport, EmulatorOptions};
use crate::emu::path::EmuConfig;
use crate::error::{EmuError, Result};
use crate::os::clock::Clock;
use crate::stack::bulk::{set_cc, tcp_stats};
use crate::stack::kernel_stream::KernelStream;
use crate::stack::mptcp_kernel::{
    self, counters, delta, mptcp_only, subflow_info, KernelEndpoint, KernelMptcp, SubflowInfo,
};
use crate::stack::StackConfig;
use brisk_tcp::stream::ByteStream;
use traffic::{intact, receive, send_bulk, send_records, Expect, RecordRx, RxOut, TxOut};

mod from_scenario;
pub mod linux_knobs;
mod output;
pub mod sbd;
mod traffic;
pub mod twopath;

pub use from_scenario::real_run;
pub use linux_knobs::LinuxKnobs;

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

/// What a flow's application does (the simulator's `bulk` and `records`).
#[derive(Clone, Debug, PartialEq)]
pub enum RealApp {
    /// Send until the end; with `bytes`, that many then close.
    Bulk { bytes: Option<u64> },
    /// `size`-byte records every `interval` plus uniform `[0, jitter]`, from the
    /// connection on; `count` records then close, or until the end.
    Records {
        size: u64,
        interval: Duration,
        jitter: Duration,
        count: Option<u64>,
    },
}

impl RealApp {
    pub fn name(&self) -> &'static str {
        match self {
            RealApp::Bulk { .. } => "bulk",
            RealApp::Records { .. } => "records",
        }
    }

    /// The bytes a sized flow sends in all (records include their headers).
    fn expected_bytes(&self) -> Option<u64> {
        match *self {
            RealApp::Bulk { bytes } => bytes,
            RealApp::Records { size, count, .. } => count.map(|c| c.saturating_mul(size)),
        }
    }

    /// Whether the flow ends by itself (then it has a completion time).
    fn sized(&self) -> bool {
        match self {
            RealApp::Bulk { bytes } => bytes.is_some(),
            RealApp::Records { count, .. } => count.is_some(),
        }
    }
}

/// Length of a record header (brisk-app's framing, the simulator's).
pub const RECORD_HEADER_LEN: usize = brisk_app::records::HEADER_LEN;
/// Largest record accepted (the simulator's bound).
pub const MAX_RECORD: u64 = brisk_app::records::MAX_RECORD;

/// One flow of a real run.
#[derive(Clone, Debug)]
pub struct RealFlow {
    pub stack: FlowStack,
    /// Congestion control name (a kernel module for Linux flows).
    pub cc: String,
    /// brisk's per-connection settings (unused for Linux flows).
    pub tcp: brisk_tcp::Config,
    /// The kernel's settings for a Linux flow. Of these only the receiver's
    /// (`recv_buffer`, on the Linux receiver's listening socket) apply to brisk flows.
    pub linux: LinuxKnobs,
    pub start: Duration,
    /// Base round-trip time, split rtt/2 per direction on the flow's own access path.
    pub rtt: Duration,
    pub app: RealApp,
}

impl RealFlow {
    /// A Linux sender with congestion control `cc` and its socket's DSCP set by
    /// `IP_TOS` (`None`: the kernel's default, 0), unlimited bulk from `start`. The
    /// congestion control is always named: new namespaces would otherwise use the
    /// host's default, often bbr.
    pub fn linux_bulk(cc: &str, dscp: Option<u8>, start: Duration, rtt: Duration) -> Self {
        RealFlow {
            stack: FlowStack::Linux,
            cc: cc.into(),
            tcp: brisk_tcp::Config::default(),
            linux: LinuxKnobs {
                dscp,
                ..LinuxKnobs::default()
            },
            start,
            rtt,
            app: RealApp::Bulk { bytes: None },
        }
    }
}

/// A real run: the shared path, the flows, how long.
#[derive(Clone, Debug)]
pub struct RealRun {
    pub name: String,
    pub seed: u64,
    pub duration: Duration,
    /// The shared `bottleneck`/`reverse` and the seed; `rtt` must be unset (it is per
    /// flow).
    pub path: EmuConfig,
    pub flows: Vec<RealFlow>,
    /// How often srtt/cwnd are sampled and goodput and the queue are binned.
    pub sample_interval: Duration,
    pub pcap_dir: Option<std::path::PathBuf>,
    /// Write the bottleneck's and the reverse link's logs in Mahimahi's format here.
    pub link_log_dir: Option<std::path::PathBuf>,
}

impl RealRun {
    /// One bulk flow from time zero with the path's `rtt` (seed 1, 100 ms samples, no
    /// pcaps): the shape of the benchmarks and of the bufferbloat experiment.
    ///
    /// A brisk flow runs `tcp`'s controller and `cc` only labels it, so a label that
    /// names another base controller than `tcp.congestion.controller` is refused (a
    /// run once measured brisk CUBIC as "brisk BBR"); layers after a `+` are not
    /// compared. A Linux flow's `cc` is the kernel module it sets.
    pub fn one_bulk_flow(
        name: String,
        duration: Duration,
        mut path: EmuConfig,
        stack: FlowStack,
        cc: &str,
        tcp: brisk_tcp::Config,
    ) -> Result<RealRun> {
        let configured = tcp.congestion.controller.base.name();
        let labelled = cc.split('+').next().unwrap_or_default();
        if stack == FlowStack::Brisk && labelled != configured {
            return Err(EmuError::Config(format!(
                "flow[0].cc = {cc:?} names another controller than the flow's tcp config ({configured:?}): a brisk flow runs tcp.congestion.controller and cc only labels it"
            )));
        }
        let rtt = path.rtt.take().map_or(Duration::ZERO, |d| d.0);
        Ok(RealRun {
            name,
            seed: 1,
            duration,
            path,
            flows: vec![RealFlow {
                stack,
                cc: cc.to_string(),
                tcp,
                linux: LinuxKnobs::default(),
                start: Duration::ZERO,
                rtt,
                app: RealApp::Bulk { bytes: None },
            }],
            sample_interval: Duration::from_millis(100),
            pcap_dir: None,
            link_log_dir: None,
        })
    }
}

/// Summary statistics of a sample set, in ns: the simulator's, so real and simulated
/// runs report the same statistic.
pub type Stats = brisk_net::metrics::Summary;

/// Most samples kept per flow and series.
const MAX_SAMPLES: usize = 2_000_000;

/// One flow's results.
#[derive(Clone, Debug, Default)]
pub struct RealFlowResult {
    pub id: u32,
    pub stack: &'static str,
    pub cc: String,
    pub app: &'static str,
    pub start: Duration,
    pub rtt_base: Duration,
    pub bytes_sent: u64,
    /// After the end, while the stream was drained (not in the other totals).
    pub drain: brisk_report::Drain,
    /// Read by the receiver by the end of the scenario.
    pub bytes_delivered: u64,
    pub goodput_bps: f64,
    /// The sender's retransmitted segments; a brisk MPTCP sender's summed over its
    /// open subflows.
    pub retransmitted_packets: u64,
    /// From the flow's start to the receiver's read of its last byte (the simulator's
    /// completion), for sized flows done by the end.
    pub fct: Option<StdDuration>,
    /// Per-ACK RTT samples (brisk) or sampled srtt (Linux).
    pub rtt: Option<Stats>,
    /// srtt sampled every `sample_interval`, both stacks.
    pub srtt: Option<Stats>,
    /// Latency of the records delivered by the end (`records` apps).
    pub record_latency: Option<Stats>,
    /// Records: from the first transmission of the record's last byte to its
    /// delivery, for records delivered by the end (the simulator's
    /// `record_latency_after_tx`; first transmissions from the emulator's tap).
    pub record_latency_tx: Option<Stats>,
    /// Records: from the first transmission of the record's last byte to the first
    /// cumulative ACK covering it, for ACKs by the end: the simulator's `ack_latency`
    /// (the RDB paper's metric), measured on the senders' side of the emulator
    /// ([`crate::emu::ack_tap`]) for either stack.
    pub ack_latency: Option<Stats>,
    /// The ACK latencies themselves, ns (for analyses beyond the summary).
    pub ack_latencies: Vec<u64>,
    /// Records: (generation ns, delivery ns) per record delivered by the end, in
    /// record order.
    pub record_deliveries: Vec<(u64, u64)>,
    /// Records: (index, first transmission of its last byte ns), in record order.
    pub record_first_tx: Vec<(u64, u64)>,
    /// A brisk sender's `TcpInfo` once its stream was drained (`None` for Linux).
    pub sender_info: Option<brisk_tcp::TcpInfo>,
    /// This flow's first drop at the bottleneck (time since start of run).
    pub first_drop: Option<Instant>,
    /// The sender's controller diagnostics at the end (brisk flows; as the simulator).
    pub cc_diag: Option<Value>,
    /// (ns since start, srtt ns).
    pub srtt_series: Vec<(u64, u64)>,
    /// (ns since start, cwnd segments); a brisk MPTCP sender's compound cwnd (the
    /// sum over its subflows).
    pub cwnd_series: Vec<(u64, u32)>,
    /// (ns since start, pacing rate bytes/s), sampled with srtt: Linux's
    /// `tcpi_pacing_rate` (only while it is a rate, not `u64::MAX`), brisk's from its
    /// BBR diagnostics (empty for brisk's other controllers).
    pub pacing_series: Vec<(u64, u64)>,
    /// (interval end ns, bytes read in the interval).
    pub goodput_series: Vec<(u64, u64)>,
    pub stream_ok: bool,
    pub error: Option<String>,
    /// An MPTCP Linux sender's subflows (`MPTCP_TCPINFO`) at its last reading: after
    /// the drain if they were still open, else at the scenario's end.
    pub subflows: Vec<SubflowInfo>,
}

/// The namespaces' `MPTcpExt*` counters over a run with MPTCP flows (what `nstat`
/// shows), as deltas from before the first flow.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct MptcpCounters {
    /// The Linux senders' namespace (empty without Linux flows).
    pub senders: std::collections::BTreeMap<String, u64>,
    pub receivers: std::collections::BTreeMap<String, u64>,
}

/// A real run's results.
#[derive(Clone, Debug)]
pub struct RealResult {
    pub scenario: String,
    pub seed: u64,
    pub duration: Duration,
    pub flows: Vec<RealFlowResult>,
    /// The shared forward bottleneck, measured as the simulator measures it.
    pub bottleneck: BottleneckResult,
    pub emulator: EmuReport,
    /// Process CPU seconds (user + system) over the run.
    pub cpu_s: f64,
    /// Seconds the loop spent inside brisk's endpoint (0 without brisk flows).
    pub brisk_busy_s: f64,
    /// With any `[flow.tcp.mptcp]` flow: the kernels' MPTCP counters.
    pub mptcp: Option<MptcpCounters>,
    /// A run over several paths ([`twopath`]): what each path carried; empty for the
    /// dumbbell.
    pub paths: Vec<twopath::PathUse>,
    /// With the detector on in brisk's stack ([`sbd`]): its decisions.
    pub sbd: Option<sbd::SbdReport>,
}

fn process_cpu_s() -> f64 {
    // SAFETY: getrusage fills a zeroed rusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Time since the run's origin.
fn since(clock: Clock) -> StdDuration {
    StdDuration::from_nanos(clock.now().as_nanos())
}

fn std_dur(d: Duration) -> StdDuration {
    StdDuration::from_nanos(d.as_nanos() as u64)
}

/// What the per-flow sampler collected.
#[derive(Default)]
struct Sampled {
    srtt: Vec<(u64, u64)>,
    cwnd: Vec<(u64, u32)>,
    pacing: Vec<(u64, u64)>,
    rtt_samples: Vec<u64>,
    retrans: u64,
    trace: Vec<brisk_tcp::TraceEvent>,
    /// brisk's controller diagnostics at the last sample (the simulator's `cc_diag`).
    cc_diag: Option<Value>,
    /// brisk's `TcpInfo` at the last sample.
    info: Option<brisk_tcp::TcpInfo>,
    /// An MPTCP sender's subflows at the last sample that found any.
    subflows: Vec<SubflowInfo>,
}

/// A flow's sending socket: brisk's or the kernel's.
trait Sender: Sync {
    /// The socket as a byte stream, for the apps (written once against the trait).
    fn stream(&self) -> impl ByteStream + '_;
    /// Records srtt/cwnd/retransmissions (and brisk's RTT samples) at `at` ns.
    fn sample(&self, out: &mut Sampled, at: u64);
    fn half_close(&self);
    /// Writes `data`, the flow's last bytes, and half-closes.
    fn write_last(&self, data: &[u8]) -> std::io::Result<()>;
}

impl Sender for std::net::TcpStream {
    fn stream(&self) -> impl ByteStream + '_ {
        KernelStream::new(self)
    }
    fn sample(&self, out: &mut Sampled, at: u64) {
        if let Ok(st) = tcp_stats(self) {
            if out.srtt.len() < MAX_SAMPLES && st.srtt_us > 0 {
                out.srtt.push((at, u64::from(st.srtt_us) * 1000));
                out.cwnd.push((at, st.snd_cwnd));
                if st.pacing_rate != u64::MAX {
                    out.pacing.push((at, st.pacing_rate));
                }
            }
            out.retrans = u64::from(st.total_retrans);
        }
    }
    fn half_close(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
    fn write_last(&self, data: &[u8]) -> std::io::Result<()> {
        // The kernel's own timing decides whether its FIN rides on the last segment.
        std::io::Write::write_all(&mut &*self, data)?;
        self.shutdown(Shutdown::Write)
    }
}

impl Sender for crate::stack::socket::TcpStream {
    fn stream(&self) -> impl ByteStream + '_ {
        self
    }
    fn sample(&self, out: &mut Sampled, at: u64) {
        if let Some(info) = self.info() {
            // MPTCP: `info` is the initial subflow's; the connection's cwnd is the
            // compound one (the sum over subflows, as the simulator's `mptcp_series`)
            // and its retransmissions every subflow's.
            let subs = self.mptcp_subflow_infos();
            let (cwnd, retrans) = if subs.is_empty() {
                (info.cwnd, info.retransmits)
            } else {
                (
                    subs.iter().map(|s| s.cwnd).sum(),
                    subs.iter().map(|s| s.retransmits).sum(),
                )
            };
            let srtt = info.srtt.as_nanos() as u64;
            if out.srtt.len() < MAX_SAMPLES && srtt > 0 {
                out.srtt.push((at, srtt));
                out.cwnd.push((at, cwnd));
                if let Some(brisk_tcp::cc::CcDiagnostics::Bbr(d)) = info.cc_diag {
                    out.pacing.push((at, d.pacing_rate));
                }
            }
            out.retrans = retrans;
            out.cc_diag = info
                .cc_diag
                .as_ref()
                .and_then(|d| serde_json::to_value(d).ok());
            out.info = Some(info);
        }
        let mut trace = std::mem::take(&mut out.trace);
        self.drain_trace(&mut trace);
        for ev in trace.drain(..) {
            if let brisk_tcp::TraceEvent::RttSample { rtt, .. } = ev {
                if out.rtt_samples.len() < MAX_SAMPLES {
                    out.rtt_samples.push(rtt.as_nanos() as u64);
                }
            }
        }
        out.trace = trace;
    }
    fn half_close(&self) {
        // The half-closed connection stays inspectable until the receiver closes.
        let _ = self.shutdown(Shutdown::Write);
    }
    fn write_last(&self, data: &[u8]) -> std::io::Result<()> {
        self.write_all_then_shutdown(data)
    }
}

/// A Linux MPTCP sender: the kernel's socket, plus its subflows at each sample.
struct MptcpSender(std::net::TcpStream);

impl Sender for MptcpSender {
    fn stream(&self) -> impl ByteStream + '_ {
        KernelStream::new(&self.0)
    }
    fn sample(&self, out: &mut Sampled, at: u64) {
        self.0.sample(out, at);
        use std::os::fd::AsRawFd;
        if let Ok(sf) = subflow_info(self.0.as_raw_fd()) {
            if !sf.is_empty() {
                out.subflows = sf;
            }
        }
    }
    fn half_close(&self) {
        self.0.half_close();
    }
    fn write_last(&self, data: &[u8]) -> std::io::Result<()> {
        self.0.write_last(data)
    }
}

/// Per-run constants every flow thread needs.
#[derive(Clone, Copy)]
struct Ctx {
    clock: Clock,
    end: StdDuration,
    grace: StdDuration,
    interval: StdDuration,
}

/// Runs flow `id` over its connected sender `c` and the receiver's listener `l`.
fn run_flow<S>(
    id: u32,
    f: &RealFlow,
    c: &S,
    l: std::net::TcpListener,
    seed: u64,
    cx: Ctx,
) -> Result<RealFlowResult>
where
    S: Sender,
{
    let stop = AtomicBool::new(false);
    let records = match f.app {
        RealApp::Records { size, .. } => Some(RecordRx::new(size)),
        RealApp::Bulk { .. } => None,
    };
    let (tx, rx, sampled) = std::thread::scope(|s| {
        // The receiver accepts in its own thread: the sender writes as soon as its
        // connect returns, as the simulator's does, not half an RTT later when the
        // handshake's last ACK has reached the receiver.
        let rx = s.spawn(move || -> Result<RxOut> {
            let (r, _) = l.accept().map_err(|e| EmuError::io("accept", e))?;
            r.set_read_timeout(Some(cx.end + cx.grace))
                .map_err(|e| EmuError::io("SO_RCVTIMEO", e))?;
            Ok(receive(
                KernelStream::new(&r),
                cx.clock,
                cx.end,
                cx.interval,
                cx.grace,
                Expect {
                    records,
                    bytes: f.app.expected_bytes(),
                    seed,
                },
            ))
        });
        // Samples until the receiver is done or the scenario ends (the simulator
        // stops there), with one last sample then.
        let sampler = s.spawn(|| {
            let mut out = Sampled::default();
            loop {
                let at = since(cx.clock);
                let stopping = stop.load(Ordering::Relaxed) || at >= cx.end;
                c.sample(&mut out, at.as_nanos() as u64);
                if stopping {
                    break;
                }
                std::thread::sleep(cx.interval.min(StdDuration::from_millis(10)));
            }
            out
        });
        let tx = match &f.app {
            RealApp::Bulk { bytes } => {
                send_bulk(c.stream(), cx.clock, cx.end, *bytes, seed, |d: &[u8]| {
                    c.write_last(d)
                })
            }
            app @ RealApp::Records { .. } => send_records(c.stream(), cx.clock, cx.end, app, seed),
        };
        c.half_close();
        let rx = rx
            .join()
            .map_err(|_| EmuError::Panicked("receiver".into()))
            .and_then(|r| r);
        stop.store(true, Ordering::Relaxed);
        let sampled = sampler.join().unwrap_or_default();
        (tx, rx, sampled)
    });
    // The sender's count once the stream is drained: the retransmissions of the drain
    // are this minus the count at the end.
    let mut last = Sampled::default();
    c.sample(&mut last, since(cx.clock).as_nanos() as u64);
    let drain_retrans = last.retrans.saturating_sub(sampled.retrans);
    let sampled_subflows = sampled.subflows.clone();
    let mut res = flow_result(id, f, tx, rx?, sampled, cx.end);
    res.drain.retransmitted_packets = drain_retrans;
    res.sender_info = last.info;
    res.subflows = if last.subflows.is_empty() {
        sampled_subflows
    } else {
        last.subflows
    };
    Ok(res)
}

fn flow_result(
    id: u32,
    f: &RealFlow,
    tx: TxOut,
    rx: RxOut,
    sampled: Sampled,
    end: StdDuration,
) -> RealFlowResult {
    let start = std_dur(f.start);
    let active_end = rx.done_at.filter(|_| f.app.sized()).unwrap_or(end);
    let active = active_end.saturating_sub(start).as_secs_f64().max(1e-9);
    let srtt_vals: Vec<u64> = sampled.srtt.iter().map(|x| x.1).collect();
    let srtt = Stats::of(&srtt_vals);
    let rtt = if f.stack == FlowStack::Brisk {
        Stats::of(&sampled.rtt_samples)
    } else {
        srtt
    };
    let bad_headers = rx.records.as_ref().map_or(0, |r| r.bad_headers);
    let stream_ok =
        tx.error.is_none() && rx.error.is_none() && bad_headers == 0 && intact(&tx, &rx);
    RealFlowResult {
        id,
        stack: f.stack.name(),
        cc: f.cc.clone(),
        app: f.app.name(),
        start: f.start,
        rtt_base: f.rtt,
        bytes_sent: tx.sent,
        drain: brisk_report::Drain {
            bytes: rx.total.saturating_sub(rx.delivered_by_end),
            retransmitted_packets: 0,
            duration: Duration::from_nanos(rx.finished_at.saturating_sub(end).as_nanos() as u64),
        },
        bytes_delivered: rx.delivered_by_end,
        goodput_bps: rx.delivered_by_end as f64 * 8.0 / active,
        retransmitted_packets: sampled.retrans,
        fct: rx
            .done_at
            .filter(|_| f.app.sized())
            .map(|d| d.saturating_sub(start)),
        rtt,
        srtt,
        record_latency: rx.records.as_ref().and_then(|r| Stats::of(&r.latencies)),
        // Filled in from the emulator's tap once the run has stopped.
        record_latency_tx: None,
        ack_latency: None,
        ack_latencies: Vec::new(),
        record_deliveries: rx
            .records
            .as_ref()
            .map_or_else(Vec::new, |r| r.deliveries.clone()),
        record_first_tx: Vec::new(),
        sender_info: None,
        first_drop: None,
        cc_diag: sampled.cc_diag,
        srtt_series: sampled.srtt,
        cwnd_series: sampled.cwnd,
        pacing_series: sampled.pacing,
        goodput_series: rx.series,
        stream_ok,
        error: tx
            .error
            .or(rx.error)
            .or_else(|| (bad_headers > 0).then(|| format!("{bad_headers} bad record headers"))),
        subflows: Vec::new(),
    }
}

impl RealFlowResult {
    /// The emulator tap's measures of this flow, up to the scenario's end (`end_ns`),
    /// where the simulator stops measuring.
    fn add_tap(&mut self, tap: &crate::emu::ack_tap::AckTapFlow, end_ns: u64) {
        if !matches!(self.app, "records") {
            return;
        }
        self.ack_latencies = tap
            .latencies
            .iter()
            .filter(|(at, _)| *at <= end_ns)
            .map(|x| x.1)
            .collect();
        self.ack_latency = Stats::of(&self.ack_latencies);
        // Records are read in order: delivery k is record k, as is first_tx entry k.
        let after: Vec<u64> = self
            .record_deliveries
            .iter()
            .zip(&tap.first_tx)
            .enumerate()
            .filter(|(k, (_, (index, _)))| *index == *k as u64)
            .map(|(_, (&(_, delivered), &(_, tx)))| delivered.saturating_sub(tx))
            .collect();
        self.record_latency_tx = Stats::of(&after);
        self.record_first_tx = tap.first_tx.clone();
    }
}

fn check(run: &RealRun) -> Result<()> {
    let n = run.flows.len();
    if n == 0 || n > MAX_FLOWS {
        return Err(EmuError::Config(format!(
            "flow: a real run takes 1..={MAX_FLOWS} flows, not {n}"
        )));
    }
    if run.path.rtt.is_some() {
        return Err(EmuError::Config(
            "rtt is per flow in a real run (RealFlow::rtt), not on the path".into(),
        ));
    }
    if run.sample_interval.is_zero() {
        return Err(EmuError::Config("sample_interval must be > 0".into()));
    }
    let linux_flows = run
        .flows
        .iter()
        .enumerate()
        .filter(|(_, f)| f.stack == FlowStack::Linux)
        .map(|(i, f)| (i, &f.linux));
    if let Some(e) = LinuxKnobs::namespace_conflict(linux_flows) {
        return Err(EmuError::Config(e));
    }
    mptcp_settings(run)?;
    let have = crate::stack::bulk::available_congestion_controls();
    for (i, f) in run.flows.iter().enumerate() {
        if f.stack == FlowStack::Linux && !have.contains(&f.cc) {
            return Err(EmuError::Config(format!(
                "flow[{i}].cc = {:?}: the kernel offers {}",
                f.cc,
                have.join(", ")
            )));
        }
        if let RealApp::Records { size, interval, .. } = f.app {
            if size < RECORD_HEADER_LEN as u64 || size > MAX_RECORD || interval.is_zero() {
                return Err(EmuError::Config(format!(
                    "flow[{i}].app: records need {RECORD_HEADER_LEN} <= size <= {MAX_RECORD} bytes and interval > 0"
                )));
            }
        }
    }
    Ok(())
}

/// The one MPTCP setting of the run's namespaces, if any flow has `[flow.tcp.mptcp]`:
/// limits and sysctls are per namespace (the receivers' is shared by all flows, the
/// Linux senders' by the Linux flows), so every MPTCP flow must ask for the same; the
/// endpoints are the Linux senders'. An error names the first flow that differs.
fn mptcp_settings(run: &RealRun) -> Result<Option<KernelMptcp>> {
    let mut first: Option<(usize, KernelMptcp)> = None;
    let mut endpoints: Option<(usize, Vec<KernelEndpoint>)> = None;
    for (i, f) in run.flows.iter().enumerate() {
        let Some(m) = &f.linux.mptcp else { continue };
        match &first {
            Some((j, k)) if k.without_endpoints() != m.without_endpoints() => {
                return Err(EmuError::Config(format!(
                    "flow[{i}].tcp.mptcp: Linux keeps MPTCP's limits and sysctls per namespace and the flows share them, so they must match flow[{j}]'s"
                )))
            }
            Some(_) => {}
            None => first = Some((i, m.clone())),
        }
        if f.stack == FlowStack::Linux {
            match &endpoints {
                Some((j, e)) if *e != m.endpoints => {
                    return Err(EmuError::Config(format!(
                        "flow[{i}].tcp.mptcp.endpoint: the Linux senders share a namespace and its endpoints, so they must match flow[{j}]'s"
                    )))
                }
                Some(_) => {}
                None => endpoints = Some((i, m.endpoints.clone())),
            }
        }
    }
    Ok(first.map(|(_, k)| KernelMptcp {
        endpoints: endpoints.map(|e| e.1).unwrap_or_default(),
        ..k
    }))
}

/// Each flow's record size for the emulator's ACK tap; empty (the tap off, no cost per
/// packet) when no flow sends records.
fn record_sizes(run: &RealRun) -> Vec<Option<u64>> {
    let sizes: Vec<Option<u64>> = run
        .flows
        .iter()
        .map(|f| match f.app {
            RealApp::Records { size, .. } => Some(size),
            RealApp::Bulk { .. } => None,
        })
        .collect();
    if sizes.iter().any(Option::is_some) {
        sizes
    } else {
        Vec::new()
    }
}

fn flow_seed(run: &RealRun, i: usize) -> u64 {
    run.seed.wrapping_mul(1_000_003).wrapping_add(i as u64)
}

/// The receivers' port (each flow has its own receiver address).
pub const RECEIVER_PORT: u16 = 5201;

/// The least an unlimited bulk flow's brisk sender keeps written but unsent (or its
/// bytes in flight, if more: `TcpStream::set_notsent_limit`, Linux's
/// `TCP_NOTSENT_LOWAT` rule): one second of the bottleneck's rate, at least 1 MiB.
/// Without a limit brisk's 4-MiB send buffer was full at the end and the receiver read
/// all of it before the stream's check could finish (the drain: 3.4 s per flow at
/// 10 Mbit/s, where Linux's autotuned senders left 0.3 s). The limit changes nothing
/// before the end as long as the writer, an ordinary thread beside the real-time
/// emulator and stack threads, refills before the stack has sent that much: a floor of
/// 256 KiB (0.2 s at 10 Mbit/s) was too little on a loaded 2-core host (real-ecn's
/// brisk goodput fell from 8.55 to 7.21 Mbit/s), 1 MiB kept every real-ecn and real-fse
/// number within its run-to-run spread. `None` (no limit) where the path has no fixed
/// rate (traces) or the second's worth fills the flow's send buffer anyway.
fn notsent_floor(run: &RealRun, send_buffer: usize) -> Option<usize> {
    const LEAST: u64 = 1 << 20;
    let per_second = run.path.bottleneck.rate?.0 / 8;
    let floor = per_second.max(LEAST);
    (floor < send_buffer as u64).then_some(floor as usize)
}

/// Runs `run` over real packets; needs root and /dev/net/tun.
pub fn run_real(run: &RealRun) -> Result<RealResult> {
    check(run)?;
    let mptcp = mptcp_settings(run)?;
    let brisk = run.flows.iter().any(|f| f.stack == FlowStack::Brisk);
    let linux = run.flows.iter().any(|f| f.stack == FlowStack::Linux);
    let end_at = Instant::ZERO + run.duration;
    let mut stack = StackConfig::new(BRISK_SENDER);
    // The run's seed fixes brisk's ISNs and RNG (the secret's other half is the
    // constant the library default used to be), so a run replays as before.
    let mut isn_secret = [0x5a; 16];
    isn_secret[..8].copy_from_slice(&run.seed.to_le_bytes());
    stack.endpoint = brisk_tcp::EndpointConfig::seeded(isn_secret, run.seed);
    let sbd_cfg = sbd::needed(run, None);
    let mut phases = Phases::start();
    let lab = Dumbbell::new(DumbbellConfig {
        path: run.path.clone(),
        rtts: run.flows.iter().map(|f| f.rtt).collect(),
        brisk: brisk.then_some(stack),
        linux,
        linux_extra: mptcp
            .as_ref()
            .map(|m| m.endpoints.iter().map(|e| e.addr).collect())
            .unwrap_or_default(),
        meter: Some((run.sample_interval, end_at)),
        opts: EmulatorOptions {
            pcap_a: run.pcap_dir.as_ref().map(|d| d.join("sender.pcap")),
            pcap_b: run.pcap_dir.as_ref().map(|d| d.join("receiver.pcap")),
            ack_tap_a: record_sizes(run),
            link_logs: [
                run.link_log_dir
                    .as_ref()
                    .map(|d| d.join("bottleneck.mm.log")),
                run.link_log_dir.as_ref().map(|d| d.join("reverse.mm.log")),
            ],
            ..EmulatorOptions::default()
        },
        limit: Some(run.duration.saturating_add(Duration::from_secs(25))),
    })?;
    if let Some(ns) = lab.senders() {
        for (i, f) in run.flows.iter().enumerate() {
            if f.stack == FlowStack::Linux {
                f.linux.apply_namespace(ns)?;
                f.linux.apply_route(ns, receiver_addr(i))?;
            }
        }
    }
    // MPTCP's namespace settings, then the counters' starting point.
    let mut counters0 = None;
    if let Some(m) = &mptcp {
        m.without_endpoints()
            .apply(lab.receivers(), crate::tools::lab::TUN_NAME)?;
        if let Some(ns) = lab.senders() {
            m.apply(ns, crate::tools::lab::TUN_NAME)?;
        }
        counters0 = Some(mptcp_counters(&lab)?);
    }
    if let (Some(cfg), Some(stack)) = (sbd_cfg, lab.stack()) {
        sbd::enable(stack, cfg)?;
    }
    phases.mark("setup");
    let cpu0 = process_cpu_s();
    let cx = Ctx {
        clock: lab.clock(),
        end: std_dur(run.duration),
        grace: StdDuration::from_secs(15),
        interval: std_dur(run.sample_interval),
    };
    let (flows, sbd_report) = run_flows_watched(run, &lab, cx);
    phases.mark("flows");
    let busy = lab.stack().map_or(0.0, |s| s.busy_seconds());
    let mptcp = match counters0 {
        Some((s0, r0)) => {
            let (s1, r1) = mptcp_counters(&lab)?;
            Some(MptcpCounters {
                senders: mptcp_only(delta(&s0, &s1)),
                receivers: mptcp_only(delta(&r0, &r1)),
            })
        }
        None => None,
    };
    let mut emulator = lab.stop()?;
    phases.mark("stop");
    let drain = flows.as_ref().ok().and_then(|fs| {
        fs.iter()
            .map(|f| f.drain.duration.as_secs_f64())
            .reduce(f64::max)
    });
    phases.report(&run.name, cx.end, drain);
    let mut flows = flows?;
    let cpu_s = process_cpu_s() - cpu0;
    let fwd = &mut emulator.forward;
    let meter = fwd.meter.take().unwrap_or_default();
    let taps = std::mem::take(&mut emulator.ack_tap_a);
    for f in &mut flows {
        f.first_drop = meter.first_drop.get(f.id as usize).copied().flatten();
        if let Some(tap) = taps.get(f.id as usize) {
            f.add_tap(tap, end_at.as_nanos());
        }
    }
    let elapsed = run.duration.as_nanos().max(1) as f64;
    let bottleneck = BottleneckResult {
        utilization: (meter.busy_ns as f64 / elapsed).min(1.0),
        drops: meter.drops,
        ce_marked: meter.ce_marked,
        first_drop: meter.drop_records.first().map(|d| d.at),
        queue_delay: meter.queue_delay,
        max_queue_packets: meter
            .queue_series
            .iter()
            .map(|r| r.1.max_packets)
            .max()
            .unwrap_or(0),
        queue_series: meter.queue_series,
        drop_records: meter.drop_records,
    };
    Ok(RealResult {
        scenario: run.name.clone(),
        seed: run.seed,
        duration: run.duration,
        flows,
        bottleneck,
        emulator,
        cpu_s,
        brisk_busy_s: busy,
        mptcp,
        paths: Vec::new(),
        sbd: sbd_report,
    })
}

/// Wall time of a real run's phases (set-up, flows with their drain, stop and
/// tear-down), printed to stderr when `BRISK_REAL_PHASES` is set: where the seconds
/// around the scenario's physics go.
struct Phases {
    on: bool,
    last: std::time::Instant,
    marks: Vec<(&'static str, StdDuration)>,
}

impl Phases {
    fn start() -> Phases {
        Phases {
            on: std::env::var_os("BRISK_REAL_PHASES").is_some(),
            last: std::time::Instant::now(),
            marks: Vec::new(),
        }
    }

    fn mark(&mut self, what: &'static str) {
        if self.on {
            let now = std::time::Instant::now();
            self.marks.push((what, now - self.last));
            self.last = now;
        }
    }

    /// `end` is the scenario's duration: the flows' phase past it is the drain.
    fn report(&self, name: &str, end: StdDuration, drain: Option<f64>) {
        if !self.on {
            return;
        }
        let parts: Vec<String> = self
            .marks
            .iter()
            .map(|(w, d)| format!("{w} {:.3} s", d.as_secs_f64()))
            .collect();
        eprintln!(
            "real phases [{name}]: {} (scenario {:.3} s, longest drain {:.3} s)",
            parts.join(", "),
            end.as_secs_f64(),
            drain.unwrap_or(f64::NAN)
        );
    }
}

type Counters = std::collections::BTreeMap<String, u64>;

/// The senders' (empty without Linux flows) and the receivers' netstat counters.
fn mptcp_counters(lab: &Dumbbell) -> Result<(Counters, Counters)> {
    mptcp_counters_of(lab.senders(), lab.receivers())
}

fn mptcp_counters_of(
    senders: Option<&crate::os::netns::Netns>,
    receivers: &crate::os::netns::Netns,
) -> Result<(Counters, Counters)> {
    let s = match senders {
        Some(ns) => counters(ns)?,
        None => Counters::new(),
    };
    Ok((s, counters(receivers)?))
}

/// Where a run's flows meet: brisk's stack, the Linux senders' and the receivers'
/// namespaces, and each flow's receiver (the dumbbell's, or the two-path lab's).
trait Hosts: Sync {
    fn stack(&self) -> Option<&crate::stack::BriskStack>;
    fn senders(&self) -> Option<&crate::os::netns::Netns>;
    fn receivers(&self) -> &crate::os::netns::Netns;
    /// Flow `i`'s receiver.
    fn receiver(&self, i: usize) -> SocketAddr;
    /// Where flow `i`'s receiver listens.
    fn listen_on(&self, i: usize) -> SocketAddr {
        self.receiver(i)
    }
    /// The local address a brisk flow `i` connects from (`None`: the stack's first).
    fn source(&self, _i: usize) -> Option<std::net::IpAddr> {
        None
    }
}

/// [`run_flows`], with the brisk stack's shared-bottleneck detector watched beside
/// the flows when it is on ([`sbd::watch`]).
fn run_flows_watched<H: Hosts>(
    run: &RealRun,
    lab: &H,
    cx: Ctx,
) -> (Result<Vec<RealFlowResult>>, Option<sbd::SbdReport>) {
    let stack = lab
        .stack()
        .filter(|s| s.with_endpoint(|ep| ep.host_cc().sbd().is_some()));
    let Some(stack) = stack else {
        return (run_flows(run, lab, cx), None);
    };
    let receivers: Vec<SocketAddr> = (0..run.flows.len()).map(|i| lab.receiver(i)).collect();
    std::thread::scope(|s| {
        let w = s.spawn(|| sbd::watch(stack, cx.clock, cx.end, &receivers));
        let flows = run_flows(run, lab, cx);
        (flows, w.join().ok())
    })
}

impl Hosts for Dumbbell {
    fn stack(&self) -> Option<&crate::stack::BriskStack> {
        Dumbbell::stack(self)
    }
    fn senders(&self) -> Option<&crate::os::netns::Netns> {
        Dumbbell::senders(self)
    }
    fn receivers(&self) -> &crate::os::netns::Netns {
        Dumbbell::receivers(self)
    }
    fn receiver(&self, i: usize) -> SocketAddr {
        SocketAddr::from((receiver_addr(i), RECEIVER_PORT))
    }
}

fn run_flows<H: Hosts>(run: &RealRun, lab: &H, cx: Ctx) -> Result<Vec<RealFlowResult>> {
    let listeners: Vec<std::net::TcpListener> = (0..run.flows.len())
        .map(|i| {
            let addr = lab.listen_on(i);
            let l = if run.flows[i].linux.mptcp.is_some() {
                mptcp_kernel::listen_with(lab.receivers(), addr, None)?
            } else {
                lab.receivers()
                    .run_in(move || std::net::TcpListener::bind(addr))?
                    .map_err(|e| EmuError::io(format!("bind {addr}"), e))?
            };
            // The receiver is Linux whichever stack sends, so its knobs (the
            // receive buffer) apply to brisk flows too.
            run.flows[i].linux.apply_listener(&l)?;
            Ok(l)
        })
        .collect::<Result<_>>()?;
    std::thread::scope(|s| {
        let mut joins = Vec::new();
        for (i, (f, l)) in run.flows.iter().zip(listeners).enumerate() {
            let seed = flow_seed(run, i);
            joins.push(s.spawn(move || -> Result<RealFlowResult> {
                std::thread::sleep(std_dur(f.start).saturating_sub(since(cx.clock)));
                let addr = lab.receiver(i);
                let write_timeout = Some(cx.end.saturating_sub(since(cx.clock)) + cx.grace);
                let id = i as u32;
                match f.stack {
                    FlowStack::Brisk => {
                        let stack = lab
                            .stack()
                            .ok_or_else(|| EmuError::Config("no brisk stack".into()))?;
                        let timeout = Some(StdDuration::from_secs(5));
                        let mut c = match lab.source(i) {
                            Some(from) => crate::stack::socket::TcpStream::connect_from(
                                stack,
                                from,
                                addr,
                                f.tcp.clone(),
                                timeout,
                            ),
                            None => crate::stack::socket::TcpStream::connect_with(
                                stack,
                                addr,
                                f.tcp.clone(),
                                timeout,
                            ),
                        }
                        .map_err(|e| EmuError::io(format!("brisk connect {addr}"), e))?;
                        c.set_write_timeout(write_timeout)
                            .map_err(|e| EmuError::io("write timeout", e))?;
                        if matches!(f.app, RealApp::Bulk { bytes: None }) {
                            c.set_notsent_limit(notsent_floor(run, f.tcp.send_buffer))
                                .map_err(|e| EmuError::io("not-sent limit", e))?;
                        }
                        let _ = c.set_trace(true);
                        run_flow(id, f, &c, l, seed, cx)
                    }
                    FlowStack::Linux => {
                        let ns = lab
                            .senders()
                            .ok_or_else(|| EmuError::Config("no Linux senders".into()))?;
                        if f.linux.mptcp.is_some() {
                            // IPPROTO_MPTCP, TCP_CONGESTION before the connect (Linux
                            // gives it to every subflow), then the socket knobs.
                            let c =
                                mptcp_kernel::connect(ns, addr, &f.cc, StdDuration::from_secs(5))?;
                            f.linux.apply_sender(&c)?;
                            c.set_write_timeout(write_timeout)
                                .map_err(|e| EmuError::io("SO_SNDTIMEO", e))?;
                            return run_flow(id, f, &MptcpSender(c), l, seed, cx);
                        }
                        let cc = f.cc.clone();
                        let knobs = f.linux.clone();
                        // TCP_CONGESTION and the socket knobs before any data is written.
                        let c = ns.run_in(move || -> Result<std::net::TcpStream> {
                            let sock = std::net::TcpStream::connect_timeout(
                                &addr,
                                StdDuration::from_secs(5),
                            )
                            .map_err(|e| EmuError::io(format!("connect {addr}"), e))?;
                            set_cc(&sock, &cc)?;
                            knobs.apply_sender(&sock)?;
                            Ok(sock)
                        })??;
                        c.set_write_timeout(write_timeout)
                            .map_err(|e| EmuError::io("SO_SNDTIMEO", e))?;
                        run_flow(id, f, &c, l, seed, cx)
                    }
                }
            }));
        }
        joins
            .into_iter()
            .map(|j| j.join().map_err(|_| EmuError::Panicked("flow".into()))?)
            .collect()
    })
}
