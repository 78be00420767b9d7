//! YeAH-TCP (Baiocchi, Castellani and Vacirca, "YeAH-TCP: Yet Another Highspeed TCP",
//! PFLDnet 2007), as Linux 6.18's `net/ipv4/tcp_yeah.c`: `cc = "yeah"`.
//! Docs: `docs/mechanisms/yeah.md`.
//!
//! Two modes, chosen once per RTT from a Vegas-style queue estimate
//! `Q = cwnd · (RTT_min − baseRTT) / RTT_min` (segments this flow keeps queued):
//! - **Fast** (`doing_reno_now == 0`): Scalable's increase, +1 per
//!   `min(cwnd, 100)` ACKed segments.
//! - **Slow** (Reno): +1 per cwnd ACKed segments, entered when `Q > ALPHA` (80) or the
//!   queueing delay exceeds `baseRTT / PHY` (1/8). On entering it with `Q > ALPHA`
//!   and cwnd above `reno_count`, **precautionary decongestion** removes
//!   `min(Q / GAMMA, cwnd >> EPSILON)` from cwnd (never below `reno_count`) and sets
//!   ssthresh = cwnd, without a loss.
//! - `reno_count` tracks the window a competing Reno flow would have: set to cwnd/2 on
//!   the first slow RTT, +1 per further slow RTT, back to 2 after `ZETA` (50) fast
//!   RTTs, halved on each loss.
//! - **Loss** (`tcp_yeah_ssthresh`): fewer than `RHO` (16) slow RTTs in a row: remove
//!   only the queue `lastQ`, bounded to `[cwnd >> DELTA, max(cwnd/2, 2)]`; otherwise
//!   (competing with Reno flows) halve.
//!
//! The Vegas part is Linux's `tcp_vegas.c` helpers YeAH calls (`tcp_vegas_init`,
//! `tcp_vegas_pkts_acked`, `tcp_vegas_state`, `tcp_vegas_cwnd_event`), kept here as a
//! private copy ([`VegasRtt`]) so this module stands alone. RTT samples are the ACK's
//! sample + 1 µs; a round ends at the first ACK past `beg_snd_nxt` (Linux
//! `after(ack, beg_snd_nxt)`, with absolute sequence offsets here).
//!
//! Linux's `u32` arithmetic is kept, including `ssthresh` returning
//! `cwnd − reduction` with wrap-around (at cwnd 1 with `lastQ ≥ 2` Linux's result
//! wraps to 0xffffffff; the connection reads that as "no threshold").

use super::reno::{cong_avoid_ai, slow_start};
use super::{AckSample, CcEvent, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::Instant;

/// Linux `TCP_YEAH_ALPHA`: packets queued at the bottleneck that mean congestion.
pub const ALPHA: u32 = 80;
/// Linux `TCP_YEAH_GAMMA`: fraction of the queue removed per RTT in decongestion.
pub const GAMMA: u32 = 1;
/// Linux `TCP_YEAH_DELTA`: log₂ of the least fraction of cwnd removed on a loss.
pub const DELTA: u32 = 3;
/// Linux `TCP_YEAH_EPSILON`: log₂ of the largest fraction removed by decongestion.
pub const EPSILON: u32 = 1;
/// Linux `TCP_YEAH_PHY`: queueing delay above `baseRTT / PHY` means slow mode.
pub const PHY: u32 = 8;
/// Linux `TCP_YEAH_RHO`: slow RTTs in a row after which a loss halves.
pub const RHO: u32 = 16;
/// Linux `TCP_YEAH_ZETA`: fast RTTs after which `reno_count` resets.
pub const ZETA: u32 = 50;
/// Linux `TCP_SCALABLE_AI_CNT` as YeAH defines it.
pub const SCALABLE_AI_CNT: u32 = 100;
/// Linux's cap on `snd_cwnd_clamp` in `tcp_yeah_init`.
pub const CLAMP_CAP: u32 = u32::MAX / 128;
const NO_RTT: u32 = 0x7fff_ffff;

/// The part of Linux `struct vegas` YeAH uses, with its helpers.
#[derive(Debug, Clone)]
pub struct VegasRtt {
    doing_vegas_now: bool,
    /// Samples this round.
    cnt_rtt: u32,
    /// Minimum RTT this round, µs (+1).
    min_rtt: u32,
    /// Minimum RTT ever (since the last init), µs (+1).
    base_rtt: u32,
    beg_snd_una: u64,
    beg_snd_nxt: u64,
    beg_snd_cwnd: u32,
}

impl VegasRtt {
    fn new() -> Self {
        VegasRtt {
            doing_vegas_now: false,
            cnt_rtt: 0,
            min_rtt: NO_RTT,
            base_rtt: NO_RTT,
            beg_snd_una: 0,
            beg_snd_nxt: 0,
            beg_snd_cwnd: 0,
        }
    }

    /// Linux `tcp_vegas_init`.
    fn init(&mut self, snd_nxt: u64) {
        self.base_rtt = NO_RTT;
        self.enable(snd_nxt);
    }

    /// Linux `vegas_enable`.
    fn enable(&mut self, snd_nxt: u64) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = NO_RTT;
    }

    /// Linux `tcp_vegas_pkts_acked`.
    fn sample(&mut self, rtt_us: u128) {
        let vrtt = u32::try_from(rtt_us)
            .unwrap_or(u32::MAX - 1)
            .saturating_add(1);
        self.base_rtt = self.base_rtt.min(vrtt);
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt = self.cnt_rtt.saturating_add(1);
    }
}

/// The queue estimate YeAH computes at a round's end: `cwnd · (rtt − base) / rtt` in
/// `u64`, truncated to `u32` as Linux's `queue = bw` does.
pub fn yeah_queue(cwnd: u32, rtt: u32, base: u32) -> u32 {
    let bw = u64::from(cwnd) * u64::from(rtt.wrapping_sub(base));
    (bw / u64::from(rtt.max(1))) as u32
}

/// Linux `tcp_yeah_ssthresh`'s arithmetic: `(ssthresh, new reno_count)`.
pub fn yeah_ssthresh(cwnd: u32, last_q: u32, doing_reno_now: u32, reno_count: u32) -> (u32, u32) {
    let half = (cwnd >> 1).max(2);
    let reduction = if doing_reno_now < RHO {
        last_q.min(half).max(cwnd >> DELTA)
    } else {
        half
    };
    (cwnd.wrapping_sub(reduction), (reno_count >> 1).max(2))
}

/// Linux `struct yeah`.
#[derive(Debug, Clone)]
pub struct Yeah {
    vegas: VegasRtt,
    last_q: u32,
    /// Slow (Reno) RTTs in a row; 0 = fast mode.
    doing_reno_now: u32,
    reno_count: u32,
    fast_count: u32,
}

impl Default for Yeah {
    fn default() -> Self {
        Yeah {
            vegas: VegasRtt::new(),
            last_q: 0,
            doing_reno_now: 0,
            reno_count: 2,
            fast_count: 0,
        }
    }
}

impl Yeah {
    /// Whether the last round chose slow (Reno) mode.
    pub fn slow_mode(&self) -> bool {
        self.doing_reno_now != 0
    }

    pub fn reno_count(&self) -> u32 {
        self.reno_count
    }

    pub fn last_queue(&self) -> u32 {
        self.last_q
    }

    /// The round's decision (the block under `after(ack, beg_snd_nxt)` in
    /// `tcp_yeah_cong_avoid`).
    fn end_of_round(&mut self, cc: &mut FlowCtx<'_>) {
        if self.vegas.cnt_rtt > 2 {
            let rtt = self.vegas.min_rtt;
            let base = self.vegas.base_rtt;
            let queue = yeah_queue(cc.cwnd, rtt, base);
            if queue > ALPHA || rtt.wrapping_sub(base) > base / PHY {
                if queue > ALPHA && cc.cwnd > self.reno_count {
                    // Precautionary decongestion.
                    let reduction = (queue / GAMMA).min(cc.cwnd >> EPSILON);
                    cc.cwnd = (cc.cwnd - reduction).max(self.reno_count);
                    cc.ssthresh = cc.cwnd;
                }
                if self.reno_count <= 2 {
                    self.reno_count = (cc.cwnd >> 1).max(2);
                } else {
                    self.reno_count += 1;
                }
                self.doing_reno_now = (self.doing_reno_now + 1).min(0xff_ffff);
            } else {
                self.fast_count += 1;
                if self.fast_count > ZETA {
                    self.reno_count = 2;
                    self.fast_count = 0;
                }
                self.doing_reno_now = 0;
            }
            self.last_q = queue;
        }
        self.vegas.beg_snd_una = self.vegas.beg_snd_nxt;
        self.vegas.beg_snd_nxt = cc.snd_nxt;
        self.vegas.beg_snd_cwnd = cc.cwnd;
        self.vegas.cnt_rtt = 0;
        self.vegas.min_rtt = NO_RTT;
    }
}

impl CongestionControl for Yeah {
    fn name(&self) -> &'static str {
        "yeah"
    }

    /// Linux `tcp_yeah_init`.
    fn init(&mut self, cc: &mut FlowCtx<'_>, _now: Instant) {
        self.vegas.init(cc.snd_nxt);
        self.doing_reno_now = 0;
        self.last_q = 0;
        self.reno_count = 2;
        cc.cwnd_clamp = cc.cwnd_clamp.min(CLAMP_CAP);
    }

    /// Linux `tcp_yeah_pkts_acked` (= `tcp_vegas_pkts_acked`).
    fn on_ack(&mut self, _cc: &mut FlowCtx<'_>, ack: &AckSample) {
        if let Some(rtt) = ack.rtt {
            self.vegas.sample(rtt.as_micros());
        }
    }

    /// Linux `tcp_yeah_cong_avoid`.
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        if !cc.cwnd_limited {
            return;
        }
        let mut acked = ack.acked_segs;
        if cc.in_slow_start() {
            acked = slow_start(cc, acked);
        }
        if acked > 0 {
            let w = if self.doing_reno_now == 0 {
                cc.cwnd.min(SCALABLE_AI_CNT)
            } else {
                cc.cwnd
            };
            cong_avoid_ai(cc, w, acked);
        }
        if cc.snd_una > self.vegas.beg_snd_nxt {
            self.end_of_round(cc);
        }
    }

    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, _cause: CongestionCause) -> u32 {
        let (ss, reno_count) =
            yeah_ssthresh(cc.cwnd, self.last_q, self.doing_reno_now, self.reno_count);
        self.fast_count = 0;
        self.reno_count = reno_count;
        ss
    }

    /// Linux `tcp_vegas_state` and `tcp_vegas_cwnd_event`.
    fn on_event(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, ev: CcEvent) {
        match ev {
            // Linux `tcp_vegas_state`: Vegas on in TCP_CA_Open only.
            CcEvent::ExitRecovery | CcEvent::ExitLoss => self.vegas.enable(cc.snd_nxt),
            CcEvent::EnterRecovery | CcEvent::EnterCwr | CcEvent::Rto => {
                self.vegas.doing_vegas_now = false
            }
            CcEvent::TxStart { .. } | CcEvent::CwndRestart => self.vegas.init(cc.snd_nxt),
            CcEvent::AppLimited | CcEvent::Undo => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcState;
    use brisk_time::Duration;

    const MSS: u64 = 1000;

    fn limited(cwnd: u32, ssthresh: u32) -> CcState {
        let mut cc = CcState::new(cwnd, MSS as u32);
        cc.ssthresh = ssthresh;
        cc.cwnd_limited = true;
        cc
    }

    /// One round of single-segment ACKs at `rtt_us`, snd_nxt a window ahead.
    fn round(y: &mut Yeah, cc: &mut CcState, rtt_us: u64) {
        let n = cc.cwnd;
        cc.snd_nxt = cc.snd_una + u64::from(n) * MSS;
        for _ in 0..n {
            cc.snd_una += MSS;
            let a = AckSample {
                acked_segs: 1,
                rtt: Some(Duration::from_micros(rtt_us)),
                ..Default::default()
            };
            y.on_ack(&mut FlowCtx::alone(cc), &a);
            y.cong_avoid(&mut FlowCtx::alone(cc), &a);
        }
    }

    #[test]
    fn queue_by_hand() {
        // cwnd 200, rtt 120 ms, base 100 ms: 200·20000/120000 = 33.
        assert_eq!(yeah_queue(200, 120_001, 100_001), 33);
        assert_eq!(yeah_queue(1000, 150_001, 100_001), 333);
    }

    #[test]
    fn ssthresh_by_hand() {
        // Fast mode, queue 30 at cwnd 200: reduction max(min(30, 100), 25) = 30 → 170.
        assert_eq!(yeah_ssthresh(200, 30, 0, 40), (170, 20));
        // Queue 10 < cwnd>>3 = 25: 175.
        assert_eq!(yeah_ssthresh(200, 10, 0, 2), (175, 2));
        // Queue 500 > cwnd/2: 100.
        assert_eq!(yeah_ssthresh(200, 500, 3, 2), (100, 2));
        // 16 slow RTTs in a row: halve.
        assert_eq!(yeah_ssthresh(200, 0, 16, 9), (100, 4));
        // Linux's wrap at cwnd 1 with lastQ 2: 1 − 2.
        assert_eq!(yeah_ssthresh(1, 2, 0, 2), (u32::MAX, 2));
    }

    #[test]
    fn fast_mode_is_scalable_then_a_queue_switches_to_reno_and_decongests() {
        let mut y = Yeah::default();
        let mut cc = limited(300, 10);
        y.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        // Round 1 at the base RTT: its first ACK ends the empty round 0 (too few
        // samples); 300 single ACKs at w = min(300, 100): +3.
        round(&mut y, &mut cc, 100_000);
        assert_eq!(cc.cwnd, 303);
        // Round 2's first ACK decides on round 1: no queue, fast. +3 again.
        round(&mut y, &mut cc, 100_000);
        assert_eq!((cc.cwnd, y.slow_mode()), (306, false));
        // Round 3 at 150 ms: still fast (the decision is on round 2); 306 + 3.
        round(&mut y, &mut cc, 150_000);
        assert_eq!((cc.cwnd, y.slow_mode()), (309, false));
        // Round 4's first ACK decides on round 3: queue = 309·50000/150001 = 102 > 80:
        // slow mode and decongestion by min(102, 309>>1) to 207 = ssthresh,
        // reno_count = 207>>1 = 103; the other 308 ACKs add one Reno segment.
        round(&mut y, &mut cc, 150_000);
        assert!(y.slow_mode());
        assert_eq!(y.last_queue(), 102);
        assert_eq!((cc.cwnd, cc.ssthresh, y.reno_count()), (208, 207, 103));
        // A loss now (1 slow RTT < RHO): remove only the queue, 208 − 102.
        let ss = y.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Loss,
        );
        assert_eq!((ss, y.reno_count()), (106, 51));
    }

    #[test]
    fn queueing_delay_alone_selects_reno_without_decongestion() {
        let mut y = Yeah::default();
        let mut cc = limited(50, 10);
        y.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        // Rounds at 100, 100, 120 ms: fast, +1 each (w = cwnd below 100).
        round(&mut y, &mut cc, 100_000);
        round(&mut y, &mut cc, 100_000);
        round(&mut y, &mut cc, 120_000);
        assert_eq!((cc.cwnd, y.slow_mode()), (53, false));
        // Round 4 decides on round 3: queue = 53·20000/120001 = 8 ≤ 80, but the
        // 20 ms of queueing delay exceed 100001/8 µs: slow mode, no decongestion,
        // reno_count = 53>>1; Reno adds one segment over the round.
        round(&mut y, &mut cc, 120_000);
        assert!(y.slow_mode());
        assert_eq!((cc.cwnd, y.last_queue(), y.reno_count()), (54, 8, 26));
        assert_eq!(cc.ssthresh, 10);
    }

    #[test]
    fn events_follow_vegas_state_and_restart() {
        let mut y = Yeah::default();
        let mut cc = limited(50, 10);
        cc.snd_nxt = 7000;
        y.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        y.on_ack(
            &mut FlowCtx::alone(&mut cc),
            &AckSample {
                rtt: Some(Duration::from_millis(10)),
                ..Default::default()
            },
        );
        assert_eq!(y.vegas.base_rtt, 10_001);
        y.on_event(&mut FlowCtx::alone(&mut cc), Instant::ZERO, CcEvent::Rto);
        assert!(!y.vegas.doing_vegas_now);
        y.on_event(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CcEvent::ExitRecovery,
        );
        assert!(y.vegas.doing_vegas_now);
        assert_eq!(y.vegas.base_rtt, 10_001);
        let idle = CcEvent::TxStart {
            idle: Duration::from_secs(2),
        };
        y.on_event(&mut FlowCtx::alone(&mut cc), Instant::ZERO, idle);
        assert_eq!((y.vegas.base_rtt, y.vegas.beg_snd_nxt), (NO_RTT, 7000));
    }
}
