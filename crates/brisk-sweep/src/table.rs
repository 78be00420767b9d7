//! Rows as CSV: identity columns first (`cell`, the grid keys, `seed` or `seeds`,
//! `flow`), then every other column of any row in sorted order; a row without a column
//! leaves it empty.

use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::fmt::Write;

/// A CSV field (RFC 4180 quoting); numbers in their shortest round-trip form, null
/// as empty.
fn field(v: &Value) -> String {
    let s = match v {
        Value::Null => return String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// The column order for `rows` with `first` leading.
pub fn columns(rows: &[Map<String, Value>], first: &[String]) -> Vec<String> {
    let mut rest: BTreeSet<&str> = BTreeSet::new();
    for r in rows {
        for k in r.keys() {
            if !first.iter().any(|f| f == k) {
                rest.insert(k);
            }
        }
    }
    // A summary's `x.mean` and `x.ci95` sit side by side, mean first.
    let mut rest: Vec<&str> = rest.into_iter().collect();
    rest.sort_by_key(
        |k| match (k.strip_suffix(".mean"), k.strip_suffix(".ci95")) {
            (Some(base), _) => (base, 0),
            (_, Some(base)) => (base, 1),
            _ => (*k, 0),
        },
    );
    first
        .iter()
        .cloned()
        .chain(rest.into_iter().map(str::to_string))
        .collect()
}

/// `rows` as CSV text with `first` as the leading columns.
pub fn to_csv(rows: &[Map<String, Value>], first: &[String]) -> String {
    let cols = columns(rows, first);
    let mut s = String::new();
    let header: Vec<String> = cols
        .iter()
        .map(|c| field(&Value::String(c.clone())))
        .collect();
    let _ = writeln!(s, "{}", header.join(","));
    for r in rows {
        let line: Vec<String> = cols
            .iter()
            .map(|c| r.get(c).map_or(String::new(), field))
            .collect();
        let _ = writeln!(s, "{}", line.join(","));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identity_columns_lead_and_missing_fields_are_empty() {
        let a = json!({"cell": 0, "seed": 1, "z": 1.5, "a": "x,y"});
        let b = json!({"cell": 1, "seed": 1, "b": null});
        let rows = vec![
            a.as_object().unwrap().clone(),
            b.as_object().unwrap().clone(),
        ];
        let csv = to_csv(&rows, &["cell".into(), "seed".into()]);
        assert_eq!(csv, "cell,seed,a,b,z\n0,1,\"x,y\",,1.5\n1,1,,,\n");
        let m = json!({"x.ci95": 1, "x.mean": 2, "a": 0, "x": 3});
        let cols = columns(&[m.as_object().unwrap().clone()], &[]);
        assert_eq!(cols, ["a", "x", "x.mean", "x.ci95"]);
    }
}
