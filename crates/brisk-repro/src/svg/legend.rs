//! Chart legends: on a white, framed background, in the inside corner of the plot
//! that covers no data, or below the plot when every corner would; swatches show each
//! series' line style (solid, dashed, points) and its band when it has one.
//!
//! "Covers no data" means: no drawn point, line sample or reference-line label inside
//! the box (with a margin), and no part of the box inside a filled area (a min–max
//! band, a covariance ellipse). A band wider than the legend has no outline point
//! inside the box, so its interior is tested separately.

use super::chart::{mark, Shape};
use super::{esc, Style};
use std::fmt::Write;

pub(super) struct Item<'a> {
    pub name: &'a str,
    pub color: &'a str,
    pub style: Style,
    pub shape: Shape,
    pub band: bool,
}

/// The plot area in pixels: left, top, right, bottom.
pub(super) type Rect = (f64, f64, f64, f64);

const ROW: f64 = 16.0;
const PAD: f64 = 6.0;

/// Advance width of `c` in Helvetica/Arial (Liberation Sans has the same metrics), in
/// units of the font size. SVG has no text metrics, so the box is sized from these;
/// characters not listed count as wide (0.72), so an estimate errs on the large side.
fn advance(c: char) -> f64 {
    match c {
        'i' | 'j' | 'l' | '\'' | '|' => 0.23,
        ' ' | 'f' | 't' | 'I' | '.' | ',' | ':' | ';' | '/' | '!' | '[' | ']' => 0.28,
        'r' | '(' | ')' | '-' | '"' => 0.34,
        'c' | 'k' | 's' | 'v' | 'x' | 'y' | 'z' | 'J' => 0.5,
        'w' => 0.72,
        'm' => 0.83,
        'a'..='z' | '0'..='9' | '_' | '–' | '±' | '≤' | '≥' | '$' | '#' | '?' => 0.56,
        'L' | 'F' | 'T' | 'Z' | '+' | '=' | '<' | '>' | '×' | '~' => 0.61,
        'A' | 'B' | 'E' | 'K' | 'P' | 'S' | 'V' | 'X' | 'Y' | '&' => 0.67,
        'C' | 'D' | 'H' | 'N' | 'R' | 'U' => 0.72,
        'G' | 'O' | 'Q' => 0.78,
        'M' => 0.83,
        '%' | 'W' | '@' | '—' => 0.94,
        _ => 0.72,
    }
}

/// Estimated width in pixels of `s` set in Helvetica at `px` pixels.
pub(super) fn text_width(s: &str, px: f64) -> f64 {
    s.chars().map(advance).sum::<f64>() * px
}

/// Where neither Helvetica nor Arial nor a metric twin is installed, browsers fall
/// back to DejaVu Sans, whose glyphs are up to 15 % wider: the box allows for that, so
/// no label runs out of it onto the data.
const FALLBACK_WIDER: f64 = 1.15;

/// The legend box's size: swatch, gap and the widest label at 12 px, plus padding.
fn size(items: &[Item]) -> (f64, f64) {
    let text = items
        .iter()
        .map(|i| text_width(i.name, 12.0) * FALLBACK_WIDER)
        .fold(0.0, f64::max);
    (
        30.0 + PAD + text.ceil() + PAD,
        2.0 * PAD + ROW * items.len() as f64,
    )
}

fn inside(p: (f64, f64), r: Rect) -> bool {
    p.0 >= r.0 && p.0 <= r.2 && p.1 >= r.1 && p.1 <= r.3
}

/// Whether `p` lies inside the closed polygon `poly` (even-odd rule).
fn in_polygon(p: (f64, f64), poly: &[(f64, f64)]) -> bool {
    let mut c = false;
    let mut j = poly.len().wrapping_sub(1);
    for (i, &(xi, yi)) in poly.iter().enumerate() {
        let (xj, yj) = poly[j];
        if (yi > p.1) != (yj > p.1) && p.0 < (xj - xi) * (p.1 - yi) / (yj - yi) + xi {
            c = !c;
        }
        j = i;
    }
    c
}

/// Whether any part of `area` lies inside one of the filled areas: sampled on a grid
/// of at most 8 px, which is finer than the smallest legend.
fn covers_fill(area: Rect, filled: &[Vec<(f64, f64)>]) -> bool {
    let (nx, ny) = (
        ((area.2 - area.0) / 8.0).ceil().max(1.0) as usize,
        ((area.3 - area.1) / 8.0).ceil().max(1.0) as usize,
    );
    filled.iter().filter(|f| f.len() >= 3).any(|poly| {
        let bb = poly.iter().fold(
            (
                f64::INFINITY,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NEG_INFINITY,
            ),
            |b, p| (b.0.min(p.0), b.1.min(p.1), b.2.max(p.0), b.3.max(p.1)),
        );
        if bb.2 < area.0 || bb.0 > area.2 || bb.3 < area.1 || bb.1 > area.3 {
            return false;
        }
        (0..=nx).any(|i| {
            (0..=ny).any(|j| {
                let p = (
                    area.0 + (area.2 - area.0) * i as f64 / nx as f64,
                    area.1 + (area.3 - area.1) * j as f64 / ny as f64,
                );
                in_polygon(p, poly)
            })
        })
    })
}

/// Where the legend goes: an inside corner (top right, top left, bottom right,
/// bottom left, in that order of preference), else the middle of the top or bottom
/// edge, whichever is first free of `occupied` points and of the `filled` areas;
/// `None` means below the plot.
fn corner(
    plot: Rect,
    w: f64,
    h: f64,
    occupied: &[(f64, f64)],
    filled: &[Vec<(f64, f64)>],
) -> Option<(f64, f64)> {
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
        !occupied.iter().any(|&p| inside(p, area)) && !covers_fill(area, filled)
    })
}

/// Draws the legend; returns the height it adds below `below` (0 when it fits in a
/// corner). Nothing is drawn for fewer than two items: one series is named by the
/// axis label and caption. `filled` are the filled areas (bands, ellipses) in pixels.
pub(super) fn legend(
    out: &mut String,
    items: &[Item],
    plot: Rect,
    occupied: &[(f64, f64)],
    filled: &[Vec<(f64, f64)>],
    below: f64,
) -> f64 {
    if items.len() < 2 {
        return 0.0;
    }
    let (w, h) = size(items);
    let (x, y, extra) = match corner(plot, w, h, occupied, filled) {
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
                let r = if it.style == Style::Marker { 4.0 } else { 3.0 };
                out.push_str(&mark(it.shape, sx + 12.0, cy, r, color, ""));
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
        assert_eq!(corner(plot, 100.0, 40.0, &occ, &[]), Some((6.0, 6.0)));
        // Data in every corner: below the plot.
        let occ = [
            (590.0, 10.0),
            (10.0, 10.0),
            (590.0, 290.0),
            (10.0, 290.0),
            (300.0, 10.0),
            (300.0, 290.0),
        ];
        assert_eq!(corner(plot, 100.0, 40.0, &occ, &[]), None);
    }

    #[test]
    fn a_band_wider_than_the_legend_keeps_it_out_of_its_interior() {
        let plot = (0.0, 0.0, 600.0, 300.0);
        // A band over the whole top half: its outline runs along the frame's top and
        // across the middle, so no outline point falls in the top corners' boxes, but
        // the boxes lie inside the band.
        let band = vec![(0.0, 0.0), (600.0, 0.0), (600.0, 150.0), (0.0, 150.0)];
        let outline = [(0.0, 150.0), (600.0, 150.0)];
        assert_eq!(
            corner(plot, 100.0, 40.0, &outline, std::slice::from_ref(&band)),
            Some((494.0, 254.0)),
            "bottom right, below the band"
        );
        assert!(in_polygon((10.0, 10.0), &band) && !in_polygon((10.0, 200.0), &band));
    }

    #[test]
    fn text_widths_follow_helvetica_metrics() {
        // Arial at 12 px: "flow 0 cubic" is 64 px; capitals and 'm' are wider than
        // digits, 'i' and 'l' narrower.
        assert!((text_width("flow 0 cubic", 12.0) - 64.0).abs() < 3.0);
        assert!(text_width("MMMM", 12.0) > text_width("0000", 12.0));
        assert!(text_width("illi", 12.0) < text_width("0000", 12.0) / 2.0);
    }
}
