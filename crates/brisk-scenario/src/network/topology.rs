//! The topology of a network scenario: a generator (`topology = { kind = "internet2" |
//! "fat_tree" | "dumbbell" | "edges", ... }`) or explicit `[[node]]` and `[[link]]`
//! entries, and the checks each field gets before any graph is built. The simulator
//! builds the graph (nodes, links, routes) from these (`brisk_sim::topo_build`).
//!
//! Multi-homing: a `[[node]]` host may have `addresses = N` (2 to 8), one per
//! interface: address i lives on the host's i-th `[[link]]` (in file order), so each
//! address has its own access link and path. Equal-cost multipath is the scenario's
//! top-level `routing = "shortest" | "ecmp"` ([`RoutingMode`]), for generated and
//! explicit graphs alike. A `[[link]]` may be a seeded path model instead of fixed
//! numbers (`model = "wlan" | "3g"`, [`PathModel`]). Generated hosts stay
//! single-homed (a count per generated host is future work).

use serde::{Deserialize, Serialize};

use crate::link::{LinkSpec, LossSpec, PathModel, QueueSpec};
use crate::units::{Dur, Rate};

/// Most hosts per router a generator attaches.
pub const MAX_HOSTS_PER_ROUTER: u32 = 1000;
/// Largest fat tree (k = 48 would be 27 648 hosts, past the simulator's node limit).
pub const MAX_FAT_TREE_K: u32 = 32;
/// Hosts per router when `hosts_per_router` is not given.
pub const DEFAULT_HOSTS_PER_ROUTER: u32 = 10;

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
    pub fn name(self) -> &'static str {
        match self {
            TopoKind::Internet2 => "internet2",
            TopoKind::FatTree => "fat_tree",
            TopoKind::Dumbbell => "dumbbell",
            TopoKind::Edges => "edges",
        }
    }
}

/// The three link descriptions a generator uses.
#[derive(Clone, Debug, Default)]
pub struct Links {
    /// Router to router, both directions.
    pub core: LinkSpec,
    /// Router to host (the router's output port).
    pub down: LinkSpec,
    /// Host to router (the host's NIC).
    pub up: LinkSpec,
}

/// (field, message), as the scenario's checks return them.
type Check = Result<(), (String, String)>;

impl TopologySpec {
    /// The three kinds of link the generators make.
    pub fn links(&self) -> Links {
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

    /// Hosts per router of `internet2` and `edges` (default 10).
    pub fn hosts_per_router(&self) -> u32 {
        self.hosts_per_router.unwrap_or(DEFAULT_HOSTS_PER_ROUTER)
    }

    /// Every check of the generator's fields, in the order a generator meets them: the
    /// fields its kind uses, the rates, the three link kinds, the kind's own fields,
    /// then the seeded changes (`core_rate_max`, `fifo_routers`, `fifo_queue`).
    pub fn validate(&self) -> Check {
        self.check_fields()?;
        if self.rate.0 == 0 || self.host_rate.is_some_and(|r| r.0 == 0) {
            return Err((
                "topology.rate".into(),
                "rates must be greater than 0".into(),
            ));
        }
        let l = self.links();
        for (name, spec) in [
            ("topology(core)", &l.core),
            ("topology(router port)", &l.down),
            ("topology(host uplink)", &l.up),
        ] {
            spec.validate(name).map_err(|e| (e.field, e.message))?;
        }
        let hpr = || -> Check {
            let n = self.hosts_per_router();
            if n == 0 || n > MAX_HOSTS_PER_ROUTER {
                return Err((
                    "topology.hosts_per_router".into(),
                    format!("must be between 1 and {MAX_HOSTS_PER_ROUTER}"),
                ));
            }
            Ok(())
        };
        match self.kind {
            TopoKind::Internet2 => hpr()?,
            TopoKind::FatTree => {
                let k = self.k.unwrap_or(0);
                if k < 2 || k % 2 == 1 || k > MAX_FAT_TREE_K {
                    return Err((
                        "topology.k".into(),
                        format!("must be even, from 2 to {MAX_FAT_TREE_K}"),
                    ));
                }
            }
            TopoKind::Dumbbell => {
                let n = self.hosts_per_side.unwrap_or(0);
                if n == 0 || n > MAX_HOSTS_PER_ROUTER {
                    return Err((
                        "topology.hosts_per_side".into(),
                        format!("must be between 1 and {MAX_HOSTS_PER_ROUTER}"),
                    ));
                }
                let Some(b) = &self.bottleneck else {
                    return Err((
                        "topology.bottleneck".into(),
                        "missing: the link between the two routers".into(),
                    ));
                };
                b.validate("topology.bottleneck")
                    .map_err(|e| (e.field, e.message))?;
            }
            TopoKind::Edges => {
                if self.file.is_none() {
                    return Err(("topology.file".into(), "missing: the edge-list file".into()));
                }
                hpr()?;
            }
        }
        self.validate_seeded()
    }

    /// The seeded changes' fields: heterogeneous core rates, routers without priorities.
    fn validate_seeded(&self) -> Check {
        if let Some(max) = self.core_rate_max {
            if max < self.rate {
                return Err((
                    "topology.core_rate_max".into(),
                    format!("must be at least rate ({})", self.rate),
                ));
            }
        }
        let Some(f) = self.fifo_routers else {
            if self.fifo_queue.is_some() {
                return Err(("topology.fifo_queue".into(), "needs fifo_routers".into()));
            }
            return Ok(());
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
        Ok(())
    }

    /// A field the kind does not use is an error (as an unknown key would be).
    fn check_fields(&self) -> Check {
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

/// What a node does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// Runs a TCP endpoint; never forwards.
    Host,
    /// Forwards by destination address.
    Router,
}

/// Most addresses of one host (the endpoint's bound, `brisk_tcp::MAX_ADDRESSES`).
pub const MAX_HOST_ADDRESSES: u32 = brisk_tcp::MAX_ADDRESSES as u32;

/// `[[node]]`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
    /// A multi-homed host: this many addresses (1 to 8), address i on the host's i-th
    /// `[[link]]` in file order; it must then have exactly this many links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addresses: Option<u32>,
    /// The host's TCP timestamp clock runs this many ppm fast (negative: slow), −1000
    /// to 1000: a crystal error, the clock skew RFC 8382 §3.3.3 meets. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_ppm: Option<i32>,
    /// Run RFC 8382 shared-bottleneck detection over the host's TCP flows (its
    /// stable groups drive flows with `fse = { sbd = true }`). Default off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sbd: Option<bool>,
}

impl NodeSpec {
    /// The address count's range, and hosts only; `field` is `node[i]`.
    pub fn validate(&self, field: &str) -> Check {
        if self.sbd == Some(true) && self.kind == NodeKind::Router {
            return Err((
                format!("{field}.sbd"),
                "only a host runs shared-bottleneck detection".into(),
            ));
        }
        if let Some(ppm) = self.clock_ppm {
            let max = brisk_tcp::conn::MAX_TS_PPM;
            if self.kind == NodeKind::Router {
                return Err((
                    format!("{field}.clock_ppm"),
                    "only a host has a TCP timestamp clock".into(),
                ));
            }
            if !(-max..=max).contains(&ppm) {
                return Err((
                    format!("{field}.clock_ppm"),
                    format!("must be between -{max} and {max} ppm, got {ppm}"),
                ));
            }
        }
        let Some(n) = self.addresses else {
            return Ok(());
        };
        if self.kind == NodeKind::Router {
            return Err((
                format!("{field}.addresses"),
                "only a host has addresses (a router forwards by destination)".into(),
            ));
        }
        if n == 0 || n > MAX_HOST_ADDRESSES {
            return Err((
                format!("{field}.addresses"),
                format!("must be between 1 and {MAX_HOST_ADDRESSES}, got {n}"),
            ));
        }
        Ok(())
    }
}

/// `routing`: how routers choose among equal-cost paths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RoutingMode {
    /// One least-delay path per destination (ties to fewer hops, then the lower node).
    #[default]
    Shortest,
    /// Every equal-cost next hop, one picked per packet by its flow's 5-tuple hash
    /// (Linux `fib_multipath_hash_policy = 1`), so a flow keeps one path.
    Ecmp,
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
    /// A path model drawn per run with the scenario's seed (both directions alike),
    /// instead of `rate`, `delay`, `queue` and `loss`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<PathModel>,
}

impl EdgeSpec {
    /// The `a -> b` direction.
    pub fn forward(&self) -> LinkSpec {
        LinkSpec {
            rate: self.rate,
            delay: self.delay,
            queue: self.queue.clone(),
            loss: self.loss.clone(),
            ..LinkSpec::default()
        }
    }

    /// The `b -> a` direction: `reverse`, else the same as `a -> b`.
    pub fn backward(&self) -> LinkSpec {
        self.reverse.clone().unwrap_or_else(|| self.forward())
    }

    /// Both directions' range checks; `field` is `link[i]`.
    pub fn validate(&self, field: &str) -> Check {
        if let Some(m) = self.model {
            let fixed = [
                ("rate", self.rate.is_some()),
                ("delay", self.delay.is_some()),
                ("queue", self.queue.is_some()),
                ("loss", self.loss.is_some()),
                ("reverse", self.reverse.is_some()),
            ];
            if let Some((k, _)) = fixed.iter().find(|f| f.1) {
                return Err((
                    format!("{field}.{k}"),
                    format!(
                        "not with model = \"{}\": the model draws rate, delay, queue and loss for both directions",
                        m.name()
                    ),
                ));
            }
        }
        self.forward()
            .validate(field)
            .map_err(|e| (e.field, e.message))?;
        if let Some(r) = &self.reverse {
            r.validate(&format!("{field}.reverse"))
                .map_err(|e| (e.field, e.message))?;
        }
        Ok(())
    }
}
