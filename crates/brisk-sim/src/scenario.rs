//! Scenario files (TOML): what to simulate. Parsing is strict (`deny_unknown_fields`, so
//! typos are errors) and every error names the file, the field path and what was expected,
//! e.g. `scenarios/x.toml: flow[0].rtt: expected a duration like "10ms" ..., got "ten"`.
//!
//! See `units` for the accepted duration, rate and size spellings, and `scenarios/*.toml`
//! for examples.

use crate::units::{Dur, Size};
/// The link description is brisk-net's, shared with the emulator's path.
pub use brisk_net::spec::{JitterSpec, LinkSpec, LossSpec, OutageSpec, QueueSpec};
use brisk_tcp::cc::CcAlgorithm;
use brisk_time::Duration;
use serde::{Deserialize, Serialize};
use std::path::Path;
use thiserror::Error;

/// A scenario problem: which file, which field, what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{file}: {field}: {message}")]
pub struct ScenarioError {
    /// The file name (or `<string>` for in-memory scenarios).
    pub file: String,
    /// Dotted path of the offending key, e.g. `flow[0].rtt`; `(file)` for syntax errors.
    pub field: String,
    pub message: String,
}

/// A scenario file's name (for messages) and text; an unreadable file is a
/// `ScenarioError` on the field `(file)`. Shared by every scenario kind.
pub(crate) fn read_file(path: &Path) -> Result<(String, String), ScenarioError> {
    let file = path.display().to_string();
    match brisk_net::input::read_text(path) {
        Ok(text) => Ok((file, text)),
        Err(e) => Err(ScenarioError {
            file,
            field: "(file)".into(),
            message: format!("cannot read: {e}"),
        }),
    }
}

/// Upper bounds that keep a scenario's memory use bounded.
pub const MAX_FLOWS: u32 = 100_000;
/// Most IPv4 flows: 198.18.x.y and 198.19.x.y with `x.y` = index + 1 (topology.rs)
/// give 65 535 addresses each; more flows need `ip = "v6"`.
pub const MAX_V4_FLOWS: u32 = 65_535;
/// Most time-series rows (duration / sample_interval).
pub const MAX_SAMPLE_ROWS: u128 = 1_000_000;
/// Largest `write_size` of a bulk app (16 MiB, the largest send buffer we expect).
pub const MAX_BULK_WRITE: u64 = 16 << 20;
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
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Base round-trip propagation delay of this flow's path (split rtt/2 each way).
    pub rtt: Dur,
    #[serde(default)]
    pub cc: CcAlgorithm,
    #[serde(default)]
    pub start: Dur,
    /// Replicate this flow `count` times (default 1).
    #[serde(default = "one_u32")]
    pub count: u32,
    pub app: AppSpec,
    #[serde(default)]
    pub tcp: TcpKnobs,
    /// Which TCP sends this flow: brisk (default) or, in `brisk run --real` only,
    /// the Linux kernel's (then `cc` names a kernel module: cubic, reno, bbr).
    #[serde(default)]
    pub stack: Stack,
    /// This flow's IP version; default the scenario's `ip`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<IpVersion>,
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

/// What the application on a flow does.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppSpec {
    /// Send as fast as TCP allows; with `bytes`, send that many then close.
    Bulk {
        #[serde(default)]
        bytes: Option<Size>,
        /// Write in calls of at most this many bytes (Minion's write-size sweep, MN-7);
        /// by default each call offers as much as the send buffer takes. With `[flow.tcp]
        /// unordered_send` each such write is taken whole or not at all.
        #[serde(default)]
        write_size: Option<Size>,
    },
    /// Fixed-size records every `interval` (plus uniform `jitter`), each stamped with its
    /// index and send time so the receiver measures per-record delivery latency.
    Records {
        size: Size,
        interval: Dur,
        #[serde(default)]
        jitter: Option<Dur>,
        /// Normal jitter with this standard deviation added to each interval (the RDB
        /// paper's per-stream ITT jitter, e.g. 3ms on 30ms); gaps never go below 0.
        #[serde(default)]
        jitter_sd: Option<Dur>,
        /// Stop (and close) after this many records.
        #[serde(default)]
        count: Option<u64>,
        /// A layered video source (1 to 16 layers): each interval emits one record
        /// per active layer, and the number of active layers adapts to the delay the
        /// sender measures from generation to ACK (`crate::app::LayerControl`; the
        /// CDG paper's SCC substitute, docs/mechanisms/cdg.md).
        #[serde(default)]
        layers: Option<u32>,
    },
    /// Datagrams over uCOBS (Minion §5, `crate::dgram_app`): `size`-byte datagrams
    /// (the 24-byte record header included) every `interval` (plus uniform `jitter`;
    /// `interval = 0`: network-limited, a new datagram whenever the stream has taken
    /// the previous one), each written as one uCOBS record; with `urgent_every = n`, every n-th datagram
    /// is written at a higher priority (it overtakes only with `[flow.tcp]
    /// unordered_send`). Latency is measured per datagram at its first delivery.
    Datagrams {
        size: Size,
        interval: Dur,
        #[serde(default)]
        jitter: Option<Dur>,
        #[serde(default)]
        count: Option<u64>,
        #[serde(default)]
        urgent_every: Option<u64>,
    },
    /// Datagrams over UDP (`crate::udp_app`): `size`-byte datagrams (the 24-byte record
    /// header included) every `interval` (plus uniform `jitter`), each sent as one IP/UDP
    /// packet at once, with no congestion control and no retransmission; accounted as
    /// `datagrams` (a datagram the network drops is never delivered). The flow's `cc`
    /// and `[flow.tcp]` do not apply.
    Udp {
        size: Size,
        interval: Dur,
        #[serde(default)]
        jitter: Option<Dur>,
        #[serde(default)]
        count: Option<u64>,
    },
    /// `request` bytes up, `response` bytes down, then `think` time; `count` exchanges
    /// (or until the end).
    RequestResponse {
        request: Size,
        response: Size,
        #[serde(default)]
        count: Option<u64>,
        #[serde(default)]
        think: Option<Dur>,
        /// Draw each think time from an exponential distribution with mean `think`
        /// (the CDG paper's download gaps) instead of waiting exactly `think`.
        #[serde(default)]
        think_exp: Option<bool>,
    },
    /// One page load on one connection (`crate::page_app`; the msTCP web experiment):
    /// `objects` are the sizes, the first being the primary (HTML) object, requested
    /// first; the rest are requested together once it has arrived. `framing`:
    /// "pipelined" (HTTP/1.1 pipelining, default), "mstcp" (a stream per object over
    /// msTCP; with `[flow.tcp] unordered` chunks arrive unordered), or "h2" (HTTP/2-
    /// style frames, round-robin). `request` (default 300 B), `chunk` (msTCP chunk
    /// payload, default 1400 B, mstcp only), `frame` (HTTP/2 frame payload, default
    /// 16 KiB, h2 only). The data flows from the receiver host to the flow's host.
    Page {
        objects: Vec<Size>,
        #[serde(default)]
        framing: crate::page_app::PageFraming,
        #[serde(default)]
        request: Option<Size>,
        #[serde(default)]
        chunk: Option<Size>,
        #[serde(default)]
        frame: Option<Size>,
    },
    /// A browser-like page download (`crate::web`): `objects` are the sizes, the first
    /// being the HTML; the HTML comes over one connection, then the rest over up to
    /// `connections` persistent connections (default 6), each asking for the next
    /// object when idle. `request` is the size of each request (default 300 bytes).
    /// The data flows from the receiver host to the flow's (browser) host: use a
    /// `[reverse]` link to put a bottleneck on it.
    Web {
        objects: Vec<Size>,
        #[serde(default)]
        connections: Option<u32>,
        #[serde(default)]
        request: Option<Size>,
    },
}

impl AppSpec {
    /// A `page` app's settings with the defaults filled in.
    pub fn page_config(&self) -> Option<crate::page_app::PageConfig> {
        use crate::page_app as pa;
        let AppSpec::Page {
            objects,
            framing,
            request,
            chunk,
            frame,
        } = self
        else {
            return None;
        };
        Some(pa::PageConfig {
            sizes: objects.iter().map(|o| o.0).collect(),
            framing: *framing,
            request: request.map_or(pa::DEFAULT_PAGE_REQUEST, |r| r.0),
            chunk: chunk.map_or(pa::DEFAULT_CHUNK, |c| c.0),
            frame: frame.map_or(pa::DEFAULT_FRAME, |f| f.0),
        })
    }
}

/// Per-flow TCP knobs. Each flat key maps onto the `brisk_tcp::Config` field of the
/// same name (in its mechanism's group); the same knobs can also be written as tables
/// named after those groups (`[flow.tcp.recovery]`, `[flow.tcp.ack]`, ...,
/// `[flow.tcp.delay_correlation]`), which [`TcpKnobs::normalize`] folds onto the flat
/// keys. A knob set both ways is an error naming both.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TcpKnobs {
    pub mss: Option<u16>,
    pub initial_cwnd: Option<u32>,
    pub nagle: Option<bool>,
    pub sack: Option<bool>,
    pub timestamps: Option<bool>,
    pub window_scaling: Option<bool>,
    pub delayed_ack: Option<bool>,
    pub max_ack_delay: Option<Dur>,
    /// The delayed-ACK timer (default 40 ms, capped by `max_ack_delay`).
    pub ack_timer: Option<Dur>,
    /// Quick-ACK credits at connection start (default 16; 0: delay from the start).
    pub quick_acks: Option<u32>,
    pub recv_buffer: Option<Size>,
    pub send_buffer: Option<Size>,
    pub min_rto: Option<Dur>,
    pub initial_rto: Option<Dur>,
    /// ECN negotiation: `ecn = true`, or a table `[flow.tcp.ecn]` with `enabled`.
    pub ecn: Option<EcnKnob>,
    pub rack: Option<bool>,
    pub tlp: Option<bool>,
    pub time_wait: Option<Dur>,
    pub user_timeout: Option<Dur>,
    pub max_retries: Option<u32>,
    /// RTO-restart (RFC 7765) with this rrthresh (e.g. 4); absent: off.
    pub rto_restart: Option<u32>,
    /// TLP-restart: the probe timer runs from the last transmission.
    pub tlp_restart: Option<bool>,
    /// The probe timeout's formula: "rfc8985" (default) or "draft01" (the 2013 draft
    /// the tail-loss paper measured: max(2·SRTT, 10 ms); max(2·SRTT, 1.5·SRTT + 200 ms)).
    pub tlp_pto: Option<TlpPtoKnob>,
    /// RFC 5827 early retransmit without RACK: "off" (default), "on", "delayed"
    /// (after max(SRTT/4, 2 ms), Linux's tcp_early_retrans = 2/3).
    pub early_retransmit: Option<ErKnob>,
    /// FACK loss marking without RACK (Linux 3.x `tcp_fack`); default false.
    pub fack: Option<bool>,
    /// A set of defaults for the other knobs: "3.17" is the Linux 3.17 sender the
    /// tail-loss paper measured (rack = false, fack = true, early_retransmit =
    /// "delayed", tlp_pto = "draft01"); knobs set explicitly win.
    pub linux_profile: Option<LinuxProfile>,
    pub keepalive: Option<Dur>,
    /// Unordered receive (uTCP): the receiving app reads with `read_unordered` and
    /// counts bytes at first delivery (docs/mechanisms/utcp.md).
    pub unordered: Option<bool>,
    /// Prioritised send (uTCP `SO_UNORDEREDSEND`): a `datagrams` app's urgent writes
    /// overtake unsent ordinary ones (docs/mechanisms/utcp.md).
    pub unordered_send: Option<bool>,
    /// Wrap `cc` in the delay-correlation bufferbloat limiter (thesis ch. 3):
    /// `delay_correlation = true`, or a table `[flow.tcp.delay_correlation]` with
    /// `window`, `threshold` and `passive` (its presence switches the layer on).
    pub delay_correlation: Option<DcKnob>,
    /// Delay-correlation observation window W (default 32); needs `delay_correlation`.
    pub dc_window: Option<usize>,
    /// Delay-correlation threshold on Pearson r (default 0.90); needs `delay_correlation`.
    pub dc_threshold: Option<f64>,
    /// Delay correlation observes and reports r but never sets cwnd (CUBIC runs as
    /// without it); needs `delay_correlation`.
    pub dc_passive: Option<bool>,
    /// Wrap `cc` in new congestion window validation (RFC 7661; docs/mechanisms/new-cwv.md).
    /// With it on, the RFC 5681 restart after idle is off (the NVP governs idle time).
    pub new_cwv: Option<bool>,
    /// new-CWV non-validated period (default 300s, > 0); needs `new_cwv`.
    pub new_cwv_nvp: Option<Dur>,
    /// Wrap `cc` in ABE, Alternative Backoff with ECN (RFC 8511;
    /// docs/mechanisms/abe.md): ECN marks reduce cwnd by `beta_ecn`, losses as before.
    /// Needs `ecn = true`.
    pub abe: Option<bool>,
    /// ABE's β_ecn, in (0, 1] (default 0.8 for Reno, 0.85 for CUBIC); needs `abe`.
    pub beta_ecn: Option<f64>,
    /// The decrease for losses (and every other non-ECN reduction), in (0, 1], in place
    /// of the controller's own: the ABE paper's second sysctl; needs `abe`.
    pub beta_loss: Option<f64>,
    /// `[flow.tcp.cdg]`: CDG's Linux module parameters (window, backoff_beta,
    /// backoff_factor, hystart_detect, use_ineff, use_shadow, use_tolerance;
    /// docs/mechanisms/cdg.md); needs `cc = "cdg"`.
    pub cdg: Option<CdgTable>,
    /// `[flow.tcp.dctcp]`: DCTCP's Linux module parameters (shift_g, alpha_on_init;
    /// docs/mechanisms/dctcp.md); needs `cc = "dctcp"`.
    pub dctcp: Option<DctcpTable>,
    /// RFC 5681 §4.1 restart after idle (Linux `tcp_slow_start_after_idle`, default true).
    pub slow_start_after_idle: Option<bool>,
    /// Linux before 3.16: cwnd may grow while in flight is within this many segments
    /// of cwnd (Linux used 3; the RDB paper's senders). Absent: today's rule.
    pub cwnd_limited_slack: Option<u32>,
    /// Redundant data bundling (RDB, docs/mechanisms/rdb.md): `rdb = true`, or a table
    /// `[flow.tcp.rdb]` with `lim`, `spifl`, `itt_min`, `max_bytes`, `loss_inference`
    /// (its presence switches RDB on).
    pub rdb: Option<RdbKnob>,
    /// Most earlier segments per bundle, 1 to 1024 or "unlimited" (default 1); needs `rdb`.
    pub rdb_lim: Option<RdbLim>,
    /// Static thin-stream test SPIFL_n: bundle only with fewer than n packets in
    /// flight. Without it the dynamic test DPIFL applies; needs `rdb`.
    pub rdb_spifl: Option<u32>,
    /// DPIFL's ITT_min (default 10ms): bundle while PIF · ITT_min < min RTT; needs `rdb`.
    pub rdb_itt_min: Option<Dur>,
    /// A payload cap for bundles below the MSS, bytes; needs `rdb`.
    pub rdb_max_bytes: Option<u32>,
    /// How losses hidden by bundles are found: "ack" (the paper's rule, default),
    /// "dsack" (its D-SACK refinement) or "off" ("old RDB"); needs `rdb`.
    pub rdb_loss_inference: Option<RdbLossInference>,
    /// RC3 (docs/mechanisms/rc3.md): `rc3 = true`, or a table `[flow.tcp.rc3]` with
    /// `levels` (segments per low-priority level, default [40, 400, 4000]) and `rule`
    /// ("design", the paper's, default; or "linux", the patch's cumulative
    /// thresholds). As a sender it adds the recursive-low-priority copies; as a
    /// receiver it ACKs low-priority data at the data's priority.
    pub rc3: Option<Rc3Knob>,
    /// DSCP of every packet the connection sends, 0 to 63 (default 0). On a `prio`
    /// queue a packet's band is its DSCP (capped at the last band), so `dscp = 1` puts
    /// a connection one band below DSCP-0 traffic (RC3-13's "everything else shifts
    /// down one band"). Not with `rc3`, which sets each packet's DSCP to its priority.
    pub dscp: Option<u8>,
    /// `[flow.tcp.options]`: sack, timestamps, window_scaling.
    pub options: Option<OptionsKnobs>,
    /// `[flow.tcp.congestion]`: initial_cwnd, slow_start_after_idle, new_cwv, new_cwv_nvp,
    /// cwnd_limited_slack, abe, beta_ecn.
    pub congestion: Option<CongestionKnobs>,
    /// `[flow.tcp.recovery]`: rack, tlp, min_rto, initial_rto, max_retries,
    /// rto_restart, tlp_restart, tlp_pto, early_retransmit, fack.
    pub recovery: Option<RecoveryKnobs>,
    /// `[flow.tcp.ack]`: delayed, max_delay, timer, quick_acks.
    pub ack: Option<AckKnobs>,
    /// `[flow.tcp.timeouts]`: time_wait, user_timeout, keepalive.
    pub timeouts: Option<TimeoutKnobs>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OptionsKnobs {
    pub sack: Option<bool>,
    pub timestamps: Option<bool>,
    pub window_scaling: Option<bool>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CongestionKnobs {
    pub initial_cwnd: Option<u32>,
    pub slow_start_after_idle: Option<bool>,
    pub new_cwv: Option<bool>,
    pub new_cwv_nvp: Option<Dur>,
    pub cwnd_limited_slack: Option<u32>,
    pub abe: Option<bool>,
    pub beta_ecn: Option<f64>,
    pub beta_loss: Option<f64>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RecoveryKnobs {
    pub rack: Option<bool>,
    pub tlp: Option<bool>,
    pub min_rto: Option<Dur>,
    pub initial_rto: Option<Dur>,
    pub max_retries: Option<u32>,
    pub rto_restart: Option<u32>,
    pub tlp_restart: Option<bool>,
    pub tlp_pto: Option<TlpPtoKnob>,
    pub early_retransmit: Option<ErKnob>,
    pub fack: Option<bool>,
}

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

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AckKnobs {
    pub delayed: Option<bool>,
    pub max_delay: Option<Dur>,
    pub timer: Option<Dur>,
    pub quick_acks: Option<u32>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TimeoutKnobs {
    pub time_wait: Option<Dur>,
    pub user_timeout: Option<Dur>,
    pub keepalive: Option<Dur>,
}

/// `[flow.tcp.delay_correlation]` as a table.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DcTable {
    pub window: Option<usize>,
    pub threshold: Option<f64>,
    pub passive: Option<bool>,
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

/// `[flow.tcp.rdb]` as a table.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RdbTable {
    pub lim: Option<RdbLim>,
    pub spifl: Option<u32>,
    pub itt_min: Option<Dur>,
    pub max_bytes: Option<u32>,
    pub loss_inference: Option<RdbLossInference>,
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

/// Folds `nested` onto `flat`; both set is an error naming both keys.
fn fold<T>(
    flat: &mut Option<T>,
    nested: Option<T>,
    flat_key: &str,
    nested_key: &str,
) -> Result<(), (String, String)> {
    if nested.is_some() {
        if flat.is_some() {
            return Err((
                format!("tcp.{nested_key}"),
                format!("also set as tcp.{flat_key}; set it once"),
            ));
        }
        *flat = nested;
    }
    Ok(())
}

impl TcpKnobs {
    /// Folds the grouped tables onto the flat keys (and the delay-correlation and ECN
    /// tables onto their switches), so validation and `to_config` see one form.
    /// Errors are `(field, message)` relative to the flow.
    pub fn normalize(&mut self) -> Result<(), (String, String)> {
        if let Some(o) = self.options.take() {
            fold(&mut self.sack, o.sack, "sack", "options.sack")?;
            fold(
                &mut self.timestamps,
                o.timestamps,
                "timestamps",
                "options.timestamps",
            )?;
            fold(
                &mut self.window_scaling,
                o.window_scaling,
                "window_scaling",
                "options.window_scaling",
            )?;
        }
        if let Some(c) = self.congestion.take() {
            fold(
                &mut self.initial_cwnd,
                c.initial_cwnd,
                "initial_cwnd",
                "congestion.initial_cwnd",
            )?;
            fold(
                &mut self.slow_start_after_idle,
                c.slow_start_after_idle,
                "slow_start_after_idle",
                "congestion.slow_start_after_idle",
            )?;
            fold(
                &mut self.new_cwv,
                c.new_cwv,
                "new_cwv",
                "congestion.new_cwv",
            )?;
            fold(
                &mut self.new_cwv_nvp,
                c.new_cwv_nvp,
                "new_cwv_nvp",
                "congestion.new_cwv_nvp",
            )?;
            fold(&mut self.abe, c.abe, "abe", "congestion.abe")?;
            fold(
                &mut self.beta_ecn,
                c.beta_ecn,
                "beta_ecn",
                "congestion.beta_ecn",
            )?;
            fold(
                &mut self.beta_loss,
                c.beta_loss,
                "beta_loss",
                "congestion.beta_loss",
            )?;
            fold(
                &mut self.cwnd_limited_slack,
                c.cwnd_limited_slack,
                "cwnd_limited_slack",
                "congestion.cwnd_limited_slack",
            )?;
        }
        if let Some(r) = self.recovery.take() {
            fold(&mut self.rack, r.rack, "rack", "recovery.rack")?;
            fold(&mut self.tlp, r.tlp, "tlp", "recovery.tlp")?;
            fold(&mut self.min_rto, r.min_rto, "min_rto", "recovery.min_rto")?;
            fold(
                &mut self.initial_rto,
                r.initial_rto,
                "initial_rto",
                "recovery.initial_rto",
            )?;
            fold(
                &mut self.max_retries,
                r.max_retries,
                "max_retries",
                "recovery.max_retries",
            )?;
            fold(
                &mut self.rto_restart,
                r.rto_restart,
                "rto_restart",
                "recovery.rto_restart",
            )?;
            fold(
                &mut self.tlp_restart,
                r.tlp_restart,
                "tlp_restart",
                "recovery.tlp_restart",
            )?;
            fold(&mut self.tlp_pto, r.tlp_pto, "tlp_pto", "recovery.tlp_pto")?;
            fold(&mut self.fack, r.fack, "fack", "recovery.fack")?;
            fold(
                &mut self.early_retransmit,
                r.early_retransmit,
                "early_retransmit",
                "recovery.early_retransmit",
            )?;
        }
        if let Some(a) = self.ack.take() {
            fold(
                &mut self.delayed_ack,
                a.delayed,
                "delayed_ack",
                "ack.delayed",
            )?;
            fold(
                &mut self.max_ack_delay,
                a.max_delay,
                "max_ack_delay",
                "ack.max_delay",
            )?;
            fold(&mut self.ack_timer, a.timer, "ack_timer", "ack.timer")?;
            fold(
                &mut self.quick_acks,
                a.quick_acks,
                "quick_acks",
                "ack.quick_acks",
            )?;
        }
        if let Some(t) = self.timeouts.take() {
            fold(
                &mut self.time_wait,
                t.time_wait,
                "time_wait",
                "timeouts.time_wait",
            )?;
            fold(
                &mut self.user_timeout,
                t.user_timeout,
                "user_timeout",
                "timeouts.user_timeout",
            )?;
            fold(
                &mut self.keepalive,
                t.keepalive,
                "keepalive",
                "timeouts.keepalive",
            )?;
        }
        if let Some(SwitchOrTable::Table(t)) = self.ecn.clone() {
            self.ecn = t
                .enabled
                .map(SwitchOrTable::Switch)
                .or(Some(SwitchOrTable::Switch(true)));
        }
        if let Some(SwitchOrTable::Table(t)) = self.rdb.clone() {
            fold(&mut self.rdb_lim, t.lim, "rdb_lim", "rdb.lim")?;
            fold(&mut self.rdb_spifl, t.spifl, "rdb_spifl", "rdb.spifl")?;
            fold(
                &mut self.rdb_itt_min,
                t.itt_min,
                "rdb_itt_min",
                "rdb.itt_min",
            )?;
            fold(
                &mut self.rdb_max_bytes,
                t.max_bytes,
                "rdb_max_bytes",
                "rdb.max_bytes",
            )?;
            fold(
                &mut self.rdb_loss_inference,
                t.loss_inference,
                "rdb_loss_inference",
                "rdb.loss_inference",
            )?;
            self.rdb = Some(SwitchOrTable::Switch(true));
        }
        if let Some(SwitchOrTable::Table(t)) = self.delay_correlation.clone() {
            fold(
                &mut self.dc_window,
                t.window,
                "dc_window",
                "delay_correlation.window",
            )?;
            fold(
                &mut self.dc_threshold,
                t.threshold,
                "dc_threshold",
                "delay_correlation.threshold",
            )?;
            fold(
                &mut self.dc_passive,
                t.passive,
                "dc_passive",
                "delay_correlation.passive",
            )?;
            self.delay_correlation = Some(SwitchOrTable::Switch(true));
        }
        Ok(())
    }

    fn switch(k: &Option<SwitchOrTable<impl Sized>>) -> Option<bool> {
        match k {
            Some(SwitchOrTable::Switch(b)) => Some(*b),
            // Normalised away; a table alone means "on".
            Some(SwitchOrTable::Table(_)) => Some(true),
            None => None,
        }
    }

    /// The ECN switch, if set (`ecn = true` or a `[flow.tcp.ecn]` table).
    pub fn ecn_switch(&self) -> Option<bool> {
        match &self.ecn {
            Some(SwitchOrTable::Table(t)) => Some(t.enabled.unwrap_or(true)),
            other => Self::switch(other),
        }
    }

    /// Whether delay correlation is switched on.
    pub fn delay_correlation_on(&self) -> bool {
        Self::switch(&self.delay_correlation) == Some(true)
    }

    /// The delay-correlation configuration these knobs ask for, if it is on.
    pub fn delay_correlation_config(&self) -> Option<brisk_tcp::cc::delay_corr::DelayCorrConfig> {
        if !self.delay_correlation_on() {
            return None;
        }
        let mut dc = brisk_tcp::cc::delay_corr::DelayCorrConfig::default();
        if let Some(w) = self.dc_window {
            dc.window = w;
        }
        if let Some(t) = self.dc_threshold {
            dc.threshold = t;
        }
        dc.passive = self.dc_passive == Some(true);
        Some(dc)
    }

    /// CDG's and DCTCP's parameters: Linux's defaults overridden by the tables.
    pub fn base_tuning(&self) -> brisk_tcp::cc::BaseTuning {
        let mut b = brisk_tcp::cc::BaseTuning::default();
        if let Some(t) = &self.cdg {
            let c = &mut b.cdg;
            c.window = t.window.unwrap_or(c.window);
            c.backoff_beta = t.backoff_beta.unwrap_or(c.backoff_beta);
            c.backoff_factor = t.backoff_factor.unwrap_or(c.backoff_factor);
            c.hystart_detect = t.hystart_detect.unwrap_or(c.hystart_detect);
            c.use_ineff = t.use_ineff.unwrap_or(c.use_ineff);
            c.use_shadow = t.use_shadow.unwrap_or(c.use_shadow);
            c.use_tolerance = t.use_tolerance.unwrap_or(c.use_tolerance);
        }
        if let Some(t) = &self.dctcp {
            let d = &mut b.dctcp;
            d.shift_g = t.shift_g.unwrap_or(d.shift_g);
            d.alpha_on_init = t.alpha_on_init.unwrap_or(d.alpha_on_init);
        }
        b
    }

    /// The TCP configuration for this flow: Linux defaults overridden by the knobs
    /// (call after [`TcpKnobs::normalize`], as scenario loading does).
    pub fn to_config(&self, cc: CcAlgorithm) -> brisk_tcp::Config {
        let mut c = brisk_tcp::Config::default();
        c.congestion.controller = cc.into();
        c.congestion.controller.tuning = self.base_tuning();
        if self.linux_profile == Some(LinuxProfile::Linux3_17) {
            // The tail-loss paper's sender (spec §1.0): no RACK (3.17 predates it),
            // delayed early retransmit with TLP (tcp_early_retrans = 3), the 2013
            // draft's PTO. Explicit knobs below override these.
            c.recovery.rack = false;
            c.recovery.early_retransmit = brisk_tcp::config::EarlyRetransmit::Delayed;
            c.recovery.tlp_pto = brisk_tcp::recovery::tlp::PtoFormula::Draft01;
            c.recovery.fack = true;
        }
        macro_rules! set {
            ($($k:ident => $($f:ident).+),* $(,)?) => { $( if let Some(v) = self.$k { c.$($f).+ = v; } )* };
        }
        macro_rules! set_dur {
            ($($k:ident => $($f:ident).+),* $(,)?) => { $( if let Some(v) = self.$k { c.$($f).+ = v.0; } )* };
        }
        set!(
            mss => mss,
            initial_cwnd => congestion.initial_cwnd,
            nagle => nagle,
            sack => options.sack,
            timestamps => options.timestamps,
            window_scaling => options.window_scaling,
            delayed_ack => ack.delayed,
            quick_acks => ack.quick_acks,
            rack => recovery.rack,
            tlp => recovery.tlp,
            unordered => unordered,
            unordered_send => unordered_send,
            max_retries => recovery.max_retries,
            tlp_restart => recovery.tlp_restart,
            fack => recovery.fack,
            slow_start_after_idle => congestion.slow_start_after_idle,
            dscp => dscp,
        );
        set_dur!(
            max_ack_delay => ack.max_delay,
            ack_timer => ack.ato,
            min_rto => recovery.min_rto,
            initial_rto => recovery.initial_rto,
            time_wait => timeouts.time_wait,
        );
        c.recovery.rto_restart = self.rto_restart;
        if let Some(t) = self.tlp_pto {
            c.recovery.tlp_pto = match t {
                TlpPtoKnob::Rfc8985 => brisk_tcp::recovery::tlp::PtoFormula::Rfc8985,
                TlpPtoKnob::Draft01 => brisk_tcp::recovery::tlp::PtoFormula::Draft01,
            };
        }
        if let Some(e) = self.early_retransmit {
            c.recovery.early_retransmit = match e {
                ErKnob::Off => brisk_tcp::config::EarlyRetransmit::Off,
                ErKnob::On => brisk_tcp::config::EarlyRetransmit::Immediate,
                ErKnob::Delayed => brisk_tcp::config::EarlyRetransmit::Delayed,
            };
        }
        if let Some(on) = Self::switch(&self.ecn) {
            c.ecn.enabled = on;
        }
        c.timeouts.user_timeout = self.user_timeout.map(|d| d.0);
        c.timeouts.keepalive = self.keepalive.map(|d| d.0);
        if let Some(v) = self.recv_buffer {
            c.recv_buffer = usize::try_from(v.0).unwrap_or(usize::MAX);
        }
        if let Some(v) = self.send_buffer {
            c.send_buffer = usize::try_from(v.0).unwrap_or(usize::MAX);
        }
        if let Some(dc) = self.delay_correlation_config() {
            c.congestion.controller = c
                .congestion
                .controller
                .with_layer(brisk_tcp::cc::LayerSpec::DelayCorrelation(dc));
        }
        c.transmit.rdb = self.rdb_config();
        c.transmit.rc3 = self.rc3_config().and_then(Result::ok);
        c.congestion.cwnd_limited_slack = self.cwnd_limited_slack;
        if let Some(cwv) = self.new_cwv_config() {
            c.congestion.controller = c
                .congestion
                .controller
                .with_layer(brisk_tcp::cc::LayerSpec::NewCwv(cwv));
        }
        if self.abe == Some(true) {
            let abe = brisk_tcp::cc::abe::AbeConfig {
                beta_ecn: self.beta_ecn,
                beta_loss: self.beta_loss,
            };
            c.congestion.controller = c
                .congestion
                .controller
                .with_layer(brisk_tcp::cc::LayerSpec::Abe(abe));
        }
        c
    }

    /// The RC3 configuration these knobs ask for, if it is on; `Err` names what is
    /// wrong with the levels (validation reports it).
    pub fn rc3_config(&self) -> Option<Result<brisk_tcp::rc3::Rc3Config, String>> {
        use brisk_tcp::rc3::{LevelRule, Rc3Config, Rc3Levels};
        match &self.rc3 {
            None | Some(SwitchOrTable::Switch(false)) => None,
            Some(SwitchOrTable::Switch(true)) => Some(Ok(Rc3Config::default())),
            Some(SwitchOrTable::Table(t)) => {
                let rule = match t.rule {
                    Some(Rc3RuleKnob::Linux) => LevelRule::LinuxCumulative,
                    _ => LevelRule::Design,
                };
                let sizes = t.levels.clone().unwrap_or_else(|| vec![40, 400, 4000]);
                Some(
                    Rc3Levels::new(sizes, rule)
                        .map(|levels| Rc3Config { levels })
                        .map_err(|e| e.to_string()),
                )
            }
        }
    }

    /// The RDB configuration these knobs ask for, if it is on (after validation, so
    /// the limits are in range).
    pub fn rdb_config(&self) -> Option<brisk_tcp::rdb::RdbConfig> {
        if Self::switch(&self.rdb) != Some(true) {
            return None;
        }
        let mut cfg = brisk_tcp::rdb::RdbConfig::default();
        match self.rdb_lim {
            Some(RdbLim::Count(n)) => cfg.lim = Some(n.min(1024) as u32),
            Some(RdbLim::Unlimited) => cfg.lim = None,
            None => {}
        }
        if let Some(n) = self.rdb_spifl {
            cfg.thin = brisk_tcp::rdb::ThinTest::Spifl(n);
        } else if let Some(d) = self.rdb_itt_min {
            cfg.thin = brisk_tcp::rdb::ThinTest::Dpifl { itt_min: d.0 };
        }
        cfg.max_bytes = self.rdb_max_bytes;
        if let Some(l) = self.rdb_loss_inference {
            cfg.loss_inference = match l {
                RdbLossInference::Ack => brisk_tcp::rdb::LossInference::Ack,
                RdbLossInference::Dsack => brisk_tcp::rdb::LossInference::Dsack,
                RdbLossInference::Off => brisk_tcp::rdb::LossInference::Off,
            };
        }
        Some(cfg)
    }

    /// The new-CWV configuration these knobs ask for, if it is on.
    pub fn new_cwv_config(&self) -> Option<brisk_tcp::cc::new_cwv::NewCwvConfig> {
        if self.new_cwv != Some(true) {
            return None;
        }
        let mut cfg = brisk_tcp::cc::new_cwv::NewCwvConfig::default();
        if let Some(nvp) = self.new_cwv_nvp {
            cfg.nvp = nvp.0;
        }
        Some(cfg)
    }
}

/// serde names Rust types in its messages ("expected u16"); a user needs the range.
pub(crate) fn humane_types(msg: &str) -> String {
    const RANGES: &[(&str, &str)] = &[
        ("expected u8", "expected an integer from 0 to 255"),
        ("expected u16", "expected an integer from 0 to 65535"),
        ("expected u32", "expected an integer from 0 to 4294967295"),
        (
            "expected u64",
            "expected an integer from 0 to 18446744073709551615",
        ),
        (
            "expected usize",
            "expected an integer from 0 to 18446744073709551615",
        ),
        ("expected i64", "expected an integer"),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
    ];
    let mut out = msg.to_string();
    for (rust, human) in RANGES {
        if let Some(i) = out.find(rust) {
            // Only whole words: "expected u16" but not "expected u160".
            let end = i + rust.len();
            if !out[end..].starts_with(|c: char| c.is_ascii_alphanumeric()) {
                out.replace_range(i..end, human);
            }
        }
    }
    out
}

impl Scenario {
    /// Parses and validates a scenario; `file` labels errors, and its directory is
    /// where relative `trace` paths are resolved (the working directory for a bare name).
    pub fn from_toml_str_named(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
        let de = toml::Deserializer::new(text);
        let sc: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let mut message = humane_types(inner.message());
            if let Some(span) = inner.span() {
                let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                message.push_str(&format!(" (line {line})"));
            }
            let field = if path.is_empty() || path == "." {
                "(file)".to_string()
            } else {
                path
            };
            ScenarioError {
                file: file.to_string(),
                field,
                message,
            }
        })?;
        let mut sc = sc;
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
            link.load_trace(base, name).map_err(|e| ScenarioError {
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
        let (file, text) = read_file(path)?;
        Self::from_toml_str_named(&text, &file)
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
            match &f.app {
                AppSpec::Bulk { bytes, write_size } => {
                    if bytes.is_some_and(|b| b.0 == 0) {
                        return Err((p("app.bytes"), "must be > 0".into()));
                    }
                    if let Some(w) = write_size {
                        if w.0 == 0 || w.0 > MAX_BULK_WRITE {
                            return Err((
                                p("app.write_size"),
                                format!("must be between 1 B and {MAX_BULK_WRITE} B"),
                            ));
                        }
                        let cfg = f.tcp.to_config(f.cc);
                        if cfg.unordered_send && w.0 > cfg.send_buffer as u64 {
                            return Err((
                                p("app.write_size"),
                                format!(
                                    "must be at most the send buffer ({} B): with unordered_send a write is taken whole",
                                    cfg.send_buffer
                                ),
                            ));
                        }
                    }
                }
                AppSpec::Records {
                    size,
                    interval,
                    count,
                    jitter_sd,
                    layers,
                    ..
                } => {
                    if layers.is_some_and(|n| n == 0 || n > 16) {
                        return Err((p("app.layers"), "must be between 1 and 16".into()));
                    }
                    if jitter_sd.is_some_and(|j| j.0 > interval.0 * 10) {
                        return Err((p("app.jitter_sd"), "must be at most 10 intervals".into()));
                    }
                    if size.0 < brisk_app::records::HEADER_LEN as u64
                        || size.0 > brisk_app::records::MAX_RECORD
                    {
                        return Err((
                            p("app.size"),
                            format!(
                                "must be between {} (the record header) and 64MiB",
                                brisk_app::records::HEADER_LEN
                            ),
                        ));
                    }
                    if interval.0.is_zero() {
                        return Err((p("app.interval"), "must be > 0".into()));
                    }
                    if *count == Some(0) {
                        return Err((p("app.count"), "must be > 0".into()));
                    }
                }
                AppSpec::Datagrams {
                    size,
                    interval,
                    jitter,
                    count,
                    urgent_every,
                } => {
                    if size.0 < brisk_app::records::HEADER_LEN as u64 || size.0 > 65_536 {
                        return Err((
                            p("app.size"),
                            format!(
                                "must be between {} (the record header) and 64KiB",
                                brisk_app::records::HEADER_LEN
                            ),
                        ));
                    }
                    if interval.0.is_zero() && jitter.is_some() {
                        return Err((
                            p("app.jitter"),
                            "has no meaning with interval = 0 (a network-limited source)".into(),
                        ));
                    }
                    if jitter.is_some_and(|j| j.0 > interval.0 * 10) {
                        return Err((p("app.jitter"), "must be at most 10 intervals".into()));
                    }
                    if *count == Some(0) {
                        return Err((p("app.count"), "must be > 0".into()));
                    }
                    if *urgent_every == Some(0) {
                        return Err((p("app.urgent_every"), "must be > 0".into()));
                    }
                }
                AppSpec::Udp {
                    size,
                    interval,
                    jitter,
                    count,
                } => {
                    let max = crate::udp_app::MAX_UDP_PAYLOAD;
                    if size.0 < brisk_app::records::HEADER_LEN as u64 || size.0 > max {
                        return Err((
                            p("app.size"),
                            format!(
                                "must be between {} (the record header) and {max} bytes (one IPv4 packet)",
                                brisk_app::records::HEADER_LEN
                            ),
                        ));
                    }
                    if interval.0.is_zero() {
                        return Err((
                            p("app.interval"),
                            "must be > 0 (UDP has no congestion control to pace a network-limited source)".into(),
                        ));
                    }
                    if jitter.is_some_and(|j| j.0 > interval.0 * 10) {
                        return Err((p("app.jitter"), "must be at most 10 intervals".into()));
                    }
                    if *count == Some(0) {
                        return Err((p("app.count"), "must be > 0".into()));
                    }
                }
                AppSpec::RequestResponse {
                    request,
                    response,
                    count,
                    think,
                    think_exp,
                } => {
                    if *think_exp == Some(true) && think.is_none_or(|t| t.0.is_zero()) {
                        return Err((
                            p("app.think_exp"),
                            "needs think > 0 (the mean of the exponential gaps)".into(),
                        ));
                    }
                    if request.0 == 0 || request.0 > 64 << 20 {
                        return Err((p("app.request"), "must be between 1 and 64MiB".into()));
                    }
                    if response.0 == 0 || response.0 > 64 << 20 {
                        return Err((p("app.response"), "must be between 1 and 64MiB".into()));
                    }
                    if *count == Some(0) {
                        return Err((p("app.count"), "must be > 0".into()));
                    }
                }
                AppSpec::Page {
                    objects,
                    framing,
                    request,
                    chunk,
                    frame,
                } => {
                    use crate::page_app::{self as pa, PageFraming};
                    if objects.is_empty() || objects.len() > pa::MAX_PAGE_OBJECTS {
                        return Err((
                            p("app.objects"),
                            format!(
                                "must list between 1 and {} object sizes (the first is the primary)",
                                pa::MAX_PAGE_OBJECTS
                            ),
                        ));
                    }
                    if let Some(k) = objects
                        .iter()
                        .position(|o| o.0 == 0 || o.0 > pa::MAX_OBJECT)
                    {
                        return Err((
                            format!("flow[{i}].app.objects[{k}]"),
                            "must be between 1 and 16MiB".into(),
                        ));
                    }
                    if objects.iter().map(|o| o.0).sum::<u64>() > pa::MAX_PAGE {
                        return Err((p("app.objects"), "must add up to at most 64MiB".into()));
                    }
                    if request.is_some_and(|r| r.0 < pa::MIN_PAGE_REQUEST || r.0 > 64 << 10) {
                        return Err((p("app.request"), "must be between 8 and 64KiB".into()));
                    }
                    if let Some(c) = chunk {
                        if *framing != PageFraming::Mstcp {
                            return Err((p("app.chunk"), "needs framing = \"mstcp\"".into()));
                        }
                        if c.0 == 0 || c.0 > 65_519 {
                            return Err((p("app.chunk"), "must be between 1 and 65519".into()));
                        }
                    }
                    if let Some(f) = frame {
                        if *framing != PageFraming::H2 {
                            return Err((p("app.frame"), "needs framing = \"h2\"".into()));
                        }
                        if f.0 == 0 || f.0 > pa::MAX_FRAME {
                            return Err((p("app.frame"), "must be between 1 and 16777215".into()));
                        }
                    }
                }
                AppSpec::Web {
                    objects,
                    connections,
                    request,
                } => {
                    if objects.is_empty() || objects.len() > crate::web::MAX_OBJECTS {
                        return Err((
                            p("app.objects"),
                            format!(
                                "must list between 1 and {} object sizes (the first is the HTML)",
                                crate::web::MAX_OBJECTS
                            ),
                        ));
                    }
                    if let Some(k) = objects.iter().position(|o| o.0 == 0 || o.0 > 64 << 20) {
                        return Err((
                            format!("flow[{i}].app.objects[{k}]"),
                            "must be between 1 and 64MiB".into(),
                        ));
                    }
                    if connections.is_some_and(|c| c == 0 || c > crate::web::MAX_CONNECTIONS) {
                        return Err((
                            p("app.connections"),
                            format!("must be between 1 and {}", crate::web::MAX_CONNECTIONS),
                        ));
                    }
                    if request.is_some_and(|r| r.0 == 0 || r.0 > 64 << 10) {
                        return Err((p("app.request"), "must be between 1 and 64KiB".into()));
                    }
                }
            }
            validate_tcp(&f.tcp, f.cc).map_err(|(k, m)| (p(&k), m))?;
        }
        Ok(())
    }
}

/// Range checks of one TCP knob set with controller `cc`. Returns (field relative to
/// the knob set's owner, e.g. `tcp.mss`; message).
pub(crate) fn validate_tcp(t: &TcpKnobs, cc: CcAlgorithm) -> Result<(), (String, String)> {
    let p = |k: &str| k.to_string();
    if t.mss.is_some_and(|m| !(88..=9000).contains(&m)) {
        return Err((p("tcp.mss"), "must be between 88 and 9000".into()));
    }
    if t.rto_restart.is_some_and(|n| n == 0 || n > 1000) {
        return Err((
            p("tcp.rto_restart"),
            "rrthresh must be between 1 and 1000 segments (RFC 7765 uses 4)".into(),
        ));
    }
    if t.initial_cwnd.is_some_and(|c| c == 0 || c > 1000) {
        return Err((p("tcp.initial_cwnd"), "must be between 1 and 1000".into()));
    }
    if !t.delay_correlation_on()
        && (t.dc_window.is_some() || t.dc_threshold.is_some() || t.dc_passive.is_some())
    {
        return Err((
            p("tcp.delay_correlation"),
            "dc_window, dc_threshold and dc_passive need delay_correlation = true".into(),
        ));
    }
    if let Some(Err(e)) = t.delay_correlation_config().map(|c| c.validate()) {
        let k = match e {
            brisk_tcp::cc::delay_corr::DelayCorrConfigError::Window(_) => "tcp.dc_window",
            brisk_tcp::cc::delay_corr::DelayCorrConfigError::Threshold(_) => "tcp.dc_threshold",
            _ => "tcp.delay_correlation",
        };
        return Err((p(k), e.to_string()));
    }
    validate_rdb(t).map_err(|(k, m)| (p(&format!("tcp.{k}")), m))?;
    if let Some(Err(m)) = t.rc3_config() {
        return Err((p("tcp.rc3.levels"), m));
    }
    if let Some(d) = t.dscp {
        if d > 63 {
            return Err((
                p("tcp.dscp"),
                format!("must be between 0 and 63 (six bits), got {d}"),
            ));
        }
        if t.rc3_config().is_some() && d != 0 {
            return Err((
                p("tcp.dscp"),
                "cannot be set with rc3, which sets each packet's DSCP to its priority".into(),
            ));
        }
    }
    let rack_on = t.rack.unwrap_or(t.linux_profile.is_none());
    if rack_on && t.fack == Some(true) {
        return Err((
            p("tcp.fack"),
            "needs rack = false (RACK replaced FACK, Linux 4.15)".into(),
        ));
    }
    if rack_on && t.early_retransmit.is_some_and(|e| e != ErKnob::Off) {
        return Err((
            p("tcp.early_retransmit"),
            "needs rack = false (RACK subsumes early retransmit, RFC 8985 §9.3)".into(),
        ));
    }
    if t.cwnd_limited_slack.is_some_and(|n| n > 1000) {
        return Err((
            p("tcp.cwnd_limited_slack"),
            "must be between 0 and 1000 segments (Linux before 3.16 used 3)".into(),
        ));
    }
    if t.new_cwv != Some(true) && t.new_cwv_nvp.is_some() {
        return Err((p("tcp.new_cwv_nvp"), "needs new_cwv = true".into()));
    }
    if t.new_cwv_nvp.is_some_and(|d| d.0.is_zero()) {
        return Err((p("tcp.new_cwv_nvp"), "must be > 0".into()));
    }
    for (k, v) in [("beta_ecn", t.beta_ecn), ("beta_loss", t.beta_loss)] {
        if t.abe != Some(true) && v.is_some() {
            return Err((p(&format!("tcp.{k}")), "needs abe = true".into()));
        }
        if v.is_some_and(|b| !(b.is_finite() && b > 0.0 && b <= 1.0)) {
            return Err((
                p(&format!("tcp.{k}")),
                "must be in (0, 1] (RFC 8511 recommends 0.8 for beta_ecn; the ABE paper 0.85 for CUBIC)"
                    .into(),
            ));
        }
    }
    for (key, base, set) in [
        ("cdg", CcAlgorithm::Cdg, t.cdg.is_some()),
        ("dctcp", CcAlgorithm::Dctcp, t.dctcp.is_some()),
    ] {
        if set && cc != base {
            return Err((p(&format!("tcp.{key}")), format!("needs cc = \"{key}\"")));
        }
    }
    let tuning = t.base_tuning();
    tuning
        .cdg
        .validate()
        .map_err(|(k, m)| (p(&format!("tcp.cdg.{k}")), m))?;
    tuning
        .dctcp
        .validate()
        .map_err(|(k, m)| (p(&format!("tcp.dctcp.{k}")), m))?;
    if cc == CcAlgorithm::Dctcp && t.ecn_switch() != Some(true) {
        return Err((
            p("cc"),
            "dctcp needs tcp.ecn = true: DCTCP reacts to the fraction of CE marks (RFC 8257)"
                .into(),
        ));
    }
    if t.abe == Some(true) && t.ecn_switch() != Some(true) {
        return Err((
            p("tcp.abe"),
            "needs ecn = true: ABE only changes the response to ECN marks".into(),
        ));
    }
    for (k, v) in [
        ("recv_buffer", t.recv_buffer),
        ("send_buffer", t.send_buffer),
    ] {
        if v.is_some_and(|s| s.0 < 1024 || s.0 > 1 << 30) {
            return Err((
                p(&format!("tcp.{k}")),
                "must be between 1KiB and 1GiB".into(),
            ));
        }
    }
    Ok(())
}

/// RDB's knobs: each needs `rdb`, and each limit has a meaning (a zero never does).
fn validate_rdb(t: &TcpKnobs) -> Result<(), (&'static str, String)> {
    let on = TcpKnobs::switch(&t.rdb) == Some(true);
    let knobs = [
        ("rdb_lim", t.rdb_lim.is_some()),
        ("rdb_spifl", t.rdb_spifl.is_some()),
        ("rdb_itt_min", t.rdb_itt_min.is_some()),
        ("rdb_max_bytes", t.rdb_max_bytes.is_some()),
        ("rdb_loss_inference", t.rdb_loss_inference.is_some()),
    ];
    if let Some((k, _)) = knobs.iter().find(|(_, set)| *set && !on) {
        return Err((k, "needs rdb = true".into()));
    }
    if let Some(RdbLim::Count(n)) = t.rdb_lim {
        if n == 0 || u64::from(brisk_tcp::rdb::MAX_BUNDLED_SEGMENTS) < n {
            return Err((
                "rdb_lim",
                format!(
                    "must be between 1 and {} earlier segments, or \"unlimited\"",
                    brisk_tcp::rdb::MAX_BUNDLED_SEGMENTS
                ),
            ));
        }
    }
    if t.rdb_spifl.is_some_and(|n| n == 0 || n > 100_000) {
        return Err((
            "rdb_spifl",
            "must be between 1 and 100000 packets in flight (the paper uses 3 and 7)".into(),
        ));
    }
    if t.rdb_spifl.is_some() && t.rdb_itt_min.is_some() {
        return Err((
            "rdb_itt_min",
            "is DPIFL's and rdb_spifl chooses SPIFL; set one of them".into(),
        ));
    }
    if t.rdb_itt_min
        .is_some_and(|d| d.0.is_zero() || d.0 > Duration::from_secs(10))
    {
        return Err((
            "rdb_itt_min",
            "must be greater than 0 and at most 10s (the paper uses 10ms and 20ms)".into(),
        ));
    }
    if t.rdb_max_bytes.is_some_and(|n| n == 0 || n > 65_535) {
        return Err(("rdb_max_bytes", "must be between 1 and 65535 bytes".into()));
    }
    Ok(())
}

fn validate_link(l: &LinkSpec, name: &str) -> Result<(), (String, String)> {
    l.validate(name).map_err(|e| (e.field, e.message))
}
