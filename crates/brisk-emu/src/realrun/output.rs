//! Presenting a [`RealResult`] through brisk-report: the simulator's JSON fields (plus `stack`, `srtt_ms`,
//! `rtt_base_ms` per flow and a `real` section), a table, and the simulator's CSV files.

use serde_json::{json, Value};

use super::{RealFlowResult, RealResult, Stats};
use crate::error::{EmuError, Result};
use brisk_report::{
    drops_csv, jain_fairness, queue_csv, write_files, FlowSummary, RealFlowExtras, RunSummary,
};

impl RealFlowResult {
    /// The flow's summary in the form both kinds of run report, with the real runs'
    /// `stack`, `srtt_ms` and `rtt_base_ms`.
    pub fn summary(&self) -> FlowSummary {
        FlowSummary {
            id: self.id,
            cc: self.cc.clone(),
            app: self.app.to_string(),
            start_s: self.start.as_secs_f64(),
            goodput_bps: self.goodput_bps,
            bytes_delivered: self.bytes_delivered,
            bytes_sent: self.bytes_sent,
            retransmitted_packets: self.retransmitted_packets,
            fct: self.fct.map(Into::into),
            rtt: self.rtt,
            record_latency: self.record_latency,
            record_latency_tx: self.record_latency_tx,
            ack_latency: self.ack_latency,
            one_way_delay: None,
            stream_ok: self.stream_ok,
            first_drop: self.first_drop,
            records_skipped: 0,
            cc_diag: self.cc_diag.clone().unwrap_or(Value::Null),
            error: self.error.clone(),
            real: Some(RealFlowExtras {
                stack: self.stack.to_string(),
                srtt: self.srtt,
                rtt_base: self.rtt_base,
                drain: self.drain,
            }),
        }
    }
}

impl RealResult {
    /// The simulator's `--json` shape (brisk-report's run summary), with `stack`,
    /// `srtt_ms` and `rtt_base_ms` per flow and a `real` section (emulator counters,
    /// CPU) in place of the simulator's `sim`.
    pub fn to_json(&self) -> Value {
        let mut out = RunSummary {
            scenario: &self.scenario,
            seed: self.seed,
            duration: self.duration,
            flows: self.flows.iter().map(RealFlowResult::summary).collect(),
            bottleneck: &self.bottleneck,
        }
        .to_json();
        out["real"] = json!({
            "jain_fairness": self.jain_fairness(),
            "cpu_s": self.cpu_s,
            "brisk_busy_s": self.brisk_busy_s,
            "emulator": &self.emulator,
        });
        out
    }

    /// A human-readable table.
    pub fn table(&self) -> String {
        use std::fmt::Write as _;
        let mut t = String::new();
        let _ = writeln!(
            t,
            "{} (real packets, {:.1} s)",
            self.scenario,
            self.duration.as_secs_f64()
        );
        let _ = writeln!(
            t,
            "{:>4} {:>6} {:>6} {:>12} {:>10} {:>10} {:>10} {:>8} {:>6}",
            "flow", "stack", "cc", "goodput", "rtt mean", "rtt p99", "srtt mean", "retx", "ok"
        );
        let ms = |s: &Option<Stats>, p99: bool| {
            s.map_or("-".to_string(), |s| {
                format!("{:.2}ms", if p99 { s.p99 as f64 } else { s.mean } / 1e6)
            })
        };
        for f in &self.flows {
            let _ = writeln!(
                t,
                "{:>4} {:>6} {:>6} {:>7.2}Mbit/s {:>10} {:>10} {:>10} {:>8} {:>6}",
                f.id,
                f.stack,
                f.cc,
                f.goodput_bps / 1e6,
                ms(&f.rtt, false),
                ms(&f.rtt, true),
                ms(&f.srtt, false),
                f.retransmitted_packets,
                brisk_report::stream_status(f.stream_ok, f.bytes_delivered)
            );
            if f.bytes_delivered == 0 {
                let _ = writeln!(t, "     no data delivered");
            }
            if f.drain.bytes > 0 || f.drain.retransmitted_packets > 0 {
                let _ = writeln!(
                    t,
                    "     after the end: {} bytes and {} retransmissions while draining for {:.2} s (not in the totals)",
                    f.drain.bytes,
                    f.drain.retransmitted_packets,
                    f.drain.duration.as_secs_f64()
                );
            }
            if f.record_latency.is_some() {
                let _ = writeln!(
                    t,
                    "     record latency: mean {} p99 {} over {} records",
                    ms(&f.record_latency, false),
                    ms(&f.record_latency, true),
                    f.record_latency.map_or(0, |s| s.count)
                );
            }
            if let Some(e) = &f.error {
                let _ = writeln!(t, "     error: {e}");
            }
        }
        if self.flows.len() > 1 {
            let _ = writeln!(
                t,
                "Jain's fairness index (goodput): {:.3}",
                self.jain_fairness()
            );
        }
        let b = &self.bottleneck;
        let _ = writeln!(
            t,
            "bottleneck: utilization {:.1}%, drops {}, first drop {}, max queue {} pkts, queueing delay mean {} p99 {}; emulator delivery error p99 {:.1} us; CPU {:.2} s",
            b.utilization * 100.0,
            b.drops,
            b.first_drop.map_or("-".into(), |t| format!("{:.3}s", t.as_secs_f64())),
            b.max_queue_packets,
            ms(&b.queue_delay, false),
            ms(&b.queue_delay, true),
            self.emulator.forward.delivery_error.p99_ns as f64 / 1e3,
            self.cpu_s,
        );
        let h = &self.emulator.health;
        let _ = writeln!(
            t,
            "emulator ({}): busy {:.0} % (headroom {:.0} %), delivery error {} p50 {:.1} us p99 {:.1} us max {:.1} us (threshold {:.0} us), kernel drops {}: {}",
            self.emulator.scheduling,
            h.busy_fraction * 100.0,
            h.headroom * 100.0,
            h.late_direction,
            h.late_p50_us,
            h.late_p99_us,
            h.late_max_us,
            h.late_threshold_us,
            h.kernel_drops.map_or("?".into(), |d| d.to_string()),
            if h.is_clean() { "clean" } else { "DISTORTED, see the warnings" },
        );
        t.push_str(&self.emulator.warning_lines());
        // Traffic does not stop at the end: each stream is drained to check its hash.
        let _ = writeln!(
            t,
            "totals stop at the scenario's end ({:.1} s), as the simulator's do; each stream is then drained (at most 15 s) to check its bytes: that traffic is in the pcaps and counted apart (\"after the end\", JSON `drain`)",
            self.duration.as_secs_f64()
        );
        t
    }

    /// `records.csv` as the simulator writes it (`brisk_report::RECORDS_CSV_HEADER`):
    /// one row per record delivered by the end; `first_tx_s` from the emulator's tap
    /// (when the record's last byte first passed it), no priorities. `None` without
    /// records.
    pub fn records_csv(&self) -> Option<String> {
        use std::fmt::Write as _;
        let mut s = String::from(brisk_report::RECORDS_CSV_HEADER);
        let mut any = false;
        let t = |ns: u64| ns as f64 / 1e9;
        for f in &self.flows {
            for (k, &(gen, delivered)) in f.record_deliveries.iter().enumerate() {
                any = true;
                let first = f
                    .record_first_tx
                    .get(k)
                    .filter(|x| x.0 == k as u64)
                    .map_or(String::new(), |x| t(x.1).to_string());
                let _ = writeln!(
                    s,
                    "{},{},{k},,{},{first},{},{}",
                    f.id,
                    f.app,
                    t(gen),
                    t(delivered),
                    delivered.saturating_sub(gen) as f64 / 1e6
                );
            }
        }
        any.then_some(s)
    }

    /// Jain's fairness index of the flows' goodputs: (Σx)² / (n·Σx²), 1 = equal shares.
    pub fn jain_fairness(&self) -> f64 {
        jain_fairness(self.flows.iter().map(|f| f.goodput_bps))
    }

    /// Writes `summary.json`, `rtt.csv` (sampled srtt), `cwnd.csv`, `goodput.csv`, and
    /// the simulator's `queue.csv` and `drops.csv`.
    pub fn write_dir(&self, dir: &std::path::Path) -> Result<()> {
        use std::fmt::Write as _;
        let mut j = serde_json::to_string_pretty(&self.to_json()).unwrap_or_default();
        j.push('\n');
        let (mut rtt, mut cwnd, mut gp) = (
            String::from("time_s,flow,srtt_ms\n"),
            String::from("time_s,flow,cwnd\n"),
            String::from("time_s,flow,bytes\n"),
        );
        for f in &self.flows {
            for (t, v) in &f.srtt_series {
                let _ = writeln!(
                    rtt,
                    "{:.6},{},{:.3}",
                    *t as f64 / 1e9,
                    f.id,
                    *v as f64 / 1e6
                );
            }
            for (t, v) in &f.cwnd_series {
                let _ = writeln!(cwnd, "{:.6},{},{}", *t as f64 / 1e9, f.id, v);
            }
            for (t, v) in &f.goodput_series {
                let _ = writeln!(gp, "{:.6},{},{}", *t as f64 / 1e9, f.id, v);
            }
        }
        let mut files = vec![
            ("summary.json", j),
            ("rtt.csv", rtt),
            ("cwnd.csv", cwnd),
            ("goodput.csv", gp),
            ("queue.csv", queue_csv(&self.bottleneck)),
            ("drops.csv", drops_csv(&self.bottleneck)),
        ];
        if let Some(r) = self.records_csv() {
            files.push(("records.csv", r));
        }
        write_files(dir, &files).map_err(|e| {
            let what = if e.creating_dir {
                "creating"
            } else {
                "writing"
            };
            EmuError::io(format!("{what} {}", e.path.display()), e.source)
        })
    }
}
