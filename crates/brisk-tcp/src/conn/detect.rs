//! Loss detection on the sender (Linux `tcp_rack_mark_lost`, `tcp_mark_head_lost`,
//! `tcp_newreno_mark_lost`) and the loss-probe timer (`tcp_schedule_loss_probe`):
//! RACK (RFC 8985 §6.2-6.3), RFC 6675 DupThresh when RACK is off, RFC 6582 NewReno
//! for peers without SACK, and TLP scheduling (RFC 8985 §7.2).

use super::{CaState, Connection};
use crate::conn::timer::Timer;
use crate::recovery::rack::DUPTHRESH;
use crate::recovery::tlp;
use brisk_time::{Duration, Instant};

impl Connection {
    /// RACK (RFC 8985 §6.2 step 5) plus the reorder timer (§6.3).
    pub(super) fn rack_detect(&mut self, now: Instant) {
        // Nothing can be lost and no timer is due (`Rack::may_detect`): the result of
        // `detect_loss` would be (0, None), so skip the reordering window and the walk.
        if !self.sub.loss.rack.may_detect(&self.sub.loss.board) {
            self.sub.timers.stop(Timer::RackReorder);
            return;
        }
        let min_rtt = self.sub.loss.rtt.min_rtt().unwrap_or(Duration::ZERO);
        let srtt = self.sub.loss.rtt.srtt().unwrap_or(Duration::ZERO);
        let reo = self.sub.loss.rack.reo_wnd(
            min_rtt,
            srtt,
            self.sub.cong.ca_state >= CaState::Recovery,
            self.sub.loss.board.sacked_out(),
        );
        let (lost, timeout) = self
            .sub
            .loss
            .rack
            .detect_loss(&mut self.sub.loss.board, now, reo);
        self.info.lost += u64::from(lost);
        match timeout {
            Some(t) => self.sub.timers.set(Timer::RackReorder, now + t),
            None => self.sub.timers.stop(Timer::RackReorder),
        }
    }

    /// RFC 6675 `IsLost` without RACK: a segment with DupThresh SACKed segments above
    /// it is lost. O(outstanding); only used when RACK is disabled.
    pub(super) fn dupthresh_detect(&mut self) {
        let mut above = 0u32;
        let mut lost_ids = Vec::new();
        for s in self
            .sub
            .loss
            .board
            .iter()
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
        {
            if s.sacked {
                above += 1;
            } else if above >= DUPTHRESH && !s.lost && !s.retrans {
                lost_ids.push(s.id);
            }
        }
        for id in lost_ids {
            if self.sub.loss.board.mark_lost(id) {
                self.info.lost += 1;
            }
        }
        if self.config.recovery.fack {
            self.fack_detect();
        }
    }

    /// FACK (Mathis and Mahdavi 1996) as Linux 3.x ran it (`tcp_update_scoreboard`
    /// with `tcp_is_fack`; removed in 4.15, RACK replaced it): with `fackets` the
    /// segments from SND.UNA up to the highest SACKed one, more than DupThresh of them
    /// means the un-SACKed ones among the first `fackets − DupThresh` are lost. A
    /// single probe SACK far above a hole is therefore enough, where RFC 6675 needs
    /// DupThresh SACKed segments. Only without RACK.
    fn fack_detect(&mut self) {
        let high = self.sub.loss.board.highest_sacked();
        if high == 0 {
            return;
        }
        let fackets = self
            .sub
            .loss
            .board
            .iter()
            .take_while(|s| s.end <= high)
            .count() as u32;
        if fackets <= DUPTHRESH {
            return;
        }
        let head = (fackets - DUPTHRESH) as usize;
        let ids: Vec<u64> = self
            .sub
            .loss
            .board
            .iter()
            .take(head)
            .filter(|s| !s.sacked && !s.lost && !s.retrans)
            .map(|s| s.id)
            .collect();
        for id in ids {
            if self.sub.loss.board.mark_lost(id) {
                self.info.lost += 1;
            }
        }
    }

    /// RFC 5827 early retransmit as Linux 3.x ran it (`tcp_time_to_recover`'s "trick
    /// #6" and `tcp_pause_early_retransmit`), after DupThresh found nothing: with fewer
    /// than 4 segments outstanding, none retransmitted, at least one SACKed and one not,
    /// and no new data that could go instead, the un-SACKed segments below the highest
    /// SACKed one are lost. Linux needs only one SACK here (RFC 5827 asks for
    /// outstanding − 1). `Delayed` first waits max(SRTT/4, 2 ms) on the loss-detection
    /// timer (the slot RACK's reorder timer uses; RACK is off here).
    pub(super) fn early_retransmit(&mut self, now: Instant) {
        use crate::config::EarlyRetransmit;
        let mode = self.config.recovery.early_retransmit;
        if mode == EarlyRetransmit::Off || self.config.recovery.rack || !self.er_applies() {
            return;
        }
        if mode == EarlyRetransmit::Delayed {
            if !self.sub.timers.is_set(Timer::RackReorder) {
                let srtt = self.sub.loss.rtt.srtt().unwrap_or(Duration::ZERO);
                let delay = (srtt / 4).max(Duration::from_millis(2));
                self.sub.timers.set(Timer::RackReorder, now + delay);
            }
            return;
        }
        self.er_mark_lost();
    }

    /// The delayed early retransmit's timer fired: mark the losses if the conditions
    /// still hold (Linux `tcp_resume_early_retransmit`).
    pub(super) fn early_retransmit_timer(&mut self) {
        if self.er_applies() {
            self.er_mark_lost();
        }
    }

    fn er_applies(&self) -> bool {
        let b = &self.sub.loss.board;
        self.sub.cong.ca_state < CaState::Recovery
            && b.retrans_out() == 0
            && b.sacked_out() >= 1
            && b.packets_out() < 4
            && b.packets_out() > b.sacked_out()
            && b.lost_out() == 0
            && !self.may_send_new_data()
    }

    fn er_mark_lost(&mut self) {
        let high = self.sub.loss.board.highest_sacked();
        let ids: Vec<u64> = self
            .sub
            .loss
            .board
            .iter()
            .filter(|s| !s.sacked && !s.lost && s.end <= high)
            .map(|s| s.id)
            .collect();
        for id in ids {
            if self.sub.loss.board.mark_lost(id) {
                self.info.lost += 1;
            }
        }
    }

    /// Linux `tcp_may_send_now`: unsent data that cwnd and the peer's window let go.
    fn may_send_new_data(&self) -> bool {
        let unsent = self.has_unsent_data();
        let wnd_left =
            (self.sub.snd.snd_una + self.sub.snd.snd_wnd).saturating_sub(self.sub.snd.snd_nxt);
        unsent && wnd_left > 0 && self.sub.loss.board.in_flight() < self.sub.cong.vars.cwnd
    }

    /// Peers without SACK: RFC 6582 NewReno duplicate-ACK counting.
    pub(super) fn newreno_detect(&mut self, ack: u64, prior_una: u64, is_dupack: bool) {
        let head = self.sub.loss.board.first().map(|s| s.id);
        if is_dupack {
            self.sub.loss.dupacks += 1;
            if self.sub.loss.dupacks == DUPTHRESH && self.sub.cong.ca_state < CaState::Recovery {
                if let Some(id) = head {
                    self.info.lost += u64::from(self.sub.loss.board.mark_lost(id));
                }
            }
        } else if ack > prior_una
            && ack < self.sub.loss.high_seq
            && self.sub.cong.ca_state == CaState::Recovery
        {
            // Partial ACK: the next hole is lost too.
            if let Some(id) = head {
                self.info.lost += u64::from(self.sub.loss.board.mark_lost(id));
            }
        }
    }

    /// Arms the probe timer after new data is sent or new data is ACKed
    /// (RFC 8985 §7.2, Linux `tcp_schedule_loss_probe`).
    pub(super) fn schedule_tlp(&mut self, now: Instant) {
        let allowed = self.config.recovery.tlp
            && self.sub.opts.sack_ok
            && !self.sub.loss.board.is_empty()
            && self.sub.loss.tlp.high_seq.is_none()
            && self.sub.cong.ca_state <= CaState::Cwr;
        let Some(srtt) = self.sub.loss.rtt.srtt().filter(|_| allowed) else {
            self.sub.timers.stop(Timer::Tlp);
            return;
        };
        let rto_left = self.sub.timers.get(Timer::Rto).map(|t| t - now);
        let packets_out = self.sub.loss.board.packets_out();
        // A call per formula rather than a function pointer, so the formula is inlined.
        let pto = match self.config.recovery.tlp_pto {
            tlp::PtoFormula::Rfc8985 => tlp::pto(srtt, packets_out, super::TLP_WC_DELACK, rto_left),
            tlp::PtoFormula::Draft01 => {
                tlp::pto_draft01(srtt, packets_out, super::TLP_WC_DELACK, rto_left)
            }
        };
        // TLP-restart: PTO − T_last, T_last the time since the most recent
        // transmission of any outstanding segment (resolution B3); an overdue probe
        // fires at once (B4).
        let at = match self
            .sub
            .loss
            .board
            .last()
            .filter(|_| self.config.recovery.tlp_restart)
        {
            Some(last) => (last.xmit_ts + pto).max(now),
            None => now + pto,
        };
        self.sub.timers.set(Timer::Tlp, at);
    }
}
