//! BBR v1 (Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue
//! 14(5), 2016) as Linux 6.18's `net/ipv4/tcp_bbr.c`: the same state machine,
//! filters, gains and fixed-point arithmetic, function by function (each method names
//! the Linux function it follows). Not the thesis's delay-correlation layer
//! (`cc/delay_corr.rs`, cc "dc"), which some seed texts call "BBR".
//!
//! BBR models the path: bottleneck bandwidth = windowed max of delivery-rate samples
//! over 10 rounds (`crate::rate`), propagation delay = windowed min RTT over 10 s;
//! it paces at `pacing_gain · bw` and caps inflight at `cwnd_gain · bw · min_rtt`:
//! - STARTUP: gains 2/ln 2 until the bandwidth grew less than 25 % in 3 rounds;
//! - DRAIN: pacing gain ln 2/2 until the queue STARTUP built is gone;
//! - PROBE_BW: pacing gains cycling 5/4, 3/4, 1 × 6, cwnd gain 2;
//! - PROBE_RTT: when the min RTT is 10 s old, cwnd 4 for max(200 ms, one round);
//! - long-term bandwidth: two consistent lossy intervals mean a policer: pace at
//!   their average for 48 rounds;
//! - ACK aggregation: cwnd grows by the windowed max of data ACKed beyond the
//!   bandwidth's expectation;
//! - loss recovery: packet conservation for the first round, then restore.
//!
//! It needs the connection's rate samples, its own `cong_control` (no PRR) and
//! pacing (`CcNeeds`). Departures from Linux are listed in
//! `docs/mechanisms/bbr.md`; the two in this file: the CA state is followed from
//! the connection's events (brisk has no Disorder state; BBR only asks "in
//! recovery or loss?"), and the random start of the gain cycle draws from the
//! connection's seed.

pub mod minmax;
#[cfg(test)]
mod tests;

use super::{AckSample, CcEvent, CcNeeds, CcState, CongestionCause, CongestionControl, FlowCtx};
use crate::rate::RateSample;
use brisk_time::{Duration, Instant};
use minmax::MinMax;

/// Rates are packets per µs << 24 (Linux `BW_SCALE`).
const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gains are fractions << 8 (Linux `BBR_SCALE`).
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// Phases of the PROBE_BW gain cycle.
const CYCLE_LEN: u32 = 8;
/// Window of the max-bandwidth filter, rounds.
const BW_RTTS: u32 = CYCLE_LEN + 2;
/// Window of the min-RTT filter.
const MIN_RTT_WIN: Duration = Duration::from_secs(10);
/// Time spent at the minimum cwnd in PROBE_RTT.
const PROBE_RTT_MODE: Duration = Duration::from_millis(200);
/// Below this pacing rate (bits/s) bursts are single segments.
const MIN_TSO_RATE: u64 = 1_200_000;
/// Pace 1 % below the estimate, to drain queues.
const PACING_MARGIN_PERCENT: u64 = 1;
/// 2/ln 2: the smallest gain that doubles the delivery rate each round.
const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// Its inverse: drains STARTUP's queue in about a round.
const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// The steady-state cwnd gain.
const CWND_GAIN: u32 = BBR_UNIT * 2;
/// PROBE_BW's pacing gains.
const PACING_GAIN: [u32; CYCLE_LEN as usize] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// The gain cycle starts at a random one of this many phases.
const CYCLE_RAND: u32 = 7;
/// The fewest packets in flight BBR aims for.
const CWND_MIN_TARGET: u32 = 4;
/// Bandwidth grew "significantly" if by 25 %...
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// ...and the pipe is full after 3 rounds without.
const FULL_BW_CNT: u32 = 3;
/// Long-term sampling: the fewest rounds in an interval.
const LT_INTVL_MIN_RTTS: u32 = 4;
/// A lossy interval: lost/delivered above 50/256 (about 20 %).
const LT_LOSS_THRESH: u64 = 50;
/// Two intervals' rates are consistent within 1/8...
const LT_BW_RATIO: u64 = BBR_UNIT as u64 / 8;
/// ...or within 4 kbit/s (in bytes/s).
const LT_BW_DIFF: u64 = 4000 / 8;
/// Rounds to use the long-term rate once policing is found.
const LT_BW_MAX_RTTS: u32 = 48;
/// Gain on the ACK-aggregation allowance.
const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// Window of the extra-ACKed filter, rounds (two halves).
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// ACK epochs restart past this many packets.
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// The ACK-aggregation allowance is at most this much time at the bandwidth.
const EXTRA_ACKED_MAX_US: u64 = 100_000;
/// Linux `TCP_INIT_CWND`.
const TCP_INIT_CWND: u32 = 10;
/// Linux's largest TSO burst for BBR's budget: `GSO_LEGACY_MAX_SIZE - 1 -
/// MAX_TCP_HEADER` (320 on x86-64).
const GSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// Linux `sk_pacing_shift` default.
const PACING_SHIFT: u32 = 10;

/// BBR's modes (Linux `enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// The connection's congestion state as Linux numbers it (`TCP_CA_*`): BBR compares
/// them (`< TCP_CA_Recovery`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum CaState {
    Open = 0,
    Cwr = 2,
    Recovery = 3,
    Loss = 4,
}

/// What BBR reports for traces and `TcpInfo` (Linux `tcp_bbr_info` and more).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct BbrDiagnostics {
    pub mode: Mode,
    /// The bandwidth estimate, bytes/s (Linux `bbr_bw_lo/hi`).
    pub bw_bytes_per_sec: u64,
    /// The min-RTT estimate, µs (`u32::MAX`: none).
    pub min_rtt_us: u32,
    /// Gains << 8 (256 = 1.0).
    pub pacing_gain: u16,
    pub cwnd_gain: u16,
    /// Bytes/s.
    pub pacing_rate: u64,
    pub full_bw_reached: bool,
    pub cycle_idx: u8,
    /// Using the long-term (policed) rate.
    pub lt_use_bw: bool,
    /// Round trips counted so far.
    pub rtt_cnt: u32,
    /// PROBE_RTT entries so far.
    pub probe_rtt_count: u32,
    /// When PROBE_RTT was last entered, ms since the clock's zero (0: never).
    pub last_probe_rtt_ms: u32,
}

/// BBR v1's state (Linux `struct bbr`), one per connection.
#[derive(Clone, Debug)]
pub struct Bbr {
    min_rtt_us: u32,
    min_rtt_stamp: Instant,
    probe_rtt_done_stamp: Option<Instant>,
    bw: MinMax,
    rtt_cnt: u32,
    next_rtt_delivered: u64,
    cycle_mstamp: Instant,
    mode: Mode,
    prev_ca_state: CaState,
    /// The connection's CA state, followed from its events.
    ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u32,
    lt_last_delivered: u64,
    /// ms.
    lt_last_stamp: u64,
    lt_last_lost: u64,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    cycle_idx: u32,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    full_bw: u32,
    ack_epoch_mstamp: Instant,
    extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// Linux `sk_pacing_rate`, bytes/s.
    pacing_rate: u64,
    /// The connection's seed, for the gain cycle's random start.
    rng: u64,
    probe_rtt_count: u32,
    last_probe_rtt: Option<Instant>,
    /// The sender MSS at the last call, for the diagnostics' bytes/s.
    mss: u32,
}

fn us_between(later: Instant, earlier: Instant) -> u64 {
    // Linux `tcp_stamp_us_delta`: never negative.
    later.as_micros().saturating_sub(earlier.as_micros())
}

impl Bbr {
    pub fn new(seed: u64) -> Self {
        Bbr {
            min_rtt_us: u32::MAX,
            min_rtt_stamp: Instant::ZERO,
            probe_rtt_done_stamp: None,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: Instant::ZERO,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: 0,
            cwnd_gain: 0,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: Instant::ZERO,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            pacing_rate: 0,
            rng: seed ^ 0x6262_7231_7631_0000,
            probe_rtt_count: 0,
            last_probe_rtt: None,
            mss: 0,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Linux `prandom_u32_max(n)`, from the seed (splitmix64).
    fn rand_below(&mut self, n: u32) -> u32 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((u64::from(n) * (z >> 32)) >> 32) as u32
    }

    /// Linux `bbr_max_bw`.
    fn max_bw(&self) -> u32 {
        self.bw.get()
    }

    /// Linux `bbr_bw`: the long-term rate while policed, else the max filter's.
    fn bw(&self) -> u32 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// Linux `bbr_extra_acked`.
    fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// Linux `bbr_rate_bytes_per_sec`: a rate (packets/µs << 24) with a gain in
    /// bytes/s, 1 % below (the pacing margin).
    fn rate_bytes_per_sec(mss: u32, rate: u64, gain: u32) -> u64 {
        let mut rate = rate.saturating_mul(u64::from(mss));
        rate = rate.saturating_mul(u64::from(gain));
        rate >>= BBR_SCALE;
        rate = rate.saturating_mul(1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT));
        rate >> BW_SCALE
    }

    /// Linux `bbr_bw_to_pacing_rate` (no `sk_max_pacing_rate` cap).
    fn bw_to_pacing_rate(mss: u32, bw: u32, gain: u32) -> u64 {
        Self::rate_bytes_per_sec(mss, u64::from(bw), gain)
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`: high_gain · cwnd / RTT (1 ms before
    /// any RTT sample).
    fn init_pacing_rate_from_rtt(&mut self, cc: &CcState) {
        let rtt_us = if !cc.srtt.is_zero() {
            self.has_seen_rtt = true;
            (cc.srtt.as_micros() as u64).max(1)
        } else {
            1000
        };
        let bw = u64::from(cc.cwnd) * BW_UNIT / rtt_us;
        let bw = bw.min(u64::from(u32::MAX)) as u32;
        self.pacing_rate = Self::bw_to_pacing_rate(cc.mss, bw, HIGH_GAIN);
    }

    /// Linux `bbr_set_pacing_rate`: never lower before the pipe is full.
    fn set_pacing_rate(&mut self, cc: &CcState, bw: u32, gain: u32) {
        let rate = Self::bw_to_pacing_rate(cc.mss, bw, gain);
        if !self.has_seen_rtt && !cc.srtt.is_zero() {
            self.init_pacing_rate_from_rtt(cc);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// Linux `bbr_min_tso_segs`.
    fn min_tso_segs_at(pacing_rate: u64) -> u32 {
        if pacing_rate < (MIN_TSO_RATE >> 3) {
            1
        } else {
            2
        }
    }

    /// Linux `bbr_tso_segs_goal`.
    fn tso_segs_goal(&self, mss: u32) -> u32 {
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(GSO_MAX_BYTES);
        let segs =
            ((bytes / u64::from(mss.max(1))) as u32).max(Self::min_tso_segs_at(self.pacing_rate));
        segs.min(0x7f)
    }

    /// Linux `bbr_save_cwnd`.
    fn save_cwnd(&mut self, cwnd: u32) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// Linux `bbr_bdp`: ceil(bw · min_rtt · gain), packets.
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = u64::from(bw) * u64::from(self.min_rtt_us);
        let bdp = ((w * u64::from(gain)) >> BBR_SCALE).div_ceil(BW_UNIT);
        bdp.min(u64::from(u32::MAX)) as u32
    }

    /// Linux `bbr_quantization_budget`.
    fn quantization_budget(&self, cwnd: u32, mss: u32) -> u32 {
        let mut cwnd = cwnd.saturating_add(3 * self.tso_segs_goal(mss));
        cwnd = cwnd.saturating_add(1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd = cwnd.saturating_add(2);
        }
        cwnd
    }

    /// Linux `bbr_inflight`.
    fn inflight(&self, bw: u32, gain: u32, mss: u32) -> u32 {
        self.quantization_budget(self.bdp(bw, gain), mss)
    }

    /// Linux `bbr_packets_in_net_at_edt`: of `inflight_now`, how many will still be
    /// in the network when the next paced segment departs.
    fn packets_in_net_at_edt(&self, cc: &CcState, now: Instant, inflight_now: u32) -> u32 {
        let edt = cc.pacing_edt.max(now);
        let interval_us = (edt - now).as_micros() as u64;
        let interval_delivered = (u64::from(self.bw()) * interval_us) >> BW_SCALE;
        let mut inflight_at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += self.tso_segs_goal(cc.mss);
        }
        if interval_delivered >= u64::from(inflight_at_edt) {
            return 0;
        }
        inflight_at_edt - interval_delivered as u32
    }

    /// Linux `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if EXTRA_ACKED_GAIN == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr_cwnd = u64::from(self.bw()) * EXTRA_ACKED_MAX_US / BW_UNIT;
        let aggr_cwnd = (u64::from(EXTRA_ACKED_GAIN) * u64::from(self.extra_acked())) >> BBR_SCALE;
        aggr_cwnd.min(max_aggr_cwnd) as u32
    }

    /// Linux `bbr_set_cwnd_to_recover_or_restore`: packet conservation in the first
    /// round of recovery, the saved cwnd back when recovery ends. Returns the cwnd
    /// and whether conservation holds it.
    fn set_cwnd_to_recover_or_restore(
        &mut self,
        cc: &CcState,
        rs: &RateSample,
        acked: u32,
    ) -> (u32, bool) {
        let state = self.ca_state;
        let prev_state = self.prev_ca_state;
        let mut cwnd = cc.cwnd;
        // An ACK for P packets should release at most 2P: first take off the losses.
        if rs.losses > 0 {
            cwnd = (i64::from(cwnd) - i64::from(rs.losses)).max(1) as u32;
        }
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            // The first round of recovery: packet conservation.
            self.packet_conservation = true;
            self.next_rtt_delivered = cc.delivered;
            cwnd = cc.in_flight + acked;
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            // Recovery over: the cwnd saved before it.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(cc.in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// Linux `bbr_set_cwnd`: slow-start towards the target, or snap down to it.
    fn set_cwnd(&mut self, cc: &mut CcState, rs: &RateSample, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = cc.cwnd;
        if acked > 0 {
            let (c, conserving) = self.set_cwnd_to_recover_or_restore(cc, rs, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target = target.saturating_add(self.ack_aggregation_cwnd());
                target = self.quantization_budget(target, cc.mss);
                if self.full_bw_reached {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || cc.delivered < u64::from(TCP_INIT_CWND) {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        cc.cwnd = cwnd.min(cc.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            cc.cwnd = cc.cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// Linux `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, cc: &CcState, now: Instant, rs: &RateSample) -> bool {
        let is_full_length =
            us_between(cc.rate.delivered_mstamp, self.cycle_mstamp) > u64::from(self.min_rtt_us);
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(cc, now, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            // Probing: until inflight reaches pacing_gain · BDP, unless losses say
            // it will not fit.
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain, cc.mss));
        }
        // Draining: until inflight is down to the BDP.
        is_full_length || inflight <= self.inflight(bw, BBR_UNIT, cc.mss)
    }

    /// Linux `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, cc: &CcState) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = cc.rate.delivered_mstamp;
    }

    /// Linux `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, cc: &CcState, now: Instant, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(cc, now, rs) {
            self.advance_cycle_phase(cc);
        }
    }

    /// Linux `bbr_reset_probe_bw_mode`: a random phase, never the draining one.
    fn reset_probe_bw_mode(&mut self, cc: &CcState) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rand_below(CYCLE_RAND);
        self.advance_cycle_phase(cc);
    }

    /// Linux `bbr_reset_mode`.
    fn reset_mode(&mut self, cc: &CcState) {
        if !self.full_bw_reached {
            self.mode = Mode::Startup;
        } else {
            self.reset_probe_bw_mode(cc);
        }
    }

    /// Linux `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, cc: &CcState) {
        self.lt_last_stamp = cc.rate.delivered_mstamp.as_micros() / 1000;
        self.lt_last_delivered = cc.delivered;
        self.lt_last_lost = cc.rate.lost;
        self.lt_rtt_cnt = 0;
    }

    /// Linux `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self, cc: &CcState) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(cc);
    }

    /// Linux `bbr_lt_bw_interval_done`: two consistent intervals mean a policer.
    fn lt_bw_interval_done(&mut self, cc: &CcState, bw: u32) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if u64::from(diff) * u64::from(BBR_UNIT) <= LT_BW_RATIO * u64::from(self.lt_bw)
                || Self::rate_bytes_per_sec(cc.mss, u64::from(diff), BBR_UNIT) <= LT_BW_DIFF
            {
                self.lt_bw = ((u64::from(bw) + u64::from(self.lt_bw)) >> 1) as u32;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(cc);
    }

    /// Linux `bbr_lt_bw_sampling`: token-bucket policer detection.
    fn lt_bw_sampling(&mut self, cc: &CcState, rs: &RateSample) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(cc);
                    self.reset_probe_bw_mode(cc);
                }
            }
            return;
        }
        // Sample from the first loss on, once the policer's tokens are gone.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(cc);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(cc);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(cc);
            return;
        }
        if rs.losses == 0 {
            return;
        }
        let lost = cc.rate.lost - self.lt_last_lost;
        let delivered = cc.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t = (cc.rate.delivered_mstamp.as_micros() / 1000) as i64 - self.lt_last_stamp as i64;
        if t < 1 {
            return;
        }
        if t as u64 >= u64::from(u32::MAX) / 1000 {
            self.reset_lt_bw_sampling(cc);
            return;
        }
        let bw = delivered * BW_UNIT / (t as u64 * 1000);
        self.lt_bw_interval_done(cc, bw.min(u64::from(u32::MAX)) as u32);
    }

    /// Linux `bbr_update_bw`: round counting and the max filter.
    fn update_bw(&mut self, cc: &CcState, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = cc.delivered;
            self.rtt_cnt = self.rtt_cnt.wrapping_add(1);
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(cc, rs);
        let bw = (rs.delivered as u64) * BW_UNIT / (rs.interval_us as u64);
        let bw = bw.min(u64::from(u32::MAX)) as u32;
        // App-limited samples only count if they beat the estimate.
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// Linux `bbr_update_ack_aggregation`: data ACKed beyond what the bandwidth
    /// explains, windowed max over 5-10 rounds.
    fn update_ack_aggregation(&mut self, cc: &CcState, rs: &RateSample) {
        if EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0
        {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = us_between(cc.rate.delivered_mstamp, self.ack_epoch_mstamp);
        let mut expected_acked = (u64::from(self.bw()) * epoch_us / BW_UNIT) as u32 as u64;
        if u64::from(self.ack_epoch_acked) <= expected_acked
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = cc.rate.delivered_mstamp;
            expected_acked = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra =
            (u64::from(self.ack_epoch_acked) - expected_acked).min(u64::from(cc.cwnd)) as u32;
        let i = self.extra_acked_win_idx;
        if extra > self.extra_acked[i] {
            self.extra_acked[i] = extra;
        }
    }

    /// Linux `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw_thresh = (u64::from(self.full_bw) * u64::from(FULL_BW_THRESH)) >> BBR_SCALE;
        if u64::from(self.max_bw()) >= bw_thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// Linux `bbr_check_drain`.
    fn check_drain(&mut self, cc: &mut CcState, now: Instant) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            cc.ssthresh = self.inflight(self.max_bw(), BBR_UNIT, cc.mss);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(cc, now, cc.in_flight)
                <= self.inflight(self.max_bw(), BBR_UNIT, cc.mss)
        {
            self.reset_probe_bw_mode(cc);
        }
    }

    /// Linux `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, cc: &mut CcState, now: Instant) {
        match self.probe_rtt_done_stamp {
            Some(done) if now > done => {}
            _ => return,
        }
        self.min_rtt_stamp = now;
        cc.cwnd = cc.cwnd.max(self.prior_cwnd);
        self.reset_mode(cc);
    }

    /// Linux `bbr_update_min_rtt`: the 10 s min filter and PROBE_RTT.
    fn update_min_rtt(&mut self, cc: &mut CcState, now: Instant, rs: &RateSample) {
        let filter_expired = now > self.min_rtt_stamp + MIN_RTT_WIN;
        if rs.rtt_us >= 0
            && (rs.rtt_us <= i64::from(self.min_rtt_us) || (filter_expired && !rs.is_ack_delayed))
        {
            self.min_rtt_us = rs.rtt_us.min(i64::from(u32::MAX)) as u32;
            self.min_rtt_stamp = now;
        }
        if filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(cc.cwnd);
            self.probe_rtt_done_stamp = None;
            self.probe_rtt_count += 1;
            self.last_probe_rtt = Some(now);
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore the low rate samples this mode makes.
            cc.rate.app_limited = (cc.delivered + u64::from(cc.in_flight)).max(1);
            if self.probe_rtt_done_stamp.is_none() && cc.in_flight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = Some(now + PROBE_RTT_MODE);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = cc.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(cc, now);
                }
            }
        }
        // An idle restart ends with the first ACK of new data.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// Linux `bbr_update_gains`.
    fn update_gains(&mut self) {
        let (p, c) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (
                if self.lt_use_bw {
                    BBR_UNIT
                } else {
                    PACING_GAIN[self.cycle_idx as usize]
                },
                CWND_GAIN,
            ),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = p;
        self.cwnd_gain = c;
    }

    /// Linux `bbr_update_model`.
    fn update_model(&mut self, cc: &mut CcState, now: Instant, rs: &RateSample) {
        self.update_bw(cc, rs);
        self.update_ack_aggregation(cc, rs);
        self.update_cycle_phase(cc, now, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(cc, now);
        self.update_min_rtt(cc, now, rs);
        self.update_gains();
    }

    /// Linux `bbr_main`.
    fn main(&mut self, cc: &mut CcState, now: Instant, rs: &RateSample) {
        self.mss = cc.mss;
        self.update_model(cc, now, rs);
        let bw = self.bw();
        let gain = self.pacing_gain;
        self.set_pacing_rate(cc, bw, gain);
        let cwnd_gain = self.cwnd_gain;
        self.set_cwnd(cc, rs, rs.acked_sacked, bw, cwnd_gain);
    }

    /// Linux `bbr_set_state(TCP_CA_Loss)`: an RTO ends a round and counts as a
    /// loss for policer detection.
    fn enter_loss(&mut self, cc: &CcState) {
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0;
        self.round_start = true;
        let rs = RateSample {
            losses: 1,
            delivered: 0,
            interval_us: 0,
            ..RateSample::default()
        };
        self.lt_bw_sampling(cc, &rs);
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn needs(&self) -> CcNeeds {
        CcNeeds {
            rate_samples: true,
            cong_control: true,
            pacing: true,
            timestamps: false,
        }
    }

    /// Linux `bbr_init`.
    fn init(&mut self, cc: &mut FlowCtx<'_>, now: Instant) {
        let seed = self.rng;
        *self = Bbr::new(0);
        self.rng = seed;
        cc.ssthresh = u32::MAX;
        self.min_rtt_us = if cc.min_rtt.is_zero() {
            u32::MAX
        } else {
            (cc.min_rtt.as_micros() as u64).min(u64::from(u32::MAX)) as u32
        };
        self.min_rtt_stamp = now;
        self.bw.reset(self.rtt_cnt, 0);
        self.init_pacing_rate_from_rtt(cc);
        self.reset_lt_bw_sampling(cc);
        self.mode = Mode::Startup;
        self.ack_epoch_mstamp = now;
    }

    /// BBR never grows cwnd here: it has `cong_control`.
    fn cong_avoid(&mut self, _cc: &mut FlowCtx<'_>, _ack: &AckSample) {}

    fn cong_control(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        let rs = ack.rate;
        self.main(cc, ack.now, &rs);
    }

    /// Linux `bbr_ssthresh`: save cwnd for the end of recovery; ssthresh unchanged.
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, _cause: CongestionCause) -> u32 {
        self.save_cwnd(cc.cwnd);
        cc.ssthresh
    }

    /// Linux `bbr_undo_cwnd`: a spurious slow-down resets full-pipe detection and
    /// long-term sampling.
    fn undo_cwnd(&mut self, cc: &mut FlowCtx<'_>, _prior_cwnd: u32) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(cc);
        cc.cwnd
    }

    /// Linux `bbr_cwnd_event` (TX_START) and `bbr_set_state`, with the CA state
    /// followed from the connection's events.
    fn on_event(&mut self, cc: &mut FlowCtx<'_>, now: Instant, ev: CcEvent) {
        match ev {
            CcEvent::EnterRecovery => self.ca_state = CaState::Recovery,
            CcEvent::EnterCwr if self.ca_state < CaState::Recovery => {
                self.ca_state = CaState::Cwr;
            }
            CcEvent::Rto => {
                self.ca_state = CaState::Loss;
                self.enter_loss(cc);
            }
            // Linux `tcp_set_ca_state(TCP_CA_Open)` at the end of a reduction or of an
            // RTO episode (an undo alone changes no state).
            CcEvent::ExitRecovery | CcEvent::ExitLoss => self.ca_state = CaState::Open,
            CcEvent::TxStart { .. } if cc.rate.app_limited != 0 => {
                self.idle_restart = true;
                self.ack_epoch_mstamp = now;
                self.ack_epoch_acked = 0;
                // Restarting from idle and app-limited: pace at the estimate.
                if self.mode == Mode::ProbeBw {
                    let bw = self.bw();
                    self.set_pacing_rate(cc, bw, BBR_UNIT);
                } else if self.mode == Mode::ProbeRtt {
                    self.check_probe_rtt_done(cc, now);
                }
            }
            _ => {}
        }
    }

    fn pacing_rate(&self, _cc: &CcState) -> Option<u64> {
        Some(self.pacing_rate)
    }

    fn min_tso_segs(&self, pacing_rate: u64) -> u32 {
        Self::min_tso_segs_at(pacing_rate)
    }

    fn diagnostics(&self) -> Option<super::CcDiagnostics> {
        Some(super::CcDiagnostics::Bbr(BbrDiagnostics {
            mode: self.mode,
            // Linux `bbr_get_info`: bw · mss · 10^6 >> 24.
            bw_bytes_per_sec: (u64::from(self.bw()) * u64::from(self.mss) * 1_000_000) >> BW_SCALE,
            min_rtt_us: self.min_rtt_us,
            pacing_gain: self.pacing_gain as u16,
            cwnd_gain: self.cwnd_gain as u16,
            pacing_rate: self.pacing_rate,
            full_bw_reached: self.full_bw_reached,
            cycle_idx: self.cycle_idx as u8,
            lt_use_bw: self.lt_use_bw,
            rtt_cnt: self.rtt_cnt,
            probe_rtt_count: self.probe_rtt_count,
            last_probe_rtt_ms: self
                .last_probe_rtt
                .map_or(0, |t| t.as_millis().clamp(1, u64::from(u32::MAX)) as u32),
        }))
    }
}
