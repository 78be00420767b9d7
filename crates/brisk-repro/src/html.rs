//! The report: one self-contained `index.html` (inline CSS and SVG, no scripts, no
//! external resources) with every claim row and every figure, each captioned with what
//! the paper showed and what we got; beside it each figure as `fig-<id>.svg` and its
//! data as `fig-<id>.csv` (linked under the figure), and the claims ledger excerpt.

use crate::claim::{show, Claim, Verdict};
use crate::experiment::ExperimentResult;
use std::fmt::Write;
use std::path::Path;

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

// Figures sit in a grid: two per row on wide screens, one on narrow ones; each SVG
// scales to its column (they all have a viewBox).
const CSS: &str = "body{font-family:Helvetica,Arial,sans-serif;max-width:1440px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:13px}td,th{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f3f3f3}.pass{background:#d9f2d9}.fail{background:#f7d4d4}.na{background:#eee}
.figs{display:grid;grid-template-columns:minmax(0,1fr);gap:.5em 2.5em;margin:1em 0}
@media (min-width:1150px){.figs{grid-template-columns:repeat(2,minmax(0,1fr))}}
figure{margin:0 0 1.5em}figure svg{width:100%;height:auto;max-width:760px;display:block}
figcaption{font-size:13px;line-height:1.4}.dl{font-size:12px;color:#555}
.note{font-size:13px;color:#444}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
details.ledger{font-size:13px;margin:.5em 0 1em}";

fn class(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::NotApplicable => "na",
    }
}

/// A claim's cells from its id to its tolerance (both tables start rows with them).
fn claim_cells(o: &mut String, c: &Claim) {
    for cell in [
        &c.id,
        &c.description,
        &show(&c.paper),
        &show(&c.ours),
        &c.unit,
        &c.tolerance,
    ] {
        let _ = write!(o, "<td>{}</td>", esc(cell));
    }
}

/// The whole page. `accepted` marks failures that are known and explained.
pub fn page(
    results: &[ExperimentResult],
    quick: bool,
    accepted: &crate::accepted::Accepted,
) -> String {
    page_with(results, quick, accepted, None)
}

/// The whole page, with a provenance line (version, commit, command, date, host) under
/// the title when given.
pub fn page_with(
    results: &[ExperimentResult],
    quick: bool,
    accepted: &crate::accepted::Accepted,
    provenance: Option<&str>,
) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>brisk repro</title><style>{CSS}</style></head><body>"
    );
    let _ = write!(
        o,
        "<h1>brisk repro: reproduction report</h1><p class=\"note\">Mode: {}. Every number below comes from brisk's deterministic simulator (same seeds, same numbers), except those of the <code>real-*</code> experiments, which run real packets in real time against the Linux kernel (and are n/a on hosts without root or TUN). Claim IDs refer to the claims ledger, written beside this page as <a href=\"claims.md\">claims.md</a> (<code>repro/claims.md</code> in the repository; <a href=\"#ledger\">seeds and settings</a>); a letter suffix names one part of a row; <code>DC-SWEEP-*</code> rows are ours. Failing claims listed in <code>repro/accepted-failures.toml</code> are marked “accepted” with the reason.</p>",
        if quick { "--quick (fewer seeds, shorter runs)" } else { "full" }
    );
    if let Some(p) = provenance {
        let _ = write!(o, "<p class=\"note\">Provenance: {}</p>", esc(p));
    }
    let _ = write!(
        o,
        "<p class=\"note\">What each claim says, its setting and the seed texts it comes from: <a href=\"#ledger\">claims ledger and seeds</a> (end of this page). Under each figure: its data as CSV and the figure as SVG (files beside this page).</p>"
    );
    o.push_str("<h2>Summary</h2><table><tr><th>experiment</th><th>claim</th><th>description</th><th>reference (paper, or sim / Linux for REAL rows)</th><th>ours</th><th>unit</th><th>tolerance</th><th>verdict</th></tr>");
    for r in results {
        for c in crate::report::sorted(r) {
            let acc = if c.verdict == Verdict::Fail && accepted.contains_key(&c.id) {
                " (accepted)"
            } else {
                ""
            };
            let _ = write!(o, "<tr><td><a href=\"#{}\">{}</a></td>", r.id, r.id);
            claim_cells(&mut o, c);
            let _ = write!(
                o,
                "<td class=\"{}\">{}{}</td></tr>",
                class(c.verdict),
                c.verdict,
                acc
            );
        }
    }
    o.push_str("</table>");
    for r in results {
        let _ = write!(o, "<h2 id=\"{}\">{}: {}</h2>", r.id, r.id, esc(r.title));
        if !r.notes.is_empty() {
            o.push_str("<ul class=\"note\">");
            for n in &r.notes {
                let _ = write!(o, "<li>{}</li>", esc(n));
            }
            o.push_str("</ul>");
        }
        let _ = write!(o, "<table><tr><th>claim</th><th>description</th><th>{}</th><th>ours</th><th>unit</th><th>tolerance</th><th>verdict</th><th>note</th></tr>", esc(r.reference));
        for c in crate::report::sorted(r) {
            let mut note = c.note.clone();
            if c.verdict == Verdict::Fail {
                if let Some(reason) = accepted.get(&c.id) {
                    if !note.is_empty() {
                        note.push(' ');
                    }
                    note.push_str("Accepted failure: ");
                    note.push_str(reason);
                }
            }
            o.push_str("<tr>");
            claim_cells(&mut o, c);
            let _ = write!(
                o,
                "<td class=\"{}\">{}</td><td>{}</td></tr>",
                class(c.verdict),
                c.verdict,
                esc(&note)
            );
        }
        o.push_str("</table>");
        let ids: Vec<&str> = r.claims.iter().map(|c| c.id.as_str()).collect();
        o.push_str(&crate::ledger::rows_table(crate::ledger::EMBEDDED, &ids));
        if !r.plots.is_empty() {
            o.push_str("<div class=\"figs\">");
            for (i, p) in r.plots.iter().enumerate() {
                let id = figure_id(r.id, i);
                let _ = write!(
                    o,
                    "<figure>{}<figcaption><b>Paper:</b> {}<br><b>Ours:</b> {}<br><span class=\"dl\">Download: <a href=\"fig-{id}.csv\">data (CSV)</a> · <a href=\"fig-{id}.svg\">figure (SVG)</a></span></figcaption></figure>",
                    p.figure.svg(&id),
                    esc(&p.paper),
                    esc(&p.ours)
                );
            }
            o.push_str("</div>");
        }
        o.push_str(&r.html);
    }
    o.push_str(&crate::ledger::section(crate::ledger::EMBEDDED));
    o.push_str("</body></html>\n");
    o
}

/// A figure's ID, unique in the report and stable across runs: experiment ID and the
/// figure's position in it.
pub fn figure_id(experiment: &str, index: usize) -> String {
    format!("{experiment}-{}", index + 1)
}

/// Writes `dir/index.html`, each figure's `dir/fig-<id>.svg` and `dir/fig-<id>.csv`,
/// and `dir/claims.md` (the ledger excerpt), creating `dir`.
pub fn write(
    dir: &Path,
    results: &[ExperimentResult],
    quick: bool,
    accepted: &crate::accepted::Accepted,
    provenance: Option<&str>,
) -> std::io::Result<std::path::PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join("index.html");
    std::fs::write(&path, page_with(results, quick, accepted, provenance))?;
    for r in results {
        for (i, p) in r.plots.iter().enumerate() {
            let id = figure_id(r.id, i);
            let svg = format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}\n",
                p.figure.svg(&id)
            );
            std::fs::write(dir.join(format!("fig-{id}.svg")), svg)?;
            std::fs::write(dir.join(format!("fig-{id}.csv")), p.figure.csv())?;
        }
    }
    std::fs::write(dir.join("claims.md"), crate::ledger::EMBEDDED)?;
    Ok(path)
}

/// Writes where a suite run's time went into the report [`write`] made in `dir`:
/// `timings.md`, and the same table as the last section of `index.html`.
pub fn write_timings(dir: &Path, t: &crate::timings::Timings) -> std::io::Result<()> {
    let md = t.markdown();
    std::fs::write(dir.join("timings.md"), &md)?;
    let path = dir.join("index.html");
    let page = std::fs::read_to_string(&path)?;
    let mut sec = String::from("<h2 id=\"timings\">Timings</h2><pre>");
    sec.push_str(&esc(&t.table()));
    sec.push_str("</pre><p class=\"note\">Also as <a href=\"timings.md\">timings.md</a>. Measured on the host that ran the suite; the numbers depend on its load.</p>");
    let page = match page.rfind("</body>") {
        Some(i) => format!("{}{sec}{}", &page[..i], &page[i..]),
        None => page + &sec,
    };
    std::fs::write(path, page)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::Claim;
    use crate::experiment::Plot;

    #[test]
    fn page_is_self_contained_and_captions_every_plot() {
        let mut r = ExperimentResult::new("dc-micro", "t");
        r.claims.push(Claim::new("DC-1a", "<rtt>").check(false));
        r.plots.push(Plot {
            figure: crate::figure::Figure::Chart(crate::svg::Chart::default()),
            paper: "P".into(),
            ours: "O".into(),
        });
        let acc =
            crate::accepted::parse("\"DC-1a\" = \"why\"", crate::accepted::Mode::Full).unwrap();
        let p = page(&[r], true, &acc);
        assert!(p.contains("<b>Paper:</b> P<br><b>Ours:</b> O<br>"));
        assert!(
            p.contains("href=\"fig-dc-micro-1.csv\"") && p.contains("href=\"fig-dc-micro-1.svg\"")
        );
        assert!(p.contains("id=\"ledger\"") && p.contains("DC-bench"));
        assert!(p.contains("&lt;rtt&gt;"));
        assert!(p.contains("Accepted failure: why"));
        assert!(!p.contains("<script") && !p.contains("src=") && !p.contains("<link"));
    }

    #[test]
    fn timings_go_into_the_report_beside_the_page() {
        let dir = std::env::temp_dir().join(format!("brisk-timings-{}", std::process::id()));
        let acc = crate::accepted::parse("", crate::accepted::Mode::Quick).unwrap();
        let r = ExperimentResult::new("dc-micro", "t");
        write(&dir, &[r], true, &acc, None).unwrap();
        let t = crate::timings::Timings {
            experiments: vec![crate::timings::Timing {
                id: "dc-micro",
                runs: 3,
                ..Default::default()
            }],
            threads: 2,
            ..Default::default()
        };
        write_timings(&dir, &t).unwrap();
        let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
        let md = std::fs::read_to_string(dir.join("timings.md")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let sec = page.find("id=\"timings\"").expect("a timings section");
        assert!(page[sec..].contains("dc-micro") && page.ends_with("</body></html>\n"));
        assert!(md.contains("| dc-micro | 3 |"), "{md}");
    }
}
