//! Per-cell summaries: for each (cell, flow), every numeric column's mean and 95 %
//! confidence interval across the seeds (`crate::stats::mean_ci`).

use crate::stats::mean_ci;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Columns that identify a row rather than measure something.
fn is_identity(key: &str, params: &[String]) -> bool {
    matches!(key, "cell" | "seed" | "flow") || params.iter().any(|p| p == key)
}

fn num(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// Whether two rows agree in every column but `seed`.
fn same_but_seed(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, v)| k == "seed" || b.get(k).is_some_and(|w| w == v))
}

/// One summary row per (cell, flow), in the order the pairs first appear in `rows`:
/// `cell`, the parameters, `flow`, `seeds` (runs in the group), `deterministic`, then
/// `<column>.mean` and `<column>.ci95` for each numeric column (null where no seed gave
/// a number, and ci95 null from a single seed).
///
/// `deterministic` is true when the group has more than one seed and every seed's row
/// is the same in every column but `seed`: the scenario draws nothing at random (no
/// random loss, jitter or seeded workload), so its seeds repeat one run and a CI of 0
/// says nothing about spread. Null from a single seed, which cannot tell.
pub fn summarise(rows: &[Map<String, Value>], params: &[String]) -> Vec<Map<String, Value>> {
    // Group keys as JSON text: cells are integers, flows integers or class names.
    let mut order: Vec<String> = Vec::new();
    let mut groups: BTreeMap<String, Vec<&Map<String, Value>>> = BTreeMap::new();
    for r in rows {
        let key = format!(
            "{}\u{0}{}",
            r.get("cell").unwrap_or(&Value::Null),
            r.get("flow").unwrap_or(&Value::Null)
        );
        let g = groups.entry(key.clone()).or_default();
        if g.is_empty() {
            order.push(key);
        }
        g.push(r);
    }
    let mut out = Vec::with_capacity(order.len());
    for key in order {
        let g = &groups[&key];
        let first = g[0];
        let mut s = Map::new();
        for k in ["cell"]
            .iter()
            .map(|s| s.to_string())
            .chain(params.iter().cloned())
        {
            s.insert(k.clone(), first.get(&k).cloned().unwrap_or(Value::Null));
        }
        s.insert(
            "flow".into(),
            first.get("flow").cloned().unwrap_or(Value::Null),
        );
        s.insert("seeds".into(), Value::from(g.len()));
        s.insert(
            "deterministic".into(),
            if g.len() > 1 {
                Value::Bool(g[1..].iter().all(|r| same_but_seed(first, r)))
            } else {
                Value::Null
            },
        );
        // Numeric columns in the union of the group's rows, in sorted order.
        let mut cols: BTreeMap<&str, ()> = BTreeMap::new();
        for r in g {
            for (k, v) in r.iter() {
                if v.is_number() && !is_identity(k, params) {
                    cols.insert(k, ());
                }
            }
        }
        for c in cols.keys() {
            let xs: Vec<f64> = g
                .iter()
                .map(|r| r.get(*c).and_then(Value::as_f64).unwrap_or(f64::NAN))
                .collect();
            let (m, ci, _) = mean_ci(&xs);
            s.insert(format!("{c}.mean"), num(m));
            s.insert(format!("{c}.ci95"), num(ci));
        }
        out.push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(cell: u64, flow: u64, seed: u64, g: f64) -> Map<String, Value> {
        let v = json!({"cell": cell, "rate": "x", "seed": seed, "flow": flow, "goodput_bps": g, "stream_ok": true});
        v.as_object().unwrap().clone()
    }

    #[test]
    fn groups_by_cell_and_flow_and_averages_across_seeds() {
        let rows = vec![
            row(0, 0, 1, 1.0),
            row(0, 1, 1, 10.0),
            row(0, 0, 2, 2.0),
            row(0, 1, 2, 10.0),
            row(0, 0, 3, 3.0),
            row(1, 0, 1, 5.0),
        ];
        let s = summarise(&rows, &["rate".to_string()]);
        assert_eq!(s.len(), 3);
        assert_eq!(s[0]["flow"], json!(0));
        assert_eq!(s[0]["seeds"], json!(3));
        assert_eq!(s[0]["rate"], json!("x"));
        assert_eq!(s[0]["goodput_bps.mean"], json!(2.0));
        let ci = s[0]["goodput_bps.ci95"].as_f64().unwrap();
        assert!((ci - crate::stats::t95(2) / 3f64.sqrt()).abs() < 1e-9);
        assert_eq!(s[0]["deterministic"], json!(false));
        assert_eq!(s[1]["goodput_bps.ci95"], json!(0.0));
        assert_eq!(s[1]["deterministic"], json!(true));
        assert_eq!(s[2]["goodput_bps.ci95"], Value::Null);
        assert_eq!(s[2]["deterministic"], Value::Null);
        assert!(s[0].get("seed.mean").is_none() && s[0].get("stream_ok.mean").is_none());
    }
}
