//! A network run's outputs: the JSON summary, the terminal table and `flows.csv`
//! (one row per flow, warm-up flows marked), for `brisk run` and brisk-repro.

use serde_json::{json, Value};
use std::fmt::Write;
use std::path::Path;

use crate::fct::FctStats;
use crate::wl_run::WorkloadResult;
use crate::SimError;

fn opt_ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |s| format!("{:.2}", s * 1e3))
}

impl WorkloadResult {
    /// The JSON summary (aggregates only; per-flow rows go to `flows.csv`).
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "scenario": self.scenario,
            "seed": self.seed,
            "duration_s": self.duration.as_secs_f64(),
            "topology": { "hosts": self.hosts, "routers": self.routers, "links": self.links,
                          "mean_core_hops": self.mean_core_hops, "fifo_routers": self.fifo_routers },
            "workload": {
                "target_load": self.target_load,
                "arrival_rate_per_s": self.arrival_rate,
                "flows": self.flows.len(),
                "warmup_s": self.warmup.as_secs_f64(),
                "not_intact": self.not_intact,
                "errors": self.errors,
                "unknown_accepts": self.unknown_accepts,
            },
            "utilisation": self.utilisation,
            "fct": self.all,
            "classes": self.classes,
            "sim": {
                "events": self.engine.events,
                "packets": self.engine.packets,
                "unroutable": self.engine.unroutable,
                "peak_connections_per_host": self.peak_connections,
            },
            "stopped_early": self.interrupted.is_some(),
        });
        if let Some(i) = &self.interrupted {
            v["interrupted"] = i.to_json();
        }
        v
    }

    /// A terminal table: load, utilisation, FCTs per class and per size bin.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let u = &self.utilisation;
        let _ = writeln!(
            s,
            "scenario {}  seed {}  simulated {:.3}s  {} hosts, {} routers, {} links",
            self.scenario,
            self.seed,
            self.duration.as_secs_f64(),
            self.hosts,
            self.routers,
            self.links
        );
        if !self.fifo_routers.is_empty() {
            let _ = writeln!(
                s,
                "routers without priorities (FIFO): {}",
                self.fifo_routers.join(", ")
            );
        }
        let _ = writeln!(
            s,
            "load target {:.2}: {:.1} flows/s, mean {:.2} core hops; measured over {:.2}s: core {:.3} (max {:.3}), host uplinks {:.3}, router ports {:.3}; drops core {} access {}",
            self.target_load,
            self.arrival_rate,
            self.mean_core_hops,
            u.window_s,
            u.core_mean,
            u.core_max,
            u.access_up_mean,
            u.access_down_mean,
            u.core_drops,
            u.access_drops
        );
        let _ = writeln!(
            s,
            "flows {} (warm-up {:.2}s excluded: {} measured, {} completed), not intact {}, errors {}",
            self.flows.len(),
            self.warmup.as_secs_f64(),
            self.all.flows,
            self.all.completed,
            self.not_intact,
            self.errors
        );
        for c in &self.classes {
            if c.stats.flows == 0 {
                continue;
            }
            let _ = writeln!(
                s,
                "\nclass {} ({}, {} hosts): mean FCT {} ms, byte-weighted {} ms",
                c.name,
                c.cc,
                c.hosts,
                opt_ms(c.stats.mean_fct_s),
                opt_ms(c.stats.byte_weighted_fct_s)
            );
            bins_table(&mut s, &c.stats);
        }
        s
    }

    /// `summary.json` and `flows.csv` into `dir`.
    pub fn write_dir(&self, dir: &Path) -> Result<(), SimError> {
        let io = |p: &Path| {
            let path = p.display().to_string();
            move |source| SimError::Io {
                path: path.clone(),
                source,
            }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let mut js = serde_json::to_string_pretty(&self.to_json()).unwrap_or_default();
        js.push('\n');
        let p = dir.join("summary.json");
        std::fs::write(&p, js).map_err(io(&p))?;
        let p = dir.join("flows.csv");
        std::fs::write(&p, self.flows_csv()).map_err(io(&p))?;
        Ok(())
    }

    /// `flows.csv`: one row per flow, warm-up flows marked.
    pub fn flows_csv(&self) -> String {
        let mut c = String::from(
            "id,src,dst,class,size,hops,core_hops,base_rtt_s,start_s,first_byte_s,acked_s,last_rx_s,fct_s,srtt_s,retransmits,intact,warmup,paced_first_acked_s,paced_first_read_s\n",
        );
        let t = |x: Option<brisk_time::Instant>| {
            x.map_or(String::new(), |i| {
                format!("{:.9}", i.as_nanos() as f64 / 1e9)
            })
        };
        for r in &self.flows {
            let _ = writeln!(
                c,
                "{},{},{},{},{},{},{},{:.9},{},{},{},{},{},{},{},{},{},{},{}",
                r.id,
                r.src,
                r.dst,
                r.class,
                r.size,
                r.hops,
                r.core_hops,
                r.base_rtt.as_secs_f64(),
                t(Some(r.start)),
                t(r.first_byte),
                t(r.acked),
                t(r.last_rx),
                r.fct()
                    .map_or(String::new(), |d| format!("{:.9}", d.as_secs_f64())),
                r.srtt
                    .map_or(String::new(), |d| format!("{:.9}", d.as_secs_f64())),
                r.retransmits,
                r.intact(),
                r.start < brisk_time::Instant::ZERO + self.warmup,
                t(r.paced.as_ref().and_then(|p| p.first_acked)),
                t(r.paced.as_ref().and_then(|p| p.first_read)),
            );
        }
        c
    }
}

fn bins_table(s: &mut String, st: &FctStats) {
    let _ = writeln!(
        s,
        "  {:>22} {:>7} {:>9} {:>12} {:>14}",
        "size (bytes]", "flows", "completed", "mean FCT ms", "median Mbit/s"
    );
    for b in &st.bins {
        let range = match b.upper_bytes {
            Some(u) => format!("({}, {}]", b.lower_bytes, u),
            None => format!("> {}", b.lower_bytes),
        };
        let _ = writeln!(
            s,
            "  {:>22} {:>7} {:>9} {:>12} {:>14}",
            range,
            b.flows,
            b.completed,
            opt_ms(b.mean_fct_s),
            b.median_throughput_bps
                .map_or("-".into(), |x| format!("{:.2}", x / 1e6))
        );
    }
    for c in &st.cdfs {
        let p: Vec<String> = c
            .percentiles
            .iter()
            .map(|(p, v)| format!("p{p} {:.2}", v * 1e3))
            .collect();
        let _ = writeln!(
            s,
            "  FCT ms of the {} flows of {} bytes: {}",
            c.completed,
            c.size_bytes,
            p.join(", ")
        );
    }
}
