//! The closing states' timers and TIME-WAIT's segment rules: Linux `tcp_close`,
//! `tcp_fin_time`, `tcp_keepalive_timer`'s FIN-WAIT-2 branch and
//! `tcp_timewait_state_process`; RFC 9293 §3.10.7.4 (TIME-WAIT), RFC 1337.
//!
//! FIN-WAIT-2 bound (issue 13 §1.1). RFC 9293 has no timer for FIN-WAIT-2: a peer
//! that ACKs our FIN and never sends its own would keep the connection forever.
//! Linux bounds it with `tcp_fin_timeout` only for an orphaned socket (the
//! application called `close()`, so the socket is `SOCK_DEAD`); after
//! `shutdown(SHUT_WR)` the application still owns the socket and FIN-WAIT-2 lasts
//! as long as it likes (keepalive aside). brisk draws the same line through its API:
//! `Connection::close` marks the connection orphaned, `shutdown_write` does not, and
//! `abort` ends it at once. Linux moves the orphan to a FIN-WAIT-2 timewait sock
//! that expires silently after `tcp_fin_time`; brisk keeps the connection and arms
//! `Timer::FinWait2` for the same span, then removes it without sending anything
//! (`Closed(Ok(()))` is reported, since our data and FIN were delivered). A segment
//! arriving afterwards finds no connection and the endpoint answers it with RST, as
//! Linux answers a segment for a socket that no longer exists.
//!
//! TIME-WAIT restart (issue 13 §1.2). RFC 9293 §3.10.7.4: "The only thing that can
//! arrive in this state is a retransmission of the remote FIN. Acknowledge it, and
//! restart the 2 MSL timeout." Only that FIN restarts the timer here: its sequence
//! number must be exactly RCV.NXT − 1. Anything else leaves the deadline alone, so a
//! blind sender cannot pin the entry by sending a FIN (or anything) every 2·MSL.

use super::{Connection, State};
use crate::conn::timer::Timer;
use brisk_time::{Duration, Instant};
use brisk_wire::TcpRepr;

impl Connection {
    /// When timer `t` is due, for tests that check a deadline exactly.
    #[cfg(test)]
    pub(crate) fn timer_deadline(&self, t: Timer) -> Option<Instant> {
        self.sub.timers.get(t)
    }

    /// Linux `tcp_fin_time`: the FIN-WAIT-2 timeout, but never under 3.5 RTO, so a
    /// slow path still has time to bring the peer's FIN.
    fn fin_time(&self) -> Duration {
        let rto = self.current_rto();
        self.config.timeouts.fin_timeout.max(rto * 3 + rto / 2)
    }

    /// Arms the orphan timer when an orphaned connection is in FIN-WAIT-2: when our
    /// FIN is ACKed after `close` (Linux `tcp_rcv_state_process`, TCP_FIN_WAIT1 case,
    /// `SOCK_DEAD`), or at `close` if FIN-WAIT-2 came first from `shutdown_write`
    /// (Linux `tcp_close`). Armed once: data arriving later does not extend it.
    #[inline(always)] // every poll asks (a plain hint was not taken); rarely an orphan
    pub(super) fn arm_fin_wait2(&mut self, now: Instant) {
        if self.fin_wait2_unarmed() {
            self.sub
                .timers
                .set(Timer::FinWait2, now.saturating_add(self.fin_time()));
        }
    }

    /// An orphan in FIN-WAIT-2 whose timer is not armed yet (`arm_fin_wait2` arms it).
    #[inline(always)]
    pub(super) fn fin_wait2_unarmed(&self) -> bool {
        self.orphaned && self.state == State::FinWait2 && !self.sub.timers.is_set(Timer::FinWait2)
    }

    /// The orphan timer expired with no FIN from the peer: remove the connection
    /// silently (Linux: the FIN-WAIT-2 timewait sock is descheduled, nothing is sent).
    pub(super) fn on_fin_wait2_timeout(&mut self) {
        if self.orphaned && self.state == State::FinWait2 {
            self.terminate(Ok(()));
        }
    }

    pub(super) fn enter_time_wait(&mut self, now: Instant) {
        self.state = State::TimeWait;
        self.sub.timers.stop_all();
        self.sub.loss.tlp.reset();
        self.sub.probes.probe_pending = false;
        self.restart_time_wait(now);
    }

    fn restart_time_wait(&mut self, now: Instant) {
        self.sub.timers.set(
            Timer::TimeWait,
            now.saturating_add(self.config.timeouts.time_wait),
        );
    }

    /// TIME-WAIT (RFC 9293 §3.10.7.4; Linux `tcp_timewait_state_process`).
    ///
    /// - RST at exactly RCV.NXT ends TIME-WAIT early: Linux's default
    ///   (`tcp_rfc1337` = 0, the "TIME-WAIT assassination" RFC 1337 describes), which
    ///   brisk already had. Any other RST is ignored.
    /// - The peer's retransmitted FIN (FIN at RCV.NXT − 1, possibly after the data it
    ///   first came with) is ACKed at once and restarts 2·MSL: our ACK of it was lost.
    /// - Anything else carrying sequence space (a FIN at another number, data, a SYN)
    ///   gets a rate-limited duplicate ACK and leaves the timer alone. A SYN is not
    ///   taken as a new connection (Linux's TIME-WAIT reuse is not implemented).
    /// - A bare ACK is dropped silently, as before.
    ///
    /// Departure from Linux: Linux reschedules the 2·MSL timer for an in-window bare
    /// ACK at RCV.NXT and for every out-of-window non-RST segment with ACK set (or
    /// rejected by PAWS), including a FIN at any sequence number; that is the blind
    /// extension issue 13 §1.2 closes. brisk follows RFC 9293's narrower rule.
    pub(super) fn on_segment_time_wait(&mut self, now: Instant, seg: &TcpRepr<'_>) {
        let seq = self.unwrap_rcv(seg.seq);
        let rcv_nxt = self.rcv_nxt() as i64;
        let f = seg.flags;
        if f.rst() {
            if seq == rcv_nxt {
                self.terminate(Ok(()));
            }
            return;
        }
        // The FIN's own sequence number: after any payload it carries (i64, from
        // 32-bit values: no overflow).
        let fin_seq = seq + seg.payload.len() as i64;
        if f.fin() && !f.syn() && fin_seq == rcv_nxt - 1 {
            self.ack_now();
            self.restart_time_wait(now);
            return;
        }
        if f.fin() || f.syn() || !seg.payload.is_empty() {
            self.counters.out_of_window += 1;
            self.oow_ack(now);
        }
    }

    /// A duplicate ACK, at most one per `Config::invalid_ratelimit` (Linux
    /// `tcp_timewait_check_oow_rate_limit`), so blind segments cannot make us an ACK
    /// reflector. Departure: Linux exempts data and FINs without SYN from the limit
    /// (`tcp_oow_rate_limited`, to keep loss recovery's duplicate ACKs); in TIME-WAIT
    /// there is no recovery left to serve, and the one segment that needs an answer,
    /// the exact retransmitted FIN, is answered above without a limit.
    fn oow_ack(&mut self, now: Instant) {
        if !self.oow_rate_limited_any(now) {
            self.ack_now();
        }
    }
}
