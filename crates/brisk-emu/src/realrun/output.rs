//! Presenting a [`RealResult`]: the simulator's JSON fields (plus `stack`, `srtt_ms`,
//! `rtt_base_ms` per flow and a `real` section), a table, and the simulator's CSV files.

use serde_json::{json, Value};

use super::{RealResult, Stats};
use crate::error::{EmuError, Result};
use brisk_sim::output::{latency_json, queue_delay_json, rtt_json};

impl RealResult {
    /// The simulator's `--json` shape, plus `stack` and `srtt_ms` per flow and a
    /// `real` section (emulator counters, CPU).
    pub fn to_json(&self) -> Value {
        let flows: Vec<Value> = self
            .flows
            .iter()
            .map(|f| {
                json!({
                    "id": f.id,
                    "stack": f.stack,
                    "cc": f.cc,
                    "app": f.app,
                    "start_s": f.start.as_secs_f64(),
                    "goodput_bps": f.goodput_bps,
                    "bytes_delivered": f.bytes_delivered,
                    "bytes_sent": f.bytes_sent,
                    "retransmitted_packets": f.retransmitted_packets,
                    "fct_s": f.fct.map(|d| d.as_secs_f64()),
                    "rtt_ms": rtt_json(&f.rtt),
                    "srtt_ms": rtt_json(&f.srtt),
                    "record_latency_ms": latency_json(&f.record_latency),
                    "stream_ok": f.stream_ok,
                    "first_drop_s": f.first_drop.map(|t| t.as_secs_f64()),
                    "records_skipped": 0,
                    "cc_diag": f.cc_diag.clone().unwrap_or(Value::Null),
                    "error": f.error,
                    "rtt_base_ms": f.rtt_base.as_secs_f64() * 1e3,
                })
            })
            .collect();
        let b = &self.bottleneck;
        json!({
            "scenario": self.scenario,
            "seed": self.seed,
            "duration_s": self.duration.as_secs_f64(),
            "flows": flows,
            "bottleneck": {
                "utilization": b.utilization,
                "drops": b.drops,
                "first_drop_s": b.first_drop.map(|t| t.as_secs_f64()),
                "max_queue_packets": b.max_queue_packets,
                "queue_delay_ms": queue_delay_json(&b.queue_delay),
            },
            "real": {
                "jain_fairness": self.jain_fairness(),
                "cpu_s": self.cpu_s,
                "brisk_busy_s": self.brisk_busy_s,
                "emulator": &self.emulator,
            },
        })
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
                f.stream_ok
            );
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
        t
    }

    /// Jain's fairness index of the flows' goodputs: (Σx)² / (n·Σx²), 1 = equal shares.
    pub fn jain_fairness(&self) -> f64 {
        let (sum, sq) = self.flows.iter().fold((0.0, 0.0), |(s, q), f| {
            (s + f.goodput_bps, q + f.goodput_bps * f.goodput_bps)
        });
        if sq > 0.0 {
            sum * sum / (self.flows.len() as f64 * sq)
        } else {
            0.0
        }
    }

    /// Writes `summary.json`, `rtt.csv` (sampled srtt), `cwnd.csv`, `goodput.csv`, and
    /// the simulator's `queue.csv` and `drops.csv`.
    pub fn write_dir(&self, dir: &std::path::Path) -> Result<()> {
        use std::fmt::Write as _;
        let w = |name: &str, text: String| {
            let p = dir.join(name);
            std::fs::write(&p, text)
                .map_err(|e| EmuError::io(format!("writing {}", p.display()), e))
        };
        std::fs::create_dir_all(dir)
            .map_err(|e| EmuError::io(format!("creating {}", dir.display()), e))?;
        let mut j = serde_json::to_string_pretty(&self.to_json()).unwrap_or_default();
        j.push('\n');
        w("summary.json", j)?;
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
        let mut q = String::from(
            "time_s,queue_packets,queue_bytes,max_queue_packets,mean_delay_ms,max_delay_ms,drops\n",
        );
        for (t, r) in &self.bottleneck.queue_series {
            let _ = writeln!(
                q,
                "{},{},{},{},{},{},{}",
                *t as f64 / 1e9,
                r.packets,
                r.bytes,
                r.max_packets,
                r.mean_delay_ns as f64 / 1e6,
                r.max_delay_ns as f64 / 1e6,
                r.drops
            );
        }
        let mut d = String::from("time_s,flow,reason\n");
        for r in &self.bottleneck.drop_records {
            let _ = writeln!(d, "{},{},{}", r.at.as_secs_f64(), r.flow, r.reason.name());
        }
        w("rtt.csv", rtt)?;
        w("cwnd.csv", cwnd)?;
        w("goodput.csv", gp)?;
        w("queue.csv", q)?;
        w("drops.csv", d)
    }
}
