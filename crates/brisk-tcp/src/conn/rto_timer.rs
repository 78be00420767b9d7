//! The one place the retransmission timer is armed, with the reason (RFC 6298 §5,
//! Linux `tcp_rearm_rto` / `inet_csk_reset_xmit_timer` callers). RTO-restart
//! (RFC 7765: arm for the earliest outstanding segment's send time rather than now,
//! when few segments are outstanding) belongs here, in the `Progress` and `DataSent`
//! arms, and nowhere else.

use super::Connection;
use crate::conn::timer::Timer;
use crate::recovery::rto;
use brisk_time::{Duration, Instant};

/// Why the RTO is (re-)armed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RtoArm {
    /// A SYN or SYN-ACK left: arm with the handshake's backoff, if not armed.
    Handshake,
    /// The handshake timer fired and a SYN goes again: the next backoff step.
    HandshakeRetry,
    /// Data (new or retransmitted) left: arm if not armed (RFC 6298 §5.1), and the
    /// user timeout likewise.
    DataSent,
    /// An ACK acknowledged new data with data still outstanding: restart (§5.3), and
    /// the user timeout.
    Progress,
    /// The head of the queue was fast-retransmitted: restart (Linux
    /// `tcp_xmit_retransmit_queue`). Otherwise a lost fast retransmission, found lost
    /// by RACK one RTT later and resent, still has the RTO armed from the last
    /// cumulative ACK, and on a bloated path (RTT ~ RTO) that RTO fires spuriously.
    HeadRetransmit,
    /// A tail-loss probe was sent or is due: Linux re-arms a full RTO behind it.
    Probe,
    /// The RTO fired and was backed off (§5.5-5.6): restart with the new value.
    Backoff,
    /// The cumulative ACK stopped at a segment we hold as SACKed: the peer reneged
    /// (RFC 2018 §8). Time out soon, max(srtt/16, 10 ms), so the timeout clears the
    /// SACK marks and resends (Linux `tcp_check_sack_reneging`).
    Reneging,
}

impl Connection {
    pub(super) fn arm_rto(&mut self, now: Instant, why: RtoArm) {
        match why {
            RtoArm::Handshake | RtoArm::HandshakeRetry => {
                if why == RtoArm::Handshake && self.sub.timers.is_set(Timer::Rto) {
                    return;
                }
                let t = rto::backoff(
                    self.config.recovery.initial_rto,
                    self.sub.hs.syn_retries,
                    self.config.recovery.max_rto,
                );
                self.sub.timers.set(Timer::Rto, now + t);
            }
            RtoArm::DataSent => {
                if !self.sub.timers.is_set(Timer::Rto) {
                    let t = self.current_rto();
                    self.sub.timers.set(Timer::Rto, now + t);
                }
                if let Some(uto) = self.config.timeouts.user_timeout {
                    if !self.sub.timers.is_set(Timer::UserTimeout) {
                        self.sub.timers.set(Timer::UserTimeout, now + uto);
                    }
                }
            }
            RtoArm::Progress => {
                let t = self.current_rto();
                let at = self.rto_restart_base().map_or(now + t, |base| {
                    // RFC 7765 §4 step 3: RTO − T_earliest if positive, else RTO.
                    Some(base + t).filter(|at| *at > now).unwrap_or(now + t)
                });
                self.sub.timers.set(Timer::Rto, at);
                if let Some(uto) = self.config.timeouts.user_timeout {
                    self.sub.timers.set(Timer::UserTimeout, now + uto);
                }
            }
            RtoArm::Reneging => {
                let srtt = self.sub.loss.view().srtt;
                let t = (srtt / 16).max(Duration::from_millis(10));
                self.sub.timers.set(Timer::Rto, now + t);
            }
            RtoArm::HeadRetransmit | RtoArm::Probe | RtoArm::Backoff => {
                let t = self.current_rto();
                self.sub.timers.set(Timer::Rto, now + t);
            }
        }
    }

    /// RTO-restart (RFC 7765 §4 steps 1-2): with fewer than rrthresh segments
    /// outstanding and no unsent data ready, the earliest outstanding segment's last
    /// (re)transmission time (Linux `skb->when`, spec resolution B3); else None and the
    /// RTO restarts from now.
    fn rto_restart_base(&self) -> Option<Instant> {
        let rrthresh = self.config.recovery.rto_restart?;
        let unsent = self.has_unsent_data();
        if unsent || self.sub.loss.packets_out() >= rrthresh {
            return None;
        }
        self.sub.loss.earliest_xmit()
    }

    /// Nothing is outstanding: no retransmission, probe, reorder or user timer.
    /// Inline: four slot takes, after every ACK that leaves nothing outstanding.
    #[inline]
    pub(super) fn disarm_rto(&mut self) {
        self.sub.timers.stop(Timer::Rto);
        self.sub.timers.stop(Timer::Tlp);
        self.sub.timers.stop(Timer::RackReorder);
        self.sub.timers.stop(Timer::UserTimeout);
    }
}
