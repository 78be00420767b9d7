//! Parameter sweeps over brisk's simulator: one sweep file (a base scenario, a grid of
//! scenario fields and the seeds) expanded into cells, every (cell, seed) run
//! in-process, one row per (cell, seed, flow) and one summary row per (cell, flow)
//! with each metric's mean and 95 % confidence interval across seeds.
//!
//! The same code serves `brisk sweep FILE` (all local cores, [`run_local`]) and the
//! Python package's `brisk.sweep` (locally, or on Ray workers, which call
//! [`job::run_summary`] and send back only the summary text). A run's summary is a pure
//! function of its scenario text and seed, and rows are derived from summaries by one
//! function ([`job::rows`]), so a sweep's results are byte-identical wherever its runs
//! ran.

pub mod aggregate;
pub mod job;
pub mod keypath;
pub mod local;
pub mod spec;
pub mod stats;
pub mod table;

pub use keypath::KeyPath;
pub use local::{run_local, RunOutput};
pub use spec::{Cell, ScenarioKind, Sweep, SweepError};

use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::path::Path;

/// A finished sweep: its runs, rows and per-cell summary.
#[derive(Clone, Debug)]
pub struct SweepResult {
    /// Every run, cell-major, with its summary JSON or its error.
    pub runs: Vec<RunOutput>,
    /// One row per (cell, seed, flow).
    pub rows: Vec<Map<String, Value>>,
    /// One row per (cell, flow): means and 95 % CIs across seeds.
    pub summary: Vec<Map<String, Value>>,
    /// The grid keys (the parameter columns).
    pub params: Vec<String>,
}

impl SweepResult {
    /// Rows and summary of `runs` (any order; they are put cell-major, by the sweep's
    /// seed order). A run whose summary is not JSON is kept as an error.
    pub fn assemble(sweep: &Sweep, mut runs: Vec<RunOutput>) -> SweepResult {
        let seed_pos = |s: u64| {
            sweep
                .seeds
                .iter()
                .position(|&x| x == s)
                .unwrap_or(usize::MAX)
        };
        runs.sort_by_key(|r| (r.cell, seed_pos(r.seed)));
        let mut rows = Vec::new();
        for r in &mut runs {
            let Ok(text) = &r.summary else { continue };
            match (serde_json::from_str::<Value>(text), sweep.cells.get(r.cell)) {
                (Ok(v), Some(cell)) => rows.extend(job::rows(sweep.kind, cell, r.seed, &v)),
                (Err(e), _) => r.summary = Err(format!("summary is not JSON: {e}")),
                (_, None) => r.summary = Err(format!("no cell {}", r.cell)),
            }
        }
        let params: Vec<String> = sweep.keys.iter().map(|k| k.as_str().to_string()).collect();
        let summary = aggregate::summarise(&rows, &params);
        SweepResult {
            runs,
            rows,
            summary,
            params,
        }
    }

    /// The runs that failed: (cell, seed, error).
    pub fn failures(&self) -> Vec<(usize, u64, &str)> {
        self.runs
            .iter()
            .filter_map(|r| {
                r.summary
                    .as_ref()
                    .err()
                    .map(|e| (r.cell, r.seed, e.as_str()))
            })
            .collect()
    }

    fn lead(&self, per_seed: bool) -> Vec<String> {
        let mut v = vec!["cell".to_string()];
        v.extend(self.params.iter().cloned());
        v.push(if per_seed { "seed" } else { "seeds" }.to_string());
        v.push("flow".to_string());
        if !per_seed {
            v.push("deterministic".to_string());
        }
        v
    }

    /// `rows.csv`.
    pub fn rows_csv(&self) -> String {
        table::to_csv(&self.rows, &self.lead(true))
    }

    /// `summary.csv`.
    pub fn summary_csv(&self) -> String {
        table::to_csv(&self.summary, &self.lead(false))
    }

    /// `runs.jsonl`: one line per run, `{"cell", "seed", "summary"}` or `{"cell",
    /// "seed", "error"}`; the summary is embedded as the exact text the run produced.
    pub fn runs_jsonl(&self) -> String {
        let mut s = String::new();
        for r in &self.runs {
            match &r.summary {
                Ok(text) => {
                    let _ = writeln!(
                        s,
                        "{{\"cell\":{},\"seed\":{},\"summary\":{}}}",
                        r.cell, r.seed, text
                    );
                }
                Err(e) => {
                    let _ = writeln!(
                        s,
                        "{{\"cell\":{},\"seed\":{},\"error\":{}}}",
                        r.cell,
                        r.seed,
                        Value::String(e.clone())
                    );
                }
            }
        }
        s
    }

    /// Writes `rows.csv`, `summary.csv` and `runs.jsonl` into `dir` (created if
    /// missing).
    pub fn write_dir(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("rows.csv"), self.rows_csv())?;
        std::fs::write(dir.join("summary.csv"), self.summary_csv())?;
        std::fs::write(dir.join("runs.jsonl"), self.runs_jsonl())?;
        Ok(())
    }

    /// A terminal table: per (cell, flow), the headline metrics as mean ± 95 % CI.
    pub fn table(&self, sweep: &Sweep) -> String {
        const METRICS: &[(&str, &str, f64)] = &[
            ("goodput_bps", "goodput Mbit/s", 1e-6),
            ("rtt_ms.mean", "rtt mean ms", 1.0),
            ("rtt_ms.p99", "rtt p99 ms", 1.0),
            ("retransmitted_packets", "retrans", 1.0),
            ("fct_s", "fct s", 1.0),
            ("record_latency_ms.p99", "record p99 ms", 1.0),
            ("stats.mean_fct_s", "mean FCT s", 1.0),
        ];
        let mut s = String::new();
        let _ = writeln!(
            s,
            "sweep {}  {} cells × {} seeds  mean ± 95 % CI (Student's t) across seeds",
            sweep.name,
            sweep.cells.len(),
            sweep.seeds.len()
        );
        let det = self
            .summary
            .iter()
            .filter(|r| r.get("deterministic") == Some(&Value::Bool(true)))
            .count();
        if det > 0 {
            let _ = writeln!(
                s,
                "{det} of {} (cell, flow) groups deterministic: their scenario draws nothing \
                 at random (no random loss, jitter or corruption), so every seed repeats one run",
                self.summary.len()
            );
        }
        for row in &self.summary {
            let params: Vec<String> = self
                .params
                .iter()
                .map(|p| {
                    format!(
                        "{p} = {}",
                        row.get(p).map_or(String::new(), |v| v.to_string())
                    )
                })
                .collect();
            let deterministic = row.get("deterministic") == Some(&Value::Bool(true));
            let _ = writeln!(
                s,
                "cell {} flow {}{}{}{}",
                row.get("cell").unwrap_or(&Value::Null),
                row.get("flow").unwrap_or(&Value::Null),
                if params.is_empty() { "" } else { "  " },
                params.join(", "),
                if deterministic {
                    "  (deterministic: every seed gave the same run)"
                } else {
                    ""
                }
            );
            for (key, label, scale) in METRICS {
                let Some(m) = row.get(&format!("{key}.mean")).and_then(Value::as_f64) else {
                    continue;
                };
                let ci = row.get(&format!("{key}.ci95")).and_then(Value::as_f64);
                let _ = match ci {
                    // One value for the whole cell: no ± at all.
                    _ if deterministic => writeln!(s, "  {label:<16} {:.3}", m * scale),
                    // This metric alone was equal in every seed (no retransmissions in
                    // any): a ± 0.000 would read as a measured spread.
                    Some(0.0) => {
                        writeln!(s, "  {label:<16} {:.3} (same in every seed)", m * scale)
                    }
                    Some(ci) => writeln!(s, "  {label:<16} {:.3} ± {:.3}", m * scale, ci * scale),
                    None => writeln!(s, "  {label:<16} {:.3}", m * scale),
                };
            }
        }
        let failures = self.failures();
        if !failures.is_empty() {
            let _ = writeln!(s, "{} run(s) failed:", failures.len());
            for (c, seed, e) in failures {
                let _ = writeln!(s, "  cell {c} seed {seed}: {e}");
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_whose_seeds_repeat_one_run_are_called_deterministic() {
        // Cell 0 draws nothing at random; cell 1 loses packets at random.
        let text = r#"
            seeds = "1..3"
            [base]
            name = "t"
            duration = "2s"
            [base.bottleneck]
            rate = "10Mbit"
            [[base.flow]]
            rtt = "20ms"
            cc = "cubic"
            app = { kind = "bulk" }
            [grid]
            "bottleneck.loss" = [{ kind = "none" }, { kind = "bernoulli", p = 0.01 }]
        "#;
        let sweep = Sweep::from_toml_str(text, "t.toml", Path::new(".")).unwrap();
        let res = SweepResult::assemble(&sweep, run_local(&sweep, 2, &|_, _| {}));
        assert!(res.failures().is_empty());
        assert_eq!(res.summary[0]["deterministic"], Value::Bool(true));
        assert_eq!(res.summary[1]["deterministic"], Value::Bool(false));
        assert_eq!(res.summary[0]["goodput_bps.ci95"], serde_json::json!(0.0));
        let table = res.table(&sweep);
        let (c0, c1) = table.split_at(table.find("cell 1").expect(&table));
        let c0 = &c0[c0.find("cell 0").expect(&table)..]; // past the header's "mean ± CI"
        assert!(
            c0.contains("(deterministic: every seed gave the same run)"),
            "{table}"
        );
        assert!(!c0.contains('±'), "{table}");
        assert!(c1.contains('±') && !c1.contains("deterministic"), "{table}");
        assert!(
            table.contains("1 of 2 (cell, flow) groups deterministic"),
            "{table}"
        );
        assert!(res
            .summary_csv()
            .starts_with("cell,bottleneck.loss,seeds,flow,deterministic,"));
    }
}
