//! BBR v3 (`cc = "bbr3"`) as Google's published v3: `net/ipv4/tcp_bbr.c` on the
//! v3 branch of github.com/google/bbr (read at commit
//! 001a430b3ddbbc6d9173061a74d8b580c757b91b, `BBR_VERSION 3`), and
//! draft-ietf-ccwg-bbr (the IETF text of the same algorithm). Written from the
//! algorithm; each method names the Linux function it follows. Docs:
//! `docs/mechanisms/bbr3.md`.
//!
//! v3 keeps v1's model (max bandwidth, min RTT, pacing and cwnd gains) and bounds it
//! with loss and ECN:
//! - `bw_hi` (max filter over two PROBE_BW cycles) and `inflight_hi` (the volume at
//!   which loss passed 2 % or CE marks passed 50 % while probing) are long-term
//!   upper bounds ([`bounds`]);
//! - `bw_lo` and `inflight_lo` are short-term lower bounds: each round with loss
//!   (or CE marks, ECN only) outside bandwidth probing cuts them by 30 % (ECN: by
//!   `ecn_alpha / 3`), never below what the last round delivered ([`bounds`]);
//! - PROBE_BW is DOWN → CRUISE → REFILL → UP → DOWN, the next probe after a random
//!   2-3 s or a Reno-like number of rounds (at most 63) ([`cycle`]);
//! - STARTUP (gain 2.77, cwnd gain 2) ends on a bandwidth plateau, on 6+ loss
//!   events in a recovery round with loss above 2 %, or on 2 rounds of CE marks
//!   above 50 % ([`startup`]);
//! - ECN only when negotiated and the min RTT is at most 5 ms ([`ecn`]);
//! - PROBE_RTT every 5 s at half the BDP ([`probe_rtt`]).
//!
//! Needs the connection's rate samples with v3's fields (`tx_in_flight`, `lost`,
//! `delivered_ce`, `is_ece`, `crate::rate`), its own `cong_control` and pacing
//! (`CcNeeds`). The random draws (the probe wait) come from the connection's seed.

mod bounds;
mod cycle;
mod ecn;
mod probe_rtt;
mod startup;
#[cfg(test)]
mod tests;

use super::{AckSample, CcEvent, CcNeeds, CcState, CongestionCause, CongestionControl, FlowCtx};
use crate::rate::RateSample;
use brisk_time::{Duration, Instant};

/// Rates are packets per µs << 24 (Linux `BW_SCALE`).
const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gains and fractions are << 8 (Linux `BBR_SCALE`).
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// "No bound" (Linux `~0U`).
const UNSET: u32 = u32::MAX;

/// Window of the min-RTT filter.
const MIN_RTT_WIN: Duration = Duration::from_secs(10);
/// Time at the PROBE_RTT cwnd.
const PROBE_RTT_MODE: Duration = Duration::from_millis(200);
/// Window of the PROBE_RTT min filter: PROBE_RTT comes about every 5 s.
const PROBE_RTT_WIN: Duration = Duration::from_millis(5000);
/// PROBE_RTT's cwnd: half the BDP.
const PROBE_RTT_CWND_GAIN: u32 = BBR_UNIT / 2;
/// Pace 1 % below the estimate.
const PACING_MARGIN_PERCENT: u64 = 1;
/// 4 ln 2 (2.77): doubles the sending rate each round, as slow start does.
const STARTUP_PACING_GAIN: u32 = BBR_UNIT * 277 / 100 + 1;
const STARTUP_CWND_GAIN: u32 = BBR_UNIT * 2;
/// Drains STARTUP's queue in about a round.
const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
const CWND_GAIN: u32 = BBR_UNIT * 2;
/// PROBE_BW's pacing gains, by phase: UP, DOWN, CRUISE, REFILL.
const PACING_GAIN: [u32; 4] = [BBR_UNIT * 5 / 4, BBR_UNIT * 91 / 100, BBR_UNIT, BBR_UNIT];
/// The fewest packets in flight BBR aims for.
const CWND_MIN_TARGET: u32 = 4;
/// Bandwidth grew "significantly" if by 25 %...
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// ...and the pipe is full after 3 rounds without.
const FULL_BW_CNT: u32 = 3;
/// ACK aggregation (as v1).
const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100_000;
/// ECN is used only at min RTTs up to this (shallow-threshold data-centre paths).
const ECN_MAX_RTT_US: u32 = 5000;
/// Loss cuts bw_lo/inflight_lo to (1 − β).
const BETA: u32 = BBR_UNIT * 30 / 100;
/// EWMA gain of the CE ratio (1/16).
const ECN_ALPHA_GAIN: u32 = BBR_UNIT / 16;
const ECN_ALPHA_INIT: u32 = BBR_UNIT;
/// ECN cuts inflight_lo to (1 − ecn_factor · ecn_alpha).
const ECN_FACTOR: u32 = BBR_UNIT / 3;
/// Probing went too far above this CE ratio (50 %)...
const ECN_THRESH: u32 = BBR_UNIT / 2;
/// ...after CE marks stop (no loss), re-probe with half of inflight_hi.
const ECN_REPROBE_GAIN: u32 = BBR_UNIT / 2;
/// ...or above this loss rate (2 %).
const LOSS_THRESH: u32 = BBR_UNIT * 2 / 100;
/// STARTUP ends after this many loss events in a recovery round (with high loss).
const FULL_LOSS_CNT: u32 = 6;
/// STARTUP ends after this many rounds of high CE ratio.
const FULL_ECN_CNT: u32 = 2;
/// After a too-high probe, leave 15 % of inflight_hi unused.
const INFLIGHT_HEADROOM: u32 = BBR_UNIT * 15 / 100;
/// PROBE_UP's cwnd gain bonus, in quarters (0.25).
const BW_PROBE_CWND_GAIN: u32 = 1;
/// Reno coexistence: probe at least every this many rounds (and the BDP)...
const BW_PROBE_MAX_ROUNDS: u32 = 63;
/// ...less a random 0-1 rounds.
const BW_PROBE_RAND_ROUNDS: u32 = 2;
/// The wall-clock wait between probes: 2 s plus a random 0-1 s.
const BW_PROBE_BASE_US: u32 = 2_000_000;
const BW_PROBE_RAND_US: u32 = 1_000_000;
/// Linux `GSO_LEGACY_MAX_SIZE` less one and `MAX_TCP_HEADER` (x86-64).
const GSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
const GSO_LEGACY_MAX_SIZE: u64 = 65_536;
/// Linux `bbr_tso_rtt_shift`: the min-RTT burst allowance halves every 512 µs.
const TSO_RTT_SHIFT: u32 = 9;
/// Linux `sk_pacing_shift` default.
const PACING_SHIFT: u32 = 10;
/// Linux `sysctl_tcp_min_tso_segs` default.
const MIN_TSO_SEGS: u32 = 2;

/// BBR's modes (Linux `enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// PROBE_BW's phases (Linux `enum bbr_pacing_gain_phase`), the index into
/// [`PACING_GAIN`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Up = 0,
    Down = 1,
    Cruise = 2,
    Refill = 3,
}

/// What the ACK stream says about bandwidth probing (Linux `enum bbr_ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// The connection's congestion state as Linux numbers it (`TCP_CA_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum CaState {
    Open = 0,
    Cwr = 2,
    Recovery = 3,
    Loss = 4,
}

/// What BBR v3 reports for traces and `TcpInfo` (Linux v3 `tcp_bbr_info`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Bbr3Diagnostics {
    pub mode: Mode,
    pub phase: Phase,
    /// min(bw_hi, bw_lo), bytes/s.
    pub bw_bytes_per_sec: u64,
    /// The max filter (bw_hi), bytes/s.
    pub bw_hi_bytes_per_sec: u64,
    /// bw_lo, bytes/s (`u64::MAX`: unset).
    pub bw_lo_bytes_per_sec: u64,
    /// Packets (`u32::MAX`: unset).
    pub inflight_lo: u32,
    pub inflight_hi: u32,
    /// µs (`u32::MAX`: none).
    pub min_rtt_us: u32,
    /// Gains << 8.
    pub pacing_gain: u16,
    pub cwnd_gain: u16,
    /// Bytes/s.
    pub pacing_rate: u64,
    pub full_bw_reached: bool,
    /// ECN in use (negotiated, min RTT ≤ 5 ms).
    pub ecn_eligible: bool,
    /// CE-ratio EWMA << 8.
    pub ecn_alpha: u16,
    pub extra_acked: u32,
    /// Round trips counted so far.
    pub rtt_cnt: u32,
    /// PROBE_RTT entries, bandwidth probes (REFILL starts) and too-high verdicts.
    pub probe_rtt_count: u32,
    pub bw_probe_count: u32,
    pub inflight_too_high_count: u32,
    /// Rounds whose loss (or ECN) cut the lower bounds.
    pub lower_bound_cuts: u32,
    /// How STARTUP ended (none yet: `None`).
    pub startup_exit: Option<StartupExit>,
}

/// Why STARTUP ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StartupExit {
    /// Bandwidth plateau (3 rounds under +25 %).
    FullBw,
    /// Loss above 2 % with 6+ loss events in a recovery round.
    Loss,
    /// CE ratio above 50 % for 2 rounds.
    Ecn,
}

/// BBR v3's state (Linux v3 `struct bbr`), one per connection.
#[derive(Clone, Debug)]
pub struct Bbr3 {
    min_rtt_us: u32,
    min_rtt_stamp: Instant,
    probe_rtt_done_stamp: Option<Instant>,
    probe_rtt_min_us: u32,
    probe_rtt_min_stamp: Instant,
    next_rtt_delivered: u64,
    cycle_mstamp: Instant,
    mode: Mode,
    prev_ca_state: CaState,
    /// The connection's CA state, followed from its events.
    ca_state: CaState,
    round_start: bool,
    bw_probe_up_rounds: u32,
    try_fast_path: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    init_cwnd: u32,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    cycle_idx: Phase,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    full_bw: u32,
    ack_epoch_mstamp: Instant,
    extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    full_bw_now: bool,
    startup_ecn_rounds: u32,
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    loss_round_delivered: u64,
    undo_bw_lo: u32,
    undo_inflight_lo: u32,
    undo_inflight_hi: u32,
    bw_latest: u32,
    bw_lo: u32,
    bw_hi: [u32; 2],
    inflight_latest: u32,
    inflight_lo: u32,
    inflight_hi: u32,
    bw_probe_up_cnt: u32,
    bw_probe_up_acks: u32,
    probe_wait_us: u32,
    ecn_eligible: bool,
    ecn_alpha: u32,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    rounds_since_probe: u32,
    loss_round_start: bool,
    loss_in_round: bool,
    ecn_in_round: bool,
    ack_phase: AckPhase,
    loss_events_in_round: u32,
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,
    /// Linux `sk_pacing_rate`, bytes/s.
    pacing_rate: u64,
    /// The connection's seed (splitmix64 state) for the probe wait's draws.
    rng: u64,
    /// The sender MSS at the last call (diagnostics).
    mss: u32,
    // Counters for diagnostics and tests (not in Linux).
    rtt_cnt: u32,
    probe_rtt_count: u32,
    bw_probe_count: u32,
    inflight_too_high_count: u32,
    lower_bound_cuts: u32,
    startup_exit: Option<StartupExit>,
}

/// One ACK's derived values (Linux `struct bbr_context`).
#[derive(Clone, Copy, Debug, Default)]
struct Ctx {
    sample_bw: u32,
}

fn us_between(later: Instant, earlier: Instant) -> u64 {
    later.as_micros().saturating_sub(earlier.as_micros())
}

fn clamp_u32(v: u64) -> u32 {
    v.min(u64::from(u32::MAX)) as u32
}

impl Bbr3 {
    pub fn new(seed: u64) -> Self {
        Bbr3 {
            min_rtt_us: UNSET,
            min_rtt_stamp: Instant::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_min_us: UNSET,
            probe_rtt_min_stamp: Instant::ZERO,
            next_rtt_delivered: 0,
            cycle_mstamp: Instant::ZERO,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            ca_state: CaState::Open,
            round_start: false,
            bw_probe_up_rounds: 0,
            try_fast_path: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            init_cwnd: 10,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: STARTUP_CWND_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: Phase::Up,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: Instant::ZERO,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            full_bw_now: false,
            startup_ecn_rounds: 0,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_round_delivered: 1,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            bw_latest: 0,
            bw_lo: UNSET,
            bw_hi: [0; 2],
            inflight_latest: 0,
            inflight_lo: UNSET,
            inflight_hi: UNSET,
            bw_probe_up_cnt: UNSET,
            bw_probe_up_acks: 0,
            probe_wait_us: 0,
            ecn_eligible: false,
            ecn_alpha: ECN_ALPHA_INIT,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            rounds_since_probe: 0,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            ack_phase: AckPhase::Init,
            loss_events_in_round: 0,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            pacing_rate: 0,
            rng: seed ^ 0x6262_7233_7633_0000,
            mss: 0,
            rtt_cnt: 0,
            probe_rtt_count: 0,
            bw_probe_count: 0,
            inflight_too_high_count: 0,
            lower_bound_cuts: 0,
            startup_exit: None,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Linux `get_random_u32_below(n)`, from the connection's seed (splitmix64).
    fn rand_below(&mut self, n: u32) -> u32 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((u64::from(n) * (z >> 32)) >> 32) as u32
    }

    /// Linux `bbr_max_bw`: the max filter over the last 1-2 cycles.
    fn max_bw(&self) -> u32 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// Linux `bbr_bw`: the max filter, bounded below-term by bw_lo.
    fn bw(&self) -> u32 {
        self.max_bw().min(self.bw_lo)
    }

    /// Linux `bbr_extra_acked`.
    fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// Linux `bbr_rate_bytes_per_sec`: a rate with a gain and a margin, bytes/s
    /// (never 0).
    fn rate_bytes_per_sec(mss: u32, rate: u64, gain: u32, margin: u64) -> u64 {
        let mut rate = rate.saturating_mul(u64::from(mss));
        rate = rate.saturating_mul(u64::from(gain));
        rate >>= BBR_SCALE;
        rate = rate.saturating_mul(1_000_000 / 100 * (100 - margin));
        (rate >> BW_SCALE).max(1)
    }

    /// Linux `bbr_bw_bytes_per_sec` (no gain, no margin).
    fn bw_bytes_per_sec(&self, bw: u32) -> u64 {
        Self::rate_bytes_per_sec(self.mss, u64::from(bw), BBR_UNIT, 0)
    }

    /// Linux `bbr_bw_to_pacing_rate` (no `sk_max_pacing_rate` cap).
    fn bw_to_pacing_rate(mss: u32, bw: u32, gain: u32) -> u64 {
        Self::rate_bytes_per_sec(mss, u64::from(bw), gain, PACING_MARGIN_PERCENT)
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`: startup gain · cwnd / RTT (1 ms
    /// before any RTT sample).
    fn init_pacing_rate_from_rtt(&mut self, cc: &CcState) {
        let rtt_us = if !cc.srtt.is_zero() {
            self.has_seen_rtt = true;
            (cc.srtt.as_micros() as u64).max(1)
        } else {
            1000
        };
        let bw = clamp_u32(u64::from(cc.cwnd) * BW_UNIT / rtt_us);
        self.pacing_rate = Self::bw_to_pacing_rate(cc.mss, bw, STARTUP_PACING_GAIN);
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

    /// Linux `bbr_tso_segs_generic` for `bbr_tso_segs_goal`: about 1 ms of data at
    /// the pacing rate, plus 64 KB halved per 512 µs of min RTT.
    fn tso_segs_goal(&self, mss: u32) -> u32 {
        let mut bytes = self.pacing_rate >> PACING_SHIFT;
        let r = self.min_rtt_us >> TSO_RTT_SHIFT;
        if r < 32 {
            bytes += GSO_LEGACY_MAX_SIZE >> r;
        }
        let bytes = bytes.min(GSO_MAX_BYTES);
        ((bytes / u64::from(mss.max(1))) as u32).max(MIN_TSO_SEGS)
    }

    /// Linux `bbr_save_cwnd`.
    fn save_cwnd(&mut self, cwnd: u32) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// Linux `bbr_bdp`: ceil(bw · min_rtt · gain), packets; the initial cwnd
    /// before any RTT sample.
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == UNSET {
            return self.init_cwnd;
        }
        let w = u64::from(bw) * u64::from(self.min_rtt_us);
        clamp_u32(((w * u64::from(gain)) >> BBR_SCALE).div_ceil(BW_UNIT))
    }

    /// Linux v3 `bbr_quantization_budget`: room for three bursts, at least the
    /// minimum, +2 in PROBE_UP so that small BDPs still probe.
    fn quantization_budget(&self, cwnd: u32, mss: u32) -> u32 {
        let mut cwnd = cwnd.max(3 * self.tso_segs_goal(mss)).max(CWND_MIN_TARGET);
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            cwnd = cwnd.saturating_add(2);
        }
        cwnd
    }

    /// Linux `bbr_inflight`.
    fn inflight(&self, bw: u32, gain: u32, mss: u32) -> u32 {
        self.quantization_budget(self.bdp(bw, gain), mss)
    }

    /// Linux `bbr_packets_in_net_at_edt`.
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
        let max_aggr_cwnd = u64::from(self.bw()) * EXTRA_ACKED_MAX_US / BW_UNIT;
        let aggr_cwnd = (u64::from(EXTRA_ACKED_GAIN) * u64::from(self.extra_acked())) >> BBR_SCALE;
        aggr_cwnd.min(max_aggr_cwnd) as u32
    }

    /// Linux `bbr_probe_rtt_cwnd`: half the BDP, at least 4.
    fn probe_rtt_cwnd(&self) -> u32 {
        self.bdp(self.bw(), PROBE_RTT_CWND_GAIN)
            .max(CWND_MIN_TARGET)
    }

    /// Linux v3 `bbr_set_cwnd`: slow-start towards the target, or snap down to it
    /// once the pipe was full (no packet conservation in v3: losses act through
    /// the lower bounds).
    fn set_cwnd(&mut self, cc: &mut CcState, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = cc.cwnd;
        if acked > 0 {
            let mut target = self.bdp(bw, gain);
            target = target.saturating_add(self.ack_aggregation_cwnd());
            target = self.quantization_budget(target, cc.mss);
            self.try_fast_path = false;
            if self.full_bw_reached {
                cwnd = cwnd.saturating_add(acked);
                if cwnd >= target {
                    cwnd = target;
                    self.try_fast_path = true;
                }
            } else if cwnd < target || cwnd < 2 * self.init_cwnd {
                cwnd = cwnd.saturating_add(acked);
            } else {
                self.try_fast_path = true;
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        cc.cwnd = cwnd.min(cc.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            cc.cwnd = cc.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// Linux `bbr_update_round_start`.
    fn update_round_start(&mut self, cc: &CcState, rs: &RateSample) {
        self.round_start = false;
        if rs.interval_us > 0 && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = cc.delivered;
            self.round_start = true;
            self.rtt_cnt = self.rtt_cnt.wrapping_add(1);
        }
    }

    /// Linux `bbr_calculate_bw_sample`: delivered / interval, rounded up.
    fn calculate_bw_sample(rs: &RateSample) -> u32 {
        if rs.interval_us <= 0 || rs.delivered < 0 {
            return 0;
        }
        clamp_u32((rs.delivered as u64 * BW_UNIT).div_ceil(rs.interval_us as u64))
    }

    /// Linux v3 `bbr_update_ack_aggregation`: as v1, but a 1-round window until
    /// the pipe is full.
    fn update_ack_aggregation(&mut self, cc: &CcState, rs: &RateSample) {
        if rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            let thresh = if self.full_bw_reached {
                EXTRA_ACKED_WIN_RTTS
            } else {
                1
            };
            if self.extra_acked_win_rtts >= thresh {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = us_between(cc.rate.delivered_mstamp, self.ack_epoch_mstamp);
        let mut expected_acked = clamp_u32(u64::from(self.bw()) * epoch_us / BW_UNIT);
        if self.ack_epoch_acked <= expected_acked
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = cc.rate.delivered_mstamp;
            expected_acked = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        // Linux keeps it in a u16.
        let extra = (self.ack_epoch_acked - expected_acked)
            .min(cc.cwnd)
            .min(u32::from(u16::MAX));
        let i = self.extra_acked_win_idx;
        if extra > self.extra_acked[i] {
            self.extra_acked[i] = extra;
        }
    }

    /// Linux `bbr_update_gains`.
    fn update_gains(&mut self) {
        let (p, c) = match self.mode {
            Mode::Startup => (STARTUP_PACING_GAIN, STARTUP_CWND_GAIN),
            Mode::Drain => (DRAIN_GAIN, STARTUP_CWND_GAIN),
            Mode::ProbeBw => {
                let mut c = CWND_GAIN;
                if self.cycle_idx == Phase::Up {
                    c += BBR_UNIT * BW_PROBE_CWND_GAIN / 4;
                }
                (PACING_GAIN[self.cycle_idx as usize], c)
            }
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = p;
        self.cwnd_gain = c;
    }

    /// Linux `bbr_update_model`.
    fn update_model(&mut self, cc: &mut CcState, now: Instant, rs: &RateSample, ctx: &Ctx) {
        self.update_congestion_signals(cc, rs, ctx);
        self.update_ack_aggregation(cc, rs);
        self.check_loss_too_high_in_startup(cc, rs);
        self.check_full_bw_reached(rs, ctx);
        self.check_drain(cc, now);
        self.update_cycle_phase(cc, now, rs, ctx);
        self.update_min_rtt(cc, now, rs);
    }

    /// Linux `bbr_run_fast_path`: app-limited, no congestion, and a sample below
    /// the estimate: only the state machine's clocks move.
    fn run_fast_path(
        &mut self,
        cc: &mut CcState,
        now: Instant,
        rs: &RateSample,
        ctx: &Ctx,
        update_model: &mut bool,
    ) -> bool {
        if self.try_fast_path
            && rs.is_app_limited
            && ctx.sample_bw < self.max_bw()
            && !self.loss_in_round
            && !self.ecn_in_round
        {
            let (prev_mode, prev_min_rtt) = (self.mode, self.min_rtt_us);
            self.check_drain(cc, now);
            self.update_cycle_phase(cc, now, rs, ctx);
            self.update_min_rtt(cc, now, rs);
            if self.mode == prev_mode && self.min_rtt_us == prev_min_rtt && self.try_fast_path {
                return true;
            }
            *update_model = false;
        }
        false
    }

    /// Linux v3 `bbr_main`.
    fn main(&mut self, cc: &mut CcState, now: Instant, rs: &RateSample) {
        self.mss = cc.mss;
        // Linux `bbr_note_loss` from `skb_marked_lost`: the first loss of a round
        // restarts the loss round (brisk has no per-segment hook; the losses this
        // ACK marked are `rs.losses`).
        if rs.losses > 0 {
            self.note_loss(cc);
        }
        self.update_round_start(cc, rs);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xff);
            self.update_ecn_alpha(cc);
        }
        self.ecn_in_round |= self.ecn_eligible && rs.is_ece;
        let ctx = Ctx {
            sample_bw: Self::calculate_bw_sample(rs),
        };
        self.update_latest_delivery_signals(cc, rs, &ctx);
        let mut update_model = true;
        if !self.run_fast_path(cc, now, rs, &ctx, &mut update_model) {
            if update_model {
                self.update_model(cc, now, rs, &ctx);
            }
            self.update_gains();
            let bw = self.bw();
            self.set_pacing_rate(cc, bw, self.pacing_gain);
            self.set_cwnd(cc, rs.acked_sacked, bw, self.cwnd_gain);
            self.bound_cwnd_for_inflight_model(cc);
        }
        self.advance_latest_delivery_signals(rs, &ctx);
        self.prev_ca_state = self.ca_state;
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
    }

    /// Linux `bbr_reset_full_bw`.
    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// Linux `bbr_is_probing_bandwidth`.
    fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.cycle_idx, Phase::Refill | Phase::Up))
    }

    /// Linux `bbr_target_inflight`: the BDP, unless congestion cut cwnd.
    fn target_inflight(&self, cc: &CcState) -> u32 {
        self.inflight(self.bw(), BBR_UNIT, cc.mss).min(cc.cwnd)
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    fn needs(&self) -> CcNeeds {
        CcNeeds {
            rate_samples: true,
            cong_control: true,
            pacing: true,
            timestamps: false,
        }
    }

    /// Linux v3 `bbr_init`.
    fn init(&mut self, cc: &mut FlowCtx<'_>, now: Instant) {
        let seed = self.rng;
        *self = Bbr3::new(0);
        self.rng = seed;
        self.init_cwnd = cc.cwnd.min(0x7f);
        cc.ssthresh = u32::MAX;
        self.next_rtt_delivered = cc.delivered;
        let min_rtt = if cc.min_rtt.is_zero() {
            UNSET
        } else {
            clamp_u32(cc.min_rtt.as_micros() as u64)
        };
        self.probe_rtt_min_us = min_rtt;
        self.probe_rtt_min_stamp = now;
        self.min_rtt_us = min_rtt;
        self.min_rtt_stamp = now;
        self.init_pacing_rate_from_rtt(cc);
        self.ack_epoch_mstamp = now;
        // Sample the ECN mark rate from the first full flight on.
        self.loss_round_delivered = cc.delivered + 1;
        self.mss = cc.mss;
    }

    /// BBR never grows cwnd here: it has `cong_control`.
    fn cong_avoid(&mut self, _cc: &mut FlowCtx<'_>, _ack: &AckSample) {}

    fn cong_control(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        let rs = ack.rate;
        self.main(cc, ack.now, &rs);
    }

    /// Linux v3 `bbr_ssthresh`: save cwnd and the loss-adapted bounds for an undo;
    /// ssthresh unchanged. A loss a tail-loss probe repaired is v3's
    /// `CA_EVENT_TLP_RECOVERY` (`bbr_run_loss_probe_recovery`).
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, now: Instant, cause: CongestionCause) -> u32 {
        self.save_cwnd(cc.cwnd);
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        if cause == CongestionCause::ProbeLoss {
            self.run_loss_probe_recovery(cc, now);
        }
        cc.ssthresh
    }

    /// Linux v3 `bbr_undo_cwnd`: a spurious loss episode gives back the bounds it
    /// cut.
    fn undo_cwnd(&mut self, _cc: &mut FlowCtx<'_>, _prior_cwnd: u32) -> u32 {
        self.reset_full_bw();
        self.loss_in_round = false;
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        self.try_fast_path = false;
        self.prior_cwnd
    }

    /// Linux v3 `bbr_cwnd_event` (TX_START) and `bbr_set_state`, with the CA state
    /// followed from the connection's events. (The ECN receiver events are the
    /// receiver's precise CE echo, `CcAlgorithm::accurate_ce_echo`.)
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
            CcEvent::ExitRecovery | CcEvent::ExitLoss => {
                self.ca_state = CaState::Open;
                // Linux `bbr_set_state`: leaving Loss restores the saved cwnd.
                if self.prev_ca_state == CaState::Loss {
                    cc.cwnd = cc.cwnd.max(self.prior_cwnd).min(cc.cwnd_clamp);
                    self.try_fast_path = false;
                }
            }
            CcEvent::TxStart { .. } if cc.rate.app_limited != 0 => {
                self.idle_restart = true;
                self.ack_epoch_mstamp = now;
                self.ack_epoch_acked = 0;
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

    fn diagnostics(&self) -> Option<super::CcDiagnostics> {
        Some(super::CcDiagnostics::Bbr3(Box::new(self.diag())))
    }

    /// Compared on the stack with the last traced value and written into its box:
    /// the only allocation is the traced copy of a change (about one per round
    /// trip), not one per ACK as `diagnostics` would make.
    fn diagnostics_changed(
        &self,
        last: &mut Option<super::CcDiagnostics>,
    ) -> Option<super::CcDiagnostics> {
        let d = self.diag();
        match last {
            Some(super::CcDiagnostics::Bbr3(b)) if **b == d => None,
            Some(super::CcDiagnostics::Bbr3(b)) => {
                **b = d;
                Some(super::CcDiagnostics::Bbr3(Box::new(d)))
            }
            _ => {
                *last = Some(super::CcDiagnostics::Bbr3(Box::new(d)));
                Some(super::CcDiagnostics::Bbr3(Box::new(d)))
            }
        }
    }
}

impl Bbr3 {
    /// Linux `bbr_set_state(TCP_CA_Loss)`: an RTO restarts full-bandwidth
    /// detection and, outside probing, gives inflight_lo the cwnd before it.
    fn enter_loss(&mut self, cc: &CcState) {
        // The RTO marked the flight lost (Linux: `bbr_skb_marked_lost` per segment).
        self.note_loss(cc);
        self.prev_ca_state = CaState::Loss;
        self.reset_full_bw();
        if !self.is_probing_bandwidth() && self.inflight_lo == UNSET {
            self.inflight_lo = cc.cwnd.max(self.prior_cwnd);
        }
    }

    fn diag(&self) -> Bbr3Diagnostics {
        Bbr3Diagnostics {
            mode: self.mode,
            phase: self.cycle_idx,
            bw_bytes_per_sec: self.bw_bytes_per_sec(self.bw()),
            bw_hi_bytes_per_sec: self.bw_bytes_per_sec(self.max_bw()),
            bw_lo_bytes_per_sec: if self.bw_lo == UNSET {
                u64::MAX
            } else {
                self.bw_bytes_per_sec(self.bw_lo)
            },
            inflight_lo: self.inflight_lo,
            inflight_hi: self.inflight_hi,
            min_rtt_us: self.min_rtt_us,
            pacing_gain: self.pacing_gain as u16,
            cwnd_gain: self.cwnd_gain as u16,
            pacing_rate: self.pacing_rate,
            full_bw_reached: self.full_bw_reached,
            ecn_eligible: self.ecn_eligible,
            ecn_alpha: self.ecn_alpha as u16,
            extra_acked: self.extra_acked(),
            rtt_cnt: self.rtt_cnt,
            probe_rtt_count: self.probe_rtt_count,
            bw_probe_count: self.bw_probe_count,
            inflight_too_high_count: self.inflight_too_high_count,
            lower_bound_cuts: self.lower_bound_cuts,
            startup_exit: self.startup_exit,
        }
    }
}
