//! A network scenario's graph: the generator's or the explicit entries' nodes and
//! links, the seeded changes (heterogeneous core rates, routers without priorities) and
//! the routes, built from brisk-scenario's words ([`brisk_scenario::network`]).
//!
//! Loading a network scenario here ([`load`], [`from_toml_str_named`]) is brisk-scenario's
//! parse and checks, then a trial build of the graph, so that what only a graph shows
//! (an unknown or repeated node name, an unreachable host, a bad edge-list line)
//! surfaces at load too, naming the field.

use brisk_scenario::network::{NetScenario, RoutingMode, SourceAddress, TopoKind, TopologySpec};
use brisk_scenario::ScenarioError;
use rand::{Rng, SeedableRng};
use std::path::Path;

use crate::graph::{Graph, GraphError, NodeKind};
use crate::topo_gen;
use crate::topology::derive_seed;

/// (field, message), as the scenario's checks return them.
type Field = (String, String);

/// Loads, checks and trial-builds the network scenario in `path`.
pub fn load(path: &Path) -> Result<NetScenario, ScenarioError> {
    let (file, text) = brisk_scenario::input::read_file(path)?;
    from_toml_str_named(&text, &file)
}

/// Parses, checks and trial-builds; `file` labels errors and is where `edges` files are
/// resolved from.
pub fn from_toml_str_named(text: &str, file: &str) -> Result<NetScenario, ScenarioError> {
    let sc = NetScenario::from_toml_str_named(text, file)?;
    let err = |(field, message): Field| ScenarioError {
        file: file.to_string(),
        field,
        message,
    };
    let g = graph(&sc).map_err(err)?;
    if let Some(SourceAddress::Address(ip)) = sc.workload.source_address {
        let r = g
            .routes_with(sc.routing == RoutingMode::Ecmp)
            .map_err(|e| err(("topology".into(), e.to_string())))?;
        let n = r.hosts.len();
        if !(0..r.dests.len()).any(|d| crate::wl_run::dest_ip(d, n) == ip) {
            return Err(err((
                "workload.source_address".into(),
                format!("no host has address {ip}"),
            )));
        }
    }
    Ok(sc)
}

/// [`from_toml_str_named`] for text without a file.
pub fn from_toml_str(text: &str) -> Result<NetScenario, ScenarioError> {
    from_toml_str_named(text, "<string>")
}

/// The topology's graph with the scenario's own seed.
pub fn graph(sc: &NetScenario) -> Result<Graph, Field> {
    graph_seeded(sc, sc.seed).map(|(g, _)| g)
}

/// The topology's graph, its seeded choices made with `seed`, and the routers made
/// FIFO (`fifo_routers`). Returns (field, message) naming the element.
pub fn graph_seeded(sc: &NetScenario, seed: u64) -> Result<(Graph, Vec<String>), Field> {
    sc.validate_topology()?;
    let gerr = |f: &'static str| move |e: GraphError| (f.to_string(), e.to_string());
    let mut fifo = Vec::new();
    let g = match &sc.topology {
        None => explicit_graph(sc, seed)?,
        Some(t) => {
            let l = t.links();
            let mut g = match t.kind {
                TopoKind::Internet2 => {
                    topo_gen::internet2(t.hosts_per_router(), &l).map_err(gerr("topology"))?
                }
                TopoKind::FatTree => {
                    topo_gen::fat_tree(t.k.unwrap_or(0), &l).map_err(gerr("topology"))?
                }
                TopoKind::Dumbbell => {
                    let Some(b) = &t.bottleneck else {
                        // Refused by `validate_topology` already.
                        return Err(("topology.bottleneck".into(), "missing".into()));
                    };
                    topo_gen::dumbbell(t.hosts_per_side.unwrap_or(0), b, &l)
                        .map_err(gerr("topology"))?
                }
                TopoKind::Edges => {
                    let text = sc.edge_text.as_deref().unwrap_or("");
                    topo_gen::edge_list(text, t.hosts_per_router(), &l)
                        .map_err(|e| ("topology.file".to_string(), e.to_string()))?
                }
            };
            fifo = randomise(t, &mut g, seed);
            g
        }
    };
    g.routes_with(sc.routing == RoutingMode::Ecmp)
        .map_err(gerr("topology"))?;
    Ok((g, fifo))
}

/// Seeded changes after generation: heterogeneous core rates, routers without
/// priorities. Returns the names of the routers made FIFO. The fields were checked
/// (`TopologySpec::validate`).
fn randomise(t: &TopologySpec, g: &mut Graph, seed: u64) -> Vec<String> {
    if let Some(max) = t.core_rate_max {
        let mut rng =
            rand_chacha::ChaCha8Rng::seed_from_u64(derive_seed(seed, "topology-core-rates", 0));
        for l in 0..g.links().len() {
            let (from, to) = (g.links()[l].from, g.links()[l].to);
            if !g.is_core(l) || from > to {
                continue; // one draw per pair, in link order
            }
            let r = brisk_scenario::units::Rate(rng.gen_range(t.rate.0..=max.0));
            g.link_spec_mut(l).rate = Some(r);
            if let Some(back) = g.reverse_of(l) {
                g.link_spec_mut(back).rate = Some(r);
            }
        }
    }
    let Some(f) = t.fifo_routers else {
        return Vec::new();
    };
    let mut routers: Vec<usize> = (0..g.nodes().len())
        .filter(|&i| g.nodes()[i].kind == NodeKind::Router)
        .collect();
    let n = ((f * routers.len() as f64).round() as usize).min(routers.len());
    let mut rng =
        rand_chacha::ChaCha8Rng::seed_from_u64(derive_seed(seed, "topology-fifo-routers", 0));
    // A partial Fisher-Yates shuffle: the first n are a uniform sample.
    for i in 0..n {
        let j = rng.gen_range(i..routers.len());
        routers.swap(i, j);
    }
    let mut chosen: Vec<usize> = routers[..n].to_vec();
    chosen.sort_unstable();
    for &r in &chosen {
        for l in g.out_links(r).to_vec() {
            g.link_spec_mut(l).queue = t.fifo_queue.clone();
        }
    }
    chosen.iter().map(|&r| g.nodes()[r].name.clone()).collect()
}

/// The explicit `[[node]]` and `[[link]]` entries (their links checked already);
/// path models (`model = "wlan"`) drawn with `seed`, one stream per link.
fn explicit_graph(sc: &NetScenario, seed: u64) -> Result<Graph, Field> {
    let mut g = Graph::new();
    for (i, n) in sc.nodes.iter().enumerate() {
        let at = g
            .add_node(&n.name, n.kind)
            .map_err(|e| (format!("node[{i}].name"), e.to_string()))?;
        if let Some(a) = n.addresses {
            g.set_addresses(at, a)
                .map_err(|e| (format!("node[{i}].addresses"), e.to_string()))?;
        }
    }
    for (i, l) in sc.links.iter().enumerate() {
        let (ab, ba) = match l.model {
            Some(m) => {
                let spec = m.draw_for_run(seed, i);
                (spec.clone(), spec)
            }
            None => (l.forward(), l.backward()),
        };
        g.connect(&l.a, &l.b, ab, ba)
            .map_err(|e| (format!("link[{i}]"), e.to_string()))?;
    }
    Ok(g)
}
