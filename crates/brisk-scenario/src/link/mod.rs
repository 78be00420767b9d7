//! The scenario vocabulary of one link (`[bottleneck]`, `[reverse]` in a scenario file,
//! a topology's links, a direction of the emulator's path) and its range checks. See
//! docs/scenarios.md for the keys.
//!
//! ```toml
//! rate = "10Mbit"
//! delay = "5ms"
//! queue = { kind = "droptail", packets = 100 }   # and/or bytes = "150KB"
//! # or an AQM: { kind = "codel" }, "red", "pie", "fq_codel" (docs/mechanisms/aqm.md),
//! # or strict priority by DSCP with push-out (RC3):
//! # queue = { kind = "prio", bands = 4, bytes = "5MB", push_out = true }
//! loss = { kind = "gilbert_elliott", p_good_bad = 0.01, p_bad_good = 0.3 }
//! jitter = { max = "1ms", reorder = false }
//! outages = [{ start = "2s", duration = "1.5s" }]
//! # instead of `rate`: a Mahimahi delivery trace, relative to the scenario file
//! # trace = "../traces/lte-like.down"
//! ```
//! Unknown keys are errors, so a typo never silently means "default".
//!
//! A [`LinkSpec`] becomes brisk-net's runtime parameters in one place ([`convert`]:
//! `LinkSpec::config`, with the defaults of each queue), and brisk-net builds the
//! elements from those (`brisk_net::LinkConfig::build`). The simulator and the
//! emulator both build their links that way, so the same description means the same
//! elements in virtual and in real time.

use std::sync::Arc;

use brisk_net::mahimahi::DeliveryTrace;
use brisk_net::queue::CoDelParams;
use brisk_time::Duration;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::units::{Dur, Rate, Size};

pub mod convert;
pub mod model;

pub use model::PathModel;

/// What a link description becomes: brisk-net's types, re-exported so that a caller of
/// [`LinkSpec::build`] needs no second import.
pub use brisk_net::{LinkBuildError, LinkConfig, LinkElements, LinkSeeds};

/// Queue limit of a rate-limited link whose description gives none (Linux's default
/// `txqueuelen`).
pub const DEFAULT_QUEUE_PACKETS: usize = 1000;
/// Queue limit of an unlimited-rate link, whose queue never holds more than the packet
/// being forwarded.
pub const UNLIMITED_QUEUE_PACKETS: usize = 1 << 20;

/// A link: rate, propagation delay, queue, loss and impairments.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Serialisation rate; absent means unlimited.
    #[serde(default)]
    pub rate: Option<Rate>,
    /// One-way propagation delay added by this link (default 0).
    #[serde(default)]
    pub delay: Option<Dur>,
    #[serde(default)]
    pub queue: Option<QueueSpec>,
    #[serde(default)]
    pub loss: Option<LossSpec>,
    /// Random extra delay per packet.
    #[serde(default)]
    pub jitter: Option<JitterSpec>,
    /// Probability that a packet is duplicated.
    #[serde(default)]
    pub duplicate: Option<f64>,
    /// Probability that one bit of a packet is flipped.
    #[serde(default)]
    pub corrupt: Option<f64>,
    /// Periods during which the link drops everything.
    #[serde(default)]
    pub outages: Vec<OutageSpec>,
    /// A Mahimahi delivery trace that replaces `rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceFile>,
}

/// A Mahimahi trace file named in a link description. Serde reads only the path; the
/// owner reads it relative to the description's file and attaches it
/// ([`LinkSpec::attach_trace`]).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(from = "String", into = "String")]
pub struct TraceFile {
    pub path: String,
    loaded: Option<Arc<DeliveryTrace>>,
}

impl TraceFile {
    /// An already-parsed trace (e.g. generated), labelled `path` in errors and logs.
    pub fn loaded(path: impl Into<String>, trace: Arc<DeliveryTrace>) -> TraceFile {
        TraceFile {
            path: path.into(),
            loaded: Some(trace),
        }
    }

    /// The parsed trace, once loaded.
    pub fn trace(&self) -> Option<&Arc<DeliveryTrace>> {
        self.loaded.as_ref()
    }
}

impl From<String> for TraceFile {
    fn from(path: String) -> TraceFile {
        TraceFile { path, loaded: None }
    }
}

impl From<TraceFile> for String {
    fn from(t: TraceFile) -> String {
        t.path
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueSpec {
    /// Drop-tail FIFO bounded in packets or bytes (`bytes` wins when both are given;
    /// default 1000 packets), with optional step ECN marking above a threshold
    /// (in packets or in bytes, not both).
    Droptail {
        #[serde(default)]
        packets: Option<u64>,
        #[serde(default)]
        bytes: Option<Size>,
        /// A limit in time at the link's rate: `time × rate` bytes (e.g. "300ms", the
        /// CDG experiments' buffer). Needs `rate`; not with `bytes`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        time: Option<Dur>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ecn_threshold_packets: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ecn_threshold_bytes: Option<Size>,
    },
    /// CoDel (RFC 8289): `target` (default 5ms) and `interval` (100ms), a tail-drop
    /// `packets` limit (1000) and `ecn` (mark ECN-capable packets instead of dropping
    /// them; default off, as Linux's `codel` qdisc).
    Codel {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<Dur>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interval: Option<Dur>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        packets: Option<u64>,
        #[serde(default)]
        ecn: bool,
    },
    /// RED with gentle mode (Floyd and Jacobson 1993): thresholds `min_th` (default 5)
    /// and `max_th` (15) in packets on the average queue, `max_p` (0.02), EWMA weight
    /// `w_q` (0.002), `gentle` (on), `ecn` (mark instead of drop), `harddrop` (drop
    /// even ECN-capable packets above the gentle band), `packets` limit (1000),
    /// `mean_packet` bytes (1000) for the idle decay at the link's rate.
    Red {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_th: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_th: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_p: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        w_q: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gentle: Option<bool>,
        #[serde(default)]
        ecn: bool,
        #[serde(default)]
        harddrop: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        packets: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mean_packet: Option<u64>,
    },
    /// PIE (RFC 8033) with Linux 3.17.4's constants: `target` (20ms), `tupdate`
    /// (30ms), `alpha` (0.125), `beta` (1.25), `max_burst` (100ms), `packets` (1000),
    /// `bytemode` (off), `ecn` (off), and the rule that drops ECN-capable packets once
    /// the probability is above `ecn_drop_above` (0.1): `ecn_drop_rule = false` turns
    /// it off, as the ABE paper did.
    Pie {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<Dur>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tupdate: Option<Dur>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        alpha: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        beta: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_burst: Option<Dur>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        packets: Option<u64>,
        #[serde(default)]
        bytemode: bool,
        #[serde(default)]
        ecn: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ecn_drop_rule: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ecn_drop_above: Option<f64>,
    },
    /// FQ-CoDel (RFC 8290, Linux's defaults): `flows` buckets (1024) hashed with a
    /// seeded key, `quantum` (1514 bytes), CoDel `target` (5ms) and `interval`
    /// (100ms) per bucket, `packets` (10240) and `memory_limit` (32MiB) for the whole
    /// queue, `drop_batch` (64), `ecn` (on by default, as Linux's fq_codel).
    FqCodel {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<Dur>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interval: Option<Dur>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flows: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        quantum: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        packets: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        memory_limit: Option<Size>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        drop_batch: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ecn: Option<bool>,
    },
    /// Strict priority by DSCP (RC3's routers, spec A6): `bands` (3, at most 16; band
    /// = min(DSCP, bands − 1), band 0 first), one limit shared by all bands in
    /// `packets` (1000) or `bytes` (`bytes` wins when both are given), and `push_out`
    /// (on: a higher-priority arrival evicts the newest lower-priority packets; off:
    /// tail drop against the shared limit), and `band0_pie` (none: band 0 under PIE,
    /// a [`BandPieSpec`]; the lower bands stay plain).
    Prio {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bands: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        packets: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<Size>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        push_out: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        band0_pie: Option<BandPieSpec>,
    },
}

/// PIE on a priority queue's band 0 (`queue = { kind = "prio", …, band0_pie = { ecn =
/// true } }`): PIE's keys without `packets` (the shared limit holds), the same
/// defaults (Linux 3.17.4's).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BandPieSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tupdate: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_burst: Option<Dur>,
    #[serde(default)]
    pub bytemode: bool,
    #[serde(default)]
    pub ecn: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_drop_rule: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_drop_above: Option<f64>,
}

impl QueueSpec {
    /// A drop-tail queue of `n` packets without ECN marking.
    pub fn droptail_packets(n: u64) -> QueueSpec {
        QueueSpec::Droptail {
            packets: Some(n),
            bytes: None,
            time: None,
            ecn_threshold_packets: None,
            ecn_threshold_bytes: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossSpec {
    None,
    /// Independent loss with probability `p`.
    Bernoulli {
        p: f64,
    },
    /// Two-state Gilbert-Elliott: transition probabilities and loss in each state.
    GilbertElliott {
        p_good_bad: f64,
        p_bad_good: f64,
        #[serde(default)]
        loss_good: f64,
        #[serde(default = "one")]
        loss_bad: f64,
    },
    /// Drop exactly these packets (0-based index among the packets offered to the link,
    /// or with `count = "data"` among those carrying TCP payload).
    List {
        packets: Vec<u64>,
        // Skipped when default so scenarios serialised before this field read the same.
        #[serde(default, skip_serializing_if = "ListCount::is_all")]
        count: ListCount,
    },
}

impl ListCount {
    fn is_all(&self) -> bool {
        *self == ListCount::All
    }
}

/// Which packets a `list` loss model counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ListCount {
    /// Every packet offered to the link.
    #[default]
    All,
    /// Only packets with TCP payload (pure ACKs, SYNs and other packets pass uncounted).
    Data,
}

fn one() -> f64 {
    1.0
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct JitterSpec {
    /// Maximum extra delay; each packet gets a uniform draw in `[0, max]`.
    pub max: Dur,
    /// Whether jitter may reorder packets (default false: FIFO is kept).
    #[serde(default)]
    pub reorder: bool,
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutageSpec {
    /// Counted from time zero (the simulation's or the emulator's start).
    pub start: Dur,
    pub duration: Dur,
}

/// A description outside its accepted range: the dotted key and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{field}: {message}")]
pub struct SpecError {
    /// E.g. `bottleneck.loss.p`.
    pub field: String,
    pub message: String,
}

impl LinkSpec {
    /// Range checks serde cannot express; `name` prefixes the field in errors.
    pub fn validate(&self, name: &str) -> Result<(), SpecError> {
        let err = |k: &str, message: String| SpecError {
            field: format!("{name}.{k}"),
            message,
        };
        let prob = |k: &str, p: f64| {
            if p.is_finite() && (0.0..=1.0).contains(&p) {
                Ok(())
            } else {
                Err(err(k, format!("must be a probability in [0, 1], got {p}")))
            }
        };
        if self.rate.is_some() && self.trace.is_some() {
            return Err(err(
                "trace",
                "a trace-driven link takes its capacity from the trace; give rate or trace, not both"
                    .into(),
            ));
        }
        if self.rate.is_some_and(|r| r.0 == 0) {
            return Err(err(
                "rate",
                "must be > 0 (omit it for an unlimited link)".into(),
            ));
        }
        if self.delay.is_some_and(|d| d.0 > Duration::from_secs(60)) {
            return Err(err("delay", "must be at most 60s".into()));
        }
        if let Some(QueueSpec::Droptail {
            packets,
            bytes,
            time,
            ecn_threshold_packets,
            ecn_threshold_bytes,
        }) = &self.queue
        {
            if let Some(t) = time {
                if bytes.is_some() {
                    return Err(err(
                        "queue.time",
                        "give the limit in bytes or in time, not both".into(),
                    ));
                }
                let Some(rate) = self.rate else {
                    return Err(err(
                        "queue.time",
                        "a limit in time needs the link's rate (set rate, or give packets or bytes)"
                            .into(),
                    ));
                };
                let b = u128::from(rate.0) * t.0.as_nanos() / 8_000_000_000;
                if t.0.is_zero() || !(1500..=1 << 32).contains(&b) {
                    return Err(err(
                        "queue.time",
                        format!(
                            "must give between 1500 bytes and 4GiB at the link's rate (gives {b} bytes)"
                        ),
                    ));
                }
            }
            for (k, p) in [
                ("queue.packets", packets),
                ("queue.ecn_threshold_packets", ecn_threshold_packets),
            ] {
                if *p == Some(0) || p.is_some_and(|p| p > 10_000_000) {
                    return Err(err(k, "must be between 1 and 10000000".into()));
                }
            }
            for (k, b) in [
                ("queue.bytes", bytes),
                ("queue.ecn_threshold_bytes", ecn_threshold_bytes),
            ] {
                if b.is_some_and(|b| b.0 == 0 || b.0 > 1 << 32) {
                    return Err(err(k, "must be between 1 and 4GiB".into()));
                }
            }
            if ecn_threshold_packets.is_some() && ecn_threshold_bytes.is_some() {
                return Err(err(
                    "queue.ecn_threshold_bytes",
                    "give the ECN threshold in packets or in bytes, not both".into(),
                ));
            }
        }
        // The AQMs' keys. `range` leaves unset keys to their defaults.
        let range = |k: &str, v: Option<u64>, lo: u64, hi: u64, what: &str| match v {
            Some(v) if !(lo..=hi).contains(&v) => {
                let unit = if what.is_empty() {
                    String::new()
                } else {
                    format!(" {what}")
                };
                Err(err(k, format!("must be between {lo} and {hi}{unit}")))
            }
            _ => Ok(()),
        };
        // CoDel's two times, alone or per FQ-CoDel bucket.
        let codel_times = |p: CoDelParams| {
            if p.interval.is_zero() || p.interval > Duration::from_secs(60) {
                return Err(err(
                    "queue.interval",
                    "must be greater than 0 and at most 60s".into(),
                ));
            }
            if p.target.is_zero() || p.target >= p.interval {
                return Err(err(
                    "queue.target",
                    format!(
                        "must be greater than 0 and below the interval ({:?})",
                        p.interval
                    ),
                ));
            }
            Ok(())
        };
        match &self.queue {
            Some(QueueSpec::Red {
                packets,
                mean_packet,
                ..
            }) => {
                range("queue.packets", *packets, 1, 10_000_000, "")?;
                range("queue.mean_packet", *mean_packet, 20, 65_535, "bytes")?;
                let p = self.red_params();
                let bad = |k: &str, m: &str| Err(err(k, m.into()));
                if !(p.min_th.is_finite() && (0.0..=1e7).contains(&p.min_th)) {
                    return bad("queue.min_th", "must be between 0 and 10000000 packets");
                }
                if !(p.max_th.is_finite() && p.max_th > p.min_th && p.max_th <= 1e7) {
                    return bad(
                        "queue.max_th",
                        "must be above min_th and at most 10000000 packets",
                    );
                }
                prob("queue.max_p", p.max_p)?;
                prob("queue.w_q", p.w_q)?;
                if p.w_q == 0.0 {
                    return bad("queue.w_q", "must be above 0 (the average must move)");
                }
            }
            Some(QueueSpec::Pie {
                packets, max_burst, ..
            }) => {
                range("queue.packets", *packets, 1, 10_000_000, "")?;
                if max_burst.is_some_and(|b| b.0 > Duration::from_secs(10)) {
                    return Err(err("queue.max_burst", "must be at most 10s".into()));
                }
                let p = self.pie_params();
                if p.target.is_zero() || p.target > Duration::from_secs(10) {
                    return Err(err(
                        "queue.target",
                        "must be greater than 0 and at most 10s".into(),
                    ));
                }
                if p.tupdate < Duration::from_millis(1) || p.tupdate > Duration::from_secs(10) {
                    return Err(err("queue.tupdate", "must be between 1ms and 10s".into()));
                }
                for (k, v) in [("queue.alpha", p.alpha), ("queue.beta", p.beta)] {
                    if !(v.is_finite() && (0.0..=32.0).contains(&v)) {
                        return Err(err(k, "must be between 0 and 32".into()));
                    }
                }
                if let Some(t) = p.ecn_drop_above {
                    prob("queue.ecn_drop_above", t)?;
                }
            }
            Some(QueueSpec::FqCodel {
                flows,
                quantum,
                packets,
                memory_limit,
                drop_batch,
                ..
            }) => {
                range("queue.flows", *flows, 1, 65_536, "buckets")?;
                range("queue.quantum", *quantum, 64, 1 << 20, "bytes")?;
                range("queue.packets", *packets, 1, 10_000_000, "packets")?;
                range(
                    "queue.memory_limit",
                    memory_limit.map(|m| m.0),
                    1514,
                    1 << 32,
                    "bytes",
                )?;
                range("queue.drop_batch", *drop_batch, 1, 65_536, "packets")?;
                codel_times(self.fq_codel_params().codel)?;
            }
            Some(QueueSpec::Codel { packets, .. }) => {
                range("queue.packets", *packets, 1, 10_000_000, "")?;
                codel_times(self.codel_params())?;
            }
            Some(QueueSpec::Prio {
                bands,
                packets,
                bytes,
                band0_pie,
                ..
            }) => {
                range("queue.bands", *bands, 1, 16, "bands")?;
                range("queue.packets", *packets, 1, 10_000_000, "packets")?;
                range("queue.bytes", bytes.map(|b| b.0), 1, 1 << 32, "bytes")?;
                if let Some(b) = band0_pie {
                    if b.max_burst.is_some_and(|m| m.0 > Duration::from_secs(10)) {
                        return Err(err(
                            "queue.band0_pie.max_burst",
                            "must be at most 10s".into(),
                        ));
                    }
                    b.params().validate().map_err(|e| {
                        let m = e.to_string();
                        err("queue.band0_pie", m)
                    })?;
                }
            }
            Some(QueueSpec::Droptail { .. }) | None => {}
        }
        match &self.loss {
            Some(LossSpec::Bernoulli { p }) => prob("loss.p", *p)?,
            Some(LossSpec::GilbertElliott {
                p_good_bad,
                p_bad_good,
                loss_good,
                loss_bad,
            }) => {
                prob("loss.p_good_bad", *p_good_bad)?;
                prob("loss.p_bad_good", *p_bad_good)?;
                prob("loss.loss_good", *loss_good)?;
                prob("loss.loss_bad", *loss_bad)?;
            }
            Some(LossSpec::List { packets, .. }) => {
                if packets.len() > 1_000_000 {
                    return Err(err("loss.packets", "at most 1000000 entries".into()));
                }
            }
            Some(LossSpec::None) | None => {}
        }
        if let Some(j) = &self.jitter {
            if j.max.0 > Duration::from_secs(10) {
                return Err(err("jitter.max", "must be at most 10s".into()));
            }
        }
        if let Some(p) = self.duplicate {
            prob("duplicate", p)?;
        }
        if let Some(p) = self.corrupt {
            prob("corrupt", p)?;
        }
        if self.outages.len() > 10_000 {
            return Err(err("outages", "at most 10000 outages".into()));
        }
        Ok(())
    }

    /// The path of the `trace` file this link names and has not loaded yet, if any.
    /// brisk-net reads no files: the scenario loader (`brisk_scenario::input`) reads it
    /// and hands the text to [`LinkSpec::attach_trace`].
    pub fn trace_to_load(&self) -> Option<&str> {
        self.trace
            .as_ref()
            .filter(|t| t.loaded.is_none())
            .map(|t| t.path.as_str())
    }

    /// Parses `text`, the contents of the `trace` file (shown as `shown` in errors),
    /// and keeps it as this link's delivery trace. `name` prefixes the field in
    /// errors, which also name the file and line.
    pub fn attach_trace(&mut self, text: &str, shown: &str, name: &str) -> Result<(), SpecError> {
        let Some(tf) = &mut self.trace else {
            return Ok(());
        };
        let trace = DeliveryTrace::parse(text).map_err(|e| SpecError {
            field: format!("{name}.trace"),
            message: format!("{shown} {e}"),
        })?;
        tf.loaded = Some(Arc::new(trace));
        Ok(())
    }

    /// Whether this link needs an impairment stage after it.
    pub fn is_impaired(&self) -> bool {
        self.jitter.is_some()
            || self.duplicate.is_some_and(|p| p > 0.0)
            || self.corrupt.is_some_and(|p| p > 0.0)
    }
}

#[cfg(test)]
mod tests;
