//! Delivery-rate estimation, as Linux `net/ipv4/tcp_rate.c` (draft-cheng-iccrg-
//! delivery-rate-estimation): every transmission snapshots the connection's delivery
//! state into its send record ([`SentInfo`]); every ACK turns the snapshot of the most
//! recently sent segment it (S)ACKed into one [`RateSample`]: segments delivered over
//! an interval that is the longer of the send phase and the ACK phase, so neither
//! ACK compression nor a burst of sends can inflate the rate.
//!
//! The functions here are pure (state in, state out) so that they are tested on
//! scripted ACK sequences against values worked out by hand from the Linux source;
//! the connection calls them from two small hooks (`conn/congestion.rs`), and only
//! when the controller asks for samples ([`CcNeeds::rate_samples`]), so plain TCP pays
//! one branch per segment.
//!
//! Linux functions mirrored: `tcp_rate_skb_sent` ([`on_send`]),
//! `tcp_rate_skb_delivered` and `tcp_rate_gen` ([`generate`]),
//! `tcp_rate_check_app_limited` ([`mark_app_limited`]). Times are microseconds, as
//! Linux's `tcp_mstamp`.
//!
//! [`CcNeeds::rate_samples`]: crate::cc::CcNeeds::rate_samples

use crate::sent::SentInfo;
use brisk_time::{Duration, Instant};

/// The connection's delivery state (Linux `tcp_sock`'s `delivered_mstamp`,
/// `first_tx_mstamp`, `app_limited`, `lost`); `delivered` itself is
/// [`CcState::delivered`](crate::cc::CcState::delivered).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateState {
    /// When `delivered` last grew (Linux `tp->delivered_mstamp`).
    pub delivered_mstamp: Instant,
    /// Send time of the most recently delivered segment (start of the current send
    /// phase; Linux `tp->first_tx_mstamp`).
    pub first_tx_mstamp: Instant,
    /// Linux `tp->app_limited`: 0 when not application-limited, else the delivered
    /// count at which the bubble in the pipe has been ACKed and samples are valid
    /// again. A controller may set it (BBR's PROBE_RTT does, to ignore its own low
    /// rate samples).
    pub app_limited: u64,
    /// Segments ever marked lost (Linux `tp->lost`).
    pub lost: u64,
    /// Segments delivered by ACKs that carried ECE (Linux `tp->delivered_ce`,
    /// `tcp_count_delivered` with `ece_ack`): BBR v3's CE-mark ratio.
    pub delivered_ce: u64,
    /// The connection's delivery rate as Linux keeps it for `tcpi_delivery_rate`
    /// (`tp->rate_delivered` segments over `tp->rate_interval_us`, and
    /// `tp->rate_app_limited`): the last valid sample that was not
    /// application-limited, or an application-limited one that was higher. Zero
    /// before the first valid sample. Read by [`RateState::delivery_rate`].
    pub rate_delivered: u32,
    pub rate_interval_us: u32,
    pub rate_app_limited: bool,
}

impl RateState {
    /// The delivery rate in bytes per second for segments of `mss` bytes (Linux
    /// `tcp_get_info`'s `tcpi_delivery_rate`, `rate_delivered · mss · USEC_PER_SEC /
    /// rate_interval_us`); 0 before the first valid sample.
    pub fn delivery_rate(&self, mss: u32) -> u64 {
        if self.rate_interval_us == 0 {
            return 0;
        }
        u64::from(self.rate_delivered) * u64::from(mss) * 1_000_000
            / u64::from(self.rate_interval_us)
    }
}

/// One ACK's delivery-rate sample (Linux `struct rate_sample`). `delivered` and
/// `interval_us` are -1 when the ACK gave no valid sample, as in Linux.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateSample {
    /// Start of the ACK phase: `delivered_mstamp` when the sampled segment was sent.
    pub prior_mstamp: Option<Instant>,
    /// `delivered` when the sampled segment was sent.
    pub prior_delivered: u64,
    /// Segments delivered over the interval; -1: no sample.
    pub delivered: i64,
    /// max(send phase, ACK phase), µs; -1: no valid interval (none, or shorter than
    /// the minimum RTT).
    pub interval_us: i64,
    /// The send phase (first to last send of the delivered data), µs.
    pub snd_interval_us: u32,
    /// The ACK phase, µs.
    pub rcv_interval_us: u32,
    /// RTT of the most recently sent, never-retransmitted segment this ACK
    /// (S)ACKed (Linux `ca_rtt_us`), µs; -1: none.
    pub rtt_us: i64,
    /// Segments newly marked lost while processing this ACK.
    pub losses: u32,
    /// Segments newly (S)ACKed by this ACK.
    pub acked_sacked: u32,
    /// Segments in flight before this ACK.
    pub prior_in_flight: u32,
    /// The sampled segment left while the sender was application-limited.
    pub is_app_limited: bool,
    /// The sampled segment was a retransmission.
    pub is_retrans: bool,
    /// The ACK was (likely) delayed (Linux `FLAG_ACK_MAYBE_DELAYED`).
    pub is_ack_delayed: bool,
    /// BBR v3's fields (google/bbr v3 `struct rate_sample`): packets in flight when
    /// the sampled segment left, itself included (`tx_in_flight`); segments marked
    /// lost since it left (`lost`); segments delivered with ECE over the sample's
    /// interval (`delivered_ce`); whether this ACK carried ECE (`is_ece`). Zero
    /// without a sampled segment.
    pub tx_in_flight: u32,
    pub lost: u32,
    pub delivered_ce: u32,
    pub is_ece: bool,
}

impl Default for RateSample {
    /// No sample.
    fn default() -> Self {
        RateSample {
            prior_mstamp: None,
            prior_delivered: 0,
            delivered: -1,
            interval_us: -1,
            snd_interval_us: 0,
            rcv_interval_us: 0,
            rtt_us: -1,
            losses: 0,
            acked_sacked: 0,
            prior_in_flight: 0,
            is_app_limited: false,
            is_retrans: false,
            is_ack_delayed: false,
            tx_in_flight: 0,
            lost: 0,
            delivered_ce: 0,
            is_ece: false,
        }
    }
}

impl RateSample {
    /// Whether the sample has a delivered count and a valid interval (what BBR's
    /// `bbr_update_bw` asks before using it).
    pub fn is_valid(&self) -> bool {
        self.delivered >= 0 && self.interval_us > 0
    }
}

/// What a transmission records (Linux `tcp_skb_cb.tx`), kept small: the two
/// timestamps as microseconds before the send time, and (BBR v3) the lost and
/// CE-delivered counts' low 32 bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxSnapshot {
    pub first_tx_us: u32,
    pub delivered_us: u32,
    pub app_limited: bool,
    pub lost: u32,
    pub delivered_ce: u32,
}

fn us(t: Instant) -> u64 {
    t.as_micros()
}

fn us_back(now: Instant, then: Instant) -> u32 {
    us(now).saturating_sub(us(then)).min(u64::from(u32::MAX)) as u32
}

/// Linux `tcp_rate_skb_sent`: a segment leaves at `now` with `packets_out` segments
/// outstanding before it. A send with nothing outstanding starts a new send phase and
/// ACK phase (after idle, the idle time must not count in any interval).
#[inline]
pub fn on_send(st: &mut RateState, now: Instant, packets_out: u32) -> TxSnapshot {
    if packets_out == 0 {
        st.first_tx_mstamp = now;
        st.delivered_mstamp = now;
    }
    TxSnapshot {
        first_tx_us: us_back(now, st.first_tx_mstamp),
        delivered_us: us_back(now, st.delivered_mstamp),
        app_limited: st.app_limited != 0,
        lost: st.lost as u32,
        delivered_ce: st.delivered_ce as u32,
    }
}

/// Linux `tcp_rate_check_app_limited`'s action, for a sender that found itself out of
/// data with room in cwnd and no lost segment waiting: the pipe will have a bubble
/// until everything now in flight is delivered.
#[inline]
pub fn mark_app_limited(st: &mut RateState, delivered: u64, in_flight: u32) {
    st.app_limited = app_limited_mark(delivered, in_flight);
}

/// Whether [`mark_app_limited`] with these arguments would leave `st` as it is.
#[inline]
pub fn app_limited_marked(st: &RateState, delivered: u64, in_flight: u32) -> bool {
    st.app_limited == app_limited_mark(delivered, in_flight)
}

#[inline]
fn app_limited_mark(delivered: u64, in_flight: u32) -> u64 {
    (delivered + u64::from(in_flight)).max(1)
}

/// What one ACK delivered, for [`generate`].
#[derive(Clone, Copy, Debug, Default)]
pub struct AckDelivery<'a> {
    /// The most recently sent segment the ACK (S)ACKed (Linux keeps the one
    /// `tcp_skb_sent_after` all others), if any.
    pub newest: Option<&'a SentInfo>,
    /// Segments newly (S)ACKed.
    pub acked_sacked: u32,
    /// Segments newly marked lost.
    pub losses: u32,
    pub prior_in_flight: u32,
    /// Linux `ca_rtt_us` as a duration.
    pub rtt: Option<Duration>,
    /// Linux `FLAG_ACK_MAYBE_DELAYED`.
    pub ack_delayed: bool,
    /// The ACK carried ECE (BBR v3's `is_ece`).
    pub ece: bool,
}

/// Linux `tcp_rate_skb_delivered` (for the newest segment) followed by `tcp_rate_gen`.
/// `delivered` is the connection's count after this ACK; `min_rtt` its minimum RTT
/// (Linux `tcp_min_rtt`; zero, before any sample, reads as Linux's ~0: no interval
/// is valid yet).
pub fn generate(
    st: &mut RateState,
    delivered: u64,
    now: Instant,
    min_rtt: Duration,
    ack: AckDelivery<'_>,
) -> RateSample {
    let mut rs = RateSample {
        acked_sacked: ack.acked_sacked,
        losses: ack.losses,
        prior_in_flight: ack.prior_in_flight,
        rtt_us: ack.rtt.map_or(-1, |r| r.as_micros() as i64),
        is_ack_delayed: ack.ack_delayed,
        is_ece: ack.ece,
        ..RateSample::default()
    };
    // tcp_rate_skb_delivered.
    let mut snd_us = 0u64;
    if let Some(info) = ack.newest {
        let tx = us(info.sent_at);
        rs.prior_delivered = info.delivered_at_send;
        rs.prior_mstamp = Some(Instant::from_micros(
            tx.saturating_sub(u64::from(info.delivered_us)),
        ));
        rs.is_app_limited = info.rate_app_limited;
        rs.is_retrans = info.retransmit;
        st.first_tx_mstamp = info.sent_at;
        snd_us = u64::from(info.first_tx_us);
        // BBR v3's per-sample loss and CE counts (wrapping, as Linux's u32s).
        rs.tx_in_flight = info.in_flight_at_send;
        rs.lost = (st.lost as u32).wrapping_sub(info.lost_at_send);
        rs.delivered_ce = (st.delivered_ce as u32).wrapping_sub(info.delivered_ce_at_send);
    }
    // tcp_rate_gen.
    if st.app_limited != 0 && delivered > st.app_limited {
        st.app_limited = 0;
    }
    if ack.acked_sacked > 0 {
        st.delivered_mstamp = now;
    }
    let Some(prior_mstamp) = rs.prior_mstamp else {
        return rs;
    };
    rs.delivered = delivered.saturating_sub(rs.prior_delivered) as i64;
    let ack_us = us(now).saturating_sub(us(prior_mstamp));
    let interval = snd_us.max(ack_us);
    rs.snd_interval_us = snd_us.min(u64::from(u32::MAX)) as u32;
    rs.rcv_interval_us = ack_us.min(u64::from(u32::MAX)) as u32;
    let min_rtt_us = if min_rtt.is_zero() {
        u64::MAX
    } else {
        min_rtt.as_micros() as u64
    };
    // Linux: an interval below the minimum RTT means the ACK covered data sent
    // before the measured phase (a spurious retransmission's original, say).
    rs.interval_us = if interval < min_rtt_us {
        -1
    } else {
        interval as i64
    };
    // The end of `tcp_rate_gen`: record the last non-app-limited sample, or the
    // highest app-limited one (`rate_delivered / rate_interval_us`, compared by
    // cross-multiplying as Linux does).
    if rs.interval_us > 0 {
        let (d, i) = (rs.delivered as u64, rs.interval_us as u64);
        if !rs.is_app_limited
            || d * u64::from(st.rate_interval_us) >= u64::from(st.rate_delivered) * i
        {
            st.rate_delivered = d.min(u64::from(u32::MAX)) as u32;
            st.rate_interval_us = i.min(u64::from(u32::MAX)) as u32;
            st.rate_app_limited = rs.is_app_limited;
        }
    }
    rs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Instant {
        Instant::from_millis(v)
    }

    /// A sender that keeps send records as the connection does.
    struct Script {
        st: RateState,
        delivered: u64,
        packets_out: u32,
    }

    impl Script {
        fn new() -> Self {
            Script {
                st: RateState::default(),
                delivered: 0,
                packets_out: 0,
            }
        }
        fn send(&mut self, now: Instant) -> SentInfo {
            let snap = on_send(&mut self.st, now, self.packets_out);
            self.packets_out += 1;
            SentInfo {
                sent_at: now,
                bytes: 1000,
                in_flight_at_send: self.packets_out,
                delivered_at_send: self.delivered,
                app_limited: false,
                retransmit: false,
                first_tx_us: snap.first_tx_us,
                delivered_us: snap.delivered_us,
                rate_app_limited: snap.app_limited,
                lost_at_send: snap.lost,
                delivered_ce_at_send: snap.delivered_ce,
            }
        }
        fn ack(&mut self, now: Instant, segs: &[&SentInfo], min_rtt_ms: u64) -> RateSample {
            self.delivered += segs.len() as u64;
            self.packets_out -= segs.len() as u32;
            // The connection hands over the most recently sent one.
            let newest = segs.iter().copied().max_by_key(|s| s.sent_at);
            generate(
                &mut self.st,
                self.delivered,
                now,
                Duration::from_millis(min_rtt_ms),
                AckDelivery {
                    newest,
                    acked_sacked: segs.len() as u32,
                    ..AckDelivery::default()
                },
            )
        }
    }

    #[test]
    fn first_window_then_a_full_round_give_linux_values() {
        let mut s = Script::new();
        // t=0: 4 segments leave with nothing outstanding: phases start at 0.
        let w: Vec<_> = (0..4).map(|_| s.send(ms(0))).collect();
        // t=100 ms: ACK of the first two. Linux: delivered = 2 - 0, snd = 0 - 0,
        // ack = 100 000 - 0, interval = 100 000 µs.
        let rs = s.ack(ms(100), &[&w[0], &w[1]], 100);
        assert_eq!(
            (
                rs.delivered,
                rs.interval_us,
                rs.snd_interval_us,
                rs.rcv_interval_us
            ),
            (2, 100_000, 0, 100_000)
        );
        assert_eq!(s.st.delivered_mstamp, ms(100));
        // Two more leave at 100 ms: their snapshot holds first_tx = 0 (the newest
        // delivered segment's send time), delivered_mstamp = 100 ms, delivered = 2.
        let a = s.send(ms(100));
        let b = s.send(ms(100));
        assert_eq!(
            (a.first_tx_us, a.delivered_us, a.delivered_at_send),
            (100_000, 0, 2)
        );
        // t=110 ms: the rest of the first window: delivered = 4 - 0 over
        // max(0, 110 000).
        let rs = s.ack(ms(110), &[&w[2], &w[3]], 100);
        assert_eq!((rs.delivered, rs.interval_us), (4, 110_000));
        // t=200 ms: `a` and `b`: delivered = 6 - 2, snd = 100 000 - 0,
        // ack = 200 000 - 100 000: 4 segments in 100 ms.
        let rs = s.ack(ms(200), &[&a, &b], 100);
        assert_eq!(
            (
                rs.delivered,
                rs.interval_us,
                rs.snd_interval_us,
                rs.rcv_interval_us
            ),
            (4, 100_000, 100_000, 100_000)
        );
        assert_eq!(rs.prior_delivered, 2);
        assert_eq!(s.st.first_tx_mstamp, ms(100));
    }

    /// `tcp_rate_gen`'s record of the connection's delivery rate: every valid sample
    /// that is not application-limited replaces it; an application-limited one only
    /// if it is higher; an invalid one never.
    #[test]
    fn the_delivery_rate_keeps_the_last_full_sample_or_a_higher_app_limited_one() {
        let mut s = Script::new();
        assert_eq!(s.st.delivery_rate(1000), 0);
        let w: Vec<_> = (0..4).map(|_| s.send(ms(0))).collect();
        // 2 segments over 100 ms: 20 000 B/s at 1000-byte segments.
        s.ack(ms(100), &[&w[0], &w[1]], 100);
        assert_eq!(s.st.delivery_rate(1000), 20_000);
        // 4 over 110 ms.
        s.ack(ms(110), &[&w[2], &w[3]], 100);
        assert_eq!(s.st.delivery_rate(1000), 4 * 1000 * 1_000_000 / 110_000);
        assert!(!s.st.rate_app_limited);
        // Out of data: what is sent next is app-limited. One segment over 100 ms
        // (10 000 B/s) is lower: kept out.
        mark_app_limited(&mut s.st, s.delivered, s.packets_out);
        let a = s.send(ms(110));
        assert!(a.rate_app_limited);
        s.ack(ms(210), &[&a], 100);
        assert_eq!(s.st.delivery_rate(1000), 4 * 1000 * 1_000_000 / 110_000);
        // An app-limited sample above it replaces it.
        mark_app_limited(&mut s.st, s.delivered, s.packets_out);
        let b: Vec<_> = (0..8).map(|_| s.send(ms(210))).collect();
        let refs: Vec<&SentInfo> = b.iter().collect();
        s.ack(ms(310), &refs, 100);
        assert!(s.st.rate_app_limited);
        assert_eq!(s.st.delivery_rate(1000), 80_000);
        // An invalid sample (interval below the min RTT) changes nothing.
        let c = s.send(ms(310));
        s.ack(ms(315), &[&c], 100);
        assert_eq!(s.st.delivery_rate(1000), 80_000);
    }

    #[test]
    fn ack_compression_cannot_inflate_the_rate_and_short_intervals_are_invalid() {
        let mut s = Script::new();
        // Paced sends 10 ms apart: the send phase is 30 ms long.
        let w: Vec<_> = (0..4).map(|i| s.send(ms(10 * i))).collect();
        // All four ACKed at once at 50 ms (compressed ACKs): snd phase of the newest =
        // 30 ms - 0, ack phase = 50 ms - 0: interval 50 ms.
        let rs = s.ack(ms(50), &[&w[0], &w[1], &w[2], &w[3]], 40);
        assert_eq!((rs.delivered, rs.interval_us), (4, 50_000));
        // The same with a min RTT above the interval: Linux drops it (-1), keeps
        // the delivered count.
        let mut s = Script::new();
        let w: Vec<_> = (0..2).map(|_| s.send(ms(0))).collect();
        let rs = s.ack(ms(5), &[&w[0], &w[1]], 20);
        assert_eq!((rs.delivered, rs.interval_us), (2, -1));
        assert!(!rs.is_valid());
        // No RTT sample yet (min RTT zero, Linux ~0): never a valid interval.
        let mut s = Script::new();
        let w = s.send(ms(0));
        let rs = s.ack(ms(50), &[&w], 0);
        assert_eq!(rs.interval_us, -1);
    }

    #[test]
    fn sacked_segments_count_and_the_newest_send_sets_the_phase() {
        let mut s = Script::new();
        let w: Vec<_> = (0..6).map(|i| s.send(ms(i))).collect();
        // The first is lost; a SACK for the 2nd to 5th at 100 ms counts four, sampled
        // from the newest (sent at 4 ms): delivered 4 - 0 over max(4 ms - 0, 100 ms).
        let rs = s.ack(ms(100), &[&w[1], &w[2], &w[3], &w[4]], 90);
        assert_eq!(
            (rs.delivered, rs.interval_us, rs.acked_sacked),
            (4, 100_000, 4)
        );
        assert_eq!(s.st.first_tx_mstamp, ms(4));
        // The retransmission of the first leaves at 100 ms; its snapshot:
        // first_tx = 4 ms, delivered_mstamp = 100 ms, delivered = 4.
        let mut r = s.send(ms(100));
        r.retransmit = true;
        assert_eq!((r.first_tx_us, r.delivered_us), (96_000, 0));
        // A cumulative ACK at 200 ms covers it and the last original: the
        // retransmission is the newest send; delivered 6 - 4 over
        // max(100 - 4 ms, 200 - 100 ms) = 100 ms.
        let rs = s.ack(ms(200), &[&r, &w[5]], 90);
        assert_eq!(
            (rs.delivered, rs.interval_us, rs.snd_interval_us),
            (2, 100_000, 96_000)
        );
        assert!(rs.is_retrans);
    }

    #[test]
    fn app_limited_marks_samples_until_the_bubble_is_acked() {
        let mut s = Script::new();
        let w: Vec<_> = (0..2).map(|_| s.send(ms(0))).collect();
        // Out of data with 2 in flight and 0 delivered: the mark is 0 + 2.
        mark_app_limited(&mut s.st, s.delivered, 2);
        assert_eq!(s.st.app_limited, 2);
        let x = s.send(ms(1));
        assert!(x.rate_app_limited);
        let rs = s.ack(ms(100), &[&w[0], &w[1]], 50);
        // w were sent before the mark: not app-limited; delivered = 2 is not past
        // the mark, which stays.
        assert!(!rs.is_app_limited);
        assert_eq!(s.st.app_limited, 2);
        let rs = s.ack(ms(101), &[&x], 50);
        // x carries the mark; delivered 3 > 2 clears it.
        assert!(rs.is_app_limited);
        assert_eq!(s.st.app_limited, 0);
        // Nothing outstanding, delivered 0: Linux's `?: 1`.
        let mut st = RateState::default();
        mark_app_limited(&mut st, 0, 0);
        assert_eq!(st.app_limited, 1);
    }

    #[test]
    fn an_ack_without_delivery_gives_no_sample_and_keeps_the_stamp() {
        let mut s = Script::new();
        let _ = s.send(ms(0));
        let rs = s.ack(ms(30), &[], 10);
        assert_eq!((rs.delivered, rs.interval_us), (-1, -1));
        assert_eq!(s.st.delivered_mstamp, ms(0));
    }

    #[test]
    fn idle_restart_starts_new_phases() {
        let mut s = Script::new();
        let a = s.send(ms(0));
        s.ack(ms(100), &[&a], 100);
        // Idle for 10 s, then a send with nothing out: both phases restart, so the
        // next sample does not include the idle time.
        let b = s.send(ms(10_100));
        assert_eq!((b.first_tx_us, b.delivered_us), (0, 0));
        let rs = s.ack(ms(10_200), &[&b], 100);
        assert_eq!((rs.delivered, rs.interval_us), (1, 100_000));
    }
}
