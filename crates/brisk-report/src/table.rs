//! The human-readable summary table of a run, simulated (`brisk run`) or over real
//! packets (`brisk run --real`): one layout for both, from the same [`RunSummary`],
//! so the two read side by side. A real run adds its `stack` and `srtt mean` columns,
//! a line for the traffic after the end (its streams are drained to check them) and
//! its emulator's lines ([`TableExtras`]); a simulated run's table has neither.

use std::fmt::Write as _;

use brisk_net::metrics::Summary;

use crate::result::{stream_status, RunSummary};

/// What one kind of run adds to the shared table.
#[derive(Clone, Debug, Default)]
pub struct TableExtras {
    /// After the title line's fields (e.g. `"  (real packets)"`).
    pub title_suffix: String,
    /// Further lines per flow, by the flow's position (e.g. [`rdb_line`]), printed
    /// indented after the shared ones and before the flow's error.
    pub flow_lines: Vec<Vec<String>>,
    /// Appended to the bottleneck line.
    pub bottleneck_suffix: String,
    /// Lines after the bottleneck line, each ending in a newline.
    pub trailer: String,
}

/// The per-flow line of a sender that bundled redundant data (RDB).
pub fn rdb_line(bundles: u64, bytes: u64, loss_cwr: u64) -> String {
    format!("RDB: {bundles} bundles, {bytes} redundant bytes, {loss_cwr} CWR from hidden losses")
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn ms_f(ns: f64) -> f64 {
    ns / 1e6
}

/// `mean`/`p99` of `s` as `"12.34ms"`, or `"-"`.
fn ms_col(s: &Option<Summary>, p99: bool) -> String {
    s.map_or("-".into(), |r| {
        format!("{:.2}ms", if p99 { ms(r.p99) } else { ms_f(r.mean) })
    })
}

impl RunSummary<'_> {
    /// The table, with `extras` from the kind of run.
    pub fn table(&self, extras: &TableExtras) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "scenario {}  seed {}  duration {:.3}s{}",
            self.scenario,
            self.seed,
            self.duration.as_secs_f64(),
            extras.title_suffix
        );
        let real = self.flows.iter().any(|f| f.real.is_some());
        // The cc column fits the longest label ("cubic+dc").
        let ccw = self
            .flows
            .iter()
            .map(|f| f.cc.len())
            .max()
            .unwrap_or(0)
            .max(6);
        let (stack_h, srtt_h) = if real {
            (format!(" {:>6}", "stack"), format!(" {:>10}", "srtt mean"))
        } else {
            (String::new(), String::new())
        };
        let _ = writeln!(
            s,
            "{:>4}{stack_h} {:<ccw$} {:<8} {:>11} {:>10} {:>10}{srtt_h} {:>10} {:>8} {:>9} {:>7}",
            "flow",
            "cc",
            "app",
            "goodput",
            "rtt mean",
            "rtt p99",
            "owd p95",
            "retrans",
            "fct",
            "stream"
        );
        for (k, f) in self.flows.iter().enumerate() {
            let (stack, srtt) = match &f.real {
                Some(r) => (
                    format!(" {:>6}", r.stack),
                    format!(" {:>10}", ms_col(&r.srtt, false)),
                ),
                None if real => (format!(" {:>6}", "-"), format!(" {:>10}", "-")),
                None => (String::new(), String::new()),
            };
            let owd = f
                .one_way_delay
                .map_or("-".into(), |d| format!("{:.2}ms", ms(d.p95_ns)));
            let fct = f
                .fct
                .map_or("-".into(), |d| format!("{:.3}s", d.as_secs_f64()));
            let _ = writeln!(
                s,
                "{:>4}{stack} {:<ccw$} {:<8} {:>6.2}Mbit/s {:>10} {:>10}{srtt} {:>10} {:>8} {:>9} {:>7}",
                f.id,
                f.cc,
                &f.app[..f.app.len().min(8)],
                f.goodput_bps / 1e6,
                ms_col(&f.rtt, false),
                ms_col(&f.rtt, true),
                owd,
                f.retransmitted_packets,
                fct,
                stream_status(f.stream_ok, f.bytes_delivered)
            );
            if f.bytes_delivered == 0 && f.bytes_sent > 0 {
                let _ = writeln!(s, "     no data delivered");
            }
            if let Some(d) = f.real.as_ref().map(|r| r.drain) {
                if d.bytes > 0 || d.retransmitted_packets > 0 {
                    let _ = writeln!(
                        s,
                        "     after the end: {} bytes and {} retransmissions while draining for {:.2} s (not in the totals)",
                        d.bytes,
                        d.retransmitted_packets,
                        d.duration.as_secs_f64()
                    );
                }
            }
            if let Some(l) = &f.record_latency {
                let _ = writeln!(
                    s,
                    "     latency over {} {}: mean {:.2}ms p99 {:.2}ms max {:.2}ms",
                    l.count,
                    if f.app == "web" { "objects" } else { "records" },
                    ms_f(l.mean),
                    ms(l.p99),
                    ms(l.max)
                );
            }
            if let Some(l) = &f.record_latency_tx {
                let _ = writeln!(
                    s,
                    "     after first transmission: mean {:.2}ms p99 {:.2}ms max {:.2}ms",
                    ms_f(l.mean),
                    ms(l.p99),
                    ms(l.max)
                );
            }
            if let Some(l) = &f.ack_latency {
                let _ = writeln!(
                    s,
                    "     ACK latency: mean {:.2}ms p99 {:.2}ms max {:.2}ms",
                    ms_f(l.mean),
                    ms(l.p99),
                    ms(l.max)
                );
            }
            for line in extras.flow_lines.get(k).into_iter().flatten() {
                let _ = writeln!(s, "     {line}");
            }
            if let Some(e) = &f.error {
                let _ = writeln!(s, "     error: {e}");
            }
        }
        if self.flows.len() > 1 {
            let _ = writeln!(
                s,
                "Jain's fairness index (goodput): {:.3}",
                crate::result::jain_fairness(self.flows.iter().map(|f| f.goodput_bps))
            );
        }
        let b = self.bottleneck;
        let _ = writeln!(
            s,
            "bottleneck: utilization {:.1}%  drops {}{}  first drop {}  queue delay mean {} p99 {}  max queue {} pkts{}",
            b.utilization * 100.0,
            b.drops,
            // Marks only where a queue marks, so drop-tail summaries read as before.
            if b.ce_marked > 0 {
                format!("  CE-marked {}", b.ce_marked)
            } else {
                String::new()
            },
            b.first_drop.map_or("-".into(), |t| format!("{:.3}s", t.as_secs_f64())),
            ms_col(&b.queue_delay, false),
            ms_col(&b.queue_delay, true),
            b.max_queue_packets,
            extras.bottleneck_suffix,
        );
        s.push_str(&extras.trailer);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{BottleneckResult, Drain, FlowSummary, RealFlowExtras};
    use brisk_time::Duration;
    use serde_json::Value;

    fn flow(id: u32, real: bool) -> FlowSummary {
        FlowSummary {
            id,
            cc: "cubic".into(),
            app: "records".into(),
            start_s: 0.0,
            goodput_bps: 2e6,
            bytes_delivered: 10,
            bytes_sent: 10,
            retransmitted_packets: 3,
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
            real: real.then(|| RealFlowExtras {
                stack: "linux".into(),
                srtt: None,
                rtt_base: Duration::from_millis(20),
                drain: Drain {
                    bytes: 5,
                    ..Drain::default()
                },
            }),
        }
    }

    fn table(real: bool, extras: &TableExtras) -> String {
        let b = BottleneckResult {
            utilization: 0.5,
            drops: 0,
            ce_marked: 0,
            first_drop: None,
            queue_delay: None,
            max_queue_packets: 7,
            queue_series: Vec::new(),
            drop_records: Vec::new(),
        };
        RunSummary {
            scenario: "t",
            seed: 1,
            duration: Duration::from_secs(2),
            flows: vec![flow(0, real)],
            bottleneck: &b,
        }
        .table(extras)
    }

    #[test]
    fn both_kinds_of_run_share_the_layout() {
        let sim = table(false, &TableExtras::default());
        assert_eq!(
            sim,
            "scenario t  seed 1  duration 2.000s\n\
             flow cc     app          goodput   rtt mean    rtt p99    owd p95  retrans       fct  stream\n   \
             0 cubic  records    2.00Mbit/s          -          -          -        3         -      ok\n\
             bottleneck: utilization 50.0%  drops 0  first drop -  queue delay mean - p99 -  max queue 7 pkts\n"
        );
        let real = table(
            true,
            &TableExtras {
                title_suffix: "  (real packets)".into(),
                flow_lines: vec![vec![rdb_line(1, 2, 3)]],
                bottleneck_suffix: "; CPU 1 s".into(),
                trailer: "emulator\n".into(),
            },
        );
        let lines: Vec<&str> = real.lines().collect();
        assert!(lines[0].ends_with("(real packets)"));
        assert!(lines[1].starts_with("flow  stack cc"), "{}", lines[1]);
        assert!(
            lines[1].contains("rtt p99  srtt mean    owd p95"),
            "{}",
            lines[1]
        );
        assert!(lines[2].starts_with("   0  linux cubic"), "{}", lines[2]);
        assert!(lines[3].starts_with("     after the end: 5 bytes"));
        assert_eq!(
            lines[4],
            "     RDB: 1 bundles, 2 redundant bytes, 3 CWR from hidden losses"
        );
        assert!(lines[5].ends_with("max queue 7 pkts; CPU 1 s"));
        assert_eq!(lines[6], "emulator");
    }
}
