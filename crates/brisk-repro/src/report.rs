//! Text outputs: the stdout claim table and the `--json` document
//! `{"experiments": [{"id", "claims": [{"id", "description", "paper", "ours", "unit",
//! "tolerance", "verdict"}]}]}`.

use crate::claim::{show, Verdict};
use crate::experiment::ExperimentResult;
use serde_json::{json, Value};
use std::fmt::Write;

/// The JSON document, exactly the specified fields.
pub fn to_json(results: &[ExperimentResult]) -> Value {
    json!({
        "experiments": results.iter().map(|r| json!({
            "id": r.id,
            "claims": r.claims,
        })).collect::<Vec<_>>()
    })
}

fn width(s: &str) -> usize {
    s.chars().count()
}

fn pad(s: &str, w: usize) -> String {
    let mut o = s.to_string();
    for _ in width(s)..w {
        o.push(' ');
    }
    o
}

/// Cuts a cell to `w` characters (with an ellipsis).
fn cut(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_string();
    }
    let mut o: String = s.chars().take(w.saturating_sub(1)).collect();
    o.push('…');
    o
}

/// The readable table: per experiment, one row per claim.
pub fn table(results: &[ExperimentResult]) -> String {
    let mut out = String::new();
    let header = [
        "claim",
        "description",
        "paper",
        "ours",
        "unit",
        "tolerance",
        "verdict",
    ];
    let caps = [12, 46, 14, 12, 6, 26, 7];
    for r in results {
        let _ = writeln!(out, "{} — {}", r.id, r.title);
        let rows: Vec<[String; 7]> = r
            .claims
            .iter()
            .map(|c| {
                [
                    c.id.clone(),
                    c.description.clone(),
                    show(&c.paper),
                    show(&c.ours),
                    c.unit.clone(),
                    c.tolerance.clone(),
                    c.verdict.to_string(),
                ]
            })
            .collect();
        let mut w = [0usize; 7];
        for (i, h) in header.iter().enumerate() {
            w[i] = width(h);
            for row in &rows {
                w[i] = w[i].max(width(&row[i]).min(caps[i]));
            }
        }
        let line = |cells: &[String; 7]| {
            let mut l = String::from("  ");
            for i in 0..7 {
                l.push_str(&pad(&cut(&cells[i], w[i]), w[i]));
                l.push_str("  ");
            }
            l.trim_end().to_string()
        };
        let _ = writeln!(out, "{}", line(&header.map(String::from)));
        for row in &rows {
            let _ = writeln!(out, "{}", line(row));
        }
        out.push('\n');
    }
    let count = |v: Verdict| {
        results
            .iter()
            .flat_map(|r| &r.claims)
            .filter(|c| c.verdict == v)
            .count()
    };
    let _ = writeln!(
        out,
        "{} passed, {} failed, {} n/a",
        count(Verdict::Pass),
        count(Verdict::Fail),
        count(Verdict::NotApplicable)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::Claim;

    fn sample() -> Vec<ExperimentResult> {
        let mut r = ExperimentResult::new("dc-micro", "title");
        r.claims
            .push(Claim::new("DC-2a", "retx").paper(0.0).ours(0.0).check(true));
        r.claims.push(
            Claim::new("DC-1a", "rtt")
                .paper(13.5)
                .ours(19.7)
                .check(false),
        );
        vec![r]
    }

    #[test]
    fn json_has_experiments_with_id_and_claims_only() {
        let v = to_json(&sample());
        let e = &v["experiments"][0];
        assert_eq!(e.as_object().unwrap().len(), 2);
        assert_eq!(e["id"], "dc-micro");
        assert_eq!(e["claims"][1]["verdict"], "fail");
        assert_eq!(e["claims"][1]["ours"], 19.7);
    }

    #[test]
    fn table_has_a_row_per_claim_and_a_tally() {
        let t = table(&sample());
        assert!(t.contains("DC-2a") && t.contains("DC-1a"));
        assert!(t.trim_end().ends_with("1 passed, 1 failed, 0 n/a"));
    }
}
