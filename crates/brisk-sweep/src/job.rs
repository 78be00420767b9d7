//! One run of a sweep: a cell's scenario under one seed, and the rows it gives.
//!
//! A run's whole result is its summary: the JSON object `brisk run --json` prints for
//! that scenario and seed, as compact text. That string is what crosses a process or
//! machine boundary (a Ray worker returns it), and rows are derived from it by one
//! function here, so a sweep's rows are the same wherever its runs ran.

use crate::spec::{Cell, ScenarioKind, Sweep};
use serde_json::{Map, Value};

/// Runs `scenario` (TOML text, labelled `label` so relative trace paths resolve) with
/// `seed` and returns its summary JSON, compact.
pub fn run_summary(
    scenario: &str,
    label: &str,
    kind: ScenarioKind,
    seed: u64,
) -> Result<String, String> {
    let v = match kind {
        ScenarioKind::Dumbbell => {
            let sc = brisk_scenario::Scenario::from_toml_str_named(scenario, label)
                .map_err(|e| e.to_string())?;
            brisk_sim::run(&sc, seed)
                .map_err(|e| e.to_string())?
                .to_json()
        }
        ScenarioKind::Network => {
            let sc = brisk_sim::topo_build::from_toml_str_named(scenario, label)
                .map_err(|e| e.to_string())?;
            brisk_sim::wl_run::run_net(&sc, seed)
                .map_err(|e| e.to_string())?
                .to_json()
        }
    };
    serde_json::to_string(&v).map_err(|e| e.to_string())
}

/// Runs job (cell, seed) of `sweep`.
pub fn run_job(sweep: &Sweep, cell: usize, seed: u64) -> Result<String, String> {
    let c = sweep
        .cells
        .get(cell)
        .ok_or_else(|| format!("no cell {cell} (the sweep has {})", sweep.cells.len()))?;
    run_summary(&c.scenario, &sweep.base_label, sweep.kind, seed)
}

/// A TOML value as a row field: scalars as themselves, anything else as its TOML text.
pub fn param_json(v: &toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => {
            serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
        }
        toml::Value::Boolean(b) => Value::Bool(*b),
        other => Value::String(other.to_string()),
    }
}

/// Scalars of `v` into `out` as dotted keys under `prefix`; arrays (quantile vectors,
/// size bins) are left out: a row holds numbers one can average.
fn flatten(prefix: &str, v: &Value, out: &mut Map<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        Value::Array(_) => {}
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

/// The rows of one run: one per flow (dumbbell) or per flow class (network), each
/// with the cell's index and parameters, the seed, `flow`, the flow's results and the
/// run-wide ones (`bottleneck.*`, `sim.*`; for networks `utilisation.*`, `fct.*`).
pub fn rows(
    kind: ScenarioKind,
    cell: &Cell,
    seed: u64,
    summary: &Value,
) -> Vec<Map<String, Value>> {
    let mut head = Map::new();
    head.insert("cell".into(), Value::from(cell.index));
    for (k, v) in &cell.params {
        head.insert(k.clone(), param_json(v));
    }
    head.insert("seed".into(), Value::from(seed));
    let mut run_wide = Map::new();
    let (per, run_keys): (&str, &[&str]) = match kind {
        ScenarioKind::Dumbbell => ("flows", &["bottleneck", "sim"]),
        ScenarioKind::Network => ("classes", &["utilisation", "fct", "sim", "workload"]),
    };
    for k in run_keys {
        if let Some(v) = summary.get(*k) {
            flatten(k, v, &mut run_wide);
        }
    }
    let mut out = Vec::new();
    for f in summary
        .get(per)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let mut row = head.clone();
        let id = match kind {
            ScenarioKind::Dumbbell => f.get("id").cloned().unwrap_or(Value::Null),
            ScenarioKind::Network => f.get("name").cloned().unwrap_or(Value::Null),
        };
        row.insert("flow".into(), id);
        let mut fields = Map::new();
        flatten("", f, &mut fields);
        fields.remove("id");
        fields.remove("name");
        row.extend(fields);
        row.extend(run_wide.clone());
        out.push(row);
    }
    out
}
