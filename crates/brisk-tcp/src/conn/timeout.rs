//! What each timer does when it expires (timers are handled in `Timer::ALL` order).

use super::loss::Entry;
use super::rto_timer::RtoArm;
use super::{Connection, State};
use crate::cc::CongestionCause;
use crate::conn::timer::Timer;
use crate::event::{ConnError, TraceEvent};
use crate::recovery::rto;
use brisk_time::Instant;

impl Connection {
    /// Expires every timer due at `now`, in a fixed order.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.mp.is_some() {
            return self.mp_handle_timeout(now);
        }
        for t in Timer::ALL {
            if self.state == State::Closed {
                return;
            }
            if !self.sub.timers.expire(t, now) {
                continue;
            }
            match t {
                Timer::Rto => self.on_rto(now),
                Timer::Tlp => self.on_tlp_timer(now),
                Timer::RackReorder => self.on_reorder_timer(now),
                Timer::DelayedAck => self.on_delayed_ack_timer(),
                Timer::Persist => self.on_persist(now),
                Timer::Keepalive => self.on_keepalive(now),
                Timer::TimeWait => self.terminate(Ok(())),
                Timer::FinWait2 => self.on_fin_wait2_timeout(),
                Timer::UserTimeout => self.on_user_timeout(now),
                Timer::Pacing => {}
            }
        }
    }

    /// RFC 6298 §5.4-5.7 and RFC 5681 §3.1: back off, collapse cwnd, retransmit from
    /// SND.UNA (everything outstanding is marked lost, Linux `tcp_enter_loss`).
    fn on_rto(&mut self, now: Instant) {
        if matches!(self.state, State::SynSent | State::SynReceived) {
            if self.inspace.is_some() && self.state == State::SynSent && self.inspace_syn_u_rto(now)
            {
                return;
            }
            let limit = if self.state == State::SynSent {
                self.config.timeouts.syn_retries
            } else {
                super::SYNACK_RETRIES
            };
            if self.sub.hs.syn_retries >= limit {
                self.terminate(Err(ConnError::TimedOut {
                    retries: self.sub.hs.syn_retries,
                }));
                return;
            }
            self.sub.hs.syn_retries += 1;
            self.sub.hs.syn_pending = true;
            self.sub.hs.syn_retransmitted = true;
            self.arm_rto(now, RtoArm::HandshakeRetry);
            return;
        }
        if !self.sub.loss.outstanding() {
            return;
        }
        let backoff = match self.sub.loss.back_off(self.config.recovery.max_retries) {
            Ok(backoff) => backoff,
            Err(retries) => {
                self.terminate(Err(ConnError::TimedOut { retries }));
                return;
            }
        };
        self.info.rto_count += 1;
        self.trace(TraceEvent::Rto { at: now, backoff });
        self.enter_loss(now);
        self.arm_rto(now, RtoArm::Backoff);
    }

    /// Linux `tcp_enter_loss`. Loss recovery decides the episode (a new one outside
    /// a recovery, after its recovery point, or the first timeout after an undone
    /// one); congestion control responds to the RTO (ssthresh cut once per episode);
    /// then loss recovery marks everything outstanding lost and arms F-RTO.
    pub(super) fn enter_loss(&mut self, now: Instant) {
        self.refresh_cc_state();
        let una = self.sub.snd.snd_una;
        let episode = self.sub.loss.loss_episode(una);
        let (cwnd, ssthresh) = self.sub.cong.window();
        if episode.leaves_recovery {
            self.trace(TraceEvent::Recovery {
                at: now,
                enter: false,
            });
        }
        self.congestion_response(now, CongestionCause::Rto, episode.new_episode);
        let nxt = self.sub.snd.snd_nxt;
        let frto = self.config.recovery.frto;
        let (lost, reneged) = self
            .sub
            .loss
            .enter_loss(episode, cwnd, ssthresh, una, nxt, frto);
        if reneged {
            self.counters.sack_reneging += 1;
        }
        self.info.lost += u64::from(lost);
        self.sub.timers.stop(Timer::Tlp);
        self.sub.timers.stop(Timer::RackReorder);
        self.trace_cwnd(now);
    }

    fn on_tlp_timer(&mut self, now: Instant) {
        if self.sub.loss.probe_due() {
            self.arm_rto(now, RtoArm::Probe);
        }
    }

    /// RFC 8985 §6.3: re-run RACK; newly lost segments may start recovery.
    /// The loss-detection timer: RACK's reorder timer (RFC 8985 §6.3), or without RACK
    /// the delayed early retransmit's (Linux `ICSK_TIME_EARLY_RETRANS`).
    fn on_reorder_timer(&mut self, now: Instant) {
        let prior_in_flight = self.sub.loss.in_flight();
        if self.config.recovery.rack {
            self.rack_detect(now);
        } else {
            self.early_retransmit_timer();
        }
        if self.sub.loss.entry_due(false, false) == Some(Entry::Recovery) {
            self.enter_recovery(now, prior_in_flight, false);
        }
    }

    /// Zero-window probe (RFC 9293 §3.8.6.1; Linux `tcp_probe_timer`): answered probes
    /// keep the connection alive indefinitely, unanswered ones count towards
    /// `max_retries`.
    fn on_persist(&mut self, now: Instant) {
        let unsent = self.has_unsent_data();
        if !self.state.synchronized() || self.sub.loss.outstanding() || !unsent {
            self.sub.probes.persist_backoff = 0;
            return;
        }
        if self.sub.probes.persist_probes >= self.config.recovery.max_retries {
            self.terminate(Err(ConnError::TimedOut {
                retries: self.sub.probes.persist_probes,
            }));
            return;
        }
        self.sub.probes.persist_probes += 1;
        self.sub.probes.persist_backoff = self.sub.probes.persist_backoff.saturating_add(1);
        self.sub.probes.probe_pending = true;
        let t = rto::backoff(
            self.sub.loss.rto(),
            self.sub.probes.persist_backoff,
            self.config.recovery.max_rto,
        );
        self.sub.timers.set(Timer::Persist, now + t);
    }

    /// RFC 1122 §4.2.3.6 keepalive, Linux `tcp_keepalive_timer`.
    fn on_keepalive(&mut self, now: Instant) {
        let Some(idle) = self.config.timeouts.keepalive else {
            return;
        };
        if !matches!(
            self.state,
            State::Established | State::CloseWait | State::FinWait2
        ) {
            return;
        }
        let busy = self.sub.loss.outstanding() || self.has_unsent_data();
        let elapsed = now - self.sub.probes.last_recv;
        if busy {
            self.sub.timers.set(Timer::Keepalive, now + idle);
            return;
        }
        if elapsed < idle && self.sub.probes.keepalive_probes == 0 {
            self.sub
                .timers
                .set(Timer::Keepalive, self.sub.probes.last_recv + idle);
            return;
        }
        if self.sub.probes.keepalive_probes >= self.config.timeouts.keepalive_probes {
            self.queue_rst_ack();
            self.terminate(Err(ConnError::KeepaliveTimeout));
            return;
        }
        self.sub.probes.keepalive_probes += 1;
        self.sub.probes.probe_pending = true;
        self.sub.timers.set(
            Timer::Keepalive,
            now + self.config.timeouts.keepalive_interval,
        );
    }

    /// RFC 5482 / RFC 9293 §3.8.3: data unacknowledged for the user timeout aborts.
    fn on_user_timeout(&mut self, now: Instant) {
        let Some(uto) = self.config.timeouts.user_timeout else {
            return;
        };
        if !self.sub.loss.outstanding() {
            return;
        }
        let last_progress = self.sub.loss.last_progress();
        if now - last_progress < uto {
            self.sub.timers.set(Timer::UserTimeout, last_progress + uto);
            return;
        }
        self.queue_rst_ack();
        self.terminate(Err(ConnError::UserTimeout));
    }
}
