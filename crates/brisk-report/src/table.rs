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
