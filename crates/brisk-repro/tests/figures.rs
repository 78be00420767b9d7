//! Every kind of figure, fed awkward data (NaN, gaps, empty series, values a log
//! axis cannot show, a range that cuts data), renders to an SVG that the parser-based
//! checker accepts; the quick-suite test applies the same checker to every figure of
//! the real report.

mod common;

use brisk_repro::figure::Figure;
use brisk_repro::stats::box_stats;
use brisk_repro::svg::{BoxPlot, Cell, Chart, HeatMap, Series, Style, BLUE, GREY, RED};

fn awkward_chart(y_log: bool) -> Chart {
    let mut pts: Vec<(f64, f64)> = (0..200)
        .map(|i| (i as f64 * 0.1, (i % 17) as f64))
        .collect();
    pts[10].1 = f64::NAN;
    pts[20].1 = f64::INFINITY;
    pts.retain(|p| !(8.0..12.0).contains(&p.0));
    Chart {
        title: "awkward".into(),
        x_label: "time (s)".into(),
        y_label: "value".into(),
        y_log,
        x_range: Some((0.0, 15.0)),
        series: vec![
            Series::new("line", RED, Style::Line, pts.clone())
                .with_band(pts.iter().map(|p| (p.0, p.1 - 1.0, p.1 + 1.0)).collect()),
            Series::new(
                "dashed",
                BLUE,
                Style::Dashed,
                pts.iter().map(|p| (p.0, p.1 * 2.0)).collect(),
            ),
            Series::new("step", GREY, Style::Step, vec![(f64::NAN, 1.0), (1.0, 0.0)]),
            Series::new("points", GREY, Style::Points, vec![(3.0, 3.0)]),
            Series::new("empty", GREY, Style::Line, Vec::new()),
        ],
        h_lines: vec![(0.5, "ref".into()), (f64::NAN, "bad".into())],
        v_lines: vec![(4.0, "event".into())],
        ..Chart::default()
    }
}

#[test]
fn every_figure_kind_passes_the_svg_checker() {
    let b = box_stats(&[1.0, 2.0, 3.0, 4.0, 100.0]).expect("samples");
    let mut odd = b.clone();
    odd.median = f64::NAN;
    odd.outliers.push(f64::INFINITY);
    let figs = [
        Figure::Chart(awkward_chart(false)),
        Figure::Chart(awkward_chart(true)),
        Figure::Chart(Chart {
            title: "empty".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            ..Chart::default()
        }),
        Figure::Boxes(BoxPlot {
            title: "boxes".into(),
            x_label: "group".into(),
            y_label: "value (log)".into(),
            y_log: true,
            groups: vec![("a".into(), RED, b.clone()), ("b".into(), BLUE, odd)],
        }),
        Figure::Heat(HeatMap {
            title: "heat".into(),
            x_label: "rate".into(),
            y_label: "rtt".into(),
            cols: vec!["1".into(), "2".into()],
            rows: vec!["10".into()],
            cells: vec![vec![
                Some(Cell {
                    shade: f64::NAN,
                    text: "x".into(),
                    fail: true,
                }),
                None,
            ]],
            scale: "badness".into(),
            scale_lo: "good".into(),
            scale_hi: "bad".into(),
        }),
    ];
    for (i, f) in figs.iter().enumerate() {
        common::check(f, &format!("f{i}")).unwrap_or_else(|e| panic!("{e}\n{}", f.svg("x")));
        // Determinism: the same figure gives the same bytes.
        assert_eq!(f.svg("x"), f.svg("x"));
        assert!(!f.csv().is_empty());
    }
}

#[test]
fn the_checker_rejects_what_it_should() {
    let mut c = awkward_chart(false);
    c.y_label.clear();
    assert!(common::check(&Figure::Chart(c), "a").is_err());
}
