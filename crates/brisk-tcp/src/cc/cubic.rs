//! CUBIC (RFC 9438) as Linux 6.x runs it (`net/ipv4/tcp_cubic.c`), with HyStart.
//! See `docs/mechanisms/cubic.md` for the algorithm, constants and departures from
//! the RFC.
//!
//! All arithmetic is integer and fixed-point with Linux's scalings, so a run is
//! bit-for-bit reproducible:
//! - windows in segments; β = 717/1024 ≈ 0.7; C = 410/1024 ≈ 0.4 (`bic_scale` 41 × 10);
//! - CUBIC time in units of 2⁻¹⁰ s (`BICTCP_HZ` = 10), the epoch clock in 1 ms jiffies
//!   (HZ = 1000), HyStart's clock in µs.
//!
//! Window growth (RFC 9438 §4.2): after a reduction, a new epoch starts at the first
//! ACK in congestion avoidance. The target `W(t + min_rtt) = C·(t + min_rtt − K)³ +
//! W_max` with `K = ∛((W_max − cwnd)/C)` sets `cnt`, the ACKs per +1 segment, which
//! `tcp_cong_avoid_ai` applies. The Reno-friendly estimate (§4.3) caps `cnt` when AIMD
//! with α = 3(1−β)/(1+β) would be faster. HyStart (§4.10 refers to HyStart++; Linux
//! runs the original HyStart) ends slow start early on a long ACK train or an RTT rise.

#[cfg(test)]
mod tests;

use super::reno::{cong_avoid_ai, slow_start};
use super::{AckSample, CcEvent, CcState, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::{Duration, Instant};

/// Fixed-point scale of β (Linux `BICTCP_BETA_SCALE`).
const BETA_SCALE: u32 = 1024;
/// CUBIC time unit is 2^-BICTCP_HZ s (Linux `BICTCP_HZ`).
const BICTCP_HZ: u32 = 10;
/// Linux jiffies per second; the epoch clock and update throttles run on it.
const HZ: u64 = 1000;
const NS_PER_JIFFY: u64 = 1_000_000_000 / HZ;
/// HyStart needs this many RTT samples per round before judging (Linux
/// `HYSTART_MIN_SAMPLES`).
const HYSTART_MIN_SAMPLES: u8 = 8;
/// HyStart delay-increase threshold bounds, µs (`HYSTART_DELAY_MIN`/`_MAX`).
const HYSTART_DELAY_MIN_US: u32 = 4_000;
const HYSTART_DELAY_MAX_US: u32 = 16_000;

/// Linux's module parameters for `tcp_cubic`, defaults as shipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CubicConfig {
    /// Multiplicative decrease, /1024 (717 ≈ 0.7).
    pub beta: u32,
    /// C = bic_scale × 10 / 1024 (41 → 0.4004).
    pub bic_scale: u32,
    /// Lower W_max further when a loss comes before the previous W_max was regained.
    pub fast_convergence: bool,
    /// The Reno-friendly region (RFC 9438 §4.3).
    pub tcp_friendliness: bool,
    /// HyStart ACK-train detection.
    pub hystart_ack_train: bool,
    /// HyStart delay-increase detection.
    pub hystart_delay: bool,
    /// HyStart runs only once cwnd reaches this many segments.
    pub hystart_low_window: u32,
    /// ACKs closer together than this continue an ACK train.
    pub hystart_ack_delta: Duration,
    /// Whether the sender paces (Linux `sk_pacing_status`); unpaced senders compare
    /// the ACK train against half the min RTT.
    pub paced: bool,
    /// Largest TSO burst, bytes (Linux `sk_gso_max_size`), for HyStart's ACK-train
    /// cushion; 0 turns the cushion off.
    pub gso_max_size: u32,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            beta: 717,
            bic_scale: 41,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart_ack_train: true,
            hystart_delay: true,
            hystart_low_window: 16,
            hystart_ack_delta: Duration::from_millis(2),
            paced: false,
            gso_max_size: 65_536,
        }
    }
}

/// Why HyStart ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HystartExit {
    AckTrain,
    Delay,
}

/// HyStart's per-round state (Linux `round_start`, `end_seq`, `last_ack`, `curr_rtt`,
/// `sample_cnt`, `found`).
#[derive(Clone, Debug, Default)]
struct Hystart {
    found: Option<HystartExit>,
    /// µs when the current round began.
    round_start_us: u64,
    /// µs of the last ACK in the current ACK train.
    last_ack_us: u64,
    /// Minimum RTT seen this round, µs.
    curr_rtt_us: u32,
    sample_cnt: u8,
    /// `CcState::delivered` when the round began: an ACK for a segment sent after
    /// that ends the round (Linux: snd_una passes the snd_nxt of the round start).
    round_delivered: u64,
    /// Fallback when the ACK carries no send-time info: the round ends once more than
    /// this many segments have been delivered.
    round_end_delivered: u64,
}

/// CUBIC congestion control.
#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    /// Derived constants (Linux `cubictcp_register`).
    beta_scale: u32,
    cube_rtt_scale: u64,
    cube_factor: u64,

    /// ACKs per +1 segment of cwnd.
    cnt: u32,
    /// W_max, segments.
    last_max_cwnd: u32,
    /// cwnd and jiffy of the last `cnt` computation (update throttle).
    last_cwnd: u32,
    last_time: u64,
    /// W at the plateau of the curve, segments.
    origin_point: u32,
    /// K, in 2⁻¹⁰ s.
    k: u64,
    /// Minimum RTT, µs; 0 = no sample yet.
    delay_min_us: u32,
    /// Epoch start, jiffies; `None` until the first ACK after a reduction.
    epoch_start: Option<u64>,
    /// Segments ACKed in this epoch, for the Reno-friendly estimate.
    ack_cnt: u32,
    /// The Reno-friendly window estimate W_est, segments.
    tcp_cwnd: u32,
    hystart: Hystart,
}

impl Default for Cubic {
    fn default() -> Self {
        Cubic::new(CubicConfig::default())
    }
}

fn jiffies(t: Instant) -> u64 {
    t.as_nanos() / NS_PER_JIFFY
}

/// Linux `usecs_to_jiffies`: rounds up.
fn usecs_to_jiffies(us: u32) -> u64 {
    u64::from(us).div_ceil(1_000_000 / HZ)
}

/// ⌊∛x⌋, exactly, by binary search (Linux approximates with a table and one
/// Newton-Raphson step; exact is as cheap here since it runs once per epoch).
pub(crate) fn cube_root(x: u64) -> u64 {
    // ∛(2^64 − 1) < 2_642_246.
    let (mut lo, mut hi) = (0u64, 2_642_246u64);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if mid * mid * mid <= x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

fn saturate_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

impl Cubic {
    pub fn new(cfg: CubicConfig) -> Self {
        // A β outside (0, 1) would divide by zero below or invert the response; such a
        // config falls back to Linux's default rather than panicking.
        let cfg = CubicConfig {
            beta: if (1..BETA_SCALE).contains(&cfg.beta) {
                cfg.beta
            } else {
                CubicConfig::default().beta
            },
            bic_scale: cfg.bic_scale.max(1),
            ..cfg
        };
        // Reno-friendly: W_est grows by 3(1−β)/(1+β) per RTT; Linux keeps the inverse,
        // in ACKs per segment ×8, as an integer (15 for β = 717).
        let beta_scale = 8 * (BETA_SCALE + cfg.beta) / 3 / (BETA_SCALE - cfg.beta);
        let cube_rtt_scale = u64::from(cfg.bic_scale) * 10;
        // K = ∛((W_max − cwnd)/C) in 2⁻¹⁰ s: the cube carries 2^30, C is /1024.
        let cube_factor = (1u64 << (10 + 3 * BICTCP_HZ)) / cube_rtt_scale;
        Cubic {
            cfg,
            beta_scale,
            cube_rtt_scale,
            cube_factor,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin_point: 0,
            k: 0,
            delay_min_us: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            hystart: Hystart::default(),
        }
    }

    pub fn config(&self) -> &CubicConfig {
        &self.cfg
    }

    /// W_max, segments (0 before the first congestion event).
    pub fn last_max_cwnd(&self) -> u32 {
        self.last_max_cwnd
    }

    /// Why HyStart ended slow start, if it did.
    pub fn hystart_exit(&self) -> Option<HystartExit> {
        self.hystart.found
    }

    /// The min RTT CUBIC uses, if it has one.
    pub fn delay_min(&self) -> Option<Duration> {
        (self.delay_min_us > 0).then(|| Duration::from_micros(u64::from(self.delay_min_us)))
    }

    /// Linux `bictcp_reset`: forget the curve (and the min RTT); HyStart may run again.
    fn reset(&mut self) {
        *self = Cubic {
            hystart: Hystart {
                found: None,
                ..self.hystart.clone()
            },
            ..Cubic::new(self.cfg)
        };
    }

    /// Linux `bictcp_hystart_reset`: start a new HyStart round.
    fn hystart_reset(&mut self, cc: &CcState, now: Instant) {
        let h = &mut self.hystart;
        h.round_start_us = now.as_micros();
        h.last_ack_us = h.round_start_us;
        h.curr_rtt_us = u32::MAX;
        h.sample_cnt = 0;
        h.round_delivered = cc.delivered;
        h.round_end_delivered = cc.delivered.saturating_add(u64::from(cc.in_flight));
    }

    /// Linux `bictcp_update`: recompute `cnt` from the cubic curve and the
    /// Reno-friendly estimate, at most once per jiffy.
    fn update(&mut self, cwnd: u32, acked: u32, now: Instant) {
        let now_j = jiffies(now);
        self.ack_cnt = self.ack_cnt.saturating_add(acked);

        // Nothing has changed for a while: keep cnt (cwnd is unchanged and the last
        // computation is under HZ/32 old).
        if self.last_cwnd == cwnd && now_j.saturating_sub(self.last_time) <= HZ / 32 {
            return;
        }
        // The curve is evaluated at most once per jiffy; reductions clear epoch_start,
        // which forces a recomputation.
        if self.epoch_start.is_none() || now_j != self.last_time {
            self.last_cwnd = cwnd;
            self.last_time = now_j;
            self.cubic_cnt(cwnd, acked, now_j);
        }
        if self.cfg.tcp_friendliness {
            self.reno_friendly_cap(cwnd);
        }
        // At most 1 segment per 2 ACKed: cwnd grows at most 1.5× per RTT.
        self.cnt = self.cnt.max(2);
    }

    /// The cubic part of `bictcp_update`: set `cnt` so that cwnd reaches
    /// W(t + min_rtt) over the next RTT.
    fn cubic_cnt(&mut self, cwnd: u32, acked: u32, now_j: u64) {
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                // New epoch (RFC 9438 §4.2): the first ACK after a reduction.
                self.epoch_start = Some(now_j);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0;
                    self.origin_point = cwnd;
                } else {
                    let d = u64::from(self.last_max_cwnd - cwnd);
                    self.k = cube_root(self.cube_factor.saturating_mul(d));
                    self.origin_point = self.last_max_cwnd;
                }
                now_j
            }
        };
        // t = time in the epoch plus one min RTT (the target is where the curve will
        // be one RTT from now), in 2⁻¹⁰ s.
        let t_j = now_j
            .saturating_sub(epoch)
            .saturating_add(usecs_to_jiffies(self.delay_min_us));
        let t = u64::try_from((u128::from(t_j) << BICTCP_HZ) / u128::from(HZ)).unwrap_or(u64::MAX);
        let offs = u128::from(t.abs_diff(self.k));
        // C·(t − K)³ in segments; u128 so that long epochs saturate instead of wrapping.
        let delta = u128::from(self.cube_rtt_scale)
            .checked_mul(offs * offs)
            .and_then(|v| v.checked_mul(offs))
            .map_or(u128::MAX, |v| v >> (10 + 3 * BICTCP_HZ));
        let delta = u64::try_from(delta).unwrap_or(u64::MAX);
        let origin = u64::from(self.origin_point);
        let target = if t < self.k {
            origin.saturating_sub(delta)
        } else {
            origin.saturating_add(delta)
        };
        let cwnd64 = u64::from(cwnd);
        self.cnt = if target > cwnd64 {
            saturate_u32(cwnd64 / (target - cwnd64))
        } else {
            // At or above the target: grow very slowly.
            cwnd.saturating_mul(100)
        };
        // With no congestion event yet the curve has no plateau to aim at; Linux grows
        // at least 5% per RTT then.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
    }

    /// RFC 9438 §4.3: track the window AIMD with α = 3(1−β)/(1+β) would have, and
    /// grow at least as fast as it.
    fn reno_friendly_cap(&mut self, cwnd: u32) {
        // ACKs per +1 of W_est: cwnd / α, kept as cwnd·beta_scale/8.
        let per_seg = cwnd.saturating_mul(self.beta_scale) >> 3;
        if per_seg > 0 && self.ack_cnt > per_seg {
            let n = self.ack_cnt / per_seg;
            self.ack_cnt -= n * per_seg;
            self.tcp_cwnd = self.tcp_cwnd.saturating_add(n);
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
    }

    /// Linux `hystart_ack_delay`: a cushion for TSO/GRO aggregation added to the
    /// ACK-train threshold: the time to send four GSO-sized bursts at the pacing rate
    /// Linux would compute (`tcp_update_pacing_rate`: 200 % of cwnd/srtt in early slow
    /// start, 120 % later), capped at 1 ms. Zero while srtt is unknown.
    fn ack_delay_us(&self, cc: &CcState) -> u64 {
        let srtt_ns = u128::from(brisk_time::dur_nanos(cc.srtt));
        let gso = u128::from(self.cfg.gso_max_size);
        if srtt_ns == 0 || gso == 0 {
            return 0;
        }
        let ratio: u128 = if cc.cwnd < cc.ssthresh / 2 { 200 } else { 120 };
        let segs = u128::from(cc.cwnd.max(cc.in_flight));
        // bytes/s = mss · segs · ratio/100 / srtt
        let rate = u128::from(cc.mss) * segs * ratio * 10_000_000 / srtt_ns;
        if rate == 0 {
            return 0;
        }
        let us = gso * 4 * 1_000_000 / rate;
        u64::try_from(us.min(1_000)).unwrap_or(1_000)
    }

    /// Linux `hystart_update`: one RTT sample during slow start.
    fn hystart_update(&mut self, cc: &mut CcState, ack: &AckSample, delay_us: u32) {
        let new_round = match ack.newest_acked {
            Some(info) => info.delivered_at_send >= self.hystart.round_delivered,
            None => cc.delivered > self.hystart.round_end_delivered,
        };
        if new_round {
            self.hystart_reset(cc, ack.now);
        }
        let now_us = ack.now.as_micros();
        let ack_delay_us = self.ack_delay_us(cc);
        let h = &mut self.hystart;
        if self.cfg.hystart_ack_train {
            let delta = u64::try_from(self.cfg.hystart_ack_delta.as_micros()).unwrap_or(u64::MAX);
            // ACKs arriving back to back form a train; a train longer than (half) the
            // min RTT means the window already exceeds the path's BDP.
            if now_us.saturating_sub(h.last_ack_us) <= delta {
                h.last_ack_us = now_us;
                let mut threshold = u64::from(self.delay_min_us).saturating_add(ack_delay_us);
                if !self.cfg.paced {
                    threshold >>= 1;
                }
                if now_us.saturating_sub(h.round_start_us) > threshold {
                    h.found = Some(HystartExit::AckTrain);
                    cc.ssthresh = cc.cwnd;
                }
            }
        }
        if self.cfg.hystart_delay && h.found.is_none() {
            // The smallest RTT of the round's first samples, against the min RTT plus
            // a threshold of min_rtt/8 clamped to 4..16 ms.
            h.curr_rtt_us = h.curr_rtt_us.min(delay_us);
            if h.sample_cnt < HYSTART_MIN_SAMPLES {
                h.sample_cnt += 1;
            } else {
                let thresh =
                    (self.delay_min_us >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                if h.curr_rtt_us > self.delay_min_us.saturating_add(thresh) {
                    h.found = Some(HystartExit::Delay);
                    cc.ssthresh = cc.cwnd;
                }
            }
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn init(&mut self, cc: &mut FlowCtx<'_>, now: Instant) {
        self.reset();
        self.hystart_reset(cc, now);
    }

    /// Linux `cubictcp_acked`: track the min RTT and run HyStart.
    fn on_ack(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        let Some(rtt) = ack.rtt else { return };
        // Right after a reduction, RTT samples still reflect the old queue.
        if let Some(epoch) = self.epoch_start {
            if jiffies(ack.now).saturating_sub(epoch) < HZ {
                return;
            }
        }
        let delay_us = u32::try_from(rtt.as_micros()).unwrap_or(u32::MAX).max(1);
        if self.delay_min_us == 0 || self.delay_min_us > delay_us {
            self.delay_min_us = delay_us;
        }
        if (self.cfg.hystart_ack_train || self.cfg.hystart_delay)
            && self.hystart.found.is_none()
            && cc.in_slow_start()
            && cc.cwnd >= self.cfg.hystart_low_window
        {
            self.hystart_update(cc, ack, delay_us);
        }
    }

    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        if !cc.cwnd_limited {
            return;
        }
        let mut acked = ack.acked_segs;
        if cc.in_slow_start() {
            acked = slow_start(cc, acked);
            if acked == 0 {
                return;
            }
        }
        self.update(cc.cwnd, acked, ack.now);
        cong_avoid_ai(cc, self.cnt, acked);
    }

    /// Linux `cubictcp_recalc_ssthresh`: end the epoch, remember W_max (lowered further
    /// by fast convergence if the last one was not regained), and cut to β·cwnd.
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, _cause: CongestionCause) -> u32 {
        self.epoch_start = None;
        let cwnd = u64::from(cc.cwnd);
        let beta = u64::from(self.cfg.beta);
        let scale = u64::from(BETA_SCALE);
        self.last_max_cwnd = if cc.cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            // W_max·(1+β)/2: release bandwidth for newer flows (RFC 9438 §4.7).
            saturate_u32(cwnd * (scale + beta) / (2 * scale))
        } else {
            cc.cwnd
        };
        saturate_u32(cwnd * beta / scale).max(2)
    }

    fn on_event(&mut self, cc: &mut FlowCtx<'_>, now: Instant, ev: CcEvent) {
        match ev {
            CcEvent::TxStart { idle } => {
                // Linux `cubictcp_cwnd_event`: idle time does not count towards the
                // curve, so shift the epoch by it (RFC 9438 §5.8 app-limited rule).
                let now_j = jiffies(now);
                let idle_j = now_j - jiffies(now.checked_sub(idle).unwrap_or(Instant::ZERO));
                if let Some(epoch) = self.epoch_start.as_mut() {
                    if idle_j > 0 {
                        *epoch = epoch.saturating_add(idle_j).min(now_j);
                    }
                }
            }
            CcEvent::Rto => {
                // Linux `cubictcp_state(TCP_CA_Loss)`: start over, slow start with
                // HyStart again. W_max is forgotten too (Linux behaviour).
                self.reset();
                self.hystart_reset(cc, now);
            }
            _ => {}
        }
    }

    /// Linux uses `tcp_reno_undo_cwnd`: the larger of cwnd and the cwnd before the
    /// reduction. W_max is not restored (unlike RFC 9438 §4.9's suggestion).
    fn undo_cwnd(&mut self, cc: &mut FlowCtx<'_>, prior_cwnd: u32) -> u32 {
        cc.cwnd.max(prior_cwnd)
    }
}
