//! Box plots, one per group: box = IQR, line = median, diamond = mean after outlier
//! removal, whiskers = Tukey fences, circles = outliers. Groups are named under their
//! boxes, so no legend is needed.

use super::{esc, header, range, tick_label, Axis, H, MB, ML, MR, MT, W};
use crate::stats::BoxStats;
use std::fmt::Write;

#[derive(Clone, Debug)]
pub struct BoxPlot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub y_log: bool,
    pub groups: Vec<(String, &'static str, BoxStats)>,
}

/// Renders box plots to an `<svg>` element; `id` must be unique in the page.
pub fn box_plot(p: &BoxPlot, id: &str) -> String {
    let y_log = p.y_log;
    let vals = p.groups.iter().flat_map(|(_, _, b)| {
        [b.lo, b.hi, b.q1, b.q3]
            .into_iter()
            .chain(b.outliers.iter().copied())
    });
    let (yl, yh) = range(vals, y_log);
    let y = Axis {
        lo: yl,
        hi: yh,
        log: y_log,
        p0: H - MB,
        p1: MT,
    };
    let x = Axis {
        lo: 0.0,
        hi: p.groups.len().max(1) as f64,
        log: false,
        p0: ML,
        p1: W - MR,
    };
    let mut out = String::new();
    header(&mut out, id, &p.title, W, H);
    for t in y.ticks() {
        let py = y.map(t);
        let _ = write!(
            out,
            r##"<line x1="{ML}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - MR,
            ML - 5.0,
            py + 4.0,
            tick_label(t)
        );
    }
    let _ = write!(
        out,
        r##"<rect x="{ML}" y="{MT}" width="{:.1}" height="{:.1}" fill="none" stroke="black"/><text class="y-label" transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text><text class="x-label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
        W - ML - MR,
        H - MT - MB,
        (H - MB + MT) / 2.0,
        esc(&p.y_label),
        (ML + W - MR) / 2.0,
        H - MB + 40.0,
        esc(&p.x_label)
    );
    let place = |v: f64| y.accepts(v).then(|| y.map(v));
    for (i, (name, color, b)) in p.groups.iter().enumerate() {
        let cx = x.map(i as f64 + 0.5);
        let hw = 40.0;
        if let (Some(q1), Some(q3), Some(med), Some(lo), Some(hi)) = (
            place(b.q1),
            place(b.q3),
            place(b.median),
            place(b.lo),
            place(b.hi),
        ) {
            let _ = write!(
                out,
                r##"<line x1="{cx:.1}" y1="{lo:.1}" x2="{cx:.1}" y2="{q1:.1}" stroke="black"/><line x1="{cx:.1}" y1="{q3:.1}" x2="{cx:.1}" y2="{hi:.1}" stroke="black"/><line x1="{:.1}" y1="{lo:.1}" x2="{:.1}" y2="{lo:.1}" stroke="black"/><line x1="{:.1}" y1="{hi:.1}" x2="{:.1}" y2="{hi:.1}" stroke="black"/><rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{color}" fill-opacity="0.25" stroke="{color}" stroke-width="1.5"/><line x1="{:.1}" y1="{med:.1}" x2="{:.1}" y2="{med:.1}" stroke="{color}" stroke-width="3"/>"##,
                cx - hw / 2.0,
                cx + hw / 2.0,
                cx - hw / 2.0,
                cx + hw / 2.0,
                cx - hw,
                q3.min(q1),
                2.0 * hw,
                (q1 - q3).abs().max(1.0),
                cx - hw,
                cx + hw,
            );
        }
        if let Some(my) = place(b.mean_trimmed) {
            let _ = write!(
                out,
                r##"<path d="M{cx:.1} {:.1}L{:.1} {my:.1}L{cx:.1} {:.1}L{:.1} {my:.1}Z" fill="white" stroke="black"/>"##,
                my - 5.0,
                cx + 5.0,
                my + 5.0,
                cx - 5.0
            );
        }
        for oy in b.outliers.iter().filter_map(|o| place(*o)) {
            let _ = write!(
                out,
                r#"<circle cx="{cx:.1}" cy="{oy:.1}" r="3" fill="none" stroke="{color}"/>"#
            );
        }
        let _ = write!(
            out,
            r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle">{} (n={})</text>"#,
            H - MB + 18.0,
            esc(name),
            b.n
        );
    }
    out.push_str("</svg>");
    out
}
