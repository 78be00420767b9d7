//! TCP Westwood+ (Mascolo et al., "TCP Westwood: bandwidth estimation for TCP",
//! MobiCom 2001; Grieco and Mascolo, CCR 2004 for the "+": one sample per RTT) as
//! Linux 6.18 runs it, `net/ipv4/tcp_westwood.c`: `cc = "westwood"`. Docs:
//! `docs/mechanisms/westwood.md`.
//!
//! Growth is Reno's. What differs is the window after congestion: Westwood+ counts
//! the bytes ACKed over each RTT-long window (at least 50 ms), takes bytes per jiffy
//! as a bandwidth sample, smooths it twice with a 7/8 low-pass filter, and at the end
//! of a reduction sets `ssthresh = cwnd = BWE·RTTmin/mss` (at least 2) instead of
//! halving; after an RTO, ssthresh is that value too.
//!
//! Function map: `on_ack` = `tcp_westwood_ack` (Linux's `in_ack_event`, which runs
//! before `pkts_acked` on each ACK) then `tcp_westwood_pkts_acked`; `ssthresh` =
//! `tcp_reno_ssthresh`, and for an RTO `tcp_westwood_event(CA_EVENT_LOSS)`;
//! `on_event(ExitRecovery)` = `tcp_westwood_event(CA_EVENT_COMPLETE_CWR)`;
//! `cong_avoid` = `tcp_reno_cong_avoid`; undo = `tcp_reno_undo_cwnd`.
//! Times in 1 ms jiffies (HZ = 1000), bandwidth in bytes per jiffy, u32 as in C.

use super::linux_ca::{jiffies32, reno_cong_avoid, usecs_to_jiffies};
use super::reno::reno_ssthresh;
use super::{AckSample, CcEvent, CcState, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::Instant;

/// The shortest bandwidth-sampling window, jiffies (Linux `TCP_WESTWOOD_RTT_MIN`,
/// HZ/20 = 50 ms).
const RTT_MIN: u32 = 1000 / 20;
/// RTT before the first sample, jiffies (`TCP_WESTWOOD_INIT_RTT`, 20 s).
const INIT_RTT: u32 = 20 * 1000;

/// Westwood+'s state (Linux `struct westwood`).
#[derive(Clone, Debug)]
pub struct Westwood {
    /// First filter stage, bytes per jiffy.
    bw_ns_est: u32,
    /// The bandwidth estimate BWE, bytes per jiffy.
    bw_est: u32,
    /// Start of the current sampling window, jiffies.
    rtt_win_sx: u32,
    /// Bytes ACKed in the current window.
    bk: u32,
    /// SND.UNA at the last ACK.
    snd_una: u64,
    cumul_ack: u32,
    /// Bytes counted for duplicate ACKs, taken back from the next cumulative ACK.
    accounted: u32,
    /// Last RTT sample, jiffies.
    rtt: u32,
    /// RTTmin, jiffies.
    rtt_min: u32,
    first_ack: bool,
    /// Take the next sample as RTTmin (after an RTO).
    reset_rtt_min: bool,
}

impl Default for Westwood {
    fn default() -> Self {
        Westwood {
            bw_ns_est: 0,
            bw_est: 0,
            rtt_win_sx: 0,
            bk: 0,
            snd_una: 0,
            cumul_ack: 0,
            accounted: 0,
            rtt: INIT_RTT,
            rtt_min: INIT_RTT,
            first_ack: true,
            reset_rtt_min: true,
        }
    }
}

impl Westwood {
    /// BWE in bytes per second.
    pub fn bw_est_bytes_per_sec(&self) -> u64 {
        u64::from(self.bw_est) * 1000
    }

    /// RTTmin in ms (jiffies).
    pub fn rtt_min_ms(&self) -> u32 {
        self.rtt_min
    }

    /// Linux `westwood_filter`: the first sample fills both stages.
    fn filter(&mut self, delta: u32) {
        let sample = self.bk / delta;
        if self.bw_ns_est == 0 && self.bw_est == 0 {
            self.bw_ns_est = sample;
            self.bw_est = sample;
        } else {
            self.bw_ns_est = do_filter(self.bw_ns_est, sample);
            self.bw_est = do_filter(self.bw_est, self.bw_ns_est);
        }
    }

    /// Linux `westwood_update_window`: close the sampling window once it is longer
    /// than the last RTT (and 50 ms).
    fn update_window(&mut self, cc: &CcState, now_j: u32) {
        let delta = now_j.wrapping_sub(self.rtt_win_sx);
        if self.first_ack {
            self.snd_una = cc.snd_una;
            self.first_ack = false;
        }
        // Linux compares the s32 delta with a u32, so as unsigned.
        if self.rtt != 0 && delta > self.rtt.max(RTT_MIN) {
            self.filter(delta);
            self.bk = 0;
            self.rtt_win_sx = now_j;
        }
    }

    fn update_rtt_min(&mut self) {
        if self.reset_rtt_min {
            self.rtt_min = self.rtt;
            self.reset_rtt_min = false;
        } else {
            self.rtt_min = self.rtt_min.min(self.rtt);
        }
    }

    /// Linux `westwood_acked_count`: bytes this ACK stands for. A duplicate ACK
    /// counts one MSS (`accounted`), which the next cumulative ACK gives back.
    fn acked_count(&mut self, cc: &CcState) -> u32 {
        let mss = cc.mss;
        self.cumul_ack = cc.snd_una.wrapping_sub(self.snd_una) as u32;
        if self.cumul_ack == 0 {
            self.accounted = self.accounted.wrapping_add(mss);
            self.cumul_ack = mss;
        }
        if self.cumul_ack > mss {
            if self.accounted >= self.cumul_ack {
                self.accounted -= self.cumul_ack;
                self.cumul_ack = mss;
            } else {
                self.cumul_ack -= self.accounted;
                self.accounted = 0;
            }
        }
        self.snd_una = cc.snd_una;
        self.cumul_ack
    }

    /// Linux `tcp_westwood_bw_rttmin`: BWE·RTTmin in segments, at least 2 (u32
    /// product as in C).
    pub fn bw_rttmin(&self, cc: &CcState) -> u32 {
        (self.bw_est.wrapping_mul(self.rtt_min) / cc.mss.max(1)).max(2)
    }
}

/// Linux `westwood_do_filter`: (7a + b)/8.
fn do_filter(a: u32, b: u32) -> u32 {
    (7u32.wrapping_mul(a).wrapping_add(b)) >> 3
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        "westwood"
    }

    /// Linux `tcp_westwood_init`.
    fn init(&mut self, cc: &mut FlowCtx<'_>, now: Instant) {
        *self = Westwood {
            rtt_win_sx: jiffies32(now),
            snd_una: cc.snd_una,
            ..Westwood::default()
        };
    }

    fn on_ack(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        // Linux `tcp_westwood_ack` (in_ack_event). Linux takes the fast path
        // (`westwood_fast_bw`: bytes = SND.UNA's advance) for ACKs its header
        // prediction accepts, the slow path (`westwood_acked_count`) otherwise;
        // brisk takes the slow path for ACKs that carry SACK information or advance
        // nothing, where header prediction would have failed.
        let fast_path = ack.acked_bytes > 0 && cc.sacked_out == 0;
        let now_j = jiffies32(ack.now);
        self.update_window(cc, now_j);
        if fast_path {
            self.bk = self
                .bk
                .wrapping_add(cc.snd_una.wrapping_sub(self.snd_una) as u32);
            self.snd_una = cc.snd_una;
        } else {
            let n = self.acked_count(cc);
            self.bk = self.bk.wrapping_add(n);
        }
        self.update_rtt_min();
        // Linux `tcp_westwood_pkts_acked`.
        if let Some(rtt) = ack.rtt {
            let us = u64::try_from(rtt.as_micros()).unwrap_or(u64::MAX);
            if us > 0 {
                self.rtt = usecs_to_jiffies(us);
            }
        }
    }

    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        reno_cong_avoid(cc, ack.acked_segs);
    }

    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, cause: CongestionCause) -> u32 {
        match cause {
            // CA_EVENT_LOSS: ssthresh from the estimate; RTTmin restarts.
            CongestionCause::Rto => {
                self.reset_rtt_min = true;
                self.bw_rttmin(cc)
            }
            // A tail-loss probe's reduction ends at once (Linux
            // `tcp_process_tlp_ack`), so its CA_EVENT_COMPLETE_CWR follows
            // immediately: the connection sets cwnd to this ssthresh.
            CongestionCause::ProbeLoss => self.bw_rttmin(cc),
            _ => reno_ssthresh(cc.cwnd),
        }
    }

    fn on_event(&mut self, cc: &mut FlowCtx<'_>, _now: Instant, ev: CcEvent) {
        // CA_EVENT_COMPLETE_CWR: the end of fast recovery or CWR (Linux
        // `tcp_end_cwnd_reduction`) sets both windows to BWE·RTTmin. One of the
        // documented writers of cwnd outside `cong_avoid` (see `CongestionControl`):
        // Linux's module writes it here.
        if ev == CcEvent::ExitRecovery {
            let w = self.bw_rttmin(cc);
            cc.ssthresh = w;
            cc.cwnd = w.min(cc.cwnd_clamp.max(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_time::Duration;

    const MSS: u32 = 1000;

    fn cc_at(una: u64) -> CcState {
        let mut cc = CcState::new(10, MSS);
        cc.snd_una = una;
        cc.cwnd_limited = true;
        cc
    }

    fn ack_at(ms: u64, bytes: u64, rtt_ms: u64) -> AckSample {
        AckSample {
            now: Instant::from_millis(ms),
            acked_segs: (bytes / u64::from(MSS)) as u32,
            acked_bytes: bytes,
            rtt: Some(Duration::from_millis(rtt_ms)),
            ..Default::default()
        }
    }

    /// ACKs of `per_ack` bytes every `gap` ms from `from` to `to`, RTT `rtt_ms`.
    fn feed(
        w: &mut Westwood,
        cc: &mut CcState,
        from: u64,
        to: u64,
        gap: u64,
        per_ack: u64,
        rtt_ms: u64,
    ) {
        let mut t = from;
        while t < to {
            cc.snd_una += per_ack;
            w.on_ack(&mut FlowCtx::alone(cc), &ack_at(t, per_ack, rtt_ms));
            t += gap;
        }
    }

    #[test]
    fn the_filter_starts_from_the_first_sample_then_smooths_by_seven_eighths() {
        let mut w = Westwood {
            bk: 8000,
            ..Westwood::default()
        };
        w.filter(10);
        assert_eq!((w.bw_ns_est, w.bw_est), (800, 800));
        w.bk = 1600;
        w.filter(10);
        // ns = (7·800 + 160)/8 = 720; est = (7·800 + 720)/8 = 790.
        assert_eq!((w.bw_ns_est, w.bw_est), (720, 790));
    }

    #[test]
    fn a_steady_rate_gives_bwe_and_the_window_after_recovery_is_bwe_times_rttmin() {
        // 2 segments (2000 B) every 2 ms = 1000 B per jiffy, RTT 100 ms.
        let mut cc = cc_at(0);
        let mut w = Westwood::default();
        w.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        feed(&mut w, &mut cc, 1, 2000, 2, 2000, 100);
        assert_eq!(w.rtt, 100);
        assert_eq!(w.rtt_min_ms(), 100);
        // Windows close every 101..102 jiffies with ~101 ms of ACKs; samples are
        // 1000 ± 20 B/jiffy.
        assert!((980..=1020).contains(&w.bw_est), "{}", w.bw_est);
        // BDP = 1000 B/ms · 100 ms / 1000 B = 100 segments.
        cc.cwnd = 150;
        w.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Loss,
        );
        w.on_event(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CcEvent::ExitRecovery,
        );
        let expect = w.bw_est * 100 / MSS;
        assert_eq!((cc.cwnd, cc.ssthresh), (expect, expect));
        assert!((98..=102).contains(&cc.cwnd), "{}", cc.cwnd);
    }

    #[test]
    fn loss_halves_as_reno_and_an_rto_takes_the_estimate() {
        let mut cc = cc_at(0);
        let mut w = Westwood {
            bw_est: 500,
            rtt_min: 40,
            reset_rtt_min: false,
            ..Westwood::default()
        };
        cc.cwnd = 64;
        let ss = w.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Loss,
        );
        assert_eq!(ss, 32);
        // 500 B/jiffy · 40 jiffies / 1000 B = 20.
        let ss = w.ssthresh(
            &mut FlowCtx::alone(&mut cc),
            Instant::ZERO,
            CongestionCause::Rto,
        );
        assert_eq!(ss, 20);
        assert!(w.reset_rtt_min);
        // No estimate yet: at least 2.
        let w0 = Westwood::default();
        assert_eq!(w0.bw_rttmin(&cc), 2);
    }

    #[test]
    fn duplicate_acks_count_one_mss_that_the_cumulative_ack_gives_back() {
        let mut cc = cc_at(10_000);
        let mut w = Westwood {
            snd_una: 10_000,
            first_ack: false,
            ..Westwood::default()
        };
        cc.sacked_out = 1;
        // Three SACK-only ACKs (SND.UNA unchanged): 1000 B each, 3000 accounted.
        for _ in 0..3 {
            assert_eq!(w.acked_count(&cc), 1000);
        }
        assert_eq!(w.accounted, 3000);
        // A cumulative ACK of 5000 B: 5000 > accounted → 2000 new, accounted 0.
        cc.snd_una += 5000;
        assert_eq!(w.acked_count(&cc), 2000);
        assert_eq!(w.accounted, 0);
        // A cumulative ACK of 1000 B (one MSS) counts as is.
        cc.snd_una += 1000;
        assert_eq!(w.acked_count(&cc), 1000);
    }

    #[test]
    fn windows_shorter_than_50_ms_keep_building_the_sample() {
        // RTT 10 ms: the window closes only after 50 ms.
        let mut cc = cc_at(0);
        let mut w = Westwood::default();
        w.init(&mut FlowCtx::alone(&mut cc), Instant::ZERO);
        feed(&mut w, &mut cc, 1, 50, 1, 1000, 10);
        assert_eq!(w.bw_est, 0);
        feed(&mut w, &mut cc, 50, 53, 1, 1000, 10);
        assert!(w.bw_est > 0);
    }
}
