//! LEDBAT, Low Extra Delay Background Transport (RFC 6817), as a controller:
//! `cc = "ledbat"`. Docs: `docs/mechanisms/ledbat.md`.
//!
//! RFC 6817 §2.4.2's sender, per ACK: the delay sample updates the base-delay history
//! (per-minute minima, BASE_HISTORY of them) and the current-delay filter (the last
//! CURRENT_FILTER samples, FILTER = MIN); then
//! `queuing_delay = FILTER(current_delays) − MIN(base_delays)`,
//! `off_target = (TARGET − queuing_delay)/TARGET`,
//! `cwnd += GAIN·off_target·acked/cwnd` (segments here; the RFC counts bytes),
//! capped at `flightsize + ALLOWED_INCREASE` and floored at MIN_CWND. On loss,
//! `cwnd = max(cwnd/2, MIN_CWND)` (§2.4.2 "on loss"), once per window by the
//! connection's own reduction path.
//!
//! Parameters (§2.5): TARGET "MUST be 100 ms or less": default 100 ms, the largest
//! allowed, and the value the RFC's own discussion of TARGET argues for; Linux-like LEDBAT variants (the out-of-tree `tcp_ledbat.c`, LEDBAT++)
//! choose smaller targets, settable here. GAIN "MUST be 1 or less": 1.
//! BASE_HISTORY 10, CURRENT_FILTER 4, ALLOWED_INCREASE 1, MIN_CWND 2 (SHOULD values).
//!
//! Delay measurement: the RFC measures one-way delay with sender timestamps. A TCP
//! congestion hook here gets the RTT sample of each ACK, so the delay is the **RTT**,
//! as LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus, Windows) does: base and current
//! delay share the reverse path, so its constant part cancels; reverse-path queueing
//! counts as forward (documented limitation). The one-way variant needs the peer's
//! TSval in the hook (the same feed SBD needs, `sbd/mod.rs`).
//!
//! No slow start: RFC 6817's pseudo-code grows cwnd only by the linear controller from
//! the initial window; the connection's IW applies (the RFC asks it be no larger than
//! TCP's). Linux has no mainline LEDBAT; we follow the RFC's pseudo-code, not a
//! kernel function. Known and kept: the latecomer advantage (RFC 6817 §4, its
//! discussion of fairness among LEDBAT flows; Rossi et al. 2010): a flow that starts while another holds the queue at TARGET takes
//! that queue for base delay and starves the first (test `latecomer_*`).

pub mod checks;
#[cfg(test)]
mod tests;

use super::{AckSample, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::{Duration, Instant};

/// RFC 6817 §2.5's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct LedbatConfig {
    /// TARGET: the queuing delay LEDBAT aims for (≤ 100 ms).
    pub target: Duration,
    /// GAIN (≤ 1).
    pub gain: f64,
    /// BASE_HISTORY: per-minute minima kept.
    pub base_history: usize,
    /// CURRENT_FILTER: samples the current-delay filter keeps.
    pub current_filter: usize,
    /// ALLOWED_INCREASE, segments.
    pub allowed_increase: u32,
    /// MIN_CWND, segments.
    pub min_cwnd: u32,
}

impl Default for LedbatConfig {
    fn default() -> Self {
        LedbatConfig {
            target: Duration::from_millis(100),
            gain: 1.0,
            base_history: 10,
            current_filter: 4,
            allowed_increase: 1,
            min_cwnd: 2,
        }
    }
}

/// Longest histories the fixed buffers hold.
pub const MAX_BASE_HISTORY: usize = 16;
pub const MAX_CURRENT_FILTER: usize = 16;

impl LedbatConfig {
    /// Checks the RFC's MUSTs; errors name the parameter and its range.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let ms = self.target.as_micros() as f64 / 1000.0;
        if !(1.0..=100.0).contains(&ms) {
            return Err(("target", format!("{ms} ms is outside 1..=100 ms")));
        }
        if !(self.gain > 0.0 && self.gain <= 1.0) {
            return Err(("gain", format!("{} is outside (0, 1]", self.gain)));
        }
        if !(1..=MAX_BASE_HISTORY).contains(&self.base_history) {
            return Err((
                "base_history",
                format!("{} is outside 1..=16", self.base_history),
            ));
        }
        if !(1..=MAX_CURRENT_FILTER).contains(&self.current_filter) {
            return Err((
                "current_filter",
                format!("{} is outside 1..=16", self.current_filter),
            ));
        }
        if self.allowed_increase == 0 {
            return Err(("allowed_increase", "0 is outside 1..".into()));
        }
        if !(1..=4).contains(&self.min_cwnd) {
            return Err(("min_cwnd", format!("{} is outside 1..=4", self.min_cwnd)));
        }
        Ok(())
    }
}

/// A fixed ring of delays, µs.
#[derive(Clone, Copy, Debug)]
struct Delays<const N: usize> {
    v: [u64; N],
    len: usize,
    next: usize,
}

impl<const N: usize> Delays<N> {
    const EMPTY: Self = Delays {
        v: [0; N],
        len: 0,
        next: 0,
    };
    fn push(&mut self, x: u64, cap: usize) {
        self.v[self.next] = x;
        self.next = (self.next + 1) % cap;
        self.len = (self.len + 1).min(cap);
    }
    /// The entry pushed last.
    fn last_mut(&mut self, cap: usize) -> Option<&mut u64> {
        (self.len > 0).then(|| &mut self.v[(self.next + cap - 1) % cap])
    }
    fn min(&self) -> Option<u64> {
        self.v[..self.len].iter().copied().min()
    }
}

/// The LEDBAT controller.
#[derive(Clone, Debug)]
pub struct Ledbat {
    cfg: LedbatConfig,
    /// Per-minute minima (RFC `base_delays`).
    base: Delays<MAX_BASE_HISTORY>,
    /// When the newest minute bucket began (RFC `last_rollover`).
    last_rollover: Option<Instant>,
    /// Recent samples (RFC `current_delays`).
    current: Delays<MAX_CURRENT_FILTER>,
    /// cwnd with its fraction, segments.
    wnd: f64,
}

impl Default for Ledbat {
    fn default() -> Self {
        Ledbat::new(LedbatConfig::default())
    }
}

impl Ledbat {
    /// A controller with `cfg` (out-of-range values are clamped into the buffers;
    /// scenario validation refuses them first with [`LedbatConfig::validate`]).
    pub fn new(mut cfg: LedbatConfig) -> Self {
        cfg.base_history = cfg.base_history.clamp(1, MAX_BASE_HISTORY);
        cfg.current_filter = cfg.current_filter.clamp(1, MAX_CURRENT_FILTER);
        cfg.min_cwnd = cfg.min_cwnd.max(1);
        Ledbat {
            cfg,
            base: Delays::EMPTY,
            last_rollover: None,
            current: Delays::EMPTY,
            wnd: 0.0,
        }
    }

    /// RFC `update_base_delay`: a new bucket each minute, else the newest bucket's
    /// minimum.
    fn update_base_delay(&mut self, now: Instant, d: u64) {
        let minute = Duration::from_secs(60);
        let roll = self
            .last_rollover
            .is_none_or(|t| now.saturating_duration_since(t) >= minute);
        if roll {
            self.last_rollover = Some(now);
            self.base.push(d, self.cfg.base_history);
        } else if let Some(tail) = self.base.last_mut(self.cfg.base_history) {
            *tail = (*tail).min(d);
        }
    }

    /// The current estimate of queuing delay, if any sample has arrived.
    pub fn queuing_delay(&self) -> Option<Duration> {
        let cur = self.current.min()?;
        let base = self.base.min()?;
        Some(Duration::from_micros(cur.saturating_sub(base)))
    }

    /// MIN(base_delays).
    pub fn base_delay(&self) -> Option<Duration> {
        self.base.min().map(Duration::from_micros)
    }
}

impl CongestionControl for Ledbat {
    fn name(&self) -> &'static str {
        "ledbat"
    }

    fn init(&mut self, cc: &mut FlowCtx<'_>, _now: Instant) {
        self.wnd = f64::from(cc.cwnd);
    }

    fn on_ack(&mut self, _cc: &mut FlowCtx<'_>, ack: &AckSample) {
        if let Some(rtt) = ack.rtt {
            let d = rtt.as_micros() as u64;
            self.update_base_delay(ack.now, d);
            self.current.push(d, self.cfg.current_filter);
        }
    }

    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        // The connection changed cwnd (a reduction, RTO, undo): start from its value.
        if self.wnd.floor() as u32 != cc.cwnd {
            self.wnd = f64::from(cc.cwnd);
        }
        let Some(q) = self.queuing_delay() else {
            return;
        };
        let target = self.cfg.target.as_micros() as f64;
        let off_target = (target - q.as_micros() as f64) / target;
        let w = self.wnd.max(1.0);
        self.wnd += self.cfg.gain * off_target * f64::from(ack.acked_segs) / w;
        let max_allowed = f64::from(
            ack.prior_in_flight
                .saturating_add(self.cfg.allowed_increase),
        );
        self.wnd = self
            .wnd
            .min(max_allowed)
            .max(f64::from(self.cfg.min_cwnd))
            .min(f64::from(cc.cwnd_clamp.max(1)));
        cc.cwnd = self.wnd.floor() as u32;
    }

    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, _cause: CongestionCause) -> u32 {
        // cwnd = min(cwnd, max(cwnd/2, MIN_CWND)).
        (cc.cwnd / 2).max(self.cfg.min_cwnd).min(cc.cwnd.max(1))
    }
}
