//! The dumbbell scenario (TOML): flows over one shared bottleneck. Parsing is strict
//! (`deny_unknown_fields`, so typos are errors) and every error names the file, the
//! field path and what was expected, e.g. `scenarios/x.toml: flow[0].rtt: expected a
//! duration like "10ms" ..., got "ten"`.
//!
//! See `units` for the accepted duration, rate and size spellings, and `scenarios/*.toml`
//! for examples.

use crate::app::AppSpec;
use crate::error::ScenarioError;
use crate::knobs::{validate_tcp, TcpKnobs};
use crate::link::LinkSpec;
use crate::units::Dur;
use brisk_tcp::cc::CcAlgorithm;
use brisk_time::Duration;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Upper bounds that keep a scenario's memory use bounded.
pub const MAX_FLOWS: u32 = 100_000;
/// Most IPv4 flows: 198.18.x.y and 198.19.x.y with `x.y` = index + 1 (topology.rs)
/// give 65 535 addresses each; more flows need `ip = "v6"`.
pub const MAX_V4_FLOWS: u32 = 65_535;
/// Most time-series rows (duration / sample_interval).
pub const MAX_SAMPLE_ROWS: u128 = 1_000_000;
/// Longest simulated time accepted.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);

/// A whole scenario.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    /// Default seed (the CLI's `--seed` overrides it).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time.
    pub duration: Dur,
    /// Time-series sampling interval (goodput, cwnd, queue); default 100 ms.
    #[serde(default)]
    pub sample_interval: Option<Dur>,
    /// The shared forward (sender → receiver) bottleneck.
    pub bottleneck: LinkSpec,
    /// Optional reverse (receiver → sender) bottleneck; default: unlimited, lossless.
    #[serde(default)]
    pub reverse: Option<LinkSpec>,
    /// The IP version of every flow without its own `ip` (default IPv4).
    #[serde(default, skip_serializing_if = "IpVersion::is_v4")]
    pub ip: IpVersion,
    #[serde(rename = "flow")]
    pub flows: Vec<FlowSpec>,
}

/// The IP version a dumbbell flow runs over. Its hosts get addresses of that family
/// (`topology::sender_ip`, `topology::receiver_ip`); IPv6 headers are 20 bytes larger,
/// and the MSS 20 bytes smaller, as over a real link of the same MTU.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum IpVersion {
    #[default]
    V4,
    V6,
}

impl IpVersion {
    pub fn is_v4(&self) -> bool {
        *self == IpVersion::V4
    }
}

fn default_seed() -> u64 {
    1
}

/// One flow (or `count` identical flows).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(from = "FlowToml", into = "FlowToml")]
pub struct FlowSpec {
    /// Base round-trip propagation delay of this flow's path (split rtt/2 each way).
    pub rtt: Dur,
    /// brisk's controller. For a `stack = "linux"` flow it is CUBIC and unused: the
    /// kernel's module is `cc_name`.
    pub cc: CcAlgorithm,
    /// `cc` as written, if it was: one of brisk's controllers, or for a Linux flow
    /// any kernel module name (cubic, reno, bbr, ...).
    pub cc_name: Option<String>,
    pub start: Dur,
    /// Replicate this flow `count` times (default 1).
    pub count: u32,
    pub app: AppSpec,
    pub tcp: TcpKnobs,
    /// Which TCP sends this flow: brisk (default) or, in `brisk run --real` only,
    /// the Linux kernel's (then `cc` names a kernel module: cubic, reno, bbr).
    pub stack: Stack,
    /// This flow's IP version; default the scenario's `ip`.
    pub ip: Option<IpVersion>,
    /// A `[flow.mptcp]` table, kept only to be refused with a pointer to
    /// `[flow.tcp.mptcp]`, where MPTCP's knobs are.
    mptcp: Option<toml::Value>,
}

impl FlowSpec {
    /// The congestion control a Linux flow asks its kernel for (default "cubic").
    pub fn kernel_cc(&self) -> &str {
        self.cc_name.as_deref().unwrap_or("cubic")
    }

    /// brisk's controller named `name`, in serde's words when there is none. A
    /// coupled controller may carry `+lisa` (`lia+lisa`: LISA on, the `lisa` knob).
    fn brisk_cc(name: &str) -> Result<CcAlgorithm, String> {
        use serde::de::value::{Error, StrDeserializer};
        let (base, lisa) = Self::split_lisa(name);
        let cc = CcAlgorithm::deserialize(StrDeserializer::<Error>::new(base))
            .map_err(|e| e.to_string())?;
        if lisa && cc.coupling().is_none() {
            return Err(format!(
                "\"+lisa\" goes with a coupled controller (lia+lisa, olia+lisa, balia+lisa), not \"{base}\""
            ));
        }
        Ok(cc)
    }

    /// `name` without a `+lisa` suffix, and whether it had one.
    fn split_lisa(name: &str) -> (&str, bool) {
        match name.strip_suffix("+lisa") {
            Some(base) => (base, true),
            None => (name, false),
        }
    }
}

/// A flow as written: `cc` is a name, since a Linux flow may name any kernel module.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct FlowToml {
    rtt: Dur,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cc: Option<String>,
    #[serde(default)]
    start: Dur,
    #[serde(default = "one_u32")]
    count: u32,
    app: AppSpec,
    #[serde(default)]
    tcp: TcpKnobs,
    #[serde(default)]
    stack: Stack,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ip: Option<IpVersion>,
    /// Refused at load with a pointer to `[flow.tcp.mptcp]`.
    #[serde(default, skip_serializing)]
    mptcp: Option<toml::Value>,
}

impl From<FlowToml> for FlowSpec {
    fn from(f: FlowToml) -> FlowSpec {
        // An unknown brisk name stays in `cc_name`; validation reports it by field.
        let cc = match (f.stack, &f.cc) {
            (Stack::Brisk, Some(n)) => FlowSpec::brisk_cc(n).unwrap_or_default(),
            _ => CcAlgorithm::default(),
        };
        let mut tcp = f.tcp;
        // `cc = "lia+lisa"` is `lisa = true` (an explicit `lisa = false` stays, and
        // loading refuses the contradiction by name).
        if f.stack == Stack::Brisk
            && f.cc.as_deref().is_some_and(|n| FlowSpec::split_lisa(n).1)
            && tcp.lisa.is_none()
        {
            tcp.lisa = Some(true);
        }
        FlowSpec {
            rtt: f.rtt,
            cc,
            cc_name: f.cc,
            start: f.start,
            count: f.count,
            app: f.app,
            tcp,
            stack: f.stack,
            ip: f.ip,
            mptcp: f.mptcp,
        }
    }
}

impl From<FlowSpec> for FlowToml {
    fn from(f: FlowSpec) -> FlowToml {
        FlowToml {
            rtt: f.rtt,
            cc: Some(f.cc_name.unwrap_or_else(|| f.cc.name().to_string())),
            start: f.start,
            count: f.count,
            app: f.app,
            tcp: f.tcp,
            stack: f.stack,
            ip: f.ip,
            mptcp: None,
        }
    }
}

/// The TCP implementation of a flow's sender.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Stack {
    #[default]
    Brisk,
    /// The Linux kernel's TCP; only over real packets (`brisk run --real`).
    Linux,
}

fn one_u32() -> u32 {
    1
}

impl Scenario {
    /// Parses and validates a scenario; `file` labels errors, and its directory is
    /// where relative `trace` paths are resolved (the working directory for a bare name).
    pub fn from_toml_str_named(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
        let sc: Scenario = crate::error::parse_toml(text, file)?;
        let mut sc = sc;
        for (i, f) in sc.flows.iter().enumerate() {
            if let (Stack::Brisk, Some(n)) = (f.stack, &f.cc_name) {
                FlowSpec::brisk_cc(n).map_err(|message| ScenarioError {
                    file: file.to_string(),
                    field: format!("flow[{i}].cc"),
                    message,
                })?;
                if FlowSpec::split_lisa(n).1 && f.tcp.lisa == Some(false) {
                    return Err(ScenarioError {
                        file: file.to_string(),
                        field: format!("flow[{i}].tcp.lisa"),
                        message: format!("is false, but cc = \"{n}\" switches LISA on"),
                    });
                }
            }
            if f.mptcp.is_some() {
                return Err(ScenarioError {
                    file: file.to_string(),
                    field: format!("flow[{i}].mptcp"),
                    message: "MPTCP's knobs are TCP knobs: write them as [flow.tcp.mptcp]".into(),
                });
            }
        }
        for (i, f) in sc.flows.iter_mut().enumerate() {
            f.tcp
                .normalize()
                .map_err(|(field, message)| ScenarioError {
                    file: file.to_string(),
                    field: format!("flow[{i}].{field}"),
                    message,
                })?;
        }
        sc.validate().map_err(|(field, message)| ScenarioError {
            file: file.to_string(),
            field,
            message,
        })?;
        let base = Path::new(file).parent().unwrap_or(Path::new(""));
        let mut links = vec![(&mut sc.bottleneck, "bottleneck")];
        if let Some(r) = &mut sc.reverse {
            links.push((r, "reverse"));
        }
        for (link, name) in links {
            crate::input::load_link_trace(link, base, name).map_err(|e| ScenarioError {
                file: file.to_string(),
                field: e.field,
                message: e.message,
            })?;
        }
        Ok(sc)
    }

    /// Parses and validates an in-memory scenario.
    pub fn from_toml_str(text: &str) -> Result<Scenario, ScenarioError> {
        Self::from_toml_str_named(text, "<string>")
    }

    /// Reads, parses and validates a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let (file, text) = crate::input::read_file(path)?;
        Self::from_toml_str_named(&text, &file)
    }

    /// What the run will not do although the scenario asks for it, one line each
    /// (the CLI prints them to stderr, Python raises a `UserWarning`). Nothing today:
    /// the last entry was MPTCP beyond one subflow, and brisk's connection now opens
    /// and accepts joins (fullmesh endpoints, ndiffports, ADD_ADDR), with a dumbbell
    /// sender taking its `addr` endpoints as further addresses (`brisk-sim`
    /// topology.rs). A knob that cannot act is refused at load instead, by field.
    pub fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// The sampling interval for time series.
    pub fn sample_interval(&self) -> Duration {
        self.sample_interval
            .map(|d| d.0)
            .unwrap_or(Duration::from_millis(100))
    }

    /// Total number of flows after `count` replication.
    pub fn total_flows(&self) -> u32 {
        self.flows
            .iter()
            .fold(0u32, |a, f| a.saturating_add(f.count))
    }

    /// Range checks serde cannot express. Returns (field, message).
    fn validate(&self) -> Result<(), (String, String)> {
        let err = |f: &str, m: &str| Err((f.to_string(), m.to_string()));
        if self.duration.0.is_zero() || self.duration.0 > MAX_DURATION {
            return err("duration", "must be > 0 and at most 24h");
        }
        let si = self.sample_interval();
        if si < Duration::from_micros(100) {
            return err("sample_interval", "must be at least 100us");
        }
        if self.duration.0.as_nanos() / si.as_nanos() > MAX_SAMPLE_ROWS {
            return Err((
                "sample_interval".into(),
                format!("duration / sample_interval must be at most {MAX_SAMPLE_ROWS} rows"),
            ));
        }
        validate_link(&self.bottleneck, "bottleneck")?;
        if let Some(r) = &self.reverse {
            validate_link(r, "reverse")?;
        }
        if self.flows.is_empty() {
            return err("flow", "at least one [[flow]] is required");
        }
        let total: u64 = self.flows.iter().map(|f| u64::from(f.count)).sum();
        if total > u64::from(MAX_FLOWS) {
            return Err((
                "flow".into(),
                format!("{total} flows in total; at most {MAX_FLOWS} are supported"),
            ));
        }
        let mut first = 0u64;
        for (i, f) in self.flows.iter().enumerate() {
            let p = |k: &str| format!("flow[{i}].{k}");
            let last = first + u64::from(f.count);
            if f.ip.unwrap_or(self.ip) == IpVersion::V4 && last > u64::from(MAX_V4_FLOWS) {
                return Err((
                    p("ip"),
                    format!("IPv4 addresses run out after {MAX_V4_FLOWS} flows; use ip = \"v6\""),
                ));
            }
            first = last;
            if f.count == 0 {
                return Err((p("count"), "must be at least 1".into()));
            }
            if f.rtt.0.is_zero() || f.rtt.0 > Duration::from_secs(60) {
                return Err((p("rtt"), "must be greater than 0 and at most 60s".into()));
            }
            if f.start.0 >= self.duration.0 {
                return Err((p("start"), "must be before the end of the scenario".into()));
            }
            crate::app::validate_app(i, f)?;
            validate_tcp(&f.tcp, f.cc).map_err(|(k, m)| (p(&k), m))?;
            let endpoints = f.tcp.mptcp.iter().flat_map(|m| m.endpoints.iter());
            for (k, e) in endpoints.enumerate() {
                if let Some(i) = e.index.filter(|&i| i > 0) {
                    return Err((
                        p(&format!("tcp.mptcp.endpoint[{k}].index")),
                        format!(
                            "a dumbbell sender has one address (index 0), got {i}; give further addresses as `addr` (the sender takes them), or use a network scenario's multi-homed `[[node]] addresses`"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

fn validate_link(l: &LinkSpec, name: &str) -> Result<(), (String, String)> {
    l.validate(name).map_err(|e| (e.field, e.message))
}
