//! Multi-hop topologies: hosts and routers joined by directed links, with shortest-path
//! routing computed once when the network is built (issue 11 §1; RC3, NSDI 2014, §5.1;
//! spec `rc3.md` §2.1 and A7).
//!
//! A [`Graph`] holds named nodes and directed links, each link a full brisk-scenario
//! [`LinkSpec`] (rate, delay, queue kind, loss), so a link is exactly what the dumbbell's
//! bottleneck is. Routing ([`Graph::routes`]) picks, for every node and destination
//! host, the out-link on a path of **least total propagation delay** (the links'
//! `delay`); equal delays go to the path with fewer hops, then to the next node with the
//! lower index, then to the lower link index, so the choice is deterministic. Hosts never
//! forward: a path may start and end at a host but not pass through one. That one path
//! is the route with `routing = "shortest"` (the default; a fat tree's core then carries
//! traffic unevenly, see docs/mechanisms/rc3.md); [`Graph::routes_with`] with ECMP also
//! keeps, where several out-links tie on (delay, hops), the whole equal-cost set
//! ([`Routing::next_links`]), from which the simulator's routers pick by flow hash.
//!
//! Multi-homed hosts ([`Graph::set_addresses`]): a host with N ≥ 2 addresses has exactly
//! N links, address i on its i-th link (in the order the links were added). Routes are
//! computed per *address*: a route to address i ends on the link into interface i, and a
//! packet from address i leaves on interface i (source routing at the host, as a Linux
//! host with one routing table per address does). Destinations are numbered: host
//! ordinal k is host k's first address; the further addresses of multi-homed hosts
//! follow, in host order ([`Routing::dest`]).
//!
//! The generators (`internet2`, `fat_tree`, `dumbbell`, an edge list) live in
//! [`crate::topo_gen`], the building from a scenario in [`crate::topo_build`]; the
//! scenario syntax in brisk-scenario's `network`.

use brisk_scenario::link::LinkSpec;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// Most nodes (hosts plus routers) in one graph.
pub const MAX_NODES: usize = 10_000;
/// Most directed links in one graph.
pub const MAX_LINKS: usize = 100_000;
/// Most (router, host) route entries (bounds the routing tables' memory: 8 bytes each).
pub const MAX_ROUTE_ENTRIES: usize = 20_000_000;

/// What a node does: a word of the scenario (`[[node]] kind = "host"`).
pub use brisk_scenario::network::NodeKind;

#[derive(Clone, Debug)]
pub struct GraphNode {
    pub name: String,
    pub kind: NodeKind,
    /// Addresses of a host (1, or N ≥ 2 for a multi-homed one, one per link).
    pub addresses: u32,
}

/// Most addresses of one host: an endpoint's bound (`brisk_tcp::MAX_ADDRESSES`).
pub const MAX_HOST_ADDRESSES: u32 = brisk_tcp::MAX_ADDRESSES as u32;

/// One direction of a link.
#[derive(Clone, Debug)]
pub struct GraphLink {
    pub from: usize,
    pub to: usize,
    pub spec: LinkSpec,
}

impl GraphLink {
    /// Propagation delay in ns (the routing metric).
    pub fn delay_ns(&self) -> u64 {
        self.spec.delay.map_or(0, |d| brisk_time::dur_nanos(d.0))
    }
}

/// A topology problem, naming the element.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    /// Two nodes with one name.
    #[error("node \"{0}\" is defined twice")]
    DuplicateNode(String),
    /// A name that is not a node's.
    #[error("link {link}: unknown node \"{name}\"")]
    UnknownNode { link: String, name: String },
    /// A link from a node to itself.
    #[error("link {0}: a node cannot link to itself")]
    SelfLoop(String),
    /// A link with rate 0.
    #[error("link {0}: rate must be greater than 0 (omit it for an unlimited link)")]
    ZeroRate(String),
    /// The same direction defined twice.
    #[error("link {0} is defined twice")]
    DuplicateLink(String),
    /// Bigger than the stated bound.
    #[error("{what}: {n}, at most {max} are supported")]
    TooBig {
        what: &'static str,
        n: usize,
        max: usize,
    },
    /// A host that some other host cannot reach.
    #[error("host \"{to}\" is unreachable from host \"{from}\" (disconnected graph)")]
    Unreachable { from: String, to: String },
    /// Fewer than two hosts.
    #[error("the topology needs at least two hosts, it has {0}")]
    TooFewHosts(usize),
    /// A multi-homed host whose link count differs from its address count.
    #[error("host \"{name}\" has {addresses} addresses but {links} links: a multi-homed host needs one link per address (address i on its i-th link)")]
    Interfaces {
        name: String,
        addresses: u32,
        links: usize,
    },
    /// An address count out of range, or on a router.
    #[error("node \"{name}\": addresses must be between 1 and {max} (hosts only), got {n}")]
    Addresses { name: String, n: u32, max: u32 },
}

/// A topology: nodes and directed links.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    nodes: Vec<GraphNode>,
    links: Vec<GraphLink>,
    by_name: HashMap<String, usize>,
    /// Out-links of each node, in insertion order.
    out: Vec<Vec<usize>>,
    /// In-links of each node.
    inc: Vec<Vec<usize>>,
    dir: HashMap<(usize, usize), usize>,
}

/// Where every host's traffic goes: `next[node][host ordinal]` is the out-link to take
/// (`NONE` at the host itself or where unreachable). Only routers and hosts with more
/// than one out-link have a row; a single-homed host always uses its one uplink.
#[derive(Clone, Debug)]
pub struct Routing {
    /// Host ordinal → node index.
    pub hosts: Vec<usize>,
    /// Node index → host ordinal (`NONE` for routers).
    pub host_ordinal: Vec<u32>,
    /// Destination → (host ordinal, address index): first the hosts' first addresses
    /// (destination k is host ordinal k), then the further addresses of multi-homed
    /// hosts in host order.
    pub dests: Vec<(u32, u32)>,
    /// Host ordinal → its destination numbers beyond the first (empty if single-homed).
    more: Vec<Vec<u32>>,
    /// Host ordinal → its out-link per address (empty if not multi-homed).
    ifaces: Vec<Vec<u32>>,
    next: Vec<Option<Vec<u32>>>,
    single: Vec<Option<u32>>,
    /// With ECMP: (node, destination) → every out-link of equal least cost, where
    /// there are at least two (the row holds the first of them).
    ecmp: HashMap<(u32, u32), Box<[u32]>>,
}

/// "No link" in a routing row.
pub const NONE: u32 = u32::MAX;

impl Routing {
    /// The out-link `node` uses towards host ordinal `dst`.
    pub fn next_link(&self, node: usize, dst: usize) -> Option<usize> {
        if self.host_ordinal[node] as usize == dst {
            return None;
        }
        match (&self.next[node], self.single[node]) {
            (Some(row), _) => (row[dst] != NONE).then_some(row[dst] as usize),
            (None, Some(l)) => Some(l as usize),
            (None, None) => None,
        }
    }

    /// Every out-link of least cost from `node` towards destination `dst`: the ECMP
    /// set where routing kept one, else the one route.
    pub fn next_links(&self, node: usize, dst: usize) -> Vec<usize> {
        if let Some(set) = self.ecmp.get(&(node as u32, dst as u32)) {
            return set.iter().map(|&l| l as usize).collect();
        }
        self.next_link(node, dst).into_iter().collect()
    }

    /// Whether any node has more than one equal-cost next hop.
    pub fn has_ecmp(&self) -> bool {
        !self.ecmp.is_empty()
    }

    /// The destination number of host ordinal `host`'s address `index`.
    pub fn dest(&self, host: usize, index: u32) -> Option<usize> {
        match index {
            0 => (host < self.hosts.len()).then_some(host),
            i => self
                .more
                .get(host)?
                .get(i as usize - 1)
                .map(|&d| d as usize),
        }
    }

    /// Addresses of host ordinal `host`.
    pub fn address_count(&self, host: usize) -> u32 {
        1 + self.more.get(host).map_or(0, |m| m.len() as u32)
    }

    /// The out-link a multi-homed host ordinal `host` sends from its address `index`
    /// on (`None` for a host that is not multi-homed).
    pub fn interface(&self, host: usize, index: u32) -> Option<usize> {
        self.ifaces
            .get(host)?
            .get(index as usize)
            .map(|&l| l as usize)
    }

    /// The links from host ordinal `src` to host ordinal `dst` (bounded by the node
    /// count, so a routing loop, which shortest paths cannot make, cannot hang it).
    /// A multi-homed source sends from its first address.
    pub fn path(&self, g: &Graph, src: usize, dst: usize) -> Option<Vec<usize>> {
        self.path_from(g, src, 0, dst)
    }

    /// The links from host ordinal `src`'s address `index` to destination `dst`, along
    /// the single (first) route at every node.
    pub fn path_from(&self, g: &Graph, src: usize, index: u32, dst: usize) -> Option<Vec<usize>> {
        let mut at = self.hosts[src];
        let goal = self.hosts[self.dests.get(dst)?.0 as usize];
        let mut out = Vec::new();
        if let Some(l) = self.interface(src, index) {
            out.push(l);
            at = g.links[l].to;
        }
        while at != goal {
            let l = self.next_link(at, dst)?;
            out.push(l);
            at = g.links[l].to;
            if out.len() > g.nodes.len() {
                return None;
            }
        }
        Some(out)
    }
}

/// A label for errors: `a->b`.
fn link_label(a: &str, b: &str) -> String {
    format!("{a}->{b}")
}

impl Graph {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn nodes(&self) -> &[GraphNode] {
        &self.nodes
    }
    pub fn links(&self) -> &[GraphLink] {
        &self.links
    }
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }
    pub fn out_links(&self, node: usize) -> &[usize] {
        &self.out[node]
    }
    /// The description of link `l`, to adjust after generation.
    pub fn link_spec_mut(&mut self, l: usize) -> &mut LinkSpec {
        &mut self.links[l].spec
    }
    /// The link in the opposite direction of `l`, if any.
    pub fn reverse_of(&self, l: usize) -> Option<usize> {
        self.dir
            .get(&(self.links[l].to, self.links[l].from))
            .copied()
    }
    /// Host node indices, in node order.
    pub fn hosts(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].kind == NodeKind::Host)
            .collect()
    }
    /// A link is *core* when neither end is a host (spec A8's "core links").
    pub fn is_core(&self, link: usize) -> bool {
        let l = &self.links[link];
        self.nodes[l.from].kind == NodeKind::Router && self.nodes[l.to].kind == NodeKind::Router
    }

    /// Adds a node; names are unique.
    /// Gives host `node` `n` addresses (see the module doc); its links must then be
    /// exactly `n`, checked when routes are computed.
    pub fn set_addresses(&mut self, node: usize, n: u32) -> Result<(), GraphError> {
        let gn = &mut self.nodes[node];
        if n == 0 || n > MAX_HOST_ADDRESSES || (gn.kind == NodeKind::Router && n != 1) {
            return Err(GraphError::Addresses {
                name: gn.name.clone(),
                n,
                max: MAX_HOST_ADDRESSES,
            });
        }
        gn.addresses = n;
        Ok(())
    }

    pub fn add_node(&mut self, name: &str, kind: NodeKind) -> Result<usize, GraphError> {
        if self.by_name.contains_key(name) {
            return Err(GraphError::DuplicateNode(name.to_string()));
        }
        if self.nodes.len() == MAX_NODES {
            return Err(GraphError::TooBig {
                what: "nodes",
                n: MAX_NODES + 1,
                max: MAX_NODES,
            });
        }
        let i = self.nodes.len();
        self.nodes.push(GraphNode {
            name: name.to_string(),
            kind,
            addresses: 1,
        });
        self.by_name.insert(name.to_string(), i);
        self.out.push(Vec::new());
        self.inc.push(Vec::new());
        Ok(i)
    }

    /// Adds the directed link `a -> b` (by name).
    pub fn add_link(&mut self, a: &str, b: &str, spec: LinkSpec) -> Result<usize, GraphError> {
        let label = link_label(a, b);
        let find = |n: &str| {
            self.node_index(n).ok_or_else(|| GraphError::UnknownNode {
                link: label.clone(),
                name: n.to_string(),
            })
        };
        let (from, to) = (find(a)?, find(b)?);
        if from == to {
            return Err(GraphError::SelfLoop(label));
        }
        if spec.rate.is_some_and(|r| r.0 == 0) {
            return Err(GraphError::ZeroRate(label));
        }
        if self.dir.contains_key(&(from, to)) {
            return Err(GraphError::DuplicateLink(label));
        }
        if self.links.len() == MAX_LINKS {
            return Err(GraphError::TooBig {
                what: "directed links",
                n: MAX_LINKS + 1,
                max: MAX_LINKS,
            });
        }
        let i = self.links.len();
        self.links.push(GraphLink { from, to, spec });
        self.out[from].push(i);
        self.inc[to].push(i);
        self.dir.insert((from, to), i);
        Ok(i)
    }

    /// Adds `a -> b` with `ab` and `b -> a` with `ba`.
    pub fn connect(
        &mut self,
        a: &str,
        b: &str,
        ab: LinkSpec,
        ba: LinkSpec,
    ) -> Result<(), GraphError> {
        self.add_link(a, b, ab)?;
        self.add_link(b, a, ba)?;
        Ok(())
    }

    /// Shortest-path routes to every host (see the module doc for the metric and the
    /// tie-breaks). Errors name the first pair with no path, by destination then
    /// source, in node order.
    pub fn routes(&self) -> Result<Routing, GraphError> {
        self.routes_with(false)
    }

    /// [`routes`](Self::routes), and with `ecmp` the equal-cost sets too.
    pub fn routes_with(&self, ecmp: bool) -> Result<Routing, GraphError> {
        let hosts = self.hosts();
        if hosts.len() < 2 {
            return Err(GraphError::TooFewHosts(hosts.len()));
        }
        let n = self.nodes.len();
        let mut host_ordinal = vec![NONE; n];
        for (k, &h) in hosts.iter().enumerate() {
            host_ordinal[h] = k as u32;
        }
        // Destinations: every host's first address, then the further ones.
        let mut dests: Vec<(u32, u32)> = (0..hosts.len() as u32).map(|k| (k, 0)).collect();
        let mut more = vec![Vec::new(); hosts.len()];
        let mut ifaces = vec![Vec::new(); hosts.len()];
        for (k, &h) in hosts.iter().enumerate() {
            let a = self.nodes[h].addresses;
            if a < 2 {
                continue;
            }
            if self.out[h].len() != a as usize {
                return Err(GraphError::Interfaces {
                    name: self.nodes[h].name.clone(),
                    addresses: a,
                    links: self.out[h].len(),
                });
            }
            ifaces[k] = self.out[h].iter().map(|&l| l as u32).collect();
            for i in 1..a {
                more[k].push(dests.len() as u32);
                dests.push((k as u32, i));
            }
        }
        let single: Vec<Option<u32>> = (0..n)
            .map(|i| {
                (self.nodes[i].kind == NodeKind::Host && self.out[i].len() == 1)
                    .then(|| self.out[i][0] as u32)
            })
            .collect();
        let rows = single.iter().filter(|s| s.is_none()).count();
        if rows.saturating_mul(dests.len()) > MAX_ROUTE_ENTRIES {
            return Err(GraphError::TooBig {
                what: "route entries (routers × host addresses)",
                n: rows.saturating_mul(dests.len()),
                max: MAX_ROUTE_ENTRIES,
            });
        }
        let mut next: Vec<Option<Vec<u32>>> = single
            .iter()
            .map(|s| s.is_none().then(|| vec![NONE; dests.len()]))
            .collect();
        let mut sets = HashMap::new();
        let mut dist = vec![(u64::MAX, u32::MAX); n];
        for (d, &(k, idx)) in dests.iter().enumerate() {
            let t = hosts[k as usize];
            // A multi-homed host's address is reached only over its own link.
            let via = ifaces[k as usize]
                .get(idx as usize)
                .and_then(|&l| self.reverse_of(l as usize));
            if !ifaces[k as usize].is_empty() && via.is_none() {
                return Err(GraphError::Unreachable {
                    from: self.nodes[self.links[ifaces[k as usize][idx as usize] as usize].to]
                        .name
                        .clone(),
                    to: format!("{} address {idx}", self.nodes[t].name),
                });
            }
            self.shortest_to(t, via, &mut dist);
            for m in 0..n {
                if m == t || dist[m].0 == u64::MAX {
                    continue;
                }
                let Some(row) = &mut next[m] else { continue };
                // The out-links on a shortest path; ties as the module doc says.
                let cost = |l: usize| {
                    let to = self.links[l].to;
                    (
                        dist[to].0.saturating_add(self.links[l].delay_ns()),
                        dist[to].1 + 1,
                    )
                };
                let usable = |l: &&usize| {
                    let to = self.links[**l].to;
                    dist[to].0 != u64::MAX
                        && (to == t || self.nodes[to].kind == NodeKind::Router)
                        && (to != t || via.is_none_or(|v| v == **l))
                };
                let best = self.out[m]
                    .iter()
                    .filter(usable)
                    .min_by_key(|&&l| (cost(l), self.links[l].to, l));
                let Some(&l) = best else { continue };
                row[d] = l as u32;
                if ecmp && self.nodes[m].kind == NodeKind::Router {
                    let c = cost(l);
                    let mut set: Vec<usize> = self.out[m]
                        .iter()
                        .filter(usable)
                        .copied()
                        .filter(|&o| cost(o) == c)
                        .collect();
                    if set.len() > 1 {
                        set.sort_by_key(|&o| (self.links[o].to, o));
                        sets.insert(
                            (m as u32, d as u32),
                            set.into_iter().map(|o| o as u32).collect(),
                        );
                    }
                }
            }
            // Every other host must reach this address.
            if let Some(&s) = hosts.iter().find(|&&s| s != t && dist[s].0 == u64::MAX) {
                return Err(GraphError::Unreachable {
                    from: self.nodes[s].name.clone(),
                    to: if idx == 0 {
                        self.nodes[t].name.clone()
                    } else {
                        format!("{} address {idx}", self.nodes[t].name)
                    },
                });
            }
        }
        Ok(Routing {
            hosts,
            host_ordinal,
            dests,
            more,
            ifaces,
            next,
            single,
            ecmp: sets,
        })
    }

    /// Dijkstra towards `t` over the reversed links: `dist[m]` = (least delay, fewest
    /// hops at that delay) from `m` to `t`. Hosts other than `t` are not relaxed through.
    /// With `via`, `t` is entered only over that link (an address's own interface).
    fn shortest_to(&self, t: usize, via: Option<usize>, dist: &mut [(u64, u32)]) {
        dist.iter_mut().for_each(|d| *d = (u64::MAX, u32::MAX));
        dist[t] = (0, 0);
        let mut heap = BinaryHeap::new();
        heap.push(Reverse((0u64, 0u32, t)));
        while let Some(Reverse((d, h, v))) = heap.pop() {
            if (d, h) > dist[v] {
                continue;
            }
            if v != t && self.nodes[v].kind == NodeKind::Host {
                continue; // a host is a path's start, never a transit node
            }
            for &l in &self.inc[v] {
                if v == t && via.is_some_and(|x| x != l) {
                    continue;
                }
                let u = self.links[l].from;
                let cand = (d.saturating_add(self.links[l].delay_ns()), h + 1);
                if cand < dist[u] {
                    dist[u] = cand;
                    heap.push(Reverse((cand.0, cand.1, u)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Dur, Rate};
    use brisk_time::Duration;

    fn spec(ms: u64) -> LinkSpec {
        LinkSpec {
            rate: Some(Rate(1_000_000_000)),
            delay: Some(Dur(Duration::from_millis(ms))),
            ..LinkSpec::default()
        }
    }

    /// h0 - A - B - h1, plus a slower detour A - C - B.
    fn diamond(detour_ms: u64) -> Graph {
        let mut g = Graph::new();
        for r in ["A", "B", "C"] {
            g.add_node(r, NodeKind::Router).unwrap();
        }
        for h in ["h0", "h1"] {
            g.add_node(h, NodeKind::Host).unwrap();
        }
        g.connect("h0", "A", spec(0), spec(0)).unwrap();
        g.connect("h1", "B", spec(0), spec(0)).unwrap();
        g.connect("A", "C", spec(detour_ms), spec(detour_ms))
            .unwrap();
        g.connect("C", "B", spec(detour_ms), spec(detour_ms))
            .unwrap();
        g.connect("A", "B", spec(10), spec(10)).unwrap();
        g
    }

    fn names(g: &Graph, path: &[usize]) -> Vec<String> {
        path.iter()
            .map(|&l| g.nodes()[g.links()[l].to].name.clone())
            .collect()
    }

    #[test]
    fn routes_follow_least_delay_not_fewest_hops() {
        let g = diamond(2); // A-C-B is 4 ms, A-B 10 ms
        let r = g.routes().unwrap();
        assert_eq!(names(&g, &r.path(&g, 0, 1).unwrap()), ["A", "C", "B", "h1"]);
        let g = diamond(6); // 12 ms: the direct link wins
        let r = g.routes().unwrap();
        assert_eq!(names(&g, &r.path(&g, 0, 1).unwrap()), ["A", "B", "h1"]);
        assert_eq!(names(&g, &r.path(&g, 1, 0).unwrap()), ["B", "A", "h0"]);
    }

    #[test]
    fn equal_delay_prefers_fewer_hops() {
        let g = diamond(5); // both 10 ms; direct has fewer hops
        let r = g.routes().unwrap();
        assert_eq!(names(&g, &r.path(&g, 0, 1).unwrap()), ["A", "B", "h1"]);
    }

    #[test]
    fn hosts_do_not_forward() {
        // h0 - A, h0 - B, h1 - B: A reaches h1 only through the host h0, which is refused.
        let mut g = Graph::new();
        g.add_node("A", NodeKind::Router).unwrap();
        g.add_node("B", NodeKind::Router).unwrap();
        g.add_node("h0", NodeKind::Host).unwrap();
        g.add_node("h1", NodeKind::Host).unwrap();
        g.add_node("h2", NodeKind::Host).unwrap();
        g.connect("h0", "A", spec(0), spec(0)).unwrap();
        g.connect("h0", "B", spec(0), spec(0)).unwrap();
        g.connect("h1", "B", spec(0), spec(0)).unwrap();
        g.connect("h2", "A", spec(0), spec(0)).unwrap();
        assert_eq!(
            g.routes().unwrap_err(),
            GraphError::Unreachable {
                from: "h2".into(),
                to: "h1".into()
            }
        );
    }

    #[test]
    fn errors_name_the_element() {
        let mut g = Graph::new();
        g.add_node("A", NodeKind::Router).unwrap();
        assert_eq!(
            g.add_node("A", NodeKind::Host),
            Err(GraphError::DuplicateNode("A".into()))
        );
        assert_eq!(
            g.add_link("A", "Z", spec(1)),
            Err(GraphError::UnknownNode {
                link: "A->Z".into(),
                name: "Z".into()
            })
        );
        assert_eq!(
            g.add_link("A", "A", spec(1)),
            Err(GraphError::SelfLoop("A->A".into()))
        );
        g.add_node("B", NodeKind::Router).unwrap();
        let zero = LinkSpec {
            rate: Some(Rate(0)),
            ..LinkSpec::default()
        };
        assert_eq!(
            g.add_link("A", "B", zero),
            Err(GraphError::ZeroRate("A->B".into()))
        );
        g.add_link("A", "B", spec(1)).unwrap();
        assert_eq!(
            g.add_link("A", "B", spec(1)),
            Err(GraphError::DuplicateLink("A->B".into()))
        );
        assert_eq!(g.routes().unwrap_err(), GraphError::TooFewHosts(0));
        let msg = GraphError::Unreachable {
            from: "h1".into(),
            to: "h2".into(),
        }
        .to_string();
        assert!(msg.contains("\"h1\"") && msg.contains("\"h2\""), "{msg}");
    }

    #[test]
    fn routes_on_random_graphs_are_shortest_and_never_cross_a_host() {
        use rand::{Rng, SeedableRng};
        for seed in 0..20u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let (nr, nh) = (rng.gen_range(2..9), rng.gen_range(2..6));
            let mut g = Graph::new();
            for r in 0..nr {
                g.add_node(&format!("r{r}"), NodeKind::Router).unwrap();
            }
            // A chain keeps the routers connected; random extra links with random delays.
            for r in 1..nr {
                let d = rng.gen_range(1..20);
                g.connect(&format!("r{}", r - 1), &format!("r{r}"), spec(d), spec(d))
                    .unwrap();
            }
            for _ in 0..nr * 2 {
                let (a, b) = (rng.gen_range(0..nr), rng.gen_range(0..nr));
                if a != b {
                    let _ = g.add_link(
                        &format!("r{a}"),
                        &format!("r{b}"),
                        spec(rng.gen_range(1..20)),
                    );
                }
            }
            for h in 0..nh {
                let name = format!("h{h}");
                g.add_node(&name, NodeKind::Host).unwrap();
                let r = format!("r{}", rng.gen_range(0..nr));
                g.connect(&name, &r, spec(1), spec(1)).unwrap();
            }
            // Floyd-Warshall over routers only, plus each host's access link.
            let n = g.nodes().len();
            let mut d = vec![vec![u64::MAX / 4; n]; n];
            for (i, row) in d.iter_mut().enumerate() {
                row[i] = 0;
            }
            for l in g.links() {
                d[l.from][l.to] = d[l.from][l.to].min(l.delay_ns());
            }
            for k in 0..n {
                if g.nodes()[k].kind == NodeKind::Host {
                    continue; // no transit through hosts
                }
                for i in 0..n {
                    for j in 0..n {
                        d[i][j] = d[i][j].min(d[i][k] + d[k][j]);
                    }
                }
            }
            let r = g.routes().unwrap();
            for s in 0..nh {
                for t in 0..nh {
                    let p = r.path(&g, s, t).unwrap();
                    let delay: u64 = p.iter().map(|&l| g.links()[l].delay_ns()).sum();
                    assert_eq!(
                        delay, d[r.hosts[s]][r.hosts[t]],
                        "seed {seed}: h{s} -> h{t}"
                    );
                    // Only the last node of a path may be a host.
                    for &l in &p[..p.len().saturating_sub(1)] {
                        assert_eq!(g.nodes()[g.links()[l].to].kind, NodeKind::Router);
                    }
                }
            }
        }
    }

    #[test]
    fn node_count_is_bounded() {
        let mut g = Graph::new();
        for i in 0..MAX_NODES {
            g.add_node(&format!("n{i}"), NodeKind::Router).unwrap();
        }
        assert!(matches!(
            g.add_node("one-more", NodeKind::Router),
            Err(GraphError::TooBig { what: "nodes", .. })
        ));
    }
}
