//! Scenario syntax for multi-hop topologies with a flow workload (issue 11 §1; RC3,
//! NSDI 2014, §5.1; spec `rc3.md` §2.1, A7, A8, A9).
//!
//! A scenario file with a `[workload]` table is a *network scenario* ([`NetScenario`]);
//! every other scenario is the dumbbell of `crate::scenario`, unchanged. The network is
//! either a generator (`topology = { kind = "internet2" | "fat_tree" | "dumbbell" |
//! "edges", ... }`) or explicit `[[node]]` and `[[link]]` entries. Parsing is strict and
//! every error names the field, as in `crate::scenario`. The syntax reference is
//! `docs/scenarios.md`.

use brisk_net::spec::{LinkSpec, LossSpec, QueueSpec};
use brisk_tcp::cc::CcAlgorithm;
use brisk_time::Duration;
use serde::{Deserialize, Serialize};
use std::path::Path;

use crate::graph::{Graph, NodeKind};
use crate::scenario::{ScenarioError, TcpKnobs, MAX_DURATION};
use crate::topo_gen::{self, Links};
use crate::units::{Dur, Rate, Size};
use crate::workload::SizeCdf;

/// Most classes in one workload.
pub const MAX_CLASSES: usize = 16;
/// Most hosts per router a generator attaches.
pub const MAX_HOSTS_PER_ROUTER: u32 = 1000;
/// Largest fat tree (k = 48 would be 27 648 hosts, past `graph::MAX_NODES`).
pub const MAX_FAT_TREE_K: u32 = 32;

/// A network scenario: a topology and a workload.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NetScenario {
    pub name: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Longest simulated time; a run with `workload.flows` stops once all are done.
    pub duration: Dur,
    #[serde(default)]
    pub topology: Option<TopologySpec>,
    #[serde(default, rename = "node")]
    pub nodes: Vec<NodeSpec>,
    #[serde(default, rename = "link")]
    pub links: Vec<EdgeSpec>,
    pub workload: WorkloadSpec,
    /// The edge-list text of `topology.kind = "edges"`, read at load.
    #[serde(skip)]
    pub edge_text: Option<String>,
}

fn default_seed() -> u64 {
    1
}

/// A generated topology: `kind` and the fields that kind uses.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TopologySpec {
    pub kind: TopoKind,
    /// `internet2`, `edges`: hosts attached to each router (default 10).
    #[serde(default)]
    pub hosts_per_router: Option<u32>,
    /// `fat_tree`: the arity (even).
    #[serde(default)]
    pub k: Option<u32>,
    /// `dumbbell`: hosts on each side.
    #[serde(default)]
    pub hosts_per_side: Option<u32>,
    /// `dumbbell`: the link between the two routers (both directions).
    #[serde(default)]
    pub bottleneck: Option<LinkSpec>,
    /// `edges`: the edge-list file, relative to the scenario file.
    #[serde(default)]
    pub file: Option<String>,
    /// Core links: rate, per-hop one-way delay, router queue.
    pub rate: Rate,
    #[serde(default)]
    pub hop_delay: Option<Dur>,
    /// Host links (both directions): rate (default `rate`) and one-way delay (default 0).
    #[serde(default)]
    pub host_rate: Option<Rate>,
    #[serde(default)]
    pub access_delay: Option<Dur>,
    /// Router output queues (core links and ports towards hosts).
    #[serde(default)]
    pub queue: Option<QueueSpec>,
    /// Each host's NIC queue (its uplink).
    #[serde(default)]
    pub host_queue: Option<QueueSpec>,
    /// Random loss on each router's port towards a host, so every packet (data and
    /// ACK, any priority) crosses exactly one lossy link (spec A13).
    #[serde(default)]
    pub access_loss: Option<LossSpec>,
    /// Each core link's rate (both directions alike) drawn uniformly from
    /// [`rate`, `core_rate_max`] with the run's seed (RC3 Table 1's heterogeneous core,
    /// U[0.5, 2] Gbit/s).
    #[serde(default)]
    pub core_rate_max: Option<Rate>,
    /// This fraction of the routers (rounded; picked with the run's seed) use
    /// `fifo_queue` on all their out-links instead of `queue`: routers without
    /// priorities (spec A16).
    #[serde(default)]
    pub fifo_routers: Option<f64>,
    /// Their queue (default: a link's default, 1000-packet drop-tail).
    #[serde(default)]
    pub fifo_queue: Option<QueueSpec>,
}

/// The generators.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TopoKind {
    /// The Abilene-like 10-router graph of spec A7.
    Internet2,
    /// A k-ary fat tree.
    FatTree,
    /// Two routers joined by `bottleneck`.
    Dumbbell,
    /// Routers and core links from an edge-list file (`a b [delay_ms] [rate]`).
    Edges,
}

impl TopoKind {
    fn name(self) -> &'static str {
        match self {
            TopoKind::Internet2 => "internet2",
            TopoKind::FatTree => "fat_tree",
            TopoKind::Dumbbell => "dumbbell",
            TopoKind::Edges => "edges",
        }
    }
}

impl TopologySpec {
    /// The three kinds of link the generators make.
    fn links(&self) -> Links {
        let access_rate = self.host_rate.unwrap_or(self.rate);
        Links {
            core: LinkSpec {
                rate: Some(self.rate),
                delay: self.hop_delay,
                queue: self.queue.clone(),
                ..LinkSpec::default()
            },
            down: LinkSpec {
                rate: Some(access_rate),
                delay: self.access_delay,
                queue: self.queue.clone(),
                loss: self.access_loss.clone(),
                ..LinkSpec::default()
            },
            up: LinkSpec {
                rate: Some(access_rate),
                delay: self.access_delay,
                queue: self.host_queue.clone(),
                ..LinkSpec::default()
            },
        }
    }

    /// Seeded changes after generation: heterogeneous core rates, routers without
    /// priorities. Returns the names of the routers made FIFO.
    fn randomise(&self, g: &mut Graph, seed: u64) -> Result<Vec<String>, (String, String)> {
        use rand::{Rng, SeedableRng};
        if let Some(max) = self.core_rate_max {
            if max < self.rate {
                return Err((
                    "topology.core_rate_max".into(),
                    format!("must be at least rate ({})", self.rate),
                ));
            }
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(crate::topology::derive_seed(
                seed,
                "topology-core-rates",
                0,
            ));
            for l in 0..g.links().len() {
                let (from, to) = (g.links()[l].from, g.links()[l].to);
                if !g.is_core(l) || from > to {
                    continue; // one draw per pair, in link order
                }
                let r = Rate(rng.gen_range(self.rate.0..=max.0));
                g.link_spec_mut(l).rate = Some(r);
                if let Some(back) = g.reverse_of(l) {
                    g.link_spec_mut(back).rate = Some(r);
                }
            }
        }
        let Some(f) = self.fifo_routers else {
            if self.fifo_queue.is_some() {
                return Err(("topology.fifo_queue".into(), "needs fifo_routers".into()));
            }
            return Ok(Vec::new());
        };
        if !(f.is_finite() && (0.0..=1.0).contains(&f)) {
            return Err((
                "topology.fifo_routers".into(),
                format!("must be a fraction in [0, 1], got {f}"),
            ));
        }
        if let Some(q) = &self.fifo_queue {
            let probe = LinkSpec {
                rate: Some(self.rate),
                queue: Some(q.clone()),
                ..LinkSpec::default()
            };
            probe
                .validate("topology.fifo_queue")
                .map_err(|e| (e.field, e.message))?;
        }
        let mut routers: Vec<usize> = (0..g.nodes().len())
            .filter(|&i| g.nodes()[i].kind == NodeKind::Router)
            .collect();
        let n = ((f * routers.len() as f64).round() as usize).min(routers.len());
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(crate::topology::derive_seed(
            seed,
            "topology-fifo-routers",
            0,
        ));
        // A partial Fisher-Yates shuffle: the first n are a uniform sample.
        for i in 0..n {
            let j = rng.gen_range(i..routers.len());
            routers.swap(i, j);
        }
        let mut chosen: Vec<usize> = routers[..n].to_vec();
        chosen.sort_unstable();
        for &r in &chosen {
            for l in g.out_links(r).to_vec() {
                g.link_spec_mut(l).queue = self.fifo_queue.clone();
            }
        }
        Ok(chosen.iter().map(|&r| g.nodes()[r].name.clone()).collect())
    }

    /// A field the kind does not use is an error (as an unknown key would be).
    fn check_fields(&self) -> Result<(), (String, String)> {
        let uses = |k: TopoKind| self.kind == k;
        let fields = [
            (
                "hosts_per_router",
                self.hosts_per_router.is_some(),
                uses(TopoKind::Internet2) || uses(TopoKind::Edges),
            ),
            ("k", self.k.is_some(), uses(TopoKind::FatTree)),
            (
                "hosts_per_side",
                self.hosts_per_side.is_some(),
                uses(TopoKind::Dumbbell),
            ),
            (
                "bottleneck",
                self.bottleneck.is_some(),
                uses(TopoKind::Dumbbell),
            ),
            ("file", self.file.is_some(), uses(TopoKind::Edges)),
        ];
        for (name, set, used) in fields {
            if set && !used {
                return Err((
                    format!("topology.{name}"),
                    format!("is not a field of kind = \"{}\"", self.kind.name()),
                ));
            }
        }
        Ok(())
    }
}

/// `[[node]]`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
}

/// `[[link]]`: `a -> b` with these fields, and `b -> a` the same unless `reverse` gives
/// that direction's own description.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EdgeSpec {
    pub a: String,
    pub b: String,
    #[serde(default)]
    pub rate: Option<Rate>,
    #[serde(default)]
    pub delay: Option<Dur>,
    #[serde(default)]
    pub queue: Option<QueueSpec>,
    #[serde(default)]
    pub loss: Option<LossSpec>,
    #[serde(default)]
    pub reverse: Option<LinkSpec>,
}

impl EdgeSpec {
    fn forward(&self) -> LinkSpec {
        LinkSpec {
            rate: self.rate,
            delay: self.delay,
            queue: self.queue.clone(),
            loss: self.loss.clone(),
            ..LinkSpec::default()
        }
    }
}

/// `[workload]`: Poisson flow arrivals between hosts on different routers.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// A built-in CDF name or `{ cdf = [[bytes, probability], ...] }`.
    pub sizes: SizesSpec,
    /// Target mean utilisation of the core links (spec A8), in (0, 1].
    pub load: f64,
    /// Stop generating after this many flows (default: arrivals until `duration`).
    #[serde(default)]
    pub flows: Option<u32>,
    /// Flows arriving before this are run but left out of the results (default: 10 %
    /// of the arrival span, spec A8).
    #[serde(default)]
    pub warmup: Option<Dur>,
    /// TCP of the hosts no class claims.
    #[serde(default)]
    pub cc: CcAlgorithm,
    #[serde(default)]
    pub tcp: TcpKnobs,
    /// Host classes with their own TCP (e.g. half the hosts of every router on RC3).
    #[serde(default, rename = "class")]
    pub classes: Vec<ClassSpec>,
    /// Upper edges of the flow-size bins, bytes (default: 4, 10, 40, 100, 440, 1000
    /// and 4440 packets of 1460 bytes); the last bin is open.
    #[serde(default)]
    pub bins: Vec<Size>,
    /// Exact flow sizes whose FCT percentiles to report (e.g. RC3 Fig. 10's 7300 and
    /// 1699440 bytes).
    #[serde(default)]
    pub cdf_sizes: Vec<Size>,
    /// Who opens a flow's connection: "upload" (default: the sender connects and
    /// writes) or "download" (the receiver connects and the sender, accepting, writes:
    /// a server's response). The difference matters for RC3: a SYN-ACK's window is
    /// never scaled (RFC 7323 §2.2), so an uploading client has at most 64 KB of
    /// window in its first round, a responding server the client's whole window.
    #[serde(default)]
    pub direction: Direction,
    /// One more flow, beside the Poisson ones, whose application paces its writes
    /// (RC3-9's YouTube-like transfer): `first` bytes at once, then `chunk` bytes every
    /// `interval` until `total`. Its source and destination are drawn with the run's
    /// seed (hosts on different routers) from a stream of their own, so the Poisson
    /// arrivals do not move.
    #[serde(default)]
    pub paced: Option<PacedSpec>,
}

/// `[workload.paced]`: a tracked flow with a paced application.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PacedSpec {
    /// When the connection is opened (its SYN).
    pub start: Dur,
    /// Written at once when the connection is established.
    pub first: Size,
    /// Written every `interval` after that.
    pub chunk: Size,
    pub interval: Dur,
    /// The flow's size: the writes stop here (the last chunk may be short).
    pub total: Size,
}

/// Most bytes of a paced flow (as the largest CDF size).
pub const MAX_PACED_BYTES: u64 = 1 << 30;
/// Most paced writes after the first.
pub const MAX_PACED_CHUNKS: u64 = 1_000_000;

/// `workload.direction`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    #[default]
    Upload,
    Download,
}

/// `[[workload.class]]`, one of two kinds. With `hosts`: the first `hosts` fraction of
/// every router's hosts (after earlier host classes' shares) run this TCP, as sender
/// and as receiver. With `flows`: each flow joins the class with probability `flows`
/// (drawn per flow from its own seeded stream, so classes never move arrivals) and its
/// sender uses this TCP; its receiver keeps its host's (RC3-13's critical flows).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClassSpec {
    pub name: String,
    #[serde(default)]
    pub hosts: Option<f64>,
    #[serde(default)]
    pub flows: Option<f64>,
    #[serde(default)]
    pub cc: CcAlgorithm,
    #[serde(default)]
    pub tcp: TcpKnobs,
}

/// A flow-size distribution: a built-in name or explicit points.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub enum SizesSpec {
    Builtin(String),
    Cdf(Vec<(u64, f64)>),
}

impl<'de> Deserialize<'de> for SizesSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = SizesSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(
                    f,
                    "a built-in CDF name ({}) or a table {{ cdf = [[bytes, probability], ...] }}",
                    SizeCdf::BUILTINS.join(", ")
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SizesSpec, E> {
                Ok(SizesSpec::Builtin(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<SizesSpec, A::Error> {
                let mut points = None;
                while let Some(k) = map.next_key::<String>()? {
                    if k != "cdf" {
                        return Err(serde::de::Error::unknown_field(&k, &["cdf"]));
                    }
                    points = Some(map.next_value::<Vec<(u64, f64)>>()?);
                }
                points
                    .map(SizesSpec::Cdf)
                    .ok_or_else(|| serde::de::Error::missing_field("cdf"))
            }
        }
        d.deserialize_any(V)
    }
}

impl SizesSpec {
    /// The CDF, or (field, message).
    pub fn cdf(&self) -> Result<SizeCdf, (String, String)> {
        match self {
            SizesSpec::Builtin(n) => SizeCdf::builtin(n).ok_or_else(|| {
                (
                    "workload.sizes".into(),
                    format!(
                        "unknown CDF {n:?}; built-in ones: {}",
                        SizeCdf::BUILTINS.join(", ")
                    ),
                )
            }),
            SizesSpec::Cdf(p) => {
                SizeCdf::new(p.clone()).map_err(|e| ("workload.sizes.cdf".into(), e.to_string()))
            }
        }
    }
}

/// Default bin edges in 1460-byte packets (RC3's model breakpoints: the initial window
/// 4, the RLP levels' 40 and 440 and 4440).
pub const DEFAULT_BINS_PKTS: [u64; 7] = [4, 10, 40, 100, 440, 1000, 4440];

impl WorkloadSpec {
    /// Bin edges in bytes.
    pub fn bin_edges(&self) -> Vec<u64> {
        if self.bins.is_empty() {
            DEFAULT_BINS_PKTS.iter().map(|p| p * 1460).collect()
        } else {
            self.bins.iter().map(|b| b.0).collect()
        }
    }

    /// The TCP configuration of each class: index 0 is the base (`workload.cc`,
    /// `workload.tcp`), then the `[[workload.class]]` entries in order. A workload
    /// host's TIME-WAIT defaults to 1 s (not 60 s) so closed flows free their state
    /// soon; `tcp.time_wait` overrides it.
    pub fn class_configs(&self) -> Vec<(String, brisk_tcp::Config)> {
        let cfg = |cc: CcAlgorithm, t: &TcpKnobs| {
            let mut c = t.to_config(cc);
            if t.time_wait.is_none() {
                c.timeouts.time_wait = Duration::from_secs(1);
            }
            c
        };
        let mut out = vec![("default".to_string(), cfg(self.cc, &self.tcp))];
        for c in &self.classes {
            out.push((c.name.clone(), cfg(c.cc, &c.tcp)));
        }
        out
    }
}

/// Range checks of `[workload.paced]` in a run of `duration`; (field, message).
fn validate_paced(p: &PacedSpec, duration: Duration) -> Result<(), (String, String)> {
    let e = |f: &str, m: String| Err((format!("workload.paced.{f}"), m));
    if p.start.0 >= duration {
        return e("start", format!("must be before duration ({:?})", duration));
    }
    if p.total.0 == 0 || p.total.0 > MAX_PACED_BYTES {
        return e("total", "must be between 1 byte and 1GiB".into());
    }
    if p.first.0 == 0 || p.first.0 > p.total.0 {
        return e(
            "first",
            format!("must be between 1 byte and total ({} bytes)", p.total.0),
        );
    }
    if p.chunk.0 == 0 || p.chunk.0 > p.total.0 {
        return e(
            "chunk",
            format!("must be between 1 byte and total ({} bytes)", p.total.0),
        );
    }
    if p.interval.0.is_zero() || p.interval.0 > Duration::from_secs(60) {
        return e("interval", "must be > 0 and at most 60s".into());
    }
    let chunks = (p.total.0 - p.first.0).div_ceil(p.chunk.0);
    if chunks > MAX_PACED_CHUNKS {
        return e(
            "chunk",
            format!("{chunks} writes after the first; at most {MAX_PACED_CHUNKS} (raise chunk)"),
        );
    }
    Ok(())
}

/// Whether a scenario text is a network scenario (has a top-level `workload` table).
/// Text that does not parse is left to the dumbbell parser, whose errors are the
/// established ones.
pub fn is_net_scenario(text: &str) -> bool {
    text.parse::<toml::Table>()
        .is_ok_and(|t| t.contains_key("workload"))
}

impl NetScenario {
    /// Parses and validates; `file` labels errors and is where `edges` files are
    /// resolved from.
    pub fn from_toml_str_named(text: &str, file: &str) -> Result<NetScenario, ScenarioError> {
        let mut sc: NetScenario = brisk_scenario::error::parse_toml(text, file)?;
        let err = |(field, message): (String, String)| ScenarioError {
            file: file.to_string(),
            field,
            message,
        };
        sc.workload
            .tcp
            .normalize()
            .map_err(|(f, m)| err((format!("workload.tcp.{f}"), m)))?;
        for (i, c) in sc.workload.classes.iter_mut().enumerate() {
            c.tcp
                .normalize()
                .map_err(|(f, m)| err((format!("workload.class[{i}].tcp.{f}"), m)))?;
        }
        if let Some(f) = sc.topology.as_ref().and_then(|t| t.file.as_ref()) {
            let base = Path::new(file).parent().unwrap_or(Path::new(""));
            let path = base.join(f);
            let text = brisk_scenario::input::read_text(&path).map_err(|e| {
                err((
                    "topology.file".into(),
                    format!("cannot read {}: {e}", path.display()),
                ))
            })?;
            sc.edge_text = Some(text);
        }
        sc.validate().map_err(err)?;
        Ok(sc)
    }

    pub fn from_toml_str(text: &str) -> Result<NetScenario, ScenarioError> {
        Self::from_toml_str_named(text, "<string>")
    }

    pub fn load(path: &Path) -> Result<NetScenario, ScenarioError> {
        let (file, text) = brisk_scenario::input::read_file(path)?;
        Self::from_toml_str_named(&text, &file)
    }

    /// Range checks serde cannot express, then a trial build of the graph (so topology
    /// errors surface at load). Returns (field, message).
    fn validate(&self) -> Result<(), (String, String)> {
        let e = |f: &str, m: String| Err((f.to_string(), m));
        if self.duration.0.is_zero() || self.duration.0 > MAX_DURATION {
            return e("duration", "must be > 0 and at most 24h".into());
        }
        let w = &self.workload;
        if !(w.load.is_finite() && w.load > 0.0 && w.load <= 1.0) {
            return e(
                "workload.load",
                format!("must be in (0, 1], got {}", w.load),
            );
        }
        w.sizes.cdf()?;
        if w.flows
            .is_some_and(|n| n == 0 || n as usize > crate::workload::MAX_FLOWS)
        {
            return e(
                "workload.flows",
                format!("must be between 1 and {}", crate::workload::MAX_FLOWS),
            );
        }
        if w.warmup.is_some_and(|d| d.0 >= self.duration.0) {
            return e("workload.warmup", "must be shorter than duration".into());
        }
        if w.classes.len() > MAX_CLASSES {
            return e(
                "workload.class",
                format!("{} classes; at most {MAX_CLASSES}", w.classes.len()),
            );
        }
        let mut shares = [0.0f64; 2];
        for (i, c) in w.classes.iter().enumerate() {
            let (key, f, k) = match (c.hosts, c.flows) {
                (Some(f), None) => ("hosts", f, 0),
                (None, Some(f)) => ("flows", f, 1),
                _ => {
                    return e(
                        &format!("workload.class[{i}]"),
                        "give exactly one of `hosts` (a fraction of each router's hosts) and `flows` (a fraction of the flows)".into(),
                    )
                }
            };
            let field = format!("workload.class[{i}].{key}");
            if !(f.is_finite() && f > 0.0 && f <= 1.0) {
                return e(&field, format!("must be a fraction in (0, 1], got {f}"));
            }
            shares[k] += f;
            if shares[k] > 1.0 + 1e-9 {
                return e(
                    &field,
                    format!("the classes' `{key}` fractions add up to more than 1"),
                );
            }
        }
        let knobs = std::iter::once(("workload".to_string(), &w.tcp, w.cc)).chain(
            w.classes
                .iter()
                .enumerate()
                .map(|(i, c)| (format!("workload.class[{i}]"), &c.tcp, c.cc)),
        );
        for (owner, t, cc) in knobs {
            crate::scenario::validate_tcp(t, cc).map_err(|(k, m)| (format!("{owner}.{k}"), m))?;
        }
        if let Some(p) = &w.paced {
            validate_paced(p, self.duration.0)?;
        }
        if w.bins.windows(2).any(|b| b[0] >= b[1]) || w.bins.first().is_some_and(|b| b.0 == 0) {
            return e(
                "workload.bins",
                "bin edges must be > 0 and strictly increasing".into(),
            );
        }
        if w.bins.len() > 64 || w.cdf_sizes.len() > 64 {
            return e("workload.bins", "at most 64 bins and 64 cdf_sizes".into());
        }
        self.graph()?;
        Ok(())
    }

    /// The topology's graph with the scenario's own seed.
    pub fn graph(&self) -> Result<Graph, (String, String)> {
        self.graph_seeded(self.seed).map(|(g, _)| g)
    }

    /// The topology's graph, its seeded choices made with `seed`, and the routers made
    /// FIFO (`fifo_routers`). Returns (field, message) naming the element.
    pub fn graph_seeded(&self, seed: u64) -> Result<(Graph, Vec<String>), (String, String)> {
        let mut fifo = Vec::new();
        let explicit = !self.nodes.is_empty() || !self.links.is_empty();
        let gerr =
            |f: &'static str| move |e: crate::graph::GraphError| (f.to_string(), e.to_string());
        let g =
            match &self.topology {
                Some(_) if explicit => return Err((
                    "topology".into(),
                    "give either a topology generator or [[node]] and [[link]] entries, not both"
                        .into(),
                )),
                None if !explicit => return Err((
                    "topology".into(),
                    "missing: give `topology = { kind = ... }` or [[node]] and [[link]] entries"
                        .into(),
                )),
                None => self.explicit_graph()?,
                Some(t) => {
                    t.check_fields()?;
                    let hpr = || -> Result<u32, (String, String)> {
                        let n = t.hosts_per_router.unwrap_or(10);
                        if n == 0 || n > MAX_HOSTS_PER_ROUTER {
                            return Err((
                                "topology.hosts_per_router".into(),
                                format!("must be between 1 and {MAX_HOSTS_PER_ROUTER}"),
                            ));
                        }
                        Ok(n)
                    };
                    if t.rate.0 == 0 || t.host_rate.is_some_and(|r| r.0 == 0) {
                        return Err((
                            "topology.rate".into(),
                            "rates must be greater than 0".into(),
                        ));
                    }
                    let l = t.links();
                    for (name, spec) in [
                        ("topology(core)", &l.core),
                        ("topology(router port)", &l.down),
                        ("topology(host uplink)", &l.up),
                    ] {
                        spec.validate(name).map_err(|e| (e.field, e.message))?;
                    }
                    let mut g = match t.kind {
                        TopoKind::Internet2 => {
                            topo_gen::internet2(hpr()?, &l).map_err(gerr("topology"))?
                        }
                        TopoKind::FatTree => {
                            let k = t.k.unwrap_or(0);
                            if k < 2 || k % 2 == 1 || k > MAX_FAT_TREE_K {
                                return Err((
                                    "topology.k".into(),
                                    format!("must be even, from 2 to {MAX_FAT_TREE_K}"),
                                ));
                            }
                            topo_gen::fat_tree(k, &l).map_err(gerr("topology"))?
                        }
                        TopoKind::Dumbbell => {
                            let n = t.hosts_per_side.unwrap_or(0);
                            if n == 0 || n > MAX_HOSTS_PER_ROUTER {
                                return Err((
                                    "topology.hosts_per_side".into(),
                                    format!("must be between 1 and {MAX_HOSTS_PER_ROUTER}"),
                                ));
                            }
                            let Some(b) = &t.bottleneck else {
                                return Err((
                                    "topology.bottleneck".into(),
                                    "missing: the link between the two routers".into(),
                                ));
                            };
                            b.validate("topology.bottleneck")
                                .map_err(|e| (e.field, e.message))?;
                            topo_gen::dumbbell(n, b, &l).map_err(gerr("topology"))?
                        }
                        TopoKind::Edges => {
                            if t.file.is_none() {
                                return Err((
                                    "topology.file".into(),
                                    "missing: the edge-list file".into(),
                                ));
                            }
                            let text = self.edge_text.as_deref().unwrap_or("");
                            topo_gen::edge_list(text, hpr()?, &l)
                                .map_err(|e| ("topology.file".to_string(), e.to_string()))?
                        }
                    };
                    fifo = t.randomise(&mut g, seed)?;
                    g
                }
            };
        g.routes().map_err(gerr("topology"))?;
        Ok((g, fifo))
    }

    fn explicit_graph(&self) -> Result<Graph, (String, String)> {
        let mut g = Graph::new();
        for (i, n) in self.nodes.iter().enumerate() {
            g.add_node(&n.name, n.kind)
                .map_err(|e| (format!("node[{i}].name"), e.to_string()))?;
        }
        for (i, l) in self.links.iter().enumerate() {
            let field = format!("link[{i}]");
            let fwd = l.forward();
            fwd.validate(&field).map_err(|e| (e.field, e.message))?;
            let rev = match &l.reverse {
                Some(r) => {
                    r.validate(&format!("{field}.reverse"))
                        .map_err(|e| (e.field, e.message))?;
                    r.clone()
                }
                None => fwd.clone(),
            };
            g.connect(&l.a, &l.b, fwd, rev)
                .map_err(|e| (field.clone(), e.to_string()))?;
        }
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(v: &str) -> Result<SizesSpec, String> {
        #[derive(Deserialize)]
        struct W {
            #[allow(dead_code)]
            sizes: SizesSpec,
        }
        toml::from_str::<W>(&format!("sizes = {v}"))
            .map(|w| w.sizes)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn sizes_are_a_name_or_a_cdf_table_and_errors_say_which() {
        assert_eq!(
            sizes("\"rc3-2000\"").unwrap(),
            SizesSpec::Builtin("rc3-2000".into())
        );
        assert_eq!(
            sizes("{ cdf = [[100, 0.5], [200, 1.0]] }").unwrap(),
            SizesSpec::Cdf(vec![(100, 0.5), (200, 1.0)])
        );
        let e = sizes("3").unwrap_err();
        assert!(
            e.contains("a built-in CDF name (rc3-synthetic, rc3-2000)"),
            "{e}"
        );
        let e = sizes("{ points = [] }").unwrap_err();
        assert!(e.contains("unknown field `points`"), "{e}");
        assert!(sizes("{}").unwrap_err().contains("missing field `cdf`"));
    }

    #[test]
    fn a_workload_table_makes_a_network_scenario() {
        assert!(is_net_scenario("name = \"x\"\n[workload]\nload = 0.1\n"));
        assert!(!is_net_scenario("name = \"x\"\n[bottleneck]\n"));
        assert!(!is_net_scenario("not toml ["));
    }
}
