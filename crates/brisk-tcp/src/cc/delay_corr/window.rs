//! The observation window and its least-squares statistics (Nowlan 2014, §3.2.1,
//! Algorithms 1 and 2).
//!
//! A circular array of ⟨rate, rtt⟩ observations plus five running sums (Σx, Σy, Σx²,
//! Σxy, Σy²), so storing one observation and consulting the fit are both O(1).
//!
//! Exactness: values are capped at [`MAX_VALUE`] = 2²⁷ − 1 and the window at
//! [`MAX_WINDOW`] = 2¹⁰ slots, so every sum is < 2¹⁰ · (2²⁷)² = 2⁶⁴ and fits its `u64`
//! without wrapping: the running sums always equal a recomputation from the slots. The
//! statistics derived from them (n·Σxy − Σx·Σy etc., < 2⁷⁴) and the estimate's
//! numerator (< 2¹¹²) are computed in `i128`, which also cannot overflow. Only the
//! correlation coefficient itself is a float (its square-root denominator would need
//! ~2¹⁴⁸), and IEEE-754 `+ − × ÷ sqrt` are correctly rounded, so it is deterministic.

/// Largest window the sums are proven not to overflow for (2¹⁰ observations).
pub const MAX_WINDOW: usize = 1 << 10;
/// Largest stored value of either coordinate: 2²⁷ − 1 packets or µs (≈ 134 s). Larger
/// inputs saturate here.
pub const MAX_VALUE: u32 = (1 << 27) - 1;

/// One observation: packets in flight when the segment left (x), and its RTT in µs (y).
/// Two 32-bit values, as in the thesis (§5.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Observation {
    pub rate: u32,
    pub rtt_us: u32,
}

/// The five 64-bit running sums of §5.1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sums {
    pub x: u64,
    pub y: u64,
    pub xx: u64,
    pub xy: u64,
    pub yy: u64,
}

impl Sums {
    /// Contribution of one observation to each sum.
    fn of(o: Observation) -> Sums {
        let (x, y) = (u64::from(o.rate), u64::from(o.rtt_us));
        Sums {
            x,
            y,
            xx: x * x,
            xy: x * y,
            yy: y * y,
        }
    }

    // Wrapping ops: by the module's bounds no true result leaves 0..2⁶⁴, so these are
    // exact; they are only chosen over `+`/`-` so that no build can panic here.
    fn add(&mut self, o: Observation) {
        let c = Sums::of(o);
        self.x = self.x.wrapping_add(c.x);
        self.y = self.y.wrapping_add(c.y);
        self.xx = self.xx.wrapping_add(c.xx);
        self.xy = self.xy.wrapping_add(c.xy);
        self.yy = self.yy.wrapping_add(c.yy);
    }

    fn sub(&mut self, o: Observation) {
        let c = Sums::of(o);
        self.x = self.x.wrapping_sub(c.x);
        self.y = self.y.wrapping_sub(c.y);
        self.xx = self.xx.wrapping_sub(c.xx);
        self.xy = self.xy.wrapping_sub(c.xy);
        self.yy = self.yy.wrapping_sub(c.yy);
    }
}

/// n-scaled second moments of the window: `cov = n·Σxy − Σx·Σy`, `varx = n·Σx² − (Σx)²`,
/// `vary = n·Σy² − (Σy)²` (each n² times the population statistic).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Moments {
    pub n: i128,
    pub sx: i128,
    pub sy: i128,
    pub cov: i128,
    pub varx: i128,
    pub vary: i128,
}

impl Moments {
    /// Pearson's r in [−1, 1]; 0 when either coordinate has no variance (the thesis: a
    /// window of identical observations "yields a correlation of zero", §3.4.2).
    pub fn r(&self) -> f64 {
        if self.varx <= 0 || self.vary <= 0 {
            return 0.0;
        }
        let denom = (self.varx as f64 * self.vary as f64).sqrt();
        (self.cov as f64 / denom).clamp(-1.0, 1.0)
    }

    /// Algorithm 2, line 9: the x at which the regression line `y = m·x + b` reaches
    /// `y_target`, floored to an integer: `(y_target − b)/m`. With `m = cov/varx` and
    /// `b = (Σy − m·Σx)/n` this is `(Σx·cov + (n·y_target − Σy)·varx) / (n·cov)`, exact
    /// in `i128`. `None` unless the slope is positive (cov > 0).
    pub fn x_at(&self, y_target: u32) -> Option<i128> {
        if self.cov <= 0 || self.n <= 0 || self.varx <= 0 {
            return None;
        }
        let num = self.sx * self.cov + (self.n * i128::from(y_target) - self.sy) * self.varx;
        Some(num.div_euclid(self.n * self.cov))
    }

    /// The packets the path holds without queueing by the fit's slope, floored:
    /// `y_target / m = y_target·varx / cov` (Little's law on a saturated FIFO, where m is
    /// the bottleneck's time per packet). `None` unless the slope is positive.
    pub fn pipe(&self, y_target: u32) -> Option<i128> {
        if self.cov <= 0 || self.varx <= 0 {
            return None;
        }
        Some((i128::from(y_target) * self.varx).div_euclid(self.cov))
    }

    /// The packets the path holds without queueing by Little's law at the window's
    /// centroid, floored: `y_target · Σx / Σy`. On a saturated FIFO every observation has
    /// `y = x·τ`, so the mean RTT is τ times the mean in-flight and this equals
    /// [`Self::pipe`]; unlike the slope, the ratio of the means does not amplify small
    /// offsets in x by `pipe / spread of x`. Observations below that line (sent while
    /// the link was idle, or counting in-flight packets the bottleneck had already
    /// dropped) raise it. `None` for an empty window or Σy = 0.
    pub fn centroid_pipe(&self, y_target: u32) -> Option<i128> {
        if self.sy <= 0 || self.n <= 0 {
            return None;
        }
        Some((i128::from(y_target) * self.sx).div_euclid(self.sy))
    }
}

/// Circular window of the last `W` stored observations with running sums.
#[derive(Clone, Debug)]
pub struct ObservationWindow {
    slots: Box<[Observation]>,
    sums: Sums,
    /// Slot the next observation overwrites: the oldest once the window is full
    /// (Algorithm 1's `index`, also Algorithm 3's dither phase).
    next: usize,
    /// Slots filled so far (reaches `W` and stays there).
    len: usize,
}

impl ObservationWindow {
    /// A window of `w` slots, `w` clamped to `1..=MAX_WINDOW`.
    pub fn new(w: usize) -> Self {
        let w = w.clamp(1, MAX_WINDOW);
        ObservationWindow {
            slots: vec![Observation::default(); w].into_boxed_slice(),
            sums: Sums::default(),
            next: 0,
            len: 0,
        }
    }

    /// Algorithm 1 (`bbr_update`): overwrite the oldest observation, moving the sums
    /// by the difference. Inputs above [`MAX_VALUE`] saturate.
    pub fn push(&mut self, rate: u32, rtt_us: u32) {
        let new = Observation {
            rate: rate.min(MAX_VALUE),
            rtt_us: rtt_us.min(MAX_VALUE),
        };
        let old = std::mem::replace(&mut self.slots[self.next], new);
        // Empty slots are all-zero and contribute nothing, so this is also right
        // while the window fills.
        self.sums.sub(old);
        self.sums.add(new);
        self.next += 1;
        if self.next == self.slots.len() {
            self.next = 0;
        }
        self.len = (self.len + 1).min(self.slots.len());
    }

    /// Window length W.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Observations stored (≤ W).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn is_full(&self) -> bool {
        self.len == self.slots.len()
    }

    /// Index of the slot the next observation will overwrite.
    pub fn index(&self) -> usize {
        self.next
    }

    pub fn sums(&self) -> Sums {
        self.sums
    }

    /// The sums recomputed from the slots; equal to [`Self::sums`] by construction.
    pub fn recompute(&self) -> Sums {
        let mut s = Sums::default();
        for &o in self.slots.iter() {
            s.add(o);
        }
        s
    }

    /// The stored observations, in slot order (slots fill from 0 upwards).
    pub fn observations(&self) -> &[Observation] {
        &self.slots[..self.len]
    }

    /// Moments over the stored observations.
    pub fn moments(&self) -> Moments {
        let s = self.sums;
        let n = self.len as i128;
        let (sx, sy) = (i128::from(s.x), i128::from(s.y));
        Moments {
            n,
            sx,
            sy,
            cov: n * i128::from(s.xy) - sx * sy,
            varx: n * i128::from(s.xx) - sx * sx,
            vary: n * i128::from(s.yy) - sy * sy,
        }
    }

    /// Per-connection state in bytes as the thesis counts it (§5.1): W × (2 × 32 bit)
    /// of observations plus 5 × 64-bit sums = 8W + 40.
    pub fn state_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.slots) + std::mem::size_of::<Sums>()
    }
}
