//! Line, step and scatter charts with optional min–max bands, reference lines and a
//! legend that avoids the data.
//!
//! Lines break where the data do: at non-finite samples (and non-positive ones on a
//! log axis) and, for `Line` and `Dashed` series, where consecutive samples are more
//! than `GAP` median sample intervals apart, so a missing stretch never reads as a
//! straight ramp. Where an explicit range cuts data off, the figure says so under the
//! x axis.

use super::legend::{legend, text_width, Item};
use super::{axes, esc, header, range, Axis, H, MB, ML, MR, MT, W};
use crate::claim::fmt_num;
use std::fmt::Write;

/// A gap longer than this many median sample intervals breaks a line.
const GAP: f64 = 3.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Line,
    /// Horizontal then vertical (for CDFs and cumulative counters).
    Step,
    Points,
    Dashed,
    /// A large dot with a white rim: one summary point per series (throughput
    /// against delay), readable over a shaded ellipse.
    Marker,
}

/// The mark of a `Marker` series. A figure with more series than the ten categorical
/// colours (`super::categorical_mark`) tells them apart by colour and shape together,
/// which also helps where colours are hard to tell apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Shape {
    #[default]
    Circle,
    Triangle,
    Square,
    Diamond,
    TriangleDown,
}

impl Shape {
    /// Every shape, in the order `categorical_mark` uses them.
    pub const ALL: [Shape; 5] = [
        Shape::Circle,
        Shape::Triangle,
        Shape::Square,
        Shape::Diamond,
        Shape::TriangleDown,
    ];
}

/// The SVG element of a mark of `shape` centred on (`cx`, `cy`) with radius `r`
/// (shapes other than the circle are scaled to a similar area); `extra` are further
/// attributes (e.g. a white rim).
pub(super) fn mark(shape: Shape, cx: f64, cy: f64, r: f64, fill: &str, extra: &str) -> String {
    let pts: Vec<(f64, f64)> = match shape {
        Shape::Circle => {
            return format!(r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="{r}" fill="{fill}"{extra}/>"#)
        }
        Shape::Triangle => {
            let r = r * 1.3;
            vec![(0.0, -r), (0.866 * r, 0.5 * r), (-0.866 * r, 0.5 * r)]
        }
        Shape::TriangleDown => {
            let r = r * 1.3;
            vec![(0.0, r), (0.866 * r, -0.5 * r), (-0.866 * r, -0.5 * r)]
        }
        Shape::Square => {
            let h = r * 0.9;
            vec![(-h, -h), (h, -h), (h, h), (-h, h)]
        }
        Shape::Diamond => {
            let h = r * 1.25;
            vec![(0.0, -h), (h, 0.0), (0.0, h), (-h, 0.0)]
        }
    };
    let mut d = String::new();
    for (i, (x, y)) in pts.iter().enumerate() {
        let _ = write!(
            d,
            "{}{:.1} {:.1}",
            if i == 0 { "M" } else { "L" },
            cx + x,
            cy + y
        );
    }
    format!(r#"<path class="mark" d="{d}Z" fill="{fill}"{extra}/>"#)
}

#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub color: &'static str,
    pub style: Style,
    pub points: Vec<(f64, f64)>,
    /// A shaded band (x, low, high) drawn under the line, e.g. min–max over seeds.
    pub band: Vec<(f64, f64, f64)>,
    /// Closed outlines in data coordinates, shaded under the points, e.g. a
    /// covariance ellipse across seeds.
    pub polygons: Vec<Vec<(f64, f64)>>,
    /// Draw the line as steps (flat to each next sample, then up), as `Style::Step`
    /// does, keeping the style's dashes, and never break it at wide x steps: for an
    /// empirical CDF those are sparse samples, not missing ones.
    pub steps: bool,
    /// A short label drawn beside each point of a `Marker` or `Points` series (e.g. a
    /// sweep cell's number), so that series whose colours repeat stay apart. Tags are
    /// placed where they overlap no other tag or mark, with a leader line when moved
    /// away from their point (see `place_tags`).
    pub tag: Option<String>,
    /// The mark of a `Marker` or `Points` series (circle unless set).
    pub shape: Shape,
}

impl Series {
    pub fn new(name: &str, color: &'static str, style: Style, points: Vec<(f64, f64)>) -> Self {
        Series {
            name: name.into(),
            color,
            style,
            points,
            band: Vec::new(),
            polygons: Vec::new(),
            steps: false,
            tag: None,
            shape: Shape::Circle,
        }
    }

    /// Draw the series' marks as `shape`.
    pub fn with_shape(mut self, shape: Shape) -> Self {
        self.shape = shape;
        self
    }

    /// Label each point with `tag` (see the field).
    pub fn with_tag(mut self, tag: impl Into<String>) -> Self {
        self.tag = Some(tag.into());
        self
    }

    /// Draw the points as an empirical CDF (see `steps`).
    pub fn as_steps(mut self) -> Self {
        self.steps = true;
        self
    }

    pub fn with_band(mut self, band: Vec<(f64, f64, f64)>) -> Self {
        self.band = band;
        self
    }

    pub fn with_polygons(mut self, polygons: Vec<Vec<(f64, f64)>>) -> Self {
        self.polygons = polygons;
        self
    }
}

/// A chart with x and y axes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_log: bool,
    pub y_log: bool,
    /// Values increase to the left (Pantheon's delay axis, so that better is right).
    pub x_reversed: bool,
    pub x_range: Option<(f64, f64)>,
    pub y_range: Option<(f64, f64)>,
    pub series: Vec<Series>,
    /// Horizontal reference lines (value, label).
    pub h_lines: Vec<(f64, String)>,
    /// Vertical reference lines (value, label), e.g. a loss event.
    pub v_lines: Vec<(f64, String)>,
}

/// Median of the positive steps between consecutive x values; `None` for fewer than
/// two distinct values.
fn median_step(xs: &[f64]) -> Option<f64> {
    let mut d: Vec<f64> = xs
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| d.is_finite() && *d > 0.0)
        .collect();
    if d.is_empty() {
        return None;
    }
    d.sort_by(|a, b| a.total_cmp(b));
    Some(d[d.len() / 2])
}

/// Splits samples into runs that may be joined by one line: a sample the axes cannot
/// place ends a run, and so does (when `gaps`) a step in x above `GAP` times the
/// median step, measured as drawn (in log10 x on a log axis, so geometrically spaced
/// samples are not cut apart).
fn runs<T: Copy>(
    pts: &[T],
    xy: impl Fn(T) -> (f64, f64),
    ok: impl Fn(T) -> bool,
    gaps: bool,
    log_x: bool,
) -> Vec<Vec<T>> {
    let drawn = |x: f64| if log_x { x.log10() } else { x };
    let xy = |p: T| {
        let (x, y) = xy(p);
        (drawn(x), y)
    };
    let xs: Vec<f64> = pts.iter().map(|p| xy(*p).0).collect();
    let limit = if gaps {
        median_step(&xs).map(|m| m * GAP)
    } else {
        None
    };
    let mut out: Vec<Vec<T>> = Vec::new();
    let mut cur: Vec<T> = Vec::new();
    let mut last_x = f64::NAN;
    for &p in pts {
        if !ok(p) {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let x = xy(p).0;
        if let Some(l) = limit {
            if !cur.is_empty() && x - last_x > l {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(p);
        last_x = x;
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Points sampled every few pixels along a polyline, for the legend's placement.
fn trace(pix: &[(f64, f64)], into: &mut Vec<(f64, f64)>) {
    into.extend_from_slice(pix);
    for w in pix.windows(2) {
        let (a, b) = (w[0], w[1]);
        let n = ((b.0 - a.0).hypot(b.1 - a.1) / 4.0).ceil().min(400.0) as usize;
        for k in 1..n {
            let t = k as f64 / n as f64;
            into.push((a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t));
        }
    }
}

/// Points every 4 px over a text label's box (left, top, right, bottom), so the legend
/// keeps off the label as it keeps off lines.
fn fill_box(b: (f64, f64, f64, f64), into: &mut Vec<(f64, f64)>) {
    let (nx, ny) = (
        ((b.2 - b.0) / 4.0).ceil().clamp(1.0, 200.0) as usize,
        ((b.3 - b.1) / 4.0).ceil().clamp(1.0, 20.0) as usize,
    );
    for i in 0..=nx {
        for j in 0..=ny {
            into.push((
                b.0 + (b.2 - b.0) * i as f64 / nx as f64,
                b.1 + (b.3 - b.1) * j as f64 / ny as f64,
            ));
        }
    }
}

/// What each series has beyond an explicit range, as notes for under the plot: for
/// x, where the series goes on to and its y at the cut (a CDF's value there); for y,
/// the share of points outside.
fn cut_notes(c: &Chart) -> Vec<String> {
    let mut notes = Vec::new();
    let finite = |s: &Series| -> Vec<(f64, f64)> {
        s.points
            .iter()
            .copied()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .collect()
    };
    // Overshoots within 1 % of the span (a last sample just past a run's end) are not
    // cuts worth a note.
    if let Some((lo, hi)) = c.x_range {
        let slack = (hi - lo).abs() * 0.01;
        for s in &c.series {
            let pts = finite(s);
            let max_x = pts.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
            if max_x > hi + slack {
                let at_cut = pts.iter().rev().find(|p| p.0 <= hi).map(|p| p.1);
                notes.push(format!(
                    "x axis cut at {}: {} continues to {}{}",
                    fmt_num(hi),
                    s.name,
                    fmt_num(max_x),
                    at_cut.map_or(String::new(), |y| format!(
                        " (y = {} at the cut)",
                        fmt_num(y)
                    ))
                ));
            }
            if pts.iter().any(|p| p.0 < lo - slack) {
                notes.push(format!(
                    "x axis cut at {}: {} starts below it",
                    fmt_num(lo),
                    s.name
                ));
            }
        }
    }
    if let Some((lo, hi)) = c.y_range {
        let slack = (hi - lo).abs() * 0.01;
        for s in &c.series {
            let pts = finite(s);
            let out = pts
                .iter()
                .filter(|p| p.1 > hi + slack || p.1 < lo - slack)
                .count();
            if out > 0 {
                notes.push(format!(
                    "y axis {}–{}: {} has {:.1} % of its points outside",
                    fmt_num(lo),
                    fmt_num(hi),
                    s.name,
                    100.0 * out as f64 / pts.len() as f64
                ));
            }
        }
    }
    notes
}

/// A label to place beside a drawn mark: the mark's centre and radius in pixels.
struct Tag<'a> {
    at: (f64, f64),
    r: f64,
    text: &'a str,
}

/// Tag text size in pixels and the gap kept between a tag and anything else.
const TAG_PX: f64 = 10.0;
const TAG_GAP: f64 = 1.5;

/// Whether boxes (left, top, right, bottom) overlap, with `TAG_GAP` between them.
fn boxes_overlap(a: (f64, f64, f64, f64), b: (f64, f64, f64, f64)) -> bool {
    a.0 < b.2 + TAG_GAP && b.0 < a.2 + TAG_GAP && a.1 < b.3 + TAG_GAP && b.1 < a.3 + TAG_GAP
}

/// Places every tag where its box overlaps no mark, no tag placed before it and stays
/// inside the plot: beside its mark if that is free (right, left, above, below, then
/// the diagonals), else further out along those directions, joined to its mark by a
/// thin leader line. Greedy in series order, deterministic. A tag with no free place
/// within ~110 px is left out (the legend still names the series), so a dense
/// cluster never becomes an unreadable pile of text.
fn place_tags(body: &mut String, tags: &[Tag], occupied: &mut Vec<(f64, f64)>) {
    let marks: Vec<(f64, f64, f64, f64)> = tags
        .iter()
        .map(|t| (t.at.0 - t.r, t.at.1 - t.r, t.at.0 + t.r, t.at.1 + t.r))
        .collect();
    let plot = (ML + 2.0, MT + 2.0, W - MR - 2.0, H - MB - 2.0);
    // Unit directions: the four sides first, then the diagonals, then between them.
    let dirs: [(f64, f64); 16] = [
        (1.0, 0.0),
        (-1.0, 0.0),
        (0.0, -1.0),
        (0.0, 1.0),
        (0.707, -0.707),
        (-0.707, -0.707),
        (0.707, 0.707),
        (-0.707, 0.707),
        (0.924, -0.383),
        (-0.924, -0.383),
        (0.924, 0.383),
        (-0.924, 0.383),
        (0.383, -0.924),
        (-0.383, -0.924),
        (0.383, 0.924),
        (-0.383, 0.924),
    ];
    let mut placed: Vec<(f64, f64, f64, f64)> = Vec::new();
    for t in tags {
        let (w, h) = (text_width(t.text, TAG_PX), TAG_PX);
        let mut found = None;
        'search: for dist in [0.0, 10.0, 20.0, 32.0, 46.0, 62.0, 80.0, 100.0] {
            for &(dx, dy) in &dirs {
                // The point on the box nearest the mark sits `dist` beyond its rim.
                let (ax, ay) = (
                    t.at.0 + dx * (t.r + 1.0 + dist),
                    t.at.1 + dy * (t.r + 1.0 + dist),
                );
                let left = if dx > 0.3 {
                    ax
                } else if dx < -0.3 {
                    ax - w
                } else {
                    ax - w / 2.0
                };
                let top = if dy > 0.3 {
                    ay
                } else if dy < -0.3 {
                    ay - h
                } else {
                    ay - h / 2.0
                };
                let b = (left, top, left + w, top + h);
                let inside = b.0 >= plot.0 && b.2 <= plot.2 && b.1 >= plot.1 && b.3 <= plot.3;
                if inside
                    && !marks.iter().any(|m| boxes_overlap(*m, b))
                    && !placed.iter().any(|p| boxes_overlap(*p, b))
                {
                    found = Some((b, dist, (ax, ay)));
                    break 'search;
                }
            }
        }
        let Some((b, dist, anchor)) = found else {
            continue;
        };
        if dist > 0.0 {
            // Leader from the mark's rim to the box's near point.
            let (dx, dy) = (anchor.0 - t.at.0, anchor.1 - t.at.1);
            let n = dx.hypot(dy).max(1e-9);
            let start = (t.at.0 + dx / n * t.r, t.at.1 + dy / n * t.r);
            let _ = write!(
                body,
                r##"<line class="leader" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#888" stroke-width="0.7"/>"##,
                start.0, start.1, anchor.0, anchor.1
            );
            trace(&[start, anchor], occupied);
        }
        // Text baseline: the box's bottom less the descent.
        let _ = write!(
            body,
            r##"<text class="tag" x="{:.1}" y="{:.1}" font-size="10" fill="#333">{}</text>"##,
            b.0,
            b.3 - 2.0,
            esc(t.text)
        );
        fill_box(b, occupied);
        placed.push(b);
    }
}

/// Renders a chart to an `<svg>` element; `id` must be unique in the page.
pub fn chart(c: &Chart, id: &str) -> String {
    let all = || c.series.iter().flat_map(|s| s.points.iter().copied());
    let bands = || c.series.iter().flat_map(|s| s.band.iter().copied());
    let outlines = || {
        c.series
            .iter()
            .flat_map(|s| s.polygons.iter().flatten().copied())
    };
    let (xl, xh) = c.x_range.unwrap_or_else(|| {
        range(
            all()
                .map(|p| p.0)
                .chain(bands().map(|b| b.0))
                .chain(outlines().map(|p| p.0))
                .chain(c.v_lines.iter().map(|v| v.0)),
            c.x_log,
        )
    });
    let (yl, yh) = c.y_range.unwrap_or_else(|| {
        range(
            all()
                .map(|p| p.1)
                .chain(bands().flat_map(|b| [b.1, b.2]))
                .chain(outlines().map(|p| p.1))
                .chain(c.h_lines.iter().map(|h| h.0)),
            c.y_log,
        )
    });
    let (p0, p1) = if c.x_reversed {
        (W - MR, ML)
    } else {
        (ML, W - MR)
    };
    let x = Axis {
        lo: xl,
        hi: xh,
        log: c.x_log,
        p0,
        p1,
    };
    // An explicit y range is often the data's natural bound (a correlation's ±1, a
    // share's 0 and 1); a small inset keeps lines at the bound off the frame.
    let inset = if c.y_range.is_some() { 6.0 } else { 0.0 };
    let y = Axis {
        lo: yl,
        hi: yh,
        log: c.y_log,
        p0: H - MB - inset,
        p1: MT + inset,
    };
    let clip = format!("{id}-clip");
    let mut body = String::new();
    axes(&mut body, &x, &y, &c.x_label, &c.y_label);
    let _ = write!(
        body,
        r#"<clipPath id="{}"><rect x="{ML}" y="{MT}" width="{}" height="{}"/></clipPath><g clip-path="url(#{})">"#,
        esc(&clip),
        W - ML - MR,
        H - MT - MB,
        esc(&clip)
    );
    let mut occupied: Vec<(f64, f64)> = Vec::new();
    for (v, label) in &c.h_lines {
        if !y.accepts(*v) {
            continue;
        }
        let py = y.map(*v);
        // The label sits above its line, or below it where the line runs close to the
        // top of the plot.
        let ly = if py - MT < 14.0 { py + 11.0 } else { py - 3.0 };
        let _ = write!(
            body,
            r##"<line x1="{ML}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#555" stroke-dasharray="2 3"/><text x="{:.1}" y="{ly:.1}" fill="#555" font-size="10">{}</text>"##,
            W - MR,
            ML + 4.0,
            esc(label)
        );
        trace(&[(ML, py), (W - MR, py)], &mut occupied);
        fill_box(
            (
                ML + 4.0,
                ly - 9.0,
                ML + 4.0 + text_width(label, 10.0),
                ly + 2.0,
            ),
            &mut occupied,
        );
    }
    for (v, label) in &c.v_lines {
        if !x.accepts(*v) {
            continue;
        }
        let px = x.map(*v);
        let _ = write!(
            body,
            r##"<line x1="{px:.1}" y1="{MT}" x2="{px:.1}" y2="{:.1}" stroke="#555" stroke-dasharray="2 3"/><text x="{:.1}" y="{:.1}" fill="#555" font-size="10">{}</text>"##,
            H - MB,
            px + 3.0,
            MT + 12.0,
            esc(label)
        );
        trace(&[(px, MT), (px, H - MB)], &mut occupied);
        fill_box(
            (
                px + 3.0,
                MT + 3.0,
                px + 3.0 + text_width(label, 10.0),
                MT + 14.0,
            ),
            &mut occupied,
        );
    }
    let gaps = |s: &Series| matches!(s.style, Style::Line | Style::Dashed) && !s.steps;
    // Filled areas (bands, ellipses) in pixels: the legend must not sit inside one.
    let mut filled: Vec<Vec<(f64, f64)>> = Vec::new();
    // Bands first, so every line is drawn over them.
    for s in &c.series {
        let ok = |b: (f64, f64, f64)| x.accepts(b.0) && y.accepts(b.1) && y.accepts(b.2);
        for run in runs(&s.band, |b| (b.0, b.1), ok, gaps(s), c.x_log) {
            let upper: Vec<(f64, f64)> = run.iter().map(|b| (x.map(b.0), y.map(b.2))).collect();
            let lower: Vec<(f64, f64)> =
                run.iter().rev().map(|b| (x.map(b.0), y.map(b.1))).collect();
            let mut d = String::new();
            for (i, (px, py)) in upper.iter().chain(lower.iter()).enumerate() {
                let _ = write!(d, "{}{px:.1} {py:.1}", if i == 0 { "M" } else { "L" });
            }
            let _ = write!(
                body,
                r#"<path d="{d}Z" fill="{}" fill-opacity="0.2" stroke="none"/>"#,
                s.color
            );
            trace(&upper, &mut occupied);
            trace(&lower, &mut occupied);
            filled.push(upper.into_iter().chain(lower).collect());
        }
    }
    for s in &c.series {
        for poly in &s.polygons {
            let pix: Vec<(f64, f64)> = poly
                .iter()
                .filter(|p| x.accepts(p.0) && y.accepts(p.1))
                .map(|&(a, b)| (x.map(a), y.map(b)))
                .collect();
            if pix.len() < 3 {
                continue;
            }
            let mut d = String::new();
            for (i, (px, py)) in pix.iter().enumerate() {
                let _ = write!(d, "{}{px:.1} {py:.1}", if i == 0 { "M" } else { "L" });
            }
            let _ = write!(
                body,
                r#"<path class="outline" d="{d}Z" fill="{}" fill-opacity="0.15" stroke="{}" stroke-width="1.2"/>"#,
                s.color, s.color
            );
            let mut closed = pix.clone();
            closed.push(pix[0]);
            trace(&closed, &mut occupied);
            filled.push(pix);
        }
    }
    // Point tags, placed once every mark is drawn (they must avoid all of them).
    let mut tags: Vec<Tag> = Vec::new();
    for s in &c.series {
        let ok = |p: (f64, f64)| x.accepts(p.0) && y.accepts(p.1);
        for run in runs(&s.points, |p| p, ok, gaps(s), c.x_log) {
            let pix: Vec<(f64, f64)> = run.iter().map(|&(a, b)| (x.map(a), y.map(b))).collect();
            if matches!(s.style, Style::Points | Style::Marker) {
                let (r, rim) = if s.style == Style::Marker {
                    (5.0, r#" stroke="white" stroke-width="1.5""#)
                } else {
                    (2.0, "")
                };
                for &(px, py) in &pix {
                    body.push_str(&mark(s.shape, px, py, r, s.color, rim));
                    if let Some(tag) = &s.tag {
                        tags.push(Tag {
                            at: (px, py),
                            r: r + 1.5,
                            text: tag,
                        });
                    }
                    if s.style == Style::Marker {
                        // The dot's whole disc, so the legend keeps clear of it.
                        for (dx, dy) in [(-5.0, 0.0), (5.0, 0.0), (0.0, -5.0), (0.0, 5.0)] {
                            occupied.push((px + dx, py + dy));
                        }
                    }
                }
                occupied.extend_from_slice(&pix);
                continue;
            }
            let mut d = String::new();
            let mut drawn = Vec::with_capacity(pix.len() * 2);
            for (i, &(px, py)) in pix.iter().enumerate() {
                if i == 0 {
                    let _ = write!(d, "M{px:.1} {py:.1}");
                } else if s.style == Style::Step || s.steps {
                    let qy = pix[i - 1].1;
                    let _ = write!(d, "L{px:.1} {qy:.1}L{px:.1} {py:.1}");
                    drawn.push((px, qy));
                } else {
                    let _ = write!(d, "L{px:.1} {py:.1}");
                }
                drawn.push((px, py));
            }
            let dash = if s.style == Style::Dashed {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            };
            let _ = write!(
                body,
                r#"<path d="{d}" fill="none" stroke="{}" stroke-width="1.6"{dash}/>"#,
                s.color
            );
            trace(&drawn, &mut occupied);
        }
    }
    place_tags(&mut body, &tags, &mut occupied);
    body.push_str("</g>");
    // Below the x-axis label: the cut notes, then (if no corner is free) the legend.
    let mut bottom = H;
    for n in cut_notes(c) {
        let _ = write!(
            body,
            r##"<text class="cut-note" x="{ML}" y="{:.1}" font-size="11" fill="#444">{}</text>"##,
            bottom + 2.0,
            esc(&n)
        );
        bottom += 15.0;
    }
    let items: Vec<Item> = c
        .series
        .iter()
        .map(|s| Item {
            name: &s.name,
            color: s.color,
            style: s.style,
            shape: s.shape,
            band: !s.band.is_empty() || !s.polygons.is_empty(),
        })
        .collect();
    bottom += legend(
        &mut body,
        &items,
        (ML, MT, W - MR, H - MB),
        &occupied,
        &filled,
        bottom,
    );
    let mut out = String::new();
    header(&mut out, id, &c.title, W, bottom);
    out.push_str(&body);
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg::RED;

    fn paths(svg: &str) -> Vec<&str> {
        svg.split("<path d=\"")
            .skip(1)
            .filter_map(|p| p.split('"').next())
            .collect()
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
        let s = chart(&c, "t");
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert!(s.contains("a &lt; b &amp; c"));
    }

    #[test]
    fn cdf_steps_go_flat_then_up_and_never_break() {
        // Sparse samples: a plain line breaks at the wide step, a CDF does not.
        let pts = vec![
            (1.0, 0.0),
            (1.1, 0.25),
            (1.2, 0.5),
            (1.3, 0.75),
            (50.0, 1.0),
        ];
        let line = chart(
            &Chart {
                series: vec![Series::new("s", RED, Style::Line, pts.clone())],
                ..Chart::default()
            },
            "t",
        );
        assert_eq!(paths(&line).len(), 2, "{line}");
        let cdf = chart(
            &Chart {
                series: vec![Series::new("s", RED, Style::Line, pts).as_steps()],
                ..Chart::default()
            },
            "t",
        );
        assert_eq!(paths(&cdf).len(), 1, "{cdf}");
        // Flat then up: each point after the first is reached by two segments.
        let d = &paths(&cdf)[0];
        assert_eq!(d.matches('L').count(), 2 * 4, "{d}");
    }

    #[test]
    fn lines_break_at_nan_and_at_time_gaps() {
        let mut pts: Vec<(f64, f64)> = (0..20).map(|i| (i as f64 * 0.5, 1.0)).collect();
        pts[5].1 = f64::NAN;
        pts.retain(|p| !(6.0..8.0).contains(&p.0));
        let c = Chart {
            series: vec![Series::new("s", RED, Style::Line, pts)],
            ..Chart::default()
        };
        let s = chart(&c, "t");
        // Three runs: before the NaN, NaN to the gap, after the gap.
        assert_eq!(paths(&s).len(), 3, "{s}");
        assert!(!s.contains("NaN") && !s.contains("inf"));
    }

    #[test]
    fn geometric_samples_on_a_log_axis_stay_one_line() {
        let pts: Vec<(f64, f64)> = (0..12).map(|k| (2f64.powi(k), k as f64)).collect();
        let c = Chart {
            x_log: true,
            series: vec![Series::new("s", RED, Style::Line, pts.clone())],
            ..Chart::default()
        };
        assert_eq!(paths(&chart(&c, "t")).len(), 1);
        // The same samples on a linear axis are cut at the wide steps.
        let lin = Chart {
            series: vec![Series::new("s", RED, Style::Line, pts)],
            ..Chart::default()
        };
        assert!(paths(&chart(&lin, "t")).len() > 1);
    }

    #[test]
    fn explicit_ranges_that_cut_data_say_so() {
        let c = Chart {
            x_range: Some((0.0, 10.0)),
            series: vec![Series::new(
                "tail",
                RED,
                Style::Step,
                vec![(1.0, 0.5), (20.0, 1.0)],
            )],
            ..Chart::default()
        };
        let s = chart(&c, "t");
        assert!(
            s.contains("x axis cut at 10: tail continues to 20 (y = 0.5 at the cut)"),
            "{s}"
        );
    }

    /// The boxes of the drawn tags (from their `x`, baseline `y` and text).
    fn tag_boxes(svg: &str) -> Vec<(f64, f64, f64, f64)> {
        svg.split(r#"<text class="tag" x=""#)
            .skip(1)
            .map(|t| {
                let x: f64 = t.split('"').next().unwrap().parse().unwrap();
                let y: f64 = t
                    .split("y=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                let text = t.split('>').nth(1).unwrap().split('<').next().unwrap();
                let w = text_width(text, TAG_PX);
                (x, y + 2.0 - TAG_PX, x + w, y + 2.0)
            })
            .collect()
    }

    #[test]
    fn crowded_tags_never_overlap_and_stay_in_the_plot() {
        // Twelve controllers within a few pixels of each other, as the loss-based
        // ones sit on cc-map's deep buffer: every tag is placed apart (with leaders)
        // or left out, none over another or over a mark.
        let series: Vec<Series> = (0..12)
            .map(|i| {
                let (c, shape) = crate::svg::categorical_mark(i);
                Series::new(
                    &format!("cc{i}"),
                    c,
                    Style::Marker,
                    vec![(200.0 + (i % 4) as f64, 19.0 + 0.02 * i as f64)],
                )
                .with_shape(shape)
                .with_tag(format!("Controller{i}"))
            })
            .collect();
        let c = Chart {
            x_reversed: true,
            x_range: Some((0.0, 230.0)),
            y_range: Some((0.0, 21.0)),
            series,
            ..Chart::default()
        };
        let svg = chart(&c, "t");
        let boxes = tag_boxes(&svg);
        assert!(
            boxes.len() >= 8,
            "only {} of 12 tags placed: {svg}",
            boxes.len()
        );
        for (i, a) in boxes.iter().enumerate() {
            assert!(
                a.0 >= ML && a.2 <= W - MR && a.1 >= MT && a.3 <= H - MB,
                "{a:?}"
            );
            for b in &boxes[..i] {
                let apart = a.2 <= b.0 || b.2 <= a.0 || a.3 <= b.1 || b.3 <= a.1;
                assert!(apart, "tags overlap: {a:?} {b:?}");
            }
        }
        // Moved tags are joined to their marks; the second ten are triangles (on the
        // plot and in the legend).
        assert!(svg.contains(r#"class="leader""#));
        assert_eq!(svg.matches(r#"<path class="mark""#).count(), 2 * 2);
    }
}
