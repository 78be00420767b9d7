//! Checks a rendered figure with a real XML parser: well-formed, a sane viewBox, a
//! title and both axis labels, a legend naming every series where there are several,
//! no NaN or infinity in any coordinate, and unique element IDs; and its CSV: every
//! row has as many fields as the header.

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

pub fn check(fig: &Figure, id: &str) -> Result<(), String> {
    check_csv(fig, id)?;
    let svg = fig.svg(id);
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
