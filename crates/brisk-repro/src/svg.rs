//! A tiny SVG plotter for the report: line/step/scatter charts on linear or log axes,
//! box plots and heat maps. Hand-rolled rather than `plotters` so that text needs no
//! font files (the browser lays out `<text>`), the output is byte-for-byte
//! deterministic, and the report stays one self-contained file.

use crate::stats::BoxStats;
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Line,
    /// Horizontal then vertical (for CDFs and cumulative counters).
    Step,
    Points,
    Dashed,
}

#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub color: &'static str,
    pub style: Style,
    pub points: Vec<(f64, f64)>,
}

impl Series {
    pub fn new(name: &str, color: &'static str, style: Style, points: Vec<(f64, f64)>) -> Self {
        Series {
            name: name.into(),
            color,
            style,
            points,
        }
    }
}

/// A chart with x and y axes.
#[derive(Clone, Debug, Default)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_log: bool,
    pub y_log: bool,
    pub x_range: Option<(f64, f64)>,
    pub y_range: Option<(f64, f64)>,
    pub series: Vec<Series>,
    /// Horizontal reference lines (value, label).
    pub h_lines: Vec<(f64, String)>,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn header(out: &mut String, title: &str, w: f64, h: f64) {
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" font-family="Helvetica, Arial, sans-serif" font-size="12"><rect width="{w}" height="{h}" fill="white"/><text x="{}" y="20" text-anchor="middle" font-size="14" font-weight="bold">{}</text>"##,
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
    fn map(&self, v: f64) -> f64 {
        let (a, b, x) = if self.log {
            (self.lo.log10(), self.hi.log10(), v.max(1e-300).log10())
        } else {
            (self.lo, self.hi, v)
        };
        let t = if b > a { (x - a) / (b - a) } else { 0.5 };
        self.p0 + t.clamp(-0.05, 1.05) * (self.p1 - self.p0)
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

fn axes(out: &mut String, x: &Axis, y: &Axis, x_label: &str, y_label: &str) {
    let (x0, x1, y0, y1) = (x.p0, x.p1, y.p0, y.p1);
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
        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"##,
        (x0 + x1) / 2.0,
        H - 12.0,
        esc(x_label),
        (y0 + y1) / 2.0,
        esc(y_label)
    );
}

/// Renders a chart to an `<svg>` element.
pub fn chart(c: &Chart) -> String {
    let all = || c.series.iter().flat_map(|s| s.points.iter());
    let (xl, xh) = c
        .x_range
        .unwrap_or_else(|| range(all().map(|p| p.0), c.x_log));
    let (yl, yh) = c.y_range.unwrap_or_else(|| {
        range(
            all().map(|p| p.1).chain(c.h_lines.iter().map(|h| h.0)),
            c.y_log,
        )
    });
    let x = Axis {
        lo: xl,
        hi: xh,
        log: c.x_log,
        p0: ML,
        p1: W - MR,
    };
    let y = Axis {
        lo: yl,
        hi: yh,
        log: c.y_log,
        p0: H - MB,
        p1: MT,
    };
    let mut out = String::new();
    header(&mut out, &c.title, W, H);
    axes(&mut out, &x, &y, &c.x_label, &c.y_label);
    let _ = write!(
        out,
        r#"<clipPath id="c"><rect x="{ML}" y="{MT}" width="{}" height="{}"/></clipPath><g clip-path="url(#c)">"#,
        W - ML - MR,
        H - MT - MB
    );
    for (v, label) in &c.h_lines {
        let py = y.map(*v);
        let _ = write!(
            out,
            r##"<line x1="{ML}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#555" stroke-dasharray="2 3"/><text x="{:.1}" y="{:.1}" fill="#555" font-size="10">{}</text>"##,
            W - MR,
            ML + 4.0,
            py - 3.0,
            esc(label)
        );
    }
    for s in &c.series {
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter(|(a, b)| {
                a.is_finite() && b.is_finite() && (!c.x_log || *a > 0.0) && (!c.y_log || *b > 0.0)
            })
            .map(|&(a, b)| (x.map(a), y.map(b)))
            .collect();
        match s.style {
            Style::Points => {
                for (px, py) in &pts {
                    let _ = write!(
                        out,
                        r#"<circle cx="{px:.1}" cy="{py:.1}" r="2" fill="{}"/>"#,
                        s.color
                    );
                }
            }
            _ => {
                let mut d = String::new();
                let mut prev: Option<(f64, f64)> = None;
                for &(px, py) in &pts {
                    match prev {
                        None => {
                            let _ = write!(d, "M{px:.1} {py:.1}");
                        }
                        Some((_, qy)) if s.style == Style::Step => {
                            let _ = write!(d, "L{px:.1} {qy:.1}L{px:.1} {py:.1}");
                        }
                        Some(_) => {
                            let _ = write!(d, "L{px:.1} {py:.1}");
                        }
                    }
                    prev = Some((px, py));
                }
                let dash = if s.style == Style::Dashed {
                    r#" stroke-dasharray="6 4""#
                } else {
                    ""
                };
                let _ = write!(
                    out,
                    r#"<path d="{d}" fill="none" stroke="{}" stroke-width="1.6"{dash}/>"#,
                    s.color
                );
            }
        }
    }
    out.push_str("</g>");
    legend(
        &mut out,
        c.series.iter().map(|s| (s.name.as_str(), s.color)),
    );
    out.push_str("</svg>");
    out
}

fn legend<'a>(out: &mut String, items: impl Iterator<Item = (&'a str, &'a str)>) {
    for (i, (name, color)) in items.enumerate() {
        let y = MT + 14.0 + 16.0 * i as f64;
        let x = W - MR - 190.0;
        let _ = write!(
            out,
            r##"<rect x="{:.1}" y="{:.1}" width="184" height="16" fill="white" fill-opacity="0.8"/><line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{color}" stroke-width="3"/><text x="{:.1}" y="{:.1}">{}</text>"##,
            x - 4.0,
            y - 10.0,
            x,
            x + 18.0,
            x + 24.0,
            y + 4.0,
            esc(name)
        );
    }
}

/// Box plots, one per group: box = IQR, line = median, diamond = mean after outlier
/// removal, whiskers = Tukey fences, circles = outliers.
pub fn box_plot(
    title: &str,
    y_label: &str,
    y_log: bool,
    groups: &[(String, &'static str, BoxStats)],
) -> String {
    let vals = groups.iter().flat_map(|(_, _, b)| {
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
        hi: groups.len() as f64,
        log: false,
        p0: ML,
        p1: W - MR,
    };
    let mut out = String::new();
    header(&mut out, title, W, H);
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
        r##"<rect x="{ML}" y="{MT}" width="{:.1}" height="{:.1}" fill="none" stroke="black"/><text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"##,
        W - ML - MR,
        H - MT - MB,
        (H - MB + MT) / 2.0,
        esc(y_label)
    );
    for (i, (name, color, b)) in groups.iter().enumerate() {
        let cx = x.map(i as f64 + 0.5);
        let hw = 40.0;
        let (q1, q3, med, lo, hi) = (
            y.map(b.q1),
            y.map(b.q3),
            y.map(b.median),
            y.map(b.lo),
            y.map(b.hi),
        );
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
        if b.mean_trimmed.is_finite() && (!y_log || b.mean_trimmed > 0.0) {
            let my = y.map(b.mean_trimmed);
            let _ = write!(
                out,
                r##"<path d="M{cx:.1} {:.1}L{:.1} {my:.1}L{cx:.1} {:.1}L{:.1} {my:.1}Z" fill="white" stroke="black"/>"##,
                my - 5.0,
                cx + 5.0,
                my + 5.0,
                cx - 5.0
            );
        }
        for o in b.outliers.iter().filter(|o| !y_log || **o > 0.0) {
            let _ = write!(
                out,
                r#"<circle cx="{cx:.1}" cy="{:.1}" r="3" fill="none" stroke="{color}"/>"#,
                y.map(*o)
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

/// One heat-map cell: a value in [0, 1] for the colour (0 good/green, 1 bad/red), the
/// text shown in it, and whether it is outlined as failing; `None` is grey "n/a".
#[derive(Clone, Debug)]
pub struct Cell {
    pub shade: f64,
    pub text: String,
    pub fail: bool,
}

/// A heat map of `rows × cols` cells with row and column labels.
pub fn heat_map(
    title: &str,
    x_label: &str,
    y_label: &str,
    cols: &[String],
    rows: &[String],
    cells: &[Vec<Option<Cell>>],
) -> String {
    let (w, h) = (520.0, 90.0 + 46.0 * rows.len() as f64);
    let (x0, y0) = (110.0, 40.0);
    let cw = (w - x0 - 14.0) / cols.len().max(1) as f64;
    let ch = 42.0;
    let mut out = String::new();
    header(&mut out, title, w, h);
    for (ri, r) in rows.iter().enumerate() {
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            x0 - 6.0,
            y0 + ch * ri as f64 + ch / 2.0 + 4.0,
            esc(r)
        );
        for (ci, _) in cols.iter().enumerate() {
            let (cx, cy) = (x0 + cw * ci as f64, y0 + ch * ri as f64);
            match cells.get(ri).and_then(|r| r.get(ci)).cloned().flatten() {
                Some(c) => {
                    let s = c.shade.clamp(0.0, 1.0);
                    // Green (good) → yellow → red (bad).
                    let (rr, gg) = if s < 0.5 {
                        ((2.0 * s * 230.0) as u8 + 25, 190)
                    } else {
                        (240, (190.0 * (2.0 - 2.0 * s)) as u8)
                    };
                    let stroke = if c.fail {
                        r##"stroke="black" stroke-width="2.5""##
                    } else {
                        r##"stroke="white""##
                    };
                    let _ = write!(
                        out,
                        r#"<rect x="{cx:.1}" y="{cy:.1}" width="{:.1}" height="{ch:.1}" fill="rgb({rr},{gg},80)" {stroke}/><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="11">{}</text>"#,
                        cw - 2.0,
                        cx + cw / 2.0,
                        cy + ch / 2.0 + 4.0,
                        esc(&c.text)
                    );
                }
                None => {
                    let _ = write!(
                        out,
                        r##"<rect x="{cx:.1}" y="{cy:.1}" width="{:.1}" height="{ch:.1}" fill="#ddd" stroke="white"/><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="11" fill="#666">n/a</text>"##,
                        cw - 2.0,
                        cx + cw / 2.0,
                        cy + ch / 2.0 + 4.0
                    );
                }
            }
        }
    }
    let yb = y0 + ch * rows.len() as f64;
    for (ci, c) in cols.iter().enumerate() {
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x0 + cw * ci as f64 + cw / 2.0,
            yb + 16.0,
            esc(c)
        );
    }
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text x="8" y="{:.1}">{}</text></svg>"#,
        x0 + (w - x0) / 2.0,
        yb + 36.0,
        esc(x_label),
        y0 - 8.0,
        esc(y_label)
    );
    out
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
    fn charts_escape_text_and_close_their_svg() {
        let c = Chart {
            title: "a < b & c".into(),
            series: vec![Series::new(
                "s",
                RED,
                Style::Step,
                vec![(0.0, 1.0), (1.0, 2.0)],
            )],
            ..Chart::default()
        };
        let s = chart(&c);
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert!(s.contains("a &lt; b &amp; c"));
    }
}
