//! RC3's simulated network (NSDI 2014 §5.1; spec `rc3.md` §2.1, A7-A13), shared by the
//! `rc3-*` experiments: the Abilene-like Internet2 graph (10 routers, 10 hosts each,
//! 10 ms one-way per core hop, so 45 ms mean RTT over the 2.27 mean core hops), every
//! link at the same rate, router ports with one shared strict-priority buffer of one
//! 40-ms BDP with push-out, host NICs with an effectively unbounded priority queue
//! (RC3's enlarged Tx queue), Poisson flows with the `rc3-synthetic` sizes at a target
//! mean core load, NewReno with SACK, IW 4, every segment ACKed (spec A10), no
//! timestamps (A10; RC3 turns them off anyway), receive and send buffers larger than any
//! flow (A11).
//!
//! Flows are downloads (`workload.direction`): the receiver opens the connection and
//! the sender writes on accept, so RC3's first round is bounded by the client's scaled
//! window, not by the SYN-ACK's unscaled 64 KB (docs/mechanisms/rc3.md).
//!
//! Runs are pooled per arm: the flows of all seeds that arrived after the warm-up.

use crate::experiment::Job;
use brisk_scenario::network::NetScenario;
use brisk_sim::fct::{FctStats, FlowFct};
use brisk_sim::RunResult;

/// Upper edges of the size bins (bytes): 4, 10, 40, 100, 440, 1000, 4440 packets of
/// 1460 B, as the workload's default; a last open bin follows.
pub const EDGES: [u64; 7] = [
    4 * 1460,
    10 * 1460,
    40 * 1460,
    100 * 1460,
    440 * 1460,
    1000 * 1460,
    4440 * 1460,
];
/// Fig. 10's sizes: 7.3 KB (5 packets) and 1.7 MB (the substitute CDF's point masses).
pub const CDF_SIZES: [u64; 2] = [7300, 1_699_440];

/// The network's knobs.
#[derive(Clone, Debug)]
pub struct Net {
    pub rate_mbps: u64,
    pub hop_delay_ms: u64,
    pub hosts_per_router: u32,
    pub load: f64,
    pub flows: u32,
    pub sizes: &'static str,
    /// Per-packet loss on every router port towards a host (spec A13), if any.
    pub access_loss: Option<f64>,
    /// Fraction of routers without priorities (FIFO ports, spec A16).
    pub fifo_routers: Option<f64>,
    /// Core link rates drawn from [`rate_mbps`, this] (RC3-6's heterogeneous core).
    pub core_rate_max_mbps: Option<u64>,
    /// Host links' rate when it differs from the core's.
    pub host_rate_mbps: Option<u64>,
    /// Every host's congestion control (`reno` unless a composition says otherwise).
    pub cc: &'static str,
    /// PIE on band 0 of every router port's priority queue, marking ECN-capable
    /// packets (rc3-compose's ABE arms; `band0_pie` in docs/mechanisms/rc3.md).
    pub band0_pie: bool,
    /// Host NICs a drop-tail FIFO (of the same 10⁶ packets) instead of the priority
    /// queue (rc3-deploy's arm without priorities anywhere).
    pub fifo_hosts: bool,
}

impl Net {
    /// The paper's baseline: 1 Gbit/s, 10 ms per hop, 10 hosts per router, 30 % load.
    pub fn base(flows: u32) -> Net {
        Net {
            rate_mbps: 1000,
            hop_delay_ms: 10,
            hosts_per_router: 10,
            load: 0.3,
            flows,
            sizes: "rc3-synthetic",
            access_loss: None,
            fifo_routers: None,
            core_rate_max_mbps: None,
            host_rate_mbps: None,
            cc: "reno",
            band0_pie: false,
            fifo_hosts: false,
        }
    }

    /// One 40-ms BDP (the mean path's RTT is 45 ms; the paper says "RTT×BW").
    fn buffer_bytes(&self) -> u64 {
        self.rate_mbps * 1_000_000 / 8 * (4 * self.hop_delay_ms) / 1000
    }
}

/// One arm of a sweep: a label, the network and the `tcp` table of every host.
pub struct Arm {
    pub label: String,
    pub net: Net,
    pub tcp: String,
}

/// The runs of `arms`, seed-major (every arm of seed 1, then of seed 2, ...).
pub fn jobs(id: &str, arms: &[Arm], seeds: u64) -> Result<Vec<Job>, String> {
    let mut v = Vec::new();
    for seed in 1..=seeds {
        for a in arms {
            v.push(Job::network(
                format!("{id} {} seed {seed}", a.label),
                scenario(id, &a.net, &a.tcp, &[])?,
                seed,
            ));
        }
    }
    Ok(v)
}

/// The `tcp` table for every arm: NewReno, SACK, IW 4, ACK every segment, no
/// timestamps, buffers beyond the largest flow; `extra` adds knobs (e.g. `rc3 = true`).
pub fn tcp(extra: &str) -> String {
    let mut t = String::from(
        "initial_cwnd = 4, sack = true, delayed_ack = false, timestamps = false, \
         recv_buffer = \"16MB\", send_buffer = \"16MB\"",
    );
    if !extra.is_empty() {
        t.push_str(", ");
        t.push_str(extra);
    }
    t
}

/// A network scenario: the default hosts run `default_tcp`; `classes` are
/// `[[workload.class]]` bodies (e.g. `name = "rc3", hosts = 0.5, cc = "reno", tcp = {..}`).
pub fn scenario(
    name: &str,
    net: &Net,
    default_tcp: &str,
    classes: &[String],
) -> Result<NetScenario, String> {
    scenario_extra(name, net, default_tcp, classes, "")
}

/// As [`scenario`], with `extra` (TOML tables under `[workload]`, e.g. a
/// `[workload.paced]` table) after the workload's keys.
pub fn scenario_extra(
    name: &str,
    net: &Net,
    default_tcp: &str,
    classes: &[String],
    extra: &str,
) -> Result<NetScenario, String> {
    let buf = net.buffer_bytes();
    // The ABE paper's PIE (App. B): Linux 3.17.4's defaults, marking, the 10 % rule off.
    let pie = if net.band0_pie {
        ", band0_pie = { ecn = true, ecn_drop_rule = false }"
    } else {
        ""
    };
    let mut topo = format!(
        "{{ kind = \"internet2\", hosts_per_router = {}, rate = \"{}Mbps\", hop_delay = \"{}ms\", \
         queue = {{ kind = \"prio\", bands = 4, bytes = {buf}{pie} }}, \
         host_queue = {{ kind = \"{}\", {}packets = 1000000 }}",
        net.hosts_per_router,
        net.rate_mbps,
        net.hop_delay_ms,
        if net.fifo_hosts { "droptail" } else { "prio" },
        if net.fifo_hosts { "" } else { "bands = 4, " }
    );
    if let Some(m) = net.core_rate_max_mbps {
        topo.push_str(&format!(", core_rate_max = \"{m}Mbps\""));
    }
    if let Some(h) = net.host_rate_mbps {
        topo.push_str(&format!(", host_rate = \"{h}Mbps\""));
    }
    if let Some(p) = net.access_loss {
        topo.push_str(&format!(
            ", access_loss = {{ kind = \"bernoulli\", p = {p} }}"
        ));
    }
    if let Some(f) = net.fifo_routers {
        topo.push_str(&format!(
            ", fifo_routers = {f}, fifo_queue = {{ kind = \"droptail\", bytes = {buf} }}"
        ));
    }
    topo.push_str(" }");
    let mut text = format!(
        "name = \"{name}\"\nduration = \"120s\"\ntopology = {topo}\n[workload]\n\
         direction = \"download\"\nsizes = \"{}\"\nload = {}\nflows = {}\ncc = \"{}\"\n\
         tcp = {{ {default_tcp} }}\ncdf_sizes = [\"7300\", \"1699440\"]\n",
        net.sizes, net.load, net.flows, net.cc
    );
    text.push_str(extra);
    for c in classes {
        text.push_str(&format!("[[workload.class]]\n{c}\n"));
    }
    brisk_sim::topo_build::from_toml_str_named(&text, name).map_err(|e| e.to_string())
}

/// The flows of `runs` (all seeds of one arm) that arrived after the warm-up, with
/// `class` if given (0 is the hosts no class claims), as the aggregates see them, with
/// the FCT `fct` gives (None: not completed).
fn pooled_by(
    runs: &[&RunResult],
    class: Option<u16>,
    fct: impl Fn(&brisk_sim::wl_host::FlowRecord) -> Option<brisk_time::Duration>,
) -> Vec<FlowFct> {
    let mut v = Vec::new();
    for r in runs {
        let Some(w) = &r.workload else { continue };
        let t_warm = brisk_time::Instant::ZERO + w.warmup;
        for f in &w.flows {
            if f.start < t_warm || class.is_some_and(|c| c != f.class) {
                continue;
            }
            v.push(FlowFct {
                size: f.size,
                fct_s: fct(f).map(|d| d.as_secs_f64()),
            });
        }
    }
    v
}

/// Pooled flows with the FCT of spec A12 (first data byte to all ACKed).
pub fn pooled(runs: &[&RunResult], class: Option<u16>) -> Vec<FlowFct> {
    pooled_by(runs, class, |f| f.fct())
}

/// As [`pooled`], with the FCT counted from the SYN (handshake included), the
/// alternative definition spec A12 keeps.
pub fn pooled_from_syn(runs: &[&RunResult]) -> Vec<FlowFct> {
    pooled_by(runs, None, |f| f.acked.map(|a| a - f.start))
}

/// Pooled statistics of one arm.
pub fn stats(runs: &[&RunResult], class: Option<u16>) -> FctStats {
    FctStats::compute(&pooled(runs, class), &EDGES, &CDF_SIZES)
}

/// Flows of `runs` that did not complete or arrived damaged (must be 0).
pub fn broken(runs: &[&RunResult]) -> usize {
    runs.iter()
        .filter_map(|r| r.workload.as_ref())
        .map(|w| w.not_intact + w.errors + w.flows.iter().filter(|f| f.fct().is_none()).count())
        .sum()
}

/// A bin's label, e.g. "(5.8 KB, 14.6 KB]".
pub fn bin_label(i: usize) -> String {
    let kb = |b: u64| {
        if b >= 1_000_000 {
            format!("{:.1} MB", b as f64 / 1e6)
        } else {
            format!("{:.1} KB", b as f64 / 1e3)
        }
    };
    let lo = if i == 0 { 0 } else { EDGES[i - 1] };
    match EDGES.get(i) {
        Some(&hi) => format!("({}, {}]", kb(lo), kb(hi)),
        None => format!("> {}", kb(lo)),
    }
}

/// A bin's geometric middle in bytes (for plotting against size).
pub fn bin_mid(i: usize) -> f64 {
    let lo = if i == 0 { 1460 } else { EDGES[i - 1] } as f64;
    let hi = EDGES.get(i).map_or(lo * 2.0, |&h| h as f64);
    (lo * hi).sqrt()
}
