//! Presenting a [`RealResult`] through brisk-report: the simulator's JSON fields (plus `stack`, `srtt_ms`,
//! `rtt_base_ms` per flow and a `real` section), the simulator's table (brisk-report's,
//! with a stack and an srtt column and the emulator's lines), and the simulator's CSV
//! files.

use serde_json::{json, Value};

use super::{RealFlowResult, RealResult};
use crate::error::{EmuError, Result};
use brisk_report::{
    drops_csv, jain_fairness, queue_csv, rdb_line, write_files, FlowSummary, RealFlowExtras,
    RunSummary, TableExtras,
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
        let mut out = self.summary().to_json();
        out["real"] = json!({
            "jain_fairness": self.jain_fairness(),
            "cpu_s": self.cpu_s,
            "brisk_busy_s": self.brisk_busy_s,
            "emulator": &self.emulator,
        });
        if !self.paths.is_empty() {
            out["real"]["paths"] = json!(&self.paths);
        }
        if let Some(sbd) = &self.sbd {
            out["real"]["sbd"] = json!(sbd);
        }
        if let Some(m) = &self.mptcp {
            out["real"]["mptcp"] = json!({
                "counters": m,
                "flows": self
                    .flows
                    .iter()
                    .filter(|f| !f.subflows.is_empty())
                    .map(|f| json!({ "id": f.id, "subflows": &f.subflows }))
                    .collect::<Vec<_>>(),
            });
        }
        out
    }

    /// The run's summary in the form both kinds of run report.
    fn summary(&self) -> RunSummary<'_> {
        RunSummary {
            scenario: &self.scenario,
            seed: self.seed,
            duration: self.duration,
            flows: self.flows.iter().map(RealFlowResult::summary).collect(),
            bottleneck: &self.bottleneck,
        }
    }

    /// The human-readable table: the simulator's (brisk-report's), with each flow's
    /// stack and sampled srtt, its traffic after the end, and the emulator's lines.
    pub fn table(&self) -> String {
        use std::fmt::Write as _;
        let flow_lines = self
            .flows
            .iter()
            .map(|f| {
                f.sender_info
                    .as_ref()
                    .filter(|i| i.rdb_packets > 0)
                    .map(|i| rdb_line(i.rdb_packets, i.rdb_bytes, i.rdb_loss_cwr))
                    .into_iter()
                    .collect()
            })
            .collect();
        let mut trailer = String::new();
        let h = &self.emulator.health;
        let _ = writeln!(
            trailer,
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
        trailer.push_str(&self.emulator.warning_lines());
        for p in &self.paths {
            let _ = writeln!(
                trailer,
                "path {} ({}, rtt {:.1} ms, loss {:.2} %): A->B {:.2} MB in {} packets ({:.1} % of all paths), B->A {:.2} MB, drops queue {} loss {}{}",
                p.path,
                p.rate_bps
                    .map_or("unlimited".into(), |r| format!("{:.2} Mbit/s", r as f64 / 1e6)),
                p.rtt_ms,
                p.loss * 100.0,
                p.forward_bytes as f64 / 1e6,
                p.forward_packets,
                p.share * 100.0,
                p.reverse_bytes as f64 / 1e6,
                p.dropped_queue,
                p.dropped_loss,
                if p.clean { "" } else { " (DISTORTED)" },
            );
        }
        if let Some(m) = &self.mptcp {
            for f in self.flows.iter().filter(|f| !f.subflows.is_empty()) {
                let acked: Vec<String> = f
                    .subflows
                    .iter()
                    .map(|s| format!("{:.1} MB", s.bytes_acked as f64 / 1e6))
                    .collect();
                let _ = writeln!(
                    trailer,
                    "flow {} MPTCP: {} subflows, acked {}",
                    f.id,
                    f.subflows.len(),
                    acked.join(" / ")
                );
            }
            let joins = |c: &std::collections::BTreeMap<String, u64>| {
                c.get("MPTcpExtMPJoinAckRx").copied().unwrap_or(0)
            };
            let _ = writeln!(
                trailer,
                "MPTCP counters (nstat MPTcpExt*, JSON real.mptcp.counters): joins acknowledged at senders {} / receivers {}",
                joins(&m.senders),
                joins(&m.receivers)
            );
        }
        // Traffic does not stop at the end: each stream is drained to check its bytes.
        let _ = writeln!(
            trailer,
            "totals stop at the scenario's end ({:.1} s), as the simulator's do; each stream is then drained (at most 15 s) to check its bytes: that traffic is in the pcaps and counted apart (\"after the end\", JSON `drain`)",
            self.duration.as_secs_f64()
        );
        self.summary().table(&TableExtras {
            title_suffix: "  (real packets)".into(),
            flow_lines,
            bottleneck_suffix: format!(
                "; emulator delivery error p99 {:.1} us; CPU {:.2} s",
                self.emulator.forward.delivery_error.p99_ns as f64 / 1e3,
                self.cpu_s
            ),
            trailer,
        })
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
