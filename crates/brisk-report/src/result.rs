//! The result types both kinds of run report, and the `--json` object built from them.

use brisk_net::meter::{DropRecord, QueueRow};
use brisk_net::metrics::Summary;
use brisk_time::{Duration, Instant};
use serde_json::{json, Value};

use crate::delay::DelaySummary;
use crate::json::{latency_json, num, queue_delay_json, rtt_json};

/// The shared bottleneck's results, as a `LinkMeter` measured them.
#[derive(Clone, Debug)]
pub struct BottleneckResult {
    pub utilization: f64,
    pub drops: u64,
    /// Packets the queue CE-marked instead of dropping.
    pub ce_marked: u64,
    pub first_drop: Option<Instant>,
    pub queue_delay: Option<Summary>,
    pub max_queue_packets: usize,
    pub queue_series: Vec<(u64, QueueRow)>,
    pub drop_records: Vec<DropRecord>,
}

impl BottleneckResult {
    /// The `bottleneck` object of the `--json` output.
    pub fn to_json(&self) -> Value {
        json!({
            "utilization": num(self.utilization),
            "drops": self.drops,
            "ce_marked": self.ce_marked,
            "first_drop_s": self.first_drop.map_or(Value::Null, |t| num(t.as_secs_f64())),
            "max_queue_packets": self.max_queue_packets,
            "queue_delay_ms": queue_delay_json(&self.queue_delay),
        })
    }
}

/// What only real-packet runs report per flow (the kernel's TCP may be the sender).
#[derive(Clone, Debug, PartialEq)]
pub struct RealFlowExtras {
    /// `brisk` or `linux`.
    pub stack: String,
    /// srtt sampled every sample interval: the like-for-like measure of both stacks.
    pub srtt: Option<Summary>,
    /// The flow's base round-trip time.
    pub rtt_base: Duration,
    /// What happened after the scenario's end, while the stream was drained to check
    /// its hash: not in the totals, which stop at the end as the simulator's do.
    pub drain: Drain,
}

/// A real flow's traffic after the scenario's end (`drain` in the JSON).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Drain {
    /// Bytes the receiver read after the end.
    pub bytes: u64,
    /// Retransmissions the sender counted after the end.
    pub retransmitted_packets: u64,
    /// From the end until the receiver read the last byte (0 if it was done by then).
    pub duration: Duration,
}

/// One flow's summary: the fields of a flow in the `--json` output.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSummary {
    pub id: u32,
    pub cc: String,
    pub app: String,
    /// Start time in seconds, as the run computed it (so its float bits are the run's).
    pub start_s: f64,
    pub goodput_bps: f64,
    pub bytes_delivered: u64,
    pub bytes_sent: u64,
    pub retransmitted_packets: u64,
    pub fct: Option<Duration>,
    pub rtt: Option<Summary>,
    pub record_latency: Option<Summary>,
    /// Records: from the first transmission of the record's last byte to delivery
    /// (real runs: first transmissions as the emulator's senders' side saw them).
    pub record_latency_tx: Option<Summary>,
    /// Records: from the first transmission of the record's last byte to its
    /// cumulative ACK (the RDB paper's ACK latency; real runs measure it on the
    /// senders' side of the emulator, `brisk-emu`'s `emu::ack_tap`).
    pub ack_latency: Option<Summary>,
    /// One-way delay and jitter of the data packets that reached the receiver (`None`
    /// when none did, or when the run cannot measure it).
    pub one_way_delay: Option<DelaySummary>,
    pub stream_ok: bool,
    pub first_drop: Option<Instant>,
    pub records_skipped: u64,
    /// The sender's controller diagnostics, already in JSON (null if none).
    pub cc_diag: Value,
    pub error: Option<String>,
    /// `Some` for real-packet runs: adds `stack`, `srtt_ms` and `rtt_base_ms`.
    pub real: Option<RealFlowExtras>,
}

impl FlowSummary {
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "id": self.id,
            "cc": self.cc,
            "app": self.app,
            "start_s": num(self.start_s),
            "goodput_bps": num(self.goodput_bps),
            "bytes_delivered": self.bytes_delivered,
            "bytes_sent": self.bytes_sent,
            "retransmitted_packets": self.retransmitted_packets,
            "fct_s": self.fct.map_or(Value::Null, |d| num(d.as_secs_f64())),
            "rtt_ms": rtt_json(&self.rtt),
            "record_latency_ms": latency_json(&self.record_latency),
            "record_latency_after_tx_ms": latency_json(&self.record_latency_tx),
            "ack_latency_ms": latency_json(&self.ack_latency),
            "one_way_delay": self.one_way_delay.map_or(Value::Null, |d| d.to_json()),
            "jitter_ms": self.one_way_delay
                .and_then(|d| d.jitter_ns)
                .map_or(Value::Null, |j| num(j / 1e6)),
            "stream_ok": self.stream_ok,
            "first_drop_s": self.first_drop.map_or(Value::Null, |t| num(t.as_secs_f64())),
            "records_skipped": self.records_skipped,
            "cc_diag": self.cc_diag,
            "error": self.error,
        });
        if let Some(r) = &self.real {
            v["stack"] = json!(r.stack);
            v["srtt_ms"] = rtt_json(&r.srtt);
            v["rtt_base_ms"] = num(r.rtt_base.as_secs_f64() * 1e3);
            v["drain"] = json!({
                "bytes": r.drain.bytes,
                "retransmitted_packets": r.drain.retransmitted_packets,
                "duration_s": num(r.drain.duration.as_secs_f64()),
            });
        }
        v
    }
}

/// A run's summary: what `--json` prints before each kind of run adds its own section
/// (`sim` for the simulator, `real` for real packets).
#[derive(Clone, Debug)]
pub struct RunSummary<'a> {
    pub scenario: &'a str,
    pub seed: u64,
    pub duration: Duration,
    pub flows: Vec<FlowSummary>,
    pub bottleneck: &'a BottleneckResult,
}

impl RunSummary<'_> {
    pub fn to_json(&self) -> Value {
        let flows: Vec<Value> = self.flows.iter().map(FlowSummary::to_json).collect();
        json!({
            "scenario": self.scenario,
            "seed": self.seed,
            "duration_s": num(self.duration.as_secs_f64()),
            "flows": flows,
            "bottleneck": self.bottleneck.to_json(),
        })
    }
}

/// Jain's fairness index of `xs`: (Σx)² / (n·Σx²), 1 = equal shares, 0 if all are 0.
/// The table's stream column: "BAD" when the delivered bytes differ from the sent
/// ones, "none" when nothing was delivered (nothing to compare, e.g. 100 % loss,
/// rather than a reassuring "ok"), else "ok".
pub fn stream_status(stream_ok: bool, bytes_delivered: u64) -> &'static str {
    match (stream_ok, bytes_delivered) {
        (false, _) => "BAD",
        (true, 0) => "none",
        (true, _) => "ok",
    }
}

pub fn jain_fairness(xs: impl IntoIterator<Item = f64>) -> f64 {
    let (n, sum, sq) = xs
        .into_iter()
        .fold((0usize, 0.0, 0.0), |(n, s, q), x| (n + 1, s + x, q + x * x));
    if sq > 0.0 {
        sum * sum / (n as f64 * sq)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow() -> FlowSummary {
        FlowSummary {
            id: 0,
            cc: "cubic".into(),
            app: "bulk".into(),
            start_s: 0.0,
            goodput_bps: 1e6,
            bytes_delivered: 10,
            bytes_sent: 10,
            retransmitted_packets: 0,
            fct: None,
            rtt: None,
            record_latency: None,
            record_latency_tx: None,
            ack_latency: None,
            one_way_delay: None,
            stream_ok: true,
            first_drop: None,
            records_skipped: 0,
            cc_diag: Value::Null,
            error: None,
            real: None,
        }
    }

    #[test]
    fn real_fields_appear_only_for_real_runs() {
        let sim = flow().to_json();
        assert!(sim.get("stack").is_none() && sim.get("srtt_ms").is_none());
        let mut f = flow();
        f.real = Some(RealFlowExtras {
            stack: "linux".into(),
            srtt: None,
            rtt_base: Duration::from_millis(20),
            drain: Drain::default(),
        });
        let real = f.to_json();
        assert_eq!(real["stack"], json!("linux"));
        assert_eq!(real["srtt_ms"], Value::Null);
        assert_eq!(real["rtt_base_ms"], json!(20.0));
    }

    /// The flow fields of `brisk run --json` (and, plus three, `--real`): pinned, since
    /// scripts and the repro suite read them.
    #[test]
    fn flow_json_has_exactly_the_documented_fields() {
        let keys = |v: Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
        let sim = [
            "app",
            "bytes_delivered",
            "ack_latency_ms",
            "bytes_sent",
            "cc",
            "cc_diag",
            "error",
            "fct_s",
            "first_drop_s",
            "goodput_bps",
            "id",
            "jitter_ms",
            "one_way_delay",
            "rtt_ms",
            "record_latency_after_tx_ms",
            "record_latency_ms",
            "records_skipped",
            "retransmitted_packets",
            "start_s",
            "stream_ok",
        ];
        let mut sorted = sim.to_vec();
        sorted.sort_unstable();
        assert_eq!(keys(flow().to_json()), sorted, "keys come out sorted");
        let mut f = flow();
        f.real = Some(RealFlowExtras {
            stack: "brisk".into(),
            srtt: None,
            rtt_base: Duration::ZERO,
            drain: Drain::default(),
        });
        let mut real: Vec<&str> = sim.to_vec();
        real.extend(["drain", "rtt_base_ms", "srtt_ms", "stack"]);
        real.sort_unstable();
        assert_eq!(keys(f.to_json()), real);
    }

    #[test]
    fn jain_index_is_one_for_equal_shares() {
        assert_eq!(jain_fairness([2.0, 2.0]), 1.0);
        assert_eq!(jain_fairness([0.0, 0.0]), 0.0);
        assert!((jain_fairness([1.0, 0.0]) - 0.5).abs() < 1e-12);
    }
}
