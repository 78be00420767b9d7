//! Flow-completion-time aggregates (RC3, NSDI 2014, §5.1: "mean FCT over flows" and
//! "over bytes", Figs 7-10 and 13; spec `rc3.md` A12 for the FCT definition).
//!
//! Over the measured flows (warm-up excluded, spec A8): the mean FCT, the byte-weighted
//! mean Σ size·FCT / Σ size, per flow-size bin the mean FCT and the median effective
//! throughput size/FCT, and FCT percentiles for chosen exact sizes. Flows that did not
//! complete are counted, never averaged in. Two runs' stats give RC3-style reductions
//! with [`reduction`].

use serde::Serialize;

/// One flow as the aggregates see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowFct {
    pub size: u64,
    /// FCT in seconds; `None` if the flow did not complete.
    pub fct_s: Option<f64>,
}

/// One flow-size bin: sizes in `(lower, upper]` bytes (`upper = None`: unbounded).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BinStats {
    pub lower_bytes: u64,
    pub upper_bytes: Option<u64>,
    pub flows: usize,
    pub completed: usize,
    pub mean_fct_s: Option<f64>,
    /// Median of size·8/FCT over the bin's completed flows.
    pub median_throughput_bps: Option<f64>,
}

/// FCT percentiles of the flows of one exact size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SizeCdf {
    pub size_bytes: u64,
    pub completed: usize,
    /// (percentile, FCT s) at 1, 10, 50, 90, 99 (nearest rank).
    pub percentiles: Vec<(u32, f64)>,
}

/// The aggregates of one set of flows.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FctStats {
    pub flows: usize,
    pub completed: usize,
    pub mean_fct_s: Option<f64>,
    pub byte_weighted_fct_s: Option<f64>,
    pub bins: Vec<BinStats>,
    pub cdfs: Vec<SizeCdf>,
}

/// Percentiles reported for [`SizeCdf`].
pub const PERCENTILES: [u32; 5] = [1, 10, 50, 90, 99];

/// Nearest-rank percentile of sorted values.
fn nearest_rank(sorted: &[f64], p: u32) -> f64 {
    let n = sorted.len();
    let rank = ((f64::from(p) / 100.0) * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(nearest_rank(&v, 50))
}

impl FctStats {
    /// Aggregates `flows` with bin upper edges `edges` (bytes, increasing; a last open
    /// bin follows) and CDFs for `cdf_sizes`.
    pub fn compute(flows: &[FlowFct], edges: &[u64], cdf_sizes: &[u64]) -> Self {
        let done: Vec<(u64, f64)> = flows
            .iter()
            .filter_map(|f| f.fct_s.map(|t| (f.size, t)))
            .collect();
        let mean = |v: &[(u64, f64)]| {
            (!v.is_empty()).then(|| v.iter().map(|x| x.1).sum::<f64>() / v.len() as f64)
        };
        let bytes: f64 = done.iter().map(|x| x.0 as f64).sum();
        let weighted =
            (bytes > 0.0).then(|| done.iter().map(|x| x.0 as f64 * x.1).sum::<f64>() / bytes);
        let mut bins = Vec::with_capacity(edges.len() + 1);
        let mut lower = 0u64;
        for upper in edges.iter().copied().map(Some).chain([None]) {
            let inside = |s: u64| s > lower && upper.is_none_or(|u| s <= u);
            let d: Vec<(u64, f64)> = done.iter().copied().filter(|x| inside(x.0)).collect();
            let thr: Vec<f64> = d
                .iter()
                .filter(|x| x.1 > 0.0)
                .map(|x| x.0 as f64 * 8.0 / x.1)
                .collect();
            bins.push(BinStats {
                lower_bytes: lower,
                upper_bytes: upper,
                flows: flows.iter().filter(|f| inside(f.size)).count(),
                completed: d.len(),
                mean_fct_s: mean(&d),
                median_throughput_bps: median(thr),
            });
            lower = upper.unwrap_or(lower);
        }
        let cdfs = cdf_sizes
            .iter()
            .map(|&size| {
                let mut v: Vec<f64> = done.iter().filter(|x| x.0 == size).map(|x| x.1).collect();
                v.sort_by(f64::total_cmp);
                SizeCdf {
                    size_bytes: size,
                    completed: v.len(),
                    percentiles: if v.is_empty() {
                        Vec::new()
                    } else {
                        PERCENTILES
                            .iter()
                            .map(|&p| (p, nearest_rank(&v, p)))
                            .collect()
                    },
                }
            })
            .collect();
        FctStats {
            flows: flows.len(),
            completed: done.len(),
            mean_fct_s: mean(&done),
            byte_weighted_fct_s: weighted,
            bins,
            cdfs,
        }
    }
}

/// RC3's reductions of one run's FCTs against a baseline's (Figs 7-9, Table 1), in
/// percent; `None` where either side has no completed flow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reductions {
    pub over_flows: Option<f64>,
    pub over_bytes: Option<f64>,
    /// Per bin of the baseline's edges (both must use the same bins).
    pub bins: Vec<Option<f64>>,
}

impl FctStats {
    /// `self`'s reductions relative to `base`.
    pub fn reductions_from(&self, base: &FctStats) -> Reductions {
        Reductions {
            over_flows: reduction(base.mean_fct_s, self.mean_fct_s),
            over_bytes: reduction(base.byte_weighted_fct_s, self.byte_weighted_fct_s),
            bins: base
                .bins
                .iter()
                .zip(&self.bins)
                .map(|(b, n)| reduction(b.mean_fct_s, n.mean_fct_s))
                .collect(),
        }
    }
}

/// RC3's reduction `(base − new) / base`, in percent.
pub fn reduction(base: Option<f64>, new: Option<f64>) -> Option<f64> {
    match (base, new) {
        (Some(b), Some(n)) if b > 0.0 => Some((b - n) / b * 100.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(size: u64, fct: f64) -> FlowFct {
        FlowFct {
            size,
            fct_s: Some(fct),
        }
    }

    #[test]
    fn means_weights_bins_and_percentiles() {
        let flows = [
            f(1000, 0.1),
            f(1000, 0.3),
            f(9000, 1.0),
            FlowFct {
                size: 5000,
                fct_s: None,
            },
        ];
        let s = FctStats::compute(&flows, &[2000], &[1000, 7]);
        assert_eq!((s.flows, s.completed), (4, 3));
        assert!((s.mean_fct_s.unwrap() - 1.4 / 3.0).abs() < 1e-12);
        // (1000·0.1 + 1000·0.3 + 9000·1.0) / 11000
        assert!((s.byte_weighted_fct_s.unwrap() - 9400.0 / 11000.0).abs() < 1e-12);
        assert_eq!(s.bins.len(), 2);
        assert_eq!((s.bins[0].flows, s.bins[0].completed), (2, 2));
        assert!((s.bins[0].mean_fct_s.unwrap() - 0.2).abs() < 1e-12);
        // Throughputs 80 000 and 26 667 bit/s: the nearest-rank median is the lower.
        assert!((s.bins[0].median_throughput_bps.unwrap() - 8000.0 / 0.3).abs() < 1e-6);
        assert_eq!((s.bins[1].flows, s.bins[1].completed), (2, 1));
        assert_eq!(s.bins[1].upper_bytes, None);
        assert_eq!(s.cdfs[0].percentiles[0], (1, 0.1));
        assert_eq!(s.cdfs[0].percentiles[4], (99, 0.3));
        assert!(s.cdfs[1].percentiles.is_empty());
        assert!((reduction(Some(0.135), Some(0.076)).unwrap() - 43.7037).abs() < 1e-3);
        // Halving every FCT is a 50 % reduction everywhere.
        let halved: Vec<FlowFct> = flows
            .iter()
            .map(|x| FlowFct {
                size: x.size,
                fct_s: x.fct_s.map(|t| t / 2.0),
            })
            .collect();
        let r = FctStats::compute(&halved, &[2000], &[]).reductions_from(&s);
        assert!((r.over_flows.unwrap() - 50.0).abs() < 1e-9);
        assert!((r.over_bytes.unwrap() - 50.0).abs() < 1e-9);
        assert!(r.bins.iter().all(|b| (b.unwrap() - 50.0).abs() < 1e-9));
        assert_eq!(reduction(None, Some(1.0)), None);
    }
}
