//! Heat maps: viridis cells (colour-blind safe, ordered in lightness) with a colour
//! scale, text in black or white by the cell's luminance, and failing cells marked by
//! shape (a thick dashed frame and "✗"), not by colour alone.

use super::palette::{text_on, viridis};
use super::{esc, header};
use std::fmt::Write;

/// One heat-map cell: a value in [0, 1] for the colour (0 good … 1 bad), the text
/// shown in it, and whether it fails; `None` is a grey "n/a" cell.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub shade: f64,
    pub text: String,
    pub fail: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct HeatMap {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub cols: Vec<String>,
    pub rows: Vec<String>,
    /// `rows × cols`; missing entries draw as n/a.
    pub cells: Vec<Vec<Option<Cell>>>,
    /// What the colour measures, and what its two ends mean.
    pub scale: String,
    pub scale_lo: String,
    pub scale_hi: String,
}

const X0: f64 = 110.0;
const Y0: f64 = 40.0;
const CH: f64 = 42.0;
const MAP_W: f64 = 400.0;
const BAR_X: f64 = X0 + MAP_W + 24.0;

/// Renders a heat map to an `<svg>` element; `id` must be unique in the page.
pub fn heat_map(m: &HeatMap, id: &str) -> String {
    let w = BAR_X + 150.0;
    let rows_h = CH * m.rows.len().max(1) as f64;
    let h = Y0 + rows_h + 50.0;
    let cw = MAP_W / m.cols.len().max(1) as f64;
    let mut out = String::new();
    header(&mut out, id, &m.title, w, h);
    for (ri, r) in m.rows.iter().enumerate() {
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            X0 - 6.0,
            Y0 + CH * ri as f64 + CH / 2.0 + 4.0,
            esc(r)
        );
        for ci in 0..m.cols.len() {
            let (cx, cy) = (X0 + cw * ci as f64, Y0 + CH * ri as f64);
            let (tx, ty) = (cx + cw / 2.0, cy + CH / 2.0 + 4.0);
            match m.cells.get(ri).and_then(|r| r.get(ci)).cloned().flatten() {
                Some(c) => {
                    let fill = viridis(c.shade);
                    let ink = text_on(&fill);
                    let _ = write!(
                        out,
                        r#"<rect x="{cx:.1}" y="{cy:.1}" width="{:.1}" height="{CH:.1}" fill="{fill}" stroke="white"/>"#,
                        cw - 2.0,
                    );
                    if c.fail {
                        // Inset so the white grid line does not hide it.
                        let _ = write!(
                            out,
                            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="{ink}" stroke-width="2.5" stroke-dasharray="5 3"/>"##,
                            cx + 2.5,
                            cy + 2.5,
                            cw - 7.0,
                            CH - 5.0
                        );
                    }
                    let _ = write!(
                        out,
                        r#"<text x="{tx:.1}" y="{ty:.1}" text-anchor="middle" font-size="11" fill="{ink}">{}{}</text>"#,
                        if c.fail { "✗ " } else { "" },
                        esc(&c.text)
                    );
                }
                None => {
                    let _ = write!(
                        out,
                        r##"<rect x="{cx:.1}" y="{cy:.1}" width="{:.1}" height="{CH:.1}" fill="#ddd" stroke="white"/><text x="{tx:.1}" y="{ty:.1}" text-anchor="middle" font-size="11" fill="#444">n/a</text>"##,
                        cw - 2.0,
                    );
                }
            }
        }
    }
    let yb = Y0 + rows_h;
    for (ci, c) in m.cols.iter().enumerate() {
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            X0 + cw * ci as f64 + cw / 2.0,
            yb + 16.0,
            esc(c)
        );
    }
    let _ = write!(
        out,
        r#"<text class="x-label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text class="y-label" x="8" y="{:.1}">{}</text>"#,
        X0 + MAP_W / 2.0,
        yb + 36.0,
        esc(&m.x_label),
        Y0 - 8.0,
        esc(&m.y_label)
    );
    scale(&mut out, m, id, rows_h);
    out.push_str("</svg>");
    out
}

/// The colour scale: a vertical viridis bar, good (0) at the bottom, bad (1) on top.
fn scale(out: &mut String, m: &HeatMap, id: &str, bar_h: f64) {
    let grad = format!("{id}-scale");
    let _ = write!(
        out,
        r#"<g class="color-scale"><linearGradient id="{}" x1="0" y1="1" x2="0" y2="0">"#,
        esc(&grad)
    );
    for k in 0..=8 {
        let t = k as f64 / 8.0;
        let _ = write!(
            out,
            r#"<stop offset="{t:.3}" stop-color="{}"/>"#,
            viridis(t)
        );
    }
    let _ = write!(
        out,
        r##"</linearGradient><rect x="{BAR_X:.1}" y="{Y0:.1}" width="14" height="{bar_h:.1}" fill="url(#{})" stroke="#999"/><text x="{:.1}" y="{:.1}" font-size="11">{}</text><text x="{:.1}" y="{:.1}" font-size="11">{}</text><text x="{BAR_X:.1}" y="{:.1}" font-size="11">{}</text></g>"##,
        esc(&grad),
        BAR_X + 20.0,
        Y0 + 10.0,
        esc(&m.scale_hi),
        BAR_X + 20.0,
        Y0 + bar_h,
        esc(&m.scale_lo),
        Y0 - 8.0,
        esc(&m.scale)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failing_cells_are_marked_by_shape_and_text_contrasts_with_fill() {
        let m = HeatMap {
            title: "t".into(),
            cols: vec!["a".into(), "b".into()],
            rows: vec!["r".into()],
            cells: vec![vec![
                Some(Cell {
                    shade: 0.0,
                    text: "dark".into(),
                    fail: false,
                }),
                Some(Cell {
                    shade: 1.0,
                    text: "bright".into(),
                    fail: true,
                }),
            ]],
            ..HeatMap::default()
        };
        let s = heat_map(&m, "h");
        assert!(s.contains(r#"fill="white">dark<"#));
        assert!(s.contains(r#"fill="black">✗ bright<"#));
        assert!(s.contains("stroke-dasharray=\"5 3\""));
    }
}
