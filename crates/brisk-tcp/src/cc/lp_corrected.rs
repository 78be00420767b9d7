//! TCP-LP, corrected (`cc = "lp"` with `[flow.tcp.lp] variant = "corrected"`):
//! the algorithm of Kuzmanovic and Knightly ("TCP-LP: a distributed algorithm for low
//! priority data transfer", INFOCOM 2003, §III; IEEE/ACM ToN 14(4), 2006) with the
//! one-way delay measured so that it works on 1 ms timestamps. Docs:
//! `docs/mechanisms/lp.md`, "The corrected variant".
//!
//! The faithful port (`lp.rs`, Linux 6.18 `tcp_lp.c`) never sees early congestion
//! here: its per-ACK peer-clock estimate is above 1000 Hz on most ACKs, so
//! `1000 / remote_hz` is 0, and otherwise the OWD carries the peer's random timestamp
//! offset, which overflows its 32-bit `sowd << 3`. This variant keeps the paper's
//! rules and Linux's structure (`tcp_lp_rtt_sample`, `tcp_lp_pkts_acked`,
//! `tcp_lp_cong_avoid`) and changes only how the delay is measured and two guards:
//! - **OWD in 64 bits, relative to a reference sample**: TSval and TSecr are unwrapped
//!   into signed 64-bit tick counts since the reference (each ACK adds its wrapping
//!   32-bit difference), so the peer's offset cancels and nothing overflows. The OWD
//!   is kept in µs: `ΔTSval · 10⁶ / remote_hz − ΔTSecr · 1000`.
//! - **The peer's clock rate over a long baseline**: assumed 1000 Hz at first (Linux
//!   since 4.13, FreeBSD and brisk tick at 1 ms; RFC 7323 §5.4 allows 1 ms to 1 s),
//!   then measured as `1000 · ΔTSval / ΔTSecr` since the first sample once the baseline
//!   reaches 1 s, and again at 2, 4, … 64 s, each time rounded to the nearest rate
//!   stacks use (1, 10, 100, 250, 300, 1000 Hz). A change of rate restarts the
//!   statistics at a new reference. Over a 1 s baseline a queue of up to 100 ms moves
//!   the ratio by at most 10 %, which rounding absorbs (250 and 300 Hz, 9 % apart, are
//!   told apart by the longer baselines).
//! - **min/max over the connection** (`d_min`, `d_max` of the paper; "always forget the
//!   max of the max" as Linux: the max is the second largest), not reset around the
//!   smoothed delay after each reaction (Linux's FIXME, meaningless for a relative OWD).
//! - **No sample from an ACK of the only segment in flight**: the receiver's
//!   delayed-ACK timer held it, and TSval is stamped when the ACK leaves, so its OWD
//!   carries up to the timer's wait; at cwnd 1 every ACK is such, and read as
//!   congestion they would hold the window at 1.
//! - **Two guards** of the early congestion indication `sowd > min + δ · (max − min)`
//!   (δ = 0.15): the range must span at least two ticks of the coarser clock
//!   (a spread within two ticks is the timestamps' quantisation, not a queue), and an
//!   ACK for data sent before the last reaction (TSecr before it) does not indicate
//!   again: it describes the queue the reaction is draining. And only an ACK that
//!   gave a sample indicates (Linux tests the stale `sowd` on every ACK), and the
//!   smoothed OWD restarts at the first sample of data sent after a reaction (Linux
//!   instead restarts min and max around it). So, as the paper says,
//!   persistent congestion takes the window to 1 in two round trips.
//! - **The range counts once the path has shown its depth** (a departure from the
//!   paper, whose `d_max` is simply the largest delay seen): early indications are
//!   taken only after a loss, an RTO or a CE mark. Before that, a flow alone has seen
//!   only the queue of its own slow-start bursts (a few 1 ms ticks), the threshold
//!   sits a fraction of a millisecond above the base delay, and the window cycled
//!   between 1 and about 4 (0.36 of 20 Mbit/s). A network signal means the queue
//!   reached the bottleneck's limit, so `max − min` then spans the buffer, which is
//!   the range the paper's `min + δ·(max − min)` assumes.
//!
//! The reaction and the inference period are Linux's and the paper's: halve, or set
//! cwnd to 1 for a second indication within the inference time-out (3 × now − TSecr,
//! three RTTs); no growth inside it; Reno's growth outside it and Reno's loss response.

use super::reno::{cong_avoid_ai, slow_start};
use super::{AckSample, AckTimestamps, CcNeeds, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::Instant;

/// The paper's δ, in percent (Linux `15 * (owd_max - owd_min) / 100`).
const DELTA_PCT: i64 = 15;
/// This side's timestamp clock (`conn::ts_clock`, Linux `TCP_TS_HZ`), Hz.
const LOCAL_HZ: i64 = 1000;
/// The peer's clock rate assumed until a baseline has measured it.
const ASSUMED_REMOTE_HZ: u32 = 1000;
/// The first baseline that measures the peer's rate, local ms; then doubled.
const FIRST_BASELINE_MS: i64 = 1000;
/// The last baseline (64 s): by then the estimate is within 0.2 % for any queue
/// under 100 ms, and the rate is settled.
const LAST_BASELINE_MS: i64 = 64_000;
/// Timestamp clock rates in use (RFC 7323 §5.4's range is 1 Hz to 1 kHz): brisk,
/// Linux ≥ 4.13 and FreeBSD tick at 1 kHz; Linux before 4.13 at HZ (100, 250, 300,
/// 1000); 10 and 1 Hz are the RFC's coarser end.
const KNOWN_HZ: [u32; 6] = [1, 10, 100, 250, 300, 1000];

/// The rate of `KNOWN_HZ` nearest to `hz` by ratio (the error of an estimate is
/// relative).
fn nearest_known_hz(hz: f64) -> u32 {
    let mut best = ASSUMED_REMOTE_HZ;
    let mut best_err = f64::INFINITY;
    for k in KNOWN_HZ {
        let err = (hz / f64::from(k)).ln().abs();
        if err < best_err {
            best = k;
            best_err = err;
        }
    }
    best
}

/// Which TCP-LP `cc = "lp"` builds (`[flow.tcp.lp] variant`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LpVariant {
    /// Linux 6.18's `tcp_lp.c` as it is (`lp.rs`): never yields on 1 ms timestamps.
    #[default]
    Linux,
    /// This module: the paper's algorithm with a 64-bit relative OWD.
    Corrected,
}

/// TCP-LP with a 64-bit relative OWD and a long-baseline peer clock rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LpCorrected {
    /// The previous ACK's TSval and TSecr (for the wrapping differences); `None`
    /// before the first timestamped ACK.
    last: Option<(u32, u32)>,
    /// Ticks of each clock since the first sample (the rate baseline).
    base_val: i64,
    base_ecr: i64,
    /// The baseline at which the rate is next measured, local ms.
    next_check_ms: i64,
    /// The peer's timestamp rate in use, Hz.
    remote_hz: u32,
    /// Ticks of each clock since the OWD reference (restarted with the rate).
    ref_val: i64,
    ref_ecr: i64,
    /// OWD statistics, µs relative to the reference; `sowd8` is the smoothed OWD
    /// × 8 (7/8 old + 1/8 new, as Linux's `sowd`). `None` before the first sample.
    owd_min: i64,
    owd_max: i64,
    owd_max_rsv: i64,
    sowd8: Option<i64>,
    /// Linux `last_drop` (local ms of the last reaction) and `inference` (ms).
    last_drop: Option<u32>,
    inference: u32,
    /// Linux `LP_WITHIN_INF`: growth stops while set.
    within_inf: bool,
    /// Restart the smoothed OWD at the first sample of data sent after the last
    /// reaction (the old value describes the queue the reaction drains).
    restart_sowd: bool,
    /// The path has signalled congestion (a loss, an RTO or a CE mark), so `owd_max`
    /// includes a queue that reached the bottleneck's limit: only then is
    /// `max − min` the queue's range and the threshold meaningful. Before, the range
    /// is the flow's own burst queue and early indications are not taken.
    depth_seen: bool,
    /// Reactions so far: halvings, drops to one (tests and docs).
    pub halvings: u64,
    pub drops_to_one: u64,
}

impl Default for LpCorrected {
    fn default() -> Self {
        LpCorrected {
            last: None,
            base_val: 0,
            base_ecr: 0,
            next_check_ms: FIRST_BASELINE_MS,
            remote_hz: ASSUMED_REMOTE_HZ,
            ref_val: 0,
            ref_ecr: 0,
            owd_min: i64::MAX,
            owd_max: i64::MIN,
            owd_max_rsv: i64::MIN,
            sowd8: None,
            last_drop: None,
            inference: 0,
            within_inf: false,
            restart_sowd: false,
            depth_seen: false,
            halvings: 0,
            drops_to_one: 0,
        }
    }
}

impl LpCorrected {
    /// The peer's timestamp rate in use, Hz.
    pub fn remote_hz(&self) -> u32 {
        self.remote_hz
    }

    /// The smoothed OWD and its min and max, µs relative to the reference (`None`
    /// before the first sample).
    pub fn owd_stats(&self) -> Option<(i64, i64, i64)> {
        self.sowd8.map(|s| (s >> 3, self.owd_min, self.owd_max))
    }

    /// Restarts the OWD statistics at the current sample (a new rate: the old
    /// values are in other units).
    fn restart_reference(&mut self) {
        self.ref_val = 0;
        self.ref_ecr = 0;
        self.owd_min = i64::MAX;
        self.owd_max = i64::MIN;
        self.owd_max_rsv = i64::MIN;
        self.sowd8 = None;
    }

    /// Advances the unwrapped clocks by this ACK's timestamps; measures the peer's
    /// rate when the baseline reaches the next check. (Linux's counterpart,
    /// `tcp_lp_remote_hz_estimator`, estimates per ACK pair.)
    fn advance_clocks(&mut self, ts: &AckTimestamps) {
        let Some((val, ecr)) = self.last else {
            self.last = Some((ts.tsval, ts.tsecr));
            return;
        };
        // Wrapping 32-bit differences, read as signed: a reordered ACK steps back.
        let dv = i64::from(ts.tsval.wrapping_sub(val) as i32);
        let de = i64::from(ts.tsecr.wrapping_sub(ecr) as i32);
        self.last = Some((ts.tsval, ts.tsecr));
        self.base_val += dv;
        self.base_ecr += de;
        self.ref_val += dv;
        self.ref_ecr += de;
        if self.next_check_ms <= LAST_BASELINE_MS && self.base_ecr >= self.next_check_ms {
            self.next_check_ms *= 2;
            let hz = self.base_val as f64 * LOCAL_HZ as f64 / self.base_ecr as f64;
            if hz > 0.0 {
                let hz = nearest_known_hz(hz);
                if hz != self.remote_hz {
                    self.remote_hz = hz;
                    self.restart_reference();
                }
            }
        }
    }

    /// The OWD of this ACK, µs relative to the reference (TSval in the peer's
    /// ticks, TSecr in this side's ms; the offsets cancel in the differences).
    fn owd_us(&self) -> i64 {
        self.ref_val * 1_000_000 / i64::from(self.remote_hz) - self.ref_ecr * 1000
    }

    /// Linux `tcp_lp_rtt_sample`: min, the reserved max, the smoothed OWD.
    fn rtt_sample(&mut self) {
        let owd = self.owd_us();
        self.owd_min = self.owd_min.min(owd);
        if owd > self.owd_max {
            if owd > self.owd_max_rsv {
                self.owd_max = if self.owd_max_rsv == i64::MIN {
                    owd
                } else {
                    self.owd_max_rsv
                };
                self.owd_max_rsv = owd;
            } else {
                self.owd_max = owd;
            }
        }
        self.sowd8 = Some(match self.sowd8 {
            Some(s) => s + owd - (s >> 3),
            None => owd << 3,
        });
    }

    /// The paper's early congestion indication: the smoothed OWD above
    /// `min + δ·(max − min)`, over a range of at least two ticks of the coarser clock.
    fn early_indication(&self) -> bool {
        if !self.depth_seen {
            return false;
        }
        let Some(s) = self.sowd8 else {
            return false;
        };
        if self.owd_max == i64::MIN {
            return false;
        }
        let range = self.owd_max - self.owd_min;
        let tick_us = 1_000_000 / i64::from(self.remote_hz).min(LOCAL_HZ);
        range >= 2 * tick_us && (s >> 3) > self.owd_min + DELTA_PCT * range / 100
    }

    /// Linux `tcp_lp_pkts_acked`; returns the new cwnd when TCP-LP reacts.
    pub fn pkts_acked(&mut self, ts: &AckTimestamps, rtt_sampled: bool, cwnd: u32) -> Option<u32> {
        let now = ts.now;
        self.advance_clocks(ts);
        let after_drop = self
            .last_drop
            .is_none_or(|d| (ts.tsecr.wrapping_sub(d) as i32) >= 0);
        if rtt_sampled {
            if self.restart_sowd && after_drop {
                self.restart_sowd = false;
                self.sowd8 = None;
            }
            self.rtt_sample();
        }
        let rtt = now.wrapping_sub(ts.tsecr);
        if (rtt as i32) > 0 {
            self.inference = rtt.saturating_mul(3);
        }
        self.within_inf = self
            .last_drop
            .is_some_and(|d| now.wrapping_sub(d) < self.inference);
        // Only a fresh sample indicates: an ACK without one would re-read the last
        // smoothed value, and at cwnd 1 (no samples) react to it on every ACK.
        if !rtt_sampled || !self.early_indication() {
            return None;
        }
        // Data sent before the last reaction shows the queue that reaction drains.
        if !after_drop {
            return None;
        }
        let cwnd = if self.within_inf {
            self.drops_to_one += 1;
            1
        } else {
            self.halvings += 1;
            (cwnd >> 1).max(1)
        };
        self.last_drop = Some(now);
        self.restart_sowd = true;
        Some(cwnd)
    }
}

impl CongestionControl for LpCorrected {
    fn name(&self) -> &'static str {
        "lp-corrected"
    }

    fn needs(&self) -> CcNeeds {
        CcNeeds {
            timestamps: true,
            ..CcNeeds::default()
        }
    }

    fn init(&mut self, _cc: &mut FlowCtx<'_>, _now: Instant) {
        *self = LpCorrected::default();
    }

    /// Linux `tcp_lp_pkts_acked`: sets cwnd on a reaction (the trait's exception
    /// for TCP-LP, as `lp.rs`).
    fn on_ack(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        let Some(ts) = ack.ts else {
            return;
        };
        // An ACK of the only segment in flight was held by the receiver's
        // delayed-ACK timer (RFC 1122 §4.2.3.2; TSval is stamped when the ACK leaves):
        // its OWD carries that wait, not the path's queue. At cwnd 1 such samples
        // would read as lasting congestion and hold the window at 1.
        let delayed = ack.acked_segs <= 1 && ack.prior_in_flight <= 1;
        let sampled = ack.rtt.is_some_and(|r| r.as_micros() > 0) && !delayed;
        if let Some(cwnd) = self.pkts_acked(&ts, sampled, cc.cwnd) {
            cc.cwnd = cwnd;
        }
    }

    /// Linux `tcp_lp_cong_avoid`: Reno's, except inside an inference period.
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        if self.within_inf || !cc.cwnd_limited {
            return;
        }
        let mut acked = ack.acked_segs;
        if cc.in_slow_start() {
            acked = slow_start(cc, acked);
            if acked == 0 {
                return;
            }
        }
        let w = cc.cwnd;
        cong_avoid_ai(cc, w, acked);
    }

    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, cause: CongestionCause) -> u32 {
        // A network signal shows the bottleneck's limit; a delay signal (a layer's)
        // does not.
        if cause != CongestionCause::Delay {
            self.depth_seen = true;
        }
        super::reno::reno_ssthresh(cc.cwnd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(tsval: u32, tsecr: u32, now: u32) -> AckTimestamps {
        AckTimestamps { tsval, tsecr, now }
    }

    /// An ACK of a segment sent at local `sent` ms that reached the peer after `owd`
    /// ms, the ACK arriving `back` ms later; the peer's clock has a large offset (the
    /// case Linux's 32-bit `sowd` loses) and ticks at `hz`.
    fn ack(
        lp: &mut LpCorrected,
        sent: u32,
        owd: u32,
        back: u32,
        hz: u32,
        cwnd: u32,
    ) -> Option<u32> {
        let offset = 0xf000_0000u32;
        let at_peer_ms = u64::from(sent + owd);
        let tsval = offset.wrapping_add((at_peer_ms * u64::from(hz) / 1000) as u32);
        lp.pkts_acked(&ts(tsval, sent, sent + owd + back), true, cwnd)
    }

    #[test]
    fn a_large_peer_offset_still_gives_the_relative_owd() {
        let mut lp = LpCorrected::default();
        for k in 0..20 {
            assert_eq!(ack(&mut lp, 1000 + k * 10, 20, 20, 1000, 40), None);
        }
        // Constant 20 ms OWD: relative OWD 0 throughout, no indication.
        assert_eq!(lp.owd_stats(), Some((0, 0, 0)));
        // A 30 ms queue builds: OWD +30 ms; the smoothed value follows.
        for k in 20..40 {
            let _ = ack(&mut lp, 1000 + k * 10, 50, 20, 1000, 40);
        }
        let (s, min, max) = lp.owd_stats().unwrap();
        assert_eq!((min, max), (0, 30_000));
        assert!(s > 25_000, "{s}");
    }

    #[test]
    fn early_indication_halves_then_a_second_within_inference_drops_to_one() {
        let mut lp = LpCorrected::default();
        // Base OWD 20 ms, RTT 40 ms (relative OWD 0); a range of 100 ms seen before
        // (a full buffer): threshold 15 ms over min.
        for k in 0..10 {
            assert_eq!(ack(&mut lp, 1000 + k * 10, 20, 20, 1000, 40), None);
        }
        lp.owd_max = 100_000;
        lp.owd_max_rsv = 100_000;
        lp.depth_seen = true;
        // A 40 ms queue: the smoothed OWD passes 15 ms on the fourth ACK.
        let mut first = None;
        for k in 0..20 {
            if let Some(c) = ack(&mut lp, 1500 + k * 10, 60, 20, 1000, 40) {
                first = Some((k, c));
                break;
            }
        }
        let (k, c) = first.expect("no early indication");
        assert_eq!((k, c), (3, 20), "halved on the fourth");
        assert_eq!(lp.halvings, 1);
        let drop_at = 1500 + k * 10 + 80;
        // ACKs for data sent before the reaction do not indicate again.
        assert_eq!(ack(&mut lp, drop_at - 70, 60, 20, 1000, 20), None);
        // Data sent after it, still queued 40 ms, within 3 RTTs (RTT 80 ms,
        // inference 240 ms): cwnd 1.
        assert_eq!(ack(&mut lp, drop_at + 5, 60, 20, 1000, 20), Some(1));
        assert_eq!(lp.drops_to_one, 1);
        assert!(lp.within_inf);
    }

    #[test]
    fn a_spread_within_two_ticks_is_no_indication() {
        let mut lp = LpCorrected {
            depth_seen: true,
            ..LpCorrected::default()
        };
        // OWD alternating 20 and 21 ms (tick quantisation): never an indication.
        for k in 0..200 {
            assert_eq!(ack(&mut lp, 1000 + k * 10, 20 + k % 2, 20, 1000, 40), None);
        }
    }

    #[test]
    fn no_indication_before_the_path_has_shown_its_depth() {
        let mut lp = LpCorrected::default();
        // Base OWD 20 ms, then the flow's own 5 ms burst queue: a range of 5 ms and a
        // smoothed OWD well above min + 15 %, but no loss yet: no indication.
        for k in 0..10 {
            assert_eq!(ack(&mut lp, 1000 + k * 10, 20, 20, 1000, 40), None);
        }
        for k in 10..40 {
            assert_eq!(ack(&mut lp, 1000 + k * 10, 25, 20, 1000, 40), None);
        }
        // A loss (Reno's ssthresh) shows the depth: the same queue now indicates.
        let mut cc = crate::cc::CcState::new(40, 1448);
        let _ = lp.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Loss,
        );
        assert_eq!(ack(&mut lp, 1400, 25, 20, 1000, 40), Some(20));
    }

    #[test]
    fn the_peer_rate_is_measured_over_a_long_baseline() {
        let mut lp = LpCorrected::default();
        // A 100 Hz peer with a constant OWD: assumed 1 kHz first, then measured.
        for k in 0..300 {
            let _ = ack(&mut lp, 1000 + k * 10, 20, 20, 100, 40);
        }
        assert_eq!(lp.remote_hz(), 100);
        let (s, min, max) = lp.owd_stats().unwrap();
        // Relative to the new reference the OWD is flat within the peer's 10 ms tick.
        assert!(
            max - min <= 10_000 && (min..=max).contains(&s),
            "{s} {min} {max}"
        );
        // A 250 Hz peer with queueing noise of up to 60 ms: still 250.
        let mut lp = LpCorrected::default();
        for k in 0..2000u32 {
            let _ = ack(&mut lp, 1000 + k * 10, 20 + (k * 37) % 60, 20, 250, 40);
        }
        assert_eq!(lp.remote_hz(), 250);
        assert_eq!(nearest_known_hz(1180.0), 1000);
        assert_eq!(nearest_known_hz(285.0), 300);
    }

    #[test]
    fn without_timestamps_it_is_reno() {
        let mut lp = LpCorrected::default();
        let mut cc = crate::cc::CcState::new(20, 1448);
        cc.ssthresh = 10;
        cc.cwnd_limited = true;
        let a = AckSample {
            acked_segs: 1,
            ..Default::default()
        };
        for _ in 0..20 {
            lp.on_ack(&mut FlowCtx::alone(&mut cc), &a);
            lp.cong_avoid(&mut FlowCtx::alone(&mut cc), &a);
        }
        assert_eq!(cc.cwnd, 21);
        assert!(lp.needs().timestamps);
    }
}
