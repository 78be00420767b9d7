//! Network scenarios: a multi-hop topology and a flow workload (issue 11 §1; RC3, NSDI
//! 2014, §5.1; spec `rc3.md` §2.1, A7, A8, A9).
//!
//! A scenario file with a `[workload]` table is a *network scenario* ([`NetScenario`]);
//! every other scenario is the dumbbell of [`crate::dumbbell`]. The network is either a
//! generator (`topology = { kind = "internet2" | "fat_tree" | "dumbbell" | "edges", ...
//! }`, [`topology`]) or explicit `[[node]]` and `[[link]]` entries; the flows are the
//! [`workload`]'s. Parsing is strict and every error names the field. The syntax
//! reference is `docs/scenarios.md`.
//!
//! This is the words and their checks; the simulator builds the graph, its routes and
//! the running network from them (`brisk_sim::topo_build`, `brisk_sim::wl_run`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::dumbbell::MAX_DURATION;
use crate::error::ScenarioError;
use crate::knobs::validate_tcp;
use crate::units::Dur;

pub mod sizes;
pub mod topology;
pub mod workload;

pub use sizes::{CdfError, SizeCdf, MAX_FLOWS, MAX_POINTS};
pub use topology::{
    EdgeSpec, Links, NodeKind, NodeSpec, RoutingMode, TopoKind, TopologySpec, MAX_FAT_TREE_K,
    MAX_HOSTS_PER_ROUTER, MAX_HOST_ADDRESSES,
};
pub use workload::{
    ClassSpec, Direction, PacedSpec, PairsSpec, SizesSpec, SourceAddress, WorkloadSpec,
    DEFAULT_BINS_PKTS, MAX_CLASSES, MAX_PACED_BYTES, MAX_PACED_CHUNKS,
};

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
    /// `"shortest"` (default) or `"ecmp"`: equal-cost next hops picked by flow hash.
    #[serde(default)]
    pub routing: RoutingMode,
    pub workload: WorkloadSpec,
    /// The edge-list text of `topology.kind = "edges"`, read at load.
    #[serde(skip)]
    pub edge_text: Option<String>,
}

fn default_seed() -> u64 {
    1
}

/// Whether a scenario text is a network scenario (has a top-level `workload` table).
/// Text that does not parse is left to the dumbbell parser, whose errors are the
/// established ones.
pub fn is_net_scenario(text: &str) -> bool {
    text.parse::<toml::Table>()
        .is_ok_and(|t| t.contains_key("workload"))
}

impl NetScenario {
    /// Parses and checks the words; `file` labels errors and is where `edges` files are
    /// resolved from. The simulator's loader (`brisk_sim::topo_build::load`) adds the
    /// checks of the graph built from them.
    pub fn from_toml_str_named(text: &str, file: &str) -> Result<NetScenario, ScenarioError> {
        let mut sc: NetScenario = crate::error::parse_toml(text, file)?;
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
            let text = crate::input::read_text(&path).map_err(|e| {
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
        let (file, text) = crate::input::read_file(path)?;
        Self::from_toml_str_named(&text, &file)
    }

    /// Range checks serde cannot express, the topology's last. Returns (field, message).
    pub fn validate(&self) -> Result<(), (String, String)> {
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
        if w.flows.is_some_and(|n| n == 0 || n as usize > MAX_FLOWS) {
            return e(
                "workload.flows",
                format!("must be between 1 and {}", MAX_FLOWS),
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
            validate_tcp(t, cc).map_err(|(k, m)| (format!("{owner}.{k}"), m))?;
        }
        if let Some(p) = &w.paced {
            workload::validate_paced(p, self.duration.0)?;
        }
        if let Some(p) = &w.pairs {
            workload::validate_pairs(p, self.duration.0)?;
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
        if let Some(SourceAddress::Index(i)) = w.source_address {
            if i >= MAX_HOST_ADDRESSES {
                return e(
                    "workload.source_address",
                    format!(
                        "an address index from 0 to {} (or an address), got {i}",
                        MAX_HOST_ADDRESSES - 1
                    ),
                );
            }
        }
        self.validate_topology()
    }

    /// The topology's checks that need no graph: a generator or explicit entries (not
    /// both, not neither), the generator's fields, each explicit link's two directions.
    /// What only a graph shows (unknown or repeated names, unreachable hosts, an
    /// edge-list file's lines) the simulator checks as it builds one.
    pub fn validate_topology(&self) -> Result<(), (String, String)> {
        let explicit = !self.nodes.is_empty() || !self.links.is_empty();
        match &self.topology {
            Some(_) if explicit => Err((
                "topology".into(),
                "give either a topology generator or [[node]] and [[link]] entries, not both"
                    .into(),
            )),
            None if !explicit => Err((
                "topology".into(),
                "missing: give `topology = { kind = ... }` or [[node]] and [[link]] entries".into(),
            )),
            Some(t) => t.validate(),
            None => {
                for (i, n) in self.nodes.iter().enumerate() {
                    n.validate(&format!("node[{i}]"))?;
                }
                for (i, l) in self.links.iter().enumerate() {
                    l.validate(&format!("link[{i}]"))?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workload_table_makes_a_network_scenario() {
        assert!(is_net_scenario("name = \"x\"\n[workload]\nload = 0.1\n"));
        assert!(!is_net_scenario("name = \"x\"\n[bottleneck]\n"));
        assert!(!is_net_scenario("not toml ["));
    }
}
