//! Built-in topologies: the Abilene-like Internet2 graph RC3 was evaluated on (NSDI 2014
//! §5.1; spec `rc3.md` A7), a k-ary fat tree (RC3 §5.1.2's datacenter remark, spec
//! RC3-10), a dumbbell with many hosts per side, and an edge-list loader for
//! Rocketfuel / Topology-Zoo style graphs (RC3 Table 1's Telstra, RedClara, ESNet,
//! which are not shipped: see docs/mechanisms/rc3.md).
//!
//! Every generator takes a [`Links`] describing the three kinds of link: router-router
//! ("core"), a router's port towards a host, and the host's own uplink (its NIC queue,
//! which RC3 wants large and strict-priority).

use brisk_scenario::link::LinkSpec;

use crate::graph::{Graph, GraphError, NodeKind};
use crate::units::{Dur, Rate};

/// The three link descriptions a generator uses (a topology's words).
pub use brisk_scenario::network::Links;

/// Abilene's routers with Indianapolis merged into Chicago (spec A7).
pub const INTERNET2_ROUTERS: [&str; 10] = [
    "NYC", "CHI", "WDC", "ATL", "KSC", "HOU", "DEN", "SNV", "SEA", "LAX",
];
/// Its 13 router-router links (spec A7).
pub const INTERNET2_LINKS: [(&str, &str); 13] = [
    ("NYC", "CHI"),
    ("NYC", "WDC"),
    ("CHI", "ATL"),
    ("CHI", "KSC"),
    ("ATL", "WDC"),
    ("ATL", "HOU"),
    ("KSC", "HOU"),
    ("KSC", "DEN"),
    ("DEN", "SNV"),
    ("DEN", "SEA"),
    ("SEA", "SNV"),
    ("SNV", "LAX"),
    ("LAX", "HOU"),
];

/// Host `i` of `router`: `NYC-h0`, `NYC-h1`, ...
pub fn host_name(router: &str, i: u32) -> String {
    format!("{router}-h{i}")
}

fn attach_hosts(g: &mut Graph, router: &str, n: u32, l: &Links) -> Result<(), GraphError> {
    for i in 0..n {
        let h = host_name(router, i);
        g.add_node(&h, NodeKind::Host)?;
        g.connect(&h, router, l.up.clone(), l.down.clone())?;
    }
    Ok(())
}

/// The Internet2 graph: 10 routers, 13 core links, `hosts_per_router` hosts each.
pub fn internet2(hosts_per_router: u32, l: &Links) -> Result<Graph, GraphError> {
    let mut g = Graph::new();
    for r in INTERNET2_ROUTERS {
        g.add_node(r, NodeKind::Router)?;
    }
    for (a, b) in INTERNET2_LINKS {
        g.connect(a, b, l.core.clone(), l.core.clone())?;
    }
    for r in INTERNET2_ROUTERS {
        attach_hosts(&mut g, r, hosts_per_router, l)?;
    }
    Ok(g)
}

/// A k-ary fat tree (Al-Fares et al., SIGCOMM 2008): `k` pods of `k/2` edge and `k/2`
/// aggregation switches, `(k/2)²` core switches, `k/2` hosts per edge switch (k³/4
/// hosts). Aggregation switch `j` of every pod connects to core switches
/// `j·k/2 .. (j+1)·k/2`. `k` must be even and at least 2.
pub fn fat_tree(k: u32, l: &Links) -> Result<Graph, GraphError> {
    let half = k / 2;
    let mut g = Graph::new();
    for c in 0..half * half {
        g.add_node(&format!("core{c}"), NodeKind::Router)?;
    }
    for p in 0..k {
        for j in 0..half {
            g.add_node(&format!("p{p}-agg{j}"), NodeKind::Router)?;
            g.add_node(&format!("p{p}-edge{j}"), NodeKind::Router)?;
        }
        for j in 0..half {
            let agg = format!("p{p}-agg{j}");
            for e in 0..half {
                let edge = format!("p{p}-edge{e}");
                g.connect(&edge, &agg, l.core.clone(), l.core.clone())?;
            }
            for c in j * half..(j + 1) * half {
                g.connect(&agg, &format!("core{c}"), l.core.clone(), l.core.clone())?;
            }
        }
        for e in 0..half {
            attach_hosts(&mut g, &format!("p{p}-edge{e}"), half, l)?;
        }
    }
    Ok(g)
}

/// Two routers `L` and `R` joined by `bottleneck` (both directions), `hosts` hosts on
/// each side (`L-h0`.., `R-h0`..).
pub fn dumbbell(hosts: u32, bottleneck: &LinkSpec, l: &Links) -> Result<Graph, GraphError> {
    let mut g = Graph::new();
    g.add_node("L", NodeKind::Router)?;
    g.add_node("R", NodeKind::Router)?;
    g.connect("L", "R", bottleneck.clone(), bottleneck.clone())?;
    attach_hosts(&mut g, "L", hosts, l)?;
    attach_hosts(&mut g, "R", hosts, l)?;
    Ok(g)
}

/// An edge-list problem: the line (1-based) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EdgeListError {
    #[error("line {line}: {message}")]
    Line { line: usize, message: String },
    #[error(transparent)]
    Graph(#[from] GraphError),
}

/// A router graph from an edge list: one link per line, `a b [delay_ms] [rate]`
/// (`#` starts a comment; blank lines are skipped). Every name becomes a router; each
/// undirected edge becomes two directed core links with `l.core`, its delay replaced by
/// `delay_ms` (a decimal number of milliseconds) and its rate by `rate` (e.g. `1Gbps`)
/// when given. A repeated edge is an error. Then `hosts_per_router` hosts are attached
/// to every router.
pub fn edge_list(text: &str, hosts_per_router: u32, l: &Links) -> Result<Graph, EdgeListError> {
    let mut g = Graph::new();
    let mut routers: Vec<String> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let bad = |message: String| EdgeListError::Line { line, message };
        let body = raw.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let f: Vec<&str> = body.split_whitespace().collect();
        if !(2..=4).contains(&f.len()) {
            return Err(bad(format!(
                "expected `a b [delay_ms] [rate]`, got {} fields",
                f.len()
            )));
        }
        let mut spec = l.core.clone();
        if let Some(d) = f.get(2) {
            let ms: f64 = d
                .parse()
                .ok()
                .filter(|m: &f64| m.is_finite() && (0.0..=60_000.0).contains(m))
                .ok_or_else(|| bad(format!("delay_ms {d:?}: expected 0 to 60000")))?;
            spec.delay = Some(Dur(brisk_time::Duration::from_nanos(
                (ms * 1e6).round() as u64
            )));
        }
        if let Some(r) = f.get(3) {
            let bps = crate::units::parse_rate(r)
                .filter(|&b| b > 0)
                .ok_or_else(|| bad(format!("rate {r:?}: expected a rate like \"1Gbps\"")))?;
            spec.rate = Some(Rate(bps));
        }
        for name in &f[..2] {
            if g.node_index(name).is_none() {
                g.add_node(name, NodeKind::Router)?;
                routers.push(name.to_string());
            }
        }
        g.connect(f[0], f[1], spec.clone(), spec)
            .map_err(|e| bad(e.to_string()))?;
    }
    for r in &routers {
        attach_hosts(&mut g, r, hosts_per_router, l)?;
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_time::Duration;

    fn links() -> Links {
        let s = LinkSpec {
            rate: Some(Rate(1_000_000_000)),
            delay: Some(Dur(Duration::from_millis(10))),
            ..LinkSpec::default()
        };
        Links {
            core: s,
            ..Links::default()
        }
    }

    fn router_hops(g: &Graph) -> Vec<usize> {
        let r = g.routes().unwrap();
        let hosts = &r.hosts;
        let mut out = Vec::new();
        for s in 0..hosts.len() {
            for d in 0..hosts.len() {
                let p = r.path(g, s, d).unwrap();
                // Router-router links on the path.
                out.push(p.iter().filter(|&&l| g.is_core(l)).count());
            }
        }
        out
    }

    #[test]
    fn internet2_has_the_stated_shape_and_mean_path() {
        let g = internet2(1, &links()).unwrap();
        assert_eq!(g.nodes().len(), 20);
        assert_eq!(g.links().len(), 2 * 13 + 2 * 10);
        // One host per router: host pairs are router pairs. Mean over distinct pairs.
        let hops = router_hops(&g);
        let distinct: Vec<usize> = hops.into_iter().filter(|&h| h > 0).collect();
        assert_eq!(distinct.len(), 90);
        let mean = distinct.iter().sum::<usize>() as f64 / 90.0;
        // Spec A7's "about 2.27": exactly 204/90 = 2.267 router hops (core links).
        assert_eq!(distinct.iter().sum::<usize>(), 204, "mean {mean}");
        assert_eq!(*distinct.iter().max().unwrap(), 5); // e.g. WDC-NYC-CHI-KSC-DEN-SEA
    }

    #[test]
    fn internet2_routes_are_shortest_by_breadth_first_search() {
        let g = internet2(1, &links()).unwrap();
        let r = g.routes().unwrap();
        // BFS over the router graph gives the true hop distance; with uniform delays,
        // least delay means fewest hops, so every routed path must match it.
        let n = INTERNET2_ROUTERS.len();
        let idx = |s: &str| INTERNET2_ROUTERS.iter().position(|&x| x == s).unwrap();
        let mut adj = vec![Vec::new(); n];
        for (a, b) in INTERNET2_LINKS {
            adj[idx(a)].push(idx(b));
            adj[idx(b)].push(idx(a));
        }
        for s in 0..n {
            let mut d = vec![usize::MAX; n];
            d[s] = 0;
            let mut q = std::collections::VecDeque::from([s]);
            while let Some(v) = q.pop_front() {
                for &w in &adj[v] {
                    if d[w] == usize::MAX {
                        d[w] = d[v] + 1;
                        q.push_back(w);
                    }
                }
            }
            for t in 0..n {
                let p = r.path(&g, s, t).unwrap();
                let core = p.iter().filter(|&&l| g.is_core(l)).count();
                assert_eq!(
                    core, d[t],
                    "{} -> {}",
                    INTERNET2_ROUTERS[s], INTERNET2_ROUTERS[t]
                );
                let len = if s == t { 0 } else { core + 2 };
                assert_eq!(p.len(), len);
            }
        }
    }

    #[test]
    fn fat_tree_k4_has_16_hosts_and_20_switches() {
        let g = fat_tree(4, &links()).unwrap();
        let hosts = g.hosts().len();
        assert_eq!(hosts, 16);
        assert_eq!(g.nodes().len() - hosts, 20);
        // 16 host links + 16 edge-agg + 16 agg-core, each two directions.
        assert_eq!(g.links().len(), 2 * 48);
        // Every pair is reachable; across pods a path is host-edge-agg-core-agg-edge-host.
        let r = g.routes().unwrap();
        let p = r.path(&g, 0, 15).unwrap();
        assert_eq!(p.len(), 6);
        assert_eq!(r.path(&g, 0, 1).unwrap().len(), 2); // same edge switch
        assert_eq!(r.path(&g, 0, 2).unwrap().len(), 4); // same pod
    }

    #[test]
    fn edge_lists_parse_with_comments_delays_and_rates_and_name_bad_lines() {
        let text = "# a triangle\nA B 5\nB C 7.5 100Mbps  # slow\n\nC A\n";
        let g = edge_list(text, 2, &links()).unwrap();
        assert_eq!(g.hosts().len(), 6);
        let ab = g.links().iter().find(|l| l.from == 0 && l.to == 1).unwrap();
        assert_eq!(ab.delay_ns(), 5_000_000);
        let bc = g.links().iter().find(|l| l.from == 1 && l.to == 2).unwrap();
        assert_eq!(bc.delay_ns(), 7_500_000);
        assert_eq!(bc.spec.rate, Some(Rate(100_000_000)));
        let ca = g.links().iter().find(|l| l.from == 2 && l.to == 0).unwrap();
        assert_eq!(ca.delay_ns(), 10_000_000); // the default
        let err = |t: &str| edge_list(t, 1, &links()).unwrap_err().to_string();
        assert!(
            err("A B\nA\n").starts_with("line 2:"),
            "{}",
            err("A B\nA\n")
        );
        assert!(err("A B x\n").contains("delay_ms"));
        assert!(err("A B 1 fast\n").contains("rate"));
        assert!(err("A B\nB A\n").contains("defined twice"));
        assert!(err("A A\n").contains("itself"));
    }
}
