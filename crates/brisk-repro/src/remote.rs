//! One experiment run in another process, and its result carried back.
//!
//! Why: a Python package runs `brisk repro`'s experiments on Ray workers and assembles
//! the report locally. The granularity is one experiment per task, since its analysis
//! needs all of its runs' full results in one process: [`run_one`] plans and runs a
//! single experiment on the worker, its simulator jobs on that worker's cores (the
//! runner's pool, as locally), and real-time experiments behave as they do
//! locally (run alone after the pool, or `n/a` where the host cannot run them). The
//! result crosses the process boundary as JSON ([`result_to_json`],
//! [`result_from_json`]) and comes back identical: the table, the `--json` document,
//! the accepted-failure check and every file of the HTML report are byte for byte
//! what a local run gives.
//!
//! The wire form is private to this module and is not the `--json` output: it carries
//! what that output leaves out (claim notes, figures, notes, the HTML fragment), and
//! every `f64` as its IEEE-754 bits, because serde_json writes NaN and infinities as
//! `null` and, without its `float_roundtrip` feature, may parse a finite number to a
//! neighbouring one. The `&'static str` fields come back as the same statics: the
//! experiment's id and title from [`REGISTRY`], the reference column's heading and the
//! series colours from the fixed sets experiments use (`REFERENCES`, `colors`);
//! anything else is an error naming it, never a leaked allocation. The conversions
//! destructure every struct they carry, so a field added to one of them does not
//! compile until it is carried too.

use crate::claim::{Claim, Verdict};
use crate::experiment::{ExperimentResult, Plot};
use crate::figure::Figure;
use crate::stats::BoxStats;
use crate::svg::{BoxPlot, Cell, Chart, HeatMap, Series, Shape, Style};
use crate::{select, Progress, REGISTRY};
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

/// The wire format's version, checked on the way back so that a worker built from a
/// different revision fails loudly rather than decoding into something else.
const FORMAT: u32 = 1;

/// Every value of `ExperimentResult::reference` that experiments set (`"paper"` is
/// `ExperimentResult::new`'s default; the others are the real-packet and ns-3 ones).
const REFERENCES: &[&str] = &[
    "paper",
    "simulator",
    "simulator / Linux",
    "sim / Linux",
    "Linux / sim",
    "ns-3",
    "Linux",
];

/// Every colour a figure's series or box group can have: the named roles, the
/// categorical palette and rc3-deploy's bins.
fn colors() -> impl Iterator<Item = &'static str> {
    use crate::svg::{BLUE, CATEGORICAL, GREEN, GREY, ORANGE, RED};
    [RED, BLUE, GREEN, GREY, ORANGE]
        .into_iter()
        .chain(CATEGORICAL)
        .chain(crate::exp::rc3_compose::DEPLOY_COLORS)
}

/// Plans and runs the experiment `id` alone in this process, its jobs on this
/// machine's cores, with no progress output; `quick` as `brisk repro --quick`.
pub fn run_one(id: &str, quick: bool) -> Result<ExperimentResult, String> {
    // `select` reads "all" as every experiment; a task is exactly one.
    if id == "all" {
        return Err("run_one runs one experiment; 'all' names every one".into());
    }
    match select(&[id.to_string()])?.as_slice() {
        [e] => Ok(e.run(quick, &Progress::hidden())),
        more => Err(format!(
            "'{id}' selected {} experiments, not one",
            more.len()
        )),
    }
}

/// The result as JSON for [`result_from_json`], in another process or on another
/// machine.
pub fn result_to_json(r: &ExperimentResult) -> String {
    serde_json::to_string(&Wire::from(r))
        // NOTE(expect): the wire form has only strings, integers, booleans, sequences
        // and structs, which serde_json always serializes.
        .expect("the wire form serializes")
}

/// A result from [`result_to_json`]'s output: equal to the original in every field.
/// An unknown experiment id, title, reference or colour (a worker on another
/// revision) is an error naming it.
pub fn result_from_json(s: &str) -> Result<ExperimentResult, String> {
    let w: Wire = serde_json::from_str(s).map_err(|e| format!("not a brisk-repro result: {e}"))?;
    w.into_result()
}

/// An `f64` as its bits: exact for every value (see the module comment).
#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(transparent)]
struct F(u64);

impl From<f64> for F {
    fn from(x: f64) -> Self {
        F(x.to_bits())
    }
}

impl From<F> for f64 {
    fn from(f: F) -> Self {
        f64::from_bits(f.0)
    }
}

fn pairs(v: &[(f64, f64)]) -> Vec<(F, F)> {
    v.iter().map(|&(a, b)| (a.into(), b.into())).collect()
}

fn unpairs(v: Vec<(F, F)>) -> Vec<(f64, f64)> {
    v.into_iter().map(|(a, b)| (a.into(), b.into())).collect()
}

fn lines(v: &[(f64, String)]) -> Vec<(F, String)> {
    v.iter().map(|(x, s)| ((*x).into(), s.clone())).collect()
}

fn unlines(v: Vec<(F, String)>) -> Vec<(f64, String)> {
    v.into_iter().map(|(x, s)| (x.into(), s)).collect()
}

fn color(c: String) -> Result<&'static str, String> {
    colors()
        .find(|k| *k == c)
        .ok_or_else(|| format!("unknown colour '{c}' (not in remote::colors)"))
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    format: u32,
    id: String,
    title: String,
    reference: String,
    claims: Vec<WClaim>,
    plots: Vec<WPlot>,
    notes: Vec<String>,
    html: String,
}

impl From<&ExperimentResult> for Wire {
    fn from(r: &ExperimentResult) -> Self {
        let ExperimentResult {
            id,
            title,
            reference,
            claims,
            plots,
            notes,
            html,
        } = r;
        Wire {
            format: FORMAT,
            id: id.to_string(),
            title: title.to_string(),
            reference: reference.to_string(),
            claims: claims.iter().map(WClaim::from).collect(),
            plots: plots.iter().map(WPlot::from).collect(),
            notes: notes.clone(),
            html: html.clone(),
        }
    }
}

impl Wire {
    fn into_result(self) -> Result<ExperimentResult, String> {
        if self.format != FORMAT {
            return Err(format!(
                "result in wire format {}, this build reads {FORMAT}",
                self.format
            ));
        }
        let e = REGISTRY
            .iter()
            .find(|e| e.id == self.id)
            .ok_or_else(|| format!("unknown experiment id '{}'", self.id))?;
        // Results carry their module's TITLE, as the registry does; a difference means
        // the sender ran another revision.
        if e.title != self.title {
            return Err(format!(
                "experiment '{}': title '{}' differs from this build's '{}'",
                self.id, self.title, e.title
            ));
        }
        let reference = REFERENCES
            .iter()
            .copied()
            .find(|r| *r == self.reference)
            .ok_or_else(|| {
                format!(
                    "experiment '{}': unknown reference '{}'",
                    self.id, self.reference
                )
            })?;
        Ok(ExperimentResult {
            id: e.id,
            title: e.title,
            reference,
            claims: self
                .claims
                .into_iter()
                .map(WClaim::into_claim)
                .collect::<Result<_, _>>()?,
            plots: self
                .plots
                .into_iter()
                .map(WPlot::into_plot)
                .collect::<Result<_, _>>()?,
            notes: self.notes,
            html: self.html,
        })
    }
}

#[derive(Serialize, Deserialize)]
enum WVerdict {
    Pass,
    Fail,
    NotApplicable,
}

/// A claim with its note, which the `--json` output (`Claim`'s own `Serialize`) skips.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WClaim {
    id: String,
    description: String,
    paper: WValue,
    ours: WValue,
    unit: String,
    tolerance: String,
    verdict: WVerdict,
    note: String,
}

impl From<&Claim> for WClaim {
    fn from(c: &Claim) -> Self {
        let Claim {
            id,
            description,
            paper,
            ours,
            unit,
            tolerance,
            verdict,
            note,
        } = c;
        WClaim {
            id: id.clone(),
            description: description.clone(),
            paper: paper.into(),
            ours: ours.into(),
            unit: unit.clone(),
            tolerance: tolerance.clone(),
            verdict: match verdict {
                Verdict::Pass => WVerdict::Pass,
                Verdict::Fail => WVerdict::Fail,
                Verdict::NotApplicable => WVerdict::NotApplicable,
            },
            note: note.clone(),
        }
    }
}

impl WClaim {
    fn into_claim(self) -> Result<Claim, String> {
        Ok(Claim {
            paper: self.paper.into_value()?,
            ours: self.ours.into_value()?,
            verdict: match self.verdict {
                WVerdict::Pass => Verdict::Pass,
                WVerdict::Fail => Verdict::Fail,
                WVerdict::NotApplicable => Verdict::NotApplicable,
            },
            id: self.id,
            description: self.description,
            unit: self.unit,
            tolerance: self.tolerance,
            note: self.note,
        })
    }
}

/// A JSON value whose numbers keep their kind (`1` and `1.0` print differently in the
/// `--json` output) and, for floats, their exact bits.
#[derive(Serialize, Deserialize)]
enum WValue {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(F),
    Str(String),
    Array(Vec<WValue>),
    Object(Vec<(String, WValue)>),
}

impl From<&Value> for WValue {
    fn from(v: &Value) -> Self {
        match v {
            Value::Null => WValue::Null,
            Value::Bool(b) => WValue::Bool(*b),
            // serde_json holds a number as a u64, a negative i64 or an f64; `as_u64`
            // and `as_i64` answer only for the first two, so this keeps the kind.
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => WValue::U64(u),
                (None, Some(i)) => WValue::I64(i),
                // `as_f64` answers for every number; NaN is unreachable (and rejected
                // on the way back, as no JSON value holds it).
                (None, None) => WValue::F64(n.as_f64().unwrap_or(f64::NAN).into()),
            },
            Value::String(s) => WValue::Str(s.clone()),
            Value::Array(a) => WValue::Array(a.iter().map(WValue::from).collect()),
            Value::Object(o) => {
                WValue::Object(o.iter().map(|(k, v)| (k.clone(), v.into())).collect())
            }
        }
    }
}

impl WValue {
    fn into_value(self) -> Result<Value, String> {
        Ok(match self {
            WValue::Null => Value::Null,
            WValue::Bool(b) => Value::Bool(b),
            WValue::U64(u) => Value::Number(u.into()),
            WValue::I64(i) => Value::Number(i.into()),
            WValue::F64(f) => {
                let x = f64::from(f);
                // A JSON value never holds a non-finite number, so no sender made this.
                Value::Number(
                    Number::from_f64(x)
                        .ok_or_else(|| format!("non-finite number {x} in a claim value"))?,
                )
            }
            WValue::Str(s) => Value::String(s),
            WValue::Array(a) => Value::Array(
                a.into_iter()
                    .map(WValue::into_value)
                    .collect::<Result<_, _>>()?,
            ),
            WValue::Object(o) => Value::Object(
                o.into_iter()
                    .map(|(k, v)| Ok((k, v.into_value()?)))
                    .collect::<Result<_, String>>()?,
            ),
        })
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WPlot {
    figure: WFigure,
    paper: String,
    ours: String,
}

impl From<&Plot> for WPlot {
    fn from(p: &Plot) -> Self {
        let Plot {
            figure,
            paper,
            ours,
        } = p;
        WPlot {
            figure: match figure {
                Figure::Chart(c) => WFigure::Chart(c.into()),
                Figure::Boxes(b) => WFigure::Boxes(b.into()),
                Figure::Heat(h) => WFigure::Heat(h.into()),
            },
            paper: paper.clone(),
            ours: ours.clone(),
        }
    }
}

impl WPlot {
    fn into_plot(self) -> Result<Plot, String> {
        Ok(Plot {
            figure: match self.figure {
                WFigure::Chart(c) => Figure::Chart(c.into_chart()?),
                WFigure::Boxes(b) => Figure::Boxes(b.into_box_plot()?),
                WFigure::Heat(h) => Figure::Heat(h.into()),
            },
            paper: self.paper,
            ours: self.ours,
        })
    }
}

#[derive(Serialize, Deserialize)]
enum WFigure {
    Chart(WChart),
    Boxes(WBoxPlot),
    Heat(WHeatMap),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WChart {
    title: String,
    x_label: String,
    y_label: String,
    x_log: bool,
    y_log: bool,
    x_reversed: bool,
    x_range: Option<(F, F)>,
    y_range: Option<(F, F)>,
    series: Vec<WSeries>,
    h_lines: Vec<(F, String)>,
    v_lines: Vec<(F, String)>,
}

impl From<&Chart> for WChart {
    fn from(c: &Chart) -> Self {
        let Chart {
            title,
            x_label,
            y_label,
            x_log,
            y_log,
            x_reversed,
            x_range,
            y_range,
            series,
            h_lines,
            v_lines,
        } = c;
        WChart {
            title: title.clone(),
            x_label: x_label.clone(),
            y_label: y_label.clone(),
            x_log: *x_log,
            y_log: *y_log,
            x_reversed: *x_reversed,
            x_range: x_range.map(|(a, b)| (a.into(), b.into())),
            y_range: y_range.map(|(a, b)| (a.into(), b.into())),
            series: series.iter().map(WSeries::from).collect(),
            h_lines: lines(h_lines),
            v_lines: lines(v_lines),
        }
    }
}

impl WChart {
    fn into_chart(self) -> Result<Chart, String> {
        Ok(Chart {
            title: self.title,
            x_label: self.x_label,
            y_label: self.y_label,
            x_log: self.x_log,
            y_log: self.y_log,
            x_reversed: self.x_reversed,
            x_range: self.x_range.map(|(a, b)| (a.into(), b.into())),
            y_range: self.y_range.map(|(a, b)| (a.into(), b.into())),
            series: self
                .series
                .into_iter()
                .map(WSeries::into_series)
                .collect::<Result<_, _>>()?,
            h_lines: unlines(self.h_lines),
            v_lines: unlines(self.v_lines),
        })
    }
}

#[derive(Serialize, Deserialize)]
enum WStyle {
    Line,
    Step,
    Points,
    Dashed,
    Marker,
}

#[derive(Serialize, Deserialize, Default)]
enum WShape {
    #[default]
    Circle,
    Triangle,
    Square,
    Diamond,
    TriangleDown,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WSeries {
    name: String,
    color: String,
    style: WStyle,
    points: Vec<(F, F)>,
    band: Vec<(F, F, F)>,
    polygons: Vec<Vec<(F, F)>>,
    steps: bool,
    #[serde(default)]
    tag: Option<String>,
    #[serde(default)]
    shape: WShape,
}

impl From<&Series> for WSeries {
    fn from(s: &Series) -> Self {
        let Series {
            name,
            color,
            style,
            points,
            band,
            polygons,
            steps,
            tag,
            shape,
        } = s;
        WSeries {
            name: name.clone(),
            color: color.to_string(),
            style: match style {
                Style::Line => WStyle::Line,
                Style::Step => WStyle::Step,
                Style::Points => WStyle::Points,
                Style::Dashed => WStyle::Dashed,
                Style::Marker => WStyle::Marker,
            },
            points: pairs(points),
            band: band
                .iter()
                .map(|&(x, lo, hi)| (x.into(), lo.into(), hi.into()))
                .collect(),
            polygons: polygons.iter().map(|p| pairs(p)).collect(),
            steps: *steps,
            tag: tag.clone(),
            shape: match shape {
                Shape::Circle => WShape::Circle,
                Shape::Triangle => WShape::Triangle,
                Shape::Square => WShape::Square,
                Shape::Diamond => WShape::Diamond,
                Shape::TriangleDown => WShape::TriangleDown,
            },
        }
    }
}

impl WSeries {
    fn into_series(self) -> Result<Series, String> {
        Ok(Series {
            color: color(self.color)?,
            style: match self.style {
                WStyle::Line => Style::Line,
                WStyle::Step => Style::Step,
                WStyle::Points => Style::Points,
                WStyle::Dashed => Style::Dashed,
                WStyle::Marker => Style::Marker,
            },
            name: self.name,
            points: unpairs(self.points),
            band: self
                .band
                .into_iter()
                .map(|(x, lo, hi)| (x.into(), lo.into(), hi.into()))
                .collect(),
            polygons: self.polygons.into_iter().map(unpairs).collect(),
            steps: self.steps,
            tag: self.tag,
            shape: match self.shape {
                WShape::Circle => Shape::Circle,
                WShape::Triangle => Shape::Triangle,
                WShape::Square => Shape::Square,
                WShape::Diamond => Shape::Diamond,
                WShape::TriangleDown => Shape::TriangleDown,
            },
        })
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WBoxPlot {
    title: String,
    x_label: String,
    y_label: String,
    y_log: bool,
    groups: Vec<(String, String, WBoxStats)>,
}

impl From<&BoxPlot> for WBoxPlot {
    fn from(b: &BoxPlot) -> Self {
        let BoxPlot {
            title,
            x_label,
            y_label,
            y_log,
            groups,
        } = b;
        WBoxPlot {
            title: title.clone(),
            x_label: x_label.clone(),
            y_label: y_label.clone(),
            y_log: *y_log,
            groups: groups
                .iter()
                .map(|(name, color, s)| (name.clone(), color.to_string(), s.into()))
                .collect(),
        }
    }
}

impl WBoxPlot {
    fn into_box_plot(self) -> Result<BoxPlot, String> {
        Ok(BoxPlot {
            title: self.title,
            x_label: self.x_label,
            y_label: self.y_label,
            y_log: self.y_log,
            groups: self
                .groups
                .into_iter()
                .map(|(name, c, s)| Ok((name, color(c)?, s.into_stats()?)))
                .collect::<Result<_, String>>()?,
        })
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WBoxStats {
    q1: F,
    median: F,
    q3: F,
    lo: F,
    hi: F,
    mean_trimmed: F,
    mean_all: F,
    outliers: Vec<F>,
    n: u64,
}

impl From<&BoxStats> for WBoxStats {
    fn from(s: &BoxStats) -> Self {
        let BoxStats {
            q1,
            median,
            q3,
            lo,
            hi,
            mean_trimmed,
            mean_all,
            outliers,
            n,
        } = s;
        WBoxStats {
            q1: (*q1).into(),
            median: (*median).into(),
            q3: (*q3).into(),
            lo: (*lo).into(),
            hi: (*hi).into(),
            mean_trimmed: (*mean_trimmed).into(),
            mean_all: (*mean_all).into(),
            outliers: outliers.iter().map(|&x| x.into()).collect(),
            n: *n as u64,
        }
    }
}

impl WBoxStats {
    fn into_stats(self) -> Result<BoxStats, String> {
        Ok(BoxStats {
            q1: self.q1.into(),
            median: self.median.into(),
            q3: self.q3.into(),
            lo: self.lo.into(),
            hi: self.hi.into(),
            mean_trimmed: self.mean_trimmed.into(),
            mean_all: self.mean_all.into(),
            outliers: self.outliers.into_iter().map(f64::from).collect(),
            n: usize::try_from(self.n)
                .map_err(|_| format!("box-plot count {} does not fit this host", self.n))?,
        })
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WHeatMap {
    title: String,
    x_label: String,
    y_label: String,
    cols: Vec<String>,
    rows: Vec<String>,
    cells: Vec<Vec<Option<WCell>>>,
    scale: String,
    scale_lo: String,
    scale_hi: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WCell {
    shade: F,
    text: String,
    fail: bool,
}

impl From<&HeatMap> for WHeatMap {
    fn from(h: &HeatMap) -> Self {
        let HeatMap {
            title,
            x_label,
            y_label,
            cols,
            rows,
            cells,
            scale,
            scale_lo,
            scale_hi,
        } = h;
        let cell = |c: &Cell| {
            let Cell { shade, text, fail } = c;
            WCell {
                shade: (*shade).into(),
                text: text.clone(),
                fail: *fail,
            }
        };
        WHeatMap {
            title: title.clone(),
            x_label: x_label.clone(),
            y_label: y_label.clone(),
            cols: cols.clone(),
            rows: rows.clone(),
            cells: cells
                .iter()
                .map(|row| row.iter().map(|c| c.as_ref().map(cell)).collect())
                .collect(),
            scale: scale.clone(),
            scale_lo: scale_lo.clone(),
            scale_hi: scale_hi.clone(),
        }
    }
}

impl From<WHeatMap> for HeatMap {
    fn from(h: WHeatMap) -> Self {
        HeatMap {
            title: h.title,
            x_label: h.x_label,
            y_label: h.y_label,
            cols: h.cols,
            rows: h.rows,
            cells: h
                .cells
                .into_iter()
                .map(|row| {
                    row.into_iter()
                        .map(|c| {
                            c.map(|c| Cell {
                                shade: c.shade.into(),
                                text: c.text,
                                fail: c.fail,
                            })
                        })
                        .collect()
                })
                .collect(),
            scale: h.scale,
            scale_lo: h.scale_lo,
            scale_hi: h.scale_hi,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accepted;
    use crate::svg::CATEGORICAL;

    /// Points JSON numbers cannot carry exactly: non-finite, negative zero, subnormal,
    /// and ones with no short decimal form.
    fn odd() -> Vec<(f64, f64)> {
        vec![
            (f64::NAN, f64::INFINITY),
            (f64::NEG_INFINITY, -0.0),
            (f64::MIN_POSITIVE / 4.0, f64::MAX),
            (1.0 / 3.0, 0.1 + 0.2),
        ]
    }

    /// A result that uses every kind of figure and value the wire carries, with the
    /// floats JSON cannot hold.
    fn everything() -> ExperimentResult {
        let e = &REGISTRY[0];
        let mut r = ExperimentResult::new(e.id, e.title);
        r.reference = "simulator / Linux";
        r.claims = vec![
            Claim::new("DC-1a", "float paper, integer ours")
                .paper(0.1 + 0.2)
                .unit("ms")
                .tolerance("±30 %")
                .note("the note the --json output skips")
                .check(true),
            Claim {
                ours: Value::from(3u64),
                ..Claim::new("DC-1b", "negative integer paper").check(false)
            },
            Claim {
                paper: Value::from(-2i64),
                ours: serde_json::json!({"b": [1.5, null, "x", true], "a": -0.0}),
                ..Claim::new("DC-1c", "nested").not_applicable("why not")
            },
            Claim::new("DC-10", "text")
                .paper_text("> 100")
                .ours(f64::NAN),
        ];
        let odd = odd();
        let styles = [
            Style::Line,
            Style::Step,
            Style::Points,
            Style::Dashed,
            Style::Marker,
        ];
        let series = colors()
            .enumerate()
            .map(|(i, c)| {
                let s = Series::new(&format!("s{i}"), c, styles[i % styles.len()], odd.clone());
                if i % 2 == 0 {
                    s.with_band(vec![(f64::NAN, 1.0, f64::INFINITY)])
                        .with_polygons(vec![odd.clone(), Vec::new()])
                        .as_steps()
                } else {
                    s
                }
            })
            .collect();
        let stats = BoxStats {
            q1: f64::NAN,
            median: 2.0,
            q3: f64::INFINITY,
            lo: -0.0,
            hi: 1e300,
            mean_trimmed: 0.1,
            mean_all: f64::NEG_INFINITY,
            outliers: vec![f64::NAN, 7.25],
            n: 12,
        };
        let cell = |shade: f64, fail| {
            Some(Cell {
                shade,
                text: "<1.5×>".into(),
                fail,
            })
        };
        r.plots = vec![
            Plot {
                figure: Figure::Chart(Chart {
                    title: "chart".into(),
                    x_label: "x, \"quoted\"".into(),
                    y_label: "y".into(),
                    x_log: true,
                    y_log: false,
                    x_reversed: true,
                    x_range: Some((f64::NAN, 10.0)),
                    y_range: None,
                    series,
                    h_lines: vec![(f64::INFINITY, "h".into())],
                    v_lines: vec![(0.5, "v".into())],
                }),
                paper: "P".into(),
                ours: "O".into(),
            },
            Plot {
                figure: Figure::Boxes(BoxPlot {
                    title: "boxes".into(),
                    x_label: "x".into(),
                    y_label: "y".into(),
                    y_log: true,
                    groups: vec![
                        ("a".into(), crate::svg::RED, stats.clone()),
                        ("b".into(), CATEGORICAL[9], stats),
                    ],
                }),
                paper: String::new(),
                ours: "boxes".into(),
            },
            Plot {
                figure: Figure::Heat(HeatMap {
                    title: "heat".into(),
                    x_label: "x".into(),
                    y_label: "y".into(),
                    cols: vec!["c1".into(), "c2".into()],
                    rows: vec!["r1".into(), "r2".into()],
                    cells: vec![vec![cell(f64::NAN, true), None], vec![cell(0.25, false)]],
                    scale: "s".into(),
                    scale_lo: "lo".into(),
                    scale_hi: "hi".into(),
                }),
                paper: "heat".into(),
                ours: "heat".into(),
            },
        ];
        r.notes = vec!["a note".into(), "another, with <html>".into()];
        r.html = "<p>fragment &amp; more</p>".into();
        r
    }

    /// Everything the report's outputs read from `rs`, as text.
    fn outputs(rs: &[ExperimentResult]) -> Vec<String> {
        let acc = accepted::parse("\"DC-1b\" = \"known\"", accepted::Mode::Quick).unwrap();
        let mut out = vec![
            crate::report::table(rs, &acc),
            crate::report::to_json(rs, &acc).to_string(),
            format!("{:?}", accepted::check(rs, &acc)),
            crate::html::page_with(rs, true, &acc, Some("provenance")),
        ];
        for r in rs {
            for (i, p) in r.plots.iter().enumerate() {
                out.push(p.figure.svg(&crate::html::figure_id(r.id, i)));
                out.push(p.figure.csv());
            }
        }
        out
    }

    #[test]
    fn a_hand_built_result_with_every_figure_kind_and_non_finite_floats_round_trips() {
        let r = everything();
        let json = result_to_json(&r);
        let back = result_from_json(&json).unwrap();
        // The wire form carries every field bit for bit, so equal wire forms mean equal
        // results; Debug catches a field the wire might drop on the way in.
        assert_eq!(result_to_json(&back), json);
        assert_eq!(format!("{back:?}"), format!("{r:?}"));
        assert_eq!(outputs(std::slice::from_ref(&back)), outputs(&[r]));
        assert_eq!(
            (back.id, back.title, back.reference),
            (REGISTRY[0].id, REGISTRY[0].title, "simulator / Linux")
        );
        assert_eq!(back.claims[0].note, "the note the --json output skips");
        assert_eq!(back.claims[1].ours.to_string(), "3");
        assert_eq!(
            back.claims[2].ours.to_string(),
            r#"{"a":-0.0,"b":[1.5,null,"x",true]}"#
        );
        let Figure::Chart(c) = &back.plots[0].figure else {
            panic!("a chart first")
        };
        let bits = |v: &[(f64, f64)]| -> Vec<(u64, u64)> {
            v.iter().map(|(a, b)| (a.to_bits(), b.to_bits())).collect()
        };
        for (i, s) in c.series.iter().enumerate() {
            assert_eq!(bits(&s.points), bits(&odd()), "series {i}");
        }
        assert!(c.x_range.is_some_and(|(a, _)| a.is_nan()));
        assert_eq!(c.h_lines[0].0, f64::INFINITY);
        let Figure::Boxes(b) = &back.plots[1].figure else {
            panic!("box plots second")
        };
        assert!(b.groups[0].2.q1.is_nan() && b.groups[0].2.mean_all == f64::NEG_INFINITY);
        assert_eq!(b.groups[1].1, CATEGORICAL[9]);
        let Figure::Heat(h) = &back.plots[2].figure else {
            panic!("a heat map third")
        };
        assert!(h.cells[0][0].as_ref().is_some_and(|c| c.shade.is_nan()));
        assert!(h.cells[0][1].is_none());
    }

    #[test]
    fn the_json_output_still_leaves_claim_notes_out() {
        let r = everything();
        let acc = accepted::Accepted::default();
        let doc = crate::report::to_json(std::slice::from_ref(&r), &acc).to_string();
        assert!(!doc.contains("the note the --json output skips"));
        assert!(result_to_json(&r).contains("the note the --json output skips"));
    }

    #[test]
    fn unknown_statics_and_other_formats_are_errors_naming_them() {
        let json = result_to_json(&everything());
        let e = REGISTRY[0];
        let swap = |from: &str, to: &str| {
            assert!(json.contains(from), "{from}");
            result_from_json(&json.replacen(from, to, 1)).unwrap_err()
        };
        let err = swap(&format!("\"id\":\"{}\"", e.id), "\"id\":\"no-such-exp\"");
        assert!(err.contains("no-such-exp"), "{err}");
        let err = swap(&format!("\"title\":\"{}\"", e.title), "\"title\":\"Other\"");
        assert!(err.contains("'Other'"), "{err}");
        let err = swap(
            "\"reference\":\"simulator / Linux\"",
            "\"reference\":\"oracle\"",
        );
        assert!(err.contains("'oracle'"), "{err}");
        let err = swap(crate::svg::RED, "#123456");
        assert!(err.contains("#123456"), "{err}");
        let err = swap(&format!("\"format\":{FORMAT}"), "\"format\":999");
        assert!(err.contains("999"), "{err}");
        assert!(result_from_json("{}").is_err());
        assert!(run_one("all", true).unwrap_err().contains("all"));
        assert!(run_one("no-such-exp", true)
            .unwrap_err()
            .contains("no-such-exp"));
    }

    /// The sets `result_from_json` maps back to statics must hold every colour literal
    /// and every reference an experiment sets; this reads the experiments' sources so a
    /// new one cannot slip past (named colour constants are `colors`' own).
    #[test]
    fn every_colour_and_reference_in_the_experiments_is_known() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/exp");
        let known: Vec<&str> = colors().collect();
        let mut files = 0;
        for f in std::fs::read_dir(dir).unwrap() {
            let path = f.unwrap().path();
            // Only Rust sources: an experiment may keep helper scripts in a
            // directory beside it (real_sat_web/*.py).
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let src = std::fs::read_to_string(&path).unwrap();
            files += 1;
            for (i, _) in src.match_indices("\"#") {
                let lit = src.get(i + 1..i + 8).unwrap_or("");
                let hex = lit.len() == 7 && lit[1..].bytes().all(|b| b.is_ascii_hexdigit());
                if hex && src[i + 8..].starts_with('"') {
                    assert!(known.contains(&lit), "{}: colour {lit}", path.display());
                }
            }
            for pat in ["reference = \"", "reference: \""] {
                for (i, m) in src.match_indices(pat) {
                    let rest = &src[i + m.len()..];
                    let lit = &rest[..rest.find('"').unwrap()];
                    assert!(
                        REFERENCES.contains(&lit),
                        "{}: reference {lit}",
                        path.display()
                    );
                }
            }
        }
        assert!(files > 30, "read {dir}");
    }
}
