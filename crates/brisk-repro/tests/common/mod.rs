//! Checks a rendered figure with a real XML parser: well-formed, a sane viewBox, a
//! title and both axis labels, a legend naming every series where there are several
//! and covering no data, no NaN or infinity in any coordinate, and unique element IDs;
//! and its CSV: every row has as many fields as the header. (Also included by the
//! workspace's `tests/plot.rs`, for `brisk plot`'s pages.)
#![allow(dead_code)]

use brisk_repro::figure::Figure;

/// Every attribute that holds coordinates or lengths.
const NUMERIC: &[&str] = &[
    "x",
    "y",
    "x1",
    "x2",
    "y1",
    "y2",
    "cx",
    "cy",
    "r",
    "width",
    "height",
    "d",
    "transform",
    "offset",
];

/// Fields of one CSV line (RFC 4180 quoting; the figures' CSV has no line breaks
/// inside fields); `None` for an unterminated quote.
fn csv_fields(line: &str) -> Option<usize> {
    let (mut n, mut quoted, mut chars) = (1, false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
            }
            ('"', q) => quoted = !q,
            (',', false) => n += 1,
            _ => {}
        }
    }
    (!quoted).then_some(n)
}

fn check_csv(fig: &Figure, id: &str) -> Result<(), String> {
    let csv = fig.csv();
    let mut lines = csv.lines();
    let width = lines
        .next()
        .and_then(csv_fields)
        .ok_or(format!("{id}: CSV header"))?;
    for (i, l) in lines.enumerate() {
        if csv_fields(l) != Some(width) {
            return Err(format!(
                "{id}: CSV row {} has not {width} fields: {l}",
                i + 2
            ));
        }
    }
    Ok(())
}

/// The vertices of an SVG path's `d` as the charts write it (`M x y L x y … Z`).
fn path_points(d: &str) -> Vec<(f64, f64)> {
    let nums: Vec<f64> = d
        .split(|c: char| c == 'M' || c == 'L' || c == 'Z' || c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .filter_map(|t| t.parse::<f64>().ok())
        .collect();
    nums.chunks_exact(2).map(|p| (p[0], p[1])).collect()
}

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

/// Whether the legend box of `svg` (if any) lies clear of the data: no line (sampled
/// every 2 px) or marker disc reaches into it, no label drawn in the plot starts in
/// it, and no part of it lies inside a filled area (band, ellipse).
pub fn legend_clear(svg: &str, id: &str) -> Result<(), String> {
    let doc = roxmltree::Document::parse(svg).map_err(|e| format!("{id}: not XML: {e}"))?;
    let num = |n: roxmltree::Node, a: &str| -> f64 {
        n.attribute(a)
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    };
    let Some(rect) = doc
        .descendants()
        .find(|n| n.attribute("class") == Some("legend"))
        .and_then(|g| g.children().find(|n| n.has_tag_name("rect")))
    else {
        return Ok(());
    };
    let (x, y, w, h) = (
        num(rect, "x"),
        num(rect, "y"),
        num(rect, "width"),
        num(rect, "height"),
    );
    let inside = |p: (f64, f64)| p.0 > x && p.0 < x + w && p.1 > y && p.1 < y + h;
    let data = doc
        .descendants()
        .filter(|n| n.attribute("clip-path").is_some())
        .flat_map(|g| g.descendants());
    for n in data {
        if n.has_tag_name("path") {
            let d = n.attribute("d").unwrap_or("");
            let pts = path_points(d);
            for s in pts.windows(2) {
                let (a, b) = (s[0], s[1]);
                let k = ((b.0 - a.0).hypot(b.1 - a.1) / 2.0).ceil().max(1.0) as usize;
                for i in 0..=k {
                    let t = i as f64 / k as f64;
                    let p = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
                    if inside(p) {
                        return Err(format!("{id}: the legend covers a line at {p:?}"));
                    }
                }
            }
            let filled = n.attribute("fill").is_some_and(|f| f != "none");
            if filled && d.trim_end().ends_with('Z') && pts.len() >= 3 {
                for i in 0..=8 {
                    for j in 0..=4 {
                        let p = (x + w * i as f64 / 8.0, y + h * j as f64 / 4.0);
                        if in_polygon(p, &pts) {
                            return Err(format!("{id}: the legend lies in a filled area at {p:?}"));
                        }
                    }
                }
            }
        } else if n.has_tag_name("circle") {
            let (cx, cy, r) = (num(n, "cx"), num(n, "cy"), num(n, "r"));
            let (nx, ny) = (cx.clamp(x, x + w), cy.clamp(y, y + h));
            if (cx - nx).hypot(cy - ny) < r {
                return Err(format!("{id}: the legend covers a marker at ({cx}, {cy})"));
            }
        } else if n.has_tag_name("text") && inside((num(n, "x"), num(n, "y"))) {
            return Err(format!("{id}: the legend covers the label {:?}", n.text()));
        }
    }
    Ok(())
}

pub fn check(fig: &Figure, id: &str) -> Result<(), String> {
    check_csv(fig, id)?;
    let svg = fig.svg(id);
    legend_clear(&svg, id)?;
    let doc = roxmltree::Document::parse(&svg).map_err(|e| format!("{id}: not XML: {e}"))?;
    let root = doc.root_element();
    if root.tag_name().name() != "svg" {
        return Err(format!("{id}: root is <{}>", root.tag_name().name()));
    }
    let vb: Vec<f64> = root
        .attribute("viewBox")
        .ok_or(format!("{id}: no viewBox"))?
        .split_whitespace()
        .map(|v| v.parse::<f64>().map_err(|_| format!("{id}: viewBox {v}")))
        .collect::<Result<_, _>>()?;
    let ok = vb.len() == 4
        && vb.iter().all(|v| v.is_finite())
        && vb[0] == 0.0
        && vb[1] == 0.0
        && (100.0..=5000.0).contains(&vb[2])
        && (100.0..=5000.0).contains(&vb[3]);
    if !ok {
        return Err(format!("{id}: viewBox {vb:?}"));
    }
    let text_of = |class: &str| {
        doc.descendants()
            .find(|n| n.attribute("class") == Some(class))
            .map(|n| n.descendants().filter_map(|t| t.text()).collect::<String>())
    };
    for class in ["title", "x-label", "y-label"] {
        match text_of(class) {
            Some(t) if !t.trim().is_empty() => {}
            _ => return Err(format!("{id}: no {class}")),
        }
    }
    if let Figure::Chart(c) = fig {
        let drawn: Vec<&str> = c
            .series
            .iter()
            .filter(|s| !s.points.is_empty())
            .map(|s| s.name.as_str())
            .collect();
        if drawn.len() > 1 {
            let legend = text_of("legend").ok_or(format!("{id}: several series, no legend"))?;
            for name in drawn {
                if !legend.contains(name) {
                    return Err(format!("{id}: legend lacks {name}"));
                }
            }
        }
    }
    let mut ids = std::collections::BTreeSet::new();
    for n in doc.descendants().filter(|n| n.is_element()) {
        if let Some(i) = n.attribute("id") {
            if !ids.insert(i.to_string()) {
                return Err(format!("{id}: duplicate id {i}"));
            }
        }
        for a in NUMERIC {
            let Some(v) = n.attribute(*a) else { continue };
            // Rust formats non-finite floats as NaN, inf and -inf, and nothing else
            // in these attributes contains those letters.
            if v.contains("NaN") || v.contains("inf") {
                return Err(format!("{id}: {a}=\"{v}\""));
            }
        }
    }
    Ok(())
}
