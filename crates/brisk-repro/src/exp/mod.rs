//! The experiments and small helpers they share.

pub mod abe_convergence;
pub mod abe_mixed;
pub mod abe_model;
pub mod abe_motivation;
pub mod abe_pie_rule;
pub mod abe_short;
pub mod abe_single;
pub mod aqm_map;
pub mod aqm_ns3;
pub mod cc_map;
pub mod cdg;
pub mod dc_compete;
pub mod dc_micro;
pub mod dc_r;
pub mod dc_sweep;
pub mod dc_video;
pub mod design;
pub mod flent;
pub mod fse;
pub mod fse_pause;
pub mod inner_space;
pub mod inner_space_dual;
pub mod ledbat;
pub mod mn_cpu;
pub mod mn_fallback;
pub mod mn_overhead;
pub mod mn_priority;
pub mod mn_voip;
pub mod mn_vpn;
pub mod mn_web;
pub mod mp_b1;
pub mod mp_b1_net;
pub mod mp_b1_web;
pub mod mp_fattree;
pub mod mp_lisa;
pub mod mp_sttf;
pub mod new_cwv;
pub mod rc3_base;
pub mod rc3_compose;
pub mod rc3_critical;
pub mod rc3_net;
pub mod rc3_sweep;
pub mod rc3_video;
pub mod rdb;
pub mod real_bbr;
pub mod real_bloat;
pub mod real_ecn;
pub mod real_fidelity;
pub mod real_fse;
pub mod real_lisa;
pub mod real_map;
pub mod real_mptcp;
pub mod real_prio;
pub mod real_rc3;
pub mod real_rdb;
pub mod real_sat_web;
pub mod real_sbd;
pub mod real_tail;
pub mod sat_web;
pub mod sbd;
pub mod sbd_fse;
pub mod tlp_realistic;
pub mod tlp_tail;
pub mod tlp_web;
pub mod ut;
// issue 32 §5 (mpbeyond)
pub mod mp_compose;
pub mod mp_map;

use crate::svg::{Series, Style};
use brisk_sim::run::FlowResult;

/// Nanoseconds to milliseconds.
pub fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Mean RTT of a flow's sender samples, ms (`NaN` without samples).
pub fn rtt_mean_ms(f: &FlowResult) -> f64 {
    f.rtt.map_or(f64::NAN, |s| s.mean / 1e6)
}

/// Per-interval mean RTT as (seconds, ms) points.
pub fn rtt_over_time(f: &FlowResult) -> Vec<(f64, f64)> {
    f.rtt_series
        .iter()
        .map(|(t, r)| (*t as f64 / 1e9, ms(r.mean_ns)))
        .collect()
}

/// The `q` quantile (0–1) of a sorted sample in ns, as ms: the nearest rank, no
/// interpolation (NaN when empty).
pub fn pct(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    ms(sorted[((sorted.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize])
}

/// A sorted sample in ns as a CDF series in ms (thinned to about 1000 points).
pub fn cdf_of_sorted(name: &str, color: &'static str, style: Style, sorted: &[u64]) -> Series {
    let n = sorted.len().max(1);
    let step = (n / 1000).max(1);
    let pts = sorted
        .iter()
        .enumerate()
        .step_by(step)
        .map(|(i, x)| (ms(*x), i as f64 / (n - 1).max(1) as f64))
        .collect();
    Series::new(name, color, style, pts).as_steps()
}

/// An empirical CDF as (value in ms, cumulative fraction) points.
pub fn cdf_ms(quantiles: &[u64]) -> Vec<(f64, f64)> {
    let n = quantiles.len().saturating_sub(1).max(1) as f64;
    quantiles
        .iter()
        .enumerate()
        .map(|(i, v)| (ms(*v), i as f64 / n))
        .collect()
}

/// One series per seed drawn as their mean with a min–max band (just the series for
/// one seed).
pub fn over_seeds(
    name: &str,
    color: &'static str,
    style: Style,
    runs: Vec<Vec<(f64, f64)>>,
) -> Series {
    if runs.len() == 1 {
        let pts = runs.into_iter().next().unwrap_or_default();
        return Series::new(name, color, style, pts);
    }
    let (mean, band) = crate::bands::across(&runs);
    Series::new(name, color, style, mean).with_band(band)
}

/// Empirical CDFs (ms) from each seed's quantiles, as the mean CDF with a min–max band
/// (just the CDF for one seed).
pub fn cdf_over_seeds(name: &str, color: &'static str, quantiles: &[&[u64]]) -> Series {
    if quantiles.len() == 1 {
        return Series::new(name, color, Style::Step, cdf_ms(quantiles[0]));
    }
    let runs: Vec<Vec<f64>> = quantiles
        .iter()
        .map(|q| q.iter().map(|v| ms(*v)).collect())
        .collect();
    let (mean, band) = crate::bands::cdf_across(&runs);
    Series::new(name, color, Style::Step, mean).with_band(band)
}

/// Mean of `f` over results.
pub fn avg<T>(xs: &[T], f: impl Fn(&T) -> f64) -> f64 {
    crate::stats::mean(&xs.iter().map(f).collect::<Vec<_>>())
}

/// `a` within ±`tol` (relative) of `b`.
pub fn within(a: f64, b: f64, tol: f64) -> bool {
    a.is_finite() && (a - b).abs() <= tol * b.abs()
}
