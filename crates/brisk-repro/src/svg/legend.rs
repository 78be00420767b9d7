//! Chart legends: on a white, framed background, in the inside corner of the plot
//! that covers no data, or below the plot when every corner would; swatches show each
//! series' line style (solid, dashed, points) and its band when it has one.

use super::{esc, Style};
use std::fmt::Write;

pub(super) struct Item<'a> {
    pub name: &'a str,
    pub color: &'a str,
    pub style: Style,
    pub band: bool,
}

/// The plot area in pixels: left, top, right, bottom.
pub(super) type Rect = (f64, f64, f64, f64);

const ROW: f64 = 16.0;
const PAD: f64 = 6.0;

/// The legend box's size. Text width is estimated (no font metrics in SVG): 6.6 px
/// per character at 12 px Helvetica is generous for the labels used here.
fn size(items: &[Item]) -> (f64, f64) {
    let chars = items
        .iter()
        .map(|i| i.name.chars().count())
        .max()
        .unwrap_or(0);
    (
        40.0 + 6.6 * chars as f64,
        2.0 * PAD + ROW * items.len() as f64,
    )
}

fn inside(p: (f64, f64), r: Rect) -> bool {
    p.0 >= r.0 && p.0 <= r.2 && p.1 >= r.1 && p.1 <= r.3
}

/// Where the legend goes: an inside corner (top right, top left, bottom right,
/// bottom left, in that order of preference), else the middle of the top or bottom
/// edge, whichever is first free of `occupied` points; `None` means below the plot.
fn corner(plot: Rect, w: f64, h: f64, occupied: &[(f64, f64)]) -> Option<(f64, f64)> {
    let (l, t, r, b) = plot;
    if w + 2.0 * PAD > r - l || h + 2.0 * PAD > b - t {
        return None;
    }
    let corners = [
        (r - PAD - w, t + PAD),
        (l + PAD, t + PAD),
        (r - PAD - w, b - PAD - h),
        (l + PAD, b - PAD - h),
        ((l + r - w) / 2.0, t + PAD),
        ((l + r - w) / 2.0, b - PAD - h),
    ];
    corners.into_iter().find(|&(x, y)| {
        // A margin around the box keeps lines from touching its frame.
        let m = 3.0;
        let area = (x - m, y - m, x + w + m, y + h + m);
        !occupied.iter().any(|&p| inside(p, area))
    })
}

/// Draws the legend; returns the height it adds below `below` (0 when it fits in a
/// corner). Nothing is drawn for fewer than two items: one series is named by the
/// axis label and caption.
pub(super) fn legend(
    out: &mut String,
    items: &[Item],
    plot: Rect,
    occupied: &[(f64, f64)],
    below: f64,
) -> f64 {
    if items.len() < 2 {
        return 0.0;
    }
    let (w, h) = size(items);
    let (x, y, extra) = match corner(plot, w, h, occupied) {
        Some((x, y)) => (x, y, 0.0),
        None => (plot.0, below, h + PAD),
    };
    let _ = write!(
        out,
        r##"<g class="legend"><rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" fill="white" fill-opacity="0.92" stroke="#999"/>"##
    );
    for (i, it) in items.iter().enumerate() {
        let cy = y + PAD + ROW * i as f64 + ROW / 2.0;
        let (sx, color) = (x + PAD, it.color);
        if it.band {
            let _ = write!(
                out,
                r#"<rect x="{sx:.1}" y="{:.1}" width="24" height="10" fill="{color}" fill-opacity="0.2"/>"#,
                cy - 5.0
            );
        }
        match it.style {
            Style::Points | Style::Marker => {
                let r = if it.style == Style::Marker { 4 } else { 3 };
                let _ = write!(
                    out,
                    r#"<circle cx="{:.1}" cy="{cy:.1}" r="{r}" fill="{color}"/>"#,
                    sx + 12.0
                );
            }
            s => {
                let dash = if s == Style::Dashed {
                    r#" stroke-dasharray="6 4""#
                } else {
                    ""
                };
                let _ = write!(
                    out,
                    r#"<line x1="{sx:.1}" y1="{cy:.1}" x2="{:.1}" y2="{cy:.1}" stroke="{color}" stroke-width="2"{dash}/>"#,
                    sx + 24.0
                );
            }
        }
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
            sx + 30.0,
            cy + 4.0,
            esc(it.name)
        );
    }
    out.push_str("</g>");
    extra
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legend_avoids_occupied_corners_and_falls_back_below() {
        let plot = (0.0, 0.0, 600.0, 300.0);
        // Data in the top right: the legend goes top left.
        let occ = [(590.0, 10.0)];
        assert_eq!(corner(plot, 100.0, 40.0, &occ), Some((6.0, 6.0)));
        // Data in every corner: below the plot.
        let occ = [
            (590.0, 10.0),
            (10.0, 10.0),
            (590.0, 290.0),
            (10.0, 290.0),
            (300.0, 10.0),
            (300.0, 290.0),
        ];
        assert_eq!(corner(plot, 100.0, 40.0, &occ), None);
    }
}
