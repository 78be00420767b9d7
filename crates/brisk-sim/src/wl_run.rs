//! Running a network scenario: a multi-hop topology with a Poisson flow workload
//! (issue 11 §1; RC3, NSDI 2014, §5.1; spec `rc3.md` §2.1, A7, A8, A12).
//!
//! Build: every graph node becomes an engine node (a [`WlHost`] or a [`Router`]),
//! every directed link a brisk-net link (with its queue kind and loss), and each
//! router's route table maps every host address to the entry of its out-link on the
//! shortest path (`crate::graph`), or with `routing = "ecmp"` to the equal-cost set
//! picked by flow hash; a multi-homed host routes by source address. A link's exit
//! forwards to the node at its far end.
//!
//! Load (spec A8): the aggregate arrival rate is λ = load · ΣC_core / (8 · E[S] ·
//! E[core hops]), where ΣC_core is the capacity of all directed router-router links,
//! E[S] the CDF's mean size and E[core hops] the mean number of core links on the path
//! of a random (source, destination) pair on different routers. With equal core rates
//! this is spec A8's λ = u·C·N_core / (E[S]·E[h]): the core links' mean utilisation is
//! `load`. The run measures core and access utilisation separately between the end of
//! the warm-up and the last arrival.
//!
//! Arrivals: sources uniform over hosts, destinations uniform over hosts attached to a
//! different router (spec A7), sizes from the CDF, all from one seeded stream drawn in
//! a fixed order (time, source, destination, size).

use brisk_tcp::{Endpoint, EndpointConfig};
use brisk_time::{dur_nanos, Duration, Instant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::net::IpAddr;
use std::rc::Rc;

use crate::engine::{Engine, EngineStats, NodeId};
use crate::fct::{FctStats, FlowFct};
use crate::graph::{Graph, NodeKind, Routing};
use crate::node::SimNode;
use crate::outcome::SimError;
use crate::topology::{add_link, derive_seed, sender_ip, BuildError};
use crate::wl_host::{FlowBook, FlowRecord, PacedRecord, SharedBook, WlHost};
use brisk_scenario::network::{NetScenario, RoutingMode, SourceAddress};

/// Simulated time between checks for completion and for `control`.
pub const STEP: Duration = Duration::from_millis(100);

/// Link utilisation over the measurement window.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Utilisation {
    pub window_s: f64,
    pub core_mean: f64,
    pub core_max: f64,
    /// Host uplinks (host → router).
    pub access_up_mean: f64,
    pub access_up_max: f64,
    /// Router ports towards hosts.
    pub access_down_mean: f64,
    pub access_down_max: f64,
    /// Packets dropped over the whole run, core and access links.
    pub core_drops: u64,
    pub access_drops: u64,
}

/// One class's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassResult {
    pub name: String,
    pub cc: String,
    pub hosts: usize,
    pub stats: FctStats,
}

/// A network scenario's results.
#[derive(Clone, Debug)]
pub struct WorkloadResult {
    pub scenario: String,
    pub seed: u64,
    /// Simulated time run.
    pub duration: Duration,
    pub hosts: usize,
    pub routers: usize,
    pub links: usize,
    /// Routers made FIFO by `topology.fifo_routers`.
    pub fifo_routers: Vec<String>,
    pub target_load: f64,
    /// λ, flows per simulated second.
    pub arrival_rate: f64,
    pub mean_core_hops: f64,
    pub warmup: Duration,
    /// Every flow, warm-up included (`start < warmup` marks those).
    pub flows: Vec<FlowRecord>,
    /// Measured flows (after warm-up) that completed but were not intact, or failed.
    pub not_intact: usize,
    pub errors: usize,
    pub unknown_accepts: u64,
    pub utilisation: Utilisation,
    /// All measured flows, then per class.
    pub all: FctStats,
    pub classes: Vec<ClassResult>,
    pub engine: EngineStats,
    /// Most connections one host's endpoint held at a step boundary (TIME-WAIT
    /// included): per-flow state is freed, so this stays far below the flow count.
    pub peak_connections: usize,
    /// Most connections all hosts held together at a step boundary (both ends of a
    /// flow, TIME-WAIT included): how many flows were open at once, for `brisk bench
    /// flows`. Not in the JSON output.
    pub peak_total_connections: usize,
    /// Set when the controller stopped the run before the scenario's end.
    pub interrupted: Option<crate::outcome::Interruption>,
}

/// The built network.
struct Built {
    engine: Engine<SimNode>,
    book: SharedBook,
    /// Engine entry node of each graph link.
    link_entry: Vec<NodeId>,
    core: Vec<bool>,
    up: Vec<bool>,
    arrival_rate: f64,
    mean_core_hops: f64,
    host_class: Vec<u16>,
    fifo_routers: Vec<String>,
}

/// Host ordinal → address (198.18.0.0/15, as the dumbbell's senders).
pub fn host_ip(ordinal: usize) -> IpAddr {
    sender_ip(ordinal as u32)
}

/// Most further addresses of multi-homed hosts in one network: 198.19.0.1 onwards.
pub const MAX_EXTRA_ADDRESSES: usize = 65_534;

/// Destination `d`'s address (`Routing::dests`): a host's first address is
/// [`host_ip`] of its ordinal; the further addresses of multi-homed hosts are
/// 198.19.0.1, 198.19.0.2, ... in destination order (the other half of RFC 2544's
/// 198.18.0.0/15).
pub fn dest_ip(d: usize, hosts: usize) -> IpAddr {
    if d < hosts {
        return host_ip(d);
    }
    let base = u32::from(std::net::Ipv4Addr::new(198, 19, 0, 0));
    IpAddr::V4(std::net::Ipv4Addr::from(base + (d - hosts) as u32 + 1))
}

/// Host ordinal `k`'s addresses, in address order.
fn host_addrs(routing: &Routing, k: usize) -> Vec<IpAddr> {
    let nh = routing.hosts.len();
    (0..routing.address_count(k))
        .filter_map(|i| routing.dest(k, i))
        .map(|d| dest_ip(d, nh))
        .collect()
}

/// The address index host ordinal `k` opens its flows from (`workload.source_address`).
fn source_index(routing: &Routing, k: usize, pick: Option<SourceAddress>) -> u32 {
    match pick {
        None => 0,
        Some(SourceAddress::Index(i)) if i < routing.address_count(k) => i,
        Some(SourceAddress::Index(_)) => 0,
        Some(SourceAddress::Address(ip)) => host_addrs(routing, k)
            .iter()
            .position(|&a| a == ip)
            .map_or(0, |i| i as u32),
    }
}

/// The node a host's first uplink reaches (its router).
fn attachment(g: &Graph, host: usize) -> usize {
    g.out_links(host).first().map_or(host, |&l| g.links()[l].to)
}

/// Workload classes of the hosts: within each router's hosts (in node order), the
/// first host class takes the first `hosts` fraction (rounded), the next host class
/// the next, ...; the rest are class 0, the base. `fractions` holds (class, fraction)
/// of the host classes.
fn assign_classes(
    groups: &BTreeMap<usize, Vec<usize>>,
    fractions: &[(u16, f64)],
    n: usize,
) -> Vec<u16> {
    let mut out = vec![0u16; n];
    for members in groups.values() {
        let m = members.len() as f64;
        let mut cum = 0.0;
        let mut from = 0usize;
        for &(c, f) in fractions {
            cum += f;
            let to = ((cum * m).round() as usize).min(members.len());
            for &h in &members[from..to] {
                out[h] = c;
            }
            from = to;
        }
    }
    out
}

fn build(sc: &NetScenario, seed: u64) -> Result<Built, SimError> {
    let bad = |field: &str, m: String| {
        SimError::Build(BuildError::Workload {
            field: field.to_string(),
            message: m,
        })
    };
    let (g, fifo_routers) =
        crate::topo_build::graph_seeded(sc, seed).map_err(|(f, m)| bad(&f, m))?;
    let routing = g
        .routes_with(sc.routing == RoutingMode::Ecmp)
        .map_err(|e| bad("topology", e.to_string()))?;
    let w = &sc.workload;
    if routing.dests.len() - routing.hosts.len() > MAX_EXTRA_ADDRESSES {
        return Err(bad(
            "node",
            format!(
                "{} further addresses of multi-homed hosts; at most {MAX_EXTRA_ADDRESSES}",
                routing.dests.len() - routing.hosts.len()
            ),
        ));
    }
    if let Some(SourceAddress::Address(ip)) = w.source_address {
        let owned = (0..routing.dests.len()).any(|d| dest_ip(d, routing.hosts.len()) == ip);
        if !owned {
            return Err(bad(
                "workload.source_address",
                format!("no host has address {ip}"),
            ));
        }
    }
    // An MPTCP endpoint `index` some host must have (hosts without it leave it out).
    let most = (0..routing.hosts.len())
        .map(|k| routing.address_count(k))
        .max()
        .unwrap_or(1);
    let knobs = std::iter::once(("workload".to_string(), &w.tcp)).chain(
        w.classes
            .iter()
            .enumerate()
            .map(|(i, c)| (format!("workload.class[{i}]"), &c.tcp)),
    );
    for (owner, t) in knobs {
        if let Some((k, i)) = t.mptcp.as_ref().and_then(|m| m.max_index()) {
            if u32::from(i) >= most {
                return Err(bad(
                    &format!("{owner}.tcp.mptcp.endpoint[{k}].index"),
                    format!(
                        "no host has address index {i}: the hosts have at most {most} address(es) (indices 0..={}; `[[node]] addresses` gives more)",
                        most - 1
                    ),
                ));
            }
        }
    }
    let download = w.direction == brisk_scenario::network::Direction::Download;
    // The address index each host opens its flows from.
    let src_index: Vec<u32> = (0..routing.hosts.len())
        .map(|k| source_index(&routing, k, w.source_address))
        .collect();
    // A flow's (forward, back) links: the opener's chosen address is one end.
    let flow_paths = |src: usize, dst: usize| -> (Vec<usize>, Vec<usize>) {
        let (si, di) = if download {
            (0, src_index[dst])
        } else {
            (src_index[src], 0)
        };
        let to_dst = routing.dest(dst, di).unwrap_or(dst);
        let to_src = routing.dest(src, si).unwrap_or(src);
        (
            routing.path_from(&g, src, si, to_dst).unwrap_or_default(),
            routing.path_from(&g, dst, di, to_src).unwrap_or_default(),
        )
    };
    let cdf = w.sizes.cdf().map_err(|(f, m)| bad(&f, m))?;
    let hosts = &routing.hosts;
    let nh = hosts.len();

    // Hosts by router (ordinals), for pairs and classes.
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (k, &h) in hosts.iter().enumerate() {
        groups.entry(attachment(&g, h)).or_default().push(k);
    }
    if groups.len() < 2 {
        return Err(bad(
            "workload",
            "flows go between hosts on different routers: the topology needs hosts on at least two routers".into(),
        ));
    }
    // Ordinals grouped by router, and where each router's run starts, so a destination
    // off the source's router is one draw and one index.
    let order: Vec<usize> = groups.values().flatten().copied().collect();
    let mut run_of = vec![(0usize, 0usize); nh]; // (start in `order`, length)
    let mut at = 0;
    for members in groups.values() {
        for &k in members {
            run_of[k] = (at, members.len());
        }
        at += members.len();
    }
    let reps: Vec<(usize, usize)> = groups.values().map(|m| (m[0], m.len())).collect();

    // Spec A8 calibration.
    let core: Vec<bool> = (0..g.links().len()).map(|l| g.is_core(l)).collect();
    let mut core_bps = 0u128;
    for (l, link) in g.links().iter().enumerate() {
        if core[l] {
            let Some(r) = link.spec.rate else {
                return Err(bad(
                    "workload.load",
                    format!(
                        "load is calibrated on core link capacity, but link {}->{} has no rate",
                        g.nodes()[link.from].name,
                        g.nodes()[link.to].name
                    ),
                ));
            };
            core_bps += u128::from(r.0);
        }
    }
    let (mut hop_sum, mut weight) = (0.0f64, 0.0f64);
    for (i, &(a, na)) in reps.iter().enumerate() {
        for (j, &(b, nb)) in reps.iter().enumerate() {
            if i == j {
                continue;
            }
            let p = routing
                .path(&g, a, b)
                .ok_or_else(|| bad("topology", "no path".into()))?;
            let w8 = (na * nb) as f64;
            hop_sum += w8 * p.iter().filter(|&&l| core[l]).count() as f64;
            weight += w8;
        }
    }
    let mean_core_hops = hop_sum / weight;
    if core_bps == 0 || mean_core_hops <= 0.0 {
        return Err(bad(
            "workload.load",
            "the topology has no core (router-router) links to calibrate the load on".into(),
        ));
    }
    let lambda = w.load * core_bps as f64 / (8.0 * cdf.mean() * mean_core_hops);

    // Arrivals.
    let end = sc.duration.0.as_secs_f64();
    let cap = w.flows.map_or(crate::workload::MAX_FLOWS, |n| n as usize);
    if w.flows.is_none() && w.pairs.is_none() && lambda * end > crate::workload::MAX_FLOWS as f64 {
        return Err(bad(
            "workload",
            format!(
                "about {:.0} flows would arrive in {}; at most {} (shorten duration or set workload.flows)",
                lambda * end,
                sc.duration,
                crate::workload::MAX_FLOWS
            ),
        ));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, "workload", 0));
    let mut recs: Vec<FlowRecord> = Vec::new();
    let mut t = 0.0f64;
    let class_frac = |pick: fn(&brisk_scenario::network::ClassSpec) -> Option<f64>| {
        w.classes
            .iter()
            .enumerate()
            .filter_map(|(i, c)| pick(c).map(|f| (i as u16 + 1, f)))
            .collect::<Vec<_>>()
    };
    let host_class = assign_classes(&groups, &class_frac(|c| c.hosts), nh);
    let flow_classes = class_frac(|c| c.flows);
    // Flow classes draw from their own stream, so they never move the arrivals.
    let mut class_rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, "workload-class", 0));
    // `[workload.pairs]`: the flows are drawn at once from their own stream.
    let mut pairs = match &w.pairs {
        Some(p) => Some(
            crate::wl_pairs::draw(
                p,
                derive_seed(seed, "workload-pairs", 0),
                &order,
                &run_of,
                &cdf,
            )
            .map_err(|m| bad("workload.pairs.connections", m))?
            .into_iter(),
        ),
        None => None,
    };
    while recs.len() < cap {
        let (src, dst, size) = if let Some(it) = pairs.as_mut() {
            let Some((at, src, dst, size)) = it.next() else {
                break;
            };
            t = at;
            (src, dst, size)
        } else {
            let u: f64 = rng.gen_range(f64::EPSILON..1.0);
            t += -u.ln() / lambda;
            if t >= end {
                break;
            }
            let src = rng.gen_range(0..nh);
            let (start, len) = run_of[src];
            let pick = rng.gen_range(0..nh - len);
            // Skip the source's own router's run of hosts.
            let dst = order[if pick < start { pick } else { pick + len }];
            (src, dst, crate::workload::sample(&cdf, &mut rng))
        };
        let id = recs.len() as u32;
        let mut class = host_class[src];
        if !flow_classes.is_empty() {
            let u: f64 = class_rng.gen_range(0.0..1.0);
            let mut cum = 0.0;
            for &(c, f) in &flow_classes {
                cum += f;
                if u < cum {
                    class = c;
                    break;
                }
            }
        }
        let at = Instant::ZERO.saturating_add(Duration::from_secs_f64(t));
        let mut r = FlowRecord::new(
            id,
            src as u32,
            dst as u32,
            size,
            class,
            at,
            derive_seed(seed, "wl-pattern", u64::from(id)),
        );
        let (fwd, back) = flow_paths(src, dst);
        r.hops = fwd.len() as u16;
        r.core_hops = fwd.iter().filter(|&&l| core[l]).count() as u16;
        r.base_rtt = Duration::from_nanos(
            fwd.iter()
                .chain(&back)
                .map(|&l| g.links()[l].delay_ns())
                .sum(),
        );
        recs.push(r);
    }
    if let Some(p) = &w.paced {
        // The paced flow: its own stream, so the Poisson arrivals do not move.
        let mut prng = ChaCha8Rng::seed_from_u64(derive_seed(seed, "workload-paced", 0));
        let src = prng.gen_range(0..nh);
        let (start, len) = run_of[src];
        let pick = prng.gen_range(0..nh - len);
        let dst = order[if pick < start { pick } else { pick + len }];
        let id = recs.len() as u32;
        let mut r = FlowRecord::new(
            id,
            src as u32,
            dst as u32,
            p.total.0,
            host_class[src],
            Instant::ZERO + p.start.0,
            derive_seed(seed, "wl-pattern", u64::from(id)),
        );
        r.paced = Some(PacedRecord::new(p.first.0, p.chunk.0, p.interval.0));
        let (fwd, back) = flow_paths(src, dst);
        r.hops = fwd.len() as u16;
        r.core_hops = fwd.iter().filter(|&&l| core[l]).count() as u16;
        r.base_rtt = Duration::from_nanos(
            fwd.iter()
                .chain(&back)
                .map(|&l| g.links()[l].delay_ns())
                .sum(),
        );
        recs.push(r);
    }

    let mut per_host: Vec<VecDeque<(Instant, u32, IpAddr)>> = vec![VecDeque::new(); nh];
    for r in &recs {
        // A download is opened by its receiver, towards the sender.
        let (opener, peer) = if download {
            (r.dst, r.src)
        } else {
            (r.src, r.dst)
        };
        per_host[opener as usize].push_back((r.start, r.id, host_ip(peer as usize)));
    }
    // The paced flow starts at its own time, among the others.
    for q in &mut per_host {
        q.make_contiguous().sort_by_key(|a| (a.0, a.1));
    }
    let configs = Rc::new(
        w.class_configs()
            .into_iter()
            .map(|(_, c)| c)
            .collect::<Vec<_>>(),
    );
    let book: SharedBook = Rc::new(RefCell::new(FlowBook::new(
        recs,
        derive_seed(seed, "wl-pattern-table", 0),
    )));

    // Hosts whose timestamp clock drifts (`[[node]] clock_ppm`).
    let clock_ppm: std::collections::HashMap<&str, i32> = sc
        .nodes
        .iter()
        .filter_map(|n| Some((n.name.as_str(), n.clock_ppm.filter(|&p| p != 0)?)))
        .collect();
    // Hosts that run shared-bottleneck detection (`[[node]] sbd`).
    let sbd_hosts: std::collections::HashSet<&str> = sc
        .nodes
        .iter()
        .filter(|n| n.sbd == Some(true))
        .map(|n| n.name.as_str())
        .collect();
    // Engine nodes.
    let mut e: Engine<SimNode> = Engine::new();
    let mut node_of = vec![0usize; g.nodes().len()];
    for (i, n) in g.nodes().iter().enumerate() {
        node_of[i] = match n.kind {
            NodeKind::Router => e.add_node(SimNode::Router(Box::default())),
            NodeKind::Host => {
                let k = routing.host_ordinal[i] as usize;
                let ip = host_ip(k);
                let addrs = host_addrs(&routing, k);
                let configs = host_configs(&configs, w, &addrs)
                    .map_err(|(f, m)| bad(&f, format!("host \"{}\": {m}", n.name)))?;
                let cfg = configs[usize::from(host_class[k])].clone();
                let mut isn_secret = [0u8; 16];
                isn_secret[..8].copy_from_slice(&derive_seed(seed, &n.name, 1).to_le_bytes());
                isn_secret[8..].copy_from_slice(&derive_seed(seed, &n.name, 2).to_le_bytes());
                let mut ep = Endpoint::new(
                    ip,
                    // Secret and seed come from the scenario seed, never from the
                    // OS: the same seed must give the same run.
                    EndpointConfig {
                        ts_clock_ppm: clock_ppm.get(n.name.as_str()).copied().unwrap_or(0),
                        ..EndpointConfig::seeded(isn_secret, derive_seed(seed, &n.name, 3))
                    },
                );
                if sbd_hosts.contains(n.name.as_str()) {
                    // `[[node]] sbd = true`: RFC 8382 with §3.3's noise removal and
                    // §3.4's weights (`SbdConfig::improved`), the stability filter's
                    // defaults.
                    let cfg = brisk_tcp::cc::sbd::SbdHostConfig {
                        sbd: brisk_tcp::cc::sbd::SbdConfig::improved(),
                        ..Default::default()
                    };
                    ep.enable_sbd(cfg)
                        .map_err(|e| bad(&format!("node \"{}\"", n.name), e.to_string()))?;
                }
                for &a in &addrs[1..] {
                    ep.add_address(a)
                        .map_err(|e| bad(&format!("node \"{}\"", n.name), e.to_string()))?;
                }
                let source = addrs[src_index[k] as usize];
                let arrivals = std::mem::take(&mut per_host[k]);
                let flow_class_ids: Vec<u16> = flow_classes.iter().map(|&(c, _)| c).collect();
                let host = WlHost::new(ip, ep, book.clone(), configs.clone(), cfg, arrivals)
                    .and_then(|h| {
                        h.downloads(download)
                            .source(source)
                            .flow_classes(&flow_class_ids)
                    })
                    .map_err(|source| {
                        SimError::Build(BuildError::Listen {
                            flow: k as u32,
                            source,
                        })
                    })?;
                e.add_node(SimNode::WlHost(Box::new(host)))
            }
        };
    }
    let mut link_entry = Vec::with_capacity(g.links().len());
    for l in g.links() {
        let name = format!("{}->{}", g.nodes()[l.from].name, g.nodes()[l.to].name);
        let (entry, exit) = add_link(&mut e, &l.spec, &name, seed, None)?;
        e.routes_mut(exit).set_default(node_of[l.to]);
        link_entry.push(entry);
    }
    install_routes(&mut e, &g, &routing, &node_of, &link_entry, seed);
    let up = g
        .links()
        .iter()
        .map(|l| g.nodes()[l.from].kind == NodeKind::Host)
        .collect();
    Ok(Built {
        engine: e,
        book,
        link_entry,
        core,
        up,
        arrival_rate: lambda,
        mean_core_hops,
        host_class,
        fifo_routers,
    })
}

/// The class configurations as host `addrs` runs them: a class whose
/// `[tcp.mptcp]` names endpoints by `index` gets them resolved against this host's
/// addresses (index 0 its first; an index the host lacks is left out for it); the
/// shared list when no class does. Errors: (field, message).
fn host_configs(
    shared: &Rc<Vec<brisk_tcp::Config>>,
    w: &brisk_scenario::network::WorkloadSpec,
    addrs: &[IpAddr],
) -> Result<Rc<Vec<brisk_tcp::Config>>, (String, String)> {
    let knobs = std::iter::once(("workload".to_string(), &w.tcp)).chain(
        w.classes
            .iter()
            .enumerate()
            .map(|(i, c)| (format!("workload.class[{i}]"), &c.tcp)),
    );
    let mut own: Option<Vec<brisk_tcp::Config>> = None;
    for (c, (owner, t)) in knobs.enumerate() {
        let Some(m) = t.mptcp.as_ref().filter(|m| m.has_index_endpoints()) else {
            continue;
        };
        let mp = m
            .config_for_host(addrs)
            .map_err(|(k, msg)| (format!("{owner}.{k}"), msg))?;
        let list = own.get_or_insert_with(|| shared.as_ref().clone());
        list[c].mptcp = Some(Box::new(mp));
    }
    Ok(own.map_or_else(|| shared.clone(), Rc::new))
}

/// Routers (and hosts with several links but one address) get one entry per
/// destination address; a single-homed host sends everything up its one link; a
/// multi-homed host sends each of its addresses' packets up that address's link
/// (source routing). With ECMP a router's entry may be a group, picked by flow hash
/// with the router's own key (from the run's seed and its name).
fn install_routes(
    e: &mut Engine<SimNode>,
    g: &Graph,
    routing: &Routing,
    node_of: &[NodeId],
    link_entry: &[NodeId],
    seed: u64,
) {
    let nh = routing.hosts.len();
    for (i, n) in g.nodes().iter().enumerate() {
        let table = e.routes_mut(node_of[i]);
        if n.kind == NodeKind::Host && g.out_links(i).len() == 1 {
            table.set_default(link_entry[g.out_links(i)[0]]);
            continue;
        }
        let k = routing.host_ordinal[i] as usize;
        if n.kind == NodeKind::Host && routing.interface(k, 0).is_some() {
            for (a, ip) in host_addrs(routing, k).into_iter().enumerate() {
                if let Some(l) = routing.interface(k, a as u32) {
                    table.add_source(ip, link_entry[l]);
                }
            }
            continue;
        }
        let key = (
            derive_seed(seed, &format!("ecmp:{}", n.name), 0),
            derive_seed(seed, &format!("ecmp:{}", n.name), 1),
        );
        for d in 0..routing.dests.len() {
            let set = routing.next_links(i, d);
            match set.len() {
                0 => {}
                1 => table.add(dest_ip(d, nh), link_entry[set[0]]),
                _ => {
                    let nexts: Vec<NodeId> = set.iter().map(|&l| link_entry[l]).collect();
                    table.add_group(dest_ip(d, nh), &nexts, key);
                }
            }
        }
    }
}

fn busy(e: &Engine<SimNode>, entries: &[NodeId]) -> Vec<(u64, u64)> {
    entries
        .iter()
        .map(|&n| {
            e.node(n).as_link().map_or((0, 0), |l| {
                let c = l.link.counters();
                (c.busy_ns, c.dropped_total().packets)
            })
        })
        .collect()
}

/// Runs a network scenario.
pub fn run_net(sc: &NetScenario, seed: u64) -> Result<WorkloadResult, SimError> {
    run_net_controlled(sc, seed, &mut |_| true)
}

/// As [`run_net`]; `control` is called every [`STEP`] of simulated time and stops the
/// run when it returns false.
pub fn run_net_controlled(
    sc: &NetScenario,
    seed: u64,
    control: &mut dyn FnMut(Instant) -> bool,
) -> Result<WorkloadResult, SimError> {
    let mut b = build(sc, seed)?;
    let n = b.book.borrow().flows.len();
    let last_arrival = b
        .book
        .borrow()
        .flows
        .iter()
        .filter(|r| r.paced.is_none())
        .map(|r| r.start)
        .max()
        .unwrap_or(Instant::ZERO);
    let span = last_arrival - Instant::ZERO;
    let warmup = sc.workload.warmup.map_or(span / 10, |d| d.0);
    let t_warm = Instant::ZERO + warmup;
    // The window where the offered load is steady: warm-up end to last arrival.
    let t_meas = last_arrival.max(t_warm);
    let end_cap = Instant::ZERO + sc.duration.0;

    let mut at_warm = None;
    let mut at_meas = None;
    let mut t = Instant::ZERO;
    let mut stopped_early = false;
    let mut end = end_cap;
    let mut peak_connections = 0;
    let mut peak_total_connections = 0;
    while t < end {
        let mut next = (t + STEP).min(end);
        for c in [t_warm, t_meas] {
            if c > t && c < next {
                next = c;
            }
        }
        b.engine.run_until(next, &mut ());
        t = next;
        let mut total = 0;
        for n in b.engine.nodes() {
            if let Some(h) = n.as_wl_host() {
                let c = h.ep.connection_count();
                peak_connections = peak_connections.max(c);
                total += c;
            }
        }
        peak_total_connections = peak_total_connections.max(total);
        if t == t_warm && at_warm.is_none() {
            at_warm = Some(busy(&b.engine, &b.link_entry));
        }
        if t == t_meas && at_meas.is_none() {
            at_meas = Some(busy(&b.engine, &b.link_entry));
        }
        let done = {
            let book = b.book.borrow();
            book.completed as usize == n && book.received_all as usize == n
        };
        if done && t >= t_meas {
            end = t;
            break;
        }
        if !control(t) {
            end = t;
            stopped_early = true;
        }
    }
    let now_busy = busy(&b.engine, &b.link_entry);
    let w0 = at_warm.unwrap_or_else(|| vec![(0, 0); b.link_entry.len()]);
    let w1 = at_meas.unwrap_or_else(|| now_busy.clone());
    let window = dur_nanos(t_meas.saturating_duration_since(t_warm)).max(1);
    let mut util = Utilisation {
        window_s: window as f64 / 1e9,
        ..Utilisation::default()
    };
    let mut sums = [(0.0f64, 0usize, 0.0f64); 3]; // core, up, down: (sum, count, max)
    for l in 0..b.link_entry.len() {
        let u = (w1[l].0.saturating_sub(w0[l].0)) as f64 / window as f64;
        let class = if b.core[l] {
            0
        } else if b.up[l] {
            1
        } else {
            2
        };
        sums[class].0 += u;
        sums[class].1 += 1;
        sums[class].2 = sums[class].2.max(u);
        if b.core[l] {
            util.core_drops += now_busy[l].1;
        } else {
            util.access_drops += now_busy[l].1;
        }
    }
    let mean = |s: (f64, usize, f64)| if s.1 == 0 { 0.0 } else { s.0 / s.1 as f64 };
    (util.core_mean, util.core_max) = (mean(sums[0]), sums[0].2);
    (util.access_up_mean, util.access_up_max) = (mean(sums[1]), sums[1].2);
    (util.access_down_mean, util.access_down_max) = (mean(sums[2]), sums[2].2);

    let book = b.book.borrow();
    // The paced flow's FCT is its application's schedule: not in the FCT statistics.
    let measured: Vec<&FlowRecord> = book
        .flows
        .iter()
        .filter(|r| r.start >= t_warm && r.paced.is_none())
        .collect();
    let edges = sc.workload.bin_edges();
    let cdf_sizes: Vec<u64> = sc.workload.cdf_sizes.iter().map(|s| s.0).collect();
    let to_fct = |r: &&FlowRecord| FlowFct {
        size: r.size,
        fct_s: r.fct().filter(|_| r.intact()).map(|d| d.as_secs_f64()),
    };
    let all = FctStats::compute(
        &measured.iter().map(to_fct).collect::<Vec<_>>(),
        &edges,
        &cdf_sizes,
    );
    let configs = sc.workload.class_configs();
    let classes = configs
        .iter()
        .enumerate()
        .map(|(c, (name, cfg))| {
            let fl: Vec<FlowFct> = measured
                .iter()
                .filter(|r| usize::from(r.class) == c)
                .map(to_fct)
                .collect();
            ClassResult {
                name: name.clone(),
                cc: cfg.cc_name(),
                hosts: b
                    .host_class
                    .iter()
                    .filter(|&&k| usize::from(k) == c)
                    .count(),
                stats: FctStats::compute(&fl, &edges, &cdf_sizes),
            }
        })
        .collect();
    let not_intact = measured
        .iter()
        .filter(|r| r.acked.is_some() && !r.intact())
        .count();
    let errors = measured.iter().filter(|r| r.error.is_some()).count();
    let g_hosts = b.host_class.len();
    let routers = b
        .engine
        .nodes()
        .iter()
        .filter(|x| matches!(x, SimNode::Router(_)))
        .count();
    Ok(WorkloadResult {
        scenario: sc.name.clone(),
        seed,
        duration: end - Instant::ZERO,
        hosts: g_hosts,
        routers,
        links: b.link_entry.len(),
        fifo_routers: b.fifo_routers.clone(),
        target_load: sc.workload.load,
        arrival_rate: b.arrival_rate,
        mean_core_hops: b.mean_core_hops,
        warmup,
        flows: book.flows.clone(),
        not_intact,
        errors,
        unknown_accepts: book.unknown_accepts,
        utilisation: util,
        all,
        classes,
        engine: b.engine.stats().clone(),
        peak_connections,
        peak_total_connections,
        interrupted: stopped_early.then(|| crate::outcome::Interruption {
            at: end - Instant::ZERO,
            of: sc.duration.0,
            signal: None,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_classes_split_every_router_in_order() {
        // Two routers with 4 and 3 hosts; classes of 1/2 and 1/4.
        let groups = BTreeMap::from([(10, vec![0, 1, 2, 3]), (11, vec![4, 5, 6])]);
        let c = assign_classes(&groups, &[(1, 0.5), (2, 0.25)], 7);
        // Router 10: 2 hosts class 1, then round(0.75·4) − 2 = 1 host class 2, 1 base.
        // Router 11: round(1.5) = 2 hosts class 1, round(2.25) − 2 = 0 class 2, 1 base.
        assert_eq!(c, vec![1, 1, 2, 0, 1, 1, 0]);
        assert_eq!(assign_classes(&groups, &[], 7), vec![0; 7]);
    }

    #[test]
    fn host_addresses_are_distinct() {
        let ips: std::collections::BTreeSet<IpAddr> =
            (0..crate::graph::MAX_NODES).map(host_ip).collect();
        assert_eq!(ips.len(), crate::graph::MAX_NODES);
    }
}
