//! RACK: time-based loss detection (RFC 8985 §6), shaped like Linux `tcp_recovery.c`.
//!
//! A segment is lost once a segment sent after it has been delivered and more than
//! `rack.rtt + reo_wnd` has passed since it was sent. The reordering window starts at
//! `min_rtt / 4` and grows in steps when D-SACKs show that a "loss" was reordering
//! (§6.2 step 4), decaying back after 16 recoveries without D-SACK.

use super::scoreboard::{Scoreboard, Walk};
use brisk_time::{Duration, Instant};

/// RFC 6675 DupThresh (Linux `tp->reordering` default).
pub const DUPTHRESH: u32 = 3;
/// Recoveries a grown reordering window persists without D-SACK (RFC 8985 §6.2).
const REO_WND_PERSIST: u32 = 16;

#[derive(Clone, Debug)]
pub struct Rack {
    /// Transmission time and end sequence of the most recently sent delivered segment.
    xmit_ts: Option<Instant>,
    end_seq: u64,
    /// RTT of that segment.
    rtt: Duration,
    /// Reordering has been observed on this connection (Linux `reord_seen`).
    reord_seen: bool,
    reo_wnd_mult: u32,
    reo_wnd_persist: u32,
    /// D-SACKs before this sequence do not grow the window again (one step per round).
    dsack_round: Option<u64>,
}

impl Default for Rack {
    fn default() -> Self {
        Rack {
            xmit_ts: None,
            end_seq: 0,
            rtt: Duration::ZERO,
            reord_seen: false,
            reo_wnd_mult: 1,
            reo_wnd_persist: 0,
            dsack_round: None,
        }
    }
}

/// RFC 8985 `RACK_sent_after`: was (t1, seq1) sent after (t2, seq2)?
pub fn sent_after(t1: Instant, seq1: u64, t2: Instant, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

/// The verdict of RACK for one outstanding segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Not sent before the most recently delivered segment: no evidence yet.
    NotSentBefore,
    Lost,
    /// Will be lost after this much more time unless delivered first.
    LostIn(Duration),
}

impl Rack {
    /// RFC 8985 §6.2 step 2 (`RACK_update`), for one newly delivered segment.
    /// `retransmitted` + an RTT below `min_rtt` means the ACK is probably for the
    /// original transmission, so it says nothing about the retransmission's time.
    pub fn on_delivered(
        &mut self,
        now: Instant,
        xmit_ts: Instant,
        end_seq: u64,
        retransmitted: bool,
        min_rtt: Duration,
    ) {
        let rtt = now - xmit_ts;
        if retransmitted && rtt < min_rtt {
            return;
        }
        self.rtt = rtt;
        let newer = match self.xmit_ts {
            None => true,
            Some(t) => sent_after(xmit_ts, end_seq, t, self.end_seq),
        };
        if newer {
            self.xmit_ts = Some(xmit_ts);
            self.end_seq = end_seq;
        }
    }

    /// Reordering was observed (a never-retransmitted segment delivered below the
    /// highest SACKed one, or a D-SACK).
    pub fn on_reordering(&mut self) {
        self.reord_seen = true;
    }
    pub fn reordering_seen(&self) -> bool {
        self.reord_seen
    }

    /// RFC 8985 §6.2 step 4: a D-SACK grows the window once per round trip.
    pub fn on_dsack(&mut self, snd_una: u64, snd_nxt: u64) {
        self.reord_seen = true;
        if !matches!(self.dsack_round, Some(r) if snd_una < r) {
            self.reo_wnd_mult = self.reo_wnd_mult.saturating_add(1).min(0xff);
            self.dsack_round = Some(snd_nxt);
            self.reo_wnd_persist = REO_WND_PERSIST;
        }
    }

    /// Called when a recovery episode ends: a grown window decays after 16 recoveries.
    pub fn on_recovery_exit(&mut self) {
        if self.reo_wnd_persist > 0 {
            self.reo_wnd_persist -= 1;
            if self.reo_wnd_persist == 0 {
                self.reo_wnd_mult = 1;
            }
        }
    }

    pub fn reo_wnd_mult(&self) -> u32 {
        self.reo_wnd_mult
    }

    /// RFC 8985 §6.2 step 4 / Linux `tcp_rack_reo_wnd`: zero (pure dupthresh-like
    /// behaviour) while no reordering was seen and we are already in recovery or have
    /// DupThresh SACKed segments; otherwise `min_rtt/4 * mult`, capped at SRTT.
    pub fn reo_wnd(
        &self,
        min_rtt: Duration,
        srtt: Duration,
        in_recovery: bool,
        sacked_out: u32,
    ) -> Duration {
        if !self.reord_seen && (in_recovery || sacked_out >= DUPTHRESH) {
            return Duration::ZERO;
        }
        (min_rtt / 4).saturating_mul(self.reo_wnd_mult).min(srtt)
    }

    /// RFC 8985 §6.2 step 5 for one segment (pure).
    pub fn verdict(
        &self,
        now: Instant,
        xmit_ts: Instant,
        end_seq: u64,
        reo_wnd: Duration,
    ) -> Verdict {
        let Some(rack_ts) = self.xmit_ts else {
            return Verdict::NotSentBefore;
        };
        if !sent_after(rack_ts, self.end_seq, xmit_ts, end_seq) {
            return Verdict::NotSentBefore;
        }
        let deadline = xmit_ts + self.rtt + reo_wnd;
        if deadline <= now {
            Verdict::Lost
        } else {
            Verdict::LostIn(deadline - now)
        }
    }

    /// Whether `detect_loss` can find anything: the oldest transmission RACK may
    /// still judge went out before the RACK segment. Otherwise its walk stops at the
    /// first segment with nothing lost and no timer, whatever the reordering window
    /// (the common case: an in-order ACK leaves only segments sent after the ones it
    /// delivered). Linux's `tcp_rack_detect_loss` likewise ends on the first skb of
    /// `tsorted_sent_queue` not sent before the RACK segment.
    pub fn may_detect(&self, board: &Scoreboard) -> bool {
        let Some(rack_ts) = self.xmit_ts else {
            return false;
        };
        board
            .oldest_in_time_order()
            .is_some_and(|s| sent_after(rack_ts, self.end_seq, s.xmit_ts, s.end))
    }

    /// RFC 8985 `RACK_detect_loss`: walks outstanding segments oldest-transmission first,
    /// marks the lost ones, and stops at the first one sent after the RACK segment (as
    /// Linux does on its time-sorted list). Returns (newly lost, reorder-timer delay).
    ///
    /// Send times never decrease along the transmission order, so neither do the
    /// deadlines `xmit_ts + rack.rtt + reo_wnd`: the lost segments are a prefix of the
    /// walk, and once one segment is not yet lost, none before the stop is, and the
    /// timer (the latest deadline among them) is that of the latest sent. So the walk
    /// ends at the first segment not yet lost and that deadline comes from one lookup
    /// (`Scoreboard::latest_send_before`): per ACK, O(log n) plus O(log n) for each
    /// segment marked lost, where a full walk would step over every segment sent
    /// within the reordering window before the RACK segment (up to a whole flight).
    pub fn detect_loss(
        &self,
        board: &mut Scoreboard,
        now: Instant,
        reo_wnd: Duration,
    ) -> (u32, Option<Duration>) {
        let mut pending = false;
        let lost = board.walk_time_order(|s| {
            debug_assert!(!s.lost || s.retrans, "already waiting for retransmission");
            match self.verdict(now, s.xmit_ts, s.end, reo_wnd) {
                Verdict::NotSentBefore => Walk::Stop,
                Verdict::Lost => Walk::MarkLost,
                Verdict::LostIn(_) => {
                    pending = true;
                    Walk::Stop
                }
            }
        });
        if !pending {
            return (lost, None);
        }
        // The walk stopped at a segment not yet lost, so the latest sent before the
        // RACK segment is not lost either: its deadline lies ahead.
        let timeout = self
            .xmit_ts
            .and_then(|rack_ts| board.latest_send_before(rack_ts, self.end_seq))
            .map(|latest| (latest + self.rtt + reo_wnd).saturating_duration_since(now));
        debug_assert!(timeout.is_some_and(|d| d > Duration::ZERO));
        (lost, timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sent::SentInfo;

    fn ms(v: u64) -> Instant {
        Instant::from_millis(v)
    }

    fn board_sent_at(times: &[u64]) -> Scoreboard {
        let mut b = Scoreboard::new();
        for (i, &t) in times.iter().enumerate() {
            let s = 1 + i as u64 * 1000;
            b.push(
                s,
                s + 1000,
                false,
                SentInfo {
                    sent_at: ms(t),
                    bytes: 1000,
                    ..Default::default()
                },
            );
        }
        b
    }

    #[test]
    fn may_detect_is_false_exactly_when_the_walk_finds_nothing() {
        let mut rack = Rack::default();
        let mut b = board_sent_at(&[0, 1, 2]);
        let reo = Duration::from_millis(1);
        // No delivery yet.
        assert!(!rack.may_detect(&b));
        assert_eq!(rack.detect_loss(&mut b, ms(500), reo), (0, None));
        // The first segment delivered, in order: the rest went out after it.
        b.ack_cumulative(1001, |_| {});
        rack.on_delivered(ms(100), ms(0), 1001, false, Duration::ZERO);
        assert!(!rack.may_detect(&b));
        assert_eq!(rack.detect_loss(&mut b, ms(500), reo), (0, None));
        // The third SACKed: the second went out before it.
        b.sack(&[(2001, 3001)], |_| {});
        rack.on_delivered(ms(102), ms(2), 3001, false, Duration::ZERO);
        assert!(rack.may_detect(&b));
        assert_eq!(rack.detect_loss(&mut b, ms(500), reo), (1, None));
        // Nothing left to judge.
        assert!(!rack.may_detect(&b));
    }

    #[test]
    fn segment_reordered_within_window_is_not_lost() {
        let mut rack = Rack::default();
        let mut b = board_sent_at(&[0, 1, 2]);
        // Segment 3 (sent at 2 ms) delivered at 102 ms: rack.rtt = 100 ms.
        b.sack(&[(2001, 3001)], |_| {});
        rack.on_delivered(ms(102), ms(2), 3001, false, Duration::from_millis(100));
        let reo = rack.reo_wnd(
            Duration::from_millis(100),
            Duration::from_millis(100),
            false,
            1,
        );
        assert_eq!(reo, Duration::from_millis(25));
        // At 110 ms, segment 1 (sent at 0) is due at 0+100+25 = 125 ms and segment 2
        // at 126 ms: nothing lost yet, the timer covers the later one.
        let (lost, timer) = rack.detect_loss(&mut b, ms(110), reo);
        assert_eq!(lost, 0);
        assert_eq!(timer, Some(Duration::from_millis(16)));
        // Past the window it is lost, and so is segment 2 (due at 126 ms).
        let (lost, timer) = rack.detect_loss(&mut b, ms(127), reo);
        assert_eq!(lost, 2);
        assert_eq!(timer, None);
    }

    #[test]
    fn window_is_zero_without_reordering_once_dupthresh_sacked() {
        let rack = Rack::default();
        let w = rack.reo_wnd(
            Duration::from_millis(40),
            Duration::from_millis(50),
            false,
            3,
        );
        assert_eq!(w, Duration::ZERO);
        let w = rack.reo_wnd(
            Duration::from_millis(40),
            Duration::from_millis(50),
            true,
            0,
        );
        assert_eq!(w, Duration::ZERO);
    }

    #[test]
    fn dsack_grows_window_once_per_round_and_decays() {
        let mut rack = Rack::default();
        rack.on_dsack(100, 1000);
        rack.on_dsack(500, 2000); // same round: no growth
        assert_eq!(rack.reo_wnd_mult(), 2);
        rack.on_dsack(1000, 3000);
        assert_eq!(rack.reo_wnd_mult(), 3);
        let w = rack.reo_wnd(
            Duration::from_millis(40),
            Duration::from_millis(100),
            true,
            10,
        );
        assert_eq!(w, Duration::from_millis(30));
        for _ in 0..16 {
            rack.on_recovery_exit();
        }
        assert_eq!(rack.reo_wnd_mult(), 1);
    }

    #[test]
    fn ack_of_original_does_not_move_rack_for_a_fresh_retransmission() {
        let mut rack = Rack::default();
        rack.on_delivered(ms(105), ms(100), 5000, true, Duration::from_millis(50));
        assert_eq!(
            rack.verdict(ms(200), ms(0), 1, Duration::ZERO),
            Verdict::NotSentBefore
        );
    }
}
