//! Text outputs: the stdout claim table and the `--json` document
//! `{"experiments": [{"id", "reference", "claims": [{"id", "description", "paper",
//! "ours", "unit", "tolerance", "verdict", "accepted", "accepted_reason"}]}]}`.
//! Claims are listed in natural order of their IDs (DC-3c before DC-3d, DC-9 before
//! DC-10); a failure in the accepted list shows as `fail (accepted)` with its reason.

use crate::accepted::Accepted;
use crate::claim::{show, Claim, Verdict};
use crate::experiment::ExperimentResult;
use serde_json::{json, Value};
use std::cmp::Ordering;
use std::fmt::Write;

/// The width the table fits (a 120-column terminal).
pub const TABLE_WIDTH: usize = 120;

/// Natural order of claim IDs: digit runs compare as numbers.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for (x, y) in ca.iter().zip(&cb) {
        let o = match (x, y) {
            ((true, x), (true, y)) => x
                .trim_start_matches('0')
                .len()
                .cmp(&y.trim_start_matches('0').len())
                .then_with(|| x.trim_start_matches('0').cmp(y.trim_start_matches('0'))),
            ((_, x), (_, y)) => x.cmp(y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

/// An experiment's claims in natural order.
pub(crate) fn sorted(r: &ExperimentResult) -> Vec<&Claim> {
    let mut v: Vec<&Claim> = r.claims.iter().collect();
    v.sort_by(|a, b| natural_cmp(&a.id, &b.id));
    v
}

/// The verdict as shown: `fail (accepted)` for an accepted failure.
fn verdict_text(c: &Claim, acc: &Accepted) -> String {
    match c.verdict {
        Verdict::Fail if acc.contains_key(&c.id) => "fail (accepted)".into(),
        v => v.to_string(),
    }
}

/// The JSON document.
pub fn to_json(results: &[ExperimentResult], acc: &Accepted) -> Value {
    json!({
        "experiments": results.iter().map(|r| json!({
            "id": r.id,
            "reference": r.reference,
            "claims": sorted(r).into_iter().map(|c| {
                let mut v = serde_json::to_value(c).unwrap_or(Value::Null);
                let reason = acc.get(&c.id).filter(|_| c.verdict == Verdict::Fail);
                v["accepted"] = json!(reason.is_some());
                v["accepted_reason"] = reason.map_or(Value::Null, |r| json!(r));
                v
            }).collect::<Vec<_>>(),
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

/// The first sentence of a reason, for the table (the JSON and the report have all).
fn first_sentence(s: &str) -> &str {
    s.find(". ").map_or(s, |i| &s[..=i])
}

/// The readable table: per experiment, one row per claim, at most [`TABLE_WIDTH`]
/// columns. Only the description is shortened to fit; IDs, values, units and verdicts
/// are never cut.
pub fn table(results: &[ExperimentResult], acc: &Accepted) -> String {
    let mut out = String::new();
    for r in results {
        let _ = writeln!(out, "{} — {}", r.id, r.title);
        let header = [
            "claim",
            "description",
            r.reference,
            "ours",
            "unit",
            "tolerance",
            "verdict",
        ];
        let claims = sorted(r);
        let rows: Vec<[String; 7]> = claims
            .iter()
            .map(|c| {
                [
                    c.id.clone(),
                    c.description.clone(),
                    show(&c.paper),
                    show(&c.ours),
                    c.unit.clone(),
                    c.tolerance.clone(),
                    verdict_text(c, acc),
                ]
            })
            .collect();
        let mut w = [0usize; 7];
        for (i, h) in header.iter().enumerate() {
            w[i] = width(h);
            for row in &rows {
                w[i] = w[i].max(width(&row[i]));
            }
        }
        // Long free text gives way first: a textual reference value and the tolerance
        // to 18 (numbers are shorter), then the description takes what is left (at
        // least 16). The JSON and the report carry every cell whole.
        w[2] = w[2].min(18);
        w[5] = w[5].min(18);
        let fixed: usize = 2 + w
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != 1)
            .map(|(_, x)| x + 2)
            .sum::<usize>();
        w[1] = w[1].min(TABLE_WIDTH.saturating_sub(fixed + 2).max(16));
        let line = |cells: &[String; 7]| {
            let mut l = String::from("  ");
            for i in 0..7 {
                l.push_str(&pad(&cut(&cells[i], w[i]), w[i]));
                l.push_str("  ");
            }
            l.trim_end().to_string()
        };
        let _ = writeln!(out, "{}", line(&header.map(String::from)));
        for (row, c) in rows.iter().zip(&claims) {
            let _ = writeln!(out, "{}", line(row));
            if c.verdict == Verdict::Fail {
                if let Some(reason) = acc.get(&c.id) {
                    let _ = writeln!(
                        out,
                        "{}",
                        cut(
                            &format!("    ↳ accepted: {}", first_sentence(reason)),
                            TABLE_WIDTH
                        )
                    );
                }
            }
        }
        out.push('\n');
    }
    out.push_str(&tally(results, acc));
    out.push('\n');
    out
}

/// "23 passed, 13 failed (all accepted findings), 4 n/a".
pub fn tally(results: &[ExperimentResult], acc: &Accepted) -> String {
    let claims = || results.iter().flat_map(|r| &r.claims);
    let count = |v: Verdict| claims().filter(|c| c.verdict == v).count();
    let failed = count(Verdict::Fail);
    let accepted = claims()
        .filter(|c| c.verdict == Verdict::Fail && acc.contains_key(&c.id))
        .count();
    let why = match (failed, accepted) {
        (0, _) => String::new(),
        (f, a) if f == a => " (all accepted findings)".into(),
        (_, 0) => " (none accepted)".into(),
        (f, a) => format!(" ({a} accepted, {} not)", f - a),
    };
    format!(
        "{} passed, {failed} failed{why}, {} n/a",
        count(Verdict::Pass),
        count(Verdict::NotApplicable)
    )
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

    fn acc(ids: &[&str]) -> Accepted {
        ids.iter()
            .map(|i| (i.to_string(), format!("{i} is a finding. More detail.")))
            .collect()
    }

    #[test]
    fn json_has_experiments_with_id_reference_and_sorted_claims() {
        let v = to_json(&sample(), &acc(&[]));
        let e = &v["experiments"][0];
        assert_eq!(e.as_object().unwrap().len(), 3);
        assert_eq!(e["id"], "dc-micro");
        assert_eq!(e["reference"], "paper");
        // Natural order: DC-1a first.
        assert_eq!(e["claims"][0]["id"], "DC-1a");
        assert_eq!(e["claims"][0]["verdict"], "fail");
        assert_eq!(e["claims"][0]["ours"], 19.7);
        assert_eq!(e["claims"][0]["accepted"], false);
        let v = to_json(&sample(), &acc(&["DC-1a", "DC-2a"]));
        assert_eq!(v["experiments"][0]["claims"][0]["accepted"], true);
        assert!(v["experiments"][0]["claims"][0]["accepted_reason"].is_string());
        // A passing claim in the list is not "accepted".
        assert_eq!(v["experiments"][0]["claims"][1]["accepted"], false);
    }

    #[test]
    fn table_marks_accepted_failures_and_tallies_them() {
        let t = table(&sample(), &acc(&[]));
        assert!(t.contains("DC-2a") && t.contains("DC-1a"));
        assert!(
            t.trim_end()
                .ends_with("1 passed, 1 failed (none accepted), 0 n/a"),
            "{t}"
        );
        let t = table(&sample(), &acc(&["DC-1a"]));
        assert!(t.contains("fail (accepted)"));
        assert!(t.contains("↳ accepted: DC-1a is a finding."), "{t}");
        assert!(!t.contains("More detail"));
        assert!(t
            .trim_end()
            .ends_with("1 passed, 1 failed (all accepted findings), 0 n/a"));
    }

    #[test]
    fn the_table_fits_120_columns_without_cutting_units_or_values() {
        let mut r = ExperimentResult::new("x", "t");
        r.claims.push(
            Claim::new("DC-3d", &"a very long description ".repeat(10))
                .paper(123456.789)
                .ours(98765.4321)
                .unit("packets")
                .tolerance("within ±25 % of the paper's value, or better")
                .check(false),
        );
        let t = table(&[r], &acc(&["DC-3d"]));
        for line in t.lines() {
            assert!(
                line.chars().count() <= TABLE_WIDTH,
                "{} > 120: {line}",
                line.chars().count()
            );
        }
        assert!(t.contains("packets"), "{t}");
    }

    #[test]
    fn natural_order() {
        let mut ids = vec![
            "DC-3d",
            "DC-10",
            "DC-3c",
            "DC-9b",
            "DC-SWEEP-2",
            "DC-1a",
            "UT-2",
        ];
        ids.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            ids,
            [
                "DC-1a",
                "DC-3c",
                "DC-3d",
                "DC-9b",
                "DC-10",
                "DC-SWEEP-2",
                "UT-2"
            ]
        );
    }
}
