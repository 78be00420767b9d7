//! RFC 8382 §3.1 (draft-ietf-rmcat-sbd, seed 004 C.3; spec §5.3): one flow's
//! summary statistics, updated per one-way-delay sample in O(1) and closed once per
//! interval T in O(N). Only per-interval summaries are kept (N of each), never the
//! samples: memory per flow is fixed when the flow is registered.
//!
//! OWD samples are integers (µs, relative: any constant clock offset cancels,
//! §4); means are `f64`, "calculated with a higher precision than the samples"
//! (§3.1.2), so the counter comparisons are not biased by rounding.

use super::{SbdConfig, Variability};

/// A ring of the last `cap` per-interval values; age 1 is the most recent.
#[derive(Clone, Debug)]
pub(crate) struct Ring<T: Copy> {
    buf: Vec<T>,
    head: usize,
    len: usize,
}

impl<T: Copy + Default> Ring<T> {
    pub fn new(cap: usize) -> Self {
        Ring {
            buf: vec![T::default(); cap],
            head: 0,
            len: 0,
        }
    }
    /// Pushes `v`; returns the value that fell out, if the ring was full.
    pub fn push(&mut self, v: T) -> Option<T> {
        let cap = self.buf.len();
        let out = (self.len == cap).then(|| self.buf[self.head]);
        self.buf[self.head] = v;
        self.head = (self.head + 1) % cap;
        self.len = (self.len + 1).min(cap);
        out
    }
    /// The value `age` intervals back (1 = most recent), if held.
    pub fn get(&self, age: usize) -> Option<T> {
        let cap = self.buf.len();
        (age >= 1 && age <= self.len).then(|| self.buf[(self.head + cap - age) % cap])
    }
    /// The most recent `k` values (fewer if not held), most recent first.
    pub fn recent(&self, k: usize) -> impl Iterator<Item = T> + '_ {
        (1..=k.min(self.len)).filter_map(|a| self.get(a))
    }
}

/// One interval's summary, as the draft names the quantities.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IntervalRecord {
    /// E_T(OWD), µs; `None` for an interval without samples (S9).
    pub mean: Option<f64>,
    /// num_T(OWD).
    pub num: u32,
    /// skew_base_T = #(OWD < mean_delay) − #(OWD > mean_delay).
    pub skew_base: i32,
    /// Samples counted in `skew_base` (0 before a mean_delay exists).
    pub skew_num: u32,
    /// PDV = max_T(OWD) − E_T(OWD); `None` when the interval had no samples.
    pub pdv: Option<f64>,
    /// var_base_T = Σ |OWD − E_T(OWD) of the previous T| (MAD form), µs.
    pub var_base: f64,
    /// Samples counted in `var_base`.
    pub var_num: u32,
    /// Whether this interval recorded a significant mean crossing.
    pub crossing: bool,
    /// Removed as noise (§3.3.2: the flow was not congested): left out of var_est.
    pub removed: bool,
    pub lost: u32,
    pub total: u32,
}

/// The four statistics a receiver must be able to report (§5.7 of the spec), plus
/// mean_delay.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Estimates {
    /// E_M(E_T(OWD)), µs.
    pub mean_delay: f64,
    /// In [−1, 1]; negative: most samples above the mean (a standing queue).
    pub skew_est: f64,
    /// PDV form: E_M(PDV) µs; MAD form: MAD_MT µs.
    pub var_est: f64,
    /// In [0, 1].
    pub freq_est: f64,
    /// In [0, 1].
    pub pkt_loss: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    None,
    Above,
    Below,
}

/// One flow's detector state.
#[derive(Clone, Debug)]
pub struct FlowStats {
    // The open interval.
    sum: i128,
    num: u32,
    max: i64,
    skew_base: i32,
    skew_num: u32,
    var_base: f64,
    var_num: u32,
    lost: u32,
    total: u32,
    // Closed intervals, the last N.
    records: Ring<IntervalRecord>,
    crossings: u32,
    side: Side,
    /// mean_delay and E_T of the last closed interval: what this interval's samples
    /// are compared against.
    mean_delay: Option<f64>,
    prev_mean: Option<f64>,
    est: Estimates,
    /// PC: classified congested in the previous T.
    pub(crate) previously_congested: bool,
    intervals: u64,
}

impl FlowStats {
    pub fn new(cfg: &SbdConfig) -> Self {
        FlowStats {
            sum: 0,
            num: 0,
            max: i64::MIN,
            skew_base: 0,
            skew_num: 0,
            var_base: 0.0,
            var_num: 0,
            lost: 0,
            total: 0,
            records: Ring::new(cfg.n),
            crossings: 0,
            side: Side::None,
            mean_delay: None,
            prev_mean: None,
            est: Estimates::default(),
            previously_congested: false,
            intervals: 0,
        }
    }

    /// One OWD sample, µs (relative). O(1).
    pub fn on_owd(&mut self, owd_us: i64) {
        self.sum += i128::from(owd_us);
        self.num = self.num.saturating_add(1);
        self.max = self.max.max(owd_us);
        let x = owd_us as f64;
        // §3.1.2: against mean_delay *excluding* the current T.
        if let Some(m) = self.mean_delay {
            if x < m {
                self.skew_base += 1;
            } else if x > m {
                self.skew_base -= 1;
            }
            self.skew_num += 1;
        }
        // §3.3.1: against E_T(OWD) of the previous T (S7).
        if let Some(m) = self.prev_mean {
            self.var_base += (x - m).abs();
            self.var_num += 1;
        }
    }

    /// Packets received and lost (sequence gaps) since the last call. O(1).
    pub fn on_packets(&mut self, received: u32, lost: u32) {
        self.total = self.total.saturating_add(received.saturating_add(lost));
        self.lost = self.lost.saturating_add(lost);
    }

    pub fn estimates(&self) -> Estimates {
        self.est
    }
    /// Closed intervals so far.
    pub fn intervals(&self) -> u64 {
        self.intervals
    }
    pub fn record(&self, age: usize) -> Option<IntervalRecord> {
        self.records.get(age)
    }

    /// Whether the flow passes grouping step 1 (§3.2.1) with its current estimates.
    pub fn congested(&self, cfg: &SbdConfig) -> bool {
        let e = &self.est;
        e.skew_est < cfg.c_s
            || (e.skew_est < cfg.c_h && self.previously_congested)
            || e.pkt_loss > cfg.p_l
    }

    /// Closes the interval: the statistics of §3.1 (with §3.3–3.4 as configured).
    pub fn close_interval(&mut self, cfg: &SbdConfig) {
        let mean = (self.num > 0).then(|| self.sum as f64 / f64::from(self.num));
        let pdv = mean.map(|m| self.max as f64 - m);
        let mut rec = IntervalRecord {
            mean,
            num: self.num,
            skew_base: self.skew_base,
            skew_num: self.skew_num,
            pdv,
            var_base: self.var_base,
            var_num: self.var_num,
            crossing: false,
            removed: false,
            lost: self.lost,
            total: self.total,
        };
        // The mean and variability before this interval: the reference a "current"
        // E_T crosses (S3; the same exclusion as skew's).
        let ref_mean = self.mean_delay;
        let ref_var = self.est.var_est;
        self.push(rec);
        // skew first: the noise removal needs this interval's congestion verdict.
        self.est.skew_est = self.skew(cfg);
        self.est.pkt_loss = self.loss(cfg);
        let congested = self.congested(cfg);
        if cfg.noise_removal && !congested {
            rec.removed = true; // §3.3.2 step 1: PDV (and MAD) = NaN
        }
        if let (Some(m), Some(e_t)) = (ref_mean, mean) {
            let band = cfg.p_v() * ref_var;
            let side = if e_t > m + band {
                Side::Above
            } else if e_t < m - band {
                Side::Below
            } else {
                self.side
            };
            let crossed = matches!(
                (self.side, side),
                (Side::Above, Side::Below) | (Side::Below, Side::Above)
            );
            self.side = side;
            // §3.3.2 step 3: only a congested flow records a crossing.
            rec.crossing = crossed && (congested || !cfg.noise_removal);
        }
        self.replace_newest(rec);
        self.est.var_est = self.variability(cfg);
        self.est.freq_est = f64::from(self.crossings) / cfg.n as f64;
        self.mean_delay = self.mean_over(cfg.m);
        self.est.mean_delay = self.mean_delay.unwrap_or(0.0);
        if mean.is_some() {
            self.prev_mean = mean;
        }
        self.intervals += 1;
        self.sum = 0;
        self.num = 0;
        self.max = i64::MIN;
        self.skew_base = 0;
        self.skew_num = 0;
        self.var_base = 0.0;
        self.var_num = 0;
        self.lost = 0;
        self.total = 0;
    }

    fn push(&mut self, rec: IntervalRecord) {
        if let Some(out) = self.records.push(rec) {
            self.crossings -= u32::from(out.crossing);
        }
    }

    fn replace_newest(&mut self, rec: IntervalRecord) {
        let old = self.records.get(1).is_some_and(|r| r.crossing);
        self.crossings = self.crossings - u32::from(old) + u32::from(rec.crossing);
        let cap = self.records.buf.len();
        let i = (self.records.head + cap - 1) % cap;
        self.records.buf[i] = rec;
    }

    /// mean_delay = E_M(E_T(OWD)) over the valid intervals among the last M.
    fn mean_over(&self, m: usize) -> Option<f64> {
        let (s, k) = self
            .records
            .recent(m)
            .filter_map(|r| r.mean)
            .fold((0.0, 0u32), |(s, k), x| (s + x, k + 1));
        (k > 0).then(|| s / f64::from(k))
    }

    /// skew_est: sum_MT(skew_base_T)/num_MT(OWD) (§3.1.2), or its weighted form (§3.4).
    fn skew(&self, cfg: &SbdConfig) -> f64 {
        let (num, den) =
            self.records
                .recent(cfg.m)
                .enumerate()
                .fold((0.0, 0.0), |(n, d), (i, r)| {
                    let w = cfg.weight(i + 1);
                    (
                        n + w * f64::from(r.skew_base),
                        d + w * f64::from(r.skew_num),
                    )
                });
        if den > 0.0 {
            num / den
        } else {
            0.0
        }
    }

    /// var_est (§3.1.3 PDV, §3.3.1 MAD; §3.4 weights; §3.3.2 NaN records left out of
    /// both sums, the adjustment S6 leaves to us).
    fn variability(&self, cfg: &SbdConfig) -> f64 {
        let mut num = 0.0;
        let mut den = 0.0;
        for (i, r) in self.records.recent(cfg.m).enumerate() {
            let w = cfg.weight(i + 1);
            match cfg.variability {
                Variability::Pdv => {
                    if let (Some(p), false) = (r.pdv, r.removed) {
                        num += w * p;
                        den += w;
                    }
                }
                Variability::Mad => {
                    // §3.3.2 step 4: the same NaN rule for MAD.
                    if !r.removed {
                        num += w * r.var_base;
                        den += w * f64::from(r.var_num);
                    }
                }
            }
        }
        if den > 0.0 {
            num / den
        } else {
            0.0
        }
    }

    /// pkt_loss = sum_NT(lost)/sum_NT(total) (§3.1.5).
    fn loss(&self, cfg: &SbdConfig) -> f64 {
        let (l, t) = self.records.recent(cfg.n).fold((0u64, 0u64), |(l, t), r| {
            (l + u64::from(r.lost), t + u64::from(r.total))
        });
        if t > 0 {
            l as f64 / t as f64
        } else {
            0.0
        }
    }
}
