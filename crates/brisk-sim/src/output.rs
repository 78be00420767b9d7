//! Presenting a `RunResult`: the `--json` object (also `summary.json`), CSV time series
//! (`goodput.csv`, `rtt.csv`, `cwnd.csv`, `queue.csv`, `drops.csv`, and `dc.csv` when a
//! flow runs delay correlation) and the human table (brisk-report's layout, shared
//! with real runs).
//!
//! Times are seconds, rates bit/s, delays milliseconds, unless a column name says
//! otherwise. Output is a pure function of the result, so equal runs give equal bytes.

use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::Path;

// The JSON building blocks are brisk-report's (shared with real-packet runs); these
// re-exports keep the `brisk_sim::output` paths working.
pub use brisk_report::{latency_json, queue_delay_json, rtt_json};

use crate::run::{FlowResult, RunResult, SimError};
use brisk_report::{
    drops_csv, queue_csv, rdb_line, write_files, FlowSummary, RunSummary, TableExtras,
};
use brisk_tcp::cc::CcDiagnostics;
use brisk_time::Instant;

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}
fn secs(t: Instant) -> f64 {
    t.as_secs_f64()
}

/// A controller's final diagnostics, e.g. `{"kind": "delay_correlation", "r": …}`.
fn cc_diag_json(d: &Option<CcDiagnostics>) -> Value {
    d.as_ref()
        .and_then(|d| serde_json::to_value(d).ok())
        .unwrap_or(Value::Null)
}

/// `dc.csv`: one row per delay-correlation consult (or clamp/release) of every flow;
/// `None` when no flow has any.
fn dc_csv(r: &RunResult) -> Option<String> {
    let mut s = String::from(
        "time_s,flow,r,estimate_segments,clamping,consults,clamps,rtt_ms,cwnd_segments\n",
    );
    let mut any = false;
    for f in &r.flows {
        for (t, row) in &f.cc_series {
            let CcDiagnostics::DelayCorrelation(d) = row.diag else {
                continue;
            };
            any = true;
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{}",
                *t as f64 / 1e9,
                f.id,
                d.r.map_or(String::new(), |r| r.to_string()),
                d.estimate.map_or(String::new(), |e| e.to_string()),
                u8::from(d.clamping),
                d.consults,
                d.clamps,
                ms(row.rtt_ns),
                row.cwnd
            );
        }
    }
    any.then_some(s)
}

pub use brisk_report::RECORDS_CSV_HEADER;

/// `records.csv`: one row per delivered record (`records`) or datagram (`datagrams`,
/// `udp`), per flow in generation order. `index`: the record's place among the records
/// the sender wrote (skipped ones are not counted), or the datagram's index;
/// `priority`: a datagram's uCOBS priority (1 normal, 2 urgent; empty for records and
/// UDP); `first_tx_s`: when the record's last byte was first transmitted (records only:
/// a datagram's place in the stream moves with prioritised sends); `latency_ms` is
/// delivery − generation. `None` when no flow delivered any.
pub fn records_csv(r: &RunResult) -> Option<String> {
    let mut s = String::from(RECORDS_CSV_HEADER);
    let mut any = false;
    let t = |ns: u64| ns as f64 / 1e9;
    for f in &r.flows {
        // Records: pair each delivery with its first transmission by generation time,
        // in order within equal times (a layered source generates several at once).
        let mut del = f.record_deliveries.clone();
        del.sort_unstable();
        let tx = &f.record_first_tx;
        let mut j = 0;
        for &(gen, delivered) in &del {
            any = true;
            while j < tx.len() && tx[j].0 < gen {
                j += 1;
            }
            let (index, first) = match tx.get(j) {
                Some(&(g, at)) if g == gen => {
                    j += 1;
                    ((j - 1).to_string(), t(at).to_string())
                }
                _ => (String::new(), String::new()),
            };
            let _ = writeln!(
                s,
                "{},{},{index},,{},{first},{},{}",
                f.id,
                f.app,
                t(gen),
                t(delivered),
                ms(delivered.saturating_sub(gen))
            );
        }
        let Some(d) = &f.datagrams else {
            continue;
        };
        let mut del = d.deliveries.clone();
        del.sort_unstable();
        for &(index, gen, delivered) in &del {
            any = true;
            // The source's rule (`DgramSource::write`); UDP datagrams have none.
            let prio = if f.app == "datagrams" {
                let urgent = d
                    .urgent_every
                    .is_some_and(|n| (index + 1).is_multiple_of(n));
                if urgent {
                    crate::dgram_app::URGENT_PRIORITY
                } else {
                    crate::dgram_app::NORMAL_PRIORITY
                }
                .to_string()
            } else {
                String::new()
            };
            let _ = writeln!(
                s,
                "{},{},{index},{prio},{},,{},{}",
                f.id,
                f.app,
                t(gen),
                t(delivered),
                ms(delivered.saturating_sub(gen))
            );
        }
    }
    any.then_some(s)
}

impl FlowResult {
    /// The flow's summary in the form both kinds of run report.
    pub fn summary(&self) -> FlowSummary {
        FlowSummary {
            id: self.id,
            cc: self.cc.to_string(),
            app: self.app.to_string(),
            start_s: secs(self.start),
            goodput_bps: self.goodput_bps,
            bytes_delivered: self.bytes_delivered,
            bytes_sent: self.bytes_sent,
            retransmitted_packets: self.retransmitted_packets,
            fct: self.fct,
            rtt: self.rtt,
            record_latency: self.record_latency,
            record_latency_tx: self.record_latency_tx,
            ack_latency: self.ack_latency,
            one_way_delay: self.one_way_delay,
            stream_ok: self.stream_ok,
            first_drop: self.first_drop,
            records_skipped: self.records_skipped,
            cc_diag: cc_diag_json(&self.cc_diag),
            error: self.error.clone(),
            real: None,
        }
    }
}

impl RunResult {
    /// The run's summary in the form both kinds of run report.
    fn summary(&self) -> RunSummary<'_> {
        RunSummary {
            scenario: &self.scenario,
            seed: self.seed,
            duration: self.duration,
            flows: self.flows.iter().map(FlowResult::summary).collect(),
            bottleneck: &self.bottleneck,
        }
    }

    /// The summary object printed by `brisk run --json` and written as `summary.json`:
    /// brisk-report's run summary plus the engine's counters (`sim`).
    pub fn to_json(&self) -> Value {
        let mut out = self.summary().to_json();
        out["sim"] = json!({
            "events": self.engine.events,
            "packets": self.engine.packets,
            "unroutable": self.engine.unroutable,
            "jain_fairness": self.jain_fairness(),
        });
        if let Some(h) = &self.trace_sha256 {
            out["trace_sha256"] = json!(h);
        }
        if let Some(i) = &self.interrupted {
            out["interrupted"] = i.to_json();
        }
        out
    }

    /// Jain's fairness index over the flows' goodputs (as real runs report it).
    pub fn jain_fairness(&self) -> f64 {
        brisk_report::jain_fairness(self.flows.iter().map(|f| f.goodput_bps))
    }

    /// Writes `summary.json` and the CSV time series into `dir` (created if missing).
    pub fn write_dir(&self, dir: &Path) -> Result<(), SimError> {
        let files = self.files();
        write_files(dir, &files).map_err(|e| SimError::Io {
            // A directory that cannot be created is named with a trailing separator.
            path: if e.creating_dir {
                e.path.join("")
            } else {
                e.path
            }
            .display()
            .to_string(),
            source: e.source,
        })
    }

    /// What [`RunResult::write_dir`] writes, as (file name, contents), without writing
    /// it (the Python package turns the CSVs into DataFrames).
    pub fn files(&self) -> Vec<(&'static str, String)> {
        let mut files: Vec<(&'static str, String)> = Vec::new();
        let mut json = serde_json::to_string_pretty(&self.to_json()).unwrap_or_default();
        json.push('\n');
        files.push(("summary.json", json));

        let mut s = String::from("time_s,flow,bytes,goodput_bps\n");
        let interval = self.sample_interval_s();
        for f in &self.flows {
            for &(t, bytes) in &f.goodput_series {
                let _ = writeln!(
                    s,
                    "{},{},{},{}",
                    t as f64 / 1e9,
                    f.id,
                    bytes,
                    bytes as f64 * 8.0 / interval
                );
            }
        }
        files.push(("goodput.csv", s));

        let mut s = String::from("time_s,flow,samples,min_ms,mean_ms,max_ms\n");
        for f in &self.flows {
            for (t, r) in &f.rtt_series {
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{}",
                    *t as f64 / 1e9,
                    f.id,
                    r.count,
                    ms(r.min_ns),
                    ms(r.mean_ns),
                    ms(r.max_ns)
                );
            }
        }
        files.push(("rtt.csv", s));

        let mut s = String::from(
            "time_s,flow,cwnd_segments,ssthresh_segments,srtt_ms,in_flight_segments\n",
        );
        for f in &self.flows {
            for (t, r) in &f.cwnd_series {
                let ss = if r.ssthresh == u32::MAX {
                    String::new()
                } else {
                    r.ssthresh.to_string()
                };
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{}",
                    *t as f64 / 1e9,
                    f.id,
                    r.cwnd,
                    ss,
                    ms(r.srtt_ns),
                    r.in_flight
                );
            }
        }
        files.push(("cwnd.csv", s));

        files.push(("queue.csv", queue_csv(&self.bottleneck)));
        files.push(("drops.csv", drops_csv(&self.bottleneck)));
        if let Some(s) = dc_csv(self) {
            files.push(("dc.csv", s));
        }
        if let Some(s) = records_csv(self) {
            files.push(("records.csv", s));
        }
        files
    }

    /// The sampling interval, recovered from the series (for rate columns).
    fn sample_interval_s(&self) -> f64 {
        self.flows
            .iter()
            .find_map(|f| f.goodput_series.first().map(|&(t, _)| t as f64 / 1e9))
            .filter(|s| *s > 0.0)
            .unwrap_or(0.1)
    }

    /// The human-readable summary table (brisk-report's, shared with real runs).
    pub fn table(&self) -> String {
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
        self.summary().table(&TableExtras {
            flow_lines,
            ..TableExtras::default()
        })
    }
}
