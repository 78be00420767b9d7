//! Loss detection on the sender (Linux `tcp_rack_mark_lost`, `tcp_mark_head_lost`,
//! `tcp_newreno_mark_lost`) and the loss-probe timer (`tcp_schedule_loss_probe`):
//! RACK (RFC 8985 §6.2-6.3), RFC 6675 DupThresh when RACK is off, RFC 6582 NewReno
//! for peers without SACK, and TLP scheduling (RFC 8985 §7.2).

use super::parts::LossRecovery;
use super::{CaState, Connection};
use crate::conn::timer::Timer;
use crate::recovery::rack::DUPTHRESH;
use crate::recovery::tlp;
use brisk_time::{Duration, Instant};

/// What RACK found: segments newly marked lost, and when the reorder timer must
/// fire (`None`: stop it).
#[derive(Clone, Copy, Debug)]
pub(super) struct RackVerdict {
    pub lost: u32,
    pub reorder_at: Option<Instant>,
}

impl LossRecovery {
    /// RACK (RFC 8985 §6.2 step 5) plus the reorder timer (§6.3).
    pub fn rack_detect(&mut self, now: Instant) -> RackVerdict {
        // Nothing can be lost and no timer is due (`Rack::may_detect`): the result of
        // `detect_loss` would be (0, None), so skip the reordering window and the walk.
        if !self.rack.may_detect(&self.board) {
            return RackVerdict {
                lost: 0,
                reorder_at: None,
            };
        }
        let min_rtt = self.rtt.min_rtt().unwrap_or(Duration::ZERO);
        let srtt = self.rtt.srtt().unwrap_or(Duration::ZERO);
        let reo = self.rack.reo_wnd(
            min_rtt,
            srtt,
            self.ca_state >= CaState::Recovery,
            self.board.sacked_out(),
        );
        let (lost, timeout) = self.rack.detect_loss(&mut self.board, now, reo);
        RackVerdict {
            lost,
            reorder_at: timeout.map(|t| now + t),
        }
    }

    /// RFC 6675 `IsLost` without RACK: a segment with DupThresh SACKed segments above
    /// it is lost; then FACK if `fack`. O(outstanding); only used when RACK is
    /// disabled. Returns the segments newly marked lost.
    pub fn dupthresh_detect(&mut self, fack: bool) -> u32 {
        let mut above = 0u32;
        let mut lost_ids = Vec::new();
        for s in self.board.iter().collect::<Vec<_>>().into_iter().rev() {
            if s.sacked {
                above += 1;
            } else if above >= DUPTHRESH && !s.lost && !s.retrans {
                lost_ids.push(s.id);
            }
        }
        let mut lost = 0;
        for id in lost_ids {
            lost += u32::from(self.board.mark_lost(id));
        }
        if fack {
            lost += self.fack_detect();
        }
        lost
    }

    /// FACK (Mathis and Mahdavi 1996) as Linux 3.x ran it (`tcp_update_scoreboard`
    /// with `tcp_is_fack`; removed in 4.15, RACK replaced it): with `fackets` the
    /// segments from SND.UNA up to the highest SACKed one, more than DupThresh of them
    /// means the un-SACKed ones among the first `fackets − DupThresh` are lost. A
    /// single probe SACK far above a hole is therefore enough, where RFC 6675 needs
    /// DupThresh SACKed segments. Only without RACK.
    fn fack_detect(&mut self) -> u32 {
        let high = self.board.highest_sacked();
        if high == 0 {
            return 0;
        }
        let fackets = self.board.iter().take_while(|s| s.end <= high).count() as u32;
        if fackets <= DUPTHRESH {
            return 0;
        }
        let head = (fackets - DUPTHRESH) as usize;
        let ids: Vec<u64> = self
            .board
            .iter()
            .take(head)
            .filter(|s| !s.sacked && !s.lost && !s.retrans)
            .map(|s| s.id)
            .collect();
        let mut lost = 0;
        for id in ids {
            lost += u32::from(self.board.mark_lost(id));
        }
        lost
    }

    /// Early retransmit's conditions on this part (Linux `tcp_time_to_recover`'s
    /// "trick #6"): fewer than 4 segments outstanding, none retransmitted or lost, at
    /// least one SACKed and one not, outside Recovery and Loss.
    fn er_candidate(&self) -> bool {
        let b = &self.board;
        self.ca_state < CaState::Recovery
            && b.retrans_out() == 0
            && b.sacked_out() >= 1
            && b.packets_out() < 4
            && b.packets_out() > b.sacked_out()
            && b.lost_out() == 0
    }

    /// Early retransmit's marking: the un-SACKed segments below the highest SACKed
    /// one are lost. Returns how many were newly marked.
    fn er_mark_lost(&mut self) -> u32 {
        let high = self.board.highest_sacked();
        let ids: Vec<u64> = self
            .board
            .iter()
            .filter(|s| !s.sacked && !s.lost && s.end <= high)
            .map(|s| s.id)
            .collect();
        let mut lost = 0;
        for id in ids {
            lost += u32::from(self.board.mark_lost(id));
        }
        lost
    }

    /// Peers without SACK: RFC 6582 NewReno duplicate-ACK counting. Returns the
    /// segments newly marked lost.
    pub fn newreno_detect(&mut self, ack: u64, prior_una: u64, is_dupack: bool) -> u32 {
        let head = self.board.first().map(|s| s.id);
        if is_dupack {
            self.dupacks += 1;
            if self.dupacks == DUPTHRESH && self.ca_state < CaState::Recovery {
                if let Some(id) = head {
                    return u32::from(self.board.mark_lost(id));
                }
            }
        } else if ack > prior_una && ack < self.high_seq && self.ca_state == CaState::Recovery {
            // Partial ACK: the next hole is lost too.
            if let Some(id) = head {
                return u32::from(self.board.mark_lost(id));
            }
        }
        0
    }

    /// RFC 8985 §7.2 (Linux `tcp_schedule_loss_probe`): when the probe fires, with
    /// the RTO due at `rto_at`; `None` without an RTT sample. With TLP-restart
    /// (`restart`) PTO − T_last, T_last the time since the most recent transmission
    /// of any outstanding segment (resolution B3); an overdue probe fires at once (B4).
    fn probe_deadline(
        &self,
        now: Instant,
        rto_at: Option<Instant>,
        formula: tlp::PtoFormula,
        restart: bool,
    ) -> Option<Instant> {
        let srtt = self.rtt.srtt()?;
        let rto_left = rto_at.map(|t| t - now);
        let packets_out = self.board.packets_out();
        // A call per formula rather than a function pointer, so the formula is inlined.
        let pto = match formula {
            tlp::PtoFormula::Rfc8985 => tlp::pto(srtt, packets_out, super::TLP_WC_DELACK, rto_left),
            tlp::PtoFormula::Draft01 => {
                tlp::pto_draft01(srtt, packets_out, super::TLP_WC_DELACK, rto_left)
            }
        };
        Some(match self.board.last().filter(|_| restart) {
            Some(last) => (last.xmit_ts + pto).max(now),
            None => now + pto,
        })
    }
}

impl Connection {
    /// RACK on the loss part; its verdict counted and the reorder timer set.
    pub(super) fn rack_detect(&mut self, now: Instant) {
        let v = self.sub.loss.rack_detect(now);
        self.info.lost += u64::from(v.lost);
        match v.reorder_at {
            Some(at) => self.sub.timers.set(Timer::RackReorder, at),
            None => self.sub.timers.stop(Timer::RackReorder),
        }
    }

    /// Phase 5a: RACK, or RFC 6675 DupThresh when RACK is off. (Peers without SACK
    /// add NewReno's duplicate-ACK counting after it.)
    pub(super) fn detect_losses(&mut self, now: Instant, delivered: u32, dsack: bool) {
        if self.config.recovery.rack && (delivered > 0 || dsack) {
            self.rack_detect(now);
        } else if !self.config.recovery.rack && self.sub.opts.sack_ok && delivered > 0 {
            let lost = self.sub.loss.dupthresh_detect(self.config.recovery.fack);
            self.info.lost += u64::from(lost);
            self.early_retransmit(now);
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
                let srtt = self.sub.loss.view().srtt;
                let delay = (srtt / 4).max(Duration::from_millis(2));
                self.sub.timers.set(Timer::RackReorder, now + delay);
            }
            return;
        }
        self.info.lost += u64::from(self.sub.loss.er_mark_lost());
    }

    /// The delayed early retransmit's timer fired: mark the losses if the conditions
    /// still hold (Linux `tcp_resume_early_retransmit`).
    pub(super) fn early_retransmit_timer(&mut self) {
        if self.er_applies() {
            self.info.lost += u64::from(self.sub.loss.er_mark_lost());
        }
    }

    fn er_applies(&self) -> bool {
        self.sub.loss.er_candidate() && !self.may_send_new_data()
    }

    /// Linux `tcp_may_send_now`: unsent data that cwnd and the peer's window let go.
    fn may_send_new_data(&self) -> bool {
        let unsent = self.has_unsent_data();
        let wnd_left =
            (self.sub.snd.snd_una + self.sub.snd.snd_wnd).saturating_sub(self.sub.snd.snd_nxt);
        unsent && wnd_left > 0 && self.sub.cong.has_room(self.sub.loss.view().in_flight)
    }

    /// Peers without SACK: RFC 6582 NewReno duplicate-ACK counting.
    #[cold]
    #[inline(never)]
    pub(super) fn newreno_detect(&mut self, ack: u64, prior_una: u64, is_dupack: bool) {
        let lost = self.sub.loss.newreno_detect(ack, prior_una, is_dupack);
        self.info.lost += u64::from(lost);
    }

    /// Arms the probe timer after new data is sent or new data is ACKed
    /// (RFC 8985 §7.2, Linux `tcp_schedule_loss_probe`).
    pub(super) fn schedule_tlp(&mut self, now: Instant) {
        let allowed =
            self.config.recovery.tlp && self.sub.opts.sack_ok && self.sub.loss.may_schedule_probe();
        let at = if allowed {
            let r = &self.config.recovery;
            let rto_at = self.sub.timers.get(Timer::Rto);
            self.sub
                .loss
                .probe_deadline(now, rto_at, r.tlp_pto, r.tlp_restart)
        } else {
            None
        };
        match at {
            Some(at) => self.sub.timers.set(Timer::Tlp, at),
            None => self.sub.timers.stop(Timer::Tlp),
        }
    }
}
