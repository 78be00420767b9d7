//! Delay correlation: the sender-side bufferbloat limiter of Nowlan's thesis ("A
//! Wire-Compatible TCP Implementation for Low-Latency Applications", Yale 2014, ch. 3),
//! which the thesis calls "BBR", *Bufferbloat Resilient* TCP. It is **not** Google's
//! BBR (2016); brisk calls it `delay_correlation` to keep the two apart.
//!
//! A thin layer between the connection and any base controller (Fig. 3.1). Each ACK
//! may add one observation ⟨packets in flight when the newest ACKed segment left, that
//! segment's RTT⟩ to a window of W (§3.2.3, Algorithm 1), sampled so the window spans
//! about two cwnd rounds (§3.4.1). Outside recovery every ACK consults the window
//! (§3.2.4, Algorithm 2): if the correlation r of rate and RTT reaches the threshold,
//! the path is bufferbloated and cwnd is set to the least-squares estimate of the
//! window at which RTT would equal the minimum RTT, `(min_rtt − b)/m`, plus a dither
//! that alternates every W/2 stored observations (§3.4.2, Algorithm 3) to keep the
//! signal excited. Otherwise the base controller runs as if this layer were absent.
//!
//! See `docs/mechanisms/delay-correlation.md` for every choice made where the thesis
//! is silent (warm-up, hand-back to the base, recovery, Karn, degenerate fits).

mod window;

#[cfg(test)]
mod tests;

pub use window::{Moments, Observation, ObservationWindow, Sums, MAX_VALUE, MAX_WINDOW};

use super::{
    AckSample, CcDiagnostics, CcEvent, CcState, CongestionCause, CongestionControl, FlowCtx,
};
use crate::recovery::minmax::WindowedMin;
use brisk_time::{Duration, Instant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Which statistic is compared against the threshold. The thesis' pseudo-code and
/// range (−1..1) say Pearson's r; one sentence describes r² (spec [AMB-2]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Statistic {
    /// Pearson's correlation coefficient r (thesis Algorithm 2).
    #[default]
    R,
    /// Signed coefficient of determination r·|r| (for sensitivity runs).
    RSquared,
}

/// What the base controller is told when the correlation falls below the threshold
/// and control of cwnd returns to it (the thesis is silent, spec [AMB-6]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReleasePolicy {
    /// Re-anchor the base at the clamped window: call its `ssthresh` hook (CUBIC ends
    /// its epoch and sets W_max ≈ cwnd, so the next epoch grows from here instead of
    /// racing back to the pre-clamp window) and discard the returned value; then set
    /// ssthresh = cwnd so growth resumes in congestion avoidance, not slow start.
    #[default]
    Reanchor,
    /// Only stop overriding cwnd; the base keeps whatever state it had.
    Keep,
}

/// Tunables; `Default` gives the thesis' values (§3.4, Algorithm 3) and the spec's
/// resolutions where it has none.
#[derive(Clone, Debug, PartialEq)]
pub struct DelayCorrConfig {
    /// Observation window W (thesis default 32; 128 also tested). 2..=[`MAX_WINDOW`].
    pub window: usize,
    /// Bufferbloat is declared when the statistic is ≥ this (thesis 0.90). In (0, 1].
    pub threshold: f64,
    pub statistic: Statistic,
    /// Store an observation with probability min(1, k·W / (2·cwnd)) for an ACK of k
    /// segments, so the window spans ~2 cwnd rounds; off stores every observation.
    pub sampling: bool,
    /// Algorithm 3 dithering; off sets cwnd to the bare estimate.
    pub dither: bool,
    /// Low dither, packets (thesis 2), used while the window index is < W/2.
    pub dither_low: u32,
    /// High dither floor, packets (thesis 10).
    pub dither_high_min: u32,
    /// High dither = max(`dither_high_min`, estimate >> this) (thesis 4, i.e. 6.25 %).
    pub dither_high_shift: u32,
    /// Min-RTT filter window (thesis "e.g., 5 minutes"); `Duration::MAX` is a
    /// lifetime minimum.
    pub min_rtt_window: Duration,
    /// Smallest cwnd the layer ever sets, packets (Linux's floor of 2).
    pub min_cwnd: u32,
    pub release: ReleasePolicy,
    /// Seed of the sampling PRNG; the same seed and inputs give the same windows.
    pub seed: u64,
    /// Observe only: observe and consult as usual (r and the estimate are reported
    /// through `CongestionControl::diagnostics`) but never set cwnd, so the base runs
    /// exactly as without the layer. For measuring r on a path the base bloats (DC-3).
    pub passive: bool,
    /// brisk's pipe check (not in the thesis; issue 29): declare bufferbloat only if the
    /// window's largest in-flight plus the high dither reaches the pipe the fit's own
    /// slope implies, `min_rtt / m` packets, and the estimate plus its high dither
    /// reaches the pipe Little's law gives at the window's centroid (DC-3d). Off gives
    /// Algorithm 2 as written. See [`DelayCorrConfig::reaches_pipe`] and
    /// [`DelayCorrConfig::agrees_with_centroid`].
    pub pipe_check: bool,
}

impl Default for DelayCorrConfig {
    fn default() -> Self {
        DelayCorrConfig {
            window: 32,
            threshold: 0.90,
            statistic: Statistic::R,
            sampling: true,
            dither: true,
            dither_low: 2,
            dither_high_min: 10,
            dither_high_shift: 4,
            min_rtt_window: Duration::from_secs(300),
            min_cwnd: 2,
            release: ReleasePolicy::Reanchor,
            seed: 0,
            passive: false,
            pipe_check: true,
        }
    }
}

/// A configuration value outside what the layer supports.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DelayCorrConfigError {
    /// The window must hold 2..=MAX_WINDOW observations (the overflow proof needs the cap).
    #[error("delay-correlation window {0} outside 2..={MAX_WINDOW}")]
    Window(usize),
    /// The threshold must be a number in (0, 1].
    #[error("delay-correlation threshold {0} outside (0, 1]")]
    Threshold(f64),
    /// A shift of 32 or more would discard the whole estimate.
    #[error("delay-correlation dither shift {0} outside 0..=31")]
    DitherShift(u32),
    /// cwnd below one segment would stall the connection.
    #[error("delay-correlation minimum cwnd must be at least 1")]
    MinCwnd,
}

impl DelayCorrConfig {
    /// Check every field; for configuration parsers.
    pub fn validate(&self) -> Result<(), DelayCorrConfigError> {
        if !(2..=MAX_WINDOW).contains(&self.window) {
            return Err(DelayCorrConfigError::Window(self.window));
        }
        if !(self.threshold > 0.0 && self.threshold <= 1.0) {
            return Err(DelayCorrConfigError::Threshold(self.threshold));
        }
        if self.dither_high_shift > 31 {
            return Err(DelayCorrConfigError::DitherShift(self.dither_high_shift));
        }
        if self.min_cwnd == 0 {
            return Err(DelayCorrConfigError::MinCwnd);
        }
        Ok(())
    }

    /// The nearest valid configuration (out-of-range fields clamped, a non-number
    /// threshold replaced by the default).
    pub fn sanitized(mut self) -> Self {
        self.window = self.window.clamp(2, MAX_WINDOW);
        self.threshold = if self.threshold.is_nan() {
            DelayCorrConfig::default().threshold
        } else {
            self.threshold.clamp(f64::MIN_POSITIVE, 1.0)
        };
        self.dither_high_shift = self.dither_high_shift.min(31);
        self.min_cwnd = self.min_cwnd.max(1);
        self
    }

    /// The high dither of Algorithm 3 for `estimate`: max(`dither_high_min`,
    /// estimate >> `dither_high_shift`), whether or not dithering is on.
    pub fn high_dither(&self, estimate: u64) -> u64 {
        u64::from(self.dither_high_min).max(estimate >> self.dither_high_shift.min(63))
    }

    /// The pipe check (brisk's, issue 29). On a saturated FIFO, Little's law makes the
    /// RTT of a packet sent with x in flight `x·τ` (τ = the bottleneck's time per
    /// packet), a line through the origin: the fit's slope m is τ, so the path holds
    /// `pipe = min_rtt / m` packets without queueing, and Algorithm 2's estimate
    /// `(min_rtt − b)/m` equals it. Bursts *below* the pipe (slow-start rounds, the
    /// dither's own step, ACK-clock pairs) also queue for a moment and give r ≈ 1 with the
    /// same slope, but their line starts at the window the burst began from, so the
    /// estimate lands far below the pipe. Clamping there holds the link idle; the
    /// thesis' premise that the correlation vanishes below the BDP fails. Bufferbloat is
    /// therefore declared only while the estimate plus the layer's own probing amplitude
    /// (the high dither) reaches the pipe. Exact in `i128`.
    pub fn reaches_pipe(&self, estimate: u64, pipe: i128) -> bool {
        !self.pipe_check || i128::from(estimate.saturating_add(self.high_dither(estimate))) >= pipe
    }

    /// The second half of the pipe check (DC-3d): Algorithm 2's `estimate` plus its own
    /// high dither must reach the pipe that Little's law gives at the window's centroid,
    /// `min_rtt · Σx / Σy` ([`Moments::centroid_pipe`]). A window that mixes parallel
    /// lines (several slow-start rounds, each queueing from its own foot) or an idle
    /// cluster with a queued one (before and after a loss) still fits with r ≈ 1 and
    /// reaches the slope's pipe, but its estimate is the foot of the lowest line, far
    /// below the centroid's pipe. On a saturated FIFO the two agree. Always true with
    /// `pipe_check` off.
    pub fn agrees_with_centroid(&self, estimate: u64, centroid_pipe: i128) -> bool {
        !self.pipe_check
            || i128::from(estimate.saturating_add(self.high_dither(estimate))) >= centroid_pipe
    }

    /// Algorithm 3 (`bbr_dither`): the estimate plus the low dither while the
    /// window's next-overwrite `index` is in the first half of W, else plus
    /// max(`dither_high_min`, estimate >> `dither_high_shift`).
    pub fn dither(&self, estimate: u64, index: usize, w: usize) -> u64 {
        if !self.dither {
            return estimate;
        }
        let d = if index < (w >> 1) {
            u64::from(self.dither_low)
        } else {
            self.high_dither(estimate)
        };
        estimate.saturating_add(d)
    }
}

/// Read-only state for tracing and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DelayCorrSnapshot {
    /// The statistic at the last consult (r or signed r²).
    pub r: Option<f64>,
    /// The last undithered estimate (packets) of a consult that clamped.
    pub estimate: Option<u32>,
    /// Whether the layer owns cwnd right now.
    pub clamping: bool,
    /// Consults run (window full, not deferred).
    pub consults: u64,
    /// Consults that set cwnd.
    pub clamps: u64,
    /// Times control was handed back because the statistic fell below the threshold
    /// (or the pipe check failed).
    pub releases: u64,
    /// Consults with the statistic at or above the threshold that deferred to the base
    /// because the estimate fell short of the pipe ([`DelayCorrConfig::reaches_pipe`]).
    pub short_of_pipe: u64,
    /// Consults that reached the slope's pipe but deferred because the estimate fell
    /// short of Little's law at the window's centroid
    /// ([`DelayCorrConfig::agrees_with_centroid`]).
    pub off_centroid: u64,
    /// The pipe `min_rtt / m` (packets) of the last consult at or above the threshold.
    pub pipe: Option<u32>,
    /// Observations stored since creation.
    pub stored: u64,
    /// Observations currently in the window (≤ W).
    pub window_len: usize,
    /// The windowed minimum RTT the estimate aims at.
    pub min_rtt: Option<Duration>,
}

impl DelayCorrSnapshot {
    /// The part reported through the connection ([`CcDiagnostics::DelayCorrelation`]).
    pub fn diagnostics(&self) -> DelayCorrDiagnostics {
        DelayCorrDiagnostics {
            r: self.r,
            estimate: self.estimate,
            clamping: self.clamping,
            consults: self.consults,
            clamps: self.clamps,
        }
    }
}

/// What the layer reports through the connection (`TraceEvent::CcState`,
/// `TcpInfo::cc_diag`): enough to follow every consult (claim DC-3) in 48 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct DelayCorrDiagnostics {
    /// The statistic at the last consult (r, or signed r² under `Statistic::RSquared`);
    /// `None` before the window first fills.
    pub r: Option<f64>,
    /// The last undithered estimate (packets) of a consult that clamped.
    pub estimate: Option<u32>,
    /// Whether the layer owns cwnd right now.
    pub clamping: bool,
    /// Consults run so far; a change means a new consult (and a new `r`).
    pub consults: u64,
    /// Consults that set cwnd.
    pub clamps: u64,
}

/// The delay-correlation layer around a base controller.
#[derive(Debug)]
pub struct DelayCorrelation {
    base: Box<dyn CongestionControl>,
    cfg: DelayCorrConfig,
    window: ObservationWindow,
    min_rtt_us: WindowedMin,
    rng: ChaCha8Rng,
    clamping: bool,
    /// After an RTO, consults wait for an ACK of a segment first sent at or after this
    /// time (the connection keeps calling `cong_avoid` during RTO recovery).
    deferred_since: Option<Instant>,
    snap: DelayCorrSnapshot,
}

/// The layer's tag in labels: "cubic+dc".
pub const TAG: &str = "dc";

fn micros_u32(d: Duration) -> u32 {
    u32::try_from(d.as_micros()).unwrap_or(u32::MAX)
}

impl DelayCorrelation {
    /// Wrap `base`. An invalid `cfg` is [`DelayCorrConfig::sanitized`]; call
    /// [`DelayCorrConfig::validate`] first to reject it instead.
    pub fn new(base: Box<dyn CongestionControl>, cfg: DelayCorrConfig) -> Self {
        let cfg = cfg.sanitized();
        DelayCorrelation {
            base,
            window: ObservationWindow::new(cfg.window),
            min_rtt_us: WindowedMin::new(cfg.min_rtt_window),
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            clamping: false,
            deferred_since: None,
            snap: DelayCorrSnapshot::default(),
            cfg,
        }
    }

    pub fn config(&self) -> &DelayCorrConfig {
        &self.cfg
    }

    pub fn base(&self) -> &dyn CongestionControl {
        self.base.as_ref()
    }

    pub fn window(&self) -> &ObservationWindow {
        &self.window
    }

    pub fn is_clamping(&self) -> bool {
        self.clamping
    }

    pub fn snapshot(&self) -> DelayCorrSnapshot {
        DelayCorrSnapshot {
            clamping: self.clamping,
            window_len: self.window.len(),
            min_rtt: self.min_rtt_us.get().map(Duration::from_micros),
            ..self.snap
        }
    }

    /// Sampling (§3.4.1): keep an observation from an ACK of `k` segments with
    /// probability min(1, k·W / (2·cwnd)), so ~W are kept per two cwnd rounds.
    fn keep_sample(&mut self, k: u32, cwnd: u32) -> bool {
        if !self.cfg.sampling {
            return true;
        }
        let num = u64::from(k.max(1)) * self.window.capacity() as u64;
        let den = 2 * u64::from(cwnd.max(1));
        num >= den || self.rng.gen_range(0..den) < num
    }

    /// §3.2.3: one ACK gives at most one observation, from the most recently sent
    /// segment it covers. That segment's own send time gives the RTT, so x and y
    /// describe the same packet (the connection's `ack.rtt` comes from the *oldest*
    /// segment). Karn: a retransmitted segment's ACK is ambiguous, so it gives none.
    fn observe(&mut self, cc: &CcState, ack: &AckSample) {
        let Some(seg) = ack.newest_acked else { return };
        if seg.retransmit {
            return;
        }
        let rtt_us = micros_u32(ack.now.saturating_duration_since(seg.sent_at));
        // The min-RTT filter sees every clean sample, sampled or not, from the same
        // source as y, so the regression target is in the regression's own terms.
        self.min_rtt_us.update(ack.now, u64::from(rtt_us));
        if self.deferred_since.is_some_and(|t| seg.sent_at >= t) {
            self.deferred_since = None;
        }
        if self.keep_sample(ack.acked_segs, cc.cwnd) {
            self.window.push(seg.in_flight_at_send, rtt_us);
            self.snap.stored += 1;
        }
    }

    /// Algorithm 2 (`bbr_consult`) with Algorithm 3: the cwnd to impose, or `None` to
    /// defer to the base. Runs only once the window is full (warm-up).
    fn consult(&mut self, cc: &CcState) -> Option<u32> {
        if !self.window.is_full() || self.deferred_since.is_some() {
            return None;
        }
        self.snap.consults += 1;
        let m = self.window.moments();
        let r = m.r();
        let stat = match self.cfg.statistic {
            Statistic::R => r,
            Statistic::RSquared => r * r.abs(),
        };
        self.snap.r = Some(stat);
        if stat < self.cfg.threshold {
            return None;
        }
        // `min_rtt` exists: a full window means clean samples were seen.
        let target = self.min_rtt_us.get()?.min(u64::from(MAX_VALUE));
        let target = u32::try_from(target).unwrap_or(MAX_VALUE);
        // r ≥ threshold > 0 implies a positive slope, so this is `Some`.
        let est = m.x_at(target)?;
        // b ≥ min_rtt (a negative estimate) means even an empty pipe predicts queueing:
        // the least window consistent with the fit is zero; the dither still probes.
        let est = u64::try_from(est.clamp(0, i128::from(u32::MAX))).unwrap_or(0);
        let pipe = m.pipe(target)?;
        self.snap.pipe = Some(u32::try_from(pipe.clamp(0, i128::from(u32::MAX))).unwrap_or(0));
        let x_max = self
            .window
            .observations()
            .iter()
            .map(|o| o.rate)
            .max()
            .unwrap_or(0);
        if !self.cfg.reaches_pipe(u64::from(x_max), pipe) {
            self.snap.short_of_pipe += 1;
            return None;
        }
        // `m.n > 0` and a positive slope mean Σy > 0, so this is `Some`.
        let centroid = m.centroid_pipe(target)?;
        if !self.cfg.agrees_with_centroid(est, centroid) {
            self.snap.off_centroid += 1;
            return None;
        }
        self.snap.estimate = Some(u32::try_from(est).unwrap_or(u32::MAX));
        let cwnd = self
            .cfg
            .dither(est, self.window.index(), self.window.capacity())
            .min(u64::from(cc.cwnd_clamp.max(1)));
        let cwnd = u32::try_from(cwnd)
            .unwrap_or(u32::MAX)
            .max(self.cfg.min_cwnd);
        Some(cwnd)
    }

    /// Hand cwnd back to the base controller (see [`ReleasePolicy`]).
    fn release(&mut self, cc: &mut FlowCtx<'_>, now: Instant) {
        self.clamping = false;
        self.snap.releases += 1;
        if self.cfg.release == ReleasePolicy::Reanchor {
            let _ = self.base.ssthresh(cc, now, CongestionCause::Delay);
            cc.ssthresh = cc.cwnd.max(2);
            cc.cwnd_cnt = 0;
        }
    }
}

/// Overrides what the thesis's layer changes; `init`, `ssthresh`, `on_sent`,
/// `undo_cwnd` and `pacing_rate` are the base's (the trait's forwarding defaults).
impl super::layer::CcLayer for DelayCorrelation {
    fn tag(&self) -> &'static str {
        TAG
    }

    fn inner(&self) -> &dyn CongestionControl {
        self.base.as_ref()
    }

    fn inner_mut(&mut self) -> &mut dyn CongestionControl {
        self.base.as_mut()
    }

    /// Observations are collected on every ACK, in recovery too (only retransmitted
    /// segments are excluded); the base sees every ACK as before.
    fn on_ack(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        self.observe(cc, ack);
        self.base.on_ack(cc, ack);
    }

    /// The connection calls this only outside fast recovery and CWR, which is where
    /// the layer may act (PRR owns cwnd inside them).
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        match self.consult(cc) {
            Some(cwnd) if !self.cfg.passive => {
                if !self.clamping {
                    // Entering a bufferbloat episode: whatever happens next, the base
                    // must not resume slow start beyond the window just found.
                    self.clamping = true;
                    cc.ssthresh = cc.ssthresh.min(cwnd);
                }
                self.snap.clamps += 1;
                cc.cwnd = cwnd;
                cc.cwnd_cnt = 0;
            }
            _ => {
                if self.clamping {
                    self.release(cc, ack.now);
                }
                self.base.cong_avoid(cc, ack);
            }
        }
    }

    fn on_event(&mut self, cc: &mut FlowCtx<'_>, now: Instant, ev: CcEvent) {
        match ev {
            // Loss or ECN: the base has just computed ssthresh from the clamped cwnd
            // and recovery owns cwnd; the layer re-consults afterwards.
            CcEvent::EnterRecovery | CcEvent::EnterCwr => self.clamping = false,
            CcEvent::Rto => {
                self.clamping = false;
                self.deferred_since = Some(now);
            }
            _ => {}
        }
        self.base.on_event(cc, now, ev);
    }

    /// The layer's own state; a base's diagnostics are shadowed (none report any yet).
    fn own_diagnostics(&self) -> Option<CcDiagnostics> {
        Some(CcDiagnostics::DelayCorrelation(DelayCorrDiagnostics {
            clamping: self.clamping,
            ..self.snap.diagnostics()
        }))
    }
}
