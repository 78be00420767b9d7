//! A small SVG plotter for the report: line/step/scatter charts on linear or log axes
//! with min–max bands, box plots and heat maps. Hand-written rather than a plotting
//! crate: text needs no font files (the browser lays out `<text>`), the output is
//! byte-for-byte deterministic, and the defects a paper figure must not have (lines
//! bridging data gaps, legends over data, …) are handled here once; `docs/repro.md`
//! records the comparison with `plotters` that led to this.
//!
//! Every element a checker needs carries a class: `title`, `x-label`, `y-label`,
//! `legend`.

mod boxes;
mod chart;
mod heat;
mod legend;
pub mod palette;

pub use boxes::{box_plot, BoxPlot};
pub use chart::{chart, Chart, Series, Shape, Style};
pub use heat::{heat_map, Cell, HeatMap};

use std::fmt::Write;

const W: f64 = 640.0;
const H: f64 = 380.0;
const ML: f64 = 72.0;
const MR: f64 = 18.0;
const MT: f64 = 34.0;
const MB: f64 = 52.0;

/// Colours for the usual roles (CUBIC red, delay-correlation / uTCP blue, others).
pub const RED: &str = "#c0392b";
pub const BLUE: &str = "#1f5fa8";
pub const GREEN: &str = "#2e8b57";
pub const GREY: &str = "#777777";
pub const ORANGE: &str = "#d68910";

/// Colours for series that have no role, e.g. one per flow (Tableau 10, which stays
/// distinguishable for the common forms of colour blindness); cycles past ten.
pub const CATEGORICAL: [&str; 10] = [
    "#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#76b7b2", "#b07aa1", "#edc948", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// The `i`-th categorical colour.
pub fn categorical(i: usize) -> &'static str {
    CATEGORICAL[i % CATEGORICAL.len()]
}

/// The `i`-th of up to fifty distinct marks: the categorical colour, then, once the
/// ten colours are used, the next shape (circles for the first ten series, triangles
/// for the next ten, ...). For maps with more series than colours (cc-map's twenty).
pub fn categorical_mark(i: usize) -> (&'static str, Shape) {
    (
        categorical(i),
        Shape::ALL[(i / CATEGORICAL.len()) % Shape::ALL.len()],
    )
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `id` must be unique in the page: clip paths and gradients are named after it.
fn header(out: &mut String, id: &str, title: &str, w: f64, h: f64) {
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" id="{}" viewBox="0 0 {w} {h}" width="{w}" height="{h}" font-family="Helvetica, Arial, sans-serif" font-size="12"><rect width="{w}" height="{h}" fill="white"/><text class="title" x="{}" y="20" text-anchor="middle" font-size="14" font-weight="bold">{}</text>"##,
        esc(id),
        w / 2.0,
        esc(title)
    );
}

/// Tick label: compact, no trailing zeros.
fn tick_label(v: f64) -> String {
    crate::claim::fmt_num(v)
}

/// An axis mapping data to pixels.
#[derive(Clone, Copy, Debug)]
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    p0: f64,
    p1: f64,
}

impl Axis {
    /// Pixel position of `v`; values outside the range land just outside the plot
    /// (the clip path hides them) rather than at infinity.
    fn map(&self, v: f64) -> f64 {
        let (a, b, x) = if self.log {
            (self.lo.log10(), self.hi.log10(), v.max(1e-300).log10())
        } else {
            (self.lo, self.hi, v)
        };
        let t = if b > a { (x - a) / (b - a) } else { 0.5 };
        let t = if t.is_finite() { t } else { 0.5 };
        self.p0 + t.clamp(-0.05, 1.05) * (self.p1 - self.p0)
    }

    /// Whether `v` can be placed on this axis at all.
    fn accepts(&self, v: f64) -> bool {
        v.is_finite() && (!self.log || v > 0.0)
    }

    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let (a, b) = (
                self.lo.log10().floor() as i32,
                self.hi.log10().ceil() as i32,
            );
            let mults: &[f64] = if b - a <= 2 { &[1.0, 2.0, 5.0] } else { &[1.0] };
            let mut t = Vec::new();
            for e in a..=b {
                for m in mults {
                    let v = m * 10f64.powi(e);
                    if v >= self.lo * 0.999 && v <= self.hi * 1.001 {
                        t.push(v);
                    }
                }
            }
            t
        } else {
            let span = (self.hi - self.lo).max(1e-12);
            let raw = span / 6.0;
            let mag = 10f64.powf(raw.log10().floor());
            let step = [1.0, 2.0, 5.0, 10.0]
                .iter()
                .map(|m| m * mag)
                .find(|s| span / s <= 7.0)
                .unwrap_or(10.0 * mag);
            let mut v = (self.lo / step).ceil() * step;
            let mut t = Vec::new();
            while v <= self.hi + step * 1e-9 && t.len() < 20 {
                t.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
                v += step;
            }
            t
        }
    }
}

/// Data range of one coordinate, padded; positive-only for log axes.
fn range(vals: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in vals.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        let (l, h) = (
            10f64.powf(lo.log10().floor()),
            10f64.powf(hi.log10().ceil()),
        );
        (l, if h > l { h } else { l * 10.0 })
    } else if hi > lo {
        let lo = if lo > 0.0 && lo < (hi - lo) * 0.5 {
            0.0
        } else {
            lo
        };
        (lo, hi + (hi - lo) * 0.05)
    } else {
        (lo - 1.0, hi + 1.0)
    }
}

/// Grid, tick labels, frame and axis labels. The frame and grid span the whole plot
/// area (`ML`, `MT` to `W - MR`, `H - MB`) even where an axis maps its range to an
/// inset part of it.
fn axes(out: &mut String, x: &Axis, y: &Axis, x_label: &str, y_label: &str) {
    let (x0, x1, y0, y1) = (ML, W - MR, H - MB, MT);
    for t in y.ticks() {
        let py = y.map(t);
        let _ = write!(
            out,
            r##"<line x1="{x0:.1}" y1="{py:.1}" x2="{x1:.1}" y2="{py:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            x0 - 5.0,
            py + 4.0,
            tick_label(t)
        );
    }
    for t in x.ticks() {
        let px = x.map(t);
        let _ = write!(
            out,
            r##"<line x1="{px:.1}" y1="{y0:.1}" x2="{px:.1}" y2="{y1:.1}" stroke="#e4e4e4"/><text x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            y0 + 16.0,
            tick_label(t)
        );
    }
    let _ = write!(
        out,
        r##"<rect x="{x0:.1}" y="{y1:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="black"/>"##,
        x1 - x0,
        y0 - y1
    );
    let _ = write!(
        out,
        r##"<text class="x-label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text class="y-label" transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"##,
        (x0 + x1) / 2.0,
        y0 + 40.0,
        esc(x_label),
        (y0 + y1) / 2.0,
        esc(y_label)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_ticks_fall_on_decades() {
        let a = Axis {
            lo: 1.0,
            hi: 10_000.0,
            log: true,
            p0: 0.0,
            p1: 100.0,
        };
        assert_eq!(a.ticks(), vec![1.0, 10.0, 100.0, 1000.0, 10_000.0]);
        assert!((a.map(100.0) - 50.0).abs() < 1e-9);
    }

    #[test]
    fn linear_ticks_are_round_numbers_within_range() {
        let a = Axis {
            lo: 0.0,
            hi: 20.0,
            log: false,
            p0: 0.0,
            p1: 1.0,
        };
        let t = a.ticks();
        assert_eq!(t.first(), Some(&0.0));
        assert!(t.iter().all(|v| (v / 5.0).fract() == 0.0), "{t:?}");
    }

    #[test]
    fn mapping_never_yields_non_finite_pixels() {
        let a = Axis {
            lo: 0.0,
            hi: 0.0,
            log: false,
            p0: 0.0,
            p1: 1.0,
        };
        assert!(a.map(f64::NAN).is_finite() && a.map(f64::INFINITY).is_finite());
    }
}
