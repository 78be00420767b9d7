//! Running a scenario in-process and collecting its results.
//!
//! ```no_run
//! let sc = brisk_sim::Scenario::load("scenarios/bufferbloat-cubic.toml".as_ref()).unwrap();
//! let res = brisk_sim::run(&sc, sc.seed).unwrap();
//! println!("{}", res.to_json());
//! ```

use brisk_time::{dur_nanos, Duration, Instant};
use brisk_wire::pcap::PcapWriter;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

use crate::engine::{EngineStats, NodeId, Observer};
use crate::host::{CcRow, CwndRow, MpRow, Role, RttRow};
use crate::metrics::Summary;
use crate::node::LinkCapture;
use crate::scenario::{AppSpec, Scenario};
use crate::topology;
use brisk_net::mmlog::MahimahiLog;
use brisk_net::Packet;
use brisk_tcp::cc::CcDiagnostics;
use brisk_wire::pcapng::PcapNgWriter;

/// Extra outputs of a run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Write one pcap per host (`<dir>/<host-ip>.pcap`). Timestamps count from the
    /// start of the simulation, which pcap readers show as 1970-01-01 00:00:00 UTC.
    pub pcap_dir: Option<PathBuf>,
    /// Bytes kept of each packet in the pcaps (`None`: whole packets, up to 65535).
    pub snaplen: Option<u32>,
    /// Hash every packet hand-over (time, hop, bytes) into `RunResult::trace_sha256`.
    pub trace_hash: bool,
    /// Write each link of the dumbbell (`bottleneck`, and `reverse` if the scenario has
    /// one) as `<dir>/<name>.mm.log`, in Mahimahi's `mm-link` log format.
    pub link_log_dir: Option<PathBuf>,
    /// Skip the streams' SHA-256 digests (the exact per-byte pattern check stays on);
    /// used by the benchmark, where hashing 2.5 GB would dominate the run time.
    pub skip_stream_hashes: bool,
    /// Record the stream bytes of each flow the bottleneck dropped
    /// (`FlowResult::dropped_ranges`), for tail-loss analyses.
    pub dropped_ranges: bool,
    /// Make every flow MPTCP (RFC 8684) with this configuration, both ends: the
    /// benchmark's MPTCP line (`brisk bench sim`), which compares it with the same
    /// scenario as plain TCP. `None` (the default) leaves the flows as they are.
    pub mptcp: Option<brisk_tcp::mptcp::MptcpConfig>,
}

pub use crate::outcome::{Interruption, SimError};

/// One flow's results.
#[derive(Clone, Debug)]
pub struct FlowResult {
    pub id: u32,
    pub cc: String,
    pub app: &'static str,
    pub start: Instant,
    /// Bytes read by the receiving application.
    pub bytes_delivered: u64,
    /// Bytes the sending application handed to TCP.
    pub bytes_sent: u64,
    pub goodput_bps: f64,
    pub retransmitted_packets: u64,
    pub fct: Option<Duration>,
    pub rtt: Option<Summary>,
    pub record_latency: Option<Summary>,
    /// One-way delay and jitter of the flow's data packets (sender host → receiver
    /// host), as ns-3's FlowMonitor measures them.
    pub one_way_delay: Option<brisk_report::DelaySummary>,
    /// RTT empirical CDF: [`QUANTILE_POINTS`] nearest-rank quantiles, 0 to 100 %, ns
    /// (empty without samples).
    pub rtt_quantiles: Vec<u64>,
    /// Record (or request) latency quantiles, as `rtt_quantiles`.
    pub record_latency_quantiles: Vec<u64>,
    /// Records: (generation ns, delivery ns) of each record whose latency was
    /// measured, in delivery order (at most `crate::app::MAX_RECORD_TIMES`); per-frame
    /// analyses (the Minion VoIP bursts) need more than the quantiles.
    pub record_deliveries: Vec<(u64, u64)>,
    /// Records: (generation ns, first transmission of the record's last byte ns) of
    /// each record the sender sent whole at least once, in generation order (at most
    /// `crate::app::MAX_RECORD_TIMES`): with `record_deliveries`, `records.csv`.
    pub record_first_tx: Vec<(u64, u64)>,
    /// Records: latency from the first transmission of the record's last byte to its
    /// delivery (the thesis's wait in the receive queue, without the wait in the
    /// sender's buffer), and its quantiles.
    pub record_latency_tx: Option<Summary>,
    pub record_latency_tx_quantiles: Vec<u64>,
    /// Records: from the first transmission of the record's last byte to the
    /// cumulative ACK covering it (the RDB paper's ACK latency), and its quantiles.
    pub ack_latency: Option<Summary>,
    pub ack_latency_quantiles: Vec<u64>,
    /// The sender's `TcpInfo` at the end (segments, bytes sent with redundant and
    /// retransmitted bytes, RDB bundles), if the connection was opened.
    pub sender_info: Option<brisk_tcp::TcpInfo>,
    pub stream_ok: bool,
    /// The sender's connection ran MPTCP to the end of the run (RFC 8684: offered,
    /// taken, never fallen back to plain TCP).
    pub mptcp: bool,
    pub first_drop: Option<Instant>,
    pub error: Option<String>,
    /// Whether each side's connection reported `Closed` by the end of the run:
    /// `[sender, receiver]`.
    pub closed: [bool; 2],
    pub records_skipped: u64,
    pub goodput_series: Vec<(u64, u64)>,
    /// The flow's own host reading: (sample ns, bytes its application has read so
    /// far), from the first sample after it read any (a `request_response` flow's
    /// responses: its download direction). Empty for bulk and records flows.
    pub rx_series: Vec<(u64, u64)>,
    /// A `request_response` flow's exchanges: (request sent ns, response complete
    /// ns), at most `crate::app::MAX_RECORD_TIMES` (a ping-like probe's latency over
    /// time). Empty for other apps.
    pub exchanges: Vec<(u64, u64)>,
    pub rtt_series: Vec<(u64, RttRow)>,
    pub cwnd_series: Vec<(u64, CwndRow)>,
    /// An MPTCP sender's subflows summed per sample (empty for plain TCP).
    pub mptcp_series: Vec<(u64, MpRow)>,
    /// An MPTCP sender's subflows' `TcpInfo` as last seen (empty for plain TCP;
    /// `sender_info` is the first subflow's).
    pub mptcp_subflows: Vec<brisk_tcp::TcpInfo>,
    /// The sender's controller diagnostics at the end of the run (`TcpInfo::cc_diag`).
    pub cc_diag: Option<CcDiagnostics>,
    /// One row per diagnostics change (for delay correlation: per consult), time in
    /// ns; at most [`crate::host::MAX_CC_ROWS`].
    pub cc_series: Vec<(u64, CcRow)>,
    /// Diagnostics rows not stored because of the cap.
    pub cc_rows_dropped: u64,
    /// Stream byte ranges the sender retransmitted (merged, stream offsets; a bare
    /// FIN is the byte after the data), for tail-loss analyses.
    pub retransmitted_ranges: Vec<(u64, u64)>,
    /// Stream byte ranges of the flow's data the bottleneck dropped (merged; a FIN is
    /// the byte after the data), with `RunOptions::dropped_ranges` only.
    pub dropped_ranges: Vec<(u64, u64)>,
    /// A page download's objects and counters (`app = "web"`).
    pub web: Option<crate::web::WebResult>,
    /// A `datagrams` or `udp` flow's receiver counters and per-datagram times.
    pub datagrams: Option<DatagramResult>,
    /// A `page` flow's objects and counters (`crate::page_app`).
    pub page: Option<crate::page_app::PageResult>,
}

/// What a `datagrams` or `udp` flow's receiver saw (`crate::dgram_app`,
/// `crate::udp_app`).
#[derive(Clone, Debug, Default)]
pub struct DatagramResult {
    /// Datagrams the source generated (for `udp`: sent, unless `due` overflowed).
    pub generated: u64,
    /// Datagrams delivered, each once.
    pub delivered: u64,
    /// Of those, delivered from out-of-order bytes.
    pub out_of_order: u64,
    /// Datagrams with a bad header or body, repeated or never sent, plus records the
    /// uCOBS scanner could not decode.
    pub bad: u64,
    /// Per delivered datagram, in delivery order: (index, generation ns, delivery ns);
    /// at most `crate::app::MAX_RECORD_TIMES`.
    pub deliveries: Vec<(u64, u64, u64)>,
    /// The source's `urgent_every` (`datagrams` only): datagram `i` was written at the
    /// urgent priority iff `(i + 1) % n == 0`.
    pub urgent_every: Option<u64>,
}

/// Points in the quantile vectors of [`FlowResult`] (every 0.1 %).
pub const QUANTILE_POINTS: usize = 1001;

/// The shared bottleneck's results: brisk-report's, shared with real-packet runs.
pub use brisk_report::BottleneckResult;

/// Everything a run produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub scenario: String,
    pub seed: u64,
    pub duration: Duration,
    pub flows: Vec<FlowResult>,
    pub bottleneck: BottleneckResult,
    pub engine: EngineStats,
    /// SHA-256 over every packet hand-over, if `RunOptions::trace_hash`.
    pub trace_sha256: Option<String>,
    /// Set when the run was stopped by its controller before the scenario's end;
    /// `duration` is then the simulated time it reached.
    pub interrupted: Option<Interruption>,
    /// A network (workload) scenario's results, when the run was one
    /// ([`RunResult::from_workload`]); `flows` is then empty.
    pub workload: Option<Box<crate::wl_run::WorkloadResult>>,
}

impl RunResult {
    /// A network scenario's results in the shape the experiment runner pools.
    pub fn from_workload(w: crate::wl_run::WorkloadResult) -> RunResult {
        RunResult {
            scenario: w.scenario.clone(),
            seed: w.seed,
            duration: w.duration,
            flows: Vec::new(),
            // A network has no one bottleneck; its links are in `workload`.
            bottleneck: BottleneckResult {
                utilization: w.utilisation.core_mean,
                drops: w.utilisation.core_drops + w.utilisation.access_drops,
                ce_marked: 0,
                first_drop: None,
                queue_delay: None,
                max_queue_packets: 0,
                queue_series: Vec::new(),
                drop_records: Vec::new(),
            },
            engine: w.engine.clone(),
            trace_sha256: None,
            interrupted: w.interrupted.clone(),
            workload: Some(Box::new(w)),
        }
    }
}

/// Simulated time between two calls of a run's controller ([`run_controlled`]). Fixed,
/// so every run takes the same steps whether or not anyone watches (the steps cannot
/// change results: the engine processes the same events in the same order either way,
/// which the snapshot test's trace hashes check).
pub const CONTROL_STEP: Duration = Duration::from_millis(100);

/// Hashes hand-overs and writes per-host pcaps.
struct RunObserver {
    hash: Option<Sha256>,
    /// Indexed by node id; `Some` for hosts when pcaps are on.
    pcaps: Vec<Option<(String, PcapWriter<BufWriter<File>>)>>,
    error: Option<SimError>,
    /// The bottleneck's entry and exit nodes and what is inside, when the run
    /// records dropped ranges.
    drops: Option<(NodeId, NodeId, crate::dropped::DropTracker)>,
}

impl Observer for RunObserver {
    /// Inline: runs without a trace hash, drop tracking or pcaps (benches, most
    /// tests) pay one test per hand-over instead of a call that saved registers for
    /// the work below (about 37 instructions a packet in `bench sim`).
    #[inline]
    fn on_packet(&mut self, now: Instant, from: NodeId, to: NodeId, pkt: &Packet) {
        if self.hash.is_some() || self.drops.is_some() || !self.pcaps.is_empty() {
            self.observe(now, from, to, pkt);
        }
    }
}

impl RunObserver {
    #[inline(never)]
    fn observe(&mut self, now: Instant, from: NodeId, to: NodeId, pkt: &Packet) {
        if let Some(h) = &mut self.hash {
            h.update(now.as_nanos().to_le_bytes());
            h.update((from as u64).to_le_bytes());
            h.update((to as u64).to_le_bytes());
            h.update((pkt.data.len() as u64).to_le_bytes());
            h.update(&pkt.data);
        }
        if let Some((entry, exit, t)) = &mut self.drops {
            if to == *entry {
                t.on_enter(pkt);
            } else if from == *exit {
                t.on_exit(pkt);
            }
        }
        if self.error.is_some() {
            return;
        }
        for n in [from, to] {
            if let Some(Some((path, w))) = self.pcaps.get_mut(n) {
                if let Err(source) = w.write_packet(now.as_nanos(), &pkt.data) {
                    self.error = Some(SimError::Io {
                        path: path.clone(),
                        source,
                    });
                }
            }
        }
    }
}

fn io_err(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> SimError + '_ {
    move |source| SimError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Runs `sc` with `seed` (no pcaps, no trace hash).
pub fn run(sc: &Scenario, seed: u64) -> Result<RunResult, SimError> {
    run_with(sc, seed, &RunOptions::default())
}

/// Runs `sc` with `seed` and the given extra outputs.
pub fn run_with(sc: &Scenario, seed: u64, opts: &RunOptions) -> Result<RunResult, SimError> {
    run_controlled(sc, seed, opts, &mut |_| true)
}

/// [`run_with`], calling `control` with the simulated time every [`CONTROL_STEP`]; when
/// it returns false the run stops there and reports what it has (for progress displays
/// and Ctrl-C; the simulator itself reads no clock and no signal).
pub fn run_controlled(
    sc: &Scenario,
    seed: u64,
    opts: &RunOptions,
    control: &mut dyn FnMut(Instant) -> bool,
) -> Result<RunResult, SimError> {
    let mut net = build_for(sc, seed, opts)?;
    run_network(sc, seed, &mut net, opts, control)
}

/// The network [`run_with`] builds for `sc`, `seed` and `opts` (for a caller that times
/// the build apart and then hands it to [`run_network`]).
pub fn build_for(
    sc: &Scenario,
    seed: u64,
    opts: &RunOptions,
) -> Result<topology::Network, SimError> {
    if let Some(i) = sc
        .flows
        .iter()
        .position(|f| f.stack == crate::scenario::Stack::Linux)
    {
        return Err(SimError::Unsupported(format!(
            "flow[{i}].stack = \"linux\": the simulator runs only brisk's TCP; run this scenario over real packets with `brisk run --real`"
        )));
    }
    Ok(topology::build_mptcp(
        sc,
        seed,
        !opts.skip_stream_hashes,
        opts.mptcp.as_ref(),
    )?)
}

/// [`run_controlled`] on a network already built by [`build_for`] with the same `sc`,
/// `seed` and `opts` (`bench scale --one` builds once and times the build apart, where it
/// used to build a second network only to time it).
///
/// The network is borrowed, not consumed: it runs once (its meters and series are
/// taken into the result), and what is left is the caller's to drop. A process that
/// is about to exit need not free it at all (`brisk run` and `bench scale --one` leak
/// it: at 10^5 flows dropping it was ~0.7 G instructions and 7 M `free`s, about a tenth
/// of the process, issue 36 §2); a library caller drops it as usual.
pub fn run_network(
    sc: &Scenario,
    seed: u64,
    net: &mut topology::Network,
    opts: &RunOptions,
    control: &mut dyn FnMut(Instant) -> bool,
) -> Result<RunResult, SimError> {
    let mut obs = RunObserver {
        hash: opts.trace_hash.then(Sha256::new),
        pcaps: Vec::new(),
        error: None,
        drops: opts.dropped_ranges.then(|| {
            (
                net.bottleneck,
                net.bottleneck_exit,
                crate::dropped::DropTracker::default(),
            )
        }),
    };
    if let Some(dir) = &opts.pcap_dir {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        for node in net.engine.nodes() {
            let w = match node.as_host() {
                Some(h) => {
                    let path = dir.join(format!("{}.pcap", h.ip));
                    let f = File::create(&path).map_err(io_err(&path))?;
                    let w = PcapWriter::with_snaplen(
                        BufWriter::new(f),
                        opts.snaplen.unwrap_or(brisk_wire::pcap::SNAPLEN),
                    )
                    .map_err(io_err(&path))?;
                    Some((path.display().to_string(), w))
                }
                None => None,
            };
            obs.pcaps.push(w);
        }
    }

    let links: Vec<(NodeId, &str, &crate::scenario::LinkSpec)> = [
        Some((net.bottleneck, "bottleneck", &sc.bottleneck)),
        net.reverse
            .zip(sc.reverse.as_ref())
            .map(|(n, s)| (n, "reverse", s)),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let Some(dir) = &opts.pcap_dir {
        for &(node, name, _) in &links {
            let snaplen = opts.snaplen.unwrap_or(brisk_wire::pcap::SNAPLEN);
            let open = |path: PathBuf, ifname: &str| {
                let f = File::create(&path).map_err(io_err(&path))?;
                PcapNgWriter::new(BufWriter::new(f), ifname, snaplen).map_err(io_err(&path))
            };
            // Departures and drops in files of their own: see `LinkCapture`.
            let departures = open(dir.join(format!("{name}.pcapng")), name)?;
            let drops = open(
                dir.join(format!("{name}.drops.pcapng")),
                &format!("{name} drops"),
            )?;
            if let Some(l) = net.engine.node_mut(node).as_link_mut() {
                l.set_capture(LinkCapture::new(departures, drops, snaplen as usize));
            }
        }
    }
    if let Some(dir) = &opts.link_log_dir {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        for &(node, name, spec) in &links {
            let path = dir.join(format!("{name}.mm.log"));
            let f = File::create(&path).map_err(io_err(&path))?;
            let source = match &spec.trace {
                Some(t) => t.path.clone(),
                None => spec
                    .rate
                    .map_or("unlimited".into(), |r| format!("{} bit/s", r.0)),
            };
            if let Some(l) = net.engine.node_mut(node).as_link_mut() {
                let log = MahimahiLog::new(
                    BufWriter::new(f),
                    name,
                    &source,
                    &l.link.queue().describe(),
                    l.link.capacity(),
                    dur_nanos(l.link.delay()),
                );
                l.set_log(log);
            }
        }
    }

    let mut end = Instant::ZERO + sc.duration.0;
    let interval = sc.sample_interval();
    let mut next_sample = Instant::ZERO + interval;
    let mut next_control = Instant::ZERO + CONTROL_STEP;
    let mut stopped_early = false;
    let mut t = Instant::ZERO;
    // The hosts, found once (walking every node for them touched each link's node
    // too: a cache miss per node at 10^5 flows; issue 36 §2). Nodes are only added
    // while building.
    let hosts: Vec<usize> = (0..net.engine.nodes().len())
        .filter(|&i| net.engine.nodes()[i].as_host().is_some())
        .collect();
    // Each sample visits only the hosts changed since their last one; the others
    // write the rows they missed when they next change or at the end (`Sampling`).
    // Every host starts changed.
    for &i in &hosts {
        if let Some(h) = net.engine.node_mut(i).as_host_mut() {
            h.register(i);
        }
    }
    net.engine.sampling_mut().changed = hosts.iter().map(|&i| i as u32).collect();
    while t < end {
        // Engine steps end at sample and control instants; stepping is observational
        // (the engine processes the same events in the same order however its run is
        // cut), so neither the sampling interval nor the control step moves a packet.
        t = next_sample.min(next_control).min(end);
        net.engine.run_until(t, &mut obs);
        if obs.error.is_some() {
            break;
        }
        while next_sample <= t {
            // Samples left, this one included (sizes the series that get a row at
            // every sample; see `Series::push_every`).
            let left = (dur_nanos(end - next_sample) / dur_nanos(interval)) as usize + 1;
            let sampling = net.engine.sampling_mut();
            sampling.times.push((next_sample, left));
            let changed = std::mem::take(&mut sampling.changed);
            for &i in &changed {
                if let Some(h) = net.engine.node_mut(i as usize).as_host_mut() {
                    h.sample(next_sample, left);
                    // Still changed: it takes every sample in full (`full_samples`).
                    let again = h.is_changed();
                    if again {
                        net.engine.sampling_mut().changed.push(i);
                    }
                }
            }
            next_sample += interval;
        }
        if t == next_control {
            next_control += CONTROL_STEP;
            if t < end && !control(t) {
                end = t;
                stopped_early = true;
            }
        }
    }
    if let Some(dir) = &opts.pcap_dir {
        for &(node, name, _) in &links {
            let path = dir.join(format!("{name}.pcapng"));
            if let Some(mut c) = net
                .engine
                .node_mut(node)
                .as_link_mut()
                .and_then(|l| l.capture.take())
            {
                if let Some(e) = c.error.take() {
                    return Err(io_err(&path)(e));
                }
                c.flush().map_err(io_err(&path))?;
            }
        }
    }
    if let Some(dir) = &opts.link_log_dir {
        for &(node, name, _) in &links {
            let path = dir.join(format!("{name}.mm.log"));
            if let Some(log) = net
                .engine
                .node_mut(node)
                .as_link_mut()
                .and_then(|l| l.log.take())
            {
                log.finish(end).map_err(io_err(&path))?;
            }
        }
    }

    if let Some(e) = obs.error.take() {
        return Err(e);
    }
    for (path, w) in obs.pcaps.iter_mut().flatten() {
        w.flush().map_err(|source| SimError::Io {
            path: path.clone(),
            source,
        })?;
    }

    // Collect. The run is over: its spare packet buffers go before the results come.
    net.engine.release_buffers();
    let times = std::mem::take(&mut net.engine.sampling_mut().times);
    for i in 0..net.engine.nodes().len() {
        if let Some(h) = net.engine.node_mut(i).as_host_mut() {
            h.catch_up(&times);
            h.finish();
        }
    }
    let bl = net
        .engine
        .node_mut(net.bottleneck)
        .as_link_mut()
        // NOTE(unwrap): topology::build always makes the bottleneck entry a link.
        .expect("bottleneck is a link");
    let busy_ns = bl.link.counters().busy_ns;
    let max_queue_packets = bl.link.counters().max_queue_packets;
    let meter = bl.meter.as_mut().expect("bottleneck is metered"); // NOTE(unwrap): as above.
    meter.finish(end);
    let elapsed = dur_nanos(end - Instant::ZERO).max(1);
    let bottleneck = BottleneckResult {
        utilization: (busy_ns as f64 / elapsed as f64).min(1.0),
        drops: meter.drop_count,
        ce_marked: meter.ce_marked,
        first_drop: meter.drops.first().map(|d| d.at),
        queue_delay: meter.sojourn.summary(),
        max_queue_packets,
        queue_series: std::mem::take(&mut meter.series.rows),
        drop_records: std::mem::take(&mut meter.drops),
    };
    let first_drops = meter.first_drop.clone();
    let dropped: Vec<crate::web::ByteRanges> = match &obs.drops {
        Some((_, _, t)) => t.ranges(&bottleneck.drop_records, net.flows.len()),
        None => Vec::new(),
    };

    let mut flows = Vec::with_capacity(net.flows.len());
    for fi in &net.flows {
        let s = net.engine.node(fi.sender).as_host();
        let r = net.engine.node(fi.receiver).as_host();
        let (Some(s), Some(r)) = (s, r) else {
            continue;
        };
        let (Some(Role::Client(c)), Some(Role::Server(v))) = (
            // A sender may hold several flows (a page's connections share one id;
            // an FSE group's flows share the host): this flow's first.
            s.flows.iter().find(|f| f.flow == fi.id).map(|f| &f.role),
            r.flows.first().map(|f| &f.role),
        ) else {
            continue;
        };
        let (app, sized) = match fi.app {
            AppSpec::Bulk { bytes, .. } => ("bulk", bytes.is_some()),
            AppSpec::Records { count, .. } => ("records", count.is_some()),
            AppSpec::Datagrams { count, .. } => ("datagrams", count.is_some()),
            AppSpec::Udp { count, .. } => ("udp", count.is_some()),
            AppSpec::RequestResponse { count, .. } => ("request_response", count.is_some()),
            AppSpec::Web { .. } => ("web", true),
            AppSpec::Page { .. } => ("page", true),
        };
        let web = c
            .app
            .page()
            .map(|page| web_result(&page.borrow(), c, &r.flows));
        let completed = match fi.app {
            AppSpec::RequestResponse { .. } | AppSpec::Page { .. } => c.app.stats.completed_at,
            AppSpec::Web { .. } => web
                .as_ref()
                .and_then(|w| w.load_time)
                .zip(c.connect_at)
                .map(|(d, t)| t + d),
            _ => v.app.stats.completed_at,
        };
        // A UDP flow opens nothing: it begins at its start.
        let opened = match fi.app {
            AppSpec::Udp { .. } => Some(fi.start),
            _ => c.connect_at,
        };
        let fct = match (sized, completed, opened) {
            (true, Some(done), Some(start)) => Some(done - start),
            _ => None,
        };
        let active_end = completed.unwrap_or(end);
        let active = dur_nanos(active_end.saturating_duration_since(fi.start)).max(1);
        // A page's data flows to the browser (the client) over all its connections.
        let delivered = match fi.app {
            AppSpec::Web { .. } => sum_sides(&s.flows, |r| match r {
                Role::Client(c) => Some(c.app.rx.bytes),
                Role::Server(_) => None,
            }),
            AppSpec::Page { .. } => c.app.page_client().map_or(0, |p| p.bytes()),
            _ => v.app.delivered_bytes(),
        };
        let oct = web.as_ref().map(|w| {
            let mut x = crate::metrics::Samples::default();
            w.objects
                .iter()
                .filter_map(|o| o.oct_ns())
                .for_each(|v| x.push(v));
            x
        });
        let after_tx = match fi.app {
            AppSpec::Records { .. } => latency_after_tx(&c.app.first_tx, &v.app.stats.deliveries),
            _ => crate::metrics::Samples::default(),
        };
        let latencies = match fi.app {
            AppSpec::Records { .. } => v.app.stats.latencies.summary(),
            AppSpec::Datagrams { .. } | AppSpec::Udp { .. } => {
                v.app.dgram_account().and_then(|d| d.latencies.summary())
            }
            AppSpec::RequestResponse { .. } => c.app.stats.latencies.summary(),
            AppSpec::Web { .. } => oct.as_ref().and_then(|x| x.summary()),
            AppSpec::Bulk { .. } | AppSpec::Page { .. } => None,
        };
        let latency_quantiles = match fi.app {
            AppSpec::Records { .. } => v.app.stats.latencies.quantiles(QUANTILE_POINTS),
            AppSpec::Datagrams { .. } | AppSpec::Udp { .. } => v
                .app
                .dgram_account()
                .map_or_else(Vec::new, |d| d.latencies.quantiles(QUANTILE_POINTS)),
            AppSpec::RequestResponse { .. } => c.app.stats.latencies.quantiles(QUANTILE_POINTS),
            AppSpec::Web { .. } => oct
                .as_ref()
                .map_or_else(Vec::new, |x| x.quantiles(QUANTILE_POINTS)),
            AppSpec::Bulk { .. } | AppSpec::Page { .. } => Vec::new(),
        };
        let dir_ok = |tx: &crate::app::TxStream, rx: &crate::app::RxStream| {
            rx.bad_bytes == 0
                && rx.bytes <= tx.bytes
                && (rx.bytes < tx.bytes || rx.sha256() == tx.sha256())
        };
        // Every connection pair of the flow (a page has several).
        let stream_ok = s
            .flows
            .iter()
            .zip(&r.flows)
            .all(|(a, b)| match (&a.role, &b.role) {
                (Role::Client(c), Role::Server(v)) => {
                    dir_ok(&c.app.tx, &v.app.rx)
                        && dir_ok(&v.app.tx, &c.app.rx)
                        && v.app.stats.bad_headers == 0
                }
                _ => false,
            });
        let error = c
            .connect_error
            .or(c.error)
            .or(v.error)
            .map(|e| e.to_string());
        flows.push(FlowResult {
            id: fi.id,
            cc: fi.cc.clone(),
            app,
            start: fi.start,
            bytes_delivered: delivered,
            bytes_sent: match fi.app {
                AppSpec::Web { .. } => sum_sides(&r.flows, |x| match x {
                    Role::Server(v) => Some(v.app.tx.bytes),
                    Role::Client(_) => None,
                }),
                AppSpec::Page { .. } => v.app.page_server().map_or(0, |p| p.sent),
                AppSpec::Udp { .. } => c.app.udp_sent().map_or(0, |u| u.2),
                // The source writes through its uCOBS sender, not `tx`: payload bytes,
                // as `bytes_delivered` counts them.
                AppSpec::Datagrams { .. } => c.app.datagram_payload_sent().unwrap_or(0),
                _ => c.app.tx.bytes,
            },
            goodput_bps: delivered as f64 * 8.0 * 1e9 / active as f64,
            retransmitted_packets: c.info.as_ref().map_or(0, |i| i.retransmits),
            fct,
            rtt: c.rtt.summary(),
            record_latency: latencies,
            one_way_delay: v.owd.summary(),
            rtt_quantiles: c.rtt.quantiles(QUANTILE_POINTS),
            record_latency_quantiles: latency_quantiles,
            record_deliveries: match fi.app {
                AppSpec::Records { .. } => v.app.stats.deliveries.clone(),
                _ => Vec::new(),
            },
            record_first_tx: match fi.app {
                AppSpec::Records { .. } => c.app.first_tx.clone(),
                _ => Vec::new(),
            },
            record_latency_tx: after_tx.summary(),
            record_latency_tx_quantiles: after_tx.quantiles(QUANTILE_POINTS),
            ack_latency: c.app.stats.ack_latencies.summary(),
            ack_latency_quantiles: c.app.stats.ack_latencies.quantiles(QUANTILE_POINTS),
            sender_info: c.info.clone(),
            stream_ok,
            mptcp: c.mptcp,
            first_drop: first_drops.get(fi.id as usize).copied().flatten(),
            error,
            closed: [c.closed, v.closed],
            records_skipped: c.app.stats.records_skipped,
            goodput_series: v.goodput.rows.clone(),
            rx_series: c.rx_total.rows.clone(),
            exchanges: match fi.app {
                AppSpec::RequestResponse { .. } => c.app.stats.deliveries.clone(),
                _ => Vec::new(),
            },
            rtt_series: c.rtt_series.rows.clone(),
            cwnd_series: c.cwnd.rows.clone(),
            mptcp_series: c.mp.rows.clone(),
            mptcp_subflows: c.mp_subflows.clone(),
            cc_diag: c.info.as_ref().and_then(|i| i.cc_diag.clone()),
            cc_series: c.cc.rows.clone(),
            cc_rows_dropped: c.cc_dropped,
            retransmitted_ranges: c.retx.ranges().to_vec(),
            dropped_ranges: dropped
                .get(fi.id as usize)
                .map_or_else(Vec::new, |r| r.ranges().to_vec()),
            web,
            page: c.app.page_client().map(|p| {
                let mut r = p.result().clone();
                r.bad_requests = v.app.page_server().map_or(0, |s| s.bad_requests);
                r
            }),
            datagrams: v.app.dgram_account().map(|d| DatagramResult {
                generated: c.app.datagrams_generated().unwrap_or(0),
                delivered: d.delivered,
                out_of_order: d.delivered_out_of_order,
                bad: d.bad + v.app.dgram_sink().map_or(0, |s| s.scanner_drops()),
                deliveries: d.deliveries.clone(),
                urgent_every: match fi.app {
                    AppSpec::Datagrams { urgent_every, .. } => urgent_every,
                    _ => None,
                },
            }),
        });
    }

    Ok(RunResult {
        scenario: sc.name.clone(),
        seed,
        duration: end - Instant::ZERO,
        flows,
        bottleneck,
        engine: net.engine.stats().clone(),
        trace_sha256: obs.hash.map(|h| hex(&h.finalize())),
        interrupted: stopped_early.then(|| Interruption {
            at: end - Instant::ZERO,
            of: sc.duration.0,
            signal: None,
        }),
        workload: None,
    })
}

/// Per delivered record: delivery − first transmission of its last byte, matching
/// the two sides by generation time (unique per record, increasing on the sender).
/// A page's results from its browser connection `c` (connection 0) and the servers
/// on the receiving host (`servers`, in connection order).
fn web_result(
    page: &crate::web::Page,
    c: &crate::host::ClientSide,
    servers: &[crate::host::HostFlow],
) -> crate::web::WebResult {
    let logs: Vec<_> = servers
        .iter()
        .filter_map(|f| match &f.role {
            Role::Server(v) => Some((&v.retx, v.info.as_deref())),
            Role::Client(_) => None,
        })
        .collect();
    crate::web::WebResult::collect(page, &logs, c.connect_at.map(|t| t.as_nanos()))
}

/// A sum over a host's flow sides: `f` picks the value of the sides it counts.
fn sum_sides(flows: &[crate::host::HostFlow], f: impl Fn(&Role) -> Option<u64>) -> u64 {
    flows.iter().filter_map(|h| f(&h.role)).sum()
}

fn latency_after_tx(first_tx: &[(u64, u64)], deliveries: &[(u64, u64)]) -> crate::metrics::Samples {
    let mut out = crate::metrics::Samples::default();
    for &(gen, delivered) in deliveries {
        if let Ok(i) = first_tx.binary_search_by_key(&gen, |&(g, _)| g) {
            out.push(delivered.saturating_sub(first_tx[i].1));
        }
    }
    out
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
