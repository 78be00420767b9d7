//! Pacing in the sender, as Linux's internal pacing (no fq qdisc): a paced segment
//! may leave once the clock reaches `tcp_wstamp_ns`, the earliest departure time the
//! previous send set; each send moves it on by the segment's length at the pacing
//! rate. Sans-IO: the connection never waits; it arms `Timer::Pacing` for the
//! departure time and its `poll_at` reports it.
//!
//! Linux functions mirrored:
//! - `tcp_pacing_check` ([`Pacer::wait`]): hold a send while `tcp_wstamp_ns` is ahead;
//! - `__tcp_transmit_skb` and `tcp_update_skb_after_send` ([`Pacer::on_sent`]):
//!   `wstamp = max(wstamp, now)`, then `+= len / rate`, less up to half of it as
//!   credit for a late send; the first 10 data segments (`data_segs_out < 10`) unpaced;
//! - `tcp_tso_autosize` ([`Pacer::set_rate`]): Linux sends a TSO burst of
//!   `max(rate >> sk_pacing_shift + (64 KB >> (min_rtt >> 9)), min_tso_segs)`
//!   segments (at most 64 KB) at one departure time; brisk has no TSO, so that many
//!   segments leave back to back at one instant and the departure time moves once
//!   per segment (the sum is the skb's);
//! - `tcp_update_pacing_rate` ([`default_rate`]): without a controller's rate,
//!   `mss · max(cwnd, packets_out) / srtt` × 200 % in slow start (cwnd <
//!   ssthresh / 2), × 120 % after.

use brisk_time::{Duration, Instant};

/// Linux `sk_pacing_shift` default: a burst is about 1 ms of data at the rate.
const PACING_SHIFT: u32 = 10;
/// Linux `sk_gso_max_size` (GSO_LEGACY_MAX_SIZE): the largest burst, bytes.
const GSO_MAX_SIZE: u64 = 65_536;
/// Linux `tcp_tso_rtt_log`: small min RTTs earn larger bursts.
const TSO_RTT_LOG: u32 = 9;
/// Linux `tcp_update_skb_after_send`: `data_segs_out >= 10` before pacing applies.
const UNPACED_SEGS: u64 = 10;
/// Linux `tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio`, percent.
const SS_RATIO: u64 = 200;
const CA_RATIO: u64 = 120;

/// The pacing state of one connection.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pacer {
    /// Bytes per second; 0: no rate yet (unpaced, Linux's ~0).
    rate: u64,
    /// Linux `tcp_wstamp_ns`: the earliest departure of the next paced burst.
    wstamp: Instant,
    /// Segments per burst (`tcp_tso_autosize`).
    quantum: u32,
    /// Segments the burst started at `burst_at` may still carry.
    burst_left: u32,
    burst_at: Instant,
    /// What is left of the burst's late-send credit, ns.
    credit_ns: u64,
    /// Linux `tp->data_segs_out`.
    data_segs_out: u64,
}

impl Pacer {
    pub fn new() -> Self {
        Pacer {
            quantum: 2,
            ..Pacer::default()
        }
    }

    /// The earliest departure time of the next burst (Linux `tcp_wstamp_ns`).
    pub fn edt(&self) -> Instant {
        self.wstamp
    }

    /// Segments per burst.
    #[cfg(test)]
    pub fn quantum(&self) -> u32 {
        self.quantum
    }

    /// A new rate (bytes/s, 0: unpaced) and the burst size `tcp_tso_autosize` gives
    /// at it for `mss`, the minimum RTT (zero: none yet) and the controller's
    /// `min_tso_segs`.
    pub fn set_rate(&mut self, rate: u64, mss: u32, min_rtt: Duration, min_tso_segs: u32) {
        self.rate = rate;
        let mut bytes = rate >> PACING_SHIFT;
        if !min_rtt.is_zero() {
            let r = (min_rtt.as_micros() as u64) >> TSO_RTT_LOG;
            if r < 32 {
                bytes += GSO_MAX_SIZE >> r;
            }
        }
        let bytes = bytes.min(GSO_MAX_SIZE);
        let segs = (bytes / u64::from(mss.max(1))).max(u64::from(min_tso_segs.max(1)));
        self.quantum = segs.min(u64::from(u32::MAX)) as u32;
    }

    /// Linux `tcp_pacing_check`: `Some(t)` holds a segment until `t`; `None` lets it go
    /// (no rate, the departure time reached, or a burst under way at this instant).
    #[inline]
    pub fn wait(&self, now: Instant) -> Option<Instant> {
        if self.rate == 0 || self.wstamp <= now || (self.burst_left > 0 && self.burst_at == now) {
            None
        } else {
            Some(self.wstamp)
        }
    }

    /// A data segment of `len` payload bytes left at `now`.
    pub fn on_sent(&mut self, now: Instant, len: u32) {
        self.data_segs_out += 1;
        if !(self.burst_left > 0 && self.burst_at == now) {
            // A new burst (Linux: a new skb): the departure time catches up with the
            // clock, and a late start is credited.
            let prior = self.wstamp;
            self.wstamp = self.wstamp.max(now);
            self.credit_ns = (self.wstamp - prior).as_nanos() as u64;
            self.burst_left = self.quantum.max(1);
            self.burst_at = now;
        }
        self.burst_left -= 1;
        if self.rate == 0 || self.data_segs_out < UNPACED_SEGS {
            return;
        }
        let mut len_ns = u64::from(len) * 1_000_000_000 / self.rate;
        let credit = (len_ns / 2).min(self.credit_ns);
        self.credit_ns -= credit;
        len_ns -= credit;
        self.wstamp = self.wstamp.saturating_add_nanos(len_ns);
    }
}

/// Linux `tcp_update_pacing_rate`: the rate for a connection whose controller sets
/// none (bytes/s; 0 without an RTT sample, where Linux's rate is unbounded).
pub fn default_rate(mss: u32, cwnd: u32, ssthresh: u32, packets_out: u32, srtt: Duration) -> u64 {
    let srtt_us = srtt.as_micros() as u64;
    if srtt_us == 0 {
        return 0;
    }
    let ratio = if cwnd < ssthresh / 2 {
        SS_RATIO
    } else {
        CA_RATIO
    };
    let bytes = u64::from(mss) * u64::from(cwnd.max(packets_out));
    bytes.saturating_mul(10_000).saturating_mul(ratio) / srtt_us
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_rate_is_linux_tcp_update_pacing_rate() {
        // 10 segments of 1448 B per 100 ms = 144 800 B/s; slow start doubles it.
        let srtt = Duration::from_millis(100);
        assert_eq!(default_rate(1448, 10, u32::MAX, 0, srtt), 289_600);
        // Congestion avoidance (cwnd >= ssthresh / 2): 120 %.
        assert_eq!(default_rate(1448, 10, 20, 0, srtt), 173_760);
        // packets_out above cwnd counts.
        assert_eq!(default_rate(1448, 10, 20, 20, srtt), 347_520);
        assert_eq!(default_rate(1448, 10, 20, 0, Duration::ZERO), 0);
    }

    #[test]
    fn bursts_follow_tcp_tso_autosize() {
        let mut p = Pacer::new();
        // 1 MB/s: 1024 B per ms is less than one segment: min_tso_segs (2).
        p.set_rate(1_000_000, 1448, Duration::from_millis(50), 2);
        assert_eq!(p.quantum(), 2);
        // 100 MB/s: 97 656 B per ms, capped at 64 KB = 45 segments.
        p.set_rate(100_000_000, 1448, Duration::from_millis(50), 2);
        assert_eq!(p.quantum(), 45);
        // A 1 ms min RTT adds 64 KB >> 1: 1 MB/s gets 1024 + 32 768 B = 23 segments.
        p.set_rate(1_000_000, 1448, Duration::from_millis(1), 2);
        assert_eq!(p.quantum(), 23);
    }

    #[test]
    fn segments_leave_at_the_rate_after_the_first_ten() {
        let mut p = Pacer::new();
        // 1448 B at 1 448 000 B/s: 1 ms per segment; bursts of 2.
        p.set_rate(1_448_000, 1448, Duration::from_millis(100), 2);
        let t0 = Instant::from_millis(1000);
        for _ in 0..9 {
            assert_eq!(p.wait(t0), None);
            p.on_sent(t0, 1448);
        }
        // The 10th is paced: it moves the departure time 1 ms on, but goes now (it
        // completes the burst that began at t0).
        assert_eq!(p.wait(t0), None);
        p.on_sent(t0, 1448);
        assert_eq!(p.edt(), t0 + Duration::from_millis(1));
        // A new burst must wait for it.
        assert_eq!(p.wait(t0), Some(t0 + Duration::from_millis(1)));
        let t1 = t0 + Duration::from_millis(1);
        p.on_sent(t1, 1448);
        assert_eq!(p.wait(t1), None); // the burst's second segment
        p.on_sent(t1, 1448);
        assert_eq!(p.wait(t1), Some(t1 + Duration::from_millis(2)));
        // Sent 0.4 ms late: the 0.4 ms are credited (at most half a segment's time).
        let late = t1 + Duration::from_micros(2400);
        p.on_sent(late, 1448);
        assert_eq!(p.edt(), late + Duration::from_micros(600));
        p.on_sent(late, 1448);
        assert_eq!(p.edt(), late + Duration::from_micros(1600));
    }

    #[test]
    fn no_rate_means_no_wait() {
        let mut p = Pacer::new();
        for i in 0..50 {
            p.on_sent(Instant::from_micros(i), 1448);
            assert_eq!(p.wait(Instant::from_micros(i)), None);
        }
    }
}
