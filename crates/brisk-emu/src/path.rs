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
//! Each direction becomes a brisk-net [`Link`] built from a [`LinkConfig`], followed by
//! an [`Impairment`] from an [`ImpairConfig`] when jitter, duplication or corruption is
//! asked for. Outage times count from the emulator's start.

use brisk_net::config::parse_duration;
use brisk_net::{
    Chain, Element, ImpairConfig, Impairment, Link, LinkConfig, LossConfig, NetEvent, OutageConfig,
    Packet, QueueConfig,
};
use brisk_time::{Duration, Instant};
use serde::{Deserialize, Deserializer};

use crate::error::{EmuError, Result};

/// A bit rate in bit/s, written `"100Mbit"`, `"1.5Gbit/s"`, `"64kbps"` or as an integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate(pub u64);

/// A duration written `"10ms"`, `"250us"`, `"1.5s"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dur(pub Duration);

const RATE_UNITS: &[(&str, u64)] = &[
    ("bit/s", 1),
    ("bit", 1),
    ("bps", 1),
    ("kbit/s", 1_000),
    ("kbit", 1_000),
    ("kbps", 1_000),
    ("mbit/s", 1_000_000),
    ("mbit", 1_000_000),
    ("mbps", 1_000_000),
    ("gbit/s", 1_000_000_000),
    ("gbit", 1_000_000_000),
    ("gbps", 1_000_000_000),
];

/// Parses a rate such as `"100Mbit"` (units case-insensitive) into bit/s, exactly.
pub fn parse_rate(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let unit = unit.trim().to_ascii_lowercase();
    let scale = if unit.is_empty() {
        1
    } else {
        RATE_UNITS.iter().find(|(u, _)| *u == unit)?.1
    };
    let num = num.replace('_', "");
    let (int, frac) = num.split_once('.').unwrap_or((&num, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut v: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    v = v.checked_mul(scale)?;
    let mut place = scale;
    for c in frac.chars() {
        let d = u64::from(c.to_digit(10)?);
        place /= 10;
        if place == 0 {
            if d != 0 {
                return None; // finer than 1 bit/s
            }
            continue;
        }
        v = v.checked_add(d * place)?;
    }
    Some(v)
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Str(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(v) => Ok(Rate(v)),
            Raw::Str(s) => parse_rate(&s).map(Rate).ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "expected a rate like \"100Mbit\" or \"1Gbit/s\", got {s:?}"
                ))
            }),
        }
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_duration(&s)
            .map(Dur)
            .map_err(serde::de::Error::custom)
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossSpec {
    None,
    Bernoulli {
        p: f64,
    },
    GilbertElliott {
        p_good_bad: f64,
        p_bad_good: f64,
        #[serde(default)]
        loss_good: f64,
        #[serde(default = "one")]
        loss_bad: f64,
    },
    /// Drop these 0-based packet indices (counted among packets offered to the link).
    List {
        packets: Vec<u64>,
    },
}

fn one() -> f64 {
    1.0
}

impl LossSpec {
    fn config(&self) -> LossConfig {
        match self {
            LossSpec::None => LossConfig::None,
            LossSpec::Bernoulli { p } => LossConfig::Bernoulli { p: *p },
            LossSpec::GilbertElliott {
                p_good_bad,
                p_bad_good,
                loss_good,
                loss_bad,
            } => LossConfig::GilbertElliott {
                p_gb: *p_good_bad,
                p_bg: *p_bad_good,
                loss_good: *loss_good,
                loss_bad: *loss_bad,
            },
            LossSpec::List { packets } => LossConfig::List {
                drop: packets.clone(),
            },
        }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JitterSpec {
    /// Each packet gets a uniform extra delay in `[0, max]`.
    pub max: Dur,
    #[serde(default)]
    pub reorder: bool,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutageSpec {
    pub start: Dur,
    pub duration: Dur,
}

/// One direction of the path, with the simulator's bottleneck keys.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathSpec {
    /// Serialisation rate; absent means unlimited.
    #[serde(default)]
    pub rate: Option<Rate>,
    /// One-way propagation delay on top of the rtt/2 share.
    #[serde(default)]
    pub delay: Option<Dur>,
    /// brisk-net's queue config (`{ kind = "droptail", packets = N }` or `bytes = N`).
    #[serde(default)]
    pub queue: Option<QueueConfig>,
    #[serde(default)]
    pub loss: Option<LossSpec>,
    #[serde(default)]
    pub jitter: Option<JitterSpec>,
    #[serde(default)]
    pub duplicate: Option<f64>,
    #[serde(default)]
    pub corrupt: Option<f64>,
    #[serde(default)]
    pub outages: Vec<OutageSpec>,
}

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
        let fwd = self.bottleneck.build(half, derive_seed(self.seed, 1))?;
        let reverse = self.reverse.clone().unwrap_or_default();
        let rev = reverse.build(rtt - half, derive_seed(self.seed, 2))?;
        Ok((fwd, rev))
    }
}

fn toml_de(s: &str) -> Result<EmuConfig> {
    toml::from_str(s).map_err(|e| EmuError::Config(e.to_string()))
}

impl PathSpec {
    /// Builds this direction with `base_delay` added to its own delay.
    pub fn build(&self, base_delay: Duration, seed: u64) -> Result<PathChain> {
        if self.rate == Some(Rate(0)) {
            return Err(EmuError::Config(
                "rate must be > 0 (omit it for an unlimited link)".into(),
            ));
        }
        let link = LinkConfig {
            rate_bps: self.rate.map_or(0, |r| r.0),
            delay: base_delay.saturating_add(self.delay.map_or(Duration::ZERO, |d| d.0)),
            queue: self.queue.clone().unwrap_or_default(),
            loss: self
                .loss
                .as_ref()
                .map_or(LossConfig::None, LossSpec::config),
            outages: self
                .outages
                .iter()
                .map(|o| OutageConfig {
                    start: o.start.0,
                    end: o.start.0.saturating_add(o.duration.0),
                })
                .collect(),
            ..LinkConfig::default()
        }
        .build(derive_seed(seed, 1))?;
        let impaired = self.jitter.is_some()
            || self.duplicate.is_some_and(|p| p != 0.0)
            || self.corrupt.is_some_and(|p| p != 0.0);
        if !impaired {
            return Ok(PathChain::Plain(link));
        }
        let impair = ImpairConfig {
            jitter: self.jitter.as_ref().map_or(Duration::ZERO, |j| j.max.0),
            reorder: self.jitter.as_ref().is_some_and(|j| j.reorder),
            duplicate_p: self.duplicate.unwrap_or(0.0),
            corrupt_p: self.corrupt.unwrap_or(0.0),
            ..ImpairConfig::default()
        }
        .build(derive_seed(seed, 2))?;
        Ok(PathChain::Impaired(Chain::new(link, impair)))
    }
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

impl PathChain {
    pub fn link(&self) -> &Link {
        match self {
            PathChain::Plain(l) => l,
            PathChain::Impaired(c) => &c.first,
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
