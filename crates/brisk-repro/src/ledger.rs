//! The claims ledger the suite reproduces (`repro/claims.md`, the rows of the project's
//! ledger that `brisk repro` reports), so the report can state each claim's setting and
//! the seed texts it comes from without the reader having the workplace.

use crate::html::esc;
use std::collections::BTreeSet;
use std::fmt::Write;

pub const EMBEDDED: &str = include_str!("../../../repro/claims.md");

/// One ledger row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub id: String,
    pub source: String,
    pub setting: String,
    pub paper: String,
    pub check: String,
    pub place: String,
}

/// Cells of a Markdown table line, trimmed; `None` for other lines.
fn cells(line: &str) -> Option<Vec<String>> {
    let l = line.trim();
    let inner = l.strip_prefix('|')?.strip_suffix('|')?;
    Some(inner.split('|').map(|c| c.trim().to_string()).collect())
}

/// Claim rows (ID `XX-n`) of every six-column table.
pub fn rows(md: &str) -> Vec<Row> {
    md.lines()
        .filter_map(cells)
        .filter(|c| c.len() == 6 && c[0].contains('-') && c[0] != "ID" && !c[0].starts_with("--"))
        .map(|c| Row {
            id: c[0].clone(),
            source: c[1].clone(),
            setting: c[2].clone(),
            paper: c[3].clone(),
            check: c[4].clone(),
            place: c[5].clone(),
        })
        .collect()
}

/// Seed-key rows: (key, file, document).
pub fn seeds(md: &str) -> Vec<[String; 3]> {
    md.lines()
        .filter_map(cells)
        .filter(|c| c.len() == 3 && c[0].len() == 3 && c[0].bytes().all(|b| b.is_ascii_digit()))
        .map(|c| [c[0].clone(), c[1].clone(), c[2].clone()])
        .collect()
}

/// The named settings (`- **DC-bench:** …` and their sub-bullets), as (name, lines).
pub fn settings(md: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in md.lines() {
        if let Some(rest) = line.strip_prefix("- **") {
            if let Some((name, text)) = rest.split_once(":**") {
                out.push((name.to_string(), vec![text.trim().to_string()]));
                continue;
            }
        }
        if let (Some(sub), Some(last)) = (line.strip_prefix("  - "), out.last_mut()) {
            last.1.push(sub.trim().to_string());
        }
    }
    out
}

/// The ledger row a report claim belongs to: `DC-1a` → `DC-1`; our own rows
/// (`DC-SWEEP-*`, `REAL-*`, …) have none.
pub fn base_id(claim: &str) -> &str {
    claim.trim_end_matches(|c: char| c.is_ascii_lowercase())
}

/// Markdown inline text as HTML: escaped, with code ticks and bold marks dropped.
fn text(s: &str) -> String {
    esc(&s.replace("**", "").replace('`', ""))
}

/// The report's ledger section: where the claims come from, the seed texts, and the
/// named settings the rows refer to.
pub fn section(md: &str) -> String {
    let mut o = String::from("<h2 id=\"ledger\">Claims ledger and seeds</h2><p class=\"note\">Every claim ID below is a row of the claims ledger, compiled from the seed texts listed here (the five research documents brisk reproduces); the rows this suite reports are kept in the repository as <code>repro/claims.md</code> and written beside this page as <a href=\"claims.md\">claims.md</a>. Each experiment's section repeats its rows (source, setting, paper values, check). Rows with IDs the ledger lacks (<code>DC-SWEEP-*</code>, <code>DC-3d</code>, <code>DC-3g</code>, <code>DC-3h</code>, <code>REAL-*</code>, <code>RC3-X*</code>, <code>MN-X*</code>, <code>FSE-X*</code>, <code>LEDBAT-X*</code>, <code>MP-X*</code>) are ours and say so.</p><table><tr><th>seed key</th><th>file (in <code>seeds/</code>)</th><th>document</th></tr>");
    for [k, f, d] in seeds(md) {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            text(&k),
            text(&f),
            text(&d)
        );
    }
    o.push_str("</table><ul class=\"note\">");
    for (name, lines) in settings(md) {
        let _ = write!(o, "<li><b>{}:</b> {}", text(&name), text(&lines.join(" ")));
        o.push_str("</li>");
    }
    o.push_str("</ul>");
    o
}

/// The ledger rows behind `claim_ids`, as a table; empty when none are in the ledger.
pub fn rows_table(md: &str, claim_ids: &[&str]) -> String {
    let wanted: BTreeSet<&str> = claim_ids.iter().map(|c| base_id(c)).collect();
    let all = rows(md);
    let mine: Vec<&Row> = all
        .iter()
        .filter(|r| wanted.contains(r.id.as_str()))
        .collect();
    if mine.is_empty() {
        return String::new();
    }
    let mut o = String::from("<details class=\"ledger\"><summary>The claims as the ledger states them (<a href=\"#ledger\">seeds and settings</a>)</summary><table><tr><th>ledger ID</th><th>source</th><th>setting</th><th>paper value(s)</th><th>tolerance / check</th><th>where</th></tr>");
    for r in mine {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            text(&r.id),
            text(&r.source),
            text(&r.setting),
            text(&r.paper),
            text(&r.check),
            text(&r.place)
        );
    }
    o.push_str("</table></details>");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_ledger_has_the_rows_the_suite_checks() {
        let ids: Vec<String> = rows(EMBEDDED).into_iter().map(|r| r.id).collect();
        for id in ["DC-1", "DC-3", "DC-9", "UT-2", "UT-3"] {
            assert!(ids.iter().any(|i| i == id), "{id} missing from {ids:?}");
        }
        assert!(seeds(EMBEDDED).iter().any(|s| s[0] == "000"));
        assert!(settings(EMBEDDED).iter().any(|s| s.0 == "DC-bench"));
        assert_eq!(base_id("DC-1a"), "DC-1");
        assert_eq!(base_id("DC-SWEEP-1"), "DC-SWEEP-1");
    }

    #[test]
    fn rows_table_is_empty_for_our_own_ids_and_escapes_text() {
        assert_eq!(rows_table(EMBEDDED, &["REAL-1"]), "");
        let md = "| DC-1 | s | a < b | p | c | sim |";
        assert!(rows_table(md, &["DC-1b"]).contains("a &lt; b"));
    }
}
