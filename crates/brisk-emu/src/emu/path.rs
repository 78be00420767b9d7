//! What the emulated path looks like, in the simulator's scenario vocabulary: a
//! forward bottleneck (`rate`, `delay`, `queue`, `loss`, `jitter`, `duplicate`,
//! `corrupt`, `outages`), an optional reverse one, and a base `rtt` split as `rtt/2`
//! of extra propagation delay per direction (the simulator puts it on access links; a
//! two-host lab has one link per direction, so it is folded into each link's delay).
//!
//! ```toml
//! rtt = "10ms"
//! seed = 7
//! [bottleneck]
//! rate = "100Mbit"
//! queue = { kind = "droptail", packets = 100 }
//! loss = { kind = "bernoulli", p = 0.01 }
//! jitter = { max = "1ms" }
//! ```
//! Each direction is a brisk-scenario [`LinkSpec`](brisk_scenario::link::LinkSpec),
//! checked and built by the very code behind the simulator's links into a [`Link`], followed by an
//! [`Impairment`] when jitter, duplication or corruption is asked for. Outage times
//! count from the emulator's start.

use brisk_net::{Chain, Element, Impairment, Link, LinkElements, LinkSeeds, NetEvent, Packet};
use brisk_time::{Duration, Instant};
use serde::Deserialize;

use crate::error::{EmuError, Result};

/// The simulator's link vocabulary, so a scenario's `[bottleneck]` is a path direction
/// as it stands (one definition, in brisk-scenario, for both).
pub use brisk_scenario::link::{JitterSpec, LossSpec, OutageSpec, QueueSpec};
pub use brisk_scenario::units::{parse_rate, Dur, Rate};

/// One direction of the path: the simulator's [`LinkSpec`](brisk_scenario::link::LinkSpec).
pub type PathSpec = brisk_scenario::link::LinkSpec;

/// Both directions of a two-host path.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmuConfig {
    /// Base round-trip time, split as propagation delay over the two directions.
    #[serde(default)]
    pub rtt: Option<Dur>,
    /// The A → B direction.
    #[serde(default)]
    pub bottleneck: PathSpec,
    /// The B → A direction; default: unlimited and lossless.
    #[serde(default)]
    pub reverse: Option<PathSpec>,
    #[serde(default = "default_seed")]
    pub seed: u64,
}

fn default_seed() -> u64 {
    1
}

impl Default for EmuConfig {
    fn default() -> Self {
        EmuConfig {
            rtt: None,
            bottleneck: PathSpec::default(),
            reverse: None,
            seed: default_seed(),
        }
    }
}

/// SplitMix64 finaliser: independent-looking seeds for each element from one seed.
/// (The emulator's own scheme, handed to `LinkSpec::build` as [`LinkSeeds`], so a
/// path's random streams stay what they were before the vocabulary was shared.)
fn derive_seed(seed: u64, idx: u64) -> u64 {
    let mut z = seed.wrapping_add(idx.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl EmuConfig {
    /// A simple symmetric-delay path: `rate` forward, `rtt` split over both directions.
    pub fn bottleneck(rate_bps: u64, rtt: Duration) -> EmuConfig {
        EmuConfig {
            rtt: Some(Dur(rtt)),
            bottleneck: PathSpec {
                rate: (rate_bps > 0).then_some(Rate(rate_bps)),
                ..PathSpec::default()
            },
            ..EmuConfig::default()
        }
    }

    /// Parses a TOML document.
    pub fn from_toml(s: &str) -> Result<EmuConfig> {
        toml_de(s)
    }

    /// The A → B and B → A element chains.
    pub fn build(&self) -> Result<(PathChain, PathChain)> {
        let rtt = self.rtt.map_or(Duration::ZERO, |d| d.0);
        let half = rtt / 2;
        let fwd = build_direction(
            &self.bottleneck,
            "bottleneck",
            half,
            derive_seed(self.seed, 1),
        )?;
        let reverse = self.reverse.clone().unwrap_or_default();
        let rev = build_direction(&reverse, "reverse", rtt - half, derive_seed(self.seed, 2))?;
        Ok((fwd, rev))
    }
}

fn toml_de(s: &str) -> Result<EmuConfig> {
    toml::from_str(s).map_err(|e| EmuError::Config(e.to_string()))
}

/// Checks and builds one direction with `base_delay` added to its own delay.
fn build_direction(
    spec: &PathSpec,
    name: &str,
    base_delay: Duration,
    seed: u64,
) -> Result<PathChain> {
    spec.validate(name)
        .map_err(|e| EmuError::Config(e.to_string()))?;
    let seeds = LinkSeeds {
        loss: derive_seed(seed, 1),
        impair: derive_seed(seed, 2),
    };
    let elements = spec
        .build(name, base_delay, seeds)
        .map_err(|e| EmuError::Config(e.to_string()))?;
    Ok(PathChain::from(elements))
}

/// One direction's elements: a link, optionally followed by an impairment. A closed
/// enum rather than `Box<dyn Element>` keeps the per-packet path free of vtables.
// Two of these exist per emulator and are never moved per packet, so the size
// difference between the variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum PathChain {
    Plain(Link),
    Impaired(Chain<Link, Impairment>),
}

impl From<LinkElements> for PathChain {
    fn from(e: LinkElements) -> Self {
        match e.impairment {
            None => PathChain::Plain(e.link),
            Some(i) => PathChain::Impaired(Chain::new(e.link, i)),
        }
    }
}

impl PathChain {
    pub fn link(&self) -> &Link {
        match self {
            PathChain::Plain(l) => l,
            PathChain::Impaired(c) => &c.first,
        }
    }

    pub fn link_mut(&mut self) -> &mut Link {
        match self {
            PathChain::Plain(l) => l,
            PathChain::Impaired(c) => &mut c.first,
        }
    }

    pub fn impairment(&self) -> Option<&Impairment> {
        match self {
            PathChain::Plain(_) => None,
            PathChain::Impaired(c) => Some(&c.second),
        }
    }

    /// Turns on every element's event log with `capacity` events each.
    pub fn enable_event_log(&mut self, capacity: usize) {
        match self {
            PathChain::Plain(l) => l.enable_event_log(capacity),
            PathChain::Impaired(c) => {
                c.first.enable_event_log(capacity);
                c.second.enable_event_log(capacity);
            }
        }
    }

    /// Moves all logged events to `out`, sorted by time (stable: ties keep log order).
    pub fn drain_events(&mut self, out: &mut Vec<NetEvent>) {
        let start = out.len();
        match self {
            PathChain::Plain(l) => l.drain_events(out),
            PathChain::Impaired(c) => {
                c.first.drain_events(out);
                c.second.drain_events(out);
            }
        }
        out[start..].sort_by_key(NetEvent::at);
    }

    pub fn events_lost(&self) -> u64 {
        match self {
            PathChain::Plain(l) => l.events_lost(),
            PathChain::Impaired(c) => c.first.events_lost().saturating_add(c.second.events_lost()),
        }
    }
}

impl Element for PathChain {
    fn handle_packet(&mut self, now: Instant, pkt: Packet) {
        match self {
            PathChain::Plain(l) => l.handle_packet(now, pkt),
            PathChain::Impaired(c) => c.handle_packet(now, pkt),
        }
    }

    fn poll_packet(&mut self, now: Instant) -> Option<Packet> {
        match self {
            PathChain::Plain(l) => l.poll_packet(now),
            PathChain::Impaired(c) => c.poll_packet(now),
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match self {
            PathChain::Plain(l) => l.poll_timeout(),
            PathChain::Impaired(c) => c.poll_timeout(),
        }
    }
}

#[cfg(test)]
#[path = "path_tests.rs"]
mod tests;
