//! The workload of a network scenario (`[workload]`): flow sizes, load, the TCP of
//! each host class, the result bins, and an optional paced flow (RC3, NSDI 2014, §5.1;
//! spec `rc3.md` §2.1, A8, A9).

use brisk_tcp::cc::CcAlgorithm;
use brisk_time::Duration;
use serde::{Deserialize, Serialize};

use super::sizes::SizeCdf;
use crate::knobs::TcpKnobs;
use crate::units::{Dur, Size};

/// Most classes in one workload.
pub const MAX_CLASSES: usize = 16;

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
    /// The address a flow's opener connects from, on a multi-homed host: an index
    /// (hosts with fewer addresses use their first) or an address (used by the host
    /// that has it; the others use their first). Default: the first address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_address: Option<SourceAddress>,
    /// Instead of Poisson arrivals: one connection per random host pair, all opened
    /// together (seed 004 B.2's datacenter, after Raiciu et al. 2011). `load` then
    /// sets no arrival rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<PairsSpec>,
}

/// `[workload.pairs]`: `connections` flows, each between a host pair no other flow
/// uses (in either direction), the hosts on different routers. The sources take the
/// hosts in a seeded random order, so with `connections` equal to the host count every
/// host opens one; each draws its destination at random. Every flow is opened at
/// `start` plus a uniform draw in [0, `spread`) (iperf started on each host by a
/// script is not started at one instant; 0 opens them all at once).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PairsSpec {
    pub connections: u32,
    #[serde(default)]
    pub start: Dur,
    #[serde(default)]
    pub spread: Dur,
}

/// Most connections of `[workload.pairs]`.
pub const MAX_PAIRS: u32 = 4096;

/// Range checks of `[workload.pairs]` in a run of `duration`; (field, message). That
/// the hosts have enough distinct pairs is checked where the topology is built.
pub(super) fn validate_pairs(p: &PairsSpec, duration: Duration) -> Result<(), (String, String)> {
    let e = |f: &str, m: String| Err((format!("workload.pairs.{f}"), m));
    if p.connections == 0 || p.connections > MAX_PAIRS {
        return e(
            "connections",
            format!("must be between 1 and {MAX_PAIRS}, got {}", p.connections),
        );
    }
    if p.start.0.saturating_add(p.spread.0) >= duration {
        return e(
            "spread",
            format!(
                "start + spread must end before duration ({:?}), got {:?} + {:?}",
                duration, p.start.0, p.spread.0
            ),
        );
    }
    Ok(())
}

/// `workload.source_address`: an index into the opener's addresses, or one address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum SourceAddress {
    Index(u32),
    Address(std::net::IpAddr),
}

impl<'de> Deserialize<'de> for SourceAddress {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = SourceAddress;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(
                    f,
                    "an address index (0 to {}) or an IP address like \"198.19.0.1\"",
                    crate::network::MAX_HOST_ADDRESSES - 1
                )
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<SourceAddress, E> {
                u32::try_from(v)
                    .map(SourceAddress::Index)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<SourceAddress, E> {
                u32::try_from(v)
                    .map(SourceAddress::Index)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SourceAddress, E> {
                v.parse()
                    .map(SourceAddress::Address)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Str(v), &self))
            }
        }
        d.deserialize_any(V)
    }
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
pub(super) fn validate_paced(p: &PacedSpec, duration: Duration) -> Result<(), (String, String)> {
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
}
