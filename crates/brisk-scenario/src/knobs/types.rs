//! The value types of the TCP knobs: enumerations, the switch-or-table form and the
//! tables that are not folded onto flat keys (ECN, CDG, DCTCP, RC3).

use super::{DcTable, RdbTable};
use serde::{Deserialize, Serialize};

/// `tlp_pto`'s values.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TlpPtoKnob {
    Rfc8985,
    Draft01,
}

/// `early_retransmit`'s values.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ErKnob {
    Off,
    On,
    Delayed,
}

/// `linux_profile`'s values.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
pub enum LinuxProfile {
    #[serde(rename = "3.17")]
    Linux3_17,
}

/// `[flow.tcp.cdg]`: each key overrides Linux's default (`brisk_tcp::cc::cdg::CdgConfig`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CdgTable {
    pub window: Option<u32>,
    pub backoff_beta: Option<u32>,
    pub backoff_factor: Option<u32>,
    pub hystart_detect: Option<u32>,
    pub use_ineff: Option<u32>,
    pub use_shadow: Option<bool>,
    pub use_tolerance: Option<bool>,
}

/// `[flow.tcp.dctcp]`: each key overrides Linux's default
/// (`brisk_tcp::cc::dctcp::DctcpConfig`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DctcpTable {
    pub shift_g: Option<u32>,
    pub alpha_on_init: Option<u32>,
}

/// `[flow.tcp.fse]`: the Flow State Exchange (`brisk_tcp::cc::fse::tcp::FseConfig`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FseTable {
    pub group: Option<String>,
    pub priority: Option<f64>,
    pub algorithm: Option<FseAlgorithmKnob>,
    pub increase: Option<FseIncreaseKnob>,
    pub max_flows: Option<u32>,
    /// Group by the host's shared-bottleneck detector (its `[[node]] sbd`).
    pub sbd: Option<bool>,
}

/// `[flow.tcp.fastopen]`: TCP Fast Open (`brisk_tcp::tfo::TfoConfig`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FastOpenTable {
    pub client: Option<bool>,
    pub server: Option<bool>,
    pub queue: Option<u32>,
    pub cache_entries: Option<u32>,
    pub negative_cache: Option<bool>,
    pub key: Option<String>,
}

/// `fse.algorithm`'s values (draft-welzl-rmcat-coupled-cc-05 §5.3, Appendix A).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FseAlgorithmKnob {
    Conservative,
    Active,
    Passive,
}

/// `fse.increase`'s values.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum FseIncreaseKnob {
    OneFlow,
    Sum,
}

/// `[flow.tcp.ecn]` as a table.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EcnTable {
    pub enabled: Option<bool>,
}

/// A knob written either as a boolean switch or as a table of settings.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SwitchOrTable<T> {
    Switch(bool),
    Table(T),
}

pub type DcKnob = SwitchOrTable<DcTable>;
pub type RdbKnob = SwitchOrTable<RdbTable>;
pub type Rc3Knob = SwitchOrTable<Rc3Table>;

/// `[flow.tcp.rc3]` as a table.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Rc3Table {
    pub levels: Option<Vec<u64>>,
    pub rule: Option<Rc3RuleKnob>,
}

/// How RC3's levels are counted (spec A1).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Rc3RuleKnob {
    Design,
    Linux,
}

/// `rdb_loss_inference`'s values.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RdbLossInference {
    Ack,
    Dsack,
    Off,
}

/// RDB_lim: a count of earlier segments, or "unlimited" (the paper's ∞).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum RdbLim {
    Count(u64),
    #[serde(serialize_with = "unlimited")]
    Unlimited,
}

fn unlimited<S: serde::Serializer>(s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str("unlimited")
}

impl<'de> Deserialize<'de> for RdbLim {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = RdbLim;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a count from 1 to 1024 or \"unlimited\"")
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<RdbLim, E> {
                Ok(RdbLim::Count(n))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<RdbLim, E> {
                Ok(RdbLim::Count(u64::try_from(n).map_err(|_| {
                    E::custom("expected a count from 1 to 1024 or \"unlimited\"")
                })?))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RdbLim, E> {
                if v == "unlimited" {
                    Ok(RdbLim::Unlimited)
                } else {
                    Err(E::custom(format!(
                        "expected a count from 1 to 1024 or \"unlimited\", not \"{v}\""
                    )))
                }
            }
        }
        d.deserialize_any(V)
    }
}
pub type EcnKnob = SwitchOrTable<EcnTable>;

impl<'de, T: Deserialize<'de>> Deserialize<'de> for SwitchOrTable<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = SwitchOrTable<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("true, false or a table of settings")
            }
            fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<Self::Value, E> {
                Ok(SwitchOrTable::Switch(b))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                m: A,
            ) -> Result<Self::Value, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(m))
                    .map(SwitchOrTable::Table)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// `[flow.tcp.copa]`: each key overrides Copa's default
/// (`brisk_tcp::cc::copa::CopaConfig`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CopaTable {
    pub delta: Option<f64>,
    pub mode_switch: Option<bool>,
}

/// `[flow.tcp.vegas]`: `tcp_vegas`'s module parameters (segments), each overriding
/// Linux's default (`brisk_tcp::cc::vegas::VegasConfig`: alpha 2, beta 4, gamma 1).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct VegasTable {
    pub alpha: Option<u32>,
    pub beta: Option<u32>,
    pub gamma: Option<u32>,
}

/// `[flow.tcp.hybla]`: `tcp_hybla`'s reference RTT `rtt0` (Linux default 25 ms, a
/// whole number of milliseconds as the module parameter is).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HyblaTable {
    pub rtt0: Option<crate::units::Dur>,
}

/// `[flow.tcp.lp]`: which TCP-LP `cc = "lp"` runs (docs/mechanisms/lp.md).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LpTable {
    pub variant: Option<LpVariantKnob>,
}

/// `lp.variant`'s values: "linux" (Linux 6.18's `tcp_lp.c`, the default) or
/// "corrected" (the paper's algorithm with a 64-bit relative one-way delay).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LpVariantKnob {
    Linux,
    Corrected,
}

/// `[flow.tcp.illinois]`: `tcp_illinois`'s module parameters `win_thresh` (segments,
/// default 15) and `theta` (rounds, default 5).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IllinoisTable {
    pub win_thresh: Option<u32>,
    pub theta: Option<u32>,
}

/// `[flow.tcp.htcp]`: `tcp_htcp`'s module parameters (both default true).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HtcpTable {
    pub use_rtt_scaling: Option<bool>,
    pub use_bandwidth_switch: Option<bool>,
}

/// `[flow.tcp.bic]`: `tcp_bic`'s module parameters, each overriding Linux's default
/// (`brisk_tcp::cc::bic::BicConfig`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BicTable {
    pub fast_convergence: Option<bool>,
    pub max_increment: Option<u32>,
    pub low_window: Option<u32>,
    pub beta: Option<u32>,
    pub initial_ssthresh: Option<u32>,
    pub smooth_part: Option<u32>,
}
