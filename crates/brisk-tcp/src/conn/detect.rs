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
        let min_rtt = self.loss.rtt.min_rtt().unwrap_or(Duration::ZERO);
        let srtt = self.loss.rtt.srtt().unwrap_or(Duration::ZERO);
        let reo = self.loss.rack.reo_wnd(
            min_rtt,
            srtt,
            self.cong.ca_state >= CaState::Recovery,
            self.loss.board.sacked_out(),
        );
        let (lost, timeout) = self.loss.rack.detect_loss(&mut self.loss.board, now, reo);
        self.info.lost += u64::from(lost);
        match timeout {
            Some(t) => self.timers.set(Timer::RackReorder, now + t),
            None => self.timers.stop(Timer::RackReorder),
        }
    }

    /// RFC 6675 `IsLost` without RACK: a segment with DupThresh SACKed segments above
    /// it is lost. O(outstanding); only used when RACK is disabled.
    pub(super) fn dupthresh_detect(&mut self) {
        let mut above = 0u32;
        let mut lost_ids = Vec::new();
        for s in self.loss.board.iter().collect::<Vec<_>>().into_iter().rev() {
            if s.sacked {
                above += 1;
            } else if above >= DUPTHRESH && !s.lost && !s.retrans {
                lost_ids.push(s.id);
            }
        }
        for id in lost_ids {
            if self.loss.board.mark_lost(id) {
                self.info.lost += 1;
            }
        }
    }

    /// Peers without SACK: RFC 6582 NewReno duplicate-ACK counting.
    pub(super) fn newreno_detect(&mut self, ack: u64, prior_una: u64, is_dupack: bool) {
        let head = self.loss.board.first().map(|s| s.id);
        if is_dupack {
            self.loss.dupacks += 1;
            if self.loss.dupacks == DUPTHRESH && self.cong.ca_state < CaState::Recovery {
                if let Some(id) = head {
                    self.info.lost += u64::from(self.loss.board.mark_lost(id));
                }
            }
        } else if ack > prior_una
            && ack < self.loss.high_seq
            && self.cong.ca_state == CaState::Recovery
        {
            // Partial ACK: the next hole is lost too.
            if let Some(id) = head {
                self.info.lost += u64::from(self.loss.board.mark_lost(id));
            }
        }
    }

    /// Arms the probe timer after new data is sent or new data is ACKed
    /// (RFC 8985 §7.2, Linux `tcp_schedule_loss_probe`).
    pub(super) fn schedule_tlp(&mut self, now: Instant) {
        let allowed = self.config.recovery.tlp
            && self.opts.sack_ok
            && !self.loss.board.is_empty()
            && self.loss.tlp.high_seq.is_none()
            && self.cong.ca_state <= CaState::Cwr;
        let Some(srtt) = self.loss.rtt.srtt().filter(|_| allowed) else {
            self.timers.stop(Timer::Tlp);
            return;
        };
        let rto_left = self.timers.get(Timer::Rto).map(|t| t - now);
        let pto = tlp::pto(
            srtt,
            self.loss.board.packets_out(),
            super::TLP_WC_DELACK,
            rto_left,
        );
        // TLP-restart: PTO − T_last, T_last the time since the most recent
        // transmission of any outstanding segment (resolution B3); an overdue probe
        // fires at once (B4).
        let at = match self
            .loss
            .board
            .last()
            .filter(|_| self.config.recovery.tlp_restart)
        {
            Some(last) => (last.xmit_ts + pto).max(now),
            None => now + pto,
        };
        self.timers.set(Timer::Tlp, at);
    }
}
