//! Colours: viridis for heat maps (perceptually uniform, readable by the common forms
//! of colour blindness and in greyscale) and the luminance test that picks black or
//! white text on a filled cell.

/// Viridis at 0, 0.25, 0.5, 0.75 and 1: the five anchor colours matplotlib publishes
/// for it. Linear interpolation between them stays within a few RGB steps of the full
/// 256-entry table, which is all a heat map needs.
const VIRIDIS: [(f64, f64, f64); 5] = [
    (68.0, 1.0, 84.0),    // #440154
    (59.0, 82.0, 139.0),  // #3b528b
    (33.0, 145.0, 140.0), // #21918c
    (94.0, 201.0, 98.0),  // #5ec962
    (253.0, 231.0, 37.0), // #fde725
];

/// Viridis at `t` in [0, 1] (clamped; NaN reads as 0), as `#rrggbb`.
pub fn viridis(t: f64) -> String {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let pos = t * (VIRIDIS.len() - 1) as f64;
    let i = (pos.floor() as usize).min(VIRIDIS.len() - 2);
    let f = pos - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |x: f64, y: f64| (x + (y - x) * f).round().clamp(0.0, 255.0) as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(a.0, b.0),
        mix(a.1, b.1),
        mix(a.2, b.2)
    )
}

/// WCAG relative luminance of a `#rrggbb` colour (0 black … 1 white); 1 for anything
/// unparsable, so text on it defaults to black.
pub fn luminance(hex: &str) -> f64 {
    let h = hex.trim_start_matches('#');
    let ch = |i: usize| {
        h.get(i..i + 2)
            .and_then(|s| u8::from_str_radix(s, 16).ok())
            .map(|v| {
                let c = v as f64 / 255.0;
                if c <= 0.03928 {
                    c / 12.92
                } else {
                    ((c + 0.055) / 1.055).powf(2.4)
                }
            })
    };
    match (ch(0), ch(2), ch(4)) {
        (Some(r), Some(g), Some(b)) if h.len() == 6 => 0.2126 * r + 0.7152 * g + 0.0722 * b,
        _ => 1.0,
    }
}

/// Black or white, whichever contrasts more with `fill` (WCAG contrast ratio).
pub fn text_on(fill: &str) -> &'static str {
    let l = luminance(fill);
    // Contrast with black is (l + 0.05) / 0.05, with white 1.05 / (l + 0.05); they are
    // equal at l ≈ 0.179.
    if l > 0.179 {
        "black"
    } else {
        "white"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viridis_hits_its_anchors_and_clamps() {
        assert_eq!(viridis(0.0), "#440154");
        assert_eq!(viridis(0.5), "#21918c");
        assert_eq!(viridis(1.0), "#fde725");
        assert_eq!(viridis(7.0), "#fde725");
        assert_eq!(viridis(f64::NAN), "#440154");
    }

    #[test]
    fn text_is_white_on_dark_and_black_on_bright_cells() {
        assert_eq!(text_on(&viridis(0.0)), "white");
        assert_eq!(text_on(&viridis(1.0)), "black");
        assert_eq!(text_on("garbage"), "black");
    }
}
