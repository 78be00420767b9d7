//! Scenario-file configuration for links, queues, loss and impairments, deserialised
//! with serde (the simulator's TOML embeds these), plus `build(seed)` constructors.
//!
//! ```toml
//! rate_bps = 10_000_000
//! delay = "20ms"                      # "<decimal><ns|us|ms|s>"
//! queue = { kind = "droptail", packets = 100 }      # or bytes = 150000
//! loss = { kind = "gilbert_elliott", p_gb = 0.01, p_bg = 0.3 }
//! outages = [{ start = "2s", end = "3.5s" }]
//! ```
//! Unknown fields are errors, so a typo never silently means "default".

use brisk_time::{Duration, Instant};
use serde::{Deserialize, Deserializer};

use crate::error::NetError;
use crate::impair::{ImpairParams, Impairment, DEFAULT_IMPAIR_LIMIT};
use crate::link::{Link, LinkParams, DEFAULT_DELAY_LINE_LIMIT};
use crate::loss::{Loss, LossModel};
use crate::outage::Outage;
use crate::queue::{AnyQueue, DropTail, QueueLimit};

/// Linux's default `txqueuelen`.
pub const DEFAULT_QUEUE_PACKETS: usize = 1000;

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueConfig {
    /// Give exactly one of `packets` and `bytes`; optionally one ECN step threshold.
    Droptail {
        packets: Option<usize>,
        bytes: Option<usize>,
        ecn_threshold_packets: Option<usize>,
        ecn_threshold_bytes: Option<usize>,
    },
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig::Droptail {
            packets: Some(DEFAULT_QUEUE_PACKETS),
            bytes: None,
            ecn_threshold_packets: None,
            ecn_threshold_bytes: None,
        }
    }
}

fn one_limit(
    field: &'static str,
    packets: Option<usize>,
    bytes: Option<usize>,
) -> Result<Option<QueueLimit>, NetError> {
    match (packets, bytes) {
        (Some(p), None) => Ok(Some(QueueLimit::Packets(p))),
        (None, Some(b)) => Ok(Some(QueueLimit::Bytes(b))),
        (None, None) => Ok(None),
        (Some(p), Some(b)) => Err(NetError::invalid(
            field,
            format!("packets {p} and bytes {b}"),
            "give a limit in packets or in bytes, not both",
        )),
    }
}

impl QueueConfig {
    pub fn build(&self) -> Result<AnyQueue, NetError> {
        match *self {
            QueueConfig::Droptail {
                packets,
                bytes,
                ecn_threshold_packets,
                ecn_threshold_bytes,
            } => {
                let limit = one_limit("queue", packets, bytes)?.ok_or_else(|| {
                    NetError::invalid("queue", "no limit", "give `packets` or `bytes`")
                })?;
                let mut q = DropTail::new(limit)?;
                if let Some(k) = one_limit(
                    "queue.ecn_threshold",
                    ecn_threshold_packets,
                    ecn_threshold_bytes,
                )? {
                    q = q.with_ecn_threshold(k);
                }
                Ok(q.into())
            }
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossConfig {
    #[default]
    None,
    Bernoulli {
        p: f64,
    },
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        /// Drop probability in the Good state; default 0.
        #[serde(default)]
        loss_good: f64,
        /// Drop probability in the Bad state; default 1 (Gilbert's model).
        #[serde(default = "one")]
        loss_bad: f64,
    },
    /// Drop the packets with these 0-based indices.
    List {
        drop: Vec<u64>,
    },
}

fn one() -> f64 {
    1.0
}

impl LossConfig {
    pub fn model(&self) -> LossModel {
        match self {
            LossConfig::None => LossModel::None,
            LossConfig::Bernoulli { p } => LossModel::Bernoulli { p: *p },
            LossConfig::GilbertElliott {
                p_gb,
                p_bg,
                loss_good,
                loss_bad,
            } => LossModel::GilbertElliott {
                p_gb: *p_gb,
                p_bg: *p_bg,
                loss_good: *loss_good,
                loss_bad: *loss_bad,
            },
            LossConfig::List { drop } => LossModel::List(drop.clone()),
        }
    }

    pub fn build(&self, seed: u64) -> Result<Loss, NetError> {
        Loss::new(self.model(), seed)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutageConfig {
    #[serde(deserialize_with = "de_duration")]
    pub start: Duration,
    #[serde(deserialize_with = "de_duration")]
    pub end: Duration,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    /// Bit/s; 0 (the default) means unlimited.
    #[serde(default)]
    pub rate_bps: u64,
    /// One-way propagation delay.
    #[serde(default, deserialize_with = "de_duration")]
    pub delay: Duration,
    #[serde(default)]
    pub overhead_bytes: usize,
    #[serde(default)]
    pub queue: QueueConfig,
    #[serde(default)]
    pub loss: LossConfig,
    #[serde(default)]
    pub outages: Vec<OutageConfig>,
    #[serde(default = "default_delay_line_limit")]
    pub delay_line_limit: usize,
}

fn default_delay_line_limit() -> usize {
    DEFAULT_DELAY_LINE_LIMIT
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            rate_bps: 0,
            delay: Duration::ZERO,
            overhead_bytes: 0,
            queue: QueueConfig::default(),
            loss: LossConfig::default(),
            outages: Vec::new(),
            delay_line_limit: DEFAULT_DELAY_LINE_LIMIT,
        }
    }
}

impl LinkConfig {
    /// Builds the link; `seed` seeds its loss model.
    pub fn build(&self, seed: u64) -> Result<Link, NetError> {
        let params = LinkParams {
            rate_bps: self.rate_bps,
            delay: self.delay,
            overhead_bytes: self.overhead_bytes,
            outages: self
                .outages
                .iter()
                .map(|o| Outage {
                    start: Instant::ZERO + o.start,
                    end: Instant::ZERO + o.end,
                })
                .collect(),
            delay_line_limit: self.delay_line_limit,
        };
        Link::new(params, self.queue.build()?, self.loss.build(seed)?)
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImpairConfig {
    #[serde(default, deserialize_with = "de_duration")]
    pub delay: Duration,
    #[serde(default, deserialize_with = "de_duration")]
    pub jitter: Duration,
    #[serde(default)]
    pub reorder: bool,
    #[serde(default)]
    pub duplicate_p: f64,
    #[serde(default)]
    pub corrupt_p: f64,
    #[serde(default = "default_impair_limit")]
    pub limit_packets: usize,
}

fn default_impair_limit() -> usize {
    DEFAULT_IMPAIR_LIMIT
}

impl Default for ImpairConfig {
    fn default() -> Self {
        ImpairConfig {
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
            reorder: false,
            duplicate_p: 0.0,
            corrupt_p: 0.0,
            limit_packets: DEFAULT_IMPAIR_LIMIT,
        }
    }
}

impl ImpairConfig {
    pub fn build(&self, seed: u64) -> Result<Impairment, NetError> {
        Impairment::new(
            ImpairParams {
                delay: self.delay,
                jitter: self.jitter,
                reorder: self.reorder,
                duplicate_p: self.duplicate_p,
                corrupt_p: self.corrupt_p,
                limit_packets: self.limit_packets,
            },
            seed,
        )
    }
}

/// Parses `"<decimal><unit>"` with unit `ns`, `us`, `ms` or `s` (e.g. `"1.5ms"`,
/// `"250us"`) into whole nanoseconds, without floating point.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .ok_or_else(|| format!("duration {s:?} has no unit (ns, us, ms, s)"))?;
    let (num, unit) = s.split_at(split);
    let scale: u64 = match unit.trim() {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        u => return Err(format!("duration {s:?}: unknown unit {u:?}")),
    };
    let num = num.replace('_', "");
    let (int, frac) = num.split_once('.').unwrap_or((&num, ""));
    if int.is_empty() && frac.is_empty() {
        return Err(format!("duration {s:?} has no number"));
    }
    let bad = || format!("duration {s:?} is not a number or too large");
    let int: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| bad())?
    };
    let mut ns = int.checked_mul(scale).ok_or_else(bad)?;
    // Fractional digits beyond the unit's resolution must be zero: no silent rounding.
    let mut place = scale;
    for c in frac.chars() {
        let d = u64::from(c.to_digit(10).ok_or_else(bad)?);
        place /= 10;
        if place == 0 {
            if d != 0 {
                return Err(format!("duration {s:?} is finer than 1 ns"));
            }
            continue;
        }
        ns = ns.checked_add(d * place).ok_or_else(bad)?;
    }
    Ok(Duration::from_nanos(ns))
}

fn de_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let s = String::deserialize(d)?;
    parse_duration(&s).map_err(serde::de::Error::custom)
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
