//! A report figure as data: rendered to SVG for the page and to CSV for download,
//! so the numbers behind every figure can be re-plotted elsewhere.

use crate::svg::{box_plot, chart, heat_map, BoxPlot, Chart, HeatMap};
use std::fmt::Write;

#[derive(Clone, Debug)]
pub enum Figure {
    Chart(Chart),
    Boxes(BoxPlot),
    Heat(HeatMap),
}

/// A CSV field: quoted when it holds a comma, quote or line break (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A number as CSV: shortest round-trip form; empty for NaN and infinities.
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

impl Figure {
    /// The figure as an `<svg>` element; `id` must be unique in the page.
    pub fn svg(&self, id: &str) -> String {
        match self {
            Figure::Chart(c) => chart(c, id),
            Figure::Boxes(b) => box_plot(b, id),
            Figure::Heat(h) => heat_map(h, id),
        }
    }

    pub fn title(&self) -> &str {
        match self {
            Figure::Chart(c) => &c.title,
            Figure::Boxes(b) => &b.title,
            Figure::Heat(h) => &h.title,
        }
    }

    /// The data drawn, one row per point (charts: `series,kind,x,y` with kind `point`,
    /// `band_low`, `band_high` or `outline`), per group (box plots) or per cell (heat maps).
    pub fn csv(&self) -> String {
        let mut o = String::new();
        match self {
            Figure::Chart(c) => {
                let _ = writeln!(o, "series,kind,{},{}", field(&c.x_label), field(&c.y_label));
                for s in &c.series {
                    let name = field(&s.name);
                    for (x, y) in &s.points {
                        let _ = writeln!(o, "{name},point,{},{}", num(*x), num(*y));
                    }
                    for (x, lo, hi) in &s.band {
                        let _ = writeln!(o, "{name},band_low,{},{}", num(*x), num(*lo));
                        let _ = writeln!(o, "{name},band_high,{},{}", num(*x), num(*hi));
                    }
                    for (x, y) in s.polygons.iter().flatten() {
                        let _ = writeln!(o, "{name},outline,{},{}", num(*x), num(*y));
                    }
                }
            }
            Figure::Boxes(b) => {
                o.push_str("group,n,whisker_low,q1,median,q3,whisker_high,mean_without_outliers,outliers,measure\n");
                for (name, _, s) in &b.groups {
                    let outl: Vec<String> = s.outliers.iter().map(|v| num(*v)).collect();
                    let _ = writeln!(
                        o,
                        "{},{},{},{},{},{},{},{},{},{}",
                        field(name),
                        s.n,
                        num(s.lo),
                        num(s.q1),
                        num(s.median),
                        num(s.q3),
                        num(s.hi),
                        num(s.mean_trimmed),
                        field(&outl.join(" ")),
                        field(&b.y_label)
                    );
                }
            }
            Figure::Heat(h) => {
                let shade = format!("shade (0 = {}; 1 = {})", h.scale_lo, h.scale_hi);
                let _ = writeln!(
                    o,
                    "{},{},text,{},fails",
                    field(&h.y_label),
                    field(&h.x_label),
                    field(&shade)
                );
                for (ri, r) in h.rows.iter().enumerate() {
                    for (ci, c) in h.cols.iter().enumerate() {
                        let cell = h.cells.get(ri).and_then(|x| x.get(ci)).cloned().flatten();
                        let (text, shade, fail) = match cell {
                            Some(c) => (c.text, num(c.shade), c.fail.to_string()),
                            None => ("n/a".into(), String::new(), String::new()),
                        };
                        let _ = writeln!(
                            o,
                            "{},{},{},{shade},{fail}",
                            field(r),
                            field(c),
                            field(&text)
                        );
                    }
                }
            }
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg::{Series, Style, RED};

    #[test]
    fn csv_quotes_fields_and_blanks_non_finite_values() {
        let f = Figure::Chart(Chart {
            x_label: "time (s)".into(),
            y_label: "a, b".into(),
            series: vec![Series::new(
                "s \"1\"",
                RED,
                Style::Line,
                vec![(0.0, f64::NAN)],
            )],
            ..Chart::default()
        });
        assert_eq!(
            f.csv(),
            "series,kind,time (s),\"a, b\"\n\"s \"\"1\"\"\",point,0,\n"
        );
    }
}
