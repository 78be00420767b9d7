//! Copa (Arun and Balakrishnan, "Copa: Practical Delay-Based Congestion Control for
//! the Internet", NSDI 2018; the arXiv version with the errata), as a controller:
//! `cc = "copa"`. Docs, with every ambiguity and the choice made:
//! `docs/mechanisms/copa.md`. No Linux module exists; this follows the paper's §2
//! (algorithm) and §2.2 (competitive mode), read beside the authors' simulator code
//! (`genericCC`, `markoviancc.cc` and `rtt-window.cc`) where the paper is silent.
//!
//! Per ACK (§2.1):
//! - `RTTmin` = min RTT over 10 s; `RTTstanding` = min RTT over the last srtt/2;
//!   `d_q = RTTstanding − RTTmin`;
//! - target rate `λ_t = 1/(δ·d_q)` packets/s, current rate `λ = cwnd/RTTstanding`;
//! - `λ ≤ λ_t`: `cwnd += v/(δ·cwnd)`, else `cwnd −= v/(δ·cwnd)` (per ACKed segment);
//! - velocity `v`: once per window the direction of cwnd's change since the window's
//!   start is compared with the last window's; once it has been the same for three
//!   windows `v` doubles each window, on a change it is 1 again;
//! - slow start: cwnd doubles per RTT (+1 per ACKed segment) until `λ > λ_t`;
//! - pacing at `2·cwnd/RTTstanding`.
//!
//! Competitive mode (§2.2): the queue of a Copa-only bottleneck empties every few
//! RTTs (Copa oscillates around its target). When it has not been *nearly empty*
//! within the last 5 RTTs, a buffer-filling flow shares the bottleneck: δ then adapts
//! AIMD-style on `1/δ` (+1 per RTT, halved on a loss, at most once per RTT), never
//! above the default δ. "Nearly empty": the least RTT of the last 5 RTTs is within
//! 10 % of the RTT range seen in them above `RTTmin` (the reference's `is_copa`), or
//! within one packet time (Copa's own, or the least ACK spacing per segment if
//! smaller; two once ACKs cover pairs, as delayed ACKs do: the sample's segment
//! waited behind its mate); judged only once RTTstanding has read a
//! nearly empty queue after slow start. RTT samples are Linux's `ca_rtt_us` (the
//! newest segment ACKed), so delayed ACKs add no packet time to them.
//! Velocity also resets at once when an ACK's decision turns against a `v > 1`
//! (Facebook's mvfst Copa; without it `v` overshoots the target by a window).
//!
//! Loss in default mode moves nothing (the paper's Copa reacts to delay only and is
//! "robust to non-congestive loss", §5.5): Copa sets cwnd itself on every ACK,
//! recovery included (`CcNeeds::cong_control`, no PRR). After an RTO it slow-starts
//! again from the connection's window of 1.
//!
//! RTTmin and RTTstanding are Kathleen Nichols' O(1) filters (Linux
//! `lib/win_minmax.c`, shared with BBR: `bbr::minmax`) over µs timestamps; the
//! mode detector's 5-RTT least and largest RTT are a fixed ring of half-RTT
//! buckets (`recent.rs`: Nichols' filter dropped troughs there), so an ACK costs a
//! fixed amount of work and no memory grows.

mod recent;
#[cfg(test)]
mod tests;

use self::recent::RecentRtt;
use super::bbr::minmax::MinMax;
use super::{AckSample, CcEvent, CcNeeds, CcState, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::{Duration, Instant};

/// `RTTmin`'s window (§2.1: "the smallest RTT over a long period of time, 10 s").
const MIN_RTT_WIN: Duration = Duration::from_secs(10);
/// Windows of the same direction before `v` starts doubling (§2.1).
const SAME_DIR_BEFORE_DOUBLING: u32 = 3;
/// §2.2: competitive mode when the queue was not nearly empty in this many RTTs.
const EMPTY_WITHIN_RTTS: u64 = 5;
/// §2.2 / `rtt-window.cc`: "nearly empty" is within this fraction of the range.
const NEARLY_EMPTY_FRACTION: f64 = 0.1;
/// The least cwnd, segments (the reference's `max(2, window)`).
const MIN_CWND: f64 = 2.0;
/// The largest `1/δ` competitive mode may reach: a bound so the arithmetic stays
/// finite when no loss ever comes; 4096 packets of queue per flow is beyond any
/// buffer a scenario configures by default.
pub const MAX_INV_DELTA: f64 = 4096.0;

/// Copa's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CopaConfig {
    /// δ in default mode (§2.1: 0.5; "1/δ is the number of packets per flow queued").
    pub delta: f64,
    /// Whether the competitive mode switch (§2.2) runs; off: δ is `delta` always.
    pub mode_switch: bool,
}

impl Default for CopaConfig {
    fn default() -> Self {
        CopaConfig {
            delta: 0.5,
            mode_switch: true,
        }
    }
}

impl CopaConfig {
    /// Checks the ranges; errors name the parameter and its range.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let lo = 1.0 / MAX_INV_DELTA;
        if !(self.delta.is_finite() && (lo..=1.0).contains(&self.delta)) {
            return Err((
                "delta",
                format!(
                    "{} is outside {lo}..=1 (the paper's default is 0.5)",
                    self.delta
                ),
            ));
        }
        Ok(())
    }
}

/// Copa's mode (§2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// δ is the configured default.
    Default,
    /// A buffer-filler shares the bottleneck: δ adapts AIMD-style.
    Competitive,
}

/// What Copa reports for traces and `TcpInfo`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct CopaDiagnostics {
    pub mode: Mode,
    pub slow_start: bool,
    /// δ now.
    pub delta: f64,
    /// The velocity parameter `v`.
    pub velocity: f64,
    /// RTTmin and RTTstanding, µs (0: none yet).
    pub min_rtt_us: u32,
    pub standing_rtt_us: u32,
    /// The target window `RTTstanding/(δ·d_q)`, segments (`f64::INFINITY` with no queue).
    pub target_cwnd: f64,
    /// Default → competitive switches so far.
    pub competitive_entries: u32,
    /// Time spent in competitive mode so far, ms (saturating at 49 days: a u32 keeps
    /// `CcDiagnostics`, and so every trace event, within 64 bytes).
    pub competitive_ms: u32,
    /// Times `v` doubled so far.
    pub velocity_doublings: u32,
}

/// The Copa controller.
#[derive(Clone, Debug)]
pub struct Copa {
    cfg: CopaConfig,
    /// cwnd with its fraction, segments.
    wnd: f64,
    slow_start: bool,
    /// `RTTmin` (10 s) and `RTTstanding` (srtt/2): running maxima over
    /// `u32::MAX − rtt`; the mode detector's least and largest RTT over 5 RTTs
    /// (`recent.rs`: exact to srtt/2, not Nichols' filter) and their last reading.
    min_rtt: MinMax,
    standing: MinMax,
    recent: RecentRtt,
    recent_lo: u32,
    recent_hi: u32,
    /// The least ACK spacing per segment over the same 5 RTTs, µs (`u32::MAX`:
    /// none), and the last ACK's time: one packet time at the bottleneck.
    recent_gap: u32,
    last_ack_at: Option<Instant>,
    /// Whether an ACK has covered more than one segment (delayed ACKs): the RTT
    /// sample, taken from the newest segment, then carries its burst mate's packet
    /// time, and "nearly empty" allows one packet more.
    paired_acks: bool,
    have_rtt: bool,
    /// The velocity parameter and its bookkeeping: the window's end (SND.NXT when
    /// it began), cwnd then, the last window's direction (+1/−1, 0 none) and how
    /// many windows in a row went that way.
    v: f64,
    window_end: u64,
    window_start_wnd: f64,
    last_dir: i8,
    same_dir: u32,
    mode: Mode,
    /// The detector judges only once RTTstanding has been nearly empty after slow
    /// start: the overshoot slow start leaves is Copa's own queue, not a competitor's.
    armed: bool,
    /// `1/δ` now.
    inv_delta: f64,
    /// The last competitive-mode additive step and loss halving.
    last_inv_step: Instant,
    last_loss_halving: Option<Instant>,
    /// Set by `ssthresh` (a loss or ECN), taken by the next ACK.
    loss_pending: bool,
    /// cwnd before an RTO, for an undo.
    prior_wnd: f64,
    competitive_entries: u32,
    competitive_since: Instant,
    competitive_total: Duration,
    velocity_doublings: u32,
    now: Instant,
}

impl Default for Copa {
    fn default() -> Self {
        Copa::new(CopaConfig::default())
    }
}

/// A time as the filters count it: µs, wrapping (differences stay right for 71 min).
fn t_us(now: Instant) -> u32 {
    now.as_micros() as u32
}

fn us(d: Duration) -> u32 {
    (d.as_micros()).min(u128::from(u32::MAX - 1)) as u32
}

/// The RTT Copa's filters take from an ACK: Linux's `ca_rtt_us` (`tcp_clean_rtx_queue`,
/// from `last_ackt`), measured from the newest segment the ACK covers, not the RTO
/// estimator's sample (`AckSample::rtt`: the oldest segment, or the echoed
/// timestamp). A delayed ACK for two back-to-back segments holds the first for the
/// second's serialisation at the bottleneck; the oldest segment's RTT carries that
/// wait, so at the trough of Copa's oscillation, with the queue empty, every sample
/// read one packet of queue and the §2.2 detector never saw the queue empty (the
/// paper's receivers ACK every packet). None when that segment was retransmitted
/// (Karn).
fn ca_rtt(ack: &AckSample) -> Option<Duration> {
    match ack.newest_acked {
        Some(n) if n.retransmit => None,
        Some(n) => {
            let rtt = ack.now.saturating_duration_since(n.sent_at);
            (!rtt.is_zero()).then_some(rtt)
        }
        // No segment's send state (a caller without it, as the unit scripts): the
        // estimator's sample.
        None => ack.rtt,
    }
}

impl Copa {
    /// A controller with `cfg` (δ is clamped into its range; scenario validation
    /// refuses out-of-range values first with [`CopaConfig::validate`]).
    pub fn new(mut cfg: CopaConfig) -> Self {
        if !cfg.delta.is_finite() {
            cfg.delta = 0.5;
        }
        cfg.delta = cfg.delta.clamp(1.0 / MAX_INV_DELTA, 1.0);
        Copa {
            cfg,
            wnd: 0.0,
            slow_start: true,
            min_rtt: MinMax::default(),
            standing: MinMax::default(),
            recent: RecentRtt::default(),
            recent_lo: 0,
            recent_hi: 0,
            recent_gap: u32::MAX,
            last_ack_at: None,
            paired_acks: false,
            have_rtt: false,
            v: 1.0,
            window_end: 0,
            window_start_wnd: 0.0,
            last_dir: 0,
            same_dir: 0,
            mode: Mode::Default,
            armed: false,
            inv_delta: 1.0 / cfg.delta,
            last_inv_step: Instant::ZERO,
            last_loss_halving: None,
            loss_pending: false,
            prior_wnd: 0.0,
            competitive_entries: 0,
            competitive_since: Instant::ZERO,
            competitive_total: Duration::ZERO,
            velocity_doublings: 0,
            now: Instant::ZERO,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// δ now.
    pub fn delta(&self) -> f64 {
        1.0 / self.inv_delta
    }

    pub fn velocity(&self) -> f64 {
        self.v
    }

    pub fn in_slow_start(&self) -> bool {
        self.slow_start
    }

    /// RTTmin, µs.
    fn min_rtt_us(&self) -> u32 {
        u32::MAX - self.min_rtt.get()
    }

    /// RTTstanding, µs.
    fn standing_us(&self) -> u32 {
        u32::MAX - self.standing.get()
    }

    /// The target window `RTTstanding/(δ·d_q)` in segments: `λ_t·RTTstanding`, the
    /// window at which the current rate `cwnd/RTTstanding` meets the target rate.
    /// Infinite with no queueing delay (the target rate is unbounded).
    pub fn target_cwnd(&self) -> f64 {
        if !self.have_rtt {
            return f64::INFINITY;
        }
        let standing = f64::from(self.standing_us());
        let dq = standing - f64::from(self.min_rtt_us());
        if dq <= 0.0 {
            return f64::INFINITY;
        }
        standing * self.inv_delta / dq
    }

    /// The filters take the sample `rtt` (µs) at `now`; `srtt` sets the short windows.
    fn update_filters(&mut self, now: Instant, rtt: u32, gap: Option<u32>, srtt: u32) {
        let t = t_us(now);
        let inv = u32::MAX - rtt.max(1);
        if !self.have_rtt {
            self.have_rtt = true;
            self.min_rtt.reset(t, inv);
            self.standing.reset(t, inv);
            self.recent.add(t, rtt, gap, 1);
            (self.recent_lo, self.recent_hi) = (rtt, rtt);
            return;
        }
        let srtt = srtt.max(rtt).max(1);
        let long = us(MIN_RTT_WIN);
        self.min_rtt.running_max(long, t, inv);
        self.standing.running_max((srtt / 2).max(1), t, inv);
        let recent = (srtt as u64 * EMPTY_WITHIN_RTTS).min(u64::from(long)) as u32;
        let bucket = (srtt / 2).max(1);
        self.recent.add(t, rtt, gap, bucket);
        if let Some((lo, hi, gap)) = self.recent.range(t, recent, bucket) {
            (self.recent_lo, self.recent_hi, self.recent_gap) = (lo, hi, gap);
        }
    }

    /// §2.2's detector: was the queue nearly empty within the last 5 RTTs? The
    /// least RTT of the last 5·srtt against the RTT range of the same span.
    fn update_mode(&mut self, now: Instant) {
        let min = f64::from(self.min_rtt_us());
        let lo = f64::from(self.recent_lo);
        let hi = f64::from(self.recent_hi);
        // An RTT sample cannot tell a queue shorter than one packet's transmission
        // from an empty one (Copa's own paced pairs and delayed ACKs leave up to
        // one packet time in every sample), so "nearly empty" allows at least one
        // packet time at Copa's current rate, RTTstanding/cwnd.
        // Copa's rate overstates the bottleneck's packet time when Copa has only
        // a share of the link (a few packets per RTT against a competitor): take
        // the least ACK spacing per segment of the window when it is smaller.
        let pkt =
            (f64::from(self.standing_us()) / self.wnd.max(1.0)).min(f64::from(self.recent_gap));
        // With delayed ACKs an ACK covers a pair the sender released together
        // (Linux's two-segment pacing bursts): the sample, from the pair's newer
        // segment, waited one packet time behind the older one even with no queue
        // (issue 35, third pass: the 40 ms trace's empty-queue troughs read 2.0 ms
        // above RTTmin, and whether one read RTTmin turned on cwnd's trough being
        // 35.99 or 36.00 packets). One packet for that wait, one for the queue a
        // whole-packet cwnd leaves at the trough.
        let pkts = if self.paired_acks { 2.0 } else { 1.0 };
        let pkt = pkt * pkts;
        let near = min + (NEARLY_EMPTY_FRACTION * (hi - min).max(0.0)).max(pkt);
        let full = lo > near;
        if !self.cfg.mode_switch || self.slow_start {
            return;
        }
        if !self.armed {
            // Slow start's overshoot can take more than 5 RTTs to drain at 1/δ
            // packets per RTT (v doubles only from the third window): wait until
            // RTTstanding itself reads a nearly empty queue before judging.
            self.armed = f64::from(self.standing_us()) <= near;
            return;
        }
        match (self.mode, full) {
            (Mode::Default, true) => {
                self.mode = Mode::Competitive;
                self.competitive_entries += 1;
                self.competitive_since = now;
                self.last_inv_step = now;
            }
            (Mode::Competitive, false) => {
                self.mode = Mode::Default;
                self.inv_delta = 1.0 / self.cfg.delta;
                self.competitive_total += now.saturating_duration_since(self.competitive_since);
            }
            _ => {}
        }
    }

    /// Competitive mode's AIMD on `1/δ` (§2.2): +1 per RTT; halved on a loss, once
    /// per RTT; never below the default's `1/δ` (δ never above the default).
    fn update_delta(&mut self, now: Instant, srtt: Duration) {
        let floor = 1.0 / self.cfg.delta;
        if self.mode != Mode::Competitive {
            self.loss_pending = false;
            return;
        }
        if self.loss_pending {
            self.loss_pending = false;
            let fresh = self
                .last_loss_halving
                .is_none_or(|t| now.saturating_duration_since(t) >= srtt);
            if fresh {
                self.inv_delta = (self.inv_delta / 2.0).max(floor);
                self.last_loss_halving = Some(now);
                self.last_inv_step = now;
            }
        }
        if now.saturating_duration_since(self.last_inv_step) >= srtt {
            self.inv_delta = (self.inv_delta + 1.0).min(MAX_INV_DELTA);
            self.last_inv_step = now;
        }
    }

    /// §2.1's velocity, once per window: the direction of cwnd's change since the
    /// window began against the last window's.
    fn end_window(&mut self, cc: &CcState) {
        let dir: i8 = if self.wnd > self.window_start_wnd {
            1
        } else if self.wnd < self.window_start_wnd {
            -1
        } else {
            0
        };
        if dir != 0 && dir == self.last_dir {
            self.same_dir += 1;
            if self.same_dir >= SAME_DIR_BEFORE_DOUBLING {
                self.v *= 2.0;
                self.velocity_doublings += 1;
            }
        } else {
            self.v = 1.0;
            self.same_dir = 1;
        }
        self.last_dir = dir;
        self.start_window(cc);
    }

    fn start_window(&mut self, cc: &CcState) {
        self.window_end = cc.snd_nxt.max(cc.snd_una + 1);
        self.window_start_wnd = self.wnd;
    }

    /// The per-ACK window update (§2.1 steps 1-3 and slow start). `cc` restarts
    /// the velocity window on a sudden turn.
    fn update_window(&mut self, cc: &CcState, acked: u32) {
        let target = self.target_cwnd();
        let n = f64::from(acked);
        if self.slow_start {
            if self.wnd < target {
                self.wnd += n;
                return;
            }
            self.slow_start = false;
            self.v = 1.0;
            self.same_dir = 0;
            self.last_dir = 0;
        }
        // `v` at most δ·cwnd: a window's change (about v/δ) never exceeds cwnd
        // (the reference halves `update_amt` above `window·δ`).
        let delta = 1.0 / self.inv_delta;
        let up = self.wnd <= target;
        // A sudden turn: this ACK moves cwnd against the direction `v` grew in.
        // `v` doubled for the old direction would throw cwnd far past the target
        // in the new one before the window's end notices; start over at 1 (as
        // Facebook's mvfst Copa does; the paper's "reset v to 1 when the direction
        // changes" read per ACK, not only at a window's end).
        let dir: i8 = if up { 1 } else { -1 };
        if self.v > 1.0 && dir != self.last_dir {
            self.v = 1.0;
            self.same_dir = 0;
            self.last_dir = dir;
            self.start_window(cc);
        }
        self.v = self.v.min((delta * self.wnd).max(1.0));
        let step = self.v * n / (delta * self.wnd.max(1.0));
        if up {
            self.wnd += step;
        } else {
            self.wnd -= step;
        }
    }

    fn diag(&self) -> CopaDiagnostics {
        let mut competitive = self.competitive_total;
        if self.mode == Mode::Competitive {
            competitive += self.now.saturating_duration_since(self.competitive_since);
        }
        CopaDiagnostics {
            mode: self.mode,
            slow_start: self.slow_start,
            delta: self.delta(),
            velocity: self.v,
            min_rtt_us: if self.have_rtt { self.min_rtt_us() } else { 0 },
            standing_rtt_us: if self.have_rtt { self.standing_us() } else { 0 },
            target_cwnd: self.target_cwnd(),
            competitive_entries: self.competitive_entries,
            competitive_ms: u32::try_from(competitive.as_millis()).unwrap_or(u32::MAX),
            velocity_doublings: self.velocity_doublings,
        }
    }
}

impl CongestionControl for Copa {
    fn name(&self) -> &'static str {
        "copa"
    }

    fn needs(&self) -> CcNeeds {
        CcNeeds {
            rate_samples: false,
            cong_control: true,
            pacing: true,
            timestamps: false,
        }
    }

    fn init(&mut self, cc: &mut FlowCtx<'_>, now: Instant) {
        *self = Copa::new(self.cfg);
        self.wnd = f64::from(cc.cwnd.max(1));
        self.now = now;
        self.start_window(cc);
    }

    /// Copa never grows cwnd here: it has `cong_control`.
    fn cong_avoid(&mut self, _cc: &mut FlowCtx<'_>, _ack: &AckSample) {}

    fn cong_control(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        self.now = ack.now;
        // The connection moved cwnd (an RTO's 1): start from its value.
        if cc.cwnd != self.wnd.floor() as u32 {
            self.wnd = f64::from(cc.cwnd);
        }
        // The ACK's spacing per segment from the last ACK: at least one packet
        // time at the bottleneck while the queue is busy.
        let gap = match self.last_ack_at {
            Some(prev) if ack.acked_segs > 0 => {
                Some(us(ack.now.saturating_duration_since(prev) / ack.acked_segs))
            }
            _ => None,
        };
        if ack.acked_segs > 0 {
            self.last_ack_at = Some(ack.now);
        }
        self.paired_acks |= ack.acked_segs > 1;
        if let Some(rtt) = ca_rtt(ack) {
            self.update_filters(ack.now, us(rtt), gap, us(cc.srtt));
        }
        if !self.have_rtt || ack.acked_segs == 0 {
            return;
        }
        let srtt = if cc.srtt.is_zero() {
            Duration::from_micros(u64::from(self.standing_us()))
        } else {
            cc.srtt
        };
        self.update_mode(ack.now);
        self.update_delta(ack.now, srtt);
        self.update_window(cc, ack.acked_segs);
        if cc.snd_una >= self.window_end {
            if self.slow_start {
                self.start_window(cc);
            } else {
                self.end_window(cc);
            }
        }
        let clamp = f64::from(cc.cwnd_clamp.max(2));
        self.wnd = self.wnd.clamp(MIN_CWND, clamp);
        cc.cwnd = self.wnd.floor() as u32;
    }

    /// Copa's window ignores the reduction: a loss (or an ECN echo) only halves
    /// `1/δ` in competitive mode (§2.2); ssthresh stays as it is.
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, cause: CongestionCause) -> u32 {
        if cause != CongestionCause::Delay {
            self.loss_pending = true;
        }
        cc.ssthresh
    }

    fn undo_cwnd(&mut self, cc: &mut FlowCtx<'_>, _prior_cwnd: u32) -> u32 {
        if self.prior_wnd > self.wnd {
            self.wnd = self.prior_wnd;
            self.slow_start = false;
        }
        self.prior_wnd = 0.0;
        (self.wnd.floor() as u32).max(cc.cwnd)
    }

    fn on_event(&mut self, cc: &mut FlowCtx<'_>, now: Instant, ev: CcEvent) {
        self.now = now;
        if ev == CcEvent::Rto {
            // The connection set cwnd to 1: slow start again, from scratch.
            self.prior_wnd = self.prior_wnd.max(self.wnd);
            self.wnd = f64::from(cc.cwnd.max(1));
            self.slow_start = true;
            self.armed = false;
            self.v = 1.0;
            self.same_dir = 0;
            self.last_dir = 0;
            self.start_window(cc);
        } else if ev == CcEvent::ExitRecovery {
            self.prior_wnd = 0.0;
        }
    }

    /// §2.1: pace at `2·cwnd/RTTstanding`; before any RTT sample, the connection's
    /// default rate.
    fn pacing_rate(&self, cc: &CcState) -> Option<u64> {
        if !self.have_rtt {
            return None;
        }
        let standing = u64::from(self.standing_us().max(1));
        let bytes = 2 * u64::from(cc.cwnd.max(1)) * u64::from(cc.mss);
        Some(
            (u128::from(bytes) * 1_000_000 / u128::from(standing)).min(u128::from(u64::MAX)) as u64,
        )
    }

    fn diagnostics(&self) -> Option<super::CcDiagnostics> {
        Some(super::CcDiagnostics::Copa(self.diag()))
    }
}
